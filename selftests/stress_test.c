// SPDX-License-Identifier: GPL-2.0
/*
 * Stress and fault tests: many sessions at once, module unload attempts
 * while the module is busy, the slow node full or going offline under a
 * training loop, close/exit/SIGKILL in every scheduler phase. Every test
 * checks the training data word by word (each layer's tensor at its
 * backward begin and at the end) and that no session is left behind (the
 * module's reference count).
 *
 *   sessions_64          8 processes x 8 threads, one session each, train
 *                        and migrate at once.
 *   rmmod_while_live     delete_module(2) while sessions train, a mover
 *                        holds orders and tierctl dumps run: refused each
 *                        time, nothing disturbed; once all is closed the
 *                        module unloads, and loads again (TT_MODULE).
 *   slow_full            the slow node filled by a hog while training:
 *                        evictions fail, nothing is lost, all ends fast.
 *   offline_while_training
 *                        the slow node's memory blocks offlined and
 *                        onlined in the middle of iterations (SKIP when
 *                        none of its blocks can go offline).
 *   end_in_every_phase   a training child closes its session, exits, or
 *                        is SIGKILLed in each phase of an iteration
 *                        (profiling, mid-forward, evictions queued,
 *                        evicted, mid-backward, after the loss, between
 *                        iterations): it ends promptly, its data are
 *                        intact after a close, no session leaks.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tt_harness.h"

#define ST_MAXL		4

/**
 * struct st_trainer - a small synthetic training loop
 * @s:     its session.
 * @nl:    layers (ids 1..nl).
 * @sz:    bytes of each layer's tensor.
 * @ms:    compute per layer pass (tt_st_compute()).
 * @iter:  iterations begun.
 * @t:     the tensors.
 * @missing: bytes st_all_on() found off its node at its end.
 * @err:   what failed.
 */
struct st_trainer {
	struct tt_session *s;
	unsigned int nl;
	size_t sz;
	unsigned int ms;
	unsigned int iter;
	char *t[ST_MAXL];
	unsigned long long missing;
	char err[160];
};

/* Where an iteration stops early (st_iteration()'s @stop). */
enum st_phase {
	ST_PH_ITER_BEGIN,	/* right after the iteration begin */
	ST_PH_MID_FORWARD,	/* the last layer's tensor saved, not ended */
	ST_PH_FORWARD_DONE,	/* every forward ended: evictions queued */
	ST_PH_EVICTED,		/* 100 ms later: evictions ended or running */
	ST_PH_LOSS,		/* after the loss: prefetch timers armed */
	ST_PH_MID_BACKWARD,	/* the last layer's backward begun */
	ST_PH_DONE,		/* the whole iteration */
	ST_NR_PHASES
};

static const char *const st_phase_names[ST_NR_PHASES] = {
	"iter_begin", "mid_forward", "forward_done", "evicted", "loss",
	"mid_backward", "done",
};

static uint64_t st_seed(const struct st_trainer *tr, unsigned int l)
{
	return (uint64_t)tr->iter * 131 + l + 7;
}

static int st_fail(struct st_trainer *tr, const char *what, int err)
{
	snprintf(tr->err, sizeof(tr->err), "iteration %u: %s: %s", tr->iter,
		 what, strerror(err < 0 ? -err : err));
	return -1;
}

static int st_init(struct st_trainer *tr, struct tt_session *s,
		   unsigned int nl, size_t sz, unsigned int ms)
{
	unsigned int l;

	memset(tr, 0, sizeof(*tr));
	tr->s = s;
	tr->nl = nl;
	tr->sz = sz;
	tr->ms = ms;
	for (l = 0; l < nl; l++) {
		tr->t[l] = tt_st_map(sz, -1);
		if (!tr->t[l])
			return st_fail(tr, "mmap", errno);
	}
	return 0;
}

static void st_free(struct st_trainer *tr)
{
	unsigned int l;

	for (l = 0; l < tr->nl; l++)
		if (tr->t[l])
			munmap(tr->t[l], tr->sz);
}

/*
 * One iteration, stopping right after @stop (ST_PH_DONE: the whole one).
 * Each backward pass checks its layer's tensor. 0 or -1 with @tr->err.
 */
