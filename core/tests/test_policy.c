// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit tests of the policy core (core/policy.c) with worked numbers.
 *
 * Unless a test says otherwise: ER = PR = 1e9 bytes/s (1 byte/ns each way,
 * so MR = 2 ns/byte), ST = 1 ms, pages of 4096 bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../policy.h"

#define MS 1000000ULL
#define P4K 4096ULL

static const struct tt_policy_params P = {
	.er_bps = 1000000000ULL,
	.pr_bps = 1000000000ULL,
	.stay_ns = 1 * MS,
	.page_size = P4K,
};

static struct tt_policy_layer L(unsigned int id, unsigned long long fe,
				unsigned long long bs, unsigned long long sz)
{
	struct tt_policy_layer l;

	memset(&l, 0, sizeof(l));
	l.layer = id;
	l.fwd_start_ns = fe;
	l.fwd_end_ns = fe;
	l.bwd_start_ns = bs;
	l.bwd_end_ns = bs;
	l.saved_bytes = sz;
	return l;
}

static void plan(const struct tt_policy_params *p, struct tt_policy_layer *l,
		 unsigned int n, struct tt_policy_summary *s)
{
	unsigned int order[16];

	assert_true(n <= 16);
	assert_int_equal(tt_policy_plan(p, l, n, order, s, NULL), 0);
}

/* Eq. 6: IT = 10 ms >= sz*MR + ST = 2.048 + 1 ms: the whole layer goes. */
static void test_evict_accepted(void **state)
{
	struct tt_policy_layer l = L(1, 0, 10 * MS, 250 * P4K);
	struct tt_policy_summary s;

	(void)state;
	plan(&P, &l, 1, &s);
	assert_int_equal(l.status, TT_POLICY_ACCEPTED);
	assert_int_equal(l.evict_bytes, 1024000);
	assert_int_equal(l.final_bytes, 1024000);
	/* eq. 8: ts_B - szP/PR = 10 ms - 1.024 ms */
	assert_int_equal(l.prefetch_ns, 8976000);
	assert_int_equal(s.accepted, 1);
	assert_int_equal(s.modified, 0);
	assert_int_equal(s.dropped, 0);
	assert_int_equal(s.migrated_bytes, 1024000);
}

/* Boundary of eq. 6: IT exactly sz*MR + ST is accepted. */
static void test_evict_boundary(void **state)
{
	struct tt_policy_layer l = L(1, 0, 2048000 + 1 * MS, 250 * P4K);

	(void)state;
	plan(&P, &l, 1, NULL);
	assert_int_equal(l.status, TT_POLICY_ACCEPTED);
	l = L(1, 0, 2048000 + 1 * MS - 1, 250 * P4K);
	plan(&P, &l, 1, NULL);
	assert_int_equal(l.status, TT_POLICY_MODIFIED);
	/* (IT - ST)/MR = 2047999 ns / 2 = 1023999 B -> 249 pages */
	assert_int_equal(l.final_bytes, 249 * P4K);
}

/* Eq. 7: IT = 5 ms: (5 - 1) ms / 2 ns/B = 2,000,000 B -> 488 pages. */
static void test_evict_modified(void **state)
{
	struct tt_policy_layer l = L(1, 0, 5 * MS, 1000 * P4K);
	struct tt_policy_summary s;

	(void)state;
	plan(&P, &l, 1, &s);
	assert_int_equal(l.evict_bytes, 488 * P4K);
	assert_int_equal(l.final_bytes, 488 * P4K);
	assert_int_equal(l.status, TT_POLICY_MODIFIED);
	assert_int_equal(l.prefetch_ns, 5 * MS - 488 * P4K);
	assert_int_equal(s.modified, 1);
	assert_int_equal(s.migrated_bytes, 488 * P4K);
}

