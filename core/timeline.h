/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * timeline.h - the scheduler's per-session profile, plan and feedback.
 *
 * Pure C with no includes besides policy.h, no allocation (the caller
 * provides every array) and integer arithmetic only, like policy.c: the
 * kernel module's scheduler (kmod/sched.c) drives it from its events and
 * workers, and a userspace scheduler can drive exactly the same logic. The
 * timeline decides; the caller moves memory and reports back.
 *
 * Times given to the functions below ("now") are absolute nanoseconds of
 * one clock (CLOCK_MONOTONIC) that never go backwards; the timeline stores
 * them as nanoseconds since the current iteration began ("relative").
 *
 * Rate probe: a plan made with the rates tt_tl_init() was seeded with (a
 * guess) admits round trips the machine cannot make; so while a direction
 * has no sample, each iteration without a plan evicts up to
 * TT_TL_PROBE_BYTES of its first layer with enough saved at its forward
 * end and fetches them back at once (the schedule hands the prefetch out
 * as soon as the eviction is ordered): its two moves are the first
 * samples. A probe teaches no lead or slack.
 *
 * Life of an iteration:
 *   tt_tl_iter_begin()   closes the previous iteration (folds its samples
 *                        into the profile, or restarts the profile after a
 *                        deviation), then plans the new one when enough
 *                        iterations are profiled (with ER, and with the
 *                        slow end of PR: the prefetches run back to back,
 *                        each one's delay delays the next), and lays out
 *                        the prefetch schedule in trigger order.
 *   tt_tl_layer_event()  records a layer's forward/backward begin/end and
 *                        says what to do: evict N bytes at a forward end,
 *                        fetch back at a backward begin, forget one-shot
 *                        ranges at a backward end.
 *   tt_tl_saved()        adds a saved tensor's bytes to its layer.
 *   tt_tl_next_due()     hands out the prefetches whose trigger time came.
 *   tt_tl_evict_*(), tt_tl_prefetch_*(), tt_tl_bwd_check(), tt_tl_rate_sample()
 *                        the caller's reports: execution times, late or on
 *                        time, measured rates. They drive the lead-time
 *                        feedback and the rate averages.
 *
 * Deviation rules (checked when an iteration is closed, once a profile
 * exists): the set of layers with a complete event sequence differs from
 * the profiled set, or the iteration's last event came more than twice as
 * late as the profiled iteration length. Then the profile restarts: the
 * deviating iteration is discarded and nothing is planned until
 * profile_iters iterations have been recorded again (counted in
 * reprofiles). A layer whose events come out of order in an iteration is
 * never evicted in it and gives no sample.
 *
 * Lead-time feedback (policy.h's lead_ns extension), per layer:
 *  - late: when its prefetch ends after its backward pass began, the lead
 *    grows by 1.5 times that lateness (a prefetch still running when the
 *    iteration ends counts as ending then), by no more than the layer's
 *    prefetch takes at the current PR estimate per late iteration, and to
 *    at most the layer's profiled idle time (te_F to ts_B);
 *  - every evicted layer's slack (backward start - prefetch end, negative
 *    when late, clamped to one prefetch at the current PR) is folded into
 *    an average and a mean deviation, as TCP's round-trip estimator does
 *    (RFC 6298: gains 1/8 and 1/4);
 *  - on time: while the slack exceeds a margin of max(lead/4, 4 x the
 *    slack's mean deviation), the lead shrinks by min(lead/16, (slack -
 *    margin) / 2), so it settles with room for the timing noise measured
 *    on this machine instead of shrinking until the layer is late again;
 *    below 3 x the deviation it grows by half the shortfall;
 *  - not evicted in an iteration: the lead shrinks by lead/16, so a layer
 *    that a large lead made the policy drop is tried again.
 */
#ifndef TT_TIMELINE_H
#define TT_TIMELINE_H

#include "policy.h"

/* Errors (negative, errno-like values, as policy.h). */
#define TT_TL_ENOSPC		28

/* Default weight of a new sample in the averages, out of 1024 (1/4). */
#define TT_TL_WEIGHT		256
/*
 * Rate samples after which a rate is a plain EWMA (weight TT_TL_WEIGHT);
 * before, a sample is averaged with the earlier ones, and the first
 * replaces the seed.
 */
#define TT_TL_RATE_SETTLED	3
/* A rate sample needs at least this many bytes (smaller ones are noise). */
#define TT_TL_RATE_MIN_BYTES	(64ULL * 1024)
/*
 * A PR estimate that its samples moved by more than this factor from what
 * the iteration began with makes the iteration a rate miss
 * (&tt_tl.rate_miss).
 */
