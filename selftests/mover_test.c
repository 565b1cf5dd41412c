// SPDX-License-Identifier: GPL-2.0
/*
 * The process-context mover (TT_IOC_MOVER, tt_mover_start()): huge pages
 * moved whole by mover threads, base pages by them too (base-page orders,
 * mover_base) or by the in-kernel engine, orders that go back to the
 * engine when their mover dies or stalls.
 *
 *   no_mover        a session without movers: the engine moves a THP range
 *                   and splits it (engine_bytes, huge_split; no order).
 *   thp_kept        with tt_mover_start(): a THP range to the slow node and
 *                   back stays huge (AnonHugePages, thp_split_page
 *                   unchanged, huge_kept, mover_bytes).
 *   base_to_engine  with movers and mover_base 0, base pages go to the
 *                   engine.
 *   base_orders     mover_base 1: base pages go to the movers as base-page
 *                   orders; pages already on the target count as such,
 *                   pages never touched as not present; a range that
 *                   starts and ends inside huge-page blocks moves exactly.
 *   base_large_folio a huge page mapped by ptes: a range that covers it
 *                   in part leaves it (large_pte, EBUSY), none of its
 *                   bytes outside the range moves; one that covers it
 *                   whole moves it.
 *   base_collapse   mover_base 2: each whole 2 MiB block of base pages in
 *                   a vma that allows huge pages is collapsed into a huge
 *                   page and moved whole; the parts of blocks, under
 *                   MADV_NOHUGEPAGE, move page by page.
 *   base_needs_base_movers a mover registered without TT_MOVER_BASE (an
 *                   older library) gets no base-page order; registered
 *                   with it, it does (an order it never takes goes back
 *                   at mover_timeout_ms).
 *   mixed           a range that covers two huge pages whole and two in
 *                   part: asynchronously, the whole ones to the movers,
 *                   the parts stay where they are (huge_partial,
 *                   skipped_unsupported) and no huge page is split;
 *                   synchronously, the engine then splits the two and
 *                   moves the range's parts (huge_split); nothing outside
 *                   the range moves; with mover_base 1 a base-page part
 *                   of the range goes to the movers.
 *   sched_round_trip the scheduler evicts and prefetches a THP-backed
 *                   tensor through the movers: AnonHugePages the same
 *                   after the round trip, thp_split_page unchanged.
 *   sched_small_tensor_in_huge a tensor inside one huge page, movers
 *                   running: the scheduler's eviction splits it and moves
 *                   the tensor (huge_split), not left fast (huge_partial).
 *   sched_edge_slack a tensor one base page into a huge page (malloc's
 *                   header in front): the movers move that huge page
 *                   whole, the header with it, and count the tensor's
 *                   bytes only; nothing split, nothing through the engine.
 *   sched_edge_majority the same a quarter of a huge page into it (the
 *                   chunk before the tensor in a heap): more than half
 *                   of it is the tensor's, it moves whole.
 *   sched_small_base_head a tensor whose head is 64 KiB of base pages
 *                   before a huge page: on Linux 6.3 and later a mover
 *                   moves the head (a base-page order, batched TLB
 *                   flushes), nothing through the engine; before, the
 *                   engine moves the head.
 *   sched_round_trip_small_batch the same with batch_pages 128: the
 *                   scheduler's chunks are rounded up to whole huge
 *                   pages, none is left partly covered.
 *   killed_mid_order a mover (a CLONE_VM child) takes an order and is
 *                   killed: the order goes back to the engine long before
 *                   mover_timeout_ms, everything moved, counted once.
 *   stalled_then_late a mover takes an order and stalls past
 *                   mover_timeout_ms: the engine moves it; the late
 *                   completion is ignored (mover_late), nothing is counted
 *                   twice.
 *   ioctl_errors    TT_IOC_MOVER's argument checks.
 *   cpus            TIERTRAIN_MOVER_CPUS: tt_open()'s movers run on the
 *                   CPU it names, not on the opener's; a list that is not
 *                   one fails tt_open() with EINVAL. The module's
 *                   workqueues take a cpumask (WQ_SYSFS).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/mempolicy.h>

#include "kselftest_harness.h"
#include "tt_harness.h"

#define MV_PARAM	TT_ST_SYSMOD "/parameters/mover_timeout_ms"
#define MV_BATCH_PARAM	TT_ST_SYSMOD "/parameters/batch_pages"
#define MV_BASE_PARAM	TT_ST_SYSMOD "/parameters/mover_base"
#define MV_HUGE		TT_ST_THP_SIZE

FIXTURE(mover)
{
	struct tt_session *s;
	struct tt_st_topo topo;
	size_t ps;
	void *buf;
	size_t len;
	int fd;
	long long khugepaged_sleep;	/* to restore, -1: untouched */
	long long timeout_ms;		/* to restore, -1: untouched */
	long long batch_pages;		/* to restore, -1: untouched */
	long long mover_base;		/* to restore */
};

FIXTURE_SETUP(mover)
{
	char mode[128];

	self->buf = NULL;
	self->s = NULL;
	self->fd = -1;
	self->khugepaged_sleep = -1;
	self->timeout_ms = -1;
	self->batch_pages = -1;
	self->mover_base = -1;
	self->ps = tt_page_size();
	TT_SETUP_NODES(&self->topo, 1);
	if (tt_st_read_file("/sys/kernel/mm/transparent_hugepage/enabled",
			    mode, sizeof(mode)) < 0 || strstr(mode, "[never]"))
		SKIP(return, "transparent huge pages are not available");
	if (tt_st_read_ll(MV_PARAM, &self->timeout_ms))
		SKIP(return, "the module has no mover_timeout_ms parameter");
	ASSERT_EQ(0, tt_st_read_ll(MV_BASE_PARAM, &self->mover_base));
	/*
	 * khugepaged would collapse the pages the engine splits, on the node
	 * it saw them on: keep it out of the huge page counts.
	 */
	ASSERT_EQ(0, tt_st_khugepaged_pause(&self->khugepaged_sleep));
	/* no mover unless the test starts them (tt_open()'s default is 1) */
	setenv("TIERTRAIN_MOVER", "0", 1);
	TT_OPEN_KERNEL_SESSION(&self->s);
}

FIXTURE_TEARDOWN(mover)
{
	tt_close(self->s);
	if (self->fd >= 0)
		close(self->fd);
	if (self->buf)
		munmap(self->buf, self->len);
	if (self->khugepaged_sleep >= 0)
		tt_st_khugepaged_resume(self->khugepaged_sleep);
	if (self->timeout_ms >= 0) {
		tt_st_param_write("mover_timeout_ms", self->timeout_ms);
	}
	if (self->batch_pages >= 0) {
		tt_st_param_write("batch_pages", self->batch_pages);
	}
	if (self->mover_base >= 0)
		tt_st_param_write("mover_base", self->mover_base);
}

