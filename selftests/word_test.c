// SPDX-License-Identifier: GPL-2.0
/*
 * A migrate call keeps its word, and huge pages stay huge, with plain
 * defaults: tt_open() with no environment variable, no module parameter
 * and no tt_mover_start(). Every test sets kernel.numa_balancing to 0 and
 * the THP mode it needs, and restores both.
 *
 *   unaligned_128m    THP=always, a fresh 128 MiB mapping that does not
 *                     start on a 2 MiB boundary, written once, to the slow
 *                     node: every page lands there (move_pages(2) and
 *                     TT_IOC_RESIDENCY), or the call fails with an error
 *                     whose result counts exactly the pages that stayed.
 *                     The mapping's huge pages are not split.
 *   partial_huge      THP=always, a 128 MiB range that starts and ends
 *                     inside huge pages: its pages all move (the two
 *                     huge pages at its ends are split, huge_split), the
 *                     bytes outside it stay on the fast node.
 *   huge_round_trip   a 32 MiB MADV_HUGEPAGE range to the slow node and
 *                     back: every page on the target each way,
 *                     AnonHugePages and thp_split_page unchanged.
 *   pte_mapped        a huge page mapped by ptes (mprotect of one page)
 *                     cannot move: EBUSY, its pages in skipped_unsupported,
 *                     the other huge page of the range moved.
 *   default_movers    tt_open() lends the session one mover thread;
 *                     TIERTRAIN_MOVER=0 opts out; a forked child that
 *                     closes its copy of the session leaves the parent's
 *                     mover working.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tt_harness.h"

#define WD_THP		"/sys/kernel/mm/transparent_hugepage/enabled"
#define WD_BALANCING	"/proc/sys/kernel/numa_balancing"
#define WD_HUGE		TT_ST_THP_SIZE

FIXTURE(word)
{
	struct tt_session *s;
	struct tt_st_topo topo;
	size_t ps;
	void *map;		/* to unmap */
	size_t map_len;
	char thp_mode[32];	/* to restore, "": untouched */
	long long balancing;	/* to restore, -1: untouched */
};

/* The bracketed word of a sysfs choice ("always [madvise] never"). */
static int wd_choice(const char *path, char *out, size_t size)
{
	char buf[128], *a, *b;

	if (tt_st_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	a = strchr(buf, '[');
	b = a ? strchr(a, ']') : NULL;
	if (!b || (size_t)(b - a) > size)
		return -1;
	memcpy(out, a + 1, b - a - 1);
	out[b - a - 1] = '\0';
	return 0;
}

static int wd_set_thp(FIXTURE_DATA(word) *self, const char *mode)
{
	if (!self->thp_mode[0] &&
	    wd_choice(WD_THP, self->thp_mode, sizeof(self->thp_mode)))
		return -1;
	return tt_st_write_file(WD_THP, mode);
}

FIXTURE_SETUP(word)
{
	self->s = NULL;
	self->map = NULL;
	self->thp_mode[0] = '\0';
	self->balancing = -1;
	self->ps = tt_page_size();
	TT_SETUP_NODES(&self->topo, 1);
	if (!tt_st_read_ll(WD_BALANCING, &self->balancing) &&
	    tt_st_write_file(WD_BALANCING, "0"))
		SKIP(return, "cannot set kernel.numa_balancing to 0");
	unsetenv("TIERTRAIN_MOVER");
	TT_OPEN_KERNEL_SESSION(&self->s);
}

FIXTURE_TEARDOWN(word)
{
	char v[32];

	tt_close(self->s);
	if (self->map)
		munmap(self->map, self->map_len);
	if (self->thp_mode[0])
		tt_st_write_file(WD_THP, self->thp_mode);
	if (self->balancing >= 0) {
		snprintf(v, sizeof(v), "%lld", self->balancing);
		tt_st_write_file(WD_BALANCING, v);
	}
}

/*
 * After a migration of [p, p + len) to @node that returned @ret with
 * result @r: 0 and every page there, or an error whose result counts the
 * pages not there.
 */
#define WD_ASSERT_WORD(self, p, len, node, ret, r) do {			\
	long long _on = tt_st_pages_on((p), (len), (node));		\
	uint64_t _pages = (len) / (self)->ps;				\
	uint64_t _stayed = (r).skipped_busy + (r).skipped_unsupported +	\
			   (r).skipped_no_memory;			\
	TH_LOG("ret %d: moved %llu already %llu absent %llu busy %llu unsupported %llu no_memory %llu; %lld of %llu pages on node %d", \
	       (ret), (unsigned long long)(r).moved,			\
	       (unsigned long long)(r).already_on_node,			\
	       (unsigned long long)(r).skipped_not_present,		\
	       (unsigned long long)(r).skipped_busy,			\
	       (unsigned long long)(r).skipped_unsupported,		\
	       (unsigned long long)(r).skipped_no_memory, _on,		\
	       (unsigned long long)_pages, (node));			\
	ASSERT_EQ(_pages, (r).pages);					\
	ASSERT_EQ((r).pages, (r).moved + (r).already_on_node +		\
		  (r).skipped_not_present + _stayed);			\
	if ((ret) == 0) {						\
		ASSERT_EQ((long long)_pages, _on)			\
			TH_LOG("success, but %lld pages are not on node %d", \
			       (long long)_pages - _on, (node));	\
		ASSERT_EQ(0ULL, (unsigned long long)_stayed);		\
		ASSERT_EQ(0ULL, (unsigned long long)(r).skipped_not_present); \
	} else {							\
		ASSERT_TRUE((ret) == -EBUSY || (ret) == -ENOSPC)	\
			TH_LOG("error %d", (ret));			\
		ASSERT_EQ((long long)_pages - _on,			\
			  (long long)(_stayed + (r).skipped_not_present)); \
	}								\
} while (0)

