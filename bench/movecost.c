// SPDX-License-Identifier: GPL-2.0
/*
 * bench/movecost: what moving a range of a process costs the thread of the
 * same process that computes meanwhile, per way of moving, side by side in
 * one run.
 *
 * A compute thread, pinned to the first CPU of the fast node, updates its
 * own buffer (--work MiB, the system's default THP setting, as a training
 * thread's weights and activations get) 64 KiB at a time, all the run long,
 * and counts the 64 KiB units it finishes. The main thread, on the fast
 * node's other CPUs, moves a second buffer of the same process (--size MiB,
 * 2 MiB aligned; base pages: faulted under MADV_NOHUGEPAGE, which is then
 * lifted for the two collapse methods only; THP: MADV_HUGEPAGE) to the slow
 * node and back with each method:
 *
 *   engine      tiertrain's in-kernel engine: TT_IOC_MIGRATE of a session
 *               without movers (TIERTRAIN_MOVER=0; huge pages are split);
 *   movers      TT_IOC_MIGRATE of a session as tt_open() gives it (one
 *               mover thread: huge pages to it, moved whole with
 *               move_pages(2)), the module's mover_base set to 1: base
 *               pages to it too, as base-page orders;
 *   movers_col  the same with mover_base 2 (the mover collapses each
 *               2 MiB block into a huge page, then moves it), on a
 *               buffer that allows huge pages;
 *   userspace   tt_migrate() of libtiertrain's move_pages backend (what
 *               its userspace scheduler calls: 2 MiB chunks);
 *   move_pages  one move_pages(2) call over the whole buffer;
 *   collapse    madvise(MADV_COLLAPSE) over the buffer, then one
 *               move_pages(2) call: base pages made huge (one copy on the
 *               fast node) so that they move as whole huge pages;
 *   memcpy      a plain copy of the bytes into a buffer bound to the other
 *               node and back: the floor, as no mover copies less.
 *
 * Before each round trip the compute thread runs alone for --idle-ms: its
 * rate over all those windows of the run is the reference. Per method,
 * summed over the repetitions (the methods take turns repetition by
 * repetition, so a change in the host's load weighs on each alike):
 *
 *   MB/s         bytes moved / wall time of the moves;
 *   lost ms/MiB  compute time the compute thread lost per MiB moved:
 *                (window - units done in it / reference rate) / MiB;
 *   slowdown     the compute rate during the moves against the reference;
 *   tlb/MiB      TLB-shootdown interrupts (/proc/interrupts "TLB") the
 *                compute thread's CPU received, per MiB moved; "all": on
 *                every CPU;
 *   cpu ms/MiB   CPU time spent on the moves, per MiB: busy time of every
 *                CPU (/proc/stat, USER_HZ ticks) minus the compute
 *                thread's own CPU time over the same window;
 *   huge%        the buffer's share in huge pages after its round trips.
 *
 * MiB moved counts both directions. Placement is checked after every move
 * (move_pages(2) status) and the data after each round trip. khugepaged is
 * paused during the run. JSON: -o (default build/bench/movecost.json).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <tiertrain.h>
#include "tt_bench.h"
#include "tt_selftest.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25	/* <asm-generic/mman-common.h>, 6.1+ */
#endif

#define TT_MC_MAX_CPUS		256
#define TT_MC_UNIT		(64UL * 1024)
#define TT_MC_MUL		0x9e3779b97f4a7c15ULL

enum tt_mc_method {
	TT_MC_ENGINE,
	TT_MC_MOVERS,
	TT_MC_MOVERS_COL,
	TT_MC_USERSPACE,
	TT_MC_MOVE_PAGES,
	TT_MC_COLLAPSE,
	TT_MC_MEMCPY,
	TT_MC_NR,
};

static const char *const tt_mc_name[TT_MC_NR] = {
	"engine", "movers", "movers_col", "userspace", "move_pages", "collapse",
	"memcpy",
};