static int st_iteration(struct st_trainer *tr, enum st_phase stop)
{
	unsigned int l;
	long long off;
	int ret;

	ret = tt_iter_begin(tr->s);
	if (ret)
		return st_fail(tr, "iteration begin", ret);
	if (stop == ST_PH_ITER_BEGIN)
		return 0;
	for (l = 1; l <= tr->nl; l++) {
		ret = tt_layer_begin(tr->s, l, TT_FWD);
		if (ret)
			return st_fail(tr, "forward begin", ret);
		tt_st_fill(tr->t[l - 1], tr->sz, st_seed(tr, l));
		ret = tt_tensor_saved(tr->s, l, tr->t[l - 1], tr->sz);
		if (ret)
			return st_fail(tr, "tensor saved", ret);
		if (l == tr->nl && stop == ST_PH_MID_FORWARD)
			return 0;
		tt_st_compute(tr->t[l - 1], tr->sz, tr->ms);
		ret = tt_layer_end(tr->s, l, TT_FWD);
		if (ret)
			return st_fail(tr, "forward end", ret);
	}
	if (stop == ST_PH_FORWARD_DONE)
		return 0;
	if (stop == ST_PH_EVICTED) {
		usleep(100000);
		return 0;
	}
	usleep(tr->ms * 1000 * tt_st_time_mul());	/* the loss */
	if (stop == ST_PH_LOSS)
		return 0;
	for (l = tr->nl; l >= 1; l--) {
		ret = tt_layer_begin(tr->s, l, TT_BWD);
		if (ret)
			return st_fail(tr, "backward begin", ret);
		off = tt_st_check(tr->t[l - 1], tr->sz, st_seed(tr, l));
		if (off != -1) {
			snprintf(tr->err, sizeof(tr->err),
				 "iteration %u layer %u: data differ at offset %lld",
				 tr->iter, l, off);
			return -1;
		}
		if (l == tr->nl && stop == ST_PH_MID_BACKWARD)
			return 0;
		tt_st_compute(tr->t[l - 1], tr->sz, tr->ms);
		ret = tt_layer_end(tr->s, l, TT_BWD);
		if (ret)
			return st_fail(tr, "backward end", ret);
	}
	tr->iter++;
	return 0;
}

/* Every tensor still holds the pattern of the last iteration begun. */
static int st_data_ok(struct st_trainer *tr)
{
	unsigned int l;
	long long off;

	for (l = 1; l <= tr->nl; l++) {
		off = tt_st_check(tr->t[l - 1], tr->sz, st_seed(tr, l));
		if (off != -1) {
			snprintf(tr->err, sizeof(tr->err),
				 "after iteration %u, layer %u: data differ at offset %lld",
				 tr->iter, l, off);
			return -1;
		}
	}
	return 0;
}

/* Wait (at most @secs) until every tensor is on @node. */
static int st_all_on(struct st_trainer *tr, int node, unsigned int secs)
{
	uint64_t end = tt_st_now_ns() + secs * 1000000000ULL;
	unsigned int l;
	long long n, want = tr->sz / tt_page_size(), missing;

	tr->missing = 0;
	do {
		missing = 0;
		for (l = 0; l < tr->nl; l++) {
			n = tt_st_pages_on(tr->t[l], tr->sz, node);
			if (n < 0)
				return st_fail(tr, "move_pages(2) query", (int)n);
			missing += want - n;
		}
		if (!missing)
			return 0;
		usleep(5000);
	} while (tt_st_now_ns() < end);
	{
		struct tt_st_place pl;
		char where[128] = "";

		for (l = 0; l < tr->nl; l++)
			if (!tt_st_place(tr->t[l], tr->sz, &pl) &&
			    pl.on_node[node] != pl.pages) {
				tt_st_place_str(&pl, where, sizeof(where));
				break;
			}
		snprintf(tr->err, sizeof(tr->err),
			 "%lld pages still off node %d after %u s (layer %u: %s)",
			 missing, node, secs, l + 1, where);
	}
	tr->missing = (unsigned long long)missing * tt_page_size();
	return -1;
}

/*
 * The counters that tell where a session's pages went (engine, movers,
 * orders back to the engine and completed late, landings undone,
 * prefetch_left_bytes), as text in @buf.
 */
static const char *st_mover_counts(const struct tt_ioc_stats *st, char *buf,
				   size_t len)
{
	snprintf(buf, len,
		 "prefetch_left_bytes %llu; engine %llu bytes, movers %llu, orders %llu, back to the engine %llu, completed late %llu, late landings undone %llu bytes",
		 (unsigned long long)st->prefetch_left_bytes,
		 (unsigned long long)st->engine_bytes,
		 (unsigned long long)st->mover_bytes,
		 (unsigned long long)st->mover_orders,
		 (unsigned long long)st->mover_fallbacks,
		 (unsigned long long)st->mover_late,
		 (unsigned long long)st->landed_bytes);
	return buf;
}

