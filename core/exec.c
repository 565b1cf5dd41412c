// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * exec.c - the executor (exec.h): a session's events drive its timeline
 * (timeline.c, which decides through policy.c); this file executes the
 * decisions through the side's operations and reports back.
 * Documentation/scheduler.md describes the whole; the comments here are
 * about the mechanics.
 *
 * No includes besides exec.h (and through it the uapi header and core/'s
 * own) and event.h, no library calls, no allocation but through the ops:
 * the same source is compiled into the kernel module and libtiertrain.
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
 * Fast-tier budget: the session counts its registered bytes (@bud.held)
 * and what of them its evictions moved out and no prefetch has admitted
 * back (@bud.slow, per chunk in @counted); prefetches admit each chunk
 * before moving it, registrations that take the session over make room in
 * the event call, and victims are appended to their layer's episode, so
 * they come back as its evictions do.
 */
#include "event.h"
#include "exec.h"
#include "heapsort.h"

#define TT_X_LLONG_MAX	((long long)(~0ULL >> 1))
#define TT_X_LLONG_MIN	(-TT_X_LLONG_MAX - 1)

#define TT_X_CONTAINER(ptr, type, member) \
	((type *)((char *)(ptr) - __builtin_offsetof(type, member)))

static inline unsigned long long tt_x_min(unsigned long long a,
					  unsigned long long b)
{
	return a < b ? a : b;
}

static inline unsigned long long tt_x_max(unsigned long long a,
					  unsigned long long b)
{
	return a > b ? a : b;
}

/* @v rounded up to a multiple of @a (a power of two). */
static inline unsigned long long tt_x_align(unsigned long long v,
					    unsigned long long a)
{
	return (v + a - 1) & ~(a - 1);
}

static void tt_x_zero(void *p, unsigned long n)
{
	char *c = p;

	while (n--)
		*c++ = 0;
}

static void tt_x_copy(void *d, const void *s, unsigned long n)
{
	char *a = d;
	const char *b = s;

	while (n--)
		*a++ = *b++;
}

/* The list helpers. */
static inline void tt_x_list_init(struct tt_exec_link *h)
{
	h->next = h;
	h->prev = h;
}

static inline int tt_x_list_empty(const struct tt_exec_link *h)
{
	return h->next == h;
}

static inline void tt_x_list_del(struct tt_exec_link *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	e->next = e;
	e->prev = e;
}

static inline void tt_x_list_add_tail(struct tt_exec_link *e,
				      struct tt_exec_link *h)
{
	e->prev = h->prev;
	e->next = h;
	h->prev->next = e;
	h->prev = e;
}

/* A range entry from its link (the first member). */
static inline struct tt_exec_range *tt_x_range(struct tt_exec_link *e)
{
	return TT_X_CONTAINER(e, struct tt_exec_range, link);
}

/* The first range of list @h, NULL when empty. */
static inline struct tt_exec_range *tt_x_first(struct tt_exec_link *h)
{
	return h->next == h ? (struct tt_exec_range *)0 : tt_x_range(h->next);
}

/* The range after @r on list @h, NULL after the last. */
static inline struct tt_exec_range *tt_x_next(struct tt_exec_range *r,
					      struct tt_exec_link *h)
{
	return r->link.next == h ? (struct tt_exec_range *)0 :
	       tt_x_range(r->link.next);
}

/*
 * A layer's abort flag, which a mover reads without the lock: one
 * relaxed atomic load or store (the kernel's atomic_read()/atomic_set()).
 */
static inline void tt_x_set_abort(struct tt_exec_layer *l, int v)
{
	__atomic_store_n(&l->abort, v, __ATOMIC_RELAXED);
}

static inline int tt_x_aborted(const struct tt_exec_layer *l)
{
	return __atomic_load_n(&l->abort, __ATOMIC_RELAXED);
}

static inline struct tt_exec_layer *tt_x_vlayer(struct tt_exec_link *e)
{
	return TT_X_CONTAINER(e, struct tt_exec_layer, vlink);
}

static inline unsigned long long tt_x_lim(struct tt_exec *x,
					  enum tt_exec_limit what)
{
	return x->ops->limit(x, what);
}

static inline void tt_x_lock(struct tt_exec *x)
{
	x->ops->lock(x);
}

static inline void tt_x_unlock(struct tt_exec *x)
{
	x->ops->unlock(x);
}

static inline void tt_x_resched(struct tt_exec *x)
{
	x->ops->resched(x);
}

static inline void tt_x_publish(struct tt_exec *x)
{
	x->ops->budget_publish(x);
}

static inline void tt_x_call_begin(struct tt_exec *x)
{
	if (x->ops->call_begin)
		x->ops->call_begin(x);
}

static inline unsigned long long tt_x_now(struct tt_exec *x)
{
	return x->ops->now(x);
}

/*
 * The reading of the call under way (lock held): read at its first use and
 * kept in x->clk until whatever may block or take long resets it to 0
 * (Documentation/scheduler.md, "Events": one reading per call).
 */
static inline unsigned long long tt_x_clock(struct tt_exec *x)
{
	if (!x->clk)
		x->clk = tt_x_now(x);
	return x->clk;
}

static inline unsigned long long tt_x_page_align(const struct tt_exec *x,
						 unsigned long long v)
{
	return tt_x_align(v, x->page_size);
}

/* The layer object and timeline index of layer @id, or NULL (lock held). */
static struct tt_exec_layer *tt_x_find(struct tt_exec *x, unsigned int id,
				       int *idx)
{
	int i = tt_tl_find(&x->tl, id);

	if (idx)
		*idx = i;
	return i < 0 ? (struct tt_exec_layer *)0 :
	       (struct tt_exec_layer *)x->tl.st.layers[i].priv;
}

static struct tt_exec_layer *tt_x_at(struct tt_exec *x, unsigned int i)
{
	return x->tl.st.layers[i].priv;
}

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

static void tt_x_queue_prefetch(struct tt_exec *x, struct tt_exec_layer *l)
{
	tt_x_set_abort(l, 0);	/* any eviction is over; see tt_x_settle() */
	l->state = TT_EXEC_PREFETCH_QUEUED;
	x->ops->queue(x, l, TT_EXEC_WORK_PREFETCH);
}

