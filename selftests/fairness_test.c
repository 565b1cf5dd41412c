// SPDX-License-Identifier: GPL-2.0
/*
 * One session must not stall another (issue 14, findings 5, 10 and 12).
 * An "antagonist" child process opens its own session and misbehaves; the
 * test process (another session) must still get its work done within a
 * bound (FA_BOUND_S seconds, times TT_ST_TIME_MUL).
 *
 *   stalled_mover     the antagonist's mover takes orders and never
 *                     completes them (mover_timeout_ms 60000) while its
 *                     asynchronous migrations wait for them: our
 *                     synchronous 16 MiB TT_IOC_MIGRATE ends in time.
 *   uffd_status       the antagonist's movers report TT_MOVER_DONE with a
 *                     status array on a userfaultfd page that never faults
 *                     in: our synchronous migration ends in time (SKIP
 *                     without userfaultfd).
 *   async_flood       the antagonist queues asynchronous migrations until
 *                     the per-session cap refuses one (EAGAIN); our
 *                     asynchronous migration plus TT_IOC_FLUSH ends in time.
 *   cow_shared        fork + COW: without CAP_SYS_NICE the pages the
 *                     grandchild still maps are not moved but counted
 *                     (skipped_busy, as move_pages(2)'s EACCES in
 *                     libtiertrain's fallback; the call fails with EBUSY);
 *                     the pages the child wrote to
 *                     (its own again) move; with CAP_SYS_NICE everything
 *                     moves, as move_pages(2) with MPOL_MF_MOVE_ALL.
 *   async_nomem       an asynchronous migration that cannot allocate (its
 *                     process's memory cgroup at memory.max): counted
 *                     in async_failed, not async_done, and TT_IOC_FLUSH
 *                     returns ENOMEM once (the next flush 0); data intact
 *                     (SKIP without the cgroup2 memory controller).
 *   close_killable    the module budget's visit is stuck in another
 *                     session's victim eviction (its mover never completes
 *                     the order; mover_timeout_ms 120000) when a third
 *                     process with an open session is SIGKILLed: it exits
 *                     within the bound (its close does not wait for the
 *                     visits of other sessions).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/userfaultfd.h>

#include "kselftest_harness.h"
#include "tt_harness.h"

#define FA_TIMEOUT_PARAM	TT_ST_SYSMOD "/parameters/mover_timeout_ms"
#define FA_BUDGET_PARAM		TT_ST_SYSMOD "/parameters/budget_mib"
#define FA_HUGE			TT_ST_THP_SIZE
#define FA_LEN			(16 * TT_ST_MIB)
/* our work must end within this many seconds (times TT_ST_TIME_MUL) */
#define FA_BOUND_S		15

FIXTURE(fair)
{
	struct tt_st_topo topo;
	size_t ps;
	int fd;
	char *buf;
	size_t len;
	pid_t child;
	pid_t helper;		/* a CLONE_VM mover of the child, if any */
	long long timeout_ms;	/* to restore, -1: untouched */
	long long khugepaged_sleep;	/* to restore, -1: untouched */
	int budget_set;		/* budget_mib written: set it back to 0 */
};

FIXTURE_SETUP(fair)
{
	self->fd = -1;
	self->buf = NULL;
	self->child = -1;
	self->helper = -1;
	self->timeout_ms = -1;
	self->khugepaged_sleep = -1;
	self->budget_set = 0;
	self->ps = tt_page_size();
	TT_SETUP_NODES(&self->topo, 1);
	if (tt_st_read_ll(FA_TIMEOUT_PARAM, &self->timeout_ms))
		SKIP(return, "the module has no mover_timeout_ms parameter");
	ASSERT_EQ(0, tt_st_khugepaged_pause(&self->khugepaged_sleep));
	self->fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(fair)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	if (self->helper > 0) {
		kill(self->helper, SIGKILL);
		waitpid(self->helper, NULL, __WALL);
	}
	if (self->budget_set)
		tt_st_write_file(FA_BUDGET_PARAM, "0");
	if (self->fd >= 0)
		close(self->fd);
	if (self->buf)
		munmap(self->buf, self->len);
	if (self->timeout_ms >= 0) {
		tt_st_param_write("mover_timeout_ms", self->timeout_ms);
	}
	if (self->khugepaged_sleep >= 0)
		tt_st_khugepaged_resume(self->khugepaged_sleep);
}

