// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The userspace scheduler of the move_pages backend: the executor
 * (core/exec.c, the episode state machine written once for the kernel
 * module and this backend) driven with pthreads and move_pages(2), in the
 * style of the TierTrain paper's daemon. Documentation/scheduler.md
 * describes the whole; the comments here are about the mechanics.
 *
 * This file keeps: the helper threads and their queues, the timer thread,
 * the executor's lock (the session's s->lock), the moves (move_pages(2)
 * through struct tt_us_ops: mp.c, the maps check of /proc/self/maps) and
 * what the session counts of them (tt_stats() total, bytes_to_fast/slow).
 * The events, the episodes, the chunks, late accounting, the sync fetch,
 * the hints, the fast-tier budget (the session's own, cfg.budget: there is
 * no module-wide one here) and the scheduler's counters are core/exec.c's.
 *
 * Threads. Each session that queues a work item starts helper threads
 * (once; all signals blocked in them):
 *   - E evict threads and P prefetch threads (TIERTRAIN_MP_WORKERS=E,P,
 *     1..64 each, default 1,1: the module's evict_workers and
 *     prefetch_workers), each running the items of its FIFO queue (an
 *     item is one layer's tt_exec_evict_step() or tt_exec_prefetch_step();
 *     like a kernel work item it is never run twice at once, and queued
 *     again while it runs it runs once more after);
 *   - one timer thread, which sleeps until the time ops->timer_arm asked
 *     for (an absolute CLOCK_MONOTONIC deadline, through a condition
 *     variable whose clock is CLOCK_MONOTONIC) and calls tt_exec_timer().
 * A session whose threads cannot be created queues nothing: its evictions
 * stay queued until the layer's next rescue drops them.
 *
 * Close: the executor stops queueing (tt_exec_close()), the threads stop
 * (a running eviction at its next chunk) and are joined; then, unlike the
 * module, the closing thread brings back everything still evicted
 * (tt_exec_fetch_all(), the tt_close() contract) before anything is freed.
 *
 * Locking: s->lock is the executor's lock (ops->lock). It is held while a
 * saved tensor's range is checked against /proc/self/maps (ops->mapped),
 * while an eviction's first step reads the node layout from sysfs
 * (ops->evict_order) and while a thread waits for work; never while
 * memory moves.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "core/exec.h"

/* Pages per chunk of an eviction: the module's batch_pages default. */
#define TT_US_CHUNK_PAGES	512
/* "No time": the timer is not armed. */
#define TT_US_NO_TIME		(~0ULL)

/* The work queues and the helper thread kinds. */
enum tt_us_kind {
	TT_US_EVICT = TT_EXEC_WORK_EVICT,
	TT_US_PREFETCH = TT_EXEC_WORK_PREFETCH,
	TT_US_TIMER,
};

#define TT_US_NQ	2

/**
 * struct tt_us_layer - this side's per-layer object
 * @xl:       the executor's layer (core/exec.h).
 * @next:     next layer in each work queue.
 * @queued:   the layer's item is in that queue.
 * @running:  the layer's item runs.
 * @again:    it was queued again while it ran: it goes back to the queue
 *            when it returns.
 * @cache:    the mappings snapshot of the eviction that started at
 *            @cache_at (ops->check's cache); owned by the step that owns
 *            the episode.
 * @cache_at: the @xl.mig_start @cache belongs to.
 */
struct tt_us_layer {
	struct tt_exec_layer xl;
	struct tt_us_layer *next[TT_US_NQ];
	bool queued[TT_US_NQ];
	bool running[TT_US_NQ];
	bool again[TT_US_NQ];
	void *cache;
	unsigned long long cache_at;
};

/**
 * struct tt_us_thread - one helper thread
 * @us:   the scheduler.
 * @kind: enum tt_us_kind.
 * @th:   the thread.
 */
struct tt_us_thread {
	struct tt_us *us;
	enum tt_us_kind kind;
	pthread_t th;
};

/**
 * struct tt_us - one session's userspace scheduler
 * @x:          the executor.
 * @s:          the session.
 * @ops:        what it does to the world (tt_us_real_ops but in tests).
 * @ctx:        argument of @ops.
 * @workers:    evict and prefetch threads to start.
 * @threads:    the helper threads, @nr_threads of them running.
 * @nr_threads: threads started.
 * @started:    thread start was attempted.
 * @usable:     every thread started: work items may be queued.
 * @stop:       the threads stop (read without the lock by ops->stopped).
 * @head:       first layer of each work queue.
 * @tail:       last layer of each work queue.
 * @work_cv:    signalled when its queue gets a layer, or on close.
 * @timer_cv:   wakes the timer thread (armed, kicked, close); its clock is
 *              CLOCK_MONOTONIC.
 * @idle_cv:    broadcast when an item returns, a timer pass ends, or a
 *              victim round ends.
 * @running:    work items being run.
 * @timer_at:   when tt_exec_timer() is due (TT_US_NO_TIME: not armed).
 * @kick_seq:   timer arms and kicks (tt_us_kick()).
 * @timer_seq:  the @kick_seq the timer thread has looked at.
 * @cpus:       the nodes with CPUs as last read (bytes_to_fast counts
 *              what moved to them).
 */