/* A fresh THP=always mapping at an address that is not 2 MiB aligned. */
static char *wd_map_unaligned(FIXTURE_DATA(word) *self, size_t len)
{
	char *p, *a;

	p = mmap(NULL, len + 2 * WD_HUGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* 64 KiB past a huge page boundary */
	a = (char *)(((uintptr_t)p + WD_HUGE - 1) & ~(WD_HUGE - 1)) +
	    16 * self->ps;
	if (a > p)
		munmap(p, a - p);
	munmap(a + len, p + len + 2 * WD_HUGE - (a + len));
	self->map = a;
	self->map_len = len;
	return a;
}

TEST_F_TIMEOUT(word, unaligned_128m, 900)
{
	size_t len = 128 * TT_ST_MIB;
	struct tt_migrate_result r;
	long long huge0, huge1, split0, split1;
	char *p;
	int ret;

	TT_SKIP_IF_SETUP_SKIPPED();
	if (wd_set_thp(self, "always"))
		SKIP(return, "cannot set the THP mode to always");
	p = wd_map_unaligned(self, len);
	ASSERT_NE(NULL, p);
	ASSERT_NE(0, (uintptr_t)p % WD_HUGE);
	tt_st_fill(p, len, 21);
	TT_ASSERT_PLACED(p, len, self->topo.fast);
	huge0 = tt_st_smaps_kb(p, len, "AnonHugePages");
	split0 = tt_st_vmstat("thp_split_page");

	ret = tt_migrate_ex(self->s, p, len, self->topo.slow, 0, &r);
	WD_ASSERT_WORD(self, p, len, self->topo.slow, ret, r);
	huge1 = tt_st_smaps_kb(p, len, "AnonHugePages");
	split1 = tt_st_vmstat("thp_split_page");
	TH_LOG("AnonHugePages %lld -> %lld kB, thp_split_page +%lld",
	       huge0, huge1, split1 - split0);
	ASSERT_EQ(0, ret);
	TT_ASSERT_RESIDENT(self->s, p, len, self->topo.slow, len, 0);
	TT_ASSERT_PATTERN(p, len, 21);
	EXPECT_EQ(huge0, huge1);
	EXPECT_EQ(split0, split1);
}

TEST_F_TIMEOUT(word, partial_huge, 900)
{
	size_t len = 128 * TT_ST_MIB, lead = WD_HUGE / 2 + 3 * self->ps;
	struct tt_migrate_result r;
	struct tt_ioc_stats st0, st1;
	char *b, *p;
	int ret;

	TT_SKIP_IF_SETUP_SKIPPED();
	if (wd_set_thp(self, "always"))
		SKIP(return, "cannot set the THP mode to always");
	self->map_len = len + 2 * WD_HUGE;
	self->map = b = tt_st_map(self->map_len, 1);
	ASSERT_NE(NULL, b);
	tt_st_fill(b, self->map_len, 23);
	if (tt_st_smaps_kb(b, WD_HUGE, "AnonHugePages") < (long long)(WD_HUGE / 1024))
		SKIP(return, "the kernel gave no huge page at the range's start");
	/*
	 * The huge pages stay; khugepaged may no longer collapse the split
	 * edges back onto the node most of their pages are on (node 0, after
	 * the call: seen on the slow emulated CXL guest).
	 */
	ASSERT_EQ(0, madvise(b, self->map_len, MADV_NOHUGEPAGE));
	p = b + lead;
	ASSERT_EQ(0, tt_stats(self->s, &st0));
	ret = tt_migrate_ex(self->s, p, len, self->topo.slow, 0, &r);
	WD_ASSERT_WORD(self, p, len, self->topo.slow, ret, r);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, tt_stats(self->s, &st1));
	TH_LOG("huge_split +%llu huge_kept +%llu huge_partial +%llu",
	       (unsigned long long)(st1.huge_split - st0.huge_split),
	       (unsigned long long)(st1.huge_kept - st0.huge_kept),
	       (unsigned long long)(st1.huge_partial - st0.huge_partial));
	EXPECT_EQ(st0.huge_partial, st1.huge_partial);
	EXPECT_LE(st0.huge_split + 2, st1.huge_split);
	/* nothing outside the range moved */
	TT_ASSERT_PLACED(b, lead, self->topo.fast);
	TT_ASSERT_PLACED(p + len, self->map_len - len - lead, self->topo.fast);
	TT_ASSERT_PATTERN(b, self->map_len, 23);
}