#define MV_NEED_THP(self, len, seed) do {				\
	(self)->len = (len);						\
	(self)->buf = tt_st_map_thp((len), (seed));			\
	if (!(self)->buf)						\
		SKIP(return, "the kernel gave no huge pages to a MADV_HUGEPAGE range"); \
} while (0)

static void mv_set_timeout(long long ms)
{
	tt_st_param_write("mover_timeout_ms", ms);
}

TEST_F_TIMEOUT(mover, no_mover, 120)
{
	struct tt_ioc_stats st;
	struct tt_migrate_result r;
	size_t len = 16 * TT_ST_MIB, pages = len / self->ps;

	TT_SKIP_IF_SETUP_SKIPPED();
	MV_NEED_THP(self, len, 1);
	ASSERT_EQ(0, tt_migrate_ex(self->s, self->buf, len, self->topo.slow, 0,
				   &r));
	TT_ASSERT_RESULT(r, pages, pages, 0, 0, 0, 0);
	TT_ASSERT_PATTERN(self->buf, len, 1);
	TT_ASSERT_PLACED(self->buf, len, self->topo.slow);
	ASSERT_EQ(0, tt_stats(self->s, &st));
	EXPECT_EQ(0, st.movers);
	EXPECT_EQ(0, st.mover_orders);
	EXPECT_EQ(0, st.mover_bytes);
	EXPECT_EQ(len, st.engine_bytes);
	EXPECT_EQ(len / MV_HUGE, st.huge_split);
	EXPECT_EQ(0, st.huge_kept);
	EXPECT_EQ(0, tt_st_smaps_kb(self->buf, len, "AnonHugePages"));
	/* stopping what never started is fine */
	EXPECT_EQ(0, tt_mover_stop(self->s));
}

TEST_F_TIMEOUT(mover, thp_kept, 120)
{
	struct tt_ioc_stats st;
	struct tt_migrate_result r;
	size_t len = 16 * TT_ST_MIB, pages = len / self->ps;
	long long huge0, split0;
	int fast = self->topo.fast, slow = self->topo.slow;

	TT_SKIP_IF_SETUP_SKIPPED();
	MV_NEED_THP(self, len, 2);
	ASSERT_EQ(0, tt_mover_start(self->s, 2));
	ASSERT_EQ(-EALREADY, tt_mover_start(self->s, 2));
	ASSERT_EQ(EALREADY, errno);
	ASSERT_EQ(0, tt_stats(self->s, &st));
	ASSERT_EQ(2, st.movers);
	huge0 = tt_st_smaps_kb(self->buf, len, "AnonHugePages");
	split0 = tt_st_vmstat("thp_split_page");

	ASSERT_EQ(0, tt_migrate_ex(self->s, self->buf, len, slow, 0, &r));
	TT_ASSERT_RESULT(r, pages, pages, 0, 0, 0, 0);
	TT_ASSERT_PATTERN(self->buf, len, 2);
	TT_ASSERT_PLACED(self->buf, len, slow);
	EXPECT_EQ(huge0, tt_st_smaps_kb(self->buf, len, "AnonHugePages"));
	TH_LOG("to node %d: %.1f ms", slow, r.elapsed_ns / 1e6);

	ASSERT_EQ(0, tt_migrate_ex(self->s, self->buf, len, fast, 0, &r));
	TT_ASSERT_RESULT(r, pages, pages, 0, 0, 0, 0);
	TT_ASSERT_PATTERN(self->buf, len, 2);
	TT_ASSERT_PLACED(self->buf, len, fast);
	TH_LOG("back to node %d: %.1f ms", fast, r.elapsed_ns / 1e6);

	EXPECT_EQ(huge0, tt_st_smaps_kb(self->buf, len, "AnonHugePages"));
	EXPECT_EQ(split0, tt_st_vmstat("thp_split_page"));
	ASSERT_EQ(0, tt_stats(self->s, &st));
	EXPECT_EQ(2 * len, st.mover_bytes);
	EXPECT_EQ(0, st.engine_bytes);
	EXPECT_EQ(2 * len / MV_HUGE, st.huge_kept);
	EXPECT_EQ(0, st.huge_split);
	EXPECT_EQ(0, st.mover_fallbacks);
	EXPECT_LE(2, st.mover_orders);
	EXPECT_EQ(2 * pages, st.total.moved);
	ASSERT_EQ(0, tt_mover_stop(self->s));
	ASSERT_EQ(0, tt_stats(self->s, &st));
	EXPECT_EQ(0, st.movers);
}

TEST_F_TIMEOUT(mover, base_to_engine, 120)
{
	struct tt_ioc_stats st;
	struct tt_migrate_result r;
	size_t len = 8 * TT_ST_MIB, pages = len / self->ps;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, tt_st_param_write("mover_base", 0));
	self->len = len;
	self->buf = tt_st_map(len, -1);
	ASSERT_NE(NULL, self->buf);
	tt_st_fill(self->buf, len, 3);
	ASSERT_EQ(0, tt_mover_start(self->s, 0));
	ASSERT_EQ(0, tt_migrate_ex(self->s, self->buf, len, self->topo.slow, 0,
				   &r));
	TT_ASSERT_RESULT(r, pages, pages, 0, 0, 0, 0);
	TT_ASSERT_PATTERN(self->buf, len, 3);
	TT_ASSERT_PLACED(self->buf, len, self->topo.slow);
	ASSERT_EQ(0, tt_stats(self->s, &st));
	EXPECT_EQ(len, st.engine_bytes);
	EXPECT_EQ(0, st.mover_bytes);
	EXPECT_EQ(0, st.mover_orders);
	EXPECT_EQ(0, st.huge_split);
}

