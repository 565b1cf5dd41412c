// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * timeline.c - profile, plan and feedback of one session's scheduler.
 *
 * No includes besides timeline.h (and through it policy.h) and no library
 * calls: compiled into the kernel module and into userspace. See
 * timeline.h for the semantics. The plan itself is tt_policy_plan()'s;
 * nothing here re-derives its equations.
 */
#include "heapsort.h"
#include "timeline.h"

#define TT_TL_NO_TIME	(~0ULL)

static const struct tt_tl_times tt_tl_zero_times;
static const struct tt_tl_exec tt_tl_zero_exec;

static unsigned long long max_u64(unsigned long long a, unsigned long long b)
{
	return a > b ? a : b;
}

static unsigned long long min_u64(unsigned long long a, unsigned long long b)
{
	return a < b ? a : b;
}

static unsigned int max_u(unsigned int a, unsigned int b)
{
	return a > b ? a : b;
}

static unsigned long long sat_add_u64(unsigned long long a,
				      unsigned long long b)
{
	return a + b < a ? ~0ULL : a + b;
}

void tt_tl_init(struct tt_tl *tl, unsigned long long page_size,
		unsigned int profile_iters, unsigned long long stay_ns,
		unsigned long long er_bps, unsigned long long pr_bps)
{
	static const struct tt_tl zero;

	*tl = zero;
	tl->page_size = page_size;
	tl->profile_iters = profile_iters ? profile_iters : 1;
	tl->stay_ns = stay_ns;
	tl->er_bps = er_bps ? er_bps : 1;
	tl->pr_bps = pr_bps ? pr_bps : 1;
	tl->cur_sig = -1;
}

void tt_tl_set_storage(struct tt_tl *tl, const struct tt_tl_storage *st)
{
	unsigned int i;

	if (st->layers != tl->st.layers)
		for (i = 0; i < tl->n; i++)
			st->layers[i] = tl->st.layers[i];
	if (st->due != tl->st.due)
		for (i = 0; i < tl->ndue; i++)
			st->due[i] = tl->st.due[i];
	/* the forward order walked so far (TT_TL_MODE_DYNAMIC) */
	if (st->order != tl->st.order && tl->st.order)
		for (i = 0; i < tl->cur_n && i < tl->n; i++)
			st->order[i] = tl->st.order[i];
	tl->st = *st;
}

