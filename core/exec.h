/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * exec.h - the executor: a session's whole episode state machine, written
 * once for the kernel module (kmod/sched.c) and the move_pages backend's
 * userspace scheduler (lib/usched.c).
 *
 * Pure C like timeline.c: no includes besides the uapi header and core/'s
 * own, no threads, no allocation of its own, no library calls. Everything
 * that touches the world goes through struct tt_exec_ops, which each side
 * fills in (the way DAMON's core drives struct damon_operations): the
 * clock, the lock, work items (one evict and one prefetch item per layer),
 * the prefetch timer, moving a range of memory, residency, memory for the
 * executor's arrays and objects, trace events, the fast-tier budget's
 * module-wide side, rescheduling points and stop checks.
 *
 * What the executor owns (Documentation/scheduler.md describes the whole):
 * the saved tensors of each layer (struct tt_exec_range), the episodes
 * (IDLE -> EVICT_QUEUED -> EVICTING -> EVICTED -> PREFETCH_QUEUED ->
 * PREFETCHING -> IDLE, struct tt_exec_layer), the order and chunking of
 * evictions and prefetches, late accounting and the synchronous fetch
 * (TT_SCHED_SYNC_LATE), the hints' effect on episodes, the fast-tier
 * budget's accounts, victims, room making and admission, and the
 * counters, status and per-layer reports. It drives the timeline
 * (timeline.h), which decides.
 *
 * Locking contract. The executor has one lock, taken and dropped only
 * through ops->lock / ops->unlock (a sleeping lock: the kernel's mutex, a
 * pthread mutex). Every tt_exec_* entry point below is called WITHOUT it
 * unless its comment says "(lock held)"; the entry points take it, and
 * drop it only while memory moves (ops->move, ops->move_plain), while
 * waiting for a work item (ops->wait) and around ops->residency. No op is
 * called with the lock held unless its comment below says so.
 *
 * Work items. Each layer has two: its eviction and its prefetch. The
 * executor asks for one with ops->queue(x, l, TT_EXEC_WORK_*); the side
 * runs tt_exec_evict_step() / tt_exec_prefetch_step() for it later, from
 * a worker thread, exactly once per successful queue (a queue of an item
 * still pending is one run). A step that finds the state changed returns
 * without doing anything, so nothing is ever cancelled from the event
 * path. A step moves at most one slice (TT_EXEC_SLICE_BYTES) and queues
 * itself again for the rest.
 *
 * Timer. ops->timer_arm(x, t) asks for tt_exec_timer() to be called at or
 * after absolute time @t (the clock of ops->now); a later arm replaces an
 * earlier one.
 *
 * Time. Nanoseconds of one monotonic clock (ops->now), as timeline.h.
 */
#ifndef TT_EXEC_H
#define TT_EXEC_H

#include <linux/tiertrain.h>

#include "heat.h"
#include "hint.h"
#include "timeline.h"

/* Errors (negative returns), errno values as in the uapi's prose. */
#define TT_EXEC_EFAULT		14
#define TT_EXEC_EINTR		4
#define TT_EXEC_ENOMEM		12
#define TT_EXEC_ENOSPC		28
#define TT_EXEC_EINVAL		22
#define TT_EXEC_EAGAIN		11
#define TT_EXEC_EOPNOTSUPP	95
#define TT_EXEC_EOVERFLOW	75
#define TT_EXEC_ESRCH		3

/*
 * One slice of a work item: the chunks one step moves at most, by their
 * span (at least one chunk). A step with more to move queues itself again
 * at the tail of its pool, so every item queued meanwhile runs in between.
 */
#define TT_EXEC_SLICE_BYTES	(16ULL << 20)

/* Loops over a session's ranges call ops->resched every this many. */
#define TT_EXEC_RESCHED_EVERY	256U

/* First size of the layer table; it doubles up to max_layers. */
#define TT_EXEC_LAYERS_FIRST	16

/* Heat items the budget's scratch may hold: twice max_ranges' maximum. */
#define TT_EXEC_SCRATCH_MAX	(2UL << 20)

/* The budget in force when there is none (as kmod/budget.h). */
#define TT_EXEC_BUDGET_NONE	(~0ULL)

/* The most slow nodes an eviction spills over (as TT_MIG_TARGETS). */
#define TT_EXEC_TARGETS		8

/* No node (NUMA_NO_NODE). */
#define TT_EXEC_NO_NODE		(-1)

/*
 * struct tt_exec_link - a doubly linked list entry (or head), circular;
 * the executor's own, so that core/ needs neither <linux/list.h> nor libc.
 */
struct tt_exec_link {
	struct tt_exec_link *next;
	struct tt_exec_link *prev;
};

/**
 * struct tt_exec_range - one saved tensor, rounded inward to whole pages
 * @link:       on its layer's list (report order) or the free list.
 * @start:      first address.
 * @end:        end address (exclusive).
 * @id:         unique in the session, to find the entry again.
 * @taken:      bytes of its pages outside every hint that the layer's
 *              episode holds (cut by the plan or by victims), in address
 *              order; 0 when the layer has no episode.
 * @arch_taken: the same for its pages hinted TT_HINT_ARCHIVE (victims).
 * @saved_ns:   when it was saved.
 * @uses:       how many times it was saved (a persistent tensor saved
 *              again each iteration): the heat's access count.
 * @persistent: kept across iterations (TT_EV_PERSISTENT).
 *
 * Allocated by ops->range_alloc, recycled through the executor's free
 * list, given back by ops->range_free only in tt_exec_free().
 */
struct tt_exec_range {
	struct tt_exec_link link;
	unsigned long long start;
	unsigned long long end;
	unsigned long long id;
	unsigned long long taken;
	unsigned long long arch_taken;
	unsigned long long saved_ns;
	unsigned int uses;
	unsigned int persistent;
};

/* The states of a layer's episode. */
enum tt_exec_state {
	TT_EXEC_IDLE,
	TT_EXEC_EVICT_QUEUED,
	TT_EXEC_EVICTING,
	TT_EXEC_EVICTED,
	TT_EXEC_PREFETCH_QUEUED,
	TT_EXEC_PREFETCHING,
};

/* Work items of a layer (ops->queue, ops->wait). */
#define TT_EXEC_WORK_EVICT	0
#define TT_EXEC_WORK_PREFETCH	1
/* ops->wait only: until the layer's victim eviction is over. */
#define TT_EXEC_WORK_VICTIM	2

/**
 * struct tt_exec_layer - the executor's side of one layer (the timeline's
 * entry points to it through its priv); lives until tt_exec_free()
 * @id:            layer id.
 * @ranges:        struct tt_exec_range, in report order.
 * @vlink:         a victim round's list.
 * @nr_oneshot:    entries of @ranges that are one-shot.
 * @state:         enum tt_exec_state of the layer's episode.
 * @iter:          iteration (timeline iter_seq) of the episode.
 * @target:        bytes the plan asked to evict.
 * @cpu_nid:       node the caller ran on at the forward end.
 * @fast_nid:      node the prefetch moves the chunks to.
 * @chunks:        what the eviction selected (@nr_chunks entries).
 * @counted:       per chunk, the registered bytes it holds on the slow
 *                 tier as the budget counts them until its prefetch admits
 *                 it.
 * @chunk_cap:     entries @chunks and @counted have room for.
 * @nr_chunks:     chunks selected, then chunks the eviction went through.
 * @next_chunk:    the first chunk the prefetch has not finished.
 * @evicted:       bytes evicted in this episode.
 * @returned:      bytes of @evicted whose chunk the prefetch finished.
 * @synced_iter:   last iteration whose late bytes were counted as fetched
 *                 synchronously.
 * @mig_start:     when the running (or last) migration started (trace).
 * @forget_gen:    bumped whenever ranges of the layer are forgotten.
 * @cut_gen:       @forget_gen when the latest chunks were cut.
 * @vfrom:         the first chunk the victim round appended.
 * @vmoved:        bytes the victim round moved.
 * @velapsed:      the mover's time for them.
 * @ev_next:       the first chunk the running eviction has not visited.
 * @ev_fast:       the fast node the eviction found (-1: by residency).
 * @ev_nr_slow:    entries of @ev_slow.
 * @ev_slow:       the slow nodes the eviction moves to, in order.
 * @ev_elapsed:    the mover's time of the eviction's slices so far.
 * @ev_bytes:      per node, the resident bytes the eviction found, then
 *                 scratch (2 * nr_nodes; NULL when the fast node is set or
 *                 the allocation failed).
 * @pf_moved:      bytes the prefetch's slices moved so far.
 * @pf_elapsed:    the mover's time for them.
 * @pf_left:       bytes the prefetch's chunks left on slow nodes.
 * @ended_left:    bytes the last ended episode left on slow nodes (its
 *                 prefetch's chunks found them busy or the node full).
 * @ended_iter:    the iteration of that episode.
 * @pf_due:        the trigger time came while the eviction ran.
 * @sync:          PREFETCHING is done by a caller (TT_SCHED_SYNC_LATE).
 * @below_min:     the plan's eviction of this iteration was under
 *                 min_migrate_kib and dropped.
 * @victim:        EVICTING is a victim eviction made by the thread that
 *                 needed room (not by the evict work item).
 * @bud_wait:      EVICTED, due back, waiting for room in the budget.
 * @bud_waited:    the episode's prefetch waited for room.
 * @in_round:      on a victim round's list (@vlink).
 * @ev_cont:       the evict item is queued again for the next slice.
 * @pf_cont:       the prefetch item is queued again for the next slice.
 * @abort:         the running eviction (or a deferred prefetch) stops at
 *                 its next chunk. Written with the lock held (a once-only
 *                 store); read without it by the side's mover and
 *                 ops->stopped with a once-only load (the kernel's mover
 *                 reads it as an atomic_t, which is one int).
 *
 * Allocated by ops->layer_new (the side embeds it in its own per-layer
 * object with its work items), zeroed and initialised by the executor.
 * Everything is under the lock but what the step owning the episode
 * (EVICTING, PREFETCHING) reads of @chunks without it.
 */
struct tt_exec_layer {
	unsigned int id;
	struct tt_exec_link ranges;
	struct tt_exec_link vlink;
	unsigned int nr_oneshot;
	enum tt_exec_state state;
	unsigned long long iter;
	unsigned long long target;
	int cpu_nid;
	int fast_nid;
	struct tt_chunk *chunks;
	unsigned long long *counted;
	unsigned int chunk_cap;
	unsigned int nr_chunks;
	unsigned int next_chunk;
	unsigned long long evicted;
	unsigned long long returned;
	unsigned long long synced_iter;
	unsigned long long mig_start;
	unsigned int forget_gen;
	unsigned int cut_gen;
	unsigned int vfrom;
	unsigned long long vmoved;
	unsigned long long velapsed;
	unsigned int ev_next;
	int ev_fast;
	int ev_nr_slow;
	int ev_slow[TT_EXEC_TARGETS];
	unsigned long long ev_elapsed;
	unsigned long long *ev_bytes;
	unsigned long long pf_moved;
	unsigned long long pf_elapsed;
	unsigned long long pf_left;
	unsigned long long ended_left;
	unsigned long long ended_iter;
	unsigned char pf_due;
	unsigned char sync;
	unsigned char below_min;
	unsigned char victim;
	unsigned char bud_wait;
	unsigned char bud_waited;
	unsigned char in_round;
	unsigned char ev_cont;
	unsigned char pf_cont;
	int abort;
};

/**
 * struct tt_exec_cfg - a session's scheduler settings (TT_IOC_SET_SCHED)
 * @flags:         TT_SCHED_* bits.
 * @profile_iters: iterations that only record the profile.
 * @stay_ns:       stay time ST.
 * @slow_node:     node to evict to, -1 for automatic.
 * @fast_node:     node to prefetch to, -1 for automatic.
 * @budget:        the session's own budget in bytes, 0 for none.
 *
 * The rates are kept by the timeline, which updates them.
 */
struct tt_exec_cfg {
	unsigned int flags;
	unsigned int profile_iters;
	unsigned long long stay_ns;
	int slow_node;
	int fast_node;
	unsigned long long budget;
};

/**
 * struct tt_exec_counts - counters only the executor keeps (the others
 * are the timeline's and the budget's)
 * @events:             events accepted.
 * @tensors_saved:      tensor events that covered whole pages.
 * @tensors_ignored:    tensor events smaller than a page after rounding.
 * @bytes_evicted:      bytes moved to slow nodes.
 * @bytes_prefetched:   bytes moved back.
 * @sync_fetched_bytes: late bytes fetched by TT_EV_LAYER_BEGIN(TT_BWD)
 *                      itself (TT_SCHED_SYNC_LATE).
 * @prefetch_left_bytes: bytes prefetches left on slow nodes after their
 *                      retries.
 * @landed_bytes:       bytes tt_exec_landed() moved back to a fast node.
 * @left_returned_bytes: bytes of @prefetch_left_bytes that a later retry
 *                      (an iteration begin's, struct tt_exec @strays)
 *                      moved back to a fast node.
 */
struct tt_exec_counts {
	unsigned long long events;
	unsigned long long tensors_saved;
	unsigned long long tensors_ignored;
	unsigned long long bytes_evicted;
	unsigned long long bytes_prefetched;
	unsigned long long sync_fetched_bytes;
	unsigned long long prefetch_left_bytes;
	unsigned long long landed_bytes;
	unsigned long long left_returned_bytes;
};

/*
 * Spans a prefetch left on a slow node that the executor retries: at
 * most TT_EXEC_STRAYS of them, each at up to TT_EXEC_STRAY_TRIES
 * iteration begins (struct tt_exec @strays).
 */
#define TT_EXEC_STRAYS		16
#define TT_EXEC_STRAY_TRIES	8

/**
 * struct tt_exec_stray - a chunk whose prefetch left pages on a slow node
 * @start: the chunk's first address (page aligned).
 * @end:   its end (page aligned).
 * @nid:   the fast node its prefetch moved it to.
 * @tries: retries that left pages of it again.
 */
struct tt_exec_stray {
	unsigned long long start;
	unsigned long long end;
	int nid;
	unsigned int tries;
};

/**
 * struct tt_exec_bud_counts - what the budget did (the same names in
 * struct tt_ioc_stats)
 * @peak:            highest fast registered bytes after a call returned or
 *                   a prefetch was admitted.
 * @victims:         victim evictions (tensors or pieces of them).
 * @victim_bytes:    bytes they moved to the slow tier.
 * @victim_archived: of those, bytes hinted TT_HINT_ARCHIVE.
 * @skipped_pages:   victim pages that could not move.
 * @waits:           times a prefetch stopped to wait for room.
 * @overruns:        calls that returned over the budget, no victim found.
 */
struct tt_exec_bud_counts {
	unsigned long long peak;
	unsigned long long victims;
	unsigned long long victim_bytes;
	unsigned long long victim_archived;
	unsigned long long skipped_pages;
	unsigned long long waits;
	unsigned long long overruns;
};

/**
 * struct tt_exec_bud - the session's side of the fast-tier budget
 * @held:     registered bytes: the saved ranges held.
 * @slow:     bytes of them counted on the slow tier: moved there by an
 *            eviction and not yet admitted back (per chunk in the layers'
 *            @counted).
 * @w:        the heat weights (Algorithm 1 carries them over).
 * @counts:   counters.
 * @items:    scratch of a victim round: one heat item per saved range.
 * @refs:     scratch: the range and layer of each item (2 per item).
 * @cap:      entries of @items (and pairs of @refs).
 * @busy:     victim evictions in flight; closing waits for none
 *            (ops->victims_done is called when a round ends).
 * @room:     an event took the session over its budget: make room once
 *            the event is done (the event loop, lock dropped).
 * @released: registered memory was released: retry waiting prefetches.
 * @waiting:  a layer may be waiting for room.
 *
 * The module-wide side (other sessions, the global budget, the session's
 * share) is the side's, reached through ops->budget_*.
 */
struct tt_exec_bud {
	unsigned long long held;
	unsigned long long slow;
	struct tt_heat_w w;
	struct tt_exec_bud_counts counts;
	struct tt_heat_item *items;
	void **refs;
	unsigned int cap;
	unsigned int busy;
	unsigned char room;
	unsigned char released;
	unsigned char waiting;
};

/**
 * struct tt_sched_stats - the scheduler's part of struct tt_ioc_stats
 * (tt_exec_stats()); field names as struct tt_ioc_stats
 */
struct tt_sched_stats {
	unsigned long long iterations;
	unsigned long long events;
	unsigned long long tensors_saved;
	unsigned long long tensors_ignored;
	unsigned long long layers_accepted;
	unsigned long long layers_modified;
	unsigned long long layers_dropped;
	unsigned long long layers_unknown;
	unsigned long long bytes_evicted;
	unsigned long long bytes_prefetched;
	unsigned long long ontime_bytes;
	unsigned long long late_bytes;
	unsigned long long late_count;
	unsigned long long sync_fetched_bytes;
	unsigned long long reprofiles;
	unsigned long long er_bps;
	unsigned long long pr_bps;
	unsigned long long pinned_bytes;
	unsigned long long archived_bytes;
	unsigned long long count_ahead;
	unsigned long long count_released;
	unsigned long long dyn_signatures;
	unsigned long long dyn_predicted;
	unsigned long long dyn_mispredicted;
	unsigned long long dyn_fallback;
	unsigned long long dyn_misses;
	unsigned long long last_miss_iter;
	unsigned long long last_miss_layer;
	unsigned long long last_miss_kind;
	unsigned long long budget_bytes;
	unsigned long long fast_registered_bytes;
	unsigned long long fast_peak_bytes;
	unsigned long long victims;
	unsigned long long victim_bytes;
	unsigned long long victim_archived_bytes;
	unsigned long long victims_skipped_pages;
	unsigned long long budget_waits;
	unsigned long long budget_overruns;
	unsigned long long heat_wf;
	unsigned long long heat_wr;
	unsigned long long heat_ws;
	unsigned long long heat_wl;
	unsigned long long kmem_bytes;
	unsigned long long prefetch_left_bytes;
	unsigned long long landed_bytes;
	unsigned long long rate_probes;
	unsigned long long left_returned_bytes;
};

/* struct tt_exec_move.flags */
#define TT_EXEC_MV_EVICT	0x1U	/* to the slow nodes: check the range first */
#define TT_EXEC_MV_REMOTE	0x2U	/* from a worker, not the session's process */
#define TT_EXEC_MV_SYNC		0x4U	/* plain pieces: to nids[0] only, synchronously */
/*
 * tt_exec_landed()'s repair, from a mover thread of the session: @l is
 * NULL, no order to a mover (the engine moves it)
 */
#define TT_EXEC_MV_REPAIR	0x8U

/**
 * struct tt_exec_move - one move the executor asks for
 * @start:  first address (page aligned).
 * @end:    end address (page aligned).
 * @nids:   target nodes in order (a full one spills to the next).
 * @nr:     entries of @nids (> 0).
 * @flags:  TT_EXEC_MV_* bits.
 */
struct tt_exec_move {
	unsigned long long start;
	unsigned long long end;
	const int *nids;
	int nr;
	unsigned int flags;
};

/* ops->limit keys: settings the side reads from its configuration. */
enum tt_exec_limit {
	TT_EXEC_LIM_MAX_LAYERS,		/* layers a session may have */
	TT_EXEC_LIM_MAX_RANGES,		/* saved ranges a session may hold */
	TT_EXEC_LIM_MIN_MIGRATE,	/* smallest eviction the plan makes, bytes */
	TT_EXEC_LIM_CHUNK_BYTES,	/* chunk size: batch, whole huge pages */
	TT_EXEC_LIM_EPISODE_MAX,	/* bytes one episode may take (RAM) */
	TT_EXEC_LIM_BUDGET_GLOBAL,	/* a module-wide budget is set (0/1) */
};

/* ops->trace_layer types are the uapi's TT_TRACE_* values. */

struct tt_exec;

/**
 * struct tt_exec_ops - what the executor does to the world; filled in by
 * each side, constant for the session's life
 *
 * Called with the lock held unless marked (unlocked). None may take the
 * executor's lock.
 *
 * @now:          the clock (monotonic ns).
 * @lock:         take the executor's lock (sleeping, not recursive).
 * @unlock:       drop it.
 * @queue:        queue layer @l's work item @what (TT_EXEC_WORK_EVICT or
 *                _PREFETCH) to run tt_exec_evict_step() or
 *                tt_exec_prefetch_step() later (see "Work items" above).
 *                Called only while not closing.
 * @wait:         (unlocked) wait until layer @l's item @what is not
 *                running (TT_EXEC_WORK_EVICT, _PREFETCH: flush it), or
 *                with TT_EXEC_WORK_VICTIM until @l->victim is clear.
 * @victims_done: a victim round ended (wake the waiters of @wait's
 *                TT_EXEC_WORK_VICTIM and of closing).
 * @timer_arm:    call tt_exec_timer() at absolute time @t.
 * @stopped:      (unlocked) should the migration of @l stop now: @l's
 *                abort (only when @flags has TT_EXEC_MV_REMOTE, or
 *                always for an eviction), the session stopping, a fatal
 *                signal for a move in the caller's process.
 * @pin:          (unlocked) keep the address space alive for moves; false
 *                when it is gone. Paired with @unpin.
 * @unpin:        (unlocked) drop @pin's hold.
 * @move:         (unlocked) move one range of @l (NULL for none) as @m
 *                says, into @res (zeroed by the caller; its pages fields).
 *                TT_EXEC_MV_EVICT: check the range first; a range the
 *                checks refuse is counted in @res as not present or
 *                unsupported and -TT_EXEC_EFAULT / -TT_EXEC_EOPNOTSUPP
 *                returned; the move stops early when @stopped says so.
 *                The side adds @res to its own migration counters.
 *                Return: 0 or a negative error.
 * @move_plain:   (unlocked) move the @n plain pieces @p (outside the saved
 *                ranges) where mapped, as TT_IOC_MIGRATE would (with
 *                TT_EXEC_MV_SYNC: to @nids[0] only; else spilling over
 *                @nids), adding to @res. Return: 0, -EINTR, -ESRCH,
 *                -ENOMEM.
 * @residency:    (unlocked, pinned) add the bytes of [@start, @end) on
 *                each node to @bytes (nr_nodes entries); @scratch has
 *                nr_nodes entries.
 * @node_slow:    is node @nid of the slow tier?
 * @node_check:   0 when @nid may take pages, else a negative error.
 * @evict_order:  the slow nodes to evict to from node @from, at most
 *                @max into @nids; return how many (0: none).
 * @cpu_node:     the node the calling thread runs on.
 * @mapped:       is [@start, @end) covered by the session's mappings:
 *                0, -EFAULT or -EINTR (the saved tensor's check).
 * @alloc:        memory for @n elements of @size bytes for the session
 *                (charged to it; NULL when out of memory or overflowing);
 *                zeroed when @zero.
 * @free:         give back @alloc's memory (NULL is fine).
 * @layer_new:    a new per-layer object; the executor initialises the
 *                struct tt_exec_layer in it. NULL when out of memory.
 * @layer_free:   give it back (tt_exec_free() only).
 * @range_alloc:  a new range entry (NULL when out of memory).
 * @range_free:   give it back (tt_exec_free() only).
 * @limit:        a setting (enum tt_exec_limit).
 * @call_begin:   optional (NULL: none): an event call begins, or goes on
 *                after the lock was dropped; a side that looks for trace
 *                listeners once per call looks again (lock held).
 * @trace_event:  an event was accepted at @now (iteration @iter after it).
 * @trace_migration: an eviction or prefetch of layer @layer ended
 *                (TT_TRACE_EVICT / TT_TRACE_PREFETCH, @flags TT_TRACE_F_*).
 * @trace_layer:  a layer trace event (TT_TRACE_LATE, _DROP, _MISS,
 *                _LEFT_SLOW).
 * @budget_publish: @bud.held or @bud.slow changed: publish them to the
 *                other sessions.
 * @budget_limit: the budget in force (TT_EXEC_BUDGET_NONE for none); *@total
 *                the sessions' fast bytes, *@global the module's budget
 *                (0: none).
 * @budget_active: is any budget in force for the session?
 * @budget_kick:  others may be over their share: visit them.
 * @budget_stuck: the session's last attempt to get within its budget left
 *                it over (@stuck), or it no longer does.
 * @resched:      (lock held or not) a rescheduling point in a long loop.
 * @pause:        (unlocked) sleep about @us microseconds (between the
 *                passes over a chunk whose pages stayed busy).
 */
struct tt_exec_ops {
	unsigned long long (*now)(struct tt_exec *x);
	void (*lock)(struct tt_exec *x);
	void (*unlock)(struct tt_exec *x);
	void (*queue)(struct tt_exec *x, struct tt_exec_layer *l, int what);
	void (*wait)(struct tt_exec *x, struct tt_exec_layer *l, int what);
	void (*victims_done)(struct tt_exec *x);
	void (*timer_arm)(struct tt_exec *x, unsigned long long t);
	int (*stopped)(struct tt_exec *x, struct tt_exec_layer *l,
		       unsigned int flags);
	int (*pin)(struct tt_exec *x);
	void (*unpin)(struct tt_exec *x);
	int (*move)(struct tt_exec *x, struct tt_exec_layer *l,
		    const struct tt_exec_move *m, struct tt_migrate_result *res);
	int (*move_plain)(struct tt_exec *x, const struct tt_hint_iv *p, long n,
			  const int *nids, int nr, unsigned int flags,
			  struct tt_migrate_result *res);
	void (*residency)(struct tt_exec *x, unsigned long long start,
			  unsigned long long end, unsigned long long *bytes,
			  unsigned long long *scratch);
	int (*node_slow)(struct tt_exec *x, int nid);
	int (*node_check)(struct tt_exec *x, int nid);
	int (*evict_order)(struct tt_exec *x, int from, int *nids, int max);
	int (*cpu_node)(struct tt_exec *x);
	int (*mapped)(struct tt_exec *x, unsigned long long start,
		      unsigned long long end);
	void *(*alloc)(struct tt_exec *x, unsigned long n, unsigned long size,
		       int zero);
	void (*free)(struct tt_exec *x, void *p);
	struct tt_exec_layer *(*layer_new)(struct tt_exec *x);
	void (*layer_free)(struct tt_exec *x, struct tt_exec_layer *l);
	struct tt_exec_range *(*range_alloc)(struct tt_exec *x);
	void (*range_free)(struct tt_exec *x, struct tt_exec_range *r);
	unsigned long long (*limit)(struct tt_exec *x, enum tt_exec_limit what);
	void (*call_begin)(struct tt_exec *x);
	void (*trace_event)(struct tt_exec *x, const struct tt_event *ev,
			    unsigned long long now, unsigned long long iter);
	void (*trace_migration)(struct tt_exec *x, unsigned int type,
				unsigned int layer, unsigned long long iter,
				unsigned long long bytes,
				unsigned long long start, int node,
				unsigned int flags);
	void (*trace_layer)(struct tt_exec *x, unsigned int type,
			    unsigned int layer, unsigned long long iter,
			    unsigned long long bytes, unsigned long long ts,
			    unsigned int flags);
	void (*budget_publish)(struct tt_exec *x);
	unsigned long long (*budget_limit)(struct tt_exec *x,
					   unsigned long long *total,
					   unsigned long long *global);
	int (*budget_active)(struct tt_exec *x);
	void (*budget_kick)(struct tt_exec *x);
	void (*budget_stuck)(struct tt_exec *x, int stuck);
	void (*resched)(struct tt_exec *x);
	void (*pause)(struct tt_exec *x, unsigned int us);
};

/**
 * struct tt_exec - one session's executor (embedded in the side's session)
 * @ops:        the side's operations.
 * @tl:         the timeline: profile, plan, feedback, rates.
 * @cfg:        the settings.
 * @last_ts:    time of the latest event accepted.
 * @clk:        the clock reading of the call under way (lock held), shared
 *              by its unstamped events and the dispatch they trigger; 0
 *              when it must be read again (tt_x_clock(), exec_internal.h).
 * @free:       range entries kept for reuse.
 * @nr_ranges:  saved ranges held (one-shot and persistent).
 * @range_seq:  id given to the last range entry.
 * @closing:    the session is closing: nothing new is queued.
 * @misses_seen: the timeline's miss log entries already traced.
 * @counts:     the executor's counters.
 * @hints:      the ranges hinted TT_HINT_PIN_FAST or TT_HINT_ARCHIVE.
 * @bud:        the fast-tier budget's accounts and victim state.
 * @kmem:       bytes of the arrays sized by the session's input that the
 *              executor holds (chunk lists, @bud's scratch, @hints).
 * @ev_turn:    the layer whose eviction continues slice by slice; the
 *              session's other evictions wait while its next slice is
 *              queued. NULL: none.
 * @pf_turn:    the same for the prefetches.
 * @strays:     spans prefetches left on slow nodes, to retry: at the next
 *              iteration begin, in the caller of tt_exec_events(), each
 *              is moved to its fast node (pages of chunks a running
 *              episode holds evicted excepted); one that leaves pages
 *              again stays, up to TT_EXEC_STRAY_TRIES tries. A new span
 *              merges with one it touches; one more than TT_EXEC_STRAYS
 *              is not kept (its bytes stay counted in prefetch_left_bytes
 *              only). A span a TT_HINT_ARCHIVE hint touches is dropped.
 * @nr_strays:  entries of @strays.
 * @strays_due: an iteration began with @nr_strays: the caller retries
 *              them once the event is done.
 * @page_size:  the page size (a power of two).
 * @huge_size:  the huge page size chunks never cut (a power of two).
 * @task_size:  the end of the user address space.
 * @nr_nodes:   node ids are below this.
 */
struct tt_exec {
	const struct tt_exec_ops *ops;
	struct tt_tl tl;
	struct tt_exec_cfg cfg;
	unsigned long long last_ts;
	unsigned long long clk;
	struct tt_exec_link free;
	unsigned long nr_ranges;
	unsigned long long range_seq;
	int closing;
	unsigned int misses_seen;
	struct tt_exec_counts counts;
	struct tt_hint_set hints;
	struct tt_exec_bud bud;
	unsigned long long kmem;
	struct tt_exec_layer *ev_turn;
	struct tt_exec_layer *pf_turn;
	struct tt_exec_stray strays[TT_EXEC_STRAYS];
	unsigned int nr_strays;
	int strays_due;
	unsigned long long page_size;
	unsigned long long huge_size;
	unsigned long long task_size;
	int nr_nodes;
};

/*
 * tt_exec_init() - a new session's executor, allocating nothing (the
 * layer table grows on first use). @cfg: the initial settings; @er_bps,
 * @pr_bps: the seed rates. @page_size, @huge_size, @task_size, @nr_nodes:
 * see struct tt_exec.
 */
void tt_exec_init(struct tt_exec *x, const struct tt_exec_ops *ops,
		  const struct tt_exec_cfg *cfg, unsigned long long er_bps,
		  unsigned long long pr_bps, unsigned long long page_size,
		  unsigned long long huge_size, unsigned long long task_size,
		  int nr_nodes);

/*
 * tt_exec_events() - @n events (TT_IOC_EVENT, TT_IOC_EVENTS). @now: the
 * caller's clock reading, used for the first unstamped event (the later
 * ones read ops->now). Checks each event (core/event.h), makes the
 * executor's and the timeline's state follow, queues evictions and
 * prefetches, fetches late layers in the caller with TT_SCHED_SYNC_LATE,
 * makes room when a registration took the session over its budget and,
 * after an iteration begin, moves back in the caller what earlier
 * prefetches left on slow nodes (struct tt_exec @strays).
 * *@done: events processed before the first error. Return: 0 or the
 * first error (see TT_IOC_EVENT).
 */
int tt_exec_events(struct tt_exec *x, const struct tt_event *ev,
		   unsigned int n, unsigned long long now, unsigned int *done);

/* The evict (prefetch) work item of @l runs (see "Work items"). */
void tt_exec_evict_step(struct tt_exec *x, struct tt_exec_layer *l);
void tt_exec_prefetch_step(struct tt_exec *x, struct tt_exec_layer *l);

/* The timer armed by ops->timer_arm fired: hand out the due prefetches. */
void tt_exec_timer(struct tt_exec *x);

/*
 * tt_exec_hint() - TT_IOC_HINT on [@start, @end) (whole pages, checked by
 * the caller with tt_hint_check()), hint bits @hint. PIN_FAST and ARCHIVE
 * are remembered and skipped by every later eviction; RETIRE ends them
 * and forgets the tensors the range overlaps. Every hint settles the
 * episodes of the layers whose tensors the range overlaps. WILL_USE and
 * PIN_FAST then move the plain pages to the fast node in the caller
 * (ops->move_plain). Return: 0 or a negative error.
 */
int tt_exec_hint(struct tt_exec *x, unsigned long long start,
		 unsigned long long end, unsigned int hint);

/* The largest profile_iters a session or the module parameter may take. */
#define TT_EXEC_PROFILE_ITERS_MAX	1000

/*
 * tt_exec_cfg_check() - the checks of a TT_IOC_SET_SCHED request that need
 * no node (both drivers make them, then check the nodes their own way).
 * Return: 0; -EOPNOTSUPP for a valid or flag bit unknown, or a budget_mib
 * without TT_SCHED_SET_BUDGET; -EINVAL for TT_SCHED_REFERENCE with an
 * extension, profile_iters outside 1..TT_EXEC_PROFILE_ITERS_MAX, or a
 * rate of 0.
 */
int tt_exec_cfg_check(const struct tt_ioc_sched *req);

/*
 * tt_exec_cfg_set() - TT_IOC_SET_SCHED, the request checked by the
 * caller (tt_exec_cfg_check() and the nodes). Makes room or retries waiting
 * prefetches when the budget or the flags changed.
 */
void tt_exec_cfg_set(struct tt_exec *x, const struct tt_ioc_sched *req);
/* tt_exec_cfg_get() - TT_IOC_GET_SCHED: every TT_SCHED_SET_* bit valid. */
void tt_exec_cfg_get(struct tt_exec *x, struct tt_ioc_sched *out);

/* tt_exec_stats() - the scheduler's counters for TT_IOC_STATS. */
void tt_exec_stats(struct tt_exec *x, struct tt_sched_stats *out);

/*
 * tt_exec_layers() - TT_IOC_LAYERS from position @from (layer id order):
 * up to @max entries into @info; *@known: the layers known. Return: the
 * entries filled.
 */
unsigned int tt_exec_layers(struct tt_exec *x, unsigned int from,
			    struct tt_layer_info *info, unsigned int max,
			    unsigned int *known);
/* tt_exec_nr_layers() - the layers known. */
unsigned int tt_exec_nr_layers(struct tt_exec *x);

/*
 * tt_exec_resident() - the saved tensors held (*@held) and the bytes of
 * them evicted and not yet back (*@slow).
 */
void tt_exec_resident(struct tt_exec *x, unsigned long long *held,
		      unsigned long long *slow);

/*
 * tt_exec_budget_visit() - the module's budget visits the session: with
 * @shrink, evict victims down to the budget in force; else retry the
 * prefetches waiting for room. @remote: from a worker.
 */
void tt_exec_budget_visit(struct tt_exec *x, int shrink, int remote);
/* tt_exec_budget_room() - make room now if over the budget (unlocked). */
void tt_exec_budget_room(struct tt_exec *x);

/*
 * Closing, in this order: tt_exec_close() (nothing new is queued or
 * armed after it returns), then the side cancels its timer and its work
 * items and waits for the running ones and for @bud.busy to reach 0
 * (ops->victims_done wakes it), then tt_exec_free() gives everything back
 * through the ops. tt_exec_layer_at() lists the layers for the side
 * (index below tt_exec_nr_layers(), lock held or no step running).
 */
void tt_exec_close(struct tt_exec *x);
/*
 * tt_exec_fetch_all() - optional, between the side's stop and
 * tt_exec_free(): move back in the caller every chunk still out (each
 * tried once, whatever the budget or a failure), ending every episode.
 * The kernel leaves evicted data on the slow node at close; libtiertrain's
 * move_pages backend brings it back (its tt_close() contract).
 */
void tt_exec_fetch_all(struct tt_exec *x);
/*
 * tt_exec_landed() - a mover completed a scheduler's order after it went
 * back to the engine: it may have moved pages of [@start, @end) to a slow
 * node after the engine, the eviction's count and newer migrations went
 * past them. The executor's view holds again when it returns: a chunk that
 * a running episode holds evicted and its prefetch has not fetched yet is
 * fetched whatever its eviction counted (@landed); every other page of the
 * span is moved to the fast node now (the session's fast_node, else
 * ops->cpu_node), in the caller (ops->move with TT_EXEC_MV_REPAIR; moved
 * bytes counted in landed_bytes). Lock not held; the caller is a thread of
 * the session's process. The lock is taken once per 512 pages of the span,
 * for one pass over the running episodes' chunks.
 */
void tt_exec_landed(struct tt_exec *x, unsigned long long start,
		    unsigned long long end);
struct tt_exec_layer *tt_exec_layer_at(struct tt_exec *x, unsigned int i);
void tt_exec_free(struct tt_exec *x);

#endif /* TT_EXEC_H */
