// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fuzz_hint.c - libFuzzer harness of core/hint.c: the hinted-interval set
 * (tt_hint_set/clear/next/bytes) and the eviction's chunk cutting as
 * kmod/sched.c drives it (tt_hint_cut with tt_chunk_emit: a counting pass,
 * an array of exactly that many chunks, a filling pass; tt_chunk_merge).
 *
 * Each input is a program: one byte picks the call, the next bytes its
 * arguments (fuzz.h). After each call the harness checks the set against a
 * log of the calls made (the flags of every boundary point), and the chunks
 * against a reference cut computed independently in 128-bit arithmetic:
 * the count the counting pass returns, every piece, the bytes walked. The
 * set's array is exactly as large as hint.h says each call needs and the
 * chunk array exactly as large as the counting pass said, so a write past
 * either is an ASan heap-buffer-overflow.
 *
 * Cost bound: a cut whose true piece count is above FZ_MAX_PIECES is not
 * run (it would only take time), except when the count does not fit the
 * 32-bit counter and wraps to a small number: that input would make the
 * kernel allocate a small array and cut billions of chunks into it, so it
 * is run (about 2^32 calls of the emit function, seconds).
 */
#include <linux/tiertrain.h>

#include "../../hint.h"
#include "fuzz.h"

#define FZ_MAX_OPS	64
#define FZ_MAX_PIECES	(1U << 14)
#define FZ_MAX_RANGES	4

struct logop {
	u64 start, end;
	unsigned int flags;	/* 0: cleared */
};

static struct logop oplog[FZ_MAX_OPS];
static unsigned int nlog;

/* The flags the log says @at has: the last set/clear covering it. */
static unsigned int ref_flags(u64 at)
{
	unsigned int i;

	for (i = nlog; i-- > 0;)
		if (oplog[i].start <= at && at < oplog[i].end)
			return oplog[i].flags;
	return 0;
}

static unsigned int set_flags(const struct tt_hint_set *h, u64 at)
{
	unsigned int i;

	for (i = 0; i < h->n; i++)
		if (h->iv[i].start <= at && at < h->iv[i].end)
			return h->iv[i].flags;
	return 0;
}

static void check_set(const struct tt_hint_set *h)
{
	unsigned int i, j;

	FZ_CHECK(h->n <= h->cap, "n %u cap %u", h->n, h->cap);
	for (i = 0; i < h->n; i++) {
		FZ_CHECK(h->iv[i].start < h->iv[i].end, "empty interval %u", i);
		FZ_CHECK(h->iv[i].flags, "interval %u without flags", i);
		if (i)
			FZ_CHECK(h->iv[i - 1].end <= h->iv[i].start,
				 "intervals %u, %u unsorted or overlapping", i - 1, i);
	}
	/* every boundary the log knows, and the byte before it */
	for (i = 0; i < nlog; i++) {
		u64 pts[4] = { oplog[i].start, oplog[i].start - 1,
				    oplog[i].end, oplog[i].end - 1 };

		for (j = 0; j < 4; j++)
			FZ_CHECK(set_flags(h, pts[j]) == ref_flags(pts[j]),
				 "byte %#llx has flags %u, the calls gave it %u",
				 (unsigned long long)pts[j], set_flags(h, pts[j]),
				 ref_flags(pts[j]));
	}
}

/* Grow the set's array to exactly @need elements (hint.h's requirement). */
static void reserve(struct tt_hint_set *h, unsigned int need)
{
	struct tt_hint_iv *iv;

	if (h->cap >= need)
		return;
	iv = fz_alloc(need, sizeof(*iv));
	if (h->n)
		memcpy(iv, h->iv, h->n * sizeof(*iv));
	free(h->iv);
	h->iv = iv;
	h->cap = need;
}

/* A page-aligned non-empty range, as tt_hint_check() hands them out. */
static int page_range(struct fz *f, u64 *start, u64 *end)
{
	u64 a = fz_u64(f) & ~(FZ_PAGE - 1), len = fz_u64(f);
	u64 e = (a + len + FZ_PAGE - 1) & ~(FZ_PAGE - 1);

	if (!len || a + len < a || e <= a)
		return 0;
	*start = a;
	*end = e;
	return 1;
}

/* ---- the reference cut ---- */

struct piece {
	u64 a, b, range_id;
};

static struct piece *ref;
static size_t nref;	/* stored, <= FZ_MAX_PIECES */

/*
 * The gaps of [@start, @end) outside the set, in order, at most *@left
 * bytes, cut at the multiples of @batch: returns the count (128-bit), and
 * stores the pieces when @store.
 */
