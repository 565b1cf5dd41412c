// SPDX-License-Identifier: GPL-2.0
/*
 * Migration with the in-kernel engine (TT_IOC_MIGRATE through libtiertrain),
 * every result checked three ways: the data pattern, move_pages(2) status
 * queries (an observer independent of tiertrain) and TT_IOC_RESIDENCY.
 *
 *   base_256m       256 MiB of base pages to the slow node and back, result
 *                   counters and session statistics checked.
 *   sub_range       the middle of a mapping moves, its edges stay.
 *   two_mappings    one range over two adjacent anonymous VMAs.
 *   untouched_pages never-touched and zero-page pages are skipped as not
 *                   present and stay unpopulated.
 *   thp             a THP-backed range to the slow node and back; logs
 *                   whether the huge pages were split.
 *   large_pte       a huge page mapped by ptes (an mprotect of one of its
 *                   pages split its pmd) is not moved by the engine: its
 *                   pages count as skipped_unsupported and in the session's
 *                   large_pte, the range's other huge page moves, and the
 *                   call fails with EBUSY.
 *
 * base_256m and thp use 1/TT_ST_SIZE_DIV of their sizes when that
 * variable is set (tt_st_scaled(); run-vm sets it on emulated CXL memory).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tt_harness.h"

FIXTURE(migrate)
{
	struct tt_session *s;
	struct tt_st_topo topo;
	size_t ps;
	void *buf;
	size_t len;
	long long khugepaged_sleep;	/* to restore, -1: untouched */
	long long mover_timeout;	/* to restore, -1: untouched */
};

#define MIG_MOVER_TIMEOUT	TT_ST_SYSMOD "/parameters/mover_timeout_ms"

FIXTURE_SETUP(migrate)
{
	self->buf = NULL;
	self->s = NULL;
	self->khugepaged_sleep = -1;
	self->mover_timeout = -1;
	self->ps = tt_page_size();
	TT_SETUP_NODES(&self->topo, 1);
	TT_OPEN_KERNEL_SESSION(&self->s);
}

FIXTURE_TEARDOWN(migrate)
{
	if (self->buf)
		munmap(self->buf, self->len);
	if (self->khugepaged_sleep >= 0)
		tt_st_khugepaged_resume(self->khugepaged_sleep);
	if (self->mover_timeout >= 0) {
		char v[32];

		snprintf(v, sizeof(v), "%lld", self->mover_timeout);
		tt_st_write_file(MIG_MOVER_TIMEOUT, v);
	}
	tt_close(self->s);
}

/* Skip unless @node has @bytes free plus a margin for the kernel. */
static int tt_need_free(int node, size_t bytes)
{
	uint64_t fr = 0;

	if (tt_st_node_mem(node, &fr, NULL))
		return 0;
	return fr >= bytes + 64 * TT_ST_MIB;
}

/*
 * Map @len bytes of MADV_HUGEPAGE memory into the fixture, filled with
 * @seed, and read how much of it is in huge pages (@huge_kb, AnonHugePages).
 * khugepaged is paused first: it collapses split pages again, into a huge
 * page on the node it saw them on when it scanned, and a racing collapse
 * could put them back on the node they just left. Return: 0 or -errno.
 */
static int map_thp(FIXTURE_DATA(migrate) *self, size_t len, uint64_t seed,
		   long long *huge_kb)
{
	int ret = tt_st_khugepaged_pause(&self->khugepaged_sleep);

	if (ret)
		return ret;
	self->len = len;
	self->buf = tt_st_map(len, 1);
	if (!self->buf)
		return errno ? -errno : -ENOMEM;
	tt_st_fill(self->buf, len, seed);
	*huge_kb = tt_st_smaps_kb(self->buf, len, "AnonHugePages");
	return 0;
}

