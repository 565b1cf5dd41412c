// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The move_pages backend's userspace scheduler (usched.c) on the host,
 * which has one NUMA node: the scheduler runs with its real threads but a
 * fake world (tt_us_set_ops()): a manual clock the tests move, a node
 * layout with node 0 fast and node 1 slow, and a mover that keeps the node
 * of every page of a fake address range in an array (no memory is touched:
 * the addresses are never dereferenced). After each step the tests wait
 * for the threads to have nothing left to do (tt_us_settle()), so what
 * moved, when and where is deterministic.
 *
 * One test uses the real clock (short sleeps) to see the timer thread
 * sleep until a trigger time.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define FAKE_BASE	0x100000000000ULL
#define FAKE_PAGES	8192
#define FAKE_LOG	4096
#define MS		1000000ULL
#define T0		(1000ULL * 1000 * MS)	/* the fake clock's start */
#define MIB		(1024ULL * 1024)

static uint64_t ps;

/**
 * struct fake_move - one call of the fake mover
 * @start:  first address.
 * @end:    end address.
 * @node:   target node.
 * @at:     the fake time of the call.
 * @thread: the calling thread.
 * @moved:  pages it moved.
 */
struct fake_move {
	uint64_t start;
	uint64_t end;
	int node;
	uint64_t at;
	pthread_t thread;
	uint64_t moved;
};

/**
 * struct fake - the world the scheduler sees
 * @lock:      protects everything below.
 * @cv:        signalled when @blocked or @block changes.
 * @now:       the manual clock.
 * @real_clock: use CLOCK_MONOTONIC instead of @now.
 * @node:      node of each page of [FAKE_BASE, + FAKE_PAGES pages); -1 =
 *             not present.
 * @cpu_node:  what getcpu() says.
 * @topo:      the node layout.
 * @bps:       the mover's speed (elapsed_ns of each move).
 * @move_err:  every move fails with this error (0: none).
 * @full_node: a node that has no free page (-1: none).
 * @bad_start: the check says -@bad_err for ranges overlapping
 * @bad_end:   [bad_start, bad_end).
 * @bad_err:   EFAULT or EOPNOTSUPP.
 * @block:     movers wait while it is set.
 * @blocked:   movers waiting.
 * @log:       the moves, in order.
 * @nlog:      entries in @log.
 */
struct fake {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	uint64_t now;
	bool real_clock;
	int node[FAKE_PAGES];
	int cpu_node;
	struct tt_node_topo topo;
	uint64_t bps;
	int move_err;
	int full_node;
	uint64_t bad_start;
	uint64_t bad_end;
	int bad_err;
	bool block;
	unsigned int blocked;
	struct fake_move log[FAKE_LOG];
	unsigned int nlog;
};

static uint64_t fake_now(void *ctx)
{
	struct fake *f = ctx;
	uint64_t t;

	if (f->real_clock)
		return tt_now_ns();
	pthread_mutex_lock(&f->lock);
	t = f->now;
	pthread_mutex_unlock(&f->lock);
	return t;
}

static int fake_cpu_node(void *ctx)
{
	struct fake *f = ctx;

	return f->cpu_node;
}

static int fake_topo(void *ctx, int fast, struct tt_node_topo *t)
{
	struct fake *f = ctx;

	(void)fast;
	*t = f->topo;
	return 0;
}

static int fake_check(void *ctx, uint64_t start, uint64_t end, void **cache)
{
	struct fake *f = ctx;

	/* The cache is the scheduler's to free: give it something. */
	if (!*cache)
		*cache = malloc(1);
	if (f->bad_err && start < f->bad_end && end > f->bad_start)
		return -f->bad_err;
	return 0;
}

/* The fake range [FAKE_BASE, + FAKE_PAGES pages) is mapped, nothing else. */
static int fake_mapped(void *ctx, uint64_t start, uint64_t end)
{
	(void)ctx;
	return start >= FAKE_BASE && end <= FAKE_BASE + FAKE_PAGES * ps ?
	       0 : -EFAULT;
}

static int fake_move(void *ctx, uint64_t start, uint64_t end, int node,
		     struct tt_migrate_result *res, uint64_t *from)
{
	struct fake *f = ctx;
	uint64_t a;

	pthread_mutex_lock(&f->lock);
	while (f->block) {
		f->blocked++;
		pthread_cond_broadcast(&f->cv);
		pthread_cond_wait(&f->cv, &f->lock);
		f->blocked--;
	}
	memset(res, 0, sizeof(*res));
	res->pages = (end - start) / ps;
	if (f->move_err) {
		res->skipped_unsupported = res->pages;
		pthread_mutex_unlock(&f->lock);
		return -f->move_err;
	}
	for (a = start; a < end; a += ps) {
		uint64_t i = (a - FAKE_BASE) / ps;

		if (a < FAKE_BASE || i >= FAKE_PAGES || f->node[i] < 0) {
			res->skipped_not_present++;
			continue;
		}
		if (from)
			from[f->node[i]] += ps;
		if (f->node[i] == node) {
			res->already_on_node++;
		} else if (node == f->full_node) {
			res->skipped_no_memory++;
		} else {
			f->node[i] = node;
			res->moved++;
		}
	}
	res->elapsed_ns = (end - start) * 1000000000ULL / f->bps;
	if (f->nlog < FAKE_LOG)
		f->log[f->nlog++] = (struct fake_move){
			.start = start, .end = end, .node = node,
			.at = f->now, .thread = pthread_self(),
			.moved = res->moved,
		};
	pthread_mutex_unlock(&f->lock);
	return 0;
}

static const struct tt_us_ops fake_ops = {
	.now = fake_now,
	.cpu_node = fake_cpu_node,
	.topo = fake_topo,
	.check = fake_check,
	.mapped = fake_mapped,
	.move = fake_move,
	.manual_clock = true,
};

static const struct tt_us_ops fake_ops_real_clock = {
	.now = fake_now,
	.cpu_node = fake_cpu_node,
	.topo = fake_topo,
	.check = fake_check,
	.mapped = fake_mapped,
	.move = fake_move,
	.manual_clock = false,
};

static void mask_set(struct tt_nodemask *m, int nid)
{
	m->bits[nid / 64] |= 1ULL << (nid % 64);
}

/**
 * struct tctx - one test's session and world
 * @s:     the session.
 * @f:     the world.
 * @start: fake time the current iteration began.
 */
struct tctx {
	struct tt_session *s;
	struct fake f;
	uint64_t start;
};

