// SPDX-License-Identifier: GPL-2.0
/*
 * The migration engine and its worker pool.
 *
 * Pages move with migrate_vma_setup/pages/finalize(), the only page
 * migration interface 6.1 exports, used with system-RAM destination pages
 * (mm/migrate_device.c accepts them: __migrate_device_pages() calls
 * migrate_folio(..., MIGRATE_SYNC_NO_COPY), which moves the mapping, the
 * flags and the memory cgroup charge (folio_migrate_flags() ->
 * mem_cgroup_migrate()) but not the data, so the data is copied here, into
 * a locked page, between setup and migrate_vma_pages()).
 *
 * A range is moved in batches of at most batch_pages pages, each inside one
 * vma, each with mmap_lock held for read and dropped between batches. Each
 * batch is first read with a no-fault page-table scan (pagescan.c) so that
 * pages which need not or cannot move never go through migrate_vma_setup():
 * that would unmap and remap them, and split a THP that is already on the
 * target node. What 6.1's migrate_vma_setup() leaves in src[] decides the
 * rest:
 *
 *  - MIGRATE and VALID: a page it isolated and unmapped; moved unless the
 *    destination allocation fails (skipped_no_memory) or migrate_vma_pages()
 *    drops MIGRATE because of an extra reference taken meanwhile (busy).
 *  - MIGRATE without VALID: pte_none or the zero page: not present (holes
 *    are never filled: dst stays 0).
 *  - 0: a page it could not lock, isolate or unmap, or one pinned (its
 *    reference count exceeds its map count); migrate_device_unmap() restores
 *    those and clears src to 0: busy. Without a scan (a vma without
 *    VM_READ, which hmm does not read, or a batch invalidated
 *    TT_SCAN_TRIES times in a row) a swapped-out page comes back as 0 too
 *    and is counted busy.
 * A THP mapped by ptes (after a partial munmap/mprotect) is skipped by
 * migrate_vma_collect_pmd() (PageTransCompound, "FIXME support THP") and no
 * exported function can split it: the scan counts it as unsupported, and
 * in struct tt_engine_counts' large_pte (the session's stats show it).
 * A pmd-mapped THP is split by migrate_vma_collect_pmd() and its base
 * pages move; if the split fails (the THP is pinned) its pages are busy.
 *
 * Per page the work is done by the kernel functions above, except the
 * destination allocation and the copy: destination pages come from the
 * bulk allocator (one per-cpu list lock per run of pages, not one
 * __alloc_pages() each), and the source pages that moved are held across
 * migrate_vma_finalize() and freed together with release_pages() (one
 * memory cgroup uncharge and one free list lock per run, instead of one
 * each per page in the final folio_put()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/huge_mm.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/pagemap.h>
#include <linux/preempt.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "compat.h"
#include "config.h"
#include "migrate.h"
#include "pagescan.h"
#include "stats.h"

/* Slots of a synchronous migration per worker, at least (tt_migrate_sync()). */
#define TT_SLOTS_PER_WORKER	4
#define TT_SLOT_MIN_PAGES	64UL
/* Scans of one batch repeated after concurrent invalidations, at most. */
#define TT_SCAN_TRIES		8

/*
 * Arrays of at most batch_pages entries (bounded by the setting; one
 * allocation holds the four arrays of a migration, 2 MiB at most), charged
 * to the caller's memcg (a worker's to the session's: set_active_memcg()
 * in session.c); over its limit the migration fails with -ENOMEM instead
 * of invoking the memcg OOM killer.
 */
#define TT_GFP_ARRAY	(GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_RETRY_MAYFAIL)

#define TT_GFP_DST	(GFP_HIGHUSER_MOVABLE | __GFP_THISNODE | \
			 __GFP_NORETRY | __GFP_NOWARN)

/*
 * The worker pool; NULL outside tt_migrate_init()..tt_migrate_exit().
 * WQ_UNBOUND so that migrations run on any CPU; not WQ_MEM_RECLAIM, since
 * they allocate memory and reclaim never waits for them. For an unbound
 * workqueue 6.1 applies max_active per NUMA node pool: work queued from
 * CPUs of one node runs at most `workers` at a time.
 */
static struct workqueue_struct *tt_wq;

/*
 * The bandwidth cap (setting bw_cap_mbps, 0 means off): one token bucket
 * for every migration of the module. A batch is paid for after it ran,
 * with the bytes it moved; the bucket may go into debt, and the migration
 * that put it there sleeps until the debt is repaid at the cap's rate (so
 * later ones queue behind it). The bucket holds at most 10 ms worth of the
 * rate, so an idle period buys no long unthrottled burst.
 */
static DEFINE_SPINLOCK(tt_bw_lock);
static s64 tt_bw_tokens;
static u64 tt_bw_last;

