// SPDX-License-Identifier: GPL-2.0
/*
 * Registrations (TT_IOC_REGISTER / TT_IOC_UNREGISTER through libtiertrain)
 * and the MMU interval notifier behind them.
 *
 *   munmap_forgets    munmap of a registered range forgets it
 *                     (registered_ranges, ranges_unmapped); migrations of it
 *                     do not; the same address registers again after a new
 *                     mmap.
 *   partial_munmap    unmapping one page forgets the whole registration.
 *   mremap_away       moving the mapping away forgets it too.
 *   unregister_exact  ENOENT for unknown ranges and inexact addr/len.
 *   overlap           every kind of overlap is EEXIST, neighbours are fine.
 *   max_ranges        the max_ranges-th + 1 registration is ENOSPC.
 *   close_with_many   closing a session that holds 4101 registrations
 *                     (tt_registry_destroy() unlinks them 1024 at a time,
 *                     dropping the lock the notifiers take in between)
 *                     while another thread unmaps them: the close returns,
 *                     a new session starts empty (and on the debug kernel
 *                     KASAN and kmemleak see every range freed once).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tt_harness.h"

FIXTURE(reg)
{
	struct tt_session *s;
	struct tt_st_topo topo;
	size_t ps;
	char *buf;
	size_t len;
};

FIXTURE_SETUP(reg)
{
	self->s = NULL;
	self->buf = NULL;
	self->ps = tt_page_size();
	TT_SETUP_NODES(&self->topo, 1);
	TT_OPEN_KERNEL_SESSION(&self->s);
	self->len = 4 * TT_ST_MIB;
	self->buf = tt_st_map(self->len, -1);
	ASSERT_NE(NULL, self->buf);
	tt_st_fill(self->buf, self->len, 20);
}

FIXTURE_TEARDOWN(reg)
{
	if (self->buf)
		munmap(self->buf, self->len);
	tt_close(self->s);
}

/* The session holds @n registrations of @bytes, @unmapped were forgotten. */
#define TT_ASSERT_REGS(n, bytes, unmapped) do {				\
	struct tt_ioc_stats _st;					\
	ASSERT_EQ(0, tt_stats(self->s, &_st));				\
	ASSERT_EQ((uint64_t)(n), _st.registered_ranges);		\
	ASSERT_EQ((uint64_t)(bytes), _st.registered_bytes);		\
	ASSERT_EQ((uint64_t)(unmapped), _st.ranges_unmapped);		\
} while (0)

/*
 * Map @pages pages, never touched (registration does not need them), into
 * @m, and register each of the first @n as a range of its own, layer = its
 * index; the session then holds exactly those.
 */
#define REG_FILL(m, pages, n) do {					\
	size_t _i;							\
	int _ret;							\
									\
	(m) = mmap(NULL, (pages) * self->ps, PROT_READ | PROT_WRITE,	\
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);	\
	ASSERT_NE(MAP_FAILED, (m));					\
	for (_i = 0; _i < (n); _i++) {					\
		_ret = tt_register(self->s, (m) + _i * self->ps, self->ps, \
				   (uint32_t)_i, 0);			\
		ASSERT_EQ(0, _ret) TH_LOG("registration %zu of %zu: %s", \
					  _i, (size_t)(n), strerror(-_ret)); \
	}								\
	TT_ASSERT_REGS((n), (n) * self->ps, 0);				\
} while (0)

TEST_F(reg, munmap_forgets)
{
	struct tt_migrate_result r;
	size_t len = self->len;
	char *b = self->buf, *again;

	TT_SKIP_IF_SETUP_SKIPPED();
	TT_ASSERT_REGS(0, 0, 0);
	ASSERT_EQ(0, tt_register(self->s, b, len, 1, 0));
	TT_ASSERT_REGS(1, len, 0);

	/* migration invalidates the PTEs but unmaps nothing */
	ASSERT_EQ(0, tt_migrate_ex(self->s, b, len, self->topo.slow, 0, &r));
	ASSERT_EQ(len / self->ps, r.moved);
	ASSERT_EQ(0, tt_migrate_ex(self->s, b, len, self->topo.fast, 0, &r));
	ASSERT_EQ(len / self->ps, r.moved);
	TT_ASSERT_PATTERN(b, len, 20);
	TT_ASSERT_REGS(1, len, 0);

	ASSERT_EQ(0, munmap(b, len));
	self->buf = NULL;
	TT_ASSERT_REGS(0, 0, 1);
	ASSERT_EQ(-ENOENT, tt_unregister(self->s, b, len));

	again = mmap(b, len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_EQ(b, again);
	self->buf = again;
	ASSERT_EQ(0, tt_register(self->s, b, len, 2, TT_RANGE_PERSISTENT));
	TT_ASSERT_REGS(1, len, 1);
	ASSERT_EQ(0, tt_unregister(self->s, b, len));
	TT_ASSERT_REGS(0, 0, 1);
}

TEST_F(reg, partial_munmap)
{
	size_t len = self->len, ps = self->ps;
	char *b = self->buf;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, tt_register(self->s, b, len, 1, 0));
	ASSERT_EQ(0, munmap(b + len / 2, ps));
	TT_ASSERT_REGS(0, 0, 1);
	/* what is left registers again, the hole does not */
	ASSERT_EQ(0, tt_register(self->s, b, len / 2, 1, 0));
	ASSERT_EQ(0, tt_register(self->s, b + len / 2 + ps, len / 2 - ps, 1,
				 0));
	ASSERT_EQ(-EFAULT, tt_register(self->s, b + len / 2, ps, 1, 0));
	TT_ASSERT_REGS(2, len - ps, 1);
	TT_ASSERT_PATTERN(b, len / 2, 20);
	ASSERT_EQ(0, tt_unregister(self->s, b, len / 2));
	ASSERT_EQ(0, tt_unregister(self->s, b + len / 2 + ps, len / 2 - ps));
	TT_ASSERT_REGS(0, 0, 1);
}