TEST_F_TIMEOUT(mover, mixed, 120)
{
	struct tt_ioc_stats st;
	struct tt_migrate_result r;
	size_t len = 4 * MV_HUGE, half = MV_HUGE / 2;
	size_t sub = len - 2 * half, ps = self->ps;
	long long split0 = tt_st_vmstat("thp_split_page");
	int fast = self->topo.fast, slow = self->topo.slow;
	char *b, *base;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, tt_st_param_write("mover_base", 1));
	MV_NEED_THP(self, len, 4);
	b = self->buf;
	ASSERT_EQ(0, tt_mover_start(self->s, 2));
	/*
	 * Half of huge page 0, huge pages 1 and 2 whole, half of 3,
	 * asynchronously (as the scheduler moves): the parts stay.
	 */
	ASSERT_EQ(0, tt_migrate_ex(self->s, b + half, sub, slow,
				   TT_MIGRATE_ASYNC, &r));
	ASSERT_EQ(0, tt_flush(self->s));
	TT_ASSERT_PATTERN(b, len, 4);
	TT_ASSERT_PLACED(b + MV_HUGE, 2 * MV_HUGE, slow);
	TT_ASSERT_PLACED(b, MV_HUGE, fast);
	TT_ASSERT_PLACED(b + 3 * MV_HUGE, MV_HUGE, fast);
	ASSERT_EQ(0, tt_stats(self->s, &st));
	EXPECT_EQ(2 * MV_HUGE, st.mover_bytes);
	EXPECT_EQ(0, st.engine_bytes);
	EXPECT_EQ(2, st.huge_kept);
	EXPECT_EQ(0, st.huge_split);
	EXPECT_EQ(2, st.huge_partial);
	EXPECT_EQ(2 * half / ps, st.total.skipped_unsupported);
	EXPECT_EQ(split0, tt_st_vmstat("thp_split_page"));
	/* all four are still huge */
	EXPECT_EQ((long long)(len / 1024),
		  tt_st_smaps_kb(b, len, "AnonHugePages"));
	/*
	 * Synchronously (TT_IOC_MIGRATE keeps its word): the engine splits
	 * the two partly covered huge pages and moves the range's halves;
	 * nothing outside the range moves.
	 */
	ASSERT_EQ(0, tt_migrate_ex(self->s, b + half, sub, slow, 0, &r));
	ASSERT_EQ(sub / ps, r.pages);
	ASSERT_EQ(2 * half / ps, r.moved);
	ASSERT_EQ(2 * MV_HUGE / ps, r.already_on_node);
	TT_ASSERT_PATTERN(b, len, 4);
	TT_ASSERT_PLACED(b + half, sub, slow);
	TT_ASSERT_PLACED(b, half, fast);
	TT_ASSERT_PLACED(b + len - half, half, fast);
	ASSERT_EQ(0, tt_stats(self->s, &st));
	EXPECT_EQ(2 * half, st.engine_bytes);
	EXPECT_EQ(2, st.huge_split);
	EXPECT_EQ(2, st.huge_partial);
	EXPECT_EQ(split0 + 2, tt_st_vmstat("thp_split_page"));
	EXPECT_EQ((long long)(2 * MV_HUGE / 1024),
		  tt_st_smaps_kb(b, len, "AnonHugePages"));
	/* a base-page part of a range goes to the movers (mover_base 1) */
	base = tt_st_map(MV_HUGE, -1);
	ASSERT_NE(NULL, base);
	tt_st_fill(base, MV_HUGE, 5);
	ASSERT_EQ(0, tt_migrate_ex(self->s, base + ps, MV_HUGE - 2 * ps, slow,
				   0, &r));
	TT_ASSERT_RESULT(r, MV_HUGE / ps - 2, MV_HUGE / ps - 2, 0, 0, 0, 0);
	TT_ASSERT_PATTERN(base, MV_HUGE, 5);
	TT_ASSERT_PLACED(base + ps, MV_HUGE - 2 * ps, slow);
	TT_ASSERT_PLACED(base, ps, fast);
	TT_ASSERT_PLACED(base + MV_HUGE - ps, ps, fast);
	ASSERT_EQ(0, tt_stats(self->s, &st));
	EXPECT_EQ(2 * half, st.engine_bytes);
	EXPECT_EQ(2 * MV_HUGE + MV_HUGE - 2 * ps, st.mover_bytes);
	EXPECT_EQ(2, st.huge_partial);
	munmap(base, MV_HUGE);
}

TEST_F_TIMEOUT(mover, base_orders, 120)
{
	struct tt_ioc_stats st;
	struct tt_migrate_result r;
	size_t len = 8 * TT_ST_MIB, ps = self->ps, pages = len / ps;
	size_t half = len / 2, hole = 16 * ps, sub;
	int fast = self->topo.fast, slow = self->topo.slow;
	char *b;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, tt_st_param_write("mover_base", 1));
	self->len = len;
	self->buf = b = tt_st_map(len, -1);
	ASSERT_NE(NULL, b);
	tt_st_fill(b, len, 6);
	/* the last pages never touched again: not present */
	ASSERT_EQ(0, madvise(b + len - hole, hole, MADV_DONTNEED));
	ASSERT_EQ(0, tt_mover_start(self->s, 2));

	/* the first half, then the whole range: half of it is there */
	ASSERT_EQ(0, tt_migrate_ex(self->s, b, half, slow, 0, &r));
	TT_ASSERT_RESULT(r, half / ps, half / ps, 0, 0, 0, 0);
	ASSERT_EQ(0, tt_migrate_ex(self->s, b, len, slow, 0, &r));
	TT_ASSERT_RESULT(r, pages, (half - hole) / ps, half / ps, hole / ps,
			 0, 0);
	TT_ASSERT_PLACED(b, len - hole, slow);
	ASSERT_EQ(0, tt_stats(self->s, &st));
	EXPECT_EQ(len - hole, st.mover_bytes);
	EXPECT_EQ(0, st.engine_bytes);
	EXPECT_LE(2, st.mover_orders);
	EXPECT_EQ(0, st.mover_fallbacks);
	EXPECT_EQ(0, st.huge_kept);
	EXPECT_EQ(0, st.huge_split);

	/* back, from inside one block to inside another: exactly that */
	sub = len - hole - 2 * ps - MV_HUGE / 2;
	ASSERT_EQ(0, tt_migrate_ex(self->s, b + ps, sub, fast, 0, &r));
	TT_ASSERT_RESULT(r, sub / ps, sub / ps, 0, 0, 0, 0);
	TT_ASSERT_PLACED(b + ps, sub, fast);
	TT_ASSERT_PLACED(b, ps, slow);
	TT_ASSERT_PLACED(b + ps + sub, len - hole - ps - sub, slow);
	TT_ASSERT_PATTERN(b, len - hole, 6);
	ASSERT_EQ(0, tt_stats(self->s, &st));
	EXPECT_EQ(len - hole + sub, st.mover_bytes);
	EXPECT_EQ(0, st.engine_bytes);
	EXPECT_EQ(0, st.mover_fallbacks);
}

TEST_F_TIMEOUT(mover, base_large_folio, 120)
{
	size_t len = 2 * MV_HUGE, ps = self->ps, hp = MV_HUGE / ps;
	int fast = self->topo.fast, slow = self->topo.slow;
	struct tt_migrate_result r;
	char *b;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, tt_st_param_write("mover_base", 1));
	MV_NEED_THP(self, len, 10);
	b = self->buf;
	/*
	 * huge page 0 stays whole, mapped by ptes, in one vma again; no
	 * khugepaged pass (the pause's own wakeup) may collapse it back
	 * under a pmd, which the engine would then split and move
	 */
	ASSERT_EQ(0, madvise(b, len, MADV_NOHUGEPAGE));
	ASSERT_EQ(0, mprotect(b + ps, ps, PROT_READ));
	ASSERT_EQ(0, mprotect(b + ps, ps, PROT_READ | PROT_WRITE));
	ASSERT_EQ(MV_HUGE / 1024, tt_st_smaps_kb(b, len, "AnonHugePages"));
	ASSERT_EQ(0, tt_mover_start(self->s, 1));

	/* a range that cuts it: its part stays, nothing before it moves */
	ASSERT_EQ(-EBUSY, tt_migrate_ex(self->s, b + MV_HUGE / 2,
					len - MV_HUGE / 2, slow, 0, &r));
	EXPECT_EQ(hp / 2, r.skipped_unsupported);
	EXPECT_EQ(hp, r.moved);
	TT_ASSERT_PLACED(b, MV_HUGE, fast);
	TT_ASSERT_PLACED(b + MV_HUGE, MV_HUGE, slow);
	/* a range that holds it whole: it moves */
	ASSERT_EQ(0, tt_migrate_ex(self->s, b, len, slow, 0, &r));
	TT_ASSERT_RESULT(r, 2 * hp, hp, hp, 0, 0, 0);
	TT_ASSERT_PLACED(b, len, slow);
	TT_ASSERT_PATTERN(b, len, 10);
}