/* Asymmetric rates: ER = 1e9, PR = 3e9 -> 1/MR = 7.5e8 B/s. */
static void test_evict_modified_asymmetric(void **state)
{
	struct tt_policy_params p = P;
	struct tt_policy_layer l = L(1, 0, 3 * MS, 1000 * P4K);

	(void)state;
	p.pr_bps = 3000000000ULL;
	plan(&p, &l, 1, NULL);
	/* (3 - 1) ms * 0.75 B/ns = 1,500,000 B -> 366 pages */
	assert_int_equal(l.evict_bytes, 366 * P4K);
	assert_int_equal(l.status, TT_POLICY_MODIFIED);
	/* prefetch takes ceil(1499136 / 3) ns = 499712 ns */
	assert_int_equal(l.prefetch_ns, 3 * MS - 499712);
}

/* IT <= ST, a layer that saved nothing, and a tiny window: all dropped. */
static void test_evict_dropped(void **state)
{
	struct tt_policy_layer l[3] = {
		L(1, 0, MS / 2, 100 * P4K),	/* IT 0.5 ms < ST */
		L(2, 0, 10 * MS, 0),		/* nothing saved */
		L(3, 0, MS + 4000, 100 * P4K),	/* 2000 B fit: < a page */
	};
	struct tt_policy_summary s;

	(void)state;
	plan(&P, l, 3, &s);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(l[i].status, TT_POLICY_DROPPED);
		assert_int_equal(l[i].final_bytes, 0);
	}
	assert_int_equal(l[0].evict_bytes, 0);
	assert_int_equal(s.dropped, 3);
	assert_int_equal(s.migrated_bytes, 0);
}

/*
 * Eq. 9/10: X (ts_B 10 ms) prefetches 1000 pages from 5.904 ms; t_busy = 10.
 * Y (ts_B 12 ms) would start at 7.904 ms < t_busy: only (12-10) ms * 1 B/ns
 * = 2,000,000 B -> 488 pages fit, prefetched from 12 ms - 1,998,848 ns.
 * Layers are given in forward order; the policy sorts them by ts_B.
 */
static void test_prefetch_busy_modifies(void **state)
{
	struct tt_policy_layer l[2] = {
		L(1, 0, 12 * MS, 1000 * P4K),	/* Y: first in forward */
		L(2, 0, 10 * MS, 1000 * P4K),	/* X: first in backward */
	};
	struct tt_policy_summary s;

	(void)state;
	plan(&P, l, 2, &s);
	assert_int_equal(l[1].status, TT_POLICY_ACCEPTED);
	assert_int_equal(l[1].prefetch_ns, 10 * MS - 4096000);
	assert_int_equal(l[0].evict_bytes, 1000 * P4K);
	assert_int_equal(l[0].final_bytes, 488 * P4K);
	assert_int_equal(l[0].status, TT_POLICY_MODIFIED);
	assert_int_equal(l[0].prefetch_ns, 12 * MS - 488 * P4K);
	assert_int_equal(s.accepted, 1);
	assert_int_equal(s.modified, 1);
	assert_int_equal(s.migrated_bytes, 1488 * P4K);
}

/* Eq. 10 with ts_B <= t_busy: nothing fits, dropped. */
static void test_prefetch_busy_drops(void **state)
{
	struct tt_policy_layer l[2] = {
		L(1, 0, 10 * MS, 1000 * P4K),
		L(2, 0, 10 * MS, 1000 * P4K),	/* same ts_B, sorted after */
	};
	struct tt_policy_summary s;

	(void)state;
	plan(&P, l, 2, &s);
	assert_int_equal(l[0].status, TT_POLICY_ACCEPTED);
	assert_int_equal(l[1].status, TT_POLICY_DROPPED);
	assert_int_equal(l[1].evict_bytes, 1000 * P4K);
	assert_int_equal(s.dropped, 1);
}

/* Eq. 8 with t_start < 0 and t_busy = 0: modified to ts_B * PR. */
static void test_prefetch_before_iteration_start(void **state)
{
	struct tt_policy_params p = P;
	struct tt_policy_layer l = L(1, 0, 3 * MS, 1000 * P4K);

	(void)state;
	p.stay_ns = 0;
	p.er_bps = 1000000000000ULL;	/* eviction nearly free */
	plan(&p, &l, 1, NULL);
	/* szE: (3 ms)/(1/1e12 + 1/1e9) = 2,997,002 B -> 731 pages */
	assert_int_equal(l.evict_bytes, 731 * P4K);
	/* prefetch of 731 pages takes 2.994176 ms <= 3 ms: accepted as szE */
	assert_int_equal(l.final_bytes, 731 * P4K);
	assert_int_equal(l.prefetch_ns, 3 * MS - 731 * P4K);
}

