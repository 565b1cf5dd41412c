// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fuzz_policy.c - libFuzzer harness of core/policy.c, the plan every
 * TT_IOC_SET_SCHED and iteration makes from user-influenced rates, stay
 * time and profile.
 *
 * Each input is a sequence of calls: tt_policy_plan() on a profile of up
 * to 48 layers (arrays of exactly that size: the layers, the order
 * scratch and the harness's own deadline order), tt_policy_footprint() on
 * the plan, and the arithmetic helpers (tt_policy_xfer_ns,
 * tt_policy_bytes_in, tt_policy_ewma) against 128-bit references. After a plan: the errno and *bad as policy.h states them;
 * per layer final <= evict <= saved, page multiples unless whole, the
 * status matching the sizes, the prefetch before the backward pass; the
 * reference plan's single queue never runs two prefetches at once, ALAP's
 * prefetches start after their eviction and stay and end before the next
 * one in deadline order (ts_B - lead); the summary's counts.
 */
#include "../../policy.h"
#include "fuzz.h"

#define FZ_MAX_LAYERS	48

static const u64 ns_per_s = 1000000000ULL;

static u64 sat(fz_u128 v)
{
	return v > ~0ULL ? ~0ULL : (u64)v;
}

static u64 ref_xfer(u64 bytes, u64 bps)
{
	fz_u128 num = (fz_u128)bytes * ns_per_s;

	if (!bps)
		return ~0ULL;
	return sat((num + bps - 1) / bps);
}

/* ALAP's order: deadline ts_B - lead (0 if the lead is longer), ts_B, index. */
static u64 deadline(const struct tt_policy_layer *x)
{
	return x->bwd_start_ns > x->lead_ns ? x->bwd_start_ns - x->lead_ns : 0;
}

static int dl_before(const struct tt_policy_layer *a, unsigned int ia,
		     const struct tt_policy_layer *b, unsigned int ib)
{
	if (deadline(a) != deadline(b))
		return deadline(a) < deadline(b);
	if (a->bwd_start_ns != b->bwd_start_ns)
		return a->bwd_start_ns < b->bwd_start_ns;
	return ia < ib;
}

static u64 ref_bytes_in(u64 ns, u64 bps)
{
	return sat((fz_u128)ns * bps / ns_per_s);
}

static void op_arith(struct fz *f)
{
	u64 a = fz_u64(f), b = fz_u64(f), r;
	unsigned int w = fz_u16(f) % 1100;

	r = tt_policy_xfer_ns(a, b);
	FZ_CHECK(r == ref_xfer(a, b), "xfer_ns(%llu, %llu) = %llu", a, b, r);
	r = tt_policy_bytes_in(a, b);
	FZ_CHECK(r == ref_bytes_in(a, b), "bytes_in(%llu, %llu) = %llu", a, b, r);
	r = tt_policy_ewma(a, b, w);
	if (!w)
		FZ_CHECK(r == a, "ewma weight 0");
	else if (w >= 1024)
		FZ_CHECK(r == b, "ewma weight %u", w);
	else
		FZ_CHECK(r == (b >= a ? a + (u64)((fz_u128)(b - a) * w / 1024) :
				       a - (u64)((fz_u128)(a - b) * w / 1024)),
			 "ewma(%llu, %llu, %u) = %llu", a, b, w, r);
}

static u64 fz_time(struct fz *f, u64 prev)
{
	u64 d;

	switch (fz_u8(f) % 4) {
	case 0:
		return prev;
	case 1:				/* out of order, sometimes */
		return fz_u64(f);
	default:
		d = fz_u64(f);
		return prev + d < prev ? ~0ULL : prev + d;
	}
}

static void op_plan(struct fz *f)
{
	struct tt_policy_params p = { 0 };
	unsigned int n = fz_u8(f) % (FZ_MAX_LAYERS + 1), i, bad = ~0U, want_bad = ~0U;
	struct tt_policy_layer *l = fz_alloc(n, sizeof(*l));
	unsigned int *order = fz_alloc(n, sizeof(*order));
	unsigned int *dl = fz_alloc(n, sizeof(*dl));
	struct tt_policy_summary sum;
	unsigned int cnt[3] = { 0 };
	u64 mig = 0, busy;
	fz_u128 saved = 0;
	int ret, want = 0;

	p.er_bps = fz_u8(f) % 8 ? fz_u64(f) : 0;
	p.pr_bps = fz_u8(f) % 8 ? fz_u64(f) : 0;
	p.stay_ns = fz_u64(f);
	p.page_size = fz_u8(f) % 8 ? fz_pow2(f, 0, 63) : fz_u64(f);
	p.alap = fz_u8(f) & 1;
	for (i = 0; i < n; i++) {
		l[i].layer = i;
		l[i].fwd_start_ns = fz_u64(f);
		l[i].fwd_end_ns = fz_time(f, l[i].fwd_start_ns);
		l[i].bwd_start_ns = fz_time(f, l[i].fwd_end_ns);
		l[i].bwd_end_ns = fz_time(f, l[i].bwd_start_ns);
		l[i].saved_bytes = fz_u64(f);
		l[i].lead_ns = fz_u8(f) % 4 ? 0 : fz_u64(f);
		saved += l[i].saved_bytes;
		if (want_bad == ~0U &&
		    (l[i].fwd_start_ns > l[i].fwd_end_ns ||
		     l[i].fwd_end_ns > l[i].bwd_start_ns ||
		     l[i].bwd_start_ns > l[i].bwd_end_ns))
			want_bad = i;
	}
	if (!p.er_bps || !p.pr_bps || !p.page_size ||
	    (p.page_size & (p.page_size - 1))) {
		want = -TT_POLICY_EINVAL;
		want_bad = ~0U;		/* the parameters are checked first */
	} else if (want_bad != ~0U)
		want = -TT_POLICY_EINVAL;
	else
		want_bad = ~0U;
	ret = tt_policy_plan(&p, l, n, order, &sum, &bad);
	FZ_CHECK(ret == want, "plan returned %d, should %d", ret, want);
	FZ_CHECK(bad == want_bad, "*bad %u, should %u", bad, want_bad);
	if (ret)
		goto out;
	for (i = 0; i < n; i++) {
		const struct tt_policy_layer *x = &l[i];
		u64 mask = p.page_size - 1;

		FZ_CHECK(x->final_bytes <= x->evict_bytes &&
			 x->evict_bytes <= x->saved_bytes,
			 "layer %u: final %llu evict %llu saved %llu", i,
			 x->final_bytes, x->evict_bytes, x->saved_bytes);
		FZ_CHECK(x->evict_bytes == x->saved_bytes || !(x->evict_bytes & mask),
			 "layer %u: partial eviction %llu not in pages", i,
			 x->evict_bytes);
		FZ_CHECK(x->final_bytes == x->evict_bytes || !(x->final_bytes & mask),
			 "layer %u: partial prefetch %llu not in pages", i,
			 x->final_bytes);
		FZ_CHECK(x->status == (!x->final_bytes ? TT_POLICY_DROPPED :
				       x->final_bytes < x->saved_bytes ?
				       TT_POLICY_MODIFIED : TT_POLICY_ACCEPTED),
			 "layer %u: status %d for %llu of %llu", i, x->status,
			 x->final_bytes, x->saved_bytes);
		if (x->final_bytes)
			FZ_CHECK(x->prefetch_ns <= x->bwd_start_ns,
				 "layer %u: prefetch at %llu after ts_B %llu", i,
				 x->prefetch_ns, x->bwd_start_ns);
		cnt[x->status]++;
		mig += x->final_bytes;
	}
	FZ_CHECK(sum.accepted == cnt[TT_POLICY_ACCEPTED] &&
		 sum.modified == cnt[TT_POLICY_MODIFIED] &&
		 sum.dropped == cnt[TT_POLICY_DROPPED] &&
		 sum.migrated_bytes == mig, "summary");
	/* the serial queue, in the order the plan took the layers */
	for (i = 0; i < n; i++)
		FZ_CHECK(order[i] < n, "order[%u] = %u", i, order[i]);
	busy = 0;
	for (i = 0; i < n; i++) {
		const struct tt_policy_layer *x = &l[order[i]];

		if (i)
			FZ_CHECK(l[order[i - 1]].bwd_start_ns <= x->bwd_start_ns,
				 "backward order");
		if (!x->final_bytes || p.alap)
			continue;
		/* eq. 8-10: starts once the previous one's ts_B passed */
		FZ_CHECK(x->prefetch_ns >= busy,
			 "layer %u's prefetch at %llu overlaps the queue busy until %llu",
			 order[i], x->prefetch_ns, busy);
		busy = x->bwd_start_ns;
	}
	/* ALAP's queue: in deadline order (ts_B - lead, ts_B, index) */
	for (i = 0; i < n; i++) {
		unsigned int j = i;

		dl[i] = i;
		while (j && dl_before(&l[dl[j]], dl[j], &l[dl[j - 1]],
				      dl[j - 1])) {
			unsigned int t = dl[j];

			dl[j] = dl[j - 1];
			dl[--j] = t;
		}
	}
	busy = ~0ULL;
	for (i = n; p.alap && i-- > 0;) {
		const struct tt_policy_layer *x = &l[dl[i]];
		u64 dur, earliest;

		if (!x->final_bytes)
			continue;
		dur = ref_xfer(x->final_bytes, p.pr_bps);
		earliest = sat((fz_u128)x->fwd_end_ns +
			       ref_xfer(x->evict_bytes, p.er_bps) + p.stay_ns);
		FZ_CHECK(x->prefetch_ns >= earliest,
			 "ALAP layer %u prefetches at %llu before its eviction and stay end (%llu)",
			 dl[i], x->prefetch_ns, earliest);
		FZ_CHECK((fz_u128)x->prefetch_ns + dur <= busy &&
			 (fz_u128)x->prefetch_ns + dur + x->lead_ns <= x->bwd_start_ns,
			 "ALAP layer %u's prefetch [%llu, +%llu) ends too late",
			 dl[i], x->prefetch_ns, dur);
		busy = x->prefetch_ns;
	}
	if (n <= 16 && saved < (1ULL << 62)) {
		struct tt_policy_footprint fp;
		u64 end = 0;

		tt_policy_footprint(&p, l, n, &fp);
		for (i = 0; i < n; i++)
			end = l[i].bwd_end_ns > end ? l[i].bwd_end_ns : end;
		FZ_CHECK(fp.end_ns == end, "footprint end %llu", fp.end_ns);
		FZ_CHECK(fp.peak_bytes <= fp.base_peak_bytes &&
			 fp.avg_bytes <= fp.base_avg_bytes,
			 "tiering grew the footprint: peak %llu > %llu or avg %llu > %llu",
			 fp.peak_bytes, fp.base_peak_bytes, fp.avg_bytes,
			 fp.base_avg_bytes);
		FZ_CHECK(fp.base_peak_bytes <= (u64)saved &&
			 fp.oracle_peak_bytes <= (u64)saved,
			 "a peak above all saved bytes");
	}
out:
	free(l);
	free(order);
	free(dl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	unsigned int k;

	for (k = 0; k < 16 && fz_more(&f); k++) {
		if (fz_u8(&f) % 4)
			op_plan(&f);
		else
			op_arith(&f);
	}
	return 0;
}
