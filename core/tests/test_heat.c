// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit tests of the fast-tier budget's decisions (core/heat.c): the heat
 * score, DeepTM's Algorithm 1 weight adjustment, victim order, the
 * max-min fair share and the victim page walk.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <limits.h>
#include <stdint.h>
#include <cmocka.h>

#include "../heat.h"

#define P	4096ULL

static struct tt_heat_item item(unsigned long long bytes,
				unsigned long long dist,
				unsigned long long uses,
				unsigned long long life)
{
	struct tt_heat_item it = {
		.bytes = bytes, .dist = dist, .uses = uses, .life = life,
	};

	return it;
}

/* H = (w_f f' - w_r r' - w_s s' - w_l l') / 1024 over min-max features. */
static void test_score(void **state)
{
	struct tt_heat_item it[3] = {
		item(100, 0, 3, 10),		/* small, next, used most */
		item(300, 50, 2, 20),		/* the middle of everything */
		item(500, 100, 1, 30),		/* large, last, used least */
	};
	struct tt_heat_w w;

	(void)state;
	tt_heat_w_init(&w);
	tt_heat_score(it, 3, &w);
	assert_int_equal(it[0].heat, 1024);
	assert_int_equal(it[1].heat, 512 - 512 - 512 - 512);
	assert_int_equal(it[2].heat, -3 * 1024);

	/* weights scale their feature: w_f 0 leaves only the penalties */
	w.f = 0;
	w.s = 2048;
	tt_heat_score(it, 3, &w);
	assert_int_equal(it[0].heat, 0);
	assert_int_equal(it[1].heat, -512 - 1024 - 512);
	assert_int_equal(it[2].heat, -1024 - 2048 - 1024);

	/* equal features normalise to 0 */
	it[0] = item(7, 7, 7, 7);
	it[1] = item(7, 7, 7, 7);
	tt_heat_w_init(&w);
	tt_heat_score(it, 2, &w);
	assert_int_equal(it[0].heat, 0);
	assert_int_equal(it[1].heat, 0);
}

/* Features near 2^64 normalise without overflow. */
static void test_score_large(void **state)
{
	struct tt_heat_item it[3] = {
		item(1, ~0ULL, 1, 1),
		item(1, ~0ULL / 2, 1, 1),
		item(1, 0, 1, 1),
	};
	struct tt_heat_w w;

	(void)state;
	tt_heat_w_init(&w);
	tt_heat_score(it, 3, &w);
	assert_int_equal(it[0].heat, -1024);
	assert_in_range(it[1].heat, -513, -511);
	assert_int_equal(it[2].heat, 0);
}

/* An item in use is the hottest and does not stretch the others' span. */
static void test_in_use(void **state)
{
	struct tt_heat_item it[3] = {
		item(100, 0, 1, 0),
		item(100, 10, 1, 0),
		item(1000000, 1000000, 1, 0),
	};
	struct tt_heat_w w;

	(void)state;
	it[2].in_use = 1;
	tt_heat_w_init(&w);
	tt_heat_score(it, 3, &w);
	assert_int_equal(it[0].heat, 0);
	assert_int_equal(it[1].heat, -1024);
	assert_true(it[2].heat == TT_HEAT_IN_USE);
	assert_int_equal(tt_heat_hot_bytes(it, 3), 1000100);
	/* never a victim, whatever the bound */
	assert_int_equal(tt_heat_coldest(it, 3, TT_HEAT_IN_USE + 1), 1);
	it[1].done = 1;
	assert_int_equal(tt_heat_coldest(it, 3, TT_HEAT_IN_USE + 1), 0);
	it[0].done = 1;
	assert_int_equal(tt_heat_coldest(it, 3, TT_HEAT_IN_USE + 1), -1);
}