/* Extension: lead time moves the trigger earlier and eats into eq. 10. */
static void test_lead_time(void **state)
{
	struct tt_policy_layer l = L(1, 0, 10 * MS, 250 * P4K);
	struct tt_policy_layer m[2] = {
		L(1, 0, 12 * MS, 1000 * P4K),
		L(2, 0, 10 * MS, 1000 * P4K),
	};

	(void)state;
	l.lead_ns = 2 * MS;
	plan(&P, &l, 1, NULL);
	assert_int_equal(l.status, TT_POLICY_ACCEPTED);
	assert_int_equal(l.prefetch_ns, 10 * MS - 1024000 - 2 * MS);
	m[0].lead_ns = MS;	/* window (12 - 10 - 1) ms -> 244 pages */
	plan(&P, m, 2, NULL);
	assert_int_equal(m[0].final_bytes, 244 * P4K);
	assert_int_equal(m[0].prefetch_ns, 12 * MS - 244 * P4K - MS);
}

static void test_bad_input(void **state)
{
	struct tt_policy_params p = P;
	struct tt_policy_layer l[2] = {
		L(1, 0, 10 * MS, P4K),
		L(2, 5 * MS, 4 * MS, P4K),	/* backward before forward end */
	};
	unsigned int order[2], bad = 99;

	(void)state;
	assert_int_equal(tt_policy_plan(&p, l, 2, order, NULL, &bad), -TT_POLICY_EINVAL);
	assert_int_equal(bad, 1);
	l[1] = L(2, 0, 4 * MS, P4K);
	l[1].bwd_end_ns = 3 * MS;	/* backward ends before it starts */
	assert_int_equal(tt_policy_plan(&p, l, 2, order, NULL, &bad), -TT_POLICY_EINVAL);
	l[1].bwd_end_ns = 4 * MS;
	p.er_bps = 0;
	assert_int_equal(tt_policy_plan(&p, l, 2, order, NULL, NULL), -TT_POLICY_EINVAL);
	p = P;
	p.page_size = 3000;
	assert_int_equal(tt_policy_plan(&p, l, 2, order, NULL, NULL), -TT_POLICY_EINVAL);
	p = P;
	assert_int_equal(tt_policy_plan(&p, l, 0, order, NULL, NULL), 0);
}

static void test_arithmetic(void **state)
{
	(void)state;
	assert_int_equal(tt_policy_xfer_ns(1000, 1000000000ULL), 1000);
	assert_int_equal(tt_policy_xfer_ns(1001, 2000000000ULL), 501);	/* up */
	assert_int_equal(tt_policy_xfer_ns(1, 0), ~0ULL);
	/* 1 TiB at 1 B/s does not fit in 64-bit ns: saturates */
	assert_int_equal(tt_policy_xfer_ns(1ULL << 40, 1), ~0ULL);
	/* 128-bit path: 2^40 ns at 2^40 B/s = 2^80/1e9 bytes */
	assert_int_equal(tt_policy_bytes_in(1ULL << 40, 1ULL << 40), 1208925819614629ULL);
	assert_int_equal(tt_policy_bytes_in(1500, 2000000000ULL), 3000);
	assert_int_equal(tt_policy_ewma(100, 200, 512), 150);
	assert_int_equal(tt_policy_ewma(200, 100, 256), 175);
	assert_int_equal(tt_policy_ewma(100, 200, 1024), 200);
	assert_int_equal(tt_policy_ewma(100, 200, 0), 100);
	/* the whole 64-bit range: rounded down toward old, no wrap */
	assert_int_equal(tt_policy_ewma(0, ~0ULL, 1023), 0xffbfffffffffffffULL);
	assert_int_equal(tt_policy_ewma(~0ULL, 0, 1023), 0x0040000000000000ULL);
	assert_int_equal(tt_policy_ewma(~0ULL, 0, 1), 0xffc0000000000000ULL);
	assert_int_equal(tt_policy_ewma(7, 9, 511), 7);
	assert_int_equal(tt_policy_ewma(9, 7, 513), 8);
	assert_string_equal(tt_policy_status_name(TT_POLICY_ACCEPTED), "accepted");
	assert_string_equal(tt_policy_status_name(TT_POLICY_MODIFIED), "modified");
	assert_string_equal(tt_policy_status_name(TT_POLICY_DROPPED), "dropped");
}

