// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit tests of the scheduler's timeline core (core/timeline.c).
 *
 * The model iteration, unless a test says otherwise (times in ms from the
 * iteration start, x `scale`): four layers 10, 20, 30, 40; layer k runs
 * forward over [10k, 10k + 10) and saves 8 MiB, then (after 5 ms of loss)
 * backward in reverse order: layer 40 over [45, 55), 30 over [55, 65),
 * 20 [65, 75), 10 [75, 85).
 * ER = PR = 1e9 bytes/s, ST = 1 ms, 4096-byte pages.
 *
 * A small simulated executor stands in for kmod/sched.c: an eviction takes
 * bytes/ER_true from the forward end, a prefetch starts at its trigger time
 * (not before the eviction ended, one at a time) and takes bytes/PR_true.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../timeline.h"

#define MS 1000000ULL
#define MIB (1024ULL * 1024)
#define P4K 4096ULL
#define RATE 1000000000ULL
#define CAP 64

static struct tt_tl_layer layers[CAP];
static struct tt_policy_layer plan_buf[CAP];
static unsigned int order_buf[CAP];
static struct tt_tl_due due_buf[CAP];

/* A timeline seeded with RATE both ways: no sample yet (a rate probe runs). */
static void setup_seeded(struct tt_tl *tl, unsigned int profile_iters,
			 unsigned int cap)
{
	struct tt_tl_storage st = {
		.layers = layers, .plan = plan_buf, .order = order_buf,
		.due = due_buf, .cap = cap,
	};

	memset(layers, 0, sizeof(layers));
	tt_tl_init(tl, P4K, profile_iters, 1 * MS, RATE, RATE);
	tt_tl_set_storage(tl, &st);
}

/*
 * A timeline whose rates are RATE, set (settled, as TT_IOC_SET_SCHED sets
 * them): no rate probe, so the profile iterations evict nothing.
 */
static void setup_tl(struct tt_tl *tl, unsigned int profile_iters,
		     unsigned int cap)
{
	setup_seeded(tl, profile_iters, cap);
	tt_tl_set_rates(tl, RATE, RATE);
}

static int idx_of(struct tt_tl *tl, unsigned int id)
{
	int i = tt_tl_find(tl, id);

	if (i < 0)
		i = tt_tl_add(tl, id, NULL);
	assert_true(i >= 0);
	return i;
}

/*
 * struct sim - the simulated executor
 * @er_true, @pr_true: the rates migrations really run at.
 * @learn:     report rate samples.
 * @allow:     value passed as tt_tl_layer_event()'s @allow.
 * @evicted:   per layer index: bytes evicted this iteration.
 * @evict_end: per layer index: when the eviction ends (absolute).
 * @pf_end:    per layer index: when the prefetch ends (absolute), 0 = none.
 * @pf_busy:   the prefetch worker is busy until then.
 * @evictions: TT_TL_ACT_EVICT actions seen, over the whole test.
 * @evict_ids: bit k set when layer (k+1)*10 was evicted this iteration.
 */
struct sim {
	unsigned long long er_true, pr_true;
	int learn;
	int allow;
	unsigned long long evicted[CAP];
	unsigned long long evict_end[CAP];
	unsigned long long pf_end[CAP];
	unsigned long long pf_busy;
	unsigned int pf_busy_idx;
	unsigned int evictions;
	unsigned int evict_ids;
	/* each prefetch takes up to @jitter_pct % longer (pseudo-random) */
	unsigned int jitter_pct;
	unsigned int seed;
	/*
	 * the turn from the last forward end to the first backward begin:
	 * @turn_ms (0: 5 ms) x scale; with @turn_min_ms, each iteration's
	 * turn is drawn from [@turn_min_ms, @turn_ms] instead
	 */
	unsigned int turn_ms, turn_min_ms;
	/* the first backward layer's backward step, us (0: 10 ms x scale) */
	unsigned int first_bwd_us;
	/* each prefetch starts this long after its hand-out, us */
	unsigned int disp_us;
	/* each eviction starts this long after it was ordered, us */
	unsigned int evict_disp_us;
	/* the last time sim_due() handed out prefetches (0: none yet) */
	unsigned long long polled;
};

/* The next prefetch's extra time over @ns, as @sm->jitter_pct says. */
static unsigned long long sim_jitter(struct sim *sm, unsigned long long ns)
{
	if (!sm->jitter_pct)
		return 0;
	sm->seed = sm->seed * 1103515245U + 12345U;
	return ns * ((sm->seed >> 16) % (sm->jitter_pct + 1)) / 100;
}

static unsigned long long xfer(unsigned long long bytes, unsigned long long bps)
{
	return tt_policy_xfer_ns(bytes, bps);
}

/* Hand out the prefetches due by @now and simulate them. */
static void sim_due(struct tt_tl *tl, struct sim *sm, unsigned long long now)
{
	unsigned long long next, start, at;
	unsigned int id;

	/* as the scheduler's timer: at each time the timeline asks for */
	at = sm->polled && sm->polled < now ? sm->polled : now;
	for (;;) {
		int i;

		if (!tt_tl_next_due(tl, at, &id, &next)) {
			if (next == ~0ULL || next > now)
				break;
			at = next;
			continue;
		}
		i = tt_tl_find(tl, id);
		assert_true(i >= 0);
		if (!sm->evicted[i])
			continue;
		start = at + sm->disp_us * 1000ULL;
		if (start < sm->evict_end[i])
			start = sm->evict_end[i];
		if (start < sm->pf_busy) {
			/* as the executor: the turn passes at the end */
			start = sm->pf_busy;
			tt_tl_prefetch_end(tl, sm->pf_busy_idx, sm->pf_busy);
		}
		sm->pf_busy_idx = i;
		sm->pf_end[i] = start + xfer(sm->evicted[i], sm->pr_true);
		sm->pf_end[i] += sim_jitter(sm, sm->pf_end[i] - start);
		sm->pf_busy = sm->pf_end[i];
		tt_tl_prefetch_start(tl, i, start);
		if (sm->learn)
			tt_tl_rate_sample(tl, TT_TL_PREFETCH, sm->evicted[i],
					  sm->pf_end[i] - start);
	}
	sm->polled = now;
}

static void sim_evict(struct tt_tl *tl, struct sim *sm, unsigned int i,
		      unsigned long long bytes, unsigned long long now)
{
	assert_true(bytes > 0);
	sm->evictions++;
	sm->evict_ids |= 1U << (tl->st.layers[i].id / 10 - 1);
	sm->evicted[i] = bytes;
	now += sm->evict_disp_us * 1000ULL;
	sm->evict_end[i] = now + xfer(bytes, sm->er_true);
	tt_tl_evict_start(tl, i, now);
	tt_tl_evict_end(tl, i, sm->evict_end[i], bytes);
	if (sm->learn)
		tt_tl_rate_sample(tl, TT_TL_EVICT, bytes,
				  sm->evict_end[i] - now);
}

static enum tt_tl_action sim_event(struct tt_tl *tl, struct sim *sm,
				   unsigned int id, int phase, int end,
				   unsigned long long now)
{
	unsigned long long bytes = 0;
	enum tt_tl_action act;
	unsigned int j;
	int i;

	sim_due(tl, sm, now);
	i = idx_of(tl, id);
	act = tt_tl_layer_event(tl, i, phase, end, now, sm->allow, &bytes);
	/* TT_TL_MODE_DYNAMIC's fallback: the delayed evictions */
	while (phase == TT_TL_FWD && end && tt_tl_next_evict(tl, &j, &bytes))
		sim_evict(tl, sm, j, bytes, now);
	/* the backward begin may have released prefetches */
	if (phase == TT_TL_BWD && !end)
		sim_due(tl, sm, now);
	switch (act) {
	case TT_TL_ACT_EVICT:
		assert_int_equal(phase, TT_TL_FWD);
		assert_int_equal(end, 1);
		sim_evict(tl, sm, i, bytes, now);
		break;
	case TT_TL_ACT_FETCH:
		if (!sm->evicted[i])
			break;
		if (sm->pf_end[i] && sm->pf_end[i] <= now) {
			tt_tl_prefetch_end(tl, i, sm->pf_end[i]);
			tt_tl_bwd_check(tl, i, sm->evicted[i], 0);
		} else {
			/* late: fetched from now on (or from its start) */
			if (!sm->pf_end[i]) {
				unsigned long long start = now;

				if (start < sm->evict_end[i])
					start = sm->evict_end[i];
				sm->pf_end[i] = start + xfer(sm->evicted[i],
							     sm->pr_true);
			}
			tt_tl_bwd_check(tl, i, sm->evicted[i], sm->evicted[i]);
			tt_tl_prefetch_end(tl, i, sm->pf_end[i]);
		}
		sm->evicted[i] = 0;
		break;
	default:
		break;
	}
	return act;
}

/*
 * One iteration from @t0 over the layers @ids (0: a slot without a layer),
 * times x @scale: slot k runs forward over [10k, 10k + 10) ms, then, after
 * the turn (5 ms, or as @sm says), the backward passes in reverse order,
 * 10 ms each.
 */
static unsigned int run_ids(struct tt_tl *tl, struct sim *sm,
			    unsigned long long t0, const unsigned int *ids,
			    unsigned int n, unsigned int scale)
{
	unsigned int ret, k, turn;

	memset(sm->evicted, 0, sizeof(sm->evicted));
	memset(sm->pf_end, 0, sizeof(sm->pf_end));
	sm->pf_busy = 0;
	sm->evict_ids = 0;
	sm->polled = t0;
	ret = tt_tl_iter_begin(tl, t0);
	for (k = 0; k < n; k++) {
		unsigned long long t = t0 + 10 * k * MS * scale;

		if (!ids[k])
			continue;
		sim_event(tl, sm, ids[k], TT_TL_FWD, 0, t);
		tt_tl_saved(tl, idx_of(tl, ids[k]), 8 * MIB, 0);
		sim_event(tl, sm, ids[k], TT_TL_FWD, 1, t + 10 * MS * scale);
	}
	turn = sm->turn_ms ? sm->turn_ms : 5;
	if (sm->turn_min_ms) {
		sm->seed = sm->seed * 1103515245U + 12345U;
		turn = sm->turn_min_ms +
		       (sm->seed >> 16) % (sm->turn_ms - sm->turn_min_ms + 1);
	}
	for (k = n; k-- > 0;) {
		unsigned long long t = t0 + (10 * n + turn + 10 * (n - 1 - k)) * MS * scale;
		unsigned long long step = 10 * MS * scale;

		if (sm->first_bwd_us && k + 1 < n)
			t -= step - sm->first_bwd_us * 1000ULL;
		if (sm->first_bwd_us && k + 1 == n)
			step = sm->first_bwd_us * 1000ULL;
		if (!ids[k])
			continue;
		sim_event(tl, sm, ids[k], TT_TL_BWD, 0, t);
		sim_event(tl, sm, ids[k], TT_TL_BWD, 1, t + step);
	}
	return ret;
}

/*
 * One model iteration from @t0: layers 10..40 (skipping @skip, adding
 * @extra after layer 40 with the same pattern), times x @scale.
 * Returns tt_tl_iter_begin()'s bits.
 */
static unsigned int run_iter(struct tt_tl *tl, struct sim *sm,
			     unsigned long long t0, unsigned int scale,
			     unsigned int skip, unsigned int extra)
{
	unsigned int ids[5] = { 10, 20, 30, 40, extra }, k;

	for (k = 0; k < 5; k++)
		if (ids[k] == skip)
			ids[k] = 0;
	return run_ids(tl, sm, t0, ids, extra ? 5 : 4, scale);
}

/* One iteration of depth @depth: layers 10, 20, ..., 10 x depth. */
static unsigned int run_depth(struct tt_tl *tl, struct sim *sm,
			      unsigned long long t0, unsigned int depth,
			      unsigned int scale)
{
	unsigned int ids[CAP], k;

	for (k = 0; k < depth; k++)
		ids[k] = 10 * (k + 1);
	return run_ids(tl, sm, t0, ids, depth, scale);
}

#define ITER_NS (100 * MS)

/* @v is within 0.1% of @want. */
#define assert_near(v, want) do {					\
	unsigned long long _v = (v), _w = (want);			\
	assert_true(_v >= _w - _w / 1000 && _v <= _w + _w / 1000);	\
} while (0)

static struct tt_tl_layer *L(struct tt_tl *tl, unsigned int id)
{
	int i = tt_tl_find(tl, id);

	assert_true(i >= 0);
	return &tl->st.layers[i];
}

/* Three profiling iterations: averaged profile, no plan, no eviction. */
static void test_profile_n_iterations(void **state)
{
	struct sim sm = { .er_true = RATE, .pr_true = RATE, .allow = 1 };
	struct tt_tl tl;
	unsigned int i, ret;

	(void)state;
	setup_tl(&tl, 3, CAP);
	for (i = 0; i < 3; i++) {
		ret = run_iter(&tl, &sm, 1000 * MS + i * 1000 * MS, 2 + i, 0, 0);
		assert_false(ret & TT_TL_IB_PLANNED);
		assert_false(ret & TT_TL_IB_REPROFILE);
		assert_int_equal(tl.profiled, i);
	}
	assert_int_equal(sm.evictions, 0);
	ret = tt_tl_iter_begin(&tl, 4000 * MS);
	assert_true(ret & TT_TL_IB_CLOSED);
	assert_true(ret & TT_TL_IB_PLANNED);
	assert_int_equal(tl.profiled, 3);
	/* the mean of scales 2, 3, 4: layer 10 ends its forward at 30 ms */
	assert_near(L(&tl, 10)->prof.fwd_end, 30 * MS);
	assert_near(L(&tl, 10)->prof.bwd_start, 3 * 75 * MS);
	assert_near(tl.prof_iter_ns, 3 * 85 * MS);
	assert_int_equal(L(&tl, 40)->prof.saved, 8 * MIB);
	assert_int_equal(L(&tl, 40)->samples, 3);
	assert_int_equal(tl.counts.iterations, 4);
	assert_int_equal(tl.counts.reprofiles, 0);
}

