// SPDX-License-Identifier: GPL-2.0
/*
 * Victim choice and the shared fast-tier budget under hostile input
 * (Documentation/scheduler.md, "Fast-tier budget" and "Many processes").
 *
 *   many_ranges       65536 one-page saved tensors (TT_VT_RANGES to
 *                     change the number), all pinned fast, none in use,
 *                     then a session budget of 1 MiB: no victim can be
 *                     found, and TT_IOC_SET_SCHED returns within 10 s
 *                     (times TT_ST_TIME_MUL) instead of scanning every
 *                     range for every pick; a thread calling TT_IOC_STATS
 *                     meanwhile gets each answer within the same bound.
 *                     Prints the times (bench/README.md, "Victim choice").
 *   fake_in_use       a module budget of 64 MiB shared by two processes;
 *                     one registers a 1 TiB tensor at a PROT_NONE
 *                     NORESERVE mapping in a layer whose backward pass is
 *                     open (never a victim); the other's 16 MiB tensor
 *                     stays on the fast node after its registration and
 *                     through its backward pass, three iterations, no
 *                     victim taken from it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tt_harness.h"

#define VT_MIB		TT_ST_MIB
#define VT_BUDGET_PARAM	TT_ST_SYSMOD "/parameters/budget_mib"
#define VT_BALANCING	"/proc/sys/kernel/numa_balancing"
#define VT_LAYERS	16U
#define VT_BATCH	4096U

FIXTURE(victims)
{
	struct tt_st_topo topo;
	struct tt_session *s;
	void *buf;
	size_t len;
	int global_set;		/* budget_mib written: set it back to 0 */
	long long balancing;	/* to restore; -1: untouched */
	pid_t kid;
};

FIXTURE_SETUP(victims)
{
	self->s = NULL;
	self->buf = NULL;
	self->len = 0;
	self->global_set = 0;
	self->balancing = -1;
	self->kid = 0;
	TT_SETUP_NODES(&self->topo, 1);
	if (access(VT_BUDGET_PARAM, F_OK))
		SKIP(return, "the module has no budget_mib parameter");
	/* NUMA balancing would move touched pages behind our back */
	ASSERT_EQ(0, tt_st_read_ll(VT_BALANCING, &self->balancing));
	ASSERT_EQ(0, tt_st_write_file(VT_BALANCING, "0"));
	TT_OPEN_KERNEL_SESSION(&self->s);
}

FIXTURE_TEARDOWN(victims)
{
	char v[32];

	if (self->kid > 0) {
		kill(self->kid, SIGKILL);
		waitpid(self->kid, NULL, 0);
	}
	if (self->s)
		tt_close(self->s);
	if (self->buf)
		munmap(self->buf, self->len);
	if (self->global_set)
		tt_st_write_file(VT_BUDGET_PARAM, "0");
	if (self->balancing >= 0) {
		snprintf(v, sizeof(v), "%lld", self->balancing);
		tt_st_write_file(VT_BALANCING, v);
	}
}

static void vt_ev(struct tt_event *e, uint32_t type, uint32_t layer,
		  uint32_t flags, uint64_t addr, uint64_t len)
{
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->layer = layer;
	e->flags = flags;
	e->addr = addr;
	e->len = len;
}

/* The STATS prober: calls TT_IOC_STATS until told to stop. */
struct vt_probe {
	struct tt_session *s;
	volatile int stop;
	uint64_t max_ns;
	uint64_t calls;
	int err;
};

static void *vt_prober(void *arg)
{
	struct vt_probe *p = arg;
	struct tt_ioc_stats st;

	while (!p->stop) {
		uint64_t t0 = tt_st_now_ns(), d;

		if (tt_stats(p->s, &st)) {
			p->err = errno;
			break;
		}
		d = tt_st_now_ns() - t0;
		if (d > p->max_ns)
			p->max_ns = d;
		p->calls++;
		usleep(20000);
	}
	return NULL;
}