TEST_F_TIMEOUT(migrate, base_256m, 900)
{
	struct tt_ioc_stats st0, st1;
	struct tt_migrate_result r;
	size_t len = tt_st_scaled(256 * TT_ST_MIB);
	uint64_t pages = len / self->ps, t0;
	int fast = self->topo.fast, slow = self->topo.slow;

	TT_SKIP_IF_SETUP_SKIPPED();
	if (!tt_need_free(slow, len))
		SKIP(return, "node %d has less than %zu MiB free", slow,
		     len / TT_ST_MIB + 64);
	self->len = len;
	self->buf = tt_st_map(len, -1);
	ASSERT_NE(NULL, self->buf);
	tt_st_fill(self->buf, len, 1);
	TT_ASSERT_PLACED(self->buf, len, fast);
	ASSERT_EQ(0, tt_stats(self->s, &st0));
	ASSERT_EQ((uint32_t)TT_ABI_VERSION, st0.abi_version);
	/* a module may fill less than this header knows, never less than v1 */
	ASSERT_LE((uint32_t)(offsetof(struct tt_ioc_stats, total) +
			     sizeof(st0.total)), st0.size);
	ASSERT_GE((uint32_t)sizeof(st0), st0.size);

	t0 = tt_st_now_ns();
	ASSERT_EQ(0, tt_migrate_ex(self->s, self->buf, len, slow, 0, &r));
	TH_LOG("%zu MiB node %d -> %d: %.1f ms (engine %.1f ms)",
	       len / TT_ST_MIB, fast, slow, (tt_st_now_ns() - t0) / 1e6,
	       r.elapsed_ns / 1e6);
	TT_ASSERT_RESULT(r, pages, pages, 0, 0, 0, 0);
	ASSERT_GT(r.elapsed_ns, (uint64_t)0);
	TT_ASSERT_PATTERN(self->buf, len, 1);
	TT_ASSERT_PLACED(self->buf, len, slow);
	TT_ASSERT_RESIDENT(self->s, self->buf, len, slow, len, 0);

	t0 = tt_st_now_ns();
	ASSERT_EQ(0, tt_migrate_ex(self->s, self->buf, len, fast, 0, &r));
	TH_LOG("%zu MiB node %d -> %d: %.1f ms (engine %.1f ms)",
	       len / TT_ST_MIB, slow, fast, (tt_st_now_ns() - t0) / 1e6,
	       r.elapsed_ns / 1e6);
	TT_ASSERT_RESULT(r, pages, pages, 0, 0, 0, 0);
	TT_ASSERT_PATTERN(self->buf, len, 1);
	TT_ASSERT_PLACED(self->buf, len, fast);
	TT_ASSERT_RESIDENT(self->s, self->buf, len, fast, len, 0);

	/* a second move to where the pages are moves nothing */
	ASSERT_EQ(0, tt_migrate_ex(self->s, self->buf, len, fast, 0, &r));
	TT_ASSERT_RESULT(r, pages, 0, pages, 0, 0, 0);
	TT_ASSERT_PATTERN(self->buf, len, 1);

	ASSERT_EQ(0, tt_stats(self->s, &st1));
	EXPECT_EQ(3ULL, st1.migrate_calls - st0.migrate_calls);
	EXPECT_EQ(3 * pages, st1.total.pages - st0.total.pages);
	EXPECT_EQ(2 * pages, st1.total.moved - st0.total.moved);
	EXPECT_EQ(pages, st1.total.already_on_node - st0.total.already_on_node);
	EXPECT_EQ(0ULL, st1.total.skipped_busy - st0.total.skipped_busy);
	EXPECT_EQ(len, st1.bytes_to_slow - st0.bytes_to_slow);
	EXPECT_EQ(len, st1.bytes_to_fast - st0.bytes_to_fast);
	EXPECT_EQ(0ULL, st1.async_queued - st0.async_queued);
}