/* The plan is tt_policy_plan()'s on the profile; schedule in time order. */
static void test_plan_built(void **state)
{
	struct sim sm = { .er_true = RATE, .pr_true = RATE, .allow = 1 };
	struct tt_policy_params p = { RATE, RATE, 1 * MS, P4K, 0 };
	struct tt_policy_layer ref[4];
	unsigned int order[4], i, id, ret;
	unsigned long long next, last = 0;
	struct tt_tl tl;

	(void)state;
	setup_tl(&tl, 1, CAP);
	run_iter(&tl, &sm, 1000 * MS, 1, 0, 0);
	ret = tt_tl_iter_begin(&tl, 2000 * MS);
	assert_true(ret & TT_TL_IB_PLANNED);

	for (i = 0; i < 4; i++) {
		memset(&ref[i], 0, sizeof(ref[i]));
		ref[i].layer = 10 * (i + 1);
		ref[i].fwd_start_ns = 10 * i * MS;
		ref[i].fwd_end_ns = (10 * i + 10) * MS;
		ref[i].bwd_start_ns = (45 + 10 * (3 - i)) * MS;
		ref[i].bwd_end_ns = ref[i].bwd_start_ns + 10 * MS;
		ref[i].saved_bytes = 8 * MIB;
	}
	assert_int_equal(tt_policy_plan(&p, ref, 4, order, NULL, NULL), 0);
	for (i = 0; i < 4; i++) {
		struct tt_tl_layer *l = L(&tl, ref[i].layer);

		assert_true(l->flags & TT_TL_L_PLANNED);
		assert_int_equal(l->status, ref[i].status);
		assert_int_equal(l->final_bytes, ref[i].final_bytes);
		assert_int_equal(l->prefetch_ns, ref[i].prefetch_ns);
	}
	/* the model has all three outcomes */
	assert_int_equal(L(&tl, 10)->status, TT_POLICY_ACCEPTED);
	assert_int_equal(L(&tl, 40)->status, TT_POLICY_MODIFIED);

	/* the schedule hands out every non-dropped layer in trigger order */
	for (i = 0; tt_tl_next_due(&tl, ~0ULL - 1, &id, &next); i++) {
		assert_true(L(&tl, id)->final_bytes > 0);
		assert_true(L(&tl, id)->prefetch_ns >= last);
		last = L(&tl, id)->prefetch_ns;
	}
	assert_int_equal(next, ~0ULL);
	assert_int_equal(i, tl.ndue);
	assert_true(i >= 2);
}

/* A planned iteration evicts at forward ends, exactly the plan's bytes. */
static void test_planned_iteration_evicts(void **state)
{
	struct sim sm = { .er_true = RATE, .pr_true = RATE, .allow = 1 };
	unsigned long long dropped, planned;
	struct tt_tl tl;
	unsigned int id;

	(void)state;
	setup_tl(&tl, 1, CAP);
	run_iter(&tl, &sm, 1000 * MS, 1, 0, 0);
	run_iter(&tl, &sm, 2000 * MS, 1, 0, 0);
	for (id = 10; id <= 40; id += 10) {
		struct tt_tl_layer *l = L(&tl, id);

		if (l->final_bytes) {
			assert_int_equal(l->x.evicted_bytes, l->final_bytes);
			assert_true(l->x.evict_start >= l->x.fwd_end);
			assert_true(l->x.prefetch_end <= l->x.bwd_start);
		} else {
			assert_int_equal(l->x.evicted_bytes, 0);
		}
	}
	assert_int_equal(tl.counts.layers_accepted + tl.counts.layers_modified,
			 sm.evictions);
	assert_int_equal(tl.counts.layers_accepted + tl.counts.layers_modified +
			 tl.counts.layers_dropped, 4);
	assert_int_equal(tl.counts.late_count, 0);
	assert_true(tl.counts.ontime_bytes > 0);

	/*
	 * with @allow 0 (an earlier eviction still out) nothing is ordered,
	 * and each planned layer kept fast is counted as dropped
	 */
	sm.allow = 0;
	sm.evictions = 0;
	dropped = tl.counts.layers_dropped;
	planned = tl.counts.layers_accepted + tl.counts.layers_modified;
	run_iter(&tl, &sm, 3000 * MS, 1, 0, 0);
	assert_int_equal(sm.evictions, 0);
	assert_int_equal(tl.counts.layers_dropped - dropped, 4);
	assert_int_equal(tl.counts.layers_accepted + tl.counts.layers_modified,
			 planned);

	/* off: the plan exists, nothing is ordered or counted as dropped */
	sm.allow = 1;
	tl.off = 1;
	run_iter(&tl, &sm, 4000 * MS, 1, 0, 0);
	assert_true(tl.planned);
	assert_int_equal(sm.evictions, 0);
}

/* A layer id the profile does not know is never evicted; then reprofile. */
static void test_unknown_layer(void **state)
{
	struct sim sm = { .er_true = RATE, .pr_true = RATE, .allow = 1 };
	struct tt_tl tl;
	unsigned int ret;

	(void)state;
	setup_tl(&tl, 1, CAP);
	run_iter(&tl, &sm, 1000 * MS, 1, 0, 0);
	run_iter(&tl, &sm, 2000 * MS, 1, 0, 50);
	assert_false(sm.evict_ids & (1U << 4));
	assert_int_equal(tl.counts.layers_unknown, 1);
	assert_false(L(&tl, 50)->flags & TT_TL_L_PLANNED);
	assert_true(sm.evict_ids & 1);		/* layer 10 still was */

	ret = run_iter(&tl, &sm, 3000 * MS, 1, 0, 50);
	assert_true(ret & TT_TL_IB_REPROFILE);
	assert_false(ret & TT_TL_IB_PLANNED);
	assert_int_equal(tl.counts.reprofiles, 1);
	assert_int_equal(sm.evict_ids, 0);
	/* profiling again: not counted as unknown */
	assert_int_equal(tl.counts.layers_unknown, 1);

	/* the new layer set is learnt: layer 50 is planned next time */
	ret = run_iter(&tl, &sm, 4000 * MS, 1, 0, 50);
	assert_true(ret & TT_TL_IB_PLANNED);
	assert_true(L(&tl, 50)->flags & TT_TL_L_PLANNED);
	assert_int_equal(tl.counts.reprofiles, 1);
}

/* A missing layer, a much slower iteration, events out of order. */
static void test_deviations(void **state)
{
	struct sim sm = { .er_true = RATE, .pr_true = RATE, .allow = 1 };
	unsigned long long bytes;
	struct tt_tl tl;
	unsigned int ret;
	int i;

	(void)state;
	setup_tl(&tl, 1, CAP);
	run_iter(&tl, &sm, 1000 * MS, 1, 0, 0);

	/* layer 20 missing */
	ret = run_iter(&tl, &sm, 2000 * MS, 1, 20, 0);
	assert_true(ret & TT_TL_IB_PLANNED);
	ret = run_iter(&tl, &sm, 3000 * MS, 1, 0, 0);
	assert_true(ret & TT_TL_IB_REPROFILE);
	assert_int_equal(tl.counts.reprofiles, 1);
	assert_int_equal(sm.evict_ids, 0);

	/* 1.9x slower is fine, 3x slower is not */
	ret = run_iter(&tl, &sm, 4000 * MS, 1, 0, 0);
	assert_false(ret & TT_TL_IB_REPROFILE);
	assert_true(ret & TT_TL_IB_PLANNED);
	tt_tl_iter_begin(&tl, 5000 * MS);
	for (i = 0; i < 4; i++) {
		unsigned int id = 10 * (i + 1);
		int k = idx_of(&tl, id);

		tt_tl_layer_event(&tl, k, TT_TL_FWD, 0, 5000 * MS + 19 * i * MS, 1, &bytes);
		tt_tl_layer_event(&tl, k, TT_TL_FWD, 1, 5000 * MS + 19 * i * MS + 19 * MS, 1, &bytes);
	}
	for (i = 3; i >= 0; i--) {
		int k = idx_of(&tl, 10 * (i + 1));
		unsigned long long t = 5000 * MS + (76 + 19 * (3 - i)) * MS;

		tt_tl_layer_event(&tl, k, TT_TL_BWD, 0, t, 1, &bytes);
		tt_tl_layer_event(&tl, k, TT_TL_BWD, 1, t + 19 * MS, 1, &bytes);
	}
	ret = run_iter(&tl, &sm, 6000 * MS, 3, 0, 0);
	assert_false(ret & TT_TL_IB_REPROFILE);
	ret = tt_tl_iter_begin(&tl, 7000 * MS);
	assert_true(ret & TT_TL_IB_REPROFILE);
	assert_int_equal(tl.counts.reprofiles, 2);

	/* out of order: a backward end without its begin, a begin twice */
	run_iter(&tl, &sm, 8000 * MS, 1, 0, 0);
	tt_tl_iter_begin(&tl, 9000 * MS);
	assert_true(tl.planned);
	i = idx_of(&tl, 10);
	assert_int_equal(tt_tl_layer_event(&tl, i, TT_TL_BWD, 1, 9001 * MS, 1, &bytes),
			 TT_TL_ACT_FORGET);
	assert_int_equal(tt_tl_layer_event(&tl, i, TT_TL_FWD, 0, 9002 * MS, 1, &bytes),
			 TT_TL_ACT_NONE);
	assert_int_equal(tt_tl_layer_event(&tl, i, TT_TL_FWD, 1, 9003 * MS, 1, &bytes),
			 TT_TL_ACT_NONE);		/* no eviction */
	i = idx_of(&tl, 20);
	tt_tl_layer_event(&tl, i, TT_TL_FWD, 0, 9004 * MS, 1, &bytes);
	assert_int_equal(tt_tl_layer_event(&tl, i, TT_TL_FWD, 0, 9005 * MS, 1, &bytes),
			 TT_TL_ACT_NONE);
	assert_int_equal(tt_tl_layer_event(&tl, i, TT_TL_FWD, 1, 9006 * MS, 1, &bytes),
			 TT_TL_ACT_NONE);
	assert_true(L(&tl, 10)->seen & TT_TL_S_ERR);
	assert_true(L(&tl, 20)->seen & TT_TL_S_ERR);
	/* backward begin still asks for the data back */
	assert_int_equal(tt_tl_layer_event(&tl, i, TT_TL_BWD, 0, 9007 * MS, 1, &bytes),
			 TT_TL_ACT_FETCH);
}

/* Events before the first iteration and for no layer plan: harmless. */
static void test_outside_iteration(void **state)
{
	unsigned long long bytes = 1;
	struct tt_tl tl;
	int i;

	(void)state;
	setup_tl(&tl, 1, CAP);
	i = idx_of(&tl, 7);
	assert_int_equal(tt_tl_layer_event(&tl, i, TT_TL_FWD, 1, 5, 1, &bytes),
			 TT_TL_ACT_NONE);
	assert_int_equal(bytes, 0);
	tt_tl_saved(&tl, i, 4 * P4K, 1);
	tt_tl_saved(&tl, i, 2 * P4K, 0);
	assert_int_equal(tt_tl_iter_begin(&tl, 10), 0);
	/* persistent bytes count as saved in every iteration */
	assert_int_equal(L(&tl, 7)->cur.saved, 4 * P4K);
	tt_tl_unsaved(&tl, i, 4 * P4K);
	assert_int_equal(L(&tl, 7)->persist_bytes, 0);
	/* an iteration without a complete layer is not a profile */
	assert_int_equal(tt_tl_iter_begin(&tl, 20), TT_TL_IB_CLOSED);
	assert_int_equal(tl.profiled, 0);
	assert_int_equal(tl.counts.reprofiles, 0);
}

/*
 * Lead-time feedback: PR is 20% slower than assumed and never learnt. The
 * first planned iteration is late; the lead grows and the late count stops
 * growing after a few iterations while the lead settles.
 */
static void test_lead_converges(void **state)
{
	struct sim sm = { .er_true = RATE, .pr_true = RATE * 8 / 10, .allow = 1 };
	unsigned long long late_at_5, lead_at_10;
	struct tt_tl tl;
	unsigned int i;

	(void)state;
	setup_tl(&tl, 1, CAP);
	for (i = 0; i < 40; i++) {
		run_iter(&tl, &sm, (1 + i) * 1000 * MS, 1, 0, 0);
		if (i == 5)
			late_at_5 = tl.counts.late_count;
		if (i == 10)
			lead_at_10 = L(&tl, 10)->lead_ns + L(&tl, 20)->lead_ns;
	}
	assert_true(late_at_5 >= 1);
	assert_int_equal(tl.counts.late_count, late_at_5);
	assert_int_equal(tl.counts.reprofiles, 0);
	/* the lead stays positive and shrinks only slowly */
	assert_true(L(&tl, 10)->lead_ns + L(&tl, 20)->lead_ns > 0);
	assert_true(L(&tl, 10)->lead_ns + L(&tl, 20)->lead_ns <= lead_at_10);
	assert_true(tl.counts.ontime_bytes > 30 * 8 * MIB);
}