struct tt_us {
	struct tt_exec x;
	struct tt_session *s;
	const struct tt_us_ops *ops;
	void *ctx;
	unsigned int workers[TT_US_NQ];
	struct tt_us_thread *threads;
	unsigned int nr_threads;
	bool started;
	bool usable;
	int stop;
	struct tt_us_layer *head[TT_US_NQ];
	struct tt_us_layer *tail[TT_US_NQ];
	pthread_cond_t work_cv[TT_US_NQ];
	pthread_cond_t timer_cv;
	pthread_cond_t idle_cv;
	unsigned int running;
	uint64_t timer_at;
	uint64_t kick_seq;
	uint64_t timer_seq;
	struct tt_nodemask cpus;
};

/* ---- the real world ----------------------------------------------------- */

static uint64_t tt_us_real_now(void *ctx)
{
	(void)ctx;
	return tt_now_ns();
}

static int tt_us_real_cpu_node(void *ctx)
{
	unsigned int cpu, node;

	(void)ctx;
	if (getcpu(&cpu, &node) < 0)
		return -1;
	return (int)node;
}

static int tt_us_real_topo(void *ctx, int fast, struct tt_node_topo *t)
{
	(void)ctx;
	return tt_node_topo_read(TT_SYSFS_NODE_DIR, fast, t);
}

/*
 * The mappings are read once per eviction. If /proc/self/maps cannot be
 * read the chunk is moved unchecked: move_pages(2) only ever moves pages
 * of this process, and skips what is not mapped.
 */
static int tt_us_real_check(void *ctx, uint64_t start, uint64_t end,
			    void **cache)
{
	struct tt_maps_snap *snap = *cache;

	(void)ctx;
	if (!snap) {
		if (tt_maps_snap_self(&snap) < 0)
			return 0;
		*cache = snap;
	}
	return tt_maps_snap_check(snap, start, end, true);
}

static int tt_us_real_mapped(void *ctx, uint64_t start, uint64_t end)
{
	(void)ctx;
	return tt_maps_mapped_self(start, end);
}

static int tt_us_real_move(void *ctx, uint64_t start, uint64_t end, int node,
			   struct tt_migrate_result *res, uint64_t *from)
{
	uint64_t pages = (end - start) / tt_page_size();
	int ret;

	(void)ctx;
	ret = tt_mp_move_range(start, end, node, res, from);
	if (ret < 0 && res->pages < pages) {
		res->skipped_unsupported += pages - res->pages;
		res->pages = pages;
	}
	return ret;
}

static int tt_us_real_clip(void *ctx, uint64_t start, uint64_t end,
			   void **cache, uint64_t *a, uint64_t *b)
{
	struct tt_maps_snap *snap = *cache;
	size_t lo;
	int ret;

	(void)ctx;
	if (!snap) {
		ret = tt_maps_snap_self(&snap);
		if (ret < 0)
			return ret;
		*cache = snap;
	}
	lo = tt_maps_snap_find(snap, start);
	for (; lo < snap->n && snap->span[lo].start < end; lo++) {
		if (!snap->span[lo].supported)
			continue;
		*a = snap->span[lo].start > start ? snap->span[lo].start : start;
		*b = snap->span[lo].end < end ? snap->span[lo].end : end;
		return 1;
	}
	return 0;
}

const struct tt_us_ops tt_us_real_ops = {
	.now = tt_us_real_now,
	.cpu_node = tt_us_real_cpu_node,
	.topo = tt_us_real_topo,
	.check = tt_us_real_check,
	.mapped = tt_us_real_mapped,
	.move = tt_us_real_move,
	.clip = tt_us_real_clip,
	.manual_clock = false,
};

/* ---- queues and threads (s->lock held) ---------------------------------- */

static struct tt_us *tt_us_of(struct tt_exec *x)
{
	return (struct tt_us *)((char *)x - offsetof(struct tt_us, x));
}

static struct tt_us_layer *tt_us_layer_of(struct tt_exec_layer *l)
{
	return (struct tt_us_layer *)((char *)l -
				      offsetof(struct tt_us_layer, xl));
}

static bool tt_us_stopping(const struct tt_us *us)
{
	return __atomic_load_n(&us->stop, __ATOMIC_ACQUIRE);
}

static void tt_us_push(struct tt_us *us, int q, struct tt_us_layer *ul)
{
	if (ul->queued[q])
		return;
	if (ul->running[q]) {
		ul->again[q] = true;
		return;
	}
	ul->queued[q] = true;
	ul->next[q] = NULL;
	if (us->tail[q])
		us->tail[q]->next[q] = ul;
	else
		us->head[q] = ul;
	us->tail[q] = ul;
	pthread_cond_signal(&us->work_cv[q]);
}

static struct tt_us_layer *tt_us_pop(struct tt_us *us, int q)
{
	struct tt_us_layer *ul = us->head[q];

	if (!ul)
		return NULL;
	us->head[q] = ul->next[q];
	if (!us->head[q])
		us->tail[q] = NULL;
	ul->next[q] = NULL;
	ul->queued[q] = false;
	return ul;
}