/**
 * struct tt_mc_sample - counters read at one instant
 * @ns:    CLOCK_MONOTONIC.
 * @units: 64 KiB units the compute thread finished.
 * @cpu_ns: the compute thread's CPU time.
 * @busy_ns: busy time of every CPU (/proc/stat).
 * @tlb:   TLB shootdowns received, per CPU.
 */
struct tt_mc_sample {
	uint64_t ns;
	uint64_t units;
	uint64_t cpu_ns;
	uint64_t busy_ns;
	uint64_t tlb[TT_MC_MAX_CPUS];
};

/**
 * struct tt_mc_sum - one method and buffer kind, over its repetitions
 * @bytes:   bytes moved (both directions).
 * @move_ns: wall time of the moves.
 * @units:   compute units done during them.
 * @cpu_ns:  the compute thread's CPU time during them.
 * @busy_ns: every CPU's busy time during them.
 * @tlb_cpu: shootdowns the compute CPU received during them.
 * @tlb_all: shootdowns every CPU received during them.
 * @huge_after: the buffer's share in huge pages after the last round trip.
 * @thp_split: thp_split_page of /proc/vmstat during the moves.
 */
struct tt_mc_sum {
	uint64_t bytes;
	uint64_t move_ns;
	uint64_t units;
	uint64_t cpu_ns;
	uint64_t busy_ns;
	uint64_t tlb_cpu;
	uint64_t tlb_all;
	double huge_after;
	long long thp_split;
};

/**
 * struct tt_mc_kind - a kind of moved buffer
 * @name: "base" or "thp".
 * @thp:  argument of tt_st_map().
 */
struct tt_mc_kind {
	const char *name;
	int thp;
};

static const struct tt_mc_kind tt_mc_kinds[] = {
	{ "base", -1 },
	{ "thp", 1 },
};

#define TT_MC_KINDS	(sizeof(tt_mc_kinds) / sizeof(tt_mc_kinds[0]))

/**
 * struct tt_mc - the run
 * @s:        sessions by method (NULL for move_pages and memcpy).
 * @fast:     node of the CPUs; @slow: the memory-only node.
 * @cpu:      the compute thread's CPU.
 * @size:     bytes of the moved buffer.
 * @work:     bytes of the compute thread's buffer.
 * @reps:     round trips per method and kind.
 * @idle_ms:  the compute thread's solo window before each round trip.
 * @skip:     kinds left out.
 * @wbuf:     the compute thread's buffer.
 * @units:    units it finished (written by it only).
 * @stop:     tells it to end.
 * @thread:   it.
 * @idle_ns:  sum of the solo windows; @idle_units: units done in them.
 * @sum:      results by kind and method.
 * @tick_ns:  one /proc/stat tick.
 */
struct tt_mc {
	struct tt_session *s[TT_MC_NR];
	int fast, slow, cpu, reps, idle_ms;
	size_t size, work;
	int skip[TT_MC_KINDS];
	uint64_t *wbuf;
	_Atomic uint64_t units;
	atomic_int stop;
	pthread_t thread;
	clockid_t clk;
	uint64_t idle_ns, idle_units;
	struct tt_mc_sum sum[TT_MC_KINDS][TT_MC_NR];
	double tick_ns;
	char workers[32];
	double work_huge;
};

static void tt_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void tt_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "movecost: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

/*
 * The compute thread: read-modify-write its buffer, a unit at a time (a
 * TT_KERNEL, tt_bench.h: inside one page of code).
 */
static TT_KERNEL void *tt_mc_compute(void *arg)
{
	struct tt_mc *b = arg;
	size_t words = b->work / sizeof(uint64_t);
	size_t per = TT_MC_UNIT / sizeof(uint64_t), i = 0, j;
	uint64_t n = 0;

	while (!atomic_load_explicit(&b->stop, memory_order_relaxed)) {
		for (j = 0; j < per; j++)
			b->wbuf[i + j] = b->wbuf[i + j] * TT_MC_MUL + j;
		i = i + per >= words ? 0 : i + per;
		atomic_store_explicit(&b->units, ++n, memory_order_relaxed);
	}
	return NULL;
}