/*
 * One layer, 1000 pages (4.096 ms each way), live from 0 to 20 ms, evicted
 * 0..4.096 ms, prefetched 15.904..20 ms: the fast-tier area is
 * sz * 4.096 ms, so the average over 20 ms is sz * 0.2048 = 838,860 B.
 */
static void test_footprint_one_layer(void **state)
{
	struct tt_policy_layer l = L(1, 0, 20 * MS, 1000 * P4K);
	struct tt_policy_footprint f;

	(void)state;
	plan(&P, &l, 1, NULL);
	tt_policy_footprint(&P, &l, 1, &f);
	assert_int_equal(f.end_ns, 20 * MS);
	assert_int_equal(f.base_avg_bytes, 1000 * P4K);
	assert_int_equal(f.base_peak_bytes, 1000 * P4K);
	assert_int_equal(f.avg_bytes, 838860);
	assert_int_equal(f.peak_bytes, 1000 * P4K);	/* at fwd_end */
	assert_int_equal(f.oracle_avg_bytes, 0);
	assert_int_equal(f.oracle_peak_bytes, 0);
}

/*
 * Two nested layers (a CNN-like shape): A saved 0..40 ms (backward 30..40),
 * B saved 10..30 ms (backward 20..30). Without tiering both are live from
 * 10 to 30 ms: peak 2 sz. The oracle keeps only the layer in backward.
 */
static void test_footprint_two_layers(void **state)
{
	struct tt_policy_layer l[2] = {
		L(1, 0, 30 * MS, 1000 * P4K),
		L(2, 10 * MS, 20 * MS, 1000 * P4K),
	};
	struct tt_policy_footprint f;
	unsigned long long sz = 1000 * P4K;

	(void)state;
	l[0].bwd_end_ns = 40 * MS;
	l[1].bwd_end_ns = 30 * MS;
	plan(&P, l, 2, NULL);
	assert_int_equal(l[0].status, TT_POLICY_ACCEPTED);
	assert_int_equal(l[1].status, TT_POLICY_ACCEPTED);
	tt_policy_footprint(&P, l, 2, &f);
	assert_int_equal(f.base_peak_bytes, 2 * sz);
	assert_int_equal(f.base_avg_bytes, sz * 60 / 40);
	assert_int_equal(f.oracle_peak_bytes, sz);
	assert_int_equal(f.oracle_avg_bytes, sz * 20 / 40);
	assert_true(f.avg_bytes < f.base_avg_bytes / 2);
	assert_true(f.peak_bytes <= f.base_peak_bytes);
	assert_true(f.avg_bytes >= f.oracle_avg_bytes);
}

/*
 * The ALAP extension against the reference, at a boundary where the saved
 * size shrinks. Layer 0: te_F 10 ms, ts_B 200 ms, 10000 pages (40.96 ms
 * each way); layer 1: te_F 50, ts_B 180, 2500 pages (10.24 ms); layer 2:
 * te_F 150, ts_B 152, 122 pages (IT = 2 ms >= 2 * 0.499712 + 1: accepted).
 */
static void boundary(struct tt_policy_layer *l)
{
	l[0] = L(0, 10 * MS, 200 * MS, 10000 * P4K);
	l[1] = L(1, 50 * MS, 180 * MS, 2500 * P4K);
	l[2] = L(2, 150 * MS, 152 * MS, 122 * P4K);
}

