// SPDX-License-Identifier: GPL-2.0
/*
 * anyhint_test - hints on any range (issue 15, item 4): TT_IOC_HINT acts
 * on the pages of the caller's range that are not saved tensors ("plain"
 * pages) too. Plain defaults: no module parameter, no flag, a kernel
 * session as tt_open() gives it.
 *
 *   will_use_plain    a plain range (base pages) moved to the slow node
 *                     with tt_migrate(): TT_HINT_WILL_USE brings every page
 *                     back to the fast node within 1 s (it does so before
 *                     the call returns); data intact.
 *   will_use_thp      the same with a MADV_HUGEPAGE range.
 *   archive_plain     a session budget of 8 MiB; a plain range hinted
 *                     TT_HINT_ARCHIVE stays on the fast node while there
 *                     is no pressure; the first victim round (a tensor
 *                     saved over the budget) sends all of it to the slow
 *                     node, ahead of the saved tensors, while an
 *                     unhinted plain range stays; the round still makes
 *                     its room from saved tensors (plain pages are not
 *                     registered). Data intact.
 *   pin_fast_plain    TT_HINT_PIN_FAST on a plain range on the slow node
 *                     brings it back before the call returns; a range
 *                     hinted ARCHIVE, then PIN_FAST, stays on the fast
 *                     node under pressure.
 *   retire_plain      TT_HINT_RETIRE on a plain range moves nothing (a
 *                     slow range stays slow) and ends its ARCHIVE hint:
 *                     under pressure it stays on the fast node.
 *   hostile_plain     a WILL_USE on 1 TiB of unmapped address space and
 *                     on a range mixing mapped and unmapped pages returns
 *                     0 at once and moves only what is mapped; the checks
 *                     on arrival are unchanged (EOVERFLOW, EINVAL).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tt_harness.h"

#define AH_MIB		TT_ST_MIB
#define AH_PLAIN	(16 * AH_MIB)
#define AH_TENSOR	(4 * AH_MIB)
#define AH_NT		3
#define AH_BALANCING	"/proc/sys/kernel/numa_balancing"

FIXTURE(anyhint)
{
	struct tt_st_topo topo;
	struct tt_session *s;
	long long balancing;	/* to restore; -1: untouched */
	char *plain[3];		/* AH_PLAIN bytes each */
	char *t[AH_NT];		/* saved tensors, AH_TENSOR bytes each */
};

FIXTURE_SETUP(anyhint)
{
	unsigned int i;

	self->s = NULL;
	self->balancing = -1;
	memset(self->plain, 0, sizeof(self->plain));
	memset(self->t, 0, sizeof(self->t));
	TT_SETUP_NODES(&self->topo, 1);
	/* NUMA balancing would pull touched pages back behind our back */
	ASSERT_EQ(0, tt_st_read_ll(AH_BALANCING, &self->balancing));
	ASSERT_EQ(0, tt_st_write_file(AH_BALANCING, "0"));
	TT_OPEN_KERNEL_SESSION(&self->s);
	/* rates known: the profile iteration moves only what the budget does */
	TT_SET_RATES(self->s, 1ULL << 30);
	for (i = 0; i < 3; i++) {
		self->plain[i] = tt_st_map(AH_PLAIN, -1);
		ASSERT_NE(NULL, self->plain[i]);
		tt_st_fill(self->plain[i], AH_PLAIN, 100 + i);
	}
	for (i = 0; i < AH_NT; i++) {
		self->t[i] = tt_st_map(AH_TENSOR, -1);
		ASSERT_NE(NULL, self->t[i]);
	}
}

FIXTURE_TEARDOWN(anyhint)
{
	unsigned int i;
	char v[32];

	if (self->s)
		tt_close(self->s);
	for (i = 0; i < 3; i++)
		if (self->plain[i])
			munmap(self->plain[i], AH_PLAIN);
	for (i = 0; i < AH_NT; i++)
		if (self->t[i])
			munmap(self->t[i], AH_TENSOR);
	if (self->balancing >= 0) {
		snprintf(v, sizeof(v), "%lld", self->balancing);
		tt_st_write_file(AH_BALANCING, v);
	}
}

/* Bytes of [p, p + len) on node @node (TT_IOC_RESIDENCY), or -errno. */
static long long ah_on(struct tt_session *s, const void *p, size_t len,
		       int node)
{
	uint64_t b[TT_ST_MAX_NODES];
	int ret = tt_residency(s, p, len, b, TT_ST_MAX_NODES);

	return ret ? ret : (long long)b[node];
}