/* TLB shootdowns received so far per CPU (/proc/interrupts): 0 when unreadable. */
static void tt_mc_tlb(uint64_t *tlb)
{
	char line[8192], *p, *end;
	int cpu = 0;
	FILE *f = fopen("/proc/interrupts", "r");

	memset(tlb, 0, TT_MC_MAX_CPUS * sizeof(*tlb));
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " ");
		if (strncmp(p, "TLB:", 4))
			continue;
		p += 4;
		for (cpu = 0; cpu < TT_MC_MAX_CPUS; cpu++) {
			unsigned long long v = strtoull(p, &end, 10);

			if (end == p)
				break;
			tlb[cpu] = v;
			p = end;
		}
		break;
	}
	fclose(f);
}

/* Busy time of all CPUs so far (/proc/stat "cpu" line), in ticks. */
static uint64_t tt_mc_busy_ticks(void)
{
	unsigned long long v[8] = { 0 };
	char line[512];
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		tt_die("/proc/stat: %s", strerror(errno));
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
		tt_die("/proc/stat: no cpu line");
	fclose(f);
	/* user nice system idle iowait irq softirq steal: all but idle, iowait */
	return v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
}

static void tt_mc_sample(struct tt_mc *b, struct tt_mc_sample *s)
{
	struct timespec ts;

	tt_mc_tlb(s->tlb);
	s->busy_ns = (uint64_t)(tt_mc_busy_ticks() * b->tick_ns);
	if (clock_gettime(b->clk, &ts))
		tt_die("the compute thread's CPU clock: %s", strerror(errno));
	s->cpu_ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	s->units = atomic_load_explicit(&b->units, memory_order_relaxed);
	s->ns = tt_st_now_ns();
}

/* Placement after a move and, when @full, the data: abort on a mismatch. */
static void tt_mc_verify(const char *what, const void *buf, size_t len,
			 int node, uint64_t seed, int full)
{
	struct tt_st_place p;
	uint64_t want = len / tt_page_size();
	long long off;
	int ret;

	ret = tt_st_place_settled(buf, len, node, want, &p);
	if (ret)
		tt_die("%s: move_pages(2) status query: %s", what,
		       strerror(-ret));
	if (p.on_node[node] != want) {
		char d[512];

		tt_die("%s: %llu of %llu pages on node %d (%s)", what,
		       (unsigned long long)p.on_node[node],
		       (unsigned long long)want, node,
		       tt_st_place_str(&p, d, sizeof(d)));
	}
	if (!full)
		return;
	off = tt_st_check(buf, len, seed);
	if (off != -1)
		tt_die("%s: data differs at offset %lld", what, off);
}

/* Move @buf to @node with @m (not memcpy). */
static void tt_mc_move(struct tt_mc *b, enum tt_mc_method m, void *buf,
		       size_t len, int node)
{
	struct tt_migrate_result r;
	int ret, left = 0;

	if (m != TT_MC_MOVE_PAGES && m != TT_MC_COLLAPSE) {
		ret = tt_migrate_ex(b->s[m], buf, len, node, 0, &r);
		if (ret)
			tt_die("%s: tt_migrate_ex(%zu MiB to node %d): %s",
			       tt_mc_name[m], len / TT_ST_MIB, node,
			       strerror(-ret));
		return;
	}
	if (m == TT_MC_COLLAPSE && madvise(buf, len, MADV_COLLAPSE) &&
	    errno != EAGAIN)
		tt_die("madvise(MADV_COLLAPSE, %zu MiB): %s", len / TT_ST_MIB,
		       strerror(errno));
	ret = tt_st_move_pages(buf, len, node, &left);
	if (ret)
		tt_die("move_pages(%zu MiB to node %d): %s", len / TT_ST_MIB,
		       node, strerror(-ret));
	if (left)
		tt_die("move_pages left %d pages of %zu MiB behind", left,
		       len / TT_ST_MIB);
}

static double tt_mc_huge_pct(const void *buf, size_t len)
{
	long long kb = tt_st_smaps_kb(buf, len, "AnonHugePages");

	return kb < 0 ? 0 : 100.0 * kb * 1024 / len;
}