/* The coldest first; ties go to the farther next use; @below bounds. */
static void test_coldest(void **state)
{
	struct tt_heat_item it[4] = {
		item(1, 5, 0, 0), item(1, 9, 0, 0),
		item(1, 1, 0, 0), item(1, 9, 0, 0),
	};

	(void)state;
	it[0].heat = -10;
	it[1].heat = -20;
	it[2].heat = -20;
	it[3].heat = 5;
	assert_int_equal(tt_heat_coldest(it, 4, 100), 1);	/* dist 9 > 1 */
	it[1].done = 1;
	assert_int_equal(tt_heat_coldest(it, 4, 100), 2);
	it[2].done = 1;
	assert_int_equal(tt_heat_coldest(it, 4, 100), 0);
	assert_int_equal(tt_heat_coldest(it, 4, -10), -1);	/* strictly below */
	assert_int_equal(tt_heat_coldest(it, 4, -9), 0);
	it[0].done = 1;
	assert_int_equal(tt_heat_coldest(it, 4, 100), 3);
	assert_int_equal(tt_heat_coldest(it, 0, 100), -1);
}

/* A deterministic pseudo-random sequence for the heap tests. */
static unsigned long long rnd(unsigned long long *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return *x >> 33;
}

/*
 * The heap picks in tt_heat_coldest()'s order (heats and next uses with
 * many ties, some items done or in use, a bound), also when items are
 * marked done between picks.
 */
static void test_heap(void **state)
{
	enum { N = 700 };
	static struct tt_heat_item it[N], ref[N];
	static unsigned int heap[N];
	unsigned long long x = 42;
	unsigned int i, m, round;
	int a, b;

	(void)state;
	for (round = 0; round < 20; round++) {
		long long below = round % 3 ? (long long)(rnd(&x) % 40) - 20 :
			TT_HEAT_IN_USE + 1;
		unsigned int n = round ? (unsigned int)(rnd(&x) % N) : 0;

		for (i = 0; i < n; i++) {
			it[i] = item(1, rnd(&x) % 4, 0, 0);
			it[i].heat = (long long)(rnd(&x) % 32) - 16;
			it[i].done = rnd(&x) % 7 == 0;
			it[i].in_use = rnd(&x) % 9 == 0;
			if (it[i].in_use)
				it[i].heat = TT_HEAT_IN_USE;
			ref[i] = it[i];
		}
		m = tt_heat_heap(it, n, below, heap);
		assert_true(m <= n);
		for (;;) {
			a = tt_heat_coldest(ref, n, below);
			b = tt_heat_pop(it, heap, &m);
			assert_int_equal(a, b);
			if (a < 0)
				break;
			ref[a].done = 1;
			it[a].done = 1;
			/* now and then the caller takes another one */
			if (n && rnd(&x) % 5 == 0) {
				i = (unsigned int)(rnd(&x) % n);
				ref[i].done = 1;
				it[i].done = 1;
			}
		}
		assert_int_equal(m, 0);
	}
}

/* 65536 candidates: every pick in order, in O(n log n). */
static void test_heap_large(void **state)
{
	enum { N = 65536 };
	static struct tt_heat_item it[N];
	static unsigned int heap[N];
	unsigned long long x = 7;
	unsigned int i, m, got = 0;
	int j, last = -1;

	(void)state;
	for (i = 0; i < N; i++) {
		it[i] = item(1, rnd(&x) % 1000, 0, 0);
		it[i].heat = (long long)(rnd(&x) % 2000) - 1000;
	}
	m = tt_heat_heap(it, N, LLONG_MAX, heap);
	assert_int_equal(m, N);
	while ((j = tt_heat_pop(it, heap, &m)) >= 0) {
		it[j].done = 1;
		if (last >= 0) {
			assert_true(it[last].heat <= it[j].heat);
			if (it[last].heat == it[j].heat)
				assert_true(it[last].dist >= it[j].dist);
		}
		last = j;
		got++;
	}
	assert_int_equal(got, N);
}

/*
 * Algorithm 1 under low pressure (live < 2.5 x budget) moves w_r: four
 * equal tensors, the more used the nearer. Heats -1024, -341, 341, 1024:
 * 20 bytes hot; a budget of 30 wants one more, so w_r goes down until
 * 341 - w_r * 682 / 1024 >= 0 (w_r <= 512: about 35 steps of 2 %).
 */
