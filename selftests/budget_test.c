// SPDX-License-Identifier: GPL-2.0
/*
 * The fast-tier budget (TT_SCHED_SET_BUDGET, module setting budget_mib;
 * Documentation/scheduler.md, "Fast-tier budget"), driven by a synthetic
 * trainer whose working set is 2-3 times the budget, with a sampler
 * thread reading the residency of the tensors whose registration call has
 * returned (until their layer's backward end is reported).
 *
 *   never_exceeded    a session budget of 12 MiB, 8 layers of 4 MiB: the
 *                     registered bytes found on the fast node never exceed
 *                     the budget by more than one scheduler chunk (max
 *                     excess logged), plus one tensor per overrun (a call
 *                     that found every victim migrating; 2 at most);
 *                     victims were evicted; data intact; everything back
 *                     on the fast node at the end.
 *   archive_first     pages hinted TT_HINT_ARCHIVE are the first victims
 *                     (before colder tensors), then the coldest (the
 *                     oldest saved); pinned pages never.
 *   victim_unmapped   a victim whose memory was unmapped is skipped and
 *                     counted (victims_skipped_pages); the call returns
 *                     within the budget all the same.
 *   no_budget         without a budget nothing changes: no victim, no
 *                     wait, budget_bytes 0, the plan's evictions as ever;
 *                     fast_registered_bytes is kept.
 *   settings          budget_mib without TT_SCHED_SET_BUDGET is refused
 *                     (EOPNOTSUPP), TT_IOC_GET_SCHED reads it back, the
 *                     module parameter budget_mib checks its range.
 *   processes_share   three processes (fork) under a module budget of 24
 *                     MiB, 16 MiB each: the sum of their registered bytes
 *                     on the fast node (sampled by the parent with
 *                     move_pages(2)) stays within the budget plus one
 *                     batch per process; each gets at least its share
 *                     (8 MiB) in force; one is killed: the others' data
 *                     stays intact, their tiering goes on (each evicts
 *                     again: the sampler waits up to 120 s, as two
 *                     survivors in opposite phases need no victim), their
 *                     share grows to 12 MiB (the budget in force), and each
 *                     holds more than the old share of 8 MiB on the fast
 *                     node (sampled after its forward pass, when the
 *                     plan's own evictions may have begun: 10 or 12 MiB).
 *
 * The sampler counts a sample only when the session's bytes_evicted and
 * bytes_prefetched did not change while it read the tensors one by one:
 * otherwise a victim moved out before the read of another tensor moved in
 * could be counted twice.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tt_harness.h"

#define BT_MAXL		8
#define BT_MIB		TT_ST_MIB
#define BT_BALANCING	"/proc/sys/kernel/numa_balancing"
#define BT_BUDGET_PARAM	TT_ST_SYSMOD "/parameters/budget_mib"
#define BT_BATCH_PARAM	TT_ST_SYSMOD "/parameters/batch_pages"

/**
 * struct btr - the synthetic trainer and its sampler
 * @s:          session.
 * @fast:       the fast node.
 * @nl:         layers (ids 1..nl).
 * @sz:         bytes of each layer's tensor.
 * @compute_ms: compute per layer pass (a pass over the tensor, then sleep),
 *              as written: scaled by the fixture's calibration
 *              (tt_st_compute(), tt_st_ms()).
 * @t:          the tensors.
 * @iter:       iterations run.
 * @mu:         protects @reg.
 * @reg:        per layer: its tensor is registered (the call returned and
 *              the backward end is not reported yet).
 * @stop:       tells the sampler to end.
 * @th:         the sampler thread.
 * @max_fast:   the most registered bytes the sampler found on the fast node.
 * @samples:    samples taken.
 * @discarded:  samples thrown away (memory moved while reading).
 * @err:        what failed.
 */
struct btr {
	struct tt_session *s;
	int fast;
	unsigned int nl;
	size_t sz;
	unsigned int compute_ms;
	char *t[BT_MAXL];
	unsigned int iter;
	pthread_mutex_t mu;
	int reg[BT_MAXL];
	volatile int stop;
	pthread_t th;
	uint64_t max_fast;
	uint64_t samples;
	uint64_t discarded;
	char err[256];
};

static int bt_fail(struct btr *b, const char *what, int ret)
{
	snprintf(b->err, sizeof(b->err), "%s: %s", what, strerror(-ret));
	return -1;
}

