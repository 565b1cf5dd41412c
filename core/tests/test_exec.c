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

#define FAKE_CHECK(cond) assert_true(cond)
#include "exec_fake.h"

#define MS	1000000ULL
#define NL	4
#define TSIZE	(8 * MIB)

/*
 * The executor with @flags and the fake mover's rates set (as
 * TT_IOC_SET_SCHED sets them: measured, so no rate probe runs), or with
 * @probe only seeded with them (a new session's rate probe runs).
 */
static void setup_exec(unsigned int flags, int probe)
{
	struct tt_exec_cfg cfg = {
		.flags = flags, .profile_iters = 1, .stay_ns = 1 * MS,
		.slow_node = -1, .fast_node = -1,
	};

	fake_reset(1000 * MS);
	tt_exec_init(&X, &ops, &cfg, RATE, RATE, PG, 2 * MIB, 1ULL << 47, 2);
	if (!probe)
		tt_tl_set_rates(&X.tl, RATE, RATE);
}

static void setup_flags(unsigned int flags)
{
	setup_exec(flags, 0);
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
	assert_int_equal(fake_live, 0);
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
 * Pages born on the slow node (allocated there while the fast node was
 * full): a planned layer's eviction finds them there, and its prefetch
 * brings them back with the rest, whole chunks of them included, so the
 * backward pass reads every byte from the fast node. Not evicted bytes:
 * they count in neither the evicted nor the on-time bytes. Without it the
 * chunks the eviction moved nothing of were skipped.
 */
static void test_born_slow_fetched(void **state)
{
	static const struct opts back = { 1, 1, 1, 0 };
	struct tt_sched_stats st0, st;
	unsigned long long p;

	(void)state;
	iteration(&all_run);
	/* layer 10 (planned whole): its first half on the slow node */
	for (p = 0; p < TSIZE / 2 / PG; p++)
		node_of[(taddr(0) - BASE) / PG + p] = 1;
	tt_exec_stats(&X, &st0);
	iteration(&back);
	tt_exec_stats(&X, &st);
	assert_int_equal(st.late_bytes, 0);
	assert_int_equal(on_node(BASE, NL * TSIZE, 0), NL * TSIZE);
	/* layer 10's eviction moved its fast half only */
	assert_int_equal(st.bytes_prefetched - st0.bytes_prefetched,
			 st.bytes_evicted - st0.bytes_evicted + TSIZE / 2);
	assert_int_equal(st.ontime_bytes - st0.ontime_bytes,
			 st.bytes_evicted - st0.bytes_evicted);
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
 * One layer (10) of one 40 MiB tensor at BASE: a profile iteration whose
 * backward pass begins @idle_ms after the forward end, then the planned
 * iteration's forward pass, its eviction queued (not run).
 */
static void big_layer_forward(unsigned long long idle_ms)
{
	assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
	assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_FWD, 10, 0, 0), 0);
	assert_int_equal(event(TT_EV_TENSOR_SAVED, 0, 10, BASE, 40 * MIB), 0);
	advance(10 * MS, 0);
	assert_int_equal(event(TT_EV_LAYER_END, TT_FWD, 10, 0, 0), 0);
	advance(idle_ms * MS, 0);
	assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_BWD, 10, 0, 0), 0);
	advance(10 * MS, 0);
	assert_int_equal(event(TT_EV_LAYER_END, TT_BWD, 10, 0, 0), 0);
	assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
	assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_FWD, 10, 0, 0), 0);
	assert_int_equal(event(TT_EV_TENSOR_SAVED, 0, 10, BASE, 40 * MIB), 0);
	advance(10 * MS, 0);
	assert_int_equal(event(TT_EV_LAYER_END, TT_FWD, 10, 0, 0), 0);
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
	big_layer_forward(200);
	assert_int_equal(qn, 1);
	steps = run_work(TT_EXEC_WORK_EVICT);
	assert_true(on_node(BASE, 40 * MIB, 1) > 32 * MIB);
	assert_int_equal(steps, 3);
}

