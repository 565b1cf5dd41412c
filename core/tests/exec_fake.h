/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * exec_fake.h - the fake world the executor's host tests run it in
 * (test_exec.c, cmocka, and fuzz/fuzz_exec.c, libFuzzer): a struct
 * tt_exec_ops over a fake clock, a fake memory of NPAGES pages at BASE on
 * node 0 (fast) or node 1 (slow), a work queue the caller runs by hand
 * (run_one, run_work) and a timer the caller fires (timer_at).
 *
 * Single-threaded: the lock only checks it is taken and dropped in pairs
 * and held where the ops' contracts say. The includer defines
 * FAKE_CHECK(cond) (an assertion: cmocka's assert_true, or an abort) and
 * includes this once; the executor is the static X.
 *
 * Knobs (the includer sets them; fake_reset() restores the defaults):
 * fake_lim[] (ops->limit), mv_mode (how a move goes: FAKE_MV_*),
 * alloc_fail (every allocation fails), stop_all (ops->stopped),
 * mid_evict (called half-way through an eviction's move, lock not held:
 * the mover stops there when the layer is stopped after it), fetch_gone
 * (that many prefetch moves find the pages not on the fast node unmapped,
 * as while another migration holds them: skipped_not_present, not moved),
 * fetch_busy (every prefetch move finds the pages not on the fast node
 * busy: skipped_busy, not moved).
 */
#ifndef TT_EXEC_FAKE_H
#define TT_EXEC_FAKE_H

#include <stdlib.h>
#include <string.h>

#include "../exec.h"

#ifndef FAKE_CHECK
#error "define FAKE_CHECK(cond) before including exec_fake.h"
#endif

#define MIB	(1024ULL * 1024)
#define PG	4096ULL
#define BASE	(1ULL << 30)
#define SPACE	(64 * MIB)
#define NPAGES	(SPACE / PG)
#define RATE	1000000000ULL

/* The fake world. */
static unsigned long long clk;
/* the clock moves by this much before each work step runs (a pool's wait) */
static unsigned long long step_gap_ns;
static unsigned char node_of[NPAGES];
static unsigned long long chunk_bytes = 2 * MIB;
static unsigned long long budget = TT_EXEC_BUDGET_NONE;
static int lock_depth, stop_all;

/* How the fake mover goes (mv_mode). */
enum fake_mv {
	FAKE_MV_OK,		/* every page moves */
	FAKE_MV_FAIL,		/* nothing moves, -ENOMEM */
	FAKE_MV_HALF,		/* the first half moves, the rest no memory */
	FAKE_MV_BUSY,		/* no page moves: all busy */
	FAKE_MV_NR,
};
static enum fake_mv mv_mode;
static int alloc_fail;
static unsigned int fetch_gone;
static int fetch_busy;
/*
 * set by t_move() for the prefetch move that fetch_gone (1) or fetch_busy
 * (-1) applies to
 */
static int gone_now;
/* Objects and arrays the executor was given and has not given back. */
static long fake_live;

/* ops->limit; chunk_bytes is TT_EXEC_LIM_CHUNK_BYTES's value. */
static unsigned long long fake_lim[TT_EXEC_LIM_BUDGET_GLOBAL + 1];
static unsigned int moves, evict_moves, fetch_moves, plain_moves;
static unsigned int traces[64], late_traces;
/* The flags of the last trace_migration() of each type. */
static unsigned int trace_flags[64];
static void (*mid_evict)(struct tt_exec_layer *l);
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
	FAKE_CHECK(lock_depth == 0);
	lock_depth++;
}

static void t_unlock(struct tt_exec *x)
{
	(void)x;
	FAKE_CHECK(lock_depth == 1);
	lock_depth--;
}