/*
 * Lead-time feedback on a noisy machine: PR 20% slower than assumed, and
 * each prefetch up to 60% longer again, at random. Once the lead has
 * learnt the noise, the layers stay on time: at most 2 late layers in the
 * last 30 of 60 iterations (seeds 1-12: 0-2; a lead that only follows
 * lateness: 22 here).
 */
static void test_lead_noise(void **state)
{
	struct sim sm = {
		.er_true = RATE, .pr_true = RATE * 8 / 10, .allow = 1,
		.jitter_pct = 60, .seed = 1,
	};
	unsigned long long late_at_30 = 0;
	struct tt_tl tl;
	unsigned int i;

	(void)state;
	setup_tl(&tl, 1, CAP);
	for (i = 0; i < 60; i++) {
		run_iter(&tl, &sm, (1 + i) * 1000 * MS, 3, 0, 0);
		if (i == 30)
			late_at_30 = tl.counts.late_count;
	}
	print_message("lead_noise: %llu late layer-iterations by 30, %llu in the last 30\n",
		      late_at_30, tl.counts.late_count - late_at_30);
	assert_true(late_at_30 >= 1);
	assert_true(tl.counts.late_count - late_at_30 <= 2);
	assert_true(tl.counts.ontime_bytes > 100 * 8 * MIB);
}

/*
 * The last forward layer's backward begins after a turn (a loss, an
 * optimizer hook) that varies from one iteration to the next: profiled at
 * 600 ms, then anything from 200 to 600 ms, at random (layers of 100 ms,
 * 8 MiB each at 250 MB/s: 33.6 ms). Its prefetch has no earlier backward
 * layer to release it (TT_SCHED_COUNT): only its lead covers a turn
 * shorter than the profile's, by up to 400 ms, which is timing noise, not
 * a rate far off. Once learnt (30 iterations), the layer is not late in
 * the next 30, with and without the anchor (seed 1; before its floor kept
 * half the shortfall again, stop 57: 2 and 2).
 * With TT_SCHED_ANCHOR the prefetches the backward pass releases are held
 * (test_count_hold): they come back under two transfer times before their
 * backward begin on average, more than that released at once (seed 1:
 * 49.7 and 87.3 ms), no more of them late. At layers of 10 ms and 1 GB/s
 * (before the hold) seeds 1-12 gave 0-2 late; a lead that does not keep
 * the shortest idle time seen: 1-8.
 */
static void test_lead_turn_noise(void **state)
{
	unsigned long long late_at_30 = 0, early[2] = { 0, 0 };
	struct tt_tl tl;
	unsigned int i, q, anchor;

	(void)state;
	/*
	 * with the anchor, the releases are held (test_count_hold): the
	 * prefetches of ranks 2.. come back closer to their backward begin
	 */
	for (anchor = 0; anchor <= 1; anchor++) {
		struct sim sm = { .er_true = RATE / 4, .pr_true = RATE / 4,
				  .allow = 1, .turn_ms = 60, .seed = 1 };

		setup_tl(&tl, 1, CAP);
		tt_tl_set_rates(&tl, RATE / 4, RATE / 4);
		tt_tl_set_modes(&tl, TT_TL_MODE_COUNT |
				(anchor ? TT_TL_MODE_ANCHOR : 0));
		run_iter(&tl, &sm, 1000 * MS, 10, 0, 0);
		sm.turn_min_ms = 20;
		for (i = 0; i < 60; i++) {
			run_iter(&tl, &sm, (2 + i) * 1000 * MS, 10, 0, 0);
			if (i == 29)
				late_at_30 = tl.counts.late_count;
			for (q = 0; i >= 30 && q < tl.n; q++) {
				const struct tt_tl_layer *y = &tl.st.layers[q];

				if (y->rank > 1 && y->x.prefetch_end &&
				    y->x.prefetch_end < y->cur.bwd_start)
					early[anchor] += y->cur.bwd_start -
							 y->x.prefetch_end;
			}
		}
		print_message("lead_turn_noise (anchor %u): %llu late layer-iterations by 30, %llu in the last 30; lead of layer 40 %.1f ms; %llu MiB on time; ranks 2.. back %.1f ms early on average\n",
			      anchor, late_at_30,
			      tl.counts.late_count - late_at_30,
			      L(&tl, 40)->lead_ns / 1e6,
			      tl.counts.ontime_bytes / MIB,
			      early[anchor] / 90 / 1e6);
		assert_true(L(&tl, 40)->final_bytes > 0);
		assert_true(tl.counts.late_count - late_at_30 == 0);
		assert_true(tl.counts.ontime_bytes > 100 * 8 * MIB);
	}
	/* 90 layer-iterations each: under two transfer times (33.6 ms) early */
	assert_true(early[1] / 90 < 2 * xfer(8 * MIB, RATE / 4));
	assert_true(early[0] / 90 > 2 * xfer(8 * MIB, RATE / 4));
}

/*
 * The turn's noise when the first backward layer takes no time (a loss
 * head, a ReLU: the Python tests' CNN in the 6.12 guest, stop 58): layer
 * 40's backward step is 1 ms, so layer 30's backward begins 1 ms after the
 * first backward begin, less than TT_TL_REACH_MUL of its transfers. No
 * backward step releases it in time (TT_TL_L_TURN), so its lead has the
 * first layer's floor: the turn, profiled at 600 ms, then drawn from
 * 200-600 ms, leaves no layer-iteration late in the last 30 of 60 (ALAP,
 * the module's default). Without the floor for layer 30, 8 were late in
 * the first 30 and 5 in the last 30.
 */
static void test_lead_turn_uncovered(void **state)
{
	unsigned long long late_at_30 = 0;
	unsigned int i, anchor;
	struct tt_tl tl;

	(void)state;
	for (anchor = 0; anchor <= 1; anchor++) {
		struct sim sm = { .er_true = RATE / 4, .pr_true = RATE / 4,
				  .allow = 1, .turn_ms = 60, .seed = 1,
				  .first_bwd_us = 1000 };

		setup_tl(&tl, 1, CAP);
		tt_tl_set_rates(&tl, RATE / 4, RATE / 4);
		tt_tl_set_modes(&tl, TT_TL_MODE_COUNT | TT_TL_MODE_ALAP |
				(anchor ? TT_TL_MODE_ANCHOR : 0));
		run_iter(&tl, &sm, 1000 * MS, 10, 0, 0);
		sm.turn_min_ms = 20;
		for (i = 0; i < 60; i++) {
			run_iter(&tl, &sm, (2 + i) * 1000 * MS, 10, 0, 0);
			if (getenv("TT_TEST_VERBOSE"))
				fprintf(stderr, "iteration %u: evicted %#x late %llu leads %.1f %.1f %.1f %.1f ms status %d %d %d %d\n",
					i, sm.evict_ids, tl.counts.late_count,
					tt_tl_lead(&tl, L(&tl, 10)) / 1e6,
					tt_tl_lead(&tl, L(&tl, 20)) / 1e6,
					tt_tl_lead(&tl, L(&tl, 30)) / 1e6,
					tt_tl_lead(&tl, L(&tl, 40)) / 1e6,
					L(&tl, 10)->status, L(&tl, 20)->status,
					L(&tl, 30)->status, L(&tl, 40)->status);
			if (i == 29)
				late_at_30 = tl.counts.late_count;
		}
		print_message("lead_turn_uncovered (anchor %u): %llu late layer-iterations by 30, %llu in the last 30; lead of layer 30 %.1f ms (learnt %.1f ms)\n",
			      anchor, late_at_30,
			      tl.counts.late_count - late_at_30,
			      tt_tl_lead(&tl, L(&tl, 30)) / 1e6,
			      L(&tl, 30)->lead_ns / 1e6);
		assert_int_equal(L(&tl, 30)->rank, 2);
		assert_true(L(&tl, 30)->flags & TT_TL_L_TURN);
		assert_false(L(&tl, 20)->flags & TT_TL_L_TURN);
		assert_true(L(&tl, 30)->final_bytes > 0);
		assert_true(tl.counts.late_count - late_at_30 == 0);
	}
}

/*
 * TT_SCHED_COUNT's releases under a machine's noise: every prefetch
 * starts 6 ms after its hand-out (a busy pool) and takes up to twice its
 * time at the true rate (jitter). The timeline learns the dispatch wait
 * (disp_ns) and the slow end of PR (pr_low_bps), and the reach of each
 * layer covers both: the deeper layers are released two backward layers
 * early instead of one (steps of 30 ms; two transfers at PR take 22 ms,
 * at the slow end plus the wait 35 ms), and none is late in the last 20
 * of 40 iterations. With the reach on PR alone: reach 1, and 1 late in
 * the last 20 (seed 3; 0 with seeds 1, 2, 4-7, as with it).
 */
static void test_count_release_noise(void **state)
{
	unsigned int reach[2][8], late[2], i, q, noise;
	struct tt_tl tl;

	(void)state;
	for (noise = 0; noise <= 1; noise++) {
		struct sim sm = { .er_true = RATE, .pr_true = RATE,
				  .allow = 1, .learn = 1, .seed = 3,
				  .disp_us = noise ? 6000 : 0,
				  .jitter_pct = noise ? 100 : 0 };
		unsigned long long late_at = 0;

		setup_tl(&tl, 1, CAP);
		tt_tl_set_rates(&tl, RATE, RATE);
		tt_tl_set_modes(&tl, TT_TL_MODE_COUNT | TT_TL_MODE_ALAP |
				     TT_TL_MODE_ANCHOR);
		for (i = 0; i < 40; i++) {
			unsigned long long lb = tl.counts.late_count;

			run_depth(&tl, &sm, (1 + i) * 1000 * MS, 8, 3);
			for (q = 0; getenv("TT_TEST_VERBOSE") && q < 8; q++)
				if (L(&tl, 10 * (q + 1))->x.late_bytes)
					fprintf(stderr, "iteration %u (late %llu): layer %u late, rank %u reach %u ahead %u lead %.1f ms due %.1f start %.1f end %.1f bwd %.1f\n",
						i, tl.counts.late_count - lb,
						10 * (q + 1),
						L(&tl, 10 * (q + 1))->rank,
						L(&tl, 10 * (q + 1))->reach,
						L(&tl, 10 * (q + 1))->ahead,
						tt_tl_lead(&tl, L(&tl, 10 * (q + 1))) / 1e6,
						L(&tl, 10 * (q + 1))->x.due_at / 1e6,
						L(&tl, 10 * (q + 1))->x.prefetch_start / 1e6,
						L(&tl, 10 * (q + 1))->x.prefetch_end / 1e6,
						L(&tl, 10 * (q + 1))->cur.bwd_start / 1e6);
			if (i == 19)
				late_at = tl.counts.late_count;
		}
		late[noise] = tl.counts.late_count - late_at;
		for (q = 0; q < 8; q++)
			reach[noise][q] = L(&tl, 10 * (q + 1))->reach;
		print_message("count_release_noise (noise %u): %u late in the last 20, by 20 %llu; disp %.1f ms, PR %.0f, low %.0f MB/s; reach %u %u %u %u %u %u %u %u\n",
			      noise, late[noise], late_at, tl.disp_ns / 1e6,
			      tl.pr_bps / 1e6, tl.pr_low_bps / 1e6,
			      reach[noise][0], reach[noise][1], reach[noise][2],
			      reach[noise][3], reach[noise][4], reach[noise][5],
			      reach[noise][6], reach[noise][7]);
	}
	assert_true(tl.disp_ns >= 5 * MS && tl.disp_ns <= 7 * MS);
	assert_true(tl.pr_low_bps < tl.pr_bps * 4 / 5);
	assert_true(reach[1][0] > reach[0][0]);
	assert_int_equal(late[0], 0);
	assert_int_equal(late[1], 0);
}

/*
 * Evictions that start 40 ms after their forward end (a busy pool): the
 * wait is learnt from them (disp_ns, from the first evictions on) and the
 * plan counts it before a round trip can begin (with the stay), so layer
 * 40, whose idle time is the 50 ms turn, is kept on the fast tier or
 * evicted in part instead of whole (two 8.4 ms transfers and the wait do
 * not fit), and nothing is late after the first planned iteration.
 * Without the wait in the plan, 4 of the 10 iterations had a layer late.
 */
