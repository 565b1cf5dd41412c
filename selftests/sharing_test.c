// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions share the scheduler's evict and prefetch pools (one worker each
 * by default) fairly: a work item moves at most one slice of its layer and
 * re-queues itself behind the work queued meanwhile
 * (Documentation/scheduler.md, "Sharing the pools").
 *
 *   huge_layer_neighbour  process A trains one 1.25 GiB layer, whose
 *                         eviction and prefetch take seconds in the guest;
 *                         meanwhile this process (B) trains 4 layers of
 *                         2 MiB: while A's eviction runs, each of B's
 *                         evictions starts (or is given up, its prefetch
 *                         due before it could end) within SH_BOUND_MS (x
 *                         TT_ST_TIME_MUL) of its forward end, or within
 *                         SH_SLICES of A's slices at the rate A's eviction
 *                         measured when that is longer (a loaded host
 *                         stalls the guest's vCPUs; without the slices
 *                         B waits for the rest of A's whole eviction,
 *                         seconds more); while A's
 *                         prefetch runs, not all of B's prefetches are
 *                         late. Data intact in both.
 *   own_order             one session's two 64 MiB layers, evicted one
 *                         slice at a time, still finish in their queue
 *                         order: the second starts after the first ended.
 *                         Each iteration leaves 2 s (x TT_ST_TIME_MUL)
 *                         between the forward and the backward pass: at
 *                         the rates it sets (1 TB/s) the plan accepts both
 *                         layers, and the second eviction, queued behind
 *                         the first's real one, must still start before
 *                         its prefetch is due, or it is not started
 *                         (Documentation/scheduler.md, "Execution").
 */
#include <errno.h>
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

#define SH_A_SIZE	(1280 * TT_ST_MIB)
#define SH_B_LAYERS	4
#define SH_B_SIZE	(2 * TT_ST_MIB)
#define SH_BOUND_MS	1000ULL
#define SH_SLICE	(16ULL * TT_ST_MIB)	/* core/exec.h TT_EXEC_SLICE_BYTES */
#define SH_SLICES	8ULL
#define SH_TERA		(1000ULL * 1000 * 1000 * 1000)
#define SH_MS		1000000ULL

/* A's progress, in memory shared with B. */
enum { SH_INIT, SH_PROFILED, SH_EVICTING, SH_PREFETCHING, SH_DONE, SH_FAILED };

struct sh_shared {
	volatile int a_phase;
	volatile int b_go;		/* B profiled: A may start its planned iteration */
	volatile int b_done;		/* B's rounds are over */
	uint64_t a_evict_ns;		/* A's eviction time (TT_IOC_LAYERS) */
	uint64_t a_evict_end;		/* when A saw its eviction end (CLOCK_MONOTONIC) */
	uint64_t a_prefetch_ns;		/* A's prefetch time */
	uint64_t a_prefetch_end;	/* when A saw its prefetch end */
	char err[256];
};

/* The session's layers_dropped (TT_IOC_STATS), ~0 when it cannot be read. */
static uint64_t sh_dropped(struct tt_session *s)
{
	struct tt_ioc_stats st;

	return tt_stats(s, &st) ? ~0ULL : st.layers_dropped;
}

static int sh_layer(struct tt_session *s, uint32_t id, struct tt_layer_info *out)
{
	struct tt_layer_info info[SH_B_LAYERS + 1];
	int n = tt_layers(s, info, SH_B_LAYERS + 1), i;

	for (i = 0; i < n; i++) {
		if (info[i].layer == id) {
			*out = info[i];
			return 0;
		}
	}
	return -ENOENT;
}

static int sh_rates(struct tt_session *s, uint64_t er, uint64_t pr)
{
	struct tt_ioc_sched c = {
		.valid = TT_SCHED_SET_RATES, .er_bps = er, .pr_bps = pr,
	};

	return tt_sched_set(s, &c);
}