/*
 * Every tensor on @node within @secs, or the bytes still off it are no
 * more than the session's prefetch_left_bytes: no byte a prefetch left on
 * a slow node goes uncounted. 0, or -1 with @tr->err.
 */
static int st_all_on_or_counted(struct st_trainer *tr, int node,
				unsigned int secs)
{
	struct tt_ioc_stats st;
	char where[sizeof(tr->err)], counts[200];
	int ret;

	if (!st_all_on(tr, node, secs))
		return 0;
	snprintf(where, sizeof(where), "%s", tr->err);
	ret = tt_stats(tr->s, &st);
	if (ret)
		return st_fail(tr, "tt_stats", ret);
	fprintf(stderr, "# note: pid %d: %s; %s\n", getpid(), where,
		st_mover_counts(&st, counts, sizeof(counts)));
	if (tr->missing <= st.prefetch_left_bytes)
		return 0;
	snprintf(tr->err, sizeof(tr->err),
		 "%llu bytes off node %d, only %llu counted in prefetch_left_bytes",
		 tr->missing, node, (unsigned long long)st.prefetch_left_bytes);
	return -1;
}

static long long st_refcnt(void)
{
	long long v = -1;

	tt_st_read_ll(TT_ST_SYSMOD "/refcnt", &v);
	return v;
}

/* Wait (at most 10 s) for the module's reference count to reach @want. */
static long long st_refcnt_settle(long long want)
{
	long long v = st_refcnt();
	int i;

	for (i = 0; i < 1000 && v != want; i++) {
		usleep(10000);
		v = st_refcnt();
	}
	return v;
}

/*
 * waitpid() with a deadline: the exit status, or -ETIMEDOUT after
 * @secs (the child is then SIGKILLed and reaped).
 */
static int st_wait(pid_t pid, unsigned int secs)
{
	uint64_t end = tt_st_now_ns() + secs * 1000000000ULL;
	int status;
	pid_t r;

	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0)
			return -errno;
		if (tt_st_now_ns() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -ETIMEDOUT;
		}
		usleep(10000);
	}
}

FIXTURE(stress)
{
	struct tt_st_topo topo;
	long long ref0;
};

FIXTURE_SETUP(stress)
{
	TT_SETUP_NODES(&self->topo, 1);
	/*
	 * No session is open between tests: the references of one that a
	 * killed earlier test (its harness timeout) left closing are let go
	 * first, else they would count as this test's leak.
	 */
	self->ref0 = st_refcnt();
	if (self->ref0 > 0)
		self->ref0 = st_refcnt_settle(0);
}

FIXTURE_TEARDOWN(stress)
{
}

/* ---- sessions_64 -------------------------------------------------------- */

#define ST_PROCS	8
#define ST_THREADS	8

struct st_worker {
	pthread_t th;
	int fast;
	int slow;
	int ok;
	char err[200];
};

static void *st_worker_main(void *arg)
{
	struct st_worker *w = arg;
	struct st_trainer tr;
	struct tt_migrate_result r;
	struct tt_session *s = tt_open();
	size_t ml = 2 * TT_ST_MIB;
	char *m = NULL;
	unsigned int i;
	int ret;

	if (!s) {
		snprintf(w->err, sizeof(w->err), "tt_open: %s", strerror(errno));
		return NULL;
	}
	if (st_init(&tr, s, 3, 512 * 1024, 5))
		goto out;
	m = tt_st_map(ml, -1);
	if (!m) {
		st_fail(&tr, "mmap", errno);
		goto out;
	}
	for (i = 0; i < 4; i++) {
		if (st_iteration(&tr, ST_PH_DONE))
			goto out;
		tt_st_fill(m, ml, i + 1000);
		/*
		 * Under this load pages can stay busy past the call's retry
		 * passes: EBUSY with them counted keeps the call's word.
		 */
		ret = tt_migrate_ex(s, m, ml, i % 2 ? w->fast : w->slow, 0, &r);
		if ((ret && (ret != -EBUSY ||
			     !(r.skipped_busy + r.skipped_unsupported))) ||
		    tt_st_check(m, ml, i + 1000) != -1) {
			st_fail(&tr, "migrate and check", ret ? -ret : EIO);
			goto out;
		}
	}
	/*
	 * Under this load a prefetch can leave pages busy after its retries
	 * (issue 15): they may stay on the slow node, counted.
	 */
	if (st_all_on_or_counted(&tr, w->fast, 10))
		goto out;
	tr.iter--;
	if (st_data_ok(&tr) == 0)
		w->ok = 1;
out:
	if (!w->ok)
		snprintf(w->err, sizeof(w->err), "%s", tr.err);
	if (m)
		munmap(m, ml);
	st_free(&tr);
	tt_close(s);
	return NULL;
}