/*
 * A 2 MiB-aligned buffer of @k's kind filled with @seed, on @node when
 * @node >= 0 (mbind), else where the process runs (the fast node). Base
 * pages are faulted under MADV_NOHUGEPAGE, lifted afterwards when
 * @collapsible (the pages stay base pages: khugepaged is paused).
 */
static char *tt_mc_buffer(struct tt_mc *b, const struct tt_mc_kind *k,
			  int node, uint64_t seed, int collapsible)
{
	char *m = tt_st_map(b->size, 1);
	int ret;

	if (!m)
		tt_die("mmap %zu MiB: %s", b->size / TT_ST_MIB,
		       strerror(errno));
	if (k->thp < 0 && madvise(m, b->size, MADV_NOHUGEPAGE))
		tt_die("madvise(MADV_NOHUGEPAGE): %s", strerror(errno));
	if (node >= 0) {
		ret = tt_st_bind(m, b->size, node);
		if (ret)
			tt_die("mbind to node %d: %s", node, strerror(-ret));
	}
	tt_st_fill(m, b->size, seed);
	if (k->thp < 0 && collapsible && madvise(m, b->size, MADV_HUGEPAGE))
		tt_die("madvise(MADV_HUGEPAGE): %s", strerror(errno));
	return m;
}

static void tt_mc_add(struct tt_mc *b, struct tt_mc_sum *r,
		      const struct tt_mc_sample *a, const struct tt_mc_sample *z)
{
	uint64_t busy = z->busy_ns - a->busy_ns, cpu = z->cpu_ns - a->cpu_ns;
	int c;

	r->move_ns += z->ns - a->ns;
	r->units += z->units - a->units;
	r->cpu_ns += cpu;
	r->busy_ns += busy;
	r->tlb_cpu += z->tlb[b->cpu] - a->tlb[b->cpu];
	for (c = 0; c < TT_MC_MAX_CPUS; c++)
		r->tlb_all += z->tlb[c] - a->tlb[c];
}

/* One round trip of method @m on kind @ki, after the compute thread's solo window. */
static void tt_mc_round(struct tt_mc *b, size_t ki, enum tt_mc_method m,
			int rep)
{
	const struct tt_mc_kind *k = &tt_mc_kinds[ki];
	struct tt_mc_sum *r = &b->sum[ki][m];
	uint64_t seed = ki * 64 + m + rep * 1024;
	struct tt_mc_sample s0, s1;
	char *buf, *on_slow = NULL, *on_fast = NULL, what[96];
	long long split0;

	/* the movers' path for base pages, set outside the timed window */
	if (m == TT_MC_MOVERS || m == TT_MC_MOVERS_COL) {
		int ret = tt_st_param_write("mover_base",
					    m == TT_MC_MOVERS_COL ? 2 : 1);

		if (ret)
			tt_die("setting the module's mover_base: %s",
			       strerror(-ret));
	}
	buf = tt_mc_buffer(b, k, -1, seed,
			   m == TT_MC_COLLAPSE || m == TT_MC_MOVERS_COL);
	tt_mc_verify("before", buf, b->size, b->fast, seed, 0);
	if (m == TT_MC_MEMCPY) {
		on_slow = tt_mc_buffer(b, k, b->slow, 0, 0);
		on_fast = tt_mc_buffer(b, k, b->fast, 0, 0);
	}
	tt_mc_sample(b, &s0);
	usleep(b->idle_ms * 1000);
	tt_mc_sample(b, &s1);
	b->idle_ns += s1.ns - s0.ns;
	b->idle_units += s1.units - s0.units;

	split0 = tt_st_vmstat("thp_split_page");
	tt_mc_sample(b, &s0);
	if (m == TT_MC_MEMCPY) {
		memcpy(on_slow, buf, b->size);
		memcpy(on_fast, on_slow, b->size);
	} else {
		tt_mc_move(b, m, buf, b->size, b->slow);
		tt_mc_sample(b, &s1);
		tt_mc_add(b, r, &s0, &s1);
		snprintf(what, sizeof(what), "%s %s to node %d", k->name,
			 tt_mc_name[m], b->slow);
		tt_mc_verify(what, buf, b->size, b->slow, seed, 0);
		tt_mc_sample(b, &s0);
		tt_mc_move(b, m, buf, b->size, b->fast);
	}
	tt_mc_sample(b, &s1);
	tt_mc_add(b, r, &s0, &s1);
	r->thp_split += tt_st_vmstat("thp_split_page") - split0;
	r->bytes += 2 * b->size;
	snprintf(what, sizeof(what), "%s %s to node %d", k->name, tt_mc_name[m],
		 b->fast);
	if (m == TT_MC_MEMCPY) {
		tt_mc_verify(what, on_fast, b->size, b->fast, seed, 1);
		r->huge_after += tt_mc_huge_pct(on_fast, b->size) / b->reps;
		munmap(on_slow, b->size);
		munmap(on_fast, b->size);
	} else {
		tt_mc_verify(what, buf, b->size, b->fast, seed, 1);
		r->huge_after += tt_mc_huge_pct(buf, b->size) / b->reps;
	}
	munmap(buf, b->size);
}

