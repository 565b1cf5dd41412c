// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * exec.c - the executor (exec.h): a session's events drive its timeline
 * (timeline.c, which decides through policy.c); this file executes the
 * decisions through the side's operations and reports back.
 * Documentation/scheduler.md describes the whole; the comments here are
 * about the mechanics.
 *
 * No includes besides exec_internal.h (through exec.h the uapi header and
 * core/'s own) and event.h, no library calls, no allocation but through
 * the ops: the same source is compiled into the kernel module and
 * libtiertrain.
 *
 * Episodes. Each layer has at most one eviction in flight, from its
 * forward end until its evicted bytes are back ("episode"):
 *
 *   IDLE --forward end--> EVICT_QUEUED --evict step--> EVICTING
 *     --> EVICTED --trigger time (timer)--> PREFETCH_QUEUED
 *     --prefetch step--> PREFETCHING --> IDLE
 *
 * The evict step copies the first final-size bytes of the layer's ranges
 * into a private chunk list (chunks of at most the chunk size), checks
 * each range and moves the chunks to the slow node, recording what each
 * chunk moved; the prefetch step moves exactly those chunks back, in
 * order, and counts one chunk at a time as back, so the bytes still out
 * are known per chunk. A trigger time that comes while the eviction runs
 * sets @pf_due and the evict step queues the prefetch when it ends: a
 * page is never prefetched while it is being evicted.
 *
 * Nothing is cancelled from the event path (that would wait for a running
 * step that may wait for the lock): the state is changed under the lock
 * and a step that runs later finds it changed and returns.
 *
 * Safety rules, whatever events arrive or go missing:
 *  - backward begin: an eviction not started is dropped, a running one is
 *    stopped at its next chunk, and what was evicted is prefetched now
 *    (or fetched by the call itself with TT_SCHED_SYNC_LATE);
 *  - backward end and iteration begin: the same for any layer still out,
 *    then one-shot ranges are forgotten (iteration begin: of every layer);
 *  - an episode still out blocks the layer's next eviction.
 *
 * Fast-tier budget (exec_budget.c): the session counts its registered
 * bytes (@bud.held) and what of them its evictions moved out and no
 * prefetch has admitted back (@bud.slow, per chunk in @counted);
 * prefetches admit each chunk before moving it, registrations that take
 * the session over make room in the event call, and victims are appended
 * to their layer's episode, so they come back as its evictions do.
 */
#include "event.h"
#include "exec_internal.h"

static void tt_x_free_storage(struct tt_exec *x, struct tt_tl_storage *st)
{
	x->ops->free(x, st->layers);
	x->ops->free(x, st->plan);
	x->ops->free(x, st->order);
	x->ops->free(x, st->due);
}

/*
 * Double the layer table, up to max_layers (lock held); what the timeline
 * keeps in it (layers, schedule, forward order) moves along.
 */
static int tt_x_grow(struct tt_exec *x)
{
	struct tt_tl_storage old = x->tl.st, st = { 0 };
	unsigned int max = tt_x_lim(x, TT_EXEC_LIM_MAX_LAYERS), cap;

	if (x->tl.n >= max)
		return -TT_EXEC_ENOSPC;
	cap = old.cap ? tt_x_min(old.cap * 2, max) :
	      tt_x_min(TT_EXEC_LAYERS_FIRST, max);
	cap = tt_x_max(cap, x->tl.n + 1);
	st.cap = cap;
	st.layers = x->ops->alloc(x, cap, sizeof(*st.layers), 0);
	st.plan = x->ops->alloc(x, cap, sizeof(*st.plan), 0);
	st.order = x->ops->alloc(x, cap, sizeof(*st.order), 0);
	st.due = x->ops->alloc(x, cap, sizeof(*st.due), 0);
	if (!st.layers || !st.plan || !st.order || !st.due) {
		tt_x_free_storage(x, &st);
		return -TT_EXEC_ENOMEM;
	}
	tt_tl_set_storage(&x->tl, &st);
	tt_x_free_storage(x, &old);
	return 0;
}

/* Layer @id, created when new (lock held): the object, or NULL and *@err. */
static struct tt_exec_layer *tt_x_layer(struct tt_exec *x, unsigned int id,
					int *idx, int *err)
{
	struct tt_exec_layer *l = tt_x_find(x, id, idx);
	int ret;

	if (l)
		return l;
	*err = -TT_EXEC_ENOSPC;
	if (x->tl.n >= tt_x_lim(x, TT_EXEC_LIM_MAX_LAYERS))
		return (struct tt_exec_layer *)0;
	if (x->tl.n >= x->tl.st.cap) {
		ret = tt_x_grow(x);
		if (ret) {
			*err = ret;
			return (struct tt_exec_layer *)0;
		}
	}
	l = x->ops->layer_new(x);
	if (!l) {
		*err = -TT_EXEC_ENOMEM;
		return l;
	}
	tt_x_zero(l, sizeof(*l));
	l->id = id;
	tt_x_list_init(&l->ranges);
	tt_x_list_init(&l->vlink);
	l->state = TT_EXEC_IDLE;
	l->cpu_nid = TT_EXEC_NO_NODE;
	*idx = tt_tl_add(&x->tl, id, l);
	/* The table had room: tt_tl_add() cannot fail here. */
	if (*idx < 0) {
		x->ops->layer_free(x, l);
		*err = -TT_EXEC_ENOSPC;
		return (struct tt_exec_layer *)0;
	}
	return l;
}

/*
 * Order within a session: a layer's eviction (prefetch) not started yet
 * waits (re-queues itself) while another layer of the session has its next
 * slice queued (@ev_turn, @pf_turn), so the session's layers still finish
 * in the order they were queued; true when @l must wait (lock held; @l
 * NULL: whether any layer has the turn).
 */
static int tt_x_evict_wait_turn(const struct tt_exec *x,
				const struct tt_exec_layer *l)
{
	const struct tt_exec_layer *t = x->ev_turn;

	return t && t != l && t->state == TT_EXEC_EVICTING && t->ev_cont &&
	       !t->victim;
}

static int tt_x_prefetch_wait_turn(const struct tt_exec *x,
				   const struct tt_exec_layer *l)
{
	const struct tt_exec_layer *t = x->pf_turn;

	return t && t != l && t->state == TT_EXEC_PREFETCHING && t->pf_cont &&
	       !t->sync;
}

/*
 * The end of one slice of @l's eviction or prefetch (@what, lock held):
 * with @more chunks left and nothing telling it to stop, queue the next
 * slice at the pool's tail (the items queued meanwhile run first) and
 * return 1; else give up the turn and return 0 (the episode step ends).
 */
static int tt_x_slice_again(struct tt_exec *x, struct tt_exec_layer *l,
			    int what, int more)
{
	int evict = what == TT_EXEC_WORK_EVICT;
	struct tt_exec_layer **turn = evict ? &x->ev_turn : &x->pf_turn;

	if (more && !x->closing &&
	    !x->ops->stopped(x, l, TT_EXEC_MV_EVICT | TT_EXEC_MV_REMOTE)) {
		if (evict) {
			l->ev_cont = 1;
			if (!tt_x_evict_wait_turn(x, (struct tt_exec_layer *)0))
				*turn = l;
		} else {
			l->pf_cont = 1;
			if (!tt_x_prefetch_wait_turn(x, (struct tt_exec_layer *)0))
				*turn = l;
		}
		x->ops->queue(x, l, what);
		return 1;
	}
	if (*turn == l)
		*turn = (struct tt_exec_layer *)0;
	return 0;
}

/*
 * How long the migration of @l took (lock held), for its rate sample: from
 * its first step to now, the waits of its slices in the pool included
 * (the plan's serial queue sees them), or @mover_ns, the mover's own time,
 * when that is longer.
 */
static unsigned long long tt_x_took(struct tt_exec *x,
				    const struct tt_exec_layer *l,
				    unsigned long long mover_ns)
{
	unsigned long long now = tt_x_now(x);

	return tt_x_max(now > l->mig_start ? now - l->mig_start : 0,
			mover_ns);
}

/*
 * Settle the layer's episode (lock held). @defer false: make sure nothing
 * of it stays evicted: drop an eviction not started, stop a running one
 * and prefetch after it, queue the prefetch of what is evicted now.
 * @defer true (TT_SCHED_DEFER_LATE at its backward begin): what is still
 * on the slow node stays there while the backward pass reads it: an
 * eviction not started is dropped, a running one stops, a queued prefetch
 * is taken back and a running one stops after its current chunk; the
 * backward end (or, if the stopped prefetch returns after it,
 * tt_x_fetched()) brings the rest back.
 */
static void tt_x_settle(struct tt_exec *x, struct tt_exec_layer *l, int defer)
{
	switch (l->state) {
	case TT_EXEC_EVICT_QUEUED:
		l->state = TT_EXEC_IDLE;
		break;
	case TT_EXEC_EVICTING:
		tt_x_set_abort(l, 1);
		l->pf_due = !defer;
		break;
	case TT_EXEC_EVICTED:
		if (!defer && !x->closing)
			tt_x_queue_prefetch(x, l);
		break;
	case TT_EXEC_PREFETCH_QUEUED:
		/* deferred: the pending step finds it EVICTED and leaves it */
		if (defer)
			l->state = TT_EXEC_EVICTED;
		break;
	case TT_EXEC_PREFETCHING:
		if (defer)
			tt_x_set_abort(l, 1);
		break;
	default:
		break;
	}
}

static void tt_x_rescue(struct tt_exec *x, struct tt_exec_layer *l)
{
	tt_x_settle(x, l, 0);
}

/* Forget the one-shot ranges of a layer (lock held). */
static void tt_x_forget(struct tt_exec *x, struct tt_exec_layer *l)
{
	struct tt_exec_range *r, *t;

	if (!l->nr_oneshot)
		return;
	tt_x_detach(x, l, (const struct tt_exec_range *)0);
	for (r = tt_x_first(&l->ranges); r; r = t) {
		t = tt_x_next(r, &l->ranges);
		if (!r->persistent)
			tt_x_range_free(x, r);
	}
	l->nr_oneshot = 0;
}

/* Hand the due prefetches to the workers and arm the timer (lock held). */
static void tt_x_dispatch(struct tt_exec *x)
{
	unsigned long long next = ~0ULL;
	unsigned int id;

	while (tt_tl_next_due(&x->tl, tt_x_clock(x), &id, &next)) {
		int idx;
		struct tt_exec_layer *l = tt_x_find(x, id, &idx);

		/* Only an eviction of this iteration is the plan's. */
		if (!l || l->iter != x->tl.iter_seq)
			continue;
		/* Due after its backward began: deferred to its end. */
		if ((x->cfg.flags & TT_SCHED_DEFER_LATE) &&
		    (x->tl.st.layers[idx].seen & TT_TL_S_BWD_BEGIN))
			continue;
		if (l->state == TT_EXEC_EVICTED)
			tt_x_queue_prefetch(x, l);
		else if (l->state == TT_EXEC_EVICT_QUEUED ||
			 l->state == TT_EXEC_EVICTING)
			l->pf_due = 1;
	}
	if (next != ~0ULL)
		x->ops->timer_arm(x, next);
}

void tt_exec_timer(struct tt_exec *x)
{
	tt_x_lock(x);
	x->clk = 0;
	if (!x->closing)
		tt_x_dispatch(x);
	tt_x_unlock(x);
}

/*
 * Cut the first @l->target bytes (page granular, at most an episode's
 * bytes) of the layer's ranges, in report order, leaving out the hinted
 * pages (PIN_FAST, ARCHIVE), into chunks of at most @batch bytes, at most
 * @cap of them: into @c, or with @c NULL only count them (lock held).
 * Return: the chunks, at most @cap.
 */
static unsigned long tt_x_cut(struct tt_exec *x, struct tt_exec_layer *l,
			      unsigned long long batch, struct tt_chunk *c,
			      unsigned long cap)
{
	unsigned long long left = tt_x_page_align(x,
		tt_x_min(l->target, tt_x_lim(x, TT_EXEC_LIM_EPISODE_MAX)));
	struct tt_chunk_cut cut = { .c = c, .cap = cap };
	unsigned long long i, from;
	struct tt_exec_range *r;

	/* the first bytes of the ranges, in report order, outside hints */
	for (r = tt_x_first(&l->ranges); r; r = tt_x_next(r, &l->ranges)) {
		if (!left || cut.n >= cap)
			break;
		cut.range_id = r->id;
		from = cut.n;
		tt_hint_cut(&x->hints, r->start, r->end, &left, batch,
			    tt_chunk_emit, &cut);
		if (c) {
			/* what the chunks kept hold of the range */
			r->taken = 0;
			for (i = from; i < tt_x_min(cut.n, cap); i++)
				r->taken += c[i].end - c[i].start;
		}
		tt_x_resched(x);
	}
	return tt_x_min(cut.n, cap);
}

/*
 * The eviction's chunks, at most tt_x_chunks_max() (lock held).
 * Return: 0, or -ENOMEM.
 */
static int tt_x_select(struct tt_exec *x, struct tt_exec_layer *l)
{
	unsigned long long batch = tt_x_lim(x, TT_EXEC_LIM_CHUNK_BYTES);
	unsigned long max = tt_x_chunks_max(x, batch);
	unsigned long n = tt_x_cut(x, l, batch, (struct tt_chunk *)0, max);

	l->nr_chunks = 0;
	l->next_chunk = 0;
	if (!n)
		return 0;
	if (tt_x_chunks_grow(x, l, n))
		return -TT_EXEC_ENOMEM;
	tt_x_zero(l->counted, n * sizeof(*l->counted));
	l->cut_gen = l->forget_gen;
	l->nr_chunks = tt_x_cut(x, l, batch, l->chunks, n);
	if (x->cfg.flags & TT_SCHED_MERGE)
		l->nr_chunks = tt_chunk_merge(l->chunks, l->nr_chunks, batch);
	return 0;
}

/*
 * The eviction of @l, one slice (TT_EXEC_SLICE_BYTES) per step: the first
 * (EVICT_QUEUED) selects the chunks and starts the episode (EVICTING),
 * each moves the chunks from @ev_next on until the slice is full and
 * queues itself again (@ev_cont) while chunks are left; the one that
 * finds none left, or the layer stopped (@abort, the session stopping,
 * closing, the address space gone), ends the eviction.
 */
/*
 * Chunk @c has pages for its episode's prefetch to fetch: moved out by the
 * eviction, found on a slow node by it (@born), or @landed there late.
 */
static int tt_x_to_fetch(const struct tt_chunk *c)
{
	return c->moved || c->born || tt_x_once_load(&c->landed);
}

/*
 * A chunk of @l's episode has pages on a slow node that the eviction did
 * not move (@born, @landed) (lock held): its prefetch must run.
 */
static int tt_x_any_landed(const struct tt_exec_layer *l)
{
	unsigned int i;

	for (i = 0; i < l->nr_chunks; i++)
		if (l->chunks[i].landed || l->chunks[i].born)
			return 1;
	return 0;
}

void tt_exec_evict_step(struct tt_exec *x, struct tt_exec_layer *l)
{
	unsigned long long *bytes, slice = 0, iter;
	unsigned int i, done;
	int idx, fast, have_mm, first = 0, more = 0, cut = 0, mine;

	tt_x_lock(x);
	if (x->closing)
		goto out_unlock;
	if (l->state == TT_EXEC_EVICTING && l->ev_cont && !l->victim) {
		l->ev_cont = 0;		/* the next slice */
	} else if (l->state == TT_EXEC_EVICT_QUEUED) {
		if (tt_x_evict_wait_turn(x, l)) {
			x->ops->queue(x, l, TT_EXEC_WORK_EVICT);
			goto out_unlock;
		}
		/* this iteration's layer in the timeline (its index in idx) */
		mine = l->iter == x->tl.iter_seq && tt_x_find(x, l->id, &idx);
		/* too late for the round trip its plan made: not started */
		if (mine && !l->victim &&
		    tt_tl_evict_expired(&x->tl, idx, tt_x_now(x), l->target)) {
			tt_tl_evict_drop(&x->tl, idx);
			x->ops->trace_layer(x, TT_TRACE_DROP, l->id, l->iter,
					    x->tl.st.layers[idx].cur.saved,
					    tt_x_now(x), TT_TRACE_F_EXPIRED);
			tt_x_episode_end(x, l);
			goto out_unlock;
		}
		l->ev_fast = x->cfg.fast_node;
		l->ev_nr_slow = tt_x_slow_nodes(x, l->cpu_nid, l->ev_slow);
		if (!l->ev_nr_slow || tt_x_select(x, l) || !l->nr_chunks) {
			tt_x_episode_end(x, l);
			goto out_unlock;
		}
		l->state = TT_EXEC_EVICTING;
		l->mig_start = tt_x_now(x);
		l->ev_next = 0;
		l->ev_cont = 0;
		l->ev_elapsed = 0;
		l->ev_bytes = (unsigned long long *)0;
		first = 1;
		if (mine)
			tt_tl_evict_start(&x->tl, idx, tt_x_now(x));
	} else {
		goto out_unlock;
	}
	iter = l->iter;
	tt_x_unlock(x);

	have_mm = x->ops->pin(x);
	if (have_mm && first && l->ev_fast < 0)
		l->ev_bytes = x->ops->alloc(x, 2 * x->nr_nodes,
					    sizeof(*l->ev_bytes), 1);
	bytes = l->ev_bytes;
	for (i = l->ev_next; have_mm && i < l->nr_chunks; i++) {
		struct tt_chunk *c = &l->chunks[i];
		struct tt_migrate_result res = { 0 };
		int ret;

		if (x->ops->stopped(x, l, TT_EXEC_MV_EVICT | TT_EXEC_MV_REMOTE))
			break;
		if (slice >= TT_EXEC_SLICE_BYTES) {
			more = 1;
			break;
		}
		slice += c->end - c->start;
		if (bytes)
			x->ops->residency(x, c->start, c->end, bytes,
					  bytes + x->nr_nodes);
		ret = tt_x_evict_chunk(x, l, c, l->ev_slow, l->ev_nr_slow,
				       &res);
		c->moved = res.moved * x->page_size;
		c->born = 0;
		/* a late mover put pages of it there: evicted all the same */
		if (tt_x_once_load(&c->landed))
			c->moved += res.already_on_node * x->page_size;
		else
			c->born = res.already_on_node * x->page_size;
		/* the mover stopped inside the chunk (@abort) */
		if (res.pages < (c->end - c->start) / x->page_size &&
		    x->ops->stopped(x, l, TT_EXEC_MV_EVICT | TT_EXEC_MV_REMOTE))
			cut = 1;

		tt_x_lock(x);
		l->ev_elapsed += res.elapsed_ns;
		if (ret)
			tt_x_forget_range(x, l, c->range_id);
		l->evicted += c->moved;
		x->counts.bytes_evicted += c->moved;
		tt_x_count_slow(x, l, i);
		/* moved after the backward pass began: late as well */
		if (iter == x->tl.iter_seq && tt_x_find(x, l->id, &idx))
			tt_tl_late_add(&x->tl, idx, c->moved);
		l->ev_next = i + 1;
		tt_x_unlock(x);
	}
	if (have_mm)
		x->ops->unpin(x);

	tt_x_lock(x);
	if (tt_x_slice_again(x, l, TT_EXEC_WORK_EVICT, more))
		goto out_unlock;
	done = l->ev_next;
	fast = l->ev_fast;
	if (fast < 0)
		fast = bytes ? tt_x_majority_fast(x, bytes, l->cpu_nid) :
			       l->cpu_nid;
	if (fast < 0)
		fast = x->ops->cpu_node(x);
	x->ops->free(x, bytes);
	l->ev_bytes = (unsigned long long *)0;
	/* the first node of the order: a full one spills to the next */
	x->ops->trace_migration(x, TT_TRACE_EVICT, l->id, iter, l->evicted,
				l->mig_start, l->ev_slow[0],
				done < l->nr_chunks || cut ?
				TT_TRACE_F_STOPPED : 0);
	l->nr_chunks = done;
	l->fast_nid = fast;
	if (iter == x->tl.iter_seq && tt_x_find(x, l->id, &idx))
		tt_tl_evict_end(&x->tl, idx, tt_x_now(x), l->evicted);
	tt_tl_rate_sample(&x->tl, TT_TL_EVICT, l->evicted,
			  tt_x_took(x, l, l->ev_elapsed));
	if (!l->evicted && !tt_x_any_landed(l))
		tt_x_episode_end(x, l);
	else if (l->pf_due && !x->closing)
		tt_x_queue_prefetch(x, l);
	else
		l->state = TT_EXEC_EVICTED;
out_unlock:
	tt_x_unlock(x);
}

/*
 * Pages of a chunk's migration result that stayed off the target node
 * although present: busy, no room there, or a kind the mover cannot move.
 */
static unsigned long long tt_x_res_left(const struct tt_migrate_result *res)
{
	return res->skipped_busy + res->skipped_no_memory +
	       res->skipped_unsupported;
}

/*
 * Move chunk @c of @l back to @l->fast_nid in up to TT_SCHED_FETCH_PASSES
 * passes: a pass that leaves pages busy, finds the node full, or finds
 * fewer pages than the eviction moved either on the node or moved there
 * while some read as not present (a page that another migration, memory
 * offlining for one, holds at that instant reads so) is followed, after a
 * pause of 1, 2, 4 ms, by another over the whole chunk, unless the
 * prefetch is told to stop. @res gets the sum of the passes; *@left the
 * bytes of the last pass that are still not on the node (busy, no memory,
 * unsupported: pages still not present count as gone).
 * Return: as ops->move.
 */
static int tt_x_fetch_chunk(struct tt_exec *x, struct tt_exec_layer *l,
			    const struct tt_chunk *c, int remote,
			    struct tt_migrate_result *res,
			    unsigned long long *left)
{
	unsigned int flags = remote ? TT_EXEC_MV_REMOTE : 0;
	struct tt_exec_move m = {
		.start = c->start, .end = c->end, .nids = &l->fast_nid, .nr = 1,
		.flags = flags,
	};
	unsigned int pass;
	int ret = 0;

	*left = 0;
	for (pass = 0; pass < TT_SCHED_FETCH_PASSES; pass++) {
		struct tt_migrate_result r = { 0 };
		unsigned long long back;
		int gone;

		if (pass) {
			if (x->ops->stopped(x, l, flags))
				break;
			x->ops->pause(x, 1000U << (pass - 1));
		}
		ret = x->ops->move(x, l, &m, &r);
		res->moved += r.moved;
		res->elapsed_ns += r.elapsed_ns;
		*left = tt_x_res_left(&r) * x->page_size;
		back = (r.moved + r.already_on_node) * x->page_size;
		gone = r.skipped_not_present && back < c->moved;
		if (ret || !(gone || (*left && (r.skipped_busy ||
						r.skipped_no_memory))))
			break;
	}
	return ret;
}

/*
 * Keep [@start, @end), which a prefetch to @nid left pages of after
 * @tries retries, for the next iteration begin's retry (lock held):
 * merged into an entry for @nid that it touches (the fewer tries count),
 * else a new entry while there is room (struct tt_exec @strays).
 */
static void tt_x_stray_add(struct tt_exec *x, unsigned long long start,
			   unsigned long long end, int nid, unsigned int tries)
{
	struct tt_exec_stray *e;
	unsigned int i;

	if (nid < 0)
		return;
	for (i = 0; i < x->nr_strays; i++) {
		e = &x->strays[i];
		if (e->nid != nid || e->end < start || e->start > end)
			continue;
		e->start = tt_x_min(e->start, start);
		e->end = tt_x_max(e->end, end);
		if (e->tries > tries)
			e->tries = tries;
		return;
	}
	if (x->nr_strays >= TT_EXEC_STRAYS)
		return;
	e = &x->strays[x->nr_strays++];
	e->start = start;
	e->end = end;
	e->nid = nid;
	e->tries = tries;
}

/*
 * Move the chunks from @l->next_chunk on back to @l->fast_nid; the caller
 * owns the episode (PREFETCHING). @remote: from a worker (pinned by the
 * caller, @abort obeyed), else from the session's own process. Returns
 * the bytes moved; *@elapsed gets the mover's time. A chunk the mover
 * could not finish stays the next one. From a worker, at most one slice:
 * *@more is set when chunks are left only for that reason.
 */
static unsigned long long tt_x_fetch(struct tt_exec *x,
				     struct tt_exec_layer *l, int remote,
				     unsigned long long *elapsed, int *more)
{
	unsigned long long moved = 0, slice = 0;
	unsigned int i;

	*elapsed = 0;
	*more = 0;
	for (i = l->next_chunk; i < l->nr_chunks; i++) {
		struct tt_chunk *c = &l->chunks[i];
		struct tt_migrate_result res = { 0 };
		unsigned long long left = 0;
		int ret = 0;

		/* TT_SCHED_DEFER_LATE: the backward pass began */
		if (remote && tt_x_aborted(l))
			break;
		if (remote && slice >= TT_EXEC_SLICE_BYTES) {
			*more = 1;
			break;
		}
		slice += c->end - c->start;
		if (tt_x_to_fetch(c)) {
			/* the fast-tier budget: room for it first */
			tt_x_lock(x);
			ret = tt_x_admit(x, l, i, remote);
			tt_x_unlock(x);
			if (ret)
				break;
			ret = tt_x_fetch_chunk(x, l, c, remote, &res, &left);
			moved += res.moved * x->page_size;
			*elapsed += res.elapsed_ns;
		}
		tt_x_lock(x);
		x->counts.bytes_prefetched += res.moved * x->page_size;
		if (!ret) {
			/* pages left on the slow node are not back */
			l->returned += c->moved - tt_x_min(left, c->moved);
			l->next_chunk = i + 1;
			x->counts.prefetch_left_bytes += left;
			l->pf_left += left;
			if (left)
				tt_x_stray_add(x, c->start, c->end,
					       l->fast_nid, 0);
		}
		tt_x_unlock(x);
		if (ret)
			break;
	}
	return moved;
}

/*
 * A prefetch returned (lock held): rate sample; when every chunk is back,
 * lateness feedback and the end of the episode, else (the mover failed
 * part-way) the rest stays EVICTED for the next rescue, unless closing.
 */
static void tt_x_fetched(struct tt_exec *x, struct tt_exec_layer *l,
			 unsigned long long moved, unsigned long long elapsed)
{
	int idx;

	x->ops->trace_migration(x, TT_TRACE_PREFETCH, l->id, l->iter, moved,
				l->mig_start, l->fast_nid,
				(l->sync ? TT_TRACE_F_SYNC : 0) |
				(l->next_chunk < l->nr_chunks ?
				 TT_TRACE_F_STOPPED : 0));
	/* a wait for room in the budget is no part of the rate */
	tt_tl_rate_sample(&x->tl, TT_TL_PREFETCH, moved,
			  l->bud_waited ? elapsed : tt_x_took(x, l, elapsed));
	if (l->pf_left) {
		/* counted in prefetch_left_bytes as each chunk ended */
		x->ops->trace_layer(x, TT_TRACE_LEFT_SLOW, l->id, l->iter,
				    l->pf_left, tt_x_now(x),
				    l->sync ? TT_TRACE_F_SYNC : 0);
		l->pf_left = 0;
	}
	if (l->next_chunk < l->nr_chunks && !x->closing) {
		l->state = TT_EXEC_EVICTED;
		l->sync = 0;
		/*
		 * Stopped by TT_SCHED_DEFER_LATE: once the layer's backward
		 * pass is over (it may have ended while this chunk moved),
		 * the rest comes back now.
		 */
		if (tt_x_aborted(l) &&
		    (l->iter != x->tl.iter_seq ||
		     !tt_x_find(x, l->id, &idx) ||
		     (x->tl.st.layers[idx].seen & TT_TL_S_BWD_END)))
			tt_x_queue_prefetch(x, l);
		return;
	}
	/* late for want of room in the budget: not the schedule's fault */
	if (l->iter == x->tl.iter_seq && !l->bud_waited &&
	    tt_x_find(x, l->id, &idx))
		tt_tl_prefetch_end(&x->tl, idx, tt_x_now(x));
	tt_x_episode_end(x, l);
}

/*
 * The prefetch of @l, one slice per step: the first (PREFETCH_QUEUED)
 * starts it (PREFETCHING), each queues itself again (@pf_cont) while
 * chunks are left for want of room in its slice; the last ends it
 * (tt_x_fetched()). TT_SCHED_SYNC_LATE may take a re-queued prefetch over
 * (tt_x_sync_fetch() clears @pf_cont).
 */
void tt_exec_prefetch_step(struct tt_exec *x, struct tt_exec_layer *l)
{
	unsigned long long moved = 0, elapsed = 0;
	int more = 0;
	int idx;

	tt_x_lock(x);
	if (x->closing)
		goto out_unlock;
	if (l->state == TT_EXEC_PREFETCHING && l->pf_cont && !l->sync) {
		l->pf_cont = 0;		/* the next slice */
	} else if (l->state == TT_EXEC_PREFETCH_QUEUED) {
		if (tt_x_prefetch_wait_turn(x, l)) {
			x->ops->queue(x, l, TT_EXEC_WORK_PREFETCH);
			goto out_unlock;
		}
		l->state = TT_EXEC_PREFETCHING;
		l->sync = 0;
		l->pf_cont = 0;
		l->pf_moved = 0;
		l->pf_elapsed = 0;
		l->pf_left = 0;
		l->mig_start = tt_x_now(x);
		if (l->iter == x->tl.iter_seq && tt_x_find(x, l->id, &idx))
			tt_tl_prefetch_start(&x->tl, idx, tt_x_now(x));
	} else {
		goto out_unlock;
	}
	tt_x_unlock(x);

	/* A process that is gone has nothing to fetch back. */
	if (x->ops->pin(x)) {
		moved = tt_x_fetch(x, l, 1, &elapsed, &more);
		x->ops->unpin(x);
	} else {
		l->next_chunk = l->nr_chunks;
	}

	tt_x_lock(x);
	l->pf_moved += moved;
	l->pf_elapsed += elapsed;
	if (!tt_x_slice_again(x, l, TT_EXEC_WORK_PREFETCH, more))
		tt_x_fetched(x, l, l->pf_moved, l->pf_elapsed);
out_unlock:
	tt_x_unlock(x);
}

/*
 * The late bytes of the layer's backward begin that are back now, as
 * TT_SCHED_SYNC_LATE fetched them before the call returns (lock held).
 */
static void tt_x_count_sync(struct tt_exec *x, struct tt_exec_layer *l,
			    unsigned long long iter)
{
	unsigned long long late, left = l->state == TT_EXEC_IDLE ? 0 :
					tt_x_outstanding(l);
	int idx;

	if (iter != x->tl.iter_seq || l->synced_iter == iter ||
	    !tt_x_find(x, l->id, &idx))
		return;
	l->synced_iter = iter;
	late = x->tl.st.layers[idx].x.late_bytes;
	if (late > left)
		x->counts.sync_fetched_bytes += late - left;
}

/*
 * TT_SCHED_SYNC_LATE at a backward begin (lock not held): take the layer's
 * episode over (waiting for a running eviction, which is told to stop, or
 * a running prefetch) and move what is still evicted back in the caller.
 */
static void tt_x_sync_fetch(struct tt_exec *x, struct tt_exec_layer *l)
{
	unsigned long long moved, elapsed, iter;
	int more, idx;

	tt_x_lock(x);
	iter = x->tl.iter_seq;
	for (;;) {
		switch (l->state) {
		case TT_EXEC_EVICT_QUEUED:
			l->state = TT_EXEC_IDLE;
			goto out_unlock;
		case TT_EXEC_IDLE:
			goto out_unlock;
		case TT_EXEC_EVICTING:
			tt_x_set_abort(l, 1);
			tt_x_unlock(x);
			x->ops->wait(x, l, l->victim ? TT_EXEC_WORK_VICTIM :
				     TT_EXEC_WORK_EVICT);
			tt_x_lock(x);
			continue;
		case TT_EXEC_PREFETCHING:
			if (l->sync)		/* another thread fetches it */
				goto out_unlock;
			if (l->pf_cont) {
				/* between two slices: taken over here */
				l->pf_cont = 0;
				if (x->pf_turn == l)
					x->pf_turn = (struct tt_exec_layer *)0;
				break;
			}
			tt_x_unlock(x);
			x->ops->wait(x, l, TT_EXEC_WORK_PREFETCH);
			tt_x_lock(x);
			continue;
		case TT_EXEC_PREFETCH_QUEUED:
		case TT_EXEC_EVICTED:
			/* A queued prefetch step finds the state changed. */
			break;
		}
		break;
	}
	l->state = TT_EXEC_PREFETCHING;
	l->sync = 1;
	l->mig_start = tt_x_now(x);
	l->pf_left = 0;
	if (l->iter == x->tl.iter_seq && tt_x_find(x, l->id, &idx) &&
	    !x->tl.st.layers[idx].x.prefetch_start)
		tt_tl_prefetch_start(&x->tl, idx, tt_x_now(x));
	tt_x_unlock(x);

	moved = tt_x_fetch(x, l, 0, &elapsed, &more);

	tt_x_lock(x);
	tt_x_fetched(x, l, moved, elapsed);
out_unlock:
	tt_x_count_sync(x, l, iter);
	tt_x_unlock(x);
}

/*
 * min_migrate_kib: the plan's evictions smaller than that are not made,
 * the layers are dropped instead, nor a rate probe that small (lock held,
 * right after the plan).
 */
static void tt_x_min_size(struct tt_exec *x)
{
	unsigned long long min = tt_x_lim(x, TT_EXEC_LIM_MIN_MIGRATE);
	unsigned int i;

	/* nor a rate probe smaller than that */
	x->tl.probe_min = min;
	for (i = 0; i < x->tl.n; i++) {
		struct tt_tl_layer *tl = &x->tl.st.layers[i];
		struct tt_exec_layer *l = tl->priv;

		l->below_min = min && (tl->flags & TT_TL_L_PLANNED) &&
			       tl->final_bytes && tl->final_bytes < min;
		if (l->below_min) {
			tl->final_bytes = 0;
			tl->status = TT_POLICY_DROPPED;
		}
	}
}

/* TT_EV_ITER_BEGIN (lock held). */
static void tt_x_iter_begin(struct tt_exec *x, unsigned long long now)
{
	unsigned int i;

	/* Nothing of an earlier iteration stays evicted or saved one-shot. */
	for (i = 0; i < x->tl.n; i++) {
		struct tt_exec_layer *l = tt_x_at(x, i);

		tt_x_rescue(x, l);
		tt_x_forget(x, l);
	}
	tt_tl_iter_begin(&x->tl, now);
	tt_x_min_size(x);
	x->clk = 0;	/* the plan may have taken long */
	tt_x_dispatch(x);
	/* what earlier prefetches left on slow nodes: again, in the caller */
	if (x->nr_strays)
		x->strays_due = 1;
}

/* Queue the eviction of @bytes of layer @l's ranges (lock held). */
static void tt_x_order_evict(struct tt_exec *x, struct tt_exec_layer *l,
			     unsigned long long bytes)
{
	l->state = TT_EXEC_EVICT_QUEUED;
	l->iter = x->tl.iter_seq;
	l->target = bytes;
	l->cpu_nid = x->ops->cpu_node(x);
	l->pf_due = 0;
	tt_x_set_abort(l, 0);
	x->ops->queue(x, l, TT_EXEC_WORK_EVICT);
}

/*
 * TT_SCHED_DYNAMIC's fallback after a forward end: the evictions it
 * ordered k forward positions late; a layer whose previous episode is
 * still out is skipped (lock held).
 */
static void tt_x_delayed_evictions(struct tt_exec *x)
{
	unsigned int idx;
	unsigned long long bytes;

	while (tt_tl_next_evict(&x->tl, &idx, &bytes)) {
		struct tt_exec_layer *l = tt_x_at(x, idx);

		if (l && l->state == TT_EXEC_IDLE)
			tt_x_order_evict(x, l, bytes);
	}
}

/* The miss log entries written since the last call, as trace events. */
static void tt_x_misses(struct tt_exec *x, unsigned long long now)
{
	unsigned int n = x->tl.miss_head - x->misses_seen, i;
	struct tt_tl_miss m;

	for (i = tt_x_min(n, TT_TL_MISSES); i-- > 0;)
		if (tt_tl_miss_get(&x->tl, i, &m))
			x->ops->trace_layer(x, TT_TRACE_MISS, m.layer, m.iter,
					    m.bytes, now, m.kind);
	x->misses_seen = x->tl.miss_head;
}

/*
 * A layer event (lock held). Return 0 or -errno; *@sync gets the layer
 * when the caller must run tt_x_sync_fetch() once the lock is dropped.
 */
static int tt_x_layer_event(struct tt_exec *x, const struct tt_event *ev,
			    unsigned long long now,
			    struct tt_exec_layer **sync)
{
	int phase = ev->flags & TT_FWD ? TT_TL_FWD : TT_TL_BWD;
	int end = ev->type == TT_EV_LAYER_END;
	enum tt_tl_action act;
	struct tt_exec_layer *l;
	unsigned long long bytes, out, dropped;
	int mine, idx, err;

	l = tt_x_layer(x, ev->layer, &idx, &err);
	if (!l)
		return err;
	dropped = x->tl.counts.layers_dropped;
	act = tt_tl_layer_event(&x->tl, idx, phase, end, now,
				l->state == TT_EXEC_IDLE, &bytes);
	if (x->tl.counts.layers_dropped != dropped)
		x->ops->trace_layer(x, TT_TRACE_DROP, l->id, x->tl.iter_seq,
				    x->tl.st.layers[idx].cur.saved, now,
				    l->below_min ? TT_TRACE_F_MIN_SIZE : 0);
	/* An episode of this iteration: one the plan made for this pass. */
	mine = l->state != TT_EXEC_IDLE && l->iter == x->tl.iter_seq;
	switch (act) {
	case TT_TL_ACT_EVICT:
		tt_x_order_evict(x, l, bytes);
		break;
	case TT_TL_ACT_FETCH:
		/*
		 * still out: of this iteration's running episode, or what its
		 * ended one left on the slow node
		 */
		out = mine ? tt_x_outstanding(l) :
		      l->ended_iter == x->tl.iter_seq ? l->ended_left : 0;
		if (mine)
			tt_tl_bwd_check(&x->tl, idx, l->evicted, out);
		else if (x->tl.st.layers[idx].seen & TT_TL_S_EVICT)
			tt_tl_bwd_check(&x->tl, idx,
					x->tl.st.layers[idx].x.evicted_bytes,
					out);
		else
			out = 0;
		if (out)
			x->ops->trace_layer(x, TT_TRACE_LATE, l->id,
					    x->tl.iter_seq, out, now, 0);
		if ((x->cfg.flags & TT_SCHED_SYNC_LATE) &&
		    l->state != TT_EXEC_IDLE)
			*sync = l;
		else if (x->cfg.flags & TT_SCHED_DEFER_LATE)
			tt_x_settle(x, l, 1);
		else
			tt_x_rescue(x, l);
		break;
	case TT_TL_ACT_FORGET:
		tt_x_rescue(x, l);
		tt_x_forget(x, l);
		break;
	case TT_TL_ACT_NONE:
		break;
	}
	if (phase == TT_TL_FWD && end)
		tt_x_delayed_evictions(x);
	return 0;
}

/*
 * TT_EV_TENSOR_SAVED (lock held): the range is checked here, before
 * anything changes (Documentation/scheduler.md, "Saved tensors").
 */
static int tt_x_saved(struct tt_exec *x, const struct tt_event *ev,
		      unsigned long long now)
{
	int persistent = !!(ev->flags & TT_EV_PERSISTENT);
	struct tt_exec_layer *l;
	struct tt_exec_range *r;
	__u64 first, last;
	unsigned long long held;
	int idx, ret;

	/* Inside the user address space, rounded inward to whole pages. */
	ret = tt_event_range(ev->addr, ev->len, x->page_size, x->task_size,
			     &first, &last);
	if (ret)
		return ret;
	if (first == last) {
		x->counts.tensors_ignored++;
		return 0;
	}
	if (x->nr_ranges >= tt_x_lim(x, TT_EXEC_LIM_MAX_RANGES))
		return -TT_EXEC_ENOSPC;
	/* every byte mapped: its length is bounded by the caller's mappings */
	ret = x->ops->mapped(x, first, last);
	x->clk = 0;	/* it may have waited for the mapping lock */
	if (ret)
		return ret;
	/* overlapping tensors saved again and again: the sum must not wrap */
	if (__builtin_add_overflow(x->bud.held, last - first, &held))
		return -TT_EXEC_EOVERFLOW;
	l = tt_x_layer(x, ev->layer, &idx, &ret);
	if (!l)
		return ret;
	if (persistent) {
		/* Saved again (say every iteration): keep the one entry. */
		for (r = tt_x_first(&l->ranges); r; r = tt_x_next(r, &l->ranges)) {
			if (r->persistent && r->start == first &&
			    r->end == last) {
				r->uses++;
				x->counts.tensors_saved++;
				return 0;
			}
		}
	}
	if (!tt_x_list_empty(&x->free)) {
		r = tt_x_range(x->free.next);
		tt_x_list_del(&r->link);
	} else {
		r = x->ops->range_alloc(x);
		if (!r)
			return -TT_EXEC_ENOMEM;
		tt_x_list_init(&r->link);
	}
	r->start = first;
	r->end = last;
	r->id = ++x->range_seq;
	r->persistent = persistent;
	r->taken = 0;
	r->arch_taken = 0;
	r->saved_ns = (ev->flags & TT_EV_TIMESTAMP) ? now : tt_x_clock(x);
	r->uses = 1;
	tt_x_list_add_tail(&r->link, &l->ranges);
	x->nr_ranges++;
	x->bud.held = held;
	tt_x_publish(x);
	/* over the budget: room is made once the event is done */
	if (tt_x_over(x))
		x->bud.room = 1;
	if (!persistent)
		l->nr_oneshot++;
	tt_tl_saved(&x->tl, idx, last - first, persistent);
	x->counts.tensors_saved++;
	return 0;
}

/* One event at @now (lock held). */
static int tt_x_event(struct tt_exec *x, const struct tt_event *ev,
		      unsigned long long now, struct tt_exec_layer **sync)
{
	int stamped = !!(ev->flags & TT_EV_TIMESTAMP);
	int ret;

	ret = tt_event_check(ev);
	if (ret)
		return ret;
	if (stamped)
		now = ev->ts_ns;
	if (now < x->last_ts) {
		if (stamped)
			return -TT_EXEC_EINVAL;
		now = x->last_ts;	/* after a caller's stamp ahead of us */
	}

	switch (ev->type) {
	case TT_EV_ITER_BEGIN:
		tt_x_iter_begin(x, now);
		break;
	case TT_EV_TENSOR_SAVED:
		ret = tt_x_saved(x, ev, now);
		break;
	default:
		ret = tt_x_layer_event(x, ev, now, sync);
		/*
		 * TT_SCHED_ANCHOR: the event moved the triggers;
		 * TT_SCHED_COUNT, the dynamic fallback: a backward begin
		 * released some. Look again, when any prefetch is pending
		 * (none: tt_tl_next_due() would hand out nothing and ask for
		 * no timer).
		 */
		if (!ret && (x->tl.anchor || x->tl.count || x->tl.fallback) &&
		    x->tl.due_pos < x->tl.ndue)
			tt_x_dispatch(x);
		break;
	}
	if (x->tl.miss_head != x->misses_seen)
		tt_x_misses(x, now);
	if (ret)
		return ret;
	x->last_ts = now;
	x->counts.events++;
	x->ops->trace_event(x, ev, now, x->tl.iter_seq);
	return 0;
}

static void tt_x_strays(struct tt_exec *x);

int tt_exec_events(struct tt_exec *x, const struct tt_event *ev,
		   unsigned int n, unsigned long long now, unsigned int *done)
{
	struct tt_exec_layer *sync;
	int ret = 0;

	*done = 0;
	tt_x_lock(x);
	x->clk = now;	/* the caller's reading, 0 for none */
	tt_x_call_begin(x);
	while (*done < n) {
		sync = (struct tt_exec_layer *)0;
		ret = tt_x_event(x, &ev[*done], (ev[*done].flags & TT_EV_TIMESTAMP) ?
				 0 : tt_x_clock(x), &sync);
		tt_x_budget_released(x);
		if (ret)
			break;
		(*done)++;
		if (sync) {
			tt_x_unlock(x);
			tt_x_sync_fetch(x, sync);
			tt_x_lock(x);
			x->clk = 0;
			tt_x_call_begin(x);
		}
		if (x->bud.room) {
			x->bud.room = 0;
			tt_x_unlock(x);
			tt_exec_budget_room(x);
			tt_x_lock(x);
			x->clk = 0;
			tt_x_call_begin(x);
		}
		if (x->strays_due) {
			x->strays_due = 0;
			tt_x_unlock(x);
			tt_x_strays(x);
			tt_x_lock(x);
			x->clk = 0;
			tt_x_call_begin(x);
		}
	}
	tt_x_peak(x, tt_x_fast(x));
	x->clk = 0;
	tt_x_unlock(x);
	return ret;
}

int tt_exec_cfg_check(const struct tt_ioc_sched *req)
{
	if ((req->valid & ~TT_SCHED_SET_ALL) ||
	    (req->flags & ~TT_SCHED_FLAGS_ALL) ||
	    (!(req->valid & TT_SCHED_SET_BUDGET) && req->budget_mib))
		return -TT_EXEC_EOPNOTSUPP;
	/* the reference semantics exclude every extension */
	if ((req->valid & TT_SCHED_SET_FLAGS) &&
	    (req->flags & TT_SCHED_REFERENCE) &&
	    (req->flags & TT_SCHED_EXTENSIONS))
		return -TT_EXEC_EINVAL;
	if ((req->valid & TT_SCHED_SET_PROFILE) &&
	    (req->profile_iters < 1 ||
	     req->profile_iters > TT_EXEC_PROFILE_ITERS_MAX))
		return -TT_EXEC_EINVAL;
	if ((req->valid & TT_SCHED_SET_RATES) && (!req->er_bps || !req->pr_bps))
		return -TT_EXEC_EINVAL;
	return 0;
}

void tt_exec_cfg_set(struct tt_exec *x, const struct tt_ioc_sched *req)
{
	tt_x_lock(x);
	if (req->valid & TT_SCHED_SET_FLAGS) {
		x->cfg.flags = req->flags;
		tt_tl_set_modes(&x->tl, req->flags);
	}
	if (req->valid & TT_SCHED_SET_PROFILE) {
		x->cfg.profile_iters = req->profile_iters;
		x->tl.profile_iters = req->profile_iters;
	}
	if (req->valid & TT_SCHED_SET_STAY) {
		x->cfg.stay_ns = req->stay_ns;
		x->tl.stay_ns = req->stay_ns;
	}
	if (req->valid & TT_SCHED_SET_RATES)
		tt_tl_set_rates(&x->tl, req->er_bps, req->pr_bps);
	if (req->valid & TT_SCHED_SET_NODES) {
		x->cfg.slow_node = req->slow_node;
		x->cfg.fast_node = req->fast_node;
	}
	if (req->valid & TT_SCHED_SET_BUDGET)
		x->cfg.budget = (unsigned long long)req->budget_mib << 20;
	tt_x_unlock(x);
	if (req->valid & (TT_SCHED_SET_BUDGET | TT_SCHED_SET_FLAGS)) {
		/* lowered: room now; raised: the waiting ones may fit */
		tt_exec_budget_room(x);
		tt_x_lock(x);
		tt_x_budget_retry(x);
		tt_x_unlock(x);
		if (tt_x_lim(x, TT_EXEC_LIM_BUDGET_GLOBAL))
			x->ops->budget_kick(x);	/* the shares changed */
	}
}

void tt_exec_cfg_get(struct tt_exec *x, struct tt_ioc_sched *out)
{
	tt_x_zero(out, sizeof(*out));
	out->valid = TT_SCHED_SET_ALL;
	tt_x_lock(x);
	out->flags = x->cfg.flags;
	out->profile_iters = x->cfg.profile_iters;
	out->stay_ns = x->cfg.stay_ns;
	out->er_bps = x->tl.er_bps;
	out->pr_bps = x->tl.pr_bps;
	out->slow_node = x->cfg.slow_node;
	out->fast_node = x->cfg.fast_node;
	out->budget_mib = x->cfg.budget >> 20;
	tt_x_unlock(x);
}

unsigned int tt_exec_nr_layers(struct tt_exec *x)
{
	unsigned int n;

	tt_x_lock(x);
	n = x->tl.n;
	tt_x_unlock(x);
	return n;
}

static unsigned int tt_x_status(const struct tt_tl_layer *l)
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

unsigned int tt_exec_layers(struct tt_exec *x, unsigned int from,
			    struct tt_layer_info *info, unsigned int max,
			    unsigned int *known)
{
	unsigned int i, n;

	tt_x_lock(x);
	n = from < x->tl.n ? tt_x_min(max, x->tl.n - from) : 0;
	for (i = 0; i < n; i++) {
		const struct tt_tl_layer *l = &x->tl.st.layers[from + i];
		struct tt_layer_info *o = &info[i];

		tt_x_zero(o, sizeof(*o));
		o->layer = l->id;
		o->status = tt_x_status(l);
		o->saved_bytes = l->prof.saved;
		o->fwd_end_ns = l->prof.fwd_end;
		o->bwd_start_ns = l->prof.bwd_start;
		o->final_bytes = l->final_bytes;
		o->prefetch_ns = l->prefetch_ns;
		o->lead_ns = tt_tl_lead(&x->tl, l);
		o->last_fwd_end_ns = l->x.fwd_end;
		o->last_evict_start_ns = l->x.evict_start;
		o->last_evict_end_ns = l->x.evict_end;
		o->last_prefetch_start_ns = l->x.prefetch_start;
		o->last_prefetch_end_ns = l->x.prefetch_end;
		o->last_bwd_start_ns = l->x.bwd_start;
		o->last_evicted_bytes = l->x.evicted_bytes;
		o->last_late_bytes = l->x.late_bytes;
	}
	*known = x->tl.n;
	tt_x_unlock(x);
	return n;
}

void tt_exec_resident(struct tt_exec *x, unsigned long long *held,
		      unsigned long long *slow)
{
	struct tt_exec_range *r;
	unsigned long long h = 0, o = 0;
	unsigned int i;

	tt_x_lock(x);
	for (i = 0; i < x->tl.n; i++) {
		struct tt_exec_layer *l = tt_x_at(x, i);

		for (r = tt_x_first(&l->ranges); r; r = tt_x_next(r, &l->ranges))
			h += r->end - r->start;
		if (l->state != TT_EXEC_IDLE)
			o += tt_x_outstanding(l);
	}
	tt_x_unlock(x);
	*held = h;
	*slow = tt_x_min(o, h);
}

void tt_exec_stats(struct tt_exec *x, struct tt_sched_stats *out)
{
	const struct tt_tl_counts *tc = &x->tl.counts;
	unsigned long long lim, total, g;
	struct tt_tl_miss m;

	tt_x_lock(x);
	out->iterations = tc->iterations;
	out->events = x->counts.events;
	out->tensors_saved = x->counts.tensors_saved;
	out->tensors_ignored = x->counts.tensors_ignored;
	out->layers_accepted = tc->layers_accepted;
	out->layers_modified = tc->layers_modified;
	out->layers_dropped = tc->layers_dropped;
	out->layers_unknown = tc->layers_unknown;
	out->bytes_evicted = x->counts.bytes_evicted;
	out->bytes_prefetched = x->counts.bytes_prefetched;
	out->ontime_bytes = tc->ontime_bytes;
	out->late_bytes = tc->late_bytes;
	out->late_count = tc->late_count;
	out->sync_fetched_bytes = x->counts.sync_fetched_bytes;
	out->prefetch_left_bytes = x->counts.prefetch_left_bytes;
	out->landed_bytes = x->counts.landed_bytes;
	out->rate_probes = tc->rate_probes;
	out->left_returned_bytes = x->counts.left_returned_bytes;
	out->reprofiles = tc->reprofiles;
	out->er_bps = x->tl.er_bps;
	out->pr_bps = x->tl.pr_bps;
	out->pinned_bytes = tt_hint_bytes(&x->hints, TT_HINT_PIN_FAST);
	out->archived_bytes = tt_hint_bytes(&x->hints, TT_HINT_ARCHIVE);
	out->count_ahead = x->tl.count || x->tl.dynamic ?
			   tt_tl_ahead_max(&x->tl) : 0;
	out->count_released = tc->count_released;
	out->dyn_signatures = tt_tl_signatures(&x->tl);
	out->dyn_predicted = tc->dyn_predicted;
	out->dyn_mispredicted = tc->dyn_mispredicted;
	out->dyn_fallback = tc->dyn_fallback;
	out->dyn_misses = tc->dyn_misses;
	out->last_miss_iter = 0;
	out->last_miss_layer = 0;
	out->last_miss_kind = 0;
	if (tt_tl_miss_get(&x->tl, 0, &m)) {
		out->last_miss_iter = m.iter;
		out->last_miss_layer = m.layer;
		out->last_miss_kind = m.kind;
	}
	lim = x->ops->budget_limit(x, &total, &g);
	out->budget_bytes = lim == TT_EXEC_BUDGET_NONE ? 0 : lim;
	out->fast_registered_bytes = tt_x_fast(x);
	out->fast_peak_bytes = x->bud.counts.peak;
	out->victims = x->bud.counts.victims;
	out->victim_bytes = x->bud.counts.victim_bytes;
	out->victim_archived_bytes = x->bud.counts.victim_archived;
	out->victims_skipped_pages = x->bud.counts.skipped_pages;
	out->budget_waits = x->bud.counts.waits;
	out->budget_overruns = x->bud.counts.overruns;
	out->heat_wf = x->bud.w.f;
	out->heat_wr = x->bud.w.r;
	out->heat_ws = x->bud.w.s;
	out->heat_wl = x->bud.w.l;
	out->kmem_bytes = x->kmem;
	tt_x_unlock(x);
}

/*
 * Room for one more change of the hint set (lock held): 0, -ENOSPC or
 * -ENOMEM.
 */
static int tt_x_hint_room(struct tt_exec *x)
{
	unsigned int lim = tt_x_lim(x, TT_EXEC_LIM_MAX_RANGES);
	struct tt_hint_iv *iv;
	unsigned int cap;

	if (x->hints.n + 2 <= x->hints.cap)
		return 0;
	if (x->hints.n + 2 > lim)
		return -TT_EXEC_ENOSPC;
	/* doubling, never past max_ranges */
	cap = tt_x_min(tt_x_max(16U, 2 * x->hints.cap), lim);
	iv = x->ops->alloc(x, cap, sizeof(*iv), 0);
	if (!iv)
		return -TT_EXEC_ENOMEM;
	if (x->hints.n)
		tt_x_copy(iv, x->hints.iv, x->hints.n * sizeof(*iv));
	x->ops->free(x, x->hints.iv);
	x->kmem -= tt_x_min(x->kmem,
			    (unsigned long long)x->hints.cap * sizeof(*iv));
	x->hints.iv = iv;
	x->hints.cap = cap;
	x->kmem += (unsigned long long)cap * sizeof(*iv);
	return 0;
}

/* Drop the strays that touch [@start, @end) (lock held). */
static void tt_x_strays_drop(struct tt_exec *x, unsigned long long start,
			     unsigned long long end)
{
	unsigned int i = 0;

	while (i < x->nr_strays) {
		if (x->strays[i].end > start && x->strays[i].start < end)
			x->strays[i] = x->strays[--x->nr_strays];
		else
			i++;
	}
}

/*
 * A WILL_USE or PIN_FAST hint on [@start, @end) (lock held): the
 * intervals hinted TT_HINT_ARCHIVE it overlaps lose TT_HINT_F_OUT (their
 * plain pages are coming back: the next victim round sends them out
 * again).
 */
static void tt_x_hint_back(struct tt_exec *x, unsigned long long start,
			   unsigned long long end)
{
	unsigned int i;

	for (i = 0; i < x->hints.n; i++)
		if (x->hints.iv[i].end > start && x->hints.iv[i].start < end)
			x->hints.iv[i].flags &= ~TT_HINT_F_OUT;
}

int tt_exec_hint(struct tt_exec *x, unsigned long long start,
		 unsigned long long end, unsigned int h)
{
	struct tt_migrate_result res = { 0 };
	int back = !!(h & (TT_HINT_WILL_USE | TT_HINT_PIN_FAST));
	unsigned int keep = TT_HINT_PIN_FAST | TT_HINT_ARCHIVE | TT_HINT_RETIRE;
	struct tt_hint_iv *plain = (struct tt_hint_iv *)0;
	long nplain = 0;
	unsigned int i;
	int ret = 0, fast;

	tt_x_lock(x);
	if (h & keep) {
		ret = tt_x_hint_room(x);
		if (ret)
			goto out;
	}
	if (back) {
		nplain = tt_x_plain_pieces(x, start, end, 0, &plain);
		if (nplain < 0) {
			ret = nplain;
			goto out;
		}
		tt_x_hint_back(x, start, end);
	}
	/* archived: they stay on the slow tier */
	if (h & TT_HINT_ARCHIVE)
		tt_x_strays_drop(x, start, end);
	if (h & keep) {
		if (h & TT_HINT_RETIRE)
			tt_hint_clear(&x->hints, start, end);
		else
			tt_hint_set(&x->hints, start, end,
				    h & (TT_HINT_PIN_FAST | TT_HINT_ARCHIVE));
	}
	for (i = 0; i < x->tl.n; i++) {
		struct tt_exec_layer *l = tt_x_at(x, i);
		struct tt_exec_range *r, *t;
		int hit = 0;

		for (r = tt_x_first(&l->ranges); r; r = t) {
			t = tt_x_next(r, &l->ranges);
			if (r->end <= start || r->start >= end)
				continue;
			hit = 1;
			if (h & TT_HINT_RETIRE)
				tt_x_forget_entry(x, l, r);
		}
		if (hit)
			tt_x_rescue(x, l);
		tt_x_resched(x);
	}
	tt_x_budget_released(x);
	fast = x->cfg.fast_node >= 0 ? x->cfg.fast_node : x->ops->cpu_node(x);
	tt_x_unlock(x);
	/* a CPU node without memory (or offline) has nothing to take them */
	if (back && nplain && !x->ops->node_check(x, fast)) {
		ret = x->ops->move_plain(x, plain, nplain, &fast, 1,
					 TT_EXEC_MV_SYNC, &res);
		if (!ret && res.skipped_no_memory)
			ret = -TT_EXEC_ENOSPC;
	}
	x->ops->free(x, plain);
	return ret;
out:
	tt_x_unlock(x);
	x->ops->free(x, plain);
	return ret;
}

void tt_exec_init(struct tt_exec *x, const struct tt_exec_ops *ops,
		  const struct tt_exec_cfg *cfg, unsigned long long er_bps,
		  unsigned long long pr_bps, unsigned long long page_size,
		  unsigned long long huge_size, unsigned long long task_size,
		  int nr_nodes)
{
	tt_x_zero(x, sizeof(*x));
	x->ops = ops;
	x->cfg = *cfg;
	x->page_size = page_size;
	x->huge_size = huge_size;
	x->task_size = task_size;
	x->nr_nodes = nr_nodes;
	tt_tl_init(&x->tl, page_size, cfg->profile_iters, cfg->stay_ns,
		   er_bps, pr_bps);
	tt_tl_set_modes(&x->tl, cfg->flags);
	tt_x_list_init(&x->free);
	tt_heat_w_init(&x->bud.w);
}

void tt_exec_close(struct tt_exec *x)
{
	tt_x_lock(x);
	x->closing = 1;
	tt_x_unlock(x);
}

void tt_exec_fetch_all(struct tt_exec *x)
{
	struct tt_exec_layer *l;
	unsigned long long moved;
	unsigned int i, c;

	for (i = 0;; i++) {
		tt_x_lock(x);
		l = i < x->tl.n ? tt_x_at(x, i) : (struct tt_exec_layer *)0;
		if (!l || l->state == TT_EXEC_IDLE) {
			tt_x_unlock(x);
			if (!l)
				return;
			continue;
		}
		l->state = TT_EXEC_PREFETCHING;
		l->sync = 1;
		tt_x_unlock(x);
		for (c = l->next_chunk; c < l->nr_chunks; c++) {
			struct tt_chunk *ch = &l->chunks[c];
			struct tt_exec_move m = {
				.start = ch->start, .end = ch->end,
				.nids = &l->fast_nid, .nr = 1, .flags = 0,
			};
			struct tt_migrate_result res = { 0 };

			if (tt_x_to_fetch(ch) && l->fast_nid >= 0)
				x->ops->move(x, l, &m, &res);
			moved = res.moved * x->page_size;
			tt_x_lock(x);
			x->counts.bytes_prefetched += moved;
			l->returned += ch->moved;
			l->next_chunk = c + 1;
			tt_x_unlock(x);
			tt_x_resched(x);
		}
		tt_x_lock(x);
		tt_x_episode_end(x, l);
		tt_x_unlock(x);
	}
}

/* Pages tt_exec_landed() looks at per hold of the lock. */
#define TT_X_LANDED_WIN	512
#define TT_X_WORD_BITS	(8 * sizeof(unsigned long long))

/* Set bits [@from, @to) of @map. */
static void tt_x_bits_set(unsigned long long *map, unsigned long long from,
			  unsigned long long to)
{
	while (from < to) {
		unsigned long long w = from / TT_X_WORD_BITS;
		unsigned long long o = from % TT_X_WORD_BITS;
		unsigned long long n = TT_X_WORD_BITS - o;

		if (n > to - from)
			n = to - from;
		map[w] |= (n == TT_X_WORD_BITS ? ~0ULL :
			   ((1ULL << n) - 1) << o);
		from += n;
	}
}

static int tt_x_bit(const unsigned long long *map, unsigned long long i)
{
	return (int)((map[i / TT_X_WORD_BITS] >> (i % TT_X_WORD_BITS)) & 1);
}

/*
 * For tt_x_span_back() (lock held): set in @held the bit of every page of
 * [@a, @a + @n pages) inside a chunk that a running episode holds evicted
 * and its prefetch has not fetched yet, and with @mark mark those chunks
 * @landed. One pass over the chunks.
 */
static void tt_x_landed_mark(struct tt_exec *x, unsigned long long a,
			     unsigned long long n, unsigned long long *held,
			     int mark)
{
	unsigned long long end = a + n * x->page_size, s, e;
	struct tt_exec_layer *l;
	struct tt_chunk *c;
	unsigned int i, k;

	for (i = 0; i < x->tl.n; i++) {
		l = tt_x_at(x, i);
		if (!l || (l->state != TT_EXEC_EVICTING &&
			   l->state != TT_EXEC_EVICTED &&
			   l->state != TT_EXEC_PREFETCH_QUEUED))
			continue;
		for (k = l->next_chunk; k < l->nr_chunks; k++) {
			c = &l->chunks[k];
			if (c->start >= end || c->end <= a)
				continue;
			if (mark)
				__atomic_store_n(&c->landed, 1,
						 __ATOMIC_RELAXED);
			s = c->start > a ? c->start : a;
			e = c->end < end ? c->end : end;
			tt_x_bits_set(held, (s - a) / x->page_size,
				      (e - a + x->page_size - 1) /
				      x->page_size);
		}
	}
}

/*
 * Move [@a, @b) to @nid with ops->move (@flags), busy pages retried; the
 * pages moved, and in *@left those the last pass left (busy, no memory,
 * unsupported).
 */
static unsigned long long tt_x_landed_move(struct tt_exec *x,
					   unsigned long long a,
					   unsigned long long b, int nid,
					   unsigned int flags,
					   unsigned long long *left)
{
	struct tt_exec_move m = { .nr = 1, .flags = flags };
	unsigned long long moved = 0;
	unsigned int pass;

	m.start = a;
	m.end = b;
	m.nids = &nid;
	/* busy pages (the mover's just-moved ones): again */
	for (pass = 0; pass < TT_SCHED_FETCH_PASSES; pass++) {
		struct tt_migrate_result r = { 0 };
		int err;

		if (pass)
			x->ops->pause(x, 1000U << (pass - 1));
		err = x->ops->move(x, (struct tt_exec_layer *)0, &m, &r);
		moved += r.moved;
		*left = tt_x_res_left(&r);
		if (err || !r.skipped_busy)
			break;
	}
	return moved;
}

/*
 * Move the pages of [@start, @end) to @nid (-1: the session's fast_node,
 * else ops->cpu_node) in the caller, all but those inside chunks a running
 * episode holds evicted (marked @landed with @mark: its prefetch fetches
 * them). The lock is taken once per TT_X_LANDED_WIN pages, and once more
 * after their moves to add the bytes moved to *@count (NULL: not
 * counted). Return: the pages moved; *@left: the pages the moves left
 * (busy, no memory, unsupported).
 */
static unsigned long long tt_x_span_back(struct tt_exec *x,
					 unsigned long long start,
					 unsigned long long end, int nid,
					 int mark, unsigned int flags,
					 unsigned long long *count,
					 unsigned long long *left)
{
	unsigned long long held[TT_X_LANDED_WIN / TT_X_WORD_BITS];
	unsigned long long pos, n, i, j, moved = 0, w, l;
	int to;

	*left = 0;
	start -= start % x->page_size;
	for (pos = start; pos < end; pos += n * x->page_size) {
		n = (end - pos) / x->page_size + !!((end - pos) % x->page_size);
		if (n > TT_X_LANDED_WIN)
			n = TT_X_LANDED_WIN;
		for (i = 0; i < TT_X_LANDED_WIN / TT_X_WORD_BITS; i++)
			held[i] = 0;
		tt_x_lock(x);
		if (x->closing) {
			tt_x_unlock(x);
			break;
		}
		tt_x_landed_mark(x, pos, n, held, mark);
		to = nid >= 0 ? nid : x->cfg.fast_node;
		tt_x_unlock(x);
		if (to < 0)
			to = x->ops->cpu_node(x);
		/* every run of pages outside the held chunks, to @to now */
		w = 0;
		for (i = 0; i < n; i = j) {
			for (j = i + 1; j < n; j++)
				if (tt_x_bit(held, j) != tt_x_bit(held, i))
					break;
			if (tt_x_bit(held, i))
				continue;
			l = 0;
			w += tt_x_landed_move(x, pos + i * x->page_size,
					      pos + j * x->page_size, to,
					      flags, &l);
			*left += l;
		}
		moved += w;
		if (w && count) {
			tt_x_lock(x);
			*count += w * x->page_size;
			tt_x_unlock(x);
		}
		tt_x_resched(x);
		if (end - pos <= n * x->page_size)
			break;
	}
	return moved;
}

void tt_exec_landed(struct tt_exec *x, unsigned long long start,
		    unsigned long long end)
{
	unsigned long long left;

	tt_x_span_back(x, start, end, -1, 1, TT_EXEC_MV_REPAIR,
		       &x->counts.landed_bytes, &left);
}

/*
 * The strays' retry (struct tt_exec @strays), in the caller of
 * tt_exec_events() after an iteration begin (lock not held): each span
 * back to its fast node, but the chunks running episodes hold evicted; a
 * span of a node that can no longer take pages is dropped.
 */
static void tt_x_strays(struct tt_exec *x)
{
	struct tt_exec_stray s[TT_EXEC_STRAYS];
	unsigned long long moved, left;
	unsigned int n, i;

	tt_x_lock(x);
	n = x->nr_strays;
	tt_x_copy(s, x->strays, n * sizeof(s[0]));
	x->nr_strays = 0;
	tt_x_unlock(x);
	for (i = 0; i < n; i++) {
		if (x->ops->node_check(x, s[i].nid))
			continue;
		moved = tt_x_span_back(x, s[i].start, s[i].end, s[i].nid, 0,
				       0, &x->counts.left_returned_bytes,
				       &left);
		tt_x_lock(x);
		x->counts.bytes_prefetched += moved * x->page_size;
		/* left again: once more at the next iteration begin */
		if (left && !x->closing && ++s[i].tries < TT_EXEC_STRAY_TRIES)
			tt_x_stray_add(x, s[i].start, s[i].end, s[i].nid,
				       s[i].tries);
		tt_x_unlock(x);
	}
}

struct tt_exec_layer *tt_exec_layer_at(struct tt_exec *x, unsigned int i)
{
	return i < x->tl.n ? tt_x_at(x, i) : (struct tt_exec_layer *)0;
}

static void tt_x_free_ranges(struct tt_exec *x, struct tt_exec_link *list)
{
	unsigned long n = 0;

	/* up to max_ranges entries: let others run meanwhile */
	while (!tt_x_list_empty(list)) {
		struct tt_exec_range *r = tt_x_range(list->next);

		tt_x_list_del(&r->link);
		x->ops->range_free(x, r);
		if (!(++n % TT_EXEC_RESCHED_EVERY))
			tt_x_resched(x);
	}
}

void tt_exec_free(struct tt_exec *x)
{
	unsigned int i;

	for (i = 0; i < x->tl.n; i++) {
		struct tt_exec_layer *l = tt_x_at(x, i);

		x->ops->free(x, l->ev_bytes);
		l->ev_bytes = (unsigned long long *)0;
		tt_x_free_ranges(x, &l->ranges);
		tt_x_chunks_free(x, l);
		x->ops->layer_free(x, l);
		x->tl.st.layers[i].priv = (void *)0;
	}
	x->ops->free(x, x->bud.items);
	x->ops->free(x, x->bud.refs);
	x->bud.items = (struct tt_heat_item *)0;
	x->bud.refs = (void **)0;
	x->bud.cap = 0;
	tt_x_free_ranges(x, &x->free);
	x->ops->free(x, x->hints.iv);
	x->hints.iv = (struct tt_hint_iv *)0;
	x->hints.n = 0;
	x->hints.cap = 0;
	tt_x_free_storage(x, &x->tl.st);
	x->tl.st.layers = (struct tt_tl_layer *)0;
	x->tl.n = 0;
	x->tl.st.cap = 0;
}