/* A process of sessions_64: exit status 0 when every thread's loop passed. */
static int st_process(int fast, int slow)
{
	struct st_worker w[ST_THREADS];
	int i, bad = 0;

	memset(w, 0, sizeof(w));
	for (i = 0; i < ST_THREADS; i++) {
		w[i].fast = fast;
		w[i].slow = slow;
		if (pthread_create(&w[i].th, NULL, st_worker_main, &w[i]))
			return 10;
	}
	for (i = 0; i < ST_THREADS; i++) {
		pthread_join(w[i].th, NULL);
		if (!w[i].ok) {
			fprintf(stderr, "# pid %d thread %d: %s\n", getpid(), i,
				w[i].err);
			bad++;
		}
	}
	return bad;
}

TEST_F_TIMEOUT(stress, sessions_64, 600)
{
	pid_t pid[ST_PROCS];
	int i, st;

	TT_SKIP_IF_SETUP_SKIPPED();
	for (i = 0; i < ST_PROCS; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (pid[i] == 0)
			_exit(st_process(self->topo.fast, self->topo.slow));
	}
	for (i = 0; i < ST_PROCS; i++) {
		st = st_wait(pid[i], 300 * tt_st_time_mul());
		ASSERT_LE(0, st) TH_LOG("process %d did not end in time", i);
		ASSERT_TRUE(WIFEXITED(st));
		EXPECT_EQ(0, WEXITSTATUS(st))
			TH_LOG("process %d: %d of its %d sessions failed", i,
			       WEXITSTATUS(st), ST_THREADS);
	}
	ASSERT_EQ(self->ref0, st_refcnt_settle(self->ref0));
}

/* ---- rmmod_while_live ----------------------------------------------------- */

static int st_delete_module(unsigned int flags)
{
	return syscall(SYS_delete_module, "tiertrain", flags) ? -errno : 0;
}

/* A child training in a loop until SIGTERM; exit 0 when all data held. */
static volatile sig_atomic_t st_stop;

static void st_on_term(int sig)
{
	(void)sig;
	st_stop = 1;
}

static int st_busy_child(int fast, int slow, int with_mover)
{
	struct st_trainer tr;
	struct tt_session *s = tt_open();
	size_t hl = 8 * TT_ST_MIB;
	char *h;
	unsigned int i = 0;

	signal(SIGTERM, st_on_term);
	if (!s || st_init(&tr, s, 3, TT_ST_MIB, 5))
		return 2;
	if (with_mover && tt_mover_start(s, 1))
		return 3;
	h = tt_st_map(hl, 1);
	if (!h)
		return 4;
	while (!st_stop) {
		if (st_iteration(&tr, ST_PH_DONE)) {
			fprintf(stderr, "# busy child: %s\n", tr.err);
			return 5;
		}
		tt_st_fill(h, hl, i);
		if (tt_migrate(s, h, hl, i % 2 ? fast : slow) ||
		    tt_st_check(h, hl, i) != -1) {
			fprintf(stderr, "# busy child: migrate %u: %s\n", i,
				strerror(errno));
			return 6;
		}
		i++;
	}
	if (with_mover)
		tt_mover_stop(s);
	tt_close(s);
	return i ? 0 : 7;	/* it trained while the module was asked to go */
}

/* A child running tierctl dumps in a loop until SIGTERM. */
static int st_dump_child(void)
{
	static const char *const verbs[] = {
		"sessions", "stats", "status", "config", "tiers",
	};
	unsigned int i = 0;
	int st;
	pid_t p;

	signal(SIGTERM, st_on_term);
	while (!st_stop) {
		p = fork();
		if (p < 0)
			return 2;
		if (p == 0) {
			int fd = open("/dev/null", O_WRONLY);

			dup2(fd, 1);
			execlp("tierctl", "tierctl", "-j", verbs[i % 5],
			       (char *)NULL);
			_exit(127);
		}
		waitpid(p, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "# tierctl -j %s: status %#x\n",
				verbs[i % 5], st);
			return 3;
		}
		i++;
	}
	return i ? 0 : 4;	/* a dump ran while the module was asked to go */
}

