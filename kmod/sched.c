// SPDX-License-Identifier: GPL-2.0
/*
 * The scheduler: a session's events drive its timeline (timeline.c, which
 * decides through policy.c); this file executes the decisions with the
 * migration engine and reports back. Documentation/scheduler.md describes
 * the whole; the comments here are about the mechanics.
 *
 * Event path. One ioctl, one copy of the event, one mutex (sched->lock),
 * no page-table walk. A saved tensor's range is checked on arrival (inside
 * the user address space, covered by the caller's mappings: a walk of the
 * vmas with mmap_lock read-held, taken inside sched->lock) and becomes a
 * range entry (recycled from a per-session free list, else from a
 * kmem_cache) appended to its layer's list; whether its mapping is one the
 * engine supports is checked when it is evicted. The only allocations on
 * the path are that entry when the free list is empty, a layer object the
 * first time a layer id is seen and the growth of the layer table.
 *
 * Kernel memory sized by the input (chunk lists, the budget's scratch, the
 * hint set) is bounded (an episode holds at most tt_sched_chunks_max()
 * chunks), allocated with TT_SCHED_GFP (charged to the caller's memory
 * cgroup, no warning when large) and counted in @kmem.
 *
 * Episodes. Each layer has at most one eviction in flight, from its
 * forward end until its evicted bytes are back ("episode"), with two work
 * items embedded in the layer object:
 *
 *   IDLE --forward end--> EVICT_QUEUED --evict work--> EVICTING
 *     --> EVICTED --trigger time (hrtimer)--> PREFETCH_QUEUED
 *     --prefetch work--> PREFETCHING --> IDLE
 *
 * The evict work copies the first final-size bytes of the layer's ranges
 * into a private chunk list (chunks of at most batch_pages pages), checks
 * each range (tt_migrate_check()) and moves the chunks to the slow node,
 * recording what each chunk moved; the prefetch work moves exactly those
 * chunks back, in order, and counts one chunk at a time as back, so the
 * bytes still out are known per batch. A trigger time that comes while the
 * eviction runs sets @pf_due and the evict work queues the prefetch when it
 * ends: a page is never prefetched while it is being evicted.
 *
 * Nothing is cancelled from the event path (that would wait for a running
 * work item that may wait for the mutex): the state is changed under the
 * mutex and a work item that runs later finds it changed and returns. A
 * work item is queued with a session reference, dropped by its function
 * (or by tt_sched_close() when it cancels a pending one); queueing an item
 * that is still pending only drops the new reference.
 *
 * Safety rules, whatever events arrive or go missing:
 *  - backward begin: an eviction not started is dropped, a running one is
 *    stopped at its next chunk, and what was evicted is prefetched now
 *    (or fetched by the call itself with TT_SCHED_SYNC_LATE);
 *  - backward end and iteration begin: the same for any layer still out,
 *    then one-shot ranges are forgotten (iteration begin: of every layer);
 *  - an episode still out blocks the layer's next eviction.
 * Close: the timer and every work item are cancelled or waited for
 * (running migrations stop at their next batch through the session's stop
 * flag); data already on the slow node stays there, intact.
 *
 * Fast-tier budget (see the block "Fast-tier budget" below): the session
 * counts its registered bytes (@bud.held) and what of them its evictions
 * moved out and no prefetch has admitted back (@bud.slow, per chunk in
 * @counted); prefetches admit each chunk before moving it, registrations
 * that take the session over make room in the event call, and victims are
 * appended to their layer's episode, so they come back as its evictions
 * do.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/topology.h>
#include <linux/workqueue.h>

#include "config.h"
#include "event.h"
#include "evlog.h"
#include "migrate.h"
#include "mover.h"
#include "pagescan.h"
#include "sched.h"
#include "session.h"
#include "tiers.h"

/*
 * Allocations whose size the session's input decides: charged to the
 * session's memory cgroup (the caller's in its ioctls; what workers may
 * allocate goes through set_active_memcg() with the session's mm's), no
 * warning when they are large and fail.
 */
#define TT_SCHED_GFP		(GFP_KERNEL_ACCOUNT | __GFP_NOWARN)

/* Heat items the budget's scratch may hold: twice max_ranges' maximum. */
#define TT_SCHED_SCRATCH_MAX	(2UL << 20)

/* First size of the layer table; it doubles up to max_layers. */
#define TT_LAYERS_FIRST		16

/* NULL outside tt_sched_module_init()..tt_sched_module_exit(). */
static struct workqueue_struct *tt_evict_wq;
static struct workqueue_struct *tt_prefetch_wq;
static struct kmem_cache *tt_srange_cache;

/*
 * The evict_workers and prefetch_workers settings' change hook
 * (tt_config_hook()): resize the pools; kernel_param_lock(THIS_MODULE)
 * held, like the pools' creation and destruction.
 */
static void tt_sched_pools_resize(void)
{
	if (tt_evict_wq)
		workqueue_set_max_active(tt_evict_wq,
					 tt_config_get(TT_CFG_EVICT_WORKERS));
	if (tt_prefetch_wq)
		workqueue_set_max_active(tt_prefetch_wq,
					 tt_config_get(TT_CFG_PREFETCH_WORKERS));
}

/**
 * struct tt_srange - one saved tensor, rounded inward to whole pages
 * @link:       on its layer's list (report order) or the free list.
 * @start:      first address.
 * @end:        end address (exclusive).
 * @id:         unique in the session, to find the entry again.
 * @persistent: kept across iterations (TT_EV_PERSISTENT).
 * @taken:      bytes of its pages outside every hint that the layer's
 *              episode holds (cut by the plan or by victims), in address
 *              order; 0 when the layer has no episode.
 * @arch_taken: the same for its pages hinted TT_HINT_ARCHIVE (victims).
 * @saved_ns:   when it was saved (ktime_get_ns()).
 * @uses:       how many times it was saved (a persistent tensor saved
 *              again each iteration): the heat's access count.
 */
struct tt_srange {
	struct list_head link;
	unsigned long start;
	unsigned long end;
	u64 id;
	bool persistent;
	unsigned long taken;
	unsigned long arch_taken;
	u64 saved_ns;
	u32 uses;
};

enum tt_ep_state {
	TT_EP_IDLE,
	TT_EP_EVICT_QUEUED,
	TT_EP_EVICTING,
	TT_EP_EVICTED,
	TT_EP_PREFETCH_QUEUED,
	TT_EP_PREFETCHING,
};

/**
 * struct tt_slayer - the executor's side of one layer (the timeline's
 * entry points to it); lives until the session closes
 * @id:            layer id.
 * @s:             the session.
 * @ranges:        struct tt_srange, in report order.
 * @nr_oneshot:    entries of @ranges that are one-shot.
 * @state:         enum tt_ep_state of the layer's episode.
 * @iter:          iteration (timeline iter_seq) of the episode.
 * @target:        bytes the plan asked to evict.
 * @cpu_nid:       node the caller ran on at the forward end.
 * @fast_nid:      node the prefetch moves the chunks to.
 * @chunks:        what the eviction selected (@nr_chunks entries).
 * @nr_chunks:     chunks selected, then chunks the eviction went through.
 * @next_chunk:    the first chunk the prefetch has not finished.
 * @evicted:       bytes evicted in this episode.
 * @returned:      bytes of @evicted whose chunk the prefetch finished.
 * @pf_due:        the trigger time came while the eviction ran.
 * @sync:          PREFETCHING is done by an ioctl (TT_SCHED_SYNC_LATE).
 * @synced_iter:   last iteration whose late bytes were counted as fetched
 *                 synchronously.
 * @abort:         the eviction stops at its next chunk.
 * @mig_start:     when the running (or last) eviction or prefetch started,
 *                 for its trace event.
 * @below_min:     the plan's eviction of this iteration was under
 *                 min_migrate_kib and dropped (tt_sched_min_size()).
 * @counted:       per chunk, the registered bytes it holds on the slow
 *                 tier as the budget counts them (in @bud.slow) until its
 *                 prefetch admits it.
 * @chunk_cap:     entries @chunks and @counted have room for.
 * @forget_gen:    bumped whenever ranges of the layer are forgotten.
 * @cut_gen:       @forget_gen when the latest chunks were cut.
 * @victim:        EVICTING is a victim eviction made by the thread that
 *                 needed room (not by @evict_work).
 * @bud_wait:      EVICTED, due back, waiting for room in the budget.
 * @bud_waited:    the episode's prefetch waited for room (no lateness
 *                 feedback: the schedule was not late, the budget was full).
 * @in_round:      on a victim round's list (@vlink).
 * @vlink:         the victim round's list.
 * @vfrom:         the first chunk the victim round appended.
 * @vmoved:        bytes the victim round moved.
 * @velapsed:      the engine's time for them.
 * @ev_next:       the first chunk the running eviction has not visited.
 * @ev_cont:       @evict_work is re-queued to continue the EVICTING episode
 *                 with its next slice (tt_sched_evict_work()).
 * @ev_fast:       the fast node the eviction found (-1: by residency).
 * @ev_nr_slow:    entries of @ev_slow.
 * @ev_slow:       the slow nodes the eviction moves to, in order.
 * @ev_elapsed:    the engine's time of the eviction's slices so far.
 * @ev_bytes:      per node, the resident bytes the eviction found, then
 *                 what it moved there (2 * nr_node_ids; NULL when the fast
 *                 node is set or the allocation failed).
 * @pf_cont:       @prefetch_work is re-queued to continue the PREFETCHING
 *                 episode with its next slice.
 * @pf_moved:      bytes the prefetch's slices moved so far.
 * @pf_elapsed:    the engine's time for them.
 * @pf_left:       bytes the prefetch's chunks left on slow nodes after
 *                 their retries (tt_sched_fetch_chunk()), for its trace.
 * @evict_work:    the eviction, on the evict pool.
 * @prefetch_work: the prefetch, on the prefetch pool.
 *
 * Everything but the works is protected by the scheduler's lock; the work
 * function that owns the episode (EVICTING, PREFETCHING) reads @chunks
 * without it.
 */
struct tt_slayer {
	u32 id;
	struct tt_ksession *s;
	struct list_head ranges;
	unsigned int nr_oneshot;
	enum tt_ep_state state;
	u64 iter;
	u64 target;
	int cpu_nid;
	int fast_nid;
	struct tt_chunk *chunks;
	unsigned int nr_chunks;
	unsigned int next_chunk;
	u64 evicted;
	u64 returned;
	bool pf_due;
	bool sync;
	u64 synced_iter;
	atomic_t abort;
	u64 mig_start;
	bool below_min;
	u64 *counted;
	unsigned int chunk_cap;
	u32 forget_gen;
	u32 cut_gen;
	bool victim;
	bool bud_wait;
	bool bud_waited;
	bool in_round;
	struct list_head vlink;
	unsigned int vfrom;
	u64 vmoved;
	u64 velapsed;
	unsigned int ev_next;
	bool ev_cont;
	int ev_fast;
	int ev_nr_slow;
	int ev_slow[TT_MIG_TARGETS];
	u64 ev_elapsed;
	u64 *ev_bytes;
	bool pf_cont;
	u64 pf_moved;
	u64 pf_elapsed;
	u64 pf_left;
	struct work_struct evict_work;
	struct work_struct prefetch_work;
};

static struct tt_sched *tt_sched_of(struct tt_ksession *s)
{
	return &s->sched;
}

/* The layer object and timeline index of layer @id, or NULL (lock held). */
static struct tt_slayer *tt_sched_find(struct tt_sched *sc, u32 id, int *idx)
{
	int i = tt_tl_find(&sc->tl, id);

	if (idx)
		*idx = i;
	return i < 0 ? NULL : sc->tl.st.layers[i].priv;
}

static void tt_sched_free_storage(struct tt_tl_storage *st)
{
	kvfree(st->layers);
	kvfree(st->plan);
	kvfree(st->order);
	kvfree(st->due);
}

/*
 * Double the layer table, up to max_layers (lock held); what the timeline
 * keeps in it (layers, schedule, forward order) moves along.
 */