/* Pay for @bytes at @rate bytes/s: the ns to sleep. */
static u64 tt_bw_charge(u64 bytes, u64 rate)
{
	u64 now = ktime_get_ns(), burst = rate / 100;
	s64 tokens;

	spin_lock(&tt_bw_lock);
	if (now > tt_bw_last)
		tt_bw_tokens += mul_u64_u64_div_u64(min_t(u64, now - tt_bw_last,
							  NSEC_PER_SEC),
						    rate, NSEC_PER_SEC);
	tt_bw_last = now;
	tt_bw_tokens = min_t(s64, tt_bw_tokens, burst) - bytes;
	tokens = tt_bw_tokens;
	spin_unlock(&tt_bw_lock);
	return tokens < 0 ? div64_u64((u64)-tokens * NSEC_PER_SEC, rate) : 0;
}

/* Sleep @ns in steps of at most 10 ms; -EINTR when told to stop. */
static int tt_bw_wait(u64 ns, const atomic_t *stop, bool killable)
{
	while (ns) {
		u64 step = min_t(u64, ns, 10 * NSEC_PER_MSEC);
		unsigned long us = step / NSEC_PER_USEC;

		if ((stop && atomic_read(stop)) ||
		    (killable && fatal_signal_pending(current)))
			return -EINTR;
		usleep_range(us, us + us / 8 + 1);
		ns -= step;
	}
	return 0;
}

/* After a batch that brought @res->moved from @*moved: obey the cap. */
static int tt_bw_throttle(struct tt_migrate_result *res, u64 *moved,
			  const atomic_t *stop, bool killable)
{
	u64 cap = tt_config_get(TT_CFG_BW_CAP_MBPS), bytes;

	bytes = (res->moved - *moved) << PAGE_SHIFT;
	*moved = res->moved;
	if (!cap || !bytes)
		return 0;
	return tt_bw_wait(tt_bw_charge(bytes, cap << 20), stop, killable);
}

/*
 * The workers setting's change hook (tt_config_hook()): resize the pool;
 * kernel_param_lock(THIS_MODULE) held, like the pool's creation.
 */
static void tt_migrate_pool_resize(void)
{
	if (tt_wq)
		workqueue_set_max_active(tt_wq, tt_migrate_workers());
}

/**
 * tt_migrate_workers() - current size of the worker pool
 *
 * Return: the workers setting.
 */
unsigned int tt_migrate_workers(void)
{
	return tt_config_get(TT_CFG_WORKERS);
}

/**
 * tt_migrate_batch_pages() - current batch size
 *
 * Return: the batch_pages setting.
 */
unsigned int tt_migrate_batch_pages(void)
{
	return tt_config_get(TT_CFG_BATCH_PAGES);
}

/**
 * tt_migrate_queue() - run a work item on the worker pool
 * @work: an initialised work item.
 */
void tt_migrate_queue(struct work_struct *work)
{
	queue_work(tt_wq, work);
}

/**
 * tt_range_from_user() - check and convert a range given by user space
 * @addr:  start address.
 * @len:   length in bytes.
 * @start: out: @addr.
 * @end:   out: @addr + @len.
 *
 * Return: 0; -EINVAL when @len is 0 or @addr or @len is not page aligned;
 * -EOVERFLOW when the range wraps or ends beyond the user address space.
 */
int tt_range_from_user(u64 addr, u64 len, unsigned long *start,
		       unsigned long *end)
{
	if (!len || !PAGE_ALIGNED(addr) || !PAGE_ALIGNED(len))
		return -EINVAL;
	if (addr + len < addr || addr + len > TASK_SIZE)
		return -EOVERFLOW;
	*start = addr;
	*end = addr + len;
	return 0;
}

/**
 * tt_vma_supported() - can the engine move the pages of this vma?
 * @vma: the vma.
 *
 * Return: true for private anonymous memory (heap, stacks, malloc, anonymous
 * private mmap, THP included); false for file-backed or shared mappings,
 * hugetlbfs, DAX, and VM_IO, VM_PFNMAP, VM_MIXEDMAP or VM_DONTEXPAND
 * (special, e.g. the vDSO) mappings.
 */
bool tt_vma_supported(struct vm_area_struct *vma)
{
	if (vma->vm_file || !vma_is_anonymous(vma) || vma_is_dax(vma))
		return false;
	if (vma->vm_flags & (VM_SHARED | VM_MAYSHARE | VM_HUGETLB | VM_SPECIAL))
		return false;
	return true;
}

/* tt_pagescan_vmas()'s check for tt_migrate_check() */
static int tt_migrate_check_vma(struct vm_area_struct *vma)
{
	return tt_vma_supported(vma) ? 0 : -EOPNOTSUPP;
}