static void t_queue(struct tt_exec *x, struct tt_exec_layer *l, int what)
{
	unsigned int i;

	(void)x;
	FAKE_CHECK(lock_depth == 1);
	for (i = 0; i < qn; i++)
		if (q[i].l == l && q[i].what == what)
			return;		/* still pending: one run */
	FAKE_CHECK(qn < QMAX);
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
	clk += step_gap_ns;
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
	FAKE_CHECK(lock_depth == 0);
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

/* Move the pages of [a, b) to @nid as mv_mode says: the fake mover, at RATE. */
static int fake_move(unsigned long long a, unsigned long long b, int nid,
		     struct tt_migrate_result *res)
{
	unsigned long long p, first = (a - BASE) / PG, moved = 0;

	FAKE_CHECK(a >= BASE && b <= BASE + SPACE && a <= b);
	FAKE_CHECK(a % PG == 0 && b % PG == 0);
	FAKE_CHECK(nid == 0 || nid == 1);
	if (mv_mode == FAKE_MV_FAIL)
		return -TT_EXEC_ENOMEM;
	for (p = first; p < (b - BASE) / PG; p++) {
		res->pages++;
		if (node_of[p] == nid) {
			res->already_on_node++;
			continue;
		}
		if (gone_now > 0) {
			res->skipped_not_present++;
			continue;
		}
		if (mv_mode == FAKE_MV_BUSY || gone_now < 0) {
			res->skipped_busy++;
			continue;
		}
		if (mv_mode == FAKE_MV_HALF && 2 * (p - first) >= (b - a) / PG) {
			res->skipped_no_memory++;
			continue;
		}
		node_of[p] = nid;
		moved++;
	}
	res->moved += moved;
	res->elapsed_ns += moved * PG * 1000000000ULL / RATE;
	return 0;
}

/* Clip [*a, *b) to the fake memory: false when nothing is left. */
static int fake_clip(unsigned long long *a, unsigned long long *b)
{
	if (*a < BASE)
		*a = BASE;
	if (*b > BASE + SPACE)
		*b = BASE + SPACE;
	return *a < *b;
}

static int t_move(struct tt_exec *x, struct tt_exec_layer *l,
		  const struct tt_exec_move *m, struct tt_migrate_result *res)
{
	int ret;

	(void)x;
	(void)l;
	FAKE_CHECK(lock_depth == 0);
	FAKE_CHECK(m->nr > 0);
	moves++;
	if (m->flags & TT_EXEC_MV_EVICT)
		evict_moves++;
	else
		fetch_moves++;
	if (mid_evict && (m->flags & TT_EXEC_MV_EVICT)) {
		unsigned long long mid = m->start +
					 (m->end - m->start) / PG / 2 * PG;
		ret = fake_move(m->start, mid, m->nids[0], res);

		mid_evict(l);
		/* stopped at the batch: @res covers what was processed */
		if (ret || t_stopped(x, l, m->flags))
			return ret;
		return fake_move(mid, m->end, m->nids[0], res);
	}
	gone_now = !(m->flags & TT_EXEC_MV_EVICT) && fetch_gone;
	if (!gone_now && !(m->flags & TT_EXEC_MV_EVICT) && fetch_busy)
		gone_now = -1;	/* busy */
	ret = fake_move(m->start, m->end, m->nids[0], res);
	if (gone_now > 0)
		fetch_gone--;
	gone_now = 0;
	return ret;
}

static int t_move_plain(struct tt_exec *x, const struct tt_hint_iv *p, long n,
			const int *nids, int nr, unsigned int flags,
			struct tt_migrate_result *res)
{
	unsigned long long a, b;
	int ret = 0;
	long i;

	(void)x;
	(void)flags;
	FAKE_CHECK(lock_depth == 0);
	FAKE_CHECK(nr > 0);
	for (i = 0; i < n && !ret; i++) {
		FAKE_CHECK(p[i].start <= p[i].end);
		plain_moves++;
		/* where mapped: the fake memory */
		a = p[i].start;
		b = p[i].end;
		if (fake_clip(&a, &b))
			ret = fake_move(a, b, nids[0], res);
	}
	return ret;
}

static void t_residency(struct tt_exec *x, unsigned long long start,
			unsigned long long end, unsigned long long *bytes,
			unsigned long long *scratch)
{
	unsigned long long p;

	(void)x;
	(void)scratch;
	FAKE_CHECK(lock_depth == 0);
	if (!fake_clip(&start, &end))
		return;
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
	FAKE_CHECK(max > 0);
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
	void *p;

	(void)x;
	if (alloc_fail || (size && n > ~0UL / size))
		return NULL;
	p = zero ? calloc(n ? n : 1, size ? size : 1) :
		   malloc(n && size ? n * size : 1);
	fake_live += !!p;
	return p;
}

static void t_free(struct tt_exec *x, void *p)
{
	(void)x;
	fake_live -= !!p;
	free(p);
}

static struct tt_exec_layer *t_layer_new(struct tt_exec *x)
{
	return t_alloc(x, 1, sizeof(struct tt_exec_layer), 0);
}

static void t_layer_free(struct tt_exec *x, struct tt_exec_layer *l)
{
	FAKE_CHECK(l);
	t_free(x, l);
}

static struct tt_exec_range *t_range_alloc(struct tt_exec *x)
{
	return t_alloc(x, 1, sizeof(struct tt_exec_range), 0);
}

static void t_range_free(struct tt_exec *x, struct tt_exec_range *r)
{
	FAKE_CHECK(r);
	t_free(x, r);
}

static unsigned long long t_limit(struct tt_exec *x, enum tt_exec_limit what)
{
	(void)x;
	FAKE_CHECK((unsigned int)what <= TT_EXEC_LIM_BUDGET_GLOBAL);
	if (what == TT_EXEC_LIM_CHUNK_BYTES)
		return chunk_bytes;
	return fake_lim[what];
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
	traces[type & 63]++;
	trace_flags[type & 63] = flags;
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
	traces[type & 63]++;
	trace_flags[type & 63] = flags;
	if (type == TT_TRACE_LATE)
		late_traces++;
}

static void t_budget_publish(struct tt_exec *x)
{
	FAKE_CHECK(x->bud.slow <= x->bud.held || !x->bud.held);
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

/* The fake world's defaults: all on node 0, nothing queued, clock at @now. */
static void fake_reset(unsigned long long now)
{
	clk = now;
	step_gap_ns = 0;
	memset(node_of, 0, sizeof(node_of));
	memset(traces, 0, sizeof(traces));
	memset(trace_flags, 0, sizeof(trace_flags));
	mid_evict = NULL;
	qn = 0;
	queued_total = moves = evict_moves = fetch_moves = plain_moves = 0;
	late_traces = 0;
	lock_depth = 0;
	stop_all = 0;
	fetch_gone = 0;
	fetch_busy = 0;
	gone_now = 0;
	timer_at = 0;
	chunk_bytes = 2 * MIB;
	budget = TT_EXEC_BUDGET_NONE;
	mv_mode = FAKE_MV_OK;
	alloc_fail = 0;
	fake_live = 0;
	fake_lim[TT_EXEC_LIM_MAX_LAYERS] = 64;
	fake_lim[TT_EXEC_LIM_MAX_RANGES] = 1024;
	fake_lim[TT_EXEC_LIM_MIN_MIGRATE] = 0;
	fake_lim[TT_EXEC_LIM_EPISODE_MAX] = SPACE;
	fake_lim[TT_EXEC_LIM_BUDGET_GLOBAL] = 0;
}

#endif /* TT_EXEC_FAKE_H */