TEST_F_TIMEOUT(mover, base_collapse, 120)
{
	struct tt_ioc_stats st;
	struct tt_migrate_result r;
	size_t len = 4 * MV_HUGE, ps = self->ps, pages = len / ps;
	int slow = self->topo.slow;
	char *b;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, tt_st_param_write("mover_base", 2));
	/*
	 * Base pages; the two middle blocks may then hold huge pages (a
	 * wakeup of khugepaged, paused, may still collapse them first: they
	 * move whole either way), the outer ones may not.
	 */
	self->len = len;
	self->buf = b = tt_st_map(len, 1);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, madvise(b, len, MADV_NOHUGEPAGE));
	tt_st_fill(b, len, 8);
	ASSERT_EQ(0, madvise(b + MV_HUGE, 2 * MV_HUGE, MADV_HUGEPAGE));
	ASSERT_EQ(0, tt_mover_start(self->s, 1));

	/* two whole blocks and two halves */
	ASSERT_EQ(0, tt_migrate_ex(self->s, b + MV_HUGE / 2, len - MV_HUGE,
				   slow, 0, &r));
	TT_ASSERT_RESULT(r, pages - MV_HUGE / ps, pages - MV_HUGE / ps, 0, 0,
			 0, 0);
	TT_ASSERT_PATTERN(b, len, 8);
	TT_ASSERT_PLACED(b + MV_HUGE / 2, len - MV_HUGE, slow);
	TT_ASSERT_PLACED(b, MV_HUGE / 2, self->topo.fast);
	ASSERT_EQ(0, tt_stats(self->s, &st));
	EXPECT_EQ(len - MV_HUGE, st.mover_bytes);
	EXPECT_EQ(0, st.engine_bytes);
	/* the whole blocks were collapsed, and moved whole */
	EXPECT_EQ((long long)(2 * MV_HUGE / 1024),
		  tt_st_smaps_kb(b, len, "AnonHugePages"));
}

/* Where the bytes of [p, p + len) are: on @node (1), elsewhere (0). */
static int mv_all_on(struct tt_session *s, const void *p, size_t len,
		     int node)
{
	uint64_t b[TT_ST_MAX_NODES];

	if (tt_residency(s, p, len, b, TT_ST_MAX_NODES))
		return 0;
	return b[node] == len;
}

/* Wait until all of [p, p + len) is on @node, 10 s at most. */
static void mv_wait_on(struct tt_session *s, const void *p, size_t len,
		       int node)
{
	uint64_t t0 = tt_st_now_ns();

	while (!mv_all_on(s, p, len, node) &&
	       tt_st_now_ns() - t0 < 10000000000ULL)
		usleep(10000);
}

/* The session's migration counters, in the test's log. */
static void mv_log_stats(struct __test_metadata *_metadata,
			 const struct tt_ioc_stats *st)
{
	TH_LOG("evicted %llu prefetched %llu mover %llu engine %llu kept %llu split %llu partial %llu",
	       (unsigned long long)st->bytes_evicted,
	       (unsigned long long)st->bytes_prefetched,
	       (unsigned long long)st->mover_bytes,
	       (unsigned long long)st->engine_bytes,
	       (unsigned long long)st->huge_kept,
	       (unsigned long long)st->huge_split,
	       (unsigned long long)st->huge_partial);
}

/*
 * One training iteration of one layer saving @buf, @gap_ms (scaled by
 * tt_st_ms(): a kernel whose moves are slower keeps the round trip's
 * share of the gap) between its forward end and backward begin; with
 * @seen, set *@seen when no byte of @buf is on node @fast during the gap.
 */
static int mv_iteration(struct tt_session *s, char *buf, size_t len,
			unsigned int gap_ms, int fast, int *seen)
{
	uint64_t b[TT_ST_MAX_NODES], t0, gap_ns;

	if (tt_iter_begin(s) || tt_layer_begin(s, 0, TT_FWD) ||
	    tt_tensor_saved(s, 0, buf, len) || tt_layer_end(s, 0, TT_FWD))
		return -1;
	t0 = tt_st_now_ns();
	gap_ns = tt_st_ms(gap_ms) * 1000000ULL;
	while (tt_st_now_ns() - t0 < gap_ns) {
		if (seen && !*seen &&
		    !tt_residency(s, buf, len, b, TT_ST_MAX_NODES) && !b[fast])
			*seen = 1;
		usleep(5000);
	}
	if (tt_layer_begin(s, 0, TT_BWD) || tt_layer_end(s, 0, TT_BWD))
		return -1;
	return 0;
}

/*
 * The scheduler set to plan after one profiled iteration at 1 GiB/s each
 * way, evicting to @slow, with @movers movers started; 0 or -1.
 */
static int mv_sched_start(struct tt_session *s, int slow, unsigned int movers)
{
	struct tt_ioc_sched cfg = {
		.valid = TT_SCHED_SET_PROFILE | TT_SCHED_SET_STAY |
			 TT_SCHED_SET_RATES | TT_SCHED_SET_NODES,
		.profile_iters = 1,
		.stay_ns = 0,
		.er_bps = 1ULL << 30,
		.pr_bps = 1ULL << 30,
		.slow_node = slow,
		.fast_node = -1,
	};

	return tt_sched_set(s, &cfg) || tt_mover_start(s, movers) ? -1 : 0;
}

/*
 * The profiled iteration of a layer saving [t, t + tlen), then planned
 * ones until the tensor is seen off node @fast (5 at most): 1 when it
 * was, 0 when not (the session's counters and rates then logged), -1 on
 * an error.
 */
static int mv_until_evicted(struct __test_metadata *_metadata,
			    struct tt_session *s, char *t, size_t tlen,
			    int fast)
{
	struct tt_ioc_sched cfg;
	struct tt_ioc_stats st;
	int evicted = 0, i;

	if (mv_iteration(s, t, tlen, 600, fast, NULL))
		return -1;
	for (i = 0; i < 5 && !evicted; i++)
		if (mv_iteration(s, t, tlen, 600, fast, &evicted))
			return -1;
	if (!evicted && !tt_stats(s, &st) && !tt_sched_get(s, &cfg)) {
		mv_log_stats(_metadata, &st);
		TH_LOG("not seen evicted in 5 planned iterations of %u ms gaps: rates evict %llu prefetch %llu B/s, late %llu",
		       tt_st_ms(600), (unsigned long long)cfg.er_bps,
		       (unsigned long long)cfg.pr_bps,
		       (unsigned long long)st.late_count);
	}
	return evicted;
}