/**
 * tt_migrate_check() - the range checks of TT_IOC_REGISTER and TT_IOC_MIGRATE
 * @mm:    the caller's mm (mmap_lock not held).
 * @start: page-aligned start.
 * @end:   page-aligned end.
 *
 * Return: 0; -EFAULT when part of the range is not mapped; -EOPNOTSUPP when
 * part of it is not a supported mapping; -EINTR on a fatal signal.
 */
int tt_migrate_check(struct mm_struct *mm, unsigned long start,
		     unsigned long end)
{
	return tt_pagescan_vmas(mm, start, end, tt_migrate_check_vma);
}

/**
 * struct tt_mig - one tt_mig_slots() call
 * @mm:   the mm.
 * @nids: target nodes, in order of preference: a page goes to the first
 *        one with a free page for it (tt_migrate_range_to()).
 * @nr_nids: entries of @nids, 1..TT_MIG_TARGETS.
 * @end:  end of the slot being migrated.
 * @cap:  batch size in pages: batch_pages when the call started, or the
 *        slot size when that is smaller.
 * @src:  migrate_vma source array, @cap entries.
 * @dst:  migrate_vma destination array, @cap entries.
 * @hpfn: scan results, @cap entries.
 * @pages: @cap entries: destination pages from the bulk allocator, then
 *        the source pages released after migrate_vma_finalize().
 * @gfp:  flags for destination pages on each of @nids; direct reclaim
 *        is dropped after the first failure on a node, so a full node costs
 *        one reclaim attempt per call, not one per page (kswapd is still
 *        woken).
 * @flags: TT_MIG_* bits of the call.
 * @scan: the page-table scanner over the slot.
 * @res:  result being accumulated.
 * @ec:   the counts beyond @res being accumulated.
 */
struct tt_mig {
	struct mm_struct *mm;
	int nids[TT_MIG_TARGETS];
	unsigned int nr_nids;
	unsigned long end;
	unsigned long cap;
	unsigned long *src;
	unsigned long *dst;
	unsigned long *hpfn;
	struct page **pages;
	gfp_t gfp[TT_MIG_TARGETS];
	unsigned int flags;
	struct tt_pagescan scan;
	struct tt_migrate_result *res;
	struct tt_engine_counts *ec;
};

/* What the scan says about a page before anything is tried. */
enum tt_mig_class {
	TT_MIG_MOVE,
	TT_MIG_ABSENT,
	TT_MIG_ON_NODE,
	TT_MIG_UNSUPPORTED,
	TT_MIG_LARGE_PTE,
	TT_MIG_SHARED,
	TT_MIG_HELD,
};

/* Is @nid one of the targets (the page needs no move)? */
static bool tt_mig_on_target(const struct tt_mig *m, int nid)
{
	unsigned int i;

	for (i = 0; i < m->nr_nids; i++)
		if (m->nids[i] == nid)
			return true;
	return false;
}

static enum tt_mig_class tt_mig_classify(struct tt_mig *m,
					 struct vm_area_struct *vma,
					 unsigned long hpfn)
{
	enum tt_page_kind kind;
	struct page *page;

	page = tt_pagescan_page(vma, hpfn, &kind);
	if (!page)
		return TT_MIG_ABSENT;
	if (tt_mig_on_target(m, page_to_nid(page)))
		return TT_MIG_ON_NODE;
	if (is_zone_device_page(page) || PageKsm(page))
		return TT_MIG_UNSUPPORTED;
	/*
	 * migrate_vma_setup() skips a THP mapped by ptes. A PROT_NONE THP
	 * may be mapped by a huge pmd, which it splits: let it try.
	 */
	if (tt_pagescan_pte_mapped_thp(page, hpfn))
		return TT_MIG_LARGE_PTE;
	/* as move_pages(2): another process's page too only with MOVE_ALL */
	if (!(m->flags & TT_MIG_MOVE_ALL) && tt_page_mapped_shared(page))
		return TT_MIG_SHARED;
	return TT_MIG_MOVE;
}

/*
 * The head of the huge page @hmm_pfn maps part of, or NULL for a base page
 * (or none). The engine hands migrate_vma_setup() a huge page on its own,
 * and only while nobody holds its lock, looked at just before:
 * migrate_vma_collect_pmd() takes a reference to a huge page mapped by a
 * pmd before it tries the lock, and keeps it when the lock is held
 * (Debian's 6.1.192 and 6.12.118), so that page could never be freed. The
 * holder is most often a late mover's move_pages(2), which holds it for a
 * whole migration (Documentation/mover.md); the page counts as busy.
 */
static struct page *tt_mig_head(struct vm_area_struct *vma,
				unsigned long hmm_pfn)
{
	enum tt_page_kind kind;
	struct page *page = tt_pagescan_page(vma, hmm_pfn, &kind);

	return page && PageCompound(page) ? compound_head(page) : NULL;
}

