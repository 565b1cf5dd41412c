// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit tests of the hinted-interval set (core/hint.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "../hint.h"

#define CAP 16

static struct tt_hint_iv buf[CAP];

/* The set is sorted, disjoint, non-empty intervals, within capacity. */
static void check_sorted(const struct tt_hint_set *h)
{
	unsigned int i;

	assert_true(h->n <= h->cap);
	for (i = 0; i < h->n; i++) {
		assert_true(h->iv[i].start < h->iv[i].end);
		if (i)
			assert_true(h->iv[i - 1].end <= h->iv[i].start);
	}
}

static void expect(const struct tt_hint_set *h, unsigned int i,
		   unsigned long long start, unsigned long long end,
		   unsigned int flags)
{
	assert_true(i < h->n);
	assert_int_equal(h->iv[i].start, start);
	assert_int_equal(h->iv[i].end, end);
	assert_int_equal(h->iv[i].flags, flags);
}

static void test_set_and_replace(void **state)
{
	struct tt_hint_set h = { buf, 0, CAP };

	(void)state;
	tt_hint_set(&h, 100, 200, 1);
	tt_hint_set(&h, 300, 400, 1);
	tt_hint_set(&h, 0, 50, 2);
	check_sorted(&h);
	assert_int_equal(h.n, 3);
	expect(&h, 0, 0, 50, 2);
	expect(&h, 1, 100, 200, 1);
	expect(&h, 2, 300, 400, 1);

	/* inside one: split in three, the middle replaced */
	tt_hint_set(&h, 120, 130, 2);
	check_sorted(&h);
	assert_int_equal(h.n, 5);
	expect(&h, 1, 100, 120, 1);
	expect(&h, 2, 120, 130, 2);
	expect(&h, 3, 130, 200, 1);

	/* across several: both ends cut, the ones inside gone */
	tt_hint_set(&h, 110, 350, 4);
	check_sorted(&h);
	assert_int_equal(h.n, 4);
	expect(&h, 0, 0, 50, 2);
	expect(&h, 1, 100, 110, 1);
	expect(&h, 2, 110, 350, 4);
	expect(&h, 3, 350, 400, 1);
}

static void test_clear(void **state)
{
	struct tt_hint_set h = { buf, 0, CAP };

	(void)state;
	tt_hint_set(&h, 100, 200, 1);
	tt_hint_set(&h, 300, 400, 2);
	tt_hint_clear(&h, 150, 160);		/* straddled */
	check_sorted(&h);
	assert_int_equal(h.n, 3);
	expect(&h, 0, 100, 150, 1);
	expect(&h, 1, 160, 200, 1);
	tt_hint_clear(&h, 0, 1000);		/* everything */
	assert_int_equal(h.n, 0);
	tt_hint_clear(&h, 0, 1000);		/* nothing to do */
	assert_int_equal(h.n, 0);
	tt_hint_set(&h, 100, 200, 1);
	tt_hint_clear(&h, 200, 300);		/* adjacent: untouched */
	tt_hint_clear(&h, 50, 100);
	assert_int_equal(h.n, 1);
	expect(&h, 0, 100, 200, 1);
	tt_hint_clear(&h, 50, 150);		/* front cut */
	tt_hint_clear(&h, 180, 250);		/* back cut */
	expect(&h, 0, 150, 180, 1);
}

static void test_next(void **state)
{
	struct tt_hint_set h = { buf, 0, CAP };
	const struct tt_hint_iv *v;

	(void)state;
	assert_null(tt_hint_next(&h, 0, 1000));
	tt_hint_set(&h, 100, 200, 1);
	tt_hint_set(&h, 300, 400, 2);
	assert_null(tt_hint_next(&h, 0, 100));
	assert_null(tt_hint_next(&h, 200, 300));
	v = tt_hint_next(&h, 0, 101);
	assert_non_null(v);
	assert_int_equal(v->start, 100);
	v = tt_hint_next(&h, 150, 1000);
	assert_int_equal(v->start, 100);
	v = tt_hint_next(&h, 200, 1000);
	assert_int_equal(v->start, 300);
	assert_null(tt_hint_next(&h, 400, 1000));
}