TEST_F_TIMEOUT(victims, many_ranges, 900)
{
	const size_t ps = tt_page_size();
	const char *e = getenv("TT_VT_RANGES");
	unsigned long n = e ? strtoul(e, NULL, 10) : 65536;
	const uint64_t bound = 10000000000ULL * tt_st_time_mul();
	struct tt_ioc_sched c = { .valid = TT_SCHED_SET_BUDGET, .budget_mib = 1 };
	struct vt_probe probe = { 0 };
	struct tt_ioc_stats st;
	struct tt_event *ev;
	unsigned long i, k = 0, per;
	uint64_t t0, t_set, t_stats;
	unsigned int l;
	pthread_t th;
	char *base;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_LE(VT_LAYERS, n);
	per = n / VT_LAYERS;
	n = per * VT_LAYERS;
	self->len = n * ps;
	self->buf = mmap(NULL, self->len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	base = self->buf;
	/* pinned: a victim round finds nothing to take in any of them */
	ASSERT_EQ(0, tt_hint(self->s, base, self->len, TT_HINT_PIN_FAST));
	ev = calloc(n + 2 * VT_LAYERS + 1, sizeof(*ev));
	ASSERT_NE(NULL, ev);
	vt_ev(&ev[k++], TT_EV_ITER_BEGIN, 0, 0, 0, 0);
	for (l = 0; l < VT_LAYERS; l++) {
		vt_ev(&ev[k++], TT_EV_LAYER_BEGIN, l + 1, TT_FWD, 0, 0);
		for (i = 0; i < per; i++)
			vt_ev(&ev[k++], TT_EV_TENSOR_SAVED, l + 1, 0,
			      (uintptr_t)(base + (l * per + i) * ps), ps);
		vt_ev(&ev[k++], TT_EV_LAYER_END, l + 1, TT_FWD, 0, 0);
	}
	t0 = tt_st_now_ns();
	ASSERT_EQ((int)k, tt_events(self->s, ev, k)) TH_LOG("%s", strerror(errno));
	TH_LOG("%lu one-page tensors registered in %.2f s", n,
	       (tt_st_now_ns() - t0) / 1e9);
	free(ev);
	ASSERT_EQ(0, tt_stats(self->s, &st));
	ASSERT_EQ((uint64_t)n, st.tensors_saved);
	ASSERT_EQ(self->len, st.fast_registered_bytes);

	probe.s = self->s;
	ASSERT_EQ(0, pthread_create(&th, NULL, vt_prober, &probe));
	usleep(100000);
	t0 = tt_st_now_ns();
	ASSERT_EQ(0, tt_sched_set(self->s, &c));
	t_set = tt_st_now_ns() - t0;
	usleep(200000);
	probe.stop = 1;
	pthread_join(th, NULL);
	t0 = tt_st_now_ns();
	ASSERT_EQ(0, tt_stats(self->s, &st));
	t_stats = tt_st_now_ns() - t0;
	TH_LOG("%lu ranges, budget 1 MiB: TT_IOC_SET_SCHED %.3f s, TT_IOC_STATS %.4f s after it, longest of %llu TT_IOC_STATS meanwhile %.3f s",
	       n, t_set / 1e9, t_stats / 1e9,
	       (unsigned long long)probe.calls, probe.max_ns / 1e9);
	ASSERT_EQ(0, probe.err);
	ASSERT_LT(t_set, bound);
	ASSERT_LT(t_stats, bound);
	ASSERT_LT(probe.max_ns, bound);
	/* pinned: nothing was taken, the call said it stayed over */
	ASSERT_EQ(0, st.victims);
	ASSERT_LE(1, st.budget_overruns);
	ASSERT_EQ(1 * VT_MIB, st.budget_bytes);
	ASSERT_EQ(self->len, st.fast_registered_bytes);
}

/* The process with the fake tensor: registers it, says so, waits. */
static void vt_faker(int fd)
{
	const uint64_t tib = 1ULL << 40;
	struct tt_session *s;
	void *fake;
	char ok = 0;

	unsetenv("TIERTRAIN_BACKEND");
	s = tt_open();
	fake = mmap(NULL, tib, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s && fake != MAP_FAILED &&
	    !tt_iter_begin(s) && !tt_layer_begin(s, 1, TT_FWD) &&
	    !tt_layer_end(s, 1, TT_FWD) && !tt_layer_begin(s, 1, TT_BWD) &&
	    !tt_tensor_saved(s, 1, fake, tib))
		ok = 1;
	if (write(fd, &ok, 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

/* Bytes of [p, p + len) on node @node (TT_IOC_RESIDENCY). */
static uint64_t vt_on(struct tt_session *s, const void *p, size_t len,
		      int node)
{
	uint64_t b[TT_ST_MAX_NODES];

	if (tt_residency(s, p, len, b, TT_ST_MAX_NODES))
		return 0;
	return b[node];
}

TEST_F_TIMEOUT(victims, fake_in_use, 300)
{
	const size_t len = 16 * VT_MIB;
	/* rates known: no rate probe while it profiles */
	struct tt_ioc_sched c = {
		.valid = TT_SCHED_SET_PROFILE | TT_SCHED_SET_RATES,
		.profile_iters = 1000,
		.er_bps = 1ULL << 30, .pr_bps = 1ULL << 30,
	};
	struct tt_ioc_stats st;
	unsigned int it, bad = 0;
	int p[2];
	char ok = 0;
	uint64_t on;

	TT_SKIP_IF_SETUP_SKIPPED();
	self->global_set = 1;
	ASSERT_EQ(0, tt_st_write_file(VT_BUDGET_PARAM, "64"));
	/* only the budget moves anything: the plan only profiles */
	ASSERT_EQ(0, tt_sched_set(self->s, &c));
	self->len = len;
	self->buf = tt_st_map(len, -1);
	ASSERT_NE(NULL, self->buf);

	ASSERT_EQ(0, pipe(p));
	self->kid = fork();
	ASSERT_LE(0, self->kid);
	if (!self->kid) {
		close(p[0]);
		vt_faker(p[1]);
	}
	close(p[1]);
	ASSERT_EQ(1, read(p[0], &ok, 1));
	close(p[0]);
	ASSERT_EQ(1, ok) TH_LOG("the other process could not register its tensor");

	for (it = 0; it < 3; it++) {
		ASSERT_EQ(0, tt_iter_begin(self->s));
		ASSERT_EQ(0, tt_layer_begin(self->s, 1, TT_FWD));
		tt_st_fill(self->buf, len, it + 77);
		ASSERT_EQ(0, tt_tensor_saved(self->s, 1, self->buf, len));
		on = vt_on(self->s, self->buf, len, self->topo.fast);
		if (on != len) {
			TH_LOG("iteration %u: %.2f of 16 MiB on the fast node after the registration",
			       it, on / 1048576.0);
			bad++;
		}
		ASSERT_EQ(0, tt_layer_end(self->s, 1, TT_FWD));
		usleep(20000);
		ASSERT_EQ(0, tt_layer_begin(self->s, 1, TT_BWD));
		on = vt_on(self->s, self->buf, len, self->topo.fast);
		if (on != len) {
			TH_LOG("iteration %u: %.2f of 16 MiB on the fast node at the backward begin",
			       it, on / 1048576.0);
			bad++;
		}
		TT_ASSERT_PATTERN(self->buf, len, it + 77);
		ASSERT_EQ(0, tt_stats(self->s, &st));
		if (st.budget_bytes < len) {
			TH_LOG("iteration %u: budget in force %.2f MiB in the backward pass",
			       it, st.budget_bytes / 1048576.0);
			bad++;
		}
		usleep(20000);
		on = vt_on(self->s, self->buf, len, self->topo.fast);
		if (on != len) {
			TH_LOG("iteration %u: %.2f of 16 MiB on the fast node in the backward pass",
			       it, on / 1048576.0);
			bad++;
		}
		ASSERT_EQ(0, tt_layer_end(self->s, 1, TT_BWD));
	}
	ASSERT_EQ(0, tt_stats(self->s, &st));
	TH_LOG("honest session: victims %llu, waits %llu, overruns %llu",
	       (unsigned long long)st.victims,
	       (unsigned long long)st.budget_waits,
	       (unsigned long long)st.budget_overruns);
	ASSERT_EQ(0, bad);
	ASSERT_EQ(0, st.victims);
	ASSERT_EQ(0, st.budget_overruns);
}

TEST_HARNESS_MAIN