/*
 * A rate sample is the migration's wall time, from its first step to its
 * last, the waits of its slices in the pool included (the plan's serial
 * queue sees them): 40 MiB in three slices 100 ms apart is 40 MiB in
 * 200 ms, though the mover itself took 42 ms. With the mover's time, the
 * plan took the queue for 5 times faster than it was.
 */
static void test_rate_wall_time(void **state)
{
	const unsigned long long want = 40 * MIB * 1000 / 200;
	struct tt_sched_stats st;
	unsigned int steps;

	(void)state;
	big_layer_forward(2000);
	/* unmeasured, as a new session's: the first sample replaces them */
	X.tl.er_samples = X.tl.pr_samples = 0;
	step_gap_ns = 100 * MS;
	steps = run_work(TT_EXEC_WORK_EVICT);
	assert_int_equal(steps, 3);
	assert_int_equal(on_node(BASE, 40 * MIB, 1), 40 * MIB);
	tt_exec_stats(&X, &st);
	assert_true(st.er_bps >= want - want / 100 &&
		    st.er_bps <= want + want / 100);
	/* the backward begin brings it back the same way */
	assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_BWD, 10, 0, 0), 0);
	steps = run_work(-1);
	assert_int_equal(steps, 3);
	assert_int_equal(on_node(BASE, 40 * MIB, 0), 40 * MIB);
	tt_exec_stats(&X, &st);
	assert_true(st.pr_bps >= want - want / 100 &&
		    st.pr_bps <= want + want / 100);
}

/*
 * One iteration of one 8 MiB layer (forward over 10 ms, backward 200 ms
 * after its forward end) whose queued eviction runs @wait_ms after the
 * forward end; then the backward pass, with the prefetches run.
 */
static void late_queue_iteration(unsigned long long wait_ms)
{
	assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
	assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_FWD, 10, 0, 0), 0);
	assert_int_equal(event(TT_EV_TENSOR_SAVED, 0, 10, BASE, TSIZE), 0);
	advance(10 * MS, 0);
	assert_int_equal(event(TT_EV_LAYER_END, TT_FWD, 10, 0, 0), 0);
	advance(wait_ms * MS, 0);
	run_work(TT_EXEC_WORK_EVICT);
	advance((200 - wait_ms) * MS, 1);
	assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_BWD, 10, 0, 0), 0);
	advance(10 * MS, 1);
	assert_int_equal(event(TT_EV_LAYER_END, TT_BWD, 10, 0, 0), 0);
	run_work(-1);
}

/*
 * An eviction that waited in the queue until it could no longer end
 * (at ER, plus the stay time) before its prefetch is due is not started:
 * the layer stays fast, counted as dropped and traced as a drop with
 * TT_TRACE_F_EXPIRED. Started anyway, it would end after its prefetch was
 * due and hold up the prefetch queue (the demo's late layers).
 */