static void test_adjust_low_pressure(void **state)
{
	struct tt_heat_item it[4] = {
		item(10, 4, 1, 0), item(10, 3, 2, 0),
		item(10, 2, 3, 0), item(10, 1, 4, 0),
	};
	struct tt_heat_w w;
	unsigned int steps;

	(void)state;
	tt_heat_w_init(&w);
	tt_heat_score(it, 4, &w);
	assert_int_equal(tt_heat_hot_bytes(it, 4), 20);
	/* 20 is within 0.9..1.1 x 20: nothing to do */
	assert_int_equal(tt_heat_adjust(&w, it, 4, 20), 0);
	assert_int_equal(w.r, TT_HEAT_ONE);

	steps = tt_heat_adjust(&w, it, 4, 30);
	assert_in_range(steps, 30, 40);
	assert_true(w.r <= 512);
	assert_true(w.r > 480);
	assert_int_equal(w.s, TT_HEAT_ONE);
	assert_int_equal(w.f, TT_HEAT_ONE);
	assert_int_equal(w.l, TT_HEAT_ONE);
	assert_int_equal(tt_heat_hot_bytes(it, 4), 30);
	/* the weights carry over: in the band now, no step */
	assert_int_equal(tt_heat_adjust(&w, it, 4, 30), 0);
}

/*
 * Under high pressure (live >= 2.5 x budget) w_s moves: sizes 4, 6, 12,
 * 18 (s' 0, 146, 585, 1024), the last used less (f' 0, the others 1024).
 * Hot: 22 bytes; a budget of 10 wants 10, so w_s goes up until
 * 1024 - w_s * 585 / 1024 < 0 (w_s > 1792).
 */
static void test_adjust_high_pressure(void **state)
{
	struct tt_heat_item it[4] = {
		item(4, 0, 2, 0), item(6, 0, 2, 0),
		item(12, 0, 2, 0), item(18, 0, 1, 0),
	};
	struct tt_heat_w w;
	unsigned int steps;

	(void)state;
	tt_heat_w_init(&w);
	tt_heat_score(it, 4, &w);
	assert_int_equal(tt_heat_hot_bytes(it, 4), 22);
	steps = tt_heat_adjust(&w, it, 4, 10);
	assert_in_range(steps, 20, 35);
	assert_true(w.s > 1792);
	assert_true(w.s < 1900);
	assert_int_equal(w.r, TT_HEAT_ONE);
	assert_int_equal(tt_heat_hot_bytes(it, 4), 10);
	assert_true(it[2].heat < 0);
	assert_true(it[1].heat >= 0);
}

/*
 * A band no weight can reach (the hot set jumps from 20 to 10 bytes over
 * 15.3..18.7) ends after TT_HEAT_STEPS_MAX steps; a weight at its bound
 * ends it at once.
 */
static void test_adjust_bounded(void **state)
{
	struct tt_heat_item it[4] = {
		item(10, 4, 1, 0), item(10, 3, 2, 0),
		item(10, 2, 3, 0), item(10, 1, 4, 0),
	};
	struct tt_heat_w w;

	(void)state;
	tt_heat_w_init(&w);
	assert_int_equal(tt_heat_adjust(&w, it, 4, 17), TT_HEAT_STEPS_MAX);
	assert_true(w.r >= TT_HEAT_W_MIN && w.r <= TT_HEAT_W_MAX);

	/* too few hot, w_r already at its lower bound: no step */
	it[0] = item(10, 0, 1, 0);
	it[1] = item(10, 1, 1, 0);
	tt_heat_w_init(&w);
	w.r = TT_HEAT_W_MIN;
	assert_int_equal(tt_heat_adjust(&w, it, 2, 100), 0);
	assert_int_equal(w.r, TT_HEAT_W_MIN);
	/* no budget: nothing */
	assert_int_equal(tt_heat_adjust(&w, it, 2, 0), 0);
}

static unsigned long long sum(const unsigned long long *v, unsigned int n)
{
	unsigned long long s = 0;

	while (n--)
		s += v[n];
	return s;
}