static void tt_us_worker_loop(struct tt_us *us, int q)
{
	pthread_mutex_t *lock = &us->s->lock;
	struct tt_us_layer *ul;

	pthread_mutex_lock(lock);
	for (;;) {
		while (!tt_us_stopping(us) && !us->head[q])
			pthread_cond_wait(&us->work_cv[q], lock);
		if (tt_us_stopping(us))
			break;
		ul = tt_us_pop(us, q);
		ul->running[q] = true;
		us->running++;
		pthread_mutex_unlock(lock);
		if (q == TT_US_EVICT)
			tt_exec_evict_step(&us->x, &ul->xl);
		else
			tt_exec_prefetch_step(&us->x, &ul->xl);
		pthread_mutex_lock(lock);
		ul->running[q] = false;
		if (ul->again[q]) {
			ul->again[q] = false;
			tt_us_push(us, q, ul);
		}
		us->running--;
		pthread_cond_broadcast(&us->idle_cv);
	}
	pthread_mutex_unlock(lock);
}

static void tt_us_timer_loop(struct tt_us *us)
{
	pthread_mutex_t *lock = &us->s->lock;
	struct timespec ts;
	uint64_t seen;

	pthread_mutex_lock(lock);
	while (!tt_us_stopping(us)) {
		seen = us->kick_seq;
		if (us->timer_at != TT_US_NO_TIME &&
		    us->ops->now(us->ctx) >= us->timer_at) {
			us->timer_at = TT_US_NO_TIME;
			pthread_mutex_unlock(lock);
			tt_exec_timer(&us->x);
			pthread_mutex_lock(lock);
			continue;
		}
		us->timer_seq = seen;
		pthread_cond_broadcast(&us->idle_cv);
		if (seen != us->kick_seq)
			continue;
		if (us->ops->manual_clock || us->timer_at == TT_US_NO_TIME) {
			pthread_cond_wait(&us->timer_cv, lock);
			continue;
		}
		ts.tv_sec = us->timer_at / 1000000000ULL;
		ts.tv_nsec = us->timer_at % 1000000000ULL;
		pthread_cond_timedwait(&us->timer_cv, lock, &ts);
	}
	pthread_mutex_unlock(lock);
}

static void *tt_us_thread_main(void *arg)
{
	struct tt_us_thread *t = arg;

	if (t->kind == TT_US_TIMER)
		tt_us_timer_loop(t->us);
	else
		tt_us_worker_loop(t->us, t->kind);
	return NULL;
}

/*
 * Start the helper threads, once per session (lock held; they wait for it).
 * Return: 0 when work items may be queued.
 */
static int tt_us_start(struct tt_us *us)
{
	static const char *const names[] = {
		[TT_US_EVICT] = "tt-evict",
		[TT_US_PREFETCH] = "tt-prefetch",
		[TT_US_TIMER] = "tt-timer",
	};
	unsigned int want, i;
	sigset_t all, old;

	if (us->started)
		return us->usable ? 0 : -EAGAIN;
	us->started = true;
	want = 1 + us->workers[TT_US_EVICT] + us->workers[TT_US_PREFETCH];
	us->threads = calloc(want, sizeof(*us->threads));
	if (!us->threads)
		return -ENOMEM;
	/* The application's signals are not for these threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < want; i++) {
		struct tt_us_thread *t = &us->threads[i];

		t->us = us;
		if (i == 0)
			t->kind = TT_US_TIMER;
		else if (i <= us->workers[TT_US_EVICT])
			t->kind = TT_US_EVICT;
		else
			t->kind = TT_US_PREFETCH;
		if (tt_cpus_thread(us->s, &t->th, tt_us_thread_main, t))
			break;
		pthread_setname_np(t->th, names[t->kind]);
		us->nr_threads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	us->usable = us->nr_threads == want;
	if (!us->usable) {
		/* those started stop; tt_us_close() joins them */
		__atomic_store_n(&us->stop, 1, __ATOMIC_RELEASE);
		for (i = 0; i < TT_US_NQ; i++)
			pthread_cond_broadcast(&us->work_cv[i]);
		pthread_cond_broadcast(&us->timer_cv);
	}
	return us->usable ? 0 : -EAGAIN;
}

/* The timer thread looks again (lock held). */
static void tt_us_kick_locked(struct tt_us *us)
{
	us->kick_seq++;
	pthread_cond_signal(&us->timer_cv);
}

/* ---- the executor's operations (core/exec.h) ---------------------------- */

static unsigned long long tt_us_op_now(struct tt_exec *x)
{
	struct tt_us *us = tt_us_of(x);

	return us->ops->now(us->ctx);
}

static void tt_us_op_lock(struct tt_exec *x)
{
	pthread_mutex_lock(&tt_us_of(x)->s->lock);
}

static void tt_us_op_unlock(struct tt_exec *x)
{
	pthread_mutex_unlock(&tt_us_of(x)->s->lock);
}

static void tt_us_op_queue(struct tt_exec *x, struct tt_exec_layer *l,
			   int what)
{
	struct tt_us *us = tt_us_of(x);

	/* Without its threads the session moves nothing. */
	if (tt_us_start(us) < 0)
		return;
	tt_us_push(us, what, tt_us_layer_of(l));
}