/* Bytes of [p, p + len) on node @node (TT_IOC_RESIDENCY). */
static int bt_on(struct tt_session *s, const void *p, size_t len, int node,
		 uint64_t *bytes)
{
	uint64_t b[TT_ST_MAX_NODES];
	int ret = tt_residency(s, p, len, b, TT_ST_MAX_NODES);

	if (!ret)
		*bytes = b[node];
	return ret;
}

static void *bt_sampler(void *arg)
{
	struct btr *b = arg;
	struct tt_ioc_stats x, y;
	uint64_t sum, on = 0;
	unsigned int l;
	int bad;

	while (!b->stop) {
		if (tt_stats(b->s, &x))
			break;
		sum = 0;
		bad = 0;
		pthread_mutex_lock(&b->mu);
		for (l = 0; l < b->nl; l++) {
			if (!b->reg[l])
				continue;
			if (bt_on(b->s, b->t[l], b->sz, b->fast, &on))
				bad = 1;
			sum += on;
		}
		pthread_mutex_unlock(&b->mu);
		if (tt_stats(b->s, &y))
			break;
		if (bad || x.bytes_evicted != y.bytes_evicted ||
		    x.bytes_prefetched != y.bytes_prefetched) {
			b->discarded++;
		} else {
			b->samples++;
			if (sum > b->max_fast)
				b->max_fast = sum;
		}
		usleep(300);
	}
	return NULL;
}

static void bt_reg(struct btr *b, unsigned int l, int on)
{
	pthread_mutex_lock(&b->mu);
	b->reg[l] = on;
	pthread_mutex_unlock(&b->mu);
}

static uint64_t bt_seed(unsigned int iter, unsigned int l)
{
	return iter * 64 + l + 1000;
}

/* Forward pass of layer @l (0-based): fill, register, compute. */
static int bt_forward(struct btr *b, unsigned int l)
{
	int ret;

	ret = tt_layer_begin(b->s, l + 1, TT_FWD);
	if (ret)
		return bt_fail(b, "forward begin", ret);
	tt_st_fill(b->t[l], b->sz, bt_seed(b->iter, l));
	ret = tt_tensor_saved(b->s, l + 1, b->t[l], b->sz);
	if (ret)
		return bt_fail(b, "tensor saved", ret);
	bt_reg(b, l, 1);
	tt_st_compute(b->t[l], b->sz, b->compute_ms);
	ret = tt_layer_end(b->s, l + 1, TT_FWD);
	return ret ? bt_fail(b, "forward end", ret) : 0;
}

/* Backward pass of layer @l: check the data, compute, unregister. */
static int bt_backward(struct btr *b, unsigned int l)
{
	long long off;
	int ret;

	ret = tt_layer_begin(b->s, l + 1, TT_BWD);
	if (ret)
		return bt_fail(b, "backward begin", ret);
	off = tt_st_check(b->t[l], b->sz, bt_seed(b->iter, l));
	if (off != -1) {
		snprintf(b->err, sizeof(b->err),
			 "iteration %u layer %u: data differs at offset %lld",
			 b->iter, l + 1, off);
		return -1;
	}
	tt_st_compute(b->t[l], b->sz, b->compute_ms);
	bt_reg(b, l, 0);
	ret = tt_layer_end(b->s, l + 1, TT_BWD);
	return ret ? bt_fail(b, "backward end", ret) : 0;
}

static int bt_iteration(struct btr *b)
{
	unsigned int l;
	int ret;

	ret = tt_iter_begin(b->s);
	if (ret)
		return bt_fail(b, "iteration begin", ret);
	for (l = 0; l < b->nl; l++)
		if (bt_forward(b, l))
			return -1;
	usleep(tt_st_ms(b->compute_ms) * 1000);
	for (l = b->nl; l-- > 0;)
		if (bt_backward(b, l))
			return -1;
	b->iter++;
	return 0;
}

/* Wait (at most 10 s, scaled) until every tensor is on the fast node again. */
static int bt_all_fast(struct btr *b)
{
	uint64_t end = tt_st_now_ns() + tt_st_ms(10000) * 1000000ULL, on, sum;
	unsigned int l;

	do {
		sum = 0;
		for (l = 0; l < b->nl; l++) {
			if (bt_on(b->s, b->t[l], b->sz, b->fast, &on))
				return bt_fail(b, "residency", -EIO);
			sum += on;
		}
		if (sum == b->nl * b->sz)
			return 0;
		usleep(5000);
	} while (tt_st_now_ns() < end);
	snprintf(b->err, sizeof(b->err), "%llu bytes off the fast node after %u ms",
		 (unsigned long long)(b->nl * b->sz - sum), tt_st_ms(10000));
	return -1;
}

