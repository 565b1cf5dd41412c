// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fuzz_heat.c - libFuzzer harness of core/heat.c, the fast-tier budget's
 * decisions: the heat of saved ranges (tt_heat_score/adjust), the victim
 * choice (tt_heat_coldest, called as kmod/sched.c does until no victim is
 * left), the fair shares of a global budget (tt_heat_share) and the cut of
 * a victim's pages (tt_heat_cut, over a hint set built by core/hint.c).
 *
 * Each input is a sequence of calls on one item array and one hint set.
 * Checks after each: every heat within the bounds its weights allow, the
 * weights within TT_HEAT_W_MIN..TT_HEAT_W_MAX and at most
 * TT_HEAT_STEPS_MAX steps, each victim the coldest eligible item by a
 * brute-force scan (ties as heat.h says) and none left when it says -1,
 * the shares max-min fair and within the total, and the cut pieces equal
 * to an independent reference cut (skip, left and batch as heat.h says).
 */
#include <limits.h>
#include <linux/tiertrain.h>

#include "../../heat.h"
#include "fuzz.h"

#define FZ_MAX_ITEMS	64
#define FZ_MAX_PIECES	(1U << 16)

struct piece {
	u64 a, b;
};

struct pieces {
	struct piece *p;
	unsigned int n;
};

static struct pieces got, ref;

static void emit(void *arg, unsigned long long a, unsigned long long b)
{
	struct pieces *x = arg;

	FZ_CHECK(x->n < FZ_MAX_PIECES, "more pieces than the reference has");
	x->p[x->n].a = a;
	x->p[x->n].b = b;
	x->n++;
}

static void check_heat(const struct tt_heat_item *it, unsigned int n,
		       const struct tt_heat_w *w)
{
	long long lo = -(((long long)w->r + w->s + w->l) * TT_HEAT_ONE) / TT_HEAT_ONE;
	long long hi = (long long)w->f;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (it[i].in_use) {
			FZ_CHECK(it[i].heat == TT_HEAT_IN_USE, "item %u in use, heat %lld",
				 i, it[i].heat);
			continue;
		}
		FZ_CHECK(it[i].heat >= lo && it[i].heat <= hi,
			 "item %u heat %lld outside [%lld, %lld]", i, it[i].heat,
			 lo, hi);
	}
}

static void check_w(const struct tt_heat_w *w)
{
	const unsigned int *v = &w->f;
	int k;

	for (k = 0; k < 4; k++)
		FZ_CHECK(v[k] >= TT_HEAT_W_MIN && v[k] <= TT_HEAT_W_MAX,
			 "weight %d = %u out of bounds", k, v[k]);
}

/* The victims one after the other, as tt_sched_victims() takes them. */
static void op_victims(struct fz *f, struct tt_heat_item *it, unsigned int n)
{
	long long below = fz_u8(f) & 1 ? LLONG_MAX : (long long)fz_u64(f);
	long long last = LLONG_MIN;
	unsigned int i, picks = 0;
	int j, b;

	unsigned int heap[FZ_MAX_ITEMS], m;
	int hj;

	for (i = 0; i < n; i++)
		it[i].done = fz_u8(f) % 4 == 0;
	/* sched.c's way: a heap built once, popped; the scan is the model */
	m = tt_heat_heap(it, n, below, heap);
	FZ_CHECK(m <= n, "a heap of %u for %u items", m, n);
	for (;;) {
		/* another victim taken meanwhile, now and then */
		if (fz_u8(f) % 8 == 0) {
			i = fz_u8(f) % (n ? n : 1);
			if (i < n)
				it[i].done = 1;
		}
		j = tt_heat_coldest(it, n, below);
		hj = tt_heat_pop(it, heap, &m);
		FZ_CHECK(hj == j, "the heap gives %d, the scan %d", hj, j);
		b = -1;
		for (i = 0; i < n; i++) {
			if (it[i].done || it[i].in_use || it[i].heat >= below)
				continue;
			if (b < 0 || it[i].heat < it[b].heat ||
			    (it[i].heat == it[b].heat && it[i].dist > it[b].dist))
				b = (int)i;
		}
		FZ_CHECK(j == b, "victim %d, the coldest is %d (heat %lld vs %lld)",
			 j, b, j >= 0 && j < (int)n ? it[j].heat : 0,
			 b >= 0 ? it[b].heat : 0);
		if (j < 0)
			break;
		FZ_CHECK(it[j].heat >= last, "victims out of heat order");
		last = it[j].heat;
		it[j].done = 1;
		FZ_CHECK(++picks <= n, "more victims than items");
	}
}

