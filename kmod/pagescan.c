// SPDX-License-Identifier: GPL-2.0
/*
 * Read-only page-table scans and TT_IOC_RESIDENCY.
 *
 * walk_page_range() is not exported; hmm_range_fault() is, and with
 * default_flags == 0 and pfn_flags_mask == 0 it never faults: it only reports
 * what the page tables map. What it reports in 6.1 (mm/hmm.c), and how it is
 * read here:
 *
 *  - a present pte or pmd: the pfn with HMM_PFN_VALID; a pmd-mapped THP also
 *    carries map order 9 (PMD_SHIFT - PAGE_SHIFT) in every one of its pfns.
 *  - a PROT_NONE pte or pmd set by automatic NUMA balancing (pte_protnone /
 *    pmd_protnone): the pfn *without* HMM_PFN_VALID and without an order
 *    (hmm_vma_handle_pte() and hmm_vma_handle_pmd() store "pfn | 0").
 *    Such pages are resident, so a non-zero pfn counts as present whether or
 *    not HMM_PFN_VALID is set. pfn 0 is never a user page on x86-64 (the
 *    first page of RAM is reserved at boot), so 0 is unambiguous.
 *  - pte_none, a swap entry, a migration entry (a page being migrated at
 *    that instant) or a device-private entry of another owner: 0 -> absent.
 *  - the shared zero page: its pfn (is_zero_pfn()) -> zero.
 *  - the huge zero page: its pfns with HMM_PFN_VALID and order 9. Its
 *    symbol is not exported; it is recognised as the only page an anonymous
 *    mapping can map that is not an anonymous page.
 *  - a vma without VM_READ (PROT_NONE set by the program), VM_IO or
 *    VM_PFNMAP, or a special pte without a struct page: HMM_PFN_ERROR, the
 *    page tables of such a vma are not read. tt_pagescan_residency() reads a vma
 *    without VM_READ with get_user_pages_remote(FOLL_FORCE | FOLL_NOFAULT)
 *    instead; VM_IO and VM_PFNMAP pages (device memory) count as absent.
 */
#include <linux/hmm.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/mmu_notifier.h>
#include <linux/nodemask.h>
#include <linux/page-flags.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "compat.h"
#include "pagescan.h"

/* Pages scanned per hmm_range_fault() call by tt_pagescan_residency(). */
#define TT_SCAN_CHUNK	512

static bool tt_pagescan_invalidate(struct mmu_interval_notifier *mni,
				   const struct mmu_notifier_range *range,
				   unsigned long cur_seq)
{
	/*
	 * Nothing is cached from a scan, so there is nothing to invalidate:
	 * recording the sequence makes a scan running concurrently return
	 * -EBUSY and be repeated.
	 */
	mmu_interval_set_seq(mni, cur_seq);
	return true;
}

static const struct mmu_interval_notifier_ops tt_pagescan_ops = {
	.invalidate = tt_pagescan_invalidate,
};

/**
 * tt_pagescan_init() - start watching [start, end) of @mm
 * @ps:    the scanner.
 * @mm:    an mm with mm_users > 0 (the caller's, or one held by mmget()).
 * @start: page-aligned start.
 * @end:   page-aligned end, > @start.
 *
 * Must be called without mmap_lock.
 *
 * Return: 0 or a negative errno (-ENOMEM).
 */
int tt_pagescan_init(struct tt_pagescan *ps, struct mm_struct *mm,
		     unsigned long start, unsigned long end)
{
	return mmu_interval_notifier_insert(&ps->notifier, mm, start,
					    end - start, &tt_pagescan_ops);
}

/**
 * tt_pagescan_exit() - stop watching; must be called without mmap_lock
 * @ps: the scanner.
 */
void tt_pagescan_exit(struct tt_pagescan *ps)
{
	mmu_interval_notifier_remove(&ps->notifier);
}

/**
 * tt_pagescan_begin() - start one scan; call without mmap_lock
 * @ps: the scanner.
 *
 * Return: the sequence to pass to tt_pagescan_fill().
 */
unsigned long tt_pagescan_begin(struct tt_pagescan *ps)
{
	return mmu_interval_read_begin(&ps->notifier);
}

/**
 * tt_pagescan_fill() - read the page-table entries of [start, end)
 * @ps:    the scanner; [start, end) must lie inside its range.
 * @seq:   from tt_pagescan_begin().
 * @start: page-aligned start.
 * @end:   page-aligned end.
 * @pfns:  out: one hmm pfn per page, decode with tt_pagescan_page().
 *
 * Called with mmap_read_lock held. Never faults and never sleeps waiting
 * for a page.
 *
 * Return: 0, -EBUSY when the range was invalidated meanwhile (unlock and
 * repeat from tt_pagescan_begin()), or another negative errno.
 */