static void test_disp_admission(void **state)
{
	unsigned int i, st[2];
	unsigned long long late[2];
	struct tt_tl tl;
	int w;

	(void)state;
	for (w = 0; w <= 1; w++) {
		struct sim sm = { .er_true = RATE, .pr_true = RATE,
				  .allow = 1, .evict_disp_us = w ? 40000 : 0 };

		setup_tl(&tl, 1, CAP);
		tt_tl_set_rates(&tl, RATE, RATE);
		tt_tl_set_modes(&tl, TT_TL_MODE_ALAP);
		run_iter(&tl, &sm, 1000 * MS, 10, 0, 0);
		run_iter(&tl, &sm, 2000 * MS, 10, 0, 0);
		late[w] = tl.counts.late_count;
		for (i = 0; i < 10; i++)
			run_iter(&tl, &sm, (3 + i) * 1000 * MS, 10, 0, 0);
		late[w] = tl.counts.late_count - late[w];
		st[w] = L(&tl, 40)->status;
		print_message("disp_admission (wait %u ms): disp %.1f ms, layer 40 %u (%llu bytes), %llu late in 10 iterations\n",
			      sm.evict_disp_us / 1000, tl.disp_ns / 1e6, st[w],
			      L(&tl, 40)->final_bytes, late[w]);
	}
	assert_int_equal(st[0], TT_POLICY_ACCEPTED);
	assert_int_not_equal(st[1], TT_POLICY_ACCEPTED);
	/* the evictions' 40 ms, less 1/16 of the gap to each prefetch's 0 */
	assert_true(tl.disp_ns >= 30 * MS && tl.disp_ns <= 40 * MS);
	assert_int_equal(late[0], 0);
	assert_int_equal(late[1], 0);
}

/*
 * A chain of prefetches (12 layers of 8 MiB, 60 ms a layer pass; each
 * prefetch takes 50 ms at best and up to 60 % longer, and starts 6 ms
 * after its hand-out): together they take about as long as the backward
 * pass, so they run back to back and each one's delay is the next
 * one's. Planned with the slow end of PR, every seed (1-5) has at least
 * 98 % of its evicted bytes back on time over the iterations after the
 * first three (as selftests/defaults_test counts), and still evicts at
 * least 9 of the 12 layers' bytes an iteration (460-481 MiB in the six).
 * Planned with PR, the average, the chain had no slack: seed 4 had 90 %
 * back on time (482-498 MiB evicted); in a guest, selftests/defaults_test
 * fresh_mmap_trainer had 92.7 % (CI on a514c82).
 */
static void test_plan_slow_chain(void **state)
{
	unsigned long long pr = 8 * MIB * 1000 / 50;	/* 8 MiB in 50 ms */
	unsigned int seed, i;
	struct tt_tl tl;

	(void)state;
	for (seed = 1; seed <= 5; seed++) {
		struct sim sm = { .er_true = pr * 18 / 10, .pr_true = pr,
				  .allow = 1, .learn = 1, .seed = seed,
				  .disp_us = 6000, .evict_disp_us = 3000,
				  .jitter_pct = 60 };
		unsigned long long ontime = 0, late = 0;

		setup_seeded(&tl, 1, CAP);
		tt_tl_set_modes(&tl, TT_TL_MODE_COUNT | TT_TL_MODE_ALAP |
				     TT_TL_MODE_ANCHOR);
		for (i = 0; i < 9; i++) {
			unsigned long long o = tl.counts.ontime_bytes;
			unsigned long long l = tl.counts.late_bytes;

			run_depth(&tl, &sm, (1 + i) * 10000 * MS, 12, 6);
			if (i < 3)
				continue;
			ontime += tl.counts.ontime_bytes - o;
			late += tl.counts.late_bytes - l;
		}
		print_message("plan_slow_chain (seed %u): %.1f %% of %llu MiB on time; PR %.0f, slow end %.0f MB/s\n",
			      seed, 100.0 * ontime / (ontime + late),
			      (ontime + late) / MIB, tl.pr_bps / 1e6,
			      tl.pr_low_bps / 1e6);
		assert_true(ontime + late >= 6 * 9 * 8 * MIB);
		assert_true(ontime * 100 >= (ontime + late) * 98);
	}
}

/*
 * On time from the first planned iteration under TT_SCHED_COUNT: the turn
 * profiled at 60 ms (x10), then drawn from 35-60 ms. Until
 * TT_TL_LEAD_SETTLED prefetches of the first backward layer were timed,
 * its lead is at least half its profiled idle time (the turn), which
 * covers a turn down to 30 ms: no layer-iteration late in the first
 * eight planned iterations (seeds 1-4). Without that floor the first
 * backward layer is late in the first planned iterations whose turn is
 * shorter than the profile's (seed 1: 2 of the first 8).
 */
static void test_lead_turn_first_planned(void **state)
{
	unsigned int i, seed;
	struct tt_tl tl;

	(void)state;
	for (seed = 1; seed <= 4; seed++) {
		struct sim sm = { .er_true = RATE / 4, .pr_true = RATE / 4,
				  .allow = 1, .turn_ms = 60, .seed = seed };

		setup_tl(&tl, 1, CAP);
		tt_tl_set_rates(&tl, RATE / 4, RATE / 4);
		tt_tl_set_modes(&tl, TT_TL_MODE_COUNT | TT_TL_MODE_ANCHOR);
		run_iter(&tl, &sm, 1000 * MS, 10, 0, 0);	/* profile */
		sm.turn_min_ms = 35;
		for (i = 0; i < 8; i++)
			run_iter(&tl, &sm, (2 + i) * 1000 * MS, 10, 0, 0);
		print_message("lead_turn_first_planned (seed %u): %llu late layer-iterations in the first 8 planned; lead of layer 40 %.1f ms; %llu MiB on time\n",
			      seed, (unsigned long long)tl.counts.late_count,
			      L(&tl, 40)->lead_ns / 1e6,
			      (unsigned long long)(tl.counts.ontime_bytes / MIB));
		assert_int_equal(tl.counts.late_count, 0);
		assert_true(L(&tl, 40)->final_bytes > 0);
		assert_true(tl.counts.ontime_bytes >= 8 * 4 * 8 * MIB);
	}
}

/*
 * With learning on, a 1000x optimistic PR (and ER 2x) recovers too: late
 * at first, then the rates are learnt and nothing is late any more.
 */
static void test_rates_learnt(void **state)
{
	struct sim sm = { .er_true = RATE / 2, .pr_true = RATE / 2, .learn = 1,
			  .allow = 1 };
	unsigned long long late_at_25;
	struct tt_tl tl;
	unsigned int i;

	(void)state;
	setup_tl(&tl, 1, CAP);
	tt_tl_set_rates(&tl, 0, RATE * 1000);
	assert_int_equal(tl.er_bps, RATE);
	for (i = 0; i < 40; i++) {
		run_iter(&tl, &sm, (1 + i) * 1000 * MS, 1, 0, 0);
		if (i == 25)
			late_at_25 = tl.counts.late_count;
	}
	assert_true(late_at_25 >= 1);
	assert_int_equal(tl.counts.late_count, late_at_25);
	/* within 5% of the truth */
	assert_true(tl.er_bps > RATE / 2 * 95 / 100 && tl.er_bps < RATE / 2 * 105 / 100);
	assert_true(tl.pr_bps > RATE / 2 * 95 / 100 && tl.pr_bps < RATE / 2 * 105 / 100);
}

/*
 * The rates: the seed is no measurement, the first sample replaces it (and
 * the other direction's seed while that has no sample), the next ones make
 * a plain mean up to TT_TL_RATE_SETTLED, then an EWMA of weight 1/4; small
 * or instant samples are ignored; a rate set is settled.
 */
static void test_rate_ewma(void **state)
{
	struct tt_tl tl;

	(void)state;
	setup_seeded(&tl, 1, CAP);
	assert_int_equal(tl.er_bps, RATE);
	assert_int_equal(tl.pr_bps, RATE);
	tt_tl_rate_sample(&tl, TT_TL_EVICT, 2 * RATE / 1000, 1 * MS); /* 2e9 */
	assert_int_equal(tl.er_bps, 2 * RATE);
	assert_int_equal(tl.pr_bps, 2 * RATE);
	tt_tl_rate_sample(&tl, TT_TL_PREFETCH, 1000 * 1000, 2 * MS); /* 5e8 */
	assert_int_equal(tl.pr_bps, RATE / 2);
	assert_int_equal(tl.er_bps, 2 * RATE);
	/* the mean of the first samples */
	tt_tl_rate_sample(&tl, TT_TL_EVICT, RATE / 1000, 1 * MS); /* 1e9 */
	assert_int_equal(tl.er_bps, RATE + RATE / 2);
	assert_int_equal(tl.pr_bps, RATE / 2);
	tt_tl_rate_sample(&tl, TT_TL_EVICT, 3 * RATE / 2000, 1 * MS);
	assert_int_equal(tl.er_bps, RATE + RATE / 2);
	/* settled: 1/4 weight */
	tt_tl_rate_sample(&tl, TT_TL_EVICT, 5 * RATE / 2000, 1 * MS); /* 2.5e9 */
	assert_int_equal(tl.er_bps, RATE + 3 * RATE / 4);
	tt_tl_rate_sample(&tl, TT_TL_PREFETCH, TT_TL_RATE_MIN_BYTES - 1, 1);
	tt_tl_rate_sample(&tl, TT_TL_PREFETCH, 1 << 30, 0);
	assert_int_equal(tl.pr_bps, RATE / 2);
	tt_tl_set_rates(&tl, 7, 0);
	assert_int_equal(tl.er_bps, 7);
	assert_int_equal(tl.pr_bps, RATE / 2);
	/* 18 GiB in 1 ns does not overflow the rate */
	tt_tl_rate_sample(&tl, TT_TL_PREFETCH, 18ULL << 30, 1);
	assert_true(tl.pr_bps > RATE);

	/* a rate set is settled: its first sample weighs 1/4 */
	setup_seeded(&tl, 1, CAP);
	tt_tl_set_rates(&tl, RATE, 0);
	tt_tl_rate_sample(&tl, TT_TL_EVICT, 2 * RATE / 1000, 1 * MS); /* 2e9 */
	assert_int_equal(tl.er_bps, RATE + RATE / 4);
	/* the prefetch seed, still unmeasured, took the sample */
	assert_int_equal(tl.pr_bps, 2 * RATE);

	/* a PR set clears the slow end: the next plan takes PR as set */
	tt_tl_rate_sample(&tl, TT_TL_PREFETCH, 2 * RATE / 1000, 2 * MS);
	assert_int_equal(tl.pr_low_bps, RATE);
	tt_tl_set_rates(&tl, 0, 3 * RATE);
	assert_int_equal(tl.pr_low_bps, 0);
}

/*
 * A seed eight times the true rates (as the module's 1024 MiB/s default
 * against a guest's 130): the profile iteration's rate probe (its first
 * layer, TT_TL_PROBE_BYTES out and straight back) measures them, so the
 * first planned iteration is planned with them and is on time. Planned
 * with the seed, it was late (the first sample then replaced the seed, so
 * the lateness ended with that iteration).
 */
static void test_rates_first_sample(void **state)
{
	struct sim sm = { .er_true = RATE / 8, .pr_true = RATE / 8,
			  .learn = 1, .allow = 1 };
	unsigned long long late[6];
	struct tt_tl tl;
	unsigned int i;

	(void)state;
	setup_seeded(&tl, 1, CAP);
	assert_int_equal(tl.er_bps, RATE);
	for (i = 0; i < 6; i++) {
		run_iter(&tl, &sm, (1 + i) * 1000 * MS, 4, 0, 0);
		late[i] = tl.counts.late_bytes;
		if (getenv("TT_TEST_VERBOSE"))
			fprintf(stderr, "iteration %u: late %llu er %llu pr %llu evictions %u ids %#x\n",
				i, late[i], tl.er_bps, tl.pr_bps,
				sm.evictions, sm.evict_ids);
		if (!i) {
			/* the probe: layer 10's first MiB, back at once */
			assert_int_equal(sm.evictions, 1);
			assert_int_equal(sm.evict_ids, 0x1);
			assert_int_equal(L(&tl, 10)->x.evicted_bytes,
					 TT_TL_PROBE_BYTES);
			assert_int_equal(tl.counts.rate_probes, 1);
			assert_int_equal(tl.er_samples, 1);
			assert_int_equal(tl.pr_samples, 1);
			assert_int_equal(tl.counts.ontime_bytes,
					 TT_TL_PROBE_BYTES);
			/* the truth, not the seed */
			assert_true(tl.er_bps == RATE / 8 &&
				    tl.pr_bps == RATE / 8);
		}
	}
	/* planned with measured rates: none late, from the first plan on */
	assert_int_equal(late[5], 0);
	/* one probe: the rates are measured from then on */
	assert_int_equal(tl.counts.rate_probes, 1);
	/* and the plan still evicts */
	assert_true(sm.evictions > 4);
	assert_int_equal(tl.counts.layers_accepted + tl.counts.layers_modified +
			 tl.counts.rate_probes, sm.evictions);
}

/*
 * No probe where it cannot teach or must not move: rates set (settled),
 * a layer with less than TT_TL_RATE_MIN_BYTES saved (the next one is
 * probed), @allow 0, TT_TL_MODE_OFF; a probe's lateness is counted but
 * grows no lead.
 */