#define TT_TL_RATE_MISS		2
/*
 * Prefetches of the first backward layer (under TT_SCHED_COUNT) timed
 * before its lead may shrink below half its profiled idle time: until
 * then a turn shorter than the profile's is covered by that half.
 */
#define TT_TL_LEAD_SETTLED	4
/*
 * The rate probe: in an iteration without a plan (a profile iteration)
 * while a direction has no rate sample, the first layer to end its forward
 * pass with at least TT_TL_RATE_MIN_BYTES saved has up to this many of
 * them evicted and brought back at once (one probe per iteration), so the
 * first plan is made with measured rates, not the seed.
 */
#define TT_TL_PROBE_BYTES	(1024ULL * 1024)

/* Directions of a rate sample. */
#define TT_TL_EVICT		0
#define TT_TL_PREFETCH		1

/* Phases of a layer event. */
#define TT_TL_FWD		0
#define TT_TL_BWD		1

/*
 * enum tt_tl_action - what the caller must do after tt_tl_layer_event()
 * @TT_TL_ACT_NONE:   nothing.
 * @TT_TL_ACT_EVICT:  forward end of a planned layer: evict the first
 *                    act->bytes of its ranges now.
 * @TT_TL_ACT_FETCH:  backward begin: whatever the layer has evicted must
 *                    come back now; report with tt_tl_bwd_check().
 * @TT_TL_ACT_FORGET: backward end: make sure nothing of the layer stays
 *                    evicted, then forget its one-shot ranges.
 */
enum tt_tl_action {
	TT_TL_ACT_NONE,
	TT_TL_ACT_EVICT,
	TT_TL_ACT_FETCH,
	TT_TL_ACT_FORGET,
};

/*
 * TT_SCHED_DYNAMIC (TT_TL_MODE_DYNAMIC): signatures remembered, entries of
 * the miss log, and the rank base of a fallback iteration (ranks there are
 * this minus the forward position, so the backward order is the reverse
 * forward order whatever the depth).
 */
#define TT_TL_SIGS		8U
#define TT_TL_MISSES		16U
#define TT_TL_RANK_FWD		0x40000000U
/*
 * the dynamic fallback: a layer is considered for eviction while among the
 * latest this many forward positions; also the backward begins its
 * admission looks up a release by (> TT_TL_AHEAD_MAX)
 */
#define TT_TL_RECENT		16U

/*
 * struct tt_tl_sig - one layer-sequence signature (TT_TL_MODE_DYNAMIC)
 * @hash:      FNV-1a of the layer ids in forward-end order (0 = free slot).
 * @nlayers:   forward ends in the sequence.
 * @samples:   iterations folded into its profile.
 * @last_iter: the latest iteration (iter_seq) seen with it.
 */
struct tt_tl_sig {
	unsigned long long hash;
	unsigned int nlayers;
	unsigned int samples;
	unsigned long long last_iter;
};

/*
 * struct tt_tl_miss.kind; the values are the uapi's TT_TRACE_F_MISS_* bits
 * (the executors check that they are equal)
 */
#define TT_TL_MISS_NEW		0x0800U	/* the signature was new */
#define TT_TL_MISS_PREDICT	0x1000U	/* the prediction diverged */
#define TT_TL_MISS_LATE		0x2000U	/* late in a fallback */

/*
 * struct tt_tl_miss - one entry of the miss log (TT_TL_MODE_DYNAMIC)
 * @iter:  iteration (iter_seq).
 * @kind:  TT_TL_MISS_*.
 * @layer: the layer where the prediction failed, or the late layer (0
 *         for a new signature or a sequence that ended early).
 * @bytes: late bytes (TT_TL_MISS_LATE), else the forward position.
 */
struct tt_tl_miss {
	unsigned long long iter;
	unsigned int kind;
	unsigned int layer;
	unsigned long long bytes;
};

/*
 * struct tt_tl_times - the times and size of one layer in one iteration
 * (relative ns) or averaged over iterations (the profile)
 * @fwd_start: forward begin (the forward end when it was not reported).
 * @fwd_end:   forward end, te_F.
 * @bwd_start: backward begin, ts_B.
 * @bwd_end:   backward end.
 * @saved:     bytes of tensors saved, sz.
 */
struct tt_tl_times {
	unsigned long long fwd_start;
	unsigned long long fwd_end;
	unsigned long long bwd_start;
	unsigned long long bwd_end;
	unsigned long long saved;
};

