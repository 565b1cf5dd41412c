// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * policy.c - TierTrain's queueing system, the one implementation.
 *
 * No includes besides policy.h and no library calls: this file is compiled
 * into the kernel module and into userspace (tierctl simulate, bench/train,
 * the cmocka tests). See policy.h for the semantics.
 *
 * Arithmetic: products of a size and a time can exceed 64 bits, so they are
 * formed as 128-bit products (one mulq on x86-64, no library helper) and
 * divided by a 64-bit divisor with a bitwise long division written here,
 * because 128-bit division needs libgcc's __udivti3, which the kernel lacks.
 */
#include "heapsort.h"
#include "policy.h"

#define NSEC_PER_SEC_ULL 1000000000ULL
#define U64_MAX_ULL (~0ULL)

/*
 * (hi:lo) / c with the quotient known to fit 64 bits (hi < c); *rem gets the
 * remainder. Restoring long division, one quotient bit per step.
 */
static unsigned long long div128(unsigned long long hi, unsigned long long lo,
				 unsigned long long c, unsigned long long *rem)
{
	unsigned long long q = 0;
	int i;

	for (i = 63; i >= 0; i--) {
		unsigned long long carry = hi >> 63;

		hi = (hi << 1) | ((lo >> i) & 1);
		q <<= 1;
		if (carry || hi >= c) {
			hi -= c;
			q |= 1;
		}
	}
	*rem = hi;
	return q;
}

/* a * b / c, rounded down (or up with @up); saturates at U64_MAX. */
static unsigned long long mul_div(unsigned long long a, unsigned long long b,
				  unsigned long long c, int up)
{
	unsigned __int128 prod = (unsigned __int128)a * b;
	unsigned long long hi = (unsigned long long)(prod >> 64);
	unsigned long long lo = (unsigned long long)prod, q, r;

	if (!c)
		return U64_MAX_ULL;
	if (!hi) {
		q = lo / c;
		r = lo % c;
	} else {
		if (hi >= c)
			return U64_MAX_ULL;
		q = div128(hi, lo, c, &r);
	}
	if (up && r) {
		if (q == U64_MAX_ULL)
			return U64_MAX_ULL;
		q++;
	}
	return q;
}

static unsigned long long sat_add(unsigned long long a, unsigned long long b)
{
	return a + b < a ? U64_MAX_ULL : a + b;
}

static unsigned long long min_u64(unsigned long long a, unsigned long long b)
{
	return a < b ? a : b;
}

static unsigned long long max_u64(unsigned long long a, unsigned long long b)
{
	return a > b ? a : b;
}

unsigned long long tt_policy_xfer_ns(unsigned long long bytes, unsigned long long bps)
{
	if (!bps)
		return U64_MAX_ULL;
	return mul_div(bytes, NSEC_PER_SEC_ULL, bps, 1);
}

unsigned long long tt_policy_bytes_in(unsigned long long ns, unsigned long long bps)
{
	return mul_div(ns, bps, NSEC_PER_SEC_ULL, 0);
}

unsigned long long tt_policy_ewma(unsigned long long old,
				  unsigned long long sample, unsigned int weight)
{
	if (weight >= 1024 || !weight)
		return weight ? sample : old;
	/* mul_div(d, weight, 1024, 0) as a shift: d * weight / 1024 < d */
	if (sample >= old)
		return old + (unsigned long long)
			(((unsigned __int128)(sample - old) * weight) >> 10);
	return old - (unsigned long long)
		(((unsigned __int128)(old - sample) * weight) >> 10);
}

const char *tt_policy_status_name(enum tt_policy_status s)
{
	switch (s) {
	case TT_POLICY_ACCEPTED:
		return "accepted";
	case TT_POLICY_MODIFIED:
		return "modified";
	case TT_POLICY_DROPPED:
		return "dropped";
	}
	return "unknown";
}

/* Backward order: increasing bwd_start, ties by layer index (stable). */
/* Backward order of layer indexes (@ctx: the layers): ts_B, then index. */
static int before(const void *x, const void *y, const void *ctx)
{
	const struct tt_policy_layer *l = ctx;
	unsigned int a = *(const unsigned int *)x, b = *(const unsigned int *)y;

	if (l[a].bwd_start_ns != l[b].bwd_start_ns)
		return l[a].bwd_start_ns < l[b].bwd_start_ns;
	return a < b;
}

/*
 * The index array in backward order: in place, no allocation. A training
 * runs its backward pass in the reverse of its forward one, so ts_B is
 * usually already nondecreasing or nonincreasing along the layers (equal
 * for the events of one batch): both are looked for in O(n) and laid out
 * directly, else the array is sorted. The order is the same either way
 * (@before is a strict total order).
 */