/*
 * The session's counters once the prefetches have been counted: the data
 * can be back before the work item that moved it counted it (10 s at
 * most). 0, or -1 when tt_stats() fails.
 */
static int mv_stats_settled(struct tt_session *s, struct tt_ioc_stats *st)
{
	uint64_t t0 = tt_st_now_ns();

	for (;;) {
		if (tt_stats(s, st))
			return -1;
		if (st->bytes_prefetched >= st->bytes_evicted ||
		    tt_st_now_ns() - t0 > 10000000000ULL)
			return 0;
		usleep(10000);
	}
}

/* The scheduler evicts and prefetches a THP-backed tensor: kept huge. */
static void mv_sched_round_trip(struct __test_metadata *_metadata,
				FIXTURE_DATA(mover) *self)
{
	struct tt_ioc_stats st;
	size_t len = 8 * TT_ST_MIB;
	long long huge0, split0, huge1;
	int fast = self->topo.fast;

	TT_SKIP_IF_SETUP_SKIPPED();
	MV_NEED_THP(self, len, 5);
	ASSERT_EQ(0, mv_sched_start(self->s, self->topo.slow, 2));
	huge0 = tt_st_smaps_kb(self->buf, len, "AnonHugePages");
	split0 = tt_st_vmstat("thp_split_page");

	/* the profile, then planned iterations until one is seen evicted */
	ASSERT_EQ(1, mv_until_evicted(_metadata, self->s, self->buf, len, fast))
		TH_LOG("the tensor was never seen off node %d", fast);
	/* the prefetch (or the rescue at the backward begin) brings it back */
	mv_wait_on(self->s, self->buf, len, fast);
	TT_ASSERT_PLACED(self->buf, len, fast);
	TT_ASSERT_PATTERN(self->buf, len, 5);
	huge1 = tt_st_smaps_kb(self->buf, len, "AnonHugePages");
	TH_LOG("AnonHugePages %lld kB before, %lld kB after the round trip; thp_split_page +%lld",
	       huge0, huge1, tt_st_vmstat("thp_split_page") - split0);
	EXPECT_EQ(huge0, huge1);
	EXPECT_EQ(split0, tt_st_vmstat("thp_split_page"));
	ASSERT_EQ(0, mv_stats_settled(self->s, &st));
	mv_log_stats(_metadata, &st);
	EXPECT_LE(len, st.bytes_evicted);
	EXPECT_EQ(st.bytes_evicted, st.bytes_prefetched);
	EXPECT_EQ(st.bytes_evicted + st.bytes_prefetched, st.mover_bytes);
	EXPECT_EQ(0, st.engine_bytes);
	EXPECT_EQ(st.mover_bytes / MV_HUGE, st.huge_kept);
	EXPECT_EQ(0, st.huge_split);
	EXPECT_EQ(0, st.huge_partial);
}

TEST_F_TIMEOUT(mover, sched_round_trip, 120)
{
	mv_sched_round_trip(_metadata, self);
}

/*
 * A tensor inside one huge page (under 2 MiB on THP-backed memory, as a
 * framework's allocator gives): with movers, the scheduler's eviction has
 * the engine split the huge page and move the tensor's pages (huge_split)
 * instead of leaving it on the fast node; it comes back, data intact.
 */
TEST_F_TIMEOUT(mover, sched_small_tensor_in_huge, 120)
{
	size_t len = 2 * MV_HUGE, tlen = MV_HUGE / 2;
	int fast = self->topo.fast, evicted;
	struct tt_ioc_stats st;
	char *t;

	TT_SKIP_IF_SETUP_SKIPPED();
	MV_NEED_THP(self, len, 6);
	t = self->buf + MV_HUGE / 4;
	ASSERT_EQ(0, mv_sched_start(self->s, self->topo.slow, 1));
	evicted = mv_until_evicted(_metadata, self->s, t, tlen, fast);
	ASSERT_LE(0, evicted);
	ASSERT_EQ(0, tt_stats(self->s, &st));
	TH_LOG("evicted %llu engine %llu mover %llu split %llu partial %llu",
	       (unsigned long long)st.bytes_evicted,
	       (unsigned long long)st.engine_bytes,
	       (unsigned long long)st.mover_bytes,
	       (unsigned long long)st.huge_split,
	       (unsigned long long)st.huge_partial);
	ASSERT_EQ(1, evicted) TH_LOG("the tensor inside a huge page was never seen off node %d",
				     fast);
	EXPECT_LE(1, st.huge_split);
	EXPECT_EQ(0, st.huge_partial);
	mv_wait_on(self->s, t, tlen, fast);
	TT_ASSERT_PLACED(t, tlen, fast);
	TT_ASSERT_PATTERN(self->buf, len, 6);
}

/*
 * A tensor that starts @off bytes into the first of two huge pages and
 * covers the rest of them (more than half of the first): the scheduler has
 * the movers move the first huge page whole, the bytes before the tensor
 * with it, and counts the tensor's bytes only: no huge page split, nothing
 * through the engine, both huge pages huge after the round trip, data
 * intact.
 */
static void mv_sched_edge(struct __test_metadata *_metadata,
			  FIXTURE_DATA(mover) *self, size_t off, uint64_t seed)
{
	size_t len = 2 * MV_HUGE, tlen;
	int fast = self->topo.fast;
	long long huge0, split0;
	struct tt_ioc_stats st;
	char *t;

	MV_NEED_THP(self, len, seed);
	t = self->buf + off;
	tlen = len - off;
	ASSERT_EQ(0, mv_sched_start(self->s, self->topo.slow, 1));
	huge0 = tt_st_smaps_kb(self->buf, len, "AnonHugePages");
	split0 = tt_st_vmstat("thp_split_page");
	ASSERT_EQ(1, mv_until_evicted(_metadata, self->s, t, tlen, fast))
		TH_LOG("the tensor was never seen off node %d", fast);
	mv_wait_on(self->s, self->buf, len, fast);
	ASSERT_EQ(0, mv_stats_settled(self->s, &st));
	mv_log_stats(_metadata, &st);
	/* the bytes before the tensor came back with their huge page */
	TT_ASSERT_PLACED(self->buf, len, fast);
	TT_ASSERT_PATTERN(self->buf, len, seed);
	EXPECT_EQ(huge0, tt_st_smaps_kb(self->buf, len, "AnonHugePages"));
	EXPECT_EQ(split0, tt_st_vmstat("thp_split_page"));
	EXPECT_EQ(0, st.engine_bytes);
	EXPECT_EQ(0, st.huge_split);
	EXPECT_EQ(0, st.huge_partial);
	EXPECT_LE(tlen, st.bytes_evicted);
	EXPECT_EQ(0, st.bytes_evicted % tlen);
	EXPECT_EQ(st.bytes_evicted, st.bytes_prefetched);
	/* the tensor's bytes only, not those moved with them */
	EXPECT_EQ(st.bytes_evicted + st.bytes_prefetched, st.mover_bytes);
	EXPECT_EQ(2 * (st.bytes_evicted / tlen) * (len / MV_HUGE),
		  st.huge_kept);
}