static void test_rate_probe_limits(void **state)
{
	struct sim sm = { .er_true = RATE, .pr_true = RATE, .allow = 1 };
	unsigned int ids[2] = { 10, 20 };
	unsigned long long bytes;
	struct tt_tl tl;
	int i;

	(void)state;
	setup_tl(&tl, 2, CAP);
	run_iter(&tl, &sm, 1000 * MS, 1, 0, 0);
	assert_int_equal(sm.evictions, 0);
	assert_int_equal(tl.counts.rate_probes, 0);

	setup_seeded(&tl, 4, CAP);
	sm.allow = 0;
	run_iter(&tl, &sm, 1000 * MS, 1, 0, 0);
	assert_int_equal(sm.evictions, 0);
	sm.allow = 1;
	tt_tl_set_modes(&tl, TT_TL_MODE_OFF);
	run_iter(&tl, &sm, 2000 * MS, 1, 0, 0);
	assert_int_equal(sm.evictions, 0);
	tt_tl_set_modes(&tl, 0);
	/* none under the caller's smallest eviction (min_migrate_kib) */
	tl.probe_min = TT_TL_PROBE_BYTES + P4K;
	run_iter(&tl, &sm, 2500 * MS, 1, 0, 0);
	assert_int_equal(sm.evictions, 0);
	tl.probe_min = TT_TL_PROBE_BYTES;
	/* sm.learn 0: no sample, so each profile iteration probes again */
	run_iter(&tl, &sm, 3000 * MS, 1, 0, 0);
	assert_int_equal(sm.evictions, 1);
	assert_int_equal(tl.counts.rate_probes, 1);

	/* a small layer first: the next one with enough saved is probed */
	setup_seeded(&tl, 5, CAP);
	tt_tl_iter_begin(&tl, 0);
	i = idx_of(&tl, ids[0]);
	tt_tl_saved(&tl, i, TT_TL_RATE_MIN_BYTES - P4K, 0);
	assert_int_equal(tt_tl_layer_event(&tl, i, TT_TL_FWD, 1, 1 * MS, 1,
					   &bytes), TT_TL_ACT_NONE);
	i = idx_of(&tl, ids[1]);
	tt_tl_saved(&tl, i, 3 * P4K + TT_TL_RATE_MIN_BYTES, 0);
	assert_int_equal(tt_tl_layer_event(&tl, i, TT_TL_FWD, 1, 2 * MS, 1,
					   &bytes), TT_TL_ACT_EVICT);
	assert_int_equal(bytes, 3 * P4K + TT_TL_RATE_MIN_BYTES);
	/* late at its backward begin: counted, and no lead learnt */
	assert_int_equal(tt_tl_layer_event(&tl, i, TT_TL_BWD, 0, 3 * MS, 1,
					   &bytes), TT_TL_ACT_FETCH);
	tt_tl_bwd_check(&tl, i, 3 * P4K + TT_TL_RATE_MIN_BYTES, 4 * P4K);
	tt_tl_late_add(&tl, i, P4K);
	tt_tl_prefetch_end(&tl, i, 50 * MS);
	assert_int_equal(tl.counts.late_bytes, 5 * P4K);
	assert_int_equal(tl.counts.late_count, 1);
	assert_int_equal(tl.st.layers[i].lead_ns, 0);
	assert_int_equal(tl.st.layers[i].slack_samples, 0);
	tt_tl_iter_begin(&tl, 100 * MS);
	assert_int_equal(tl.st.layers[i].lead_ns, 0);
}

/*
 * One slow iteration (the machine loaded while the first planned iteration
 * ran) is late in every layer. Its lateness comes from the rates, which
 * its samples correct: it must not grow the leads (to the whole idle time,
 * where the plan would drop the layers or move a sliver of them) or the
 * slack's deviation, which would keep the leads there. Without that, the
 * plan stayed at one layer of four for 40 iterations.
 */
static void test_rates_slow_sample_recovers(void **state)
{
	unsigned long long late_slow = 0, lead[2][4];
	unsigned int i, run;
	struct tt_tl tl;

	(void)state;
	/* run 0 has the slow iterations, run 1 (the reference) has none */
	for (run = 0; run < 2; run++) {
		struct sim sm = { .er_true = RATE, .pr_true = RATE,
				  .learn = 1, .allow = 1 };

		setup_seeded(&tl, 1, CAP);
		/* the module's default modes */
		tt_tl_set_modes(&tl, TT_TL_MODE_ANCHOR | TT_TL_MODE_ALAP |
				     TT_TL_MODE_COUNT);
		for (i = 0; i < 20; i++) {
			/*
			 * iteration 1 (the first planned) runs slow; the
			 * profile's rate probe measured the fast rates
			 */
			if (i == 1 && !run)
				sm.er_true = sm.pr_true = RATE / 40;
			if (i == 2)
				sm.er_true = sm.pr_true = RATE;
			run_iter(&tl, &sm, (1 + i) * 1000 * MS, 4, 0, 0);
			if (getenv("TT_TEST_VERBOSE"))
				fprintf(stderr, "run %u iteration %u: evicted %#x er %llu pr %llu late %llu leads %llu %llu %llu %llu us\n",
					run, i, sm.evict_ids, tl.er_bps,
					tl.pr_bps, tl.counts.late_bytes,
					L(&tl, 10)->lead_ns / 1000,
					L(&tl, 20)->lead_ns / 1000,
					L(&tl, 30)->lead_ns / 1000,
					L(&tl, 40)->lead_ns / 1000);
			if (i == 1 && !run)
				late_slow = tl.counts.late_bytes;
			/* every layer moves from the third fast iteration */
			if (i >= 4)
				assert_int_equal(sm.evict_ids, 0xf);
		}
		for (i = 0; i < 4; i++)
			lead[run][i] = L(&tl, 10 * (i + 1))->lead_ns;
		if (run)
			break;
		/* the slow iteration was late, no other */
		assert_true(late_slow > 0);
		assert_int_equal(tl.counts.late_bytes, late_slow);
		/* the rates are the truth's again */
		assert_true(tl.er_bps > RATE * 9 / 10 &&
			    tl.pr_bps > RATE * 9 / 10);
	}
	assert_int_equal(tl.counts.late_bytes, 0);
	/*
	 * no lead kept from the slow iteration: each within 10 % of the
	 * layer's idle time of the reference's
	 */
	for (i = 0; i < 4; i++) {
		const struct tt_tl_layer *l = L(&tl, 10 * (i + 1));

		assert_true(lead[0][i] <= lead[1][i] +
			    (l->prof.bwd_start - l->prof.fwd_end) / 10);
	}
}

/* Late and on-time accounting happens once per layer-iteration. */
static void test_bwd_check_once(void **state)
{
	unsigned long long bytes;
	struct tt_tl tl;
	int i;

	(void)state;
	setup_tl(&tl, 1, CAP);
	tt_tl_iter_begin(&tl, 0);
	i = idx_of(&tl, 3);
	tt_tl_layer_event(&tl, i, TT_TL_FWD, 1, 10, 1, &bytes);
	tt_tl_layer_event(&tl, i, TT_TL_BWD, 0, 100, 1, &bytes);
	tt_tl_bwd_check(&tl, i, 10 * P4K, 4 * P4K);
	tt_tl_bwd_check(&tl, i, 10 * P4K, 4 * P4K);
	assert_int_equal(tl.counts.late_bytes, 4 * P4K);
	assert_int_equal(tl.counts.ontime_bytes, 6 * P4K);
	assert_int_equal(tl.counts.late_count, 1);
	assert_int_equal(L(&tl, 3)->x.late_bytes, 4 * P4K);
	/* nothing evicted: nothing counted */
	i = idx_of(&tl, 4);
	tt_tl_bwd_check(&tl, i, 0, 0);
	assert_int_equal(tl.counts.late_count, 1);
	/* ... but what is evicted after the backward began is late */
	tt_tl_late_add(&tl, i, 3 * P4K);
	tt_tl_late_add(&tl, i, 1 * P4K);
	assert_int_equal(tl.counts.late_count, 2);
	assert_int_equal(tl.counts.late_bytes, 8 * P4K);
	assert_int_equal(L(&tl, 4)->x.late_bytes, 4 * P4K);
	/* not before the backward begin */
	i = idx_of(&tl, 5);
	tt_tl_late_add(&tl, i, 3 * P4K);
	assert_int_equal(tl.counts.late_count, 2);
}

/*
 * The lead grows by at most one prefetch duration per late iteration,
 * never beyond the layer's idle time, and fades unused.
 */
static void test_lead_bounds(void **state)
{
	struct sim sm = { .er_true = RATE, .pr_true = RATE / 100, .allow = 1 };
	unsigned long long lead;
	struct tt_tl tl;
	unsigned int i;

	(void)state;
	setup_tl(&tl, 1, CAP);
	run_iter(&tl, &sm, 1000 * MS, 1, 0, 0);
	/* prefetches 100x slower than assumed: very late */
	run_iter(&tl, &sm, 2000 * MS, 1, 0, 0);
	run_iter(&tl, &sm, 3000 * MS, 1, 0, 0);
	for (i = 10; i <= 40; i += 10)
		assert_true(L(&tl, i)->lead_ns <=
			    L(&tl, i)->prof.bwd_start - L(&tl, i)->prof.fwd_end);
	lead = L(&tl, 10)->lead_ns;
	assert_true(lead > 0);
	/* two late iterations: at most two prefetch durations at the PR estimate */
	assert_true(lead <= 2 * tt_policy_xfer_ns(8 * MIB, tl.pr_bps));
	/* off: nothing evicted, the lead fades by 1/16 per iteration */
	tl.off = 1;
	run_iter(&tl, &sm, 4000 * MS, 1, 0, 0);
	lead = L(&tl, 10)->lead_ns;
	tt_tl_iter_begin(&tl, 5000 * MS);
	assert_int_equal(L(&tl, 10)->lead_ns, lead - lead / 16);
}

/* Layers kept sorted by id; ENOSPC when full; storage moves. */
static void test_table_and_storage(void **state)
{
	static struct tt_tl_layer big[2 * CAP];
	static struct tt_policy_layer bplan[2 * CAP];
	static unsigned int border[2 * CAP];
	static struct tt_tl_due bdue[2 * CAP];
	struct tt_tl_storage st = {
		.layers = big, .plan = bplan, .order = border, .due = bdue,
		.cap = 2 * CAP,
	};
	struct tt_tl tl;
	unsigned int i;
	int k;

	(void)state;
	setup_tl(&tl, 1, 8);
	for (i = 0; i < 8; i++)
		assert_true(tt_tl_add(&tl, (i * 5) % 8 + 100, (void *)(long)i) >= 0);
	assert_int_equal(tt_tl_add(&tl, 1, NULL), -TT_TL_ENOSPC);
	for (i = 0; i < 8; i++)
		assert_int_equal(tl.st.layers[i].id, 100 + i);
	k = tt_tl_find(&tl, 105);
	assert_int_equal(k, 5);
	assert_ptr_equal(tl.st.layers[k].priv, (void *)(long)1);
	assert_int_equal(tt_tl_find(&tl, 99), -1);
	assert_int_equal(tt_tl_find(&tl, 108), -1);

	tt_tl_set_storage(&tl, &st);
	assert_int_equal(tt_tl_add(&tl, 1, NULL), 0);
	assert_int_equal(tt_tl_find(&tl, 105), 6);
	assert_int_equal(tl.n, 9);
	assert_int_equal(tl.st.cap, 2 * CAP);
	for (i = 1; i < tl.n; i++)
		assert_true(tl.st.layers[i - 1].id < tl.st.layers[i].id);
}

/*
 * A prefetch already due at the forward end: no eviction then, counted as
 * dropped.
 */
static void test_due_before_forward_end(void **state)
{
	struct sim sm = { .er_true = RATE, .pr_true = RATE, .allow = 1 };
	unsigned long long bytes, next, dropped;
	struct tt_tl tl;
	unsigned int id;
	int i;

	(void)state;
	setup_tl(&tl, 1, CAP);
	run_iter(&tl, &sm, 1000 * MS, 1, 0, 0);
	tt_tl_iter_begin(&tl, 2000 * MS);
	i = idx_of(&tl, 10);
	assert_true(L(&tl, 10)->final_bytes > 0);
	/* everything is due a second later */
	while (tt_tl_next_due(&tl, 3000 * MS, &id, &next))
		;
	assert_true(L(&tl, 10)->seen & TT_TL_S_DUE);
	tt_tl_layer_event(&tl, i, TT_TL_FWD, 0, 3000 * MS, 1, &bytes);
	dropped = tl.counts.layers_dropped;
	assert_int_equal(tt_tl_layer_event(&tl, i, TT_TL_FWD, 1, 3001 * MS, 1, &bytes),
			 TT_TL_ACT_NONE);
	assert_int_equal(tl.counts.layers_dropped, dropped + 1);
}

/*
 * TT_SCHED_ANCHOR: the triggers move with the latest layer event's drift
 * from its profiled time; without it they stay where the plan put them.
 */