static void sort_backward(const struct tt_policy_layer *l, unsigned int *o,
			  unsigned int n)
{
	unsigned int i, j, k, up = 1, down = 1;

	for (i = 1; i < n && (up || down); i++) {
		if (l[i].bwd_start_ns < l[i - 1].bwd_start_ns)
			up = 0;
		if (l[i].bwd_start_ns > l[i - 1].bwd_start_ns)
			down = 0;
	}
	if (up) {
		for (i = 0; i < n; i++)
			o[i] = i;
		return;
	}
	if (down) {
		/* the runs of equal ts_B from the last, each by index */
		for (k = 0, j = n; j > 0; j = i) {
			for (i = j - 1; i > 0 &&
			     l[i - 1].bwd_start_ns == l[j - 1].bwd_start_ns; i--)
				;
			for (; k < n - i; k++)
				o[k] = i + k - (n - j);
		}
		return;
	}
	for (i = 0; i < n; i++)
		o[i] = i;
	tt_heapsort(o, n, sizeof(*o), before, l);
}

/* Eq. 6/7: how much of the layer the idle time (less the lead) allows to evict. */
static unsigned long long evict_size(const struct tt_policy_params *p,
				     const struct tt_policy_layer *l)
{
	unsigned long long sz = l->saved_bytes, it, need, reff, sze;

	if (!sz)
		return 0;
	/* lead extension: the prefetch ends lead_ns before ts_B */
	it = l->bwd_start_ns - l->fwd_end_ns;
	it = it > l->lead_ns ? it - l->lead_ns : 0;
	need = sat_add(sat_add(tt_policy_xfer_ns(sz, p->er_bps),
			       tt_policy_xfer_ns(sz, p->pr_bps)), p->stay_ns);
	if (it >= need)
		return sz;
	if (it <= p->stay_ns)
		return 0;
	/* (IT - ST) / MR with 1/MR = ER*PR / (ER + PR), the combined rate */
	reff = mul_div(p->er_bps, p->pr_bps, sat_add(p->er_bps, p->pr_bps), 0);
	sze = tt_policy_bytes_in(it - p->stay_ns, reff);
	sze = min_u64(sze, sz);
	return sze & ~(p->page_size - 1);
}

/* Status from the final size. */
static void set_status(struct tt_policy_layer *l)
{
	if (!l->final_bytes)
		l->status = TT_POLICY_DROPPED;
	else if (l->final_bytes < l->saved_bytes)
		l->status = TT_POLICY_MODIFIED;
	else
		l->status = TT_POLICY_ACCEPTED;
}

/* Eq. 8-10: layers in increasing ts_B, one serial queue, just in time. */
static void plan_reference(const struct tt_policy_params *p,
			   struct tt_policy_layer *layers, unsigned int n,
			   const unsigned int *order)
{
	unsigned long long t_busy = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct tt_policy_layer *l = &layers[order[i]];
		unsigned long long ts_b = l->bwd_start_ns, szp = 0, dur;

		if (l->evict_bytes) {
			/* eq. 8 (+ lead extension): when the prefetch must start */
			dur = sat_add(tt_policy_xfer_ns(l->evict_bytes, p->pr_bps),
				      l->lead_ns);
			if (dur <= ts_b && t_busy <= ts_b - dur)
				szp = l->evict_bytes;			/* eq. 9 */
			else if (ts_b > sat_add(t_busy, l->lead_ns))	/* eq. 10 */
				szp = min_u64(tt_policy_bytes_in(ts_b - t_busy - l->lead_ns,
								 p->pr_bps) &
					      ~(p->page_size - 1),
					      l->evict_bytes);
		}
		l->final_bytes = szp;
		if (szp) {
			dur = sat_add(tt_policy_xfer_ns(szp, p->pr_bps), l->lead_ns);
			l->prefetch_ns = dur <= ts_b ? ts_b - dur : 0;
			t_busy = ts_b;
		} else {
			l->prefetch_ns = 0;
		}
		set_status(l);
	}
}

/* ALAP's deadline of a layer: ts_B - lead (0 when the lead is longer). */
static unsigned long long deadline(const struct tt_policy_layer *l)
{
	return l->bwd_start_ns > l->lead_ns ? l->bwd_start_ns - l->lead_ns : 0;
}

/* Strict total order: deadline, then ts_B, then index. */
static int deadline_before(const void *x, const void *y, const void *ctx)
{
	const struct tt_policy_layer *l = ctx;
	unsigned int a = *(const unsigned int *)x, b = *(const unsigned int *)y;

	if (deadline(&l[a]) != deadline(&l[b]))
		return deadline(&l[a]) < deadline(&l[b]);
	if (l[a].bwd_start_ns != l[b].bwd_start_ns)
		return l[a].bwd_start_ns < l[b].bwd_start_ns;
	return a < b;
}