/* The figures of @r, derived as the header comment says. */
struct tt_mc_fig {
	double mbps, lost_ms_per_mib, slowdown_pct, tlb_cpu_per_mib;
	double tlb_all_per_mib, cpu_ms_per_mib;
};

static struct tt_mc_fig tt_mc_figures(const struct tt_mc *b,
				      const struct tt_mc_sum *r)
{
	double mib = r->bytes / (double)TT_ST_MIB;
	double ref = b->idle_ns ? b->idle_units / (double)b->idle_ns : 0;
	double rate = r->move_ns ? r->units / (double)r->move_ns : 0;
	double busy = r->busy_ns > r->cpu_ns ? r->busy_ns - r->cpu_ns : 0;
	struct tt_mc_fig f = { 0 };

	if (!r->bytes || !r->move_ns || ref <= 0)
		return f;
	f.mbps = r->bytes / 1e6 / (r->move_ns / 1e9);
	f.lost_ms_per_mib = (r->move_ns - r->units / ref) / 1e6 / mib;
	f.slowdown_pct = rate > 0 ? 100.0 * (ref / rate - 1) : 0;
	f.tlb_cpu_per_mib = r->tlb_cpu / mib;
	f.tlb_all_per_mib = r->tlb_all / mib;
	f.cpu_ms_per_mib = busy / 1e6 / mib;
	return f;
}

static void tt_mc_print(const struct tt_mc *b)
{
	struct utsname u;
	size_t ki;
	int m;

	uname(&u);
	printf("\nkernel %s; node %d fast, node %d slow; %zu MiB moved to the slow node and back, %d round trips per method (methods taking turns); compute thread on CPU %d over %zu MiB (%.0f%% huge pages), alone %d ms before each round trip at %.1f MB/s; module workers %s\n",
	       u.release, b->fast, b->slow, b->size / TT_ST_MIB, b->reps,
	       b->cpu, b->work / TT_ST_MIB, b->work_huge, b->idle_ms,
	       b->idle_ns ? b->idle_units * TT_MC_UNIT / 1e6 /
			    (b->idle_ns / 1e9) : 0,
	       b->workers);
	printf("%-5s %-10s %9s %12s %9s %8s %8s %11s %6s %9s\n", "kind",
	       "method", "MB/s", "lost ms/MiB", "slowdown", "tlb/MiB",
	       "all/MiB", "cpu ms/MiB", "huge%", "thp_split");
	for (ki = 0; ki < TT_MC_KINDS; ki++) {
		if (b->skip[ki])
			continue;
		for (m = 0; m < TT_MC_NR; m++) {
			const struct tt_mc_sum *r = &b->sum[ki][m];
			struct tt_mc_fig f = tt_mc_figures(b, r);

			printf("%-5s %-10s %9.1f %12.3f %8.1f%% %8.1f %8.1f %11.2f %5.0f%% %9lld\n",
			       tt_mc_kinds[ki].name, tt_mc_name[m], f.mbps,
			       f.lost_ms_per_mib, f.slowdown_pct,
			       f.tlb_cpu_per_mib, f.tlb_all_per_mib,
			       f.cpu_ms_per_mib, r->huge_after, r->thp_split);
		}
	}
	printf("lost ms/MiB: compute time the computing thread lost per MiB moved; slowdown:\n"
	       "its rate during the moves against its rate alone; tlb/MiB: TLB shootdowns its\n"
	       "CPU received per MiB moved (all/MiB: every CPU); cpu ms/MiB: CPU time of the\n"
	       "moves (all CPUs' busy time minus the computing thread's); huge%%: the moved\n"
	       "buffer's share in huge pages after its round trips (memcpy: its copy's)\n");
}