static void tt_copy_page(struct page *dst, struct page *src)
{
	void *to = kmap_local_page(dst);
	void *from = kmap_local_page(src);

	copy_page(to, from);
	kunmap_local(from);
	kunmap_local(to);
}

/*
 * Fill @m->pages[0..n) with pages of the target nodes, in bulk (one per-cpu
 * list lock per call instead of one __alloc_pages() per page): from the
 * first target while it has free pages, then from the next. Direct reclaim
 * is dropped from a target's flags after its first call that makes no
 * progress. Return how many pages were allocated (a prefix of @m->pages:
 * alloc_pages_bulk_array_node() fills the NULL entries in order and stops
 * at the first failure).
 */
static unsigned long tt_mig_alloc(struct tt_mig *m, unsigned long n)
{
	unsigned long got = 0, prev;
	unsigned int t;

	memset(m->pages, 0, n * sizeof(*m->pages));
	for (t = 0; t < m->nr_nids; t++) {
		for (;;) {
			prev = got;
			got = alloc_pages_bulk_array_node(m->gfp[t], m->nids[t],
							  n, m->pages);
			if (got >= n)
				return n;
			if (got > prev)
				continue;
			if (!(m->gfp[t] & __GFP_DIRECT_RECLAIM))
				break;
			m->gfp[t] &= ~__GFP_DIRECT_RECLAIM;
		}
	}
	return got;
}

/* A dst[] entry that is to receive a page: neither 0 nor MIGRATE_PFN_VALID. */
#define TT_DST_WANTED	MIGRATE_PFN_MIGRATE

/*
 * Move the pages of [start, end), all inside @vma, with one
 * migrate_vma_setup/pages/finalize sequence.
 */
static void tt_mig_run(struct tt_mig *m, struct vm_area_struct *vma,
		       unsigned long start, unsigned long end)
{
	struct tt_migrate_result *res = m->res;
	struct migrate_vma args = {
		.vma = vma,
		.start = start,
		.end = end,
		.src = m->src,
		.dst = m->dst,
		.flags = MIGRATE_VMA_SELECT_SYSTEM,
	};
	unsigned long n = (end - start) >> PAGE_SHIFT, i, want = 0, got, k;

	res->pages += n;
	if (migrate_vma_setup(&args)) {
		/* Only for a vma tt_vma_supported() rejects. */
		res->skipped_unsupported += n;
		return;
	}
	/* The walk covers the whole range: a short one would be a bug. */
	if (WARN_ON_ONCE(args.npages != n))
		res->skipped_busy += n - args.npages;

	for (i = 0; i < args.npages; i++) {
		unsigned long src = m->src[i];
		struct page *spage;

		m->dst[i] = 0;
		if (!(src & MIGRATE_PFN_MIGRATE)) {
			res->skipped_busy++;
			continue;
		}
		spage = migrate_pfn_to_page(src);
		if (!spage) {
			res->skipped_not_present++;
			continue;
		}
		if (tt_mig_on_target(m, page_to_nid(spage))) {
			res->already_on_node++;
			continue;
		}
		m->dst[i] = TT_DST_WANTED;
		want++;
	}

	got = want ? tt_mig_alloc(m, want) : 0;
	for (i = 0, k = 0; i < args.npages; i++) {
		struct page *dpage;

		if (m->dst[i] != TT_DST_WANTED)
			continue;
		if (k == got) {
			m->dst[i] = 0;
			res->skipped_no_memory++;
			continue;
		}
		dpage = m->pages[k++];
		tt_copy_page(dpage, migrate_pfn_to_page(m->src[i]));
		lock_page(dpage);
		m->dst[i] = migrate_pfn(page_to_pfn(dpage));
	}

	migrate_vma_pages(&args);

	/*
	 * Hold the source pages that moved, so that migrate_vma_finalize()
	 * does not free them one by one: release_pages() below uncharges and
	 * frees them in one go.
	 */
	for (i = 0, k = 0; i < args.npages; i++) {
		struct page *spage;

		if (!m->dst[i])
			continue;
		if (!(m->src[i] & MIGRATE_PFN_MIGRATE)) {
			res->skipped_busy++;
			continue;
		}
		res->moved++;
		spage = migrate_pfn_to_page(m->src[i]);
		get_page(spage);
		m->pages[k++] = spage;
	}

	/* Maps the new pages, or the old ones again; frees the unused. */
	migrate_vma_finalize(&args);
	if (k)
		release_pages(m->pages, k);
}

static void tt_mig_count(struct tt_mig *m, enum tt_mig_class c)
{
	struct tt_migrate_result *res = m->res;

	res->pages++;
	switch (c) {
	case TT_MIG_ABSENT:
		res->skipped_not_present++;
		break;
	case TT_MIG_ON_NODE:
		res->already_on_node++;
		break;
	case TT_MIG_SHARED:
	case TT_MIG_HELD:
		res->skipped_busy++;
		break;
	case TT_MIG_LARGE_PTE:
		m->ec->large_pte++;
		fallthrough;
	default:
		res->skipped_unsupported++;
		break;
	}
}

