// SPDX-License-Identifier: GPL-2.0
/*
 * Arithmetic on migration results and the TT_IOC_STATS layout.
 */
#include <linux/kernel.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <asm/page.h>

#include "stats.h"
#include "tiers.h"

/**
 * tt_result_add() - add one migration result to another
 * @acc: accumulator.
 * @res: result to add.
 */
void tt_result_add(struct tt_migrate_result *acc,
		   const struct tt_migrate_result *res)
{
	acc->pages += res->pages;
	acc->moved += res->moved;
	acc->already_on_node += res->already_on_node;
	acc->skipped_not_present += res->skipped_not_present;
	acc->skipped_busy += res->skipped_busy;
	acc->skipped_unsupported += res->skipped_unsupported;
	acc->skipped_no_memory += res->skipped_no_memory;
	acc->elapsed_ns += res->elapsed_ns;
}

/**
 * tt_result_consistent() - do the page counts of a result add up?
 * @res: the result.
 *
 * Return: true when moved + already_on_node + skipped_* == pages.
 */
bool tt_result_consistent(const struct tt_migrate_result *res)
{
	return res->moved + res->already_on_node + res->skipped_not_present +
	       res->skipped_busy + res->skipped_unsupported +
	       res->skipped_no_memory == res->pages;
}

/**
 * tt_stats_account() - add a completed migration to the session counters
 * @st:  the counters.
 * @res: what the migration did.
 * @nid: its target node; its role decides bytes_to_fast or bytes_to_slow.
 */
void tt_stats_account(struct tt_stats *st, const struct tt_migrate_result *res,
		      int nid)
{
	u64 bytes = res->moved << PAGE_SHIFT;

	tt_result_add(&st->total, res);
	switch (tt_tier_role(nid, NULL)) {
	case TT_ROLE_FAST:
		st->bytes_to_fast += bytes;
		break;
	case TT_ROLE_SLOW:
		st->bytes_to_slow += bytes;
		break;
	default:
		break;
	}
}

/*
 * The part of struct tt_ioc_stats this module fills: all of it, the
 * scheduler counters appended in ABI 1 included; @size tells user space
 * where the filled part ends.
 */
#define TT_STATS_FILLED	sizeof(struct tt_ioc_stats)

/**
 * tt_stats_fill() - build the TT_IOC_STATS reply
 * @out:  reply, sizeof(*out) bytes.
 * @size: bytes the caller's structure has (_IOC_SIZE of its command).
 * @st:   the session's migration counters.
 * @rc:   the session's registry counters.
 * @sc:   the session's scheduler counters.
 * @mc:   the session's backend counters.
 *
 * Return: the number of bytes of @out to copy to user space, which is also
 * stored in @out->size.
 */
size_t tt_stats_fill(struct tt_ioc_stats *out, size_t size,
		     const struct tt_stats *st,
		     const struct tt_registry_counts *rc,
		     const struct tt_sched_stats *sc,
		     const struct tt_mover_counts *mc)
{
	memset(out, 0, sizeof(*out));
	out->abi_version = TT_ABI_VERSION;
	out->size = min_t(size_t, size, TT_STATS_FILLED);
	out->registered_ranges = rc->ranges;
	out->registered_bytes = rc->bytes;
	out->ranges_unmapped = rc->unmapped;
	out->migrate_calls = st->migrate_calls;
	out->async_queued = st->async_queued;
	out->async_done = st->async_done;
	out->async_cancelled = st->async_cancelled;
	out->bytes_to_fast = st->bytes_to_fast;
	out->bytes_to_slow = st->bytes_to_slow;
	out->total = st->total;
	out->iterations = sc->iterations;
	out->events = sc->events;
	out->tensors_saved = sc->tensors_saved;
	out->tensors_ignored = sc->tensors_ignored;
	out->layers_accepted = sc->layers_accepted;
	out->layers_modified = sc->layers_modified;
	out->layers_dropped = sc->layers_dropped;
	out->layers_unknown = sc->layers_unknown;
	out->bytes_evicted = sc->bytes_evicted;
	out->bytes_prefetched = sc->bytes_prefetched;
	out->ontime_bytes = sc->ontime_bytes;
	out->late_bytes = sc->late_bytes;
	out->late_count = sc->late_count;
	out->sync_fetched_bytes = sc->sync_fetched_bytes;
	out->reprofiles = sc->reprofiles;
	out->er_bps = sc->er_bps;
	out->pr_bps = sc->pr_bps;
	out->pinned_bytes = sc->pinned_bytes;
	out->archived_bytes = sc->archived_bytes;
	out->count_ahead = sc->count_ahead;
	out->count_released = sc->count_released;
	out->dyn_signatures = sc->dyn_signatures;
	out->dyn_predicted = sc->dyn_predicted;
	out->dyn_mispredicted = sc->dyn_mispredicted;
	out->dyn_fallback = sc->dyn_fallback;
	out->dyn_misses = sc->dyn_misses;
	out->last_miss_iter = sc->last_miss_iter;
	out->last_miss_layer = sc->last_miss_layer;
	out->last_miss_kind = sc->last_miss_kind;
	out->budget_bytes = sc->budget_bytes;
	out->fast_registered_bytes = sc->fast_registered_bytes;
	out->fast_peak_bytes = sc->fast_peak_bytes;
	out->victims = sc->victims;
	out->victim_bytes = sc->victim_bytes;
	out->victim_archived_bytes = sc->victim_archived_bytes;
	out->victims_skipped_pages = sc->victims_skipped_pages;
	out->budget_waits = sc->budget_waits;
	out->budget_overruns = sc->budget_overruns;
	out->heat_wf = sc->heat_wf;
	out->heat_wr = sc->heat_wr;
	out->heat_ws = sc->heat_ws;
	out->heat_wl = sc->heat_wl;
	out->kmem_bytes = sc->kmem_bytes;
	out->engine_bytes = mc->engine_bytes;
	out->mover_bytes = mc->mover_bytes;
	out->huge_kept = mc->huge_kept;
	out->huge_split = mc->huge_split;
	out->mover_orders = mc->orders;
	out->mover_fallbacks = mc->fallbacks;
	out->mover_late = mc->late;
	out->movers = mc->movers;
	out->huge_partial = mc->huge_partial;
	out->large_pte = mc->large_pte;
	out->async_failed = st->async_failed;
	out->prefetch_left_bytes = sc->prefetch_left_bytes;
	out->landed_bytes = sc->landed_bytes;
	out->rate_probes = sc->rate_probes;
	out->left_returned_bytes = sc->left_returned_bytes;
	return out->size;
}