static void tt_mc_json(const struct tt_mc *b, const char *path)
{
	struct utsname u;
	size_t ki;
	int m, rows = 0;
	char dir[4096] = "";
	FILE *f;
	int ret = tt_st_mkdirs(path, dir, sizeof(dir));

	if (ret)
		tt_die("mkdir %s: %s", dir[0] ? dir : path, strerror(-ret));
	f = fopen(path, "w");
	if (!f)
		tt_die("cannot write %s: %s", path, strerror(errno));
	uname(&u);
	fprintf(f, "{\n  \"bench\": \"movecost\",\n  \"kernel\": \"%s\",\n  \"library\": \"%s\",\n",
		u.release, tt_version());
	fprintf(f, "  \"fast_node\": %d,\n  \"slow_node\": %d,\n  \"compute_cpu\": %d,\n",
		b->fast, b->slow, b->cpu);
	fprintf(f, "  \"size_mib\": %zu,\n  \"work_mib\": %zu,\n  \"work_huge_pct\": %.1f,\n  \"reps\": %d,\n  \"idle_ms\": %d,\n  \"workers\": \"%s\",\n",
		b->size / TT_ST_MIB, b->work / TT_ST_MIB, b->work_huge,
		b->reps, b->idle_ms, b->workers);
	fprintf(f, "  \"compute_alone_mbps\": %.1f,\n  \"rows\": [",
		b->idle_ns ? b->idle_units * TT_MC_UNIT / 1e6 /
			     (b->idle_ns / 1e9) : 0);
	for (ki = 0; ki < TT_MC_KINDS; ki++) {
		if (b->skip[ki])
			continue;
		for (m = 0; m < TT_MC_NR; m++) {
			const struct tt_mc_sum *r = &b->sum[ki][m];
			struct tt_mc_fig x = tt_mc_figures(b, r);

			fprintf(f, "%s\n    {\"kind\": \"%s\", \"method\": \"%s\", \"bytes\": %llu, \"move_ns\": %llu, \"mbps\": %.1f, \"lost_ms_per_mib\": %.4f, \"slowdown_pct\": %.2f, \"tlb_compute_cpu\": %llu, \"tlb_all\": %llu, \"tlb_compute_cpu_per_mib\": %.2f, \"tlb_all_per_mib\": %.2f, \"cpu_ms_per_mib\": %.3f, \"huge_pct_after\": %.1f, \"thp_split_page\": %lld}",
				rows++ ? "," : "", tt_mc_kinds[ki].name,
				tt_mc_name[m], (unsigned long long)r->bytes,
				(unsigned long long)r->move_ns, x.mbps,
				x.lost_ms_per_mib, x.slowdown_pct,
				(unsigned long long)r->tlb_cpu,
				(unsigned long long)r->tlb_all,
				x.tlb_cpu_per_mib, x.tlb_all_per_mib,
				x.cpu_ms_per_mib, r->huge_after, r->thp_split);
		}
	}
	fprintf(f, "\n  ]\n}\n");
	if (fclose(f))
		tt_die("writing %s: %s", path, strerror(errno));
}