static void test_alap_reference(void **state)
{
	struct tt_policy_layer l[3];
	struct tt_policy_summary s;

	(void)state;
	boundary(l);
	plan(&P, l, 3, &s);
	/* layer 2: 152 - 0.499712 ms; t_busy = 152 */
	assert_int_equal(l[2].status, TT_POLICY_ACCEPTED);
	assert_int_equal(l[2].prefetch_ns, 152 * MS - 499712);
	/* layer 1: 180 - 10.24 >= 152: accepted; t_busy = 180 */
	assert_int_equal(l[1].status, TT_POLICY_ACCEPTED);
	assert_int_equal(l[1].prefetch_ns, 180 * MS - 10240000);
	/* layer 0: 200 - 40.96 < 180: (200 - 180) ms * 1 B/ns -> 4882 pages */
	assert_int_equal(l[0].status, TT_POLICY_MODIFIED);
	assert_int_equal(l[0].final_bytes, 4882 * P4K);
	assert_int_equal(l[0].prefetch_ns, 200 * MS - 4882 * P4K);
	assert_int_equal(s.accepted, 2);
	assert_int_equal(s.modified, 1);
	assert_int_equal(s.migrated_bytes, (4882 + 2500 + 122) * P4K);
}

static void test_alap(void **state)
{
	struct tt_policy_params p = P;
	struct tt_policy_layer l[3];
	struct tt_policy_summary s;

	(void)state;
	p.alap = 1;
	boundary(l);
	plan(&p, l, 3, &s);
	/* layer 0 first: ends at 200, all of it: starts 159.04; queue free
	 * until then */
	assert_int_equal(l[0].status, TT_POLICY_ACCEPTED);
	assert_int_equal(l[0].final_bytes, 10000 * P4K);
	assert_int_equal(l[0].prefetch_ns, 200 * MS - 40960000);
	/* layer 1: ends at 159.04 (< 180), its eviction ended at 61.24 */
	assert_int_equal(l[1].status, TT_POLICY_ACCEPTED);
	assert_int_equal(l[1].prefetch_ns, 200 * MS - 40960000 - 10240000);
	/* layer 2: would have to end by 148.8 but its eviction + ST ends at
	 * 151.499712: dropped */
	assert_int_equal(l[2].status, TT_POLICY_DROPPED);
	assert_int_equal(l[2].final_bytes, 0);
	assert_int_equal(s.accepted, 2);
	assert_int_equal(s.dropped, 1);
	assert_int_equal(s.migrated_bytes, (10000 + 2500) * P4K);

	/* squeezed by the eviction bound: layer 1 evicted only at 140 ms:
	 * 140 + 10.24 + 1 = 151.24, window to 159.04 = 7.8 ms -> 1904 pages */
	boundary(l);
	l[1].fwd_start_ns = l[1].fwd_end_ns = 140 * MS;
	plan(&p, l, 3, &s);
	assert_int_equal(l[1].status, TT_POLICY_MODIFIED);
	assert_int_equal(l[1].final_bytes, 1904 * P4K);
	assert_int_equal(l[1].prefetch_ns, 159040000 - 1904 * P4K);
	/* the queue is then free from there: layer 2 must end by
	 * 159.04 - 7.798784 = 151.241216 < 151.499712: still dropped */
	assert_int_equal(l[2].status, TT_POLICY_DROPPED);

	/* a lead ends the prefetch that much before ts_B */
	boundary(l);
	l[0].lead_ns = 5 * MS;
	plan(&p, l, 3, &s);
	assert_int_equal(l[0].prefetch_ns, 195 * MS - 40960000);
	assert_int_equal(l[1].prefetch_ns, 195 * MS - 40960000 - 10240000);
}

/*
 * ALAP in deadline order: layer 0 (ts_B 200 ms, lead 30 ms: deadline 170)
 * and layer 1 (ts_B 180 ms, no lead), 2500 pages each (10.24 ms). Layer 1
 * is placed first, ending at its own ts_B; layer 0 before it. Placed in
 * ts_B order instead, layer 0's lead would push layer 1 back to 159.76 -
 * 10.24 ms, 20 ms earlier than it needs. @order is the backward order
 * still.
 */