TEST_F_TIMEOUT(stress, rmmod_while_live, 600)
{
	const char *ko = getenv("TT_MODULE");
	const char *args = getenv("TT_MODULE_ARGS");
	struct tt_session *s;
	pid_t kids[4];
	int i, ret, st, fd;

	TT_SKIP_IF_SETUP_SKIPPED();
	if (geteuid())
		SKIP(return, "needs root to unload the module");
	if (!ko || !*ko || access(ko, R_OK))
		SKIP(return, "TT_MODULE (the module's path, set by scripts/vmrun) unset or unreadable");
	for (i = 0; i < 4; i++) {
		kids[i] = fork();
		ASSERT_LE(0, kids[i]);
		if (kids[i] == 0)
			_exit(i < 3 ? st_busy_child(self->topo.fast, self->topo.slow, i == 0)
				    : st_dump_child());
	}
	usleep(500000);
	for (i = 0; i < 20; i++) {
		ret = st_delete_module(O_NONBLOCK);
		ASSERT_NE(0, ret) TH_LOG("the module unloaded under live sessions");
		ASSERT_TRUE(ret == -EWOULDBLOCK || ret == -EBUSY)
			TH_LOG("delete_module: %s", strerror(-ret));
		ASSERT_EQ(0, access(TT_ST_DEV, F_OK));
		usleep(50000);
	}
	for (i = 0; i < 4; i++)
		kill(kids[i], SIGTERM);
	for (i = 0; i < 4; i++) {
		st = st_wait(kids[i], 120 * tt_st_time_mul());
		ASSERT_LE(0, st) TH_LOG("child %d did not end in time", i);
		ASSERT_TRUE(WIFEXITED(st));
		EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("child %d failed", i);
	}
	ASSERT_EQ(0, st_refcnt_settle(0));
	/* nothing live: it unloads, and loads again */
	ret = st_delete_module(O_NONBLOCK);
	ASSERT_EQ(0, ret) TH_LOG("delete_module: %s", strerror(-ret));
	ASSERT_NE(0, access(TT_ST_DEV, F_OK));
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ret = syscall(SYS_finit_module, fd, args ? args : "", 0);
	close(fd);
	ASSERT_EQ(0, ret) TH_LOG("finit_module(%s): %s", ko, strerror(errno));
	for (i = 0; i < 100 && access(TT_ST_DEV, F_OK); i++)
		usleep(10000);
	s = tt_open();
	ASSERT_NE(NULL, s);
	ASSERT_STREQ("kernel", tt_backend(s));
	tt_close(s);
}

/* ---- slow_full -------------------------------------------------------------- */

TEST_F_TIMEOUT(stress, slow_full, 600)
{
	struct st_trainer tr;
	struct tt_ioc_stats st;
	struct tt_session *s;
	size_t held = 0;
	unsigned int i;
	char counts[200];
	pid_t hog;

	TT_SKIP_IF_SETUP_SKIPPED();
	/* 8 MiB left: less, and 6.12 OOM-kills the hog while it fills */
	hog = tt_st_hog_node(self->topo.slow, 8 * TT_ST_MIB, &held);
	ASSERT_LT(0, hog) TH_LOG("hog: %s", strerror(-hog));
	TH_LOG("the hog holds %zu MiB of node %d", held >> 20, self->topo.slow);
	TT_OPEN_KERNEL_SESSION(&s);
	ASSERT_EQ(0, st_init(&tr, s, 4, 8 * TT_ST_MIB, 10));
	for (i = 0; i < 5; i++)
		EXPECT_EQ(0, st_iteration(&tr, ST_PH_DONE)) TH_LOG("%s", tr.err);
	ASSERT_EQ(0, tt_stats(s, &st));
	TH_LOG("evicted %llu bytes, prefetched %llu, to slow %llu",
	       (unsigned long long)st.bytes_evicted,
	       (unsigned long long)st.bytes_prefetched,
	       (unsigned long long)st.bytes_to_slow);
	/* the hog leaves 8 MiB: most of the 32 MiB per iteration cannot go */
	EXPECT_GT(5ULL * 4 * 8 * TT_ST_MIB, st.bytes_to_slow);
	kill(hog, SIGKILL);
	waitpid(hog, NULL, 0);
	EXPECT_EQ(0, st_iteration(&tr, ST_PH_DONE)) TH_LOG("%s", tr.err);
	EXPECT_EQ(0, st_all_on(&tr, self->topo.fast, 10)) {
		TH_LOG("%s", tr.err);
		if (!tt_stats(s, &st))
			TH_LOG("%s", st_mover_counts(&st, counts,
						     sizeof(counts)));
	}
	tr.iter--;
	EXPECT_EQ(0, st_data_ok(&tr)) TH_LOG("%s", tr.err);
	st_free(&tr);
	tt_close(s);
	ASSERT_EQ(self->ref0, st_refcnt_settle(self->ref0));
}

