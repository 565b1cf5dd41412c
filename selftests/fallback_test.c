// SPDX-License-Identifier: GPL-2.0
/*
 * libtiertrain's move_pages(2) backend, forced with
 * TIERTRAIN_BACKEND=move_pages (run-vm also runs this binary in a guest
 * without the module, where it is the automatic choice).
 *
 *   backend_choice   tt_backend() before and after tt_open() for every value
 *                    of TIERTRAIN_BACKEND, with or without /dev/tiertrain.
 *   migrate_and_back 32 MiB to the slow node and back: result counters,
 *                    data, move_pages(2) placement, tt_residency_ex().
 *   untouched_pages  never-touched pages are skipped as not present.
 *   async_is_sync    TT_MIGRATE_ASYNC runs at once; tt_flush() succeeds.
 *   errors           the module's errnos for bad ranges, mappings, nodes,
 *                    flags and registrations; nothing changed after each.
 *   target_full      ENOSPC with skipped_no_memory, nothing lost.
 *   foreign_process  a forked child using the parent's session: EPERM.
 */
#include <errno.h>
#include <fcntl.h>
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

FIXTURE(fallback)
{
	struct tt_session *s;
	struct tt_st_topo topo;
	size_t ps;
	char *buf;
	size_t len;
	pid_t filler;
};

FIXTURE_SETUP(fallback)
{
	self->s = NULL;
	self->buf = NULL;
	self->filler = 0;
	self->ps = tt_page_size();
	TT_SETUP_NODES(&self->topo, 0);
	ASSERT_EQ(0, setenv("TIERTRAIN_BACKEND", "move_pages", 1));
	ASSERT_STREQ("move_pages", tt_backend(NULL));
	self->s = tt_open();
	ASSERT_NE(NULL, self->s) TH_LOG("tt_open: %s", strerror(errno));
	ASSERT_STREQ("move_pages", tt_backend(self->s));
	self->len = 32 * TT_ST_MIB;
	self->buf = tt_st_map(self->len, -1);
	ASSERT_NE(NULL, self->buf);
	tt_st_fill(self->buf, self->len, 60);
	TT_ASSERT_PLACED(self->buf, self->len, self->topo.fast);
}

FIXTURE_TEARDOWN(fallback)
{
	if (self->filler > 0) {
		kill(self->filler, SIGKILL);
		waitpid(self->filler, NULL, 0);
	}
	if (self->buf)
		munmap(self->buf, self->len);
	tt_close(self->s);
}

TEST_F(fallback, backend_choice)
{
	int have_dev = access(TT_ST_DEV, F_OK) == 0;
	struct tt_session *s;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, unsetenv("TIERTRAIN_BACKEND"));
	ASSERT_STREQ(have_dev ? "kernel" : "move_pages", tt_backend(NULL));
	s = tt_open();
	ASSERT_NE(NULL, s);
	ASSERT_STREQ(have_dev ? "kernel" : "move_pages", tt_backend(s));
	tt_close(s);

	ASSERT_EQ(0, setenv("TIERTRAIN_BACKEND", "kernel", 1));
	ASSERT_STREQ("kernel", tt_backend(NULL));
	errno = 0;
	s = tt_open();
	if (have_dev) {
		ASSERT_NE(NULL, s);
		ASSERT_STREQ("kernel", tt_backend(s));
		tt_close(s);
	} else {
		ASSERT_EQ(NULL, s);
		ASSERT_EQ(ENOENT, errno);
	}

	ASSERT_EQ(0, setenv("TIERTRAIN_BACKEND", "no-such-backend", 1));
	errno = 0;
	ASSERT_EQ(NULL, tt_backend(NULL));
	ASSERT_EQ(EINVAL, errno);
	errno = 0;
	ASSERT_EQ(NULL, tt_open());
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, setenv("TIERTRAIN_BACKEND", "move_pages", 1));
}

