// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * exec_budget.c - the executor's fast-tier budget (exec.h, exec.c): the
 * registered bytes' accounting (@bud.held, @bud.slow, the chunks'
 * @counted), admission of prefetched chunks, victims, room and retries.
 * Documentation/scheduler.md, "Fast-tier budget", describes the whole.
 *
 * Like exec.c: no includes besides core/'s own, no library calls, no
 * allocation but through the ops. Called by exec.c; calls only the
 * helpers of exec_internal.h, the side's operations and core/'s other
 * files, never back into exec.c.
 */
#include "exec_internal.h"
#include "heapsort.h"

/*
 * The registered bytes' accounting (lock held): a range's bytes leave
 * @bud.held when it is freed; what an episode's chunks count on the slow
 * tier (@counted, @bud.slow) leaves with its ranges (tt_x_detach()) or at
 * the episode's end.
 */

/* Put range entry @r back on the free list (lock held). */
void tt_x_range_free(struct tt_exec *x, struct tt_exec_range *r)
{
	x->bud.held -= tt_x_min(r->end - r->start, x->bud.held);
	/* slow is of the registered bytes (see tt_x_count_slow()) */
	x->bud.slow = tt_x_min(x->bud.slow, x->bud.held);
	tt_x_publish(x);
	tt_x_list_del(&r->link);
	tt_x_list_add_tail(&r->link, &x->free);
	x->nr_ranges--;
}

/*
 * Ranges of @l are about to be forgotten: @r, or with @r NULL every
 * one-shot range. What its chunks count on the slow tier for them no
 * longer counts: they are no longer registered (lock held).
 */
void tt_x_detach(struct tt_exec *x, struct tt_exec_layer *l,
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

/* Forget range entry @r of a layer (lock held). */
void tt_x_forget_entry(struct tt_exec *x, struct tt_exec_layer *l,
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
void tt_x_forget_range(struct tt_exec *x, struct tt_exec_layer *l,
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

/* Bytes @l's chunk arrays take, as counted in @kmem. */
static unsigned long long tt_x_chunks_kmem(const struct tt_exec_layer *l)
{
	return (unsigned long long)l->chunk_cap *
	       (sizeof(*l->chunks) + sizeof(*l->counted));
}

/* Free @l's chunk arrays (lock held, or the session closing). */
void tt_x_chunks_free(struct tt_exec *x, struct tt_exec_layer *l)
{
	x->kmem -= tt_x_min(x->kmem, tt_x_chunks_kmem(l));
	x->ops->free(x, l->chunks);
	x->ops->free(x, l->counted);
	l->chunks = (struct tt_chunk *)0;
	l->counted = (unsigned long long *)0;
	l->chunk_cap = 0;
}

/*
 * Room for @cap chunks in @l's arrays, the first @l->nr_chunks kept (lock
 * held): 0 or -ENOMEM.
 */
int tt_x_chunks_grow(struct tt_exec *x, struct tt_exec_layer *l,
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
 * End an episode: forget its chunks; what it left evicted is its
 * @ended_left (lock held).
 */
void tt_x_episode_end(struct tt_exec *x, struct tt_exec_layer *l)
{
	struct tt_exec_range *r;
	unsigned int i;

	l->ended_left = tt_x_outstanding(l);
	l->ended_iter = l->iter;

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
void tt_x_count_slow(struct tt_exec *x, struct tt_exec_layer *l,
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
	/*
	 * Never more than registered: a prefetch can move back pages that
	 * are still counted (another layer's, with overlapping tensors, or
	 * its own before their admission), and a victim would count them
	 * again.
	 */
	n = tt_x_min(n, x->bud.held - tt_x_min(x->bud.slow, x->bud.held));
	l->counted[i] += n;
	x->bud.slow += n;
	tt_x_publish(x);
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
long tt_x_plain_pieces(struct tt_exec *x, unsigned long long start,
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
int tt_x_admit(struct tt_exec *x, struct tt_exec_layer *l,
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
void tt_x_budget_retry(struct tt_exec *x)
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
void tt_x_budget_released(struct tt_exec *x)
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
int tt_x_over(struct tt_exec *x)
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