static uint64_t fa_bound_ns(void)
{
	return FA_BOUND_S * 1000000000ULL * tt_st_time_mul();
}

static void fa_set_timeout(long long ms)
{
	tt_st_param_write("mover_timeout_ms", ms);
}

static void fa_say(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		_exit(90);
}

/* One byte from @fd within @ms milliseconds; 0 on timeout or EOF. */
static char fa_hear(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c = 0;

	if (poll(&p, 1, ms) != 1 || read(fd, &c, 1) != 1)
		return 0;
	return c;
}

static int fa_mover_ioctl(int fd, struct tt_ioc_mover *m)
{
	return ioctl(fd, TT_IOC_MOVER, m) < 0 ? -errno : 0;
}

/* ---- the antagonist ------------------------------------------------------ */

enum fa_kind {
	FA_STALL,	/* take orders, never complete them */
	FA_UFFD,	/* complete with a status array that never faults in */
};

/**
 * struct fa_mover - a misbehaving mover thread of the antagonist
 * @fd:     the antagonist's session.
 * @kind:   enum fa_kind.
 * @status: FA_UFFD: the status array (on a missing userfaultfd page).
 * @say:    pipe to the test: 't' for each order taken.
 */
struct fa_mover {
	int fd;
	enum fa_kind kind;
	int32_t *status;
	int say;
};

static void *fa_mover_main(void *arg)
{
	struct fa_mover *f = arg;
	struct tt_ioc_mover m = { .flags = TT_MOVER_REGISTER };

	if (fa_mover_ioctl(f->fd, &m))
		return NULL;
	for (;;) {
		memset(&m, 0, sizeof(m));
		m.flags = TT_MOVER_TAKE | TT_MOVER_WAIT;
		if (fa_mover_ioctl(f->fd, &m) || !m.id)
			continue;
		fa_say(f->say, 't');
		if (f->kind != FA_UFFD)
			continue;
		m.flags = TT_MOVER_DONE;
		m.done_id = m.id;
		m.nr_status = m.len / m.huge_size;
		m.status_ptr = (uintptr_t)f->status;
		fa_mover_ioctl(f->fd, &m);	/* blocks on the missing page */
	}
	return NULL;
}

/* A page registered with a new userfaultfd, never resolved; NULL: none. */
static void *fa_uffd_page(size_t ps, int *ufd)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	void *p;

	*ufd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (*ufd < 0)
		return NULL;
	if (ioctl(*ufd, UFFDIO_API, &api))
		goto fail;
	p = mmap(NULL, ps, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		goto fail;
	reg.range.start = (uintptr_t)p;
	reg.range.len = ps;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(*ufd, UFFDIO_REGISTER, &reg)) {
		munmap(p, ps);
		goto fail;
	}
	return p;
fail:
	close(*ufd);
	*ufd = -1;
	return NULL;
}

/*
 * The antagonist process: its own session, @nr_movers misbehaving movers
 * of @kind, then two asynchronous 8 MiB migrations of THP memory for them.
 * Says 'r' when everything is queued, then 't' per order taken; waits to
 * be killed. Exit codes > 0 name the step that failed.
 */
static int fa_antagonist(enum fa_kind kind, int nr_movers, int node, int say)
{
	size_t len = 8 * TT_ST_MIB;
	struct tt_migrate_result r;
	struct fa_mover f[4];
	pthread_t th;
	int fd, i, ufd = -1;
	int32_t *status = NULL;
	char *b[2];

	fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 1;
	if (kind == FA_UFFD) {
		status = fa_uffd_page(tt_page_size(), &ufd);
		if (!status)
			return 2;
	}
	for (i = 0; i < 2; i++) {
		b[i] = tt_st_map_thp(len, 60 + i);
		if (!b[i])
			return 3;
	}
	for (i = 0; i < nr_movers && i < 4; i++) {
		f[i].fd = fd;
		f[i].kind = kind;
		f[i].status = status;
		f[i].say = say;
		if (pthread_create(&th, NULL, fa_mover_main, &f[i]))
			return 4;
	}
	usleep(100000);		/* the movers register */
	for (i = 0; i < 2; i++)
		if (tt_st_ioc_migrate(fd, (uintptr_t)b[i], len, node,
				      TT_MIGRATE_ASYNC, &r))
			return 5;
	fa_say(say, 'r');
	for (;;)
		pause();
	return 0;
}