/*
 * struct tt_tl_exec - what happened to a layer in the current (or, until
 * the next iteration begins, the latest) iteration; relative ns, 0 = did
 * not happen
 * @fwd_end:        forward end.
 * @evict_start:    eviction started.
 * @evict_end:      eviction finished.
 * @prefetch_start: prefetch started.
 * @prefetch_end:   prefetch finished.
 * @bwd_start:      backward begin.
 * @evicted_bytes:  bytes evicted.
 * @late_bytes:     evicted bytes not back at the backward begin.
 * @due_at:         the prefetch was handed out (trigger time or release).
 * @evict_order:    the eviction was ordered at the layer's forward end
 *                  (the plan's or the rate probe's; 0: not so).
 * @ahead:          the dynamic fallback: the k its prefetch is released
 *                  with (the backward layers before its own).
 */
struct tt_tl_exec {
	unsigned long long fwd_end;
	unsigned long long evict_start;
	unsigned long long evict_end;
	unsigned long long prefetch_start;
	unsigned long long prefetch_end;
	unsigned long long bwd_start;
	unsigned long long evicted_bytes;
	unsigned long long late_bytes;
	unsigned long long due_at;
	unsigned long long evict_order;
	unsigned int ahead;
};

/*
 * struct tt_tl_layer - one layer (the table is sorted by @id)
 * @id:          layer id.
 * @flags:       TT_TL_L_* (profile and plan membership).
 * @seen:        TT_TL_S_* (what happened in the current iteration).
 * @samples:     iterations folded into @prof since the profile (re)started.
 * @prof:        the profile (averages).
 * @cur:         the current iteration's observations.
 * @persist_bytes: bytes of persistent tensors the layer holds; every
 *               iteration starts with them saved.
 * @lead_ns:     extra prefetch lead time learned from late prefetches.
 * @slack_avg_ns: average slack of the layer's prefetches (backward start -
 *               prefetch end; negative: late).
 * @slack_dev_ns: mean deviation of that slack.
 * @slack_samples: slacks folded in (0: none yet).
 * @idle_min_ns: the shortest idle time (forward end to backward begin)
 *               seen lately (0: none yet), rising by 1/256 of its distance
 *               to the profile's an iteration; under TT_SCHED_COUNT the
 *               lead of the first backward layer, and of every layer no
 *               backward step releases in time (TT_TL_L_TURN), does not
 *               shrink below 1.5 times the profile's idle
 *               time less it, to at most 3/4 of the profile's idle time
 *               (nor, before TT_TL_LEAD_SETTLED of its prefetches were
 *               timed, below half the profile's idle time).
 * @status:      plan: enum tt_policy_status (meaningful with TT_TL_L_PLANNED).
 * @final_bytes: plan: bytes to evict and prefetch (szP).
 * @prefetch_ns: plan: prefetch trigger time (relative).
 * @rank:        plan: place in the profiled backward order (1 = the first
 *               backward layer; 0 = not planned); in a fallback iteration
 *               (TT_TL_MODE_DYNAMIC) TT_TL_RANK_FWD minus @fpos.
 * @fpos:        forward position in the current iteration (1 = the first
 *               forward end; 0 = none yet).
 * @ahead:       TT_SCHED_COUNT and the dynamic fallback: k, the backward
 *               layers before its own that release the layer's prefetch
 *               (1..TT_TL_AHEAD_MAX), as learned from late prefetches.
 * @reach:       TT_SCHED_COUNT, planned: the fewest backward layers
 *               before its own whose profiled backward steps take
 *               TT_TL_REACH_MUL times its planned transfer at the slow end
 *               of PR (@pr_low_bps) plus the dispatch wait (@disp_ns) of
 *               &struct tt_tl (all of them when they do not; 0 for rank
 *               1); its prefetch is
 *               released max(@ahead, @reach) layers before its own.
 * @ahead_run:   iterations in a row the layer came back on time.
 * @sprof:       TT_TL_MODE_DYNAMIC: the profile in each signature slot.
 * @spos:        TT_TL_MODE_DYNAMIC: the forward position in each signature
 *               (0 = not in it).
 * @ssamples:    TT_TL_MODE_DYNAMIC: iterations folded into @sprof.
 * @bstep_ns:    TT_TL_MODE_DYNAMIC: average time from the layer's backward
 *               begin to the next backward begin of its iteration (0 = not
 *               seen yet); the fallback's admission estimates with it.
 * @x:           execution record of the current iteration.
 * @priv:        the caller's per-layer object (moves with the entry).
 */
