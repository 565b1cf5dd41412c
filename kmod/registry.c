// SPDX-License-Identifier: GPL-2.0
/*
 * The ranges a session registered (TT_IOC_REGISTER).
 *
 * Each registration has an mmu_interval_notifier over its range. Of the
 * invalidations it sees only two mean that the memory is gone:
 * MMU_NOTIFY_UNMAP (munmap, mremap moving the range away, mmap MAP_FIXED
 * over it, the OOM reaper, exit_mmap's unmap_vmas) and MMU_NOTIFY_RELEASE
 * (exit_mmap's mmu_notifier_release). The others leave the range mapped
 * and are ignored: MMU_NOTIFY_MIGRATE (our own migrate_vma, NUMA
 * balancing), MMU_NOTIFY_CLEAR (MADV_DONTNEED/MADV_FREE, reclaim, THP
 * split, khugepaged), MMU_NOTIFY_PROTECTION_* (mprotect, NUMA hinting,
 * fork's write protection), MMU_NOTIFY_SOFT_DIRTY, MMU_NOTIFY_EXCLUSIVE.
 *
 * An unmapped registration is taken out of the trees in the callback and
 * put on a dead list; its notifier cannot be removed there
 * (mmu_interval_notifier_remove() may not be called from a callback), so a
 * work item removes it and frees it.
 *
 * States of a range, all changed under @lock:
 *   NEW      notifier inserted, range being checked, not in the trees;
 *   GONE     NEW and unmapped meanwhile: the registration fails;
 *   LIVE     in the trees, counted;
 *   DEAD     unmapped, on the dead list, reaped by reap_work;
 *   REMOVING owned by whoever took it out (unregister, reap, destroy),
 *            which removes its notifier and frees it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/interval_tree.h>
#include <linux/mmu_notifier.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "config.h"
#include "migrate.h"
#include "registry.h"

enum tt_range_state {
	TT_RANGE_NEW,
	TT_RANGE_GONE,
	TT_RANGE_LIVE,
	TT_RANGE_DEAD,
	TT_RANGE_REMOVING,
};

/**
 * struct tt_range - one registration
 * @it:         node in the registry's address interval tree (start, last).
 * @notifier:   watches the range for unmaps.
 * @reg:        the registry.
 * @dead_link:  on the registry's dead list, or a private list.
 * @layer:      layer id.
 * @flags:      TT_RANGE_* flags.
 * @state:      enum tt_range_state.
 */
struct tt_range {
	struct interval_tree_node it;
	struct mmu_interval_notifier notifier;
	struct tt_registry *reg;
	struct list_head dead_link;
	u32 layer;
	u32 flags;
	enum tt_range_state state;
};

static unsigned long tt_range_bytes(const struct tt_range *r)
{
	return r->it.last + 1 - r->it.start;
}

static void tt_range_info(const struct tt_range *r, struct tt_range_info *info)
{
	info->start = r->it.start;
	info->end = r->it.last + 1;
	info->layer = r->layer;
	info->flags = r->flags;
}

/* Ranges tt_registry_destroy() unlinks per hold of the registry's lock. */
#define TT_REG_UNLINK_BATCH 1024

/* Called with @reg->lock held. */
static void tt_range_link(struct tt_registry *reg, struct tt_range *r)
{
	interval_tree_insert(&r->it, &reg->by_addr);
	r->state = TT_RANGE_LIVE;
	reg->counts.ranges++;
	reg->counts.bytes += tt_range_bytes(r);
}

/* Called with @reg->lock held, on a LIVE range. */
static void tt_range_unlink(struct tt_registry *reg, struct tt_range *r,
			    enum tt_range_state state)
{
	interval_tree_remove(&r->it, &reg->by_addr);
	r->state = state;
	reg->counts.ranges--;
	reg->counts.bytes -= tt_range_bytes(r);
}

static void tt_range_free(struct tt_range *r)
{
	mmu_interval_notifier_remove(&r->notifier);
	kfree(r);
}