/* Until @l's item @what is neither queued nor running (unlocked). */
static void tt_us_op_wait(struct tt_exec *x, struct tt_exec_layer *l,
			  int what)
{
	struct tt_us *us = tt_us_of(x);
	struct tt_us_layer *ul = tt_us_layer_of(l);

	pthread_mutex_lock(&us->s->lock);
	if (what == TT_EXEC_WORK_VICTIM) {
		while (l->victim)
			pthread_cond_wait(&us->idle_cv, &us->s->lock);
	} else {
		while (us->usable && !tt_us_stopping(us) &&
		       (ul->queued[what] || ul->running[what] ||
			ul->again[what]))
			pthread_cond_wait(&us->idle_cv, &us->s->lock);
	}
	pthread_mutex_unlock(&us->s->lock);
}

static void tt_us_op_victims_done(struct tt_exec *x)
{
	pthread_cond_broadcast(&tt_us_of(x)->idle_cv);
}

static void tt_us_op_timer_arm(struct tt_exec *x, unsigned long long t)
{
	struct tt_us *us = tt_us_of(x);

	us->timer_at = t;
	tt_us_kick_locked(us);
}

static int tt_us_op_stopped(struct tt_exec *x, struct tt_exec_layer *l,
			    unsigned int flags)
{
	if ((flags & (TT_EXEC_MV_REMOTE | TT_EXEC_MV_EVICT)) &&
	    __atomic_load_n(&l->abort, __ATOMIC_RELAXED))
		return 1;
	return tt_us_stopping(tt_us_of(x));
}

/* The process's own memory: always there. */
static int tt_us_op_pin(struct tt_exec *x)
{
	(void)x;
	return 1;
}

static void tt_us_op_unpin(struct tt_exec *x)
{
	(void)x;
}

/* Add a move to the session totals (lock held). */
static void tt_us_account(struct tt_us *us, const struct tt_migrate_result *res,
			  int node)
{
	struct tt_ioc_stats *st = &us->s->stats;
	uint64_t bytes = res->moved * tt_page_size();

	tt_mp_add_result(&st->total, res);
	if (tt_nodemask_test(&us->cpus, node))
		st->bytes_to_fast += bytes;
	else
		st->bytes_to_slow += bytes;
}

/*
 * ops->residency only notes where the bytes go: the move that follows for
 * the same range counts them as it moves (ops->move's @from), which is
 * what move_pages(2) reports anyway. One note per thread.
 */
static __thread struct {
	struct tt_exec *x;
	unsigned long long start;
	unsigned long long end;
	unsigned long long *bytes;
} tt_us_note;

static void tt_us_op_residency(struct tt_exec *x, unsigned long long start,
			       unsigned long long end,
			       unsigned long long *bytes,
			       unsigned long long *scratch)
{
	(void)scratch;
	tt_us_note.x = x;
	tt_us_note.start = start;
	tt_us_note.end = end;
	tt_us_note.bytes = bytes;
}

/*
 * Move one range to @m->nids[0] (move_pages(2) takes one target: a full
 * slow node does not spill to the next). An eviction is checked first
 * against the mappings of its episode's snapshot; a range failing it is
 * counted as not present / unsupported and its error returned, a failed
 * move only counted.
 */
static int tt_us_op_move(struct tt_exec *x, struct tt_exec_layer *l,
			 const struct tt_exec_move *m,
			 struct tt_migrate_result *res)
{
	struct tt_us *us = tt_us_of(x);
	uint64_t pages = (m->end - m->start) / tt_page_size(), *from = NULL;
	struct tt_us_layer *ul = l ? tt_us_layer_of(l) : NULL;
	int ret = 0;

	if (m->flags & TT_EXEC_MV_EVICT) {
		/* the note is for this move only, used or not */
		if (tt_us_note.x == x && tt_us_note.start == m->start &&
		    tt_us_note.end == m->end)
			from = (uint64_t *)tt_us_note.bytes;
		tt_us_note.x = NULL;
	}
	if ((m->flags & TT_EXEC_MV_EVICT) && ul) {
		if (ul->cache_at != l->mig_start) {
			free(ul->cache);
			ul->cache = NULL;
			ul->cache_at = l->mig_start;
		}
		ret = us->ops->check(us->ctx, m->start, m->end, &ul->cache);
	}
	switch (ret) {
	case -EFAULT:		/* refused by the check: counted, not moved */
		res->skipped_not_present += pages;
		res->pages += pages;
		break;
	case -EOPNOTSUPP:
		res->skipped_unsupported += pages;
		res->pages += pages;
		break;
	default:
		ret = us->ops->move(us->ctx, m->start, m->end, m->nids[0], res,
				    from);
		/* an eviction's failed move is in @res (skipped_*) */
		if (m->flags & TT_EXEC_MV_EVICT)
			ret = 0;
	}
	pthread_mutex_lock(&us->s->lock);
	tt_us_account(us, res, m->nids[0]);
	pthread_mutex_unlock(&us->s->lock);
	return ret;
}

/*
 * Move the @n plain pieces @p to @nids[0] (unlocked): only what is mapped
 * with a supported mapping (ops->clip, else each piece whole if ops->check
 * passes), counted in the session's totals and in @res.
 */
static int tt_us_op_move_plain(struct tt_exec *x, const struct tt_hint_iv *p,
			       long n, const int *nids, int nr,
			       unsigned int flags,
			       struct tt_migrate_result *res)
{
	struct tt_us *us = tt_us_of(x);
	const struct tt_us_ops *ops = us->ops;
	struct tt_node_topo t;
	bool topo = nr > 0 && ops->topo(us->ctx, -1, &t) == 0;
	void *cache = NULL;
	long i;