static void test_anchor(void **state)
{
	struct sim sm = { .er_true = RATE, .pr_true = RATE, .allow = 1 };
	unsigned long long t0 = 2000 * MS, first, next, bytes;
	unsigned int id;
	struct tt_tl tl;
	int anchor;

	(void)state;
	for (anchor = 0; anchor <= 1; anchor++) {
		setup_tl(&tl, 1, CAP);
		tt_tl_set_modes(&tl, anchor ? TT_TL_MODE_ANCHOR : 0);
		run_iter(&tl, &sm, 1000 * MS, 1, 0, 0);
		assert_true(tt_tl_iter_begin(&tl, t0) & TT_TL_IB_PLANNED);
		assert_true(tl.ndue >= 1);
		first = tl.st.due[0].t;
		assert_int_equal(tt_tl_next_due(&tl, t0, &id, &next), 0);
		assert_int_equal(next, t0 + first);

		/* layer 10's forward begins 7 ms late (profiled at 0) */
		tt_tl_layer_event(&tl, idx_of(&tl, 10), TT_TL_FWD, 0,
				  t0 + 7 * MS, 1, &bytes);
		assert_int_equal(tl.drift_ns, 7 * MS);
		assert_int_equal(tt_tl_next_due(&tl, t0 + 7 * MS, &id, &next), 0);
		assert_int_equal(next, t0 + first + (anchor ? 7 * MS : 0));
		/* ... and ends 3 ms early (profiled at 10 ms) */
		tt_tl_layer_event(&tl, idx_of(&tl, 10), TT_TL_FWD, 1,
				  t0 + 7 * MS + 1, 1, &bytes);
		tt_tl_layer_event(&tl, idx_of(&tl, 20), TT_TL_FWD, 0,
				  t0 + 7 * MS + 2, 1, &bytes);
		/* layer 20 profiled at 10 ms: drift 7 ms + 2 ns - 10 ms */
		assert_int_equal(tl.drift_ns, -(long long)(3 * MS - 2));
		assert_int_equal(tt_tl_next_due(&tl, t0 + 7 * MS + 2, &id,
						&next), 0);
		assert_int_equal(next, t0 + first - (anchor ? 3 * MS - 2 : 0));
		/* due 3 ms early with the anchor, not without */
		assert_int_equal(tt_tl_next_due(&tl, t0 + first - 3 * MS + 2,
						&id, &next), anchor);
		/* the drift is reset by the next iteration */
		tt_tl_iter_begin(&tl, t0 + 1000 * MS);
		assert_int_equal(tl.drift_ns, 0);
	}
	/* a drift more negative than a trigger clamps it at the start */
	setup_tl(&tl, 1, CAP);
	tt_tl_set_modes(&tl, TT_TL_MODE_ANCHOR);
	run_iter(&tl, &sm, 1000 * MS, 1, 0, 0);
	tt_tl_iter_begin(&tl, t0);
	tl.drift_ns = -(long long)(10000 * MS);
	assert_int_equal(tt_tl_next_due(&tl, t0, &id, &next), 1);
}

/*
 * TT_SCHED_COUNT: a backward begin releases the prefetches of the next k
 * layers of the profiled backward order before their trigger times; k
 * grows by one after an iteration with a late layer (to at most 8) and
 * shrinks by one after 16 planned iterations in a row without one.
 * Times x10: forward ends 100, 200, 300, 400 ms; backward begins 450
 * (layer 40), 550, 650, 750 (layer 10); every layer accepted, triggers
 * 8.4 ms before each backward begin.
 */
static void test_count(void **state)
{
	struct sim sm = { .er_true = RATE, .pr_true = RATE, .allow = 1 };
	unsigned long long t0 = 10000 * MS, next, bytes, t;
	unsigned int id, i, k, count;
	struct tt_tl tl;

	(void)state;
	for (count = 0; count <= 1; count++) {
		setup_tl(&tl, 1, CAP);
		tt_tl_set_modes(&tl, count ? TT_TL_MODE_COUNT : 0);
		run_iter(&tl, &sm, 1000 * MS, 10, 0, 0);
		assert_true(tt_tl_iter_begin(&tl, t0) & TT_TL_IB_PLANNED);
		assert_int_equal(tl.ndue, 4);
		assert_int_equal(L(&tl, 40)->rank, 1);
		assert_int_equal(L(&tl, 30)->rank, 2);
		assert_int_equal(L(&tl, 20)->rank, 3);
		assert_int_equal(L(&tl, 10)->rank, 4);
		for (i = 0; i < 4; i++)
			assert_int_equal(tl.st.due[i].rank, i + 1);
		for (k = 0; k < 4; k++) {
			id = 10 * (k + 1);
			t = t0 + 100 * k * MS;
			tt_tl_layer_event(&tl, idx_of(&tl, id), TT_TL_FWD, 0, t,
					  1, &bytes);
			tt_tl_saved(&tl, idx_of(&tl, id), 8 * MIB, 0);
			assert_int_equal(tt_tl_layer_event(&tl, idx_of(&tl, id),
							   TT_TL_FWD, 1,
							   t + 100 * MS, 1,
							   &bytes),
					 TT_TL_ACT_EVICT);
		}
		assert_int_equal(tt_tl_next_due(&tl, t0 + 410 * MS, &id, &next), 0);
		assert_int_equal(next, t0 + L(&tl, 40)->prefetch_ns);
		/* the backward pass runs 30 ms ahead of the profile */
		tt_tl_layer_event(&tl, idx_of(&tl, 40), TT_TL_BWD, 0,
				  t0 + 420 * MS, 1, &bytes);
		assert_int_equal(tl.bwd_rank, count ? 1 : 0);
		/* ranks 1 and 2 released (40 is late anyway), not 3 */
		for (k = 0; k < 2 * count; k++) {
			assert_int_equal(tt_tl_next_due(&tl, t0 + 420 * MS, &id,
							&next), 1);
			assert_int_equal(id, 40 - 10 * k);
		}
		assert_int_equal(tt_tl_next_due(&tl, t0 + 420 * MS, &id, &next), 0);
		assert_int_equal(next, t0 + (count ? L(&tl, 20)->prefetch_ns :
						     L(&tl, 40)->prefetch_ns));
		/*
		 * layer 40's trigger, half its profiled idle time early (its
		 * lead before TT_TL_LEAD_SETTLED prefetches), may have passed
		 * by then: due by its time, not released
		 */
		assert_int_equal(tl.counts.count_released,
				 count ? 2 - (L(&tl, 40)->prefetch_ns <= 420 * MS) : 0);
		/* layer 30's backward begin releases layer 20's prefetch */
		tt_tl_layer_event(&tl, idx_of(&tl, 40), TT_TL_BWD, 1,
				  t0 + 425 * MS, 1, &bytes);
		tt_tl_layer_event(&tl, idx_of(&tl, 30), TT_TL_BWD, 0,
				  t0 + 426 * MS, 1, &bytes);
		assert_int_equal(tt_tl_next_due(&tl, t0 + 426 * MS, &id, &next),
				 count);
		if (count)
			assert_int_equal(id, 20);
		/* the next iteration starts from nothing released */
		tt_tl_iter_begin(&tl, t0 + 1000 * MS);
		assert_int_equal(tl.bwd_rank, 0);
	}

	/*
	 * prefetches 1000x slower than planned: layer 40 (the first
	 * every iteration) is late each time, its k grows to TT_TL_AHEAD_MAX
	 */
	setup_tl(&tl, 1, CAP);
	tt_tl_set_modes(&tl, TT_TL_MODE_COUNT);
	t = 1000 * MS;
	run_iter(&tl, &sm, t, 10, 0, 0);		/* profile */
	assert_int_equal(L(&tl, 40)->ahead, 1);
	assert_int_equal(tt_tl_ahead_max(&tl), 1);
	sm.pr_true = RATE / 1000;
	for (i = 1; i <= 14; i++) {
		t += 100000 * MS;
		run_iter(&tl, &sm, t, 10, 0, 0);
		/* one more per late iteration (whose prefetch did not queue) */
		assert_true(L(&tl, 40)->ahead <= 1 + i);
	}
	assert_int_equal(L(&tl, 40)->ahead, TT_TL_AHEAD_MAX);
	assert_int_equal(tt_tl_ahead_max(&tl), TT_TL_AHEAD_MAX);
	assert_true(tl.counts.late_count >= 10);
	/* its due entry carries its k */
	t += 100000 * MS;
	tt_tl_iter_begin(&tl, t);
	for (i = 0; i < tl.ndue; i++)
		if (tl.st.due[i].id == 10)
			assert_int_equal(tl.st.due[i].ahead, TT_TL_AHEAD_MAX);
	/*
	 * fast again: 16 iterations on time in a row take k down by one
	 * (the first one profiles again: the iteration begun above had no
	 * layer)
	 */
	sm.pr_true = RATE * 1000;
	for (i = 0; i < TT_TL_AHEAD_SHRINK + 1; i++) {
		t += 100000 * MS;
		run_iter(&tl, &sm, t, 10, 0, 0);
	}
	assert_int_equal(L(&tl, 40)->ahead, TT_TL_AHEAD_MAX - 1);
	/* switched off and on: k starts at 1 again */
	tt_tl_set_modes(&tl, 0);
	tt_tl_set_modes(&tl, TT_TL_MODE_COUNT);
	assert_int_equal(tt_tl_ahead_max(&tl), 1);
}

/*
 * TT_SCHED_COUNT: a prefetch is released by the backward layers whose
 * profiled steps take twice its transfer at PR (its reach), not by one
 * whose backward pass takes no time. Layer 30's backward step is 0.1 ms
 * (a ReLU's), so layer 20's prefetch (1 MiB: 1.05 ms) is released by
 * layer 40's backward begin (reach 2), not by 30's (k = 1 alone: the
 * 6.12 guest's Python tests found such layers late, stop 57); 10's by
 * 20's (reach 1).
 */
static void test_count_reach(void **state)
{
	/* per layer 10, 20, 30, 40: backward begin and end, ms */
	static const unsigned long long bwd[4][2] = {
		{ 600 * MS, 700 * MS }, { 500 * MS + MS / 10, 600 * MS },
		{ 500 * MS, 500 * MS + MS / 10 }, { 410 * MS, 500 * MS },
	};
	unsigned long long t, next, bytes;
	unsigned int id, k, pass, seen = 0;
	struct tt_tl tl;

	(void)state;
	setup_tl(&tl, 1, CAP);
	tt_tl_set_modes(&tl, TT_TL_MODE_COUNT);
	for (pass = 0; pass < 2; pass++) {
		t = pass ? 10000 * MS : 1000 * MS;
		assert_int_equal(!!(tt_tl_iter_begin(&tl, t) &
				    TT_TL_IB_PLANNED), pass);
		for (k = 0; k < 4; k++) {
			int i = idx_of(&tl, 10 * (k + 1));

			tt_tl_layer_event(&tl, i, TT_TL_FWD, 0,
					  t + 100 * k * MS, 1, &bytes);
			tt_tl_saved(&tl, i, MIB, 0);
			tt_tl_layer_event(&tl, i, TT_TL_FWD, 1,
					  t + 100 * (k + 1) * MS, 1, &bytes);
		}
		if (!pass) {
			for (k = 4; k-- > 0;) {
				int i = idx_of(&tl, 10 * (k + 1));

				tt_tl_layer_event(&tl, i, TT_TL_BWD, 0,
						  t + bwd[k][0], 1, &bytes);
				tt_tl_layer_event(&tl, i, TT_TL_BWD, 1,
						  t + bwd[k][1], 1, &bytes);
			}
			continue;
		}
		assert_int_equal(tl.ndue, 4);
		assert_int_equal(L(&tl, 40)->rank, 1);
		assert_int_equal(L(&tl, 30)->rank, 2);
		assert_int_equal(L(&tl, 20)->rank, 3);
		assert_int_equal(L(&tl, 10)->rank, 4);
		assert_int_equal(L(&tl, 40)->reach, 0);
		assert_int_equal(L(&tl, 30)->reach, 1);
		assert_int_equal(L(&tl, 20)->reach, 2);
		assert_int_equal(L(&tl, 10)->reach, 1);
		tt_tl_layer_event(&tl, idx_of(&tl, 40), TT_TL_BWD, 0,
				  t + bwd[3][0], 1, &bytes);
		/* 40 (due or released), 30 and 20 released; not 10 */
		for (k = 0; k < 3; k++) {
			assert_int_equal(tt_tl_next_due(&tl, t + bwd[3][0], &id,
							&next), 1);
			seen |= 1U << (id / 10);
		}
		assert_int_equal(seen, (1U << 2) | (1U << 3) | (1U << 4));
		assert_int_equal(tt_tl_next_due(&tl, t + bwd[3][0], &id,
						&next), 0);
		assert_int_equal(next, t + L(&tl, 10)->prefetch_ns);
	}
}

/*
 * TT_SCHED_COUNT with TT_SCHED_ANCHOR: a released prefetch that is held
 * (layer 30, 8 MiB: 8.4 ms at PR, more than 1/TT_TL_HOLD_DIV of the
 * iteration) does not hold back a released one behind it in trigger
 * order that is not held (layer 20, 64 KiB, k 2): until stop 57 only the
 * first released entry was looked at.
 */