static int setup(void **state)
{
	struct tctx *c = calloc(1, sizeof(*c));
	int i;

	if (!c)
		return -1;
	pthread_mutex_init(&c->f.lock, NULL);
	pthread_cond_init(&c->f.cv, NULL);
	c->f.now = T0;
	for (i = 0; i < FAKE_PAGES; i++)
		c->f.node[i] = 0;
	c->f.cpu_node = 0;
	mask_set(&c->f.topo.cpu, 0);
	mask_set(&c->f.topo.mem, 0);
	mask_set(&c->f.topo.mem, 1);
	c->f.topo.nearest_slow = 1;
	/* Fast enough that the plans stay "accepted" whatever was measured. */
	c->f.bps = 1ULL << 40;
	c->f.full_node = -1;
	setenv("TIERTRAIN_BACKEND", "move_pages", 1);
	unsetenv(TT_US_ENV_WORKERS);
	c->s = tt_open();
	if (!c->s || tt_us_set_ops(c->s, &fake_ops, &c->f))
		return -1;
	/*
	 * written for the reference semantics, no longer the default, and
	 * for rates known from the start (set: no rate probe moves anything
	 * while a session profiles; test_rate_probe has one)
	 */
	if (tt_sched_set(c->s, &(struct tt_ioc_sched){
			.valid = TT_SCHED_SET_FLAGS | TT_SCHED_SET_RATES,
			.flags = TT_SCHED_REFERENCE,
			.er_bps = c->f.bps, .pr_bps = c->f.bps }))
		return -1;
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct tctx *c = *state;

	if (c->s)
		tt_close(c->s);
	pthread_mutex_destroy(&c->f.lock);
	pthread_cond_destroy(&c->f.cv);
	free(c);
	unsetenv("TIERTRAIN_BACKEND");
	return 0;
}

static uint64_t page_addr(uint64_t page)
{
	return FAKE_BASE + page * ps;
}

/* Pages of [page, page + n) on @node. */
static uint64_t on_node(struct tctx *c, uint64_t page, uint64_t n, int node)
{
	uint64_t i, k = 0;

	pthread_mutex_lock(&c->f.lock);
	for (i = page; i < page + n; i++)
		k += c->f.node[i] == node;
	pthread_mutex_unlock(&c->f.lock);
	return k;
}

static unsigned int nlog(struct tctx *c)
{
	unsigned int n;

	pthread_mutex_lock(&c->f.lock);
	n = c->f.nlog;
	pthread_mutex_unlock(&c->f.lock);
	return n;
}

/* Set the clock to @rel ns into the iteration; the threads catch up. */
static void at(struct tctx *c, uint64_t rel)
{
	pthread_mutex_lock(&c->f.lock);
	assert_true(c->start + rel >= c->f.now);
	c->f.now = c->start + rel;
	pthread_mutex_unlock(&c->f.lock);
	tt_us_kick(c->s);
	tt_us_settle(c->s);
}

static void iter_begin(struct tctx *c, uint64_t gap)
{
	pthread_mutex_lock(&c->f.lock);
	c->f.now += gap;
	c->start = c->f.now;
	pthread_mutex_unlock(&c->f.lock);
	assert_int_equal(tt_iter_begin(c->s), 0);
	tt_us_settle(c->s);
}

static void ev(struct tctx *c, uint64_t rel, int begin, uint32_t layer,
	       unsigned int phase)
{
	at(c, rel);
	if (begin)
		assert_int_equal(tt_layer_begin(c->s, layer, phase), 0);
	else
		assert_int_equal(tt_layer_end(c->s, layer, phase), 0);
	tt_us_settle(c->s);
}

static void save(struct tctx *c, uint32_t layer, uint64_t page, uint64_t n,
		 unsigned int flags)
{
	assert_int_equal(tt_tensor_saved_ex(c->s, layer,
					    (void *)(uintptr_t)page_addr(page),
					    n * ps, flags), 0);
}

static struct tt_ioc_stats stats(struct tctx *c)
{
	struct tt_ioc_stats st;

	assert_int_equal(tt_stats(c->s, &st), 0);
	return st;
}

static struct tt_layer_info layer_info(struct tctx *c, uint32_t id)
{
	struct tt_layer_info info[16];
	int n, i;

	n = tt_layers(c->s, info, 16);
	assert_true(n >= 0 && n <= 16);
	for (i = 0; i < n; i++)
		if (info[i].layer == id)
			return info[i];
	fail_msg("layer %u unknown", id);
	return info[0];
}

/*
 * The standard iteration: layer 1 (@pages1 pages at page 0) runs forward
 * from 0 to 1 ms, layer 2 (@pages2 pages at page 1024) from 1 to 2 ms;
 * backward of layer 2 from 10 to 11 ms, of layer 1 from 11 to 12 ms. A
 * layer with 0 pages saves nothing.
 */
static void sized_iteration(struct tctx *c, uint64_t pages1, uint64_t pages2)
{
	iter_begin(c, 8 * MS);
	ev(c, 0, 1, 1, TT_FWD);
	if (pages1)
		save(c, 1, 0, pages1, 0);
	ev(c, 1 * MS, 0, 1, TT_FWD);
	ev(c, 1 * MS, 1, 2, TT_FWD);
	if (pages2)
		save(c, 2, 1024, pages2, 0);
	ev(c, 2 * MS, 0, 2, TT_FWD);
	ev(c, 10 * MS, 1, 2, TT_BWD);
	ev(c, 11 * MS, 0, 2, TT_BWD);
	ev(c, 11 * MS, 1, 1, TT_BWD);
	ev(c, 12 * MS, 0, 1, TT_BWD);
}

/* sized_iteration() with 1 MiB per layer; @save_mask bit 0: layer 1. */
static void std_iteration(struct tctx *c, unsigned int save_mask)
{
	sized_iteration(c, save_mask & 1 ? 256 : 0, save_mask & 2 ? 256 : 0);
}

/*
 * Eviction at the forward end, prefetch at the planned trigger time, on
 * time at the backward begin; counters, layer view and rate averages.
 */
/* @old moved by a quarter of the way to @sample, as the rates' EWMA. */
static uint64_t ewma4(uint64_t old, uint64_t sample)
{
	return sample >= old ? old + (sample - old) / 4 :
			       old - (old - sample) / 4;
}