	(void)flags;
	if (topo) {
		pthread_mutex_lock(&us->s->lock);
		us->cpus = t.cpu;
		pthread_mutex_unlock(&us->s->lock);
	}
	for (i = 0; nr > 0 && i < n && !tt_us_stopping(us); i++) {
		uint64_t a = p[i].start, b = p[i].end, ca, cb;

		while (a < b && !tt_us_stopping(us)) {
			struct tt_migrate_result r = { 0 };
			int ret = ops->clip ? ops->clip(us->ctx, a, b, &cache,
							&ca, &cb) : -ENOSYS;

			if (ret == 0)
				break;
			if (ret < 0) {
				/* the piece whole, if it is all mapped */
				if (ops->check(us->ctx, a, b, &cache))
					break;
				ca = a;
				cb = b;
			}
			ops->move(us->ctx, ca, cb, nids[0], &r, NULL);
			pthread_mutex_lock(&us->s->lock);
			tt_us_account(us, &r, nids[0]);
			pthread_mutex_unlock(&us->s->lock);
			res->pages += r.pages;
			res->moved += r.moved;
			res->skipped_no_memory += r.skipped_no_memory;
			a = cb;
		}
	}
	free(cache);
	return 0;
}

static int tt_us_op_node_slow(struct tt_exec *x, int nid)
{
	struct tt_us *us = tt_us_of(x);
	struct tt_node_topo t;

	return us->ops->topo(us->ctx, -1, &t) == 0 && tt_node_is_slow(&t, nid);
}

static int tt_us_op_node_check(struct tt_exec *x, int nid)
{
	struct tt_us *us = tt_us_of(x);
	struct tt_node_topo t;
	int ret = us->ops->topo(us->ctx, -1, &t);

	if (ret < 0)
		return ret;
	return nid >= 0 && tt_nodemask_test(&t.mem, nid) ? 0 : -ENODEV;
}

/* The nearest slow node of @from (lock held): the layout is read here. */
static int tt_us_op_evict_order(struct tt_exec *x, int from, int *nids,
				int max)
{
	struct tt_us *us = tt_us_of(x);
	struct tt_node_topo t;

	if (max < 1 || us->ops->topo(us->ctx, from, &t) < 0)
		return 0;
	us->cpus = t.cpu;
	if (t.nearest_slow < 0)
		return 0;
	nids[0] = t.nearest_slow;
	return 1;
}

static int tt_us_op_cpu_node(struct tt_exec *x)
{
	struct tt_us *us = tt_us_of(x);
	int nid = us->ops->cpu_node(us->ctx);

	return nid >= 0 ? nid : 0;
}

static int tt_us_op_mapped(struct tt_exec *x, unsigned long long start,
			   unsigned long long end)
{
	struct tt_us *us = tt_us_of(x);

	return us->ops->mapped(us->ctx, start, end);
}

static void *tt_us_op_alloc(struct tt_exec *x, unsigned long n,
			    unsigned long size, int zero)
{
	size_t bytes;

	(void)x;
	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	return zero ? calloc(n ? n : 1, size ? size : 1) :
		      malloc(bytes ? bytes : 1);
}

static void tt_us_op_free(struct tt_exec *x, void *p)
{
	(void)x;
	free(p);
}

static struct tt_exec_layer *tt_us_op_layer_new(struct tt_exec *x)
{
	struct tt_us_layer *ul = calloc(1, sizeof(*ul));

	(void)x;
	return ul ? &ul->xl : NULL;
}

static void tt_us_op_layer_free(struct tt_exec *x, struct tt_exec_layer *l)
{
	struct tt_us_layer *ul = tt_us_layer_of(l);

	(void)x;
	free(ul->cache);
	free(ul);
}

static struct tt_exec_range *tt_us_op_range_alloc(struct tt_exec *x)
{
	(void)x;
	return malloc(sizeof(struct tt_exec_range));
}

static void tt_us_op_range_free(struct tt_exec *x, struct tt_exec_range *r)
{
	(void)x;
	free(r);
}

/*
 * The bytes one eviction may take, as the module's: the machine's RAM.
 */
static uint64_t tt_us_episode_max(void)
{
	long pages = sysconf(_SC_PHYS_PAGES);

	return pages > 0 ? (uint64_t)pages * tt_page_size() : UINT64_MAX;
}

/* The module parameters' defaults; no module-wide budget here. */
static unsigned long long tt_us_op_limit(struct tt_exec *x,
					 enum tt_exec_limit what)
{
	(void)x;
	switch (what) {
	case TT_EXEC_LIM_MAX_LAYERS:
		return TT_US_MAX_LAYERS;
	case TT_EXEC_LIM_MAX_RANGES:
		return TT_MP_MAX_RANGES;
	case TT_EXEC_LIM_MIN_MIGRATE:
		return 0;
	case TT_EXEC_LIM_CHUNK_BYTES:
		return (unsigned long long)TT_US_CHUNK_PAGES * tt_page_size();
	case TT_EXEC_LIM_EPISODE_MAX:
		return tt_us_episode_max();
	case TT_EXEC_LIM_BUDGET_GLOBAL:
		return 0;
	}
	return 0;
}