/* Many random changes against a byte map: the set always matches it. */
static void test_against_map(void **state)
{
	static struct tt_hint_iv big[512];
	struct tt_hint_set h = { big, 0, 512 };
	unsigned char map[256] = { 0 };
	unsigned int seed = 12345, k, i;

	(void)state;
	for (k = 0; k < 2000; k++) {
		unsigned int a, b, f;

		seed = seed * 1103515245 + 12345;
		a = (seed >> 8) % 256;
		seed = seed * 1103515245 + 12345;
		b = (seed >> 8) % 256;
		seed = seed * 1103515245 + 12345;
		f = (seed >> 8) % 3;
		if (a == b)
			continue;
		if (a > b) {
			unsigned int t = a;

			a = b;
			b = t;
		}
		if (h.n + 2 > h.cap)
			break;
		if (f)
			tt_hint_set(&h, a, b, f);
		else
			tt_hint_clear(&h, a, b);
		for (i = a; i < b; i++)
			map[i] = (unsigned char)f;
		check_sorted(&h);
		for (i = 0; i < 256; i++) {
			const struct tt_hint_iv *v = tt_hint_next(&h, i, i + 1);

			assert_int_equal(v ? v->flags : 0, map[i]);
		}
	}
	assert_true(k > 100);
}

struct pieces {
	unsigned long long a[16], b[16];
	unsigned int n;
};

static void emit(void *arg, unsigned long long a, unsigned long long b)
{
	struct pieces *p = arg;

	assert_true(p->n < 16);
	p->a[p->n] = a;
	p->b[p->n++] = b;
}

/* Pieces outside the hints, cut into batches, limited by *left. */
static void test_cut(void **state)
{
	struct tt_hint_set h = { buf, 0, CAP };
	struct pieces p = { .n = 0 };
	unsigned long long left = 1000;

	(void)state;
	/* no hints: [0, 250) in batches of 100 */
	assert_int_equal(tt_hint_cut(&h, 0, 250, &left, 100, emit, &p), 3);
	assert_int_equal(left, 750);
	assert_int_equal(p.a[2], 200);
	assert_int_equal(p.b[2], 250);

	/* an unaligned start: cut at the multiples of the batch */
	p.n = 0;
	left = 1000;
	assert_int_equal(tt_hint_cut(&h, 130, 420, &left, 100, emit, &p), 4);
	assert_int_equal(p.a[0], 130);
	assert_int_equal(p.b[0], 200);
	assert_int_equal(p.a[1], 200);
	assert_int_equal(p.b[1], 300);
	assert_int_equal(p.a[3], 400);
	assert_int_equal(p.b[3], 420);
	left = 1000;

	/* hints at [100, 150) and [200, 300): [0,100) [150,200) [300,350) */
	tt_hint_set(&h, 100, 150, 1);
	tt_hint_set(&h, 200, 300, 2);
	p.n = 0;
	left = 1000;
	assert_int_equal(tt_hint_cut(&h, 0, 350, &left, 100, emit, &p), 3);
	assert_int_equal(left, 1000 - 200);
	assert_int_equal(p.a[0], 0);
	assert_int_equal(p.b[0], 100);
	assert_int_equal(p.a[1], 150);
	assert_int_equal(p.b[1], 200);
	assert_int_equal(p.a[2], 300);
	assert_int_equal(p.b[2], 350);

	/* starting inside a hint; left runs out in the second piece */
	p.n = 0;
	left = 70;
	assert_int_equal(tt_hint_cut(&h, 120, 350, &left, 100, emit, &p), 2);
	assert_int_equal(left, 0);
	assert_int_equal(p.a[0], 150);
	assert_int_equal(p.b[0], 200);
	assert_int_equal(p.a[1], 300);
	assert_int_equal(p.b[1], 320);

	/* all hinted: nothing */
	p.n = 0;
	left = 1000;
	assert_int_equal(tt_hint_cut(&h, 210, 290, &left, 100, emit, &p), 0);
	assert_int_equal(left, 1000);
}