/*
 * Process the batch starting at @addr: at most @m->cap pages, inside one
 * vma. Return the address where the next batch starts, or 0 when mmap_lock
 * could not be taken because of a fatal signal (only with @killable).
 */
static unsigned long tt_mig_batch(struct tt_mig *m, unsigned long addr,
				  bool killable)
{
	struct tt_migrate_result *res = m->res;
	struct vm_area_struct *vma;
	unsigned long bend, n, i, j, seq;
	int tries = 0, ret;

again:
	seq = tt_pagescan_begin(&m->scan);
	if (!killable)
		mmap_read_lock(m->mm);
	else if (mmap_read_lock_killable(m->mm))
		return 0;

	vma = find_vma(m->mm, addr);
	if (!vma || vma->vm_start > addr) {
		/* Unmapped since the range was checked. */
		bend = vma ? min(vma->vm_start, m->end) : m->end;
		n = (bend - addr) >> PAGE_SHIFT;
		res->pages += n;
		res->skipped_not_present += n;
		goto out;
	}
	bend = min3(m->end, vma->vm_end, addr + m->cap * PAGE_SIZE);
	n = (bend - addr) >> PAGE_SHIFT;
	if (!tt_vma_supported(vma)) {
		/* Replaced by another mapping since the range was checked. */
		res->pages += n;
		res->skipped_unsupported += n;
		goto out;
	}

	/* hmm does not read the page tables of a vma without VM_READ. */
	ret = -EPERM;
	if (vma->vm_flags & VM_READ) {
		ret = tt_pagescan_fill(&m->scan, seq, addr, bend, m->hpfn);
		if (ret == -EBUSY && ++tries < TT_SCAN_TRIES) {
			mmap_read_unlock(m->mm);
			cond_resched();
			goto again;
		}
	}
	if (ret && !(m->flags & TT_MIG_MOVE_ALL)) {
		/*
		 * No scan, so no telling which pages other processes map too
		 * (migrate_vma_setup() would move those for them all): left
		 * in place, busy, unless the caller may move them.
		 */
		res->pages += n;
		res->skipped_busy += n;
		goto out;
	}
	if (ret) {
		/* No scan: let migrate_vma_setup() sort the pages out. */
		tt_mig_run(m, vma, addr, bend);
		goto out;
	}

	for (i = 0; i < n; i = j) {
		enum tt_mig_class c = tt_mig_classify(m, vma, m->hpfn[i]);
		struct page *head = tt_mig_head(vma, m->hpfn[i]);

		j = i + 1;
		if (c != TT_MIG_MOVE) {
			tt_mig_count(m, c);
			continue;
		}
		/* a run of base pages, or the pages of one huge page */
		while (j < n && tt_mig_head(vma, m->hpfn[j]) == head &&
		       tt_mig_classify(m, vma, m->hpfn[j]) == TT_MIG_MOVE)
			j++;
		if (head && PageLocked(head)) {
			/* its holder may be migrating it: see tt_mig_head() */
			while (i++ < j)
				tt_mig_count(m, TT_MIG_HELD);
			continue;
		}
		tt_mig_run(m, vma, addr + (i << PAGE_SHIFT),
			   addr + (j << PAGE_SHIFT));
	}
out:
	mmap_read_unlock(m->mm);
	return bend;
}

/**
 * struct tt_slots - a range cut into slots, handed out in address order to
 * whichever migration loop asks first
 * @next:  index of the next slot to hand out.
 * @start: start of the range.
 * @end:   end of the range.
 * @size:  bytes per slot (the last one may be shorter).
 */
struct tt_slots {
	atomic_long_t next;
	unsigned long start;
	unsigned long end;
	unsigned long size;
};

static void tt_slots_init(struct tt_slots *sl, unsigned long start,
			  unsigned long end, unsigned long size)
{
	atomic_long_set(&sl->next, 0);
	sl->start = start;
	sl->end = end;
	sl->size = size;
}

static bool tt_slots_take(struct tt_slots *sl, unsigned long *start,
			  unsigned long *end)
{
	unsigned long i = atomic_long_inc_return(&sl->next) - 1;

	if (i >= DIV_ROUND_UP(sl->end - sl->start, sl->size))
		return false;
	*start = sl->start + i * sl->size;
	*end = min(sl->end, *start + sl->size);
	return true;
}

/*
 * Migrate slots of @sl until none is left: tt_migrate_range() with one
 * slot, or one of the workers of tt_migrate_sync(), which share the slots
 * so that a worker that runs slower (or starts later) simply takes fewer.
 */