static void test_alap_deadline(void **state)
{
	struct tt_policy_params p = P;
	struct tt_policy_layer l[2] = {
		L(0, 10 * MS, 200 * MS, 2500 * P4K),
		L(1, 50 * MS, 180 * MS, 2500 * P4K),
	};
	unsigned int order[2];

	(void)state;
	p.alap = 1;
	l[0].lead_ns = 30 * MS;
	assert_int_equal(tt_policy_plan(&p, l, 2, order, NULL, NULL), 0);
	assert_int_equal(l[1].status, TT_POLICY_ACCEPTED);
	assert_int_equal(l[1].prefetch_ns, 180 * MS - 10240000);
	assert_int_equal(l[0].status, TT_POLICY_ACCEPTED);
	assert_int_equal(l[0].prefetch_ns, 180 * MS - 2 * 10240000);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 0);
	/* equal deadlines: ts_B, as without leads */
	l[0].lead_ns = 20 * MS;
	assert_int_equal(tt_policy_plan(&p, l, 2, order, NULL, NULL), 0);
	assert_int_equal(l[0].prefetch_ns, 180 * MS - 10240000);
	assert_int_equal(l[1].prefetch_ns, 180 * MS - 2 * 10240000);
}

/*
 * The plan's backward order (the @order it leaves: ts_B, ties by index)
 * for ts_B nondecreasing, nonincreasing with runs of ties (the events of
 * one batch share a time), and mixed, against a selection sort.
 */
static void test_backward_order(void **state)
{
	static const unsigned long long bs[][12] = {
		{ 1, 2, 3, 3, 3, 4, 5, 6, 6, 7, 8, 9 },		/* up */
		{ 9, 8, 8, 8, 7, 6, 6, 5, 4, 3, 3, 2 },		/* down, runs */
		{ 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5 },		/* one run */
		{ 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1 },	/* reverse */
		{ 3, 9, 1, 4, 4, 8, 2, 7, 5, 6, 0, 4 },		/* mixed */
		{ 9, 9, 8, 8, 9, 7, 6, 5, 4, 3, 2, 1 },		/* almost down */
	};
	struct tt_policy_layer l[12];
	unsigned int order[12], want[12], c, i, j, n;

	(void)state;
	for (c = 0; c < sizeof(bs) / sizeof(bs[0]); c++) {
		for (n = 1; n <= 12; n++) {
			for (i = 0; i < n; i++)
				l[i] = L(i, 0, 10 * MS + bs[c][i] * MS, 0);
			assert_int_equal(tt_policy_plan(&P, l, n, order, NULL, NULL), 0);
			for (i = 0; i < n; i++)
				want[i] = i;
			for (i = 0; i < n; i++)
				for (j = i + 1; j < n; j++)
					if (bs[c][want[j]] < bs[c][want[i]] ||
					    (bs[c][want[j]] == bs[c][want[i]] &&
					     want[j] < want[i])) {
						unsigned int t = want[i];

						want[i] = want[j];
						want[j] = t;
					}
			for (i = 0; i < n; i++)
				assert_int_equal(order[i], want[i]);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evict_accepted),
		cmocka_unit_test(test_evict_boundary),
		cmocka_unit_test(test_evict_modified),
		cmocka_unit_test(test_evict_modified_asymmetric),
		cmocka_unit_test(test_evict_dropped),
		cmocka_unit_test(test_prefetch_busy_modifies),
		cmocka_unit_test(test_prefetch_busy_drops),
		cmocka_unit_test(test_prefetch_before_iteration_start),
		cmocka_unit_test(test_lead_time),
		cmocka_unit_test(test_alap_reference),
		cmocka_unit_test(test_alap),
		cmocka_unit_test(test_alap_deadline),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_arithmetic),
		cmocka_unit_test(test_footprint_one_layer),
		cmocka_unit_test(test_footprint_two_layers),
		cmocka_unit_test(test_backward_order),
	};

	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