static int bt_budget(struct tt_session *s, uint32_t mib)
{
	struct tt_ioc_sched c = { .valid = TT_SCHED_SET_BUDGET, .budget_mib = mib };

	return tt_sched_set(s, &c);
}

/* The scheduler's chunk in bytes: batch_pages rounded up to 2 MiB. */
static uint64_t bt_batch(void)
{
	const uint64_t huge = 2 * BT_MIB;
	long long pages = 512;

	tt_st_read_ll(BT_BATCH_PARAM, &pages);
	return ((uint64_t)pages * tt_page_size() + huge - 1) / huge * huge;
}

FIXTURE(budget)
{
	struct tt_st_topo topo;
	struct btr b;
	long long balancing;	/* to restore; -1: untouched */
	int global_set;		/* budget_mib written: set it back to 0 */
	pid_t kids[3];		/* processes_share's children still to reap */
};

FIXTURE_SETUP(budget)
{
	unsigned int l;

	memset(&self->b, 0, sizeof(self->b));
	memset(self->kids, 0, sizeof(self->kids));
	self->balancing = -1;
	self->global_set = 0;
	TT_SETUP_NODES(&self->topo, 1);
	if (access(BT_BUDGET_PARAM, F_OK))
		SKIP(return, "the module has no budget_mib parameter");
	/* NUMA balancing would pull touched pages back behind our back */
	ASSERT_EQ(0, tt_st_read_ll(BT_BALANCING, &self->balancing));
	ASSERT_EQ(0, tt_st_write_file(BT_BALANCING, "0"));
	TT_OPEN_KERNEL_SESSION(&self->b.s);
	/* rates known: the profile iterations move only what the budget does */
	TT_CALIBRATE_RATES(&self->topo, 4 * BT_MIB, self->b.s);
	pthread_mutex_init(&self->b.mu, NULL);
	self->b.fast = self->topo.fast;
	self->b.nl = BT_MAXL;
	self->b.sz = 4 * BT_MIB;
	self->b.compute_ms = 10;
	for (l = 0; l < BT_MAXL; l++) {
		self->b.t[l] = tt_st_map(self->b.sz, -1);
		ASSERT_NE(NULL, self->b.t[l]);
	}
}

FIXTURE_TEARDOWN(budget)
{
	unsigned int l;
	char v[32];

	if (self->b.th) {
		self->b.stop = 1;
		pthread_join(self->b.th, NULL);
	}
	for (l = 0; l < 3; l++) {
		if (self->kids[l] <= 0)
			continue;
		kill(self->kids[l], SIGKILL);
		waitpid(self->kids[l], NULL, 0);
	}
	tt_close(self->b.s);
	for (l = 0; l < BT_MAXL; l++)
		if (self->b.t[l])
			munmap(self->b.t[l], self->b.sz);
	if (self->global_set)
		tt_st_write_file(BT_BUDGET_PARAM, "0");
	if (self->balancing >= 0) {
		snprintf(v, sizeof(v), "%lld", self->balancing);
		tt_st_write_file(BT_BALANCING, v);
	}
}

#define BT_RUN(b) do {							\
	ASSERT_EQ(0, bt_iteration(b)) TH_LOG("%s", (b)->err);		\
} while (0)