TEST_F_TIMEOUT(migrate, sub_range, 300)
{
	struct tt_migrate_result r;
	size_t len = 16 * TT_ST_MIB, q = len / 4;
	int fast = self->topo.fast, slow = self->topo.slow;
	char *b;

	TT_SKIP_IF_SETUP_SKIPPED();
	self->len = len;
	self->buf = b = tt_st_map(len, -1);
	ASSERT_NE(NULL, b);
	tt_st_fill(b, len, 2);

	/* [q, 3q) moves, [0, q) and [3q, len) stay */
	ASSERT_EQ(0, tt_migrate_ex(self->s, b + q, 2 * q, slow, 0, &r));
	TT_ASSERT_RESULT(r, 2 * q / self->ps, 2 * q / self->ps, 0, 0, 0, 0);
	TT_ASSERT_PATTERN(b, len, 2);
	TT_ASSERT_PLACED(b, q, fast);
	TT_ASSERT_PLACED(b + q, 2 * q, slow);
	TT_ASSERT_PLACED(b + 3 * q, q, fast);
	TT_ASSERT_RESIDENT(self->s, b, len, slow, 2 * q, 0);
	TT_ASSERT_RESIDENT(self->s, b, len, fast, 2 * q, 0);

	/* a single page at each edge of the moved part */
	ASSERT_EQ(0, tt_migrate_ex(self->s, b + q - self->ps, self->ps, slow,
				   0, &r));
	TT_ASSERT_RESULT(r, 1, 1, 0, 0, 0, 0);
	ASSERT_EQ(0, tt_migrate_ex(self->s, b + 3 * q - self->ps, self->ps,
				   fast, 0, &r));
	TT_ASSERT_RESULT(r, 1, 1, 0, 0, 0, 0);
	TT_ASSERT_PAGES_ON(b, len, slow, 2 * q / self->ps);
	TT_ASSERT_PLACED(b + q - self->ps, self->ps, slow);
	TT_ASSERT_PLACED(b + 3 * q - self->ps, self->ps, fast);
	TT_ASSERT_PATTERN(b, len, 2);

	/* everything back; only the slow pages move */
	ASSERT_EQ(0, tt_migrate_ex(self->s, b, len, fast, 0, &r));
	TT_ASSERT_RESULT(r, len / self->ps, 2 * q / self->ps,
			 2 * q / self->ps, 0, 0, 0);
	TT_ASSERT_PLACED(b, len, fast);
	TT_ASSERT_PATTERN(b, len, 2);
}

TEST_F_TIMEOUT(migrate, two_mappings, 300)
{
	struct tt_migrate_result r;
	size_t len = 16 * TT_ST_MIB, pages = len / self->ps;
	int fast = self->topo.fast, slow = self->topo.slow;
	char *b;

	TT_SKIP_IF_SETUP_SKIPPED();
	self->len = len;
	self->buf = b = tt_st_map(len, -1);
	ASSERT_NE(NULL, b);
	/* a different VMA flag on the lower half splits the mapping in two */
	ASSERT_EQ(0, madvise(b, len / 2, MADV_DONTFORK));
	ASSERT_EQ(2, tt_st_nr_vmas(b, len));
	tt_st_fill(b, len, 3);

	ASSERT_EQ(0, tt_migrate_ex(self->s, b, len, slow, 0, &r));
	TT_ASSERT_RESULT(r, pages, pages, 0, 0, 0, 0);
	TT_ASSERT_PLACED(b, len, slow);
	TT_ASSERT_RESIDENT(self->s, b, len, slow, len, 0);
	TT_ASSERT_PATTERN(b, len, 3);

	/* across the boundary only: the last and first MiB of each VMA */
	ASSERT_EQ(0, tt_migrate_ex(self->s, b + len / 2 - TT_ST_MIB,
				   2 * TT_ST_MIB, fast, 0, &r));
	TT_ASSERT_RESULT(r, 2 * TT_ST_MIB / self->ps, 2 * TT_ST_MIB / self->ps,
			 0, 0, 0, 0);
	TT_ASSERT_PLACED(b + len / 2 - TT_ST_MIB, 2 * TT_ST_MIB, fast);
	TT_ASSERT_PAGES_ON(b, len, slow, pages - 2 * TT_ST_MIB / self->ps);

	ASSERT_EQ(0, tt_migrate_ex(self->s, b, len, fast, 0, &r));
	TT_ASSERT_RESULT(r, pages, pages - 2 * TT_ST_MIB / self->ps,
			 2 * TT_ST_MIB / self->ps, 0, 0, 0);
	TT_ASSERT_PLACED(b, len, fast);
	TT_ASSERT_PATTERN(b, len, 3);
	ASSERT_EQ(2, tt_st_nr_vmas(b, len));
}