static void tt_usage(FILE *f)
{
	fprintf(f,
		"Usage: movecost [-k base|thp] [-s MIB] [-w MIB] [-r REPS] [-i MS] [-o FILE]\n"
		"Measure what moving a buffer to the slow node and back costs a thread of the\n"
		"same process that computes meanwhile, for tiertrain's engine, tiertrain with\n"
		"its mover thread (module setting mover_base 1, and 2 on a buffer that allows\n"
		"huge pages), libtiertrain's move_pages backend, one move_pages(2) call,\n"
		"MADV_COLLAPSE then move_pages(2), and a plain memcpy. Needs tiertrain.ko loaded, a node with 2 or more CPUs\n"
		"and a memory-only node.\n"
		"  -k KIND  only base-page or only THP-backed moved buffers (default both)\n"
		"  -s MIB   size of the moved buffer, 2..1024, a multiple of 2 (default 64)\n"
		"  -w MIB   size of the computing thread's buffer, 1..1024 (default 16)\n"
		"  -r REPS  round trips per method and kind, 1..100 (default 5)\n"
		"  -i MS    the computing thread's solo window before each round trip,\n"
		"           10..10000 (default 200)\n"
		"  -o FILE  JSON output (default build/bench/movecost.json)\n");
}

static int tt_mc_int(const char *opt, const char *arg, int lo, int hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < lo || v > hi)
		tt_die("%s '%s': want an integer in %d..%d", opt, arg, lo, hi);
	return (int)v;
}

/* The CPUs of @node: the first for the compute thread, the others in @rest. */
static void tt_mc_cpus(struct tt_mc *b, cpu_set_t *rest)
{
	cpu_set_t all;
	int c, n = 0;

	if (tt_st_run_on_node(b->fast))
		tt_die("cannot run on the CPUs of node %d", b->fast);
	if (sched_getaffinity(0, sizeof(all), &all))
		tt_die("sched_getaffinity: %s", strerror(errno));
	CPU_ZERO(rest);
	b->cpu = -1;
	for (c = 0; c < CPU_SETSIZE && c < TT_MC_MAX_CPUS; c++) {
		if (!CPU_ISSET(c, &all))
			continue;
		n++;
		if (b->cpu < 0)
			b->cpu = c;
		else
			CPU_SET(c, rest);
	}
	if (n < 2)
		tt_die("node %d has %d usable CPU%s: the computing thread and the moves need 2",
		       b->fast, n, n == 1 ? "" : "s");
}