/* Wait until @cond (re-evaluated) or @ms passed; true when @cond. */
#define SH_WAIT(cond, ms) ({						\
	uint64_t _end = tt_st_now_ns() + (uint64_t)(ms) * SH_MS;	\
	while (!(cond) && tt_st_now_ns() < _end)			\
		usleep(2000);						\
	!!(cond);							\
})

static int sh_a_fail(struct sh_shared *sh, const char *what, int ret)
{
	snprintf(sh->err, sizeof(sh->err), "A: %s: %s", what, strerror(-ret));
	sh->a_phase = SH_FAILED;
	return 1;
}

/* One iteration of A's single layer; @planned: report the phases to B. */
static int sh_a_iteration(struct tt_session *s, struct sh_shared *sh, char *buf,
			  int planned)
{
	struct tt_layer_info li = {};
	int ret;

	ret = tt_iter_begin(s);
	if (!ret)
		ret = tt_layer_begin(s, 1, TT_FWD);
	if (!ret)
		ret = tt_tensor_saved(s, 1, buf, SH_A_SIZE);
	if (!ret)
		ret = tt_layer_end(s, 1, TT_FWD);
	if (ret)
		return sh_a_fail(sh, "forward", ret);
	usleep(50000);		/* idle time: the plan evicts the layer */
	if (planned) {
		if (!SH_WAIT(!sh_layer(s, 1, &li) && li.last_evict_start_ns, 30000))
			return sh_a_fail(sh, "eviction did not start", -ETIME);
		sh->a_phase = SH_EVICTING;
		if (!SH_WAIT(!sh_layer(s, 1, &li) && li.last_evict_end_ns, 300000))
			return sh_a_fail(sh, "eviction did not end", -ETIME);
		sh->a_evict_end = tt_st_now_ns();
		sh->a_evict_ns = li.last_evict_end_ns - li.last_evict_start_ns;
		sh->a_phase = SH_PREFETCHING;
		if (!SH_WAIT(!sh_layer(s, 1, &li) && li.last_prefetch_end_ns, 300000))
			return sh_a_fail(sh, "prefetch did not end", -ETIME);
		sh->a_prefetch_end = tt_st_now_ns();
		sh->a_prefetch_ns = li.last_prefetch_end_ns - li.last_prefetch_start_ns;
		SH_WAIT(sh->b_done, 300000);
	}
	ret = tt_layer_begin(s, 1, TT_BWD);
	if (!ret)
		ret = tt_layer_end(s, 1, TT_BWD);
	if (ret)
		return sh_a_fail(sh, "backward", ret);
	return 0;
}

/* Process A: profiles, waits for B, then one planned iteration. */
static int sh_a(struct sh_shared *sh)
{
	struct tt_session *s = tt_open();
	struct tt_layer_info li = {};
	char *buf;
	long long off;
	int ret;

	if (!s)
		return sh_a_fail(sh, "tt_open", -errno);
	buf = tt_st_map(SH_A_SIZE, -1);
	if (!buf)
		return sh_a_fail(sh, "map", -ENOMEM);
	tt_st_fill(buf, SH_A_SIZE, 7);
	/* rates the plan takes any eviction at; the real ones take seconds */
	ret = sh_rates(s, SH_TERA, SH_TERA);
	if (ret)
		return sh_a_fail(sh, "rates", ret);
	if (sh_a_iteration(s, sh, buf, 0))
		return 1;
	sh->a_phase = SH_PROFILED;
	if (!SH_WAIT(sh->b_go, 300000))
		return sh_a_fail(sh, "B never ready", -ETIME);
	ret = sh_rates(s, SH_TERA, SH_TERA);
	if (ret)
		return sh_a_fail(sh, "rates", ret);
	if (sh_a_iteration(s, sh, buf, 1))
		return 1;
	if (sh_layer(s, 1, &li) || !li.last_evicted_bytes)
		return sh_a_fail(sh, "nothing evicted", -ENODATA);
	off = tt_st_check(buf, SH_A_SIZE, 7);
	if (off != -1) {
		snprintf(sh->err, sizeof(sh->err), "A: data differs at %lld", off);
		sh->a_phase = SH_FAILED;
		return 1;
	}
	sh->a_phase = SH_DONE;
	tt_close(s);
	return 0;
}

