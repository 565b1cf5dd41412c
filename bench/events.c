// SPDX-License-Identifier: GPL-2.0
/*
 * events: what one scheduler event costs the training thread, against a
 * null system call, measured side by side in one process.
 *
 * Kinds, each timed over a block of calls, blocks of the kinds interleaved
 * round after round so that a noisy host slows them alike:
 *   getppid     syscall(SYS_getppid): the null system call;
 *   null ioctl  an ioctl /dev/tiertrain does not know (ENOTTY): the cost of
 *               reaching the driver;
 *   clock       syscall(SYS_clock_gettime, CLOCK_MONOTONIC): a system call
 *               that reads the clock the module stamps events with, so
 *               clock - getppid is one reading (an unbatched event takes
 *               one: the floor printed is null ioctl + that reading);
 *   event       tt_layer_begin()/tt_layer_end() through libtiertrain (one
 *               TT_IOC_EVENT each) in the pattern of a training iteration:
 *               tt_iter_begin(), every layer's forward begin/end, then
 *               backward begin/end in reverse;
 *   batched     the same iteration's events in one tt_events() call
 *               (TT_IOC_EVENTS), per event.
 * The session profiles one iteration and then plans every iteration, as in
 * training; the layers save nothing, so no migration runs: the figure is
 * the event path itself. Ratios are medians over the rounds, per call.
 *
 * Exit status: 0 measured, 1 error (no /dev/tiertrain, a call failing).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <linux/tiertrain.h>
#include "tiertrain.h"

#define TT_EV_MAX_LAYERS	512
#define TT_EV_MAX_ROUNDS	1000

enum tt_kind {
	TT_K_SYSCALL, TT_K_NULL_IOCTL, TT_K_CLOCK, TT_K_EVENT, TT_K_BATCHED,
	TT_K_NR
};

static const char *const tt_kind_name[TT_K_NR] = {
	"getppid", "null ioctl", "clock", "event", "batched",
};

static const char *const tt_kind_key[TT_K_NR] = {
	"syscall", "null_ioctl", "clock", "event", "batched",
};

/**
 * struct tt_ev_bench - one run
 * @layers: layers per iteration.
 * @iters:  iterations per block (a block of events is @iters iterations).
 * @rounds: rounds of blocks.
 * @fd:     /dev/tiertrain opened for the null ioctl.
 * @s:      the session events go to.
 * @ev:     one iteration's events for the batched kind.
 * @nev:    their number.
 * @ns:     per kind and round: ns per call.
 * @out:    JSON output path (NULL: none).
 */
struct tt_ev_bench {
	unsigned int layers;
	unsigned int iters;
	unsigned int rounds;
	int fd;
	struct tt_session *s;
	struct tt_event *ev;
	unsigned int nev;
	double ns[TT_K_NR][TT_EV_MAX_ROUNDS];
	const char *out;
};

static void tt_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void tt_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "events: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t tt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Calls per block of each kind: about the same number of system calls. */
static unsigned int tt_calls_per_iter(const struct tt_ev_bench *b)
{
	return 1 + 4 * b->layers;
}

static void tt_check(int ret, const char *what, unsigned int layer)
{
	if (ret < 0)
		tt_die("%s (layer %u): %s", what, layer, strerror(-ret));
}

/* One iteration, one event per call. */
static void tt_iter_single(struct tt_ev_bench *b)
{
	unsigned int l;

	tt_check(tt_iter_begin(b->s), "tt_iter_begin", 0);
	for (l = 0; l < b->layers; l++) {
		tt_check(tt_layer_begin(b->s, l, TT_FWD), "tt_layer_begin(TT_FWD)", l);
		tt_check(tt_layer_end(b->s, l, TT_FWD), "tt_layer_end(TT_FWD)", l);
	}
	for (l = b->layers; l-- > 0;) {
		tt_check(tt_layer_begin(b->s, l, TT_BWD), "tt_layer_begin(TT_BWD)", l);
		tt_check(tt_layer_end(b->s, l, TT_BWD), "tt_layer_end(TT_BWD)", l);
	}
}