static void test_evict_prefetch(void **state)
{
	struct tctx *c = *state;
	struct tt_layer_info li;
	struct tt_ioc_stats st;
	uint64_t trig, trig2;

	/* Moves of 1 MiB take 1 ms: exact rate samples of 1e9 B/s. */
	c->f.bps = 1000000000ULL;
	/* the plan below is made at 1024 MiB/s, set: no rate probe */
	assert_int_equal(tt_sched_set(c->s, &(struct tt_ioc_sched){
			.valid = TT_SCHED_SET_RATES,
			.er_bps = 1024 * MIB, .pr_bps = 1024 * MIB }), 0);
	/* Profiling: nothing moves, no thread is started. */
	std_iteration(c, 3);
	assert_int_equal(nlog(c), 0);
	assert_int_equal(tt_us_threads(c->s), 0);
	li = layer_info(c, 1);
	assert_int_equal(li.status, TT_LAYER_PROFILING);

	iter_begin(c, 8 * MS);
	li = layer_info(c, 1);
	assert_int_equal(li.status, TT_LAYER_ACCEPTED);
	assert_int_equal(li.saved_bytes, MIB);
	assert_int_equal(li.fwd_end_ns, 1 * MS);
	assert_int_equal(li.bwd_start_ns, 11 * MS);
	assert_int_equal(li.final_bytes, MIB);
	/* ts_B - szP / PR at the 1 GiB/s seed: 11 ms - 976563 ns */
	assert_int_equal(li.prefetch_ns, 11 * MS - 976563);
	trig = li.prefetch_ns;

	ev(c, 0, 1, 1, TT_FWD);
	save(c, 1, 0, 256, 0);
	assert_int_equal(on_node(c, 0, 256, 1), 0);
	/* The eviction runs right after the forward end, off this thread. */
	ev(c, 1 * MS, 0, 1, TT_FWD);
	assert_int_equal(tt_us_threads(c->s), 3);
	assert_int_equal(on_node(c, 0, 256, 1), 256);
	assert_int_equal(nlog(c), 1);
	assert_int_equal(c->f.log[0].node, 1);
	assert_int_equal(c->f.log[0].start, page_addr(0));
	assert_int_equal(c->f.log[0].end, page_addr(256));
	assert_int_equal(c->f.log[0].at, c->start + 1 * MS);
	assert_false(pthread_equal(c->f.log[0].thread, pthread_self()));

	ev(c, 1 * MS, 1, 2, TT_FWD);
	save(c, 2, 1024, 256, 0);
	ev(c, 2 * MS, 0, 2, TT_FWD);
	assert_int_equal(on_node(c, 1024, 256, 1), 256);

	/* Stays on the slow node until the trigger time, not a ns less. */
	trig2 = layer_info(c, 2).prefetch_ns;
	assert_int_equal(trig2, 10 * MS - 976563);
	at(c, trig2 - 1);
	assert_int_equal(on_node(c, 1024, 256, 1), 256);
	at(c, trig2);
	assert_int_equal(on_node(c, 1024, 256, 0), 256);
	ev(c, 10 * MS, 1, 2, TT_BWD);
	at(c, trig - 1);
	assert_int_equal(on_node(c, 0, 256, 1), 256);
	at(c, trig);
	assert_int_equal(on_node(c, 0, 256, 0), 256);
	ev(c, 11 * MS, 0, 2, TT_BWD);
	ev(c, 11 * MS, 1, 1, TT_BWD);
	ev(c, 12 * MS, 0, 1, TT_BWD);

	li = layer_info(c, 1);
	assert_int_equal(li.last_fwd_end_ns, 1 * MS);
	assert_int_equal(li.last_evict_start_ns, 1 * MS);
	assert_int_equal(li.last_evict_end_ns, 1 * MS);
	assert_int_equal(li.last_prefetch_start_ns, trig);
	assert_int_equal(li.last_prefetch_end_ns, trig);
	assert_int_equal(li.last_bwd_start_ns, 11 * MS);
	assert_int_equal(li.last_evicted_bytes, MIB);
	assert_int_equal(li.last_late_bytes, 0);

	st = stats(c);
	assert_int_equal(st.iterations, 2);
	assert_int_equal(st.events, 2 * 11);
	assert_int_equal(st.tensors_saved, 4);
	assert_int_equal(st.layers_accepted, 2);
	assert_int_equal(st.layers_modified + st.layers_dropped, 0);
	assert_int_equal(st.layers_unknown, 0);
	assert_int_equal(st.bytes_evicted, 2 * MIB);
	assert_int_equal(st.bytes_prefetched, 2 * MIB);
	assert_int_equal(st.bytes_to_slow, 2 * MIB);
	assert_int_equal(st.bytes_to_fast, 2 * MIB);
	assert_int_equal(st.ontime_bytes, 2 * MIB);
	assert_int_equal(st.late_bytes + st.late_count, 0);
	assert_int_equal(st.total.pages, 4 * 256);
	assert_int_equal(st.total.moved, 4 * 256);
	assert_int_equal(st.migrate_calls, 0);
	/*
	 * Each move of 1 MiB took 1 ms (1e9 B/s): 2 samples per direction,
	 * each moving the rate set (settled) by a quarter of its gap to 1e9
	 * (a new session's first sample replaces its seed: core/tests).
	 */
	assert_int_equal(st.er_bps, ewma4(ewma4(1024 * MIB, 1000000000ULL),
					  1000000000ULL));
	assert_int_equal(st.pr_bps, st.er_bps);
}

/* What the policy takes to move @bytes at @bps: rounded up. */
static uint64_t xfer_ns(uint64_t bytes, uint64_t bps)
{
	return (bytes * 1000000000ULL + bps - 1) / bps;
}

/*
 * Late: the prefetch is still running at the backward begin. Late bytes
 * are counted, the lateness reaches the timeline (whose lead-time rule is
 * tested in core/tests), and the next plan triggers the lead earlier.
 * Only layer 1 saves anything here. The rates are set (settled): the
 * prefetch's 3x slower sample then moves PR by a quarter of the gap, no
 * rate miss that would keep the lateness from the lead.
 */
static void test_late(void **state)
{
	struct tctx *c = *state;
	struct tt_ioc_sched cfg = { .valid = TT_SCHED_SET_RATES,
				    .er_bps = 1ULL << 30,
				    .pr_bps = 1ULL << 30 };
	struct tt_layer_info li;
	struct tt_ioc_stats st;
	uint64_t trig, lead, slow;

	sized_iteration(c, 256, 0);
	assert_int_equal(tt_sched_set(c->s, &cfg), 0);
	iter_begin(c, 8 * MS);
	trig = layer_info(c, 1).prefetch_ns;
	assert_int_equal(trig, 11 * MS - 976563);
	assert_int_equal(layer_info(c, 2).status, TT_LAYER_DROPPED);
	ev(c, 0, 1, 1, TT_FWD);
	save(c, 1, 0, 256, 0);
	ev(c, 1 * MS, 0, 1, TT_FWD);
	ev(c, 1 * MS, 1, 2, TT_FWD);
	ev(c, 2 * MS, 0, 2, TT_FWD);
	ev(c, 10 * MS, 1, 2, TT_BWD);
	ev(c, 10 * MS, 0, 2, TT_BWD);

	/* Layer 1's prefetch starts at its trigger time and hangs. */
	pthread_mutex_lock(&c->f.lock);
	c->f.block = true;
	c->f.now = c->start + trig;
	pthread_mutex_unlock(&c->f.lock);
	tt_us_kick(c->s);
	pthread_mutex_lock(&c->f.lock);
	while (!c->f.blocked)
		pthread_cond_wait(&c->f.cv, &c->f.lock);
	c->f.now = c->start + 11 * MS;
	pthread_mutex_unlock(&c->f.lock);
	/* The backward begin does not wait for it (no TT_SCHED_SYNC_LATE). */
	assert_int_equal(tt_layer_begin(c->s, 1, TT_BWD), 0);
	st = stats(c);
	assert_int_equal(st.late_bytes, MIB);
	assert_int_equal(st.late_count, 1);
	assert_int_equal(st.ontime_bytes, 0);
	assert_int_equal(on_node(c, 0, 256, 1), 256);

	/* It ends 2 ms late. */
	pthread_mutex_lock(&c->f.lock);
	c->f.now = c->start + 13 * MS;
	c->f.block = false;
	pthread_cond_broadcast(&c->f.cv);
	pthread_mutex_unlock(&c->f.lock);
	tt_us_settle(c->s);
	assert_int_equal(on_node(c, 0, 256, 0), 256);
	ev(c, 14 * MS, 0, 1, TT_BWD);
	li = layer_info(c, 1);
	assert_int_equal(li.last_late_bytes, MIB);
	assert_int_equal(li.last_prefetch_start_ns, trig);
	assert_int_equal(li.last_prefetch_end_ns, 13 * MS);
	lead = li.lead_ns;
	assert_true(lead > 0 && lead <= 3 * MS);
	assert_int_equal(stats(c).sync_fetched_bytes, 0);

	/*
	 * The next plan starts the prefetch that much earlier, and takes it
	 * at the slow end of PR: the slowest sample, this prefetch's own
	 * (1 MiB from the trigger to 13 ms), within PR/4..PR.
	 */
	iter_begin(c, 8 * MS);
	li = layer_info(c, 1);
	assert_int_equal(li.status, TT_LAYER_ACCEPTED);
	assert_int_equal(li.lead_ns, lead);
	st = stats(c);
	slow = xfer_ns(MIB, 13 * MS - trig);	/* bytes/s */
	if (slow > st.pr_bps)
		slow = st.pr_bps;
	if (slow < st.pr_bps / 4)
		slow = st.pr_bps / 4;
	assert_true(slow < st.pr_bps);
	assert_int_equal(li.prefetch_ns, 11 * MS - xfer_ns(MIB, slow) - lead);
}