FIXTURE(sharing)
{
	struct tt_st_topo topo;
	struct tt_session *s;
	char *t[SH_B_LAYERS];
	struct sh_shared *sh;
	pid_t a;
	unsigned int iter;
	uint64_t fwd_end;
	uint64_t bwd_begin;
};

FIXTURE_SETUP(sharing)
{
	unsigned int l;

	self->a = 0;
	self->sh = MAP_FAILED;
	self->s = NULL;
	memset(self->t, 0, sizeof(self->t));
	TT_SETUP_NODES(&self->topo, 1);
	TT_OPEN_KERNEL_SESSION(&self->s);
	for (l = 0; l < SH_B_LAYERS; l++) {
		self->t[l] = tt_st_map(SH_B_SIZE, -1);
		ASSERT_NE(NULL, self->t[l]);
	}
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	memset(self->sh, 0, sizeof(*self->sh));
}

FIXTURE_TEARDOWN(sharing)
{
	unsigned int l;
	int st;

	if (self->a > 0) {
		kill(self->a, SIGKILL);
		waitpid(self->a, &st, 0);
	}
	for (l = 0; l < SH_B_LAYERS; l++)
		if (self->t[l])
			munmap(self->t[l], SH_B_SIZE);
	if (self->sh != MAP_FAILED)
		munmap(self->sh, sizeof(*self->sh));
	if (self->s)
		tt_close(self->s);
}

/*
 * One iteration of B (layers 1..SH_B_LAYERS, 20 ms compute each, a loss of
 * 1 s; a prefetch rate of 4 MiB/s assumed, so the plan's triggers come
 * well ahead); after each forward end, half a bound or, when
 * the plan evicts the layer and its eviction has not started by then,
 * until it starts or the scheduler gives it up (layers_dropped goes up
 * from before the forward end: its prefetch was due at the forward end,
 * or before the eviction could end, expired in the queue; at most 5
 * bounds);
 * @delay (if not NULL) gets, per layer, start - forward end (or the
 * wait, to within the 2 ms poll).
 * @self->fwd_end gets the time of the last forward end.
 * Returns 0 or a line number.
 */