/* Fork the antagonist; wait until it queued and a mover took an order. */
static int fa_start(FIXTURE_DATA(fair) *self, enum fa_kind kind,
		    int nr_movers)
{
	int p[2], st;
	char c;

	if (pipe(p))
		return -errno;
	self->child = fork();
	if (self->child < 0)
		return -errno;
	if (!self->child) {
		close(p[0]);
		_exit(fa_antagonist(kind, nr_movers, self->topo.slow, p[1]));
	}
	close(p[1]);
	c = fa_hear(p[0], 60000);
	if (c != 'r' && c != 't') {
		close(p[0]);
		if (waitpid(self->child, &st, WNOHANG) == self->child &&
		    WIFEXITED(st)) {
			self->child = -1;
			return WEXITSTATUS(st) == 2 ? -ENOSYS :
			       WEXITSTATUS(st) == 3 ? -ENOMEM : -EIO;
		}
		return -EIO;
	}
	/* an order taken: a migration of the antagonist waits for it */
	if (c != 't' && fa_hear(p[0], 60000) != 't') {
		close(p[0]);
		return -ETIMEDOUT;
	}
	/* with two workers busy the old code has both taken; not required */
	fa_hear(p[0], 2000);
	close(p[0]);
	return 0;
}

/* ---- our side ------------------------------------------------------------ */

struct fa_migration {
	int fd;
	void *buf;
	size_t len;
	int node;
	uint32_t flags;
	int ret;
	int flush_ret;
	struct tt_migrate_result res;
	uint64_t ns;
	volatile int done;
};