/* Max-min fair shares: small demands met, the rest split equally. */
static void test_share(void **state)
{
	unsigned long long d[4], s[4];

	(void)state;
	d[0] = 10; d[1] = 80; d[2] = 80;
	tt_heat_share(d, 3, 100, s);
	assert_int_equal(s[0], 10);
	assert_int_equal(s[1], 45);
	assert_int_equal(s[2], 45);

	d[0] = 0; d[1] = 50; d[2] = 70;
	tt_heat_share(d, 3, 100, s);
	assert_int_equal(s[0], 0);
	assert_int_equal(s[1], 50);
	assert_int_equal(s[2], 50);

	d[0] = 100; d[1] = 100; d[2] = 100; d[3] = 100;
	tt_heat_share(d, 4, 90, s);
	assert_int_equal(s[0], 22);
	assert_int_equal(s[3], 22);
	assert_true(sum(s, 4) <= 90);

	/* everything fits: each gets its demand */
	d[0] = 10; d[1] = 20;
	tt_heat_share(d, 2, 100, s);
	assert_int_equal(s[0], 10);
	assert_int_equal(s[1], 20);

	/* a cascade: 5 fits, then 30 fits in (100-5)/2, 200 takes the rest */
	d[0] = 200; d[1] = 30; d[2] = 5;
	tt_heat_share(d, 3, 100, s);
	assert_int_equal(s[2], 5);
	assert_int_equal(s[1], 30);
	assert_int_equal(s[0], 65);

	/* one session alone gets at most the total */
	d[0] = ~0ULL;
	tt_heat_share(d, 1, 100, s);
	assert_int_equal(s[0], 100);
	tt_heat_share(d, 0, 100, s);
}

/* tt_heat_share() as it was (round by round, O(n^2)): the reference. */
static void share_ref(const unsigned long long *demand, unsigned int n,
		      unsigned long long total, unsigned long long *share)
{
	const unsigned long long open = ~0ULL;
	unsigned long long left = total, level, d;
	unsigned int i, k = 0;
	int changed;

	for (i = 0; i < n; i++) {
		share[i] = demand[i] ? open : 0;
		if (demand[i])
			k++;
	}
	while (k) {
		level = left / k;
		changed = 0;
		for (i = 0; i < n; i++) {
			d = demand[i] < total ? demand[i] : total;
			if (share[i] != open || d > level)
				continue;
			share[i] = d;
			left -= d;
			k--;
			changed = 1;
		}
		if (changed)
			continue;
		for (i = 0; i < n; i++)
			if (share[i] == open)
				share[i] = level;
		break;
	}
}

/* The sorted water-filling gives the reference's shares, ties and all. */
static void test_share_random(void **state)
{
	enum { N = 64 };
	unsigned long long d[N], s[N], r[N], x = 99, total;
	unsigned int round, i, n;

	(void)state;
	for (round = 0; round < 20000; round++) {
		n = (unsigned int)(rnd(&x) % N);
		total = rnd(&x) % (round % 2 ? 1000 : 100000000);
		for (i = 0; i < n; i++) {
			switch (rnd(&x) % 4) {
			case 0:
				d[i] = 0;
				break;
			case 1:
				d[i] = rnd(&x) % 50;
				break;
			case 2:
				d[i] = round % 7 ? rnd(&x) % 2000 : ~0ULL;
				break;
			default:
				d[i] = rnd(&x) * rnd(&x);
			}
		}
		share_ref(d, n, total, r);
		tt_heat_share(d, n, total, s);
		for (i = 0; i < n; i++)
			assert_int_equal(s[i], r[i]);
		assert_true(sum(s, n) <= total);
	}
}

struct pieces {
	unsigned long long a[16];
	unsigned long long b[16];
	unsigned int n;
};

static void emit(void *arg, unsigned long long a, unsigned long long b)
{
	struct pieces *p = arg;

	assert_true(p->n < 16);
	p->a[p->n] = a;
	p->b[p->n] = b;
	p->n++;
}

#define ARCH	4U
#define PIN	2U