TEST_F_TIMEOUT(budget, never_exceeded, 300)
{
	const uint64_t budget = 12 * BT_MIB, batch = bt_batch();
	struct btr *b = &self->b;
	struct tt_ioc_stats st;
	struct tt_ioc_sched c;
	unsigned int i;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, bt_budget(b->s, budget / BT_MIB));
	ASSERT_EQ(0, tt_sched_get(b->s, &c));
	ASSERT_EQ(budget / BT_MIB, c.budget_mib);
	ASSERT_EQ(0, pthread_create(&b->th, NULL, bt_sampler, b));
	for (i = 0; i < 6; i++)
		BT_RUN(b);
	b->stop = 1;
	pthread_join(b->th, NULL);
	b->th = 0;
	ASSERT_EQ(0, tt_stats(b->s, &st));
	TH_LOG("working set %u MiB, budget %llu MiB, batch %llu KiB: max %.2f MiB registered on the fast node (excess %.2f MiB) in %llu samples (%llu discarded: memory moving)",
	       (unsigned int)(b->nl * b->sz / BT_MIB),
	       (unsigned long long)(budget / BT_MIB),
	       (unsigned long long)(batch >> 10), b->max_fast / 1048576.0,
	       b->max_fast > budget ? (b->max_fast - budget) / 1048576.0 : 0.0,
	       (unsigned long long)b->samples, (unsigned long long)b->discarded);
	TH_LOG("victims %llu (%llu MiB, %llu skipped pages), waits %llu, overruns %llu, accounted peak %.2f MiB, evicted %llu MiB, prefetched %llu MiB, late %llu MiB, heat w_f %llu w_r %llu w_s %llu w_l %llu",
	       (unsigned long long)st.victims,
	       (unsigned long long)(st.victim_bytes >> 20),
	       (unsigned long long)st.victims_skipped_pages,
	       (unsigned long long)st.budget_waits,
	       (unsigned long long)st.budget_overruns,
	       st.fast_peak_bytes / 1048576.0,
	       (unsigned long long)(st.bytes_evicted >> 20),
	       (unsigned long long)(st.bytes_prefetched >> 20),
	       (unsigned long long)(st.late_bytes >> 20),
	       (unsigned long long)st.heat_wf, (unsigned long long)st.heat_wr,
	       (unsigned long long)st.heat_ws, (unsigned long long)st.heat_wl);
	ASSERT_LT(100, b->samples) TH_LOG("too few samples to say anything");
	/*
	 * Within the budget plus one chunk, except by what an overrun
	 * registered: a call that found every victim in a migration (a
	 * loaded host slows them) returns over the budget, by its own
	 * tensor at most, rather than wait for room forever (the uapi
	 * header, "Fast-tier budget")
	 */
	ASSERT_GE(2, st.budget_overruns);
	ASSERT_LE(b->max_fast, budget + batch + st.budget_overruns * b->sz);
	ASSERT_LE(st.fast_peak_bytes,
		  budget + batch + st.budget_overruns * b->sz);
	ASSERT_EQ(budget, st.budget_bytes);
	ASSERT_LT(0, st.victims);
	/* every registration was made room for: nothing is registered now */
	ASSERT_EQ(0, st.fast_registered_bytes);
	ASSERT_EQ(0, bt_all_fast(b)) TH_LOG("%s", b->err);
}

/* Register layer @l's tensor in a forward pass that stays open. */
static int bt_save(struct btr *b, unsigned int l)
{
	int ret = tt_layer_begin(b->s, l + 1, TT_FWD);

	if (!ret) {
		tt_st_fill(b->t[l], b->sz, bt_seed(b->iter, l));
		ret = tt_tensor_saved(b->s, l + 1, b->t[l], b->sz);
	}
	if (!ret)
		ret = tt_layer_end(b->s, l + 1, TT_FWD);
	return ret;
}

/* Bytes of layer @l's tensor off the fast node now. */
static uint64_t bt_slow(struct btr *b, unsigned int l)
{
	uint64_t on = 0;

	bt_on(b->s, b->t[l], b->sz, b->fast, &on);
	return b->sz - on;
}

TEST_F_TIMEOUT(budget, archive_first, 120)
{
	struct btr *b = &self->b;
	struct tt_ioc_stats st;
	unsigned int l;

	TT_SKIP_IF_SETUP_SKIPPED();
	/* profiling iteration: no plan, only the budget moves anything */
	ASSERT_EQ(0, bt_budget(b->s, 10));
	ASSERT_EQ(0, tt_iter_begin(b->s));
	ASSERT_EQ(0, bt_save(b, 0));
	ASSERT_EQ(0, tt_hint(b->s, b->t[0], b->sz, TT_HINT_PIN_FAST));
	ASSERT_EQ(0, bt_save(b, 1));
	ASSERT_EQ(0, tt_hint(b->s, b->t[2], b->sz, TT_HINT_ARCHIVE));
	ASSERT_EQ(0, bt_save(b, 2));
	/* 12 MiB registered, 10 allowed: 2 MiB of the archived layer 3 */
	ASSERT_EQ(0, tt_stats(b->s, &st));
	ASSERT_EQ(0, bt_slow(b, 0));
	ASSERT_EQ(0, bt_slow(b, 1));
	ASSERT_EQ(2 * BT_MIB, bt_slow(b, 2));
	ASSERT_EQ(2 * BT_MIB, st.victim_archived_bytes);
	ASSERT_EQ(10 * BT_MIB, st.fast_registered_bytes);
	/* 4 more: the other 2 archived MiB, then the coldest unpinned: layer 2 */
	ASSERT_EQ(0, bt_save(b, 3));
	ASSERT_EQ(0, tt_stats(b->s, &st));
	ASSERT_EQ(0, bt_slow(b, 0));
	ASSERT_EQ(2 * BT_MIB, bt_slow(b, 1));
	ASSERT_EQ(4 * BT_MIB, bt_slow(b, 2));
	ASSERT_EQ(0, bt_slow(b, 3));
	ASSERT_EQ(4 * BT_MIB, st.victim_archived_bytes);
	ASSERT_EQ(6 * BT_MIB, st.victim_bytes);
	ASSERT_EQ(10 * BT_MIB, st.fast_registered_bytes);
	ASSERT_EQ(0, st.budget_overruns);
	TH_LOG("heat weights after two victim rounds: w_f %llu w_r %llu w_s %llu w_l %llu",
	       (unsigned long long)st.heat_wf, (unsigned long long)st.heat_wr,
	       (unsigned long long)st.heat_ws, (unsigned long long)st.heat_wl);
	/* the backward passes: everything comes back for its pass, intact */
	usleep(1000);
	for (l = 4; l-- > 0;)
		ASSERT_EQ(0, bt_backward(b, l)) TH_LOG("%s", b->err);
	ASSERT_EQ(0, tt_stats(b->s, &st));
	ASSERT_EQ(0, st.fast_registered_bytes);
	ASSERT_EQ(0, st.budget_overruns);
	b->nl = 4;
	ASSERT_EQ(0, bt_all_fast(b)) TH_LOG("%s", b->err);
}