struct tt_tl_layer {
	unsigned int id;
	unsigned int flags;
	unsigned int seen;
	unsigned int samples;
	struct tt_tl_times prof;
	struct tt_tl_times cur;
	unsigned long long persist_bytes;
	unsigned long long lead_ns;
	long long slack_avg_ns;
	unsigned long long slack_dev_ns;
	unsigned int slack_samples;
	unsigned long long idle_min_ns;
	enum tt_policy_status status;
	unsigned long long final_bytes;
	unsigned long long prefetch_ns;
	unsigned int rank;
	unsigned int fpos;
	unsigned int ahead;
	unsigned int ahead_run;
	unsigned int reach;
	struct tt_tl_times sprof[TT_TL_SIGS];
	unsigned int spos[TT_TL_SIGS];
	unsigned int ssamples[TT_TL_SIGS];
	unsigned long long bstep_ns;
	struct tt_tl_exec x;
	void *priv;
};

/* tt_tl_layer.flags */
#define TT_TL_L_PROFILED	0x001U	/* in the profile */
#define TT_TL_L_PLANNED		0x002U	/* in the current plan */
/* TT_SCHED_COUNT: released by no backward step in time (turn_floor()) */
#define TT_TL_L_TURN		0x004U

/* tt_tl_layer.seen, cleared when an iteration begins */
#define TT_TL_S_ANY		0x001U	/* any event this iteration */
#define TT_TL_S_FWD_BEGIN	0x002U
#define TT_TL_S_FWD_END		0x004U
#define TT_TL_S_BWD_BEGIN	0x008U
#define TT_TL_S_BWD_END		0x010U
#define TT_TL_S_ERR		0x020U	/* events out of order */
#define TT_TL_S_DUE		0x040U	/* prefetch trigger time passed */
#define TT_TL_S_EVICT		0x080U	/* eviction ordered */
#define TT_TL_S_LATE		0x100U	/* late, lateness not yet known */
#define TT_TL_S_CHECKED		0x200U	/* tt_tl_bwd_check() done */
#define TT_TL_S_PROBE		0x400U	/* a rate probe (no plan's eviction) */

/*
 * struct tt_tl_due - one prefetch of the schedule
 * @t:    trigger time, relative ns.
 * @id:   layer id.
 * @rank: the layer's place in the backward order (struct tt_tl_layer.rank).
 * @ahead: the layer's k when the entry was made.
 * @reach: the layer's reach when the entry was made (0: none; the
 *         entry is released @ahead layers before its own).
 */
struct tt_tl_due {
	unsigned long long t;
	unsigned int id;
	unsigned int rank;
	unsigned int ahead;
	unsigned int reach;
};

/*
 * struct tt_tl_storage - the arrays a timeline works in, all of @cap
 * elements, provided by the caller
 * @layers: the layer table.
 * @plan:   scratch for tt_policy_plan().
 * @order:  scratch for tt_policy_plan(); in a TT_TL_MODE_DYNAMIC
 *          iteration, once planned, the layer index at each forward
 *          position (@order[fpos - 1] is its id: the table's indices move when a layer is added).
 * @due:    the prefetch schedule.
 * @cap:    elements of each array (the most layers the timeline can hold).
 */
struct tt_tl_storage {
	struct tt_tl_layer *layers;
	struct tt_policy_layer *plan;
	unsigned int *order;
	struct tt_tl_due *due;
	unsigned int cap;
};

/*
 * struct tt_tl_counts - counters (see the same names in struct tt_ioc_stats)
 * @iterations:      tt_tl_iter_begin() calls.
 * @layers_accepted: evictions ordered of layers planned whole.
 * @layers_modified: evictions ordered of layers planned in part.
 * @layers_dropped:  planned layers the policy kept on the fast tier, or whose
 *                  ordered eviction expired (tt_tl_evict_drop(); counted in
 *                  @layers_accepted or @layers_modified too).
 * @layers_unknown:  layer-iterations of planned iterations not in the plan.
 * @ontime_bytes:    evicted bytes back when their backward pass began.
 * @late_bytes:      evicted bytes not back then.
 * @late_count:      layer-iterations with late bytes.
 * @reprofiles:      profile restarts after a deviation.
 * @count_released:  prefetches a backward begin released before their
 *                   trigger time (TT_SCHED_COUNT).
 * @dyn_predicted:   TT_TL_MODE_DYNAMIC: iterations planned from a
 *                   signature that held to the end.
 * @dyn_mispredicted: iterations whose predicted signature diverged.
 * @dyn_fallback:    iterations that ran (in part) on the layer-count
 *                   fallback.
 * @dyn_misses:      entries written to the miss log.
 * @rate_probes:     rate probes ordered (TT_TL_PROBE_BYTES); their bytes
 *                   count in @ontime_bytes or @late_bytes as any eviction.
 */