/* Behind an allocator's header: one base page into the first huge page. */
TEST_F_TIMEOUT(mover, sched_edge_slack, 120)
{
	TT_SKIP_IF_SETUP_SKIPPED();
	mv_sched_edge(_metadata, self, self->ps, 7);
}

/*
 * A quarter of a huge page into it (the end of the chunk before the tensor
 * in a heap): three quarters of it are the tensor's, it moves whole.
 */
TEST_F_TIMEOUT(mover, sched_edge_majority, 120)
{
	TT_SKIP_IF_SETUP_SKIPPED();
	mv_sched_edge(_metadata, self, MV_HUGE / 4, 8);
}

/*
 * A tensor whose head is 64 KiB of base pages (its mapping does not start
 * at a huge-page boundary) before a huge page, mover_base 1: where
 * move_pages(2) batches its TLB flushes (Linux 6.3 and later) a mover moves
 * the head too, as a base-page order; before, the engine moves it. Either way it all comes
 * back, data intact, the huge page kept.
 */
TEST_F_TIMEOUT(mover, sched_small_base_head, 120)
{
	size_t len = 2 * MV_HUGE, head = 64 << 10, tlen = head + MV_HUGE;
	int fast = self->topo.fast;
	struct tt_ioc_stats st;
	char *t;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, tt_st_param_write("mover_base", 1));
	/* a mapping that starts @head before a huge-page boundary */
	t = tt_st_map(len, 1);
	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, munmap(t, MV_HUGE - head));
	self->buf = t + MV_HUGE - head;
	self->len = len = tlen;
	tt_st_fill(self->buf, len, 9);
	if (tt_st_smaps_kb(self->buf + head, MV_HUGE, "AnonHugePages") !=
	    (long long)(MV_HUGE >> 10))
		SKIP(return, "the kernel gave no huge page to a MADV_HUGEPAGE block");
	t = self->buf;
	ASSERT_EQ(0, mv_sched_start(self->s, self->topo.slow, 1));
	ASSERT_EQ(1, mv_until_evicted(_metadata, self->s, t, tlen, fast))
		TH_LOG("the tensor was never seen off node %d", fast);
	mv_wait_on(self->s, t, tlen, fast);
	ASSERT_EQ(0, mv_stats_settled(self->s, &st));
	mv_log_stats(_metadata, &st);
	TT_ASSERT_PLACED(t, tlen, fast);
	TT_ASSERT_PATTERN(self->buf, len, 9);
	EXPECT_EQ(0, st.huge_split);
	EXPECT_EQ(st.bytes_evicted, st.bytes_prefetched);
	EXPECT_EQ(0, st.bytes_evicted % tlen);
	if (tt_st_kernel_at_least(6, 3)) {
		EXPECT_EQ(0, st.engine_bytes);
		EXPECT_EQ(st.bytes_evicted + st.bytes_prefetched,
			  st.mover_bytes);
	} else {
		EXPECT_EQ((st.bytes_evicted + st.bytes_prefetched) / tlen *
			  head, st.engine_bytes);
	}
}

/* Chunks smaller than a huge page are rounded up: still whole huge pages. */
TEST_F_TIMEOUT(mover, sched_round_trip_small_batch, 120)
{
	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, tt_st_read_ll(MV_BATCH_PARAM, &self->batch_pages));
	ASSERT_EQ(0, tt_st_write_file(MV_BATCH_PARAM, "128"));
	mv_sched_round_trip(_metadata, self);
}

/* ---- fake movers on a raw session descriptor ---------------------------- */

static int mv_ioctl(int fd, struct tt_ioc_mover *m)
{
	return ioctl(fd, TT_IOC_MOVER, m) < 0 ? -errno : 0;
}

/**
 * struct mv_fake - a hand-driven mover
 * @fd:    the session.
 * @to:    pipe to the test: 'r' registered, 't' order taken, 'd' done.
 * @from:  pipe from the test: 'g' complete the order now.
 * @order: the order taken.
 * @done_ret: what TT_MOVER_DONE returned.
 */
struct mv_fake {
	int fd;
	int to[2];
	int from[2];
	struct tt_ioc_mover order;
	int done_ret;
};

static void mv_say(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		_exit(3);
}

static char mv_hear(int fd)
{
	char c = 0;

	if (read(fd, &c, 1) != 1)
		return 0;
	return c;
}

/* The killed mover: registers, takes one order, then waits to be killed. */
static int mv_fake_killed(void *arg)
{
	struct mv_fake *f = arg;
	struct tt_ioc_mover m = { .flags = TT_MOVER_REGISTER };

	if (mv_ioctl(f->fd, &m))
		_exit(1);
	mv_say(f->to[1], 'r');
	memset(&m, 0, sizeof(m));
	m.flags = TT_MOVER_TAKE | TT_MOVER_WAIT;
	if (mv_ioctl(f->fd, &m) || !m.id)
		_exit(2);
	mv_say(f->to[1], 't');
	for (;;)
		pause();
	return 0;
}

/**
 * struct mv_migration - a TT_IOC_MIGRATE on another thread
 * @fd:   the session.
 * @buf:  range start.
 * @len:  range length.
 * @node: target node.
 * @ret:  its return value.
 * @res:  its result.
 * @ns:   how long it took.
 */
struct mv_migration {
	int fd;
	void *buf;
	size_t len;
	int node;
	int ret;
	struct tt_migrate_result res;
	uint64_t ns;
};

static void *mv_migrate_main(void *arg)
{
	struct mv_migration *m = arg;
	uint64_t t0 = tt_st_now_ns();

	m->ret = tt_st_ioc_migrate(m->fd, (uintptr_t)m->buf, m->len, m->node,
				   0, &m->res);
	m->ns = tt_st_now_ns() - t0;
	return NULL;
}