static void *fa_migrate_main(void *arg)
{
	struct fa_migration *m = arg;
	uint64_t t0 = tt_st_now_ns();

	m->ret = tt_st_ioc_migrate(m->fd, (uintptr_t)m->buf, m->len, m->node,
				   m->flags, &m->res);
	if (m->flags & TT_MIGRATE_ASYNC)
		m->flush_ret = tt_st_ioc_flush(m->fd);
	m->ns = tt_st_now_ns() - t0;
	__atomic_store_n(&m->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Migrate our own buffer on another thread; true when it ended within the
 * bound. Otherwise the antagonist is killed (its close gives the workers
 * back) before the thread is joined.
 */
static bool fa_ours_in_time(FIXTURE_DATA(fair) *self, struct fa_migration *m)
{
	uint64_t t0 = tt_st_now_ns();
	bool in_time;
	pthread_t th;

	if (pthread_create(&th, NULL, fa_migrate_main, m))
		return false;
	while (!__atomic_load_n(&m->done, __ATOMIC_ACQUIRE) &&
	       tt_st_now_ns() - t0 < fa_bound_ns())
		usleep(10000);
	in_time = __atomic_load_n(&m->done, __ATOMIC_ACQUIRE);
	if (!in_time && self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
		self->child = -1;
	}
	pthread_join(th, NULL);
	return in_time;
}

static void fa_our_buffer(FIXTURE_DATA(fair) *self, uint64_t seed)
{
	self->len = FA_LEN;
	self->buf = tt_st_map(self->len, -1);
	if (self->buf)
		tt_st_fill(self->buf, self->len, seed);
}

/*
 * Our 16 MiB synchronous migration (pattern @seed) while an antagonist of
 * @kind with @nr_movers movers holds the movers' orders, the mover timeout
 * set to @timeout_ms: it ends within the bound, moves every page, and the
 * data is intact.
 */
static void fa_ours_against(struct __test_metadata *_metadata,
			    FIXTURE_DATA(fair) *self, enum fa_kind kind,
			    int nr_movers, uint64_t seed, long long timeout_ms)
{
	struct fa_migration m = { 0 };
	int ret;

	fa_our_buffer(self, seed);
	ASSERT_NE(NULL, self->buf);
	fa_set_timeout(timeout_ms);
	ret = fa_start(self, kind, nr_movers);
	if (kind == FA_UFFD && ret == -ENOSYS)
		SKIP(return, "userfaultfd is not available");
	if (ret == -ENOMEM)
		SKIP(return, "the kernel gave no huge pages to a MADV_HUGEPAGE range");
	ASSERT_EQ(0, ret);

	m.fd = self->fd;
	m.buf = self->buf;
	m.len = self->len;
	m.node = self->topo.slow;
	EXPECT_TRUE(fa_ours_in_time(self, &m))
		TH_LOG("our 16 MiB migration took %.1f s (bound %u s)",
		       m.ns / 1e9, FA_BOUND_S * tt_st_time_mul());
	TH_LOG("our 16 MiB migration: %.0f ms", m.ns / 1e6);
	ASSERT_EQ(0, m.ret);
	ASSERT_EQ(self->len / self->ps, m.res.moved);
	TT_ASSERT_PATTERN(self->buf, self->len, seed);
	TT_ASSERT_PLACED(self->buf, self->len, self->topo.slow);
}

TEST_F_TIMEOUT(fair, stalled_mover, 600)
{
	TT_SKIP_IF_SETUP_SKIPPED();
	fa_ours_against(_metadata, self, FA_STALL, 1, 1, 60000);
}

TEST_F_TIMEOUT(fair, uffd_status, 600)
{
	TT_SKIP_IF_SETUP_SKIPPED();
	fa_ours_against(_metadata, self, FA_UFFD, 2, 2, 300);
}

/* The flooding antagonist: says the number queued (a u32), waits. */
static int fa_flooder(int fast, int slow, int say)
{
	size_t len = FA_LEN;
	struct tt_migrate_result r;
	uint32_t n;
	int fd, ret = 0;
	char *b;

	fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	b = tt_st_map(len, -1);
	if (fd < 0 || !b)
		return 1;
	tt_st_fill(b, len, 70);
	for (n = 0; n < 20000; n++) {
		ret = tt_st_ioc_migrate(fd, (uintptr_t)b, len,
					n & 1 ? fast : slow, TT_MIGRATE_ASYNC,
					&r);
		if (ret)
			break;
	}
	if (ret && ret != -EAGAIN)
		return 2;
	if (write(say, &n, sizeof(n)) != sizeof(n))
		return 3;
	for (;;)
		pause();
	return 0;
}

TEST_F_TIMEOUT(fair, async_flood, 600)
{
	struct fa_migration m = { 0 };
	struct tt_ioc_stats st;
	uint32_t queued = 0;
	int p[2];

	TT_SKIP_IF_SETUP_SKIPPED();
	fa_our_buffer(self, 3);
	ASSERT_NE(NULL, self->buf);
	ASSERT_EQ(0, pipe(p));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		close(p[0]);
		_exit(fa_flooder(self->topo.fast, self->topo.slow, p[1]));
	}
	close(p[1]);
	ASSERT_EQ(sizeof(queued), read(p[0], &queued, sizeof(queued)));
	close(p[0]);
	TH_LOG("the antagonist queued %u asynchronous migrations", queued);
	EXPECT_GT(20000, queued)
		TH_LOG("no per-session cap on queued asynchronous migrations");

	m.fd = self->fd;
	m.buf = self->buf;
	m.len = self->len;
	m.node = self->topo.slow;
	m.flags = TT_MIGRATE_ASYNC;
	EXPECT_TRUE(fa_ours_in_time(self, &m))
		TH_LOG("our asynchronous 16 MiB migration and flush took %.1f s (bound %u s)",
		       m.ns / 1e9, FA_BOUND_S * tt_st_time_mul());
	TH_LOG("our asynchronous 16 MiB migration and flush: %.0f ms",
	       m.ns / 1e6);
	ASSERT_EQ(0, m.ret);
	ASSERT_EQ(0, m.flush_ret);
	ASSERT_EQ(0, tt_st_ioc_stats(self->fd, &st));
	EXPECT_EQ(1, st.async_done);
	EXPECT_EQ(self->len / self->ps, st.total.moved);
	TT_ASSERT_PATTERN(self->buf, self->len, 3);
	TT_ASSERT_PLACED(self->buf, self->len, self->topo.slow);
}

/* Drop CAP_SYS_NICE from the effective and permitted sets: 0 or -errno. */
static int fa_drop_sys_nice(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[CAP_TO_INDEX(CAP_SYS_NICE)].effective &= ~CAP_TO_MASK(CAP_SYS_NICE);
	d[CAP_TO_INDEX(CAP_SYS_NICE)].permitted &= ~CAP_TO_MASK(CAP_SYS_NICE);
	d[CAP_TO_INDEX(CAP_SYS_NICE)].inheritable &= ~CAP_TO_MASK(CAP_SYS_NICE);
	if (syscall(SYS_capset, &h, d))
		return -errno;
	return prctl(PR_CAPBSET_READ, CAP_SYS_NICE) < 0 ? -errno : 0;
}

/*
 * The COW child: 4 MiB of base pages shared with a grandchild after fork,
 * then migrated by the child's own session, with or without CAP_SYS_NICE.
 * Exit codes > 0 name the failed step; the messages go to stderr.
 */
static int fa_cow_child(bool nice, int fast, int slow)
{
	size_t len = 4 * TT_ST_MIB, ps = tt_page_size(), pages = len / ps;
	size_t half = pages / 2, i;
	struct tt_migrate_result r;
	int p[2], q[2], fd, ret, st;
	long long on_slow;
	pid_t g;
	char *b, c = 'x';

	if (!nice && fa_drop_sys_nice())
		return 10;
	b = tt_st_map(len, -1);
	if (!b || tt_st_bind(b, len, fast))
		return 11;
	tt_st_fill(b, len, 80);
	if (pipe(p) || pipe(q))
		return 12;
	g = fork();
	if (g < 0)
		return 13;
	if (!g) {	/* keeps the pages mapped, checks them at the end */
		if (write(q[1], &c, 1) != 1 || read(p[0], &c, 1) != 1)
			_exit(1);
		_exit(tt_st_check(b, len, 80) == -1 ? 0 : 2);
	}
	if (read(q[0], &c, 1) != 1)
		return 14;
	fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 15;
	ret = tt_st_ioc_migrate(fd, (uintptr_t)b, len, slow, 0, &r);
	on_slow = tt_st_pages_on(b, len, slow);
	fprintf(stderr, "# cap_sys_nice %d: ret %d moved %llu unsupported %llu busy %llu of %llu, %lld on the slow node\n",
		nice, ret, (unsigned long long)r.moved,
		(unsigned long long)r.skipped_unsupported,
		(unsigned long long)r.skipped_busy,
		(unsigned long long)r.pages, on_slow);
	/* pages left shared are busy: EBUSY (TT_IOC_MIGRATE) */
	if (ret != (nice ? 0 : -EBUSY))
		return 20;
	if (nice && (r.moved != pages || on_slow != (long long)pages))
		return 21;
	if (!nice && (r.moved || r.skipped_busy != pages || on_slow))
		return 22;
	if (!nice) {
		/* the child's own copies of half the pages move */
		for (i = 0; i < half; i++)
			b[i * ps] ^= 1;
		ret = tt_st_ioc_migrate(fd, (uintptr_t)b, len, slow, 0, &r);
		on_slow = tt_st_pages_on(b, len, slow);
		fprintf(stderr, "# after writing %zu pages: ret %d moved %llu busy %llu, %lld on the slow node\n",
			half, ret, (unsigned long long)r.moved,
			(unsigned long long)r.skipped_busy, on_slow);
		if (ret != -EBUSY || r.moved != half ||
		    r.skipped_busy != pages - half ||
		    on_slow != (long long)half)
			return 23;
		for (i = 0; i < half; i++)
			b[i * ps] ^= 1;
	}
	if (tt_st_check(b, len, 80) != -1)
		return 24;
	if (write(p[1], &c, 1) != 1 || waitpid(g, &st, 0) != g)
		return 25;
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return 26;	/* the grandchild's copy changed */
	close(fd);
	return 0;
}

static void fa_cow_case(struct __test_metadata *_metadata,
			FIXTURE_DATA(fair) *self, bool nice)
{
	pid_t pid;
	int st;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(fa_cow_child(nice, self->topo.fast, self->topo.slow));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st))
		TH_LOG("CAP_SYS_NICE %d: step %d failed (see fa_cow_child)",
		       nice, WEXITSTATUS(st));
}