static void test_evict_expired(void **state)
{
	struct tt_sched_stats st;

	(void)state;
	late_queue_iteration(0);			/* the profile */
	/* 100 ms late: 8 MiB at 1 GB/s still fits before the prefetch */
	late_queue_iteration(100);
	tt_exec_stats(&X, &st);
	assert_int_equal(st.bytes_evicted, TSIZE);
	assert_int_equal(st.layers_accepted, 1);
	assert_int_equal(st.layers_dropped, 0);
	assert_int_equal(traces[TT_TRACE_DROP], 0);
	assert_int_equal(on_node(BASE, TSIZE, 0), TSIZE);
	/* 195 ms late: its prefetch is due in less than its eviction takes */
	late_queue_iteration(195);
	tt_exec_stats(&X, &st);
	assert_int_equal(st.bytes_evicted, TSIZE);
	/* ordered (accepted), then dropped: the counters only grow */
	assert_int_equal(st.layers_accepted, 2);
	assert_int_equal(st.layers_dropped, 1);
	assert_int_equal(traces[TT_TRACE_DROP], 1);
	assert_int_equal(trace_flags[TT_TRACE_DROP], TT_TRACE_F_EXPIRED);
	assert_int_equal(on_node(BASE, TSIZE, 0), TSIZE);
	assert_int_equal(st.late_bytes, 0);
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

/*
 * Overlapping tensors of different layers (found by fuzz_exec): a
 * prefetch moves back its whole chunks, so it can bring back pages that
 * another layer's victim eviction moved out and still counts on the slow
 * tier; a later victim of that layer moves them out again and counted
 * them twice: bud.slow passed bud.held and the fast bytes read 0, a
 * session over its budget that the budget did not see.
 */
static void test_budget_overlap_slow(void **state)
{
	struct tt_ioc_sched req = {
		.valid = TT_SCHED_SET_BUDGET, .budget_mib = 1,
	};
	struct tt_sched_stats st;

	(void)state;
	teardown(state);
	setup_flags(TT_SCHED_DEFAULT_FLAGS);
	tt_exec_cfg_set(&X, &req);
	assert_int_equal(event(TT_EV_TENSOR_SAVED, TT_EV_PERSISTENT, 1,
			       BASE + 0x802000, TSIZE), 0);
	assert_int_equal(event(TT_EV_TENSOR_SAVED, TT_EV_PERSISTENT, 2,
			       BASE, TSIZE), 0);
	/* one-shot, over the end of layer 2's and the start of layer 1's */
	assert_int_equal(event(TT_EV_TENSOR_SAVED, 0, 0, BASE + 0xf000,
			       TSIZE + MIB), 0);
	/* forgets layer 0's tensor; its prefetch brings its chunks back */
	assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
	assert_int_equal(tt_exec_hint(&X, BASE + 8 * MIB, BASE + 16 * MIB,
				      TT_HINT_ARCHIVE), 0);
	/* the fake's ops->budget_publish checks bud.slow <= bud.held */
	run_work(-1);
	tt_exec_stats(&X, &st);
	assert_true(X.bud.slow <= X.bud.held);
	assert_int_equal(st.fast_registered_bytes, X.bud.held - X.bud.slow);
}

/* The backward begin of layer 10, half-way through its eviction's move. */
static void bwd_begin_mid_evict(struct tt_exec_layer *l)
{
	(void)l;
	mid_evict = NULL;
	assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_BWD, 10, 0, 0), 0);
}

/*
 * An eviction whose last (here: only) chunk the backward begin stops
 * inside the mover ends traced as stopped, with what it moved, and its
 * prefetch brings that back.
 */
static void test_evict_stopped_in_last_chunk(void **state)
{
	unsigned int k;

	(void)state;
	for (k = 0; k < 2; k++) {
		assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
		assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_FWD, 10, 0, 0), 0);
		assert_int_equal(event(TT_EV_TENSOR_SAVED, 0, 10, BASE,
				       2 * MIB), 0);
		advance(10 * MS, 0);
		assert_int_equal(event(TT_EV_LAYER_END, TT_FWD, 10, 0, 0), 0);
		if (!k) {
			advance(200 * MS, 0);
			assert_int_equal(event(TT_EV_LAYER_BEGIN, TT_BWD, 10,
					       0, 0), 0);
			advance(10 * MS, 0);
			assert_int_equal(event(TT_EV_LAYER_END, TT_BWD, 10,
					       0, 0), 0);
		}
	}
	assert_int_equal(qn, 1);
	assert_int_equal(q[0].what, TT_EXEC_WORK_EVICT);
	mid_evict = bwd_begin_mid_evict;
	run_work(TT_EXEC_WORK_EVICT);
	assert_null(mid_evict);
	assert_int_equal(traces[TT_TRACE_EVICT], 1);
	assert_true(trace_flags[TT_TRACE_EVICT] & TT_TRACE_F_STOPPED);
	assert_int_equal(on_node(BASE, 2 * MIB, 1), MIB);
	run_work(-1);
	assert_int_equal(on_node(BASE, 2 * MIB, 0), 2 * MIB);
	assert_int_equal(event(TT_EV_LAYER_END, TT_BWD, 10, 0, 0), 0);
}