TEST_F_TIMEOUT(migrate, untouched_pages, 300)
{
	struct tt_migrate_result r;
	struct tt_st_place *pl;
	size_t len = 16 * TT_ST_MIB, pages = len / self->ps, i;
	size_t written = 0, zero = 0, untouched = 0;
	int fast = self->topo.fast, slow = self->topo.slow;
	char sink = 0;
	char *b;

	TT_SKIP_IF_SETUP_SKIPPED();
	self->len = len;
	self->buf = b = tt_st_map(len, -1);
	ASSERT_NE(NULL, b);
	/*
	 * Page i % 4: 0 and 2 written, 1 read (maps the shared zero page),
	 * 3 never touched.
	 */
	for (i = 0; i < pages; i++) {
		char *p = b + i * self->ps;

		switch (i % 4) {
		case 0:
		case 2:
			memset(p, (int)(i & 0xff) | 1, self->ps);
			written++;
			break;
		case 1:
			sink |= __atomic_load_n(p, __ATOMIC_RELAXED);
			zero++;
			break;
		default:
			untouched++;
		}
	}
	ASSERT_EQ(0, sink);
	ASSERT_EQ((long long)(written + zero), tt_st_mincore(b, len));
	TT_ASSERT_RESIDENT(self->s, b, len, fast, written * self->ps,
			   (zero + untouched) * self->ps);

	ASSERT_EQ(0, tt_migrate_ex(self->s, b, len, slow, 0, &r));
	TT_ASSERT_RESULT(r, pages, written, 0, zero + untouched, 0, 0);
	TT_ASSERT_RESIDENT(self->s, b, len, slow, written * self->ps,
			   (zero + untouched) * self->ps);
	/* 6.1's move_pages(2) says -EFAULT for untouched and zero pages */
	pl = malloc(sizeof(*pl));
	ASSERT_NE(NULL, pl);
	ASSERT_EQ(0, tt_st_place(b, len, pl));
	EXPECT_EQ(written, pl->on_node[slow]);
	EXPECT_EQ(zero + untouched, pl->faulted + pl->absent);
	free(pl);
	/* the skipped pages were not populated by the migration */
	ASSERT_EQ((long long)(written + zero), tt_st_mincore(b, len));

	for (i = 0; i < pages; i++) {
		unsigned char *p = (unsigned char *)b + i * self->ps;
		unsigned char want = i % 4 == 0 || i % 4 == 2 ?
				     (unsigned char)((i & 0xff) | 1) : 0;

		if (i % 4 == 3)
			continue;	/* reading would populate it */
		ASSERT_EQ(want, p[0]) TH_LOG("page %zu", i);
		ASSERT_EQ(want, p[self->ps - 1]) TH_LOG("page %zu", i);
	}
	ASSERT_EQ((long long)(written + zero), tt_st_mincore(b, len));

	ASSERT_EQ(0, tt_migrate_ex(self->s, b, len, fast, 0, &r));
	TT_ASSERT_RESULT(r, pages, written, 0, zero + untouched, 0, 0);
	TT_ASSERT_PAGES_ON(b, len, fast, written);
	ASSERT_EQ((long long)(written + zero), tt_st_mincore(b, len));
}

/* What a move counted, and the session's mover fallbacks so far. */
static void mig_log(struct __test_metadata *_metadata,
		    FIXTURE_DATA(migrate) *self, const char *what,
		    const struct tt_migrate_result *r)
{
	struct tt_ioc_stats st;

	memset(&st, 0, sizeof(st));
	tt_stats(self->s, &st);
	TH_LOG("%s: %.1f ms, pages %llu moved %llu already %llu busy %llu unsupported %llu nomem %llu; mover fallbacks %llu late %llu",
	       what, r->elapsed_ns / 1e6, (unsigned long long)r->pages,
	       (unsigned long long)r->moved,
	       (unsigned long long)r->already_on_node,
	       (unsigned long long)r->skipped_busy,
	       (unsigned long long)r->skipped_unsupported,
	       (unsigned long long)r->skipped_no_memory,
	       (unsigned long long)st.mover_fallbacks,
	       (unsigned long long)st.mover_late);
}