TEST_F_TIMEOUT(fair, cow_shared, 300)
{
	TT_SKIP_IF_SETUP_SKIPPED();
	if (geteuid())
		SKIP(return, "needs root (CAP_SYS_NICE to drop)");
	fa_cow_case(_metadata, self, false);
	fa_cow_case(_metadata, self, true);
}

/* ---- an asynchronous migration that fails ------------------------------- */

/**
 * struct fa_cg - a memory cgroup of our own (cgroup2)
 * @root:     where cgroup2 is mounted.
 * @dir:      the cgroup.
 * @mounted:  we mounted @root (unmount it at the end).
 * @enabled:  we enabled the memory controller in the root's subtree.
 */
struct fa_cg {
	char root[64];
	char dir[128];
	bool mounted;
	bool enabled;
};

static int fa_cg_file(const struct fa_cg *cg, const char *name, char *path,
		      size_t size)
{
	return snprintf(path, size, "%s/%s", cg->dir, name) >= (int)size ?
	       -ENAMETOOLONG : 0;
}

/* 0, or -ENODEV when the memory controller is not available. */
static int fa_cg_create(struct fa_cg *cg)
{
	char buf[512], path[192];

	memset(cg, 0, sizeof(*cg));
	snprintf(cg->root, sizeof(cg->root), "/tmp/tt_fair_cg.%d", getpid());
	if (mkdir(cg->root, 0700))
		return -errno;
	if (mount("none", cg->root, "cgroup2", 0, NULL)) {
		rmdir(cg->root);
		cg->root[0] = 0;
		return -ENODEV;
	}
	cg->mounted = true;
	snprintf(path, sizeof(path), "%s/cgroup.controllers", cg->root);
	if (tt_st_read_file(path, buf, sizeof(buf)) < 0 ||
	    !strstr(buf, "memory"))
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", cg->root);
	if (tt_st_read_file(path, buf, sizeof(buf)) < 0)
		return -ENODEV;
	if (!strstr(buf, "memory")) {
		if (tt_st_write_file(path, "+memory"))
			return -ENODEV;
		cg->enabled = true;
	}
	snprintf(cg->dir, sizeof(cg->dir), "%s/tt_fair", cg->root);
	if (mkdir(cg->dir, 0700)) {
		cg->dir[0] = 0;
		return -errno;
	}
	return 0;
}

