// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit tests of the executor (core/exec.c): the episode state machine the
 * kernel module and the move_pages backend share, driven here through a
 * fake struct tt_exec_ops: a fake clock, a fake memory of pages on node 0
 * (fast) or node 1 (slow), a work queue the test runs by hand (or not, to
 * make a prefetch late) and a timer the test fires when the clock passes.
 *
 * The model iteration (times in ms from the iteration start): four layers
 * 10, 20, 30, 40; layer k (0..3) runs forward over [10k, 10k + 10) and
 * saves 8 MiB at its own address, then backward in reverse order from 45
 * ms on, 10 ms each. ER = PR = 1e9 bytes/s, ST = 1 ms, profile_iters 1:
 * the first iteration profiles, the second is planned.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../exec.h"

#define MS	1000000ULL
#define MIB	(1024ULL * 1024)
#define PG	4096ULL
#define BASE	(1ULL << 30)
#define SPACE	(64 * MIB)
#define NPAGES	(SPACE / PG)
#define RATE	1000000000ULL
#define NL	4
#define TSIZE	(8 * MIB)

/* The fake world. */
static unsigned long long clk;
static unsigned char node_of[NPAGES];
static unsigned long long chunk_bytes = 2 * MIB;
static unsigned long long budget = TT_EXEC_BUDGET_NONE;
static int lock_depth, stop_all;
static unsigned int moves, evict_moves, fetch_moves, plain_moves;
static unsigned int traces[64], late_traces;
static unsigned long long timer_at;

struct work {
	struct tt_exec_layer *l;
	int what;
};

#define QMAX 256
static struct work q[QMAX];
static unsigned int qn, queued_total;

static struct tt_exec X;

static unsigned long long t_now(struct tt_exec *x)
{
	(void)x;
	return clk;
}

static void t_lock(struct tt_exec *x)
{
	(void)x;
	assert_int_equal(lock_depth, 0);
	lock_depth++;
}

static void t_unlock(struct tt_exec *x)
{
	(void)x;
	assert_int_equal(lock_depth, 1);
	lock_depth--;
}

static void t_queue(struct tt_exec *x, struct tt_exec_layer *l, int what)
{
	unsigned int i;

	(void)x;
	assert_int_equal(lock_depth, 1);
	for (i = 0; i < qn; i++)
		if (q[i].l == l && q[i].what == what)
			return;		/* still pending: one run */
	assert_true(qn < QMAX);
	q[qn].l = l;
	q[qn].what = what;
	qn++;
	queued_total++;
}

static int run_one(unsigned int i)
{
	struct work w = q[i];

	memmove(&q[i], &q[i + 1], (qn - i - 1) * sizeof(q[0]));
	qn--;
	if (w.what == TT_EXEC_WORK_EVICT)
		tt_exec_evict_step(&X, w.l);
	else
		tt_exec_prefetch_step(&X, w.l);
	return 1;
}

/* Run the queued items (and those they queue), in order; @what -1: all. */
static unsigned int run_work(int what)
{
	unsigned int n = 0, i;

	for (;;) {
		for (i = 0; i < qn; i++)
			if (what < 0 || q[i].what == what)
				break;
		if (i == qn)
			return n;
		n += run_one(i);
	}
}

static void t_wait(struct tt_exec *x, struct tt_exec_layer *l, int what)
{
	unsigned int i;

	(void)x;
	assert_int_equal(lock_depth, 0);
	if (what == TT_EXEC_WORK_VICTIM)
		return;		/* victims are moved synchronously here */
	for (i = 0; i < qn; i++)
		if (q[i].l == l && q[i].what == what) {
			run_one(i);
			return;
		}
}

static void t_victims_done(struct tt_exec *x)
{
	(void)x;
}

static void t_timer_arm(struct tt_exec *x, unsigned long long t)
{
	(void)x;
	timer_at = t;
}

static int t_stopped(struct tt_exec *x, struct tt_exec_layer *l,
		     unsigned int flags)
{
	(void)x;
	if ((flags & (TT_EXEC_MV_REMOTE | TT_EXEC_MV_EVICT)) && l->abort)
		return 1;
	return stop_all;
}