struct tt_tl_counts {
	unsigned long long iterations;
	unsigned long long layers_accepted;
	unsigned long long layers_modified;
	unsigned long long layers_dropped;
	unsigned long long layers_unknown;
	unsigned long long ontime_bytes;
	unsigned long long late_bytes;
	unsigned long long late_count;
	unsigned long long reprofiles;
	unsigned long long count_released;
	unsigned long long dyn_predicted;
	unsigned long long dyn_mispredicted;
	unsigned long long dyn_fallback;
	unsigned long long dyn_misses;
	unsigned long long rate_probes;
};

/*
 * struct tt_tl - one session's timeline
 * @st:            the storage.
 * @n:             layers in the table.
 * @hint:          index of the last layer looked up (a cache).
 * @profile_iters: iterations to profile before planning (>= 1).
 * @stay_ns:       stay time ST.
 * @page_size:     page size (a power of two).
 * @er_bps:        eviction rate estimate, bytes/s.
 * @pr_bps:        prefetch rate estimate, bytes/s.
 * @er_samples:    samples @er_bps is the mean of (0: the seed given to
 *                 tt_tl_init(), not a measurement; counted up to
 *                 TT_TL_RATE_SETTLED, which tt_tl_set_rates() sets).
 * @pr_samples:    the same for @pr_bps.
 * @iter_pr_bps:   @pr_bps when the current iteration began (what its plan
 *                 was made with).
 * @pr_low_bps:    the slowest prefetch sample seen lately (0: none yet):
 *                 the slowest, or 1/TT_TL_LOW_FADE closer to each faster
 *                 one; a sample below @pr_bps / TT_TL_PR_LOW_DIV (a stall)
 *                 is left out; never below that nor above
 *                 @pr_bps where used (release_need(), and the plan's
 *                 prefetch times: tt_tl_iter_begin()).
 * @disp_ns:       the longest dispatch wait seen lately: a prefetch's from
 *                 its hand-out (or its eviction's end, or the session's
 *                 previous prefetch's end, whichever came last) to its
 *                 start, to its backward begin at most (a prefetch taken
 *                 back there starts at the backward end); an eviction's
 *                 ordered at its forward end from then (or the session's
 *                 previous eviction's end) to its start; the longest, or
 *                 1/TT_TL_LOW_FADE closer to each shorter one; a wait at
 *                 most @prof_iter_ns / TT_TL_DISP_DIV.
 * @pf_last_end:   the current iteration's latest prefetch end (relative).
 * @ev_last_end:   the current iteration's latest eviction end (relative).
 * @rate_miss:     the current iteration's prefetch samples moved @pr_bps
 *                 by more than a factor of TT_TL_RATE_MISS from
 *                 @iter_pr_bps, or one was that far off it while @pr_bps
 *                 was unsettled (the plan's PR was that far off):
 *                 its timing says nothing about the timing noise, so no
 *                 lead or slack learns from it (the rates do).
 * @probed:        the current iteration has ordered its rate probe.
 * @probe_min:     no rate probe of fewer bytes (the caller's smallest
 *                 eviction; 0: none).
 * @off:           plan, but never order an eviction.
 * @alap:          plan prefetches as late as possible (TT_SCHED_ALAP,
 *                 struct tt_policy_params.alap).
 * @anchor:        shift the prefetch triggers by @drift_ns
 *                 (TT_SCHED_ANCHOR).
 * @count:         release prefetches by backward progress as well
 *                 (TT_SCHED_COUNT).
 * @bwd_rank:      TT_SCHED_COUNT, the fallback: the highest rank whose
 *                 backward pass began in the current iteration; a prefetch
 *                 of rank r is released once r <= bwd_rank + max(k, reach).
 * @dynamic:       one profile per signature (TT_TL_MODE_DYNAMIC).
 * @sigs:          the signatures.
 * @cur_sig:       slot predicted for the current iteration (-1: none).
 * @fallback:      the current iteration runs on the layer-count trigger.
 * @cur_hash:      signature of the current iteration's forward ends so far.
 * @cur_n:         forward ends so far (the last forward position).
 * @evict_pos:     dynamic: forward positions up to this one were
 *                 considered for a delayed eviction (TT_TL_EVICT_DELAY
 *                 positions behind the latest forward end); in the
 *                 fallback, since the forward end at @scan_n.
 * @scan_n:        the fallback: @cur_n when @evict_pos was last reset.
 * @bwd_last:      dynamic: a backward begin came in this iteration.
 * @bwd_last_id:   the layer of the latest one.
 * @bwd_last_rel:  its relative time.
 * @bwd_seen:      a backward begin came in the current iteration.
 * @evict_backlog: dynamic: bytes ordered out in the current iteration whose
 *                 eviction has not ended (tt_tl_evict_end()).
 * @misses:        the miss log, a ring.
 * @miss_head:     entries ever written (the next one goes to
 *                 miss_head % TT_TL_MISSES).
 * @drift_ns:      how much later than its profiled time the current
 *                 iteration's latest layer event of a planned layer came
 *                 (negative: earlier); 0 at iteration begin.
 * @in_iter:       an iteration has begun.
 * @planned:       the current iteration has a plan.
 * @planned_run:   planned iterations in a row, the current one included
 *                 (0 when it has no plan).
 * @profiled:      iterations folded since the profile (re)started.
 * @iter_seq:      number of the current iteration (starts at 1).
 * @iter_start:    absolute start of the current iteration.
 * @last_rel:      relative time of the current iteration's latest event.
 * @prof_iter_ns:  profile: average iteration length (first to last event).
 * @ndue:          prefetches in the schedule.
 * @due_pos:       the next one to hand out.
 * @counts:        counters.
 */