static void fa_cg_destroy(struct fa_cg *cg)
{
	char path[192];

	if (cg->dir[0])
		rmdir(cg->dir);
	if (cg->enabled) {
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control",
			 cg->root);
		tt_st_write_file(path, "-memory");
	}
	if (cg->mounted)
		umount(cg->root);
	if (cg->root[0])
		rmdir(cg->root);
}

/*
 * The child: 64 MiB queued asynchronously once it is in the cgroup; after
 * the test limited the cgroup, two flushes. Reports the two results and
 * the counters in @out (shared memory); exit codes > 0 name the failed
 * step.
 */
struct fa_nomem_out {
	int flush1;
	int flush2;
	uint64_t failed;
	uint64_t done;
	uint64_t moved;
};

static int fa_nomem_child(int slow, int hear, int say,
			  struct fa_nomem_out *out)
{
	size_t len = 64 * TT_ST_MIB;
	struct tt_migrate_result r;
	struct tt_ioc_stats st;
	int fd;
	char *b;

	if (fa_hear(hear, 60000) != 'g')	/* in the cgroup now */
		return 1;
	fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	b = tt_st_map(len, -1);
	if (fd < 0 || !b)
		return 2;
	tt_st_fill(b, len, 97);
	fa_say(say, 'a');
	if (fa_hear(hear, 60000) != 'l')	/* limited */
		return 4;
	/* room for the request, not for the migration's arrays */
	if (tt_st_ioc_migrate(fd, (uintptr_t)b, len, slow, TT_MIGRATE_ASYNC,
			      &r))
		return 3;
	out->flush1 = tt_st_ioc_flush(fd);
	out->flush2 = tt_st_ioc_flush(fd);
	if (tt_st_ioc_stats(fd, &st))
		return 5;
	out->failed = st.async_failed;
	out->done = st.async_done;
	out->moved = st.total.moved;
	if (tt_st_check(b, len, 97) != -1)
		return 6;
	return 0;
}

/*
 * Empty the per-CPU charge caches of the cgroup @cg (memory.current counts
 * them, and charges are served from them without looking at memory.max): a
 * process in a second cgroup takes a page fault on every CPU, which makes
 * each CPU's cache switch to that cgroup. 0 or -errno.
 */