static int t_pin(struct tt_exec *x)
{
	(void)x;
	return 1;
}

static void t_unpin(struct tt_exec *x)
{
	(void)x;
}

/* Move the pages of [a, b) to @nid: the fake mover, at RATE. */
static void fake_move(unsigned long long a, unsigned long long b, int nid,
		      struct tt_migrate_result *res)
{
	unsigned long long p;

	assert_true(a >= BASE && b <= BASE + SPACE && a <= b);
	assert_true(a % PG == 0 && b % PG == 0);
	for (p = (a - BASE) / PG; p < (b - BASE) / PG; p++) {
		res->pages++;
		if (node_of[p] == nid) {
			res->already_on_node++;
			continue;
		}
		node_of[p] = nid;
		res->moved++;
	}
	res->elapsed_ns += res->moved * PG * 1000000000ULL / RATE;
}

static int t_move(struct tt_exec *x, struct tt_exec_layer *l,
		  const struct tt_exec_move *m, struct tt_migrate_result *res)
{
	(void)x;
	(void)l;
	assert_int_equal(lock_depth, 0);
	assert_true(m->nr > 0);
	moves++;
	if (m->flags & TT_EXEC_MV_EVICT)
		evict_moves++;
	else
		fetch_moves++;
	fake_move(m->start, m->end, m->nids[0], res);
	return 0;
}

static int t_move_plain(struct tt_exec *x, const struct tt_hint_iv *p, long n,
			const int *nids, int nr, unsigned int flags,
			struct tt_migrate_result *res)
{
	long i;

	(void)x;
	(void)nr;
	(void)flags;
	assert_int_equal(lock_depth, 0);
	for (i = 0; i < n; i++) {
		plain_moves++;
		fake_move(p[i].start, p[i].end, nids[0], res);
	}
	return 0;
}

static void t_residency(struct tt_exec *x, unsigned long long start,
			unsigned long long end, unsigned long long *bytes,
			unsigned long long *scratch)
{
	unsigned long long p;

	(void)x;
	(void)scratch;
	for (p = (start - BASE) / PG; p < (end - BASE) / PG; p++)
		bytes[node_of[p]] += PG;
}

static int t_node_slow(struct tt_exec *x, int nid)
{
	(void)x;
	return nid == 1;
}

static int t_node_check(struct tt_exec *x, int nid)
{
	(void)x;
	return nid == 0 || nid == 1 ? 0 : -TT_EXEC_EINVAL;
}

static int t_evict_order(struct tt_exec *x, int from, int *nids, int max)
{
	(void)x;
	(void)from;
	assert_true(max > 0);
	nids[0] = 1;
	return 1;
}

static int t_cpu_node(struct tt_exec *x)
{
	(void)x;
	return 0;
}

static int t_mapped(struct tt_exec *x, unsigned long long start,
		    unsigned long long end)
{
	(void)x;
	return start >= BASE && end <= BASE + SPACE ? 0 : -TT_EXEC_EFAULT;
}

static void *t_alloc(struct tt_exec *x, unsigned long n, unsigned long size,
		     int zero)
{
	(void)x;
	if (size && n > ~0UL / size)
		return NULL;
	return zero ? calloc(n ? n : 1, size ? size : 1) :
		      malloc(n && size ? n * size : 1);
}

static void t_free(struct tt_exec *x, void *p)
{
	(void)x;
	free(p);
}

static struct tt_exec_layer *t_layer_new(struct tt_exec *x)
{
	(void)x;
	return malloc(sizeof(struct tt_exec_layer));
}

static void t_layer_free(struct tt_exec *x, struct tt_exec_layer *l)
{
	(void)x;
	free(l);
}

static struct tt_exec_range *t_range_alloc(struct tt_exec *x)
{
	(void)x;
	return malloc(sizeof(struct tt_exec_range));
}

static void t_range_free(struct tt_exec *x, struct tt_exec_range *r)
{
	(void)x;
	free(r);
}