int tt_pagescan_fill(struct tt_pagescan *ps, unsigned long seq,
		     unsigned long start, unsigned long end,
		     unsigned long *pfns)
{
	struct hmm_range range = {
		.notifier = &ps->notifier,
		.notifier_seq = seq,
		.start = start,
		.end = end,
		.hmm_pfns = pfns,
		.default_flags = 0,
		.pfn_flags_mask = 0,
	};

	return hmm_range_fault(&range);
}

/**
 * tt_pagescan_page() - decode one pfn of a scan
 * @vma:     the vma the pfn was read from.
 * @hmm_pfn: the value tt_pagescan_fill() stored.
 * @kind:    out: what the entry maps.
 *
 * The page is not referenced: it may be freed at any time after the scan,
 * so the caller may look at it (node, flags) but must not use it.
 *
 * Return: the page when @kind is TT_PAGE_PRESENT, NULL otherwise.
 */
struct page *tt_pagescan_page(struct vm_area_struct *vma,
			      unsigned long hmm_pfn, enum tt_page_kind *kind)
{
	unsigned long pfn = hmm_pfn & ~HMM_PFN_FLAGS;
	struct page *page;

	*kind = TT_PAGE_ABSENT;
	if ((hmm_pfn & HMM_PFN_ERROR) || !pfn)
		return NULL;
	if (is_zero_pfn(pfn)) {
		*kind = TT_PAGE_ZERO;
		return NULL;
	}
	if (!pfn_valid(pfn))
		return NULL;
	page = pfn_to_page(pfn);
	if (vma_is_anonymous(vma) && !PageAnon(page)) {
		*kind = TT_PAGE_ZERO;
		return NULL;
	}
	*kind = TT_PAGE_PRESENT;
	return page;
}

/**
 * tt_pagescan_pte_mapped_thp() - does this entry map part of a THP by a pte?
 * @page:    the page tt_pagescan_page() returned.
 * @hmm_pfn: the value tt_pagescan_fill() stored.
 *
 * True for an accessible pte pointing into a compound page (a THP whose
 * huge pmd was split by a partial munmap, mprotect or madvise). A PROT_NONE
 * (NUMA hinting) entry is never reported: hmm gives no mapping order for it,
 * so a pte cannot be told from a huge pmd.
 *
 * Return: true for a THP mapped by ptes.
 */
bool tt_pagescan_pte_mapped_thp(struct page *page, unsigned long hmm_pfn)
{
	return (hmm_pfn & HMM_PFN_VALID) && PageCompound(page) &&
	       hmm_pfn_to_map_order(hmm_pfn) == 0;
}

/**
 * tt_pagescan_vmas() - the one walk over the vmas of a range: is all of it
 * mapped, and does each vma pass a check?
 * @mm:    the mm (mmap_lock not held).
 * @start: start of the range.
 * @end:   its end (exclusive).
 * @check: called for each vma the range meets, mmap_read_lock held; a
 *         non-zero return ends the walk and is returned. NULL: no check.
 *
 * Holds mmap_read_lock for the whole walk. Used by tt_migrate_check() and
 * tt_pagescan_residency().
 *
 * Return: 0; -EFAULT when part of the range is not mapped; what @check
 * returned; -EINTR on a fatal signal.
 */
int tt_pagescan_vmas(struct mm_struct *mm, unsigned long start,
		     unsigned long end, int (*check)(struct vm_area_struct *vma))
{
	struct vm_area_struct *vma;
	unsigned long addr = start;
	int ret = 0;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	while (addr < end) {
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr) {
			ret = -EFAULT;
			break;
		}
		ret = check ? check(vma) : 0;
		if (ret)
			break;
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}

/**
 * struct tt_pagescan_residency_acc - what tt_pagescan_residency() adds up
 * @bytes:       per-node bytes, @nr_nodes elements.
 * @nr_nodes:    elements of @bytes.
 * @not_present: bytes not resident.
 * @other:       bytes on nodes >= @nr_nodes.
 */
struct tt_pagescan_residency_acc {
	u64 *bytes;
	u32 nr_nodes;
	u64 *not_present;
	u64 *other;
};

static void tt_pagescan_residency_count(struct tt_pagescan_residency_acc *acc,
					struct page *page)
{
	int nid;

	if (!page) {
		*acc->not_present += PAGE_SIZE;
		return;
	}
	nid = page_to_nid(page);
	if (nid < acc->nr_nodes)
		acc->bytes[nid] += PAGE_SIZE;
	else
		*acc->other += PAGE_SIZE;
}

/*
 * hmm_range_fault() does not read the page tables of a vma without VM_READ
 * (PROT_NONE set by the program). get_user_pages_remote() may, with
 * FOLL_FORCE, and with FOLL_NOFAULT it never faults: it stops before the
 * first page that is not present. Called with mmap_read_lock held.
 */