static int tt_mig_slots(struct mm_struct *mm, struct tt_slots *sl,
			const int *nids, unsigned int nr_nids,
			unsigned int flags, const atomic_t *stop,
			struct tt_migrate_result *res,
			struct tt_engine_counts *ec)
{
	bool remote = flags & TT_MIG_REMOTE;
	u64 t0 = ktime_get_ns(), moved = res->moved;
	struct tt_mig m = {
		.mm = mm,
		.nr_nids = min_t(unsigned int, nr_nids, TT_MIG_TARGETS),
		.flags = flags,
		.res = res,
		.ec = ec,
	};
	unsigned long addr, start;
	unsigned int t;
	int ret = 0;

	for (t = 0; t < m.nr_nids; t++) {
		m.nids[t] = nids[t];
		m.gfp[t] = TT_GFP_DST;
	}

	if (remote && !mmget_not_zero(mm))
		return -ESRCH;
	m.cap = min_t(unsigned long, tt_migrate_batch_pages(),
		      min(sl->size, sl->end - sl->start) >> PAGE_SHIFT);
	/* one allocation for the four arrays of m.cap entries each */
	BUILD_BUG_ON(sizeof(*m.src) != sizeof(*m.pages));
	m.src = kvmalloc_array(4 * m.cap, sizeof(*m.src), TT_GFP_ARRAY);
	if (!m.src) {
		ret = -ENOMEM;
		goto out_put;
	}
	m.dst = m.src + m.cap;
	m.hpfn = m.dst + m.cap;
	m.pages = (struct page **)(m.hpfn + m.cap);

	while (!ret && tt_slots_take(sl, &start, &m.end)) {
		/*
		 * The scanner watches this slot only: invalidations by other
		 * workers, busy with other slots, do not disturb its scans.
		 */
		ret = tt_pagescan_init(&m.scan, mm, start, m.end);
		if (ret)
			break;
		for (addr = start; addr < m.end; ) {
			if ((stop && atomic_read(stop)) ||
			    (!remote && fatal_signal_pending(current))) {
				ret = -EINTR;
				break;
			}
			addr = tt_mig_batch(&m, addr, !remote);
			if (!addr) {
				ret = -EINTR;
				break;
			}
			ret = tt_bw_throttle(res, &moved, stop, !remote);
			if (ret)
				break;
			cond_resched();
		}
		tt_pagescan_exit(&m.scan);
	}
	kvfree(m.src);
out_put:
	if (remote)
		mmput(mm);
	res->elapsed_ns += ktime_get_ns() - t0;
	WARN_ON_ONCE(!tt_result_consistent(res));
	return ret;
}

/**
 * tt_migrate_range_to() - move the pages of a range to the first of several
 * nodes that has room
 * @mm:    the mm; with TT_MIG_REMOTE any mm the caller holds with mmgrab().
 * @start: page-aligned start.
 * @end:   page-aligned end, > @start.
 * @nids:  target nodes, checked by tt_tier_node_check(), in order of
 *         preference: each page goes to the first node with a free page
 *         for it; pages already on any of them stay (already_on_node); a
 *         page none of them has room for stays in place
 *         (skipped_no_memory). Nodes after the first TT_MIG_TARGETS are
 *         ignored.
 * @nr_nids: entries of @nids, > 0.
 * @flags: TT_MIG_* bits.
 * @stop:  optional: when it becomes non-zero, stop at the next batch.
 * @res:   out: counts are added to it, elapsed_ns too.
 * @ec:    out: counts are added to it.
 *
 * The range is not checked first (see tt_migrate_check()): pages that are
 * no longer mapped count as not present, pages of a mapping that is no
 * longer supported as unsupported. Must be called without mmap_lock.
 *
 * Return: 0 when the whole range was processed; -EINTR when stopped by
 * @stop or a fatal signal (@res covers the pages processed); -ESRCH when
 * the mm has exited (TT_MIG_REMOTE); -ENOMEM.
 */
int tt_migrate_range_to(struct mm_struct *mm, unsigned long start,
			unsigned long end, const int *nids,
			unsigned int nr_nids, unsigned int flags,
			const atomic_t *stop, struct tt_migrate_result *res,
			struct tt_engine_counts *ec)
{
	struct tt_slots sl;

	tt_slots_init(&sl, start, end, end - start);
	return tt_mig_slots(mm, &sl, nids, nr_nids, flags, stop, res, ec);
}

/**
 * tt_migrate_range() - move the pages of a range to a node
 * @mm:    as tt_migrate_range_to().
 * @start: page-aligned start.
 * @end:   page-aligned end, > @start.
 * @nid:   target node, checked by tt_tier_node_check().
 * @flags: TT_MIG_* bits.
 * @stop:  optional: when it becomes non-zero, stop at the next batch.
 * @res:   out: counts are added to it, elapsed_ns too.
 * @ec:    out: counts are added to it.
 *
 * Return: as tt_migrate_range_to() with the single node @nid.
 */