TEST_F_TIMEOUT(fallback, migrate_and_back, 300)
{
	size_t len = self->len, pages = len / self->ps;
	int fast = self->topo.fast, slow = self->topo.slow;
	struct tt_migrate_result r;
	struct tt_ioc_stats st;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, tt_migrate_ex(self->s, self->buf, len, slow, 0, &r));
	TT_ASSERT_RESULT(r, pages, pages, 0, 0, 0, 0);
	TT_ASSERT_PATTERN(self->buf, len, 60);
	TT_ASSERT_PLACED(self->buf, len, slow);
	TT_ASSERT_RESIDENT(self->s, self->buf, len, slow, len, 0);

	ASSERT_EQ(0, tt_migrate_ex(self->s, self->buf, len, slow, 0, &r));
	TT_ASSERT_RESULT(r, pages, 0, pages, 0, 0, 0);

	ASSERT_EQ(0, tt_migrate(self->s, self->buf, len, fast));
	TT_ASSERT_PATTERN(self->buf, len, 60);
	TT_ASSERT_PLACED(self->buf, len, fast);
	TT_ASSERT_RESIDENT(self->s, self->buf, len, fast, len, 0);

	/* a sub-range in the middle */
	ASSERT_EQ(0, tt_migrate_ex(self->s, self->buf + len / 4, len / 2, slow,
				   0, &r));
	TT_ASSERT_RESULT(r, pages / 2, pages / 2, 0, 0, 0, 0);
	TT_ASSERT_RESIDENT(self->s, self->buf, len, slow, len / 2, 0);
	TT_ASSERT_PLACED(self->buf + len / 4, len / 2, slow);
	TT_ASSERT_PLACED(self->buf, len / 4, fast);
	TT_ASSERT_PATTERN(self->buf, len, 60);

	ASSERT_EQ(0, tt_stats(self->s, &st));
	ASSERT_EQ(4ULL, st.migrate_calls);
	ASSERT_EQ(2 * pages + pages / 2, st.total.moved);
}

TEST_F(fallback, untouched_pages)
{
	size_t len = 8 * TT_ST_MIB, pages = len / self->ps, i;
	struct tt_migrate_result r;
	char *m;

	TT_SKIP_IF_SETUP_SKIPPED();
	m = tt_st_map(len, -1);
	ASSERT_NE(NULL, m);
	for (i = 0; i < pages; i += 2)
		m[i * self->ps] = 1;
	ASSERT_EQ(0, tt_migrate_ex(self->s, m, len, self->topo.slow, 0, &r));
	TT_ASSERT_RESULT(r, pages, pages / 2, 0, pages / 2, 0, 0);
	TT_ASSERT_RESIDENT(self->s, m, len, self->topo.slow, len / 2, len / 2);
	ASSERT_EQ((long long)pages / 2, tt_st_mincore(m, len));
	munmap(m, len);
}

TEST_F(fallback, async_is_sync)
{
	size_t len = self->len;
	struct tt_migrate_result r;

	TT_SKIP_IF_SETUP_SKIPPED();
	memset(&r, 0xff, sizeof(r));
	ASSERT_EQ(0, tt_migrate_ex(self->s, self->buf, len, self->topo.slow,
				   TT_MIGRATE_ASYNC, &r));
	ASSERT_EQ(0ULL, r.pages);
	ASSERT_EQ(0ULL, r.moved);
	ASSERT_EQ(0, tt_flush(self->s));
	TT_ASSERT_PLACED(self->buf, len, self->topo.slow);
	TT_ASSERT_PATTERN(self->buf, len, 60);
}

/* The fixture buffer is unchanged after a rejected call. */
#define TT_FAILS(call, err) do {					\
	int _ret = (call);						\
	ASSERT_EQ(-(err), _ret) TH_LOG("%s: %s", #call,			\
				       _ret ? strerror(-_ret) : "success"); \
	ASSERT_EQ((err), errno);					\
	TT_ASSERT_PATTERN(self->buf, self->len, 60);			\
	TT_ASSERT_PLACED(self->buf, self->len, self->topo.fast);	\
} while (0)