static void tt_build_batch(struct tt_ev_bench *b)
{
	unsigned int l, n = 0;

	b->nev = tt_calls_per_iter(b);
	b->ev = calloc(b->nev, sizeof(*b->ev));
	if (!b->ev)
		tt_die("out of memory for %u events", b->nev);
	b->ev[n++].type = TT_EV_ITER_BEGIN;
	for (l = 0; l < b->layers; l++) {
		b->ev[n] = (struct tt_event){ .type = TT_EV_LAYER_BEGIN, .flags = TT_FWD, .layer = l };
		n++;
		b->ev[n] = (struct tt_event){ .type = TT_EV_LAYER_END, .flags = TT_FWD, .layer = l };
		n++;
	}
	for (l = b->layers; l-- > 0;) {
		b->ev[n] = (struct tt_event){ .type = TT_EV_LAYER_BEGIN, .flags = TT_BWD, .layer = l };
		n++;
		b->ev[n] = (struct tt_event){ .type = TT_EV_LAYER_END, .flags = TT_BWD, .layer = l };
		n++;
	}
}

/* One block of @kind: ns per call (per event for the batched kind). */
static double tt_block(struct tt_ev_bench *b, enum tt_kind kind)
{
	unsigned int calls = b->iters * tt_calls_per_iter(b), i;
	uint64_t t0 = tt_now();
	struct timespec ts;
	int ret;

	switch (kind) {
	case TT_K_SYSCALL:
		for (i = 0; i < calls; i++)
			syscall(SYS_getppid);
		break;
	case TT_K_NULL_IOCTL:
		for (i = 0; i < calls; i++)
			if (ioctl(b->fd, _IO(TT_IOC_MAGIC, 0xff)) != -1 ||
			    errno != ENOTTY)
				tt_die("ioctl(0xff) did not fail with ENOTTY");
		break;
	case TT_K_CLOCK:
		for (i = 0; i < calls; i++)
			if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts))
				tt_die("clock_gettime: %s", strerror(errno));
		break;
	case TT_K_EVENT:
		for (i = 0; i < b->iters; i++)
			tt_iter_single(b);
		break;
	case TT_K_BATCHED:
		for (i = 0; i < b->iters; i++) {
			ret = tt_events(b->s, b->ev, b->nev);
			if (ret != (int)b->nev)
				tt_die("tt_events(%u events): %s", b->nev,
				       ret < 0 ? strerror(-ret) : "short");
		}
		break;
	default:
		break;
	}
	return (double)(tt_now() - t0) / calls;
}