/*
 * Poll until all of [p, p + len) is on @node, at most @ms milliseconds
 * (times TT_ST_TIME_MUL): the ns it took, or -1 on timeout.
 */
static long long ah_wait_on(struct tt_session *s, const void *p, size_t len,
			    int node, unsigned int ms)
{
	uint64_t t0 = tt_st_now_ns();
	uint64_t end = t0 + (uint64_t)ms * 1000000ULL * tt_st_time_mul();

	for (;;) {
		if (ah_on(s, p, len, node) == (long long)len)
			return tt_st_now_ns() - t0;
		if (tt_st_now_ns() > end)
			return -1;
		usleep(2000);
	}
}

/* Register tensor @l as layer @l + 1's, in a forward pass that ends. */
static int ah_save(struct tt_session *s, char *t, unsigned int l)
{
	int ret = tt_layer_begin(s, l + 1, TT_FWD);

	if (!ret) {
		tt_st_fill(t, AH_TENSOR, 200 + l);
		ret = tt_tensor_saved(s, l + 1, t, AH_TENSOR);
	}
	if (!ret)
		ret = tt_layer_end(s, l + 1, TT_FWD);
	return ret;
}

static int ah_budget(struct tt_session *s, uint32_t mib)
{
	struct tt_ioc_sched c = { .valid = TT_SCHED_SET_BUDGET,
				  .budget_mib = mib };

	return tt_sched_set(s, &c);
}

/* Migrate, WILL_USE, poll: shared by the two will_use tests. */
#define AH_WILL_USE(p, len, seed) do {					\
	long long _ns;							\
	ASSERT_EQ(0, tt_migrate(self->s, (p), (len), self->topo.slow));	\
	ASSERT_EQ((long long)(len),					\
		  ah_on(self->s, (p), (len), self->topo.slow));		\
	ASSERT_EQ(0, tt_hint(self->s, (p), (len), TT_HINT_WILL_USE));	\
	_ns = ah_wait_on(self->s, (p), (len), self->topo.fast, 1000);	\
	ASSERT_LE(0, _ns)						\
		TH_LOG("WILL_USE: %lld of %zu bytes on the fast node after 1 s", \
		       ah_on(self->s, (p), (len), self->topo.fast),	\
		       (size_t)(len));					\
	TH_LOG("WILL_USE: %zu MiB back on the fast node %.3f s after the call returned", \
	       (size_t)(len) >> 20, _ns / 1e9);				\
	TT_ASSERT_PLACED((p), (len), self->topo.fast);			\
	TT_ASSERT_PATTERN((p), (len), (seed));				\
} while (0)

TEST_F_TIMEOUT(anyhint, will_use_plain, 120)
{
	TT_SKIP_IF_SETUP_SKIPPED();
	AH_WILL_USE(self->plain[0], AH_PLAIN, 100);
}

TEST_F_TIMEOUT(anyhint, will_use_thp, 120)
{
	char *p;

	TT_SKIP_IF_SETUP_SKIPPED();
	p = tt_st_map(AH_PLAIN, 1);
	ASSERT_NE(NULL, p);
	tt_st_fill(p, AH_PLAIN, 7);
	AH_WILL_USE(p, AH_PLAIN, 7);
	munmap(p, AH_PLAIN);
}

/*
 * Save AH_NT tensors of AH_TENSOR bytes under a budget of two: the third
 * one starts a victim round.
 */
#define AH_PRESSURE() do {						\
	unsigned int _l;						\
	ASSERT_EQ(0, ah_budget(self->s, 2 * AH_TENSOR / AH_MIB));	\
	ASSERT_EQ(0, tt_iter_begin(self->s));				\
	for (_l = 0; _l < AH_NT; _l++)					\
		ASSERT_EQ(0, ah_save(self->s, self->t[_l], _l));	\
} while (0)

/* The backward passes: every tensor comes back intact. */
#define AH_BACKWARD() do {						\
	unsigned int _l;						\
	for (_l = AH_NT; _l-- > 0;) {					\
		ASSERT_EQ(0, tt_layer_begin(self->s, _l + 1, TT_BWD));	\
		TT_ASSERT_PATTERN(self->t[_l], AH_TENSOR, 200 + _l);	\
		ASSERT_EQ(0, tt_layer_end(self->s, _l + 1, TT_BWD));	\
	}								\
} while (0)