/*
 * The ALAP extension: layers in decreasing deadline (ts_B - lead; @order
 * is sorted so, in place); each prefetch ends by min(its deadline, the
 * start of the one placed after it) and starts no earlier than its
 * eviction can have ended and stayed (te_F + szE/ER + ST).
 */
static void plan_alap(const struct tt_policy_params *p,
		      struct tt_policy_layer *layers, unsigned int n,
		      unsigned int *order)
{
	unsigned long long t_free = ~0ULL;
	unsigned int i;

	tt_heapsort(order, n, sizeof(*order), deadline_before, layers);
	for (i = n; i-- > 0;) {
		struct tt_policy_layer *l = &layers[order[i]];
		unsigned long long end, earliest, szp = 0;

		l->final_bytes = 0;
		l->prefetch_ns = 0;
		if (l->evict_bytes && l->bwd_start_ns > l->lead_ns) {
			end = min_u64(l->bwd_start_ns - l->lead_ns, t_free);
			earliest = sat_add(sat_add(l->fwd_end_ns,
						   tt_policy_xfer_ns(l->evict_bytes,
								     p->er_bps)),
					   p->stay_ns);
			if (end > earliest)
				szp = min_u64(tt_policy_bytes_in(end - earliest,
								 p->pr_bps) &
					      ~(p->page_size - 1),
					      l->evict_bytes);
			if (szp) {
				unsigned long long dur =
					tt_policy_xfer_ns(szp, p->pr_bps);

				l->final_bytes = szp;
				l->prefetch_ns = dur <= end ? end - dur : 0;
				t_free = l->prefetch_ns;
			}
		}
		set_status(l);
	}
}

int tt_policy_plan(const struct tt_policy_params *p,
		   struct tt_policy_layer *layers, unsigned int n,
		   unsigned int *order, struct tt_policy_summary *sum,
		   unsigned int *bad)
{
	unsigned int i;

	if (sum) {
		sum->accepted = 0;
		sum->modified = 0;
		sum->dropped = 0;
		sum->migrated_bytes = 0;
	}
	if (!p->er_bps || !p->pr_bps || !p->page_size ||
	    (p->page_size & (p->page_size - 1)))
		return -TT_POLICY_EINVAL;
	for (i = 0; i < n; i++) {
		const struct tt_policy_layer *l = &layers[i];

		if (l->fwd_start_ns > l->fwd_end_ns ||
		    l->fwd_end_ns > l->bwd_start_ns ||
		    l->bwd_start_ns > l->bwd_end_ns) {
			if (bad)
				*bad = i;
			return -TT_POLICY_EINVAL;
		}
	}

	for (i = 0; i < n; i++)
		layers[i].evict_bytes = evict_size(p, &layers[i]);

	if (p->alap) {
		for (i = 0; i < n; i++)
			order[i] = i;
		plan_alap(p, layers, n, order);
	}
	sort_backward(layers, order, n);
	if (!p->alap)
		plan_reference(p, layers, n, order);
	for (i = 0; sum && i < n; i++) {
		const struct tt_policy_layer *l = &layers[i];

		if (l->status == TT_POLICY_ACCEPTED)
			sum->accepted++;
		else if (l->status == TT_POLICY_MODIFIED)
			sum->modified++;
		else
			sum->dropped++;
		sum->migrated_bytes += l->final_bytes;
	}
	return 0;
}

/*
 * The evicted part of a layer as a trapezoid over time: it ramps up from
 * fwd_end over the eviction (e0..e1), stays, and ramps down over the
 * prefetch (p0..p1). The prefetch is not modelled to start before the
 * eviction ends, and ends by bwd_end at the latest.
 */
struct trap {
	unsigned long long e0, e1, p0, p1, bytes;
};

static void layer_trap(const struct tt_policy_params *p,
		       const struct tt_policy_layer *l, struct trap *t)
{
	unsigned long long dp;

	t->bytes = l->status == TT_POLICY_DROPPED ? 0 : l->final_bytes;
	t->e0 = l->fwd_end_ns;
	t->e1 = min_u64(sat_add(t->e0, tt_policy_xfer_ns(t->bytes, p->er_bps)),
			l->bwd_end_ns);
	dp = tt_policy_xfer_ns(t->bytes, p->pr_bps);
	t->p0 = min_u64(max_u64(l->prefetch_ns, t->e1), l->bwd_end_ns);
	t->p1 = min_u64(sat_add(t->p0, dp), l->bwd_end_ns);
}