/* No trace buffer in this backend. */
static void tt_us_op_trace_event(struct tt_exec *x, const struct tt_event *ev,
				 unsigned long long now,
				 unsigned long long iter)
{
	(void)x, (void)ev, (void)now, (void)iter;
}

static void tt_us_op_trace_migration(struct tt_exec *x, unsigned int type,
				     unsigned int layer, unsigned long long iter,
				     unsigned long long bytes,
				     unsigned long long start,
				     int node, unsigned int flags)
{
	(void)x, (void)type, (void)layer, (void)iter, (void)bytes;
	(void)start, (void)node, (void)flags;
}

static void tt_us_op_trace_layer(struct tt_exec *x, unsigned int type,
				 unsigned int layer, unsigned long long iter,
				 unsigned long long bytes,
				 unsigned long long ts, unsigned int flags)
{
	(void)x, (void)type, (void)layer, (void)iter, (void)bytes;
	(void)ts, (void)flags;
}

/*
 * The budget is the session's own (cfg.budget): no other session shares
 * it, so there is nothing to publish, kick or mark.
 */
static void tt_us_op_budget_publish(struct tt_exec *x)
{
	(void)x;
}

static unsigned long long tt_us_op_budget_limit(struct tt_exec *x,
						unsigned long long *total,
						unsigned long long *global)
{
	*total = 0;
	*global = 0;
	return x->cfg.budget ? x->cfg.budget : TT_EXEC_BUDGET_NONE;
}

static int tt_us_op_budget_active(struct tt_exec *x)
{
	return x->cfg.budget != 0;
}

static void tt_us_op_budget_kick(struct tt_exec *x)
{
	(void)x;
}

static void tt_us_op_budget_stuck(struct tt_exec *x, int stuck)
{
	(void)x, (void)stuck;
}

static void tt_us_op_resched(struct tt_exec *x)
{
	(void)x;
}

static void tt_us_op_pause(struct tt_exec *x, unsigned int us)
{
	struct timespec ts = {
		.tv_sec = us / 1000000U,
		.tv_nsec = (long)(us % 1000000U) * 1000,
	};

	(void)x;
	nanosleep(&ts, NULL);
}

/* Every operation, each named tt_us_op_<op>. */
#define TT_US_OP(op) .op = tt_us_op_##op
static const struct tt_exec_ops tt_us_exec_ops = {
	TT_US_OP(now), TT_US_OP(lock), TT_US_OP(unlock), TT_US_OP(queue),
	TT_US_OP(wait), TT_US_OP(victims_done), TT_US_OP(timer_arm),
	TT_US_OP(stopped), TT_US_OP(pin), TT_US_OP(unpin), TT_US_OP(move),
	TT_US_OP(move_plain), TT_US_OP(residency), TT_US_OP(node_slow),
	TT_US_OP(node_check), TT_US_OP(evict_order), TT_US_OP(cpu_node),
	TT_US_OP(mapped), TT_US_OP(alloc), TT_US_OP(free), TT_US_OP(layer_new),
	TT_US_OP(layer_free), TT_US_OP(range_alloc), TT_US_OP(range_free),
	TT_US_OP(limit), TT_US_OP(trace_event), TT_US_OP(trace_migration),
	TT_US_OP(trace_layer), TT_US_OP(budget_publish),
	TT_US_OP(budget_limit), TT_US_OP(budget_active), TT_US_OP(budget_kick),
	TT_US_OP(budget_stuck), TT_US_OP(resched), TT_US_OP(pause),
};
#undef TT_US_OP

/* ---- the backend's calls (s->lock not held) ----------------------------- */

/**
 * tt_us_events() - TT_IOC_EVENT and TT_IOC_EVENTS: tt_exec_events().
 * @s:    the session.
 * @ev:   @n events.
 * @n:    their number.
 * @done: out: events accepted before the first error.
 *
 * Return: 0 or the first error (see TT_IOC_EVENT).
 */
int tt_us_events(struct tt_session *s, const struct tt_event *ev,
		 unsigned int n, unsigned int *done)
{
	return tt_exec_events(&s->us->x, ev, n, 0, done);
}

/* The scheduler's counters, by the names struct tt_ioc_stats shares. */
#define TT_US_SCHED_STATS(X)						\
	X(iterations) X(events) X(tensors_saved) X(tensors_ignored)	\
	X(layers_accepted) X(layers_modified) X(layers_dropped)		\
	X(layers_unknown) X(bytes_evicted) X(bytes_prefetched)		\
	X(ontime_bytes) X(late_bytes) X(late_count)			\
	X(sync_fetched_bytes) X(reprofiles) X(er_bps) X(pr_bps)		\
	X(pinned_bytes) X(archived_bytes) X(count_ahead)		\
	X(count_released) X(dyn_signatures) X(dyn_predicted)		\
	X(dyn_mispredicted) X(dyn_fallback) X(dyn_misses)		\
	X(last_miss_iter) X(last_miss_layer) X(last_miss_kind)		\
	X(budget_bytes) X(fast_registered_bytes) X(fast_peak_bytes)	\
	X(victims) X(victim_bytes) X(victim_archived_bytes)		\
	X(victims_skipped_pages) X(budget_waits) X(budget_overruns)	\
	X(heat_wf) X(heat_wr) X(heat_ws) X(heat_wl) X(kmem_bytes)	\
	X(prefetch_left_bytes) X(landed_bytes) X(rate_probes)	\
	X(left_returned_bytes)