/* Bytes of the episode still on the slow node (lock held). */
static unsigned long long tt_x_outstanding(const struct tt_exec_layer *l)
{
	return l->evicted - tt_x_min(l->returned, l->evicted);
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

static void tt_x_range_free(struct tt_exec *x, struct tt_exec_range *r)
{
	x->bud.held -= tt_x_min(r->end - r->start, x->bud.held);
	tt_x_publish(x);
	tt_x_list_del(&r->link);
	tt_x_list_add_tail(&r->link, &x->free);
	x->nr_ranges--;
}

/* Bytes [@a, @b) and [@c, @d) have in common. */
static unsigned long long tt_x_overlap(unsigned long long a,
				       unsigned long long b,
				       unsigned long long c,
				       unsigned long long d)
{
	unsigned long long lo = tt_x_max(a, c), hi = tt_x_min(b, d);

	return hi > lo ? hi - lo : 0;
}

/*
 * Ranges of @l are about to be forgotten: @r, or with @r NULL every
 * one-shot range. What its chunks count on the slow tier for them no
 * longer counts: they are no longer registered (lock held).
 */
static void tt_x_detach(struct tt_exec *x, struct tt_exec_layer *l,
			const struct tt_exec_range *r)
{
	struct tt_exec_range *o;
	int all = !r;
	unsigned int i;
	unsigned long long ov, d;

	l->forget_gen++;
	x->bud.released = 1;
	if (!l->counted)
		return;
	if (!r)
		for (o = tt_x_first(&l->ranges); o; o = tt_x_next(o, &l->ranges))
			all &= !o->persistent;
	for (i = 0; i < l->nr_chunks; i++) {
		const struct tt_chunk *c = &l->chunks[i];

		if (!l->counted[i])
			continue;
		if (all) {
			ov = l->counted[i];
		} else if (r) {
			ov = tt_x_overlap(c->start, c->end, r->start, r->end);
		} else {
			ov = 0;
			for (o = tt_x_first(&l->ranges); o; o = tt_x_next(o, &l->ranges))
				if (!o->persistent)
					ov += tt_x_overlap(c->start, c->end,
							   o->start, o->end);
		}
		d = tt_x_min(ov, l->counted[i]);
		l->counted[i] -= d;
		x->bud.slow -= tt_x_min(d, x->bud.slow);
	}
	tt_x_publish(x);
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

/* Bytes @l's chunk arrays take, as counted in @kmem. */
static unsigned long long tt_x_chunks_kmem(const struct tt_exec_layer *l)
{
	return (unsigned long long)l->chunk_cap *
	       (sizeof(*l->chunks) + sizeof(*l->counted));
}

/* Free @l's chunk arrays (lock held, or the session closing). */
static void tt_x_chunks_free(struct tt_exec *x, struct tt_exec_layer *l)
{
	x->kmem -= tt_x_min(x->kmem, tt_x_chunks_kmem(l));
	x->ops->free(x, l->chunks);
	x->ops->free(x, l->counted);
	l->chunks = (struct tt_chunk *)0;
	l->counted = (unsigned long long *)0;
	l->chunk_cap = 0;
}

/* End an episode: forget its chunks (lock held). */
static void tt_x_episode_end(struct tt_exec *x, struct tt_exec_layer *l)
{
	struct tt_exec_range *r;
	unsigned int i;

	for (i = 0; l->counted && i < l->nr_chunks; i++)
		x->bud.slow -= tt_x_min(l->counted[i], x->bud.slow);
	tt_x_publish(x);
	tt_x_chunks_free(x, l);
	for (r = tt_x_first(&l->ranges); r; r = tt_x_next(r, &l->ranges)) {
		r->taken = 0;
		r->arch_taken = 0;
	}
	l->bud_wait = 0;
	l->bud_waited = 0;
	l->nr_chunks = 0;
	l->next_chunk = 0;
	l->evicted = 0;
	l->returned = 0;
	l->pf_due = 0;
	l->sync = 0;
	l->state = TT_EXEC_IDLE;
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
 * The nodes evicted pages go to, in order (lock held): the session's
 * slow_node alone, or the eviction order of the layer's fast node (a full
 * node spills to the next). Return: how many were written to @nids
 * (TT_EXEC_TARGETS entries), 0 for none.
 */
static int tt_x_slow_nodes(struct tt_exec *x, int from, int *nids)
{
	int nid = x->cfg.slow_node;

	if (nid >= 0) {
		if (x->ops->node_check(x, nid))
			return 0;
		nids[0] = nid;
		return 1;
	}
	return x->ops->evict_order(x, from >= 0 ? from : x->ops->cpu_node(x),
				   nids, TT_EXEC_TARGETS);
}

/*
 * The chunks one episode may hold: its bytes (at most the machine's RAM)
 * in whole chunks of @batch, plus two pieces per range and per hinted
 * interval (the boundaries the cut adds), max_ranges of each. Chunks
 * beyond it are left out (their pages stay where they are).
 */
static unsigned long tt_x_chunks_max(struct tt_exec *x,
				     unsigned long long batch)
{
	return tt_x_lim(x, TT_EXEC_LIM_EPISODE_MAX) / batch + 4UL *
	       tt_x_lim(x, TT_EXEC_LIM_MAX_RANGES) + 2;
}

/*
 * Room for @cap chunks in @l's arrays, the first @l->nr_chunks kept (lock
 * held): 0 or -ENOMEM.
 */
static int tt_x_chunks_grow(struct tt_exec *x, struct tt_exec_layer *l,
			    unsigned long cap)
{
	struct tt_chunk *c;
	unsigned long long *cnt;

	if (cap <= l->chunk_cap)
		return 0;
	c = x->ops->alloc(x, cap, sizeof(*c), 0);
	cnt = x->ops->alloc(x, cap, sizeof(*cnt), 1);
	if (!c || !cnt) {
		x->ops->free(x, c);
		x->ops->free(x, cnt);
		return -TT_EXEC_ENOMEM;
	}
	if (l->nr_chunks) {
		tt_x_copy(c, l->chunks, l->nr_chunks * sizeof(*c));
		tt_x_copy(cnt, l->counted, l->nr_chunks * sizeof(*cnt));
	}
	tt_x_chunks_free(x, l);
	l->chunks = c;
	l->counted = cnt;
	l->chunk_cap = cap;
	x->kmem += tt_x_chunks_kmem(l);
	return 0;
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

/* Forget range entry @r of a layer (lock held). */
static void tt_x_forget_entry(struct tt_exec *x, struct tt_exec_layer *l,
			      struct tt_exec_range *r)
{
	int idx;

	tt_x_detach(x, l, r);
	if (r->persistent) {
		idx = tt_tl_find(&x->tl, l->id);
		if (idx >= 0)
			tt_tl_unsaved(&x->tl, idx, r->end - r->start);
	} else {
		l->nr_oneshot--;
	}
	tt_x_range_free(x, r);
}

/* Forget range @id of a layer, which failed its check (lock held). */
static void tt_x_forget_range(struct tt_exec *x, struct tt_exec_layer *l,
			      unsigned long long id)
{
	struct tt_exec_range *r;

	for (r = tt_x_first(&l->ranges); r; r = tt_x_next(r, &l->ranges)) {
		if (r->id == id) {
			tt_x_forget_entry(x, l, r);
			return;
		}
	}
}

/* The node holding most of @bytes among nodes that are not slow. */
static int tt_x_majority_fast(struct tt_exec *x,
			      const unsigned long long *bytes, int fallback)
{
	int nid, best = fallback;
	unsigned long long most = 0;

	for (nid = 0; nid < x->nr_nodes; nid++) {
		if (bytes[nid] <= most || x->ops->node_slow(x, nid))
			continue;
		most = bytes[nid];
		best = nid;
	}
	return best;
}

/* Check and move one chunk of @l to @nids (lock not held). */
static int tt_x_evict_chunk(struct tt_exec *x, struct tt_exec_layer *l,
			    const struct tt_chunk *c, const int *nids, int nr,
			    struct tt_migrate_result *res)
{
	struct tt_exec_move m = {
		.start = c->start, .end = c->end, .nids = nids, .nr = nr,
		.flags = TT_EXEC_MV_EVICT | TT_EXEC_MV_REMOTE,
	};
	int ret = x->ops->move(x, l, &m, res);

	return ret == -TT_EXEC_EFAULT || ret == -TT_EXEC_EOPNOTSUPP ? ret : 0;
}

/*
 * Fast-tier budget (Documentation/scheduler.md, "Fast-tier budget"; the
 * heat and the fair share are heat.c's, the module-wide side the side's).
 *
 * Accounts, under the lock: @bud.held, the bytes of the saved ranges;
 * @bud.slow, the bytes of them an eviction of the session moved to the
 * slow tier and no prefetch has admitted back, per chunk in @counted.
 * Fast registered bytes = held - slow, an upper bound of what is on the
 * fast tier.
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
 * Chunk @i of @l was moved out: count what it moved of registered pages
 * on the slow tier (lock held).
 */
static void tt_x_count_slow(struct tt_exec *x, struct tt_exec_layer *l,
			    unsigned int i)
{
	const struct tt_chunk *c = &l->chunks[i];
	struct tt_exec_range *r;
	unsigned long long n = c->moved, reg = 0;

	if (!n || !l->counted)
		return;
	/* ranges forgotten since the cut: only what is still registered */
	if (l->forget_gen != l->cut_gen) {
		for (r = tt_x_first(&l->ranges); r; r = tt_x_next(r, &l->ranges))
			reg += tt_x_overlap(c->start, c->end, r->start, r->end);
		n = tt_x_min(n, reg);
	}
	l->counted[i] += n;
	x->bud.slow += n;
	tt_x_publish(x);
}

/* Registered bytes counted on the fast tier (lock held). */
static unsigned long long tt_x_fast(const struct tt_exec *x)
{
	return x->bud.held > x->bud.slow ? x->bud.held - x->bud.slow : 0;
}

static void tt_x_peak(struct tt_exec *x, unsigned long long fast)
{
	if (fast > x->bud.counts.peak)
		x->bud.counts.peak = fast;
}

/*
 * The heat features of range @r of layer @l at @now (@rel: the same in
 * the iteration): the distance to its next use and its lifetime from the
 * layer's profile (the backward begin; after the backward end, the next
 * iteration's), else last in, first out.
 */
static void tt_x_features(const struct tt_tl *tl, const struct tt_tl_layer *l,
			  const struct tt_exec_range *r, unsigned long long now,
			  unsigned long long rel, struct tt_heat_item *it)
{
	unsigned long long age = now > r->saved_ns ? now - r->saved_ns : 0;

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
static unsigned long long tt_x_layer_dist(const struct tt_tl *tl,
					  const struct tt_tl_layer *l,
					  unsigned long long now,
					  unsigned long long rel)
{
	struct tt_exec_layer *xl = l->priv;
	struct tt_exec_range *r;
	struct tt_heat_item it;
	unsigned long long d = ~0ULL;

	for (r = tt_x_first(&xl->ranges); r; r = tt_x_next(r, &xl->ranges)) {
		tt_x_features(tl, l, r, now, rel, &it);
		d = tt_x_min(d, it.in_use ? 0 : it.dist);
	}
	return d == ~0ULL ? 0 : d;
}

/* Bytes of the budget's scratch for @cap items, as counted in @kmem. */
static unsigned long long tt_x_bud_kmem(unsigned long cap)
{
	return (unsigned long long)cap *
	       (sizeof(struct tt_heat_item) + 2 * sizeof(void *));
}

/*
 * Room for @n heat items (lock held), @n at most the max_ranges setting
 * (the ranges a session holds): 0 or -ENOMEM. Grows by doubling, never
 * past max(@n, max_ranges).
 */
static int tt_x_bud_scratch(struct tt_exec *x, unsigned long n)
{
	struct tt_exec_bud *b = &x->bud;
	unsigned long lim = tt_x_max(n, tt_x_lim(x, TT_EXEC_LIM_MAX_RANGES));
	struct tt_heat_item *items;
	unsigned long cap;
	void **refs;

	if (n <= b->cap)
		return 0;
	if (n > TT_EXEC_SCRATCH_MAX)
		return -TT_EXEC_ENOMEM;
	cap = tt_x_max(tt_x_max(n, tt_x_min(2UL * b->cap, lim)), 64UL);
	items = x->ops->alloc(x, cap, sizeof(*items), 0);
	refs = x->ops->alloc(x, 2 * cap, sizeof(*refs), 0);
	if (!items || !refs) {
		x->ops->free(x, items);
		x->ops->free(x, refs);
		return -TT_EXEC_ENOMEM;
	}
	x->ops->free(x, b->items);
	x->ops->free(x, b->refs);
	x->kmem -= tt_x_min(x->kmem, tt_x_bud_kmem(b->cap));
	b->items = items;
	b->refs = refs;
	b->cap = cap;
	x->kmem += tt_x_bud_kmem(cap);
	return 0;
}

/*
 * Will the plan's trigger bring @l's evicted bytes back in this iteration
 * (lock held)?
 */
static int tt_x_trigger_ahead(struct tt_exec *x, struct tt_exec_layer *l)
{
	const struct tt_tl_layer *tl;
	int idx;

	if (!x->tl.planned || l->iter != x->tl.iter_seq ||
	    !tt_x_find(x, l->id, &idx))
		return 0;
	tl = &x->tl.st.layers[idx];
	return (tl->flags & TT_TL_L_PLANNED) && tl->final_bytes &&
	       !(tl->seen & (TT_TL_S_DUE | TT_TL_S_BWD_BEGIN | TT_TL_S_BWD_END));
}

/*
 * Append the pieces of range @r a victim may take to @l's episode (lock
 * held): with @arch its pages hinted TT_HINT_ARCHIVE (not pinned), else
 * its pages outside every hint, after those the episode holds already, at
 * most @want bytes (page granular), in chunks as the plan's. An IDLE layer
 * starts an episode. Return: the bytes appended (0 when out of memory
 * too).
 */
static unsigned long long tt_x_victim_cut(struct tt_exec *x,
					  struct tt_exec_layer *l,
					  struct tt_exec_range *r, int arch,
					  unsigned long long want)
{
	unsigned long long batch = tt_x_lim(x, TT_EXEC_LIM_CHUNK_BYTES);
	unsigned long max = tt_x_chunks_max(x, batch);
	unsigned int fl = arch ? TT_HINT_ARCHIVE : 0;
	unsigned int avoid = arch ? TT_HINT_PIN_FAST : 0;
	unsigned long long skip0 = arch ? r->arch_taken : r->taken;
	unsigned long long most = tt_x_page_align(x,
		tt_x_min(want, tt_x_lim(x, TT_EXEC_LIM_EPISODE_MAX)));
	unsigned long long skip = skip0, left = most, got = 0;
	struct tt_chunk_cut cut = { .c = (struct tt_chunk *)0,
				    .range_id = r->id };
	unsigned long n, cap, i;

	if (l->nr_chunks >= max)
		return 0;
	tt_heat_cut(&x->hints, r->start, r->end, fl, avoid, &skip, &left,
		    batch, tt_chunk_emit, &cut);
	n = tt_x_min(cut.n, max - l->nr_chunks);
	if (!n)
		return 0;
	if (l->nr_chunks + n > l->chunk_cap) {
		cap = tt_x_max(l->nr_chunks + n,
			       tt_x_min(2UL * l->chunk_cap, max));
		if (tt_x_chunks_grow(x, l, cap))
			return 0;
	}
	if (l->state == TT_EXEC_IDLE && !l->nr_chunks) {
		l->iter = x->tl.iter_seq;
		l->target = 0;
		l->cpu_nid = x->ops->cpu_node(x);
		l->fast_nid = TT_EXEC_NO_NODE;
		l->evicted = 0;
		l->returned = 0;
		l->next_chunk = 0;
		l->pf_due = 0;
		l->sync = 0;
	}
	l->cut_gen = l->forget_gen;
	skip = skip0;
	left = most;
	cut.c = &l->chunks[l->nr_chunks];
	cut.cap = n;
	cut.n = 0;
	tt_heat_cut(&x->hints, r->start, r->end, fl, avoid, &skip, &left,
		    batch, tt_chunk_emit, &cut);
	n = tt_x_min(cut.n, n);
	for (i = 0; i < n; i++) {
		l->counted[l->nr_chunks + i] = 0;
		got += cut.c[i].end - cut.c[i].start;
	}
	l->nr_chunks += n;
	if (arch)
		r->arch_taken += got;
	else
		r->taken += got;
	return got;
}

/* Is chunk @c inside pages hinted TT_HINT_ARCHIVE? */
static int tt_x_archived(const struct tt_exec *x, const struct tt_chunk *c)
{
	const struct tt_hint_iv *iv = tt_hint_next(&x->hints, c->start, c->end);

	return iv && iv->start <= c->start && (iv->flags & TT_HINT_ARCHIVE);
}

/*
 * Move what a victim round appended to each layer of @round to the slow
 * tier (lock held, dropped while memory moves; @remote: from a worker,
 * else from the session's process).
 */
static void tt_x_victims_move(struct tt_exec *x, struct tt_exec_link *round,
			      int remote)
{
	int slow[TT_EXEC_TARGETS], nr_slow, fast = x->cfg.fast_node;
	struct tt_exec_link *e, *t;
	struct tt_exec_layer *l;
	unsigned long long *bytes = (unsigned long long *)0;
	int have_mm;

	l = tt_x_vlayer(round->next);
	nr_slow = tt_x_slow_nodes(x, l->cpu_nid, slow);
	for (e = round->next; e != round; e = e->next) {
		l = tt_x_vlayer(e);
		l->state = TT_EXEC_EVICTING;
		l->victim = 1;
		l->vmoved = 0;
		l->velapsed = 0;
		l->mig_start = tt_x_now(x);
		tt_x_set_abort(l, 0);
		x->bud.busy++;
	}
	tt_x_unlock(x);

	have_mm = nr_slow && (!remote || x->ops->pin(x));
	if (have_mm && fast < 0)
		bytes = x->ops->alloc(x, 2 * x->nr_nodes, sizeof(*bytes), 1);
	for (e = round->next; e != round; e = e->next) {
		int fresh;
		unsigned int i;

		l = tt_x_vlayer(e);
		fresh = !l->evicted;
		if (bytes)
			tt_x_zero(bytes, x->nr_nodes * sizeof(*bytes));
		for (i = l->vfrom; have_mm && i < l->nr_chunks; i++) {
			struct tt_chunk *c = &l->chunks[i];
			struct tt_migrate_result res = { 0 };
			int ret;

			if (x->ops->stopped(x, l, TT_EXEC_MV_EVICT |
					    TT_EXEC_MV_REMOTE))
				break;
			if (bytes && fresh)
				x->ops->residency(x, c->start, c->end, bytes,
						  bytes + x->nr_nodes);
			ret = tt_x_evict_chunk(x, l, c, slow, nr_slow, &res);
			c->moved = res.moved * x->page_size;

			tt_x_lock(x);
			if (ret)
				tt_x_forget_range(x, l, c->range_id);
			l->evicted += c->moved;
			l->vmoved += c->moved;
			l->velapsed += res.elapsed_ns;
			x->counts.bytes_evicted += c->moved;
			x->bud.counts.victim_bytes += c->moved;
			if (c->moved && tt_x_archived(x, c))
				x->bud.counts.victim_archived += c->moved;
			x->bud.counts.skipped_pages += res.skipped_busy +
				res.skipped_not_present + res.skipped_unsupported +
				res.skipped_no_memory;
			tt_x_count_slow(x, l, i);
			tt_x_unlock(x);
			tt_x_resched(x);
		}
		if (fresh)
			l->fast_nid = fast >= 0 ? fast : bytes ?
				tt_x_majority_fast(x, bytes, l->cpu_nid) :
				l->cpu_nid;
	}
	if (have_mm && remote)
		x->ops->unpin(x);
	x->ops->free(x, bytes);

	tt_x_lock(x);
	for (e = round->next, t = e->next; e != round; e = t, t = e->next) {
		l = tt_x_vlayer(e);
		tt_x_list_del(&l->vlink);
		l->in_round = 0;
		l->victim = 0;
		x->bud.busy--;
		if (l->fast_nid < 0)
			l->fast_nid = x->ops->cpu_node(x);
		x->ops->trace_migration(x, TT_TRACE_EVICT, l->id, l->iter,
					l->vmoved, l->mig_start,
					nr_slow ? slow[0] : TT_EXEC_NO_NODE,
					TT_TRACE_F_VICTIM);
		tt_tl_rate_sample(&x->tl, TT_TL_EVICT, l->vmoved, l->velapsed);
		if (!l->evicted) {
			tt_x_episode_end(x, l);
		} else if (l->pf_due && !x->closing) {
			tt_x_queue_prefetch(x, l);
		} else {
			l->state = TT_EXEC_EVICTED;
			l->bud_wait = !tt_x_trigger_ahead(x, l);
			x->bud.waiting |= l->bud_wait;
		}
	}
	x->ops->victims_done(x);
}

/*
 * Hints on plain ranges (Documentation/scheduler.md, "Hints"): the pages
 * of a hinted range outside every saved range the session holds. The
 * executor does not account them (they are not registered), so the side
 * moves them (ops->move_plain), as TT_IOC_MIGRATE would: WILL_USE and
 * PIN_FAST bring them to the fast node in the caller's thread before the
 * call returns; ARCHIVE sends them to the slow tier first in the
 * session's next victim round (tt_x_archive_plain()).
 */

/*
 * The plain pieces of [@start, @end) (lock held): the pieces outside the
 * saved ranges, and with @with, only where they meet intervals of the
 * hint set whose flags include @with and not TT_HINT_F_OUT. *@out is an
 * ops->alloc'd array for the caller to give back (also when 0 pieces).
 * Return: the number of pieces, or -ENOMEM. O(n log n) for the n saved
 * ranges the session holds.
 */
static long tt_x_plain_pieces(struct tt_exec *x, unsigned long long start,
			      unsigned long long end, unsigned int with,
			      struct tt_hint_iv **out)
{
	unsigned long k = 0, n, cap, seen = 0;
	struct tt_hint_iv *iv;
	unsigned int i, gaps;

	for (i = 0; i < x->tl.n; i++) {
		struct tt_exec_link *h = &tt_x_at(x, i)->ranges;
		struct tt_exec_range *r;

		for (r = tt_x_first(h); r; r = tt_x_next(r, h)) {
			if (r->end > start && r->start < end)
				k++;
			if (!(++seen % TT_EXEC_RESCHED_EVERY))
				tt_x_resched(x);
		}
	}
	/* saved ranges, their gaps, the gaps' meeting with the hint set */
	cap = k + (k + 1) + (with ? k + 1 + x->hints.n : 0);
	iv = x->ops->alloc(x, cap, sizeof(*iv), 0);
	if (!iv)
		return -TT_EXEC_ENOMEM;
	n = 0;
	for (i = 0; i < x->tl.n && n < k; i++) {
		struct tt_exec_link *h = &tt_x_at(x, i)->ranges;
		struct tt_exec_range *r;

		for (r = tt_x_first(h); r; r = tt_x_next(r, h)) {
			if (r->end <= start || r->start >= end || n >= k)
				continue;
			iv[n].start = r->start;
			iv[n].end = r->end;
			iv[n].flags = 0;
			if (!(++n % TT_EXEC_RESCHED_EVERY))
				tt_x_resched(x);
		}
	}
	gaps = tt_hint_gaps(iv, n, start, end, iv + k);
	if (with)
		gaps = tt_hint_meet(iv + k, gaps, &x->hints, with,
				    TT_HINT_F_OUT, iv + 2 * k + 1);
	tt_x_copy(iv, iv + (with ? 2 * k + 1 : k), gaps * sizeof(*iv));
	*out = iv;
	return gaps;
}

/*
 * A victim round is about to run in the session's own process (lock held,
 * dropped while memory moves): the plain pages of the intervals hinted
 * TT_HINT_ARCHIVE that no round sent out yet leave for the slow tier
 * first. Each interval is marked TT_HINT_F_OUT before its pages move: a
 * concurrent round skips it. A round in a worker (@remote) leaves them to
 * the next round in the process.
 */
static void tt_x_archive_plain(struct tt_exec *x, int remote)
{
	struct tt_migrate_result res = { 0 };
	int slow[TT_EXEC_TARGETS], nr_slow;
	struct tt_hint_iv *p = (struct tt_hint_iv *)0;
	unsigned int i;
	int any = 0;
	long n;

	for (i = 0; i < x->hints.n; i++)
		if ((x->hints.iv[i].flags & TT_HINT_ARCHIVE) &&
		    !(x->hints.iv[i].flags & TT_HINT_F_OUT))
			any = 1;
	if (!any || remote || x->closing)
		return;
	n = tt_x_plain_pieces(x, x->hints.iv[0].start,
			      x->hints.iv[x->hints.n - 1].end,
			      TT_HINT_ARCHIVE, &p);
	if (n < 0)
		return;
	for (i = 0; i < x->hints.n; i++)
		if (x->hints.iv[i].flags & TT_HINT_ARCHIVE)
			x->hints.iv[i].flags |= TT_HINT_F_OUT;
	nr_slow = tt_x_slow_nodes(x, TT_EXEC_NO_NODE, slow);
	tt_x_unlock(x);
	if (nr_slow && n > 0)
		x->ops->move_plain(x, p, n, slow, nr_slow, 0, &res);
	x->ops->free(x, p);
	tt_x_lock(x);
}

/* May @l give a victim (lock held)? Not @hot, not in use, nothing in flight. */
static int tt_x_victim_ok(const struct tt_exec_layer *l,
			  const struct tt_exec_layer *hot,
			  const struct tt_heat_item *it)
{
	return l != hot && !it->in_use &&
	       (l->state == TT_EXEC_IDLE || l->state == TT_EXEC_EVICTED);
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
static unsigned long long tt_x_make_room(struct tt_exec *x,
					 unsigned long long need,
					 struct tt_exec_layer *hot,
					 unsigned long long budget, int remote)
{
	struct tt_exec_bud *b = &x->bud;
	unsigned long long now, rel, got, fast, live = 0;
	long long below = TT_X_LLONG_MAX;
	unsigned int i, k = 0, pass, steps, m, *heap;
	struct tt_exec_link round;
	int j;

	if (!need || x->closing || (x->cfg.flags & TT_SCHED_OFF))
		return 0;
	tt_x_archive_plain(x, remote);
	if (x->closing || tt_x_bud_scratch(x, x->nr_ranges))
		return 0;
	/* the lock may have been dropped */
	now = tt_x_now(x);
	rel = tt_tl_rel(&x->tl, now);
	fast = tt_x_fast(x);
	for (i = 0; i < x->tl.n; i++) {
		const struct tt_tl_layer *tl = &x->tl.st.layers[i];
		struct tt_exec_layer *l = tl->priv;
		struct tt_exec_range *r;

		for (r = tt_x_first(&l->ranges); r; r = tt_x_next(r, &l->ranges)) {
			if (k >= b->cap)
				break;
			tt_x_features(&x->tl, tl, r, now, rel, &b->items[k]);
			live += b->items[k].bytes;
			b->refs[2 * k] = r;
			b->refs[2 * k + 1] = l;
			k++;
			if (!(k % TT_EXEC_RESCHED_EVERY))
				tt_x_resched(x);
		}
	}
	if (!k)
		return 0;
	heap = x->ops->alloc(x, k, sizeof(*heap), 0);
	if (!heap)
		return 0;
	/* Algorithm 1, a step at a time: each one is O(k) */
	tt_heat_score(b->items, k, &b->w);
	for (steps = 0; budget != TT_EXEC_BUDGET_NONE &&
	     steps < TT_HEAT_STEPS_MAX; steps++) {
		if (!tt_heat_adjust_step(&b->w, b->items, k, budget, live))
			break;
		tt_x_resched(x);
	}
	if (hot) {
		below = TT_X_LLONG_MIN;
		for (i = 0; i < k; i++)
			if (b->refs[2 * i + 1] == hot && b->items[i].heat > below)
				below = b->items[i].heat;
	}
	tt_x_list_init(&round);
	/*
	 * pass 0: archived pages (any heat), pass 1: the colder ranges; the
	 * candidates come off a heap, O(log k) a pick
	 */
	for (pass = 0; pass < 2 && need; pass++) {
		for (i = 0; i < k; i++)
			b->items[i].done = !tt_x_victim_ok(b->refs[2 * i + 1],
							   hot, &b->items[i]);
		m = tt_heat_heap(b->items, k, pass ? below : TT_X_LLONG_MAX,
				 heap);
		for (i = 1; need; i++) {
			struct tt_exec_range *r;
			struct tt_exec_layer *l;

			j = tt_heat_pop(b->items, heap, &m);
			if (j < 0)
				break;
			if (!(i % TT_EXEC_RESCHED_EVERY))
				tt_x_resched(x);
			b->items[j].done = 1;
			r = b->refs[2 * j];
			l = b->refs[2 * j + 1];
			if (!l->in_round)
				l->vfrom = l->nr_chunks;
			got = tt_x_victim_cut(x, l, r, pass == 0, need);
			if (!got)
				continue;
			b->counts.victims++;
			need -= tt_x_min(got, need);
			if (!l->in_round) {
				l->in_round = 1;
				tt_x_list_add_tail(&l->vlink, &round);
			}
		}
	}
	x->ops->free(x, heap);
	if (tt_x_list_empty(&round))
		return 0;
	tt_x_victims_move(x, &round, remote);
	return fast > tt_x_fast(x) ? fast - tt_x_fast(x) : 0;
}

/*
 * Admit chunk @i of @l's prefetch (lock held, dropped while victims move):
 * from now on its registered bytes count on the fast tier. It fits when
 * the session stays within its budget and the sessions within the
 * module's; else colder victims make room; else it waits. Return: 0, or
 * -EAGAIN: no room and no victim, the prefetch stops here (@bud_wait).
 */
static int tt_x_admit(struct tt_exec *x, struct tt_exec_layer *l,
		      unsigned int i, int remote)
{
	struct tt_exec_bud *b = &x->bud;
	unsigned long long c, lim, total, g, fast;
	unsigned int tries;

	for (tries = 0; tries < 8; tries++) {
		c = l->counted ? l->counted[i] : 0;
		if (!c)
			return 0;
		fast = tt_x_fast(x);
		lim = x->ops->budget_limit(x, &total, &g);
		if ((x->cfg.flags & TT_SCHED_OFF) ||
		    ((lim == TT_EXEC_BUDGET_NONE || fast + c <= lim) &&
		     (!g || total + c <= g))) {
			l->counted[i] = 0;
			b->slow -= tt_x_min(c, b->slow);
			tt_x_publish(x);
			tt_x_peak(x, fast + c);
			return 0;
		}
		if (lim != TT_EXEC_BUDGET_NONE && fast + c > lim) {
			if (tt_x_make_room(x, fast + c - lim, l, lim, remote))
				continue;
		} else {
			x->ops->budget_kick(x);	/* others over their share */
		}
		break;
	}
	l->bud_wait = 1;
	l->bud_waited = 1;
	b->waiting = 1;
	b->counts.waits++;
	return -TT_EXEC_EAGAIN;
}

/* An evicted layer budget_retry may bring back: its nearest next use. */
struct tt_x_cand {
	unsigned long long d;
	unsigned int idx;
	struct tt_exec_layer *l;
};

/* The nearest next use first; ties: the lower layer index. */
static int tt_x_cand_before(const void *a, const void *b, const void *ctx)
{
	const struct tt_x_cand *p = a, *q = b;

	(void)ctx;
	if (p->d != q->d)
		return p->d < q->d;
	return p->idx < q->idx;
}

/*
 * Room was made, or may have been: bring evicted bytes back, the nearest
 * next use first, as far as the budget has room (lock held). With a
 * budget in force every evicted layer is a candidate, whether its plan's
 * trigger came or not; the one that does not fit whole is queued too (its
 * prefetch takes what fits, then waits), the farther ones are not.
 * Without a budget only prefetches that waited for room are retried.
 */
static void tt_x_budget_retry(struct tt_exec *x)
{
	unsigned long long now = tt_x_now(x), rel = tt_tl_rel(&x->tl, now);
	unsigned long long room = ~0ULL, need, lim, total, g, fast;
	int budget = x->ops->budget_active(x) &&
		     !(x->cfg.flags & TT_SCHED_OFF);
	struct tt_x_cand *cand;
	unsigned int i, c, n = 0;

	if (budget) {
		lim = x->ops->budget_limit(x, &total, &g);
		fast = tt_x_fast(x);
		if (lim != TT_EXEC_BUDGET_NONE)
			room = lim > fast ? lim - fast : 0;
		if (g)
			room = tt_x_min(room, g > total ? g - total : 0);
	}
	if (x->closing)
		return;
	for (i = 0; i < x->tl.n; i++) {
		const struct tt_exec_layer *l = tt_x_at(x, i);

		if (l->state == TT_EXEC_EVICTED && (budget || l->bud_wait))
			n++;
	}
	if (!n) {
		x->bud.waiting = 0;	/* none left */
		return;
	}
	/*
	 * Each candidate's distance once, then in order: O(ranges + layers
	 * log layers). Out of memory: @waiting stays, the next release
	 * retries.
	 */
	cand = x->ops->alloc(x, n, sizeof(*cand), 0);
	if (!cand)
		return;
	n = 0;
	for (i = 0; i < x->tl.n; i++) {
		const struct tt_tl_layer *tl = &x->tl.st.layers[i];
		struct tt_exec_layer *l = tl->priv;

		if (l->state != TT_EXEC_EVICTED || (!budget && !l->bud_wait))
			continue;
		/* TT_SCHED_DEFER_LATE: back at its backward end */
		if ((x->cfg.flags & TT_SCHED_DEFER_LATE) &&
		    (tl->seen & TT_TL_S_BWD_BEGIN) &&
		    !(tl->seen & TT_TL_S_BWD_END))
			continue;
		cand[n].d = tt_x_layer_dist(&x->tl, tl, now, rel);
		cand[n].idx = i;
		cand[n].l = l;
		n++;
		tt_x_resched(x);
	}
	tt_heapsort(cand, n, sizeof(*cand), tt_x_cand_before,
		    (const void *)0);
	for (i = 0; i < n && !x->closing; i++) {
		struct tt_exec_layer *best = cand[i].l;

		need = 0;
		for (c = best->next_chunk; best->counted && c < best->nr_chunks;
		     c++)
			need += best->counted[c];
		if (need && !room)
			break;
		best->bud_wait = 0;
		tt_x_queue_prefetch(x, best);
		room -= tt_x_min(need, room);
	}
	if (i == n)
		x->bud.waiting = 0;	/* none left */
	x->ops->free(x, cand);
}

/*
 * Registered memory was released (lock held): retry this session's
 * waiting prefetches, and the other sessions' when they share a budget.
 */
static void tt_x_budget_released(struct tt_exec *x)
{
	if (!x->bud.released)
		return;
	x->bud.released = 0;
	if (x->bud.waiting || x->ops->budget_active(x))
		tt_x_budget_retry(x);
	if (tt_x_lim(x, TT_EXEC_LIM_BUDGET_GLOBAL))
		x->ops->budget_kick(x);
}

/* Is the session over its budget, or the sessions over the module's? */
static int tt_x_over(struct tt_exec *x)
{
	unsigned long long total, g, lim;

	if (!x->ops->budget_active(x) || (x->cfg.flags & TT_SCHED_OFF))
		return 0;
	lim = x->ops->budget_limit(x, &total, &g);
	return (lim != TT_EXEC_BUDGET_NONE && tt_x_fast(x) > lim) ||
	       (g && total > g);
}

/*
 * After an attempt to get within the budget in force (lock held): is the
 * session still over it, or TT_SCHED_OFF (it gives nothing back)? The
 * side counts it then at most at its budget in force (Documentation/
 * scheduler.md, "Many processes").
 */
static void tt_x_budget_stuck(struct tt_exec *x)
{
	unsigned long long total, g, lim;
	int stuck = !!(x->cfg.flags & TT_SCHED_OFF);

	if (!stuck && x->ops->budget_active(x)) {
		lim = x->ops->budget_limit(x, &total, &g);
		stuck = lim != TT_EXEC_BUDGET_NONE && tt_x_fast(x) > lim;
	}
	x->ops->budget_stuck(x, stuck);
}

/*
 * Make room in the call that took the session over its budget (or the
 * sessions over the module's): wait for the session's evictions already
 * queued or running when they free enough, else evict victims; give up
 * (budget_overruns) when neither is left.
 */
void tt_exec_budget_room(struct tt_exec *x)
{
	struct tt_exec_bud *b = &x->bud;
	unsigned int tries, i;

	tt_x_lock(x);
	for (tries = 0; tries < 64; tries++) {
		unsigned long long total, g;
		unsigned long long lim = x->ops->budget_limit(x, &total, &g);
		unsigned long long fast = tt_x_fast(x), over = 0, pending = 0;
		struct tt_exec_layer *wait = (struct tt_exec_layer *)0;

		if (lim != TT_EXEC_BUDGET_NONE && fast > lim)
			over = fast - lim;
		if (g && total > g) {
			over = tt_x_max(over, total - g);
			x->ops->budget_kick(x);	/* others over their share */
		}
		if (!over || x->closing || (x->cfg.flags & TT_SCHED_OFF))
			break;
		for (i = 0; i < x->tl.n; i++) {
			struct tt_exec_layer *l = tt_x_at(x, i);

			if (l->state == TT_EXEC_EVICTING && !l->victim) {
				pending += l->target > l->evicted ?
					   l->target - l->evicted : 0;
				wait = l;
			} else if (l->state == TT_EXEC_EVICT_QUEUED) {
				pending += l->target;
				if (!wait)
					wait = l;
			}
		}
		if (pending < over &&
		    tt_x_make_room(x, over - pending,
				   (struct tt_exec_layer *)0, lim, 0))
			continue;
		if (!wait) {
			b->counts.overruns++;
			break;
		}
		tt_x_unlock(x);
		x->ops->wait(x, wait, TT_EXEC_WORK_EVICT);
		tt_x_lock(x);
	}
	tt_x_budget_stuck(x);
	tt_x_peak(x, tt_x_fast(x));
	tt_x_unlock(x);
}

void tt_exec_budget_visit(struct tt_exec *x, int shrink, int remote)
{
	unsigned long long total, g, lim, fast;
	unsigned int tries;

	tt_x_lock(x);
	if (!x->closing) {
		if (shrink) {
			for (tries = 0; tries < 8; tries++) {
				lim = x->ops->budget_limit(x, &total, &g);
				fast = tt_x_fast(x);
				if (lim == TT_EXEC_BUDGET_NONE || fast <= lim ||
				    !tt_x_make_room(x, fast - lim,
						    (struct tt_exec_layer *)0,
						    lim, remote))
					break;
			}
			tt_x_budget_stuck(x);
		} else {
			tt_x_budget_retry(x);
		}
	}
	tt_x_unlock(x);
}

/*
 * The eviction of @l, one slice (TT_EXEC_SLICE_BYTES) per step: the first
 * (EVICT_QUEUED) selects the chunks and starts the episode (EVICTING),
 * each moves the chunks from @ev_next on until the slice is full and
 * queues itself again (@ev_cont) while chunks are left; the one that
 * finds none left, or the layer stopped (@abort, the session stopping,
 * closing, the address space gone), ends the eviction.
 */
void tt_exec_evict_step(struct tt_exec *x, struct tt_exec_layer *l)
{
	unsigned long long *bytes, slice = 0, iter;
	unsigned int i, done;
	int idx, fast, have_mm, first = 0, more = 0;

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
		if (l->iter == x->tl.iter_seq && tt_x_find(x, l->id, &idx))
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
	if (more && !x->closing &&
	    !x->ops->stopped(x, l, TT_EXEC_MV_EVICT | TT_EXEC_MV_REMOTE)) {
		/* at the tail: the items queued meanwhile run first */
		l->ev_cont = 1;
		if (!tt_x_evict_wait_turn(x, (struct tt_exec_layer *)0))
			x->ev_turn = l;
		x->ops->queue(x, l, TT_EXEC_WORK_EVICT);
		goto out_unlock;
	}
	if (x->ev_turn == l)
		x->ev_turn = (struct tt_exec_layer *)0;
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
				done < l->nr_chunks ? TT_TRACE_F_STOPPED : 0);
	l->nr_chunks = done;
	l->fast_nid = fast;
	if (iter == x->tl.iter_seq && tt_x_find(x, l->id, &idx))
		tt_tl_evict_end(&x->tl, idx, tt_x_now(x), l->evicted);
	tt_tl_rate_sample(&x->tl, TT_TL_EVICT, l->evicted, l->ev_elapsed);
	if (!l->evicted)
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
 * passes: a pass that leaves pages busy or finds the node full is
 * followed, after a pause of 1, 2, 4 ms, by another over the whole chunk,
 * unless the prefetch is told to stop. @res gets the sum of the passes;
 * *@left the bytes of the last pass that are still not on the node.
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

		if (pass) {
			if (x->ops->stopped(x, l, flags))
				break;
			x->ops->pause(x, 1000U << (pass - 1));
		}
		ret = x->ops->move(x, l, &m, &r);
		res->moved += r.moved;
		res->elapsed_ns += r.elapsed_ns;
		*left = tt_x_res_left(&r) * x->page_size;
		if (ret || !*left || !(r.skipped_busy || r.skipped_no_memory))
			break;
	}
	return ret;
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
		if (c->moved) {
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
			l->returned += c->moved;
			l->next_chunk = i + 1;
			x->counts.prefetch_left_bytes += left;
			l->pf_left += left;
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
	tt_tl_rate_sample(&x->tl, TT_TL_PREFETCH, moved, elapsed);
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
	if (more && !x->closing &&
	    !x->ops->stopped(x, l, TT_EXEC_MV_EVICT | TT_EXEC_MV_REMOTE)) {
		/* at the tail: the items queued meanwhile run first */
		l->pf_cont = 1;
		if (!tt_x_prefetch_wait_turn(x, (struct tt_exec_layer *)0))
			x->pf_turn = l;
		x->ops->queue(x, l, TT_EXEC_WORK_PREFETCH);
		goto out_unlock;
	}
	if (x->pf_turn == l)
		x->pf_turn = (struct tt_exec_layer *)0;
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
 * the layers are dropped instead (lock held, right after the plan).
 */
static void tt_x_min_size(struct tt_exec *x)
{
	unsigned long long min = tt_x_lim(x, TT_EXEC_LIM_MIN_MIGRATE);
	unsigned int i;

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
		out = tt_x_outstanding(l);
		if (mine)
			tt_tl_bwd_check(&x->tl, idx, l->evicted, out);
		if (mine && out)
			x->ops->trace_layer(x, TT_TRACE_LATE, l->id,
					    x->tl.iter_seq, out, now, 0);
		else if (x->tl.st.layers[idx].seen & TT_TL_S_EVICT)
			/* this iteration's episode is over: all back in time */
			tt_tl_bwd_check(&x->tl, idx,
					x->tl.st.layers[idx].x.evicted_bytes, 0);
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

			if (ch->moved && l->fast_nid >= 0)
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
