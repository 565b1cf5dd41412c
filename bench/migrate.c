// SPDX-License-Identifier: GPL-2.0
/*
 * bench/migrate: throughput of moving a buffer between a fast and a slow
 * NUMA node, five ways, side by side in one run:
 *
 *   engine_w1   tiertrain's in-kernel engine (TT_IOC_MIGRATE through
 *               libtiertrain, synchronous) with workers=1;
 *   engine_w2   the same with workers=2;
 *   tiertrain   what a session with movers gets (tt_mover_start(), the
 *               library's default of 2 threads unless -m, workers=2): huge
 *               pages moved whole by the movers
 *               with move_pages(2), base pages by the engine
 *               (Documentation/mover.md);
 *   move_pages  one move_pages(2) call over the whole buffer, as an
 *               application would make it (the kernel chunks it itself);
 *   memcpy      memcpy() into a pre-faulted buffer bound (mbind) to the
 *               other node: the cost of copying the bytes alone.
 *
 * Buffers of 4, 16, 64 and 256 MiB of base pages (MADV_NOHUGEPAGE) and of
 * 64 and 256 MiB backed by transparent huge pages (MADV_HUGEPAGE), each
 * pre-faulted on the fast node. Each method moves each buffer fast -> slow
 * and slow -> fast; the figure is the median MB/s (10^6 bytes/s, wall time
 * of the call) of @reps repetitions. The methods take turns repetition
 * by repetition (engine_w1, engine_w2, tiertrain, move_pages, then the
 * next repetition), so a change in the host's load weighs on each alike;
 * each repetition maps and fills a fresh buffer (the engine splits huge
 * pages).
 * After every move the placement is checked with move_pages(2) status
 * queries and a sample of the data (first and last word of each page);
 * after the last repetition of each case all the data is compared. A
 * mismatch aborts the run: the benchmark cannot time a no-op. khugepaged
 * is paused during the run (it would collapse split pages again, on the
 * node it last saw them on).
 *
 * Output: a table on stdout with the ratios engine_w1 / move_pages (the
 * engine's goal is >= 1.5) and tiertrain / move_pages per size and
 * direction (issue 8's goals: >= 1.2 on base pages, >= 1.0 on THP), then
 * per buffer kind what the tiertrain method's moves did: bytes per
 * backend, huge pages kept and split (session counters), thp_split_page
 * of /proc/vmstat, and the share of the buffer in huge pages before its
 * first move and after its last round trip; and JSON (-o, default
 * build/bench/migrate.json).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/mempolicy.h>

#include <tiertrain.h>
#include "tt_selftest.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define TT_BENCH_MAX_REPS	64
#define TT_BENCH_GOAL		1.5
#define TT_BENCH_GOAL_BASE	1.2
#define TT_BENCH_GOAL_THP	1.0
#define TT_BENCH_MOVERS		2

enum tt_bench_method {
	TT_M_ENGINE_W1,
	TT_M_ENGINE_W2,
	TT_M_TIERTRAIN,
	TT_M_MOVE_PAGES,
	TT_M_MEMCPY,
	TT_M_NR,
};

static const char *const tt_method_name[TT_M_NR] = {
	"engine_w1", "engine_w2", "tiertrain", "move_pages", "memcpy",
};

/**
 * struct tt_bench_case - one buffer kind and size
 * @kind: "base" or "thp".
 * @thp:  argument of tt_st_map(): -1 base pages, 1 huge pages.
 * @mib:  buffer size in MiB.
 */
struct tt_bench_case {
	const char *kind;
	int thp;
	size_t mib;
};

static const struct tt_bench_case tt_cases[] = {
	{ "base", -1, 4 },
	{ "base", -1, 16 },
	{ "base", -1, 64 },
	{ "base", -1, 256 },
	{ "thp", 1, 64 },
	{ "thp", 1, 256 },
};

#define TT_NR_CASES	ARRAY_SIZE(tt_cases)

/**
 * struct tt_bench_result - the measurements of one case and method
 * @mbps:     MB/s of each repetition, [0] fast -> slow, [1] slow -> fast.
 * @median:   median of each direction.
 * @huge_pct: share of the buffer in huge pages before the first move (THP).
 * @huge_after_pct: the same after the last round trip.
 * @thp_split: thp_split_page of /proc/vmstat during the method's moves.
 * @st:       the session counters the method's moves added (TIERTRAIN).
 */