static bool tt_range_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	struct tt_range *r = container_of(mni, struct tt_range, notifier);
	struct tt_registry *reg = r->reg;
	bool reap = false;

	if (range->event != MMU_NOTIFY_UNMAP &&
	    range->event != MMU_NOTIFY_RELEASE)
		return true;

	/* A spinlock only: this may run in the non-blocking OOM reaper. */
	spin_lock(&reg->lock);
	mmu_interval_set_seq(mni, cur_seq);
	if (r->state == TT_RANGE_NEW) {
		r->state = TT_RANGE_GONE;
	} else if (r->state == TT_RANGE_LIVE) {
		tt_range_unlink(reg, r, TT_RANGE_DEAD);
		list_add_tail(&r->dead_link, &reg->dead);
		reg->counts.unmapped++;
		reap = true;
	}
	spin_unlock(&reg->lock);
	if (reap)
		schedule_work(&reg->reap_work);
	return true;
}

static const struct mmu_interval_notifier_ops tt_range_ops = {
	.invalidate = tt_range_invalidate,
};

static void tt_registry_reap(struct work_struct *work)
{
	struct tt_registry *reg = container_of(work, struct tt_registry,
					       reap_work);
	struct tt_range *r;

	for (;;) {
		spin_lock(&reg->lock);
		r = list_first_entry_or_null(&reg->dead, struct tt_range,
					     dead_link);
		if (r) {
			list_del_init(&r->dead_link);
			r->state = TT_RANGE_REMOVING;
		}
		spin_unlock(&reg->lock);
		if (!r)
			break;
		tt_range_free(r);
	}
}

/**
 * tt_registry_init() - initialise an empty registry
 * @reg: the registry.
 * @mm:  the mm its ranges belong to; the caller keeps it grabbed (mmgrab)
 *       for the registry's lifetime.
 */
void tt_registry_init(struct tt_registry *reg, struct mm_struct *mm)
{
	reg->mm = mm;
	mutex_init(&reg->mutex);
	spin_lock_init(&reg->lock);
	reg->by_addr = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&reg->dead);
	INIT_WORK(&reg->reap_work, tt_registry_reap);
	memset(&reg->counts, 0, sizeof(reg->counts));
}

/**
 * tt_registry_destroy() - forget every registration
 * @reg: the registry; no other call on it may run or follow.
 *
 * Removes every notifier (waiting for callbacks that are running) and frees
 * everything. Works whether or not the mm has exited.
 */
void tt_registry_destroy(struct tt_registry *reg)
{
	struct tt_range *r, *tmp;
	struct rb_node *node;
	unsigned int n = 0;
	LIST_HEAD(list);

	mutex_lock(&reg->mutex);
	spin_lock(&reg->lock);
	while ((node = rb_first_cached(&reg->by_addr))) {
		r = container_of(node, struct tt_range, it.rb);
		tt_range_unlink(reg, r, TT_RANGE_REMOVING);
		list_add_tail(&r->dead_link, &list);
		/*
		 * The notifier callbacks spin on @reg->lock: it is held for
		 * at most TT_REG_UNLINK_BATCH unlinks at a time (max_ranges
		 * allows 2^20). The tree stays consistent between batches;
		 * a callback may move a range to @dead meanwhile (below).
		 */
		if (++n % TT_REG_UNLINK_BATCH == 0) {
			spin_unlock(&reg->lock);
			cond_resched();
			spin_lock(&reg->lock);
		}
	}
	list_for_each_entry(r, &reg->dead, dead_link)
		r->state = TT_RANGE_REMOVING;
	list_splice_init(&reg->dead, &list);
	spin_unlock(&reg->lock);

	/*
	 * After this no callback of ours runs: a callback that queued
	 * reap_work has returned, so cancel_work_sync() below catches it.
	 */
	list_for_each_entry_safe(r, tmp, &list, dead_link) {
		tt_range_free(r);
		cond_resched();
	}
	cancel_work_sync(&reg->reap_work);
	mutex_unlock(&reg->mutex);
}

