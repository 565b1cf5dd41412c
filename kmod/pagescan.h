/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Read-only page-table scans (hmm_range_fault without faults)
 * and the TT_IOC_RESIDENCY query built on them.
 */
#ifndef TT_PAGESCAN_H
#define TT_PAGESCAN_H

#include <linux/mm_types.h>
#include <linux/mmu_notifier.h>
#include <linux/types.h>

/**
 * struct tt_pagescan - a scanner over one range of an mm
 * @notifier: interval notifier over the range; hmm_range_fault() needs one
 *            to detect concurrent invalidations.
 *
 * Protocol: tt_pagescan_init() without mmap_lock; then for each piece to
 * scan, tt_pagescan_begin() without mmap_lock, mmap_read_lock(),
 * tt_pagescan_fill(), and on -EBUSY unlock and start again from
 * tt_pagescan_begin(); finally tt_pagescan_exit() without mmap_lock.
 */
struct tt_pagescan {
	struct mmu_interval_notifier notifier;
};

/**
 * enum tt_page_kind - what a scanned page-table entry maps
 * @TT_PAGE_ABSENT:  nothing resident: never touched, swapped out, a
 *                   migration in progress, or a mapping without struct
 *                   pages.
 * @TT_PAGE_ZERO:    the shared zero page or the huge zero page.
 * @TT_PAGE_PRESENT: a page of RAM (possibly PROT_NONE for NUMA hinting).
 */
enum tt_page_kind {
	TT_PAGE_ABSENT,
	TT_PAGE_ZERO,
	TT_PAGE_PRESENT,
};

int tt_pagescan_init(struct tt_pagescan *ps, struct mm_struct *mm,
		     unsigned long start, unsigned long end);
void tt_pagescan_exit(struct tt_pagescan *ps);
unsigned long tt_pagescan_begin(struct tt_pagescan *ps);
int tt_pagescan_fill(struct tt_pagescan *ps, unsigned long seq,
		     unsigned long start, unsigned long end,
		     unsigned long *pfns);
struct page *tt_pagescan_page(struct vm_area_struct *vma,
			      unsigned long hmm_pfn, enum tt_page_kind *kind);
bool tt_pagescan_pte_mapped_thp(struct page *page, unsigned long hmm_pfn);
int tt_pagescan_vmas(struct mm_struct *mm, unsigned long start,
		     unsigned long end, int (*check)(struct vm_area_struct *vma));

int tt_pagescan_residency(struct mm_struct *mm, unsigned long start, unsigned long end,
			  u64 *bytes, u32 nr_nodes, u64 *not_present, u64 *other);

#endif /* TT_PAGESCAN_H */