static unsigned long long t_limit(struct tt_exec *x, enum tt_exec_limit what)
{
	(void)x;
	switch (what) {
	case TT_EXEC_LIM_MAX_LAYERS:
		return 64;
	case TT_EXEC_LIM_MAX_RANGES:
		return 1024;
	case TT_EXEC_LIM_MIN_MIGRATE:
		return 0;
	case TT_EXEC_LIM_CHUNK_BYTES:
		return chunk_bytes;
	case TT_EXEC_LIM_EPISODE_MAX:
		return SPACE;
	case TT_EXEC_LIM_BUDGET_GLOBAL:
		return 0;
	}
	return 0;
}

static void t_trace_event(struct tt_exec *x, const struct tt_event *ev,
			  unsigned long long now, unsigned long long iter)
{
	(void)x;
	(void)ev;
	(void)now;
	(void)iter;
}

static void t_trace_migration(struct tt_exec *x, unsigned int type,
			      unsigned int layer, unsigned long long iter,
			      unsigned long long bytes,
			      unsigned long long start, int node,
			      unsigned int flags)
{
	(void)x;
	(void)layer;
	(void)iter;
	(void)bytes;
	(void)start;
	(void)node;
	(void)flags;
	traces[type & 63]++;
}

static void t_trace_layer(struct tt_exec *x, unsigned int type,
			  unsigned int layer, unsigned long long iter,
			  unsigned long long bytes, unsigned long long ts,
			  unsigned int flags)
{
	(void)x;
	(void)layer;
	(void)iter;
	(void)bytes;
	(void)ts;
	(void)flags;
	traces[type & 63]++;
	if (type == TT_TRACE_LATE)
		late_traces++;
}

static void t_budget_publish(struct tt_exec *x)
{
	assert_true(x->bud.slow <= x->bud.held || !x->bud.held);
}

static unsigned long long t_budget_limit(struct tt_exec *x,
					 unsigned long long *total,
					 unsigned long long *global)
{
	*total = x->bud.held > x->bud.slow ? x->bud.held - x->bud.slow : 0;
	*global = 0;
	if (x->cfg.budget)
		return x->cfg.budget;
	return budget;
}

static int t_budget_active(struct tt_exec *x)
{
	return x->cfg.budget || budget != TT_EXEC_BUDGET_NONE;
}

static void t_budget_kick(struct tt_exec *x)
{
	(void)x;
}

static void t_budget_stuck(struct tt_exec *x, int stuck)
{
	(void)x;
	(void)stuck;
}

static void t_resched(struct tt_exec *x)
{
	(void)x;
}

static void t_pause(struct tt_exec *x, unsigned int us)
{
	(void)x;
	(void)us;
}

static const struct tt_exec_ops ops = {
	.now = t_now, .lock = t_lock, .unlock = t_unlock, .queue = t_queue,
	.wait = t_wait, .victims_done = t_victims_done,
	.timer_arm = t_timer_arm, .stopped = t_stopped, .pin = t_pin,
	.unpin = t_unpin, .move = t_move, .move_plain = t_move_plain,
	.residency = t_residency, .node_slow = t_node_slow,
	.node_check = t_node_check, .evict_order = t_evict_order,
	.cpu_node = t_cpu_node, .mapped = t_mapped, .alloc = t_alloc,
	.free = t_free, .layer_new = t_layer_new, .layer_free = t_layer_free,
	.range_alloc = t_range_alloc, .range_free = t_range_free,
	.limit = t_limit, .trace_event = t_trace_event,
	.trace_migration = t_trace_migration, .trace_layer = t_trace_layer,
	.budget_publish = t_budget_publish, .budget_limit = t_budget_limit,
	.budget_active = t_budget_active, .budget_kick = t_budget_kick,
	.budget_stuck = t_budget_stuck, .resched = t_resched,
	.pause = t_pause,
};

static void setup_flags(unsigned int flags)
{
	struct tt_exec_cfg cfg = {
		.flags = flags, .profile_iters = 1, .stay_ns = 1 * MS,
		.slow_node = -1, .fast_node = -1,
	};

	clk = 1000 * MS;
	memset(node_of, 0, sizeof(node_of));
	memset(traces, 0, sizeof(traces));
	qn = 0;
	queued_total = moves = evict_moves = fetch_moves = plain_moves = 0;
	late_traces = 0;
	lock_depth = 0;
	stop_all = 0;
	timer_at = 0;
	chunk_bytes = 2 * MIB;
	budget = TT_EXEC_BUDGET_NONE;
	tt_exec_init(&X, &ops, &cfg, RATE, RATE, PG, 2 * MIB, 1ULL << 47, 2);
}