/* ---- offline_while_training --------------------------------------------------- */

/*
 * Log why pages of @tr stayed off @node: the session's counters since
 * @st0, then, per layer with pages off it, what a synchronous migration
 * of the layer to @node did with them.
 */
static void st_stuck_report(struct st_trainer *tr, int node,
			    const struct tt_ioc_stats *st0)
{
	struct tt_migrate_result res;
	struct tt_ioc_stats st;
	unsigned int l;
	long long n;
	int ret;

	if (!tt_stats(tr->s, &st))
		fprintf(stderr, "# since: evicted %llu, prefetched %llu, prefetch_left %llu, left returned %llu, dropped %llu layers, late %llu; engine busy %llu, unsupported %llu, no memory %llu\n",
			(unsigned long long)(st.bytes_evicted - st0->bytes_evicted),
			(unsigned long long)(st.bytes_prefetched - st0->bytes_prefetched),
			(unsigned long long)(st.prefetch_left_bytes - st0->prefetch_left_bytes),
			(unsigned long long)(st.left_returned_bytes - st0->left_returned_bytes),
			(unsigned long long)(st.layers_dropped - st0->layers_dropped),
			(unsigned long long)(st.late_count - st0->late_count),
			(unsigned long long)(st.total.skipped_busy - st0->total.skipped_busy),
			(unsigned long long)(st.total.skipped_unsupported - st0->total.skipped_unsupported),
			(unsigned long long)(st.total.skipped_no_memory - st0->total.skipped_no_memory));
	for (l = 0; l < tr->nl; l++) {
		n = tt_st_pages_on(tr->t[l], tr->sz, node);
		if (n == (long long)(tr->sz / tt_page_size()))
			continue;
		memset(&res, 0, sizeof(res));
		ret = tt_migrate_ex(tr->s, tr->t[l], tr->sz, node, 0, &res);
		fprintf(stderr, "# layer %u: %lld pages on node %d; a migration there: %d, moved %llu, on node %llu, not present %llu, busy %llu, unsupported %llu, no memory %llu; now %lld\n",
			l + 1, n, node, ret, (unsigned long long)res.moved,
			(unsigned long long)res.already_on_node,
			(unsigned long long)res.skipped_not_present,
			(unsigned long long)res.skipped_busy,
			(unsigned long long)res.skipped_unsupported,
			(unsigned long long)res.skipped_no_memory,
			tt_st_pages_on(tr->t[l], tr->sz, node));
	}
}

/*
 * Set every memory block of @node to @state; how many changed. A block
 * still not done after 60 s (x the time multiplier) ends the walk and
 * sets *@stalled (when @stalled is not NULL).
 */
static int st_node_blocks(int node, const char *state, int *stalled)
{
	unsigned int secs = 60 * tt_st_time_mul();
	char path[256], cur[32];
	int n = 0, b, ret;

	for (b = 0; b < 4096; b++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/node/node%d/memory%d/state", node, b);
		if (tt_st_read_file(path, cur, sizeof(cur)) < 0)
			continue;
		if (!strncmp(cur, state, strlen(cur)) ||
		    (!strcmp(cur, "online") && !strncmp(state, "online", 6)))
			continue;
		ret = tt_st_block_write(path, state, secs);
		if (ret == -EINTR) {
			if (stalled)
				*stalled = 1;
			break;	/* one stalled block says enough */
		}
		if (!ret)
			n++;
	}
	return n;
}

struct st_offline_run {
	struct st_trainer tr;
	volatile int stop;
	unsigned int iters;
	int failed;
};

/*
 * Wait until the trainer of @r did @n more iterations (or failed): 0, or
 * -1 after 60 s times the time multiplier, with every thread's kernel
 * stack logged.
 */