static int sh_b_iteration(struct __test_metadata *_metadata,
			  FIXTURE_DATA(sharing) *self, uint64_t *delay)
{
	uint64_t bound = SH_BOUND_MS * tt_st_time_mul();
	uint64_t gap = bound / 2, dl[SH_B_LAYERS] = {};
	struct tt_layer_info li = {};
	unsigned int l;
	long long off;

	ASSERT_EQ(0, sh_rates(self->s, SH_TERA, 4 * TT_ST_MIB)) return __LINE__;
	ASSERT_EQ(0, tt_iter_begin(self->s)) return __LINE__;
	for (l = 1; l <= SH_B_LAYERS; l++) {
		char *buf = self->t[l - 1];
		uint64_t t0, d0;

		ASSERT_EQ(0, tt_layer_begin(self->s, l, TT_FWD)) return __LINE__;
		tt_st_fill(buf, SH_B_SIZE, self->iter * 64 + l);
		ASSERT_EQ(0, tt_tensor_saved(self->s, l, buf, SH_B_SIZE))
			return __LINE__;
		tt_st_compute(buf, SH_B_SIZE, 20);
		/* a layer not evicted at its forward end counts there */
		d0 = sh_dropped(self->s);
		ASSERT_EQ(0, tt_layer_end(self->s, l, TT_FWD)) return __LINE__;
		t0 = tt_st_now_ns();
		self->fwd_end = t0;
		/* only the layers the plan evicts */
		ASSERT_EQ(0, sh_layer(self->s, l, &li)) return __LINE__;
		if (li.final_bytes && li.status != TT_LAYER_PROFILING) {

			if (SH_WAIT((!sh_layer(self->s, l, &li) &&
				     li.last_evict_start_ns >= li.last_fwd_end_ns &&
				     li.last_evict_start_ns) ||
				    sh_dropped(self->s) != d0, 5 * bound) &&
			    li.last_evict_start_ns >= li.last_fwd_end_ns &&
			    li.last_evict_start_ns) {
				dl[l - 1] = li.last_evict_start_ns -
					    li.last_fwd_end_ns;
			} else {
				/* given up (expired) when the worker came, or not yet */
				dl[l - 1] = tt_st_now_ns() - t0;
				if (sh_dropped(self->s) != d0)
					TH_LOG("B layer %u: not evicted (its prefetch due before it started) %.1f ms after its forward end",
					       l, dl[l - 1] / 1e6);
				else if (!sh_layer(self->s, l, &li))
					TH_LOG("B layer %u: no eviction %.1f ms after its forward end: status %u final %llu fwd_end %.1f evict %.1f-%.1f trigger %.1f prefetch %.1f-%.1f bwd %.1f evicted %llu late %llu",
					       l, dl[l - 1] / 1e6, li.status,
					       (unsigned long long)li.final_bytes,
					       li.last_fwd_end_ns / 1e6,
					       li.last_evict_start_ns / 1e6,
					       li.last_evict_end_ns / 1e6,
					       li.prefetch_ns / 1e6,
					       li.last_prefetch_start_ns / 1e6,
					       li.last_prefetch_end_ns / 1e6,
					       li.last_bwd_start_ns / 1e6,
					       (unsigned long long)li.last_evicted_bytes,
					       (unsigned long long)li.last_late_bytes);
			}
		}
		/* the same timeline in every iteration: the plan's profile */
		SH_WAIT(0, (t0 + gap * SH_MS - tt_st_now_ns()) / SH_MS);
	}
	if (delay)
		memcpy(delay, dl, sizeof(dl));
	tt_st_compute(self->t[0], SH_B_SIZE, 1000);	/* the loss */
	self->bwd_begin = tt_st_now_ns();
	for (l = SH_B_LAYERS; l >= 1; l--) {
		char *buf = self->t[l - 1];

		ASSERT_EQ(0, tt_layer_begin(self->s, l, TT_BWD)) return __LINE__;
		off = tt_st_check(buf, SH_B_SIZE, self->iter * 64 + l);
		ASSERT_EQ(-1, off) TH_LOG("B layer %u: data differs at %lld", l, off);
		if (off != -1)
			return __LINE__;
		tt_st_compute(buf, SH_B_SIZE, 20);
		ASSERT_EQ(0, tt_layer_end(self->s, l, TT_BWD)) return __LINE__;
	}
	self->iter++;
	return 0;
}

/* Log B's layer table (times in ms of the session's clock). */
static void sh_b_table(struct __test_metadata *_metadata, struct tt_session *s)
{
	struct tt_ioc_stats st = {};
	struct tt_layer_info li;
	unsigned int l;

	for (l = 1; l <= SH_B_LAYERS; l++)
		if (!sh_layer(s, l, &li))
			TH_LOG("B layer %u: status %u final %llu fwd_end %.1f evict %.1f-%.1f trigger %.1f prefetch %.1f-%.1f bwd %.1f evicted %llu late %llu",
			       l, li.status, (unsigned long long)li.final_bytes,
			       li.last_fwd_end_ns / 1e6,
			       li.last_evict_start_ns / 1e6,
			       li.last_evict_end_ns / 1e6, li.prefetch_ns / 1e6,
			       li.last_prefetch_start_ns / 1e6,
			       li.last_prefetch_end_ns / 1e6,
			       li.last_bwd_start_ns / 1e6,
			       (unsigned long long)li.last_evicted_bytes,
			       (unsigned long long)li.last_late_bytes);
	if (!tt_stats(s, &st))
		TH_LOG("B: iterations %llu reprofiles %llu dropped %llu",
		       (unsigned long long)st.iterations,
		       (unsigned long long)st.reprofiles,
		       (unsigned long long)st.layers_dropped);
}