TEST_F(fallback, errors)
{
	size_t ps = self->ps, len = self->len;
	int slow = self->topo.slow;
	char *b = self->buf, *sh, *hole;
	uint64_t bytes[4];
	struct tt_ioc_stats st;

	TT_SKIP_IF_SETUP_SKIPPED();
	TT_FAILS(tt_migrate(self->s, b, 0, slow), EINVAL);
	TT_FAILS(tt_migrate(self->s, b + 1, ps, slow), EINVAL);
	TT_FAILS(tt_migrate(self->s, b, ps + 8, slow), EINVAL);
	TT_FAILS(tt_migrate(self->s, b, (size_t)0 - ps, slow), EOVERFLOW);
	TT_FAILS(tt_migrate(self->s, b, (size_t)1 << 62, slow), EOVERFLOW);
	TT_FAILS(tt_migrate(self->s, b, len, -1), EINVAL);
	TT_FAILS(tt_migrate(self->s, b, len, self->topo.nr_node_ids), EINVAL);
	TT_FAILS(tt_migrate(self->s, b, len, 100000), EINVAL);
	if (self->topo.offline >= 0)
		TT_FAILS(tt_migrate(self->s, b, len, self->topo.offline),
			 ENODEV);
	else
		TH_LOG("no offline or memoryless node: ENODEV not tried");
	TT_FAILS(tt_migrate_ex(self->s, b, len, slow, 1U << 7, NULL),
		 EOPNOTSUPP);
	TT_FAILS(tt_register(self->s, b, len, 0, 1U << 9), EOPNOTSUPP);
	TT_FAILS(tt_residency(self->s, b, 0, bytes, 4), EINVAL);
	TT_FAILS(tt_residency(self->s, b, len, bytes, 0), EINVAL);

	hole = tt_st_map(3 * ps, -1);
	ASSERT_NE(NULL, hole);
	hole[0] = 1;
	ASSERT_EQ(0, munmap(hole + ps, ps));
	TT_FAILS(tt_migrate(self->s, hole, 3 * ps, slow), EFAULT);
	TT_FAILS(tt_register(self->s, hole, 3 * ps, 0, 0), EFAULT);
	TT_ASSERT_PLACED(hole, ps, self->topo.fast);
	munmap(hole, 3 * ps);

	sh = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	sh[0] = 1;
	TT_FAILS(tt_migrate(self->s, sh, ps, slow), EOPNOTSUPP);
	munmap(sh, ps);

	/* registrations: overlap and inexact unregister */
	ASSERT_EQ(0, tt_register(self->s, b, len / 2, 1, 0));
	TT_FAILS(tt_register(self->s, b + ps, ps, 1, 0), EEXIST);
	TT_FAILS(tt_register(self->s, b, len, 1, 0), EEXIST);
	TT_FAILS(tt_unregister(self->s, b, len), ENOENT);
	TT_FAILS(tt_unregister(self->s, b + len / 2, len / 2), ENOENT);
	ASSERT_EQ(0, tt_stats(self->s, &st));
	ASSERT_EQ(1ULL, st.registered_ranges);
	ASSERT_EQ(len / 2, st.registered_bytes);
	ASSERT_EQ(0ULL, st.migrate_calls);
	ASSERT_EQ(0, tt_unregister(self->s, b, len / 2));
}

TEST_F_TIMEOUT(fallback, target_full, 600)
{
	size_t len = self->len, pages = len / self->ps, held = 0;
	struct tt_migrate_result r;
	uint64_t fr = 0;
	int node, ret;

	TT_SKIP_IF_SETUP_SKIPPED();
	node = self->topo.small >= 0 ? self->topo.small : self->topo.slow;
	self->filler = tt_st_hog_node(node, 8 * TT_ST_MIB, &held);
	ASSERT_LT(0, self->filler) TH_LOG("filling node %d: %s", node,
					  strerror(-self->filler));
	ASSERT_EQ(0, tt_st_node_mem(node, &fr, NULL));
	TH_LOG("helper holds %zu MiB on node %d, %llu MiB free there",
	       held / TT_ST_MIB, node, (unsigned long long)fr / TT_ST_MIB);
	ASSERT_LT(fr, len);

	ret = tt_migrate_ex(self->s, self->buf, len, node, 0, &r);
	TH_LOG("moved %llu, skipped_no_memory %llu, busy %llu of %llu",
	       (unsigned long long)r.moved,
	       (unsigned long long)r.skipped_no_memory,
	       (unsigned long long)r.skipped_busy,
	       (unsigned long long)r.pages);
	ASSERT_EQ(-ENOSPC, ret) TH_LOG("%s", ret ? strerror(-ret) : "success");
	ASSERT_EQ(pages, r.pages);
	ASSERT_GT(r.skipped_no_memory, 0ULL);
	ASSERT_EQ(pages, r.moved + r.skipped_no_memory + r.skipped_busy);
	TT_ASSERT_PATTERN(self->buf, len, 60);
	TT_ASSERT_PAGES_ON(self->buf, len, node, r.moved);

	kill(self->filler, SIGKILL);
	ASSERT_EQ(self->filler, waitpid(self->filler, NULL, 0));
	self->filler = 0;
	ASSERT_EQ(0, tt_migrate(self->s, self->buf, len, node));
	TT_ASSERT_PLACED(self->buf, len, node);
	TT_ASSERT_PATTERN(self->buf, len, 60);
}

TEST_F(fallback, foreign_process)
{
	int status;
	pid_t pid;

	TT_SKIP_IF_SETUP_SKIPPED();
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct tt_ioc_stats st;
		int bad = 0;

		if (tt_migrate(self->s, self->buf, self->len,
			       self->topo.slow) != -EPERM)
			bad |= 1;
		if (tt_register(self->s, self->buf, self->len, 0, 0) != -EPERM)
			bad |= 2;
		if (tt_stats(self->s, &st) != -EPERM)
			bad |= 4;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status))
		TH_LOG("not EPERM in the child: bit 0 migrate, 1 register, 2 stats: %#x",
		       WEXITSTATUS(status));
	TT_ASSERT_PLACED(self->buf, self->len, self->topo.fast);
	TT_ASSERT_PATTERN(self->buf, self->len, 60);
}

TEST_HARNESS_MAIN