/* Evicted bytes of a layer at time t (continuous in t). */
static unsigned long long trap_at(const struct trap *t, unsigned long long at)
{
	if (!t->bytes || at <= t->e0 || at >= t->p1)
		return 0;
	if (at < t->e1)
		return mul_div(t->bytes, at - t->e0, t->e1 - t->e0, 0);
	if (at <= t->p0)
		return t->bytes;
	return mul_div(t->bytes, t->p1 - at, t->p1 - t->p0, 0);
}

/* Area under the trapezoid, in byte-nanoseconds, as a 128-bit value. */
static unsigned __int128 trap_area(const struct trap *t)
{
	unsigned __int128 a = (unsigned __int128)t->bytes *
		((t->e1 - t->e0) + (t->p1 - t->p0));

	return (a >> 1) + (unsigned __int128)t->bytes * (t->p0 - t->e1);
}

enum side { LEFT, RIGHT };

/* Bytes of a layer on the fast tier at time t, as left or right limit. */
static void layer_at(const struct tt_policy_params *p,
		     const struct tt_policy_layer *l, unsigned long long at, enum side s,
		     unsigned long long *base, unsigned long long *tiered,
		     unsigned long long *oracle)
{
	int live, olive;
	struct trap t;

	if (s == RIGHT) {
		live = at >= l->fwd_end_ns && at < l->bwd_end_ns;
		olive = at >= l->bwd_start_ns && at < l->bwd_end_ns;
	} else {
		live = at > l->fwd_end_ns && at <= l->bwd_end_ns;
		olive = at > l->bwd_start_ns && at <= l->bwd_end_ns;
	}
	*base = live ? l->saved_bytes : 0;
	*oracle = olive ? l->saved_bytes : 0;
	layer_trap(p, l, &t);
	*tiered = live ? l->saved_bytes - min_u64(trap_at(&t, at), l->saved_bytes) : 0;
}

static unsigned long long div128_by(unsigned __int128 v, unsigned long long d)
{
	unsigned long long hi = (unsigned long long)(v >> 64), lo = (unsigned long long)v, r;

	if (!d)
		return 0;
	if (!hi)
		return lo / d;
	if (hi >= d)
		return U64_MAX_ULL;
	return div128(hi, lo, d, &r);
}

void tt_policy_footprint(const struct tt_policy_params *p,
			 const struct tt_policy_layer *layers, unsigned int n,
			 struct tt_policy_footprint *out)
{
	unsigned __int128 base_area = 0, tier_area = 0, oracle_area = 0;
	unsigned long long end = 0;
	unsigned int i, j, k;

	out->avg_bytes = 0;
	out->peak_bytes = 0;
	out->base_avg_bytes = 0;
	out->base_peak_bytes = 0;
	out->oracle_avg_bytes = 0;
	out->oracle_peak_bytes = 0;

	/* averages: the integral is linear, so sum each layer's own area */
	for (i = 0; i < n; i++) {
		const struct tt_policy_layer *l = &layers[i];
		struct trap t;

		end = max_u64(end, l->bwd_end_ns);
		base_area += (unsigned __int128)l->saved_bytes *
			     (l->bwd_end_ns - l->fwd_end_ns);
		oracle_area += (unsigned __int128)l->saved_bytes *
			       (l->bwd_end_ns - l->bwd_start_ns);
		layer_trap(p, l, &t);
		tier_area += (unsigned __int128)l->saved_bytes *
			     (l->bwd_end_ns - l->fwd_end_ns) - trap_area(&t);
	}
	out->end_ns = end;
	out->base_avg_bytes = div128_by(base_area, end);
	out->avg_bytes = div128_by(tier_area, end);
	out->oracle_avg_bytes = div128_by(oracle_area, end);

	/* peaks: the sums are piecewise linear, so their maxima sit on the
	 * breakpoints of some layer; evaluate both limits at each of them
	 */
	for (i = 0; i < n; i++) {
		struct trap t;
		unsigned long long pts[6];

		layer_trap(p, &layers[i], &t);
		pts[0] = layers[i].fwd_end_ns;
		pts[1] = t.e1;
		pts[2] = t.p0;
		pts[3] = t.p1;
		pts[4] = layers[i].bwd_start_ns;
		pts[5] = layers[i].bwd_end_ns;
		for (k = 0; k < 6; k++) {
			enum side s;

			for (s = LEFT; s <= RIGHT; s++) {
				unsigned long long sb = 0, st = 0, so = 0;

				for (j = 0; j < n; j++) {
					unsigned long long b, tr, o;

					layer_at(p, &layers[j], pts[k], s, &b, &tr, &o);
					sb += b;
					st += tr;
					so += o;
				}
				out->base_peak_bytes = max_u64(out->base_peak_bytes, sb);
				out->peak_bytes = max_u64(out->peak_bytes, st);
				out->oracle_peak_bytes = max_u64(out->oracle_peak_bytes, so);
			}
		}
	}
}