TEST_F_TIMEOUT(anyhint, archive_plain, 120)
{
	const int fast = self->topo.fast, slow = self->topo.slow;
	struct tt_ioc_stats st;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, tt_hint(self->s, self->plain[0], AH_PLAIN,
			     TT_HINT_ARCHIVE));
	/* no pressure: nothing moves */
	usleep(100000);
	ASSERT_EQ(AH_PLAIN, ah_on(self->s, self->plain[0], AH_PLAIN, fast));
	ASSERT_EQ(0, ah_budget(self->s, 2 * AH_TENSOR / AH_MIB));
	ASSERT_EQ(0, tt_iter_begin(self->s));
	ASSERT_EQ(0, ah_save(self->s, self->t[0], 0));
	ASSERT_EQ(0, ah_save(self->s, self->t[1], 1));
	ASSERT_EQ(AH_PLAIN, ah_on(self->s, self->plain[0], AH_PLAIN, fast));
	/* over the budget: the archived plain range leaves first */
	ASSERT_EQ(0, ah_save(self->s, self->t[2], 2));
	ASSERT_EQ(AH_PLAIN, ah_on(self->s, self->plain[0], AH_PLAIN, slow))
		TH_LOG("archived plain range: %lld bytes on the slow node",
		       ah_on(self->s, self->plain[0], AH_PLAIN, slow));
	ASSERT_EQ(AH_PLAIN, ah_on(self->s, self->plain[1], AH_PLAIN, fast));
	ASSERT_EQ(0, tt_stats(self->s, &st));
	TH_LOG("victims %llu (%llu MiB), fast registered %llu MiB",
	       (unsigned long long)st.victims,
	       (unsigned long long)(st.victim_bytes >> 20),
	       (unsigned long long)(st.fast_registered_bytes >> 20));
	/* plain pages are not registered: the room came from tensors */
	ASSERT_EQ(AH_TENSOR, st.victim_bytes);
	ASSERT_LE(st.fast_registered_bytes, 2 * AH_TENSOR);
	ASSERT_EQ(0, st.budget_overruns);
	AH_BACKWARD();
	TT_ASSERT_PATTERN(self->plain[0], AH_PLAIN, 100);
	TT_ASSERT_PATTERN(self->plain[1], AH_PLAIN, 101);
	/* the next rounds leave it alone; WILL_USE brings it back */
	ASSERT_EQ(0, tt_hint(self->s, self->plain[0], AH_PLAIN,
			     TT_HINT_WILL_USE));
	ASSERT_EQ(AH_PLAIN, ah_on(self->s, self->plain[0], AH_PLAIN, fast));
}

TEST_F_TIMEOUT(anyhint, pin_fast_plain, 120)
{
	const int fast = self->topo.fast, slow = self->topo.slow;

	TT_SKIP_IF_SETUP_SKIPPED();
	/* a slow plain range comes back before the call returns */
	ASSERT_EQ(0, tt_migrate(self->s, self->plain[0], AH_PLAIN, slow));
	ASSERT_EQ(AH_PLAIN, ah_on(self->s, self->plain[0], AH_PLAIN, slow));
	ASSERT_EQ(0, tt_hint(self->s, self->plain[0], AH_PLAIN,
			     TT_HINT_PIN_FAST));
	ASSERT_EQ(AH_PLAIN, ah_on(self->s, self->plain[0], AH_PLAIN, fast));
	/* ARCHIVE then PIN_FAST: pinned, it stays under pressure */
	ASSERT_EQ(0, tt_hint(self->s, self->plain[1], AH_PLAIN,
			     TT_HINT_ARCHIVE));
	ASSERT_EQ(0, tt_hint(self->s, self->plain[1], AH_PLAIN,
			     TT_HINT_PIN_FAST));
	/* the control: an archived one leaves in the same round */
	ASSERT_EQ(0, tt_hint(self->s, self->plain[2], AH_PLAIN,
			     TT_HINT_ARCHIVE));
	AH_PRESSURE();
	ASSERT_EQ(AH_PLAIN, ah_on(self->s, self->plain[2], AH_PLAIN, slow));
	ASSERT_EQ(AH_PLAIN, ah_on(self->s, self->plain[0], AH_PLAIN, fast));
	ASSERT_EQ(AH_PLAIN, ah_on(self->s, self->plain[1], AH_PLAIN, fast));
	AH_BACKWARD();
	TT_ASSERT_PATTERN(self->plain[0], AH_PLAIN, 100);
	TT_ASSERT_PATTERN(self->plain[1], AH_PLAIN, 101);
	TT_ASSERT_PATTERN(self->plain[2], AH_PLAIN, 102);
}