static int setup(void **state)
{
	(void)state;
	setup_flags(0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(lock_depth, 0);
	tt_exec_close(&X);
	qn = 0;
	tt_exec_free(&X);
	return 0;
}

static int event(unsigned int type, unsigned int flags, unsigned int layer,
		 unsigned long long addr, unsigned long long len)
{
	struct tt_event ev = {
		.type = type, .flags = flags, .layer = layer, .addr = addr,
		.len = len,
	};
	unsigned int done;
	int ret = tt_exec_events(&X, &ev, 1, clk, &done);

	assert_int_equal(done, ret ? 0 : 1);
	return ret;
}

/* Fire the timer when the clock passed it, then run the prefetches. */
static void tick(int run_prefetch)
{
	if (timer_at && timer_at <= clk) {
		timer_at = 0;
		tt_exec_timer(&X);
	}
	if (run_prefetch)
		run_work(TT_EXEC_WORK_PREFETCH);
}

static void advance(unsigned long long ns, int run_prefetch)
{
	unsigned long long end = clk + ns;

	/* step by 1 ms so the timer fires in time */
	while (clk < end) {
		clk += clk + MS <= end ? MS : end - clk;
		tick(run_prefetch);
	}
}

static unsigned long long taddr(unsigned int k)
{
	return BASE + k * TSIZE;
}

/* Bytes of [a, a + len) on node @nid. */
static unsigned long long on_node(unsigned long long a, unsigned long long len,
				  int nid)
{
	unsigned long long p, n = 0;

	for (p = (a - BASE) / PG; p < (a + len - BASE) / PG; p++)
		n += node_of[p] == nid ? PG : 0;
	return n;
}

/*
 * struct opts - how to run one model iteration
 * @run_evict:    run the evictions right after each forward end.
 * @run_prefetch: run the prefetches when they are queued.
 * @check_back:   assert each layer is on the fast node at its backward
 *                begin.
 * @check_first:  assert the first layer's eviction is queued at its
 *                forward end and moves the whole tensor out.
 */
struct opts {
	int run_evict;
	int run_prefetch;
	int check_back;
	int check_first;
};

static void iteration(const struct opts *o)
{
	unsigned int k;

	assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
	tick(o->run_prefetch);
	for (k = 0; k < NL; k++) {
		assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_FWD, 10 * (k + 1),
				       0, 0), 0);
		advance(5 * MS, o->run_prefetch);
		assert_int_equal(event(TT_EV_TENSOR_SAVED, 0, 10 * (k + 1),
				       taddr(k), TSIZE), 0);
		advance(5 * MS, o->run_prefetch);
		assert_int_equal(event(TT_EV_LAYER_END, TT_FWD, 10 * (k + 1),
				       0, 0), 0);
		if (o->check_first && !k) {
			assert_int_equal(qn, 1);
			assert_int_equal(q[0].what, TT_EXEC_WORK_EVICT);
			assert_int_equal(on_node(taddr(0), TSIZE, 1), 0);
		}
		if (o->run_evict)
			run_work(TT_EXEC_WORK_EVICT);
		if (o->check_first && !k)
			assert_int_equal(on_node(taddr(0), TSIZE, 1), TSIZE);
	}
	advance(5 * MS, o->run_prefetch);
	for (k = NL; k-- > 0;) {
		assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_BWD, 10 * (k + 1),
				       0, 0), 0);
		if (o->check_back)
			assert_int_equal(on_node(taddr(k), TSIZE, 0), TSIZE);
		if (o->run_prefetch)
			run_work(TT_EXEC_WORK_PREFETCH);
		advance(10 * MS, o->run_prefetch);
		assert_int_equal(event(TT_EV_LAYER_END, TT_BWD, 10 * (k + 1),
				       0, 0), 0);
		if (o->run_prefetch)
			run_work(TT_EXEC_WORK_PREFETCH);
	}
}