struct tt_tl {
	struct tt_tl_storage st;
	unsigned int n;
	unsigned int hint;
	unsigned int profile_iters;
	unsigned long long stay_ns;
	unsigned long long page_size;
	unsigned long long er_bps;
	unsigned long long pr_bps;
	unsigned int er_samples;
	unsigned int pr_samples;
	unsigned long long iter_pr_bps;
	unsigned long long pr_low_bps;
	unsigned long long disp_ns;
	unsigned long long pf_last_end;
	unsigned long long ev_last_end;
	int rate_miss;
	int probed;
	unsigned long long probe_min;
	int off;
	int alap;
	int anchor;
	int count;
	unsigned int bwd_rank;
	int dynamic;
	struct tt_tl_sig sigs[TT_TL_SIGS];
	int cur_sig;
	int fallback;
	unsigned long long cur_hash;
	unsigned int cur_n;
	unsigned int evict_pos;
	unsigned int scan_n;
	int bwd_last;
	unsigned int bwd_last_id;
	unsigned long long bwd_last_rel;
	int bwd_seen;
	unsigned long long evict_backlog;
	struct tt_tl_miss misses[TT_TL_MISSES];
	unsigned int miss_head;
	long long drift_ns;
	int in_iter;
	int planned;
	unsigned int planned_run;
	unsigned int profiled;
	unsigned long long iter_seq;
	unsigned long long iter_start;
	unsigned long long last_rel;
	unsigned long long prof_iter_ns;
	unsigned int ndue;
	unsigned int due_pos;
	struct tt_tl_counts counts;
};

/* tt_tl_iter_begin() result bits */
#define TT_TL_IB_CLOSED		0x001U	/* an iteration was closed */
#define TT_TL_IB_REPROFILE	0x002U	/* it deviated: profile restarted */
#define TT_TL_IB_PLANNED	0x004U	/* the new iteration has a plan */

/*
 * tt_tl_init() - an empty timeline without storage (cap 0)
 * @page_size, @profile_iters (>= 1), @stay_ns, @er_bps, @pr_bps (> 0): the
 * initial settings.
 */
void tt_tl_init(struct tt_tl *tl, unsigned long long page_size,
		unsigned int profile_iters, unsigned long long stay_ns,
		unsigned long long er_bps, unsigned long long pr_bps);

/*
 * tt_tl_set_storage() - move the timeline into new arrays
 * @st: the new arrays; st->cap must be >= tl->n. The layer table, the
 *      schedule and the forward order walked in the current iteration
 *      (@order) are copied, so a table may grow mid-iteration; the old
 *      arrays are no longer used (the caller frees them).
 */
void tt_tl_set_storage(struct tt_tl *tl, const struct tt_tl_storage *st);

/* tt_tl_find() - index of layer @id in the table, or -1. */
int tt_tl_find(struct tt_tl *tl, unsigned int id);

/*
 * tt_tl_add() - insert layer @id (not in the table) with @priv
 * Return: its index, or -TT_TL_ENOSPC when the table is full (grow it
 * with tt_tl_set_storage() and try again). Indexes of layers with a
 * larger id shift by one.
 */
int tt_tl_add(struct tt_tl *tl, unsigned int id, void *priv);

/* tt_tl_rel() - @now as relative ns of the current iteration (0 before). */
unsigned long long tt_tl_rel(const struct tt_tl *tl, unsigned long long now);

/* tt_tl_iter_begin() - an iteration begins at @now; TT_TL_IB_* bits. */
unsigned int tt_tl_iter_begin(struct tt_tl *tl, unsigned long long now);

/*
 * tt_tl_layer_event() - layer @idx's @phase (TT_TL_FWD, TT_TL_BWD) begins
 * (@end 0) or ends (@end 1) at @now
 * @allow: the caller can evict this layer now (for a forward end: nothing
 *         of it is still evicted from an earlier iteration).
 * @bytes: out: with TT_TL_ACT_EVICT, how many bytes to evict.
 */
