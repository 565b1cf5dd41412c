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