/* B's layers: evicted ones, and those of them not late. */
static void sh_b_late(struct tt_session *s, unsigned int *evicted,
		      unsigned int *ontime)
{
	struct tt_layer_info li;
	unsigned int l;

	*evicted = *ontime = 0;
	for (l = 1; l <= SH_B_LAYERS; l++) {
		if (sh_layer(s, l, &li) || !li.last_evicted_bytes)
			continue;
		(*evicted)++;
		if (!li.last_late_bytes)
			(*ontime)++;
	}
}

TEST_F_TIMEOUT(sharing, huge_layer_neighbour, 900)
{
	uint64_t bound = SH_BOUND_MS * tt_st_time_mul() * SH_MS;
	uint64_t delay[SH_B_LAYERS] = {}, worst = 0, b_end, b_bwd, slices;
	unsigned int l, evicted, ontime, tries;
	int st;

	TT_SKIP_IF_SETUP_SKIPPED();
	self->a = fork();
	ASSERT_LE(0, self->a);
	if (!self->a)
		_exit(sh_a(self->sh));

	/* B: profile, then planned iterations until one evicts */
	for (tries = 0; tries < 5; tries++) {
		ASSERT_EQ(0, sh_b_iteration(_metadata, self, NULL));
		sh_b_late(self->s, &evicted, &ontime);
		if (evicted)
			break;
	}
	ASSERT_LT(0, evicted) TH_LOG("B's plan evicts nothing");
	ASSERT_TRUE(SH_WAIT(self->sh->a_phase >= SH_PROFILED, 300000));
	ASSERT_NE(SH_FAILED, self->sh->a_phase) TH_LOG("%s", self->sh->err);
	self->sh->b_go = 1;

	/* round 1: B's evictions while A's runs */
	ASSERT_TRUE(SH_WAIT(self->sh->a_phase >= SH_EVICTING, 60000));
	ASSERT_NE(SH_FAILED, self->sh->a_phase) TH_LOG("%s", self->sh->err);
	ASSERT_EQ(0, sh_b_iteration(_metadata, self, delay));
	b_end = self->fwd_end;
	for (l = 0; l < SH_B_LAYERS; l++) {
		TH_LOG("B layer %u: eviction started %.1f ms after its forward end",
		       l + 1, delay[l] / 1e6);
		if (delay[l] > worst)
			worst = delay[l];
	}
	sh_b_late(self->s, &evicted, &ontime);
	TH_LOG("round 1: B evicted %u layers, %u on time", evicted, ontime);
	sh_b_table(_metadata, self->s);

	/* round 2: B's prefetches while A's runs */
	ASSERT_TRUE(SH_WAIT(self->sh->a_phase >= SH_PREFETCHING, 300000));
	ASSERT_NE(SH_FAILED, self->sh->a_phase) TH_LOG("%s", self->sh->err);
	ASSERT_EQ(0, sh_b_iteration(_metadata, self, NULL));
	b_bwd = self->bwd_begin;
	sh_b_late(self->s, &evicted, &ontime);
	TH_LOG("round 2: B evicted %u layers, %u on time", evicted, ontime);
	sh_b_table(_metadata, self->s);
	self->sh->b_done = 1;

	ASSERT_TRUE(SH_WAIT(self->sh->a_phase >= SH_DONE, 300000));
	ASSERT_EQ(self->a, waitpid(self->a, &st, 0));
	self->a = 0;
	ASSERT_EQ(SH_DONE, self->sh->a_phase) TH_LOG("%s", self->sh->err);
	ASSERT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st));
	/* SH_SLICES of A's slices at A's measured rate, when longer */
	slices = self->sh->a_evict_ns * (SH_SLICE / TT_ST_MIB) /
		 (SH_A_SIZE / TT_ST_MIB) * SH_SLICES;
	if (slices > bound)
		bound = slices;
	TH_LOG("A: 1.25 GiB evicted in %.1f ms, prefetched in %.1f ms; B's worst eviction start %.1f ms (bound %.0f ms: %llu of A's 16 MiB slices took %.0f ms)",
	       self->sh->a_evict_ns / 1e6, self->sh->a_prefetch_ns / 1e6,
	       worst / 1e6, bound / 1e6, SH_SLICES, slices / 1e6);

	TH_LOG("A's prefetch %s when B's round 2 reached its backward pass",
	       self->sh->a_prefetch_end > b_bwd ? "was still running" :
	       "had ended");
	/* meaningful only if A's eviction outlasted B's round 1's forward */
	ASSERT_LT(b_end, self->sh->a_evict_end)
		TH_LOG("A's eviction ended before B's forward pass: too short to test");
	ASSERT_LT(worst, bound);
	ASSERT_LT(0, evicted);
	ASSERT_LT(0, ontime) TH_LOG("all of B's prefetches late behind A's");
}