int tt_migrate_range(struct mm_struct *mm, unsigned long start,
		     unsigned long end, int nid, unsigned int flags,
		     const atomic_t *stop, struct tt_migrate_result *res,
		     struct tt_engine_counts *ec)
{
	return tt_migrate_range_to(mm, start, end, &nid, 1, flags, stop, res,
				   ec);
}

/**
 * struct tt_mig_workers - the workers of one synchronous migration
 * @slots:   the range, in batches, shared by the workers (and the caller
 *           when the pool is busy).
 * @nid:     target node.
 * @flags:   TT_MIG_* bits for the workers (TT_MIG_REMOTE included).
 * @mm:      the caller's mm.
 * @pending: work items neither finished nor cancelled.
 * @started: work items whose function has begun.
 * @done:    completed when @pending reaches zero.
 * @stop:    set when the caller got a fatal signal.
 */
struct tt_mig_workers {
	struct tt_slots slots;
	int nid;
	unsigned int flags;
	struct mm_struct *mm;
	atomic_t pending;
	atomic_t started;
	struct completion done;
	atomic_t stop;
};

/**
 * struct tt_mig_worker - one worker of a synchronous migration
 * @work:  the work item.
 * @set:   the migration it belongs to.
 * @ran:   the work function ran (false: cancelled before it started).
 * @ret:   what tt_mig_slots() returned.
 * @res:   what it did.
 * @ec:    what it did beyond @res.
 */
struct tt_mig_worker {
	struct work_struct work;
	struct tt_mig_workers *set;
	bool ran;
	int ret;
	struct tt_migrate_result res;
	struct tt_engine_counts ec;
};

/* How often a synchronous migration looks at its work items. */
#define TT_SYNC_CHECK_MS	20
/* No work item started after this long: the caller migrates itself. */
#define TT_SYNC_STARVED_MS	100

static void tt_mig_worker_fn(struct work_struct *work)
{
	struct tt_mig_worker *c = container_of(work, struct tt_mig_worker, work);
	struct tt_mig_workers *set = c->set;

	c->ran = true;
	atomic_inc(&set->started);
	c->ret = tt_mig_slots(set->mm, &set->slots, &set->nid, 1, set->flags,
			      &set->stop, &c->res, &c->ec);
	/* The caller may free @c and @set as soon as this is done. */
	if (atomic_dec_and_test(&set->pending))
		complete(&set->done);
}

/* Every slot is taken: the work items that have not started never will. */
static void tt_mig_workers_cancel_idle(struct tt_mig_workers *set,
				       struct tt_mig_worker *chunks, unsigned long n)
{
	unsigned long i;

	if (atomic_long_read(&set->slots.next) <
	    DIV_ROUND_UP(set->slots.end - set->slots.start, set->slots.size))
		return;
	for (i = 0; i < n; i++)
		if (cancel_work(&chunks[i].work) &&
		    atomic_dec_and_test(&set->pending))
			complete(&set->done);
}

/**
 * tt_migrate_sync() - a synchronous TT_IOC_MIGRATE after its checks
 * @mm:    the caller's mm.
 * @start: page-aligned start.
 * @end:   page-aligned end, > @start.
 * @nid:   target node, checked.
 * @flags: TT_MIG_MOVE_ALL or 0.
 * @res:   out: zeroed, then filled; elapsed_ns is the wall time.
 * @ec:    out: counts are added to it.
 *
 * A range of more than one batch is migrated by up to workers work items
 * on the worker pool while the caller waits; each takes the next slot (a
 * batch, or less on a range of only a few batches) not yet taken until
 * none is left. Otherwise (or with workers=1) it runs in the caller.
 *
 * The caller never waits for the pool's queue (other sessions' work may
 * fill it): once every slot is taken it cancels the work items that have
 * not started and waits only for the running ones, each finishing its
 * slot; and when none has started after TT_SYNC_STARVED_MS it takes the
 * slots itself.
 *
 * Return: as tt_migrate_range(); on -EINTR (fatal signal) the workers not
 * started are cancelled, the running ones stop at their next batch, and
 * @res covers the pages processed.
 */
int tt_migrate_sync(struct mm_struct *mm, unsigned long start,
		    unsigned long end, int nid, unsigned int flags,
		    struct tt_migrate_result *res, struct tt_engine_counts *ec)
{
	unsigned long npages = (end - start) >> PAGE_SHIFT;
	unsigned long batch = tt_migrate_batch_pages();
	unsigned long nbatches = DIV_ROUND_UP(npages, batch);
	unsigned long n = min_t(unsigned long, tt_migrate_workers(), nbatches);
	unsigned long slot, waited = 0;
	struct tt_mig_workers set;
	struct tt_mig_worker *chunks;
	u64 t0 = ktime_get_ns();
	bool caller_ran = false;
	unsigned long i;
	long left;
	int ret = 0, cret;