TEST_F_TIMEOUT(budget, victim_unmapped, 120)
{
	struct btr *b = &self->b;
	struct tt_ioc_stats st;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, bt_budget(b->s, 6));
	ASSERT_EQ(0, tt_iter_begin(b->s));
	ASSERT_EQ(0, bt_save(b, 0));
	/* the oldest, the first victim, loses its memory */
	ASSERT_EQ(0, munmap(b->t[0], b->sz));
	b->t[0] = NULL;
	ASSERT_EQ(0, bt_save(b, 1));
	ASSERT_EQ(0, tt_stats(b->s, &st));
	TH_LOG("victims %llu, skipped pages %llu, victim bytes %llu, fast %llu",
	       (unsigned long long)st.victims,
	       (unsigned long long)st.victims_skipped_pages,
	       (unsigned long long)st.victim_bytes,
	       (unsigned long long)st.fast_registered_bytes);
	ASSERT_LT(0, st.victims_skipped_pages);
	ASSERT_LE(st.fast_registered_bytes, 6 * BT_MIB);
	ASSERT_EQ(0, st.budget_overruns);
	ASSERT_EQ(0, bt_slow(b, 1));
	ASSERT_EQ(0, bt_backward(b, 1)) TH_LOG("%s", b->err);
}

TEST_F_TIMEOUT(budget, no_budget, 300)
{
	struct btr *b = &self->b;
	struct tt_ioc_stats st;
	unsigned int i;

	TT_SKIP_IF_SETUP_SKIPPED();
	b->nl = 4;
	for (i = 0; i < 4; i++)
		BT_RUN(b);
	ASSERT_EQ(0, tt_stats(b->s, &st));
	TH_LOG("no budget: evicted %llu MiB, peak registered on the fast tier %.2f MiB",
	       (unsigned long long)(st.bytes_evicted >> 20),
	       st.fast_peak_bytes / 1048576.0);
	ASSERT_EQ(0, st.budget_bytes);
	ASSERT_EQ(0, st.victims);
	ASSERT_EQ(0, st.victim_bytes);
	ASSERT_EQ(0, st.budget_waits);
	ASSERT_EQ(0, st.budget_overruns);
	ASSERT_LT(0, st.bytes_evicted);
	ASSERT_LE(st.fast_peak_bytes, b->nl * b->sz);
	ASSERT_LT(0, st.fast_peak_bytes);
	ASSERT_EQ(0, st.fast_registered_bytes);
	ASSERT_EQ(1024, st.heat_wf);
	ASSERT_EQ(1024, st.heat_wr);
}