TEST_F_TIMEOUT(word, huge_round_trip, 600)
{
	size_t len = 32 * TT_ST_MIB;
	struct tt_migrate_result r;
	long long huge0, split0;
	int fast = self->topo.fast, slow = self->topo.slow, ret;
	char *p;

	TT_SKIP_IF_SETUP_SKIPPED();
	if (wd_set_thp(self, "madvise"))
		SKIP(return, "cannot set the THP mode to madvise");
	p = tt_st_map_thp(len, 24);
	if (!p)
		SKIP(return, "the kernel gave no huge pages to a MADV_HUGEPAGE range");
	self->map = p;
	self->map_len = len;
	huge0 = tt_st_smaps_kb(p, len, "AnonHugePages");
	split0 = tt_st_vmstat("thp_split_page");
	ASSERT_EQ((long long)(len / 1024), huge0);

	ret = tt_migrate_ex(self->s, p, len, slow, 0, &r);
	WD_ASSERT_WORD(self, p, len, slow, ret, r);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(huge0, tt_st_smaps_kb(p, len, "AnonHugePages"));
	ret = tt_migrate_ex(self->s, p, len, fast, 0, &r);
	WD_ASSERT_WORD(self, p, len, fast, ret, r);
	ASSERT_EQ(0, ret);
	TT_ASSERT_PATTERN(p, len, 24);
	EXPECT_EQ(huge0, tt_st_smaps_kb(p, len, "AnonHugePages"));
	EXPECT_EQ(split0, tt_st_vmstat("thp_split_page"));
}

TEST_F_TIMEOUT(word, pte_mapped, 300)
{
	size_t len = 2 * WD_HUGE, hp = WD_HUGE / self->ps;
	struct tt_migrate_result r;
	char *p;
	int ret;

	TT_SKIP_IF_SETUP_SKIPPED();
	if (wd_set_thp(self, "madvise"))
		SKIP(return, "cannot set the THP mode to madvise");
	p = tt_st_map_thp(len, 25);
	if (!p)
		SKIP(return, "the kernel gave no huge pages to a MADV_HUGEPAGE range");
	self->map = p;
	self->map_len = len;
	/* the first huge page stays whole, mapped by ptes */
	ASSERT_EQ(0, mprotect(p + self->ps, self->ps, PROT_READ));
	ret = tt_migrate_ex(self->s, p, len, self->topo.slow, 0, &r);
	WD_ASSERT_WORD(self, p, len, self->topo.slow, ret, r);
	ASSERT_EQ(-EBUSY, ret);
	ASSERT_EQ(EBUSY, errno);
	ASSERT_EQ(hp, r.skipped_unsupported);
	ASSERT_EQ(hp, r.moved);
	TT_ASSERT_PATTERN(p, len, 25);
}

TEST_F_TIMEOUT(word, default_movers, 300)
{
	size_t len = 8 * TT_ST_MIB;
	struct tt_ioc_stats st;
	struct tt_session *s2;
	struct tt_migrate_result r;
	long long split0;
	pid_t pid;
	char *p;
	int status;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, tt_stats(self->s, &st));
	ASSERT_EQ(1, st.movers);

	setenv("TIERTRAIN_MOVER", "0", 1);
	s2 = tt_open();
	unsetenv("TIERTRAIN_MOVER");
	ASSERT_NE(NULL, s2);
	ASSERT_EQ(0, tt_stats(s2, &st));
	EXPECT_EQ(0, st.movers);
	tt_close(s2);

	/* a child closing its copy must not stop the parent's mover */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		tt_close(self->s);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));

	if (wd_set_thp(self, "madvise"))
		SKIP(return, "cannot set the THP mode to madvise");
	p = tt_st_map_thp(len, 26);
	if (!p)
		SKIP(return, "the kernel gave no huge pages to a MADV_HUGEPAGE range");
	self->map = p;
	self->map_len = len;
	split0 = tt_st_vmstat("thp_split_page");
	ASSERT_EQ(0, tt_migrate_ex(self->s, p, len, self->topo.slow, 0, &r));
	ASSERT_EQ(0, tt_stats(self->s, &st));
	EXPECT_EQ(1, st.movers);
	EXPECT_EQ(len / WD_HUGE, st.huge_kept);
	EXPECT_EQ(split0, tt_st_vmstat("thp_split_page"));
	TT_ASSERT_PLACED(p, len, self->topo.slow);
}

TEST_HARNESS_MAIN