static int fa_cg_drain(const struct fa_cg *cg)
{
	char dir[192], path[224], pid[32];
	long n = sysconf(_SC_NPROCESSORS_ONLN), i;
	int st, p[2];
	pid_t c;

	snprintf(dir, sizeof(dir), "%s2", cg->dir);
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (pipe(p))
		return -errno;
	c = fork();
	if (c < 0)
		return -errno;
	if (!c) {
		close(p[1]);
		if (fa_hear(p[0], 60000) != 'm')	/* moved */
			_exit(2);
		for (i = 0; i < n; i++) {
			cpu_set_t set;
			char *m;

			CPU_ZERO(&set);
			CPU_SET(i, &set);
			if (sched_setaffinity(0, sizeof(set), &set))
				continue;
			m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m == MAP_FAILED)
				_exit(1);
			memset(m, 1, 1 << 20);
			munmap(m, 1 << 20);
		}
		_exit(0);
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(pid, sizeof(pid), "%d", c);
	close(p[0]);
	st = tt_st_write_file(path, pid);
	if (!st)
		fa_say(p[1], 'm');
	close(p[1]);
	if (waitpid(c, NULL, 0) != c || st) {
		rmdir(dir);
		return st ? st : -EIO;
	}
	rmdir(dir);
	return 0;
}

TEST_F_TIMEOUT(fair, async_nomem, 300)
{
	struct fa_nomem_out *out;
	char path[192], cur[64], pid[32];
	struct fa_cg cg;
	int p[2], q[2], ret, st;
	pid_t c;

	TT_SKIP_IF_SETUP_SKIPPED();
	ret = fa_cg_create(&cg);
	if (ret == -ENODEV) {
		fa_cg_destroy(&cg);
		SKIP(return, "no cgroup2 memory controller");
	}
	ASSERT_EQ(0, ret);
	out = mmap(NULL, sizeof(*out), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, out);
	memset(out, 0, sizeof(*out));
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(q));
	c = fork();
	ASSERT_LE(0, c);
	if (!c) {
		close(p[1]);
		close(q[0]);
		_exit(fa_nomem_child(self->topo.slow, p[0], q[1], out));
	}
	self->child = c;
	close(p[0]);
	close(q[1]);
	ASSERT_EQ(0, fa_cg_file(&cg, "cgroup.procs", path, sizeof(path)));
	snprintf(pid, sizeof(pid), "%d", c);
	ASSERT_EQ(0, tt_st_write_file(path, pid));
	fa_say(p[1], 'g');
	EXPECT_EQ('a', fa_hear(q[0], 60000));
	/*
	 * Room for 8 KiB more: the request's slab page, not the migration's
	 * 32 KiB arrays (16 MiB turns of 4096 pages)
	 */
	ASSERT_EQ(0, fa_cg_drain(&cg));
	ASSERT_EQ(0, fa_cg_file(&cg, "memory.current", path, sizeof(path)));
	ASSERT_LT(0, tt_st_read_file(path, cur, sizeof(cur)));
	snprintf(cur, sizeof(cur), "%lld", atoll(cur) + 8192);
	ASSERT_EQ(0, fa_cg_file(&cg, "memory.max", path, sizeof(path)));
	ASSERT_EQ(0, tt_st_write_file(path, cur));
	fa_say(p[1], 'l');
	ret = waitpid(c, &st, 0) == c ? 0 : -errno;
	self->child = -1;
	tt_st_write_file(path, "max");
	close(p[1]);
	close(q[0]);
	fa_cg_destroy(&cg);
	ASSERT_EQ(0, ret);
	ASSERT_TRUE(WIFEXITED(st));
	TH_LOG("flush %d then %d; async_failed %llu async_done %llu, %llu pages moved",
	       out->flush1, out->flush2, (unsigned long long)out->failed,
	       (unsigned long long)out->done, (unsigned long long)out->moved);
	ASSERT_EQ(0, WEXITSTATUS(st))
		TH_LOG("the child failed at step %d", WEXITSTATUS(st));
	EXPECT_EQ(-ENOMEM, out->flush1);
	EXPECT_EQ(0, out->flush2);
	EXPECT_EQ(1, out->failed);
	EXPECT_EQ(0, out->done);
	EXPECT_GT(64 * TT_ST_MIB / self->ps, out->moved);
	munmap(out, sizeof(*out));
}

/* ---- close and exit ------------------------------------------------------ */

static int fa_event(int fd, uint16_t type, uint16_t flags, uint32_t layer,
		    const void *addr, size_t len)
{
	struct tt_event ev = {
		.type = type, .flags = flags, .layer = layer,
		.addr = (uintptr_t)addr, .len = len,
	};

	return ioctl(fd, TT_IOC_EVENT, &ev) < 0 ? -errno : 0;
}