enum tt_tl_action tt_tl_layer_event(struct tt_tl *tl, unsigned int idx,
				    int phase, int end, unsigned long long now,
				    int allow, unsigned long long *bytes);

/*
 * tt_tl_saved() - layer @idx saved @bytes more (a tensor, whole pages);
 * @persistent: it stays saved in later iterations too.
 */
void tt_tl_saved(struct tt_tl *tl, unsigned int idx, unsigned long long bytes,
		 int persistent);

/* tt_tl_unsaved() - @bytes of persistent tensors of layer @idx are gone. */
void tt_tl_unsaved(struct tt_tl *tl, unsigned int idx,
		   unsigned long long bytes);

/*
 * tt_tl_next_due() - the next prefetch whose trigger time is <= @now
 * Return: 1 with its layer id in *@id (and the layer marked due), or 0
 * with the next trigger time (absolute) in *@next, or ~0ULL when none.
 * With @anchor set the trigger times are the plan's shifted by @drift_ns,
 * which every layer event of a planned layer updates: the caller asks
 * again after such events, not only when the last *@next came. With
 * @count, a prefetch the backward pass released comes before its trigger
 * time; with @anchor too, no earlier than its hold (k transfer times at PR
 * before the trigger, for a layer whose transfer takes 1/TT_TL_HOLD_DIV of
 * the profiled iteration or more), which *@next then gives when sooner.
 */
int tt_tl_next_due(struct tt_tl *tl, unsigned long long now, unsigned int *id,
		   unsigned long long *next);

/*
 * tt_tl_set_modes() - @modes, TT_TL_MODE_* bits (other bits ignored):
 * OFF: never order an eviction; ALAP: plan prefetches as late as possible;
 * ANCHOR: triggers follow the drift; COUNT: a backward begin releases the
 * prefetches of the next k layers (k restarts at 1 when COUNT or DYNAMIC
 * is switched on); DYNAMIC: one profile per layer-sequence signature, the
 * layer-count fallback for an iteration no signature predicts.
 * Applies from the next plan (OFF, ANCHOR and COUNT at once).
 */
void tt_tl_set_modes(struct tt_tl *tl, unsigned int modes);

/*
 * TT_TL_MODE_* - the timeline's modes; the values are the TT_SCHED_* flag
 * bits of the uapi header (the executors check that they are equal), so a
 * session's flags word can be passed as it is.
 */
#define TT_TL_MODE_OFF		0x002U
#define TT_TL_MODE_ANCHOR	0x004U
#define TT_TL_MODE_ALAP		0x008U
#define TT_TL_MODE_COUNT	0x040U
#define TT_TL_MODE_DYNAMIC	0x080U

/*
 * tt_tl_next_evict() - TT_TL_MODE_DYNAMIC's fallback: after a forward end,
 * the delayed evictions it ordered, one per call (the layer k forward
 * positions back, whole): 1 with *@idx and *@bytes set, 0 when none is
 * left. The caller evicts the layer if its previous episode is over, as
 * for TT_TL_ACT_EVICT; its prefetch comes out of tt_tl_next_due() when the
 * backward pass is k layers before it.
 */
int tt_tl_next_evict(struct tt_tl *tl, unsigned int *idx,
		     unsigned long long *bytes);

/*
 * tt_tl_miss_get() - miss log entry @i, 0 the newest: 1 and *@m, or 0 past
 * the entries kept.
 */
int tt_tl_miss_get(const struct tt_tl *tl, unsigned int i,
		   struct tt_tl_miss *m);

/* tt_tl_signatures() - signatures remembered now. */
unsigned int tt_tl_signatures(const struct tt_tl *tl);

/*
 * TT_SCHED_COUNT: k's bounds, and the on-time iterations that shrink it;
 * TT_TL_MODE_DYNAMIC: how many forward positions an eviction trails its
 * layer's forward end.
 */
#define TT_TL_AHEAD_MAX		8U
#define TT_TL_AHEAD_SHRINK	16U
/* a release is held for layers moving in 1/TT_TL_HOLD_DIV of an iteration */
#define TT_TL_HOLD_DIV		128U
/* a planned release covers this many times the layer's transfer */
#define TT_TL_REACH_MUL		2U
/* &tt_tl.pr_low_bps stays within 1/TT_TL_PR_LOW_DIV of &tt_tl.pr_bps */
#define TT_TL_PR_LOW_DIV	4U
/* a sample closes 1/TT_TL_LOW_FADE of the gap to a faster rate, a shorter wait */
#define TT_TL_LOW_FADE		16U
/* a dispatch wait counts for at most 1/TT_TL_DISP_DIV of the iteration */
#define TT_TL_DISP_DIV		16U
#define TT_TL_EVICT_DELAY	2U
/*
 * The dynamic fallback's admission (tt_tl_next_evict()): transfer times
 * are estimated this many percent of the measured rates' (a margin for
 * their noise), and a layer not evicted yet is considered again at each
 * forward end while it is among the latest TT_TL_RECENT positions.
 */
