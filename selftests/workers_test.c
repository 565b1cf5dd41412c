// SPDX-License-Identifier: GPL-2.0
/*
 * The module parameter workers (/sys/module/tiertrain/parameters/workers)
 * changed at run time.
 *
 *   set_and_migrate   workers=1 then 2, each followed by a synchronous
 *                     64 MiB migration (32 batches of the default 512
 *                     pages, spread over the pool) verified by data and
 *                     move_pages(2); an async one with workers=1 too.
 *   invalid_values    0, -1, words and an empty line are refused and the
 *                     value stays.
 *   change_while_busy the value toggles between 1 and 2 while another
 *                     thread migrates back and forth.
 * The original value is restored by the teardown.
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

FIXTURE(workers)
{
	struct tt_session *s;
	struct tt_st_topo topo;
	size_t ps;
	long long orig;
	char *buf;
	size_t len;
};

FIXTURE_SETUP(workers)
{
	self->s = NULL;
	self->buf = NULL;
	self->orig = -1;
	self->ps = tt_page_size();
	TT_SETUP_NODES(&self->topo, 1);
	ASSERT_EQ(0, tt_st_read_ll(TT_ST_WORKERS, &self->orig))
		TH_LOG("%s unreadable", TT_ST_WORKERS);
	ASSERT_LT(0, self->orig);
	TT_OPEN_KERNEL_SESSION(&self->s);
	self->len = 64 * TT_ST_MIB;
	self->buf = tt_st_map(self->len, -1);
	ASSERT_NE(NULL, self->buf);
	tt_st_fill(self->buf, self->len, 70);
}

FIXTURE_TEARDOWN(workers)
{
	if (self->orig > 0)
		tt_st_param_write("workers", self->orig);
	if (self->buf)
		munmap(self->buf, self->len);
	tt_close(self->s);
}

#define TT_SET_WORKERS(n) do {						\
	long long _v = -1;						\
	int _ret = tt_st_write_file(TT_ST_WORKERS, #n);			\
	ASSERT_EQ(0, _ret) TH_LOG("write %s to %s: %s", #n,		\
				  TT_ST_WORKERS, strerror(-_ret));	\
	ASSERT_EQ(0, tt_st_read_ll(TT_ST_WORKERS, &_v));		\
	ASSERT_EQ(n, _v);						\
} while (0)

/* Synchronous migration of the whole buffer to @node, fully checked. */
#define TT_MOVE_ALL(node) do {						\
	struct tt_migrate_result _r;					\
	uint64_t _pages = self->len / self->ps;				\
	ASSERT_EQ(0, tt_migrate_ex(self->s, self->buf, self->len,	\
				   (node), 0, &_r));			\
	TT_ASSERT_RESULT(_r, _pages, _pages, 0, 0, 0, 0);		\
	TT_ASSERT_PLACED(self->buf, self->len, (node));			\
	TT_ASSERT_PATTERN(self->buf, self->len, 70);			\
	TH_LOG("%zu MiB to node %d: %.1f ms", self->len / TT_ST_MIB,	\
	       (node), _r.elapsed_ns / 1e6);				\
} while (0)

TEST_F_TIMEOUT(workers, set_and_migrate, 300)
{
	TT_SKIP_IF_SETUP_SKIPPED();
	TT_SET_WORKERS(1);
	TT_MOVE_ALL(self->topo.slow);
	TT_MOVE_ALL(self->topo.fast);
	TT_SET_WORKERS(2);
	TT_MOVE_ALL(self->topo.slow);
	TT_MOVE_ALL(self->topo.fast);

	TT_SET_WORKERS(1);
	ASSERT_EQ(0, tt_migrate_ex(self->s, self->buf, self->len,
				   self->topo.slow, TT_MIGRATE_ASYNC, NULL));
	ASSERT_EQ(0, tt_flush(self->s));
	TT_ASSERT_PLACED(self->buf, self->len, self->topo.slow);
	TT_ASSERT_PATTERN(self->buf, self->len, 70);
}

TEST_F(workers, invalid_values)
{
	static const char *const bad[] = { "0", "-1", "abc", "\n", "1x" };
	long long v = -1;
	size_t i;

	TT_SKIP_IF_SETUP_SKIPPED();
	TT_SET_WORKERS(2);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret = tt_st_write_file(TT_ST_WORKERS, bad[i]);

		ASSERT_NE(0, ret) TH_LOG("workers accepted \"%s\"", bad[i]);
		ASSERT_EQ(0, tt_st_read_ll(TT_ST_WORKERS, &v));
		ASSERT_EQ(2, v) TH_LOG("after writing \"%s\"", bad[i]);
	}
	TT_MOVE_ALL(self->topo.slow);
	TT_MOVE_ALL(self->topo.fast);
}

struct tt_toggle {
	int stop;	/* __atomic: set by the test thread */
	int writes, failures;
};

static void *tt_toggle_workers(void *p)
{
	struct tt_toggle *t = p;

	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
		if (tt_st_write_file(TT_ST_WORKERS, t->writes & 1 ? "2" : "1"))
			t->failures++;
		t->writes++;
		usleep(2000);
	}
	return NULL;
}

TEST_F_TIMEOUT(workers, change_while_busy, 600)
{
	struct tt_toggle t = { 0 };
	pthread_t th;
	int i;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, pthread_create(&th, NULL, tt_toggle_workers, &t));
	for (i = 0; i < 3; i++) {
		TT_MOVE_ALL(self->topo.slow);
		TT_MOVE_ALL(self->topo.fast);
	}
	__atomic_store_n(&t.stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(0, t.failures);
	TH_LOG("%d writes to workers during 6 migrations", t.writes);
}

TEST_HARNESS_MAIN