/*
 * A prefetch pass that finds the evicted pages not present (another
 * migration holds them at that instant, e.g. memory offlining) is followed
 * by another: the pages are back, none left on the slow node uncounted.
 */
static void test_fetch_gone_retried(void **state)
{
	struct tt_sched_stats st;

	(void)state;
	iteration(&all_run);
	fetch_gone = 1;
	iteration(&all_run);
	assert_int_equal(fetch_gone, 0);
	tt_exec_stats(&X, &st);
	assert_true(st.bytes_evicted > 0);
	assert_int_equal(st.bytes_prefetched, st.bytes_evicted);
	assert_int_equal(st.prefetch_left_bytes, 0);
	assert_int_equal(on_node(BASE, NL * TSIZE, 0), NL * TSIZE);
}

/* A planned iteration whose prefetches find every page busy. */
static void left_on_slow(void)
{
	iteration(&all_run);
	fetch_busy = 1;
	iteration(&all_run);
}

/*
 * A prefetch that finds its pages busy in every pass, before the backward
 * pass begins, leaves them on the slow node: late, not on time, and in
 * prefetch_left_bytes.
 */
static void test_fetch_left_is_late(void **state)
{
	struct tt_sched_stats st;

	(void)state;
	left_on_slow();
	tt_exec_stats(&X, &st);
	assert_true(st.bytes_evicted > 0);
	assert_int_equal(st.bytes_prefetched, 0);
	assert_int_equal(st.prefetch_left_bytes, st.bytes_evicted);
	assert_int_equal(st.ontime_bytes, 0);
	assert_int_equal(st.late_bytes, st.bytes_evicted);
	assert_int_equal(late_traces, NL);
	assert_int_equal(on_node(BASE, NL * TSIZE, 1), st.bytes_evicted);
}

/*
 * What a prefetch left on the slow node goes back at the next iteration
 * begin, in the caller, before the plan's layers run; counted in
 * left_returned_bytes (and bytes_prefetched).
 */
static void test_fetch_left_retried(void **state)
{
	struct tt_sched_stats st;
	unsigned long long ev;

	(void)state;
	left_on_slow();
	tt_exec_stats(&X, &st);
	ev = st.bytes_evicted;
	assert_true(ev > 0);
	assert_int_equal(st.prefetch_left_bytes, ev);
	assert_int_equal(on_node(BASE, NL * TSIZE, 1), ev);
	assert_true(X.nr_strays > 0);
	fetch_busy = 0;
	assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
	assert_int_equal(on_node(BASE, NL * TSIZE, 0), NL * TSIZE);
	assert_int_equal(X.nr_strays, 0);
	tt_exec_stats(&X, &st);
	assert_int_equal(st.left_returned_bytes, ev);
	assert_int_equal(st.bytes_prefetched, ev);
	assert_int_equal(st.prefetch_left_bytes, ev);
}

/*
 * Pages that stay busy are retried at TT_EXEC_STRAY_TRIES iteration
 * begins, then left where they are (still counted in prefetch_left_bytes).
 */
