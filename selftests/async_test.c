// SPDX-License-Identifier: GPL-2.0
/*
 * Asynchronous migrations, session life time and concurrency.
 *
 *   flush_waits        TT_MIGRATE_ASYNC returns a zero result; after
 *                      TT_IOC_FLUSH the pages are on the target and the
 *                      session counters show the work done.
 *   close_with_queued  close() of a session with queued work: data intact,
 *                      every page on one of the two nodes, a new migration
 *                      of the same memory works.
 *   exit_with_queued   a child queues 3 x 64 MiB and exits at once.
 *   kill_with_queued   the same child SIGKILLed right after queueing.
 *   munmap_queued      the memory of queued migrations unmapped under them.
 *   two_processes      two processes migrating their own buffers at once.
 *   two_threads        two threads sharing one session at once.
 * After the child cases the module's reference count is back where it was
 * (no session leaked) and a fresh session migrates and verifies 16 MiB; the
 * guest kernel log is checked for warnings by scripts/vmrun.
 */
#include <errno.h>
#include <pthread.h>
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

#define TT_CHUNK	(64 * TT_ST_MIB)
#define TT_NR_CHUNKS	3

FIXTURE(async)
{
	struct tt_session *s;
	struct tt_st_topo topo;
	size_t ps;
	char *buf;
	size_t len;
};

FIXTURE_SETUP(async)
{
	self->s = NULL;
	self->buf = NULL;
	self->ps = tt_page_size();
	TT_SETUP_NODES(&self->topo, 1);
	TT_OPEN_KERNEL_SESSION(&self->s);
}

FIXTURE_TEARDOWN(async)
{
	if (self->buf)
		munmap(self->buf, self->len);
	tt_close(self->s);
}

/* A fresh session moves 16 MiB there and back with the data intact. */
#define TT_ASSERT_FRESH_SESSION_WORKS(topo) do {			\
	struct tt_migrate_result _r;					\
	struct tt_session *_s = tt_open();				\
	size_t _l = 16 * TT_ST_MIB;					\
	char *_m = tt_st_map(_l, -1);					\
	ASSERT_NE(NULL, _s);						\
	ASSERT_NE(NULL, _m);						\
	tt_st_fill(_m, _l, 39);						\
	ASSERT_EQ(0, tt_migrate_ex(_s, _m, _l, (topo)->slow, 0, &_r));	\
	ASSERT_EQ(_l / tt_page_size(), _r.moved);			\
	TT_ASSERT_PLACED(_m, _l, (topo)->slow);				\
	ASSERT_EQ(0, tt_migrate_ex(_s, _m, _l, (topo)->fast, 0, &_r));	\
	ASSERT_EQ(_l / tt_page_size(), _r.moved);			\
	TT_ASSERT_PLACED(_m, _l, (topo)->fast);				\
	TT_ASSERT_PATTERN(_m, _l, 39);					\
	munmap(_m, _l);							\
	tt_close(_s);							\
} while (0)

static long long tt_refcnt(void)
{
	long long v = -1;

	tt_st_read_ll(TT_ST_SYSMOD "/refcnt", &v);
	return v;
}