/**
 * tt_us_stats() - fill the scheduler's counters (tt_exec_stats()).
 * @s:  the session.
 * @st: the stats, with the session's own counters already copied.
 */
void tt_us_stats(struct tt_session *s, struct tt_ioc_stats *st)
{
	struct tt_sched_stats sc;

	tt_exec_stats(&s->us->x, &sc);
#define TT_US_COPY(f) st->f = sc.f;
	TT_US_SCHED_STATS(TT_US_COPY)
#undef TT_US_COPY
}

/* tt_us_sched_get() - TT_IOC_GET_SCHED: tt_exec_cfg_get(). */
void tt_us_sched_get(struct tt_session *s, struct tt_ioc_sched *cfg)
{
	tt_exec_cfg_get(&s->us->x, cfg);
}

/* tt_us_sched_apply() - TT_IOC_SET_SCHED, @req checked: tt_exec_cfg_set(). */
void tt_us_sched_apply(struct tt_session *s, const struct tt_ioc_sched *req)
{
	tt_exec_cfg_set(&s->us->x, req);
}

/**
 * tt_us_layers() - TT_IOC_LAYERS.
 * @s: the session.
 * @a: the argument: up to @a->count entries are written to @a->info_ptr,
 *     and @a->count is set to the number of layers known.
 *
 * Return: 0, or -EFAULT when entries are due and @a->info_ptr is NULL.
 */
int tt_us_layers(struct tt_session *s, struct tt_ioc_layers *a)
{
	struct tt_layer_info *info = (void *)(uintptr_t)a->info_ptr;
	unsigned int known;

	if (a->count && !info && tt_exec_nr_layers(&s->us->x))
		return -EFAULT;
	tt_exec_layers(&s->us->x, 0, info, info ? a->count : 0, &known);
	a->count = known;
	return 0;
}

/**
 * tt_us_hint() - TT_IOC_HINT on the checked range [@start, @end) (whole
 * pages): tt_exec_hint().
 * @s:     the session.
 * @req:   the request (passed tt_hint_check()).
 * @start: its first page.
 * @end:   the end of its last page.
 *
 * Return: 0, -ENOSPC (more hinted ranges than TT_MP_MAX_RANGES; or, after
 * the hint was recorded, the fast node had no room for some plain pages)
 * or -ENOMEM.
 */
int tt_us_hint(struct tt_session *s, const struct tt_ioc_hint *req,
	       uint64_t start, uint64_t end)
{
	return tt_exec_hint(&s->us->x, start, end, req->hint);
}

/* ---- life time ---------------------------------------------------------- */

/**
 * tt_us_parse_workers() - parse TIERTRAIN_MP_WORKERS.
 * @str:      "E,P": evict and prefetch threads, each 1..TT_US_WORKERS_MAX.
 * @evict:    out: E.
 * @prefetch: out: P.
 *
 * Return: 0, or -EINVAL when @str is not of that form.
 */
int tt_us_parse_workers(const char *str, unsigned int *evict,
			unsigned int *prefetch)
{
	unsigned long v[2];
	const char *p = str;
	char *end;
	int i;

	for (i = 0; i < 2; i++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v[i] = strtoul(p, &end, 10);
		if (errno || v[i] < 1 || v[i] > TT_US_WORKERS_MAX)
			return -EINVAL;
		p = end;
		if (i == 0 && *p++ != ',')
			return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	*evict = v[0];
	*prefetch = v[1];
	return 0;
}

/**
 * tt_us_open() - the scheduler of a new move_pages session (no thread yet:
 * they start with the first work item).
 * @s: the session, with its settings at their defaults.
 *
 * Return: 0, -EINVAL when TIERTRAIN_MP_WORKERS is malformed (a message
 * naming the value goes to stderr), -ENOMEM or another pthread error.
 */
int tt_us_open(struct tt_session *s)
{
	const char *env = getenv(TT_US_ENV_WORKERS);
	uint64_t ps = tt_page_size();
	struct tt_exec_cfg cfg = {
		.flags = s->sched.flags,
		.profile_iters = s->sched.profile_iters,
		.stay_ns = s->sched.stay_ns,
		.slow_node = s->sched.slow_node,
		.fast_node = s->sched.fast_node,
		.budget = (uint64_t)s->sched.budget_mib << 20,
	};
	pthread_condattr_t attr;
	struct tt_us *us;
	int ret, q;

	us = calloc(1, sizeof(*us));
	if (!us)
		return -ENOMEM;
	us->workers[TT_US_EVICT] = 1;
	us->workers[TT_US_PREFETCH] = 1;
	if (env && *env &&
	    tt_us_parse_workers(env, &us->workers[TT_US_EVICT],
				&us->workers[TT_US_PREFETCH]) < 0) {
		fprintf(stderr,
			"libtiertrain: %s=\"%s\" is not E,P (evict and prefetch threads, %u..%u each)\n",
			TT_US_ENV_WORKERS, env, 1U, TT_US_WORKERS_MAX);
		free(us);
		return -EINVAL;
	}
	us->s = s;
	us->ops = &tt_us_real_ops;
	us->timer_at = TT_US_NO_TIME;
	/* the timeline's modes are the flag bits themselves */
	_Static_assert(TT_TL_MODE_OFF == TT_SCHED_OFF &&
		       TT_TL_MODE_ANCHOR == TT_SCHED_ANCHOR &&
		       TT_TL_MODE_ALAP == TT_SCHED_ALAP &&
		       TT_TL_MODE_COUNT == TT_SCHED_COUNT &&
		       TT_TL_MODE_DYNAMIC == TT_SCHED_DYNAMIC,
		       "TT_TL_MODE_* differ from TT_SCHED_*");
	/* chunks never cut a huge page: 512 pages (2 MiB of 4 KiB pages) */
	tt_exec_init(&us->x, &tt_us_exec_ops, &cfg, s->sched.er_bps,
		     s->sched.pr_bps, ps, ps * TT_US_CHUNK_PAGES,
		     tt_user_addr_limit(), TT_MAX_NODES);
	ret = pthread_condattr_init(&attr);
	if (ret) {
		free(us);
		return -ret;
	}
	ret = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!ret)
		ret = pthread_cond_init(&us->timer_cv, &attr);
	pthread_condattr_destroy(&attr);
	if (ret) {
		free(us);
		return -ret;
	}
	for (q = 0; q < TT_US_NQ; q++)
		pthread_cond_init(&us->work_cv[q], NULL);
	pthread_cond_init(&us->idle_cv, NULL);
	s->us = us;
	return 0;
}