static const struct opts all_run = { 1, 1, 0, 0 };

/* The first iteration only profiles; the second evicts at forward ends. */
static void test_profile_then_plan(void **state)
{
	struct tt_sched_stats st;
	struct tt_layer_info info[NL];
	unsigned int known, n;

	(void)state;
	iteration(&all_run);
	tt_exec_stats(&X, &st);
	assert_int_equal(st.iterations, 1);
	assert_int_equal(st.bytes_evicted, 0);
	assert_int_equal(st.tensors_saved, NL);
	assert_int_equal(st.events, 1 + 5 * NL);
	assert_int_equal(evict_moves, 0);
	n = tt_exec_layers(&X, 0, info, NL, &known);
	assert_int_equal(n, NL);
	assert_int_equal(known, NL);
	assert_int_equal(info[0].status, TT_LAYER_PROFILING);
	assert_int_equal(info[0].layer, 10);

	iteration(&all_run);
	tt_exec_stats(&X, &st);
	assert_int_equal(st.iterations, 2);
	assert_true(st.bytes_evicted > 0);
	assert_int_equal(st.bytes_evicted, st.bytes_prefetched);
	assert_true(st.layers_accepted + st.layers_modified > 0);
	n = tt_exec_layers(&X, 0, info, NL, &known);
	assert_int_equal(n, NL);
	assert_int_not_equal(info[0].status, TT_LAYER_PROFILING);
	assert_true(traces[TT_TRACE_EVICT] > 0);
	assert_true(traces[TT_TRACE_PREFETCH] > 0);
	/* everything is back on the fast node once the iteration is over */
	assert_int_equal(on_node(BASE, NL * TSIZE, 0), NL * TSIZE);
}

/*
 * Planned iteration: the first layer's eviction is queued at its forward
 * end and moves its pages to the slow node; every layer is back before its
 * backward begins (the prefetches ran ahead at their trigger times).
 */
static void test_evict_then_prefetch_ahead(void **state)
{
	static const struct opts ahead = { 1, 1, 1, 1 };
	struct tt_sched_stats st;

	(void)state;
	iteration(&all_run);
	iteration(&ahead);
	tt_exec_stats(&X, &st);
	assert_int_equal(st.late_bytes, 0);
	assert_true(st.ontime_bytes > 0);
	assert_int_equal(late_traces, 0);
}

/*
 * No prefetch runs before the backward passes: the layers are late, the
 * late bytes counted, and the backward begin queues their prefetch
 * (rescue) without TT_SCHED_SYNC_LATE.
 */
static void test_late_rescued(void **state)
{
	static const struct opts no_pf = { 1, 0, 0, 0 };
	struct tt_sched_stats st;

	(void)state;
	iteration(&all_run);
	iteration(&no_pf);
	tt_exec_stats(&X, &st);
	assert_true(st.late_bytes > 0);
	assert_true(st.late_count > 0);
	assert_int_equal(st.sync_fetched_bytes, 0);
	assert_true(late_traces > 0);
	/* queued, not run: still out */
	assert_true(qn > 0);
	assert_true(on_node(BASE, NL * TSIZE, 1) > 0);
	run_work(-1);
	assert_int_equal(on_node(BASE, NL * TSIZE, 0), NL * TSIZE);
}

/* TT_SCHED_SYNC_LATE: the backward begin fetches a late layer itself. */
static void test_late_sync_fetched(void **state)
{
	static const struct opts no_pf = { 1, 0, 1, 0 };
	struct tt_sched_stats st;

	(void)state;
	teardown(state);
	setup_flags(TT_SCHED_SYNC_LATE);
	iteration(&all_run);
	/* check_back: every layer is on the fast node once its bwd begins */
	iteration(&no_pf);
	tt_exec_stats(&X, &st);
	assert_true(st.late_bytes > 0);
	assert_true(st.sync_fetched_bytes > 0);
	assert_int_equal(st.sync_fetched_bytes, st.late_bytes);
	run_work(-1);
	assert_int_equal(on_node(BASE, NL * TSIZE, 0), NL * TSIZE);
}