TEST_F_TIMEOUT(mover, killed_mid_order, 120)
{
	size_t len = 4 * MV_HUGE, pages = len / self->ps, stack_len = 1 << 20;
	struct mv_migration mig = { 0 };
	struct mv_fake f = { 0 };
	struct tt_ioc_stats st;
	pthread_t th;
	char *stack;
	pid_t child;
	int status;

	TT_SKIP_IF_SETUP_SKIPPED();
	MV_NEED_THP(self, len, 6);
	/* far beyond the test's time: only the death detection can help */
	mv_set_timeout(60000);
	self->fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	f.fd = self->fd;
	ASSERT_EQ(0, pipe(f.to));
	stack = mmap(NULL, stack_len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	ASSERT_NE(MAP_FAILED, stack);
	child = clone(mv_fake_killed, stack + stack_len, CLONE_VM | SIGCHLD,
		      &f);
	ASSERT_LT(0, child);
	ASSERT_EQ('r', mv_hear(f.to[0]));

	mig.fd = self->fd;
	mig.buf = self->buf;
	mig.len = len;
	mig.node = self->topo.slow;
	ASSERT_EQ(0, pthread_create(&th, NULL, mv_migrate_main, &mig));
	ASSERT_EQ('t', mv_hear(f.to[0]));
	/* the mover holds the first order: kill it */
	ASSERT_EQ(0, kill(child, SIGKILL));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_EQ(0, pthread_join(th, NULL));
	munmap(stack, stack_len);
	close(f.to[0]);
	close(f.to[1]);

	ASSERT_EQ(0, mig.ret);
	TT_ASSERT_RESULT(mig.res, pages, pages, 0, 0, 0, 0);
	TT_ASSERT_PATTERN(self->buf, len, 6);
	TT_ASSERT_PLACED(self->buf, len, self->topo.slow);
	TH_LOG("migration done %.0f ms after it started (mover_timeout_ms 60000)",
	       mig.ns / 1e6);
	EXPECT_GT(60000000000ULL, mig.ns);
	ASSERT_EQ(0, tt_st_ioc_stats(self->fd, &st));
	EXPECT_EQ(0, st.movers);
	EXPECT_LE(1, st.mover_fallbacks);
	EXPECT_EQ(0, st.mover_orders);
	EXPECT_EQ(0, st.mover_bytes);
	EXPECT_EQ(len, st.engine_bytes);
	EXPECT_EQ(pages, st.total.moved);
}

/* The stalled mover: takes one order, completes it when told to. */
static void *mv_fake_stalled(void *arg)
{
	struct mv_fake *f = arg;
	struct tt_ioc_mover m = { .flags = TT_MOVER_REGISTER };
	int32_t status[64];
	void *pages[64];
	int nodes[64], st[64];
	unsigned int i, n;

	if (mv_ioctl(f->fd, &m))
		return NULL;
	mv_say(f->to[1], 'r');
	memset(&m, 0, sizeof(m));
	m.flags = TT_MOVER_TAKE | TT_MOVER_WAIT;
	if (mv_ioctl(f->fd, &m) || !m.id)
		return NULL;
	f->order = m;
	mv_say(f->to[1], 't');
	if (mv_hear(f->from[0]) != 'g')
		return NULL;
	/* the real work, late: the pages are on the target already */
	n = m.len / m.huge_size;
	for (i = 0; i < n && i < 64; i++) {
		pages[i] = (char *)(uintptr_t)m.addr + i * m.huge_size;
		nodes[i] = m.nodes[0];
	}
	syscall(SYS_move_pages, 0, n, pages, nodes, st, MPOL_MF_MOVE);
	for (i = 0; i < n && i < 64; i++)
		status[i] = st[i];
	memset(&m, 0, sizeof(m));
	m.flags = TT_MOVER_DONE | TT_MOVER_UNREGISTER;
	m.done_id = f->order.id;
	m.nr_status = n;
	m.status_ptr = (uintptr_t)status;
	f->done_ret = mv_ioctl(f->fd, &m);
	mv_say(f->to[1], 'd');
	return NULL;
}

TEST_F_TIMEOUT(mover, stalled_then_late, 120)
{
	size_t len = 4 * MV_HUGE, pages = len / self->ps;
	struct mv_migration mig = { 0 };
	struct mv_fake f = { 0 };
	struct tt_ioc_stats st;
	pthread_t mover, th;

	TT_SKIP_IF_SETUP_SKIPPED();
	MV_NEED_THP(self, len, 7);
	mv_set_timeout(300);
	self->fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	f.fd = self->fd;
	ASSERT_EQ(0, pipe(f.to));
	ASSERT_EQ(0, pipe(f.from));
	ASSERT_EQ(0, pthread_create(&mover, NULL, mv_fake_stalled, &f));
	ASSERT_EQ('r', mv_hear(f.to[0]));

	mig.fd = self->fd;
	mig.buf = self->buf;
	mig.len = len;
	mig.node = self->topo.slow;
	ASSERT_EQ(0, pthread_create(&th, NULL, mv_migrate_main, &mig));
	ASSERT_EQ('t', mv_hear(f.to[0]));
	/* the migration ends without the mover: the order timed out */
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(0, mig.ret);
	TT_ASSERT_RESULT(mig.res, pages, pages, 0, 0, 0, 0);
	TT_ASSERT_PLACED(self->buf, len, self->topo.slow);
	TH_LOG("migration done after %.0f ms (mover_timeout_ms 300 per huge page, 4 huge pages)",
	       mig.ns / 1e6);

	/* now the late completion */
	mv_say(f.from[1], 'g');
	ASSERT_EQ('d', mv_hear(f.to[0]));
	ASSERT_EQ(0, pthread_join(mover, NULL));
	EXPECT_EQ(0, f.done_ret);
	TT_ASSERT_PATTERN(self->buf, len, 7);
	TT_ASSERT_PLACED(self->buf, len, self->topo.slow);
	ASSERT_EQ(0, tt_st_ioc_stats(self->fd, &st));
	EXPECT_EQ(1, st.mover_late);
	EXPECT_LE(1, st.mover_fallbacks);
	EXPECT_EQ(0, st.mover_orders);
	/* counted once, by the engine */
	EXPECT_EQ(pages, st.total.moved);
	EXPECT_EQ(len, st.engine_bytes + st.mover_bytes);
	EXPECT_EQ(0, st.movers);
	close(f.to[0]);
	close(f.to[1]);
	close(f.from[0]);
	close(f.from[1]);
}

TEST_F_TIMEOUT(mover, base_needs_base_movers, 120)
{
	size_t len = 4 * MV_HUGE, pages = len / self->ps;
	struct tt_ioc_mover m = { .flags = TT_MOVER_REGISTER };
	struct mv_migration mig = { 0 };
	struct tt_ioc_stats st;
	pthread_t th;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, tt_st_param_write("mover_base", 1));
	mv_set_timeout(200);
	self->len = len;
	self->buf = tt_st_map(len, -1);
	ASSERT_NE(NULL, self->buf);
	tt_st_fill(self->buf, len, 9);
	self->fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	/* this thread: a mover that never takes an order; another migrates */
	ASSERT_EQ(0, mv_ioctl(self->fd, &m));
	mig.fd = self->fd;
	mig.buf = self->buf;
	mig.len = len;
	mig.node = self->topo.slow;
	ASSERT_EQ(0, pthread_create(&th, NULL, mv_migrate_main, &mig));
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(0, mig.ret);
	TT_ASSERT_RESULT(mig.res, pages, pages, 0, 0, 0, 0);
	ASSERT_EQ(0, tt_st_ioc_stats(self->fd, &st));
	EXPECT_EQ(len, st.engine_bytes);
	EXPECT_EQ(0, st.mover_fallbacks);

	/* now it says it takes base-page orders: one is issued, times out */
	m.flags = TT_MOVER_REGISTER | TT_MOVER_BASE;
	ASSERT_EQ(0, mv_ioctl(self->fd, &m));
	mig.node = self->topo.fast;
	ASSERT_EQ(0, pthread_create(&th, NULL, mv_migrate_main, &mig));
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(0, mig.ret);
	TT_ASSERT_RESULT(mig.res, pages, pages, 0, 0, 0, 0);
	TT_ASSERT_PATTERN(self->buf, len, 9);
	TT_ASSERT_PLACED(self->buf, len, self->topo.fast);
	ASSERT_EQ(0, tt_st_ioc_stats(self->fd, &st));
	EXPECT_LE(1, st.mover_fallbacks);
	EXPECT_EQ(2 * len, st.engine_bytes);
	EXPECT_EQ(0, st.mover_orders);
}