#define TT_TL_FB_MARGIN_PCT	125U

/*
 * tt_tl_lead() - the lead @l's prefetch is planned with: its learnt
 * @lead_ns, and under TT_SCHED_COUNT at least the turn's floor for a layer
 * no backward step releases in time (TT_TL_L_TURN).
 */
unsigned long long tt_tl_lead(const struct tt_tl *tl,
			      const struct tt_tl_layer *l);

/* tt_tl_ahead_max() - the largest k of the layers (1 without layers). */
unsigned int tt_tl_ahead_max(const struct tt_tl *tl);

/*
 * tt_tl_evict_expired() - whether the eviction of layer @idx, @bytes from
 * @now on at the ER estimate plus the stay time, would end after the
 * layer's prefetch is due (its planned trigger, shifted by the drift under
 * TT_SCHED_ANCHOR), or its prefetch is due already: the round trip the
 * plan made for it no longer fits (an eviction that waited in the queue).
 * 0 for a layer this iteration's plan did not evict.
 */
int tt_tl_evict_expired(const struct tt_tl *tl, unsigned int idx,
			unsigned long long now, unsigned long long bytes);

/*
 * tt_tl_evict_drop() - the eviction ordered for layer @idx this iteration
 * is not started (tt_tl_evict_expired()): the layer-iteration counts as
 * dropped as well (it was counted accepted or modified when ordered: the
 * counters only grow), and as not evicted.
 */
void tt_tl_evict_drop(struct tt_tl *tl, unsigned int idx);

/* Execution reports for layer @idx of the current iteration. */
void tt_tl_evict_start(struct tt_tl *tl, unsigned int idx,
		       unsigned long long now);
void tt_tl_evict_end(struct tt_tl *tl, unsigned int idx,
		     unsigned long long now, unsigned long long bytes);
void tt_tl_prefetch_start(struct tt_tl *tl, unsigned int idx,
			  unsigned long long now);
/* The evicted bytes are all back at @now: lateness feedback. */
void tt_tl_prefetch_end(struct tt_tl *tl, unsigned int idx,
			unsigned long long now);

/*
 * tt_tl_bwd_check() - at the backward begin of layer @idx, @evicted bytes
 * of it had been evicted in this iteration and @outstanding of them were
 * not back: counts on-time and late bytes, shrinks the lead when on time.
 */
void tt_tl_bwd_check(struct tt_tl *tl, unsigned int idx,
		     unsigned long long evicted,
		     unsigned long long outstanding);

/*
 * tt_tl_late_add() - @bytes of layer @idx were evicted after its backward
 * pass began (by an eviction that was still running then): late too.
 * Nothing happens before tt_tl_bwd_check() was called for the layer.
 */
void tt_tl_late_add(struct tt_tl *tl, unsigned int idx,
		    unsigned long long bytes);

/*
 * tt_tl_rate_sample() - a migration of @dir (TT_TL_EVICT, TT_TL_PREFETCH)
 * moved @bytes in @ns: folded into ER or PR (ignored below
 * TT_TL_RATE_MIN_BYTES or with @ns 0). The seed tt_tl_init() was given is
 * not a measurement: the first sample replaces it, the next ones make a
 * plain mean up to TT_TL_RATE_SETTLED samples, then weight TT_TL_WEIGHT.
 * While the other direction has no sample, it takes this one too (the
 * same nodes, the same path: a better guess than the seed). When the PR
 * estimate is then more than TT_TL_RATE_MISS times off (either way) the
 * one the current iteration began with, or a prefetch sample is, while the
 * PR estimate has fewer than TT_TL_RATE_SETTLED samples, it sets
 * &tt_tl.rate_miss.
 */
void tt_tl_rate_sample(struct tt_tl *tl, int dir, unsigned long long bytes,
		       unsigned long long ns);

/*
 * tt_tl_set_rates() - assume these rates from now on (0 keeps a rate): a
 * rate set counts as settled (later samples weigh TT_TL_WEIGHT); a PR set
 * also clears @pr_low_bps, so the next plan takes PR as set.
 */
void tt_tl_set_rates(struct tt_tl *tl, unsigned long long er_bps,
		     unsigned long long pr_bps);

#endif /* TT_TIMELINE_H */