/* The first index whose id is >= @id (tl->n when none). */
static unsigned int lower_bound(const struct tt_tl *tl, unsigned int id)
{
	unsigned int lo = 0, hi = tl->n;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (tl->st.layers[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int tt_tl_find(struct tt_tl *tl, unsigned int id)
{
	unsigned int i;

	/*
	 * Layers come in order, forward then backward: the last one found
	 * or a neighbour of it, before the binary search.
	 */
	i = tl->hint;
	if (i < tl->n) {
		if (tl->st.layers[i].id == id)
			return (int)i;
		if (i + 1 < tl->n && tl->st.layers[i + 1].id == id)
			i++;
		else if (i && tl->st.layers[i - 1].id == id)
			i--;
		else
			i = lower_bound(tl, id);
	} else {
		i = lower_bound(tl, id);
	}
	if (i == tl->n || tl->st.layers[i].id != id)
		return -1;
	tl->hint = i;
	return (int)i;
}

int tt_tl_add(struct tt_tl *tl, unsigned int id, void *priv)
{
	static const struct tt_tl_layer zero;
	struct tt_tl_layer *l;
	unsigned int i, pos;

	if (tl->n >= tl->st.cap)
		return -TT_TL_ENOSPC;
	pos = lower_bound(tl, id);
	for (i = tl->n; i > pos; i--)
		tl->st.layers[i] = tl->st.layers[i - 1];
	tl->n++;
	l = &tl->st.layers[pos];
	*l = zero;
	l->id = id;
	l->priv = priv;
	l->ahead = 1;
	l->status = TT_POLICY_DROPPED;
	tl->hint = pos;
	return (int)pos;
}

unsigned long long tt_tl_rel(const struct tt_tl *tl, unsigned long long now)
{
	if (!tl->in_iter || now <= tl->iter_start)
		return 0;
	return now - tl->iter_start;
}

/* Weight of the next sample: a plain mean over the first ones. */
static unsigned int sample_weight(unsigned int samples)
{
	unsigned int w = 1024 / (samples + 1);

	return w > TT_TL_WEIGHT ? w : TT_TL_WEIGHT;
}

/*
 * @l's idle time this iteration (forward end to backward begin), or
 * TT_TL_NO_TIME before both are seen.
 */
static unsigned long long idle_cur(const struct tt_tl_layer *l)
{
	if ((l->seen & (TT_TL_S_FWD_END | TT_TL_S_BWD_BEGIN)) !=
	    (TT_TL_S_FWD_END | TT_TL_S_BWD_BEGIN) ||
	    l->cur.bwd_start < l->cur.fwd_end)
		return TT_TL_NO_TIME;
	return l->cur.bwd_start - l->cur.fwd_end;
}

/*
 * How much shorter than the profile's @l's idle time has been lately
 * (@l->idle_min_ns, the shortest seen, rising by 1/256 of the gap to the
 * profile's an iteration, or this iteration's if shorter): what the lead
 * must cover for a prefetch timed from the profile to be on time.
 */
static unsigned long long idle_short(const struct tt_tl_layer *l)
{
	unsigned long long prof, least = min_u64(idle_cur(l), l->idle_min_ns ?
						 l->idle_min_ns : TT_TL_NO_TIME);

	if (least == TT_TL_NO_TIME || l->prof.bwd_start < l->prof.fwd_end)
		return 0;
	prof = l->prof.bwd_start - l->prof.fwd_end;
	return prof > least ? prof - least : 0;
}

/*
 * The least lead of @l for the turn's noise, under TT_SCHED_COUNT, when no
 * backward step releases its prefetch in time (TT_TL_L_TURN: the first
 * backward layer, and every layer whose backward begins less than
 * release_need() of its saved bytes after the first one's, as the plan's
 * profile says: reach() gives those r - 1, a release by the first
 * backward begin, which comes too late when the turn is short): only its
 * lead covers a turn shorter than the profile's, 1.5 x idle_short() (to
 * at most 3/4 of its profiled idle time, never below idle_short()); and
 * before TT_TL_LEAD_SETTLED of its prefetches were timed, at least half
 * its profiled idle time, since nothing measured says yet how much
 * shorter a turn can be; plus the dispatch wait (@tl->disp_ns), to at
 * most 3/4 of the profiled idle time. 0 for every other
 * layer, and for every layer without TT_SCHED_COUNT (the triggers are all
 * timed, and the anchor moves them with the iteration).
 */
static unsigned long long turn_floor(const struct tt_tl *tl,
				     const struct tt_tl_layer *l)
{
	unsigned long long f, idle;

	if (!tl->count || !(l->flags & TT_TL_L_TURN))
		return 0;
	f = idle_short(l);
	if (l->prof.bwd_start <= l->prof.fwd_end)
		return f;
	idle = l->prof.bwd_start - l->prof.fwd_end;
	/* half as much again: a turn shorter still, the dispatch's latency */
	f = max_u64(f, min_u64(f + f / 2, idle / 4 * 3));
	if (l->slack_samples < TT_TL_LEAD_SETTLED)
		f = max_u64(f, idle / 2);
	/* and the dispatch wait, which no earlier release absorbs either */
	return max_u64(f, min_u64(sat_add_u64(f, tl->disp_ns), idle / 4 * 3));
}

/*
 * The floor kept in @l->lead_ns: turn_floor() for the first backward
 * layer only. A later TT_TL_L_TURN layer's floor rests on the plan's PR
 * (the transfers its backward begin is compared with), so it is applied
 * to the lead its plan uses (tt_tl_lead()) and lifts when PR does, instead
 * of being learnt.
 */
static unsigned long long kept_floor(const struct tt_tl *tl,
				     const struct tt_tl_layer *l)
{
	return l->rank == 1 ? turn_floor(tl, l) : 0;
}

unsigned long long tt_tl_lead(const struct tt_tl *tl,
			      const struct tt_tl_layer *l)
{
	return max_u64(l->lead_ns, turn_floor(tl, l));
}

/* Fold this iteration's idle time of @l into @l->idle_min_ns. */
static void idle_min_fold(struct tt_tl_layer *l)
{
	unsigned long long cur = idle_cur(l), prof;

	if (cur == TT_TL_NO_TIME || l->prof.bwd_start < l->prof.fwd_end)
		return;
	prof = l->prof.bwd_start - l->prof.fwd_end;
	if (l->idle_min_ns && l->idle_min_ns < prof)
		l->idle_min_ns += (prof - l->idle_min_ns) / 256;
	if (!l->idle_min_ns || cur < l->idle_min_ns)
		l->idle_min_ns = cur;
}

/*
 * Late by @late_ns: grow by 1.5x that, but by no more than the layer's
 * prefetch takes at the current PR estimate (lateness beyond that comes
 * from a rate far off, which the rate average corrects, or from a stall)
 * plus how much earlier than profiled its backward pass began (timing
 * noise that only the lead can cover: a loss or a hook between the
 * forward and the backward pass that took less time than in the profile),
 * and to at most the layer's profiled idle time (a prefetch that would
 * have to start before the forward pass ended is no prefetch). Not in an
 * iteration whose rates missed (@tl->rate_miss): the rates correct that.
 */
static void lead_grow(const struct tt_tl *tl, struct tt_tl_layer *l,
		      unsigned long long late_ns)
{
	unsigned long long step = late_ns + late_ns / 2, lead;

	if (tl->rate_miss)
		return;
	step = min_u64(step, sat_add_u64(tt_policy_xfer_ns(max_u64(l->final_bytes,
								   l->x.evicted_bytes),
							   tl->pr_bps),
					 turn_floor(tl, l)));
	lead = tt_tl_lead(tl, l) + step;
	if (lead < step)			/* overflow */
		lead = TT_TL_NO_TIME;
	l->lead_ns = min_u64(lead, l->prof.bwd_start - l->prof.fwd_end);
}

/*
 * Fold one slack of @l's prefetch, @s_ns (backward start - prefetch end;
 * negative: late by that much), into its average and mean deviation. A
 * slack is taken as at most the layer's prefetch at the current PR
 * estimate either way: beyond that it comes from a rate far off, which
 * the rate average corrects, or from a stall, not from the noise. Not in
 * an iteration whose rates missed (@tl->rate_miss).
 */
static void slack_sample(const struct tt_tl *tl, struct tt_tl_layer *l,
			 long long s_ns)
{
	unsigned long long most = max_u64(l->final_bytes, l->x.evicted_bytes);
	long long cap = (long long)min_u64(tt_policy_xfer_ns(most, tl->pr_bps),
					   TT_TL_NO_TIME / 4);
	long long err;
	unsigned long long dev;

	if (tl->rate_miss)
		return;
	if (s_ns > cap)
		s_ns = cap;
	if (s_ns < -cap)
		s_ns = -cap;
	err = s_ns - l->slack_avg_ns;
	dev = err < 0 ? -(unsigned long long)err : (unsigned long long)err;
	if (!l->slack_samples++) {
		l->slack_avg_ns = s_ns;
		return;
	}
	l->slack_avg_ns += err / 8;
	l->slack_dev_ns = l->slack_dev_ns - l->slack_dev_ns / 4 + dev / 4;
}

/*
 * On time with @slack_ns to spare: while the slack exceeds a margin of
 * max(lead/4, 4 x the slack's mean deviation), shrink by at most lead/16
 * per iteration, so the lead settles with room for the timing noise
 * instead of shrinking until the layer is late again; below 2 x the
 * deviation, grow by half the shortfall (the next noise would make it
 * late), to at most the layer's profiled idle time. Never below
 * turn_floor(). Not in an iteration whose rates missed (@tl->rate_miss).
 */
static void lead_shrink(const struct tt_tl *tl, struct tt_tl_layer *l,
			unsigned long long slack_ns)
{
	unsigned long long margin = max_u64(l->lead_ns / 4,
					    4 * l->slack_dev_ns);
	unsigned long long floor = kept_floor(tl, l);

	if (tl->rate_miss)
		return;
	if (slack_ns > margin && l->lead_ns > floor)
		l->lead_ns -= min_u64(min_u64(l->lead_ns / 16,
					      (slack_ns - margin) / 2),
				      l->lead_ns - floor);
	else if (slack_ns < 3 * l->slack_dev_ns)
		l->lead_ns = min_u64(l->lead_ns +
				     (3 * l->slack_dev_ns - slack_ns) / 2,
				     l->prof.bwd_start - l->prof.fwd_end);
}

#define TT_TL_S_COMPLETE (TT_TL_S_FWD_END | TT_TL_S_BWD_BEGIN | TT_TL_S_BWD_END)

static int complete(const struct tt_tl_layer *l)
{
	return (l->seen & (TT_TL_S_COMPLETE | TT_TL_S_ERR)) == TT_TL_S_COMPLETE;
}

/* Fold the layer's current iteration into @prof (@samples so far). */
static void fold_into(const struct tt_tl_layer *l, struct tt_tl_times *prof,
		      unsigned int *samples)
{
	unsigned int w = sample_weight(*samples);
	unsigned long long fs = l->cur.fwd_end;

	if (l->seen & TT_TL_S_FWD_BEGIN)
		fs = l->cur.fwd_start;

	prof->fwd_start = tt_policy_ewma(prof->fwd_start, fs, w);
	prof->fwd_end = tt_policy_ewma(prof->fwd_end, l->cur.fwd_end, w);
	prof->bwd_start = tt_policy_ewma(prof->bwd_start, l->cur.bwd_start, w);
	prof->bwd_end = tt_policy_ewma(prof->bwd_end, l->cur.bwd_end, w);
	prof->saved = tt_policy_ewma(prof->saved, l->cur.saved, w);
	if (*samples < ~0U)
		(*samples)++;
}

static void fold(struct tt_tl_layer *l)
{
	fold_into(l, &l->prof, &l->samples);
	l->flags |= TT_TL_L_PROFILED;
}

/* The plan's eviction of @l, ordered now. */
static enum tt_tl_action order_evict(struct tt_tl *tl, struct tt_tl_layer *l,
				     unsigned long long *bytes)
{
	if (l->status == TT_POLICY_ACCEPTED)
		tl->counts.layers_accepted++;
	else
		tl->counts.layers_modified++;
	l->seen |= TT_TL_S_EVICT;
	*bytes = l->final_bytes;
	return TT_TL_ACT_EVICT;
}

/* ---- TT_TL_MODE_DYNAMIC ------------------------------------------------ */

#define TT_TL_FNV_OFFSET	14695981039346656037ULL
#define TT_TL_FNV_PRIME		1099511628211ULL

static unsigned long long fnv(unsigned long long h, unsigned int id)
{
	unsigned int k;

	for (k = 0; k < 4; k++) {
		h ^= (id >> (8 * k)) & 0xff;
		h *= TT_TL_FNV_PRIME;
	}
	return h;
}

static void miss(struct tt_tl *tl, unsigned int kind, unsigned int layer,
		 unsigned long long bytes)
{
	struct tt_tl_miss *m = &tl->misses[tl->miss_head % TT_TL_MISSES];

	m->iter = tl->iter_seq;
	m->kind = kind;
	m->layer = layer;
	m->bytes = bytes;
	tl->miss_head++;
	tl->counts.dyn_misses++;
}

int tt_tl_miss_get(const struct tt_tl *tl, unsigned int i,
		   struct tt_tl_miss *m)
{
	if (i >= tl->miss_head || i >= TT_TL_MISSES)
		return 0;
	*m = tl->misses[(tl->miss_head - 1 - i) % TT_TL_MISSES];
	return 1;
}

unsigned int tt_tl_signatures(const struct tt_tl *tl)
{
	unsigned int i, n = 0;

	for (i = 0; i < TT_TL_SIGS; i++)
		if (tl->sigs[i].hash)
			n++;
	return n;
}

/* Fallback order: rank, then layer id. */
static int rank_before(const void *x, const void *y, const void *ctx)
{
	const struct tt_tl_due *a = x, *b = y;

	(void)ctx;
	return a->rank != b->rank ? a->rank < b->rank : a->id < b->id;
}

/*
 * The rest of the iteration runs on the layer-count trigger: every layer
 * seen is ranked by its forward position, the pending prefetches lose
 * their trigger times and wait for the backward pass to release them, the
 * forward layers from here on are evicted k positions late.
 */
static void go_fallback(struct tt_tl *tl)
{
	unsigned int i;

	if (tl->fallback)
		return;
	tl->fallback = 1;
	tl->counts.dyn_fallback++;
	if (tl->cur_sig >= 0)
		tl->counts.dyn_mispredicted++;
	/* fb_next_evict() scans the latest positions from the next call on */
	tl->scan_n = 0;
	tl->evict_pos = 0;
	tl->bwd_rank = 0;
	for (i = 0; i < tl->n; i++) {
		struct tt_tl_layer *l = &tl->st.layers[i];

		l->rank = l->fpos ? TT_TL_RANK_FWD - l->fpos : 0;
		l->reach = 0;
	}
	/*
	 * A planned layer not seen yet was not evicted: its entry goes last
	 * and never fires (seen later, it gets a fallback entry of its own).
	 */
	for (i = tl->due_pos; i < tl->ndue; i++) {
		int idx = tt_tl_find(tl, tl->st.due[i].id);

		tl->st.due[i].t = TT_TL_NO_TIME;
		tl->st.due[i].rank = idx >= 0 && tl->st.layers[idx].rank ?
				     tl->st.layers[idx].rank : ~0U;
		tl->st.due[i].reach = 0;
		if (idx >= 0)
			tl->st.layers[idx].x.ahead = tl->st.due[i].ahead;
	}
	if (tl->ndue > tl->due_pos)	/* no storage yet: st.due is NULL */
		tt_heapsort(tl->st.due + tl->due_pos, tl->ndue - tl->due_pos,
			    sizeof(*tl->st.due), rank_before, (void *)0);
}

/* A forward end at position l->fpos: does the predicted sequence hold? */
static void dyn_fwd_end(struct tt_tl *tl, struct tt_tl_layer *l)
{
	if (!tl->fallback && tl->cur_sig >= 0 &&
	    l->spos[tl->cur_sig] != l->fpos) {
		miss(tl, TT_TL_MISS_PREDICT, l->id, l->fpos);
		go_fallback(tl);
	}
	if (tl->fallback)
		l->rank = TT_TL_RANK_FWD - l->fpos;
}

/* A backward begin of layer @idx at @rel: the previous one's step. */
static void bwd_step_sample(struct tt_tl *tl, unsigned int idx,
			    unsigned long long rel)
{
	int i = tl->bwd_last ? tt_tl_find(tl, tl->bwd_last_id) : -1;

	if (i >= 0 && rel > tl->bwd_last_rel) {
		struct tt_tl_layer *p = &tl->st.layers[i];
		unsigned long long d = rel - tl->bwd_last_rel;

		p->bstep_ns = p->bstep_ns ?
			      tt_policy_ewma(p->bstep_ns, d, TT_TL_WEIGHT) : d;
	}
	tl->bwd_last = 1;
	tl->bwd_last_id = tl->st.layers[idx].id;
	tl->bwd_last_rel = rel;
}

/* The first backward begin: did the sequence end where predicted? */
static void dyn_bwd_begin(struct tt_tl *tl)
{
	if (tl->bwd_seen)
		return;
	tl->bwd_seen = 1;
	if (!tl->fallback && tl->cur_sig >= 0 &&
	    tl->cur_n != tl->sigs[tl->cur_sig].nlayers) {
		miss(tl, TT_TL_MISS_PREDICT, 0, tl->cur_n);
		go_fallback(tl);
	}
}

/* Margin on an estimated transfer time (TT_TL_FB_MARGIN_PCT). */
static unsigned long long fb_xfer(unsigned long long bytes,
				  unsigned long long bps)
{
	return tt_policy_xfer_ns(bytes, bps) / 100 * TT_TL_FB_MARGIN_PCT;
}

/*
 * The time the backward pass spends from the backward begin of @l to the
 * next one: measured, else (never seen backward) its forward time now.
 */
static unsigned long long bwd_step(const struct tt_tl_layer *l)
{
	if (l->bstep_ns)
		return l->bstep_ns;
	return l->cur.fwd_end > l->cur.fwd_start ?
	       l->cur.fwd_end - l->cur.fwd_start : 0;
}

/* The layer at forward position @p (1..cur_n) of the current iteration. */
static struct tt_tl_layer *at_pos(struct tt_tl *tl, unsigned int p)
{
	int i = tt_tl_find(tl, tl->st.order[p - 1]);

	return i >= 0 ? &tl->st.layers[i] : (struct tt_tl_layer *)0;
}

/* backward begin times of the latest positions walked, by position */
#define TT_TL_FB_RING	TT_TL_RECENT

/*
 * The fallback's admission of @q (@b bytes, released @k backward layers
 * before its own): should the backward pass begin now, with the latest
 * forward layer (the earliest need the iteration can still have), would
 * every prefetch still out, and @q's, be back before its backward begin?
 *
 * The model, all from now: the evictions not ended and @q's run first,
 * back to back at ER; then the prefetches in backward order, back to back
 * at PR, each no earlier than its release (the backward begin k positions
 * above it); the backward begin of position p is the sum of the backward
 * steps (bwd_step()) of positions cur_n .. p + 1. Transfer times carry
 * TT_TL_FB_MARGIN_PCT. O(cur_n).
 */
static int fb_fits(struct tt_tl *tl, const struct tt_tl_layer *q,
		   unsigned long long b, unsigned int k)
{
	unsigned long long ring[TT_TL_FB_RING], t = 0, cur;
	const struct tt_tl_layer *above = (const struct tt_tl_layer *)0;
	unsigned int n = tl->cur_n, p;

	cur = fb_xfer(tl->evict_backlog + b, tl->er_bps);
	for (p = n; p >= 1; p--) {
		const struct tt_tl_layer *l = at_pos(tl, p);
		unsigned long long bytes, rel;
		unsigned int ahead, r;

		/* the backward begin of p: the steps of n .. p + 1 after now */
		if (above)
			t += bwd_step(above);
		above = l;
		ring[p % TT_TL_FB_RING] = t;
		if (!l)
			continue;
		if (l == q) {
			bytes = b;
			ahead = k;
		} else if ((l->seen & TT_TL_S_EVICT) &&
			   !(l->seen & TT_TL_S_DUE) && l->final_bytes) {
			bytes = l->final_bytes;
			ahead = l->x.ahead ? l->x.ahead : 1;
		} else {
			continue;
		}
		/* released at the backward begin of position p + k (<= n) */
		r = ahead < TT_TL_FB_RING - 1 ? ahead : TT_TL_FB_RING - 1;
		rel = p + r >= n ? 0 : ring[(p + r) % TT_TL_FB_RING];
		cur = max_u64(cur, rel) + fb_xfer(bytes, tl->pr_bps);
		if (cur > t)
			return 0;
	}
	return 1;
}

/*
 * The k @q's prefetch needs: the fewest backward layers above it whose
 * steps cover its transfer (as of the positions seen so far; all of them
 * when they do not), at least its learned k.
 */
static unsigned int fb_ahead(struct tt_tl *tl, const struct tt_tl_layer *q,
			     unsigned long long b)
{
	unsigned long long need = fb_xfer(b, tl->pr_bps), t = 0;
	unsigned int k = 0, p;

	for (p = q->fpos + 1; p <= tl->cur_n && t < need; p++) {
		const struct tt_tl_layer *l = at_pos(tl, p);

		t += l ? bwd_step(l) : 0;
		k++;
	}
	return k > q->ahead ? k : q->ahead;
}

/*
 * The fallback: the next layer to evict, if one fits (fb_fits()). Every
 * layer TT_TL_EVICT_DELAY or more positions behind the latest forward end,
 * among the latest TT_TL_RECENT, not evicted yet, is considered once per
 * forward end, the oldest first: a layer that does not fit now may fit
 * once the iteration has gone deeper (its need is then further away).
 */
static int fb_next_evict(struct tt_tl *tl, unsigned int *idx,
			 unsigned long long *bytes)
{
	unsigned int n = tl->cur_n, j;

	if (tl->scan_n != n) {
		tl->scan_n = n;
		tl->evict_pos = n > TT_TL_RECENT ? n - TT_TL_RECENT : 0;
	}
	while (tl->evict_pos + TT_TL_EVICT_DELAY < n) {
		struct tt_tl_layer *l = at_pos(tl, ++tl->evict_pos);
		unsigned long long b;
		unsigned int k;

		if (!l)
			continue;
		b = l->cur.saved & ~(tl->page_size - 1);
		if (!b || tl->ndue >= tl->st.cap ||
		    (l->seen & (TT_TL_S_ERR | TT_TL_S_EVICT | TT_TL_S_BWD_BEGIN)))
			continue;
		k = fb_ahead(tl, l, b);
		if (!fb_fits(tl, l, b, k))
			continue;
		tl->evict_backlog += b;
		l->seen |= TT_TL_S_EVICT;
		l->status = TT_POLICY_ACCEPTED;
		l->final_bytes = b;
		l->x.ahead = k;
		tl->counts.layers_accepted++;
		/* its prefetch: released by the backward pass only */
		for (j = tl->ndue; j > tl->due_pos &&
		     tl->st.due[j - 1].rank > l->rank; j--)
			tl->st.due[j] = tl->st.due[j - 1];
		tl->st.due[j].t = TT_TL_NO_TIME;
		tl->st.due[j].id = l->id;
		tl->st.due[j].rank = l->rank;
		tl->st.due[j].ahead = k;
		tl->st.due[j].reach = 0;
		tl->ndue++;
		*idx = (unsigned int)(l - tl->st.layers);
		*bytes = b;
		return 1;
	}
	return 0;
}

int tt_tl_next_evict(struct tt_tl *tl, unsigned int *idx,
		     unsigned long long *bytes)
{
	if (tl->off || tl->bwd_seen)
		return 0;
	if (tl->fallback)
		return fb_next_evict(tl, idx, bytes);
	/*
	 * A held prediction: the plan's evictions, TT_TL_EVICT_DELAY
	 * positions late: the last layers of a pass, which its backward pass
	 * needs first, are never on their way out, and an eviction ordered at
	 * the last forward end still has a forward and a backward layer
	 * before its release
	 */
	while (tl->dynamic && tl->planned &&
	       tl->evict_pos + TT_TL_EVICT_DELAY < tl->cur_n) {
		unsigned int q = ++tl->evict_pos;
		struct tt_tl_layer *l = at_pos(tl, q);

		if (!l || !(l->flags & TT_TL_L_PLANNED) || !l->final_bytes ||
		    (l->seen & (TT_TL_S_ERR | TT_TL_S_EVICT |
				TT_TL_S_DUE | TT_TL_S_BWD_BEGIN)))
			continue;
		order_evict(tl, l, bytes);
		*idx = (unsigned int)(l - tl->st.layers);
		return 1;
	}
	return 0;
}

/*
 * Close a TT_TL_MODE_DYNAMIC iteration: fold it into its signature's
 * profile, a new slot (the least recently seen one when all are taken)
 * for a new signature.
 */
static void dyn_close(struct tt_tl *tl)
{
	static const struct tt_tl_times zero;
	unsigned int i, slot = TT_TL_SIGS;
	unsigned long long oldest = ~0ULL;

	if (!tl->cur_n)
		return;
	for (i = 0; i < TT_TL_SIGS; i++)
		if (tl->sigs[i].hash == tl->cur_hash &&
		    tl->sigs[i].nlayers == tl->cur_n)
			slot = i;
	if (slot == TT_TL_SIGS) {
		for (i = 0; i < TT_TL_SIGS; i++) {
			if (!tl->sigs[i].hash) {
				slot = i;
				break;
			}
			if (tl->sigs[i].last_iter < oldest) {
				oldest = tl->sigs[i].last_iter;
				slot = i;
			}
		}
		for (i = 0; i < tl->n; i++) {
			tl->st.layers[i].sprof[slot] = zero;
			tl->st.layers[i].spos[slot] = 0;
			tl->st.layers[i].ssamples[slot] = 0;
		}
		tl->sigs[slot].hash = tl->cur_hash;
		tl->sigs[slot].nlayers = tl->cur_n;
		tl->sigs[slot].samples = 0;
		miss(tl, TT_TL_MISS_NEW, 0, tl->cur_n);
	}
	for (i = 0; i < tl->n; i++) {
		struct tt_tl_layer *l = &tl->st.layers[i];

		if (!l->fpos || !complete(l))
			continue;
		fold_into(l, &l->sprof[slot], &l->ssamples[slot]);
		l->spos[slot] = l->fpos;
	}
	if (tl->sigs[slot].samples < ~0U)
		tl->sigs[slot].samples++;
	tl->sigs[slot].last_iter = tl->iter_seq;
	if (tl->cur_sig >= 0 && !tl->fallback)
		tl->counts.dyn_predicted++;
}

/*
 * The signature to plan the new iteration from: the one seen most often
 * (profiled at least profile_iters times), the latest on a tie, if it holds
 * a majority of the iterations the table remembers; -1 when none. With its
 * profile loaded the plan is the usual one.
 */
static int dyn_predict(struct tt_tl *tl)
{
	unsigned int i, best_n = 0, total = 0;
	int best = -1;

	for (i = 0; i < TT_TL_SIGS; i++) {
		const struct tt_tl_sig *g = &tl->sigs[i];

		total += g->samples;
		if (!g->hash || g->samples < tl->profile_iters)
			continue;
		if (g->samples > best_n ||
		    (g->samples == best_n && best >= 0 &&
		     g->last_iter > tl->sigs[best].last_iter)) {
			best = (int)i;
			best_n = g->samples;
		}
	}
	/* a prediction needs a majority: else the fallback from the start */
	if (best < 0 || 2 * best_n <= total)
		return -1;
	for (i = 0; i < tl->n; i++) {
		struct tt_tl_layer *l = &tl->st.layers[i];

		if (l->spos[best] && l->ssamples[best]) {
			l->prof = l->sprof[best];
			l->samples = l->ssamples[best];
			l->flags |= TT_TL_L_PROFILED;
		} else {
			l->flags &= ~TT_TL_L_PROFILED;
		}
	}
	return best;
}

/* Close the current iteration at relative time @end_rel. */
static unsigned int close_iteration(struct tt_tl *tl,
				    unsigned long long end_rel)
{
	unsigned int i, ncomplete = 0;
	int deviate = 0;

	for (i = 0; i < tl->n; i++) {
		struct tt_tl_layer *l = &tl->st.layers[i];

		/* A prefetch still running when the iteration ends. */
		if ((l->seen & TT_TL_S_LATE) && end_rel > l->cur.bwd_start) {
			slack_sample(tl, l, -(long long)(end_rel -
						     l->cur.bwd_start));
			lead_grow(tl, l, end_rel - l->cur.bwd_start);
		}
		l->seen &= ~TT_TL_S_LATE;
		idle_min_fold(l);
		/* at least kept_floor() (never above the profiled idle time) */
		l->lead_ns = max_u64(l->lead_ns, kept_floor(tl, l));
		/*
		 * Not evicted: the lead fades, so a layer the lead made the
		 * policy drop is tried again.
		 */
		if (!(l->seen & TT_TL_S_EVICT))
			l->lead_ns -= l->lead_ns / 16;
		if (complete(l))
			ncomplete++;
		if (tl->dynamic)
			continue;
		if (tl->profiled &&
		    !complete(l) != !(l->flags & TT_TL_L_PROFILED))
			deviate = 1;
	}
	if (tl->dynamic) {
		dyn_close(tl);
		return 0;
	}
	if (tl->profiled && tl->last_rel / 2 > tl->prof_iter_ns)
		deviate = 1;

	if (deviate) {
		for (i = 0; i < tl->n; i++) {
			tl->st.layers[i].flags &= ~TT_TL_L_PROFILED;
			tl->st.layers[i].samples = 0;
			tl->st.layers[i].prof = tt_tl_zero_times;
		}
		tl->profiled = 0;
		tl->prof_iter_ns = 0;
		tl->counts.reprofiles++;
		return TT_TL_IB_REPROFILE;
	}
	/* An iteration without any complete layer teaches nothing. */
	if (!ncomplete)
		return 0;
	for (i = 0; i < tl->n; i++)
		if (complete(&tl->st.layers[i]))
			fold(&tl->st.layers[i]);
	tl->prof_iter_ns = tt_policy_ewma(tl->prof_iter_ns, tl->last_rel,
					  sample_weight(tl->profiled));
	if (tl->profiled < ~0U)
		tl->profiled++;
	return 0;
}

/* Schedule order: trigger time, then layer id. */
static int due_before(const void *x, const void *y, const void *ctx)
{
	const struct tt_tl_due *a = x, *b = y;

	(void)ctx;
	return a->t != b->t ? a->t < b->t : a->id < b->id;
}

/*
 * The slow end of the prefetch rate: @tl->pr_low_bps within
 * [PR / TT_TL_PR_LOW_DIV, PR]; PR before any prefetch was timed.
 */
static unsigned long long pr_slow_bps(const struct tt_tl *tl)
{
	if (!tl->pr_low_bps)
		return tl->pr_bps;
	return max_u64(min_u64(tl->pr_low_bps, tl->pr_bps),
		       max_u64(tl->pr_bps / TT_TL_PR_LOW_DIV, 1));
}

/*
 * TT_SCHED_COUNT: the time a release must come before the backward begin
 * of a layer moving @bytes: TT_TL_REACH_MUL transfers at the slowest PR
 * seen lately (@tl->pr_low_bps, within [PR / TT_TL_PR_LOW_DIV, PR]), plus
 * the longest dispatch wait seen lately (@tl->disp_ns). Saturates.
 */
static unsigned long long release_need(const struct tt_tl *tl,
				       unsigned long long bytes)
{
	unsigned long long need = tt_policy_xfer_ns(bytes, pr_slow_bps(tl));

	need = need > TT_TL_NO_TIME / TT_TL_REACH_MUL ? TT_TL_NO_TIME :
	       need * TT_TL_REACH_MUL;
	return sat_add_u64(need, tl->disp_ns);
}

/*
 * TT_SCHED_COUNT: the reach of the layer of rank @r (1..@m) moving @bytes:
 * the fewest backward layers before its own whose profiled backward steps
 * (differences of the plan's ts_B, in backward order in st.order) take
 * release_need(); r - 1 (released by the first
 * backward begin) when they do not. So a prefetch is not released by a
 * layer whose backward pass takes no time (a ReLU's, a dropped layer's
 * the same as a convolution's), which k = 1 did: in the 6.12 guest the
 * Python tests' Twice and autocast CNN found a layer late that a ReLU
 * released (stop 57). O(log @m).
 */
static unsigned int reach(const struct tt_tl *tl, unsigned int m,
			  unsigned int r, unsigned long long bytes)
{
	unsigned long long need, tr;
	unsigned int lo = 1, hi = r, mid;

	if (r <= 1 || r > m)
		return 0;
	need = release_need(tl, bytes);
	tr = tl->st.plan[tl->st.order[r - 1]].bwd_start_ns;
	if (tr < need || tl->st.plan[tl->st.order[0]].bwd_start_ns > tr - need)
		return r - 1;
	/* the largest rank j < r with ts_B(j) <= ts_B(r) - need: in [lo, hi) */
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (tl->st.plan[tl->st.order[mid - 1]].bwd_start_ns <= tr - need)
			lo = mid;
		else
			hi = mid;
	}
	return r - lo;
}

/*
 * TT_SCHED_COUNT: @l's backward begins less than release_need() of its
 * saved bytes after @first's (the first backward layer's), in the
 * profile: no backward step releases it in time (reach()), only its lead
 * can (turn_floor()).
 */
static int turn_bound(const struct tt_tl *tl, const struct tt_tl_layer *l,
		      const struct tt_tl_layer *first)
{
	unsigned long long need;

	if (!tl->count)
		return 0;
	need = release_need(tl, l->prof.saved & ~(tl->page_size - 1));
	return l->prof.bwd_start < sat_add_u64(first->prof.bwd_start, need);
}

/* Plan the new iteration over the profiled layers; 1 when planned. */
static int plan(struct tt_tl *tl)
{
	struct tt_policy_params p = {
		.er_bps = tl->er_bps,
		/*
		 * the prefetches at their slow end: chained back to back,
		 * each one's delay is the next one's, and an average rate
		 * leaves the chain no slack for them
		 */
		.pr_bps = pr_slow_bps(tl),
		/* an eviction starts the dispatch wait after its forward end */
		.stay_ns = sat_add_u64(tl->stay_ns, tl->disp_ns),
		.page_size = tl->page_size,
		.alap = tl->alap,
	};
	unsigned int i, m = 0;
	int first = -1;

	/* the first backward layer of this plan: rank 1 below */
	for (i = 0; i < tl->n; i++) {
		const struct tt_tl_layer *l = &tl->st.layers[i];

		if ((l->flags & TT_TL_L_PROFILED) &&
		    (first < 0 ||
		     l->prof.bwd_start < tl->st.layers[first].prof.bwd_start))
			first = (int)i;
	}
	for (i = 0; i < tl->n; i++) {
		struct tt_tl_layer *l = &tl->st.layers[i];
		struct tt_policy_layer *pl;

		if (!(l->flags & TT_TL_L_PROFILED))
			continue;
		l->flags &= ~TT_TL_L_TURN;
		if ((int)i == first || turn_bound(tl, l, &tl->st.layers[first]))
			l->flags |= TT_TL_L_TURN;
		if ((int)i == first)
			l->lead_ns = max_u64(l->lead_ns, turn_floor(tl, l));
		pl = &tl->st.plan[m++];
		pl->layer = l->id;
		/* averages of ordered samples stay ordered; be safe anyway */
		pl->fwd_start_ns = l->prof.fwd_start;
		pl->fwd_end_ns = max_u64(l->prof.fwd_end, pl->fwd_start_ns);
		pl->bwd_start_ns = max_u64(l->prof.bwd_start, pl->fwd_end_ns);
		pl->bwd_end_ns = max_u64(l->prof.bwd_end, pl->bwd_start_ns);
		pl->saved_bytes = l->prof.saved;
		pl->lead_ns = tt_tl_lead(tl, l);
	}
	if (tt_policy_plan(&p, tl->st.plan, m, tl->st.order, (void *)0,
			   (void *)0))
		return 0;

	m = 0;
	for (i = 0; i < tl->n; i++) {
		struct tt_tl_layer *l = &tl->st.layers[i];
		const struct tt_policy_layer *pl;

		if (!(l->flags & TT_TL_L_PROFILED))
			continue;
		pl = &tl->st.plan[m++];
		l->flags |= TT_TL_L_PLANNED;
		l->status = pl->status;
		l->final_bytes = pl->final_bytes;
		l->prefetch_ns = pl->prefetch_ns;
		if (!pl->final_bytes)
			continue;
		tl->st.due[tl->ndue].t = pl->prefetch_ns;
		tl->st.due[tl->ndue].id = l->id;
		tl->st.due[tl->ndue].ahead = l->ahead;
		tl->ndue++;
	}
	/* the backward order, for TT_SCHED_COUNT: ranks from 1 */
	for (i = 0; i < m; i++) {
		int idx = tt_tl_find(tl, tl->st.plan[tl->st.order[i]].layer);

		if (idx >= 0) {
			tl->st.layers[idx].rank = i + 1;
			tl->st.layers[idx].reach = 0;
		}
	}
	for (i = 0; i < tl->ndue; i++) {
		int idx = tt_tl_find(tl, tl->st.due[i].id);

		tl->st.due[i].rank = idx >= 0 ? tl->st.layers[idx].rank : 0;
		tl->st.due[i].reach = 0;
		if (idx >= 0 && tl->count && tl->st.due[i].rank) {
			tl->st.layers[idx].reach = reach(tl, m,
							 tl->st.due[i].rank,
							 tl->st.layers[idx].final_bytes);
			tl->st.due[i].reach = tl->st.layers[idx].reach;
		}
	}
	tt_heapsort(tl->st.due, tl->ndue, sizeof(*tl->st.due), due_before,
		    (void *)0);
	return 1;
}

unsigned int tt_tl_iter_begin(struct tt_tl *tl, unsigned long long now)
{
	unsigned int ret = 0, i;

	if (tl->in_iter)
		ret = TT_TL_IB_CLOSED |
		      close_iteration(tl, tt_tl_rel(tl, now));

	tl->counts.iterations++;
	tl->iter_seq++;
	tl->in_iter = 1;
	tl->iter_start = now;
	tl->iter_pr_bps = tl->pr_bps;
	tl->pf_last_end = 0;
	tl->ev_last_end = 0;
	tl->rate_miss = 0;
	tl->probed = 0;
	tl->last_rel = 0;
	tl->drift_ns = 0;
	tl->bwd_rank = 0;
	tl->planned = 0;
	tl->cur_sig = -1;
	tl->fallback = 0;
	tl->cur_hash = TT_TL_FNV_OFFSET;
	tl->cur_n = 0;
	tl->evict_pos = 0;
	tl->scan_n = 0;
	tl->bwd_last = 0;
	tl->bwd_last_rel = 0;
	tl->bwd_seen = 0;
	tl->evict_backlog = 0;
	tl->ndue = 0;
	tl->due_pos = 0;
	for (i = 0; i < tl->n; i++) {
		struct tt_tl_layer *l = &tl->st.layers[i];

		l->seen = 0;
		l->cur = tt_tl_zero_times;
		l->cur.saved = l->persist_bytes;
		l->x = tt_tl_zero_exec;
		l->flags &= ~TT_TL_L_PLANNED;
		l->status = TT_POLICY_DROPPED;
		l->final_bytes = 0;
		l->prefetch_ns = 0;
		l->rank = 0;
		l->reach = 0;
		l->fpos = 0;
	}
	if (tl->dynamic) {
		tl->cur_sig = dyn_predict(tl);
		if (tl->cur_sig >= 0 && plan(tl)) {
			tl->planned = 1;
			ret |= TT_TL_IB_PLANNED;
		} else {
			/* no signature to predict from: the count fallback */
			tl->cur_sig = -1;
			go_fallback(tl);
		}
	} else if (tl->profiled >= tl->profile_iters && plan(tl)) {
		tl->planned = 1;
		ret |= TT_TL_IB_PLANNED;
	}
	tl->planned_run = tl->planned ? tl->planned_run + 1 : 0;
	return ret;
}

/* The layer takes part in the current iteration. */
static void touch(struct tt_tl *tl, struct tt_tl_layer *l)
{
	if (l->seen & TT_TL_S_ANY)
		return;
	l->seen |= TT_TL_S_ANY;
	if (tl->planned && !(l->flags & TT_TL_L_PLANNED))
		tl->counts.layers_unknown++;
}

/*
 * The rate probe at @l's forward end (@rel) in an iteration without a
 * plan: while a direction has no sample, up to TT_TL_PROBE_BYTES of the
 * iteration's first layer with at least TT_TL_RATE_MIN_BYTES saved, once
 * per iteration, its prefetch due at once (the executor starts it when the
 * eviction ends).
 */
static enum tt_tl_action probe(struct tt_tl *tl, struct tt_tl_layer *l,
			       unsigned long long rel, int allow,
			       unsigned long long *bytes)
{
	struct tt_tl_due *d;
	unsigned long long b;

	if (tl->probed || tl->off || tl->dynamic || tl->fallback || !allow ||
	    (l->seen & TT_TL_S_ERR) || (tl->er_samples && tl->pr_samples) ||
	    tl->ndue >= tl->st.cap)
		return TT_TL_ACT_NONE;
	b = min_u64(l->cur.saved, TT_TL_PROBE_BYTES) & ~(tl->page_size - 1);
	if (b < TT_TL_RATE_MIN_BYTES || b < tl->probe_min)
		return TT_TL_ACT_NONE;
	tl->probed = 1;
	tl->counts.rate_probes++;
	l->seen |= TT_TL_S_EVICT | TT_TL_S_PROBE;
	l->final_bytes = b;
	l->prefetch_ns = rel;
	d = &tl->st.due[tl->ndue++];
	d->t = rel;
	d->id = l->id;
	d->rank = 0;
	d->ahead = 1;
	d->reach = 0;
	l->x.evict_order = rel;
	*bytes = b;
	return TT_TL_ACT_EVICT;
}

static enum tt_tl_action fwd_end(struct tt_tl *tl, struct tt_tl_layer *l,
				 unsigned long long rel, int allow, unsigned long long *bytes)
{
	if (l->seen & (TT_TL_S_FWD_END | TT_TL_S_BWD_BEGIN | TT_TL_S_BWD_END)) {
		l->seen |= TT_TL_S_ERR;
		return TT_TL_ACT_NONE;
	}
	l->seen |= TT_TL_S_FWD_END;
	l->cur.fwd_end = rel;
	l->x.fwd_end = rel;
	l->fpos = ++tl->cur_n;
	tl->cur_hash = fnv(tl->cur_hash, l->id);
	if (tl->dynamic)
		tl->st.order[l->fpos - 1] = l->id;
	if (tl->dynamic)
		dyn_fwd_end(tl, l);
	if (!tl->planned)
		return probe(tl, l, rel, allow, bytes);
	if ((l->seen & TT_TL_S_ERR) || tl->off || tl->fallback ||
	    !(l->flags & TT_TL_L_PLANNED))
		return TT_TL_ACT_NONE;
	if (!l->final_bytes) {
		tl->counts.layers_dropped++;
		return TT_TL_ACT_NONE;
	}
	/* TT_TL_MODE_DYNAMIC: k positions later (tt_tl_next_evict()) */
	if (tl->dynamic)
		return TT_TL_ACT_NONE;
	/*
	 * Not when its prefetch is already due (the plan is off the mark) or
	 * its previous episode is still out: kept on the fast tier this
	 * iteration, counted as dropped.
	 */
	if (!allow || (l->seen & TT_TL_S_DUE)) {
		tl->counts.layers_dropped++;
		return TT_TL_ACT_NONE;
	}
	l->x.evict_order = rel;
	return order_evict(tl, l, bytes);
}

/*
 * The drift of the schedule: @rel, the time of a planned layer's event,
 * against the same event's profiled time. The prefetch triggers follow it
 * when TT_SCHED_ANCHOR is on, so an iteration running late (or early) as
 * a whole does not make every prefetch early (or late).
 */
static void anchor(struct tt_tl *tl, const struct tt_tl_layer *l, int phase,
		   int end, unsigned long long rel)
{
	unsigned long long p;

	if (phase == TT_TL_FWD)
		p = end ? l->prof.fwd_end : l->prof.fwd_start;
	else
		p = end ? l->prof.bwd_end : l->prof.bwd_start;
	tl->drift_ns = rel >= p ? (long long)(rel - p) : -(long long)(p - rel);
}

/* The trigger time of @d, shifted by the drift when anchoring. */
static unsigned long long due_time(const struct tt_tl *tl,
				   const struct tt_tl_due *d)
{
	if (!tl->anchor || !tl->drift_ns || d->t == TT_TL_NO_TIME)
		return d->t;
	if (tl->drift_ns > 0)
		return d->t + (unsigned long long)tl->drift_ns;
	return d->t > (unsigned long long)-tl->drift_ns ?
	       d->t - (unsigned long long)-tl->drift_ns : 0;
}

int tt_tl_evict_expired(const struct tt_tl *tl, unsigned int idx,
			unsigned long long now, unsigned long long bytes)
{
	const struct tt_tl_layer *l = &tl->st.layers[idx];
	struct tt_tl_due d = { .t = l->prefetch_ns };
	unsigned long long end;

	if (!tl->in_iter || !tl->planned || tl->fallback ||
	    !(l->flags & TT_TL_L_PLANNED) || !l->final_bytes)
		return 0;
	if (l->seen & TT_TL_S_DUE)
		return 1;
	end = sat_add_u64(sat_add_u64(tt_tl_rel(tl, now),
				      tt_policy_xfer_ns(bytes, tl->er_bps)),
			  tl->stay_ns);
	return end > due_time(tl, &d);
}

void tt_tl_evict_drop(struct tt_tl *tl, unsigned int idx)
{
	struct tt_tl_layer *l = &tl->st.layers[idx];

	if (!(l->seen & TT_TL_S_EVICT))
		return;
	l->seen &= ~TT_TL_S_EVICT;
	tl->counts.layers_dropped++;
}

enum tt_tl_action tt_tl_layer_event(struct tt_tl *tl, unsigned int idx,
				    int phase, int end, unsigned long long now,
				    int allow, unsigned long long *bytes)
{
	struct tt_tl_layer *l = &tl->st.layers[idx];
	unsigned long long rel;

	*bytes = 0;
	if (!tl->in_iter)
		return TT_TL_ACT_NONE;
	rel = tt_tl_rel(tl, now);
	tl->last_rel = max_u64(tl->last_rel, rel);
	touch(tl, l);
	if (tl->planned && (l->flags & TT_TL_L_PLANNED))
		anchor(tl, l, phase, end, rel);

	if (phase == TT_TL_FWD && !end) {
		if (l->seen & (TT_TL_S_FWD_BEGIN | TT_TL_S_FWD_END |
			       TT_TL_S_BWD_BEGIN | TT_TL_S_BWD_END)) {
			l->seen |= TT_TL_S_ERR;
		} else {
			l->seen |= TT_TL_S_FWD_BEGIN;
			l->cur.fwd_start = rel;
		}
		return TT_TL_ACT_NONE;
	}
	if (phase == TT_TL_FWD)
		return fwd_end(tl, l, rel, allow, bytes);
	if (!end) {
		if (!(l->seen & TT_TL_S_FWD_END) ||
		    (l->seen & (TT_TL_S_BWD_BEGIN | TT_TL_S_BWD_END)))
			l->seen |= TT_TL_S_ERR;
		if (!(l->seen & TT_TL_S_BWD_BEGIN)) {
			l->seen |= TT_TL_S_BWD_BEGIN;
			l->cur.bwd_start = rel;
			l->x.bwd_start = rel;
			if (tl->dynamic) {
				dyn_bwd_begin(tl);
				bwd_step_sample(tl, idx, rel);
			}
			/*
			 * TT_SCHED_COUNT, or the dynamic fallback: release the
			 * next k layers' prefetches
			 */
			if (((tl->count && tl->planned) || tl->fallback) &&
			    l->rank > tl->bwd_rank)
				tl->bwd_rank = l->rank;
		}
		return TT_TL_ACT_FETCH;
	}
	if (!(l->seen & TT_TL_S_BWD_BEGIN) || (l->seen & TT_TL_S_BWD_END))
		l->seen |= TT_TL_S_ERR;
	if (!(l->seen & TT_TL_S_BWD_END)) {
		l->seen |= TT_TL_S_BWD_END;
		l->cur.bwd_end = rel;
	}
	return TT_TL_ACT_FORGET;
}

void tt_tl_saved(struct tt_tl *tl, unsigned int idx, unsigned long long bytes,
		 int persistent)
{
	struct tt_tl_layer *l = &tl->st.layers[idx];

	/* saturating: overlapping tensors saved again and again */
	if (tl->in_iter) {
		l->cur.saved = l->cur.saved > ~0ULL - bytes ? ~0ULL :
			       l->cur.saved + bytes;
		touch(tl, l);
	}
	if (persistent)
		l->persist_bytes = l->persist_bytes > ~0ULL - bytes ? ~0ULL :
				   l->persist_bytes + bytes;
}

void tt_tl_unsaved(struct tt_tl *tl, unsigned int idx, unsigned long long bytes)
{
	struct tt_tl_layer *l = &tl->st.layers[idx];

	l->persist_bytes -= min_u64(bytes, l->persist_bytes);
}

unsigned int tt_tl_ahead_max(const struct tt_tl *tl)
{
	unsigned int i, k = 1;

	for (i = 0; i < tl->n; i++)
		if (tl->st.layers[i].ahead > k)
			k = tl->st.layers[i].ahead;
	return k;
}

/*
 * TT_SCHED_COUNT with TT_SCHED_ANCHOR, planned (not the fallback): the
 * earliest time a released entry @r may fire, k transfer times of its
 * layer's bytes at PR before its anchored trigger time (k: the entry's
 * ahead). The anchor keeps the trigger with the backward pass, so a
 * release comes that much early at most, not a whole backward layer. 0
 * (no hold) without the anchor or a trigger time, and for a layer whose
 * transfer takes less than 1/TT_TL_HOLD_DIV of the profiled iteration:
 * released early, it costs little fast memory, and it is the hedge
 * against a pace that varies from step to step.
 */
static unsigned long long count_hold(struct tt_tl *tl,
				     const struct tt_tl_due *r)
{
	unsigned long long t = due_time(tl, r), x;
	int ri;

	if (!tl->anchor || !tl->count || tl->fallback || t == TT_TL_NO_TIME)
		return 0;
	ri = tt_tl_find(tl, r->id);
	if (ri < 0)
		return 0;
	x = tt_policy_xfer_ns(tl->st.layers[ri].final_bytes, tl->pr_bps);
	if (x < tl->prof_iter_ns / TT_TL_HOLD_DIV)
		return 0;
	if (r->ahead > 1)
		x = x > TT_TL_NO_TIME / r->ahead ? TT_TL_NO_TIME : x * r->ahead;
	return t > x ? t - x : 0;
}

/*
 * The first pending entry the backward pass released (its rank <= bwd_rank
 * + max(k, reach)) and count_hold() no longer holds at @rel; ndue when
 * none, and then *@held is the earliest time a held one may fire
 * (TT_TL_NO_TIME: none held). A held entry does not hold back the
 * released ones behind it. O(pending).
 */
static unsigned int released(struct tt_tl *tl, unsigned long long rel,
			     unsigned long long *held)
{
	unsigned int j;

	*held = TT_TL_NO_TIME;
	if (!(tl->count || tl->fallback) || !tl->bwd_rank)
		return tl->ndue;
	for (j = tl->due_pos; j < tl->ndue; j++) {
		const struct tt_tl_due *d = &tl->st.due[j];
		unsigned long long h;

		if (!d->rank || d->rank == ~0U ||
		    d->rank > tl->bwd_rank + max_u(d->ahead, d->reach))
			continue;
		h = count_hold(tl, d);
		if (rel >= h)
			return j;
		*held = min_u64(*held, h);
	}
	return tl->ndue;
}

int tt_tl_next_due(struct tt_tl *tl, unsigned long long now, unsigned int *id,
		   unsigned long long *next)
{
	const struct tt_tl_due *d;
	int idx;

	if (tl->due_pos >= tl->ndue) {
		*next = TT_TL_NO_TIME;
		return 0;
	}
	d = &tl->st.due[tl->due_pos];
	if (tt_tl_rel(tl, now) < due_time(tl, d)) {
		/*
		 * TT_SCHED_COUNT, the fallback: one released by the backward
		 * pass (each with its own k, so any entry may be), moved to
		 * the head
		 */
		unsigned long long held;
		unsigned int j = released(tl, tt_tl_rel(tl, now), &held);

		if (j >= tl->ndue) {
			/* the trigger or a held release: whichever is sooner */
			unsigned long long t = min_u64(due_time(tl, d), held);

			*next = t == TT_TL_NO_TIME ? TT_TL_NO_TIME :
				tl->iter_start + t;
			return 0;
		}
		if (j > tl->due_pos) {
			struct tt_tl_due r = tl->st.due[j];

			for (; j > tl->due_pos; j--)
				tl->st.due[j] = tl->st.due[j - 1];
			tl->st.due[j] = r;
		}
		tl->counts.count_released++;
	}
	tl->due_pos++;
	*id = d->id;
	idx = tt_tl_find(tl, d->id);
	if (idx >= 0) {
		tl->st.layers[idx].seen |= TT_TL_S_DUE;
		tl->st.layers[idx].x.due_at = tt_tl_rel(tl, now);
	}
	return 1;
}

void tt_tl_set_modes(struct tt_tl *tl, unsigned int modes)
{
	unsigned int i;
	int count = !!(modes & TT_TL_MODE_COUNT);
	int dynamic = !!(modes & TT_TL_MODE_DYNAMIC);

	tl->off = !!(modes & TT_TL_MODE_OFF);
	tl->alap = !!(modes & TT_TL_MODE_ALAP);
	tl->anchor = !!(modes & TT_TL_MODE_ANCHOR);
	if ((count && !tl->count) || (dynamic && !tl->dynamic))
		for (i = 0; i < tl->n; i++) {
			tl->st.layers[i].ahead = 1;
			tl->st.layers[i].ahead_run = 0;
		}
	tl->count = count;
	tl->dynamic = dynamic;
}

/* 1/TT_TL_LOW_FADE of the way from @cur to @s, either way. */
static unsigned long long fade_to(unsigned long long cur, unsigned long long s)
{
	return cur > s ? cur - (cur - s) / TT_TL_LOW_FADE :
			 cur + (s - cur) / TT_TL_LOW_FADE;
}

/*
 * Fold a dispatch wait of @w_ns (hand-out to start, less the session's own
 * moves) into @tl->disp_ns: the longest, or fading to a shorter one.
 */
static void disp_sample(struct tt_tl *tl, unsigned long long w_ns)
{
	if (tl->prof_iter_ns)
		w_ns = min_u64(w_ns, tl->prof_iter_ns / TT_TL_DISP_DIV);
	tl->disp_ns = w_ns >= tl->disp_ns ? w_ns : fade_to(tl->disp_ns, w_ns);
}

void tt_tl_evict_start(struct tt_tl *tl, unsigned int idx,
		       unsigned long long now)
{
	struct tt_tl_layer *l = &tl->st.layers[idx];
	unsigned long long rel = tt_tl_rel(tl, now), from;

	l->x.evict_start = rel;
	if (!l->x.evict_order)
		return;
	from = max_u64(l->x.evict_order, tl->ev_last_end);
	disp_sample(tl, rel > from ? rel - from : 0);
}

void tt_tl_evict_end(struct tt_tl *tl, unsigned int idx,
		     unsigned long long now, unsigned long long bytes)
{
	struct tt_tl_layer *l = &tl->st.layers[idx];

	l->x.evict_end = tt_tl_rel(tl, now);
	tl->ev_last_end = max_u64(tl->ev_last_end, l->x.evict_end);
	l->x.evicted_bytes = bytes;
	if (l->seen & TT_TL_S_EVICT)
		tl->evict_backlog -= min_u64(tl->evict_backlog, l->final_bytes);
}

void tt_tl_prefetch_start(struct tt_tl *tl, unsigned int idx,
			  unsigned long long now)
{
	struct tt_tl_layer *l = &tl->st.layers[idx];
	unsigned long long rel = tt_tl_rel(tl, now), from, to;

	l->x.prefetch_start = rel;
	if (!(l->seen & TT_TL_S_DUE))
		return;
	/* the dispatch wait: what the session's own moves do not explain */
	from = max_u64(max_u64(l->x.due_at, l->x.evict_end), tl->pf_last_end);
	to = (l->seen & TT_TL_S_BWD_BEGIN) ? min_u64(rel, l->cur.bwd_start) : rel;
	disp_sample(tl, to > from ? to - from : 0);
}

void tt_tl_prefetch_end(struct tt_tl *tl, unsigned int idx,
			unsigned long long now)
{
	struct tt_tl_layer *l = &tl->st.layers[idx];
	unsigned long long rel = tt_tl_rel(tl, now);

	l->x.prefetch_end = rel;
	tl->pf_last_end = max_u64(tl->pf_last_end, rel);
	if (!(l->seen & TT_TL_S_LATE))
		return;
	l->seen &= ~TT_TL_S_LATE;
	if (rel > l->cur.bwd_start) {
		slack_sample(tl, l, -(long long)(rel - l->cur.bwd_start));
		lead_grow(tl, l, rel - l->cur.bwd_start);
	}
}

/*
 * TT_SCHED_COUNT, the fallback: the layer's k. Late although its eviction
 * had ended before its backward pass, and either its prefetch was handed
 * out less than its transfer time at PR before the backward begin (or not
 * at all: under TT_SCHED_DEFER_LATE a prefetch not started by then is
 * taken back and runs at the backward end, so when it started says
 * nothing) or it started soon after it was handed out (within a quarter
 * of that transfer time): released one layer earlier than its k or reach
 * next time. Releasing earlier does not help a prefetch handed out in
 * time that waited for its own eviction, or in the queue behind others
 * (which earlier releases would make longer), nor one late in the first
 * iteration of a plan (outside the fallback). TT_TL_AHEAD_SHRINK
 * iterations in a row on time: one later (less time back on the fast
 * tier).
 */
static void ahead_adapt(struct tt_tl *tl, struct tt_tl_layer *l, int late)
{
	const struct tt_tl_exec *x = &l->x;

	if (!((tl->count && tl->planned) || tl->fallback))
		return;
	if (late && !tl->fallback && tl->planned_run <= 1)
		return;
	if (late) {
		unsigned long long xfer = tt_policy_xfer_ns(x->evicted_bytes,
							    tl->pr_bps);
		unsigned long long wait = x->prefetch_start > x->due_at ?
					  x->prefetch_start - x->due_at : 0;
		int late_release = !(l->seen & TT_TL_S_DUE) ||
				   sat_add_u64(x->due_at, xfer) >
				   l->cur.bwd_start;
		unsigned int k = max_u(l->ahead, l->reach);

		if (x->evict_end && x->evict_end <= l->cur.bwd_start &&
		    (late_release ||
		     (x->prefetch_start && 4 * wait <= xfer)) &&
		    k < TT_TL_AHEAD_MAX) {
			l->ahead = k + 1;
			l->ahead_run = 0;
		}
		return;
	}
	if (++l->ahead_run >= TT_TL_AHEAD_SHRINK) {
		if (l->ahead > 1)
			l->ahead--;
		l->ahead_run = 0;
	}
}

void tt_tl_bwd_check(struct tt_tl *tl, unsigned int idx,
		     unsigned long long evicted,
		     unsigned long long outstanding)
{
	struct tt_tl_layer *l = &tl->st.layers[idx];

	if (l->seen & TT_TL_S_CHECKED)
		return;
	l->seen |= TT_TL_S_CHECKED;
	if (!evicted)
		return;
	outstanding = min_u64(outstanding, evicted);
	l->x.late_bytes = outstanding;
	tl->counts.ontime_bytes += evicted - outstanding;
	tl->counts.late_bytes += outstanding;
	/* a probe's timing says nothing of the plan's leads */
	if (l->seen & TT_TL_S_PROBE) {
		if (outstanding)
			tl->counts.late_count++;
		return;
	}
	if (outstanding) {
		tl->counts.late_count++;
		ahead_adapt(tl, l, 1);
		if (tl->fallback)
			miss(tl, TT_TL_MISS_LATE, l->id, outstanding);
		l->seen |= TT_TL_S_LATE;
	} else {
		ahead_adapt(tl, l, 0);
		if (l->x.prefetch_end && l->x.prefetch_end <= l->cur.bwd_start) {
			slack_sample(tl, l, (long long)(l->cur.bwd_start -
						    l->x.prefetch_end));
			lead_shrink(tl, l, l->cur.bwd_start - l->x.prefetch_end);
		}
	}
}

void tt_tl_late_add(struct tt_tl *tl, unsigned int idx,
		    unsigned long long bytes)
{
	struct tt_tl_layer *l = &tl->st.layers[idx];

	if (!(l->seen & TT_TL_S_CHECKED) || !bytes)
		return;
	if (!l->x.late_bytes)
		tl->counts.late_count++;
	l->x.late_bytes += bytes;
	tl->counts.late_bytes += bytes;
	if (!(l->seen & TT_TL_S_PROBE))
		l->seen |= TT_TL_S_LATE;
}

/* @now is more than TT_TL_RATE_MISS times @then or less than 1/that. */
static int off_by(unsigned long long now, unsigned long long then)
{
	return now / TT_TL_RATE_MISS > then || then / TT_TL_RATE_MISS > now;
}

void tt_tl_rate_sample(struct tt_tl *tl, int dir, unsigned long long bytes,
		       unsigned long long ns)
{
	int ev = dir == TT_TL_EVICT;
	unsigned long long *rate = ev ? &tl->er_bps : &tl->pr_bps;
	unsigned long long *other = ev ? &tl->pr_bps : &tl->er_bps;
	unsigned int *n = ev ? &tl->er_samples : &tl->pr_samples;
	unsigned int *on = ev ? &tl->pr_samples : &tl->er_samples;
	unsigned long long sample;
	int unsettled;

	if (bytes < TT_TL_RATE_MIN_BYTES || !ns)
		return;
	/* bytes * 1e9 / ns: xfer_ns() computes exactly that product/quotient */
	sample = tt_policy_xfer_ns(bytes, ns);
	if (!sample)
		sample = 1;
	unsettled = *n < TT_TL_RATE_SETTLED;
	/*
	 * the noise of PR: a stall (below PR / TT_TL_PR_LOW_DIV) is the
	 * rates' and rate_miss's to handle
	 */
	if (!ev && sample >= *rate / TT_TL_PR_LOW_DIV)
		tl->pr_low_bps = !tl->pr_low_bps || sample <= tl->pr_low_bps ?
				 sample : fade_to(tl->pr_low_bps, sample);
	*rate = tt_policy_ewma(*rate, sample, sample_weight(*n));
	if (!*rate)
		*rate = 1;
	if (*n < TT_TL_RATE_SETTLED)
		(*n)++;
	if (!*on)
		*other = sample;
	/*
	 * an unsettled PR (a probe's sample, one planned iteration's) says
	 * little: a prefetch sample that far off says the plan's PR was off
	 */
	if (tl->in_iter && (off_by(tl->pr_bps, tl->iter_pr_bps) ||
			    (!ev && unsettled &&
			     off_by(sample, tl->iter_pr_bps))))
		tl->rate_miss = 1;
}

void tt_tl_set_rates(struct tt_tl *tl, unsigned long long er_bps,
		     unsigned long long pr_bps)
{
	if (er_bps) {
		tl->er_bps = er_bps;
		tl->er_samples = TT_TL_RATE_SETTLED;
	}
	if (pr_bps) {
		tl->pr_bps = pr_bps;
		tl->pr_samples = TT_TL_RATE_SETTLED;
		/* the slow end restarts from the samples that follow */
		tl->pr_low_bps = 0;
	}
}
