/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Session counters and the arithmetic on migration results.
 */
#ifndef TT_STATS_H
#define TT_STATS_H

#include <linux/types.h>
#include <linux/tiertrain.h>

/**
 * struct tt_stats - migration counters of a session (see struct tt_ioc_stats)
 * @migrate_calls:   TT_IOC_MIGRATE calls that passed the checks.
 * @async_queued:    asynchronous migrations queued.
 * @async_done:      asynchronous migrations completed.
 * @async_cancelled: asynchronous migrations cancelled before they started.
 * @async_failed:    asynchronous migrations stopped by an error.
 * @bytes_to_fast:   bytes moved to nodes whose role is fast.
 * @bytes_to_slow:   bytes moved to nodes whose role is slow.
 * @total:           sum of the results of every completed migration.
 *
 * The owner serialises access (the session's spinlock).
 */
struct tt_stats {
	u64 migrate_calls;
	u64 async_queued;
	u64 async_done;
	u64 async_cancelled;
	u64 async_failed;
	u64 bytes_to_fast;
	u64 bytes_to_slow;
	struct tt_migrate_result total;
};

/**
 * struct tt_registry_counts - the registry's part of struct tt_ioc_stats
 * @ranges:   registrations held.
 * @bytes:    bytes they cover.
 * @unmapped: registrations forgotten because their memory was unmapped.
 */
struct tt_registry_counts {
	u64 ranges;
	u64 bytes;
	u64 unmapped;
};

/**
 * struct tt_sched_stats - the scheduler's part of struct tt_ioc_stats
 * @iterations:         TT_EV_ITER_BEGIN events seen.
 * @events:             events of any type accepted.
 * @tensors_saved:      TT_EV_TENSOR_SAVED events that covered whole pages.
 * @tensors_ignored:    TT_EV_TENSOR_SAVED events smaller than a page.
 * @layers_accepted:    layer-iterations evicted whole.
 * @layers_modified:    layer-iterations evicted in part.
 * @layers_dropped:     layer-iterations the policy kept on the fast tier.
 * @layers_unknown:     layer-iterations not in the profile.
 * @bytes_evicted:      bytes the scheduler moved to slow nodes.
 * @bytes_prefetched:   bytes the scheduler moved back.
 * @ontime_bytes:       evicted bytes back when their backward layer began.
 * @late_bytes:         evicted bytes still slow when it began.
 * @late_count:         layer-iterations with late bytes.
 * @sync_fetched_bytes: late bytes fetched synchronously.
 * @reprofiles:         profile restarts after a deviation.
 * @er_bps:             eviction rate estimate, bytes/s.
 * @pr_bps:             prefetch rate estimate, bytes/s.
 * @pinned_bytes:       memory hinted TT_HINT_PIN_FAST now.
 * @archived_bytes:     memory hinted TT_HINT_ARCHIVE now.
 * @count_ahead:        TT_SCHED_COUNT's k (0 when off).
 * @count_released:     prefetches released before their trigger time.
 * @dyn_signatures:     TT_SCHED_DYNAMIC: signatures remembered.
 * @dyn_predicted:      iterations planned from a signature that held.
 * @dyn_mispredicted:   iterations whose predicted signature diverged.
 * @dyn_fallback:       iterations on the layer-count fallback.
 * @dyn_misses:         miss log entries written.
 * @last_miss_iter:     the newest miss: its iteration,
 * @last_miss_layer:    its layer,
 * @last_miss_kind:     its TT_TRACE_F_MISS_* kind.
 * @budget_bytes:       the fast-tier budget in force (0: none).
 * @fast_registered_bytes: registered bytes counted on the fast tier.
 * @fast_peak_bytes:    their highest value.
 * @victims:            victim evictions.
 * @victim_bytes:       bytes they moved.
 * @victim_archived_bytes: of those, hinted TT_HINT_ARCHIVE.
 * @victims_skipped_pages: victim pages that could not move.
 * @budget_waits:       prefetches stopped to wait for room.
 * @budget_overruns:    calls that returned over the budget.
 * @heat_wf:            heat weights, 1024 = 1.0: future access count,
 * @heat_wr:            distance to the next use,
 * @heat_ws:            size,
 * @heat_wl:            lifetime.
 * @kmem_bytes:         kernel memory held in arrays sized by the session's
 *                      input (chunk lists, budget scratch, hint set).
 * @prefetch_left_bytes: bytes prefetches left on slow nodes after their
 *                      retries.
 */
struct tt_sched_stats {
	u64 iterations;
	u64 events;
	u64 tensors_saved;
	u64 tensors_ignored;
	u64 layers_accepted;
	u64 layers_modified;
	u64 layers_dropped;
	u64 layers_unknown;
	u64 bytes_evicted;
	u64 bytes_prefetched;
	u64 ontime_bytes;
	u64 late_bytes;
	u64 late_count;
	u64 sync_fetched_bytes;
	u64 reprofiles;
	u64 er_bps;
	u64 pr_bps;
	u64 pinned_bytes;
	u64 archived_bytes;
	u64 count_ahead;
	u64 count_released;
	u64 dyn_signatures;
	u64 dyn_predicted;
	u64 dyn_mispredicted;
	u64 dyn_fallback;
	u64 dyn_misses;
	u64 last_miss_iter;
	u64 last_miss_layer;
	u64 last_miss_kind;
	u64 budget_bytes;
	u64 fast_registered_bytes;
	u64 fast_peak_bytes;
	u64 victims;
	u64 victim_bytes;
	u64 victim_archived_bytes;
	u64 victims_skipped_pages;
	u64 budget_waits;
	u64 budget_overruns;
	u64 heat_wf;
	u64 heat_wr;
	u64 heat_ws;
	u64 heat_wl;
	u64 kmem_bytes;
	u64 prefetch_left_bytes;
};

/**
 * struct tt_mover_counts - the execution backends' part of struct
 * tt_ioc_stats (mover.c)
 * @engine_bytes: bytes the in-kernel engine moved.
 * @mover_bytes:  bytes the session's mover threads moved.
 * @huge_kept:    huge pages moved whole.
 * @huge_split:   huge pages split to be moved.
 * @orders:       orders completed by a mover.
 * @fallbacks:    orders that went back to the engine.
 * @late:         completions that came after their order went back.
 * @movers:       mover threads registered and alive (filled on reading).
 * @huge_partial: huge pages a range only partly covered, not moved.
 * @large_pte:    pages of large folios mapped by ptes the engine could not
 *                move (struct tt_engine_counts).
 */
struct tt_mover_counts {
	u64 engine_bytes;
	u64 mover_bytes;
	u64 huge_kept;
	u64 huge_split;
	u64 orders;
	u64 fallbacks;
	u64 late;
	u64 movers;
	u64 huge_partial;
	u64 large_pte;
};

void tt_result_add(struct tt_migrate_result *acc,
		   const struct tt_migrate_result *res);
bool tt_result_consistent(const struct tt_migrate_result *res);
void tt_stats_account(struct tt_stats *st, const struct tt_migrate_result *res,
		      int nid);
size_t tt_stats_fill(struct tt_ioc_stats *out, size_t size,
		     const struct tt_stats *st,
		     const struct tt_registry_counts *rc,
		     const struct tt_sched_stats *sc,
		     const struct tt_mover_counts *mc);

#endif /* TT_STATS_H */