TEST_F(budget, settings)
{
	struct tt_ioc_sched c = { .budget_mib = 5 };
	long long v;

	TT_SKIP_IF_SETUP_SKIPPED();
	/* the old reserved field: not 0 without the bit */
	ASSERT_EQ(-EOPNOTSUPP, tt_sched_set(self->b.s, &c));
	ASSERT_EQ(EOPNOTSUPP, errno);
	c.valid = TT_SCHED_SET_BUDGET;
	ASSERT_EQ(0, tt_sched_set(self->b.s, &c));
	memset(&c, 0, sizeof(c));
	ASSERT_EQ(0, tt_sched_get(self->b.s, &c));
	ASSERT_TRUE(c.valid & TT_SCHED_SET_BUDGET);
	ASSERT_EQ(5, c.budget_mib);
	/* what GET returned is a valid SET */
	ASSERT_EQ(0, tt_sched_set(self->b.s, &c));
	c.valid = TT_SCHED_SET_BUDGET;
	c.budget_mib = 0;
	ASSERT_EQ(0, tt_sched_set(self->b.s, &c));
	ASSERT_EQ(0, tt_sched_get(self->b.s, &c));
	ASSERT_EQ(0, c.budget_mib);
	/* the module setting */
	ASSERT_EQ(0, tt_st_read_ll(BT_BUDGET_PARAM, &v));
	ASSERT_EQ(0, v);
	self->global_set = 1;
	ASSERT_NE(0, tt_st_write_file(BT_BUDGET_PARAM, "1048577"));
	ASSERT_NE(0, tt_st_write_file(BT_BUDGET_PARAM, "x"));
	ASSERT_EQ(0, tt_st_write_file(BT_BUDGET_PARAM, "64"));
	ASSERT_EQ(0, tt_st_read_ll(BT_BUDGET_PARAM, &v));
	ASSERT_EQ(64, v);
	ASSERT_EQ(0, tt_st_write_file(BT_BUDGET_PARAM, "0"));
}

/*
 * processes_share: what each child publishes, in memory shared with the
 * parent (a seqlock around the set of registered tensors).
 */
#define PS_N		3
#define PS_L		4
struct ps_child {
	volatile uint32_t seq;
	int reg[PS_L];
	uint64_t addr[PS_L];
	uint64_t len;
	volatile uint64_t iters;
	volatile uint64_t evicted;
	volatile uint64_t min_budget_full;	/* phase 1: least budget_bytes while holding >= 1/3 */
	volatile uint64_t max_budget;		/* phase 2: the most budget_bytes */
	volatile uint64_t max_fast;		/* accounted, per phase */
	volatile int phase;
	volatile int stop;
	volatile int failed;
	char msg[300];
};

static void ps_set(struct ps_child *p, unsigned int l, int on)
{
	p->seq++;
	__sync_synchronize();
	p->reg[l] = on;
	__sync_synchronize();
	p->seq++;
}

/* A child: train until told to stop; data checked in every backward pass. */
static void ps_run(struct ps_child *p, int fast)
{
	struct btr b;
	struct tt_ioc_stats st;
	unsigned int l;
	int ret;

	memset(&b, 0, sizeof(b));
	b.s = tt_open();
	if (!b.s) {
		snprintf(p->msg, sizeof(p->msg), "tt_open: %s", strerror(errno));
		p->failed = 1;
		_exit(1);
	}
	b.fast = fast;
	b.nl = PS_L;
	b.sz = p->len;
	b.compute_ms = 10;
	pthread_mutex_init(&b.mu, NULL);
	for (l = 0; l < PS_L; l++)
		b.t[l] = (char *)(uintptr_t)p->addr[l];
	while (!p->stop) {
		ret = tt_iter_begin(b.s);
		for (l = 0; !ret && l < PS_L; l++) {
			ret = bt_forward(&b, l);
			ps_set(p, l, 1);
			/* what it holds, after each save */
			if (!ret && !tt_stats(b.s, &st) &&
			    st.fast_registered_bytes > p->max_fast)
				p->max_fast = st.fast_registered_bytes;
		}
		usleep(tt_st_ms(b.compute_ms) * 1000);
		if (!ret && !tt_stats(b.s, &st)) {
			/* all four saved: 16 MiB held, at least a third demanded */
			if (p->phase == 1 && st.budget_bytes < p->min_budget_full)
				p->min_budget_full = st.budget_bytes;
			if (p->phase == 2 && st.budget_bytes > p->max_budget)
				p->max_budget = st.budget_bytes;
			if (st.fast_registered_bytes > p->max_fast)
				p->max_fast = st.fast_registered_bytes;
		}
		for (l = PS_L; !ret && l-- > 0;) {
			ps_set(p, l, 0);
			ret = bt_backward(&b, l);
		}
		if (ret) {
			snprintf(p->msg, sizeof(p->msg), "iteration %u: %s",
				 b.iter, b.err);
			p->failed = 1;
			_exit(1);
		}
		b.iter++;
		if (!tt_stats(b.s, &st))
			p->evicted = st.bytes_evicted;
		p->iters = b.iter;
	}
	tt_close(b.s);
	_exit(0);
}