TEST_F_TIMEOUT(async, flush_waits, 300)
{
	struct tt_ioc_stats st0, st1;
	struct tt_migrate_result r, zero;
	size_t len = 64 * TT_ST_MIB, pages = len / self->ps, q = len / 4;
	int i;

	TT_SKIP_IF_SETUP_SKIPPED();
	self->len = len;
	self->buf = tt_st_map(len, -1);
	ASSERT_NE(NULL, self->buf);
	tt_st_fill(self->buf, len, 30);
	ASSERT_EQ(0, tt_stats(self->s, &st0));

	memset(&zero, 0, sizeof(zero));
	memset(&r, 0xff, sizeof(r));
	ASSERT_EQ(0, tt_migrate_ex(self->s, self->buf, len, self->topo.slow,
				   TT_MIGRATE_ASYNC, &r));
	ASSERT_EQ(0, memcmp(&zero, &r, sizeof(r)));
	ASSERT_EQ(0, tt_flush(self->s));
	TT_ASSERT_RESIDENT(self->s, self->buf, len, self->topo.slow, len, 0);
	TT_ASSERT_PLACED(self->buf, len, self->topo.slow);
	TT_ASSERT_PATTERN(self->buf, len, 30);
	ASSERT_EQ(0, tt_stats(self->s, &st1));
	EXPECT_EQ(1ULL, st1.async_queued - st0.async_queued);
	EXPECT_EQ(1ULL, st1.async_done - st0.async_done);
	EXPECT_EQ(1ULL, st1.migrate_calls - st0.migrate_calls);
	EXPECT_EQ(pages, st1.total.moved - st0.total.moved);
	EXPECT_EQ(len, st1.bytes_to_slow - st0.bytes_to_slow);

	/* four queued quarters back, one flush for all of them */
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, tt_migrate_ex(self->s, self->buf + i * q, q,
					   self->topo.fast, TT_MIGRATE_ASYNC,
					   NULL));
	ASSERT_EQ(0, tt_flush(self->s));
	TT_ASSERT_RESIDENT(self->s, self->buf, len, self->topo.fast, len, 0);
	TT_ASSERT_PLACED(self->buf, len, self->topo.fast);
	TT_ASSERT_PATTERN(self->buf, len, 30);
	ASSERT_EQ(0, tt_stats(self->s, &st0));
	EXPECT_EQ(4ULL, st0.async_done - st1.async_done);
	EXPECT_EQ(len, st0.bytes_to_fast - st1.bytes_to_fast);
	EXPECT_EQ(0ULL, st0.async_cancelled);
	/* a flush with nothing queued returns at once */
	ASSERT_EQ(0, tt_flush(self->s));
}

TEST_F_TIMEOUT(async, close_with_queued, 300)
{
	size_t len = TT_NR_CHUNKS * TT_CHUNK, pages = len / self->ps;
	struct tt_st_place *pl;
	struct tt_ioc_stats st;
	struct tt_session *s2;
	long long ref0;
	int i;

	TT_SKIP_IF_SETUP_SKIPPED();
	self->len = len;
	self->buf = tt_st_map(len, -1);
	ASSERT_NE(NULL, self->buf);
	tt_st_fill(self->buf, len, 31);
	ref0 = tt_refcnt();

	s2 = tt_open();
	ASSERT_NE(NULL, s2);
	for (i = 0; i < TT_NR_CHUNKS; i++)
		ASSERT_EQ(0, tt_migrate_ex(s2, self->buf + i * TT_CHUNK,
					   TT_CHUNK, self->topo.slow,
					   TT_MIGRATE_ASYNC, NULL));
	ASSERT_EQ(0, tt_register(s2, self->buf, len, 1, 0));
	ASSERT_EQ(0, tt_stats(s2, &st));
	TH_LOG("at close: %llu queued, %llu done, %llu cancelled",
	       (unsigned long long)st.async_queued,
	       (unsigned long long)st.async_done,
	       (unsigned long long)st.async_cancelled);
	tt_close(s2);
	ASSERT_EQ(ref0, tt_refcnt());

	TT_ASSERT_PATTERN(self->buf, len, 31);
	pl = malloc(sizeof(*pl));
	ASSERT_NE(NULL, pl);
	ASSERT_EQ(0, tt_st_place(self->buf, len, pl));
	ASSERT_EQ(pages, pl->on_node[self->topo.fast] +
		  pl->on_node[self->topo.slow]);
	TH_LOG("after close: %llu pages on node %d, %llu on node %d",
	       (unsigned long long)pl->on_node[self->topo.slow],
	       self->topo.slow,
	       (unsigned long long)pl->on_node[self->topo.fast],
	       self->topo.fast);
	free(pl);
	/* the closed session's registration does not block this one */
	ASSERT_EQ(0, tt_register(self->s, self->buf, len, 1, 0));
	ASSERT_EQ(0, tt_migrate(self->s, self->buf, len, self->topo.slow));
	TT_ASSERT_PLACED(self->buf, len, self->topo.slow);
	TT_ASSERT_PATTERN(self->buf, len, 31);
	ASSERT_EQ(0, tt_unregister(self->s, self->buf, len));
}

