// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fuzz_timeline.c - libFuzzer harness of core/timeline.c (with policy.c),
 * the per-session scheduler state every TT_IOC_EVENT drives.
 *
 * Each input is a program of the calls kmod/sched.c makes, with its
 * preconditions kept (a layer index from the table, time never going
 * backwards, an eviction reported only after it was ordered, no more
 * persistent bytes dropped than were saved): layer events of new and known
 * ids (the storage grown as tt_sched_grow() does, into fresh arrays filled
 * with a poison pattern so that anything not carried over reads as a huge
 * index), iteration begins, saved tensors, execution reports, rate samples,
 * mode and rate changes, and the schedule's outputs (tt_tl_next_due,
 * tt_tl_next_evict, tt_tl_miss_get) drained after each event.
 *
 * Checks after each call: the table sorted by id with every id found where
 * it is and its caller pointer intact, the schedule within its array, each
 * due prefetch and delayed eviction naming a layer of the table, the miss
 * log's kinds, k within 1..TT_TL_AHEAD_MAX, the signature count.
 */
#include "../../timeline.h"
#include "fuzz.h"

#define FZ_MAX_LAYERS	200
#define FZ_FIRST_CAP	16

/* The caller's side of a layer (sched.c's struct tt_slayer, in short). */
struct mlayer {
	unsigned int id;
	int evicting;		/* an episode is out */
	u64 ordered;		/* bytes ordered out */
	u64 evicted;		/* reported evicted */
	u64 persist;		/* persistent bytes saved */
};

static struct mlayer ml[FZ_MAX_LAYERS];
static unsigned int nml;
/* dynamic mode since the current iteration began (timeline.h's @order) */
static int dyn_iter;

static void free_storage(struct tt_tl_storage *st)
{
	free(st->layers);
	free(st->plan);
	free(st->order);
	free(st->due);
}

static void grow(struct tt_tl *tl)
{
	struct tt_tl_storage old = tl->st, st;
	unsigned int cap = old.cap ? old.cap * 2 : FZ_FIRST_CAP;

	st.cap = cap;
	st.layers = fz_alloc(cap, sizeof(*st.layers));
	st.plan = fz_alloc(cap, sizeof(*st.plan));
	st.order = fz_alloc(cap, sizeof(*st.order));
	st.due = fz_alloc(cap, sizeof(*st.due));
	tt_tl_set_storage(tl, &st);
	free_storage(&old);
}

static struct mlayer *priv_of(const struct tt_tl *tl, unsigned int idx)
{
	return tl->st.layers[idx].priv;
}

static void check_tl(struct tt_tl *tl)
{
	unsigned int i;
	struct tt_tl_miss m;

	FZ_CHECK(tl->n <= tl->st.cap, "n %u > cap %u", tl->n, tl->st.cap);
	FZ_CHECK(tl->n == nml, "%u layers, %u added", tl->n, nml);
	FZ_CHECK(tl->due_pos <= tl->ndue && tl->ndue <= tl->st.cap,
		 "schedule %u/%u of cap %u", tl->due_pos, tl->ndue, tl->st.cap);
	for (i = 0; i < tl->n; i++) {
		const struct tt_tl_layer *l = &tl->st.layers[i];
		struct mlayer *p = l->priv;

		if (i)
			FZ_CHECK(tl->st.layers[i - 1].id < l->id, "table unsorted at %u", i);
		FZ_CHECK(p >= ml && p < ml + nml && p->id == l->id,
			 "layer %u (id %u) lost its caller pointer", i, l->id);
		FZ_CHECK(tt_tl_find(tl, l->id) == (int)i, "id %u not found at %u",
			 l->id, i);
		FZ_CHECK(l->ahead <= TT_TL_AHEAD_MAX, "layer %u: k %u", i, l->ahead);
	}
	for (i = 0; i < tl->ndue; i++)
		FZ_CHECK(tt_tl_find(tl, tl->st.due[i].id) >= 0,
			 "schedule entry %u names layer %u, not in the table",
			 i, tl->st.due[i].id);
	for (i = 0; i < TT_TL_MISSES + 2; i++) {
		if (!tt_tl_miss_get(tl, i, &m))
			break;
		FZ_CHECK(m.kind == TT_TL_MISS_NEW || m.kind == TT_TL_MISS_PREDICT ||
			 m.kind == TT_TL_MISS_LATE, "miss %u kind %#x", i, m.kind);
	}
	FZ_CHECK(i <= TT_TL_MISSES, "%u misses kept", i);
	FZ_CHECK(tt_tl_signatures(tl) <= TT_TL_SIGS, "signatures");
	/* @order[fpos - 1] is the id of the layer at each forward position */
	for (i = 0; dyn_iter && tl->dynamic && i < tl->n; i++) {
		const struct tt_tl_layer *l = &tl->st.layers[i];

		if (l->fpos && l->fpos <= tl->cur_n)
			FZ_CHECK(tl->st.order[l->fpos - 1] == l->id,
				 "forward position %u holds id %#x, layer %u (id %u) is there",
				 l->fpos, tl->st.order[l->fpos - 1], i, l->id);
	}
	i = tt_tl_ahead_max(tl);
	FZ_CHECK(i >= 1 && i <= TT_TL_AHEAD_MAX, "ahead_max %u", i);
}

