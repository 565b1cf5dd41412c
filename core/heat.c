// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * heat.c - the fast-tier budget's decisions (see heat.h).
 *
 * The heat follows DeepTM (TPDS 2024, "tensor heat"):
 *   H = w_f f' - w_r r' - w_s s' - w_l l'
 * over the features min-max normalised to 0..1 (here 0..TT_HEAT_ONE), all
 * weights starting at 1, the hot threshold T_h = 0, and Algorithm 1
 * moving one weight by 2 % a step until the hot set is within 0.9..1.1
 * times the budget (w_s under high pressure, live >= 2.5 x budget; w_r
 * otherwise). Where we differ, and why:
 *  - the lifetime enters with a minus sign: the paper's formula has
 *    +w_l l, its text says long-lived tensors belong on the slow tier,
 *    which is also what a training step shows (the first layers' tensors
 *    live longest and are needed last);
 *  - the weights are bounded (1/64..64) and one adjustment takes at most
 *    64 steps: with integer features the band may be unreachable (a hot
 *    set can jump over it), and the paper's loop would then not end;
 *  - the heat only ranks victims: nothing moves because a range is cold,
 *    only because the budget needs room (DeepTM places every tensor by
 *    it);
 *  - a range whose layer's backward pass is running is the hottest of all
 *    (TT_HEAT_IN_USE), whatever its features: it is being read.
 */
#include "heat.h"
#include "heapsort.h"

/* The smallest and largest value of each feature over the items. */
struct tt_heat_span {
	unsigned long long lo[4];
	unsigned long long hi[4];
};

static unsigned long long feature(const struct tt_heat_item *it, int k)
{
	switch (k) {
	case 0:
		return it->uses;
	case 1:
		return it->dist;
	case 2:
		return it->bytes;
	default:
		return it->life;
	}
}

/* @x min-max normalised into 0..TT_HEAT_ONE, without 128-bit arithmetic. */
static unsigned long long norm(unsigned long long x, unsigned long long lo,
			       unsigned long long hi)
{
	unsigned long long d, span;

	if (hi <= lo)
		return 0;
	d = x - lo;
	span = hi - lo;
	while (span > (1ULL << 50)) {
		d >>= 1;
		span >>= 1;
	}
	return d * TT_HEAT_ONE / span;
}

void tt_heat_w_init(struct tt_heat_w *w)
{
	w->f = TT_HEAT_ONE;
	w->r = TT_HEAT_ONE;
	w->s = TT_HEAT_ONE;
	w->l = TT_HEAT_ONE;
}

void tt_heat_score(struct tt_heat_item *it, unsigned int n,
		   const struct tt_heat_w *w)
{
	struct tt_heat_span sp = { { 0 }, { 0 } };
	unsigned int i, seen = 0;
	int k;

	for (i = 0; i < n; i++) {
		if (it[i].in_use)
			continue;
		for (k = 0; k < 4; k++) {
			unsigned long long v = feature(&it[i], k);

			if (!seen || v < sp.lo[k])
				sp.lo[k] = v;
			if (!seen || v > sp.hi[k])
				sp.hi[k] = v;
		}
		seen = 1;
	}
	for (i = 0; i < n; i++) {
		long long h;

		if (it[i].in_use) {
			it[i].heat = TT_HEAT_IN_USE;
			continue;
		}
		h = (long long)w->f * (long long)norm(it[i].uses, sp.lo[0], sp.hi[0]);
		h -= (long long)w->r * (long long)norm(it[i].dist, sp.lo[1], sp.hi[1]);
		h -= (long long)w->s * (long long)norm(it[i].bytes, sp.lo[2], sp.hi[2]);
		h -= (long long)w->l * (long long)norm(it[i].life, sp.lo[3], sp.hi[3]);
		it[i].heat = h / (long long)TT_HEAT_ONE;
	}
}

unsigned long long tt_heat_hot_bytes(const struct tt_heat_item *it,
				     unsigned int n)
{
	unsigned long long sum = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (it[i].heat >= 0)
			sum += it[i].bytes;
	return sum;
}

static unsigned long long tt_heat_live(const struct tt_heat_item *it,
				       unsigned int n)
{
	unsigned long long live = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		live += it[i].bytes;
	return live;
}

int tt_heat_adjust_step(struct tt_heat_w *w, struct tt_heat_item *it,
			unsigned int n, unsigned long long budget,
			unsigned long long live)
{
	unsigned long long hot, hi, lo;
	unsigned int *wp, delta, nw;

	if (!budget)
		return 0;
	hi = budget + budget / 10;
	lo = budget - budget / 10;
	hot = tt_heat_hot_bytes(it, n);
	if (hot < hi && hot > lo)
		return 0;
	/* high pressure: live >= 2.5 x budget */
	wp = live >= 2 * budget + budget / 2 ? &w->s : &w->r;
	delta = *wp * TT_HEAT_STEP_PCT / 100;
	if (!delta)
		delta = 1;
	if (hot >= hi)		/* too many hot: cool them down */
		nw = *wp + delta > TT_HEAT_W_MAX ? TT_HEAT_W_MAX : *wp + delta;
	else
		nw = *wp < TT_HEAT_W_MIN + delta ? TT_HEAT_W_MIN : *wp - delta;
	if (nw == *wp)
		return 0;	/* at its bound */
	*wp = nw;
	tt_heat_score(it, n, w);
	return 1;
}