/* The victim walk: outside every hint, or inside archived and not pinned. */
static void test_cut(void **state)
{
	struct tt_hint_iv buf[8];
	struct tt_hint_set h = { buf, 0, 8 };
	unsigned long long skip, left;
	struct pieces p = { .n = 0 };

	(void)state;
	tt_hint_set(&h, 2 * P, 4 * P, ARCH);
	tt_hint_set(&h, 6 * P, 7 * P, PIN);
	tt_hint_set(&h, 9 * P, 10 * P, ARCH | PIN);

	/* plain: [0,2) [4,6) [7,9) [10,12) less one page skipped, batch 4 */
	skip = P;
	left = ~0ULL;
	assert_int_equal(tt_heat_cut(&h, 0, 12 * P, 0, 0, &skip, &left, 4 * P,
				     emit, &p), 5);
	assert_int_equal(skip, 0);
	assert_int_equal(p.a[0], 1 * P);
	assert_int_equal(p.b[0], 2 * P);
	assert_int_equal(p.a[1], 4 * P);
	assert_int_equal(p.b[1], 6 * P);
	assert_int_equal(p.a[2], 7 * P);
	assert_int_equal(p.b[2], 8 * P);	/* cut at the multiple of 4 */
	assert_int_equal(p.a[3], 8 * P);
	assert_int_equal(p.b[3], 9 * P);
	assert_int_equal(p.a[4], 10 * P);
	assert_int_equal(p.b[4], 12 * P);

	/* at most @left, after a skip that spans pieces */
	p.n = 0;
	skip = 3 * P;
	left = 2 * P;
	assert_int_equal(tt_heat_cut(&h, 0, 12 * P, 0, 0, &skip, &left, 4 * P,
				     emit, &p), 2);
	assert_int_equal(left, 0);
	assert_int_equal(p.a[0], 5 * P);
	assert_int_equal(p.b[0], 6 * P);
	assert_int_equal(p.a[1], 7 * P);
	assert_int_equal(p.b[1], 8 * P);

	/* archived, not pinned: only [2,4) */
	p.n = 0;
	skip = 0;
	left = ~0ULL;
	assert_int_equal(tt_heat_cut(&h, 0, 12 * P, ARCH, PIN, &skip, &left,
				     4 * P, emit, &p), 1);
	assert_int_equal(p.a[0], 2 * P);
	assert_int_equal(p.b[0], 4 * P);
	/* a range starting inside the interval, and a skip */
	p.n = 0;
	skip = P / 2;
	left = ~0ULL;
	assert_int_equal(tt_heat_cut(&h, 3 * P, 12 * P, ARCH, PIN, &skip,
				     &left, 4 * P, emit, &p), 1);
	assert_int_equal(p.a[0], 3 * P + P / 2);
	assert_int_equal(p.b[0], 4 * P);
	/* nothing archived in the range */
	p.n = 0;
	skip = 0;
	left = ~0ULL;
	assert_int_equal(tt_heat_cut(&h, 4 * P, 9 * P, ARCH, PIN, &skip,
				     &left, 4 * P, emit, &p), 0);
	/* no hint at all: the whole range */
	h.n = 0;
	assert_int_equal(tt_heat_cut(&h, 0, 3 * P, 0, 0, &skip, &left, 4 * P,
				     emit, &p), 1);
	assert_int_equal(p.b[0], 3 * P);
	assert_int_equal(tt_heat_cut(&h, 0, 3 * P, ARCH, 0, &skip, &left,
				     4 * P, emit, &p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_score),
		cmocka_unit_test(test_score_large),
		cmocka_unit_test(test_in_use),
		cmocka_unit_test(test_coldest),
		cmocka_unit_test(test_heap),
		cmocka_unit_test(test_heap_large),
		cmocka_unit_test(test_adjust_low_pressure),
		cmocka_unit_test(test_adjust_high_pressure),
		cmocka_unit_test(test_adjust_bounded),
		cmocka_unit_test(test_share),
		cmocka_unit_test(test_share_random),
		cmocka_unit_test(test_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