static void op_share(struct fz *f)
{
	unsigned int n = fz_u8(f) % (FZ_MAX_ITEMS + 1), i, j, unsat = 0;
	u64 *demand = fz_alloc(n, sizeof(u64)), *share = fz_alloc(n, sizeof(u64));
	u64 total = fz_u64(f), top = 0;
	fz_u128 sum = 0;

	for (i = 0; i < n; i++)
		demand[i] = fz_u8(f) % 4 ? fz_u64(f) : 0;
	tt_heat_share(demand, n, total, share);
	for (i = 0; i < n; i++) {
		sum += share[i];
		FZ_CHECK(share[i] <= demand[i], "session %u gets %llu > demand %llu",
			 i, share[i], demand[i]);
		if (share[i] < demand[i]) {
			unsat++;
			top = share[i] > top ? share[i] : top;
		}
	}
	FZ_CHECK(sum <= total, "shares sum to more than %llu", total);
	for (i = 0; i < n; i++) {
		if (share[i] == demand[i])
			continue;
		/* an unsatisfied session gets at least what any other gets */
		for (j = 0; j < n; j++)
			FZ_CHECK(share[i] >= share[j], "session %u gets %llu < session %u's %llu",
				 i, share[i], j, share[j]);
	}
	if (unsat)		/* only the division's remainder is left over */
		FZ_CHECK(total - sum < n, "%llu of %llu left with %u unsatisfied",
			 (u64)(total - sum), total, unsat);
	free(demand);
	free(share);
}

/* The pieces of [@start, @end) heat.h says tt_heat_cut() walks. */
static fz_u128 ref_cut(const struct tt_hint_set *h, u64 start, u64 end,
		       unsigned int want, unsigned int avoid, u64 *skip,
		       u64 *left, u64 batch, int store)
{
	fz_u128 count = 0;
	u64 from = start;
	unsigned int i = 0;

	while (*left && from < end) {
		u64 a, b, d;
		int ok;

		while (i < h->n && h->iv[i].end <= from)
			i++;
		if (i < h->n && h->iv[i].start <= from) {	/* inside */
			a = from;
			b = h->iv[i].end < end ? h->iv[i].end : end;
			ok = want && (h->iv[i].flags & want) &&
			     !(h->iv[i].flags & avoid);
		} else {					/* a gap */
			a = from;
			b = i < h->n && h->iv[i].start < end ? h->iv[i].start : end;
			ok = !want;
		}
		from = b;
		if (!ok)
			continue;
		d = b - a < *skip ? b - a : *skip;
		*skip -= d;
		a += d;
		d = b - a < *left ? b - a : *left;
		*left -= d;
		b = a + d;
		if (!d)
			continue;
		count += (b - 1) / batch - a / batch + 1;
		while (store && a < b) {
			u64 room = batch - a % batch;
			u64 e = b - a < room ? b : a + room;

			if (ref.n < FZ_MAX_PIECES) {
				ref.p[ref.n].a = a;
				ref.p[ref.n].b = e;
				ref.n++;
			}
			a = e;
		}
	}
	return count;
}

static void op_cut(struct fz *f, const struct tt_hint_set *h)
{
	u64 start = fz_u64(f) & ~(FZ_PAGE - 1), end = fz_u64(f) & ~(FZ_PAGE - 1);
	unsigned int sel = fz_u8(f) % 3, want, avoid, i, n;
	u64 skip0 = fz_u64(f), left0 = fz_u64(f), batch, skip, left, rskip, rleft;
	fz_u128 count;

	/* the victim path's two kinds: outside hints, or archived not pinned */
	want = sel == 0 ? 0 : sel == 1 ? TT_HINT_ARCHIVE : fz_u8(f) & 7;
	avoid = sel == 1 ? TT_HINT_PIN_FAST : fz_u8(f) & 7;
	batch = fz_u8(f) % 2 ? FZ_HUGE : fz_u64(f);
	if (!batch)
		batch = 1;
	rskip = skip0;
	rleft = left0;
	count = ref_cut(h, start, end, want, avoid, &rskip, &rleft, batch, 0);
	if (count > FZ_MAX_PIECES)
		return;
	ref.n = 0;
	rskip = skip0;
	rleft = left0;
	ref_cut(h, start, end, want, avoid, &rskip, &rleft, batch, 1);
	got.n = 0;
	skip = skip0;
	left = left0;
	n = tt_heat_cut(h, start, end, want, avoid, &skip, &left, batch, emit, &got);
	FZ_CHECK(n == got.n && n == ref.n, "%u pieces returned, %u emitted, %u in the reference",
		 n, got.n, ref.n);
	FZ_CHECK(skip == rskip && left == rleft, "skip %llu left %llu, should %llu %llu",
		 skip, left, rskip, rleft);
	for (i = 0; i < n; i++)
		FZ_CHECK(got.p[i].a == ref.p[i].a && got.p[i].b == ref.p[i].b,
			 "piece %u [%#llx, %#llx), should [%#llx, %#llx)", i,
			 got.p[i].a, got.p[i].b, ref.p[i].a, ref.p[i].b);
}