unsigned int tt_heat_adjust(struct tt_heat_w *w, struct tt_heat_item *it,
			    unsigned int n, unsigned long long budget)
{
	unsigned long long live = tt_heat_live(it, n);
	unsigned int steps = 0;

	tt_heat_score(it, n, w);
	while (steps < TT_HEAT_STEPS_MAX &&
	       tt_heat_adjust_step(w, it, n, budget, live))
		steps++;
	return steps;
}

int tt_heat_coldest(const struct tt_heat_item *it, unsigned int n,
		    long long below)
{
	unsigned int i;
	int best = -1;

	for (i = 0; i < n; i++) {
		if (it[i].done || it[i].in_use || it[i].heat >= below)
			continue;
		if (best < 0 || it[i].heat < it[best].heat ||
		    (it[i].heat == it[best].heat && it[i].dist > it[best].dist))
			best = (int)i;
	}
	return best;
}

/* Is item @a picked before item @b? tt_heat_coldest()'s order. */
static int tt_heat_colder(const struct tt_heat_item *it, unsigned int a,
			  unsigned int b)
{
	if (it[a].heat != it[b].heat)
		return it[a].heat < it[b].heat;
	if (it[a].dist != it[b].dist)
		return it[a].dist > it[b].dist;
	return a < b;
}

/* heapsort.h's max-heap order: the first pick at the top. */
static int tt_heat_heap_before(const void *a, const void *b, const void *ctx)
{
	return tt_heat_colder(ctx, *(const unsigned int *)b,
			      *(const unsigned int *)a);
}

unsigned int tt_heat_heap(const struct tt_heat_item *it, unsigned int n,
			  long long below, unsigned int *heap)
{
	unsigned int i, m = 0;

	for (i = 0; i < n; i++)
		if (!it[i].done && !it[i].in_use && it[i].heat < below)
			heap[m++] = i;
	for (i = m / 2; i-- > 0;)
		tt_heap_sift((char *)heap, sizeof(*heap), i, m,
			     tt_heat_heap_before, it);
	return m;
}

int tt_heat_pop(const struct tt_heat_item *it, unsigned int *heap,
		unsigned int *m)
{
	unsigned int top;

	while (*m) {
		top = heap[0];
		heap[0] = heap[--*m];
		tt_heap_sift((char *)heap, sizeof(*heap), 0, *m,
			     tt_heat_heap_before, it);
		if (!it[top].done)
			return (int)top;
	}
	return -1;
}

static int tt_heat_u64_before(const void *a, const void *b, const void *ctx)
{
	(void)ctx;
	return *(const unsigned long long *)a < *(const unsigned long long *)b;
}

void tt_heat_share(const unsigned long long *demand, unsigned int n,
		   unsigned long long total, unsigned long long *share)
{
	unsigned long long left = total, level = ~0ULL, d;
	unsigned int i, k = 0;

	/* the demands (capped by the total) in increasing order, in @share */
	for (i = 0; i < n; i++) {
		d = demand[i] < total ? demand[i] : total;
		if (d)
			share[k++] = d;
	}
	tt_heapsort(share, k, sizeof(*share), tt_heat_u64_before, (void *)0);
	/*
	 * Water-filling: settle the smallest demand while it fits an equal
	 * split of what is left (the split only grows as they settle); the
	 * first that does not fit sets the level of it and all larger ones.
	 */
	for (i = 0; i < k; i++) {
		if (share[i] > left / (k - i)) {
			level = left / (k - i);
			break;
		}
		left -= share[i];
	}
	for (i = 0; i < n; i++) {
		d = demand[i] < total ? demand[i] : total;
		share[i] = d < level ? d : level;
	}
}

/*
 * Pass over the first *@skip bytes of [a, b), then walk at most *@left of
 * the rest in pieces cut at the multiples of @batch.
 */
static unsigned int walk(unsigned long long a, unsigned long long b,
			 unsigned long long *skip, unsigned long long *left,
			 unsigned long long batch,
			 void (*emit)(void *arg, unsigned long long a,
				      unsigned long long b),
			 void *arg)
{
	unsigned long long d = b - a, to, e;
	unsigned int n = 0;

	if (*skip) {
		if (d > *skip)
			d = *skip;
		*skip -= d;
		a += d;
	}
	to = b - a > *left ? a + *left : b;
	*left -= to - a;
	for (; a < to; a = e, n++) {
		unsigned long long room = batch - a % batch;

		e = a + (to - a < room ? to - a : room);
		emit(arg, a, e);
	}
	return n;
}

unsigned int tt_heat_cut(const struct tt_hint_set *h,
			 unsigned long long start, unsigned long long end,
			 unsigned int want, unsigned int avoid,
			 unsigned long long *skip, unsigned long long *left,
			 unsigned long long batch,
			 void (*emit)(void *arg, unsigned long long a,
				      unsigned long long b),
			 void *arg)
{
	unsigned long long from = start, a, b;
	unsigned int n = 0;

	while (*left && from < end) {
		const struct tt_hint_iv *iv = tt_hint_next(h, from, end);

		if (!want) {
			/* [from, next interval) is outside every one */
			b = iv ? (iv->start > from ? iv->start : from) : end;
			if (b > from)
				n += walk(from, b, skip, left, batch, emit, arg);
			if (!iv)
				break;
			from = iv->end;
			continue;
		}
		if (!iv)
			break;
		a = iv->start > from ? iv->start : from;
		b = iv->end < end ? iv->end : end;
		if ((iv->flags & want) && !(iv->flags & avoid))
			n += walk(a, b, skip, left, batch, emit, arg);
		from = b;
	}
	return n;
}