static void test_fetch_left_gives_up(void **state)
{
	struct tt_sched_stats st;
	unsigned int i, n;

	(void)state;
	left_on_slow();
	for (i = 0; i < TT_EXEC_STRAY_TRIES; i++) {
		/* the chunks' spans, merged where they touch */
		assert_true(X.nr_strays > 0);
		n = fetch_moves;
		assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
		assert_true(fetch_moves > n);
	}
	assert_int_equal(X.nr_strays, 0);
	n = fetch_moves;
	assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
	assert_int_equal(fetch_moves, n);
	tt_exec_stats(&X, &st);
	assert_int_equal(st.left_returned_bytes, 0);
	assert_int_equal(on_node(BASE, NL * TSIZE, 1), st.bytes_evicted);
}

/* An ARCHIVE hint over what a prefetch left: it stays on the slow node. */
static void test_fetch_left_archived(void **state)
{
	struct tt_sched_stats st;

	(void)state;
	left_on_slow();
	fetch_busy = 0;
	assert_true(X.nr_strays > 0);
	assert_int_equal(tt_exec_hint(&X, BASE, BASE + NL * TSIZE,
				      TT_HINT_ARCHIVE), 0);
	assert_int_equal(X.nr_strays, 0);
	assert_int_equal(event(TT_EV_ITER_BEGIN, 0, 0, 0, 0), 0);
	tt_exec_stats(&X, &st);
	assert_int_equal(st.left_returned_bytes, 0);
	assert_int_equal(on_node(BASE, NL * TSIZE, 1), st.bytes_evicted);
}

/*
 * A mover that completed late moved pages behind the executor's back
 * (tt_exec_landed()): a chunk its eviction counted as not moved is fetched
 * all the same, and pages no episode holds evicted (an idle layer's, whose
 * saved ranges are gone) go back to the fast node at once.
 */
static void test_landed(void **state)
{
	static const struct opts no_fetch = { 1, 0, 0, 0 };
	struct tt_exec_layer *l = NULL;
	struct tt_chunk c0;
	unsigned long long len, p;
	unsigned int i;

	(void)state;
	iteration(&all_run);
	iteration(&no_fetch);
	for (i = 0; i < tt_exec_nr_layers(&X); i++) {
		l = tt_exec_layer_at(&X, i);
		if (l->id == 10)
			break;
	}
	assert_non_null(l);
	assert_int_equal(l->id, 10);
	assert_true(l->state == TT_EXEC_EVICTED ||
		    l->state == TT_EXEC_PREFETCH_QUEUED);
	assert_true(l->nr_chunks > 1 && l->next_chunk == 0);
	c0 = l->chunks[0];
	len = c0.end - c0.start;
	assert_int_equal(on_node(c0.start, len, 1), len);
	/* the eviction counted none of it: its mover landed it late */
	l->chunks[0].moved = 0;
	tt_exec_landed(&X, c0.start, c0.end);
	assert_int_equal(l->chunks[0].landed, 1);
	/* left to the prefetch: evicted is where it belongs until then */
	assert_int_equal(on_node(c0.start, len, 1), len);
	assert_int_equal(X.counts.landed_bytes, 0);
	while (qn)
		run_one(0);
	assert_int_equal(on_node(c0.start, len, 0), len);
	assert_int_equal(l->state, TT_EXEC_IDLE);
	assert_int_equal(on_node(BASE, NL * TSIZE, 0), NL * TSIZE);

	/* an idle layer: back now, in the caller, without the mover's orders */
	for (p = (taddr(1) - BASE) / PG; p < (taddr(1) + TSIZE - BASE) / PG; p++)
		node_of[p] = 1;
	i = moves;
	tt_exec_landed(&X, taddr(1) - MIB, taddr(1) + TSIZE + MIB);
	assert_int_equal(on_node(taddr(1), TSIZE, 0), TSIZE);
	assert_int_equal(X.counts.landed_bytes, TSIZE);
	assert_true(moves > i);
	assert_int_equal(qn, 0);
}

/*
 * A late landing over several layers' tensors at once, the span's ends
 * inside pages: the chunks the running episodes hold evicted stay on the
 * slow node and are marked landed, every other page of the span goes back
 * to the fast node now, whatever the order of the layers' addresses.
 */