static void tt_us_free(struct tt_us *us, bool owner)
{
	int q;

	tt_exec_free(&us->x);
	free(us->threads);
	/* A child's copy may have waiters of the parent's threads: leave it. */
	if (owner) {
		for (q = 0; q < TT_US_NQ; q++)
			pthread_cond_destroy(&us->work_cv[q]);
		pthread_cond_destroy(&us->timer_cv);
		pthread_cond_destroy(&us->idle_cv);
	}
	free(us);
}

/**
 * tt_us_close() - stop the scheduler, bring back what it evicted, free it.
 * @s: the session; no other call on it may run any more.
 *
 * The threads are told to stop (an eviction stops at its next chunk, a
 * prefetch before its next one) and joined; then every chunk still on the
 * slow node is moved back to its fast node by the caller. In a child that
 * inherited the session across fork() there are no threads and the memory
 * is the child's copy: only the library's memory is freed.
 */
void tt_us_close(struct tt_session *s)
{
	struct tt_us *us = s->us;
	unsigned int i;
	int q;

	if (!us)
		return;
	if (tt_mp_owner(s) < 0) {
		s->us = NULL;
		tt_us_free(us, false);
		return;
	}
	tt_exec_close(&us->x);
	pthread_mutex_lock(&s->lock);
	__atomic_store_n(&us->stop, 1, __ATOMIC_RELEASE);
	for (q = 0; q < TT_US_NQ; q++)
		pthread_cond_broadcast(&us->work_cv[q]);
	pthread_cond_broadcast(&us->timer_cv);
	pthread_cond_broadcast(&us->idle_cv);
	pthread_mutex_unlock(&s->lock);

	for (i = 0; i < us->nr_threads; i++)
		pthread_join(us->threads[i].th, NULL);
	/* Victim rounds run in the session's calls: none is left. */
	tt_exec_fetch_all(&us->x);
	s->us = NULL;
	tt_us_free(us, true);
}

/* ---- test hooks --------------------------------------------------------- */

/**
 * tt_us_set_ops() - replace what the scheduler does to the world.
 * @s:   a move_pages session whose threads have not started.
 * @ops: the operations.
 * @ctx: their argument.
 *
 * Return: 0, or -EBUSY once the threads run.
 */
int tt_us_set_ops(struct tt_session *s, const struct tt_us_ops *ops,
		  void *ctx)
{
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	if (s->us->started) {
		ret = -EBUSY;
	} else {
		s->us->ops = ops;
		s->us->ctx = ctx;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/* tt_us_kick() - the (manual) clock moved: the timer thread looks again. */
void tt_us_kick(struct tt_session *s)
{
	pthread_mutex_lock(&s->lock);
	tt_us_kick_locked(s->us);
	pthread_mutex_unlock(&s->lock);
}

/*
 * tt_us_settle() - wait until the threads have nothing left to do now: the
 * timer thread has looked at the latest schedule, the queues are empty and
 * no work item runs.
 */
void tt_us_settle(struct tt_session *s)
{
	struct tt_us *us = s->us;

	pthread_mutex_lock(&s->lock);
	while (us->usable && !tt_us_stopping(us) &&
	       (us->timer_seq != us->kick_seq || us->head[TT_US_EVICT] ||
		us->head[TT_US_PREFETCH] || us->running))
		pthread_cond_wait(&us->idle_cv, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

/* tt_us_threads() - helper threads running (0 before the first item). */
unsigned int tt_us_threads(struct tt_session *s)
{
	unsigned int n;

	pthread_mutex_lock(&s->lock);
	n = s->us->nr_threads;
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* tt_us_last_ts() - the time of the latest event accepted. */
uint64_t tt_us_last_ts(struct tt_session *s)
{
	uint64_t t;

	pthread_mutex_lock(&s->lock);
	t = s->us->x.last_ts;
	pthread_mutex_unlock(&s->lock);
	return t;
}