/* Pages of the child's registered tensors on @fast, via move_pages(2). */
static long long ps_fast_pages(pid_t pid, struct ps_child *p, int fast,
			       void **pages, int *status, size_t ps)
{
	uint32_t seq;
	int reg[PS_L];
	size_t n, i, per = p->len / ps;
	unsigned int l;
	long long on = 0;

	do {
		seq = p->seq;
		__sync_synchronize();
		memcpy(reg, p->reg, sizeof(reg));
		__sync_synchronize();
	} while ((seq & 1) || seq != p->seq);
	for (l = 0; l < PS_L; l++) {
		if (!reg[l])
			continue;
		for (i = 0; i < per; i++)
			pages[i] = (char *)(uintptr_t)p->addr[l] + i * ps;
		n = per;
		if (syscall(SYS_move_pages, pid, n, pages, NULL, status, 0))
			return -errno;
		for (i = 0; i < n; i++)
			on += status[i] == fast;
	}
	return on;
}

/*
 * Sample the sum of the registered bytes of children @from..PS_N-1 on the
 * fast node until each did @more iterations past @it0, accounted more
 * than @above bytes on the fast tier and, unless @ev0 is NULL, evicted
 * more than @ev0 bytes (at most 120 s); the largest sum goes to
 * *@max_sum. Return: 0, 1 + the index of a child that failed, or
 * -errno of move_pages(2).
 */
static int ps_sample(const pid_t *pid, struct ps_child *pc, int from,
		     const uint64_t *it0, uint64_t more, uint64_t above,
		     const uint64_t *ev0, int fast, void **pages, int *status,
		     uint64_t *max_sum, uint64_t *samples)
{
	const size_t ps = tt_page_size();
	uint64_t end = tt_st_now_ns() + 120000000000ULL;
	int i;

	for (;;) {
		uint64_t sum = 0;
		int done = 1;

		for (i = from; i < PS_N; i++) {
			long long on;

			if (pc[i].failed)
				return 1 + i;
			on = ps_fast_pages(pid[i], &pc[i], fast, pages, status, ps);
			if (on < 0)
				return on;
			sum += on * ps;
			done &= pc[i].iters >= it0[i] + more &&
				pc[i].max_fast > above &&
				(!ev0 || pc[i].evicted > ev0[i]);
		}
		(*samples)++;
		if (sum > *max_sum)
			*max_sum = sum;
		if (done || tt_st_now_ns() > end)
			return 0;
		usleep(500);
	}
}