/*
 * Chunking: an eviction moves chunks of at most the chunk size, one move
 * each, and a step moves at most TT_EXEC_SLICE_BYTES, queueing itself
 * again for the rest.
 */
static void test_chunking(void **state)
{
	struct tt_exec_layer *l;
	unsigned int n;

	(void)state;
	chunk_bytes = 256 * 1024;
	iteration(&all_run);
	assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
	assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_FWD, 10, 0, 0), 0);
	advance(5 * MS, 0);
	assert_int_equal(event(TT_EV_TENSOR_SAVED, 0, 10, taddr(0), TSIZE), 0);
	advance(5 * MS, 0);
	assert_int_equal(event(TT_EV_LAYER_END, TT_FWD, 10, 0, 0), 0);
	assert_int_equal(qn, 1);
	l = q[0].l;
	evict_moves = 0;
	run_work(TT_EXEC_WORK_EVICT);
	assert_true(l->nr_chunks > 1);
	assert_int_equal(evict_moves, l->nr_chunks);
	for (n = 0; n < l->nr_chunks; n++)
		assert_true(l->chunks[n].end - l->chunks[n].start <= chunk_bytes);
	assert_int_equal(l->evicted, on_node(taddr(0), TSIZE, 1));
	assert_int_equal(l->state, TT_EXEC_EVICTED);
}

static void test_slices(void **state)
{
	unsigned int steps;

	(void)state;
	/* one 40 MiB tensor: three slices of at most 16 MiB */
	assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
	assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_FWD, 10, 0, 0), 0);
	assert_int_equal(event(TT_EV_TENSOR_SAVED, 0, 10, BASE, 40 * MIB), 0);
	advance(10 * MS, 0);
	assert_int_equal(event(TT_EV_LAYER_END, TT_FWD, 10, 0, 0), 0);
	advance(200 * MS, 0);
	assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_BWD, 10, 0, 0), 0);
	advance(10 * MS, 0);
	assert_int_equal(event(TT_EV_LAYER_END, TT_BWD, 10, 0, 0), 0);
	assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
	assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_FWD, 10, 0, 0), 0);
	assert_int_equal(event(TT_EV_TENSOR_SAVED, 0, 10, BASE, 40 * MIB), 0);
	advance(10 * MS, 0);
	assert_int_equal(event(TT_EV_LAYER_END, TT_FWD, 10, 0, 0), 0);
	assert_int_equal(qn, 1);
	steps = run_work(TT_EXEC_WORK_EVICT);
	assert_true(on_node(BASE, 40 * MIB, 1) > 32 * MIB);
	assert_int_equal(steps, 3);
}

/*
 * Budget: a session over its own budget makes room in the event call
 * that took it over (victims, coldest first), and a prefetch is admitted
 * only as far as the budget has room.
 */
static void test_budget_victims(void **state)
{
	struct tt_ioc_sched req = {
		.valid = TT_SCHED_SET_BUDGET, .budget_mib = 16,
	};
	struct tt_sched_stats st;
	unsigned long long held, slow;

	(void)state;
	tt_exec_cfg_set(&X, &req);
	iteration(&all_run);
	tt_exec_stats(&X, &st);
	assert_int_equal(st.budget_bytes, 16 * MIB);
	assert_true(st.victims > 0);
	assert_true(st.victim_bytes >= 16 * MIB);
	assert_true(st.fast_peak_bytes <= 16 * MIB + TSIZE);
	tt_exec_resident(&X, &held, &slow);
	/* the one-shot tensors are forgotten at their backward end */
	assert_int_equal(held, 0);
	/* while all four were held, at most 16 MiB counted fast */
	assert_true(st.fast_registered_bytes <= 16 * MIB);
}