static void test_landed_span(void **state)
{
	static const struct opts no_fetch = { 1, 0, 0, 0 };
	unsigned long long held = 0, p, a;
	struct tt_sched_stats st;
	struct tt_exec_layer *l;
	unsigned int i, k;

	(void)state;
	iteration(&all_run);
	iteration(&no_fetch);
	/* every page the episodes do not hold: landed on the slow node */
	for (p = 0; p < NL * TSIZE / PG; p++)
		node_of[p] = 1;
	for (i = 0; i < tt_exec_nr_layers(&X); i++) {
		l = tt_exec_layer_at(&X, i);
		if (l->state != TT_EXEC_EVICTED &&
		    l->state != TT_EXEC_PREFETCH_QUEUED)
			continue;
		for (k = l->next_chunk; k < l->nr_chunks; k++)
			held += l->chunks[k].end - l->chunks[k].start;
	}
	assert_true(held > 0 && held < NL * TSIZE);
	tt_exec_landed(&X, BASE + 100, BASE + NL * TSIZE - 100);
	tt_exec_stats(&X, &st);
	assert_int_equal(st.landed_bytes, NL * TSIZE - held);
	for (i = 0; i < tt_exec_nr_layers(&X); i++) {
		l = tt_exec_layer_at(&X, i);
		if (l->state != TT_EXEC_EVICTED &&
		    l->state != TT_EXEC_PREFETCH_QUEUED)
			continue;
		for (k = l->next_chunk; k < l->nr_chunks; k++) {
			a = l->chunks[k].end - l->chunks[k].start;
			assert_int_equal(l->chunks[k].landed, 1);
			assert_int_equal(on_node(l->chunks[k].start, a, 1), a);
		}
	}
	assert_int_equal(on_node(BASE, NL * TSIZE, 0), NL * TSIZE - held);
	/* and the prefetches bring the rest */
	while (qn)
		run_one(0);
	assert_int_equal(on_node(BASE, NL * TSIZE, 0), NL * TSIZE);
}

/* During layer 10's eviction: a late mover lands its last chunk first. */
static void land_last_chunk_mid_evict(struct tt_exec_layer *l)
{
	struct tt_chunk *c = &l->chunks[l->nr_chunks - 1];
	unsigned long long p;

	mid_evict = NULL;
	for (p = (c->start - BASE) / PG; p < (c->end - BASE) / PG; p++)
		node_of[p] = 1;
	tt_exec_landed(&X, c->start, c->end);
}

/*
 * A late mover lands a chunk on the slow node before the eviction reaches
 * it (tt_exec_landed() while EVICTING): the eviction finds the chunk there
 * and counts it evicted, and the prefetch brings the whole layer back.
 */
static void test_landed_while_evicting(void **state)
{
	(void)state;
	iteration(&all_run);
	mid_evict = land_last_chunk_mid_evict;
	iteration(&all_run);
	run_work(-1);
	assert_null(mid_evict);
	assert_int_equal(X.counts.landed_bytes, 0);
	assert_int_equal(on_node(BASE, NL * TSIZE, 0), NL * TSIZE);
	/* what the prefetch brought back, the eviction counted */
	assert_int_equal(X.counts.bytes_prefetched, X.counts.bytes_evicted);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_profile_then_plan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_evict_then_prefetch_ahead, setup, teardown),
		cmocka_unit_test_setup_teardown(test_born_slow_fetched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_rescued, setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_sync_fetched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunking, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rate_wall_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_evict_expired, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slices, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_victims, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_admission, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hint_pin_fast, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hint_archive_retire, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hint_will_use, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetch_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_overlap_slow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats_and_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_evict_stopped_in_last_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetch_gone_retried, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetch_left_is_late, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetch_left_retried,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetch_left_gives_up,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetch_left_archived,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_landed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_landed_while_evicting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_landed_span, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