TEST_F_TIMEOUT(mover, ioctl_errors, 60)
{
	struct tt_ioc_mover m;
	int32_t status = 0;

	TT_SKIP_IF_SETUP_SKIPPED();
	self->fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	memset(&m, 0, sizeof(m));
	EXPECT_EQ(-EINVAL, mv_ioctl(self->fd, &m));		/* no bit */
	m.flags = 1U << 31;
	EXPECT_EQ(-EOPNOTSUPP, mv_ioctl(self->fd, &m));
	m.flags = TT_MOVER_WAIT;
	EXPECT_EQ(-EINVAL, mv_ioctl(self->fd, &m));		/* WAIT alone */
	m.flags = TT_MOVER_TAKE;
	EXPECT_EQ(-EINVAL, mv_ioctl(self->fd, &m));		/* not registered */
	m.flags = TT_MOVER_BASE;
	EXPECT_EQ(-EINVAL, mv_ioctl(self->fd, &m));		/* BASE alone */
	m.flags = TT_MOVER_REGISTER | TT_MOVER_BASE;
	EXPECT_EQ(0, mv_ioctl(self->fd, &m));
	m.flags = TT_MOVER_REGISTER;
	EXPECT_EQ(0, mv_ioctl(self->fd, &m));
	EXPECT_EQ(0, mv_ioctl(self->fd, &m));			/* again: fine */
	m.flags = TT_MOVER_TAKE;
	EXPECT_EQ(0, mv_ioctl(self->fd, &m));
	EXPECT_EQ(0, m.id);					/* none queued */
	memset(&m, 0, sizeof(m));
	m.flags = TT_MOVER_DONE;
	m.done_id = 12345;
	m.nr_status = 1;
	m.status_ptr = (uintptr_t)&status;
	EXPECT_EQ(-ENOENT, mv_ioctl(self->fd, &m));		/* never issued */
	m.flags = TT_MOVER_UNREGISTER;
	EXPECT_EQ(0, mv_ioctl(self->fd, &m));
	m.flags = TT_MOVER_TAKE;
	EXPECT_EQ(-EINVAL, mv_ioctl(self->fd, &m));
	EXPECT_EQ(-EINVAL, tt_mover_start(self->s, 65));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-EBADF, tt_mover_start(NULL, 1));
	EXPECT_EQ(EBADF, errno);
}

/* The Cpus_allowed_list of this process's thread named @comm, in @buf. */
static int mv_thread_cpus(const char *comm, char *buf, size_t size)
{
	char path[300], name[32], line[256];
	struct dirent *d;
	int found = -ENOENT;
	FILE *f;
	DIR *dir;

	dir = opendir("/proc/self/task");
	if (!dir)
		return -errno;
	while (found && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", d->d_name);
		if (tt_st_read_file(path, name, sizeof(name)) < 0 ||
		    strcmp(name, comm))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "Cpus_allowed_list:", 18)) {
				snprintf(buf, size, "%s", line + 18 + strspn(line + 18, " \t"));
				buf[strcspn(buf, "\n")] = 0;
				found = 0;
			}
		fclose(f);
	}
	closedir(dir);
	return found;
}

/*
 * Until no thread named @comm is left (2 s at most): a joined thread's
 * /proc entry can outlive pthread_join() for a moment, with its old
 * affinity. 0, or -1 when one is still there.
 */
static int mv_threads_gone(const char *comm)
{
	uint64_t t0 = tt_st_now_ns();
	char cpus[64];

	while (mv_thread_cpus(comm, cpus, sizeof(cpus)) != -ENOENT) {
		if (tt_st_now_ns() - t0 > 2000000000ULL)
			return -1;
		usleep(1000);
	}
	return 0;
}

TEST_F_TIMEOUT(mover, cpus, 60)
{
	static const char *const wqs[] = {
		"tiertrain", "tiertrain_evict", "tiertrain_prefetch",
	};
	char path[128], mask[64], cpus[64], want[16];
	cpu_set_t mine, one;
	struct tt_session *s;
	unsigned int i;
	int other;

	TT_SKIP_IF_SETUP_SKIPPED();
	for (i = 0; i < sizeof(wqs) / sizeof(wqs[0]); i++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/virtual/workqueue/%s/cpumask", wqs[i]);
		ASSERT_LT(0, tt_st_read_file(path, mask, sizeof(mask)))
			TH_LOG("%s: no cpumask", wqs[i]);
		EXPECT_EQ(0, tt_st_write_file(path, mask));
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "one CPU: nowhere else to put the movers");
	/* the opener on CPU 0, its movers asked for on another CPU */
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(mine), &mine));
	for (other = 1; other < CPU_SETSIZE && !CPU_ISSET(other, &mine); other++)
		;
	if (other == CPU_SETSIZE || !CPU_ISSET(0, &mine))
		SKIP(return, "this process may not run on CPU 0 and another");
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	snprintf(want, sizeof(want), "%d", other);
	/* one mover (the fixture's session has none) */
	setenv("TIERTRAIN_MOVER", "1", 1);
	setenv("TIERTRAIN_MOVER_CPUS", want, 1);
	s = tt_open();
	unsetenv("TIERTRAIN_MOVER_CPUS");
	ASSERT_NE(NULL, s) TH_LOG("tt_open: %s", strerror(errno));
	EXPECT_EQ(0, mv_thread_cpus("tt-mover", cpus, sizeof(cpus)));
	EXPECT_STREQ(want, cpus);
	tt_close(s);
	ASSERT_EQ(0, mv_threads_gone("tt-mover"));
	/* without it they run where the opener may */
	s = tt_open();
	ASSERT_NE(NULL, s);
	EXPECT_EQ(0, mv_thread_cpus("tt-mover", cpus, sizeof(cpus)));
	EXPECT_STREQ("0", cpus);
	tt_close(s);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(mine), &mine));
	setenv("TIERTRAIN_MOVER_CPUS", "0-x", 1);
	errno = 0;
	EXPECT_EQ(NULL, tt_open());
	EXPECT_EQ(EINVAL, errno);
	unsetenv("TIERTRAIN_MOVER_CPUS");
	setenv("TIERTRAIN_MOVER", "0", 1);
}

TEST_HARNESS_MAIN