/*
 * Child of exit/kill_with_queued: open a session, queue TT_NR_CHUNKS async
 * migrations of freshly filled memory, register it, report on @wfd and then
 * exit at once (@linger 0) or wait to be killed.
 */
static void tt_child_queue(int slow, int wfd, int linger)
{
	size_t len = TT_NR_CHUNKS * TT_CHUNK;
	struct tt_session *s;
	char *m;
	int i;

	s = tt_open();
	m = tt_st_map(len, -1);
	if (!s || !m)
		_exit(10);
	tt_st_fill(m, len, 32);
	if (tt_register(s, m, len, 1, 0))
		_exit(11);
	for (i = 0; i < TT_NR_CHUNKS; i++)
		if (tt_migrate_ex(s, m + i * TT_CHUNK, TT_CHUNK, slow,
				  TT_MIGRATE_ASYNC, NULL))
			_exit(12);
	if (write(wfd, "q", 1) != 1)
		_exit(13);
	if (!linger)
		_exit(0);
	for (;;)
		pause();
}

static void tt_queued_child(struct __test_metadata *_metadata,
			    const struct tt_st_topo *topo, int kill_it)
{
	long long ref0 = tt_refcnt();
	int p[2], status;
	pid_t pid;
	char c;

	ASSERT_LT(0, ref0);
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(p[0]);
		tt_child_queue(topo->slow, p[1], kill_it);
	}
	close(p[1]);
	ASSERT_EQ(1, read(p[0], &c, 1)) TH_LOG("the child failed to queue");
	close(p[0]);
	if (kill_it)
		ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (kill_it) {
		ASSERT_TRUE(WIFSIGNALED(status));
		ASSERT_EQ(SIGKILL, WTERMSIG(status));
	} else {
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_EQ(0, WEXITSTATUS(status));
	}
	/* the child's session is gone with it */
	ASSERT_EQ(ref0, tt_refcnt());
	TT_ASSERT_FRESH_SESSION_WORKS(topo);
}

TEST_F_TIMEOUT(async, exit_with_queued, 300)
{
	TT_SKIP_IF_SETUP_SKIPPED();
	tt_queued_child(_metadata, &self->topo, 0);
}

TEST_F_TIMEOUT(async, kill_with_queued, 300)
{
	TT_SKIP_IF_SETUP_SKIPPED();
	tt_queued_child(_metadata, &self->topo, 1);
}

TEST_F_TIMEOUT(async, munmap_queued, 300)
{
	size_t len = TT_NR_CHUNKS * TT_CHUNK;
	struct tt_ioc_stats st0, st1;
	char *m;
	int i;

	TT_SKIP_IF_SETUP_SKIPPED();
	m = tt_st_map(len, -1);
	ASSERT_NE(NULL, m);
	tt_st_fill(m, len, 33);
	ASSERT_EQ(0, tt_stats(self->s, &st0));
	for (i = 0; i < TT_NR_CHUNKS; i++)
		ASSERT_EQ(0, tt_migrate_ex(self->s, m + i * TT_CHUNK, TT_CHUNK,
					   self->topo.slow, TT_MIGRATE_ASYNC,
					   NULL));
	ASSERT_EQ(0, munmap(m, len));
	ASSERT_EQ(0, tt_flush(self->s));
	ASSERT_EQ(0, tt_stats(self->s, &st1));
	ASSERT_EQ((uint64_t)TT_NR_CHUNKS, st1.async_queued - st0.async_queued);
	ASSERT_EQ(st1.async_queued - st0.async_queued,
		  (st1.async_done - st0.async_done) +
		  (st1.async_cancelled - st0.async_cancelled));
	TH_LOG("%llu done, %llu cancelled, %llu pages moved, %llu not present",
	       (unsigned long long)(st1.async_done - st0.async_done),
	       (unsigned long long)(st1.async_cancelled - st0.async_cancelled),
	       (unsigned long long)(st1.total.moved - st0.total.moved),
	       (unsigned long long)(st1.total.skipped_not_present -
				    st0.total.skipped_not_present));
	TT_ASSERT_FRESH_SESSION_WORKS(&self->topo);
}

