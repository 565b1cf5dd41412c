/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * hint.h - the ranges a session gave TT_HINT_PIN_FAST or TT_HINT_ARCHIVE
 * (TT_IOC_HINT): a sorted set of disjoint intervals with their hint bits.
 *
 * Pure C with no includes, like policy.c: compiled into the module and
 * into the cmocka unit tests. The caller owns the array and grows it
 * before each change (see the capacity each function needs).
 */
#ifndef TT_HINT_H
#define TT_HINT_H

/*
 * struct tt_hint_iv - one hinted interval
 * @start: first byte (page aligned by the caller).
 * @end:   end (exclusive), > @start.
 * @flags: TT_HINT_PIN_FAST or TT_HINT_ARCHIVE.
 */
struct tt_hint_iv {
	unsigned long long start;
	unsigned long long end;
	unsigned int flags;
};

/*
 * struct tt_hint_set - the intervals, sorted by @start, disjoint
 * @iv:  the array (owned by the caller).
 * @n:   intervals in it.
 * @cap: its size.
 */
struct tt_hint_set {
	struct tt_hint_iv *iv;
	unsigned int n;
	unsigned int cap;
};

/*
 * tt_hint_clear() - no interval covers [@start, @end) any more; one that
 * straddles it is cut in two. Needs @h->cap >= @h->n + 1.
 */
void tt_hint_clear(struct tt_hint_set *h, unsigned long long start,
		   unsigned long long end);

/*
 * tt_hint_set() - [@start, @end) gets @flags, replacing what covered it.
 * Needs @h->cap >= @h->n + 2.
 */
void tt_hint_set(struct tt_hint_set *h, unsigned long long start,
		 unsigned long long end, unsigned int flags);

/*
 * tt_hint_next() - the first interval that overlaps [@start, @end), or
 * (void *)0.
 */
const struct tt_hint_iv *tt_hint_next(const struct tt_hint_set *h,
				      unsigned long long start,
				      unsigned long long end);

/*
 * tt_hint_cut() - walk the pieces of [@start, @end) outside every interval
 * of @h, in address order, at most *@left bytes in all (*@left goes down by
 * what is walked), each cut at the multiples of @batch (> 0) into pieces
 * of at most @batch bytes, so that no piece crosses a multiple of @batch
 * (with a batch of whole huge pages, no huge page is cut in two:
 * Documentation/mover.md): @emit(@arg, a, b) for each piece [a, b).
 * Returns the number of pieces: at most *@left / @batch + 2 * (k + 1), k
 * being the intervals of @h that overlap [@start, @end), so the caller
 * bounds the work by bounding *@left.
 */
unsigned long long tt_hint_cut(const struct tt_hint_set *h,
			       unsigned long long start, unsigned long long end,
			       unsigned long long *left,
			       unsigned long long batch,
			       void (*emit)(void *arg, unsigned long long a,
					    unsigned long long b),
			       void *arg);

/*
 * TT_HINT_F_OUT: an internal flag of an interval hinted TT_HINT_ARCHIVE:
 * its pages outside saved tensors ("plain" pages) were already sent to the
 * slow tier by a victim round; the next rounds leave them alone. A new
 * hint on the range (TT_IOC_HINT) clears it. Never a uapi TT_HINT_* bit.
 */
#define TT_HINT_F_OUT	0x80000000U	/* bit 31 */

/*
 * tt_hint_gaps() - the pieces of [@start, @end) outside the @n intervals
 * @iv (any order, may overlap, @flags ignored; sorted by start in place),
 * in address order, written to @out (room for @n + 1 entries, not
 * overlapping @iv), flags 0. Returns how many (at most @n + 1).
 * O(n log n), no allocation.
 */
unsigned int tt_hint_gaps(struct tt_hint_iv *iv, unsigned int n,
			  unsigned long long start, unsigned long long end,
			  struct tt_hint_iv *out);

/*
 * tt_hint_meet() - the intersections of the @n sorted disjoint pieces @a
 * with the intervals of @h whose flags include @with and none of
 * @without, in address order, written to @out (room for @n + @h->n
 * entries), flags 0. Returns how many. O(@n + @h->n).
 */
unsigned int tt_hint_meet(const struct tt_hint_iv *a, unsigned int n,
			  const struct tt_hint_set *h, unsigned int with,
			  unsigned int without, struct tt_hint_iv *out);

/* tt_hint_bytes() - bytes of the intervals whose flags include @flags. */
unsigned long long tt_hint_bytes(const struct tt_hint_set *h,
				 unsigned int flags);

/*
 * struct tt_chunk - a piece of an eviction (at most one migration batch)
 * @start:    first address.
 * @end:      end address.
 * @range_id: the saved range it was cut from.
 * @moved:    bytes the eviction moved to the slow node.
 * @born:     bytes the eviction found on a slow node already (a tensor
 *            allocated there while the fast node was full, or left there
 *            by an earlier episode): the prefetch fetches the chunk for
 *            them too, so the backward pass reads them from the fast
 *            tier; not evicted bytes (not in the rates, on time or late).
 * @landed:   a mover that completed late may have moved pages of the chunk
 *            to a slow node after the eviction counted it
 *            (tt_exec_landed()): the prefetch fetches it whatever @moved
 *            says. Written with the executor's lock held, read by the
 *            step owning the episode without it (a once-only store and
 *            load).
 */
struct tt_chunk {
	unsigned long long start;
	unsigned long long end;
	unsigned long long range_id;
	unsigned long long moved;
	unsigned long long born;
	unsigned int landed;
};

/*
 * struct tt_chunk_cut - tt_chunk_emit()'s state: the chunks of a layer's
 * eviction as tt_hint_cut() walks its ranges
 * @c:        the chunk array, or (void *)0 to count only.
 * @cap:      entries @c has room for; nothing is written at @c[@cap] or
 *            beyond.
 * @n:        chunks so far, counted past @cap too (then @n > @cap says
 *            that chunks were left out).
 * @range_id: the range being walked (set by the caller per range).
 */
struct tt_chunk_cut {
	struct tt_chunk *c;
	unsigned long long cap;
	unsigned long long n;
	unsigned long long range_id;
};

/*
 * tt_hint_cut()'s @emit for a struct tt_chunk_cut @arg: the piece goes to
 * @c[@n] when @c is set and @n < @cap; @n counts it in any case.
 */
void tt_chunk_emit(void *arg, unsigned long long a, unsigned long long b);

/*
 * tt_chunk_merge() - contiguous batching (after DeepTM's aggregation):
 * sort the @n chunks by address, join those that touch (one's end is the
 * next one's start) into runs and cut the runs again at the multiples of
 * @batch (as tt_hint_cut()), in place. A chunk made of several ranges gets
 * range_id 0. Returns the new count (<= @n). O(n log n), no allocation.
 */
unsigned int tt_chunk_merge(struct tt_chunk *c, unsigned int n,
			    unsigned long long batch);

#endif /* TT_HINT_H */
