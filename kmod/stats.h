/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Session counters and the arithmetic on migration results.
 */
#ifndef TT_STATS_H
#define TT_STATS_H

#include <linux/types.h>
#include <linux/tiertrain.h>

#include "exec.h"

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

/* struct tt_sched_stats, the scheduler's part of struct tt_ioc_stats: core/exec.h */

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
