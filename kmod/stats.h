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

void tt_result_add(struct tt_migrate_result *acc,
		   const struct tt_migrate_result *res);
bool tt_result_consistent(const struct tt_migrate_result *res);
void tt_stats_account(struct tt_stats *st, const struct tt_migrate_result *res,
		      int nid);
size_t tt_stats_fill(struct tt_ioc_stats *out, size_t size,
		     const struct tt_stats *st,
		     const struct tt_registry_counts *rc);

#endif /* TT_STATS_H */
