/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The migration engine (migrate_vma) and its worker pool.
 */
#ifndef TT_MIGRATE_H
#define TT_MIGRATE_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/mm_types.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/tiertrain.h>

/*
 * TT_MIG_REMOTE: tt_migrate_range() runs in a worker, not in the thread
 * that owns @mm: it pins the mm with mmget_not_zero() (failing with -ESRCH
 * when the mm is already gone) and stops only through its @stop flag.
 */
#define TT_MIG_REMOTE	BIT(0)
/*
 * TT_MIG_MOVE_ALL: also move pages other processes map too (copy-on-write
 * after fork), as move_pages(2) with MPOL_MF_MOVE_ALL: only for a caller
 * with CAP_SYS_NICE. Without it such pages stay and count as skipped_busy
 * (as move_pages(2)'s -EACCES in libtiertrain's fallback).
 */
#define TT_MIG_MOVE_ALL	BIT(1)
/*
 * TT_MIG_SPLIT_PARTIAL (tt_mover_migrate() only): a huge page the range
 * covers only in part goes to the engine, which splits it and moves the
 * range's pages of it (huge_split), instead of staying where it is
 * (huge_partial). TT_IOC_MIGRATE asks for it: it moves every page of its
 * range or fails.
 */
#define TT_MIG_SPLIT_PARTIAL	BIT(2)
/*
 * TT_MIG_SCHED (tt_mover_migrate() only): a migration of the session's
 * scheduler (an eviction, a prefetch). Pages of its orders that a mover
 * moves after they went back to the engine are handed to the mover's
 * @landed hook (mover.h); a caller's own migration's are not.
 */
#define TT_MIG_SCHED	BIT(3)
/*
 * TT_MIG_URGENT (tt_mover_migrate() only): its orders go to the session's
 * movers ahead of the queued orders without it, behind those with it: the
 * scheduler's prefetches, which the training waits for, before its
 * evictions, which it does not.
 */
#define TT_MIG_URGENT	BIT(4)

/* Target nodes of one tt_migrate_range_to() call, at most. */
#define TT_MIG_TARGETS	8

/**
 * struct tt_engine_counts - what the engine did that struct
 * tt_migrate_result does not tell apart (added to, never zeroed)
 * @large_pte: pages of large folios mapped by page-table entries (a THP
 *             whose pmd a partial munmap or mprotect split; multi-size
 *             THP): migrate_vma skips them and no exported function splits
 *             them, so they stay where they are. Also counted in the
 *             result's skipped_unsupported.
 */
struct tt_engine_counts {
	u64 large_pte;
};

int tt_migrate_init(void);
void tt_migrate_exit(void);

int tt_range_from_user(u64 addr, u64 len, unsigned long *start,
		       unsigned long *end);
bool tt_vma_supported(struct vm_area_struct *vma);
int tt_migrate_check(struct mm_struct *mm, unsigned long start,
		     unsigned long end);
int tt_migrate_range(struct mm_struct *mm, unsigned long start,
		     unsigned long end, int nid, unsigned int flags,
		     const atomic_t *stop, struct tt_migrate_result *res,
		     struct tt_engine_counts *ec);
int tt_migrate_range_to(struct mm_struct *mm, unsigned long start,
			unsigned long end, const int *nids,
			unsigned int nr_nids, unsigned int flags,
			const atomic_t *stop, struct tt_migrate_result *res,
			struct tt_engine_counts *ec);
int tt_migrate_sync(struct mm_struct *mm, unsigned long start,
		    unsigned long end, int nid, unsigned int flags,
		    struct tt_migrate_result *res, struct tt_engine_counts *ec);
void tt_migrate_queue(struct work_struct *work);
unsigned int tt_migrate_workers(void);
unsigned int tt_migrate_batch_pages(void);

#endif /* TT_MIGRATE_H */