static void tt_pagescan_residency_gup(struct tt_pagescan_residency_acc *acc,
				      struct vm_area_struct *vma, unsigned long addr,
				      unsigned long end, struct page **pages)
{
	long n, i;

	while (addr < end) {
		n = tt_gup_remote(vma->vm_mm, addr,
				  min_t(unsigned long, TT_SCAN_CHUNK,
					(end - addr) >> PAGE_SHIFT),
				  FOLL_FORCE | FOLL_NOFAULT, pages);
		if (n <= 0) {
			tt_pagescan_residency_count(acc, NULL);
			addr += PAGE_SIZE;
			continue;
		}
		for (i = 0; i < n; i++) {
			struct page *page = pages[i];

			if (is_zero_pfn(page_to_pfn(page)) ||
			    (vma_is_anonymous(vma) && !PageAnon(page)))
				tt_pagescan_residency_count(acc, NULL);
			else
				tt_pagescan_residency_count(acc, page);
			put_page(page);
		}
		addr += n << PAGE_SHIFT;
	}
}

/* One piece of tt_pagescan_residency(), inside @vma, with mmap_read_lock held. */
static int tt_pagescan_residency_piece(struct tt_pagescan_residency_acc *acc,
				       struct tt_pagescan *ps, unsigned long seq,
				       struct vm_area_struct *vma, unsigned long addr,
				       unsigned long end, unsigned long *buf)
{
	unsigned long i;
	int ret;

	if (!(vma->vm_flags & (VM_READ | VM_IO | VM_PFNMAP))) {
		tt_pagescan_residency_gup(acc, vma, addr, end, (struct page **)buf);
		return 0;
	}
	ret = tt_pagescan_fill(ps, seq, addr, end, buf);
	if (ret)
		return ret;
	for (i = 0; i < (end - addr) >> PAGE_SHIFT; i++) {
		enum tt_page_kind kind;

		tt_pagescan_residency_count(acc, tt_pagescan_page(vma, buf[i], &kind));
	}
	return 0;
}

/**
 * tt_pagescan_residency() - bytes of [start, end) resident on each node
 * @mm:          the caller's mm.
 * @start:       page-aligned start.
 * @end:         page-aligned end, > @start.
 * @bytes:       out: @nr_nodes counters, zeroed by the caller.
 * @nr_nodes:    elements of @bytes.
 * @not_present: out: bytes not resident (added to).
 * @other:       out: bytes on nodes >= @nr_nodes (added to).
 *
 * Never faults, never moves anything, accepts any mapping type. Pages of
 * VM_IO and VM_PFNMAP mappings (device memory, no struct page) count as
 * not present.
 *
 * Return: 0, -EFAULT when part of the range is not mapped, -EINTR on a
 * fatal signal, -ENOMEM.
 */
int tt_pagescan_residency(struct mm_struct *mm, unsigned long start, unsigned long end,
			  u64 *bytes, u32 nr_nodes, u64 *not_present, u64 *other)
{
	struct tt_pagescan_residency_acc acc = {
		.bytes = bytes,
		.nr_nodes = nr_nodes,
		.not_present = not_present,
		.other = other,
	};
	struct vm_area_struct *vma;
	struct tt_pagescan ps;
	unsigned long *buf, addr, next, seq;
	int ret;

	BUILD_BUG_ON(sizeof(*buf) != sizeof(struct page *));
	ret = tt_pagescan_vmas(mm, start, end, NULL);
	if (ret)
		return ret;
	/* hmm pfns, or struct page pointers for tt_pagescan_residency_gup() */
	buf = kmalloc_array(TT_SCAN_CHUNK, sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	ret = tt_pagescan_init(&ps, mm, start, end);
	if (ret)
		goto out_free;

	addr = start;
	while (addr < end) {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		seq = tt_pagescan_begin(&ps);
		if (mmap_read_lock_killable(mm)) {
			ret = -EINTR;
			break;
		}
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr) {
			/* Unmapped by another thread since the check. */
			next = vma ? min(vma->vm_start, end) : end;
			*not_present += next - addr;
		} else {
			next = min3(end, vma->vm_end,
				    addr + TT_SCAN_CHUNK * PAGE_SIZE);
			ret = tt_pagescan_residency_piece(&acc, &ps, seq, vma, addr,
							  next, buf);
		}
		mmap_read_unlock(mm);
		if (ret == -EBUSY) {
			/* Invalidated meanwhile: scan the piece again. */
			ret = 0;
			cond_resched();
			continue;
		}
		if (ret)
			break;
		addr = next;
		cond_resched();
	}
	tt_pagescan_exit(&ps);
out_free:
	kfree(buf);
	return ret;
}