static int tt_sched_grow(struct tt_sched *sc)
{
	struct tt_tl_storage old = sc->tl.st, st = {};
	unsigned int max = tt_config_get(TT_CFG_MAX_LAYERS), cap;

	if (sc->tl.n >= max)
		return -ENOSPC;
	cap = old.cap ? min(old.cap * 2, max) : min(TT_LAYERS_FIRST, max);
	cap = max(cap, sc->tl.n + 1);
	st.cap = cap;
	st.layers = kvmalloc_array(cap, sizeof(*st.layers),
				   GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	st.plan = kvmalloc_array(cap, sizeof(*st.plan),
				 GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	st.order = kvmalloc_array(cap, sizeof(*st.order),
				  GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	st.due = kvmalloc_array(cap, sizeof(*st.due),
				GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!st.layers || !st.plan || !st.order || !st.due) {
		tt_sched_free_storage(&st);
		return -ENOMEM;
	}
	tt_tl_set_storage(&sc->tl, &st);
	tt_sched_free_storage(&old);
	return 0;
}

static void tt_sched_evict_work(struct work_struct *work);
static void tt_sched_prefetch_work(struct work_struct *work);

/* Layer @id, created when new (lock held): the object or an ERR_PTR. */
static struct tt_slayer *tt_sched_layer(struct tt_ksession *s, u32 id,
					int *idx)
{
	struct tt_sched *sc = tt_sched_of(s);
	struct tt_slayer *sl = tt_sched_find(sc, id, idx);
	int ret;

	if (sl)
		return sl;
	if (sc->tl.n >= tt_config_get(TT_CFG_MAX_LAYERS))
		return ERR_PTR(-ENOSPC);
	if (sc->tl.n >= sc->tl.st.cap) {
		ret = tt_sched_grow(sc);
		if (ret)
			return ERR_PTR(ret);
	}
	sl = kzalloc(sizeof(*sl), GFP_KERNEL_ACCOUNT);
	if (!sl)
		return ERR_PTR(-ENOMEM);
	sl->id = id;
	sl->s = s;
	INIT_LIST_HEAD(&sl->ranges);
	INIT_LIST_HEAD(&sl->vlink);
	sl->state = TT_EP_IDLE;
	sl->cpu_nid = NUMA_NO_NODE;
	atomic_set(&sl->abort, 0);
	INIT_WORK(&sl->evict_work, tt_sched_evict_work);
	INIT_WORK(&sl->prefetch_work, tt_sched_prefetch_work);
	*idx = tt_tl_add(&sc->tl, id, sl);
	/* The table had room: tt_tl_add() cannot fail here. */
	if (WARN_ON_ONCE(*idx < 0)) {
		kfree(sl);
		return ERR_PTR(-ENOSPC);
	}
	return sl;
}

/*
 * One slice of a work item: the chunks an eviction or a prefetch work
 * invocation moves at most, by their span (at least one chunk, so at most
 * this plus one chunk of batch_pages). A work item with more to move
 * re-queues itself at the tail of its pool and returns, so every work item
 * queued meanwhile (other sessions' and layers') runs in between: a work
 * item waits for at most one slice of each item queued before it.
 */
#define TT_SCHED_SLICE_BYTES	(16ULL << 20)

/*
 * Queue @work with a session reference (lock held). Also the re-queue of
 * a running work item for its next slice: only while the session is not
 * closing (tested under the same lock hold), so tt_sched_close() finds it
 * pending and cancels it, or running and waits for it.
 */
static void tt_sched_queue(struct tt_ksession *s, struct workqueue_struct *wq,
			   struct work_struct *work)
{
	tt_session_get(s);
	if (!queue_work(wq, work))
		tt_session_put(s);	/* still pending: it holds one already */
}

/*
 * Order within a session: a layer's eviction (prefetch) not started yet
 * waits (re-queues itself) while another layer of the session has its next
 * slice queued (@ev_turn, @pf_turn), so the session's layers still finish
 * in the order they were queued; true when @sl must wait (lock held; @sl
 * NULL: whether any layer has the turn).
 */
static bool tt_sched_evict_wait_turn(const struct tt_sched *sc,
				     const struct tt_slayer *sl)
{
	const struct tt_slayer *t = sc->ev_turn;

	return t && t != sl && t->state == TT_EP_EVICTING && t->ev_cont &&
	       !t->victim;
}

static bool tt_sched_prefetch_wait_turn(const struct tt_sched *sc,
					const struct tt_slayer *sl)
{
	const struct tt_slayer *t = sc->pf_turn;

	return t && t != sl && t->state == TT_EP_PREFETCHING && t->pf_cont &&
	       !t->sync;
}

static void tt_sched_queue_prefetch(struct tt_ksession *s, struct tt_slayer *sl)
{
	atomic_set(&sl->abort, 0);	/* any eviction is over; see tt_sched_settle() */
	sl->state = TT_EP_PREFETCH_QUEUED;
	tt_sched_queue(s, tt_prefetch_wq, &sl->prefetch_work);
}

/* Bytes of the episode still on the slow node (lock held). */
static u64 tt_sched_outstanding(const struct tt_slayer *sl)
{
	return sl->evicted - min(sl->returned, sl->evicted);
}

/*
 * Settle the layer's episode (lock held). @defer false: make sure nothing
 * of it stays evicted: drop an eviction not started, stop a running one
 * and prefetch after it, queue the prefetch of what is evicted now.
 * @defer true (TT_SCHED_DEFER_LATE at its backward begin): what is still
 * on the slow node stays there while the backward pass reads it, instead
 * of being moved under the reader's feet (each page it touches would wait
 * for its batch): an eviction not started is dropped, a running one stops,
 * a queued prefetch is taken back and a running one stops after its
 * current chunk; the backward end (or, if the stopped prefetch returns
 * after it, tt_sched_fetched()) brings the rest back.
 */
static void tt_sched_settle(struct tt_ksession *s, struct tt_slayer *sl,
			    bool defer)
{
	switch (sl->state) {
	case TT_EP_EVICT_QUEUED:
		sl->state = TT_EP_IDLE;
		break;
	case TT_EP_EVICTING:
		atomic_set(&sl->abort, 1);
		sl->pf_due = !defer;
		break;
	case TT_EP_EVICTED:
		if (!defer && !tt_sched_of(s)->closing)
			tt_sched_queue_prefetch(s, sl);
		break;
	case TT_EP_PREFETCH_QUEUED:
		/* deferred: the pending work finds it EVICTED and leaves it */
		if (defer)
			sl->state = TT_EP_EVICTED;
		break;
	case TT_EP_PREFETCHING:
		if (defer)
			atomic_set(&sl->abort, 1);
		break;
	default:
		break;
	}
}

static void tt_sched_rescue(struct tt_ksession *s, struct tt_slayer *sl)
{
	tt_sched_settle(s, sl, false);
}

static void tt_sched_range_free(struct tt_sched *sc, struct tt_srange *r)
{
	sc->bud.held -= min_t(u64, r->end - r->start, sc->bud.held);
	tt_budget_publish(container_of(sc, struct tt_ksession, sched));
	list_move(&r->link, &sc->free);
	sc->nr_ranges--;
}

/* Bytes [@a, @b) and [@c, @d) have in common. */
static u64 tt_overlap(u64 a, u64 b, u64 c, u64 d)
{
	u64 lo = max(a, c), hi = min(b, d);

	return hi > lo ? hi - lo : 0;
}

/*
 * Ranges of @sl are about to be forgotten: @r, or with @r NULL every
 * one-shot range. What its chunks count on the slow tier for them no
 * longer counts: they are no longer registered (lock held).
 */
static void tt_sched_detach(struct tt_sched *sc, struct tt_slayer *sl,
			    const struct tt_srange *r)
{
	const struct tt_srange *o;
	bool all = !r;
	unsigned int i;
	u64 ov, d;

	sl->forget_gen++;
	sc->bud.released = true;
	if (!sl->counted)
		return;
	if (!r)
		list_for_each_entry(o, &sl->ranges, link)
			all &= !o->persistent;
	for (i = 0; i < sl->nr_chunks; i++) {
		const struct tt_chunk *c = &sl->chunks[i];

		if (!sl->counted[i])
			continue;
		if (all) {
			ov = sl->counted[i];
		} else if (r) {
			ov = tt_overlap(c->start, c->end, r->start, r->end);
		} else {
			ov = 0;
			list_for_each_entry(o, &sl->ranges, link)
				if (!o->persistent)
					ov += tt_overlap(c->start, c->end,
							 o->start, o->end);
		}
		d = min(ov, sl->counted[i]);
		sl->counted[i] -= d;
		sc->bud.slow -= min(d, sc->bud.slow);
	}
	tt_budget_publish(container_of(sc, struct tt_ksession, sched));
}

/* Forget the one-shot ranges of a layer (lock held). */
static void tt_sched_forget(struct tt_sched *sc, struct tt_slayer *sl)
{
	struct tt_srange *r, *tmp;

	if (!sl->nr_oneshot)
		return;
	tt_sched_detach(sc, sl, NULL);
	list_for_each_entry_safe(r, tmp, &sl->ranges, link) {
		if (!r->persistent)
			tt_sched_range_free(sc, r);
	}
	sl->nr_oneshot = 0;
}

/* Bytes @sl's chunk arrays take, as counted in @kmem. */
static u64 tt_sched_chunks_kmem(const struct tt_slayer *sl)
{
	return (u64)sl->chunk_cap * (sizeof(*sl->chunks) + sizeof(*sl->counted));
}

/* Free @sl's chunk arrays (lock held, or the session closing). */
static void tt_sched_chunks_free(struct tt_sched *sc, struct tt_slayer *sl)
{
	sc->kmem -= min(sc->kmem, tt_sched_chunks_kmem(sl));
	kvfree(sl->chunks);
	kvfree(sl->counted);
	sl->chunks = NULL;
	sl->counted = NULL;
	sl->chunk_cap = 0;
}

/* End an episode: forget its chunks (lock held). */
static void tt_sched_episode_end(struct tt_slayer *sl)
{
	struct tt_sched *sc = tt_sched_of(sl->s);
	struct tt_srange *r;
	unsigned int i;

	for (i = 0; sl->counted && i < sl->nr_chunks; i++)
		sc->bud.slow -= min(sl->counted[i], sc->bud.slow);
	tt_budget_publish(sl->s);
	tt_sched_chunks_free(sc, sl);
	list_for_each_entry(r, &sl->ranges, link) {
		r->taken = 0;
		r->arch_taken = 0;
	}
	sl->bud_wait = false;
	sl->bud_waited = false;
	sl->nr_chunks = 0;
	sl->next_chunk = 0;
	sl->evicted = 0;
	sl->returned = 0;
	sl->pf_due = false;
	sl->sync = false;
	sl->state = TT_EP_IDLE;
}

/* Hand the due prefetches to the workers and arm the timer (lock held). */
static void tt_sched_dispatch(struct tt_ksession *s)
{
	struct tt_sched *sc = tt_sched_of(s);
	u64 next = ~0ULL;
	u32 id;

	while (tt_tl_next_due(&sc->tl, ktime_get_ns(), &id, &next)) {
		int idx;
		struct tt_slayer *sl = tt_sched_find(sc, id, &idx);

		/* Only an eviction of this iteration is the plan's. */
		if (!sl || sl->iter != sc->tl.iter_seq)
			continue;
		/* Due after its backward began: deferred to its end. */
		if ((sc->cfg.flags & TT_SCHED_DEFER_LATE) &&
		    (sc->tl.st.layers[idx].seen & TT_TL_S_BWD_BEGIN))
			continue;
		if (sl->state == TT_EP_EVICTED)
			tt_sched_queue_prefetch(s, sl);
		else if (sl->state == TT_EP_EVICT_QUEUED ||
			 sl->state == TT_EP_EVICTING)
			sl->pf_due = true;
	}
	if (next != ~0ULL)
		hrtimer_start(&sc->timer, ns_to_ktime(next), HRTIMER_MODE_ABS);
}

static enum hrtimer_restart tt_sched_timer_fn(struct hrtimer *timer)
{
	struct tt_sched *sc = container_of(timer, struct tt_sched, timer);

	/* No sleeping here: the mutex is taken by the work. */
	queue_work(system_highpri_wq, &sc->timer_work);
	return HRTIMER_NORESTART;
}

static void tt_sched_timer_work(struct work_struct *work)
{
	struct tt_sched *sc = container_of(work, struct tt_sched, timer_work);
	struct tt_ksession *s = container_of(sc, struct tt_ksession, sched);

	mutex_lock(&sc->lock);
	if (!sc->closing)
		tt_sched_dispatch(s);
	mutex_unlock(&sc->lock);
}

/*
 * The nodes evicted pages go to, in order (lock held): the session's
 * slow_node alone, or the eviction order of the layer's fast node (a full
 * node spills to the next). Return: how many were written to @nids
 * (TT_MIG_TARGETS entries), 0 for none.
 */
static int tt_sched_slow_nodes(struct tt_sched *sc, struct tt_slayer *sl,
			       int *nids)
{
	int nid = sc->cfg.slow_node;

	if (nid >= 0) {
		if (tt_tier_node_check(nid))
			return 0;
		nids[0] = nid;
		return 1;
	}
	return tt_tier_evict_order(sl->cpu_nid >= 0 ? sl->cpu_nid :
				   numa_node_id(), nids, TT_MIG_TARGETS);
}

/*
 * The bytes one episode may take: the machine's RAM. A layer whose saved
 * tensors add up to more (overlapping tensors, mappings never touched) is
 * evicted up to that; the rest stays where it is.
 */
static unsigned long long tt_sched_episode_max(void)
{
	return (unsigned long long)totalram_pages() << PAGE_SHIFT;
}

/*
 * The chunks one episode may hold: its bytes in whole chunks of @batch,
 * plus two pieces per range and per hinted interval (the boundaries the
 * cut adds, tt_hint_cut()), max_ranges of each. Chunks beyond it are left
 * out (their pages stay where they are).
 */
static unsigned long tt_sched_chunks_max(unsigned long long batch)
{
	return tt_sched_episode_max() / batch + 4UL *
	       tt_config_get(TT_CFG_MAX_RANGES) + 2;
}

/*
 * Room for @cap chunks in @sl's arrays, the first @sl->nr_chunks kept
 * (lock held): 0 or -ENOMEM. Charged to the memory cgroup of the session's
 * mm, also from a worker.
 */
static int tt_sched_chunks_grow(struct tt_sched *sc, struct tt_slayer *sl,
				unsigned long cap)
{
	struct mem_cgroup *memcg, *old;
	struct tt_chunk *c;
	u64 *cnt;

	if (cap <= sl->chunk_cap)
		return 0;
	memcg = get_mem_cgroup_from_mm(sl->s->mm);
	old = set_active_memcg(memcg);
	c = kvmalloc_array(cap, sizeof(*c), TT_SCHED_GFP);
	cnt = kvcalloc(cap, sizeof(*cnt), TT_SCHED_GFP);
	set_active_memcg(old);
	mem_cgroup_put(memcg);
	if (!c || !cnt) {
		kvfree(c);
		kvfree(cnt);
		return -ENOMEM;
	}
	if (sl->nr_chunks) {
		memcpy(c, sl->chunks, sl->nr_chunks * sizeof(*c));
		memcpy(cnt, sl->counted, sl->nr_chunks * sizeof(*cnt));
	}
	tt_sched_chunks_free(sc, sl);
	sl->chunks = c;
	sl->counted = cnt;
	sl->chunk_cap = cap;
	sc->kmem += tt_sched_chunks_kmem(sl);
	return 0;
}

/*
 * Cut the first @sl->target bytes (page granular, at most
 * tt_sched_episode_max()) of the layer's ranges, in report order, leaving
 * out the hinted pages (PIN_FAST, ARCHIVE), into chunks of at most @batch
 * bytes, at most @cap of them: into @c, or with @c NULL only count them
 * (lock held). Return: the chunks, at most @cap.
 */
static unsigned long tt_sched_cut(struct tt_sched *sc, struct tt_slayer *sl,
				  unsigned long long batch, struct tt_chunk *c,
				  unsigned long cap)
{
	unsigned long long left = PAGE_ALIGN(min_t(u64, sl->target,
						   tt_sched_episode_max()));
	struct tt_chunk_cut x = { .c = c, .cap = cap };
	unsigned long long i, from;
	struct tt_srange *r;

	/* the first bytes of the ranges, in report order, outside hints */
	list_for_each_entry(r, &sl->ranges, link) {
		if (!left || x.n >= cap)
			break;
		x.range_id = r->id;
		from = x.n;
		tt_hint_cut(&sc->hints, r->start, r->end, &left, batch,
			    tt_chunk_emit, &x);
		if (c) {
			/* what the chunks kept hold of the range */
			r->taken = 0;
			for (i = from; i < min_t(u64, x.n, cap); i++)
				r->taken += c[i].end - c[i].start;
		}
		cond_resched();
	}
	return min_t(u64, x.n, cap);
}

/*
 * The bytes an episode's chunks are cut at (multiples, absolute): the
 * migration batch rounded up to whole huge pages, so no chunk boundary
 * cuts a huge page (the mover leaves a huge page a chunk only partly
 * covers where it is; Documentation/mover.md).
 */
static unsigned long long tt_sched_chunk_bytes(void)
{
	return ALIGN((unsigned long long)tt_migrate_batch_pages() << PAGE_SHIFT,
		     PMD_SIZE);
}

/*
 * The eviction's chunks, at most tt_sched_chunks_max() (lock held).
 * Return: 0, or -ENOMEM.
 */
static int tt_sched_select(struct tt_sched *sc, struct tt_slayer *sl)
{
	unsigned long long batch = tt_sched_chunk_bytes();
	unsigned long max = tt_sched_chunks_max(batch);
	unsigned long n = tt_sched_cut(sc, sl, batch, NULL, max);

	sl->nr_chunks = 0;
	sl->next_chunk = 0;
	if (!n)
		return 0;
	if (tt_sched_chunks_grow(sc, sl, n))
		return -ENOMEM;
	memset(sl->counted, 0, n * sizeof(*sl->counted));
	sl->cut_gen = sl->forget_gen;
	sl->nr_chunks = tt_sched_cut(sc, sl, batch, sl->chunks, n);
	if (sc->cfg.flags & TT_SCHED_MERGE)
		sl->nr_chunks = tt_chunk_merge(sl->chunks, sl->nr_chunks, batch);
	return 0;
}

/* Forget range entry @r of a layer (lock held). */
static void tt_sched_forget_entry(struct tt_sched *sc, struct tt_slayer *sl,
				  struct tt_srange *r)
{
	int idx;

	tt_sched_detach(sc, sl, r);
	if (r->persistent) {
		idx = tt_tl_find(&sc->tl, sl->id);
		if (idx >= 0)
			tt_tl_unsaved(&sc->tl, idx, r->end - r->start);
	} else {
		sl->nr_oneshot--;
	}
	tt_sched_range_free(sc, r);
}

/* Forget range @id of a layer, which failed its check (lock held). */
static void tt_sched_forget_range(struct tt_sched *sc, struct tt_slayer *sl,
				  u64 id)
{
	struct tt_srange *r;

	list_for_each_entry(r, &sl->ranges, link) {
		if (r->id == id) {
			tt_sched_forget_entry(sc, sl, r);
			return;
		}
	}
}

/* Add a migration's result to the session totals. */
static void tt_sched_account(struct tt_ksession *s,
			     const struct tt_migrate_result *res, int nid)
{
	spin_lock(&s->lock);
	tt_stats_account(&s->stats, res, nid);
	spin_unlock(&s->lock);
}

/*
 * The node holding most of [start, end) among nodes that are not slow,
 * added into @bytes (nr_node_ids entries); the caller holds an mm_users
 * reference.
 */
static void tt_sched_residency(struct mm_struct *mm, unsigned long start,
			       unsigned long end, u64 *bytes, u64 *scratch)
{
	u64 np, other;
	int nid;

	memset(scratch, 0, nr_node_ids * sizeof(*scratch));
	if (tt_pagescan_residency(mm, start, end, scratch, nr_node_ids, &np, &other))
		return;
	for (nid = 0; nid < nr_node_ids; nid++)
		bytes[nid] += scratch[nid];
}

static int tt_sched_majority_fast(const u64 *bytes, int fallback)
{
	int nid, best = fallback;
	u64 most = 0;

	for (nid = 0; nid < nr_node_ids; nid++) {
		if (bytes[nid] <= most || tt_tier_role(nid, NULL) == TT_ROLE_SLOW)
			continue;
		most = bytes[nid];
		best = nid;
	}
	return best;
}

/*
 * Check and move one chunk to @nid; counts a chunk whose range fails the
 * checks as not present / unsupported, and returns that error.
 */
static int tt_sched_evict_chunk(struct tt_ksession *s, struct tt_slayer *sl,
				struct tt_chunk *c, const int *nids, int nr,
				struct tt_migrate_result *res)
{
	unsigned long pages = (c->end - c->start) >> PAGE_SHIFT;
	int ret;

	ret = tt_migrate_check(s->mm, c->start, c->end);
	if (ret == -EFAULT || ret == -EOPNOTSUPP) {
		res->pages += pages;
		if (ret == -EFAULT)
			res->skipped_not_present += pages;
		else
			res->skipped_unsupported += pages;
		return ret;
	}
	tt_mover_migrate(s, c->start, c->end, nids, nr,
			 TT_MIG_REMOTE | TT_MIG_SPLIT_PARTIAL, &sl->abort, res);
	return 0;
}

/*
 * Fast-tier budget (Documentation/scheduler.md, "Fast-tier budget"; the
 * heat and the fair share are heat.c's, the module-wide side budget.c's).
 *
 * Accounts, under the lock: @bud.held, the bytes of the saved ranges;
 * @bud.slow, the bytes of them an eviction of the session moved to the
 * slow tier and no prefetch has admitted back, per chunk in @counted (set
 * when the chunk's eviction returns, to what it moved of pages still
 * registered; taken back when a prefetch admits the chunk, or when the
 * ranges are forgotten). Fast registered bytes = held - slow, an upper
 * bound of what is on the fast tier: an eviction in flight counts as
 * fast until its batch is done, a prefetch from its admission.
 *
 * Victims are cut from ranges of layers with no migration in flight (IDLE
 * or EVICTED) whose backward pass is not running, appended to the layer's
 * episode (started if it had none) and moved by the thread that needs the
 * room, with the layer EVICTING and @victim set; then the episode is
 * EVICTED as after a planned eviction, and its prefetch brings the victims
 * back with the rest: at the plan's trigger if it is still ahead, else as
 * soon as there is room (@bud_wait), at the latest at the backward begin.
 */

/*
 * Chunk @i of @sl was moved out: count what it moved of registered pages
 * on the slow tier (lock held).
 */
static void tt_sched_count_slow(struct tt_sched *sc, struct tt_slayer *sl,
				unsigned int i)
{
	const struct tt_chunk *c = &sl->chunks[i];
	const struct tt_srange *r;
	u64 n = c->moved, reg = 0;

	if (!n || !sl->counted)
		return;
	/* ranges forgotten since the cut: only what is still registered */
	if (sl->forget_gen != sl->cut_gen) {
		list_for_each_entry(r, &sl->ranges, link)
			reg += tt_overlap(c->start, c->end, r->start, r->end);
		n = min(n, reg);
	}
	sl->counted[i] += n;
	sc->bud.slow += n;
	tt_budget_publish(sl->s);
}

/* Registered bytes counted on the fast tier (lock held). */
static u64 tt_sched_fast(const struct tt_sched *sc)
{
	return sc->bud.held > sc->bud.slow ? sc->bud.held - sc->bud.slow : 0;
}

static void tt_sched_peak(struct tt_sched *sc, u64 fast)
{
	if (fast > sc->bud.counts.peak)
		sc->bud.counts.peak = fast;
}

/*
 * The heat features of range @r of layer @l at @now (@rel: the same in
 * the iteration): the distance to its next use and its lifetime from the
 * layer's profile (the backward begin; after the backward end, the next
 * iteration's), else last in, first out: the longer ago a tensor was
 * saved, the later it is needed and the longer it lives.
 */
static void tt_sched_features(const struct tt_tl *tl,
			      const struct tt_tl_layer *l,
			      const struct tt_srange *r, u64 now, u64 rel,
			      struct tt_heat_item *it)
{
	u64 age = now > r->saved_ns ? now - r->saved_ns : 0;

	it->bytes = r->end - r->start;
	it->uses = r->uses;
	it->in_use = (l->seen & TT_TL_S_BWD_BEGIN) &&
		     !(l->seen & TT_TL_S_BWD_END);
	it->done = 0;
	if (!(l->flags & TT_TL_L_PROFILED)) {
		it->dist = age;
		it->life = age;
		return;
	}
	if (l->seen & TT_TL_S_BWD_END)
		it->dist = (tl->prof_iter_ns > rel ? tl->prof_iter_ns - rel : 0) +
			   l->prof.bwd_start;
	else
		it->dist = l->prof.bwd_start > rel ? l->prof.bwd_start - rel : 0;
	it->life = l->prof.bwd_start > l->prof.fwd_end ?
		   l->prof.bwd_start - l->prof.fwd_end : 0;
}

/* The nearest next use of a layer's ranges (0: in use or none). */
static u64 tt_sched_layer_dist(const struct tt_tl *tl,
			       const struct tt_tl_layer *l, u64 now, u64 rel)
{
	const struct tt_slayer *sl = l->priv;
	const struct tt_srange *r;
	struct tt_heat_item it;
	u64 d = ~0ULL;

	list_for_each_entry(r, &sl->ranges, link) {
		tt_sched_features(tl, l, r, now, rel, &it);
		d = min(d, it.in_use ? 0 : it.dist);
	}
	return d == ~0ULL ? 0 : d;
}

/* Bytes of @b's scratch for @cap items, as counted in @kmem. */
static u64 tt_sched_bud_kmem(unsigned long cap)
{
	return (u64)cap * (sizeof(struct tt_heat_item) + 2 * sizeof(void *));
}

/*
 * Room for @n heat items (lock held), @n at most the max_ranges parameter
 * (the ranges a session holds): 0 or -ENOMEM. Grows by doubling, never
 * past max(@n, max_ranges); charged to the session's memory cgroup.
 */
static int tt_sched_bud_scratch(struct tt_budget *b, unsigned long n)
{
	struct tt_sched *sc = container_of(b, struct tt_sched, bud);
	struct tt_ksession *s = container_of(sc, struct tt_ksession, sched);
	unsigned long lim = max_t(unsigned long, n,
				  tt_config_get(TT_CFG_MAX_RANGES));
	struct mem_cgroup *memcg, *old;
	struct tt_heat_item *items;
	unsigned long cap;
	void **refs;

	if (n <= b->cap)
		return 0;
	if (n > TT_SCHED_SCRATCH_MAX)
		return -ENOMEM;
	cap = max3(n, min(2UL * b->cap, lim), 64UL);
	memcg = get_mem_cgroup_from_mm(s->mm);
	old = set_active_memcg(memcg);
	items = kvmalloc_array(cap, sizeof(*items), TT_SCHED_GFP);
	refs = kvmalloc_array(2 * cap, sizeof(*refs), TT_SCHED_GFP);
	set_active_memcg(old);
	mem_cgroup_put(memcg);
	if (!items || !refs) {
		kvfree(items);
		kvfree(refs);
		return -ENOMEM;
	}
	kvfree(b->items);
	kvfree(b->refs);
	sc->kmem -= min(sc->kmem, tt_sched_bud_kmem(b->cap));
	b->items = items;
	b->refs = refs;
	b->cap = cap;
	sc->kmem += tt_sched_bud_kmem(cap);
	return 0;
}

/*
 * Will the plan's trigger bring @sl's evicted bytes back in this
 * iteration (lock held)?
 */
static bool tt_sched_trigger_ahead(struct tt_sched *sc, struct tt_slayer *sl)
{
	const struct tt_tl_layer *l;
	int idx;

	if (!sc->tl.planned || sl->iter != sc->tl.iter_seq ||
	    !tt_sched_find(sc, sl->id, &idx))
		return false;
	l = &sc->tl.st.layers[idx];
	return (l->flags & TT_TL_L_PLANNED) && l->final_bytes &&
	       !(l->seen & (TT_TL_S_DUE | TT_TL_S_BWD_BEGIN | TT_TL_S_BWD_END));
}

/*
 * Append the pieces of range @r a victim may take to @sl's episode (lock
 * held): with @arch its pages hinted TT_HINT_ARCHIVE (not pinned), else
 * its pages outside every hint, after those the episode holds already, at
 * most @want bytes (page granular), in batches as the plan's. An IDLE
 * layer starts an episode. Return: the bytes appended (0 when out of
 * memory too).
 */
static u64 tt_sched_victim_cut(struct tt_sched *sc, struct tt_slayer *sl,
			       struct tt_srange *r, bool arch, u64 want)
{
	unsigned long long batch = tt_sched_chunk_bytes();
	unsigned long max = tt_sched_chunks_max(batch);
	unsigned int fl = arch ? TT_HINT_ARCHIVE : 0;
	unsigned int avoid = arch ? TT_HINT_PIN_FAST : 0;
	unsigned long long skip0 = arch ? r->arch_taken : r->taken;
	unsigned long long most = PAGE_ALIGN(min_t(u64, want,
						   tt_sched_episode_max()));
	unsigned long long skip = skip0, left = most, got = 0;
	struct tt_chunk_cut x = { .c = NULL, .range_id = r->id };
	unsigned long n, cap, i;

	if (sl->nr_chunks >= max)
		return 0;
	tt_heat_cut(&sc->hints, r->start, r->end, fl, avoid, &skip, &left,
		    batch, tt_chunk_emit, &x);
	n = min_t(u64, x.n, max - sl->nr_chunks);
	if (!n)
		return 0;
	if (sl->nr_chunks + n > sl->chunk_cap) {
		cap = max(sl->nr_chunks + n,
			  min_t(unsigned long, 2UL * sl->chunk_cap, max));
		if (tt_sched_chunks_grow(sc, sl, cap))
			return 0;
	}
	if (sl->state == TT_EP_IDLE && !sl->nr_chunks) {
		sl->iter = sc->tl.iter_seq;
		sl->target = 0;
		sl->cpu_nid = numa_node_id();
		sl->fast_nid = NUMA_NO_NODE;
		sl->evicted = 0;
		sl->returned = 0;
		sl->next_chunk = 0;
		sl->pf_due = false;
		sl->sync = false;
	}
	sl->cut_gen = sl->forget_gen;
	skip = skip0;
	left = most;
	x.c = &sl->chunks[sl->nr_chunks];
	x.cap = n;
	x.n = 0;
	tt_heat_cut(&sc->hints, r->start, r->end, fl, avoid, &skip, &left,
		    batch, tt_chunk_emit, &x);
	n = min_t(u64, x.n, n);
	for (i = 0; i < n; i++) {
		sl->counted[sl->nr_chunks + i] = 0;
		got += x.c[i].end - x.c[i].start;
	}
	sl->nr_chunks += n;
	if (arch)
		r->arch_taken += got;
	else
		r->taken += got;
	return got;
}

/* Is chunk @c inside pages hinted TT_HINT_ARCHIVE? */
static bool tt_sched_archived(const struct tt_sched *sc,
			      const struct tt_chunk *c)
{
	const struct tt_hint_iv *iv = tt_hint_next(&sc->hints, c->start, c->end);

	return iv && iv->start <= c->start && (iv->flags & TT_HINT_ARCHIVE);
}

/*
 * Move what a victim round appended to each layer of @round to the slow
 * tier (lock held, dropped while memory moves; @remote: from a worker,
 * else from the session's process).
 */
static void tt_sched_victims_move(struct tt_ksession *s, struct list_head *round,
				  bool remote)
{
	struct tt_sched *sc = tt_sched_of(s);
	int slow[TT_MIG_TARGETS], nr_slow, fast = sc->cfg.fast_node;
	struct tt_slayer *sl, *tmp;
	u64 *bytes = NULL;
	bool have_mm;

	sl = list_first_entry(round, struct tt_slayer, vlink);
	nr_slow = tt_sched_slow_nodes(sc, sl, slow);
	list_for_each_entry(sl, round, vlink) {
		sl->state = TT_EP_EVICTING;
		sl->victim = true;
		sl->vmoved = 0;
		sl->velapsed = 0;
		sl->mig_start = ktime_get_ns();
		atomic_set(&sl->abort, 0);
		sc->bud.busy++;
	}
	mutex_unlock(&sc->lock);

	have_mm = nr_slow && (!remote || mmget_not_zero(s->mm));
	if (have_mm && fast < 0)
		bytes = kcalloc(2 * nr_node_ids, sizeof(*bytes), GFP_KERNEL);
	list_for_each_entry(sl, round, vlink) {
		bool fresh = !sl->evicted;
		unsigned int i;

		if (bytes)
			memset(bytes, 0, nr_node_ids * sizeof(*bytes));
		for (i = sl->vfrom; have_mm && i < sl->nr_chunks; i++) {
			struct tt_chunk *c = &sl->chunks[i];
			struct tt_migrate_result res = {};
			int ret;

			if (atomic_read(&sl->abort) || atomic_read(&s->stop))
				break;
			if (bytes && fresh)
				tt_sched_residency(s->mm, c->start, c->end, bytes,
						   bytes + nr_node_ids);
			ret = tt_sched_evict_chunk(s, sl, c, slow, nr_slow, &res);
			c->moved = res.moved << PAGE_SHIFT;
			tt_sched_account(s, &res, slow[0]);

			mutex_lock(&sc->lock);
			if (ret)
				tt_sched_forget_range(sc, sl, c->range_id);
			sl->evicted += c->moved;
			sl->vmoved += c->moved;
			sl->velapsed += res.elapsed_ns;
			sc->counts.bytes_evicted += c->moved;
			sc->bud.counts.victim_bytes += c->moved;
			if (c->moved && tt_sched_archived(sc, c))
				sc->bud.counts.victim_archived += c->moved;
			sc->bud.counts.skipped_pages += res.skipped_busy +
				res.skipped_not_present + res.skipped_unsupported +
				res.skipped_no_memory;
			tt_sched_count_slow(sc, sl, i);
			mutex_unlock(&sc->lock);
			cond_resched();
		}
		if (fresh)
			sl->fast_nid = fast >= 0 ? fast : bytes ?
				tt_sched_majority_fast(bytes, sl->cpu_nid) :
				sl->cpu_nid;
	}
	if (have_mm && remote)
		mmput(s->mm);
	kfree(bytes);

	mutex_lock(&sc->lock);
	list_for_each_entry_safe(sl, tmp, round, vlink) {
		list_del_init(&sl->vlink);
		sl->in_round = false;
		sl->victim = false;
		sc->bud.busy--;
		if (sl->fast_nid < 0)
			sl->fast_nid = numa_node_id();
		tt_evlog_migration(s, TT_TRACE_EVICT, sl->id, sl->iter,
				   sl->vmoved, sl->mig_start,
				   nr_slow ? slow[0] : NUMA_NO_NODE,
				   TT_TRACE_F_VICTIM);
		tt_tl_rate_sample(&sc->tl, TT_TL_EVICT, sl->vmoved, sl->velapsed);
		if (!sl->evicted) {
			tt_sched_episode_end(sl);
		} else if (sl->pf_due && !sc->closing) {
			tt_sched_queue_prefetch(s, sl);
		} else {
			sl->state = TT_EP_EVICTED;
			sl->bud_wait = !tt_sched_trigger_ahead(sc, sl);
			sc->bud.waiting |= sl->bud_wait;
		}
	}
	wake_up_all(&sc->bud.wq);
}

/*
 * Hints on plain ranges (Documentation/scheduler.md, "Hints"): the pages
 * of a hinted range outside every saved range the session holds. The
 * scheduler does not account them (they are not registered), so it moves
 * them itself, as TT_IOC_MIGRATE would: WILL_USE and PIN_FAST bring them
 * to the fast node in the caller's thread before the call returns;
 * ARCHIVE sends them to the slow tier first in the session's next victim
 * round (tt_sched_archive_plain()).
 */

/* Loops over a session's ranges reschedule every this many. */
#define TT_SCHED_RESCHED_EVERY	256U

/*
 * The plain pieces of [@start, @end) (lock held): the pieces outside the
 * saved ranges, and with @with, only where they meet intervals of the
 * hint set whose flags include @with and not TT_HINT_F_OUT. *@out is a
 * kvmalloc'd array for the caller to kvfree() (also when 0 pieces).
 * Return: the number of pieces, or -ENOMEM. O(n log n) for the n saved
 * ranges the session holds (at most max_ranges), charged.
 */
static long tt_sched_plain_pieces(struct tt_sched *sc, u64 start, u64 end,
				  unsigned int with, struct tt_hint_iv **out)
{
	unsigned long k = 0, n, cap, seen = 0;
	struct tt_hint_iv *iv;
	unsigned int i, gaps;

	for (i = 0; i < sc->tl.n; i++) {
		struct tt_slayer *sl = sc->tl.st.layers[i].priv;
		struct tt_srange *r;

		list_for_each_entry(r, &sl->ranges, link) {
			if (r->end > start && r->start < end)
				k++;
			if (!(++seen % TT_SCHED_RESCHED_EVERY))
				cond_resched();
		}
	}
	/* saved ranges, their gaps, the gaps' meeting with the hint set */
	cap = k + (k + 1) + (with ? k + 1 + sc->hints.n : 0);
	iv = kvmalloc_array(cap, sizeof(*iv), TT_SCHED_GFP);
	if (!iv)
		return -ENOMEM;
	n = 0;
	for (i = 0; i < sc->tl.n && n < k; i++) {
		struct tt_slayer *sl = sc->tl.st.layers[i].priv;
		struct tt_srange *r;

		list_for_each_entry(r, &sl->ranges, link) {
			if (r->end <= start || r->start >= end || n >= k)
				continue;
			iv[n].start = r->start;
			iv[n].end = r->end;
			iv[n].flags = 0;
			if (!(++n % TT_SCHED_RESCHED_EVERY))
				cond_resched();
		}
	}
	gaps = tt_hint_gaps(iv, n, start, end, iv + k);
	if (with)
		gaps = tt_hint_meet(iv + k, gaps, &sc->hints, with,
				    TT_HINT_F_OUT, iv + 2 * k + 1);
	memmove(iv, iv + (with ? 2 * k + 1 : k), gaps * sizeof(*iv));
	*out = iv;
	return gaps;
}

/*
 * Move the @n plain pieces @p of the session's memory to @nids, in the
 * session's own process (lock not held): only where its mm maps them with
 * a supported mapping, one vma at a time (an unmapped hint costs nothing),
 * with the session's mover or engine; @sync: to @nids[0] only, as
 * TT_IOC_MIGRATE; else to the first of @nids with room, as an eviction.
 * Stops at a fatal signal or when the session stops. The results are
 * added to the session's migration counters (stats) and to @res. Return:
 * 0, -EINTR, -ESRCH (the mm is gone) or -ENOMEM.
 */
static int tt_sched_plain_move(struct tt_ksession *s,
			       const struct tt_hint_iv *p, long n,
			       const int *nids, int nr, bool sync,
			       struct tt_migrate_result *res)
{
	unsigned int flags = (capable(CAP_SYS_NICE) ? TT_MIG_MOVE_ALL : 0) |
			     TT_MIG_SPLIT_PARTIAL;
	struct mm_struct *mm = s->mm;
	int ret = 0;
	long i;

	if (!nr || n <= 0)
		return 0;
	if (!mmget_not_zero(mm))
		return -ESRCH;
	for (i = 0; i < n && !ret; i++) {
		unsigned long a = p[i].start, b = p[i].end;

		while (a < b && !ret) {
			struct tt_migrate_result r = {};
			struct vm_area_struct *vma;
			unsigned long va, vb;
			bool ok;

			if (fatal_signal_pending(current) ||
			    atomic_read(&s->stop)) {
				ret = -EINTR;
				break;
			}
			if (mmap_read_lock_killable(mm)) {
				ret = -EINTR;
				break;
			}
			vma = find_vma(mm, a);
			if (!vma || vma->vm_start >= b) {
				mmap_read_unlock(mm);
				break;
			}
			va = max(a, vma->vm_start);
			vb = min(b, vma->vm_end);
			ok = tt_vma_supported(vma);
			mmap_read_unlock(mm);
			if (ok && sync)
				ret = tt_mover_migrate_sync(s, va, vb, nids[0],
							    flags, &r);
			else if (ok)
				ret = tt_mover_migrate(s, va, vb, nids, nr,
						       flags, &s->stop, &r);
			tt_sched_account(s, &r, nids[0]);
			res->pages += r.pages;
			res->moved += r.moved;
			res->skipped_no_memory += r.skipped_no_memory;
			a = vb;
			cond_resched();
		}
	}
	mmput(mm);
	return ret;
}

/*
 * A victim round is about to run in the session's own process (lock held,
 * dropped while memory moves): the plain pages of the intervals hinted
 * TT_HINT_ARCHIVE that no round sent out yet leave for the slow tier
 * first. They are not registered, so the round still makes its room from
 * saved tensors. Each interval is marked TT_HINT_F_OUT before its pages
 * move: a concurrent round skips it. A round in a worker (@remote) leaves
 * them to the next round in the process: the walk of a hinted range, as
 * large as the caller mapped, is the caller's own time, never a shared
 * worker's.
 */
static void tt_sched_archive_plain(struct tt_ksession *s, bool remote)
{
	struct tt_sched *sc = tt_sched_of(s);
	struct tt_migrate_result res = {};
	int slow[TT_MIG_TARGETS], nr_slow;
	struct tt_hint_iv *p = NULL;
	unsigned int i;
	bool any = false;
	long n;

	for (i = 0; i < sc->hints.n; i++)
		if ((sc->hints.iv[i].flags & TT_HINT_ARCHIVE) &&
		    !(sc->hints.iv[i].flags & TT_HINT_F_OUT))
			any = true;
	if (!any || remote || sc->closing)
		return;
	n = tt_sched_plain_pieces(sc, sc->hints.iv[0].start,
				  sc->hints.iv[sc->hints.n - 1].end,
				  TT_HINT_ARCHIVE, &p);
	if (n < 0)
		return;
	for (i = 0; i < sc->hints.n; i++)
		if (sc->hints.iv[i].flags & TT_HINT_ARCHIVE)
			sc->hints.iv[i].flags |= TT_HINT_F_OUT;
	if (sc->cfg.slow_node >= 0)
		nr_slow = tt_tier_node_check(sc->cfg.slow_node) ? 0 :
			  (slow[0] = sc->cfg.slow_node, 1);
	else
		nr_slow = tt_tier_evict_order(numa_node_id(), slow,
					      TT_MIG_TARGETS);
	mutex_unlock(&sc->lock);
	tt_sched_plain_move(s, p, n, slow, nr_slow, false, &res);
	kvfree(p);
	mutex_lock(&sc->lock);
}

/* May @sl give a victim (lock held)? Not @hot, not in use, nothing in flight. */
static bool tt_sched_victim_ok(const struct tt_slayer *sl,
			       const struct tt_slayer *hot,
			       const struct tt_heat_item *it)
{
	return sl != hot && !it->in_use &&
	       (sl->state == TT_EP_IDLE || sl->state == TT_EP_EVICTED);
}

/*
 * Evict victims worth @need bytes (lock held, dropped while they move):
 * pages hinted TT_HINT_ARCHIVE first, then ranges by increasing heat, of
 * which only those colder than the ranges of @hot (the layer a prefetch is
 * admitting; NULL for a registration: any). @budget: the budget in force,
 * toward which Algorithm 1 moves the weights first. @remote: from a
 * worker. Return: by how much the registered bytes on the fast tier went
 * down (victims moved, or ranges forgotten because their memory was gone).
 */
static u64 tt_sched_make_room(struct tt_ksession *s, u64 need,
			      struct tt_slayer *hot, u64 budget, bool remote)
{
	struct tt_sched *sc = tt_sched_of(s);
	struct tt_budget *b = &sc->bud;
	u64 now = ktime_get_ns(), rel = tt_tl_rel(&sc->tl, now), got;
	u64 fast = tt_sched_fast(sc), live = 0;
	long long below = LLONG_MAX;
	unsigned int i, k = 0, pass, steps, m, *heap;
	LIST_HEAD(round);
	int j;

	if (!need || sc->closing || (sc->cfg.flags & TT_SCHED_OFF))
		return 0;
	tt_sched_archive_plain(s, remote);
	if (sc->closing || tt_sched_bud_scratch(b, sc->nr_ranges))
		return 0;
	/* the lock may have been dropped */
	now = ktime_get_ns();
	rel = tt_tl_rel(&sc->tl, now);
	fast = tt_sched_fast(sc);
	for (i = 0; i < sc->tl.n; i++) {
		const struct tt_tl_layer *l = &sc->tl.st.layers[i];
		struct tt_slayer *sl = l->priv;
		struct tt_srange *r;

		list_for_each_entry(r, &sl->ranges, link) {
			if (k >= b->cap)
				break;
			tt_sched_features(&sc->tl, l, r, now, rel, &b->items[k]);
			live += b->items[k].bytes;
			b->refs[2 * k] = r;
			b->refs[2 * k + 1] = sl;
			k++;
			if (!(k % TT_SCHED_RESCHED_EVERY))
				cond_resched();
		}
	}
	if (!k)
		return 0;
	heap = kvmalloc_array(k, sizeof(*heap),
			      GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!heap)
		return 0;
	/* Algorithm 1, a step at a time: each one is O(k) */
	tt_heat_score(b->items, k, &b->w);
	for (steps = 0; budget != TT_BUDGET_NONE && steps < TT_HEAT_STEPS_MAX;
	     steps++) {
		if (!tt_heat_adjust_step(&b->w, b->items, k, budget, live))
			break;
		cond_resched();
	}
	if (hot) {
		below = LLONG_MIN;
		for (i = 0; i < k; i++)
			if (b->refs[2 * i + 1] == hot && b->items[i].heat > below)
				below = b->items[i].heat;
	}
	/*
	 * pass 0: archived pages (any heat), pass 1: the colder ranges; the
	 * candidates come off a heap, O(log k) a pick
	 */
	for (pass = 0; pass < 2 && need; pass++) {
		for (i = 0; i < k; i++)
			b->items[i].done = !tt_sched_victim_ok(b->refs[2 * i + 1],
							       hot, &b->items[i]);
		m = tt_heat_heap(b->items, k, pass ? below : LLONG_MAX, heap);
		for (i = 1; need; i++) {
			struct tt_srange *r;
			struct tt_slayer *sl;

			j = tt_heat_pop(b->items, heap, &m);
			if (j < 0)
				break;
			if (!(i % TT_SCHED_RESCHED_EVERY))
				cond_resched();
			b->items[j].done = 1;
			r = b->refs[2 * j];
			sl = b->refs[2 * j + 1];
			if (!sl->in_round)
				sl->vfrom = sl->nr_chunks;
			got = tt_sched_victim_cut(sc, sl, r, pass == 0, need);
			if (!got)
				continue;
			b->counts.victims++;
			need -= min(got, need);
			if (!sl->in_round) {
				sl->in_round = true;
				list_add_tail(&sl->vlink, &round);
			}
		}
	}
	kvfree(heap);
	if (list_empty(&round))
		return 0;
	tt_sched_victims_move(s, &round, remote);
	return fast > tt_sched_fast(sc) ? fast - tt_sched_fast(sc) : 0;
}

/*
 * Admit chunk @i of @sl's prefetch (lock held, dropped while victims
 * move): from now on its registered bytes count on the fast tier. It fits
 * when the session stays within its budget and the sessions within the
 * module's; else colder victims make room; else it waits. Return: 0, or
 * -EAGAIN: no room and no victim, the prefetch stops here (@bud_wait).
 */
static int tt_sched_admit(struct tt_ksession *s, struct tt_slayer *sl,
			  unsigned int i, bool remote)
{
	struct tt_sched *sc = tt_sched_of(s);
	struct tt_budget *b = &sc->bud;
	u64 c, lim, total, g, fast;
	unsigned int tries;

	for (tries = 0; tries < 8; tries++) {
		c = sl->counted ? sl->counted[i] : 0;
		if (!c)
			return 0;
		fast = tt_sched_fast(sc);
		lim = tt_budget_limit(s, &total, &g);
		if ((sc->cfg.flags & TT_SCHED_OFF) ||
		    ((lim == TT_BUDGET_NONE || fast + c <= lim) &&
		     (!g || total + c <= g))) {
			sl->counted[i] = 0;
			b->slow -= min(c, b->slow);
			tt_budget_publish(s);
			tt_sched_peak(sc, fast + c);
			return 0;
		}
		if (lim != TT_BUDGET_NONE && fast + c > lim) {
			if (tt_sched_make_room(s, fast + c - lim, sl, lim, remote))
				continue;
		} else {
			tt_budget_kick();	/* others over their share */
		}
		break;
	}
	sl->bud_wait = true;
	sl->bud_waited = true;
	b->waiting = true;
	b->counts.waits++;
	return -EAGAIN;
}

/* An evicted layer budget_retry may bring back: its nearest next use. */
struct tt_sched_cand {
	u64 d;
	unsigned int idx;
	struct tt_slayer *sl;
};

/* The nearest next use first; ties: the lower layer index. */
static int tt_sched_cand_cmp(const void *a, const void *b)
{
	const struct tt_sched_cand *x = a, *y = b;

	if (x->d != y->d)
		return x->d < y->d ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * Room was made, or may have been: bring evicted bytes back, the nearest
 * next use first, as far as the budget has room (lock held). With a
 * budget in force every evicted layer is a candidate, whether its plan's
 * trigger came or not: the budget, not the schedule, is what holds them
 * out, and the room is there to be used; the one that does not fit whole
 * is queued too (its prefetch takes what fits, then waits), the farther
 * ones are not (they would only queue up before nearer ones). Without a
 * budget only prefetches that waited for room are retried.
 */
static void tt_sched_budget_retry(struct tt_ksession *s)
{
	struct tt_sched *sc = tt_sched_of(s);
	u64 now = ktime_get_ns(), rel = tt_tl_rel(&sc->tl, now);
	u64 room = ~0ULL, need, lim, total, g, fast;
	bool budget = tt_budget_active(s) && !(sc->cfg.flags & TT_SCHED_OFF);
	struct tt_sched_cand *cand;
	unsigned int i, c, n = 0;

	if (budget) {
		lim = tt_budget_limit(s, &total, &g);
		fast = tt_sched_fast(sc);
		if (lim != TT_BUDGET_NONE)
			room = lim > fast ? lim - fast : 0;
		if (g)
			room = min(room, g > total ? g - total : 0);
	}
	if (sc->closing)
		return;
	for (i = 0; i < sc->tl.n; i++) {
		const struct tt_slayer *sl = sc->tl.st.layers[i].priv;

		if (sl->state == TT_EP_EVICTED && (budget || sl->bud_wait))
			n++;
	}
	if (!n) {
		sc->bud.waiting = false;	/* none left */
		return;
	}
	/*
	 * Each candidate's distance once, then in order: O(ranges + layers
	 * log layers), not a scan of every range per layer queued. Out of
	 * memory: @waiting stays, the next release retries.
	 */
	cand = kvmalloc_array(n, sizeof(*cand), GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!cand)
		return;
	n = 0;
	for (i = 0; i < sc->tl.n; i++) {
		const struct tt_tl_layer *l = &sc->tl.st.layers[i];
		struct tt_slayer *sl = l->priv;

		if (sl->state != TT_EP_EVICTED || (!budget && !sl->bud_wait))
			continue;
		/* TT_SCHED_DEFER_LATE: back at its backward end */
		if ((sc->cfg.flags & TT_SCHED_DEFER_LATE) &&
		    (l->seen & TT_TL_S_BWD_BEGIN) &&
		    !(l->seen & TT_TL_S_BWD_END))
			continue;
		cand[n].d = tt_sched_layer_dist(&sc->tl, l, now, rel);
		cand[n].idx = i;
		cand[n].sl = sl;
		n++;
		cond_resched();
	}
	sort(cand, n, sizeof(*cand), tt_sched_cand_cmp, NULL);
	for (i = 0; i < n && !sc->closing; i++) {
		struct tt_slayer *best = cand[i].sl;

		need = 0;
		for (c = best->next_chunk; best->counted && c < best->nr_chunks; c++)
			need += best->counted[c];
		if (need && !room)
			break;
		best->bud_wait = false;
		tt_sched_queue_prefetch(s, best);
		room -= min(need, room);
	}
	if (i == n)
		sc->bud.waiting = false;	/* none left */
	kvfree(cand);
}

/*
 * Registered memory was released (lock held): retry this session's
 * waiting prefetches, and the other sessions' when they share a budget.
 */
static void tt_sched_budget_released(struct tt_ksession *s)
{
	struct tt_sched *sc = tt_sched_of(s);

	if (!sc->bud.released)
		return;
	sc->bud.released = false;
	if (sc->bud.waiting || tt_budget_active(s))
		tt_sched_budget_retry(s);
	if (tt_config_get(TT_CFG_BUDGET_MIB))
		tt_budget_kick();
}

/* Is the session over its budget, or the sessions over the module's? */
static bool tt_sched_over(struct tt_ksession *s)
{
	struct tt_sched *sc = tt_sched_of(s);
	u64 total, g, lim;

	if (!tt_budget_active(s) || (sc->cfg.flags & TT_SCHED_OFF))
		return false;
	lim = tt_budget_limit(s, &total, &g);
	return (lim != TT_BUDGET_NONE && tt_sched_fast(sc) > lim) ||
	       (g && total > g);
}

/*
 * After an attempt to get within the budget in force (lock held): is the
 * session still over it, or TT_SCHED_OFF (it gives nothing back)? Then
 * the module's total counts it at most at its budget in force, so that
 * bytes no victim can give back (ranges in use, pinned, not present) do
 * not take the other sessions' shares (Documentation/scheduler.md, "Many
 * processes").
 */
static void tt_sched_budget_stuck(struct tt_ksession *s)
{
	struct tt_sched *sc = tt_sched_of(s);
	u64 total, g, lim;
	bool stuck = sc->cfg.flags & TT_SCHED_OFF;

	if (!stuck && tt_budget_active(s)) {
		lim = tt_budget_limit(s, &total, &g);
		stuck = lim != TT_BUDGET_NONE && tt_sched_fast(sc) > lim;
	}
	if (stuck != sc->bud.stuck)
		WRITE_ONCE(sc->bud.stuck, stuck);
}

/*
 * Make room in the call that took the session over its budget (or the
 * sessions over the module's): wait for the session's evictions already
 * queued or running when they free enough, else evict victims; give up
 * (budget_overruns) when neither is left (lock not held).
 */
static void tt_sched_budget_room(struct tt_ksession *s)
{
	struct tt_sched *sc = tt_sched_of(s);
	struct tt_budget *b = &sc->bud;
	unsigned int tries, i;

	mutex_lock(&sc->lock);
	for (tries = 0; tries < 64; tries++) {
		u64 total, g, lim = tt_budget_limit(s, &total, &g);
		u64 fast = tt_sched_fast(sc), over = 0, pending = 0;
		struct tt_slayer *wait = NULL;

		if (lim != TT_BUDGET_NONE && fast > lim)
			over = fast - lim;
		if (g && total > g) {
			over = max(over, total - g);
			tt_budget_kick();	/* others over their share */
		}
		if (!over || sc->closing || (sc->cfg.flags & TT_SCHED_OFF))
			break;
		for (i = 0; i < sc->tl.n; i++) {
			struct tt_slayer *sl = sc->tl.st.layers[i].priv;

			if (sl->state == TT_EP_EVICTING && !sl->victim) {
				pending += sl->target > sl->evicted ?
					   sl->target - sl->evicted : 0;
				wait = sl;
			} else if (sl->state == TT_EP_EVICT_QUEUED) {
				pending += sl->target;
				if (!wait)
					wait = sl;
			}
		}
		if (pending < over &&
		    tt_sched_make_room(s, over - pending, NULL, lim, false))
			continue;
		if (!wait) {
			b->counts.overruns++;
			break;
		}
		mutex_unlock(&sc->lock);
		flush_work(&wait->evict_work);
		mutex_lock(&sc->lock);
	}
	tt_sched_budget_stuck(s);
	tt_sched_peak(sc, tt_sched_fast(sc));
	mutex_unlock(&sc->lock);
}

/**
 * tt_sched_budget_visit() - the module's budget work visits the session
 * (budget.c; the visitor tt_sched_module_init() registers)
 * @s:      the session (the caller holds a reference).
 * @shrink: true: evict victims down to the budget in force when over it
 *          (its share may have shrunk); false: retry the prefetches
 *          waiting for room.
 */
void tt_sched_budget_visit(struct tt_ksession *s, bool shrink)
{
	struct tt_sched *sc = tt_sched_of(s);
	u64 total, g, lim, fast;
	unsigned int tries;

	mutex_lock(&sc->lock);
	if (!sc->closing) {
		if (shrink) {
			for (tries = 0; tries < 8; tries++) {
				lim = tt_budget_limit(s, &total, &g);
				fast = tt_sched_fast(sc);
				if (lim == TT_BUDGET_NONE || fast <= lim ||
				    !tt_sched_make_room(s, fast - lim, NULL, lim,
							true))
					break;
			}
			tt_sched_budget_stuck(s);
		} else {
			tt_sched_budget_retry(s);
		}
	}
	mutex_unlock(&sc->lock);
}

/*
 * The eviction of @sl, one slice (TT_SCHED_SLICE_BYTES) per invocation:
 * the first (EVICT_QUEUED) selects the chunks and starts the episode
 * (EVICTING), each moves the chunks from @ev_next on until the slice is
 * full and re-queues itself (@ev_cont) while chunks are left; the one that
 * finds none left, or the layer stopped (@abort, the session's stop flag,
 * closing, the mm gone), ends the eviction.
 */
static void tt_sched_evict_work(struct work_struct *work)
{
	struct tt_slayer *sl = container_of(work, struct tt_slayer, evict_work);
	struct tt_ksession *s = sl->s;
	struct tt_sched *sc = tt_sched_of(s);
	u64 *bytes, slice = 0, iter;
	unsigned int i, done;
	int idx, fast;
	bool have_mm, first = false, more = false;

	mutex_lock(&sc->lock);
	if (sc->closing)
		goto out_unlock;
	if (sl->state == TT_EP_EVICTING && sl->ev_cont && !sl->victim) {
		sl->ev_cont = false;		/* the next slice */
	} else if (sl->state == TT_EP_EVICT_QUEUED) {
		if (tt_sched_evict_wait_turn(sc, sl)) {
			tt_sched_queue(s, tt_evict_wq, &sl->evict_work);
			goto out_unlock;
		}
		sl->ev_fast = sc->cfg.fast_node;
		sl->ev_nr_slow = tt_sched_slow_nodes(sc, sl, sl->ev_slow);
		if (!sl->ev_nr_slow || tt_sched_select(sc, sl) ||
		    !sl->nr_chunks) {
			tt_sched_episode_end(sl);
			goto out_unlock;
		}
		sl->state = TT_EP_EVICTING;
		sl->mig_start = ktime_get_ns();
		sl->ev_next = 0;
		sl->ev_cont = false;
		sl->ev_elapsed = 0;
		sl->ev_bytes = NULL;
		first = true;
		if (sl->iter == sc->tl.iter_seq && tt_sched_find(sc, sl->id, &idx))
			tt_tl_evict_start(&sc->tl, idx, ktime_get_ns());
	} else {
		goto out_unlock;
	}
	iter = sl->iter;
	mutex_unlock(&sc->lock);

	have_mm = mmget_not_zero(s->mm);
	if (have_mm && first && sl->ev_fast < 0)
		sl->ev_bytes = kcalloc(2 * nr_node_ids, sizeof(*sl->ev_bytes),
				       GFP_KERNEL);
	bytes = sl->ev_bytes;
	for (i = sl->ev_next; have_mm && i < sl->nr_chunks; i++) {
		struct tt_chunk *c = &sl->chunks[i];
		struct tt_migrate_result res = {};
		int ret;

		if (atomic_read(&sl->abort) || atomic_read(&s->stop))
			break;
		if (slice >= TT_SCHED_SLICE_BYTES) {
			more = true;
			break;
		}
		slice += c->end - c->start;
		if (bytes)
			tt_sched_residency(s->mm, c->start, c->end, bytes,
					   bytes + nr_node_ids);
		ret = tt_sched_evict_chunk(s, sl, c, sl->ev_slow,
					   sl->ev_nr_slow, &res);
		c->moved = res.moved << PAGE_SHIFT;
		tt_sched_account(s, &res, sl->ev_slow[0]);

		mutex_lock(&sc->lock);
		sl->ev_elapsed += res.elapsed_ns;
		if (ret)
			tt_sched_forget_range(sc, sl, c->range_id);
		sl->evicted += c->moved;
		sc->counts.bytes_evicted += c->moved;
		tt_sched_count_slow(sc, sl, i);
		/* moved after the backward pass began: late as well */
		if (iter == sc->tl.iter_seq && tt_sched_find(sc, sl->id, &idx))
			tt_tl_late_add(&sc->tl, idx, c->moved);
		sl->ev_next = i + 1;
		mutex_unlock(&sc->lock);
	}
	if (have_mm)
		mmput(s->mm);

	mutex_lock(&sc->lock);
	if (more && !sc->closing && !atomic_read(&sl->abort) &&
	    !atomic_read(&s->stop)) {
		/* at the tail: the work queued meanwhile runs first */
		sl->ev_cont = true;
		if (!tt_sched_evict_wait_turn(sc, NULL))
			sc->ev_turn = sl;
		tt_sched_queue(s, tt_evict_wq, &sl->evict_work);
		goto out_unlock;
	}
	if (sc->ev_turn == sl)
		sc->ev_turn = NULL;
	done = sl->ev_next;
	fast = sl->ev_fast;
	if (fast < 0)
		fast = bytes ? tt_sched_majority_fast(bytes, sl->cpu_nid) :
			       sl->cpu_nid;
	if (fast < 0)
		fast = numa_node_id();
	kfree(bytes);
	sl->ev_bytes = NULL;
	/* the first node of the order: a full one spills to the next */
	tt_evlog_migration(s, TT_TRACE_EVICT, sl->id, iter, sl->evicted,
			   sl->mig_start, sl->ev_slow[0],
			   done < sl->nr_chunks ? TT_TRACE_F_STOPPED : 0);
	sl->nr_chunks = done;
	sl->fast_nid = fast;
	if (iter == sc->tl.iter_seq && tt_sched_find(sc, sl->id, &idx))
		tt_tl_evict_end(&sc->tl, idx, ktime_get_ns(), sl->evicted);
	tt_tl_rate_sample(&sc->tl, TT_TL_EVICT, sl->evicted, sl->ev_elapsed);
	if (!sl->evicted)
		tt_sched_episode_end(sl);
	else if (sl->pf_due && !sc->closing)
		tt_sched_queue_prefetch(s, sl);
	else
		sl->state = TT_EP_EVICTED;
out_unlock:
	mutex_unlock(&sc->lock);
	tt_session_put(s);
}

/*
 * Pages of a chunk's migration result that stayed off the target node
 * although present: busy, no room there, or a kind the engine cannot move.
 */
static u64 tt_sched_res_left(const struct tt_migrate_result *res)
{
	return res->skipped_busy + res->skipped_no_memory +
	       res->skipped_unsupported;
}

/*
 * Move chunk @c of @sl back to @sl->fast_nid in up to TT_SCHED_FETCH_PASSES
 * passes: a pass that leaves pages busy (another reference for a moment:
 * a per-CPU LRU batch, a reader in get_user_pages) or finds the node full
 * is followed, after a pause of 1, 2, 4 ms, by another over the whole
 * chunk (the pages already back cost a page-table walk), unless the
 * prefetch is told to stop (@sl->abort from a worker, the session's stop
 * flag). @res gets the sum of the passes; *@left the bytes of the last
 * pass that are still not on the node. Return: as tt_mover_migrate().
 */
static int tt_sched_fetch_chunk(struct tt_ksession *s, struct tt_slayer *sl,
				const struct tt_chunk *c, bool remote,
				struct tt_migrate_result *res, u64 *left)
{
	unsigned int pass;
	int ret = 0;

	*left = 0;
	for (pass = 0; pass < TT_SCHED_FETCH_PASSES; pass++) {
		struct tt_migrate_result r = {};

		if (pass) {
			if ((remote && atomic_read(&sl->abort)) ||
			    atomic_read(&s->stop) || fatal_signal_pending(current))
				break;
			usleep_range(1000 << (pass - 1), 2000 << (pass - 1));
		}
		ret = tt_mover_migrate(s, c->start, c->end, &sl->fast_nid, 1,
				       (remote ? TT_MIG_REMOTE : 0) |
				       TT_MIG_SPLIT_PARTIAL,
				       remote ? &s->stop : NULL, &r);
		tt_sched_account(s, &r, sl->fast_nid);
		res->moved += r.moved;
		res->elapsed_ns += r.elapsed_ns;
		*left = tt_sched_res_left(&r) << PAGE_SHIFT;
		if (ret || !*left || !(r.skipped_busy || r.skipped_no_memory))
			break;
	}
	return ret;
}

/*
 * Move the chunks from @sl->next_chunk on back to @sl->fast_nid; the
 * caller owns the episode (PREFETCHING). @remote: from a worker (the mm is
 * pinned by the caller and the session's stop flag is obeyed), else from
 * the session's own process. Returns the bytes moved; *@elapsed gets the
 * engine's time. A chunk the engine could not finish (stopped, out of
 * memory) stays the next one. From a worker, at most one slice
 * (TT_SCHED_SLICE_BYTES): *@more is set when chunks are left only for
 * that reason.
 */
static u64 tt_sched_fetch(struct tt_ksession *s, struct tt_slayer *sl,
			  bool remote, u64 *elapsed, bool *more)
{
	struct tt_sched *sc = tt_sched_of(s);
	u64 moved = 0, slice = 0;
	unsigned int i;

	*elapsed = 0;
	*more = false;
	for (i = sl->next_chunk; i < sl->nr_chunks; i++) {
		struct tt_chunk *c = &sl->chunks[i];
		struct tt_migrate_result res = {};
		u64 left = 0;
		int ret = 0;

		/* TT_SCHED_DEFER_LATE: the backward pass began */
		if (remote && atomic_read(&sl->abort))
			break;
		if (remote && slice >= TT_SCHED_SLICE_BYTES) {
			*more = true;
			break;
		}
		slice += c->end - c->start;
		if (c->moved) {
			/* the fast-tier budget: room for it first */
			mutex_lock(&sc->lock);
			ret = tt_sched_admit(s, sl, i, remote);
			mutex_unlock(&sc->lock);
			if (ret)
				break;
			ret = tt_sched_fetch_chunk(s, sl, c, remote, &res, &left);
			moved += res.moved << PAGE_SHIFT;
			*elapsed += res.elapsed_ns;
		}
		mutex_lock(&sc->lock);
		sc->counts.bytes_prefetched += res.moved << PAGE_SHIFT;
		if (!ret) {
			sl->returned += c->moved;
			sl->next_chunk = i + 1;
			sc->counts.prefetch_left_bytes += left;
			sl->pf_left += left;
		}
		mutex_unlock(&sc->lock);
		if (ret)
			break;
	}
	return moved;
}

/*
 * A prefetch returned (lock held): rate sample; when every chunk is back,
 * lateness feedback and the end of the episode, else (the engine failed
 * part-way) the rest stays EVICTED for the next rescue, unless closing.
 */
static void tt_sched_fetched(struct tt_sched *sc, struct tt_slayer *sl,
			     u64 moved, u64 elapsed)
{
	struct tt_ksession *s = container_of(sc, struct tt_ksession, sched);
	int idx;

	tt_evlog_migration(s, TT_TRACE_PREFETCH, sl->id, sl->iter, moved,
			   sl->mig_start, sl->fast_nid,
			   (sl->sync ? TT_TRACE_F_SYNC : 0) |
			   (sl->next_chunk < sl->nr_chunks ?
			    TT_TRACE_F_STOPPED : 0));
	tt_tl_rate_sample(&sc->tl, TT_TL_PREFETCH, moved, elapsed);
	if (sl->pf_left) {
		/* counted in prefetch_left_bytes as each chunk ended */
		tt_evlog_layer(s, TT_TRACE_LEFT_SLOW, sl->id, sl->iter,
			       sl->pf_left, ktime_get_ns(),
			       sl->sync ? TT_TRACE_F_SYNC : 0);
		sl->pf_left = 0;
	}
	if (sl->next_chunk < sl->nr_chunks && !sc->closing) {
		sl->state = TT_EP_EVICTED;
		sl->sync = false;
		/*
		 * Stopped by TT_SCHED_DEFER_LATE: once the layer's backward
		 * pass is over (it may have ended while this chunk moved),
		 * the rest comes back now.
		 */
		if (atomic_read(&sl->abort) &&
		    (sl->iter != sc->tl.iter_seq ||
		     !tt_sched_find(sc, sl->id, &idx) ||
		     (sc->tl.st.layers[idx].seen & TT_TL_S_BWD_END)))
			tt_sched_queue_prefetch(s, sl);
		return;
	}
	/* late for want of room in the budget: not the schedule's fault */
	if (sl->iter == sc->tl.iter_seq && !sl->bud_waited &&
	    tt_sched_find(sc, sl->id, &idx))
		tt_tl_prefetch_end(&sc->tl, idx, ktime_get_ns());
	tt_sched_episode_end(sl);
}

/*
 * The prefetch of @sl, one slice (TT_SCHED_SLICE_BYTES) per invocation:
 * the first (PREFETCH_QUEUED) starts it (PREFETCHING), each re-queues
 * itself (@pf_cont) while chunks are left for want of room in its slice;
 * the last ends it (tt_sched_fetched()). TT_SCHED_SYNC_LATE may take a
 * re-queued prefetch over (tt_sched_sync_fetch() clears @pf_cont).
 */
static void tt_sched_prefetch_work(struct work_struct *work)
{
	struct tt_slayer *sl = container_of(work, struct tt_slayer,
					    prefetch_work);
	struct tt_ksession *s = sl->s;
	struct tt_sched *sc = tt_sched_of(s);
	u64 moved = 0, elapsed = 0;
	bool more = false;
	int idx;

	mutex_lock(&sc->lock);
	if (sc->closing)
		goto out_unlock;
	if (sl->state == TT_EP_PREFETCHING && sl->pf_cont && !sl->sync) {
		sl->pf_cont = false;		/* the next slice */
	} else if (sl->state == TT_EP_PREFETCH_QUEUED) {
		if (tt_sched_prefetch_wait_turn(sc, sl)) {
			tt_sched_queue(s, tt_prefetch_wq, &sl->prefetch_work);
			goto out_unlock;
		}
		sl->state = TT_EP_PREFETCHING;
		sl->sync = false;
		sl->pf_cont = false;
		sl->pf_moved = 0;
		sl->pf_elapsed = 0;
		sl->pf_left = 0;
		sl->mig_start = ktime_get_ns();
		if (sl->iter == sc->tl.iter_seq &&
		    tt_sched_find(sc, sl->id, &idx))
			tt_tl_prefetch_start(&sc->tl, idx, ktime_get_ns());
	} else {
		goto out_unlock;
	}
	mutex_unlock(&sc->lock);

	/* A process that is gone has nothing to fetch back. */
	if (mmget_not_zero(s->mm)) {
		moved = tt_sched_fetch(s, sl, true, &elapsed, &more);
		mmput(s->mm);
	} else {
		sl->next_chunk = sl->nr_chunks;
	}

	mutex_lock(&sc->lock);
	sl->pf_moved += moved;
	sl->pf_elapsed += elapsed;
	if (more && !sc->closing && !atomic_read(&sl->abort) &&
	    !atomic_read(&s->stop)) {
		/* at the tail: the work queued meanwhile runs first */
		sl->pf_cont = true;
		if (!tt_sched_prefetch_wait_turn(sc, NULL))
			sc->pf_turn = sl;
		tt_sched_queue(s, tt_prefetch_wq, &sl->prefetch_work);
		goto out_unlock;
	}
	if (sc->pf_turn == sl)
		sc->pf_turn = NULL;
	tt_sched_fetched(sc, sl, sl->pf_moved, sl->pf_elapsed);
out_unlock:
	mutex_unlock(&sc->lock);
	tt_session_put(s);
}

/*
 * The late bytes of the layer's backward begin that are back now, as
 * TT_SCHED_SYNC_LATE fetched them before the call returns (lock held).
 */
static void tt_sched_count_sync(struct tt_sched *sc, struct tt_slayer *sl,
				u64 iter)
{
	u64 late, left = sl->state == TT_EP_IDLE ? 0 : tt_sched_outstanding(sl);
	int idx;

	if (iter != sc->tl.iter_seq || sl->synced_iter == iter ||
	    !tt_sched_find(sc, sl->id, &idx))
		return;
	sl->synced_iter = iter;
	late = sc->tl.st.layers[idx].x.late_bytes;
	if (late > left)
		sc->counts.sync_fetched_bytes += late - left;
}

/*
 * TT_SCHED_SYNC_LATE at a backward begin: take the layer's episode over
 * (waiting for a running eviction, which is told to stop, or a running
 * prefetch) and move what is still evicted back in the caller.
 */
static void tt_sched_sync_fetch(struct tt_ksession *s, struct tt_slayer *sl)
{
	struct tt_sched *sc = tt_sched_of(s);
	u64 moved, elapsed, iter;
	bool more;
	int idx;

	mutex_lock(&sc->lock);
	iter = sc->tl.iter_seq;
	for (;;) {
		switch (sl->state) {
		case TT_EP_EVICT_QUEUED:
			sl->state = TT_EP_IDLE;
			fallthrough;
		case TT_EP_IDLE:
			goto out_unlock;
		case TT_EP_EVICTING:
			atomic_set(&sl->abort, 1);
			mutex_unlock(&sc->lock);
			if (READ_ONCE(sl->victim))
				wait_event(sc->bud.wq, !READ_ONCE(sl->victim));
			else
				flush_work(&sl->evict_work);
			mutex_lock(&sc->lock);
			continue;
		case TT_EP_PREFETCHING:
			if (sl->sync)		/* another thread fetches it */
				goto out_unlock;
			if (sl->pf_cont) {
				/* between two slices: taken over here */
				sl->pf_cont = false;
				if (sc->pf_turn == sl)
					sc->pf_turn = NULL;
				break;
			}
			mutex_unlock(&sc->lock);
			flush_work(&sl->prefetch_work);
			mutex_lock(&sc->lock);
			continue;
		case TT_EP_PREFETCH_QUEUED:
		case TT_EP_EVICTED:
			/* A queued prefetch work finds the state changed. */
			break;
		}
		break;
	}
	sl->state = TT_EP_PREFETCHING;
	sl->sync = true;
	sl->mig_start = ktime_get_ns();
	sl->pf_left = 0;
	if (sl->iter == sc->tl.iter_seq && tt_sched_find(sc, sl->id, &idx) &&
	    !sc->tl.st.layers[idx].x.prefetch_start)
		tt_tl_prefetch_start(&sc->tl, idx, ktime_get_ns());
	mutex_unlock(&sc->lock);

	moved = tt_sched_fetch(s, sl, false, &elapsed, &more);

	mutex_lock(&sc->lock);
	tt_sched_fetched(sc, sl, moved, elapsed);
out_unlock:
	tt_sched_count_sync(sc, sl, iter);
	mutex_unlock(&sc->lock);
}

/*
 * min_migrate_kib: the plan's evictions smaller than that are not made,
 * the layers are dropped instead (lock held, right after the plan).
 */
static void tt_sched_min_size(struct tt_sched *sc)
{
	u64 min = (u64)tt_config_get(TT_CFG_MIN_MIGRATE_KIB) << 10;
	unsigned int i;

	for (i = 0; i < sc->tl.n; i++) {
		struct tt_tl_layer *l = &sc->tl.st.layers[i];
		struct tt_slayer *sl = l->priv;

		sl->below_min = min && (l->flags & TT_TL_L_PLANNED) &&
				l->final_bytes && l->final_bytes < min;
		if (sl->below_min) {
			l->final_bytes = 0;
			l->status = TT_POLICY_DROPPED;
		}
	}
}

/* TT_EV_ITER_BEGIN (lock held). */
static void tt_sched_iter_begin(struct tt_ksession *s, u64 now)
{
	struct tt_sched *sc = tt_sched_of(s);
	unsigned int i;

	/* Nothing of an earlier iteration stays evicted or saved one-shot. */
	for (i = 0; i < sc->tl.n; i++) {
		struct tt_slayer *sl = sc->tl.st.layers[i].priv;

		tt_sched_rescue(s, sl);
		tt_sched_forget(sc, sl);
	}
	tt_tl_iter_begin(&sc->tl, now);
	tt_sched_min_size(sc);
	tt_sched_dispatch(s);
}

/*
 * A layer event (lock held). Return 0 or -errno; *@sync gets the layer
 * when the caller must run tt_sched_sync_fetch() once the lock is dropped.
 */
/* Queue the eviction of @bytes of layer @sl's ranges (lock held). */
static void tt_sched_order_evict(struct tt_ksession *s, struct tt_slayer *sl,
				 u64 bytes)
{
	struct tt_sched *sc = tt_sched_of(s);

	sl->state = TT_EP_EVICT_QUEUED;
	sl->iter = sc->tl.iter_seq;
	sl->target = bytes;
	sl->cpu_nid = numa_node_id();
	sl->pf_due = false;
	atomic_set(&sl->abort, 0);
	tt_sched_queue(s, tt_evict_wq, &sl->evict_work);
}

/*
 * TT_SCHED_DYNAMIC's fallback after a forward end: the evictions it
 * ordered k forward positions late; a layer whose previous episode is
 * still out is skipped (lock held).
 */
static void tt_sched_delayed_evictions(struct tt_ksession *s)
{
	struct tt_sched *sc = tt_sched_of(s);
	unsigned int idx;
	u64 bytes;

	while (tt_tl_next_evict(&sc->tl, &idx, &bytes)) {
		struct tt_slayer *sl = sc->tl.st.layers[idx].priv;

		if (sl && sl->state == TT_EP_IDLE)
			tt_sched_order_evict(s, sl, bytes);
	}
}

/* The miss log entries written since the last call, as trace events. */
static void tt_sched_misses(struct tt_ksession *s, u64 now)
{
	struct tt_sched *sc = tt_sched_of(s);
	unsigned int n = sc->tl.miss_head - sc->misses_seen, i;
	struct tt_tl_miss m;

	for (i = min_t(unsigned int, n, TT_TL_MISSES); i-- > 0;)
		if (tt_tl_miss_get(&sc->tl, i, &m))
			tt_evlog_layer(s, TT_TRACE_MISS, m.layer, m.iter, m.bytes,
				       now, m.kind);
	sc->misses_seen = sc->tl.miss_head;
}

static int tt_sched_layer_event(struct tt_ksession *s, const struct tt_event *ev,
				u64 now, struct tt_slayer **sync)
{
	struct tt_sched *sc = tt_sched_of(s);
	int phase = ev->flags & TT_FWD ? TT_TL_FWD : TT_TL_BWD;
	int end = ev->type == TT_EV_LAYER_END;
	enum tt_tl_action act;
	struct tt_slayer *sl;
	u64 bytes, out, dropped;
	bool mine;
	int idx;

	sl = tt_sched_layer(s, ev->layer, &idx);
	if (IS_ERR(sl))
		return PTR_ERR(sl);
	dropped = sc->tl.counts.layers_dropped;
	act = tt_tl_layer_event(&sc->tl, idx, phase, end, now,
				sl->state == TT_EP_IDLE, &bytes);
	if (sc->tl.counts.layers_dropped != dropped)
		tt_evlog_layer(s, TT_TRACE_DROP, sl->id, sc->tl.iter_seq,
			       sc->tl.st.layers[idx].cur.saved, now,
			       sl->below_min ? TT_TRACE_F_MIN_SIZE : 0);
	/* An episode of this iteration: one the plan made for this pass. */
	mine = sl->state != TT_EP_IDLE && sl->iter == sc->tl.iter_seq;
	switch (act) {
	case TT_TL_ACT_EVICT:
		tt_sched_order_evict(s, sl, bytes);
		break;
	case TT_TL_ACT_FETCH:
		out = tt_sched_outstanding(sl);
		if (mine)
			tt_tl_bwd_check(&sc->tl, idx, sl->evicted, out);
		if (mine && out)
			tt_evlog_layer(s, TT_TRACE_LATE, sl->id, sc->tl.iter_seq,
				       out, now, 0);
		else if (sc->tl.st.layers[idx].seen & TT_TL_S_EVICT)
			/* this iteration's episode is over: all back in time */
			tt_tl_bwd_check(&sc->tl, idx,
					sc->tl.st.layers[idx].x.evicted_bytes, 0);
		if ((sc->cfg.flags & TT_SCHED_SYNC_LATE) && sl->state != TT_EP_IDLE)
			*sync = sl;
		else if (sc->cfg.flags & TT_SCHED_DEFER_LATE)
			tt_sched_settle(s, sl, true);
		else
			tt_sched_rescue(s, sl);
		break;
	case TT_TL_ACT_FORGET:
		tt_sched_rescue(s, sl);
		tt_sched_forget(sc, sl);
		break;
	case TT_TL_ACT_NONE:
		break;
	}
	if (phase == TT_TL_FWD && end)
		tt_sched_delayed_evictions(s);
	return 0;
}

/*
 * Is [@start, @end) covered by mappings of @mm (the caller's)? Return: 0,
 * -EFAULT (a hole) or -EINTR (a fatal signal while waiting for mmap_lock).
 * At most one step per vma (max_map_count of them).
 */
static int tt_sched_mapped(struct mm_struct *mm, unsigned long start,
			   unsigned long end)
{
	struct vm_area_struct *vma;
	int ret = 0;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	while (start < end) {
		vma = find_vma(mm, start);
		if (!vma || vma->vm_start > start) {
			ret = -EFAULT;
			break;
		}
		start = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}

/*
 * TT_EV_TENSOR_SAVED (lock held): the range is checked here, before
 * anything changes (Documentation/scheduler.md, "Saved tensors").
 */
static int tt_sched_saved(struct tt_ksession *s, const struct tt_event *ev)
{
	struct tt_sched *sc = tt_sched_of(s);
	bool persistent = ev->flags & TT_EV_PERSISTENT;
	unsigned long start, end;
	struct tt_slayer *sl;
	struct tt_srange *r;
	__u64 first, last;
	u64 held;
	int idx, ret;

	/* Inside the user address space, rounded inward to whole pages. */
	ret = tt_event_range(ev->addr, ev->len, PAGE_SIZE, TASK_SIZE, &first,
			     &last);
	if (ret)
		return ret;
	if (first == last) {
		sc->counts.tensors_ignored++;
		return 0;
	}
	start = first;
	end = last;
	if (sc->nr_ranges >= tt_config_get(TT_CFG_MAX_RANGES))
		return -ENOSPC;
	/* every byte mapped: its length is bounded by the caller's mappings */
	ret = tt_sched_mapped(s->mm, start, end);
	if (ret)
		return ret;
	/* overlapping tensors saved again and again: the sum must not wrap */
	if (check_add_overflow(sc->bud.held, (u64)(end - start), &held))
		return -EOVERFLOW;
	sl = tt_sched_layer(s, ev->layer, &idx);
	if (IS_ERR(sl))
		return PTR_ERR(sl);
	if (persistent) {
		/* Saved again (say every iteration): keep the one entry. */
		list_for_each_entry(r, &sl->ranges, link) {
			if (r->persistent && r->start == start && r->end == end) {
				r->uses++;
				sc->counts.tensors_saved++;
				return 0;
			}
		}
	}
	r = list_first_entry_or_null(&sc->free, struct tt_srange, link);
	if (r) {
		list_del(&r->link);
	} else {
		r = kmem_cache_alloc(tt_srange_cache, GFP_KERNEL_ACCOUNT);
		if (!r)
			return -ENOMEM;
	}
	r->start = start;
	r->end = end;
	r->id = ++sc->range_seq;
	r->persistent = persistent;
	r->taken = 0;
	r->arch_taken = 0;
	r->saved_ns = ktime_get_ns();
	r->uses = 1;
	list_add_tail(&r->link, &sl->ranges);
	sc->nr_ranges++;
	sc->bud.held = held;
	tt_budget_publish(s);
	/* over the budget: room is made once the event is done */
	if (tt_sched_over(s))
		sc->bud.room = true;
	if (!persistent)
		sl->nr_oneshot++;
	tt_tl_saved(&sc->tl, idx, end - start, persistent);
	sc->counts.tensors_saved++;
	return 0;
}

/* One event (lock held). */
static int tt_sched_event(struct tt_ksession *s, const struct tt_event *ev,
			  struct tt_slayer **sync)
{
	struct tt_sched *sc = tt_sched_of(s);
	bool stamped = ev->flags & TT_EV_TIMESTAMP;
	u64 now;
	int ret;

	ret = tt_event_check(ev);
	if (ret)
		return ret;
	now = stamped ? ev->ts_ns : ktime_get_ns();
	if (now < sc->last_ts) {
		if (stamped)
			return -EINVAL;
		now = sc->last_ts;	/* after a caller's stamp ahead of us */
	}

	switch (ev->type) {
	case TT_EV_ITER_BEGIN:
		tt_sched_iter_begin(s, now);
		break;
	case TT_EV_TENSOR_SAVED:
		ret = tt_sched_saved(s, ev);
		break;
	default:
		ret = tt_sched_layer_event(s, ev, now, sync);
		/*
		 * TT_SCHED_ANCHOR: the event moved the triggers;
		 * TT_SCHED_COUNT, the dynamic fallback: a backward begin
		 * released some. Look again.
		 */
		if (!ret && (sc->tl.anchor || sc->tl.count || sc->tl.fallback))
			tt_sched_dispatch(s);
		break;
	}
	if (sc->tl.miss_head != sc->misses_seen)
		tt_sched_misses(s, now);
	if (ret)
		return ret;
	sc->last_ts = now;
	sc->counts.events++;
	tt_evlog_sched_event(s, ev, now, sc->tl.iter_seq);
	return 0;
}

/**
 * tt_sched_events() - TT_IOC_EVENT and one piece of TT_IOC_EVENTS
 * @s:    the session.
 * @ev:   @n events, a kernel copy.
 * @n:    number of events.
 * @done: out: events processed before the first error (@n on success).
 *
 * Return: 0 or the error of the first event rejected (see TT_IOC_EVENT).
 */
int tt_sched_events(struct tt_ksession *s, const struct tt_event *ev,
		    unsigned int n, unsigned int *done)
{
	struct tt_sched *sc = tt_sched_of(s);
	struct tt_slayer *sync;
	int ret = 0;

	*done = 0;
	mutex_lock(&sc->lock);
	while (*done < n) {
		sync = NULL;
		ret = tt_sched_event(s, &ev[*done], &sync);
		tt_sched_budget_released(s);
		if (ret)
			break;
		(*done)++;
		if (sync) {
			mutex_unlock(&sc->lock);
			tt_sched_sync_fetch(s, sync);
			mutex_lock(&sc->lock);
		}
		if (sc->bud.room) {
			sc->bud.room = false;
			mutex_unlock(&sc->lock);
			tt_sched_budget_room(s);
			mutex_lock(&sc->lock);
		}
	}
	tt_sched_peak(sc, tt_sched_fast(sc));
	mutex_unlock(&sc->lock);
	return ret;
}

/**
 * tt_sched_cfg_set() - TT_IOC_SET_SCHED
 * @s:   the session.
 * @req: the request.
 *
 * Return: 0, -EOPNOTSUPP, -EINVAL or -ENODEV (nothing changed then).
 */
int tt_sched_cfg_set(struct tt_ksession *s, const struct tt_ioc_sched *req)
{
	struct tt_sched *sc = tt_sched_of(s);
	int ret;

	if ((req->valid & ~TT_SCHED_SET_ALL) ||
	    (req->flags & ~TT_SCHED_FLAGS_ALL) ||
	    (!(req->valid & TT_SCHED_SET_BUDGET) && req->budget_mib))
		return -EOPNOTSUPP;
	/* the reference semantics exclude every extension */
	if ((req->valid & TT_SCHED_SET_FLAGS) &&
	    (req->flags & TT_SCHED_REFERENCE) &&
	    (req->flags & TT_SCHED_EXTENSIONS))
		return -EINVAL;
	if ((req->valid & TT_SCHED_SET_PROFILE) &&
	    tt_config_check(TT_CFG_PROFILE_ITERS, req->profile_iters))
		return -EINVAL;
	if ((req->valid & TT_SCHED_SET_RATES) && (!req->er_bps || !req->pr_bps))
		return -EINVAL;
	if (req->valid & TT_SCHED_SET_NODES) {
		if (req->slow_node != -1) {
			ret = tt_tier_node_check(req->slow_node);
			if (ret)
				return ret;
		}
		if (req->fast_node != -1) {
			ret = tt_tier_node_check(req->fast_node);
			if (ret)
				return ret;
		}
	}

	mutex_lock(&sc->lock);
	if (req->valid & TT_SCHED_SET_FLAGS) {
		sc->cfg.flags = req->flags;
		tt_tl_set_modes(&sc->tl, req->flags);
	}
	if (req->valid & TT_SCHED_SET_PROFILE) {
		sc->cfg.profile_iters = req->profile_iters;
		sc->tl.profile_iters = req->profile_iters;
	}
	if (req->valid & TT_SCHED_SET_STAY) {
		sc->cfg.stay_ns = req->stay_ns;
		sc->tl.stay_ns = req->stay_ns;
	}
	if (req->valid & TT_SCHED_SET_RATES)
		tt_tl_set_rates(&sc->tl, req->er_bps, req->pr_bps);
	if (req->valid & TT_SCHED_SET_NODES) {
		sc->cfg.slow_node = req->slow_node;
		sc->cfg.fast_node = req->fast_node;
	}
	if (req->valid & TT_SCHED_SET_BUDGET)
		WRITE_ONCE(sc->bud.own, (u64)req->budget_mib << 20);
	mutex_unlock(&sc->lock);
	if (req->valid & (TT_SCHED_SET_BUDGET | TT_SCHED_SET_FLAGS)) {
		/* lowered: room now; raised: the waiting ones may fit */
		tt_sched_budget_room(s);
		mutex_lock(&sc->lock);
		tt_sched_budget_retry(s);
		mutex_unlock(&sc->lock);
		if (tt_config_get(TT_CFG_BUDGET_MIB))
			tt_budget_kick();	/* the shares changed */
	}
	return 0;
}

/**
 * tt_sched_cfg_get() - TT_IOC_GET_SCHED
 * @s:   the session.
 * @out: the settings, with every TT_SCHED_SET_* bit in @out->valid.
 */
void tt_sched_cfg_get(struct tt_ksession *s, struct tt_ioc_sched *out)
{
	struct tt_sched *sc = tt_sched_of(s);

	memset(out, 0, sizeof(*out));
	out->valid = TT_SCHED_SET_ALL;
	mutex_lock(&sc->lock);
	out->flags = sc->cfg.flags;
	out->profile_iters = sc->cfg.profile_iters;
	out->stay_ns = sc->cfg.stay_ns;
	out->er_bps = sc->tl.er_bps;
	out->pr_bps = sc->tl.pr_bps;
	out->slow_node = sc->cfg.slow_node;
	out->fast_node = sc->cfg.fast_node;
	out->budget_mib = sc->bud.own >> 20;
	mutex_unlock(&sc->lock);
}

/**
 * tt_sched_nr_layers() - layers the scheduler knows now
 * @s: the session.
 *
 * Return: the number of layer ids seen.
 */
unsigned int tt_sched_nr_layers(struct tt_ksession *s)
{
	struct tt_sched *sc = tt_sched_of(s);
	unsigned int n;

	mutex_lock(&sc->lock);
	n = sc->tl.n;
	mutex_unlock(&sc->lock);
	return n;
}

static u32 tt_sched_status(const struct tt_tl_layer *l)
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
 * tt_sched_layers_from() - the scheduler's per-layer view from a position
 * @s:     the session.
 * @from:  index of the first layer (in layer id order) to copy.
 * @info:  out: up to @max layers from @from on.
 * @max:   elements of @info.
 * @known: out: the number of layers known.
 *
 * Return: the number of elements of @info filled.
 */
unsigned int tt_sched_layers_from(struct tt_ksession *s, unsigned int from,
				  struct tt_layer_info *info, unsigned int max,
				  unsigned int *known)
{
	struct tt_sched *sc = tt_sched_of(s);
	unsigned int i, n;

	mutex_lock(&sc->lock);
	n = from < sc->tl.n ? min(max, sc->tl.n - from) : 0;
	for (i = 0; i < n; i++) {
		const struct tt_tl_layer *l = &sc->tl.st.layers[from + i];
		struct tt_layer_info *o = &info[i];

		memset(o, 0, sizeof(*o));
		o->layer = l->id;
		o->status = tt_sched_status(l);
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
	*known = sc->tl.n;
	mutex_unlock(&sc->lock);
	return n;
}

/**
 * tt_sched_layers() - TT_IOC_LAYERS
 * @s:     the session.
 * @info:  out: up to @max layers, in layer id order.
 * @max:   elements of @info.
 * @known: out: the number of layers known.
 *
 * Return: the number of elements of @info filled.
 */
unsigned int tt_sched_layers(struct tt_ksession *s, struct tt_layer_info *info,
			     unsigned int max, unsigned int *known)
{
	return tt_sched_layers_from(s, 0, info, max, known);
}

/**
 * tt_sched_resident() - the saved tensors the scheduler holds, by tier
 * @s:    the session.
 * @held: out: bytes of every saved range held (one-shot and persistent).
 * @slow: out: bytes of them evicted and not yet brought back.
 */
void tt_sched_resident(struct tt_ksession *s, u64 *held, u64 *slow)
{
	struct tt_sched *sc = tt_sched_of(s);
	const struct tt_srange *r;
	u64 h = 0, o = 0;
	unsigned int i;

	mutex_lock(&sc->lock);
	for (i = 0; i < sc->tl.n; i++) {
		const struct tt_slayer *sl = sc->tl.st.layers[i].priv;

		list_for_each_entry(r, &sl->ranges, link)
			h += r->end - r->start;
		if (sl->state != TT_EP_IDLE)
			o += tt_sched_outstanding(sl);
	}
	mutex_unlock(&sc->lock);
	*held = h;
	*slow = min(o, h);
}

/**
 * tt_sched_stats() - the scheduler's counters for TT_IOC_STATS
 * @s:   the session.
 * @out: out.
 */
void tt_sched_stats(struct tt_ksession *s, struct tt_sched_stats *out)
{
	struct tt_sched *sc = tt_sched_of(s);
	const struct tt_tl_counts *tc = &sc->tl.counts;
	u64 lim, total, g;
	struct tt_tl_miss m;

	mutex_lock(&sc->lock);
	out->iterations = tc->iterations;
	out->events = sc->counts.events;
	out->tensors_saved = sc->counts.tensors_saved;
	out->tensors_ignored = sc->counts.tensors_ignored;
	out->layers_accepted = tc->layers_accepted;
	out->layers_modified = tc->layers_modified;
	out->layers_dropped = tc->layers_dropped;
	out->layers_unknown = tc->layers_unknown;
	out->bytes_evicted = sc->counts.bytes_evicted;
	out->bytes_prefetched = sc->counts.bytes_prefetched;
	out->ontime_bytes = tc->ontime_bytes;
	out->late_bytes = tc->late_bytes;
	out->late_count = tc->late_count;
	out->sync_fetched_bytes = sc->counts.sync_fetched_bytes;
	out->prefetch_left_bytes = sc->counts.prefetch_left_bytes;
	out->reprofiles = tc->reprofiles;
	out->er_bps = sc->tl.er_bps;
	out->pr_bps = sc->tl.pr_bps;
	out->pinned_bytes = tt_hint_bytes(&sc->hints, TT_HINT_PIN_FAST);
	out->archived_bytes = tt_hint_bytes(&sc->hints, TT_HINT_ARCHIVE);
	out->count_ahead = sc->tl.count || sc->tl.dynamic ?
			   tt_tl_ahead_max(&sc->tl) : 0;
	out->count_released = sc->tl.counts.count_released;
	out->dyn_signatures = tt_tl_signatures(&sc->tl);
	out->dyn_predicted = sc->tl.counts.dyn_predicted;
	out->dyn_mispredicted = sc->tl.counts.dyn_mispredicted;
	out->dyn_fallback = sc->tl.counts.dyn_fallback;
	out->dyn_misses = sc->tl.counts.dyn_misses;
	out->last_miss_iter = 0;
	out->last_miss_layer = 0;
	out->last_miss_kind = 0;
	if (tt_tl_miss_get(&sc->tl, 0, &m)) {
		out->last_miss_iter = m.iter;
		out->last_miss_layer = m.layer;
		out->last_miss_kind = m.kind;
	}
	lim = tt_budget_limit(s, &total, &g);
	out->budget_bytes = lim == TT_BUDGET_NONE ? 0 : lim;
	out->fast_registered_bytes = tt_sched_fast(sc);
	out->fast_peak_bytes = sc->bud.counts.peak;
	out->victims = sc->bud.counts.victims;
	out->victim_bytes = sc->bud.counts.victim_bytes;
	out->victim_archived_bytes = sc->bud.counts.victim_archived;
	out->victims_skipped_pages = sc->bud.counts.skipped_pages;
	out->budget_waits = sc->bud.counts.waits;
	out->budget_overruns = sc->bud.counts.overruns;
	out->heat_wf = sc->bud.w.f;
	out->heat_wr = sc->bud.w.r;
	out->heat_ws = sc->bud.w.s;
	out->heat_wl = sc->bud.w.l;
	out->kmem_bytes = sc->kmem;
	mutex_unlock(&sc->lock);
}

/* MiB/s to bytes/s. */
static u64 tt_mbps(unsigned int mbps)
{
	return (u64)mbps << 20;
}

/*
 * Room for one more change of the hint set (lock held): 0, -ENOSPC or
 * -ENOMEM.
 */
static int tt_sched_hint_room(struct tt_sched *sc)
{
	unsigned int lim = tt_config_get(TT_CFG_MAX_RANGES);
	struct tt_hint_iv *iv;
	unsigned int cap;

	if (sc->hints.n + 2 <= sc->hints.cap)
		return 0;
	if (sc->hints.n + 2 > lim)
		return -ENOSPC;
	/* doubling, never past max_ranges */
	cap = min(max(16U, 2 * sc->hints.cap), lim);
	iv = kvmalloc_array(cap, sizeof(*iv), TT_SCHED_GFP);
	if (!iv)
		return -ENOMEM;
	if (sc->hints.n)
		memcpy(iv, sc->hints.iv, sc->hints.n * sizeof(*iv));
	kvfree(sc->hints.iv);
	sc->kmem -= min_t(u64, sc->kmem, (u64)sc->hints.cap * sizeof(*iv));
	sc->hints.iv = iv;
	sc->hints.cap = cap;
	sc->kmem += (u64)cap * sizeof(*iv);
	return 0;
}

/*
 * A WILL_USE or PIN_FAST hint on [@start, @end) (lock held): the
 * intervals hinted TT_HINT_ARCHIVE it overlaps lose TT_HINT_F_OUT (their
 * plain pages are coming back: the next victim round sends them out
 * again).
 */
static void tt_sched_hint_back(struct tt_sched *sc, u64 start, u64 end)
{
	unsigned int i;

	for (i = 0; i < sc->hints.n; i++)
		if (sc->hints.iv[i].end > start && sc->hints.iv[i].start < end)
			sc->hints.iv[i].flags &= ~TT_HINT_F_OUT;
}

/**
 * tt_sched_hint() - TT_IOC_HINT
 * @s:   the session.
 * @req: the request.
 *
 * PIN_FAST and ARCHIVE are remembered for the range (whole pages, rounded
 * outward) and skipped by every later eviction; RETIRE ends them and
 * forgets the tensors the range overlaps. Every hint settles the episodes
 * of the layers whose tensors the range overlaps: a queued eviction is
 * dropped, a running one stops, what is evicted comes back. WILL_USE and
 * PIN_FAST then move the range's plain pages (outside the saved ranges,
 * where mapped) to the session's fast node, in the calling thread, before
 * returning; ARCHIVE's plain pages leave at the next victim round
 * (tt_sched_archive_plain()).
 *
 * Return: 0 or a negative errno (see TT_IOC_HINT); nothing changes on an
 * error but -EINTR and -ENOSPC, which come after the hint was recorded
 * (from moving the plain pages).
 */
int tt_sched_hint(struct tt_ksession *s, const struct tt_ioc_hint *req)
{
	struct tt_sched *sc = tt_sched_of(s);
	struct tt_migrate_result res = {};
	bool back = req->hint & (TT_HINT_WILL_USE | TT_HINT_PIN_FAST);
	struct tt_hint_iv *plain = NULL;
	u32 h = req->hint;
	__u64 start, end;
	long nplain = 0;
	unsigned int i;
	int ret, fast;

	ret = tt_hint_check(req, PAGE_SIZE, TASK_SIZE, &start, &end);
	if (ret)
		return ret;

	mutex_lock(&sc->lock);
	if (h & (TT_HINT_PIN_FAST | TT_HINT_ARCHIVE | TT_HINT_RETIRE)) {
		ret = tt_sched_hint_room(sc);
		if (ret)
			goto out;
	}
	if (back) {
		nplain = tt_sched_plain_pieces(sc, start, end, 0, &plain);
		if (nplain < 0) {
			ret = nplain;
			goto out;
		}
		tt_sched_hint_back(sc, start, end);
	}
	if (h & (TT_HINT_PIN_FAST | TT_HINT_ARCHIVE | TT_HINT_RETIRE)) {
		if (h & TT_HINT_RETIRE)
			tt_hint_clear(&sc->hints, start, end);
		else
			tt_hint_set(&sc->hints, start, end,
				    h & (TT_HINT_PIN_FAST | TT_HINT_ARCHIVE));
	}
	for (i = 0; i < sc->tl.n; i++) {
		struct tt_slayer *sl = sc->tl.st.layers[i].priv;
		struct tt_srange *r, *tmp;
		bool hit = false;

		list_for_each_entry_safe(r, tmp, &sl->ranges, link) {
			if (r->end <= start || r->start >= end)
				continue;
			hit = true;
			if (h & TT_HINT_RETIRE)
				tt_sched_forget_entry(sc, sl, r);
		}
		if (hit)
			tt_sched_rescue(s, sl);
		cond_resched();
	}
	tt_sched_budget_released(s);
	fast = sc->cfg.fast_node >= 0 ? sc->cfg.fast_node : numa_node_id();
	mutex_unlock(&sc->lock);
	/* a CPU node without memory (or offline) has nothing to take them */
	if (back && nplain && !tt_tier_node_check(fast)) {
		ret = tt_sched_plain_move(s, plain, nplain, &fast, 1, true,
					  &res);
		if (!ret && res.skipped_no_memory)
			ret = -ENOSPC;
	}
	kvfree(plain);
	return ret;
out:
	mutex_unlock(&sc->lock);
	kvfree(plain);
	return ret;
}

/**
 * tt_sched_init() - the scheduler of a new session, from the module
 * parameters; allocates nothing (the layer table grows on first use)
 * @s: the session.
 */
void tt_sched_init(struct tt_ksession *s)
{
	struct tt_sched *sc = tt_sched_of(s);

	mutex_init(&sc->lock);
	/* TT_SCHED_DEFAULT_FLAGS unless a flag parameter was changed */
	sc->cfg.flags = (tt_config_get(TT_CFG_SYNC_LATE) ? TT_SCHED_SYNC_LATE : 0) |
			(tt_config_get(TT_CFG_ANCHOR) ? TT_SCHED_ANCHOR : 0) |
			(tt_config_get(TT_CFG_ALAP) ? TT_SCHED_ALAP : 0) |
			(tt_config_get(TT_CFG_DEFER_LATE) ? TT_SCHED_DEFER_LATE : 0) |
			(tt_config_get(TT_CFG_MERGE) ? TT_SCHED_MERGE : 0) |
			(tt_config_get(TT_CFG_COUNT) ? TT_SCHED_COUNT : 0) |
			(tt_config_get(TT_CFG_DYNAMIC) ? TT_SCHED_DYNAMIC : 0);
	sc->cfg.profile_iters = tt_config_get(TT_CFG_PROFILE_ITERS);
	sc->cfg.stay_ns = (u64)tt_config_get(TT_CFG_STAY_TIME_US) * NSEC_PER_USEC;
	sc->cfg.slow_node = -1;
	sc->cfg.fast_node = -1;
	tt_tl_init(&sc->tl, PAGE_SIZE, sc->cfg.profile_iters, sc->cfg.stay_ns,
		   tt_mbps(tt_config_get(TT_CFG_ER_SEED_MBPS)),
		   tt_mbps(tt_config_get(TT_CFG_PR_SEED_MBPS)));
	/* the timeline's modes are the flag bits themselves */
	BUILD_BUG_ON((TT_TL_MODE_OFF ^ TT_SCHED_OFF) |
		     (TT_TL_MODE_ANCHOR ^ TT_SCHED_ANCHOR) |
		     (TT_TL_MODE_ALAP ^ TT_SCHED_ALAP) |
		     (TT_TL_MODE_COUNT ^ TT_SCHED_COUNT) |
		     (TT_TL_MODE_DYNAMIC ^ TT_SCHED_DYNAMIC));
	/* and its miss kinds the trace flags */
	BUILD_BUG_ON((TT_TL_MISS_NEW ^ TT_TRACE_F_MISS_NEW) |
		     (TT_TL_MISS_PREDICT ^ TT_TRACE_F_MISS_PREDICT) |
		     (TT_TL_MISS_LATE ^ TT_TRACE_F_MISS_LATE));
	tt_tl_set_modes(&sc->tl, sc->cfg.flags);
	INIT_LIST_HEAD(&sc->free);
	hrtimer_init(&sc->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	sc->timer.function = tt_sched_timer_fn;
	INIT_WORK(&sc->timer_work, tt_sched_timer_work);
	tt_budget_join(s);
}

static void tt_sched_free_ranges(struct list_head *list)
{
	struct tt_srange *r, *tmp;

	/* up to max_ranges entries (2^20): let others run meanwhile */
	list_for_each_entry_safe(r, tmp, list, link) {
		kmem_cache_free(tt_srange_cache, r);
		cond_resched();
	}
	INIT_LIST_HEAD(list);
}

/**
 * tt_sched_close() - stop the scheduler of a closing session and free it
 * @s: the session; its stop flag is already set, no ioctl can run.
 *
 * Cancels the timer and the work items not started, waits for the running
 * ones (their migrations stop at the next batch) and frees everything. The
 * mm may be gone already: nothing here touches it.
 */
void tt_sched_close(struct tt_ksession *s)
{
	struct tt_sched *sc = tt_sched_of(s);
	unsigned int i;

	mutex_lock(&sc->lock);
	sc->closing = true;
	mutex_unlock(&sc->lock);
	/* no budget visit holds the session after this; its share is free */
	tt_budget_leave(s);

	/* The timer work re-arms nothing once closing is set. */
	hrtimer_cancel(&sc->timer);
	cancel_work_sync(&sc->timer_work);

	/* The layer table changes only in ioctls: none can run now. */
	for (i = 0; i < sc->tl.n; i++) {
		struct tt_slayer *sl = sc->tl.st.layers[i].priv;

		if (cancel_work_sync(&sl->evict_work))
			tt_session_put(s);
		if (cancel_work_sync(&sl->prefetch_work))
			tt_session_put(s);
		/* an eviction cancelled between two slices */
		kfree(sl->ev_bytes);
		sl->ev_bytes = NULL;
	}
	/* victim evictions are made by work items or ioctls: none left */
	wait_event(sc->bud.wq, !READ_ONCE(sc->bud.busy));
	for (i = 0; i < sc->tl.n; i++) {
		struct tt_slayer *sl = sc->tl.st.layers[i].priv;

		tt_sched_free_ranges(&sl->ranges);
		tt_sched_chunks_free(sc, sl);
		kfree(sl);
	}
	kvfree(sc->bud.items);
	kvfree(sc->bud.refs);
	sc->bud.items = NULL;
	sc->bud.refs = NULL;
	sc->bud.cap = 0;
	tt_sched_free_ranges(&sc->free);
	kvfree(sc->hints.iv);
	sc->hints.iv = NULL;
	sc->hints.n = 0;
	sc->hints.cap = 0;
	tt_sched_free_storage(&sc->tl.st);
	sc->tl.n = 0;
	sc->tl.st.cap = 0;
	mutex_destroy(&sc->lock);
}

/**
 * tt_sched_module_init() - create the worker pools and the range cache,
 * register the pools' change hooks (TT_CFG_EVICT_WORKERS,
 * TT_CFG_PREFETCH_WORKERS)
 *
 * Return: 0 or -ENOMEM.
 */
int tt_sched_module_init(void)
{
	tt_srange_cache = KMEM_CACHE(tt_srange, 0);
	if (!tt_srange_cache)
		return -ENOMEM;
	kernel_param_lock(THIS_MODULE);
	tt_evict_wq = alloc_workqueue("tiertrain_evict", WQ_UNBOUND,
				      tt_config_get(TT_CFG_EVICT_WORKERS));
	tt_prefetch_wq = alloc_workqueue("tiertrain_prefetch", WQ_UNBOUND,
					 tt_config_get(TT_CFG_PREFETCH_WORKERS));
	kernel_param_unlock(THIS_MODULE);
	if (!tt_evict_wq || !tt_prefetch_wq) {
		tt_sched_module_exit();
		return -ENOMEM;
	}
	tt_config_hook(TT_CFG_EVICT_WORKERS, tt_sched_pools_resize);
	tt_config_hook(TT_CFG_PREFETCH_WORKERS, tt_sched_pools_resize);
	tt_budget_visitor(tt_sched_budget_visit);
	return 0;
}

/**
 * tt_sched_module_exit() - remove the hooks, destroy the pools and the
 * cache; every session is gone
 */
void tt_sched_module_exit(void)
{
	struct workqueue_struct *ewq, *pwq;

	tt_config_unhook(TT_CFG_EVICT_WORKERS, tt_sched_pools_resize);
	tt_config_unhook(TT_CFG_PREFETCH_WORKERS, tt_sched_pools_resize);
	tt_budget_visitor(NULL);
	kernel_param_lock(THIS_MODULE);
	ewq = tt_evict_wq;
	pwq = tt_prefetch_wq;
	tt_evict_wq = NULL;
	tt_prefetch_wq = NULL;
	kernel_param_unlock(THIS_MODULE);
	if (ewq)
		destroy_workqueue(ewq);
	if (pwq)
		destroy_workqueue(pwq);
	kmem_cache_destroy(tt_srange_cache);
	tt_srange_cache = NULL;
}