TEST_F_TIMEOUT(budget, processes_share, 300)
{
	const uint64_t g = 24 * BT_MIB, batch = bt_batch(), len = 4 * BT_MIB;
	const size_t ps = tt_page_size();
	struct ps_child *pc;
	pid_t pid[PS_N];
	void **pages;
	int *status, alive[PS_N], i, wst, ret;
	uint64_t max_sum = 0, samples = 0, it0[PS_N], ev0[PS_N];
	unsigned int l;

	TT_SKIP_IF_SETUP_SKIPPED();
	pc = mmap(NULL, PS_N * sizeof(*pc), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pc);
	memset(pc, 0, PS_N * sizeof(*pc));
	pages = calloc(len / ps, sizeof(*pages));
	status = calloc(len / ps, sizeof(*status));
	ASSERT_NE(NULL, pages);
	ASSERT_NE(NULL, status);
	self->global_set = 1;
	ASSERT_EQ(0, tt_st_write_file(BT_BUDGET_PARAM, "24"));
	for (i = 0; i < PS_N; i++) {
		pc[i].len = len;
		pc[i].min_budget_full = ~0ULL;
		pc[i].phase = 1;
		for (l = 0; l < PS_L; l++) {
			void *m = tt_st_map(len, -1);

			ASSERT_NE(NULL, m);
			pc[i].addr[l] = (uintptr_t)m;
		}
	}
	for (i = 0; i < PS_N; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			ps_run(&pc[i], self->topo.fast);
		self->kids[i] = pid[i];
		alive[i] = 1;
	}
	/* phase 1: three sessions; sample until each did 4 iterations */
	for (i = 0; i < PS_N; i++)
		it0[i] = 0;
	ret = ps_sample(pid, pc, 0, it0, 4, 0, NULL, self->topo.fast, pages,
			status, &max_sum, &samples);
	ASSERT_EQ(0, ret) TH_LOG("%s", ret > 0 ? pc[ret - 1].msg :
				 strerror(-ret));
	TH_LOG("3 processes, 16 MiB each, module budget 24 MiB: max %.2f MiB registered on the fast node in %llu samples (limit %.2f); least budget in force %.2f MiB, accounted peaks %.2f %.2f %.2f MiB",
	       max_sum / 1048576.0, (unsigned long long)samples,
	       (g + PS_N * batch) / 1048576.0,
	       pc[0].min_budget_full / 1048576.0,
	       pc[0].max_fast / 1048576.0, pc[1].max_fast / 1048576.0,
	       pc[2].max_fast / 1048576.0);
	for (i = 0; i < PS_N; i++) {
		ASSERT_LE(4, pc[i].iters) TH_LOG("child %d did %llu iterations", i,
						 (unsigned long long)pc[i].iters);
		/* at least an equal third while holding at least a third */
		ASSERT_LE(g / PS_N, pc[i].min_budget_full);
		/* and it used it */
		ASSERT_LE(g / PS_N / 2, pc[i].max_fast);
	}
	ASSERT_LE(max_sum, g + PS_N * batch);

	/* phase 2: one killed; the others go on, with its share */
	ASSERT_EQ(0, kill(pid[0], SIGKILL));
	ASSERT_EQ(pid[0], waitpid(pid[0], &wst, 0));
	self->kids[0] = 0;
	alive[0] = 0;
	/* its file is closed: from here on the shares are the survivors' */
	for (i = 1; i < PS_N; i++) {
		pc[i].phase = 2;
		pc[i].max_fast = 0;
		it0[i] = pc[i].iters;
		ev0[i] = pc[i].evicted;
	}
	max_sum = 0;
	/*
	 * Room is filled as the survivors' prefetches come: sample until
	 * each held more than the old share could (a third plus one chunk)
	 * and evicted again. A survivor whose plan keeps its layers fast
	 * evicts only for the budget, while the two hold more than 24 MiB
	 * together: in opposite phases (one saving while the other frees,
	 * 20 MiB at most) neither does, for as long as their phases stay
	 * apart (seen for more than 3 iterations).
	 */
	ret = ps_sample(pid, pc, 1, it0, 3, g / PS_N + batch, ev0,
			self->topo.fast, pages, status, &max_sum, &samples);
	ASSERT_EQ(0, ret) TH_LOG("%s", ret > 0 ? pc[ret - 1].msg :
				 strerror(-ret));
	for (i = 1; i < PS_N; i++)
		pc[i].stop = 1;
	for (i = 1; i < PS_N; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &wst, 0));
		self->kids[i] = 0;
		alive[i] = 0;
		ASSERT_TRUE(WIFEXITED(wst));
		ASSERT_EQ(0, WEXITSTATUS(wst)) TH_LOG("child %d: %s", i, pc[i].msg);
	}
	TH_LOG("after the kill: max %.2f MiB on the fast node; budget in force %.2f %.2f MiB, accounted peaks %.2f %.2f MiB; iterations +%llu +%llu",
	       max_sum / 1048576.0, pc[1].max_budget / 1048576.0,
	       pc[2].max_budget / 1048576.0, pc[1].max_fast / 1048576.0,
	       pc[2].max_fast / 1048576.0,
	       (unsigned long long)(pc[1].iters - it0[1]),
	       (unsigned long long)(pc[2].iters - it0[2]));
	for (i = 1; i < PS_N; i++) {
		ASSERT_LE(it0[i] + 3, pc[i].iters);
		/* tiering went on */
		ASSERT_LT(ev0[i], pc[i].evicted);
		/* the dead one's share is theirs: at least half of 24 MiB */
		ASSERT_LE(g / 2, pc[i].max_budget);
		/*
		 * and it holds more than the old share allowed, a third
		 * plus one chunk (not more than its phase-1 peak: before the
		 * others registered, a child can hold up to its 16 MiB)
		 */
		ASSERT_LT(g / PS_N + batch, pc[i].max_fast);
	}
	ASSERT_LE(max_sum, g + 2 * batch);
	for (i = 0; i < PS_N; i++)
		ASSERT_EQ(0, alive[i]);
	for (i = 0; i < PS_N; i++)
		for (l = 0; l < PS_L; l++)
			munmap((void *)(uintptr_t)pc[i].addr[l], len);
	munmap(pc, PS_N * sizeof(*pc));
	free(pages);
	free(status);
}

TEST_HARNESS_MAIN
