/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ranges a session registered, watched for unmaps.
 */
#ifndef TT_REGISTRY_H
#define TT_REGISTRY_H

#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "stats.h"

/**
 * struct tt_registry - a session's registered ranges
 * @mm:       the session's mm.
 * @mutex:    serialises tt_registry_add(), tt_registry_remove() and
 *            tt_registry_destroy().
 * @lock:     protects the trees, @dead and the counters; taken by the
 *            interval notifier callbacks (never sleeps).
 * @by_addr:  live ranges, an interval tree on their addresses.
 * @dead:     ranges forgotten because they were unmapped, whose notifier
 *            still has to be removed (by @reap_work).
 * @reap_work: removes the notifiers of @dead (not possible inside the
 *            notifier callback that found them unmapped).
 * @counts:   registrations held, bytes covered, ranges unmapped.
 */
struct tt_registry {
	struct mm_struct *mm;
	struct mutex mutex;	/* see @mutex above */
	spinlock_t lock;	/* see @lock above */
	struct rb_root_cached by_addr;
	struct list_head dead;
	struct work_struct reap_work;
	struct tt_registry_counts counts;
};

/**
 * struct tt_range_info - a copy of one registration
 * @start: first address.
 * @end:   end address (exclusive).
 * @layer: layer id given at registration.
 * @flags: TT_RANGE_* flags given at registration.
 */
struct tt_range_info {
	unsigned long start;
	unsigned long end;
	u32 layer;
	u32 flags;
};

void tt_registry_init(struct tt_registry *reg, struct mm_struct *mm);
void tt_registry_destroy(struct tt_registry *reg);
int tt_registry_add(struct tt_registry *reg, unsigned long start,
		    unsigned long end, u32 layer, u32 flags);
int tt_registry_remove(struct tt_registry *reg, unsigned long start,
		       unsigned long end);
bool tt_registry_lookup(struct tt_registry *reg, unsigned long addr,
			struct tt_range_info *info);
void tt_registry_counts(struct tt_registry *reg,
			struct tt_registry_counts *counts);

#endif /* TT_REGISTRY_H */
