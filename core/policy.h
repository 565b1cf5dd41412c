/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * policy.h - TierTrain's queueing system (paper section 5.3, eq. 2-10).
 *
 * Pure C with no includes at all: the same source is compiled into the
 * kernel module (kmod/), into tierctl (`tierctl simulate`), into the
 * userspace baseline of bench/train and into the cmocka unit tests, so there
 * is exactly one implementation of the policy. Integer arithmetic only (no
 * floating point in the kernel): times are nanoseconds from the start of a
 * training iteration, sizes are bytes, rates are bytes per second.
 *
 * Reference semantics, per layer l (times from the profile):
 *   IT(l) = ts_B(l) - te_F(l)                       idle time        (eq. 2)
 *   MR    = 1/ER + 1/PR                             migration cost   (eq. 5)
 *   eviction: IT >= sz*MR + ST  -> szE = sz          accepted         (eq. 6)
 *             else szE = (IT - ST)/MR, rounded down to a page        (eq. 7)
 *   prefetch, layers in increasing ts_B, t_busy = 0 at the start:
 *             t_start = ts_B - szE/PR                                (eq. 8)
 *             t_busy <= t_start -> szP = szE                          (eq. 9)
 *             else szP = (ts_B - t_busy)*PR, page-down, <= szE        (eq. 10)
 *   szP <= 0 -> dropped; szP < sz -> modified; else accepted. A kept request
 *   prefetches at ts_B - szP/PR and sets t_busy = ts_B; szP is also the size
 *   evicted (the first szP bytes of the layer's ranges).
 *
 * Extension (default off): @lead_ns of a layer, grown by the scheduler when
 * that layer's prefetch was late, is added to the prefetch duration in
 * eq. 8 and in the trigger time, so the layer's prefetch starts earlier,
 * and comes off the idle time IT of eq. 6/7.
 * With lead_ns == 0 for every layer the plan is exactly the reference.
 *
 * Extension (default off, @alap in struct tt_policy_params): prefetches
 * planned as late as possible instead of eq. 8-10. Layers are taken in
 * decreasing deadline ts_B - lead (the last backward layer first when no
 * lead reorders them); each prefetch must end by min(its deadline, start
 * of the prefetch placed after it) and may not start before its eviction
 * can have ended (te_F + szE/ER + ST). A layer whose lead puts its
 * deadline before the next backward layer's is fetched before that one
 * instead of pushing it (and every one queued before it) as early. The
 * queue is the same single serial queue, but a large tensor may take it
 * over several earlier backward layers instead of only the one before its
 * own, so fewer bytes are cut at a boundary where the saved size shrinks
 * (a CNN's early layers); the price is tensors back earlier than just in
 * time when the queue is busy.
 */
#ifndef TT_POLICY_H
#define TT_POLICY_H

/*
 * enum tt_policy_status - outcome of one layer's request
 * @TT_POLICY_DROPPED:  nothing is evicted (szP == 0).
 * @TT_POLICY_MODIFIED: 0 < szP < sz: a partial eviction.
 * @TT_POLICY_ACCEPTED: the whole saved size is evicted (szP == sz).
 */
enum tt_policy_status {
	TT_POLICY_DROPPED,
	TT_POLICY_MODIFIED,
	TT_POLICY_ACCEPTED,
};

/*
 * struct tt_policy_params - the rates and constants the plan is made with
 * @er_bps:     eviction rate ER, bytes/s (fast -> slow); must be > 0.
 * @pr_bps:     prefetch rate PR, bytes/s (slow -> fast); must be > 0.
 * @stay_ns:    stay time ST: minimum time evicted data stays slow.
 * @page_size:  granularity of partial sizes (a power of two, e.g. 4096).
 * @alap:       non-zero: plan prefetches as late as possible (extension,
 *              see above); 0: eq. 8-10 (the reference).
 */
struct tt_policy_params {
	unsigned long long er_bps;
	unsigned long long pr_bps;
	unsigned long long stay_ns;
	unsigned long long page_size;
	int alap;
};

/*
 * struct tt_policy_layer - one layer: profile in, decision out
 * @layer:        layer id (opaque to the policy).
 * @fwd_start_ns: forward begin, ns from iteration start (footprint only).
 * @fwd_end_ns:   te_F, forward end.
 * @bwd_start_ns: ts_B, backward begin; must be >= @fwd_end_ns.
 * @bwd_end_ns:   backward end (footprint only); >= @bwd_start_ns.
 * @saved_bytes:  sz, bytes of tensors the layer saved.
 * @lead_ns:      extra prefetch lead time (extension; 0 = reference).
 * @status:       out: enum tt_policy_status.
 * @evict_bytes:  out: szE, the size eq. 6/7 allows.
 * @final_bytes:  out: szP, the size actually evicted and prefetched.
 * @prefetch_ns:  out: prefetch trigger time, ts_B - szP/PR - lead_ns
 *                (clamped at 0); meaningless when dropped.
 */
struct tt_policy_layer {
	unsigned int layer;
	unsigned long long fwd_start_ns;
	unsigned long long fwd_end_ns;
	unsigned long long bwd_start_ns;
	unsigned long long bwd_end_ns;
	unsigned long long saved_bytes;
	unsigned long long lead_ns;
	enum tt_policy_status status;
	unsigned long long evict_bytes;
	unsigned long long final_bytes;
	unsigned long long prefetch_ns;
};

/*
 * struct tt_policy_summary - counts over one plan
 * @accepted:       layers whose whole size is evicted.
 * @modified:       layers partially evicted.
 * @dropped:        layers not evicted (including layers that saved nothing).
 * @migrated_bytes: sum of final_bytes (each is evicted and prefetched once).
 */
struct tt_policy_summary {
	unsigned int accepted;
	unsigned int modified;
	unsigned int dropped;
	unsigned long long migrated_bytes;
};

/* Errors of tt_policy_plan() (negative, errno-like values without errno.h). */
#define TT_POLICY_EINVAL	22

/*
 * tt_policy_plan() - decide eviction size and prefetch time for @n layers.
 * @p:      rates and constants.
 * @layers: the profile; the outputs are written into it. Any order.
 * @n:      number of layers.
 * @order:  scratch array of @n unsigned ints (the policy allocates nothing).
 * @sum:    out: counts; may be NULL.
 *
 * Return: 0, or -TT_POLICY_EINVAL if a rate is 0, the page size is not a
 * power of two, or a layer's times are out of order (its index is then
 * stored in *@bad when @bad is not NULL).
 */
int tt_policy_plan(const struct tt_policy_params *p,
		   struct tt_policy_layer *layers, unsigned int n,
		   unsigned int *order, struct tt_policy_summary *sum,
		   unsigned int *bad);

/*
 * tt_policy_xfer_ns() - time to move @bytes at @bps bytes/s, rounded up.
 * Returns ~0ULL when @bps is 0 or the result does not fit.
 */
unsigned long long tt_policy_xfer_ns(unsigned long long bytes,
				     unsigned long long bps);

/*
 * tt_policy_bytes_in() - bytes @bps moves in @ns nanoseconds, rounded down.
 */
unsigned long long tt_policy_bytes_in(unsigned long long ns,
				      unsigned long long bps);

/*
 * tt_policy_ewma() - exponentially weighted moving average in integers:
 * old + (new - old) * weight / 1024, with @weight in 1..1024 (1024 = take
 * @sample as is). Used for the profile and the measured rates.
 */
unsigned long long tt_policy_ewma(unsigned long long old,
				  unsigned long long sample,
				  unsigned int weight);

/*
 * struct tt_policy_footprint - predicted fast-tier bytes of saved tensors
 * @avg_bytes:        time average over [0, iteration end].
 * @peak_bytes:       maximum.
 * @base_avg_bytes:   the same without tiering.
 * @base_peak_bytes:  the same without tiering.
 * @oracle_avg_bytes: with instant eviction at te_F and instant prefetch at
 *                    ts_B of every saved byte (the lower bound).
 * @oracle_peak_bytes: its maximum.
 * @end_ns:           iteration end used (the latest bwd_end_ns).
 *
 * Model: a layer's saved bytes appear on the fast tier at fwd_end and are
 * freed at bwd_end. final_bytes of them leave at the eviction rate from
 * fwd_end on and come back at the prefetch rate, arriving by bwd_start
 * (ramps are linear).
 */
struct tt_policy_footprint {
	unsigned long long avg_bytes;
	unsigned long long peak_bytes;
	unsigned long long base_avg_bytes;
	unsigned long long base_peak_bytes;
	unsigned long long oracle_avg_bytes;
	unsigned long long oracle_peak_bytes;
	unsigned long long end_ns;
};

/*
 * tt_policy_footprint() - predict the fast-tier footprint of a plan made by
 * tt_policy_plan() with the same @p. O(n^2); meant for tierctl simulate and
 * benchmarks, not for the kernel's hot path.
 */
void tt_policy_footprint(const struct tt_policy_params *p,
			 const struct tt_policy_layer *layers, unsigned int n,
			 struct tt_policy_footprint *out);

/* tt_policy_status_name() - "accepted", "modified" or "dropped". */
const char *tt_policy_status_name(enum tt_policy_status s);

#endif /* TT_POLICY_H */
