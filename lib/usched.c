// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The userspace scheduler of the move_pages backend: the kernel module's
 * scheduler (kmod/sched.c, "Scheduler" in <linux/tiertrain.h>) done in the
 * training process, in the style of the TierTrain paper's daemon.
 *
 * Decisions. The same timeline as the module's: core/timeline.c (profile,
 * plan, prefetch schedule, lead-time feedback, rate averages), which plans
 * with core/policy.c. Both are compiled into the library from the module's
 * directory, so there is one implementation of the policy. This file only
 * executes what the timeline decides and reports back, with the module's
 * state machine and counters, so that tt_stats(), tt_layers(),
 * tt_sched_get() and tt_sched_set() mean the same in both backends.
 *
 * Execution. Each session that orders an eviction starts helper threads
 * (once; all signals blocked in them):
 *   - E evict threads and P prefetch threads (TIERTRAIN_MP_WORKERS=E,P,
 *     1..64 each, default 1,1: the module's evict_workers and
 *     prefetch_workers), each taking layers from its FIFO queue;
 *   - one timer thread, which sleeps until the next prefetch trigger time
 *     of the schedule (an absolute CLOCK_MONOTONIC deadline, through a
 *     condition variable whose clock is CLOCK_MONOTONIC, so that an event
 *     that changes the schedule can wake it) and then queues the
 *     prefetches that are due.
 * Pages move with move_pages(2) (mp.c), in chunks of 512 pages, the
 * module's batch_pages: the eviction of a layer records what each chunk
 * moved, its prefetch moves exactly those chunks back in order, and counts
 * a chunk as back once it is done, so the bytes still out are known per
 * chunk. Move times feed the timeline's rate averages (ER, PR).
 *
 * Episodes. As in the module, each layer has at most one eviction in
 * flight, from its forward end until its evicted bytes are back:
 *
 *   IDLE --forward end--> EVICT_QUEUED --evict thread--> EVICTING
 *     --> EVICTED --trigger time (timer)--> PREFETCH_QUEUED
 *     --prefetch thread--> PREFETCHING --> IDLE
 *
 * A trigger time that comes while the eviction runs sets pf_due and the
 * evict thread queues the prefetch when it ends: a page is never fetched
 * while it is being evicted. Nothing waits on the event path except
 * TT_SCHED_SYNC_LATE's fetch: the state is changed under the session lock
 * and a thread that takes a layer later finds it changed and leaves it.
 *
 * Safety rules, whatever events arrive or go missing (the module's):
 *  - backward begin: an eviction not started is dropped, a running one
 *    stops at its next chunk, and what was evicted is prefetched now (or
 *    fetched by the call itself with TT_SCHED_SYNC_LATE);
 *  - backward end and iteration begin: the same for any layer still out,
 *    then one-shot ranges are forgotten (iteration begin: of every layer);
 *  - an episode still out blocks the layer's next eviction.
 * Unlike the module, closing the session (tt_close()) brings back to the
 * fast node everything still evicted before it frees anything: the
 * threads are stopped (an eviction stops at its next chunk) and the
 * closing thread fetches the rest itself.
 *
 * Errors. Nothing that happens while memory moves fails an event call:
 * pages move_pages(2) could not move are counted in the session totals
 * (tt_stats() total.skipped_*), a saved range that is no longer mapped or
 * not a supported mapping (checked against /proc/self/maps when it is
 * evicted) is counted as skipped and forgotten, and a session whose
 * helper threads cannot be created never evicts anything.
 *
 * Locking: the session's lock protects everything here; it is never held
 * while memory moves, sysfs or /proc is read, or a thread is joined. A
 * thread owns a layer's chunk array while the layer is EVICTING or
 * PREFETCHING and reads it without the lock.
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
#include "core/hint.h"
#include "core/timeline.h"

/* First size of the layer table; it doubles up to TT_US_MAX_LAYERS. */
#define TT_US_LAYERS_FIRST	16
/* Pages per chunk of an eviction: the module's batch_pages default. */
#define TT_US_CHUNK_PAGES	512
/* "No time" in the timeline's schedule. */
#define TT_US_NO_TIME		(~0ULL)

/* The work queues and the helper thread kinds. */
enum tt_us_kind {
	TT_US_EVICT,
	TT_US_PREFETCH,
	TT_US_TIMER,
};

#define TT_US_NQ	2

/* The state of a layer's episode (see the file comment). */
enum tt_us_state {
	TT_US_IDLE,
	TT_US_EVICT_QUEUED,
	TT_US_EVICTING,
	TT_US_EVICTED,
	TT_US_PREFETCH_QUEUED,
	TT_US_PREFETCHING,
};

/* How tt_us_fetch() is called. */
enum tt_us_fetch_mode {
	TT_US_FETCH_WORKER,	/* a prefetch thread: stops when closing */
	TT_US_FETCH_CALLER,	/* TT_SCHED_SYNC_LATE, in the event call */
	TT_US_FETCH_CLOSE,	/* tt_close(): every chunk, past failures */
};

/**
 * struct tt_us_range - one saved tensor, rounded inward to whole pages
 * @start:      first address.
 * @end:        end address (exclusive).
 * @id:         unique in the session, to find the entry again.
 * @persistent: kept across iterations (TT_EV_PERSISTENT).
 */
struct tt_us_range {
	uint64_t start;
	uint64_t end;
	uint64_t id;
	bool persistent;
};

/**
 * struct tt_us_layer - the executor's side of one layer (the timeline's
 * entry points to it); lives until the session closes
 * @id:          layer id.
 * @ranges:      saved tensors, in report order.
 * @nr_ranges:   entries used in @ranges.
 * @cap_ranges:  entries allocated.
 * @nr_oneshot:  entries of @ranges that are one-shot.
 * @state:       enum tt_us_state of the layer's episode.
 * @iter:        iteration (timeline iter_seq) of the episode.
 * @target:      bytes the plan asked to evict.
 * @cpu_nid:     node the caller ran on at the forward end.
 * @fast_nid:    node the prefetch moves the chunks to.
 * @slow_cpu:    the eviction's node has CPUs (for bytes_to_fast/slow).
 * @fast_cpu:    @fast_nid has CPUs.
 * @chunks:      what the eviction selected (@nr_chunks entries).
 * @nr_chunks:   chunks selected, then chunks the eviction went through.
 * @next_chunk:  the first chunk the prefetch has not finished.
 * @evicted:     bytes evicted in this episode.
 * @returned:    bytes of @evicted whose chunk the prefetch finished.
 * @pf_due:      the trigger time came while the eviction ran.
 * @sync:        PREFETCHING is done by an event call (TT_SCHED_SYNC_LATE).
 * @abort:       the eviction stops at its next chunk (read without lock).
 * @next:        next layer in each work queue.
 * @queued:      the layer is in that work queue.
 */
struct tt_us_layer {
	uint32_t id;
	struct tt_us_range *ranges;
	unsigned int nr_ranges;
	unsigned int cap_ranges;
	unsigned int nr_oneshot;
	enum tt_us_state state;
	uint64_t iter;
	uint64_t target;
	int cpu_nid;
	int fast_nid;
	bool slow_cpu;
	bool fast_cpu;
	struct tt_chunk *chunks;
	unsigned int nr_chunks;
	unsigned int next_chunk;
	uint64_t evicted;
	uint64_t returned;
	bool pf_due;
	bool sync;
	int abort;
	struct tt_us_layer *next[TT_US_NQ];
	bool queued[TT_US_NQ];
};

/**
 * struct tt_us_thread - one helper thread
 * @s:    the session.
 * @kind: enum tt_us_kind.
 * @th:   the thread.
 */
struct tt_us_thread {
	struct tt_session *s;
	enum tt_us_kind kind;
	pthread_t th;
};

/**
 * struct tt_us - one session's userspace scheduler
 * @ops:        what it does to the world (tt_us_real_ops but in tests).
 * @ctx:        argument of @ops.
 * @tl:         the timeline: profile, plan, feedback, rates.
 * @nr_ranges:  saved ranges held (one-shot and persistent).
 * @range_seq:  id given to the last range.
 * @workers:    evict and prefetch threads to start.
 * @threads:    the helper threads, @nr_threads of them running.
 * @nr_threads: threads started.
 * @started:    thread start was attempted.
 * @usable:     every thread started: evictions may be ordered.
 * @closing:    the session is closing (read without lock by movers).
 * @head:       first layer of each work queue.
 * @tail:       last layer of each work queue.
 * @work_cv:    signalled when its queue gets a layer, or on close.
 * @timer_cv:   wakes the timer thread (schedule changed, close); its clock
 *              is CLOCK_MONOTONIC.
 * @idle_cv:    broadcast when a thread finished a work item or a timer
 *              pass, and when a layer leaves EVICTING or PREFETCHING.
 * @running:    work items being executed.
 * @kick_seq:   schedule changes (tt_us_kick()).
 * @timer_seq:  the @kick_seq the timer thread has seen.
 * @hints:      the ranges hinted TT_HINT_PIN_FAST or TT_HINT_ARCHIVE
 *              (whole pages): evictions skip them.
 * @merge:      TT_SCHED_MERGE: join touching chunks (tt_chunk_merge()).
 */
struct tt_us {
	const struct tt_us_ops *ops;
	void *ctx;
	struct tt_tl tl;
	unsigned long nr_ranges;
	uint64_t range_seq;
	unsigned int workers[TT_US_NQ];
	struct tt_us_thread *threads;
	unsigned int nr_threads;
	bool started;
	bool usable;
	int closing;
	struct tt_us_layer *head[TT_US_NQ];
	struct tt_us_layer *tail[TT_US_NQ];
	pthread_cond_t work_cv[TT_US_NQ];
	pthread_cond_t timer_cv;
	pthread_cond_t idle_cv;
	unsigned int running;
	uint64_t kick_seq;
	uint64_t timer_seq;
	struct tt_hint_set hints;
	bool merge;
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

/* ---- layers, ranges, queues (lock held) --------------------------------- */

static bool tt_us_closing(const struct tt_us *us)
{
	return __atomic_load_n(&us->closing, __ATOMIC_ACQUIRE);
}

/* The layer object and timeline index of layer @id, or NULL. */
static struct tt_us_layer *tt_us_find(struct tt_us *us, uint32_t id, int *idx)
{
	int i = tt_tl_find(&us->tl, id);

	if (idx)
		*idx = i;
	return i < 0 ? NULL : us->tl.st.layers[i].priv;
}

static void tt_us_free_storage(struct tt_tl_storage *st)
{
	free(st->layers);
	free(st->plan);
	free(st->order);
	free(st->due);
}

/* Double the layer table, up to TT_US_MAX_LAYERS. */
static int tt_us_grow(struct tt_us *us)
{
	struct tt_tl_storage old = us->tl.st, st = { 0 };
	unsigned int cap;

	if (us->tl.n >= TT_US_MAX_LAYERS)
		return -ENOSPC;
	cap = old.cap ? old.cap * 2 : TT_US_LAYERS_FIRST;
	if (cap > TT_US_MAX_LAYERS)
		cap = TT_US_MAX_LAYERS;
	st.cap = cap;
	st.layers = calloc(cap, sizeof(*st.layers));
	st.plan = calloc(cap, sizeof(*st.plan));
	st.order = calloc(cap, sizeof(*st.order));
	st.due = calloc(cap, sizeof(*st.due));
	if (!st.layers || !st.plan || !st.order || !st.due) {
		tt_us_free_storage(&st);
		return -ENOMEM;
	}
	tt_tl_set_storage(&us->tl, &st);
	tt_us_free_storage(&old);
	return 0;
}

/* Layer @id, created when new: 0, -ENOSPC or -ENOMEM. */
static int tt_us_layer(struct tt_us *us, uint32_t id, struct tt_us_layer **out,
		       int *idx)
{
	struct tt_us_layer *sl = tt_us_find(us, id, idx);
	int ret;

	if (sl) {
		*out = sl;
		return 0;
	}
	if (us->tl.n >= TT_US_MAX_LAYERS)
		return -ENOSPC;
	if (us->tl.n >= us->tl.st.cap) {
		ret = tt_us_grow(us);
		if (ret < 0)
			return ret;
	}
	sl = calloc(1, sizeof(*sl));
	if (!sl)
		return -ENOMEM;
	sl->id = id;
	sl->state = TT_US_IDLE;
	sl->cpu_nid = -1;
	sl->fast_nid = -1;
	/* The table has room: tt_tl_add() cannot fail. */
	*idx = tt_tl_add(&us->tl, id, sl);
	if (*idx < 0) {
		free(sl);
		return -ENOSPC;
	}
	*out = sl;
	return 0;
}

static void tt_us_push(struct tt_us *us, enum tt_us_kind q,
		       struct tt_us_layer *sl)
{
	if (sl->queued[q])
		return;
	sl->queued[q] = true;
	sl->next[q] = NULL;
	if (us->tail[q])
		us->tail[q]->next[q] = sl;
	else
		us->head[q] = sl;
	us->tail[q] = sl;
	pthread_cond_signal(&us->work_cv[q]);
}

static struct tt_us_layer *tt_us_pop(struct tt_us *us, enum tt_us_kind q)
{
	struct tt_us_layer *sl = us->head[q];

	if (!sl)
		return NULL;
	us->head[q] = sl->next[q];
	if (!us->head[q])
		us->tail[q] = NULL;
	sl->next[q] = NULL;
	sl->queued[q] = false;
	return sl;
}

static void tt_us_queue_prefetch(struct tt_us *us, struct tt_us_layer *sl)
{
	/* any eviction is over; see tt_us_episode_settle() */
	__atomic_store_n(&sl->abort, 0, __ATOMIC_RELEASE);
	sl->state = TT_US_PREFETCH_QUEUED;
	tt_us_push(us, TT_US_PREFETCH, sl);
}

/* Bytes of the episode still on the slow node. */
static uint64_t tt_us_outstanding(const struct tt_us_layer *sl)
{
	return sl->evicted - (sl->returned < sl->evicted ? sl->returned :
							   sl->evicted);
}

/*
 * Settle the layer's episode (lock held), as kmod/sched.c's
 * tt_sched_settle(). @defer false: make sure nothing of it stays evicted:
 * drop an eviction not started, stop a running one and prefetch after it,
 * queue the prefetch of what is evicted now. @defer true
 * (TT_SCHED_DEFER_LATE at its backward begin): what is still slow stays
 * there while the backward pass reads it: an eviction not started is
 * dropped, a running one stops, a queued prefetch is taken back and a
 * running one stops after its current chunk; the backward end (or
 * tt_us_fetched(), if the stopped prefetch returns after it) brings the
 * rest back.
 */
static void tt_us_episode_settle(struct tt_us *us, struct tt_us_layer *sl, bool defer)
{
	switch (sl->state) {
	case TT_US_EVICT_QUEUED:
		sl->state = TT_US_IDLE;
		break;
	case TT_US_EVICTING:
		__atomic_store_n(&sl->abort, 1, __ATOMIC_RELEASE);
		sl->pf_due = !defer;
		break;
	case TT_US_EVICTED:
		if (!defer && !tt_us_closing(us))
			tt_us_queue_prefetch(us, sl);
		break;
	case TT_US_PREFETCH_QUEUED:
		/* deferred: the queued job finds it EVICTED and leaves it */
		if (defer)
			sl->state = TT_US_EVICTED;
		break;
	case TT_US_PREFETCHING:
		if (defer)
			__atomic_store_n(&sl->abort, 1, __ATOMIC_RELEASE);
		break;
	default:
		break;
	}
}

static void tt_us_rescue(struct tt_us *us, struct tt_us_layer *sl)
{
	tt_us_episode_settle(us, sl, false);
}

/* Forget the one-shot ranges of a layer. */
static void tt_us_forget(struct tt_us *us, struct tt_us_layer *sl)
{
	unsigned int i, j = 0;

	if (!sl->nr_oneshot)
		return;
	for (i = 0; i < sl->nr_ranges; i++)
		if (sl->ranges[i].persistent)
			sl->ranges[j++] = sl->ranges[i];
	us->nr_ranges -= sl->nr_ranges - j;
	sl->nr_ranges = j;
	sl->nr_oneshot = 0;
}

/* Forget range @id of a layer, which failed its check. */
static void tt_us_forget_range(struct tt_us *us, struct tt_us_layer *sl,
			       uint64_t id)
{
	unsigned int i;
	int idx;

	for (i = 0; i < sl->nr_ranges; i++) {
		struct tt_us_range *r = &sl->ranges[i];

		if (r->id != id)
			continue;
		if (r->persistent) {
			idx = tt_tl_find(&us->tl, sl->id);
			if (idx >= 0)
				tt_tl_unsaved(&us->tl, idx, r->end - r->start);
		} else {
			sl->nr_oneshot--;
		}
		memmove(r, r + 1, (sl->nr_ranges - i - 1) * sizeof(*r));
		sl->nr_ranges--;
		us->nr_ranges--;
		return;
	}
}

/* End an episode: forget its chunks. */
static void tt_us_episode_end(struct tt_us_layer *sl)
{
	free(sl->chunks);
	sl->chunks = NULL;
	sl->nr_chunks = 0;
	sl->next_chunk = 0;
	sl->evicted = 0;
	sl->returned = 0;
	sl->pf_due = false;
	sl->sync = false;
	sl->state = TT_US_IDLE;
}

/*
 * The bytes one eviction may take, as the module's tt_sched_episode_max():
 * the machine's RAM.
 */
static uint64_t tt_us_episode_max(void)
{
	long pages = sysconf(_SC_PHYS_PAGES);

	return pages > 0 ? (uint64_t)pages * tt_page_size() : UINT64_MAX;
}

/*
 * Cut the first @sl->target bytes (page granular, at most
 * tt_us_episode_max()) of the layer's ranges, in report order, into chunks
 * of at most @batch bytes, at most @cap of them; with @c NULL only count
 * them. Returns the chunks, at most @cap.
 */
static unsigned int tt_us_cut(const struct tt_us *us,
			      const struct tt_us_layer *sl, uint64_t batch,
			      struct tt_chunk *c, unsigned int cap)
{
	uint64_t ps = tt_page_size(), most = tt_us_episode_max();
	unsigned long long left = sl->target < most ? sl->target : most;
	struct tt_chunk_cut x = { .c = c, .cap = cap };
	unsigned int i;

	left = (left + ps - 1) & ~(ps - 1);
	/* the first bytes of the ranges, in report order, outside hints */
	for (i = 0; i < sl->nr_ranges && left && x.n < cap; i++) {
		x.range_id = sl->ranges[i].id;
		tt_hint_cut(&us->hints, sl->ranges[i].start, sl->ranges[i].end,
			    &left, batch, tt_chunk_emit, &x);
	}
	return x.n < cap ? (unsigned int)x.n : cap;
}

/* The eviction's chunks: 0, or -ENOMEM. */
static int tt_us_select(const struct tt_us *us, struct tt_us_layer *sl)
{
	uint64_t batch = (uint64_t)TT_US_CHUNK_PAGES * tt_page_size();
	uint64_t max = tt_us_episode_max() / batch + 4ULL * TT_MP_MAX_RANGES + 2;
	unsigned int n = tt_us_cut(us, sl, batch, NULL,
				   max < UINT32_MAX ? (unsigned int)max :
						      UINT32_MAX);

	sl->nr_chunks = 0;
	sl->next_chunk = 0;
	if (!n)
		return 0;
	sl->chunks = calloc(n, sizeof(*sl->chunks));
	if (!sl->chunks)
		return -ENOMEM;
	sl->nr_chunks = tt_us_cut(us, sl, batch, sl->chunks, n);
	if (us->merge)
		sl->nr_chunks = tt_chunk_merge(sl->chunks, sl->nr_chunks, batch);
	return 0;
}

/* Add a scheduler migration to the session totals. */
static void tt_us_account(struct tt_session *s,
			  const struct tt_migrate_result *res, bool to_fast)
{
	uint64_t bytes = res->moved * tt_page_size();

	tt_mp_add_result(&s->stats.total, res);
	if (to_fast)
		s->stats.bytes_to_fast += bytes;
	else
		s->stats.bytes_to_slow += bytes;
}

/* Hand the due prefetches to the prefetch threads; *@next: next trigger. */
static void tt_us_dispatch(struct tt_session *s, uint64_t *next)
{
	struct tt_us *us = s->us;
	unsigned long long when = TT_US_NO_TIME;
	unsigned int id;

	while (tt_tl_next_due(&us->tl, us->ops->now(us->ctx), &id, &when)) {
		int idx;
		struct tt_us_layer *sl = tt_us_find(us, id, &idx);

		/* Only an eviction of this iteration is the plan's. */
		if (!sl || sl->iter != us->tl.iter_seq)
			continue;
		/* Due after its backward began: deferred to its end. */
		if ((s->sched.flags & TT_SCHED_DEFER_LATE) &&
		    (us->tl.st.layers[idx].seen & TT_TL_S_BWD_BEGIN))
			continue;
		if (sl->state == TT_US_EVICTED)
			tt_us_queue_prefetch(us, sl);
		else if (sl->state == TT_US_EVICT_QUEUED ||
			 sl->state == TT_US_EVICTING)
			sl->pf_due = true;
	}
	if (next)
		*next = when;
}

/* The schedule changed: the timer thread looks again. */
static void tt_us_kick_locked(struct tt_us *us)
{
	us->kick_seq++;
	pthread_cond_signal(&us->timer_cv);
}

/* ---- the helper threads ------------------------------------------------- */

/*
 * Check and move one chunk to @slow; a chunk whose range fails the checks
 * is counted as not present / unsupported, and that error returned.
 */
static int tt_us_evict_chunk(struct tt_us *us, const struct tt_chunk *c,
			     int slow, struct tt_migrate_result *res,
			     uint64_t *from, void **cache)
{
	uint64_t pages = (c->end - c->start) / tt_page_size();
	int ret;

	ret = us->ops->check(us->ctx, c->start, c->end, cache);
	if (ret == -EFAULT || ret == -EOPNOTSUPP) {
		res->pages += pages;
		if (ret == -EFAULT)
			res->skipped_not_present += pages;
		else
			res->skipped_unsupported += pages;
		return ret;
	}
	/* A failed move is in @res (skipped_*): counted, not returned. */
	us->ops->move(us->ctx, c->start, c->end, slow, res, from);
	return 0;
}

/* The non-slow node most of the evicted bytes came from, or @fallback. */
static int tt_us_majority_fast(const uint64_t *from,
			       const struct tt_node_topo *t, int fallback)
{
	uint64_t most = 0;
	int nid, best = fallback;

	for (nid = 0; nid < TT_MAX_NODES; nid++) {
		if (from[nid] <= most || tt_node_is_slow(t, nid))
			continue;
		most = from[nid];
		best = nid;
	}
	return best;
}

/* The node to evict to, or -1. */
static int tt_us_slow_node(int cfg, const struct tt_node_topo *t)
{
	if (cfg < 0)
		return t->nearest_slow;
	return tt_nodemask_test(&t->mem, cfg) ? cfg : -1;
}

/* An evict thread's work on layer @sl (lock held; dropped meanwhile). */
static void tt_us_evict_work(struct tt_session *s, struct tt_us_layer *sl)
{
	struct tt_us *us = s->us;
	const struct tt_us_ops *ops = us->ops;
	uint64_t ps = tt_page_size(), *from = NULL, elapsed = 0, iter;
	int idx, slow, fast, cpu_nid, slow_cfg;
	struct tt_node_topo topo;
	unsigned int i, done = 0;
	void *cache = NULL;
	bool have_topo;

	if (sl->state != TT_US_EVICT_QUEUED || tt_us_closing(us))
		return;
	fast = s->sched.fast_node;
	slow_cfg = s->sched.slow_node;
	cpu_nid = sl->cpu_nid;
	pthread_mutex_unlock(&s->lock);
	have_topo = ops->topo(us->ctx, cpu_nid, &topo) == 0;
	pthread_mutex_lock(&s->lock);
	/* The layer may have been rescued meanwhile. */
	if (sl->state != TT_US_EVICT_QUEUED || tt_us_closing(us))
		return;
	slow = have_topo ? tt_us_slow_node(slow_cfg, &topo) : -1;
	if (slow < 0 || tt_us_select(us, sl) < 0 || !sl->nr_chunks) {
		tt_us_episode_end(sl);
		return;
	}
	sl->state = TT_US_EVICTING;
	sl->slow_cpu = tt_nodemask_test(&topo.cpu, slow);
	iter = sl->iter;
	if (iter == us->tl.iter_seq && tt_us_find(us, sl->id, &idx))
		tt_tl_evict_start(&us->tl, idx, ops->now(us->ctx));
	pthread_mutex_unlock(&s->lock);

	if (fast < 0)
		from = calloc(TT_MAX_NODES, sizeof(*from));
	for (i = 0; i < sl->nr_chunks; i++) {
		struct tt_chunk *c = &sl->chunks[i];
		struct tt_migrate_result res = { 0 };
		int ret;

		if (__atomic_load_n(&sl->abort, __ATOMIC_ACQUIRE) ||
		    tt_us_closing(us))
			break;
		ret = tt_us_evict_chunk(us, c, slow, &res, from, &cache);
		c->moved = res.moved * ps;
		elapsed += res.elapsed_ns;

		pthread_mutex_lock(&s->lock);
		tt_us_account(s, &res, sl->slow_cpu);
		if (ret)
			tt_us_forget_range(us, sl, c->range_id);
		sl->evicted += c->moved;
		s->stats.bytes_evicted += c->moved;
		/* moved after the backward pass began: late as well */
		if (iter == us->tl.iter_seq && tt_us_find(us, sl->id, &idx))
			tt_tl_late_add(&us->tl, idx, c->moved);
		pthread_mutex_unlock(&s->lock);
		done = i + 1;
	}
	free(cache);
	if (fast < 0 && from)
		fast = tt_us_majority_fast(from, &topo, cpu_nid);
	if (fast < 0)
		fast = cpu_nid >= 0 ? cpu_nid : ops->cpu_node(us->ctx);
	if (fast < 0)
		fast = 0;
	free(from);

	pthread_mutex_lock(&s->lock);
	sl->nr_chunks = done;
	sl->fast_nid = fast;
	sl->fast_cpu = tt_nodemask_test(&topo.cpu, fast);
	if (iter == us->tl.iter_seq && tt_us_find(us, sl->id, &idx))
		tt_tl_evict_end(&us->tl, idx, ops->now(us->ctx), sl->evicted);
	tt_tl_rate_sample(&us->tl, TT_TL_EVICT, sl->evicted, elapsed);
	if (!sl->evicted)
		tt_us_episode_end(sl);
	else if (sl->pf_due && !tt_us_closing(us))
		tt_us_queue_prefetch(us, sl);
	else
		sl->state = TT_US_EVICTED;
}

/*
 * Move the chunks from @sl->next_chunk on back to @sl->fast_nid; the
 * caller owns the episode (PREFETCHING) and does not hold the lock. A
 * chunk the mover could not finish (no memory on the fast node, an error)
 * stays the next one, except on close, where every chunk is tried once.
 * Returns the bytes moved; *@elapsed gets the movers' time.
 */
static uint64_t tt_us_fetch(struct tt_session *s, struct tt_us_layer *sl,
			    enum tt_us_fetch_mode mode, uint64_t *elapsed)
{
	struct tt_us *us = s->us;
	uint64_t ps = tt_page_size(), moved = 0;
	unsigned int i;

	*elapsed = 0;
	for (i = sl->next_chunk; i < sl->nr_chunks; i++) {
		struct tt_chunk *c = &sl->chunks[i];
		struct tt_migrate_result res = { 0 };
		int ret = 0;

		if (mode == TT_US_FETCH_WORKER && tt_us_closing(us))
			break;
		/* TT_SCHED_DEFER_LATE: the backward pass began */
		if (mode == TT_US_FETCH_WORKER &&
		    __atomic_load_n(&sl->abort, __ATOMIC_ACQUIRE))
			break;
		if (c->moved) {
			ret = us->ops->move(us->ctx, c->start, c->end,
					    sl->fast_nid, &res, NULL);
			if (!ret && res.skipped_no_memory)
				ret = -ENOSPC;
			moved += res.moved * ps;
			*elapsed += res.elapsed_ns;
		}
		pthread_mutex_lock(&s->lock);
		tt_us_account(s, &res, sl->fast_cpu);
		s->stats.bytes_prefetched += res.moved * ps;
		if (!ret || mode == TT_US_FETCH_CLOSE) {
			sl->returned += c->moved;
			sl->next_chunk = i + 1;
		}
		pthread_mutex_unlock(&s->lock);
		if (ret && mode != TT_US_FETCH_CLOSE)
			break;
	}
	return moved;
}

/*
 * A prefetch returned (lock held): rate sample; when every chunk is back,
 * lateness feedback and the end of the episode, else (the mover failed
 * part-way) the rest stays EVICTED for the next rescue or the close.
 */
static void tt_us_fetched(struct tt_us *us, struct tt_us_layer *sl,
			  uint64_t moved, uint64_t elapsed)
{
	int idx;

	tt_tl_rate_sample(&us->tl, TT_TL_PREFETCH, moved, elapsed);
	if (sl->next_chunk < sl->nr_chunks) {
		sl->state = TT_US_EVICTED;
		sl->sync = false;
		/*
		 * Stopped by TT_SCHED_DEFER_LATE: once the layer's backward
		 * pass is over (it may have ended while this chunk moved),
		 * the rest comes back now.
		 */
		if (__atomic_load_n(&sl->abort, __ATOMIC_ACQUIRE) &&
		    !tt_us_closing(us) &&
		    (sl->iter != us->tl.iter_seq ||
		     !tt_us_find(us, sl->id, &idx) ||
		     (us->tl.st.layers[idx].seen & TT_TL_S_BWD_END)))
			tt_us_queue_prefetch(us, sl);
		return;
	}
	if (sl->iter == us->tl.iter_seq && tt_us_find(us, sl->id, &idx))
		tt_tl_prefetch_end(&us->tl, idx, us->ops->now(us->ctx));
	tt_us_episode_end(sl);
}

/* A prefetch thread's work on layer @sl (lock held; dropped meanwhile). */
static void tt_us_prefetch_work(struct tt_session *s, struct tt_us_layer *sl)
{
	struct tt_us *us = s->us;
	uint64_t moved, elapsed;
	int idx;

	if (sl->state != TT_US_PREFETCH_QUEUED || tt_us_closing(us))
		return;
	sl->state = TT_US_PREFETCHING;
	sl->sync = false;
	if (sl->iter == us->tl.iter_seq && tt_us_find(us, sl->id, &idx))
		tt_tl_prefetch_start(&us->tl, idx, us->ops->now(us->ctx));
	pthread_mutex_unlock(&s->lock);

	moved = tt_us_fetch(s, sl, TT_US_FETCH_WORKER, &elapsed);

	pthread_mutex_lock(&s->lock);
	tt_us_fetched(us, sl, moved, elapsed);
}

static void tt_us_worker_loop(struct tt_session *s, enum tt_us_kind q)
{
	struct tt_us *us = s->us;
	struct tt_us_layer *sl;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!tt_us_closing(us) && !us->head[q])
			pthread_cond_wait(&us->work_cv[q], &s->lock);
		if (tt_us_closing(us))
			break;
		sl = tt_us_pop(us, q);
		us->running++;
		if (q == TT_US_EVICT)
			tt_us_evict_work(s, sl);
		else
			tt_us_prefetch_work(s, sl);
		us->running--;
		pthread_cond_broadcast(&us->idle_cv);
	}
	pthread_mutex_unlock(&s->lock);
}