TEST_F(reg, mremap_away)
{
	size_t len = self->len;
	char *b = self->buf, *dst, *moved;

	TT_SKIP_IF_SETUP_SKIPPED();
	dst = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, dst);
	ASSERT_EQ(0, tt_register(self->s, b, len, 1, 0));
	moved = mremap(b, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	ASSERT_EQ(dst, moved);
	self->buf = moved;
	TT_ASSERT_REGS(0, 0, 1);
	TT_ASSERT_PATTERN(moved, len, 20);
	ASSERT_EQ(0, tt_register(self->s, moved, len, 1, 0));
	TT_ASSERT_REGS(1, len, 1);
}

TEST_F(reg, unregister_exact)
{
	size_t len = self->len, ps = self->ps;
	char *b = self->buf;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(-ENOENT, tt_unregister(self->s, b, len));
	ASSERT_EQ(0, tt_register(self->s, b + ps, len - 2 * ps, 7, 0));
	ASSERT_EQ(-ENOENT, tt_unregister(self->s, b, len));
	ASSERT_EQ(-ENOENT, tt_unregister(self->s, b + ps, len - 3 * ps));
	ASSERT_EQ(-ENOENT, tt_unregister(self->s, b + ps, len - ps));
	ASSERT_EQ(-ENOENT, tt_unregister(self->s, b + 2 * ps, len - 3 * ps));
	TT_ASSERT_REGS(1, len - 2 * ps, 0);
	ASSERT_EQ(0, tt_unregister(self->s, b + ps, len - 2 * ps));
	ASSERT_EQ(-ENOENT, tt_unregister(self->s, b + ps, len - 2 * ps));
	TT_ASSERT_REGS(0, 0, 0);
}

TEST_F(reg, overlap)
{
	size_t m = TT_ST_MIB;
	char *b = self->buf;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, tt_register(self->s, b + m, 2 * m, 1, 0));
	ASSERT_EQ(-EEXIST, tt_register(self->s, b + m, 2 * m, 1, 0));
	ASSERT_EQ(-EEXIST, tt_register(self->s, b, 2 * m, 2, 0));
	ASSERT_EQ(-EEXIST, tt_register(self->s, b + 2 * m, 2 * m, 2, 0));
	ASSERT_EQ(-EEXIST, tt_register(self->s, b, 4 * m, 2, 0));
	ASSERT_EQ(-EEXIST, tt_register(self->s, b + m + m / 2, m / 2, 2, 0));
	ASSERT_EQ(-EEXIST, tt_register(self->s, b + 3 * m - self->ps,
				       self->ps, 2, 0));
	TT_ASSERT_REGS(1, 2 * m, 0);
	/* the neighbours on both sides touch it without overlapping */
	ASSERT_EQ(0, tt_register(self->s, b, m, 2, 0));
	ASSERT_EQ(0, tt_register(self->s, b + 3 * m, m, 3, 0));
	TT_ASSERT_REGS(3, 4 * m, 0);
	ASSERT_EQ(0, tt_unregister(self->s, b + m, 2 * m));
	ASSERT_EQ(0, tt_unregister(self->s, b, m));
	ASSERT_EQ(0, tt_unregister(self->s, b + 3 * m, m));
	TT_ASSERT_REGS(0, 0, 0);
	TT_ASSERT_PATTERN(b, 4 * m, 20);
}

TEST_F_TIMEOUT(reg, max_ranges, 300)
{
	long long max = 65536;
	size_t ps = self->ps, n;
	char *m;

	TT_SKIP_IF_SETUP_SKIPPED();
	tt_st_read_ll(TT_ST_SYSMOD "/parameters/max_ranges", &max);
	if (max <= 0 || max > 1 << 20)
		SKIP(return, "max_ranges is %lld: too many to fill here", max);
	n = (size_t)max;
	REG_FILL(m, n + 1, n);
	ASSERT_EQ(-ENOSPC, tt_register(self->s, m + n * ps, ps, 0, 0));
	ASSERT_EQ(0, tt_unregister(self->s, m, ps));
	ASSERT_EQ(0, tt_register(self->s, m + n * ps, ps, 0, 0));
	/* one munmap forgets them all */
	ASSERT_EQ(0, munmap(m, (n + 1) * ps));
	TT_ASSERT_REGS(0, 0, n);
}

struct tt_unmapper {
	char *m;
	size_t len;
	int ret;
};

static void *tt_unmap_thread(void *arg)
{
	struct tt_unmapper *u = arg;

	u->ret = munmap(u->m, u->len);
	return NULL;
}

TEST_F(reg, close_with_many)
{
	size_t ps = self->ps, n = 4 * 1024 + 5;
	struct tt_unmapper u;
	pthread_t th;
	char *m;

	TT_SKIP_IF_SETUP_SKIPPED();
	REG_FILL(m, n, n);
	u = (struct tt_unmapper){ .m = m, .len = n * ps };
	ASSERT_EQ(0, pthread_create(&th, NULL, tt_unmap_thread, &u));
	tt_close(self->s);
	self->s = NULL;
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(0, u.ret);
	TT_OPEN_KERNEL_SESSION(&self->s);
	TT_ASSERT_REGS(0, 0, 0);
}

TEST_HARNESS_MAIN