/**
 * tt_registry_add() - register a range
 * @reg:   the registry.
 * @start: page-aligned start, from tt_range_from_user().
 * @end:   page-aligned end.
 * @layer: layer id.
 * @flags: TT_RANGE_* flags, already checked.
 *
 * The range checks run after the notifier is in place, so an unmap racing
 * with the registration is never missed.
 *
 * Return: 0; the range errors of tt_migrate_check(); -EEXIST when the range
 * overlaps a registration; -ENOSPC when max_ranges are held; -ENOMEM;
 * -EINTR on a fatal signal.
 */
int tt_registry_add(struct tt_registry *reg, unsigned long start,
		    unsigned long end, u32 layer, u32 flags)
{
	struct tt_range *r;
	int ret;

	if (mutex_lock_killable(&reg->mutex))
		return -EINTR;
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r) {
		ret = -ENOMEM;
		goto out;
	}
	r->it.start = start;
	r->it.last = end - 1;
	r->layer = layer;
	r->flags = flags;
	r->reg = reg;
	r->state = TT_RANGE_NEW;
	INIT_LIST_HEAD(&r->dead_link);
	ret = mmu_interval_notifier_insert(&r->notifier, reg->mm, start,
					   end - start, &tt_range_ops);
	if (ret) {
		kfree(r);
		goto out;
	}

	ret = tt_migrate_check(reg->mm, start, end);

	spin_lock(&reg->lock);
	if (!ret && r->state == TT_RANGE_GONE)
		ret = -EFAULT;
	else if (!ret && interval_tree_iter_first(&reg->by_addr, start, end - 1))
		ret = -EEXIST;
	else if (!ret && reg->counts.ranges >= tt_config_get(TT_CFG_MAX_RANGES))
		ret = -ENOSPC;
	if (!ret)
		tt_range_link(reg, r);
	else
		r->state = TT_RANGE_REMOVING;
	spin_unlock(&reg->lock);

	if (ret)
		tt_range_free(r);
out:
	mutex_unlock(&reg->mutex);
	return ret;
}

/**
 * tt_registry_remove() - forget the registration of exactly [start, end)
 * @reg:   the registry.
 * @start: start of the registration.
 * @end:   its end.
 *
 * Return: 0, -ENOENT when no registration has that start and end, -EINTR
 * on a fatal signal.
 */
int tt_registry_remove(struct tt_registry *reg, unsigned long start,
		       unsigned long end)
{
	struct interval_tree_node *it;
	struct tt_range *r = NULL;

	if (mutex_lock_killable(&reg->mutex))
		return -EINTR;
	spin_lock(&reg->lock);
	it = interval_tree_iter_first(&reg->by_addr, start, end - 1);
	if (it && it->start == start && it->last == end - 1) {
		r = container_of(it, struct tt_range, it);
		tt_range_unlink(reg, r, TT_RANGE_REMOVING);
	}
	spin_unlock(&reg->lock);
	if (r)
		tt_range_free(r);
	mutex_unlock(&reg->mutex);
	return r ? 0 : -ENOENT;
}

/**
 * tt_registry_lookup() - the registration containing an address
 * @reg:  the registry.
 * @addr: any address.
 * @info: out: a copy of the registration.
 *
 * Return: true when a live registration contains @addr.
 */
bool tt_registry_lookup(struct tt_registry *reg, unsigned long addr,
			struct tt_range_info *info)
{
	struct interval_tree_node *it;

	spin_lock(&reg->lock);
	it = interval_tree_iter_first(&reg->by_addr, addr, addr);
	if (it)
		tt_range_info(container_of(it, struct tt_range, it), info);
	spin_unlock(&reg->lock);
	return !!it;
}

/**
 * tt_registry_counts() - the registry's counters
 * @reg:    the registry.
 * @counts: out.
 */
void tt_registry_counts(struct tt_registry *reg,
			struct tt_registry_counts *counts)
{
	spin_lock(&reg->lock);
	*counts = reg->counts;
	spin_unlock(&reg->lock);
}