static int st_offline_wait(struct st_offline_run *r, unsigned int n)
{
	uint64_t end = tt_st_now_ns() +
		       60ULL * tt_st_time_mul() * 1000000000ULL;
	unsigned int before = r->iters;

	while (r->iters < before + n && !r->failed) {
		if (tt_st_now_ns() > end) {
			tt_st_log_stacks("the trainer made no progress in 60 s (x time multiplier)");
			return -1;
		}
		usleep(5000);
	}
	return 0;
}

static void *st_offline_trainer(void *arg)
{
	struct st_offline_run *r = arg;

	while (!r->stop) {
		if (st_iteration(&r->tr, ST_PH_DONE)) {
			r->failed = 1;
			break;
		}
		r->iters++;
	}
	return NULL;
}

TEST_F_TIMEOUT(stress, offline_while_training, 600)
{
	struct st_offline_run *r;
	struct tt_ioc_stats st0;
	struct tt_session *s;
	pthread_t th;
	int k, rounds, off = 0, on, stalled = 0, blocked = 0;

	TT_SKIP_IF_SETUP_SKIPPED();
	if (geteuid())
		SKIP(return, "needs root to offline memory");
	r = calloc(1, sizeof(*r));
	ASSERT_NE(NULL, r);
	TT_OPEN_KERNEL_SESSION(&s);
	ASSERT_EQ(0, st_init(&r->tr, s, 4, 2 * TT_ST_MIB, 10));
	ASSERT_EQ(0, pthread_create(&th, NULL, st_offline_trainer, r));
	/*
	 * Three rounds (two on the debug kernel: tt_st_count()); a round
	 * in which no block went offline and one never
	 * finished going offline ends them: the kernel cannot offline this
	 * node's memory here (the SKIP below), and each more round would
	 * wait the same 60 s for nothing.
	 */
	rounds = tt_st_count(3);
	if (rounds < 2)
		rounds = 2;
	for (k = 0; k < rounds && !r->failed && !stalled && !(blocked && !off); k++) {
		stalled = st_offline_wait(r, 2);
		if (stalled)
			break;	/* nothing to offline under a stuck trainer */
		usleep(20000 * k);	/* somewhere in an iteration */
		off += st_node_blocks(self->topo.slow, "offline", &blocked);
		stalled |= st_offline_wait(r, 2);
		on = st_node_blocks(self->topo.slow, "online", NULL);
		if (!on)
			st_node_blocks(self->topo.slow, "online_movable", NULL);
	}
	/* a trainer stuck in the kernel would hang pthread_join() */
	ASSERT_EQ(0, stalled) TH_LOG("the trainer stalled (stacks above); %u iterations",
				     r->iters);
	r->stop = 1;
	pthread_join(th, NULL);
	st_node_blocks(self->topo.slow, "online", NULL);
	st_node_blocks(self->topo.slow, "online_movable", NULL);
	EXPECT_EQ(0, r->failed) TH_LOG("%s", r->tr.err);
	if (!tt_stats(s, &st0))
		TH_LOG("%u iterations, %d memory blocks offlined in all; prefetches left %llu bytes on the slow node, iteration begins moved back %llu",
		       r->iters, off,
		       (unsigned long long)st0.prefetch_left_bytes,
		       (unsigned long long)st0.left_returned_bytes);
	/* what offlining moved elsewhere is back, or counted */
	if (!r->failed)
		EXPECT_EQ(0, st_all_on_or_counted(&r->tr, self->topo.fast, 10))
			TH_LOG("right after: %s", r->tr.err);
	/*
	 * with all memory back, the next iteration begin moves back what
	 * prefetches left (left_returned_bytes): after two, all is fast
	 */
	ASSERT_EQ(0, tt_stats(s, &st0));
	for (k = 0; k < 2 && !r->failed; k++)
		EXPECT_EQ(0, st_iteration(&r->tr, ST_PH_DONE)) TH_LOG("%s", r->tr.err);
	if (!r->failed) {
		EXPECT_EQ(0, st_all_on(&r->tr, self->topo.fast, 10)) {
			TH_LOG("%s", r->tr.err);
			st_stuck_report(&r->tr, self->topo.fast, &st0);
		}
		r->tr.iter--;
		EXPECT_EQ(0, st_data_ok(&r->tr)) TH_LOG("%s", r->tr.err);
	}
	st_free(&r->tr);
	tt_close(s);
	free(r);
	ASSERT_EQ(self->ref0, st_refcnt_settle(self->ref0));
	if (!off)
		SKIP(return, "no memory block of node %d could go offline",
		     self->topo.slow);
}

