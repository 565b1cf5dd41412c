/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * exec_internal.h - what the executor's two files share: exec.c (events,
 * episodes, evictions, prefetches, hints) and exec_budget.c (the registered
 * bytes' accounting and the fast-tier budget). Not part of the executor's
 * interface (exec.h): only core/exec*.c include it.
 *
 * Calls point one way: exec.c calls the functions declared at the end;
 * exec_budget.c calls nothing of exec.c, only the static inline helpers
 * here (which call only the side's operations and core/'s other files).
 */
#ifndef TT_CORE_EXEC_INTERNAL_H
#define TT_CORE_EXEC_INTERNAL_H

#include "exec.h"

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

/* Bytes of the episode still on the slow node (lock held). */
static inline unsigned long long
tt_x_outstanding(const struct tt_exec_layer *l)
{
	return l->evicted - tt_x_min(l->returned, l->evicted);
}

/* @v rounded up to a multiple of @a (a power of two). */
static inline unsigned long long tt_x_align(unsigned long long v,
					    unsigned long long a)
{
	return (v + a - 1) & ~(a - 1);
}

static inline void tt_x_zero(void *p, unsigned long n)
{
	char *c = p;

	while (n--)
		*c++ = 0;
}

static inline void tt_x_copy(void *d, const void *s, unsigned long n)
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

/* A chunk's @landed, read without the lock (see struct tt_chunk). */
static inline unsigned int tt_x_once_load(const unsigned int *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
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
static inline struct tt_exec_layer *tt_x_find(struct tt_exec *x, unsigned int id,
					      int *idx)
{
	int i = tt_tl_find(&x->tl, id);

	if (idx)
		*idx = i;
	return i < 0 ? (struct tt_exec_layer *)0 :
	       (struct tt_exec_layer *)x->tl.st.layers[i].priv;
}

static inline struct tt_exec_layer *tt_x_at(struct tt_exec *x, unsigned int i)
{
	return x->tl.st.layers[i].priv;
}

/* Bytes [@a, @b) and [@c, @d) have in common. */
static inline unsigned long long tt_x_overlap(unsigned long long a,
					      unsigned long long b,
					      unsigned long long c,
					      unsigned long long d)
{
	unsigned long long lo = tt_x_max(a, c), hi = tt_x_min(b, d);

	return hi > lo ? hi - lo : 0;
}

static inline void tt_x_queue_prefetch(struct tt_exec *x, struct tt_exec_layer *l)
{
	tt_x_set_abort(l, 0);	/* any eviction is over; see tt_x_settle() */
	l->state = TT_EXEC_PREFETCH_QUEUED;
	x->ops->queue(x, l, TT_EXEC_WORK_PREFETCH);
}

/*
 * The nodes evicted pages go to, in order (lock held): the session's
 * slow_node alone, or the eviction order of the layer's fast node (a full
 * node spills to the next). Return: how many were written to @nids
 * (TT_EXEC_TARGETS entries), 0 for none.
 */
static inline int tt_x_slow_nodes(struct tt_exec *x, int from, int *nids)
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
static inline unsigned long tt_x_chunks_max(struct tt_exec *x,
					    unsigned long long batch)
{
	return tt_x_lim(x, TT_EXEC_LIM_EPISODE_MAX) / batch + 4UL *
	       tt_x_lim(x, TT_EXEC_LIM_MAX_RANGES) + 2;
}

/* The node holding most of @bytes among nodes that are not slow. */
static inline int tt_x_majority_fast(struct tt_exec *x,
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
static inline int tt_x_evict_chunk(struct tt_exec *x, struct tt_exec_layer *l,
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

/* Registered bytes counted on the fast tier (lock held). */
static inline unsigned long long tt_x_fast(const struct tt_exec *x)
{
	return x->bud.held > x->bud.slow ? x->bud.held - x->bud.slow : 0;
}

static inline void tt_x_peak(struct tt_exec *x, unsigned long long fast)
{
	if (fast > x->bud.counts.peak)
		x->bud.counts.peak = fast;
}

/* exec_budget.c, for exec.c (the comments at their definitions). */
void tt_x_range_free(struct tt_exec *x, struct tt_exec_range *r);
void tt_x_detach(struct tt_exec *x, struct tt_exec_layer *l,
		 const struct tt_exec_range *r);
void tt_x_forget_entry(struct tt_exec *x, struct tt_exec_layer *l,
		       struct tt_exec_range *r);
void tt_x_forget_range(struct tt_exec *x, struct tt_exec_layer *l,
		       unsigned long long id);
void tt_x_chunks_free(struct tt_exec *x, struct tt_exec_layer *l);
int tt_x_chunks_grow(struct tt_exec *x, struct tt_exec_layer *l,
		     unsigned long cap);
void tt_x_episode_end(struct tt_exec *x, struct tt_exec_layer *l);
void tt_x_count_slow(struct tt_exec *x, struct tt_exec_layer *l,
		     unsigned int i);
long tt_x_plain_pieces(struct tt_exec *x, unsigned long long start,
		       unsigned long long end, unsigned int with,
		       struct tt_hint_iv **out);
int tt_x_admit(struct tt_exec *x, struct tt_exec_layer *l,
	       unsigned int i, int remote);
void tt_x_budget_retry(struct tt_exec *x);
void tt_x_budget_released(struct tt_exec *x);
int tt_x_over(struct tt_exec *x);

#endif /* TT_CORE_EXEC_INTERNAL_H */