static void test_budget_admission(void **state)
{
	struct tt_ioc_sched req = {
		.valid = TT_SCHED_SET_BUDGET, .budget_mib = 8,
	};
	struct tt_sched_stats st;
	unsigned int k;

	(void)state;
	/* persistent tensors: held across iterations */
	assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
	for (k = 0; k < 2; k++) {
		assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_FWD, 10 * (k + 1),
				       0, 0), 0);
		assert_int_equal(event(TT_EV_TENSOR_SAVED, TT_EV_PERSISTENT,
				       10 * (k + 1), taddr(k), TSIZE), 0);
		advance(10 * MS, 1);
		assert_int_equal(event(TT_EV_LAYER_END, TT_FWD, 10 * (k + 1),
				       0, 0), 0);
	}
	tt_exec_cfg_set(&X, &req);
	tt_exec_stats(&X, &st);
	/* lowered to 8 MiB: one tensor went out as a victim */
	assert_true(st.victims > 0);
	assert_true(st.fast_registered_bytes <= 8 * MIB);
	assert_int_equal(on_node(BASE, 2 * TSIZE, 1), 8 * MIB);
	/* its backward begin wants it back: no room, the prefetch waits */
	assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_BWD, 20, 0, 0), 0);
	assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_BWD, 10, 0, 0), 0);
	run_work(-1);
	tt_exec_stats(&X, &st);
	assert_true(st.fast_registered_bytes <= 8 * MIB);
	/* room again: raised, the waiting one comes back */
	req.budget_mib = 64;
	tt_exec_cfg_set(&X, &req);
	run_work(-1);
	tt_exec_stats(&X, &st);
	assert_int_equal(st.fast_registered_bytes, 2 * TSIZE);
	assert_int_equal(on_node(BASE, 2 * TSIZE, 0), 2 * TSIZE);
}

/* PIN_FAST: a planned eviction leaves the pinned pages where they are. */
static void test_hint_pin_fast(void **state)
{
	static const struct opts no_pf = { 1, 0, 0, 0 };
	struct tt_sched_stats st;

	(void)state;
	iteration(&all_run);
	assert_int_equal(tt_exec_hint(&X, taddr(0), taddr(0) + TSIZE,
				      TT_HINT_PIN_FAST), 0);
	iteration(&no_pf);
	/* layer 10 stays fast, others went out */
	assert_int_equal(on_node(taddr(0), TSIZE, 0), TSIZE);
	tt_exec_stats(&X, &st);
	assert_int_equal(st.pinned_bytes, TSIZE);
	assert_true(st.bytes_evicted > 0);
	run_work(-1);
}

/*
 * ARCHIVE: the archived pages leave the planned evictions; they are the
 * first victims. RETIRE ends the hint and forgets the tensors it covers.
 */
static void test_hint_archive_retire(void **state)
{
	struct tt_sched_stats st;
	unsigned long long held, slow;

	(void)state;
	assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
	assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_FWD, 10, 0, 0), 0);
	assert_int_equal(event(TT_EV_TENSOR_SAVED, TT_EV_PERSISTENT, 10,
			       taddr(0), TSIZE), 0);
	assert_int_equal(event(TT_EV_TENSOR_SAVED, TT_EV_PERSISTENT, 10,
			       taddr(1), TSIZE), 0);
	assert_int_equal(tt_exec_hint(&X, taddr(1), taddr(1) + TSIZE,
				      TT_HINT_ARCHIVE), 0);
	tt_exec_stats(&X, &st);
	assert_int_equal(st.archived_bytes, TSIZE);
	budget = 12 * MIB;
	tt_exec_budget_room(&X);
	tt_exec_stats(&X, &st);
	/* the archived tensor went first, as much as was needed */
	assert_int_equal(st.victim_archived_bytes, 4 * MIB);
	assert_int_equal(on_node(taddr(1), TSIZE, 1), 4 * MIB);
	assert_int_equal(on_node(taddr(0), TSIZE, 1), 0);
	/* RETIRE: the hint ends and the tensor is forgotten */
	budget = TT_EXEC_BUDGET_NONE;
	assert_int_equal(tt_exec_hint(&X, taddr(1), taddr(1) + TSIZE,
				      TT_HINT_RETIRE), 0);
	tt_exec_stats(&X, &st);
	assert_int_equal(st.archived_bytes, 0);
	tt_exec_resident(&X, &held, &slow);
	assert_int_equal(held, TSIZE);
	run_work(-1);
}