static void op_hint(struct fz *f, struct tt_hint_set *h)
{
	u64 a = fz_u64(f) & ~(FZ_PAGE - 1), len = fz_u64(f) & ~(FZ_PAGE - 1);
	unsigned int fl = fz_u8(f) % 3;
	struct tt_hint_iv *iv;

	if (!len || a + len < a || h->n >= 64)
		return;
	iv = fz_alloc(h->n + 2, sizeof(*iv));
	if (h->n)
		memcpy(iv, h->iv, h->n * sizeof(*iv));
	free(h->iv);
	h->iv = iv;
	h->cap = h->n + 2;
	if (fl)
		tt_hint_set(h, a, a + len, fl == 1 ? TT_HINT_PIN_FAST : TT_HINT_ARCHIVE);
	else
		tt_hint_clear(h, a, a + len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	unsigned int n = fz_u8(&f) % (FZ_MAX_ITEMS + 1), i, k, steps;
	struct tt_heat_item *it = fz_alloc(n, sizeof(*it)), *copy;
	struct tt_hint_set h = { 0 };
	struct tt_heat_w w, w2;

	if (!got.p) {
		got.p = fz_alloc(FZ_MAX_PIECES, sizeof(*got.p));
		ref.p = fz_alloc(FZ_MAX_PIECES, sizeof(*ref.p));
	}
	for (i = 0; i < n; i++) {
		it[i].bytes = fz_u64(&f);
		it[i].dist = fz_u64(&f);
		it[i].uses = fz_u8(&f) % 2 ? fz_u64(&f) : fz_u8(&f);
		it[i].life = fz_u64(&f);
		it[i].in_use = fz_u8(&f) % 8 == 0;
		it[i].done = 0;
	}
	tt_heat_w_init(&w);
	tt_heat_score(it, n, &w);
	check_heat(it, n, &w);
	for (k = 0; k < 64 && fz_more(&f); k++) {
		switch (fz_u8(&f) % 6) {
		case 0:		/* weights anywhere in their bounds */
			w.f = TT_HEAT_W_MIN + fz_u16(&f) % (TT_HEAT_W_MAX - TT_HEAT_W_MIN + 1);
			w.r = TT_HEAT_W_MIN + fz_u16(&f) % (TT_HEAT_W_MAX - TT_HEAT_W_MIN + 1);
			w.s = TT_HEAT_W_MIN + fz_u16(&f) % (TT_HEAT_W_MAX - TT_HEAT_W_MIN + 1);
			w.l = TT_HEAT_W_MIN + fz_u16(&f) % (TT_HEAT_W_MAX - TT_HEAT_W_MIN + 1);
			tt_heat_score(it, n, &w);
			check_heat(it, n, &w);
			break;
		case 1: {
			u64 budget = fz_u64(&f);

			steps = tt_heat_adjust(&w, it, n, budget);
			FZ_CHECK(steps <= TT_HEAT_STEPS_MAX, "%u steps", steps);
			check_w(&w);
			check_heat(it, n, &w);
			/* left scored with the final weights */
			copy = fz_alloc(n, sizeof(*copy));
			memcpy(copy, it, n * sizeof(*copy));
			w2 = w;
			tt_heat_score(copy, n, &w2);
			for (i = 0; i < n; i++)
				FZ_CHECK(copy[i].heat == it[i].heat,
					 "item %u not scored with the final weights", i);
			free(copy);
			break;
		}
		case 2:
			op_victims(&f, it, n);
			break;
		case 3:
			op_share(&f);
			break;
		case 4:
			op_hint(&f, &h);
			break;
		default:
			op_cut(&f, &h);
			break;
		}
	}
	free(h.iv);
	free(it);
	return 0;
}