/* ---- end_in_every_phase ------------------------------------------------------ */

enum st_end { ST_END_CLOSE, ST_END_EXIT, ST_END_KILL, ST_NR_ENDS };
static const char *const st_end_names[ST_NR_ENDS] = { "close", "exit", "SIGKILL" };

/*
 * The training child: two whole iterations (profiled, then planned), the
 * third up to @ph, then a byte on @wfd; then per @how: close the session,
 * check the data and train one more iteration on a new session; exit with
 * the session open; or wait for the SIGKILL.
 */
static int st_phase_child(enum st_phase ph, enum st_end how, int wfd)
{
	struct st_trainer tr;
	struct tt_session *s = tt_open();
	unsigned int i;
	long long off;

	if (!s || st_init(&tr, s, 3, 2 * TT_ST_MIB, 10))
		return 2;
	for (i = 0; i < 2; i++)
		if (st_iteration(&tr, ST_PH_DONE)) {
			fprintf(stderr, "# child: %s\n", tr.err);
			return 3;
		}
	if (st_iteration(&tr, ph)) {
		fprintf(stderr, "# child: %s\n", tr.err);
		return 4;
	}
	if (write(wfd, "x", 1) != 1)
		return 5;
	switch (how) {
	case ST_END_CLOSE:
		tt_close(s);
		/* the pattern of the last forward pass that ran */
		if (ph == ST_PH_ITER_BEGIN || ph == ST_PH_DONE)
			tr.iter--;
		for (i = 1; i <= tr.nl; i++) {
			off = tt_st_check(tr.t[i - 1], tr.sz, st_seed(&tr, i));
			if (off != -1) {
				fprintf(stderr, "# child: layer %u differs at %lld after close\n",
					i, off);
				return 6;
			}
		}
		tr.iter++;
		s = tt_open();
		if (!s)
			return 7;
		tr.s = s;
		if (st_iteration(&tr, ST_PH_DONE)) {
			fprintf(stderr, "# child after close: %s\n", tr.err);
			return 8;
		}
		tt_close(s);
		return 0;
	case ST_END_EXIT:
		_exit(0);
	default:
		pause();
		return 9;
	}
}

TEST_F_TIMEOUT(stress, end_in_every_phase, 900)
{
	int ph, how, st, p[2];
	unsigned int secs = 60 * tt_st_time_mul();
	uint64_t t0;
	char c;
	pid_t pid;

	TT_SKIP_IF_SETUP_SKIPPED();
	for (ph = 0; ph < ST_NR_PHASES; ph++) {
		for (how = 0; how < ST_NR_ENDS; how++) {
			ASSERT_EQ(0, pipe(p));
			pid = fork();
			ASSERT_LE(0, pid);
			if (pid == 0) {
				close(p[0]);
				_exit(st_phase_child(ph, how, p[1]));
			}
			close(p[1]);
			ASSERT_EQ(1, read(p[0], &c, 1))
				TH_LOG("%s/%s: the child died before its phase",
				       st_phase_names[ph], st_end_names[how]);
			close(p[0]);
			t0 = tt_st_now_ns();
			if (how == ST_END_KILL)
				kill(pid, SIGKILL);
			st = st_wait(pid, secs);
			ASSERT_LE(0, st) TH_LOG("%s/%s: the child did not end within %u s",
					       st_phase_names[ph], st_end_names[how], secs);
			if (how == ST_END_KILL) {
				ASSERT_TRUE(WIFSIGNALED(st));
			} else {
				ASSERT_TRUE(WIFEXITED(st));
				ASSERT_EQ(0, WEXITSTATUS(st))
					TH_LOG("%s/%s: child exit %d", st_phase_names[ph],
					       st_end_names[how], WEXITSTATUS(st));
			}
			ASSERT_EQ(self->ref0, st_refcnt_settle(self->ref0))
				TH_LOG("%s/%s: a session leaked", st_phase_names[ph],
				       st_end_names[how]);
			TH_LOG("%s/%s: ended in %llu ms", st_phase_names[ph],
			       st_end_names[how],
			       (unsigned long long)((tt_st_now_ns() - t0) / 1000000));
		}
	}
}

TEST_HARNESS_MAIN