TEST_F_TIMEOUT(anyhint, retire_plain, 120)
{
	const int fast = self->topo.fast, slow = self->topo.slow;

	TT_SKIP_IF_SETUP_SKIPPED();
	/* RETIRE moves nothing: a slow plain range stays slow */
	ASSERT_EQ(0, tt_migrate(self->s, self->plain[0], AH_PLAIN, slow));
	ASSERT_EQ(0, tt_hint(self->s, self->plain[0], AH_PLAIN,
			     TT_HINT_RETIRE));
	ASSERT_EQ(AH_PLAIN, ah_on(self->s, self->plain[0], AH_PLAIN, slow));
	/* ... and ends an ARCHIVE hint: no longer a victim */
	ASSERT_EQ(0, tt_hint(self->s, self->plain[1], AH_PLAIN,
			     TT_HINT_ARCHIVE));
	ASSERT_EQ(0, tt_hint(self->s, self->plain[1], AH_PLAIN,
			     TT_HINT_RETIRE));
	ASSERT_EQ(0, tt_hint(self->s, self->plain[2], AH_PLAIN,
			     TT_HINT_ARCHIVE));
	AH_PRESSURE();
	ASSERT_EQ(AH_PLAIN, ah_on(self->s, self->plain[2], AH_PLAIN, slow));
	ASSERT_EQ(AH_PLAIN, ah_on(self->s, self->plain[1], AH_PLAIN, fast));
	ASSERT_EQ(AH_PLAIN, ah_on(self->s, self->plain[0], AH_PLAIN, slow));
	AH_BACKWARD();
	TT_ASSERT_PATTERN(self->plain[0], AH_PLAIN, 100);
	TT_ASSERT_PATTERN(self->plain[1], AH_PLAIN, 101);
	TT_ASSERT_PATTERN(self->plain[2], AH_PLAIN, 102);
}

TEST_F_TIMEOUT(anyhint, hostile_plain, 120)
{
	const int fast = self->topo.fast, slow = self->topo.slow;
	const size_t tib = 1ULL << 40;
	uint64_t t0;
	char *hole, *p = self->plain[0];
	int ret;

	TT_SKIP_IF_SETUP_SKIPPED();
	/* 1 TiB of address space reserved, then given back: unmapped */
	hole = mmap(NULL, tib, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	ASSERT_EQ(0, munmap(hole, tib));
	t0 = tt_st_now_ns();
	ASSERT_EQ(0, tt_hint(self->s, hole, tib, TT_HINT_WILL_USE));
	ASSERT_EQ(0, tt_hint(self->s, hole, tib, TT_HINT_PIN_FAST));
	ASSERT_EQ(0, tt_hint(self->s, hole, tib, TT_HINT_RETIRE));
	TH_LOG("three hints on 1 TiB unmapped: %.3f s",
	       (tt_st_now_ns() - t0) / 1e9);
	ASSERT_GT(2e9 * tt_st_time_mul(), (double)(tt_st_now_ns() - t0));
	/* a range with a hole in the middle: only what is mapped moves */
	ASSERT_EQ(0, tt_migrate(self->s, p, AH_PLAIN, slow));
	ASSERT_EQ(0, munmap(p + AH_PLAIN / 4, AH_PLAIN / 2));
	ASSERT_EQ(0, tt_hint(self->s, p, AH_PLAIN, TT_HINT_WILL_USE));
	ASSERT_EQ(AH_PLAIN / 4, ah_on(self->s, p, AH_PLAIN / 4, fast));
	ASSERT_EQ(AH_PLAIN / 4, ah_on(self->s, p + 3 * AH_PLAIN / 4,
				      AH_PLAIN / 4, fast));
	TT_ASSERT_PATTERN(p, AH_PLAIN / 4, 100);
	munmap(p + 3 * AH_PLAIN / 4, AH_PLAIN / 4);
	munmap(p, AH_PLAIN / 4);
	self->plain[0] = NULL;
	/* the checks on arrival are unchanged */
	ret = tt_hint(self->s, (void *)(UINTPTR_MAX - 4095), 8192,
		      TT_HINT_WILL_USE);
	ASSERT_TRUE(ret == -EINVAL || ret == -EOVERFLOW) TH_LOG("%d", ret);
	ASSERT_EQ(-EOVERFLOW, tt_hint(self->s, (void *)((1ULL << 57) - 4096),
				      8192, TT_HINT_WILL_USE));
	ASSERT_EQ(-EINVAL, tt_hint(self->s, p, 0, TT_HINT_WILL_USE));
}

TEST_HARNESS_MAIN