	flags &= TT_MIG_MOVE_ALL;
	memset(res, 0, sizeof(*res));
	chunks = n > 1 ? kcalloc(n, sizeof(*chunks), TT_GFP_ARRAY) : NULL;
	if (!chunks)
		return tt_migrate_range(mm, start, end, nid, flags, NULL, res,
					ec);

	/*
	 * At least TT_SLOTS_PER_WORKER slots per worker (but no slot larger
	 * than a batch, nor smaller than TT_SLOT_MIN_PAGES): a worker that
	 * starts late still finds work on a range of only a few batches.
	 */
	slot = clamp(npages / (n * TT_SLOTS_PER_WORKER), TT_SLOT_MIN_PAGES,
		     batch);
	/*
	 * Whole huge pages per slot: two workers whose slots share a THP both
	 * try to split it, and the one that loses finds its pages busy.
	 */
	if (IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE) && batch >= HPAGE_PMD_NR)
		slot = round_up(slot, HPAGE_PMD_NR);
	tt_slots_init(&set.slots, start, end, slot << PAGE_SHIFT);
	set.nid = nid;
	set.flags = flags | TT_MIG_REMOTE;
	set.mm = mm;
	atomic_set(&set.pending, n);
	atomic_set(&set.started, 0);
	atomic_set(&set.stop, 0);
	init_completion(&set.done);
	/*
	 * A worker woken on this CPU would otherwise preempt the caller
	 * before it has queued the others, and they would start a time
	 * slice later.
	 */
	preempt_disable();
	for (i = 0; i < n; i++) {
		chunks[i].set = &set;
		INIT_WORK(&chunks[i].work, tt_mig_worker_fn);
		tt_migrate_queue(&chunks[i].work);
	}
	preempt_enable();

	for (;;) {
		left = msecs_to_jiffies(TT_SYNC_CHECK_MS);
		left = wait_for_completion_killable_timeout(&set.done, left);
		if (left > 0)
			break;
		if (left < 0) {
			atomic_set(&set.stop, 1);
			for (i = 0; i < n; i++)
				cancel_work_sync(&chunks[i].work);
			ret = -EINTR;
			break;
		}
		waited += TT_SYNC_CHECK_MS;
		if (!caller_ran && !atomic_read(&set.started) &&
		    waited >= TT_SYNC_STARVED_MS) {
			/* the pool is busy with other work: do it here */
			caller_ran = true;
			cret = tt_mig_slots(mm, &set.slots, &nid, 1, flags,
					    &set.stop, res, ec);
			if (cret && cret != -ENOMEM)
				ret = cret;
			if (ret)
				atomic_set(&set.stop, 1);
		}
		tt_mig_workers_cancel_idle(&set, chunks, n);
	}

	for (i = 0; i < n; i++) {
		if (!chunks[i].ran)
			continue;
		tt_result_add(res, &chunks[i].res);
		ec->large_pte += chunks[i].ec.large_pte;
		cret = chunks[i].ret;
		if (cret && (!ret || ret == -ENOMEM))
			ret = cret;
	}
	/*
	 * A worker that could not allocate its arrays took no batch: when the
	 * others did them all, nothing is missing.
	 */
	if (ret == -ENOMEM && res->pages == npages)
		ret = 0;
	kfree(chunks);
	res->elapsed_ns = ktime_get_ns() - t0;
	return ret;
}

/**
 * tt_migrate_init() - create the worker pool and register its size's
 * change hook (TT_CFG_WORKERS)
 *
 * Return: 0 or -ENOMEM.
 */
int tt_migrate_init(void)
{
	struct workqueue_struct *wq;

	kernel_param_lock(THIS_MODULE);
	wq = alloc_workqueue("tiertrain", WQ_UNBOUND | WQ_SYSFS, tt_migrate_workers());
	tt_wq = wq;
	kernel_param_unlock(THIS_MODULE);
	if (!wq)
		return -ENOMEM;
	tt_config_hook(TT_CFG_WORKERS, tt_migrate_pool_resize);
	return 0;
}

/**
 * tt_migrate_exit() - remove the hook, wait for the pool's work and destroy
 * the pool
 */
void tt_migrate_exit(void)
{
	struct workqueue_struct *wq;

	tt_config_unhook(TT_CFG_WORKERS, tt_migrate_pool_resize);
	kernel_param_lock(THIS_MODULE);
	wq = tt_wq;
	tt_wq = NULL;
	kernel_param_unlock(THIS_MODULE);
	destroy_workqueue(wq);
}