static fz_u128 ref_cut(const struct tt_hint_set *h, u64 start,
		       u64 end, u64 *left, u64 batch,
		       u64 range_id, int store)
{
	fz_u128 count = 0;
	u64 from = start;
	unsigned int i = 0;

	while (*left && from < end) {
		u64 gend = end, take, a;

		/* the first interval ending after @from */
		while (i < h->n && h->iv[i].end <= from)
			i++;
		if (i < h->n && h->iv[i].start <= from) {
			from = h->iv[i].end;
			continue;
		}
		if (i < h->n && h->iv[i].start < end)
			gend = h->iv[i].start;
		take = gend - from < *left ? gend - from : *left;
		*left -= take;
		if (take)
			count += (from + take - 1) / batch - from / batch + 1;
		for (a = from; store && a < from + take;) {
			u64 room = batch - a % batch;
			u64 b = from + take - a < room ? from + take : a + room;

			if (nref < FZ_MAX_PIECES) {
				ref[nref].a = a;
				ref[nref].b = b;
				ref[nref].range_id = range_id;
				nref++;
			}
			a = b;
		}
		if (gend == end)
			break;
		from = gend;
	}
	return count;
}

static u64 fz_batch(struct fz *f)
{
	switch (fz_u8(f) % 4) {
	case 0:
	case 1:			/* the module's: whole huge pages */
		return FZ_HUGE * (1 + fz_u8(f) % 4);
	case 2:
		return fz_pow2(f, 12, 40);
	default: {
		u64 b = fz_u64(f);

		return b ? b : 1;
	}
	}
}