static void test_count_hold_skips(void **state)
{
	/* per layer 10, 20, 30, 40: saved bytes; backward begin and end */
	static const unsigned long long sz[4] = { MIB, 64 * 1024, 8 * MIB, MIB };
	static const unsigned long long bwd[4][2] = {
		{ 700 * MS, 800 * MS }, { 600 * MS, 700 * MS },
		{ 500 * MS, 600 * MS }, { 410 * MS, 500 * MS },
	};
	unsigned long long t, next, bytes;
	unsigned int id, k, pass, seen = 0;
	struct tt_tl tl;

	(void)state;
	setup_tl(&tl, 1, CAP);
	tt_tl_set_modes(&tl, TT_TL_MODE_COUNT | TT_TL_MODE_ANCHOR);
	for (pass = 0; pass < 2; pass++) {
		t = pass ? 10000 * MS : 1000 * MS;
		if (pass)
			L(&tl, 20)->ahead = 2;
		assert_int_equal(!!(tt_tl_iter_begin(&tl, t) &
				    TT_TL_IB_PLANNED), pass);
		for (k = 0; k < 4; k++) {
			int i = idx_of(&tl, 10 * (k + 1));

			tt_tl_layer_event(&tl, i, TT_TL_FWD, 0,
					  t + 100 * k * MS, 1, &bytes);
			tt_tl_saved(&tl, i, sz[k], 0);
			tt_tl_layer_event(&tl, i, TT_TL_FWD, 1,
					  t + 100 * (k + 1) * MS, 1, &bytes);
		}
		if (pass)
			break;
		for (k = 4; k-- > 0;) {
			int i = idx_of(&tl, 10 * (k + 1));

			tt_tl_layer_event(&tl, i, TT_TL_BWD, 0, t + bwd[k][0],
					  1, &bytes);
			tt_tl_layer_event(&tl, i, TT_TL_BWD, 1, t + bwd[k][1],
					  1, &bytes);
		}
	}
	assert_int_equal(L(&tl, 30)->rank, 2);
	assert_int_equal(L(&tl, 20)->rank, 3);
	assert_true(xfer(L(&tl, 30)->final_bytes, tl.pr_bps) >=
		    tl.prof_iter_ns / TT_TL_HOLD_DIV);
	assert_true(xfer(L(&tl, 20)->final_bytes, tl.pr_bps) <
		    tl.prof_iter_ns / TT_TL_HOLD_DIV);
	assert_true(L(&tl, 30)->prefetch_ns < L(&tl, 20)->prefetch_ns);
	tt_tl_layer_event(&tl, idx_of(&tl, 40), TT_TL_BWD, 0, t + bwd[3][0], 1,
			  &bytes);
	while (tt_tl_next_due(&tl, t + bwd[3][0], &id, &next))
		seen |= 1U << (id / 10);
	/* 20 released and fired; 30 released, held; 10 not released */
	assert_true(seen & (1U << 2));
	assert_false(seen & (1U << 3));
	assert_false(seen & (1U << 1));
	assert_true(next > t + bwd[3][0]);
}

/*
 * TT_SCHED_COUNT: a layer late because its prefetch was not handed out
 * before its backward begin (its release came too late, so under
 * TT_SCHED_DEFER_LATE it has not started either) is released one layer
 * earlier than its k or reach next time, from the second planned
 * iteration on. Until stop 57 k grew only for a prefetch that had
 * started by then, so such a layer never moved.
 */
static void test_count_late_release(void **state)
{
	static const unsigned long long bwd[4][2] = {
		{ 600 * MS, 700 * MS }, { 500 * MS + MS / 10, 600 * MS },
		{ 500 * MS, 500 * MS + MS / 10 }, { 410 * MS, 500 * MS },
	};
	unsigned long long t, bytes;
	unsigned int k, pass;
	struct tt_tl tl;

	(void)state;
	setup_tl(&tl, 1, CAP);
	tt_tl_set_modes(&tl, TT_TL_MODE_COUNT);
	for (pass = 0; pass < 3; pass++) {
		t = (1 + 10 * pass) * 1000 * MS;
		tt_tl_iter_begin(&tl, t);
		for (k = 0; k < 4; k++) {
			int i = idx_of(&tl, 10 * (k + 1));

			tt_tl_layer_event(&tl, i, TT_TL_FWD, 0,
					  t + 100 * k * MS, 1, &bytes);
			tt_tl_saved(&tl, i, MIB, 0);
			if (tt_tl_layer_event(&tl, i, TT_TL_FWD, 1,
					      t + 100 * (k + 1) * MS, 1,
					      &bytes) == TT_TL_ACT_EVICT) {
				tt_tl_evict_start(&tl, i, t + 100 * (k + 1) * MS);
				tt_tl_evict_end(&tl, i, t + 100 * (k + 1) * MS + MS,
						bytes);
			}
		}
		/*
		 * the second planned iteration: nothing handed out, every
		 * evicted layer late (the first: all on time, as if
		 * prefetched, so that no lead grows)
		 */
		for (k = 4; k-- > 0;) {
			int i = idx_of(&tl, 10 * (k + 1));

			tt_tl_layer_event(&tl, i, TT_TL_BWD, 0, t + bwd[k][0],
					  1, &bytes);
			if (pass)
				tt_tl_bwd_check(&tl, i, MIB, pass == 2 ? MIB : 0);
			tt_tl_layer_event(&tl, i, TT_TL_BWD, 1, t + bwd[k][1],
					  1, &bytes);
		}
		if (pass == 1) {
			assert_int_equal(tl.planned_run, 1);
			assert_int_equal(L(&tl, 20)->reach, 2);
			/* the first planned iteration: k kept */
			assert_int_equal(L(&tl, 20)->ahead, 1);
		}
	}
	assert_int_equal(tl.planned_run, 2);
	assert_int_equal(L(&tl, 20)->ahead, 3);
	assert_int_equal(L(&tl, 10)->ahead, 2);
}

/*
 * TT_SCHED_COUNT: a layer late in the first iteration of a plan (its
 * estimates untried) keeps k; late again in the next one, k grows.
 */
static void test_count_first_planned(void **state)
{
	struct sim sm = { .er_true = RATE, .pr_true = RATE, .allow = 1 };
	unsigned long long t = 1000 * MS, late;
	struct tt_tl tl;

	(void)state;
	setup_tl(&tl, 1, CAP);
	tt_tl_set_modes(&tl, TT_TL_MODE_COUNT);
	run_iter(&tl, &sm, t, 10, 0, 0);		/* profile */
	assert_int_equal(tl.planned_run, 0);
	sm.pr_true = RATE / 1000;
	t += 100000 * MS;
	run_iter(&tl, &sm, t, 10, 0, 0);		/* the first planned */
	assert_int_equal(tl.planned_run, 1);
	late = tl.counts.late_count;
	assert_true(late >= 1);
	assert_int_equal(tt_tl_ahead_max(&tl), 1);
	t += 100000 * MS;
	run_iter(&tl, &sm, t, 10, 0, 0);		/* the second */
	assert_int_equal(tl.planned_run, 2);
	assert_true(tl.counts.late_count > late);
	/* layer 40, or 30 when 40's lead made the plan keep it fast */
	assert_int_equal(tt_tl_ahead_max(&tl), 2);
}

/*
 * TT_SCHED_DYNAMIC: one profile per layer-sequence signature; an
 * iteration without a signature to predict from, or whose predicted
 * sequence diverges, runs on the layer-count fallback (evictions k forward
 * positions late, prefetches released k layers ahead); the miss log.
 */
/*
 * TT_SCHED_COUNT with TT_SCHED_ANCHOR: a prefetch released by the backward
 * pass fires no earlier than k transfer times of its bytes at PR before its
 * anchored trigger time (k: its layer's ahead), not a whole backward layer
 * early; at once when that time is past, and when its transfer takes less
 * than 1/TT_TL_HOLD_DIV of the iteration. (Without the anchor nothing is
 * held: test_count.)
 */
static void test_count_hold(void **state)
{
	struct sim sm = { .er_true = RATE, .pr_true = RATE, .allow = 1 };
	unsigned long long t0 = 10000 * MS, next, bytes, t, hold, drift, x;
	unsigned int id, k;
	struct tt_tl tl;

	(void)state;
	setup_tl(&tl, 1, CAP);
	tt_tl_set_modes(&tl, TT_TL_MODE_COUNT | TT_TL_MODE_ANCHOR);
	run_iter(&tl, &sm, 1000 * MS, 10, 0, 0);
	L(&tl, 20)->ahead = 2;
	assert_true(tt_tl_iter_begin(&tl, t0) & TT_TL_IB_PLANNED);
	for (k = 0; k < 4; k++) {
		id = 10 * (k + 1);
		t = t0 + 100 * k * MS;
		tt_tl_layer_event(&tl, idx_of(&tl, id), TT_TL_FWD, 0, t, 1,
				  &bytes);
		tt_tl_saved(&tl, idx_of(&tl, id), 8 * MIB, 0);
		assert_int_equal(tt_tl_layer_event(&tl, idx_of(&tl, id),
						   TT_TL_FWD, 1, t + 100 * MS,
						   1, &bytes),
				 TT_TL_ACT_EVICT);
	}
	/* the backward pass 30 ms ahead of the profile: 40's trigger passed */
	assert_int_equal(L(&tl, 40)->prof.bwd_start, 450 * MS);
	tt_tl_layer_event(&tl, idx_of(&tl, 40), TT_TL_BWD, 0, t0 + 420 * MS, 1,
			  &bytes);
	drift = 30 * MS;
	assert_int_equal(tl.bwd_rank, 1);
	assert_int_equal(tt_tl_next_due(&tl, t0 + 420 * MS, &id, &next), 1);
	assert_int_equal(id, 40);
	/*
	 * 30 (rank 2, k 1): released, held to one transfer time early (8.4
	 * ms, at least 1/TT_TL_HOLD_DIV of the iteration: 6.6 ms)
	 */
	x = xfer(L(&tl, 30)->final_bytes, tl.pr_bps);
	assert_true(x >= tl.prof_iter_ns / TT_TL_HOLD_DIV);
	hold = L(&tl, 30)->prefetch_ns - drift - x;
	assert_true(hold > 420 * MS);
	assert_int_equal(tt_tl_next_due(&tl, t0 + 420 * MS, &id, &next), 0);
	assert_int_equal(next, t0 + hold);
	assert_int_equal(tt_tl_next_due(&tl, t0 + hold - 1, &id, &next), 0);
	assert_int_equal(tl.counts.count_released, 0);
	assert_int_equal(tt_tl_next_due(&tl, t0 + hold, &id, &next), 1);
	assert_int_equal(id, 30);
	assert_int_equal(tl.counts.count_released, 1);
	/* 20 (rank 3, k 2): released by rank 1 too, held two transfer times */
	hold = L(&tl, 20)->prefetch_ns - drift - 2 * x;
	assert_true(hold > 420 * MS);
	assert_int_equal(tt_tl_next_due(&tl, t0 + hold - 1, &id, &next), 0);
	assert_int_equal(next, t0 + hold);
	/* past its hold: at once */
	assert_int_equal(tt_tl_next_due(&tl, t0 + hold, &id, &next), 1);
	assert_int_equal(id, 20);
	assert_int_equal(tl.counts.count_released, 2);
	/*
	 * 10 (rank 4), released by 20's backward begin: held while its
	 * transfer takes 1/TT_TL_HOLD_DIV of the iteration or more, at once
	 * when the iteration is longer than TT_TL_HOLD_DIV transfers
	 */
	tt_tl_layer_event(&tl, idx_of(&tl, 40), TT_TL_BWD, 1, t0 + 470 * MS, 1,
			  &bytes);
	tt_tl_layer_event(&tl, idx_of(&tl, 30), TT_TL_BWD, 0, t0 + 471 * MS, 1,
			  &bytes);
	tt_tl_layer_event(&tl, idx_of(&tl, 30), TT_TL_BWD, 1, t0 + 480 * MS, 1,
			  &bytes);
	tt_tl_layer_event(&tl, idx_of(&tl, 20), TT_TL_BWD, 0, t0 + 481 * MS, 1,
			  &bytes);
	assert_true(481 * MS + xfer(L(&tl, 10)->final_bytes, tl.pr_bps) <
		    L(&tl, 10)->prefetch_ns);
	assert_int_equal(tt_tl_next_due(&tl, t0 + 481 * MS, &id, &next), 0);
	assert_true(next > t0 + 481 * MS);
	tl.prof_iter_ns = TT_TL_HOLD_DIV * (x + 1);
	assert_int_equal(tt_tl_next_due(&tl, t0 + 481 * MS, &id, &next), 1);
	assert_int_equal(id, 10);
}