/*
 * Late without a prefetch started: the backward begin comes before the
 * trigger time; the rest is prefetched at once (rescue).
 */
static void test_late_rescue(void **state)
{
	struct tctx *c = *state;
	struct tt_ioc_sched cfg = { .valid = TT_SCHED_SET_RATES };
	struct tt_ioc_stats st;

	std_iteration(c, 3);
	/* A huge PR: the plan triggers each prefetch just before ts_B. */
	cfg.er_bps = 1ULL << 30;
	cfg.pr_bps = 1ULL << 50;
	assert_int_equal(tt_sched_set(c->s, &cfg), 0);
	iter_begin(c, 8 * MS);
	assert_int_equal(layer_info(c, 2).prefetch_ns, 10 * MS - 1);
	ev(c, 0, 1, 1, TT_FWD);
	save(c, 1, 0, 256, 0);
	ev(c, 1 * MS, 0, 1, TT_FWD);
	ev(c, 1 * MS, 1, 2, TT_FWD);
	save(c, 2, 1024, 256, 0);
	ev(c, 2 * MS, 0, 2, TT_FWD);
	assert_int_equal(on_node(c, 1024, 256, 1), 256);
	/* Layer 2's backward begins 1 ns before its trigger time. */
	ev(c, 10 * MS - 2, 1, 2, TT_BWD);
	assert_int_equal(on_node(c, 1024, 256, 0), 256);
	st = stats(c);
	assert_int_equal(st.late_bytes, MIB);
	assert_int_equal(st.late_count, 1);
	assert_int_equal(layer_info(c, 2).last_late_bytes, MIB);
	/* The trigger time passing later changes nothing. */
	at(c, 10 * MS);
	assert_int_equal(nlog(c), 3);
}

/*
 * TT_SCHED_SYNC_LATE: the backward begin itself fetches the late bytes, in
 * the calling thread, before it returns.
 */
static void test_sync_late(void **state)
{
	struct tctx *c = *state;
	struct tt_ioc_sched cfg = {
		.valid = TT_SCHED_SET_FLAGS | TT_SCHED_SET_RATES,
		.flags = TT_SCHED_SYNC_LATE,
		.er_bps = 1ULL << 30,
		.pr_bps = 1ULL << 50,
	};
	struct tt_ioc_stats st;

	std_iteration(c, 3);
	assert_int_equal(tt_sched_set(c->s, &cfg), 0);
	iter_begin(c, 8 * MS);
	ev(c, 0, 1, 1, TT_FWD);
	save(c, 1, 0, 256, 0);
	ev(c, 1 * MS, 0, 1, TT_FWD);
	ev(c, 1 * MS, 1, 2, TT_FWD);
	save(c, 2, 1024, 256, 0);
	ev(c, 2 * MS, 0, 2, TT_FWD);
	at(c, 5 * MS);
	assert_int_equal(tt_layer_begin(c->s, 2, TT_BWD), 0);
	/* No settling: the data is back when the call returns. */
	assert_int_equal(on_node(c, 1024, 256, 0), 256);
	assert_int_equal(nlog(c), 3);
	assert_true(pthread_equal(c->f.log[2].thread, pthread_self()));
	st = stats(c);
	assert_int_equal(st.sync_fetched_bytes, MIB);
	assert_int_equal(st.late_bytes, MIB);
	assert_int_equal(st.bytes_prefetched, MIB);
	tt_us_settle(c->s);
	assert_int_equal(nlog(c), 3);

	/* Layer 1 the same way. */
	ev(c, 6 * MS, 0, 2, TT_BWD);
	ev(c, 7 * MS, 1, 1, TT_BWD);
	ev(c, 8 * MS, 0, 1, TT_BWD);
	assert_int_equal(on_node(c, 0, 256, 0), 256);
	assert_int_equal(stats(c).sync_fetched_bytes, 2 * MIB);
}