/* sched.c's dispatch: hand out every prefetch due by @now. */
static void drain(struct tt_tl *tl, u64 now)
{
	unsigned int id, k, idx;
	u64 next, bytes;

	for (k = 0; tt_tl_next_due(tl, now, &id, &next); k++) {
		FZ_CHECK(k < tl->st.cap + 1, "more prefetches due than the schedule holds");
		FZ_CHECK(tt_tl_find(tl, id) >= 0, "due prefetch of unknown layer %u", id);
	}
	for (k = 0; tt_tl_next_evict(tl, &idx, &bytes); k++) {
		FZ_CHECK(k < tl->st.cap + 1, "more delayed evictions than layers");
		FZ_CHECK(idx < tl->n, "delayed eviction of index %u of %u", idx, tl->n);
	}
}

/* A layer index: a known one, or a new id added (grown as sched.c). */
static int layer_idx(struct fz *f, struct tt_tl *tl)
{
	unsigned int id = fz_u8(f) & 1 ? fz_u8(f) : fz_u32(f);
	int idx = tt_tl_find(tl, id);

	if (idx >= 0)
		return idx;
	if (nml == FZ_MAX_LAYERS)
		return -1;
	if (tl->n >= tl->st.cap)
		grow(tl);
	ml[nml].id = id;
	ml[nml].evicting = 0;
	ml[nml].ordered = ml[nml].evicted = ml[nml].persist = 0;
	idx = tt_tl_add(tl, id, &ml[nml]);
	FZ_CHECK(idx >= 0, "add with room failed: %d", idx);
	nml++;
	return idx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	struct tt_tl tl;
	u64 now, bytes, iters = 0, b;
	unsigned int k;
	int idx, act;
	struct mlayer *p;

	nml = 0;
	dyn_iter = 0;
	now = fz_u64(&f);
	tt_tl_init(&tl, fz_pow2(&f, 12, 21), 1 + fz_u8(&f) % 4, fz_u64(&f),
		   1 + fz_u64(&f) % (1ULL << 40), 1 + fz_u64(&f) % (1ULL << 40));
	tt_tl_set_modes(&tl, fz_u8(&f));
	for (k = 0; k < 2000 && fz_more(&f); k++) {
		/* time moves on: mostly microseconds, sometimes far */
		switch (fz_u8(&f) % 4) {
		case 0:
			break;
		case 1:
			b = fz_u64(&f);
			now = now + b < now ? now : now + b;
			break;
		default:
			now += (u64)fz_u16(&f) * 1000;
			break;
		}
		switch (fz_u8(&f) % 12) {
		case 0:
			tt_tl_iter_begin(&tl, now);
			dyn_iter = tl.dynamic;
			iters++;
			for (idx = 0; idx < (int)tl.n; idx++) {
				p = priv_of(&tl, idx);
				p->evicting = 0;	/* rescued */
			}
			break;
		case 1:
		case 2:
		case 3:
		case 4: {
			int phase = fz_u8(&f) & 1, end = fz_u8(&f) & 1;

			idx = layer_idx(&f, &tl);
			if (idx < 0)
				break;
			p = priv_of(&tl, idx);
			bytes = 0;
			act = tt_tl_layer_event(&tl, idx, phase, end, now,
						!p->evicting, &bytes);
			if (act == TT_TL_ACT_EVICT) {
				FZ_CHECK(!p->evicting, "eviction ordered while one is out");
				p->evicting = 1;
				p->ordered = bytes;
				p->evicted = 0;
			} else if (act == TT_TL_ACT_FETCH && p->evicting) {
				b = fz_u64(&f);
				tt_tl_bwd_check(&tl, idx, p->evicted,
						b < p->evicted ? b : p->evicted);
			} else if (act == TT_TL_ACT_FORGET) {
				p->evicting = 0;
			}
			break;
		}
		case 5:
			idx = layer_idx(&f, &tl);
			if (idx < 0)
				break;
			p = priv_of(&tl, idx);
			bytes = fz_u64(&f) & ~(tl.page_size - 1);
			if (fz_u8(&f) & 1) {
				p->persist += bytes;
				tt_tl_saved(&tl, idx, bytes, 1);
			} else {
				tt_tl_saved(&tl, idx, bytes, 0);
			}
			break;
		case 6:
			idx = layer_idx(&f, &tl);
			if (idx < 0)
				break;
			p = priv_of(&tl, idx);
			b = fz_u64(&f);
			b = b < p->persist ? b : p->persist;
			p->persist -= b;
			tt_tl_unsaved(&tl, idx, b);
			break;
		case 7:		/* the evict worker's reports */
			if (!tl.n)
				break;
			idx = fz_u8(&f) % tl.n;
			p = priv_of(&tl, idx);
			if (!p->evicting)
				break;
			/* the executor's check before it starts (any answer) */
			(void)tt_tl_evict_expired(&tl, idx, now, p->ordered);
			tt_tl_evict_start(&tl, idx, now);
			b = fz_u64(&f);
			p->evicted = b < p->ordered ? b : p->ordered;
			tt_tl_evict_end(&tl, idx, now + fz_u16(&f), p->evicted);
			tt_tl_rate_sample(&tl, TT_TL_EVICT, p->evicted, fz_u64(&f));
			now += fz_u16(&f);
			break;
		case 8:		/* the prefetch worker's */
			if (!tl.n)
				break;
			idx = fz_u8(&f) % tl.n;
			p = priv_of(&tl, idx);
			if (!p->evicting)
				break;
			tt_tl_prefetch_start(&tl, idx, now);
			now += fz_u16(&f);
			if (fz_u8(&f) & 1)
				tt_tl_late_add(&tl, idx, fz_u64(&f));
			tt_tl_prefetch_end(&tl, idx, now);
			tt_tl_rate_sample(&tl, TT_TL_PREFETCH, p->evicted, fz_u64(&f));
			p->evicting = 0;
			break;
		case 9:
			tt_tl_set_modes(&tl, fz_u8(&f));
			dyn_iter = 0;
			break;
		case 10:
			tt_tl_set_rates(&tl, fz_u64(&f), fz_u64(&f));
			break;
		default:
			tt_tl_rate_sample(&tl, fz_u8(&f) & 1, fz_u64(&f), fz_u64(&f));
			break;
		}
		drain(&tl, now);
		check_tl(&tl);
		FZ_CHECK(tl.counts.iterations == iters, "%llu iterations counted, %llu begun",
			 tl.counts.iterations, iters);
	}
	free_storage(&tl.st);
	return 0;
}