TEST_F_TIMEOUT(migrate, thp, 900)
{
	struct tt_migrate_result r;
	size_t len = tt_st_scaled(64 * TT_ST_MIB), pages = len / self->ps;
	long long huge_kb, split0, split1, split2;
	int fast = self->topo.fast, slow = self->topo.slow;
	char mode[128];

	TT_SKIP_IF_SETUP_SKIPPED();
	if (tt_st_read_file("/sys/kernel/mm/transparent_hugepage/enabled",
			    mode, sizeof(mode)) < 0 || strstr(mode, "[never]"))
		SKIP(return, "transparent huge pages are not available");
	if (!tt_need_free(slow, len))
		SKIP(return, "node %d has less than %zu MiB free", slow,
		     len / TT_ST_MIB + 64);
	ASSERT_EQ(0, map_thp(self, len, 4, &huge_kb));
	if (huge_kb <= 0)
		SKIP(return, "the kernel gave no huge page to a MADV_HUGEPAGE range (AnonHugePages %lld kB)",
		     huge_kb);
	TH_LOG("AnonHugePages before: %lld kB of %zu kB", huge_kb, len / 1024);
	TT_ASSERT_PLACED(self->buf, len, fast);

	split0 = tt_st_vmstat("thp_split_page");
	ASSERT_EQ(0, tt_migrate_ex(self->s, self->buf, len, slow, 0, &r));
	mig_log(_metadata, self, "to the slow node", &r);
	split1 = tt_st_vmstat("thp_split_page");
	TT_ASSERT_RESULT(r, pages, pages, 0, 0, 0, 0);
	TT_ASSERT_PATTERN(self->buf, len, 4);
	TT_ASSERT_PLACED(self->buf, len, slow);
	TT_ASSERT_RESIDENT(self->s, self->buf, len, slow, len, 0);
	TH_LOG("to node %d: %.1f ms, thp_split_page +%lld, AnonHugePages now %lld kB",
	       slow, r.elapsed_ns / 1e6, split1 - split0,
	       tt_st_smaps_kb(self->buf, len, "AnonHugePages"));

	ASSERT_EQ(0, tt_migrate_ex(self->s, self->buf, len, fast, 0, &r));
	split2 = tt_st_vmstat("thp_split_page");
	TT_ASSERT_RESULT(r, pages, pages, 0, 0, 0, 0);
	TT_ASSERT_PATTERN(self->buf, len, 4);
	TT_ASSERT_PLACED(self->buf, len, fast);
	TT_ASSERT_RESIDENT(self->s, self->buf, len, fast, len, 0);
	TH_LOG("back to node %d: %.1f ms, thp_split_page +%lld, huge pages %s",
	       fast, r.elapsed_ns / 1e6, split2 - split1,
	       split2 > split0 ? "were split" : "were not split");
}

/*
 * Orders that time out (mover_timeout_ms 1) go back to the engine while
 * their mover may still be moving them: a page in its hands reads as
 * absent for a moment. Every page of the buffer is present, so the call
 * must never count one as not present, and returns 0 only when each is on
 * the target; else EBUSY with the pages it could not move counted busy or
 * unsupported.
 */