/*
 * The chunk cutter never writes past the capacity it is given, whatever
 * the ranges (issue 14, finding 1: a count that wrapped, then a second
 * pass that wrote every chunk); it keeps counting so the caller sees what
 * was left out, and the count does not wrap in 32 bits.
 */
static void test_chunk_capacity(void **state)
{
	struct tt_hint_set h = { buf, 0, CAP };
	unsigned long long left, batch = 2ULL << 20, n, top;
	struct tt_chunk_cut x = { 0 };
	struct tt_chunk *c;
	unsigned int i;

	(void)state;
	/* 3 entries on the heap (ASan sees a write past them), 10 chunks */
	c = test_malloc(3 * sizeof(*c));
	x.c = c;
	x.cap = 3;
	x.range_id = 7;
	left = ~0ULL;
	n = tt_hint_cut(&h, 0, 10 * batch, &left, batch, tt_chunk_emit, &x);
	assert_true(n == 10);
	assert_true(x.n == 10);
	for (i = 0; i < 3; i++) {
		assert_true(c[i].start == i * batch);
		assert_true(c[i].end == (i + 1) * batch);
		assert_true(c[i].range_id == 7);
	}
	/* a full array takes nothing more, even across calls */
	n = tt_hint_cut(&h, 20 * batch, 21 * batch, &left, batch,
			tt_chunk_emit, &x);
	assert_true(n == 1 && x.n == 11);
	assert_true(c[2].start == 2 * batch);
	test_free(c);

	/*
	 * Counting only, a range of 2^53 + 6 MiB (the fake tensor)
	 * bounded by *left: the work follows *left, not the range.
	 */
	x.c = (void *)0;
	x.cap = 0;
	x.n = 0;
	left = 64 * batch;
	n = tt_hint_cut(&h, 0, (1ULL << 53) + 3 * batch, &left, batch,
			tt_chunk_emit, &x);
	assert_true(n == 64 && x.n == 64 && left == 0);

	/* a count beyond 32 bits: pieces of one byte, capacity untouched */
	top = (1ULL << 32) + 5;
	x.n = 0xfffffffeULL;
	left = 7;
	n = tt_hint_cut(&h, 0, 7, &left, 1, tt_chunk_emit, &x);
	assert_true(n == 7 && x.n == top);
}

static struct tt_chunk CH(unsigned long long a, unsigned long long b,
			  unsigned long long id)
{
	struct tt_chunk c = { a, b, id, 0, 0, 0 };

	return c;
}

/* Contiguous batching: sorted, touching chunks joined up to a batch. */
static void test_merge(void **state)
{
	struct tt_chunk c[8];
	unsigned int n;

	(void)state;
	c[0] = CH(0, 100, 1);
	c[1] = CH(300, 400, 3);
	c[2] = CH(100, 150, 2);
	c[3] = CH(150, 180, 2);
	n = tt_chunk_merge(c, 4, 128);
	assert_int_equal(n, 3);
	assert_int_equal(c[0].start, 0);
	assert_int_equal(c[0].end, 128);
	assert_int_equal(c[0].range_id, 0);	/* ranges 1 and 2 */
	assert_int_equal(c[1].start, 128);
	assert_int_equal(c[1].end, 180);
	assert_int_equal(c[1].range_id, 2);
	assert_int_equal(c[2].start, 300);
	assert_int_equal(c[2].end, 400);
	assert_int_equal(c[2].range_id, 3);

	/* many small touching pieces of one range: cut at multiples of 64 */
	for (n = 0; n < 8; n++)
		c[n] = CH(1000 + 16 * (7 - n), 1016 + 16 * (7 - n), 5);
	n = tt_chunk_merge(c, 8, 64);
	assert_int_equal(n, 3);
	assert_int_equal(c[0].start, 1000);
	assert_int_equal(c[0].end, 1024);
	assert_int_equal(c[1].start, 1024);
	assert_int_equal(c[1].end, 1088);
	assert_int_equal(c[2].start, 1088);
	assert_int_equal(c[2].end, 1128);
	assert_int_equal(c[2].range_id, 5);

	/* nothing touches: only sorted */
	c[0] = CH(500, 600, 1);
	c[1] = CH(0, 10, 2);
	assert_int_equal(tt_chunk_merge(c, 2, 64), 2);
	assert_int_equal(c[0].start, 0);
	assert_int_equal(c[1].start, 500);
	assert_int_equal(tt_chunk_merge(c, 1, 64), 1);
	assert_int_equal(tt_chunk_merge(c, 0, 64), 0);
}