struct tt_bench_result {
	double mbps[2][TT_BENCH_MAX_REPS];
	double median[2];
	double huge_pct;
	double huge_after_pct;
	long long thp_split;
	struct tt_ioc_stats st;
};

/**
 * struct tt_bench - the run
 * @s:       libtiertrain session (kernel backend).
 * @sm:      a second one, with TT_BENCH_MOVERS mover threads.
 * @fast:    node the buffers start on (has the CPUs we run on).
 * @slow:    memory-only node they move to.
 * @reps:    repetitions per case, method and direction.
 * @movers:  mover threads of @sm.
 * @orig_workers: value of the workers parameter to restore.
 * @res:     results, by case and method.
 * @skip:    cases left out (-k).
 */
struct tt_bench {
	struct tt_session *s;
	struct tt_session *sm;
	int skip[TT_NR_CASES];
	int fast, slow, reps, movers;
	long long orig_workers;
	struct tt_bench_result res[TT_NR_CASES][TT_M_NR];
};

static void tt_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void tt_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "migrate: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static int tt_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double tt_median(const double *v, int n)
{
	double tmp[TT_BENCH_MAX_REPS];

	memcpy(tmp, v, n * sizeof(*v));
	qsort(tmp, n, sizeof(*tmp), tt_cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

static void tt_set_workers(int n)
{
	char v[16];
	long long got = -1;
	int ret;

	snprintf(v, sizeof(v), "%d", n);
	ret = tt_st_write_file(TT_ST_WORKERS, v);
	if (ret)
		tt_die("cannot set %s to %d: %s", TT_ST_WORKERS, n,
		       strerror(-ret));
	if (tt_st_read_ll(TT_ST_WORKERS, &got) || got != n)
		tt_die("%s reads %lld after writing %d", TT_ST_WORKERS, got, n);
}

/* Placement and sampled data after a move; abort the run on any mismatch. */
static void tt_verify(const char *what, const void *buf, size_t len, int node,
		      uint64_t seed, int full)
{
	struct tt_st_place *p;
	long long off;
	uint64_t want;
	int ret;

	p = malloc(sizeof(*p));
	if (!p)
		tt_die("out of memory");
	want = len / tt_page_size();
	ret = tt_st_place_settled(buf, len, node, want, p);
	if (ret)
		tt_die("%s: move_pages(2) status query: %s", what,
		       strerror(-ret));
	if (p->on_node[node] != want) {
		char d[512];

		tt_die("%s: %llu of %llu pages on node %d after the move (%s; AnonHugePages %lld kB)",
		       what, (unsigned long long)p->on_node[node],
		       (unsigned long long)want, node,
		       tt_st_place_str(p, d, sizeof(d)),
		       tt_st_smaps_kb(buf, len, "AnonHugePages"));
	}
	free(p);
	off = full ? tt_st_check(buf, len, seed) :
		     tt_st_check_sample(buf, len, seed);
	if (off != -1)
		tt_die("%s: data differs at offset %lld", what, off);
}

/**
 * struct tt_mp_args - move_pages(2) arguments built before the clock starts
 * @pages:  page addresses.
 * @nodes:  target node of each page.
 * @status: status array.
 * @n:      number of pages.
 */
struct tt_mp_args {
	void **pages;
	int *nodes;
	int *status;
	size_t n;
};

static void tt_mp_prepare(struct tt_mp_args *a, void *buf, size_t len)
{
	size_t ps = tt_page_size(), i;

	a->n = len / ps;
	a->pages = malloc(a->n * sizeof(*a->pages));
	a->nodes = malloc(a->n * sizeof(*a->nodes));
	a->status = malloc(a->n * sizeof(*a->status));
	if (!a->pages || !a->nodes || !a->status)
		tt_die("out of memory for move_pages arrays");
	for (i = 0; i < a->n; i++)
		a->pages[i] = (char *)buf + i * ps;
}

static void tt_mp_free(struct tt_mp_args *a)
{
	free(a->pages);
	free(a->nodes);
	free(a->status);
}

/* Move @buf to @node with @method and return the wall time in ns. */
static uint64_t tt_move(struct tt_bench *b, enum tt_bench_method method,
			void *buf, size_t len, int node)
{
	struct tt_migrate_result r;
	struct tt_mp_args a;
	uint64_t t0, t1;
	size_t i;
	long ret;

	switch (method) {
	case TT_M_ENGINE_W1:
	case TT_M_ENGINE_W2:
	case TT_M_TIERTRAIN:
		t0 = tt_st_now_ns();
		ret = tt_migrate_ex(method == TT_M_TIERTRAIN ? b->sm : b->s,
				    buf, len, node, 0, &r);
		t1 = tt_st_now_ns();
		if (ret)
			tt_die("tt_migrate_ex(%zu MiB to node %d): %s",
			       len / TT_ST_MIB, node, strerror((int)-ret));
		if (r.moved != len / tt_page_size())
			tt_die("engine moved %llu of %zu pages (busy %llu, no memory %llu)",
			       (unsigned long long)r.moved,
			       len / tt_page_size(),
			       (unsigned long long)r.skipped_busy,
			       (unsigned long long)r.skipped_no_memory);
		return t1 - t0;
	case TT_M_MOVE_PAGES:
		tt_mp_prepare(&a, buf, len);
		for (i = 0; i < a.n; i++)
			a.nodes[i] = node;
		t0 = tt_st_now_ns();
		ret = syscall(SYS_move_pages, 0, a.n, a.pages, a.nodes,
			      a.status, MPOL_MF_MOVE);
		t1 = tt_st_now_ns();
		if (ret < 0)
			tt_die("move_pages(%zu pages to node %d): %s", a.n,
			       node, strerror(errno));
		if (ret > 0)
			tt_die("move_pages left %ld of %zu pages behind", ret,
			       a.n);
		tt_mp_free(&a);
		return t1 - t0;
	default:
		tt_die("method %d does not migrate", method);
	}
}

/* A buffer of @c filled with @seed on the fast node. */
static char *tt_new_buffer(const struct tt_bench_case *c, uint64_t seed)
{
	size_t len = c->mib * TT_ST_MIB;
	char *m = tt_st_map(len, c->thp);

	if (!m)
		tt_die("mmap %zu MiB: %s", c->mib, strerror(errno));
	tt_st_fill(m, len, seed);
	return m;
}

/* Add the backend counters of @b minus those of @a to @d. */
static void tt_stats_add_delta(struct tt_ioc_stats *d,
			       const struct tt_ioc_stats *b,
			       const struct tt_ioc_stats *a)
{
	d->engine_bytes += b->engine_bytes - a->engine_bytes;
	d->mover_bytes += b->mover_bytes - a->mover_bytes;
	d->huge_kept += b->huge_kept - a->huge_kept;
	d->huge_split += b->huge_split - a->huge_split;
	d->huge_partial += b->huge_partial - a->huge_partial;
	d->mover_fallbacks += b->mover_fallbacks - a->mover_fallbacks;
}

static double tt_huge_pct(const void *buf, size_t len)
{
	long long kb = tt_st_smaps_kb(buf, len, "AnonHugePages");

	return kb < 0 ? 0 : 100.0 * kb * 1024 / len;
}

static double tt_mbps(size_t len, uint64_t ns)
{
	return ns ? len / 1e6 / (ns / 1e9) : 0;
}

/*
 * Repetition @rep of method @m on case @ci: a fresh buffer filled on the
 * fast node, moved to the slow node and back, checked after each move
 * (all of it after the last repetition).
 */
static void tt_run_migration(struct tt_bench *b, size_t ci,
			     enum tt_bench_method m, int rep)
{
	const struct tt_bench_case *c = &tt_cases[ci];
	struct tt_bench_result *res = &b->res[ci][m];
	size_t len = c->mib * TT_ST_MIB;
	uint64_t seed = ci * 16 + m + rep * 1024;
	int last = rep == b->reps - 1;
	struct tt_ioc_stats st0, st1;
	long long split0;
	char what[96], *buf;

	if (m == TT_M_ENGINE_W1)
		tt_set_workers(1);
	else
		tt_set_workers(2);
	buf = tt_new_buffer(c, seed);
	tt_verify("before", buf, len, b->fast, seed, 0);
	if (!rep)
		res->huge_pct = tt_huge_pct(buf, len);
	if (tt_stats(b->sm, &st0))
		tt_die("tt_stats: %s", strerror(errno));
	split0 = tt_st_vmstat("thp_split_page");
	snprintf(what, sizeof(what), "%s %zu MiB %s to node %d", c->kind,
		 c->mib, tt_method_name[m], b->slow);
	res->mbps[0][rep] = tt_mbps(len, tt_move(b, m, buf, len, b->slow));
	tt_verify(what, buf, len, b->slow, seed, last);
	snprintf(what, sizeof(what), "%s %zu MiB %s to node %d", c->kind,
		 c->mib, tt_method_name[m], b->fast);
	res->mbps[1][rep] = tt_mbps(len, tt_move(b, m, buf, len, b->fast));
	tt_verify(what, buf, len, b->fast, seed, last);
	res->thp_split += tt_st_vmstat("thp_split_page") - split0;
	if (tt_stats(b->sm, &st1))
		tt_die("tt_stats: %s", strerror(errno));
	tt_stats_add_delta(&res->st, &st1, &st0);
	if (last)
		res->huge_after_pct = tt_huge_pct(buf, len);
	munmap(buf, len);
}

/* A pre-faulted buffer bound to @node, THP or not like @c. */
static char *tt_bound_buffer(const struct tt_bench_case *c, int node)
{
	size_t len = c->mib * TT_ST_MIB;
	char *m = tt_st_map(len, c->thp);
	int ret;

	if (!m)
		tt_die("mmap %zu MiB: %s", c->mib, strerror(errno));
	ret = tt_st_bind(m, len, node);
	if (ret)
		tt_die("mbind %zu MiB to node %d: %s", c->mib, node,
		       strerror(-ret));
	memset(m, 0, len);
	return m;
}

static void tt_run_memcpy(struct tt_bench *b, size_t ci)
{
	const struct tt_bench_case *c = &tt_cases[ci];
	struct tt_bench_result *res = &b->res[ci][TT_M_MEMCPY];
	size_t len = c->mib * TT_ST_MIB;
	uint64_t seed = ci * 16 + TT_M_MEMCPY, t0;
	char *src, *on_slow, *on_fast;
	int rep;

	src = tt_new_buffer(c, seed);
	res->huge_pct = tt_huge_pct(src, len);
	on_slow = tt_bound_buffer(c, b->slow);
	on_fast = tt_bound_buffer(c, b->fast);
	tt_verify("memcpy source", src, len, b->fast, seed, 0);
	for (rep = 0; rep < b->reps; rep++) {
		int last = rep == b->reps - 1;

		t0 = tt_st_now_ns();
		memcpy(on_slow, src, len);
		res->mbps[0][rep] = tt_mbps(len, tt_st_now_ns() - t0);
		tt_verify("memcpy to the slow node", on_slow, len, b->slow,
			  seed, last);
		t0 = tt_st_now_ns();
		memcpy(on_fast, on_slow, len);
		res->mbps[1][rep] = tt_mbps(len, tt_st_now_ns() - t0);
		tt_verify("memcpy to the fast node", on_fast, len, b->fast,
			  seed, last);
		memset(on_slow, 0, len);
		memset(on_fast, 0, len);
	}
	munmap(src, len);
	munmap(on_slow, len);
	munmap(on_fast, len);
}

/* The goal of tiertrain / move_pages for a buffer kind. */
static double tt_tt_goal(const struct tt_bench_case *c)
{
	return c->thp > 0 ? TT_BENCH_GOAL_THP : TT_BENCH_GOAL_BASE;
}

static void tt_print_table(const struct tt_bench *b)
{
	size_t ci;
	int d, m;

	printf("\nMB/s, median of %d; node %d = fast, node %d = slow\n",
	       b->reps, b->fast, b->slow);
	printf("%-5s %8s %-7s", "kind", "size", "dir");
	for (m = 0; m < TT_M_NR; m++)
		printf(" %11s", tt_method_name[m]);
	printf(" %9s %9s\n", "w1/mp", "tt/mp");
	for (ci = 0; ci < TT_NR_CASES; ci++) {
		const struct tt_bench_case *c = &tt_cases[ci];
		double goal = tt_tt_goal(c);

		if (b->skip[ci])
			continue;
		for (d = 0; d < 2; d++) {
			double mp = b->res[ci][TT_M_MOVE_PAGES].median[d];
			double e1 = b->res[ci][TT_M_ENGINE_W1].median[d];
			double tt = b->res[ci][TT_M_TIERTRAIN].median[d];

			printf("%-5s %4zu MiB %d->%d   ", c->kind, c->mib,
			       d ? b->slow : b->fast, d ? b->fast : b->slow);
			for (m = 0; m < TT_M_NR; m++)
				printf(" %11.1f", b->res[ci][m].median[d]);
			printf(" %8.2f%s", mp > 0 ? e1 / mp : 0,
			       mp > 0 && e1 / mp >= TT_BENCH_GOAL ? " " : "<");
			printf(" %8.2f%s\n", mp > 0 ? tt / mp : 0,
			       mp > 0 && tt / mp >= goal ? "" : "<");
		}
	}
	printf("w1/mp: engine_w1 / move_pages (goal >= %.1f); tt/mp: tiertrain / move_pages\n"
	       "(goal >= %.1f on base pages, >= %.1f on THP); '<' marks a miss\n",
	       TT_BENCH_GOAL, TT_BENCH_GOAL_BASE, TT_BENCH_GOAL_THP);

	printf("\nthe tiertrain method's moves (%d round trips per size; %d mover thread%s):\n",
	       b->reps, b->movers, b->movers > 1 ? "s" : "");
	printf("%-5s %8s %10s %10s %6s %6s %9s %10s %8s %8s\n", "kind", "size",
	       "mover MiB", "engine MiB", "kept", "split", "fallback",
	       "thp_split", "huge%0", "huge%1");
	for (ci = 0; ci < TT_NR_CASES; ci++) {
		const struct tt_bench_result *r = &b->res[ci][TT_M_TIERTRAIN];

		if (b->skip[ci])
			continue;
		printf("%-5s %4zu MiB %10.0f %10.0f %6llu %6llu %9llu %10lld %7.0f%% %7.0f%%\n",
		       tt_cases[ci].kind, tt_cases[ci].mib,
		       r->st.mover_bytes / (double)TT_ST_MIB,
		       r->st.engine_bytes / (double)TT_ST_MIB,
		       (unsigned long long)r->st.huge_kept,
		       (unsigned long long)r->st.huge_split,
		       (unsigned long long)r->st.mover_fallbacks,
		       r->thp_split, r->huge_pct, r->huge_after_pct);
	}
	printf("kept/split: huge pages moved whole / split (session counters); thp_split:\n"
	       "thp_split_page of /proc/vmstat during those moves; huge%%0/1: the buffer's\n"
	       "share in huge pages before its first move and after its last round trip\n");
	for (ci = 0; ci < TT_NR_CASES; ci++)
		if (tt_cases[ci].thp > 0 && !b->skip[ci])
			printf("thp %zu MiB, engine_w1: %.0f%% in huge pages before, %.0f%% after (thp_split_page +%lld)\n",
			       tt_cases[ci].mib,
			       b->res[ci][TT_M_ENGINE_W1].huge_pct,
			       b->res[ci][TT_M_ENGINE_W1].huge_after_pct,
			       b->res[ci][TT_M_ENGINE_W1].thp_split);
}

/* mkdir -p of the directory part of @path. */
static void tt_mkdirs(const char *path)
{
	char dir[4096] = "";
	int ret = tt_st_mkdirs(path, dir, sizeof(dir));

	if (ret)
		tt_die("mkdir %s: %s", dir[0] ? dir : path, strerror(-ret));
}

/* The tiertrain method's counters (both directions, all repetitions). */
static void tt_json_backends(FILE *f, const struct tt_bench_result *r)
{
	fprintf(f, ", \"tiertrain_moves\": {\"mover_bytes\": %llu, \"engine_bytes\": %llu, \"huge_kept\": %llu, \"huge_split\": %llu, \"huge_partial\": %llu, \"mover_fallbacks\": %llu, \"thp_split_page\": %lld, \"huge_pct_before\": %.1f, \"huge_pct_after\": %.1f}",
		(unsigned long long)r->st.mover_bytes,
		(unsigned long long)r->st.engine_bytes,
		(unsigned long long)r->st.huge_kept,
		(unsigned long long)r->st.huge_split,
		(unsigned long long)r->st.huge_partial,
		(unsigned long long)r->st.mover_fallbacks, r->thp_split,
		r->huge_pct, r->huge_after_pct);
}

static void tt_write_json(const struct tt_bench *b, const char *path)
{
	struct utsname u;
	size_t ci;
	int d, m, r, rows = 0;
	FILE *f;

	tt_mkdirs(path);
	f = fopen(path, "w");
	if (!f)
		tt_die("cannot write %s: %s", path, strerror(errno));
	uname(&u);
	fprintf(f, "{\n  \"bench\": \"migrate\",\n  \"unit\": \"MB/s\",\n");
	fprintf(f, "  \"kernel\": \"%s\",\n  \"library\": \"%s\",\n",
		u.release, tt_version());
	fprintf(f, "  \"fast_node\": %d,\n  \"slow_node\": %d,\n", b->fast,
		b->slow);
	fprintf(f, "  \"khugepaged\": \"paused\",\n  \"movers\": %d,\n", b->movers);
	fprintf(f, "  \"reps\": %d,\n  \"goal_engine_w1_over_move_pages\": %.1f,\n",
		b->reps, TT_BENCH_GOAL);
	fprintf(f, "  \"rows\": [");
	for (ci = 0; ci < TT_NR_CASES; ci++) {
		const struct tt_bench_case *c = &tt_cases[ci];

		if (b->skip[ci])
			continue;
		for (d = 0; d < 2; d++) {
			double mp = b->res[ci][TT_M_MOVE_PAGES].median[d];

			fprintf(f, "%s\n    {\"kind\": \"%s\", \"size_mib\": %zu, \"src_node\": %d, \"dst_node\": %d",
				rows++ ? "," : "", c->kind, c->mib,
				d ? b->slow : b->fast, d ? b->fast : b->slow);
			for (m = 0; m < TT_M_NR; m++) {
				fprintf(f, ", \"%s\": {\"median\": %.1f, \"samples\": [",
					tt_method_name[m],
					b->res[ci][m].median[d]);
				for (r = 0; r < b->reps; r++)
					fprintf(f, "%s%.1f", r ? ", " : "",
						b->res[ci][m].mbps[d][r]);
				fprintf(f, "]}");
			}
			fprintf(f, ", \"engine_w1_over_move_pages\": %.3f",
				mp > 0 ? b->res[ci][TT_M_ENGINE_W1].median[d] / mp : 0);
			fprintf(f, ", \"tiertrain_over_move_pages\": %.3f, \"goal_tiertrain_over_move_pages\": %.1f",
				mp > 0 ? b->res[ci][TT_M_TIERTRAIN].median[d] / mp : 0,
				tt_tt_goal(c));
			tt_json_backends(f, &b->res[ci][TT_M_TIERTRAIN]);
			if (c->thp > 0)
				fprintf(f, ", \"huge_pct_before\": %.1f",
					b->res[ci][TT_M_ENGINE_W1].huge_pct);
			fprintf(f, "}");
		}
	}
	fprintf(f, "\n  ]\n}\n");
	if (fclose(f))
		tt_die("writing %s: %s", path, strerror(errno));
}

static void tt_usage(FILE *f)
{
	fprintf(f,
		"Usage: migrate [-k base|thp] [-m MOVERS] [-o FILE] [-r REPS]\n"
		"Measure fast->slow and slow->fast migration throughput of tiertrain's\n"
		"engine (workers=1 and 2), tiertrain with mover threads, move_pages(2) and\n"
		"memcpy on 4-256 MiB buffers of base pages and of huge pages.\n"
		"Needs tiertrain.ko loaded, a node with CPUs and a memory-only node.\n"
		"  -k KIND  only the base-page or only the THP buffers\n"
		"  -m N     mover threads of the tiertrain method, 1..64 (default %d)\n"
		"  -o FILE  JSON output (default build/bench/migrate.json)\n"
		"  -r REPS  repetitions per measurement, 1..%d (default 5)\n",
		TT_BENCH_MOVERS, TT_BENCH_MAX_REPS);
}

int main(int argc, char **argv)
{
	const char *out = "build/bench/migrate.json", *only_kind = NULL;
	static struct tt_bench b;
	struct tt_st_topo topo;
	long long khugepaged_sleep;
	size_t ci;
	int opt, ret, m, d, rep;
	char v[32];

	b.reps = 5;
	b.movers = TT_BENCH_MOVERS;
	while ((opt = getopt(argc, argv, "k:m:o:r:h")) != -1) {
		switch (opt) {
		case 'k':
			if (strcmp(optarg, "base") && strcmp(optarg, "thp"))
				tt_die("-k '%s': want base or thp", optarg);
			only_kind = optarg;
			break;
		case 'm':
			b.movers = atoi(optarg);
			if (b.movers < 1 || b.movers > 64)
				tt_die("-m '%s': want 1..64 mover threads",
				       optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case 'r':
			b.reps = atoi(optarg);
			if (b.reps < 1 || b.reps > TT_BENCH_MAX_REPS)
				tt_die("-r '%s': want 1..%d repetitions",
				       optarg, TT_BENCH_MAX_REPS);
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
	ret = tt_st_run_on_node(b.fast);
	if (ret)
		tt_die("cannot run on the CPUs of node %d: %s", b.fast,
		       strerror(-ret));
	if (access(TT_ST_DEV, F_OK))
		tt_die("%s missing: load tiertrain.ko first", TT_ST_DEV);
	setenv("TIERTRAIN_BACKEND", "kernel", 1);
	unsetenv("TIERTRAIN_MOVER");
	b.s = tt_open();
	if (!b.s)
		tt_die("tt_open: %s", strerror(errno));
	b.sm = tt_open();
	if (!b.sm)
		tt_die("tt_open: %s", strerror(errno));
	ret = tt_mover_start(b.sm, b.movers);
	if (ret)
		tt_die("tt_mover_start: %s", strerror(-ret));
	ret = tt_st_read_ll(TT_ST_WORKERS, &b.orig_workers);
	if (ret)
		tt_die("reading %s: %s", TT_ST_WORKERS, strerror(-ret));
	/*
	 * khugepaged would collapse the pages the engine split into a huge
	 * page on the node it saw them on when it scanned, possibly the node
	 * they just left: the placement check would fail, and the times would
	 * include its work. Pause it for the run.
	 */
	ret = tt_st_khugepaged_pause(&khugepaged_sleep);
	if (ret)
		tt_die("pausing khugepaged: %s", strerror(-ret));

	for (ci = 0; ci < TT_NR_CASES; ci++) {
		b.skip[ci] = only_kind && strcmp(only_kind, tt_cases[ci].kind);
		if (b.skip[ci])
			continue;
		fprintf(stderr, "migrate: %s %zu MiB ...\n", tt_cases[ci].kind,
			tt_cases[ci].mib);
		/*
		 * the methods take turns repetition by repetition: a change
		 * in the host's load weighs on each alike
		 */
		for (rep = 0; rep < b.reps; rep++)
			for (m = 0; m < TT_M_MEMCPY; m++)
				tt_run_migration(&b, ci, (enum tt_bench_method)m,
						 rep);
		tt_run_memcpy(&b, ci);
		for (m = 0; m < TT_M_NR; m++)
			for (d = 0; d < 2; d++)
				b.res[ci][m].median[d] =
					tt_median(b.res[ci][m].mbps[d], b.reps);
	}
	snprintf(v, sizeof(v), "%lld", b.orig_workers);
	tt_st_write_file(TT_ST_WORKERS, v);
	tt_st_khugepaged_resume(khugepaged_sleep);
	tt_close(b.sm);
	tt_close(b.s);

	tt_print_table(&b);
	tt_write_json(&b, out);
	printf("JSON: %s\n", out);
	return 0;
}