static void tt_us_timer_loop(struct tt_session *s)
{
	struct tt_us *us = s->us;
	struct timespec ts;
	uint64_t next;

	pthread_mutex_lock(&s->lock);
	while (!tt_us_closing(us)) {
		tt_us_dispatch(s, &next);
		us->timer_seq = us->kick_seq;
		pthread_cond_broadcast(&us->idle_cv);
		if (us->ops->manual_clock || next == TT_US_NO_TIME) {
			pthread_cond_wait(&us->timer_cv, &s->lock);
			continue;
		}
		ts.tv_sec = next / 1000000000ULL;
		ts.tv_nsec = next % 1000000000ULL;
		pthread_cond_timedwait(&us->timer_cv, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
}

static void *tt_us_thread_main(void *arg)
{
	struct tt_us_thread *t = arg;

	if (t->kind == TT_US_TIMER)
		tt_us_timer_loop(t->s);
	else
		tt_us_worker_loop(t->s, t->kind);
	return NULL;
}

/*
 * Start the helper threads, once per session (lock held; they wait for it).
 * Return: 0 when evictions may be ordered.
 */
static int tt_us_start(struct tt_session *s)
{
	static const char *const names[] = {
		[TT_US_EVICT] = "tt-evict",
		[TT_US_PREFETCH] = "tt-prefetch",
		[TT_US_TIMER] = "tt-timer",
	};
	struct tt_us *us = s->us;
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

		t->s = s;
		if (i == 0)
			t->kind = TT_US_TIMER;
		else if (i <= us->workers[TT_US_EVICT])
			t->kind = TT_US_EVICT;
		else
			t->kind = TT_US_PREFETCH;
		if (pthread_create(&t->th, NULL, tt_us_thread_main, t))
			break;
		pthread_setname_np(t->th, names[t->kind]);
		us->nr_threads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	us->usable = us->nr_threads == want;
	return us->usable ? 0 : -EAGAIN;
}

/* ---- events (lock held) ------------------------------------------------- */

/* TT_EV_ITER_BEGIN. */
static void tt_us_iter_begin(struct tt_session *s, uint64_t now)
{
	struct tt_us *us = s->us;
	unsigned int i;

	/* Nothing of an earlier iteration stays evicted or saved one-shot. */
	for (i = 0; i < us->tl.n; i++) {
		struct tt_us_layer *sl = us->tl.st.layers[i].priv;

		tt_us_rescue(us, sl);
		tt_us_forget(us, sl);
	}
	tt_tl_iter_begin(&us->tl, now);
	s->stats.iterations++;
	tt_us_dispatch(s, NULL);
	tt_us_kick_locked(us);
}

/* A layer event; *@sync gets the layer when the caller must fetch it. */
/* Queue the eviction of @bytes of layer @sl's ranges (lock held). */
static void tt_us_order_evict(struct tt_session *s, struct tt_us_layer *sl,
			      unsigned long long bytes)
{
	struct tt_us *us = s->us;

	/* Without its threads the session moves nothing. */
	if (tt_us_start(s) < 0)
		return;
	sl->state = TT_US_EVICT_QUEUED;
	sl->iter = us->tl.iter_seq;
	sl->target = bytes;
	sl->cpu_nid = us->ops->cpu_node(us->ctx);
	sl->pf_due = false;
	__atomic_store_n(&sl->abort, 0, __ATOMIC_RELEASE);
	tt_us_push(us, TT_US_EVICT, sl);
}

static int tt_us_layer_event(struct tt_session *s, const struct tt_event *ev,
			     uint64_t now, struct tt_us_layer **sync)
{
	struct tt_us *us = s->us;
	int phase = ev->flags & TT_FWD ? TT_TL_FWD : TT_TL_BWD;
	int end = ev->type == TT_EV_LAYER_END;
	enum tt_tl_action act;
	struct tt_us_layer *sl;
	struct tt_tl_layer *l;
	unsigned long long bytes;
	unsigned int didx;
	bool mine;
	int idx, ret;

	ret = tt_us_layer(us, ev->layer, &sl, &idx);
	if (ret < 0)
		return ret;
	act = tt_tl_layer_event(&us->tl, idx, phase, end, now,
				sl->state == TT_US_IDLE, &bytes);
	/* An episode of this iteration: one the plan made for this pass. */
	mine = sl->state != TT_US_IDLE && sl->iter == us->tl.iter_seq;
	switch (act) {
	case TT_TL_ACT_EVICT:
		tt_us_order_evict(s, sl, bytes);
		break;
	case TT_TL_ACT_FETCH:
		l = &us->tl.st.layers[idx];
		if (mine)
			tt_tl_bwd_check(&us->tl, idx, sl->evicted,
					tt_us_outstanding(sl));
		else if (l->seen & TT_TL_S_EVICT)
			/* This iteration's episode is over: all back in time. */
			tt_tl_bwd_check(&us->tl, idx, l->x.evicted_bytes, 0);
		if ((s->sched.flags & TT_SCHED_SYNC_LATE) &&
		    sl->state != TT_US_IDLE)
			*sync = sl;
		else if (s->sched.flags & TT_SCHED_DEFER_LATE)
			tt_us_episode_settle(us, sl, true);
		else
			tt_us_rescue(us, sl);
		break;
	case TT_TL_ACT_FORGET:
		tt_us_rescue(us, sl);
		tt_us_forget(us, sl);
		break;
	case TT_TL_ACT_NONE:
		break;
	}
	/* TT_SCHED_DYNAMIC's fallback: the evictions k positions late */
	while (phase == TT_TL_FWD && end &&
	       tt_tl_next_evict(&us->tl, &didx, &bytes)) {
		struct tt_us_layer *dl = us->tl.st.layers[didx].priv;

		if (dl && dl->state == TT_US_IDLE)
			tt_us_order_evict(s, dl, bytes);
	}
	return 0;
}

/* TT_EV_TENSOR_SAVED. */
static int tt_us_saved(struct tt_session *s, const struct tt_event *ev)
{
	struct tt_us *us = s->us;
	bool persistent = ev->flags & TT_EV_PERSISTENT;
	uint64_t ps = tt_page_size();
	__u64 start, end;
	struct tt_us_layer *sl;
	struct tt_us_range *r;
	unsigned int i;
	int idx, ret;

	/* Inside the user address space, rounded inward to whole pages. */
	ret = tt_event_range(ev->addr, ev->len, ps, tt_user_addr_limit(),
			     &start, &end);
	if (ret < 0)
		return ret;
	if (start == end) {
		s->stats.tensors_ignored++;
		return 0;
	}
	if (us->nr_ranges >= TT_MP_MAX_RANGES)
		return -ENOSPC;
	/* every byte mapped (EFAULT), as the module checks it */
	ret = us->ops->mapped(us->ctx, start, end);
	if (ret < 0)
		return ret;
	ret = tt_us_layer(us, ev->layer, &sl, &idx);
	if (ret < 0)
		return ret;
	if (persistent) {
		/* Saved again (say every iteration): keep the one entry. */
		for (i = 0; i < sl->nr_ranges; i++) {
			r = &sl->ranges[i];
			if (r->persistent && r->start == start && r->end == end) {
				s->stats.tensors_saved++;
				return 0;
			}
		}
	}
	if (sl->nr_ranges == sl->cap_ranges) {
		unsigned int cap = sl->cap_ranges ? 2 * sl->cap_ranges : 4;

		r = realloc(sl->ranges, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		sl->ranges = r;
		sl->cap_ranges = cap;
	}
	sl->ranges[sl->nr_ranges++] = (struct tt_us_range){
		.start = start,
		.end = end,
		.id = ++us->range_seq,
		.persistent = persistent,
	};
	us->nr_ranges++;
	if (!persistent)
		sl->nr_oneshot++;
	tt_tl_saved(&us->tl, idx, end - start, persistent);
	s->stats.tensors_saved++;
	return 0;
}

/**
 * tt_us_event() - one checked event, at time @now (lock held).
 * @s:    the session.
 * @ev:   the event (passed tt_event_check()).
 * @now:  its time, CLOCK_MONOTONIC ns, not before the previous event's.
 * @sync: out: set to a layer that the caller must hand to
 *        tt_us_sync_fetch() once it dropped the lock (TT_SCHED_SYNC_LATE).
 *
 * Return: 0, -ENOSPC (too many saved ranges or layer ids) or -ENOMEM.
 */
int tt_us_event(struct tt_session *s, const struct tt_event *ev,
		uint64_t now, struct tt_us_layer **sync)
{
	int ret;

	switch (ev->type) {
	case TT_EV_ITER_BEGIN:
		tt_us_iter_begin(s, now);
		return 0;
	case TT_EV_TENSOR_SAVED:
		return tt_us_saved(s, ev);
	default:
		break;
	}
	ret = tt_us_layer_event(s, ev, now, sync);
	/*
	 * TT_SCHED_ANCHOR: the event moved the triggers; TT_SCHED_COUNT, the
	 * dynamic fallback: a backward begin released some. Look again.
	 */
	if (!ret && (s->us->tl.anchor || s->us->tl.count ||
		     s->us->tl.fallback)) {
		tt_us_dispatch(s, NULL);
		tt_us_kick_locked(s->us);
	}
	return ret;
}

/**
 * tt_us_sync_fetch() - TT_SCHED_SYNC_LATE at a backward begin: take the
 * layer's episode over (stopping a running eviction, or waiting for a
 * running prefetch) and move what is still evicted back in the caller.
 * @s:  the session (lock not held).
 * @sl: the layer tt_us_event() returned.
 */
void tt_us_sync_fetch(struct tt_session *s, struct tt_us_layer *sl)
{
	struct tt_us *us = s->us;
	uint64_t before, moved, elapsed;
	int idx;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		switch (sl->state) {
		case TT_US_EVICT_QUEUED:
			sl->state = TT_US_IDLE;
			goto out_unlock;
		case TT_US_IDLE:
			goto out_unlock;
		case TT_US_EVICTING:
			__atomic_store_n(&sl->abort, 1, __ATOMIC_RELEASE);
			pthread_cond_wait(&us->idle_cv, &s->lock);
			continue;
		case TT_US_PREFETCHING:
			if (sl->sync)		/* another thread fetches it */
				goto out_unlock;
			pthread_cond_wait(&us->idle_cv, &s->lock);
			continue;
		case TT_US_PREFETCH_QUEUED:
		case TT_US_EVICTED:
			/* A queued prefetch finds the state changed. */
			break;
		}
		break;
	}
	sl->state = TT_US_PREFETCHING;
	sl->sync = true;
	before = tt_us_outstanding(sl);
	if (sl->iter == us->tl.iter_seq && tt_us_find(us, sl->id, &idx) &&
	    !us->tl.st.layers[idx].x.prefetch_start)
		tt_tl_prefetch_start(&us->tl, idx, us->ops->now(us->ctx));
	pthread_mutex_unlock(&s->lock);

	moved = tt_us_fetch(s, sl, TT_US_FETCH_CALLER, &elapsed);

	pthread_mutex_lock(&s->lock);
	s->stats.sync_fetched_bytes += before - tt_us_outstanding(sl);
	tt_us_fetched(us, sl, moved, elapsed);
	pthread_cond_broadcast(&us->idle_cv);
out_unlock:
	pthread_mutex_unlock(&s->lock);
}

/* ---- settings, stats, layers (lock held) -------------------------------- */

/* tt_us_now() - the scheduler's clock (CLOCK_MONOTONIC ns but in tests). */
uint64_t tt_us_now(struct tt_session *s)
{
	return s->us->ops->now(s->us->ctx);
}

/**
 * tt_us_stats() - fill the scheduler's counters that the timeline keeps.
 * @s:  the session.
 * @st: the stats, with the session's own counters already copied.
 */
void tt_us_stats(struct tt_session *s, struct tt_ioc_stats *st)
{
	const struct tt_tl *tl = &s->us->tl;
	struct tt_tl_miss m;

	st->iterations = tl->counts.iterations;
	st->layers_accepted = tl->counts.layers_accepted;
	st->layers_modified = tl->counts.layers_modified;
	st->layers_dropped = tl->counts.layers_dropped;
	st->layers_unknown = tl->counts.layers_unknown;
	st->ontime_bytes = tl->counts.ontime_bytes;
	st->late_bytes = tl->counts.late_bytes;
	st->late_count = tl->counts.late_count;
	st->reprofiles = tl->counts.reprofiles;
	st->er_bps = tl->er_bps;
	st->pr_bps = tl->pr_bps;
	st->pinned_bytes = tt_hint_bytes(&s->us->hints, TT_HINT_PIN_FAST);
	st->archived_bytes = tt_hint_bytes(&s->us->hints, TT_HINT_ARCHIVE);
	st->count_ahead = tl->count || tl->dynamic ? tt_tl_ahead_max(tl) : 0;
	st->count_released = tl->counts.count_released;
	st->dyn_signatures = tt_tl_signatures(tl);
	st->dyn_predicted = tl->counts.dyn_predicted;
	st->dyn_mispredicted = tl->counts.dyn_mispredicted;
	st->dyn_fallback = tl->counts.dyn_fallback;
	st->dyn_misses = tl->counts.dyn_misses;
	_Static_assert(TT_TL_MISS_NEW == TT_TRACE_F_MISS_NEW &&
		       TT_TL_MISS_PREDICT == TT_TRACE_F_MISS_PREDICT &&
		       TT_TL_MISS_LATE == TT_TRACE_F_MISS_LATE,
		       "TT_TL_MISS_* differ from TT_TRACE_F_MISS_*");
	if (tt_tl_miss_get(tl, 0, &m)) {
		st->last_miss_iter = m.iter;
		st->last_miss_layer = m.layer;
		st->last_miss_kind = m.kind;
	}
}

/* tt_us_sched_get() - the settings, with the timeline's current rates. */
void tt_us_sched_get(struct tt_session *s, struct tt_ioc_sched *cfg)
{
	*cfg = s->sched;
	cfg->er_bps = s->us->tl.er_bps;
	cfg->pr_bps = s->us->tl.pr_bps;
}

/*
 * The plain pieces of [@start, @end) (lock held): outside every saved range
 * the scheduler holds, in address order, into *@out (free()d by the
 * caller). Return: their number or -ENOMEM.
 */
static long tt_us_plain_pieces(struct tt_us *us, uint64_t start,
			       uint64_t end, struct tt_hint_iv **out)
{
	unsigned int i, j, n = 0, k = 0;
	struct tt_hint_iv *iv;

	for (i = 0; i < us->tl.n; i++) {
		const struct tt_us_layer *sl = us->tl.st.layers[i].priv;

		for (j = 0; j < sl->nr_ranges; j++)
			if (sl->ranges[j].end > start &&
			    sl->ranges[j].start < end)
				k++;
	}
	iv = calloc(2 * (size_t)k + 1, sizeof(*iv));
	if (!iv)
		return -ENOMEM;
	for (i = 0; i < us->tl.n; i++) {
		const struct tt_us_layer *sl = us->tl.st.layers[i].priv;

		for (j = 0; j < sl->nr_ranges && n < k; j++) {
			if (sl->ranges[j].end <= start ||
			    sl->ranges[j].start >= end)
				continue;
			iv[n].start = sl->ranges[j].start;
			iv[n].end = sl->ranges[j].end;
			n++;
		}
	}
	n = tt_hint_gaps(iv, n, start, end, iv + k);
	memmove(iv, iv + k, n * sizeof(*iv));
	*out = iv;
	return n;
}

/*
 * Move the @n plain pieces @p to @node (lock not held): only what is mapped
 * with a supported mapping (ops->clip, else each piece whole if
 * ops->check passes), counted in the session's totals (lock taken).
 * Return: 0, or -ENOSPC when @node had no room for some pages.
 */
static int tt_us_plain_move(struct tt_session *s, const struct tt_hint_iv *p,
			    long n, int node)
{
	struct tt_us *us = s->us;
	const struct tt_us_ops *ops = us->ops;
	uint64_t no_memory = 0;
	void *cache = NULL;
	long i;

	for (i = 0; i < n && !tt_us_closing(us); i++) {
		uint64_t a = p[i].start, b = p[i].end, ca, cb;

		while (a < b && !tt_us_closing(us)) {
			struct tt_migrate_result res = { 0 };
			int r = ops->clip ? ops->clip(us->ctx, a, b, &cache,
						      &ca, &cb) : -ENOSYS;

			if (r == 0)
				break;
			if (r < 0) {
				/* the piece whole, if it is all mapped */
				if (ops->check(us->ctx, a, b, &cache))
					break;
				ca = a;
				cb = b;
			}
			ops->move(us->ctx, ca, cb, node, &res, NULL);
			no_memory += res.skipped_no_memory;
			pthread_mutex_lock(&s->lock);
			tt_us_account(s, &res, true);
			pthread_mutex_unlock(&s->lock);
			a = cb;
		}
	}
	free(cache);
	return no_memory ? -ENOSPC : 0;
}

/**
 * tt_us_hint() - TT_IOC_HINT on the checked range [@start, @end) (whole
 * pages), as kmod/sched.c's tt_sched_hint(); lock held (dropped while
 * the range's plain pages move).
 * @s:     the session.
 * @req:   the request (passed tt_hint_check()).
 * @start: its first page.
 * @end:   the end of its last page.
 *
 * WILL_USE and PIN_FAST move the range's plain pages (outside the saved
 * ranges, where mapped) to the session's fast node before returning;
 * there is no budget here, so no pressure sends ARCHIVE's plain pages out.
 *
 * Return: 0, -ENOSPC (more hinted ranges than TT_MP_MAX_RANGES; or, after
 * the hint was recorded, the fast node had no room for some plain pages)
 * or -ENOMEM; nothing changes on an error but the second -ENOSPC.
 */
int tt_us_hint(struct tt_session *s, const struct tt_ioc_hint *req,
	       uint64_t start, uint64_t end)
{
	struct tt_us *us = s->us;
	uint32_t h = req->hint;
	bool back = h & (TT_HINT_WILL_USE | TT_HINT_PIN_FAST);
	struct tt_hint_iv *plain = NULL;
	long nplain = 0;
	unsigned int i, j;
	int fast, ret = 0;

	if (h & (TT_HINT_PIN_FAST | TT_HINT_ARCHIVE | TT_HINT_RETIRE)) {
		if (us->hints.n + 2 > us->hints.cap) {
			unsigned int cap = us->hints.cap ? 2 * us->hints.cap : 16;
			struct tt_hint_iv *iv;

			if (us->hints.n + 2 > TT_MP_MAX_RANGES)
				return -ENOSPC;
			iv = realloc(us->hints.iv, cap * sizeof(*iv));
			if (!iv)
				return -ENOMEM;
			us->hints.iv = iv;
			us->hints.cap = cap;
		}
	}
	if (back) {
		nplain = tt_us_plain_pieces(us, start, end, &plain);
		if (nplain < 0)
			return nplain;
	}
	if (h & (TT_HINT_PIN_FAST | TT_HINT_ARCHIVE | TT_HINT_RETIRE)) {
		if (h & TT_HINT_RETIRE)
			tt_hint_clear(&us->hints, start, end);
		else
			tt_hint_set(&us->hints, start, end,
				    h & (TT_HINT_PIN_FAST | TT_HINT_ARCHIVE));
	}
	for (i = 0; i < us->tl.n; i++) {
		struct tt_us_layer *sl = us->tl.st.layers[i].priv;
		bool hit = false;

		for (j = 0; j < sl->nr_ranges;) {
			const struct tt_us_range *r = &sl->ranges[j];

			if (r->end <= start || r->start >= end) {
				j++;
				continue;
			}
			hit = true;
			if (!(h & TT_HINT_RETIRE)) {
				j++;
				continue;
			}
			/* removes entry j: the next one moves down */
			tt_us_forget_range(us, sl, r->id);
		}
		if (hit)
			tt_us_rescue(us, sl);
	}
	if (back && nplain) {
		fast = s->sched.fast_node >= 0 ? s->sched.fast_node :
		       us->ops->cpu_node(us->ctx);
		if (fast < 0)
			fast = 0;
		pthread_mutex_unlock(&s->lock);
		ret = tt_us_plain_move(s, plain, nplain, fast);
		pthread_mutex_lock(&s->lock);
	}
	free(plain);
	return ret;
}

/*
 * tt_us_sched_apply() - hand the fields @req selects (already merged into
 * s->sched) to the timeline.
 */
void tt_us_sched_apply(struct tt_session *s, const struct tt_ioc_sched *req)
{
	struct tt_tl *tl = &s->us->tl;

	if (req->valid & TT_SCHED_SET_FLAGS) {
		/* the timeline's modes are the flag bits themselves */
		_Static_assert(TT_TL_MODE_OFF == TT_SCHED_OFF &&
			       TT_TL_MODE_ANCHOR == TT_SCHED_ANCHOR &&
			       TT_TL_MODE_ALAP == TT_SCHED_ALAP &&
			       TT_TL_MODE_COUNT == TT_SCHED_COUNT &&
			       TT_TL_MODE_DYNAMIC == TT_SCHED_DYNAMIC,
			       "TT_TL_MODE_* differ from TT_SCHED_*");
		tt_tl_set_modes(tl, req->flags);
		s->us->merge = req->flags & TT_SCHED_MERGE;
	}
	if (req->valid & TT_SCHED_SET_PROFILE)
		tl->profile_iters = req->profile_iters;
	if (req->valid & TT_SCHED_SET_STAY)
		tl->stay_ns = req->stay_ns;
	if (req->valid & TT_SCHED_SET_RATES)
		tt_tl_set_rates(tl, req->er_bps, req->pr_bps);
}

static uint32_t tt_us_status(const struct tt_tl_layer *l)
{
	if (!(l->flags & TT_TL_L_PLANNED))
		return TT_LAYER_PROFILING;
	switch (l->status) {
	case TT_POLICY_ACCEPTED:
		return TT_LAYER_ACCEPTED;
	case TT_POLICY_MODIFIED:
		return TT_LAYER_MODIFIED;
	default:
		return TT_LAYER_DROPPED;
	}
}

/**
 * tt_us_layers() - TT_IOC_LAYERS (lock held).
 * @s: the session.
 * @a: the argument: up to @a->count entries are written to @a->info_ptr,
 *     and @a->count is set to the number of layers known.
 *
 * Return: 0, or -EFAULT when entries are due and @a->info_ptr is NULL.
 */
int tt_us_layers(struct tt_session *s, struct tt_ioc_layers *a)
{
	struct tt_layer_info *info = (void *)(uintptr_t)a->info_ptr;
	const struct tt_tl *tl = &s->us->tl;
	unsigned int i, n = a->count < tl->n ? a->count : tl->n;

	if (n && !info)
		return -EFAULT;
	for (i = 0; i < n; i++) {
		const struct tt_tl_layer *l = &tl->st.layers[i];
		struct tt_layer_info *o = &info[i];

		memset(o, 0, sizeof(*o));
		o->layer = l->id;
		o->status = tt_us_status(l);
		o->saved_bytes = l->prof.saved;
		o->fwd_end_ns = l->prof.fwd_end;
		o->bwd_start_ns = l->prof.bwd_start;
		o->final_bytes = l->final_bytes;
		o->prefetch_ns = l->prefetch_ns;
		o->lead_ns = l->lead_ns;
		o->last_fwd_end_ns = l->x.fwd_end;
		o->last_evict_start_ns = l->x.evict_start;
		o->last_evict_end_ns = l->x.evict_end;
		o->last_prefetch_start_ns = l->x.prefetch_start;
		o->last_prefetch_end_ns = l->x.prefetch_end;
		o->last_bwd_start_ns = l->x.bwd_start;
		o->last_evicted_bytes = l->x.evicted_bytes;
		o->last_late_bytes = l->x.late_bytes;
	}
	a->count = tl->n;
	return 0;
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
 * they start with the first eviction).
 * @s: the session, with its settings at their defaults.
 *
 * Return: 0, -EINVAL when TIERTRAIN_MP_WORKERS is malformed (a message
 * naming the value goes to stderr), -ENOMEM or another pthread error.
 */
int tt_us_open(struct tt_session *s)
{
	const char *env = getenv(TT_US_ENV_WORKERS);
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
	us->ops = &tt_us_real_ops;
	tt_tl_init(&us->tl, tt_page_size(), s->sched.profile_iters,
		   s->sched.stay_ns, s->sched.er_bps, s->sched.pr_bps);
	/* the session's flags (TT_SCHED_DEFAULT_FLAGS), as the module's */
	tt_tl_set_modes(&us->tl, s->sched.flags);
	us->merge = s->sched.flags & TT_SCHED_MERGE;
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
	unsigned int i;
	int q;

	for (i = 0; i < us->tl.n; i++) {
		struct tt_us_layer *sl = us->tl.st.layers[i].priv;

		free(sl->ranges);
		free(sl->chunks);
		free(sl);
	}
	tt_us_free_storage(&us->tl.st);
	free(us->hints.iv);
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
	uint64_t elapsed;
	unsigned int i;
	int q;

	if (!us)
		return;
	if (tt_mp_owner(s) < 0) {
		s->us = NULL;
		tt_us_free(us, false);
		return;
	}
	pthread_mutex_lock(&s->lock);
	__atomic_store_n(&us->closing, 1, __ATOMIC_RELEASE);
	for (i = 0; i < us->tl.n; i++) {
		struct tt_us_layer *sl = us->tl.st.layers[i].priv;

		__atomic_store_n(&sl->abort, 1, __ATOMIC_RELEASE);
	}
	for (q = 0; q < TT_US_NQ; q++)
		pthread_cond_broadcast(&us->work_cv[q]);
	pthread_cond_broadcast(&us->timer_cv);
	pthread_cond_broadcast(&us->idle_cv);
	pthread_mutex_unlock(&s->lock);

	for (i = 0; i < us->nr_threads; i++)
		pthread_join(us->threads[i].th, NULL);

	/* Only this thread is left: nothing stays on the slow tier. */
	for (i = 0; i < us->tl.n; i++) {
		struct tt_us_layer *sl = us->tl.st.layers[i].priv;

		if (sl->next_chunk >= sl->nr_chunks)
			continue;
		sl->state = TT_US_PREFETCHING;
		tt_us_fetch(s, sl, TT_US_FETCH_CLOSE, &elapsed);
	}
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
	while ((us->usable && us->timer_seq != us->kick_seq) ||
	       us->head[TT_US_EVICT] || us->head[TT_US_PREFETCH] ||
	       us->running)
		pthread_cond_wait(&us->idle_cv, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

/* tt_us_threads() - helper threads running (0 before the first eviction). */
unsigned int tt_us_threads(struct tt_session *s)
{
	unsigned int n;

	pthread_mutex_lock(&s->lock);
	n = s->us->nr_threads;
	pthread_mutex_unlock(&s->lock);
	return n;
}