#define IV(a, b) ((struct tt_hint_iv){ (a), (b), 0 })

/* The pieces of [start, end) outside unsorted, overlapping intervals. */
static void test_gaps(void **state)
{
	struct tt_hint_iv iv[4], out[5];

	(void)state;
	/* none: the whole range */
	assert_int_equal(tt_hint_gaps(iv, 0, 10, 20, out), 1);
	assert_int_equal(out[0].start, 10);
	assert_int_equal(out[0].end, 20);
	/* unsorted, overlapping, sticking out on both sides */
	iv[0] = IV(50, 60);
	iv[1] = IV(5, 15);
	iv[2] = IV(30, 40);
	iv[3] = IV(35, 45);
	assert_int_equal(tt_hint_gaps(iv, 4, 10, 55, out), 2);
	assert_int_equal(out[0].start, 15);
	assert_int_equal(out[0].end, 30);
	assert_int_equal(out[1].start, 45);
	assert_int_equal(out[1].end, 50);
	/* covered whole */
	iv[0] = IV(0, 100);
	assert_int_equal(tt_hint_gaps(iv, 1, 10, 55, out), 0);
	/* outside the range: no effect; at most n + 1 pieces */
	iv[0] = IV(100, 200);
	iv[1] = IV(0, 5);
	iv[2] = IV(20, 21);
	iv[3] = IV(30, 31);
	assert_int_equal(tt_hint_gaps(iv, 4, 10, 40, out), 3);
	assert_int_equal(out[2].start, 31);
	assert_int_equal(out[2].end, 40);
}

/* Pieces meet the intervals with some flags and without others. */
static void test_meet(void **state)
{
	struct tt_hint_set h = { buf, 0, CAP };
	struct tt_hint_iv a[3], out[CAP + 3];

	(void)state;
	tt_hint_set(&h, 0, 10, 4);
	tt_hint_set(&h, 20, 30, 2);
	tt_hint_set(&h, 40, 60, 4);
	tt_hint_set(&h, 70, 80, 4 | TT_HINT_F_OUT);
	a[0] = IV(5, 25);
	a[1] = IV(45, 50);
	a[2] = IV(55, 75);
	assert_int_equal(tt_hint_meet(a, 3, &h, 4, TT_HINT_F_OUT, out), 3);
	assert_int_equal(out[0].start, 5);
	assert_int_equal(out[0].end, 10);
	assert_int_equal(out[1].start, 45);
	assert_int_equal(out[1].end, 50);
	assert_int_equal(out[2].start, 55);
	assert_int_equal(out[2].end, 60);
	assert_int_equal(tt_hint_meet(a, 3, &h, 2, 0, out), 1);
	assert_int_equal(out[0].start, 20);
	assert_int_equal(out[0].end, 25);
	assert_int_equal(tt_hint_meet(a, 0, &h, 4, 0, out), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_and_replace),
		cmocka_unit_test(test_clear),
		cmocka_unit_test(test_next),
		cmocka_unit_test(test_against_map),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_chunk_capacity),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_gaps),
		cmocka_unit_test(test_meet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