TEST_F_TIMEOUT(migrate, thp_late_mover, 900)
{
	size_t len = tt_st_scaled(32 * TT_ST_MIB), pages = len / self->ps;
	int fast = self->topo.fast, slow = self->topo.slow, round, ret;
	struct tt_migrate_result r;
	struct tt_ioc_stats st;
	long long huge_kb;
	long orphans0, orphans = 0;
	char mode[128];

	TT_SKIP_IF_SETUP_SKIPPED();
	if (tt_st_read_file("/sys/kernel/mm/transparent_hugepage/enabled",
			    mode, sizeof(mode)) < 0 || strstr(mode, "[never]"))
		SKIP(return, "transparent huge pages are not available");
	if (!tt_need_free(slow, len))
		SKIP(return, "node %d has less than %zu MiB free", slow,
		     len / TT_ST_MIB + 64);
	ASSERT_EQ(0, tt_st_read_ll(MIG_MOVER_TIMEOUT, &self->mover_timeout));
	ASSERT_EQ(0, map_thp(self, len, 9, &huge_kb));
	if (huge_kb <= 0)
		SKIP(return, "the kernel gave no huge page to a MADV_HUGEPAGE range (AnonHugePages %lld kB)",
		     huge_kb);
	orphans0 = tt_st_orphan_thps();
	ASSERT_LE(0, orphans0) TH_LOG("/proc/kpageflags: %s", strerror(-orphans0));
	ASSERT_EQ(0, tt_st_write_file(MIG_MOVER_TIMEOUT, "1"));
	for (round = 0; round < 16; round++) {
		ret = tt_migrate_ex(self->s, self->buf, len,
				    round % 2 ? fast : slow, 0, &r);
		mig_log(_metadata, self, round % 2 ? "to the fast node" :
			"to the slow node", &r);
		ASSERT_TRUE(ret == 0 || ret == -EBUSY) TH_LOG("%s", strerror(-ret));
		ASSERT_EQ(pages, r.pages);
		ASSERT_EQ(0, r.skipped_not_present);
		if (!ret) {
			ASSERT_EQ(pages, r.moved + r.already_on_node);
		} else {
			/*
			 * busy, or a huge page whose pmd the engine split
			 * while the late mover held the folio (a large
			 * folio mapped by ptes: unsupported by the engine)
			 */
			ASSERT_LT(0, r.skipped_busy + r.skipped_unsupported);
		}
		TT_ASSERT_PATTERN(self->buf, len, 9);
	}
	ASSERT_EQ(0, tt_stats(self->s, &st));
	/* the orders did time out */
	ASSERT_LT(0, st.mover_fallbacks);

	/*
	 * Every huge page is freed once unmapped: the engine never handed
	 * migrate_vma_setup() a huge page a late mover held, whose lock
	 * it cannot take (it keeps a reference to it then: Debian's 6.1
	 * and 6.12 migrate_vma_collect_pmd()). The late movers may still
	 * hold some for a moment.
	 */
	munmap(self->buf, self->len);
	self->buf = NULL;
	for (round = 0; round < 50; round++) {
		orphans = tt_st_orphan_thps();
		if (orphans <= orphans0)
			break;
		usleep(100000);
	}
	TH_LOG("huge pages unmapped but kept: %ld before the test, %ld after", orphans0, orphans);
	ASSERT_LE(orphans, orphans0);
}

TEST_F_TIMEOUT(migrate, large_pte, 300)
{
	size_t len = 2 * TT_ST_THP_SIZE, pages = len / self->ps;
	size_t hp = TT_ST_THP_SIZE / self->ps;
	int fast = self->topo.fast, slow = self->topo.slow;
	struct tt_migrate_result r;
	struct tt_ioc_stats st;
	long long huge_kb;
	char mode[128];

	TT_SKIP_IF_SETUP_SKIPPED();
	if (tt_st_read_file("/sys/kernel/mm/transparent_hugepage/enabled",
			    mode, sizeof(mode)) < 0 || strstr(mode, "[never]"))
		SKIP(return, "transparent huge pages are not available");
	ASSERT_EQ(0, map_thp(self, len, 7, &huge_kb));
	if (huge_kb < (long long)(len / 1024))
		SKIP(return, "the kernel gave no two huge pages to a MADV_HUGEPAGE range (AnonHugePages %lld kB)",
		     huge_kb);
	/* one page of the first huge page read-only: its pmd is split, the
	 * huge page stays whole, mapped by 512 ptes */
	ASSERT_EQ(0, mprotect((char *)self->buf + self->ps, self->ps,
			      PROT_READ));
	ASSERT_EQ((long long)(TT_ST_THP_SIZE / 1024),
		  tt_st_smaps_kb((char *)self->buf + TT_ST_THP_SIZE,
				 TT_ST_THP_SIZE, "AnonHugePages"));

	/* the call says the pages stayed: EBUSY */
	ASSERT_EQ(-EBUSY, tt_migrate_ex(self->s, self->buf, len, slow, 0, &r));
	mig_log(_metadata, self, "to the slow node", &r);
	ASSERT_EQ(pages, r.pages);
	ASSERT_EQ(hp, r.skipped_unsupported);
	ASSERT_EQ(hp, r.moved);
	ASSERT_EQ(0, tt_stats(self->s, &st));
	ASSERT_EQ(hp, st.large_pte);
	TT_ASSERT_PATTERN(self->buf, len, 7);
	TT_ASSERT_PLACED(self->buf, TT_ST_THP_SIZE, fast);
	TT_ASSERT_PLACED((char *)self->buf + TT_ST_THP_SIZE, TT_ST_THP_SIZE,
			 slow);
}

TEST_HARNESS_MAIN