/* Helper of test_close_*: open the gate after a while. */
static void *release_later(void *arg)
{
	struct fake *f = arg;

	usleep(50 * 1000);
	pthread_mutex_lock(&f->lock);
	f->block = false;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

/*
 * tt_close() with evicted data whose prefetch is not due yet, and with an
 * eviction running: everything ends on the fast node.
 */
static void test_close_scheduled(void **state)
{
	struct tctx *c = *state;
	pthread_t th;

	sized_iteration(c, 256, 768);
	iter_begin(c, 8 * MS);
	ev(c, 0, 1, 1, TT_FWD);
	save(c, 1, 0, 256, 0);
	ev(c, 1 * MS, 0, 1, TT_FWD);
	assert_int_equal(on_node(c, 0, 256, 1), 256);

	/* Layer 2's eviction hangs in its mover when the session closes. */
	pthread_mutex_lock(&c->f.lock);
	c->f.block = true;
	pthread_mutex_unlock(&c->f.lock);
	ev(c, 1 * MS, 1, 2, TT_FWD);
	save(c, 2, 1024, 512 + 256, 0);
	at(c, 2 * MS);
	assert_int_equal(tt_layer_end(c->s, 2, TT_FWD), 0);
	pthread_mutex_lock(&c->f.lock);
	while (!c->f.blocked)
		pthread_cond_wait(&c->f.cv, &c->f.lock);
	pthread_mutex_unlock(&c->f.lock);
	assert_int_equal(pthread_create(&th, NULL, release_later, &c->f), 0);
	tt_close(c->s);
	c->s = NULL;
	assert_int_equal(pthread_join(th, NULL), 0);
	/* Layer 1 back; layer 2's first chunk was moved and is back too. */
	assert_int_equal(on_node(c, 0, 256, 0), 256);
	assert_int_equal(on_node(c, 1024, 768, 0), 768);
	assert_int_equal(c->f.nlog, 4);
	assert_int_equal(c->f.log[1].end - c->f.log[1].start, 512 * ps);
	assert_int_equal(c->f.log[3].node, 0);
}

/* tt_close() right after a forward end, eviction queued or not. */
static void test_close_queued(void **state)
{
	struct tctx *c = *state;
	int i;

	std_iteration(c, 3);
	for (i = 0; i < 20; i++) {
		iter_begin(c, 8 * MS);
		ev(c, 0, 1, 1, TT_FWD);
		save(c, 1, 0, 256, 0);
		at(c, 1 * MS);
		assert_int_equal(tt_layer_end(c->s, 1, TT_FWD), 0);
		assert_int_equal(tt_layer_begin(c->s, 2, TT_FWD), 0);
		save(c, 2, 1024, 256, 0);
		assert_int_equal(tt_layer_end(c->s, 2, TT_FWD), 0);
		if (i == 19)
			break;
		ev(c, 10 * MS, 1, 2, TT_BWD);
		ev(c, 11 * MS, 0, 2, TT_BWD);
		ev(c, 11 * MS, 1, 1, TT_BWD);
		ev(c, 12 * MS, 0, 1, TT_BWD);
	}
	tt_close(c->s);
	c->s = NULL;
	assert_int_equal(on_node(c, 0, 2048, 0), 2048);
}

/*
 * Persistent tensors stay saved across iterations (and are kept once when
 * saved again); one-shot ones are forgotten at the backward end.
 */
static void test_persistent(void **state)
{
	struct tctx *c = *state;
	struct tt_ioc_stats st;
	unsigned int it, n0;

	/* Iteration 1: layer 1 persistent, layer 2 one-shot. */
	iter_begin(c, 8 * MS);
	ev(c, 0, 1, 1, TT_FWD);
	save(c, 1, 0, 256, TT_EV_PERSISTENT);
	ev(c, 1 * MS, 0, 1, TT_FWD);
	ev(c, 1 * MS, 1, 2, TT_FWD);
	save(c, 2, 1024, 256, 0);
	ev(c, 2 * MS, 0, 2, TT_FWD);
	ev(c, 10 * MS, 1, 2, TT_BWD);
	ev(c, 11 * MS, 0, 2, TT_BWD);
	ev(c, 11 * MS, 1, 1, TT_BWD);
	ev(c, 12 * MS, 0, 1, TT_BWD);

	for (it = 0; it < 3; it++) {
		n0 = nlog(c);
		std_iteration(c, 0);
		/* Layer 1 went out and back, layer 2 never moved. */
		assert_int_equal(nlog(c), n0 + 2);
		assert_int_equal(c->f.log[n0].start, page_addr(0));
		assert_int_equal(c->f.log[n0].node, 1);
		assert_int_equal(c->f.log[n0 + 1].node, 0);
		assert_int_equal(on_node(c, 1024, 256, 0), 256);
	}
	/* Saved again with the same range: still one range of 1 MiB. */
	n0 = nlog(c);
	iter_begin(c, 8 * MS);
	ev(c, 0, 1, 1, TT_FWD);
	save(c, 1, 0, 256, TT_EV_PERSISTENT);
	save(c, 1, 0, 256, TT_EV_PERSISTENT);
	ev(c, 1 * MS, 0, 1, TT_FWD);
	assert_int_equal(nlog(c), n0 + 1);
	assert_int_equal(c->f.log[n0].end - c->f.log[n0].start, 256 * ps);
	st = stats(c);
	assert_int_equal(st.tensors_saved, 4);
	/* Layer 2 is still planned (its average fades), but has no range. */
	assert_int_equal(on_node(c, 1024, 256, 0), 256);
}

/* A layer not in the profile is never evicted, then the profile restarts. */
static void test_unknown_layer(void **state)
{
	struct tctx *c = *state;
	struct tt_ioc_stats st;
	unsigned int n0;

	std_iteration(c, 3);
	iter_begin(c, 8 * MS);
	ev(c, 0, 1, 7, TT_FWD);
	/* a tensor reaching past the mapped range: EFAULT, nothing kept */
	assert_int_equal(tt_tensor_saved_ex(c->s, 7,
					    (void *)(uintptr_t)page_addr(FAKE_PAGES - 1),
					    2 * ps, 0), -EFAULT);
	save(c, 7, 2048, 256, 0);
	ev(c, 1 * MS, 0, 7, TT_FWD);
	ev(c, 2 * MS, 1, 7, TT_BWD);
	ev(c, 3 * MS, 0, 7, TT_BWD);
	assert_int_equal(on_node(c, 2048, 256, 0), 256);
	assert_int_equal(nlog(c), 0);
	st = stats(c);
	assert_int_equal(st.layers_unknown, 1);
	assert_int_equal(st.reprofiles, 0);

	/* The layer set differed: reprofile, nothing moves next time. */
	n0 = nlog(c);
	std_iteration(c, 3);
	st = stats(c);
	assert_int_equal(st.reprofiles, 1);
	assert_int_equal(nlog(c), n0);
	/* Profiled again: evictions resume. */
	std_iteration(c, 3);
	assert_int_equal(nlog(c), n0 + 4);
}

/*
 * Events out of order never break anything: events before any iteration,
 * a missing backward (the data comes back at the next iteration begin), a
 * backward end without its begin (the data comes back then).
 */
static void test_out_of_order(void **state)
{
	struct tctx *c = *state;
	struct tt_ioc_stats st;

	assert_int_equal(tt_layer_end(c->s, 3, TT_BWD), 0);
	assert_int_equal(tt_layer_begin(c->s, 3, TT_BWD), 0);
	save(c, 3, 4000, 4, 0);
	std_iteration(c, 3);

	/* Layer 1 gets no backward events. */
	iter_begin(c, 8 * MS);
	ev(c, 0, 1, 1, TT_FWD);
	save(c, 1, 0, 256, 0);
	ev(c, 1 * MS, 0, 1, TT_FWD);
	ev(c, 1 * MS, 1, 2, TT_FWD);
	save(c, 2, 1024, 256, 0);
	ev(c, 2 * MS, 0, 2, TT_FWD);
	ev(c, 10 * MS, 1, 2, TT_BWD);
	/* The next iteration begins before layer 1's trigger time. */
	assert_int_equal(on_node(c, 0, 256, 1), 256);
	iter_begin(c, 0);
	assert_int_equal(on_node(c, 0, 256, 0), 256);
	/* That iteration deviated: profile again, then a planned one. */
	assert_int_equal(stats(c).reprofiles, 1);
	std_iteration(c, 3);
	std_iteration(c, 3);

	/* Layer 1's backward ends without beginning. */
	iter_begin(c, 8 * MS);
	ev(c, 0, 1, 1, TT_FWD);
	save(c, 1, 0, 256, 0);
	ev(c, 1 * MS, 0, 1, TT_FWD);
	assert_int_equal(on_node(c, 0, 256, 1), 256);
	ev(c, 2 * MS, 0, 1, TT_BWD);
	assert_int_equal(on_node(c, 0, 256, 0), 256);
	/* Its forward again: an error, no eviction in this iteration. */
	ev(c, 3 * MS, 1, 1, TT_FWD);
	ev(c, 4 * MS, 0, 1, TT_FWD);
	assert_int_equal(on_node(c, 0, 256, 0), 256);
	st = stats(c);
	assert_int_equal(st.bytes_evicted, st.bytes_prefetched);
	assert_int_equal(st.bytes_evicted, 5 * MIB);
}

/*
 * Moves that fail are counted, never returned; a range that is no longer
 * mapped is skipped and forgotten.
 */
static void test_errors_counted(void **state)
{
	struct tctx *c = *state;
	struct tt_ioc_stats st;
	unsigned long long left;
	unsigned int n0;

	std_iteration(c, 3);
	c->f.move_err = EIO;
	std_iteration(c, 3);
	st = stats(c);
	assert_int_equal(st.bytes_evicted, 0);
	assert_int_equal(st.total.skipped_unsupported, 512);
	assert_int_equal(st.total.pages, 512);
	c->f.move_err = 0;

	/* Layer 2's persistent range is unmapped: skipped, then forgotten. */
	iter_begin(c, 8 * MS);
	ev(c, 0, 1, 1, TT_FWD);
	save(c, 1, 0, 256, 0);
	ev(c, 1 * MS, 0, 1, TT_FWD);
	ev(c, 1 * MS, 1, 2, TT_FWD);
	save(c, 2, 1024, 256, TT_EV_PERSISTENT);
	c->f.bad_start = page_addr(1024);
	c->f.bad_end = page_addr(1280);
	c->f.bad_err = EFAULT;
	n0 = nlog(c);
	ev(c, 2 * MS, 0, 2, TT_FWD);
	assert_int_equal(nlog(c), n0);
	st = stats(c);
	assert_int_equal(st.total.skipped_not_present, 256);
	c->f.bad_err = 0;
	ev(c, 10 * MS, 1, 2, TT_BWD);
	ev(c, 11 * MS, 0, 2, TT_BWD);
	ev(c, 11 * MS, 1, 1, TT_BWD);
	ev(c, 12 * MS, 0, 1, TT_BWD);
	/* Forgotten: layer 2 has nothing to evict any more. */
	n0 = nlog(c);
	std_iteration(c, 1);
	assert_int_equal(nlog(c), n0 + 2);
	assert_int_equal(c->f.log[n0].start, page_addr(0));

	/*
	 * A full fast node: each chunk's prefetch is tried
	 * TT_SCHED_FETCH_PASSES times, then what is left stays on the slow
	 * node, counted in prefetch_left_bytes, as in the module; tt_close()
	 * brings back only what an episode still holds.
	 */
	c->f.full_node = 0;
	n0 = nlog(c);
	std_iteration(c, 3);
	assert_int_equal(nlog(c), n0 + 2 + 2 * TT_SCHED_FETCH_PASSES);
	assert_int_equal(c->f.log[n0 + 2].node, 0);
	assert_int_equal(c->f.log[n0 + 2 + TT_SCHED_FETCH_PASSES].start,
			 c->f.log[n0 + 1 + 2 * TT_SCHED_FETCH_PASSES].start);
	assert_int_equal(on_node(c, 0, 256, 1), 256);
	st = stats(c);
	assert_int_equal(st.prefetch_left_bytes,
			 on_node(c, 0, 2048, 1) * ps);
	assert_true(st.prefetch_left_bytes >= 256 * ps);
	c->f.full_node = -1;
	/* the next iteration begin brings back what was left, in its call */
	iter_begin(c, 8 * MS);
	assert_int_equal(on_node(c, 0, 2048, 1), 0);
	left = st.prefetch_left_bytes;
	st = stats(c);
	assert_int_equal(st.left_returned_bytes, left);
	assert_int_equal(st.prefetch_left_bytes, left);
	/* an episode still out at close comes back */
	ev(c, 0, 1, 1, TT_FWD);
	save(c, 1, 512, 256, 0);
	ev(c, 1 * MS, 0, 1, TT_FWD);
	assert_int_equal(on_node(c, 512, 256, 1), 256);
	tt_close(c->s);
	c->s = NULL;
	assert_int_equal(on_node(c, 512, 256, 0), 256);
	assert_int_equal(on_node(c, 0, 2048, 1), 0);
}

/*
 * Fast node: automatic = where the pages were before (the majority of the
 * non-slow nodes), else the set fast_node; TT_SCHED_OFF moves nothing.
 */
static void test_nodes(void **state)
{
	struct tctx *c = *state;
	struct tt_ioc_sched cfg = { .valid = TT_SCHED_SET_NODES };
	int i;

	/* Node 2 is a second fast node; layer 1's pages live there. */
	mask_set(&c->f.topo.cpu, 2);
	mask_set(&c->f.topo.mem, 2);
	for (i = 0; i < 256; i++)
		c->f.node[i] = 2;
	for (i = 0; i < 16; i++)
		c->f.node[i] = 1;	/* some already on the slow node */
	std_iteration(c, 3);
	std_iteration(c, 3);
	assert_int_equal(on_node(c, 0, 256, 2), 256);
	assert_int_equal(on_node(c, 1024, 256, 0), 256);
	assert_int_equal(stats(c).total.already_on_node, 16);

	/* fast_node 0 (node 0 is real on the host, so the check passes). */
	cfg.slow_node = -1;
	cfg.fast_node = 0;
	assert_int_equal(tt_sched_set(c->s, &cfg), 0);
	std_iteration(c, 3);
	assert_int_equal(on_node(c, 0, 256, 0), 256);

	/* No slow node at all: nothing is evicted. */
	c->f.topo.nearest_slow = -1;
	i = (int)nlog(c);
	std_iteration(c, 3);
	assert_int_equal(nlog(c), (unsigned int)i);
	c->f.topo.nearest_slow = 1;

	cfg.valid = TT_SCHED_SET_FLAGS;
	cfg.flags = TT_SCHED_OFF;
	assert_int_equal(tt_sched_set(c->s, &cfg), 0);
	std_iteration(c, 3);
	assert_int_equal(nlog(c), (unsigned int)i);
	assert_int_equal(layer_info(c, 1).status, TT_LAYER_ACCEPTED);
}

/* ENOSPC: too many layer ids; rejected events are not counted. */
static void test_enospc(void **state)
{
	struct tctx *c = *state;
	uint32_t id;

	for (id = 0; id < TT_US_MAX_LAYERS; id++)
		assert_int_equal(tt_layer_begin(c->s, id, TT_FWD), 0);
	errno = 0;
	assert_int_equal(tt_layer_begin(c->s, id, TT_FWD), -ENOSPC);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(tt_tensor_saved(c->s, id,
					 (void *)(uintptr_t)page_addr(0), ps),
			 -ENOSPC);
	/* Ignored tensors are counted before any limit. */
	assert_int_equal(tt_tensor_saved(c->s, id,
					 (void *)(uintptr_t)page_addr(0), 1),
			 0);
	assert_int_equal(tt_layer_begin(c->s, 5, TT_BWD), 0);
	assert_int_equal(stats(c).events, TT_US_MAX_LAYERS + 2);
	assert_int_equal(tt_layers(c->s, NULL, 0), TT_US_MAX_LAYERS);
}

/* Many iterations, several threads per pool: everything adds up. */
static void test_many_iterations(void **state)
{
	struct tctx *c = *state;
	struct tt_ioc_stats st;
	int i;

	tt_close(c->s);
	setenv(TT_US_ENV_WORKERS, "3,2", 1);
	c->s = tt_open();
	unsetenv(TT_US_ENV_WORKERS);
	assert_non_null(c->s);
	assert_int_equal(tt_us_set_ops(c->s, &fake_ops, &c->f), 0);
	/* Fast movers: the plan stays "accepted" for both layers. */
	c->f.bps = 1ULL << 40;
	for (i = 0; i < 200; i++)
		std_iteration(c, 3);
	assert_int_equal(tt_us_threads(c->s), 6);
	assert_int_equal(tt_us_set_ops(c->s, &fake_ops, &c->f), -EBUSY);
	st = stats(c);
	assert_int_equal(st.iterations, 200);
	/*
	 * a new session's rates are seeds: its profile iteration probes them
	 * with layer 1's MiB (out and straight back), then 199 planned
	 * iterations move both layers
	 */
	assert_int_equal(st.rate_probes, 1);
	assert_int_equal(st.bytes_evicted, 199 * 2 * MIB + MIB);
	assert_int_equal(st.bytes_prefetched, st.bytes_evicted);
	assert_int_equal(st.ontime_bytes, st.bytes_evicted);
	assert_int_equal(st.late_bytes, 0);
	assert_int_equal(on_node(c, 0, 2048, 0), 2048);
}

/* The real clock: the timer thread sleeps until the trigger time. */
static void test_real_clock(void **state)
{
	struct tctx *c = *state;
	struct tt_layer_info li;
	uint64_t t0;

	tt_close(c->s);
	c->f.real_clock = true;
	c->s = tt_open();
	assert_non_null(c->s);
	assert_int_equal(tt_us_set_ops(c->s, &fake_ops_real_clock, &c->f), 0);
	/* forward end at ~0, backward begin at ~200 ms */
	assert_int_equal(tt_iter_begin(c->s), 0);
	save(c, 1, 0, 256, 0);
	assert_int_equal(tt_layer_end(c->s, 1, TT_FWD), 0);
	usleep(200 * 1000);
	assert_int_equal(tt_layer_begin(c->s, 1, TT_BWD), 0);
	assert_int_equal(tt_layer_end(c->s, 1, TT_BWD), 0);
	t0 = tt_now_ns();
	assert_int_equal(tt_iter_begin(c->s), 0);
	li = layer_info(c, 1);
	assert_int_equal(li.status, TT_LAYER_ACCEPTED);
	save(c, 1, 0, 256, 0);
	assert_int_equal(tt_layer_end(c->s, 1, TT_FWD), 0);
	tt_us_settle(c->s);
	assert_int_equal(on_node(c, 0, 256, 1), 256);
	/* Well before the trigger: still out. */
	usleep(50 * 1000);
	if (tt_now_ns() - t0 + 20 * MS < li.prefetch_ns)
		assert_int_equal(on_node(c, 0, 256, 1), 256);
	/* Then back, without any event (a loaded host may take a while). */
	while (on_node(c, 0, 256, 0) != 256 &&
	       tt_now_ns() < t0 + li.prefetch_ns + 2000 * MS)
		usleep(1000);
	assert_int_equal(on_node(c, 0, 256, 0), 256);
	assert_true(tt_now_ns() >= t0 + li.prefetch_ns);
	assert_int_equal(tt_layer_begin(c->s, 1, TT_BWD), 0);
	li = layer_info(c, 1);
	assert_true(li.last_prefetch_start_ns >= li.prefetch_ns);
	assert_int_equal(li.last_late_bytes, 0);
}

/* TIERTRAIN_MP_WORKERS. */
static void test_workers_env(void **state)
{
	static const char *const bad[] = {
		"", "1", "1,", ",1", "0,1", "1,0", "65,1", "1,65", "1,2,3",
		"a,b", "1;2", " 1,2", "1,2 ", "+1,2", "-1,2", "1,-2",
		"99999999999999999999,1",
	};
	unsigned int e = 0, p = 0;
	struct tt_session *s;
	size_t i;

	(void)state;
	assert_int_equal(tt_us_parse_workers("1,1", &e, &p), 0);
	assert_int_equal(e + p, 2);
	assert_int_equal(tt_us_parse_workers("64,3", &e, &p), 0);
	assert_int_equal(e, 64);
	assert_int_equal(p, 3);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(tt_us_parse_workers(bad[i], &e, &p), -EINVAL);

	setenv("TIERTRAIN_BACKEND", "move_pages", 1);
	setenv(TT_US_ENV_WORKERS, "2;2", 1);
	errno = 0;
	assert_null(tt_open());
	assert_int_equal(errno, EINVAL);
	setenv(TT_US_ENV_WORKERS, "", 1);
	s = tt_open();
	assert_non_null(s);
	tt_close(s);
	unsetenv(TT_US_ENV_WORKERS);
	unsetenv("TIERTRAIN_BACKEND");
}

/*
 * Hints on plain ranges: WILL_USE and PIN_FAST move the pages outside the
 * saved ranges to the fast node before returning (the saved range is the
 * scheduler's); ARCHIVE and RETIRE move nothing (no budget, no pressure);
 * a full fast node gives ENOSPC.
 */
static void test_plain_hint(void **state)
{
	struct tctx *c = *state;
	unsigned int i, n0;

	pthread_mutex_lock(&c->f.lock);
	for (i = 4096; i < 4096 + 256; i++)
		c->f.node[i] = 1;
	pthread_mutex_unlock(&c->f.lock);
	iter_begin(c, 8 * MS);
	ev(c, 0, 1, 1, TT_FWD);
	save(c, 1, 4112, 16, 0);
	n0 = nlog(c);
	assert_int_equal(tt_hint(c->s, (void *)(uintptr_t)page_addr(4096),
				 64 * ps, TT_HINT_WILL_USE), 0);
	assert_int_equal(on_node(c, 4096, 16, 0), 16);
	assert_int_equal(on_node(c, 4112, 16, 1), 16);
	assert_int_equal(on_node(c, 4128, 32, 0), 32);
	assert_int_equal(nlog(c), n0 + 2);
	assert_int_equal(c->f.log[n0].start, page_addr(4096));
	assert_int_equal(c->f.log[n0].end, page_addr(4112));
	assert_int_equal(c->f.log[n0].node, 0);
	assert_int_equal(c->f.log[n0 + 1].start, page_addr(4128));
	assert_int_equal(c->f.log[n0 + 1].end, page_addr(4160));
	assert_true(pthread_equal(c->f.log[n0].thread, pthread_self()));
	assert_int_equal(stats(c).bytes_to_fast, 48 * ps);
	/* ARCHIVE and RETIRE: nothing moves */
	assert_int_equal(tt_hint(c->s, (void *)(uintptr_t)page_addr(4160),
				 32 * ps, TT_HINT_ARCHIVE), 0);
	assert_int_equal(tt_hint(c->s, (void *)(uintptr_t)page_addr(4192),
				 32 * ps, TT_HINT_RETIRE), 0);
	assert_int_equal(nlog(c), n0 + 2);
	assert_int_equal(on_node(c, 4160, 64, 1), 64);
	/* PIN_FAST brings them back too */
	assert_int_equal(tt_hint(c->s, (void *)(uintptr_t)page_addr(4160),
				 32 * ps, TT_HINT_PIN_FAST), 0);
	assert_int_equal(on_node(c, 4160, 32, 0), 32);
	/* no room on the fast node: ENOSPC, the pages stay */
	c->f.full_node = 0;
	assert_int_equal(tt_hint(c->s, (void *)(uintptr_t)page_addr(4192),
				 32 * ps, TT_HINT_WILL_USE), -ENOSPC);
	assert_int_equal(on_node(c, 4192, 32, 1), 32);
	c->f.full_node = -1;
	ev(c, 1 * MS, 0, 1, TT_FWD);
}

/* Moves of the fake mover made by the calling thread since entry @from. */
static unsigned int moves_by_me(struct tctx *c, unsigned int from, int node)
{
	unsigned int i, n = 0;

	pthread_mutex_lock(&c->f.lock);
	for (i = from; i < c->f.nlog; i++)
		n += pthread_equal(c->f.log[i].thread, pthread_self()) &&
		     c->f.log[i].node == node;
	pthread_mutex_unlock(&c->f.lock);
	return n;
}

/*
 * The fast-tier budget (the session's own, as the module's: core/exec.c):
 * accepted and reported; a registration over it makes room before the
 * call returns by evicting victims in the calling thread, even while
 * profiling; the victims' prefetch waits for room while the layer's own
 * tensors fill the budget, and comes back when they are released;
 * lowering the budget makes room in tt_sched_set().
 */
static void test_budget(void **state)
{
	struct tctx *c = *state;
	struct tt_ioc_sched cfg = {
		.valid = TT_SCHED_SET_BUDGET,
		.budget_mib = 2,
	};
	struct tt_ioc_stats st;
	unsigned int n0;

	/* a budget_mib without TT_SCHED_SET_BUDGET: refused, as the module */
	cfg.valid = TT_SCHED_SET_STAY;
	cfg.stay_ns = TT_SCHED_DEF_STAY_NS;
	assert_int_equal(tt_sched_set(c->s, &cfg), -EOPNOTSUPP);
	cfg.valid = TT_SCHED_SET_BUDGET;
	assert_int_equal(tt_sched_set(c->s, &cfg), 0);
	memset(&cfg, 0, sizeof(cfg));
	assert_int_equal(tt_sched_get(c->s, &cfg), 0);
	assert_int_equal(cfg.budget_mib, 2);
	assert_int_equal(stats(c).budget_bytes, 2 * MIB);

	/* Profiling: 4 MiB saved under a 2 MiB budget. */
	iter_begin(c, 8 * MS);
	ev(c, 0, 1, 1, TT_FWD);
	n0 = nlog(c);
	save(c, 1, 0, 1024, 0);
	/* the room was made by this call, before it returned */
	assert_true(moves_by_me(c, n0, 1) > 0);
	st = stats(c);
	assert_true(st.fast_registered_bytes <= 2 * MIB);
	assert_true(st.victims > 0);
	assert_true(st.victim_bytes >= 2 * MIB);
	assert_int_equal(on_node(c, 0, 1024, 1) * ps, st.victim_bytes);
	assert_int_equal(st.bytes_evicted, st.victim_bytes);
	assert_int_equal(st.budget_overruns, 0);
	assert_true(st.fast_peak_bytes <= 2 * MIB);
	ev(c, 1 * MS, 0, 1, TT_FWD);
	/*
	 * The backward begin: the layer's prefetch admits nothing (its own
	 * tensors fill the budget, no colder victim), it waits for room; the
	 * backward end releases the one-shot tensors and it comes back.
	 */
	ev(c, 10 * MS, 1, 1, TT_BWD);
	assert_int_equal(on_node(c, 0, 1024, 0) * ps, 2 * MIB);
	assert_int_equal(stats(c).budget_waits, 1);
	ev(c, 11 * MS, 0, 1, TT_BWD);
	assert_int_equal(on_node(c, 0, 1024, 0), 1024);
	st = stats(c);
	assert_int_equal(st.bytes_prefetched, st.victim_bytes);

	/* No budget: a registration moves nothing. */
	cfg.valid = TT_SCHED_SET_BUDGET;
	cfg.budget_mib = 0;
	assert_int_equal(tt_sched_set(c->s, &cfg), 0);
	assert_int_equal(stats(c).budget_bytes, 0);
	iter_begin(c, 8 * MS);
	ev(c, 0, 1, 1, TT_FWD);
	n0 = nlog(c);
	save(c, 1, 0, 1024, 0);
	assert_int_equal(nlog(c), n0);
	/* A budget set now makes room in tt_sched_set() itself. */
	cfg.budget_mib = 1;
	assert_int_equal(tt_sched_set(c->s, &cfg), 0);
	assert_true(moves_by_me(c, n0, 1) > 0);
	st = stats(c);
	assert_true(st.fast_registered_bytes <= 1 * MIB);
	assert_true(on_node(c, 0, 1024, 1) * ps >= 3 * MIB);
	/* and tt_close() brings the victims back */
	tt_close(c->s);
	c->s = NULL;
	assert_int_equal(on_node(c, 0, 1024, 0), 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workers_env),
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_evict_prefetch),
		T(test_late),
		T(test_late_rescue),
		T(test_sync_late),
		T(test_close_scheduled),
		T(test_close_queued),
		T(test_persistent),
		T(test_plain_hint),
		T(test_unknown_layer),
		T(test_out_of_order),
		T(test_errors_counted),
		T(test_nodes),
		T(test_enospc),
		T(test_many_iterations),
		T(test_real_clock),
		T(test_budget),
#undef T
	};

	ps = tt_page_size();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
