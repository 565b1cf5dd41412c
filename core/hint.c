// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * hint.c - the set of hinted intervals (see hint.h). Linear in the number
 * of intervals per change: hints are rare, sets small.
 */
#include "heapsort.h"
#include "hint.h"

/* Index of the first interval whose end is after @at. */
static unsigned int first_after(const struct tt_hint_set *h,
				unsigned long long at)
{
	unsigned int lo = 0, hi = h->n;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (h->iv[mid].end <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void move_up(struct tt_hint_set *h, unsigned int from)
{
	unsigned int i;

	for (i = h->n; i > from; i--)
		h->iv[i] = h->iv[i - 1];
	h->n++;
}

static void remove_at(struct tt_hint_set *h, unsigned int at)
{
	unsigned int i;

	for (i = at; i + 1 < h->n; i++)
		h->iv[i] = h->iv[i + 1];
	h->n--;
}

void tt_hint_clear(struct tt_hint_set *h, unsigned long long start,
		   unsigned long long end)
{
	unsigned int i = first_after(h, start);

	while (i < h->n && h->iv[i].start < end) {
		struct tt_hint_iv *v = &h->iv[i];

		if (v->start < start && v->end > end) {
			/* straddles: keep both sides */
			move_up(h, i + 1);
			h->iv[i + 1] = *v;
			h->iv[i + 1].start = end;
			v->end = start;
			return;
		}
		if (v->start < start) {
			v->end = start;
			i++;
			continue;
		}
		if (v->end > end) {
			v->start = end;
			return;
		}
		remove_at(h, i);
	}
}

void tt_hint_set(struct tt_hint_set *h, unsigned long long start,
		 unsigned long long end, unsigned int flags)
{
	unsigned int i;

	tt_hint_clear(h, start, end);
	i = first_after(h, start);
	move_up(h, i);
	h->iv[i].start = start;
	h->iv[i].end = end;
	h->iv[i].flags = flags;
}

unsigned long long tt_hint_cut(const struct tt_hint_set *h,
			       unsigned long long start, unsigned long long end,
			       unsigned long long *left,
			       unsigned long long batch,
			       void (*emit)(void *arg, unsigned long long a,
					    unsigned long long b),
			       void *arg)
{
	unsigned long long from = start, a, b, to, n = 0;

	while (*left && from < end) {
		const struct tt_hint_iv *iv = tt_hint_next(h, from, end);

		to = iv ? (iv->start > from ? iv->start : from) : end;
		if (to - from > *left)
			to = from + *left;
		*left -= to - from;
		for (a = from; a < to; a = b, n++) {
			/* up to the next multiple of @batch (absolute) */
			unsigned long long room = batch - a % batch;

			b = a + (to - a < room ? to - a : room);
			emit(arg, a, b);
		}
		if (!iv)
			break;
		if (iv->end > from)
			from = iv->end;
	}
	return n;
}

void tt_chunk_emit(void *arg, unsigned long long a, unsigned long long b)
{
	struct tt_chunk_cut *x = arg;

	if (x->c && x->n < x->cap) {
		x->c[x->n].start = a;
		x->c[x->n].end = b;
		x->c[x->n].range_id = x->range_id;
		x->c[x->n].moved = 0;
		x->c[x->n].born = 0;
		x->c[x->n].landed = 0;
	}
	x->n++;
}

static int chunk_before(const void *a, const void *b, const void *ctx)
{
	(void)ctx;
	return ((const struct tt_chunk *)a)->start <
	       ((const struct tt_chunk *)b)->start;
}

unsigned int tt_chunk_merge(struct tt_chunk *c, unsigned int n,
			    unsigned long long batch)
{
	unsigned int i, out = 0;

	if (n < 2)
		return n;
	tt_heapsort(c, n, sizeof(*c), chunk_before, (void *)0);	/* by start */
	/*
	 * One pass: c[out] is the chunk being filled; a touching chunk's
	 * bytes move into it up to @batch, the rest starts the next one. The
	 * output never overtakes the input: each input chunk yields at most
	 * one output chunk beyond what the earlier ones did.
	 */
	for (i = 1; i < n; i++) {
		struct tt_chunk *o = &c[out], in = c[i];

		if (in.start == o->end) {
			/* never across a multiple of @batch (absolute) */
			unsigned long long room = o->end % batch ?
						  batch - o->end % batch : 0;
			unsigned long long take = in.end - in.start;

			if (take > room)
				take = room;
			if (take) {
				o->end += take;
				if (o->range_id != in.range_id)
					o->range_id = 0;
				in.start += take;
			}
			if (in.start == in.end)
				continue;
		}
		c[++out] = in;
	}
	return out + 1;
}

unsigned long long tt_hint_bytes(const struct tt_hint_set *h,
				 unsigned int flags)
{
	unsigned long long sum = 0;
	unsigned int i;

	for (i = 0; i < h->n; i++)
		if (h->iv[i].flags & flags)
			sum += h->iv[i].end - h->iv[i].start;
	return sum;
}

const struct tt_hint_iv *tt_hint_next(const struct tt_hint_set *h,
				      unsigned long long start,
				      unsigned long long end)
{
	unsigned int i = first_after(h, start);

	if (i < h->n && h->iv[i].start < end)
		return &h->iv[i];
	return (void *)0;
}

static int iv_before(const void *a, const void *b, const void *ctx)
{
	(void)ctx;
	return ((const struct tt_hint_iv *)a)->start <
	       ((const struct tt_hint_iv *)b)->start;
}

unsigned int tt_hint_gaps(struct tt_hint_iv *iv, unsigned int n,
			  unsigned long long start, unsigned long long end,
			  struct tt_hint_iv *out)
{
	unsigned long long from = start;
	unsigned int i, k = 0;

	if (n > 1)
		tt_heapsort(iv, n, sizeof(*iv), iv_before, (void *)0);
	for (i = 0; i < n && from < end; i++) {
		if (iv[i].end <= from)
			continue;
		if (iv[i].start >= end)
			break;
		if (iv[i].start > from) {
			out[k].start = from;
			out[k].end = iv[i].start;
			out[k].flags = 0;
			k++;
		}
		from = iv[i].end;
	}
	if (from < end) {
		out[k].start = from;
		out[k].end = end;
		out[k].flags = 0;
		k++;
	}
	return k;
}

unsigned int tt_hint_meet(const struct tt_hint_iv *a, unsigned int n,
			  const struct tt_hint_set *h, unsigned int with,
			  unsigned int without, struct tt_hint_iv *out)
{
	unsigned int i = 0, j = 0, k = 0;

	while (i < n && j < h->n) {
		const struct tt_hint_iv *v = &h->iv[j];
		unsigned long long s = a[i].start > v->start ? a[i].start :
				       v->start;
		unsigned long long e = a[i].end < v->end ? a[i].end : v->end;

		if (s < e && (v->flags & with) && !(v->flags & without)) {
			out[k].start = s;
			out[k].end = e;
			out[k].flags = 0;
			k++;
		}
		/* the one that ends first is done */
		if (a[i].end < v->end)
			i++;
		else
			j++;
	}
	return k;
}