TEST_F_TIMEOUT(sharing, own_order, 300)
{
	const size_t sz = 64 * TT_ST_MIB;
	struct tt_layer_info l1 = {}, l2 = {};
	char *buf[2];
	unsigned int it, l;

	TT_SKIP_IF_SETUP_SKIPPED();
	for (l = 0; l < 2; l++) {
		buf[l] = tt_st_map(sz, -1);
		ASSERT_NE(NULL, buf[l]);
		tt_st_fill(buf[l], sz, 101 + l);
	}
	/* a profile, then planned iterations until both layers are evicted */
	for (it = 0; it < 5; it++) {
		ASSERT_EQ(0, sh_rates(self->s, SH_TERA, SH_TERA));
		ASSERT_EQ(0, tt_iter_begin(self->s));
		for (l = 1; l <= 2; l++) {
			ASSERT_EQ(0, tt_layer_begin(self->s, l, TT_FWD));
			ASSERT_EQ(0, tt_tensor_saved(self->s, l, buf[l - 1], sz));
			ASSERT_EQ(0, tt_layer_end(self->s, l, TT_FWD));
		}
		usleep(2000000 * tt_st_time_mul());
		SH_WAIT(!sh_layer(self->s, 1, &l1) && !sh_layer(self->s, 2, &l2) &&
			(!l2.final_bytes || l2.status == TT_LAYER_PROFILING ||
			 l2.last_evict_end_ns), 60000 * tt_st_time_mul());
		for (l = 2; l >= 1; l--) {
			ASSERT_EQ(0, tt_layer_begin(self->s, l, TT_BWD));
			ASSERT_EQ(-1, tt_st_check(buf[l - 1], sz, 100 + l));
			ASSERT_EQ(0, tt_layer_end(self->s, l, TT_BWD));
		}
		/* what the plan made of each layer, should the end fail */
		TH_LOG("iteration %u: layer 1 status %u, final %llu, evicted %llu; layer 2 status %u, final %llu, evicted %llu",
		       it, l1.status, (unsigned long long)l1.final_bytes,
		       (unsigned long long)l1.last_evicted_bytes, l2.status,
		       (unsigned long long)l2.final_bytes,
		       (unsigned long long)l2.last_evicted_bytes);
		if (l1.last_evicted_bytes && l2.last_evicted_bytes)
			break;
	}
	TH_LOG("layer 1 evicted %.1f-%.1f ms (%llu bytes), layer 2 %.1f-%.1f ms (%llu bytes)",
	       l1.last_evict_start_ns / 1e6, l1.last_evict_end_ns / 1e6,
	       (unsigned long long)l1.last_evicted_bytes,
	       l2.last_evict_start_ns / 1e6, l2.last_evict_end_ns / 1e6,
	       (unsigned long long)l2.last_evicted_bytes);
	ASSERT_EQ(sz, l1.last_evicted_bytes);
	ASSERT_EQ(sz, l2.last_evicted_bytes);
	ASSERT_LE(l1.last_evict_end_ns, l2.last_evict_start_ns);
	for (l = 0; l < 2; l++)
		munmap(buf[l], sz);
}

TEST_HARNESS_MAIN