static int by_start(const void *a, const void *b)
{
	const struct tt_chunk *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * tt_chunk_merge()'s contract: sorted by address, no more chunks, the
 * same bytes, none across a multiple of @batch; and chunks that did not
 * overlap before do not overlap after.
 */
static void check_chunks_merged(const struct tt_chunk *c, unsigned int n,
				const struct tt_chunk *m, unsigned int nm,
				u64 batch)
{
	fz_u128 before = 0, after = 0;
	struct tt_chunk *s = fz_alloc(n, sizeof(*s));
	int disjoint = 1;
	unsigned int i;

	memcpy(s, c, n * sizeof(*s));
	qsort(s, n, sizeof(*s), by_start);
	for (i = 0; i < n; i++) {
		before += c[i].end - c[i].start;
		if (i && s[i - 1].end > s[i].start)
			disjoint = 0;
	}
	free(s);
	FZ_CHECK(nm <= n, "merge grew %u chunks to %u", n, nm);
	for (i = 0; i < nm; i++) {
		FZ_CHECK(m[i].start < m[i].end, "empty merged chunk %u", i);
		FZ_CHECK(m[i].start / batch == (m[i].end - 1) / batch,
			 "merged chunk %u [%#llx, %#llx) crosses a batch multiple",
			 i, (unsigned long long)m[i].start,
			 (unsigned long long)m[i].end);
		if (i)
			FZ_CHECK(m[i - 1].start <= m[i].start &&
				 (!disjoint || m[i - 1].end <= m[i].start),
				 "merged chunks %u, %u unsorted/overlapping", i - 1, i);
		after += m[i].end - m[i].start;
	}
	FZ_CHECK(before == after, "merge changed the bytes");
}

static void op_cut(struct fz *f, const struct tt_hint_set *h)
{
	u64 rs[FZ_MAX_RANGES], re[FZ_MAX_RANGES];
	u64 batch, target, left, rleft, walked;
	struct tt_chunk_cut x = { .c = NULL };
	unsigned int nr = 1 + fz_u8(f) % FZ_MAX_RANGES, i;
	unsigned long long n, got, cap;
	struct tt_chunk *c, *m;
	fz_u128 count = 0;
	int merge, short_cap;

	for (i = 0; i < nr; i++) {
		/* saved ranges are whole pages (tt_event_pages()) */
		rs[i] = fz_u64(f) & ~(FZ_PAGE - 1);
		re[i] = rs[i] + (fz_u64(f) & ~(FZ_PAGE - 1));
		if (re[i] < rs[i])
			re[i] = ~0ULL & ~(FZ_PAGE - 1);
	}
	batch = fz_batch(f);
	target = fz_u64(f);
	merge = fz_u8(f) & 1;
	short_cap = fz_u8(f) % 4 == 0;
	/* PAGE_ALIGN(sl->target), as tt_sched_cut() */
	left = (target + FZ_PAGE - 1) & ~(FZ_PAGE - 1);

	rleft = left;
	for (i = 0; i < nr; i++)
		count += ref_cut(h, rs[i], re[i], &rleft, batch, 0, 0);
	if (count > FZ_MAX_PIECES)
		return;

	/* the counting pass */
	rleft = left;
	for (i = 0; i < nr && rleft; i++) {
		x.range_id = i + 1;
		tt_hint_cut(h, rs[i], re[i], &rleft, batch, tt_chunk_emit, &x);
	}
	n = x.n;
	FZ_CHECK(n == count, "counted %llu pieces, there are %llu", n,
		 (unsigned long long)count);
	if (!n)
		return;
	/*
	 * An array of what was counted, filled by the same walk; or one of
	 * half that (ASan: nothing may be written past @cap, @n still counts).
	 */
	cap = short_cap ? n / 2 : n;
	c = fz_alloc(cap ? cap : 1, sizeof(*c));
	x.c = c;
	x.cap = cap;
	x.n = 0;
	rleft = left;
	for (i = 0; i < nr && rleft; i++) {
		x.range_id = i + 1;
		tt_hint_cut(h, rs[i], re[i], &rleft, batch, tt_chunk_emit, &x);
	}
	got = x.n;
	FZ_CHECK(got == n, "filled %llu chunks, counted %llu", got, n);

	walked = left - rleft;

	nref = 0;
	rleft = left;
	for (i = 0; i < nr; i++)
		ref_cut(h, rs[i], re[i], &rleft, batch, i + 1, 1);
	FZ_CHECK(walked == left - rleft, "walked %llu bytes, should %llu",
		 (unsigned long long)walked, (unsigned long long)(left - rleft));
	FZ_CHECK(nref == n, "%zu reference pieces, %llu chunks", nref, n);
	for (i = 0; i < cap; i++)
		FZ_CHECK(c[i].start == ref[i].a && c[i].end == ref[i].b &&
			 c[i].range_id == ref[i].range_id && !c[i].moved,
			 "chunk %u [%#llx, %#llx) range %llu, the cut is [%#llx, %#llx) range %llu",
			 i, (unsigned long long)c[i].start,
			 (unsigned long long)c[i].end,
			 (unsigned long long)c[i].range_id,
			 (unsigned long long)ref[i].a,
			 (unsigned long long)ref[i].b,
			 (unsigned long long)ref[i].range_id);
	if (merge && cap == n) {
		unsigned int nm;

		m = fz_alloc(n, sizeof(*m));
		memcpy(m, c, n * sizeof(*m));
		nm = tt_chunk_merge(m, n, batch);
		check_chunks_merged(c, n, m, nm, batch);
		free(m);
	}
	free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	struct tt_hint_set h = { 0 };
	u64 start, end, sum[2];
	const struct tt_hint_iv *v;
	unsigned int i, k, flags;

	if (!ref)
		ref = fz_alloc(FZ_MAX_PIECES, sizeof(*ref));
	nlog = 0;
	for (k = 0; k < 4 * FZ_MAX_OPS && fz_more(&f); k++) {
		switch (fz_u8(&f) % 5) {
		case 0:		/* TT_IOC_HINT PIN_FAST / ARCHIVE */
		case 1:		/* a hint cleared (RETIRE) */
			flags = fz_u8(&f) % 3;
			flags = flags == 1 ? TT_HINT_PIN_FAST :
				flags == 2 ? TT_HINT_ARCHIVE : 0;
			if (!page_range(&f, &start, &end) || nlog == FZ_MAX_OPS)
				break;
			if (flags) {
				reserve(&h, h.n + 2);
				tt_hint_set(&h, start, end, flags);
			} else {
				reserve(&h, h.n + 1);
				tt_hint_clear(&h, start, end);
			}
			oplog[nlog].start = start;
			oplog[nlog].end = end;
			oplog[nlog].flags = flags;
			nlog++;
			check_set(&h);
			break;
		case 2:
			start = fz_u64(&f);
			end = fz_u64(&f);
			v = tt_hint_next(&h, start, end);
			for (i = 0; i < h.n; i++)
				if (h.iv[i].end > start && h.iv[i].start < end)
					break;
			FZ_CHECK(v == (i < h.n ? &h.iv[i] : NULL),
				 "tt_hint_next gave %p, the first overlap is %u",
				 (const void *)v, i);
			break;
		case 3:
			sum[0] = sum[1] = 0;
			for (i = 0; i < h.n; i++)
				sum[h.iv[i].flags == TT_HINT_ARCHIVE] +=
					h.iv[i].end - h.iv[i].start;
			FZ_CHECK(tt_hint_bytes(&h, TT_HINT_PIN_FAST) == sum[0],
				 "pinned bytes");
			FZ_CHECK(tt_hint_bytes(&h, TT_HINT_ARCHIVE) == sum[1],
				 "archived bytes");
			break;
		default:
			op_cut(&f, &h);
			break;
		}
	}
	free(h.iv);
	return 0;
}