static void *tt_mc_start(void *arg)
{
	struct tt_mc *b = arg;
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(b->cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		tt_die("pinning the computing thread to CPU %d: %s", b->cpu,
		       strerror(errno));
	return tt_mc_compute(b);
}

int main(int argc, char **argv)
{
	const char *out = "build/bench/movecost.json", *only = NULL;
	static struct tt_mc b;
	struct tt_st_topo topo;
	long long khp_sleep, mover_base = 0;
	cpu_set_t rest;
	size_t ki;
	int opt, ret, m, rep;

	b.size = 64 * TT_ST_MIB;
	b.work = 16 * TT_ST_MIB;
	b.reps = 5;
	b.idle_ms = 200;
	while ((opt = getopt(argc, argv, "k:s:w:r:i:o:h")) != -1) {
		switch (opt) {
		case 'k':
			if (strcmp(optarg, "base") && strcmp(optarg, "thp"))
				tt_die("-k '%s': want base or thp", optarg);
			only = optarg;
			break;
		case 's':
			b.size = tt_mc_int("-s", optarg, 2, 1024) * TT_ST_MIB;
			if (b.size % TT_ST_THP_SIZE)
				tt_die("-s '%s': want a multiple of 2 MiB",
				       optarg);
			break;
		case 'w':
			b.work = tt_mc_int("-w", optarg, 1, 1024) * TT_ST_MIB;
			break;
		case 'r':
			b.reps = tt_mc_int("-r", optarg, 1, 100);
			break;
		case 'i':
			b.idle_ms = tt_mc_int("-i", optarg, 10, 10000);
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			tt_usage(stdout);
			return 0;
		default:
			tt_usage(stderr);
			return 2;
		}
	}
	if (optind != argc)
		tt_die("unexpected argument '%s' (see -h)", argv[optind]);

	ret = tt_st_topo_read(&topo);
	if (ret)
		tt_die("reading the NUMA topology: %s", strerror(-ret));
	if (topo.fast < 0 || topo.slow < 0)
		tt_die("needs a node with CPUs and a memory-only node (fast %d, slow %d)",
		       topo.fast, topo.slow);
	b.fast = topo.fast;
	b.slow = topo.slow;
	tt_mc_cpus(&b, &rest);
	if (access(TT_ST_DEV, F_OK))
		tt_die("%s missing: load tiertrain.ko first", TT_ST_DEV);
	b.tick_ns = 1e9 / sysconf(_SC_CLK_TCK);
	if (tt_st_read_file(TT_ST_WORKERS, b.workers, sizeof(b.workers)) < 0)
		snprintf(b.workers, sizeof(b.workers), "?");

	/* the sessions, opened on every CPU of the fast node */
	setenv("TIERTRAIN_BACKEND", "kernel", 1);
	setenv("TIERTRAIN_MOVER", "0", 1);
	b.s[TT_MC_ENGINE] = tt_open();
	if (!b.s[TT_MC_ENGINE])
		tt_die("tt_open (kernel, no mover): %s", strerror(errno));
	unsetenv("TIERTRAIN_MOVER");
	b.s[TT_MC_MOVERS] = tt_open();
	b.s[TT_MC_MOVERS_COL] = tt_open();
	if (!b.s[TT_MC_MOVERS] || !b.s[TT_MC_MOVERS_COL])
		tt_die("tt_open (kernel): %s", strerror(errno));
	if (tt_st_read_ll(TT_ST_SYSMOD "/parameters/mover_base", &mover_base))
		tt_die("the module has no mover_base parameter: load this tree's tiertrain.ko");
	setenv("TIERTRAIN_BACKEND", "move_pages", 1);
	b.s[TT_MC_USERSPACE] = tt_open();
	if (!b.s[TT_MC_USERSPACE])
		tt_die("tt_open (move_pages): %s", strerror(errno));
	unsetenv("TIERTRAIN_BACKEND");

	ret = tt_st_khugepaged_pause(&khp_sleep);
	if (ret)
		tt_die("pausing khugepaged: %s", strerror(-ret));
	b.wbuf = tt_st_map(b.work, 0);
	if (!b.wbuf)
		tt_die("mmap %zu MiB: %s", b.work / TT_ST_MIB, strerror(errno));
	tt_st_fill(b.wbuf, b.work, 7);
	b.work_huge = tt_mc_huge_pct(b.wbuf, b.work);
	ret = pthread_create(&b.thread, NULL, tt_mc_start, &b);
	if (ret)
		tt_die("starting the computing thread: %s", strerror(ret));
	ret = pthread_getcpuclockid(b.thread, &b.clk);
	if (ret)
		tt_die("pthread_getcpuclockid: %s", strerror(ret));
	if (sched_setaffinity(0, sizeof(rest), &rest))
		tt_die("sched_setaffinity: %s", strerror(errno));

	for (ki = 0; ki < TT_MC_KINDS; ki++) {
		b.skip[ki] = only && strcmp(only, tt_mc_kinds[ki].name);
		if (b.skip[ki])
			continue;
		fprintf(stderr, "movecost: %s, %zu MiB ...\n",
			tt_mc_kinds[ki].name, b.size / TT_ST_MIB);
		for (rep = 0; rep < b.reps; rep++)
			for (m = 0; m < TT_MC_NR; m++)
				tt_mc_round(&b, ki,
					    (enum tt_mc_method)((m + rep) % TT_MC_NR),
					    rep);
	}
	atomic_store(&b.stop, 1);
	pthread_join(b.thread, NULL);
	tt_st_khugepaged_resume(khp_sleep);
	tt_st_param_write("mover_base", mover_base);
	for (m = 0; m < TT_MC_NR; m++)
		tt_close(b.s[m]);

	tt_mc_print(&b);
	tt_mc_json(&b, out);
	printf("JSON: %s\n", out);
	return 0;
}