/* WILL_USE on an evicted layer settles its episode: it comes back. */
static void test_hint_will_use(void **state)
{
	(void)state;
	iteration(&all_run);
	assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
	assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_FWD, 10, 0, 0), 0);
	advance(5 * MS, 0);
	assert_int_equal(event(TT_EV_TENSOR_SAVED, 0, 10, taddr(0), TSIZE), 0);
	advance(5 * MS, 0);
	assert_int_equal(event(TT_EV_LAYER_END, TT_FWD, 10, 0, 0), 0);
	run_work(TT_EXEC_WORK_EVICT);
	assert_true(on_node(taddr(0), TSIZE, 1) > 0);
	assert_int_equal(qn, 0);
	/* plain pages (no tensor) of the range move in the call itself */
	assert_int_equal(tt_exec_hint(&X, taddr(0), taddr(0) + 2 * TSIZE,
				      TT_HINT_WILL_USE), 0);
	assert_int_equal(qn, 1);
	assert_int_equal(q[0].what, TT_EXEC_WORK_PREFETCH);
	assert_true(plain_moves > 0);
	run_work(-1);
	assert_int_equal(on_node(taddr(0), TSIZE, 0), TSIZE);
}

/* Closing with tt_exec_fetch_all(): nothing stays on the slow node. */
static void test_fetch_all(void **state)
{
	struct tt_sched_stats st;
	unsigned int k;

	(void)state;
	iteration(&all_run);
	assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
	for (k = 0; k < 2; k++) {
		assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_FWD, 10 * (k + 1),
				       0, 0), 0);
		assert_int_equal(event(TT_EV_TENSOR_SAVED, 0, 10 * (k + 1),
				       taddr(k), TSIZE), 0);
		advance(10 * MS, 0);
		assert_int_equal(event(TT_EV_LAYER_END, TT_FWD, 10 * (k + 1),
				       0, 0), 0);
		run_work(TT_EXEC_WORK_EVICT);
	}
	assert_int_equal(on_node(BASE, 2 * TSIZE, 1), 2 * TSIZE);
	tt_exec_close(&X);
	qn = 0;			/* the side stopped its work items */
	tt_exec_fetch_all(&X);
	assert_int_equal(on_node(BASE, 2 * TSIZE, 0), 2 * TSIZE);
	tt_exec_stats(&X, &st);
	assert_int_equal(st.bytes_prefetched, st.bytes_evicted);
	assert_int_equal(tt_exec_layer_at(&X, 0)->state, TT_EXEC_IDLE);
}

/* Counters and refusals of the event path. */
static void test_stats_and_errors(void **state)
{
	struct tt_sched_stats st;
	struct tt_ioc_sched cfg;

	(void)state;
	assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
	/* smaller than a page after rounding: ignored, accepted */
	assert_int_equal(event(TT_EV_TENSOR_SAVED, 0, 10, BASE + 1, 100), 0);
	/* not mapped */
	assert_int_equal(event(TT_EV_TENSOR_SAVED, 0, 10, BASE + SPACE, MIB),
			 -TT_EXEC_EFAULT);
	/* a layer event with both phases */
	assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_FWD | TT_BWD, 10, 0, 0),
			 -TT_EXEC_EINVAL);
	tt_exec_stats(&X, &st);
	assert_int_equal(st.events, 2);
	assert_int_equal(st.tensors_ignored, 1);
	assert_int_equal(st.tensors_saved, 0);
	assert_int_equal(st.er_bps, RATE);
	tt_exec_cfg_get(&X, &cfg);
	assert_int_equal(cfg.valid, TT_SCHED_SET_ALL);
	assert_int_equal(cfg.profile_iters, 1);
	assert_int_equal(cfg.slow_node, -1);
	assert_int_equal(tt_exec_nr_layers(&X), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_profile_then_plan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_evict_then_prefetch_ahead, setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_rescued, setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_sync_fetched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunking, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slices, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_victims, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_admission, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hint_pin_fast, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hint_archive_retire, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hint_will_use, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetch_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats_and_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