static void test_dynamic(void **state)
{
	struct sim sm = { .er_true = RATE, .pr_true = RATE, .allow = 1 };
	unsigned long long t = 1000 * MS;
	struct tt_tl_miss m;
	struct tt_tl tl;
	unsigned int ret, d;

	(void)state;
	setup_tl(&tl, 1, CAP);
	tt_tl_set_modes(&tl, TT_TL_MODE_DYNAMIC);
	/*
	 * 1: nothing known: fallback from the start; evictions 2
	 * positions late, so the last two layers stay
	 */
	ret = run_depth(&tl, &sm, t, 4, 10);
	assert_false(ret & TT_TL_IB_PLANNED);
	assert_int_equal(tl.counts.dyn_fallback, 1);
	assert_int_equal(sm.evict_ids, 0x3);		/* 10, 20 */
	assert_int_equal(tl.counts.late_count, 0);
	assert_int_equal(tl.counts.ontime_bytes, 2 * 8 * MIB);
	/* both released by the backward pass, not by a clock */
	assert_int_equal(tl.counts.count_released, 2);
	/* 2: the same sequence: planned from its signature */
	t += 10000 * MS;
	ret = run_depth(&tl, &sm, t, 4, 10);
	assert_true(ret & TT_TL_IB_PLANNED);
	assert_int_equal(tl.cur_sig >= 0, 1);
	assert_int_equal(tt_tl_signatures(&tl), 1);
	assert_int_equal(tl.counts.dyn_fallback, 1);
	assert_int_equal(tt_tl_miss_get(&tl, 0, &m), 1);
	assert_int_equal(m.kind, TT_TL_MISS_NEW);
	assert_int_equal(m.iter, 1);
	assert_int_equal(tt_tl_miss_get(&tl, 1, &m), 0);
	/* 3: shorter: the prediction fails at the first backward begin */
	t += 10000 * MS;
	run_depth(&tl, &sm, t, 3, 10);
	assert_int_equal(tl.counts.dyn_predicted, 1);	/* iteration 2 */
	assert_int_equal(tl.counts.dyn_mispredicted, 1);
	assert_int_equal(tl.counts.dyn_fallback, 2);
	/*
	 * the prediction failed at position 3; the 4-deep plan's evictions
	 * came 2 positions late, so layers 30 and 20, needed first,
	 * were never evicted: nothing late
	 */
	assert_int_equal(sm.evict_ids, 0x1);		/* 10 */
	assert_int_equal(tl.counts.late_count, 0);
	assert_int_equal(tt_tl_miss_get(&tl, 0, &m), 1);
	assert_int_equal(m.kind, TT_TL_MISS_PREDICT);
	assert_int_equal(m.layer, 0);
	assert_int_equal(m.bytes, 3);			/* the position */
	assert_int_equal(m.iter, 3);
	/* every evicted byte came back, on time or late, none lost */
	assert_int_equal(tl.counts.ontime_bytes + tl.counts.late_bytes,
			 (unsigned long long)sm.evictions * 8 * MIB);
	/* 4: deeper: fails at the fifth forward end */
	t += 10000 * MS;
	ret = run_depth(&tl, &sm, t, 5, 10);
	assert_true(ret & TT_TL_IB_PLANNED);
	assert_int_equal(tt_tl_signatures(&tl), 2);	/* 4 and 3 deep */
	assert_int_equal(tl.counts.dyn_mispredicted, 2);
	assert_int_equal(tt_tl_miss_get(&tl, 0, &m), 1);
	assert_int_equal(m.kind, TT_TL_MISS_PREDICT);
	assert_int_equal(m.layer, 50);
	assert_int_equal(tl.counts.ontime_bytes + tl.counts.late_bytes,
			 (unsigned long long)sm.evictions * 8 * MIB);
	/* the layer-count k never leaves its bounds; late only in fallback */
	assert_true(tt_tl_ahead_max(&tl) >= 1 &&
		    tt_tl_ahead_max(&tl) <= TT_TL_AHEAD_MAX);
	/* at most TT_TL_SIGS signatures, the least recently seen replaced */
	for (d = 0; d < 20; d++) {		/* depths 1..10, twice */
		t += 10000 * MS;
		run_depth(&tl, &sm, t, 1 + d % 10, 10);
	}
	t += 10000 * MS;
	tt_tl_iter_begin(&tl, t);
	assert_int_equal(tt_tl_signatures(&tl), TT_TL_SIGS);
	assert_int_equal(tl.counts.reprofiles, 0);
	/* the miss log keeps the newest TT_TL_MISSES */
	assert_true(tl.counts.dyn_misses > TT_TL_MISSES);
	assert_int_equal(tt_tl_miss_get(&tl, TT_TL_MISSES - 1, &m), 1);
	assert_int_equal(tt_tl_miss_get(&tl, TT_TL_MISSES, &m), 0);
}

/* One forward layer of the admission test: 10 ms, 8 MiB saved. */
static void adm_fwd(struct tt_tl *tl, unsigned int id, unsigned long long *t)
{
	unsigned long long bytes;

	tt_tl_layer_event(tl, idx_of(tl, id), TT_TL_FWD, 0, *t, 1, &bytes);
	tt_tl_saved(tl, idx_of(tl, id), 8 * MIB, 0);
	*t += 10 * MS;
	tt_tl_layer_event(tl, idx_of(tl, id), TT_TL_FWD, 1, *t, 1, &bytes);
}

/* The ids the fallback orders out now. */
static unsigned int adm_evictions(struct tt_tl *tl, unsigned int *got)
{
	unsigned long long bytes;
	unsigned int idx, n = 0;

	while (tt_tl_next_evict(tl, &idx, &bytes)) {
		assert_int_equal(bytes, 8 * MIB);
		got[n++] = tl->st.layers[idx].id;
	}
	return n;
}

/*
 * TT_SCHED_DYNAMIC's fallback admits an eviction only if, should the
 * backward pass begin at once, it and every prefetch still out would be
 * back in time (rates: 8 MiB in 10 ms, 12.5 ms with the margin); a layer
 * that does not fit is considered again as the iteration goes deeper, and
 * what the backward steps measured replaces the forward times.
 */
static void test_dynamic_admission(void **state)
{
	unsigned long long t = 1000 * MS, bytes;
	unsigned int got[8], i, idx;
	struct tt_tl tl;

	(void)state;
	setup_tl(&tl, 2, CAP);	/* one iteration predicts nothing */
	tt_tl_set_modes(&tl, TT_TL_MODE_DYNAMIC);
	tt_tl_set_rates(&tl, 800 * MIB, 800 * MIB);
	tt_tl_iter_begin(&tl, t);
	assert_int_equal(tl.fallback, 1);
	/* depth 3: layer 10 would need 25 ms, 20 ms of backward are left */
	for (i = 1; i <= 3; i++)
		adm_fwd(&tl, 10 * i, &t);
	assert_int_equal(adm_evictions(&tl, got), 0);
	/* depth 4: layer 10 fits (back at 25 of 30 ms), then 20 does not */
	adm_fwd(&tl, 40, &t);
	assert_int_equal(adm_evictions(&tl, got), 1);
	assert_int_equal(got[0], 10);
	assert_int_equal(tl.st.layers[idx_of(&tl, 10)].x.ahead, 2);
	/* depth 5, 10's eviction still running: 20 would be back at 37.5 of 30 ms */
	adm_fwd(&tl, 50, &t);
	assert_int_equal(adm_evictions(&tl, got), 0);
	/*
	 * it ended: the next forward end admits 20 (back at 32.5 of 40 ms,
	 * 10 then at 45 of 50), not 30 behind 20's eviction (37.5 of 30)
	 */
	tt_tl_evict_end(&tl, idx_of(&tl, 10), t, 8 * MIB);
	adm_fwd(&tl, 60, &t);
	assert_int_equal(adm_evictions(&tl, got), 1);
	assert_int_equal(got[0], 20);
	/* backward: 30 ms per layer; the steps are measured */
	for (i = 6; i >= 1; i--) {
		tt_tl_layer_event(&tl, idx_of(&tl, 10 * i), TT_TL_BWD, 0, t, 1,
				  &bytes);
		t += 30 * MS;
		tt_tl_layer_event(&tl, idx_of(&tl, 10 * i), TT_TL_BWD, 1, t, 1,
				  &bytes);
		while (tt_tl_next_due(&tl, t, &idx, &bytes))
			;
	}
	for (i = 2; i <= 6; i++)
		assert_int_equal(tl.st.layers[idx_of(&tl, 10 * i)].bstep_ns,
				 30 * MS);
	/* next iteration: with 30 ms steps layer 10 fits at depth 3 */
	t += 100 * MS;
	tt_tl_iter_begin(&tl, t);
	assert_int_equal(tl.fallback, 1);
	for (i = 1; i <= 3; i++)
		adm_fwd(&tl, 10 * i, &t);
	assert_int_equal(adm_evictions(&tl, got), 1);
	assert_int_equal(got[0], 10);
	/* released one layer above its own: 30 ms cover its 12.5 */
	assert_int_equal(tl.st.layers[idx_of(&tl, 10)].x.ahead, 1);
	assert_int_equal(tl.evict_backlog, 8 * MIB);
}

/*
 * Growable storage for test_dynamic_grow: each growth takes fresh arrays
 * filled with a poison value, as kvmalloc_array() would hand out memory
 * that was used before.
 */
#define GROW_MAX 256
#define GROW_POISON 0xa5

struct grow {
	struct tt_tl_layer layers[GROW_MAX];
	struct tt_policy_layer plan[GROW_MAX];
	unsigned int order[GROW_MAX];
	struct tt_tl_due due[GROW_MAX];
};

static struct grow grow_bufs[2];

/* Index of layer @id, doubling the table as kmod/sched.c does when full. */
static int grow_idx(struct tt_tl *tl, unsigned int id, unsigned int *flip)
{
	int i = tt_tl_find(tl, id);

	if (i >= 0)
		return i;
	i = tt_tl_add(tl, id, NULL);
	if (i == -TT_TL_ENOSPC) {
		struct grow *g = &grow_bufs[*flip ^= 1];
		struct tt_tl_storage st = {
			.layers = g->layers, .plan = g->plan,
			.order = g->order, .due = g->due,
			.cap = tl->st.cap * 2,
		};

		assert_true(st.cap <= GROW_MAX);
		memset(g, GROW_POISON, sizeof(*g));
		tt_tl_set_storage(tl, &st);
		i = tt_tl_add(tl, id, NULL);
	}
	assert_true(i >= 0);
	return i;
}

/*
 * One fallback iteration of @depth new layers 10, 20, ... (forward only),
 * from a table of @cap0 that grows on the way; the ids the fallback
 * evicted, in order, go to @got.
 */
static unsigned int dyn_grow_run(unsigned int depth, unsigned int cap0,
				 unsigned int *got)
{
	unsigned long long t = 1000 * MS, bytes;
	unsigned int k, n = 0, idx, flip = 0;
	struct tt_tl tl;

	memset(&grow_bufs[0], GROW_POISON, sizeof(grow_bufs[0]));
	tt_tl_init(&tl, P4K, 1, 1 * MS, RATE, RATE);
	{
		struct tt_tl_storage st = {
			.layers = grow_bufs[0].layers,
			.plan = grow_bufs[0].plan,
			.order = grow_bufs[0].order,
			.due = grow_bufs[0].due, .cap = cap0,
		};

		tt_tl_set_storage(&tl, &st);
	}
	tt_tl_set_modes(&tl, TT_TL_MODE_DYNAMIC);
	/* fast rates: the fallback admits every eviction it considers */
	tt_tl_set_rates(&tl, 1000000 * MIB, 1000000 * MIB);
	tt_tl_iter_begin(&tl, t);
	assert_int_equal(tl.fallback, 1);
	for (k = 1; k <= depth; k++) {
		tt_tl_layer_event(&tl, grow_idx(&tl, 10 * k, &flip), TT_TL_FWD,
				  0, t, 1, &bytes);
		tt_tl_saved(&tl, grow_idx(&tl, 10 * k, &flip), 8 * MIB, 0);
		t += 10 * MS;
		tt_tl_layer_event(&tl, grow_idx(&tl, 10 * k, &flip), TT_TL_FWD,
				  1, t, 1, &bytes);
		while (tt_tl_next_evict(&tl, &idx, &bytes)) {
			assert_true(idx < tl.n);
			got[n++] = tl.st.layers[idx].id;
			tt_tl_evict_start(&tl, idx, t);
			tt_tl_evict_end(&tl, idx, t, bytes);
		}
		/* the forward positions walked, in order (timeline.h) */
		for (idx = 0; idx < k; idx++)
			assert_int_equal(tl.st.order[idx], 10 * (idx + 1));
	}
	return n;
}

/*
 * TT_SCHED_DYNAMIC: the table grows when the 17th, 33rd, ... new layer
 * arrives mid-iteration; the forward order walked so far moves with it,
 * and the fallback evicts the same layers as with a table big enough
 * from the start.
 */
static void test_dynamic_grow(void **state)
{
	static const unsigned int depths[] = { 17, 33, 100 };
	static unsigned int want[GROW_MAX], got[GROW_MAX];
	unsigned int d, n, i;

	(void)state;
	for (d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
		n = dyn_grow_run(depths[d], GROW_MAX / 2, want);
		assert_true(n > 0);
		assert_int_equal(dyn_grow_run(depths[d], 16, got), n);
		for (i = 0; i < n; i++)
			assert_int_equal(got[i], want[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_n_iterations),
		cmocka_unit_test(test_plan_built),
		cmocka_unit_test(test_planned_iteration_evicts),
		cmocka_unit_test(test_unknown_layer),
		cmocka_unit_test(test_deviations),
		cmocka_unit_test(test_outside_iteration),
		cmocka_unit_test(test_lead_converges),
		cmocka_unit_test(test_lead_noise),
		cmocka_unit_test(test_lead_turn_noise),
		cmocka_unit_test(test_lead_turn_first_planned),
		cmocka_unit_test(test_lead_turn_uncovered),
		cmocka_unit_test(test_count_release_noise),
		cmocka_unit_test(test_disp_admission),
		cmocka_unit_test(test_plan_slow_chain),
		cmocka_unit_test(test_rates_learnt),
		cmocka_unit_test(test_rate_ewma),
		cmocka_unit_test(test_rates_first_sample),
		cmocka_unit_test(test_rate_probe_limits),
		cmocka_unit_test(test_rates_slow_sample_recovers),
		cmocka_unit_test(test_bwd_check_once),
		cmocka_unit_test(test_lead_bounds),
		cmocka_unit_test(test_table_and_storage),
		cmocka_unit_test(test_due_before_forward_end),
		cmocka_unit_test(test_anchor),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_count_first_planned),
		cmocka_unit_test(test_count_hold),
		cmocka_unit_test(test_count_reach),
		cmocka_unit_test(test_count_late_release),
		cmocka_unit_test(test_count_hold_skips),
		cmocka_unit_test(test_dynamic),
		cmocka_unit_test(test_dynamic_admission),
		cmocka_unit_test(test_dynamic_grow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