/* Child of two_processes: @rounds round trips of 64 MiB; 0 or a step. */
static int tt_child_rounds(int fast, int slow, int seed, int rfd, int rounds)
{
	size_t len = 64 * TT_ST_MIB, pages = len / tt_page_size();
	struct tt_migrate_result r;
	struct tt_session *s;
	char *m, c;
	int i;

	s = tt_open();
	m = tt_st_map(len, -1);
	if (!s || !m)
		return 20;
	tt_st_fill(m, len, seed);
	/* start together: the parent closes the pipe */
	if (read(rfd, &c, 1) != 0)
		return 21;
	for (i = 0; i < rounds; i++) {
		if (tt_migrate_ex(s, m, len, slow, 0, &r) || r.moved != pages)
			return 22;
		if (tt_st_pages_on(m, len, slow) != (long long)pages)
			return 23;
		if (tt_st_check(m, len, seed) != -1)
			return 24;
		if (tt_migrate_ex(s, m, len, fast, 0, &r) || r.moved != pages)
			return 25;
		if (tt_st_pages_on(m, len, fast) != (long long)pages)
			return 26;
		if (tt_st_check(m, len, seed) != -1)
			return 27;
	}
	tt_close(s);
	return 0;
}

TEST_F_TIMEOUT(async, two_processes, 600)
{
	pid_t pid[2];
	int p[2], i, status;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, pipe(p));
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			close(p[1]);
			_exit(tt_child_rounds(self->topo.fast, self->topo.slow,
					      40 + i, p[0], 3));
		}
	}
	close(p[0]);
	close(p[1]);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_EQ(0, WEXITSTATUS(status))
			TH_LOG("process %d failed at step %d (see tt_child_rounds)",
			       i, WEXITSTATUS(status));
	}
}

struct tt_thread_arg {
	struct tt_session *s;
	int fast, slow, seed, ret;
};

static void *tt_thread_rounds(void *p)
{
	struct tt_thread_arg *a = p;
	size_t len = 32 * TT_ST_MIB, pages = len / tt_page_size();
	struct tt_migrate_result r;
	char *m;
	int i;

	a->ret = 30;
	m = tt_st_map(len, -1);
	if (!m)
		return NULL;
	tt_st_fill(m, len, a->seed);
	for (i = 0; i < 3; i++) {
		a->ret = 31;
		if (tt_migrate_ex(a->s, m, len, a->slow, 0, &r) ||
		    r.moved != pages)
			goto out;
		a->ret = 32;
		if (tt_st_pages_on(m, len, a->slow) != (long long)pages ||
		    tt_st_check(m, len, a->seed) != -1)
			goto out;
		a->ret = 33;
		if (tt_migrate_ex(a->s, m, len, a->fast, TT_MIGRATE_ASYNC,
				  NULL) || tt_flush(a->s))
			goto out;
		a->ret = 34;
		if (tt_st_pages_on(m, len, a->fast) != (long long)pages ||
		    tt_st_check(m, len, a->seed) != -1)
			goto out;
	}
	a->ret = 0;
out:
	munmap(m, len);
	return NULL;
}

TEST_F_TIMEOUT(async, two_threads, 600)
{
	struct tt_thread_arg a[2];
	pthread_t t[2];
	int i;

	TT_SKIP_IF_SETUP_SKIPPED();
	for (i = 0; i < 2; i++) {
		a[i].s = self->s;
		a[i].fast = self->topo.fast;
		a[i].slow = self->topo.slow;
		a[i].seed = 50 + i;
		ASSERT_EQ(0, pthread_create(&t[i], NULL, tt_thread_rounds,
					    &a[i]));
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pthread_join(t[i], NULL));
		ASSERT_EQ(0, a[i].ret) TH_LOG("thread %d failed at step %d",
					      i, a[i].ret);
	}
}

TEST_HARNESS_MAIN