static int tt_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double tt_median(const double *v, unsigned int n)
{
	double tmp[TT_EV_MAX_ROUNDS];

	memcpy(tmp, v, n * sizeof(*v));
	qsort(tmp, n, sizeof(*tmp), tt_cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/* Per round: @kind's time over getppid's; its median. */
static double tt_ratio(const struct tt_ev_bench *b, enum tt_kind kind)
{
	double r[TT_EV_MAX_ROUNDS];
	unsigned int i;

	for (i = 0; i < b->rounds; i++)
		r[i] = b->ns[kind][i] / b->ns[TT_K_SYSCALL][i];
	return tt_median(r, b->rounds);
}

static void tt_write_json(const struct tt_ev_bench *b)
{
	struct utsname u;
	unsigned int k, i;
	FILE *f;

	if (!b->out)
		return;
	f = fopen(b->out, "w");
	if (!f)
		tt_die("%s: %s", b->out, strerror(errno));
	uname(&u);
	fprintf(f, "{\n  \"bench\": \"events\",\n  \"kernel\": \"%s\",\n  \"library\": \"%s\",\n",
		u.release, tt_version());
	fprintf(f, "  \"config\": {\"layers\": %u, \"iterations_per_block\": %u, \"rounds\": %u, \"calls_per_block\": %u},\n",
		b->layers, b->iters, b->rounds,
		b->iters * tt_calls_per_iter(b));
	fprintf(f, "  \"goal_event_vs_syscall\": 2.0,\n  \"goal_batched_vs_syscall\": 1.2,\n");
	fprintf(f, "  \"floor_event_vs_syscall\": %.3f,\n  \"kinds\": {",
		tt_ratio(b, TT_K_NULL_IOCTL) + tt_ratio(b, TT_K_CLOCK) - 1.0);
	for (k = 0; k < TT_K_NR; k++) {
		fprintf(f, "%s\n    \"%s\": {\"median_ns\": %.1f, \"vs_syscall\": %.3f, \"ns_per_round\": [",
			k ? "," : "", tt_kind_key[k],
			tt_median(b->ns[k], b->rounds), tt_ratio(b, k));
		for (i = 0; i < b->rounds; i++)
			fprintf(f, "%s%.1f", i ? ", " : "", b->ns[k][i]);
		fprintf(f, "]}");
	}
	fprintf(f, "\n  }\n}\n");
	if (fclose(f))
		tt_die("%s: %s", b->out, strerror(errno));
}

static unsigned int tt_num(const char *opt, const char *s, unsigned int min,
			   unsigned int max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		tt_die("%s \"%s\": expected a whole number in %u..%u", opt, s,
		       min, max);
	return (unsigned int)v;
}

static void tt_usage(FILE *f)
{
	fprintf(f,
		"Usage: events [--layers N] [--iters N] [--rounds N] [-o FILE]\n"
		"The cost of one scheduler event (tt_layer_begin()/tt_layer_end(),\n"
		"one TT_IOC_EVENT each; and per event in one TT_IOC_EVENTS batch)\n"
		"against a null system call (getppid), an unknown ioctl on\n"
		"/dev/tiertrain and a clock_gettime system call, blocks of each\n"
		"interleaved round after round.\n\n"
		"  --layers N   layers per iteration, 1..%u (default 32)\n"
		"  --iters N    iterations per block, 1..100000 (default 40)\n"
		"  --rounds N   rounds, 3..%u (default 15)\n"
		"  -o FILE      JSON output\n"
		"  -h, --help   this help\n"
		"Goal: an event costs at most 2x the null system call, one in a\n"
		"batch at most 1.2x.\n",
		TT_EV_MAX_LAYERS, TT_EV_MAX_ROUNDS);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "layers", required_argument, NULL, 'l' },
		{ "iters", required_argument, NULL, 'i' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tt_ev_bench *b = calloc(1, sizeof(*b));
	unsigned int r, k;
	int opt;

	if (!b)
		tt_die("out of memory");
	b->layers = 32;
	b->iters = 40;
	b->rounds = 15;
	while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'l':
			b->layers = tt_num("--layers", optarg, 1, TT_EV_MAX_LAYERS);
			break;
		case 'i':
			b->iters = tt_num("--iters", optarg, 1, 100000);
			break;
		case 'r':
			b->rounds = tt_num("--rounds", optarg, 3, TT_EV_MAX_ROUNDS);
			break;
		case 'o':
			b->out = optarg;
			break;
		case 'h':
			tt_usage(stdout);
			return 0;
		default:
			tt_usage(stderr);
			return 1;
		}
	}
	if (optind < argc)
		tt_die("unexpected argument \"%s\"", argv[optind]);

	if (setenv("TIERTRAIN_BACKEND", "kernel", 1))
		tt_die("setenv: %s", strerror(errno));
	b->fd = open("/dev/tiertrain", O_RDWR | O_CLOEXEC);
	if (b->fd < 0)
		tt_die("/dev/tiertrain: %s (is the module loaded?)", strerror(errno));
	b->s = tt_open();
	if (!b->s)
		tt_die("tt_open (kernel backend): %s", strerror(errno));
	tt_build_batch(b);

	/* warm-up: profile, then planned iterations */
	for (k = 0; k < TT_K_NR; k++)
		tt_block(b, (enum tt_kind)k);
	for (r = 0; r < b->rounds; r++)
		for (k = 0; k < TT_K_NR; k++)
			b->ns[k][r] = tt_block(b, (enum tt_kind)k);

	printf("events: %u layers per iteration, %u calls per block, %u rounds (median ns per call, ratio to getppid per round, median)\n",
	       b->layers, b->iters * tt_calls_per_iter(b), b->rounds);
	printf("%-12s %10s %10s\n", "kind", "ns/call", "vs getppid");
	for (k = 0; k < TT_K_NR; k++)
		printf("%-12s %10.1f %9.2fx\n", tt_kind_name[k],
		       tt_median(b->ns[k], b->rounds), tt_ratio(b, k));
	printf("event vs null syscall: %.2fx (goal <= 2x: %s); batched: %.2fx (goal <= 1.2x: %s)\n",
	       tt_ratio(b, TT_K_EVENT),
	       tt_ratio(b, TT_K_EVENT) <= 2.0 ? "met" : "MISSED",
	       tt_ratio(b, TT_K_BATCHED),
	       tt_ratio(b, TT_K_BATCHED) <= 1.2 ? "met" : "MISSED");
	printf("floor of an unbatched event here: null ioctl + one clock reading = %.2fx\n",
	       tt_ratio(b, TT_K_NULL_IOCTL) + tt_ratio(b, TT_K_CLOCK) - 1.0);
	tt_write_json(b);
	tt_close(b->s);
	close(b->fd);
	free(b->ev);
	free(b);
	return 0;
}