/*
 * The hog: a session with a mover that never completes an order and a
 * 16 MiB THP tensor saved by layer 1 in a (profiling) iteration, so that
 * a module budget makes it a victim whose eviction goes to that mover.
 * Its rates are set: a session without them probes its first layer in a
 * profiling iteration (Documentation/scheduler.md, "Rates"), an order the
 * stalled mover would hold, which keeps the layer from being a victim.
 * Says 'r' when ready, then 't' per order taken; waits to be killed.
 */
static int fa_hog(int say)
{
	struct tt_ioc_sched cfg = {
		.valid = TT_SCHED_SET_RATES,
		.er_bps = 100ULL << 20, .pr_bps = 100ULL << 20,
	};
	size_t len = FA_LEN;
	struct fa_mover f;
	pthread_t th;
	int fd;
	char *b;

	fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 1;
	if (ioctl(fd, TT_IOC_SET_SCHED, &cfg))
		return 6;
	b = tt_st_map_thp(len, 95);
	if (!b)
		return 3;
	f.fd = fd;
	f.kind = FA_STALL;
	f.status = NULL;
	f.say = say;
	if (pthread_create(&th, NULL, fa_mover_main, &f))
		return 4;
	usleep(100000);		/* the mover registers */
	if (fa_event(fd, TT_EV_ITER_BEGIN, 0, 0, NULL, 0) ||
	    fa_event(fd, TT_EV_LAYER_BEGIN, TT_FWD, 1, NULL, 0) ||
	    fa_event(fd, TT_EV_TENSOR_SAVED, 0, 1, b, len) ||
	    fa_event(fd, TT_EV_LAYER_END, TT_FWD, 1, NULL, 0))
		return 5;
	fa_say(say, 'r');
	for (;;)
		pause();
	return 0;
}

TEST_F_TIMEOUT(fair, close_killable, 900)
{
	pid_t closer, hog;
	uint64_t t0, ns;
	int p[2], q[2], st;
	bool gone = false;
	char c;

	TT_SKIP_IF_SETUP_SKIPPED();
	if (access(FA_BUDGET_PARAM, F_OK))
		SKIP(return, "the module has no budget_mib parameter");
	fa_set_timeout(120000);
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(q));
	/* the closer joins the budget's sessions first */
	closer = fork();
	ASSERT_LE(0, closer);
	if (!closer) {
		int fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);

		if (fd < 0)
			_exit(1);
		fa_say(q[1], 'o');
		for (;;)
			pause();
	}
	ASSERT_EQ('o', fa_hear(q[0], 60000));
	hog = fork();
	ASSERT_LE(0, hog);
	if (!hog) {
		close(p[0]);
		_exit(fa_hog(p[1]));
	}
	self->child = hog;
	close(p[1]);
	c = fa_hear(p[0], 60000);
	if (c != 'r') {
		kill(closer, SIGKILL);
		waitpid(closer, NULL, 0);
		ASSERT_EQ(hog, waitpid(hog, &st, 0));
		self->child = -1;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
			SKIP(return, "the kernel gave no huge pages to a MADV_HUGEPAGE range");
		ASSERT_TRUE(0) TH_LOG("the hog failed: status 0x%x", st);
	}
	/* a module budget: the hog is over its share, the visit evicts */
	self->budget_set = 1;
	ASSERT_EQ(0, tt_st_write_file(FA_BUDGET_PARAM, "4"));
	c = fa_hear(p[0], 60000);
	close(p[0]);
	if (c != 't') {
		kill(closer, SIGKILL);
		waitpid(closer, NULL, 0);
	}
	ASSERT_EQ('t', c)
		TH_LOG("the budget's visit gave the hog's mover no order in 60 s: its layer was no victim");
	usleep(200000);

	t0 = tt_st_now_ns();
	ASSERT_EQ(0, kill(closer, SIGKILL));
	while (tt_st_now_ns() - t0 < fa_bound_ns()) {
		if (waitpid(closer, &st, WNOHANG) == closer) {
			gone = true;
			break;
		}
		usleep(10000);
	}
	ns = tt_st_now_ns() - t0;
	TH_LOG("the closer exited %.0f ms after SIGKILL", ns / 1e6);
	if (!gone) {
		/* the hog's close gives its order back: the visit ends */
		kill(hog, SIGKILL);
		waitpid(hog, NULL, 0);
		self->child = -1;
		waitpid(closer, NULL, 0);
	}
	EXPECT_TRUE(gone)
		TH_LOG("the SIGKILLed closer was still there after %u s",
		       FA_BOUND_S * tt_st_time_mul());
}

TEST_HARNESS_MAIN
