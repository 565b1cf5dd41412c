// SPDX-License-Identifier: GPL-2.0
/*
 * The process-context mover ("Mover" in the uapi header,
 * Documentation/mover.md).
 *
 * Every migration of a session (TT_IOC_MIGRATE, its asynchronous form,
 * the scheduler's evictions and prefetches) goes through
 * tt_mover_migrate() or tt_mover_migrate_sync(), which decide the backend
 * per piece. The range is walked in slots of TT_SLOT_BLOCKS huge pages
 * whose boundaries after the first are huge-page aligned, so a huge page
 * never straddles two slots; each slot's page tables are read without
 * faulting (pagescan.c): one entry per huge-page-aligned block suffices,
 * since hmm reports the mapping order of a pmd-mapped THP in every entry.
 * Runs of blocks that are each one anonymous THP mapped by a pmd, inside
 * the range and not on a target node, become orders for the session's
 * mover threads (a long run is shared among the live movers, at least
 * TT_ORDER_MIN_BLOCKS huge pages per order). With the setting mover_base
 * and movers that all registered with TT_MOVER_BASE, the gaps between
 * those runs that lie in supported vmas become base-page orders
 * (TT_ORDER_BASE, shared the same way; the pages already on a target are
 * counted when the order is issued, so that its completion tells moved
 * from already there). The rest goes to the in-kernel engine (migrate.c),
 * in the caller, while the movers work. An order gets mover_timeout_ms per
 * huge-page-aligned block it touches. A huge page at an edge of a
 * scheduler's range that the range covers but for TT_MOVER_EDGE_SLACK
 * bytes (a tensor behind malloc's chunk header) becomes an order too: the
 * mover moves it whole, the order counts the range's part only.
 *
 * An order belongs to its issuer (it lives on the issuer's in-flight list
 * and is freed by it); it is on the session's queue or taken list only
 * while a mover may still complete it, and every state change happens
 * under the mover lock:
 *
 *   QUEUED --TT_MOVER_TAKE--> TAKEN --TT_MOVER_DONE--> COMPLETING --> DONE
 *   QUEUED or TAKEN --timeout, mover dead, close, fatal signal--> BACK
 *
 * COMPLETING is the counting of a completion (a page-table read of the
 * order, in the mover's own ioctl): the issuer waits for its end past
 * the timeout, so an order is counted by exactly one side: the mover's
 * completion (DONE) or the engine (BACK, then the engine moves the order
 * again: pages the late mover moved meanwhile are found on the target).
 * Nothing in COMPLETING touches user memory, so it ends within a bounded
 * time: the mover's status array (at most TT_SLOT_BLOCKS entries) is
 * copied while the order is still TAKEN, where its deadline holds (a
 * status page that never faults in, userfaultfd or FUSE, costs the issuer
 * one deadline, not forever).
 * A completion of an order that is BACK finds no order with its id on the
 * taken list, is counted in mover_late and otherwise ignored.
 *
 * Waiting issuers wake every TT_MOVER_CHECK_MS to look at the mover thread
 * that took their order: one that exited (pid_task() gone or PF_EXITING)
 * sends the order back at once instead of at the timeout. After a
 * timeout the session's movers get no order for mover_timeout_ms (a
 * stalled mover costs one timeout, not one per order) unless one of them
 * completes an order first (a mere TT_IOC_MOVER call, e.g. the next
 * TT_MOVER_TAKE of a mover that never completes, does not end the pause).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/hmm.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "budget.h"
#include "compat.h"
#include "config.h"
#include "migrate.h"
#include "mover.h"
#include "pagescan.h"
#include "session.h"

/* A huge page: what a pmd maps. */
#define TT_HUGE_SIZE		PMD_SIZE
#define TT_HUGE_PAGES		(PMD_SIZE >> PAGE_SHIFT)
#define TT_HUGE_ORDER		(PMD_SHIFT - PAGE_SHIFT)
/* Huge-page blocks per slot, at most (one bitmap word). */
#define TT_SLOT_BLOCKS		BITS_PER_LONG
/* How often an issuer waiting for an order looks at its mover. */
#define TT_MOVER_CHECK_MS	20
/* Huge pages per order at least, when a run is shared among movers. */
#define TT_ORDER_MIN_BLOCKS	4
/*
 * Base-page pieces smaller than this stay with the engine, which moves
 * them in the caller at once: an order adds a wakeup, two ioctls and two
 * page-table reads (a chosen bound, not a measured one; with 64 KiB
 * orders the scheduler of visibility_test dynamic_grow measured a rate
 * too low to evict its last layers).
 */
#define TT_ORDER_BASE_MIN	(256UL << 10)
/*
 * Where move_pages(2) batches its TLB flushes (TT_MOVE_PAGES_BATCHED), a
 * base-page piece at a huge-page boundary of a mapping that may hold huge
 * pages (the head or the tail of a tensor beside its huge pages) goes to a
 * mover from this size on (tt_mover_min_piece()): two orders per tensor at
 * most, not one TLB shootdown per page.
 */
#define TT_ORDER_EDGE_MIN	(16UL << 10)
/* Orders in flight per live mover thread, and in all. */
#define TT_MOVER_INFLIGHT	2
#define TT_MOVER_INFLIGHT_MAX	16
/* Passes of a synchronous migration over its range, at most. */
#define TT_SYNC_PASSES		10
/* The longest sleep between two passes. */
#define TT_SYNC_BACKOFF_MAX_MS	16U
/* Page-table reads of a piece repeated after invalidations, at most. */
#define TT_MOVER_SCAN_TRIES	8
/*
 * A scheduler's range that covers all of a huge page at its edge but at
 * most this many bytes (more than half of it) has the huge page moved
 * whole (tt_mover_edge()).
 */
#define TT_MOVER_EDGE_SLACK	(TT_HUGE_SIZE / 2 - PAGE_SIZE)

/**
 * struct tt_mover_thread - a thread registered as a mover
 * @link: on the session's @threads list.
 * @pid:  the thread (a reference).
 * @base: it registered with TT_MOVER_BASE (under the mover lock).
 * @stale_start: start of the span of the orders it took that went back
 *        while it held them: it may still be moving those pages. Cleared
 *        at its next TT_IOC_MOVER call, which it makes only once it stopped
 *        executing them (under the mover lock).
 * @stale_end: end of that span; equal to @stale_start when there is none.
 * @stale_sched: one of those orders was the scheduler's (TT_MIG_SCHED).
 */
struct tt_mover_thread {
	struct list_head link;
	struct pid *pid;
	bool base;
	unsigned long stale_start;
	unsigned long stale_end;
	bool stale_sched;
};

enum tt_order_state {
	TT_ORDER_QUEUED,
	TT_ORDER_TAKEN,
	TT_ORDER_COMPLETING,
	TT_ORDER_DONE,
	TT_ORDER_BACK,
};

/**
 * struct tt_mover_order - one order (see the comment at the top)
 * @link:     on the mover's queue or taken list (under its lock).
 * @flight:   on the issuer's list of orders in flight.
 * @id:       unique in the session, from 1.
 * @start:    first address, huge page aligned (page aligned: base order).
 * @end:      end, huge page aligned (page aligned: base order).
 * @cstart:   the first address of the caller's range in it: @start, but
 *            for a huge page at an edge of the range that the range covers
 *            all but TT_MOVER_EDGE_SLACK bytes of at most, which the mover
 *            moves whole (tt_mover_slot()).
 * @cend:     the end of the caller's range in it: @end but for such an
 *            edge. Only [@cstart, @cend) is counted, and moved by the
 *            engine when the order goes back.
 * @flags:    TT_ORDER_* bits.
 * @pre_on:   base order: its pages on a target when it was issued.
 * @pre_absent: base order: its pages not present when it was issued (a
 *          huge order's pages all are).
 * @nids:     target nodes in order of preference.
 * @nr_nids:  entries of @nids.
 * @state:    enum tt_order_state, under the mover lock.
 * @th:       the mover that took it (TAKEN, COMPLETING).
 * @deadline: when it goes back to the engine (CLOCK_MONOTONIC ns).
 * @res:      DONE: what the mover did, read from the page tables.
 * @kept:     DONE: huge pages moved and still huge on the target.
 * @split:    DONE: huge pages moved and found as base pages there.
 * @sched:    issued by a migration with TT_MIG_SCHED.
 * @urgent:   issued by a migration with TT_MIG_URGENT: queued ahead of
 *            the orders without it.
 */
struct tt_mover_order {
	struct list_head link;
	struct list_head flight;
	u64 id;
	unsigned long start;
	unsigned long end;
	unsigned long cstart;
	unsigned long cend;
	u32 flags;
	u64 pre_on;
	u64 pre_absent;
	int nids[TT_MIG_TARGETS];
	unsigned int nr_nids;
	enum tt_order_state state;
	struct tt_mover_thread *th;
	u64 deadline;
	struct tt_migrate_result res;
	u64 kept;
	u64 split;
	bool sched;
	bool urgent;
};

/**
 * struct tt_mover_run - one tt_mover_migrate() call
 * @s:          the session.
 * @mv:         its mover.
 * @nids:       target nodes in order of preference.
 * @nr_nids:    entries of @nids.
 * @flags:      TT_MIG_* flags for the engine.
 * @stop:       optional stop flag (the engine's; also checked per slot).
 * @res:        the caller's result, added to.
 * @flight:     orders issued and not reaped, oldest first.
 * @nr_flight:  entries of @flight.
 * @max_flight: most orders in flight.
 * @movers:     live movers when the call started.
 * @base:       the mover_base mode for the call: 0 (base pages to the
 *              engine), 1 or 2 (base-page orders, 2 with collapse).
 * @ret:        first error (0, -EINTR, -ENOMEM, -ESRCH).
 * @counts:     what goes to the mover counters at the end.
 */
struct tt_mover_run {
	struct tt_ksession *s;
	struct tt_mover *mv;
	int nids[TT_MIG_TARGETS];
	unsigned int nr_nids;
	unsigned int flags;
	const atomic_t *stop;
	struct tt_migrate_result *res;
	struct list_head flight;
	unsigned int nr_flight;
	unsigned int max_flight;
	unsigned int movers;
	unsigned int base;
	int ret;
	struct tt_mover_counts counts;
};

/**
 * tt_mover_init() - a session's mover: no thread, no order
 * @mv: the mover.
 */
void tt_mover_init(struct tt_mover *mv)
{
	spin_lock_init(&mv->lock);
	init_waitqueue_head(&mv->wq);
	init_waitqueue_head(&mv->done_wq);
	INIT_LIST_HEAD(&mv->threads);
	INIT_LIST_HEAD(&mv->queue);
	INIT_LIST_HEAD(&mv->taken);
	mv->last_id = 0;
	mv->suspect_until = 0;
	mv->closed = false;
	memset(&mv->counts, 0, sizeof(mv->counts));
}

static bool tt_mover_thread_alive(const struct tt_mover_thread *th)
{
	struct task_struct *t;
	bool alive;

	rcu_read_lock();
	t = pid_task(th->pid, PIDTYPE_PID);
	alive = t && !(READ_ONCE(t->flags) & PF_EXITING);
	rcu_read_unlock();
	return alive;
}

/* The calling thread's registration, or NULL (lock held). */
static struct tt_mover_thread *tt_mover_find(struct tt_mover *mv)
{
	struct tt_mover_thread *th;
	struct pid *me = task_pid(current);

	list_for_each_entry(th, &mv->threads, link)
		if (th->pid == me)
			return th;
	return NULL;
}

/*
 * Pages of [start, end) a live mover may still be moving for an order that
 * went back: the part of the range its stale span covers (lock held).
 */
static unsigned long tt_mover_stale_locked(struct tt_mover *mv,
					   unsigned long start,
					   unsigned long end)
{
	struct tt_mover_thread *th;
	unsigned long n = 0, lo, hi;

	list_for_each_entry(th, &mv->threads, link) {
		lo = max(start, th->stale_start);
		hi = min(end, th->stale_end);
		if (lo < hi && tt_mover_thread_alive(th))
			n += (hi - lo) >> PAGE_SHIFT;
	}
	return min(n, (end - start) >> PAGE_SHIFT);
}

static unsigned long tt_mover_stale(struct tt_mover *mv, unsigned long start,
				    unsigned long end)
{
	unsigned long n;

	spin_lock(&mv->lock);
	n = tt_mover_stale_locked(mv, start, end);
	spin_unlock(&mv->lock);
	return n;
}

/*
 * Before the pages of [start, end) are moved again: wait until no mover is
 * still moving any of them for an order that went back (it would land its
 * pages after this newer move), for mover_timeout_ms at most, and not past
 * a fatal signal when @killable. Return the pages still in a stale span.
 */
static unsigned long tt_mover_stale_wait(struct tt_mover *mv,
					 unsigned long start,
					 unsigned long end, bool killable)
{
	u64 end_ns = ktime_get_ns() +
		     (u64)tt_config_get(TT_CFG_MOVER_TIMEOUT_MS) *
		     NSEC_PER_MSEC;
	unsigned long n;

	while ((n = tt_mover_stale(mv, start, end)) &&
	       ktime_get_ns() < end_ns &&
	       !(killable && fatal_signal_pending(current)))
		wait_event_timeout(mv->done_wq,
				   !tt_mover_stale(mv, start, end),
				   msecs_to_jiffies(TT_MOVER_CHECK_MS));
	return n;
}

/* Send an order back to its issuer (lock held; the caller wakes them). */
static void tt_mover_back(struct tt_mover *mv, struct tt_mover_order *o)
{
	struct tt_mover_thread *th = o->th;

	if (o->state == TT_ORDER_TAKEN && th) {
		/* its mover may still be moving it: stale until it returns */
		if (th->stale_start == th->stale_end) {
			th->stale_start = o->start;
			th->stale_end = o->end;
			th->stale_sched = o->sched;
		} else {
			th->stale_start = min(th->stale_start, o->start);
			th->stale_end = max(th->stale_end, o->end);
			th->stale_sched |= o->sched;
		}
	}
	list_del_init(&o->link);
	o->state = TT_ORDER_BACK;
	mv->counts.fallbacks++;
}

/* Forget @th; its taken orders go back (lock held). */
static void tt_mover_drop_thread(struct tt_mover *mv,
				 struct tt_mover_thread *th)
{
	struct tt_mover_order *o, *tmp;

	list_for_each_entry_safe(o, tmp, &mv->taken, link)
		if (o->th == th)
			tt_mover_back(mv, o);
	list_del(&th->link);
	put_pid(th->pid);
	kfree(th);
}

/*
 * Forget the threads that exited, and when none is left send the queued
 * orders back (lock held; the caller wakes the issuers). Return the live
 * ones other than the caller.
 */
static unsigned int tt_mover_prune(struct tt_mover *mv)
{
	struct tt_mover_thread *th, *tmp;
	struct tt_mover_order *o, *otmp;
	struct pid *me = task_pid(current);
	unsigned int n = 0;

	list_for_each_entry_safe(th, tmp, &mv->threads, link) {
		if (!tt_mover_thread_alive(th))
			tt_mover_drop_thread(mv, th);
		else if (th->pid != me)
			n++;
	}
	if (list_empty(&mv->threads))
		list_for_each_entry_safe(o, otmp, &mv->queue, link)
			tt_mover_back(mv, o);
	return n;
}

/*
 * How many movers may take orders now, 0 for none (lock held): none when
 * the session is closing, mover_timeout_ms is 0 or a mover timed out
 * lately.
 */
static unsigned int tt_mover_usable_locked(struct tt_mover *mv)
{
	unsigned int n = tt_mover_prune(mv);

	if (mv->closed || !tt_config_get(TT_CFG_MOVER_TIMEOUT_MS) ||
	    ktime_get_ns() < mv->suspect_until)
		return 0;
	return n;
}

/*
 * The mover_base mode that base pages move by (lock held, after
 * tt_mover_usable_locked()): 0 (the engine) unless every live mover
 * registered with TT_MOVER_BASE.
 */
static unsigned int tt_mover_base_locked(struct tt_mover *mv)
{
	unsigned int mode = tt_config_get(TT_CFG_MOVER_BASE);
	struct tt_mover_thread *th;

	if (!mode || list_empty(&mv->threads))
		return 0;
	list_for_each_entry(th, &mv->threads, link)
		if (!th->base)
			return 0;
	return mode;
}

/*
 * tt_mover_usable_locked(), and *@base the mover_base mode (or 0). A
 * session with a fast-tier budget in force keeps base pages on the engine
 * (Documentation/mover.md: with base-page orders its accounted peak went
 * past the budget under load).
 */
static unsigned int tt_mover_usable_base(struct tt_ksession *s,
					 unsigned int *base)
{
	struct tt_mover *mv = &s->mover;
	bool budget = tt_budget_active(s);
	unsigned int n;

	spin_lock(&mv->lock);
	n = tt_mover_usable_locked(mv);
	*base = n && !budget ? tt_mover_base_locked(mv) : 0;
	spin_unlock(&mv->lock);
	wake_up_all(&mv->done_wq);	/* orders of pruned threads went back */
	return n;
}

/**
 * tt_mover_close() - the session is closing: every order goes back, no
 * new one is issued
 * @mv: the mover.
 */
void tt_mover_close(struct tt_mover *mv)
{
	struct tt_mover_order *o, *tmp;

	spin_lock(&mv->lock);
	mv->closed = true;
	list_for_each_entry_safe(o, tmp, &mv->queue, link)
		tt_mover_back(mv, o);
	list_for_each_entry_safe(o, tmp, &mv->taken, link)
		tt_mover_back(mv, o);
	spin_unlock(&mv->lock);
	wake_up_all(&mv->done_wq);
	wake_up_all(&mv->wq);
}

/**
 * tt_mover_free() - forget the registrations (the session is being freed)
 * @mv: the mover, closed, with no order left.
 */
void tt_mover_free(struct tt_mover *mv)
{
	struct tt_mover_thread *th, *tmp;

	WARN_ON_ONCE(!list_empty(&mv->queue) || !list_empty(&mv->taken));
	list_for_each_entry_safe(th, tmp, &mv->threads, link) {
		list_del(&th->link);
		put_pid(th->pid);
		kfree(th);
	}
}

/**
 * tt_mover_get_counts() - the mover's counters, @movers included
 * @mv:  the mover.
 * @out: filled.
 */
void tt_mover_get_counts(struct tt_mover *mv, struct tt_mover_counts *out)
{
	struct tt_mover_thread *th;
	u64 n = 0;

	spin_lock(&mv->lock);
	*out = mv->counts;
	list_for_each_entry(th, &mv->threads, link)
		n += tt_mover_thread_alive(th);
	spin_unlock(&mv->lock);
	out->movers = n;
}

static bool tt_mover_on_target(const int *nids, unsigned int nr, int nid)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (nids[i] == nid)
			return true;
	return false;
}

/*
 * Is the entry at the start of a huge-page-aligned block the head of an
 * anonymous THP mapped by a pmd? (mmap_lock held)
 */
static struct page *tt_mover_huge_head(struct vm_area_struct *vma,
				       unsigned long hpfn)
{
	enum tt_page_kind kind;
	struct page *page;

	if (!(hpfn & HMM_PFN_VALID) ||
	    hmm_pfn_to_map_order(hpfn) != TT_HUGE_ORDER)
		return NULL;
	page = tt_pagescan_page(vma, hpfn, &kind);
	if (!page || !PageAnon(page) || !PageTransHuge(page))
		return NULL;
	return page;
}

/**
 * struct tt_mover_scan - what a slot's page tables say
 * @nb:      huge-page-aligned blocks inside the slot (TT_SLOT_BLOCKS at
 *           most), from the first aligned address.
 * @huge:    bit i: block i is one pmd-mapped THP, inside one supported
 *           vma, not on a target node: a mover can move it whole.
 * @edge_lo: 1 when the slot starts inside such a THP (the engine splits
 *           it to move the slot's part).
 * @edge_hi: the same for the slot's end (0 when that THP is @edge_lo's).
 */
struct tt_mover_scan {
	unsigned int nb;
	unsigned long huge;
	unsigned int edge_lo;
	unsigned int edge_hi;
};

/* Is the block at @addr one THP off the targets? (mmap_lock held) */
static int tt_mover_scan_block(struct mm_struct *mm, struct tt_pagescan *ps,
			       unsigned long seq, unsigned long addr,
			       const int *nids, unsigned int nr)
{
	struct vm_area_struct *vma = vma_lookup(mm, addr);
	struct page *page;
	unsigned long hpfn;
	int ret;

	if (!vma || addr + TT_HUGE_SIZE > vma->vm_end ||
	    !tt_vma_supported(vma) || !(vma->vm_flags & VM_READ))
		return 0;
	ret = tt_pagescan_fill(ps, seq, addr, addr + PAGE_SIZE, &hpfn);
	if (ret)
		return ret == -EBUSY ? ret : 0;
	page = tt_mover_huge_head(vma, hpfn);
	return page && !tt_mover_on_target(nids, nr, page_to_nid(page));
}

/* Read the page tables of slot [start, end) into @sc. */
static void tt_mover_scan(struct mm_struct *mm, unsigned long start,
			  unsigned long end, const int *nids,
			  unsigned int nr, struct tt_mover_scan *sc)
{
	unsigned long first = ALIGN(start, TT_HUGE_SIZE);
	unsigned long last = ALIGN_DOWN(end, TT_HUGE_SIZE);
	unsigned long lo = ALIGN_DOWN(start, TT_HUGE_SIZE);
	unsigned long hi = ALIGN(end, TT_HUGE_SIZE), seq;
	unsigned int i, tries = 0;
	struct tt_pagescan ps;
	int ret;

	memset(sc, 0, sizeof(*sc));
	if (!IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE))
		return;
	if (first < last)
		sc->nb = min_t(unsigned long, (last - first) / TT_HUGE_SIZE,
			       TT_SLOT_BLOCKS);
	if (tt_pagescan_init(&ps, mm, lo, hi))
		return;		/* no scan: everything goes to the engine */
again:
	seq = tt_pagescan_begin(&ps);
	mmap_read_lock(mm);
	for (i = 0; i < sc->nb; i++) {
		ret = tt_mover_scan_block(mm, &ps, seq, first + i * TT_HUGE_SIZE,
					  nids, nr);
		if (ret < 0)
			goto busy;
		if (ret)
			__set_bit(i, &sc->huge);
	}
	if (lo < start) {
		ret = tt_mover_scan_block(mm, &ps, seq, lo, nids, nr);
		if (ret < 0)
			goto busy;
		sc->edge_lo = ret;
	}
	if (last < end && (last != lo || lo == start)) {
		ret = tt_mover_scan_block(mm, &ps, seq, last, nids, nr);
		if (ret < 0)
			goto busy;
		sc->edge_hi = ret;
	}
	mmap_read_unlock(mm);
	tt_pagescan_exit(&ps);
	return;
busy:
	mmap_read_unlock(mm);
	sc->huge = 0;
	sc->edge_lo = 0;
	sc->edge_hi = 0;
	if (++tries < TT_MOVER_SCAN_TRIES) {
		cond_resched();
		goto again;
	}
	tt_pagescan_exit(&ps);
}

/* The end of the slot that starts at @a: TT_SLOT_BLOCKS huge pages on. */
static unsigned long tt_mover_slot_end(unsigned long a, unsigned long end)
{
	return min(end, ALIGN_DOWN(a, TT_HUGE_SIZE) +
		   TT_SLOT_BLOCKS * TT_HUGE_SIZE);
}

/* The huge-page-aligned blocks [start, end) touches. */
static unsigned long tt_span_blocks(unsigned long start, unsigned long end)
{
	return (ALIGN(end, TT_HUGE_SIZE) - ALIGN_DOWN(start, TT_HUGE_SIZE)) /
	       TT_HUGE_SIZE;
}

/* A page of a completed order that is not on a target, by its status. */
static void tt_mover_reason(struct tt_migrate_result *res, const s32 *status,
			    unsigned long n)
{
	s32 st = status ? *status : 0;

	if (st == -ENOMEM)
		res->skipped_no_memory += n;
	else if (st == -ENOENT || st == -EFAULT)
		res->skipped_not_present += n;
	else
		res->skipped_busy += n;
}

/*
 * Count [addr, end) (inside one huge block, one vma) of a completed order
 * from the page tables, with mmap_lock held, its pages in [@clo, @chi)
 * only: pages not on a target go to @br by their status; return the pages
 * on a target. *@whole: the block is one huge page on a target. *@err: the
 * read failed (nothing counted).
 */
static unsigned long tt_mover_count_piece(const struct tt_mover_order *o,
					  struct tt_pagescan *ps,
					  unsigned long seq,
					  struct vm_area_struct *vma,
					  unsigned long addr, unsigned long end,
					  unsigned long clo, unsigned long chi,
					  unsigned long *pfns, const s32 *status,
					  struct tt_migrate_result *br,
					  bool *whole, int *err)
{
	unsigned long n = (end - addr) >> PAGE_SHIFT, i, on = 0, a;
	enum tt_page_kind kind;
	struct page *page;

	*err = (vma->vm_flags & VM_READ) ?
	       tt_pagescan_fill(ps, seq, addr, end, pfns) : -EPERM;
	if (*err)
		return 0;
	if (IS_ALIGNED(addr, TT_HUGE_SIZE) && n == TT_HUGE_PAGES) {
		page = tt_mover_huge_head(vma, pfns[0]);
		*whole = page && tt_mover_on_target(o->nids, o->nr_nids,
						    page_to_nid(page));
	}
	for (i = 0; i < n; i++) {
		a = addr + (i << PAGE_SHIFT);
		if (a < clo || a >= chi)
			continue;
		page = tt_pagescan_page(vma, pfns[i], &kind);
		if (page && tt_mover_on_target(o->nids, o->nr_nids,
					       page_to_nid(page)))
			on++;
		else if (!page && !status)
			br->skipped_not_present++;
		else
			tt_mover_reason(br, status, 1);
	}
	return on;
}

/* The pages [a, b) and [lo, hi) have in common. */
static unsigned long tt_overlap_pages(unsigned long a, unsigned long b,
				      unsigned long lo, unsigned long hi)
{
	a = max(a, lo);
	b = min(b, hi);
	return b > a ? (b - a) >> PAGE_SHIFT : 0;
}

/*
 * Count [bstart, bend), the part of one huge-page-aligned block an order
 * covers, into @o (mmap_lock not held): its pages in [@o->cstart,
 * @o->cend).
 */
static void tt_mover_count_block(struct mm_struct *mm,
				 struct tt_mover_order *o,
				 struct tt_pagescan *ps, unsigned long bstart,
				 unsigned long bend, unsigned long *pfns,
				 const s32 *status)
{
	unsigned long clo = max(bstart, o->cstart), chi = min(bend, o->cend);
	unsigned long n = chi > clo ? (chi - clo) >> PAGE_SHIFT : 0;
	unsigned long addr, next, seq, on;
	struct tt_migrate_result br;
	struct vm_area_struct *vma;
	int tries = 0, err;
	bool whole;

again:
	memset(&br, 0, sizeof(br));
	on = 0;
	whole = false;
	err = 0;
	seq = tt_pagescan_begin(ps);
	mmap_read_lock(mm);
	for (addr = bstart; addr < bend; addr = next) {
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr) {
			next = vma ? min(vma->vm_start, bend) : bend;
			br.skipped_not_present += tt_overlap_pages(addr, next,
								   clo, chi);
			continue;
		}
		next = min(vma->vm_end, bend);
		on += tt_mover_count_piece(o, ps, seq, vma, addr, next, clo,
					   chi, pfns, status, &br, &whole,
					   &err);
		if (err == -EBUSY)
			break;
		if (err) {	/* unreadable: nothing is claimed */
			tt_mover_reason(&br, NULL,
					tt_overlap_pages(addr, next, clo, chi));
			err = 0;
		}
	}
	mmap_read_unlock(mm);
	if (err == -EBUSY) {
		if (++tries < TT_MOVER_SCAN_TRIES) {
			cond_resched();
			goto again;
		}
		memset(&br, 0, sizeof(br));
		br.skipped_busy = n;
		on = 0;
	}
	br.moved = on;
	br.pages = n;
	tt_result_add(&o->res, &br);
	if (o->flags & TT_ORDER_BASE)
		return;		/* no huge page to keep or split */
	if (whole && on == n)
		o->kept++;
	else if (on)
		o->split++;
}

/*
 * Count the order from its page tables into @o->res, its pages on a target
 * as moved (the caller is a thread of the session's mm, or holds it).
 * @status: one per huge-page-aligned block, or NULL when the mover's could
 * not be read (or before the order is issued).
 */
static void tt_mover_count(struct mm_struct *mm, struct tt_mover_order *o,
			   const s32 *status)
{
	unsigned long nb = tt_span_blocks(o->start, o->end), b, *pfns;
	unsigned long b0 = ALIGN_DOWN(o->start, TT_HUGE_SIZE), lo, hi;
	struct tt_pagescan ps;

	memset(&o->res, 0, sizeof(o->res));
	o->kept = 0;
	o->split = 0;
	pfns = kmalloc_array(TT_HUGE_PAGES, sizeof(*pfns),
			     GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!pfns || tt_pagescan_init(&ps, mm, o->start, o->end)) {
		/* Cannot tell what moved: nothing is claimed. */
		o->res.pages = (o->cend - o->cstart) >> PAGE_SHIFT;
		o->res.skipped_busy = o->res.pages;
		kfree(pfns);
		return;
	}
	for (b = 0; b < nb; b++) {
		lo = max(o->start, b0 + b * TT_HUGE_SIZE);
		hi = min(o->end, b0 + (b + 1) * TT_HUGE_SIZE);
		tt_mover_count_block(mm, o, &ps, lo, hi, pfns,
				     status ? &status[b] : NULL);
		cond_resched();
	}
	tt_pagescan_exit(&ps);
	kfree(pfns);
	WARN_ON_ONCE(!tt_result_consistent(&o->res));
}

/*
 * A completed order's pages found on a target that were there when it was
 * issued: already_on_node, not moved (as far as they are still there).
 * Its pages found absent that were present when it was issued (beyond
 * @pre_absent; a huge order's all were): busy, not absent. Someone was
 * moving them at that instant (a migration entry reads as absent), such
 * as a late mover of an order that went back.
 */
static void tt_mover_count_pre(struct tt_mover_order *o)
{
	u64 n = min(o->pre_on, o->res.moved);
	u64 gone = o->res.skipped_not_present -
		   min(o->res.skipped_not_present, o->pre_absent);

	o->res.moved -= n;
	o->res.already_on_node += n;
	o->res.skipped_not_present -= gone;
	o->res.skipped_busy += gone;
}

/*
 * The order @id taken by @th, or NULL; a missing one is counted as late
 * when it was issued (*@ret 0), else *@ret is -ENOENT (lock held).
 */
static struct tt_mover_order *tt_mover_taken(struct tt_mover *mv,
					     struct tt_mover_thread *th,
					     u64 id, int *ret)
{
	struct tt_mover_order *o;

	*ret = 0;
	list_for_each_entry(o, &mv->taken, link) {
		if (o->id != id)
			continue;
		if (o->th == th)
			return o;
		*ret = -ENOENT;
		return NULL;
	}
	if (id && id <= mv->last_id)
		mv->counts.late++;
	else
		*ret = -ENOENT;
	return NULL;
}

/*
 * TT_MOVER_DONE: count the order the caller completed and hand it back to
 * its issuer; a completion of an order that went back is only counted as
 * late. The statuses are copied first, while the order is still TAKEN
 * (its deadline holds: the copy may fault for as long as user space
 * likes), and the order is looked up again afterwards.
 */
static int tt_mover_done(struct tt_ksession *s, struct tt_mover_thread *th,
			 const struct tt_ioc_mover *arg)
{
	struct tt_mover *mv = &s->mover;
	s32 status[TT_SLOT_BLOCKS];
	struct tt_mover_order *o;
	bool have_status = true;
	unsigned long nb;
	int ret;

	spin_lock(&mv->lock);
	o = tt_mover_taken(mv, th, arg->done_id, &ret);
	nb = o ? tt_span_blocks(o->start, o->end) : 0;
	spin_unlock(&mv->lock);
	if (!o)
		return ret;
	/* an order never spans more than one slot */
	if (WARN_ON_ONCE(nb > ARRAY_SIZE(status)) || arg->nr_status != nb)
		return -EINVAL;

	if (copy_from_user(status, u64_to_user_ptr(arg->status_ptr),
			   nb * sizeof(*status))) {
		have_status = false;
		ret = -EFAULT;
	}

	spin_lock(&mv->lock);
	o = tt_mover_taken(mv, th, arg->done_id, &ret);
	if (!o) {	/* it went back meanwhile: late */
		spin_unlock(&mv->lock);
		return have_status ? ret : -EFAULT;
	}
	list_del_init(&o->link);
	o->state = TT_ORDER_COMPLETING;
	spin_unlock(&mv->lock);

	tt_mover_count(s->mm, o, have_status ? status : NULL);
	tt_mover_count_pre(o);

	spin_lock(&mv->lock);
	o->state = TT_ORDER_DONE;
	/* a completion: a sign of life, orders may flow again */
	mv->suspect_until = 0;
	mv->counts.mover_bytes += o->res.moved << PAGE_SHIFT;
	mv->counts.huge_kept += o->kept;
	mv->counts.huge_split += o->split;
	mv->counts.orders++;
	spin_unlock(&mv->lock);
	wake_up_all(&mv->done_wq);
	return have_status ? 0 : -EFAULT;
}

static bool tt_mover_has_order(struct tt_mover *mv)
{
	return !list_empty_careful(&mv->queue) || READ_ONCE(mv->closed);
}

/* TT_MOVER_TAKE: the first queued order (urgent ones first), waiting for one with @wait. */
static int tt_mover_take(struct tt_mover *mv, struct tt_mover_thread *th,
			 struct tt_ioc_mover *arg, bool wait)
{
	struct tt_mover_order *o;
	unsigned int i;

	for (;;) {
		spin_lock(&mv->lock);
		o = list_first_entry_or_null(&mv->queue, struct tt_mover_order,
					     link);
		if (o || !wait || mv->closed)
			break;
		spin_unlock(&mv->lock);
		if (wait_event_interruptible_exclusive(mv->wq,
						       tt_mover_has_order(mv)))
			return -EINTR;
	}
	arg->id = 0;
	arg->addr = 0;
	arg->len = 0;
	arg->huge_size = TT_HUGE_SIZE;
	arg->order_flags = 0;
	arg->nr_nodes = 0;
	memset(arg->nodes, 0, sizeof(arg->nodes));
	if (o) {
		list_move_tail(&o->link, &mv->taken);
		o->state = TT_ORDER_TAKEN;
		o->th = th;
		arg->id = o->id;
		arg->addr = o->start;
		arg->len = o->end - o->start;
		arg->order_flags = o->flags;
		arg->nr_nodes = o->nr_nids;
		for (i = 0; i < o->nr_nids; i++)
			arg->nodes[i] = o->nids[i];
	}
	spin_unlock(&mv->lock);
	return 0;
}

/* Send the taken order @id back to its issuer, if it is still taken. */
static void tt_mover_send_back(struct tt_mover *mv, u64 id)
{
	struct tt_mover_order *o;

	spin_lock(&mv->lock);
	list_for_each_entry(o, &mv->taken, link) {
		if (o->id == id) {
			tt_mover_back(mv, o);
			break;
		}
	}
	spin_unlock(&mv->lock);
	wake_up_all(&mv->done_wq);
}

/**
 * tt_mover_ioctl() - TT_IOC_MOVER
 * @s:    the session (the caller's mm checked).
 * @argp: the user argument.
 *
 * Return: 0 or a negative errno (see TT_IOC_MOVER).
 */
long tt_mover_ioctl(struct tt_ksession *s, void __user *argp)
{
	struct tt_mover *mv = &s->mover;
	struct tt_mover_thread *th, *new = NULL;
	struct tt_ioc_mover arg;
	unsigned long stale_start = 0, stale_end = 0;
	bool stale, stale_sched = false;
	int ret;

	BUILD_BUG_ON(ARRAY_SIZE(arg.nodes) < TT_MIG_TARGETS);
	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if (arg.flags & ~TT_MOVER_FLAGS_ALL)
		return -EOPNOTSUPP;
	if (!arg.flags ||
	    ((arg.flags & TT_MOVER_WAIT) && !(arg.flags & TT_MOVER_TAKE)) ||
	    ((arg.flags & TT_MOVER_BASE) && !(arg.flags & TT_MOVER_REGISTER)))
		return -EINVAL;
	if (arg.flags & TT_MOVER_REGISTER) {
		new = kzalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
		if (!new)
			return -ENOMEM;
		new->pid = get_pid(task_pid(current));
	}

	spin_lock(&mv->lock);
	th = tt_mover_find(mv);
	if (!th && new) {
		list_add_tail(&new->link, &mv->threads);
		th = new;
		new = NULL;
	}
	if (arg.flags & TT_MOVER_REGISTER)
		th->base = arg.flags & TT_MOVER_BASE;
	/* in here, it executes no order: what went back is not in its hands */
	stale = th && th->stale_start != th->stale_end;
	if (stale) {
		stale_start = th->stale_start;
		stale_end = th->stale_end;
		stale_sched = th->stale_sched;
		th->stale_start = 0;
		th->stale_end = 0;
		th->stale_sched = false;
	}
	spin_unlock(&mv->lock);
	if (stale) {
		wake_up_all(&mv->done_wq);
		/* what it moved late may sit where nobody wants it now */
		if (stale_sched && mv->landed)
			mv->landed(mv, stale_start, stale_end);
	}
	if (new) {
		put_pid(new->pid);
		kfree(new);
	}
	/* Only this thread drops its own registration: @th stays valid. */
	if ((arg.flags & (TT_MOVER_DONE | TT_MOVER_TAKE)) && !th)
		return -EINVAL;

	if (arg.flags & TT_MOVER_DONE) {
		ret = tt_mover_done(s, th, &arg);
		if (ret)
			return ret;
	}
	if (arg.flags & TT_MOVER_TAKE) {
		ret = tt_mover_take(mv, th, &arg, arg.flags & TT_MOVER_WAIT);
		if (ret)
			return ret;
		if (copy_to_user(argp, &arg, sizeof(arg))) {
			/* nobody will complete it: back to the engine now */
			tt_mover_send_back(mv, arg.id);
			return -EFAULT;
		}
	}
	if ((arg.flags & TT_MOVER_UNREGISTER) && th) {
		spin_lock(&mv->lock);
		tt_mover_drop_thread(mv, th);
		spin_unlock(&mv->lock);
		wake_up_all(&mv->done_wq);
	}
	return 0;
}

/**
 * tt_mover_poll() - poll() of the session: EPOLLIN while an order is queued
 * @s:    the session.
 * @file: its file.
 * @wait: the poll table.
 *
 * Return: the events.
 */
__poll_t tt_mover_poll(struct tt_ksession *s, struct file *file,
		       poll_table *wait)
{
	struct tt_mover *mv = &s->mover;

	poll_wait(file, &mv->wq, wait);
	return !list_empty_careful(&mv->queue) ? EPOLLIN | EPOLLRDNORM : 0;
}

static bool tt_mover_settled(struct tt_mover_order *o)
{
	enum tt_order_state st = READ_ONCE(o->state);

	return st == TT_ORDER_DONE || st == TT_ORDER_BACK;
}

/* Wait until @o is DONE, or send it back (see the top of the file). */
static void tt_mover_wait(struct tt_mover *mv, struct tt_mover_order *o,
			  bool killable)
{
	u64 now, timeout, fallbacks;
	bool back, woke;

	for (;;) {
		back = false;
		woke = false;
		now = ktime_get_ns();
		spin_lock(&mv->lock);
		if (o->state == TT_ORDER_DONE || o->state == TT_ORDER_BACK) {
			spin_unlock(&mv->lock);
			return;
		}
		if (o->state != TT_ORDER_COMPLETING) {
			if (now >= o->deadline) {
				timeout = (u64)tt_config_get(TT_CFG_MOVER_TIMEOUT_MS) *
					  NSEC_PER_MSEC;
				mv->suspect_until = now + timeout;
				back = true;
			} else if (mv->closed ||
				   (killable && fatal_signal_pending(current))) {
				back = true;
			}
			fallbacks = mv->counts.fallbacks;
			if (back)
				tt_mover_back(mv, o);
			else	/* a dead taker, or no mover left */
				tt_mover_prune(mv);
			back = o->state == TT_ORDER_BACK;
			woke = mv->counts.fallbacks != fallbacks;
		}
		spin_unlock(&mv->lock);
		if (woke)	/* other issuers' orders may have gone back */
			wake_up_all(&mv->done_wq);
		if (back)
			return;
		wait_event_timeout(mv->done_wq, tt_mover_settled(o),
				   msecs_to_jiffies(TT_MOVER_CHECK_MS));
	}
}

static void tt_mover_engine(struct tt_mover_run *r, unsigned long start,
			    unsigned long end, u64 huge)
{
	struct tt_migrate_result er = {};
	struct tt_engine_counts ec = {};
	int ret;

	if (r->ret || start >= end)
		return;
	ret = tt_migrate_range_to(r->s->mm, start, end, r->nids, r->nr_nids,
				  r->flags, r->stop, &er, &ec);
	r->counts.large_pte += ec.large_pte;
	er.elapsed_ns = 0;
	tt_result_add(r->res, &er);
	r->counts.engine_bytes += er.moved << PAGE_SHIFT;
	if (er.moved)
		r->counts.huge_split += min_t(u64, huge,
					      DIV_ROUND_UP(er.moved,
							   TT_HUGE_PAGES));
	if (ret)
		r->ret = ret;
}

/* Wait for the oldest order in flight, count it, free it. */
static void tt_mover_reap(struct tt_mover_run *r)
{
	struct tt_mover_order *o = list_first_entry(&r->flight,
						    struct tt_mover_order,
						    flight);
	struct tt_migrate_result er = {};
	struct tt_engine_counts ec = {};
	u64 nb = (o->flags & TT_ORDER_BASE) ? 0 :
		 (o->end - o->start) / TT_HUGE_SIZE, late, held;
	int ret;

	tt_mover_wait(r->mv, o, !(r->flags & TT_MIG_REMOTE));
	list_del(&o->flight);
	r->nr_flight--;
	if (o->state == TT_ORDER_DONE) {
		o->res.elapsed_ns = 0;
		tt_result_add(r->res, &o->res);
		kfree(o);
		return;
	}
	/*
	 * Back: the engine moves the order, once its mover no longer holds
	 * it (within one more mover_timeout_ms). A page the engine finds on a
	 * target beyond the @pre_on that were there at the issue got there
	 * through the late mover: moved all the same. A page it is moving
	 * reads as absent (a migration entry): the pages found absent beyond
	 * the @pre_absent that were absent at the issue are busy, not absent.
	 */
	tt_mover_stale_wait(r->mv, o->start, o->end,
			    !(r->flags & TT_MIG_REMOTE));
	ret = tt_migrate_range_to(r->s->mm, o->cstart, o->cend, r->nids,
				  r->nr_nids, r->flags, r->stop, &er, &ec);
	late = er.already_on_node - min(er.already_on_node, o->pre_on);
	held = er.skipped_not_present -
	       min(er.skipped_not_present, o->pre_absent);
	er.skipped_not_present -= held;
	er.skipped_busy += held;
	r->counts.large_pte += ec.large_pte;
	r->counts.engine_bytes += er.moved << PAGE_SHIFT;
	r->counts.mover_bytes += late << PAGE_SHIFT;
	if (er.moved)
		r->counts.huge_split += min_t(u64, nb,
					      DIV_ROUND_UP(er.moved,
							   TT_HUGE_PAGES));
	er.moved += late;
	er.already_on_node -= late;
	er.elapsed_ns = 0;
	tt_result_add(r->res, &er);
	if (ret && !r->ret)
		r->ret = ret;
	kfree(o);
}

/*
 * Queue @o (lock held): an urgent order behind the urgent ones queued,
 * ahead of the rest; any other at the end. The walk passes the queued
 * urgent orders only: at most TT_MOVER_INFLIGHT_MAX per issuer.
 */
static void tt_mover_enqueue(struct tt_mover *mv, struct tt_mover_order *o)
{
	struct tt_mover_order *q;

	if (!o->urgent) {
		list_add_tail(&o->link, &mv->queue);
		return;
	}
	list_for_each_entry(q, &mv->queue, link)
		if (!q->urgent)
			break;
	/* before @q, or at the end when every queued order is urgent */
	list_add_tail(&o->link, &q->link);
}

/*
 * Issue [start, end) as an order: whole huge pages, or any pages with
 * TT_ORDER_BASE in @flags (their pages on a target are counted first);
 * [cstart, cend) is the caller's part of it (struct tt_mover_order).
 * Return false when it is not possible.
 */
static bool tt_mover_issue_part(struct tt_mover_run *r, unsigned long start,
				unsigned long end, unsigned long cstart,
				unsigned long cend, u32 flags)
{
	struct tt_mover *mv = r->mv;
	struct tt_mover_order *o;
	u64 timeout;

	while (r->nr_flight >= r->max_flight)
		tt_mover_reap(r);
	o = kzalloc(sizeof(*o), GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!o)
		return false;
	INIT_LIST_HEAD(&o->link);
	o->start = start;
	o->sched = r->flags & TT_MIG_SCHED;
	o->urgent = r->flags & TT_MIG_URGENT;
	o->end = end;
	o->cstart = cstart;
	o->cend = cend;
	o->flags = flags;
	memcpy(o->nids, r->nids, sizeof(o->nids));
	o->nr_nids = r->nr_nids;
	if (flags & TT_ORDER_BASE) {
		tt_mover_count(r->s->mm, o, NULL);
		if (o->res.moved == o->res.pages) {
			/* all there already: nothing to order */
			o->res.already_on_node = o->res.moved;
			o->res.moved = 0;
			o->res.elapsed_ns = 0;
			tt_result_add(r->res, &o->res);
			kfree(o);
			return true;
		}
		o->pre_on = o->res.moved;
		o->pre_absent = o->res.skipped_not_present;
		memset(&o->res, 0, sizeof(o->res));
	}

	spin_lock(&mv->lock);
	if (!tt_mover_usable_locked(mv)) {
		spin_unlock(&mv->lock);
		wake_up_all(&mv->done_wq);
		kfree(o);
		return false;
	}
	timeout = (u64)tt_config_get(TT_CFG_MOVER_TIMEOUT_MS) * NSEC_PER_MSEC;
	o->id = ++mv->last_id;
	o->state = TT_ORDER_QUEUED;
	o->deadline = ktime_get_ns() + timeout * tt_span_blocks(start, end);
	tt_mover_enqueue(mv, o);
	spin_unlock(&mv->lock);
	list_add_tail(&o->flight, &r->flight);
	r->nr_flight++;
	wake_up(&mv->wq);
	return true;
}

/* Issue [start, end) as an order, all of it the caller's. */
static bool tt_mover_issue(struct tt_mover_run *r, unsigned long start,
			   unsigned long end, u32 flags)
{
	return tt_mover_issue_part(r, start, end, start, end, flags);
}

/* Set bits of @w from bit @lo to bit @hi - 1. */
static unsigned int tt_bits(unsigned long w, unsigned int lo, unsigned int hi)
{
	return hi > lo ? hweight_long(w & GENMASK(hi - 1, lo)) : 0;
}

/*
 * [start, end), the part of a huge page the range covers, is left where it
 * is: counted as pages not moved (skipped_unsupported) and in huge_partial.
 */
static void tt_mover_leave(struct tt_mover_run *r, unsigned long start,
			   unsigned long end)
{
	struct tt_migrate_result er = {};

	if (start >= end)
		return;
	er.pages = (end - start) >> PAGE_SHIFT;
	er.skipped_unsupported = er.pages;
	tt_result_add(r->res, &er);
	r->counts.huge_partial++;
}

/*
 * The part [start, end) of a huge page the range covers only in part. A
 * scheduler's migration (TT_MIG_SCHED) whose part is more than half of
 * the huge page (lacks at most TT_MOVER_EDGE_SLACK bytes: the allocator's
 * header in front of a tensor, the end of the chunk before it in a heap)
 * has a mover move the huge page whole, the bytes outside the range with
 * it; only the range's part is counted.
 */
static void tt_mover_edge(struct tt_mover_run *r, unsigned long start,
			  unsigned long end)
{
	unsigned long blk = ALIGN_DOWN(start, TT_HUGE_SIZE);

	if ((r->flags & TT_MIG_SCHED) &&
	    TT_HUGE_SIZE - (end - start) <= TT_MOVER_EDGE_SLACK &&
	    tt_mover_issue_part(r, blk, blk + TT_HUGE_SIZE, start, end, 0))
		return;
	if (r->flags & TT_MIG_SPLIT_PARTIAL)
		tt_mover_engine(r, start, end, 1);
	else
		tt_mover_leave(r, start, end);
}

/*
 * The large folio mapped at @addr (by ptes: a pmd-mapped one is a whole
 * huge block): *@fs, *@fe its extent; 0 and 0 when the page there is
 * not part of one. Return 0, or -EBUSY when the page tables cannot be
 * read (mmap_lock not held).
 */
static int tt_mover_folio_at(struct mm_struct *mm, unsigned long addr,
			     unsigned long *fs, unsigned long *fe)
{
	struct vm_area_struct *vma;
	enum tt_page_kind kind;
	struct tt_pagescan ps;
	unsigned long pfn, seq;
	struct folio *folio;
	struct page *page;
	int tries = 0, ret;

	*fs = 0;
	*fe = 0;
	if (tt_pagescan_init(&ps, mm, addr, addr + PAGE_SIZE))
		return -EBUSY;
	do {
		seq = tt_pagescan_begin(&ps);
		mmap_read_lock(mm);
		vma = vma_lookup(mm, addr);
		ret = vma ? tt_pagescan_fill(&ps, seq, addr, addr + PAGE_SIZE,
					     &pfn) : 0;
		if (vma && !ret) {
			page = tt_pagescan_page(vma, pfn, &kind);
			folio = page ? page_folio(page) : NULL;
			if (folio && folio_test_large(folio)) {
				*fs = addr - folio_page_idx(folio, page) *
					     PAGE_SIZE;
				*fe = *fs + folio_size(folio);
			}
		}
		mmap_read_unlock(mm);
	} while (ret == -EBUSY && ++tries < TT_MOVER_SCAN_TRIES);
	tt_pagescan_exit(&ps);
	return ret == -EBUSY ? ret : 0;
}

/*
 * Cut [*start, *end) so that no large folio lies in it only in part:
 * move_pages(2) would move the folio whole, bytes outside the range too.
 * What is cut off goes to the engine (which leaves such a folio where it
 * is: large_pte). When the page tables cannot be read, all of it.
 */
static void tt_mover_trim(struct mm_struct *mm, unsigned long *start,
			  unsigned long *end)
{
	unsigned long fs, fe;

	if (tt_mover_folio_at(mm, *start, &fs, &fe)) {
		*start = *end;
		return;
	}
	if (fe && fs < *start)
		*start = min(fe, *end);
	if (*start >= *end)
		return;
	if (tt_mover_folio_at(mm, *end - PAGE_SIZE, &fs, &fe)) {
		*start = *end;
		return;
	}
	if (fe > *end)
		*end = max(fs, *start);
}

/*
 * The smallest base-page piece [@addr, @next) that goes to a mover:
 * TT_ORDER_EDGE_MIN for one at a huge-page boundary of a mapping that may
 * hold huge pages (@thp) where move_pages(2) batches its flushes, else
 * TT_ORDER_BASE_MIN.
 */
static unsigned long tt_mover_min_piece(unsigned long addr, unsigned long next,
					bool thp)
{
	if (TT_MOVE_PAGES_BATCHED && thp &&
	    (IS_ALIGNED(addr, TT_HUGE_SIZE) || IS_ALIGNED(next, TT_HUGE_SIZE)))
		return TT_ORDER_EDGE_MIN;
	return TT_ORDER_BASE_MIN;
}

/*
 * A gap of a slot, [start, end), with @huge huge pages that did not become
 * orders: the engine moves it, or, in base mode with no such huge page,
 * its parts in supported vmas become base-page orders shared among the
 * movers (TT_ORDER_MIN_BLOCKS blocks per order at least), each cut so that
 * no large folio lies in it only in part (tt_mover_trim()), and the engine
 * moves the rest (holes, unsupported vmas, what was cut off, pieces under
 * TT_ORDER_BASE_MIN, orders that could not issue).
 */
static void tt_mover_gap(struct tt_mover_run *r, unsigned long start,
			 unsigned long end, u64 huge)
{
	u32 flags = TT_ORDER_BASE | (r->base == 2 ? TT_ORDER_COLLAPSE : 0);
	struct mm_struct *mm = r->s->mm;
	struct vm_area_struct *vma;
	unsigned long addr, next, per, s, e, min_piece;
	bool base, thp;

	if (!r->base || huge || start >= end) {
		tt_mover_engine(r, start, end, huge);
		return;
	}
	per = max_t(unsigned long, TT_ORDER_MIN_BLOCKS,
		    DIV_ROUND_UP(tt_span_blocks(start, end), r->movers));
	for (addr = start; addr < end && !r->ret; addr = next) {
		mmap_read_lock(mm);
		vma = find_vma(mm, addr);
		base = false;
		thp = false;
		if (!vma || vma->vm_start >= end) {
			next = end;
		} else if (vma->vm_start > addr) {
			next = vma->vm_start;
		} else {
			next = min(end, vma->vm_end);
			base = tt_vma_supported(vma) &&
			       (vma->vm_flags & VM_READ);
			thp = !(vma->vm_flags & VM_NOHUGEPAGE);
		}
		mmap_read_unlock(mm);
		min_piece = tt_mover_min_piece(addr, next, thp);
		if (!base || next - addr < min_piece ||
		    (r->stop && atomic_read(r->stop))) {
			tt_mover_engine(r, addr, next, 0);
			cond_resched();
			continue;
		}
		e = min(next, ALIGN_DOWN(addr, TT_HUGE_SIZE) +
			      per * TT_HUGE_SIZE);
		/* no tail too small for an order of its own (same slot) */
		if (next - e >= min_piece)
			next = e;
		s = addr;
		e = next;
		tt_mover_trim(mm, &s, &e);
		tt_mover_engine(r, addr, s, 0);
		if (s < e && (e - s < min_piece ||
			      !tt_mover_issue(r, s, e, flags)))
			tt_mover_engine(r, s, e, 0);
		tt_mover_engine(r, max(s, e), next, 0);
		cond_resched();
	}
}

/* One slot of tt_mover_migrate(): orders first, then the engine's part. */
static void tt_mover_slot(struct tt_mover_run *r, unsigned long start,
			  unsigned long end)
{
	unsigned long first = ALIGN(start, TT_HUGE_SIZE), sent = 0;
	unsigned long addr, next;
	struct tt_mover_scan sc;
	unsigned int i, j, lo, per;

	tt_mover_scan(r->s->mm, start, end, r->nids, r->nr_nids, &sc);
	if (!tt_mover_usable_base(r->s, &r->base)) {
		tt_mover_engine(r, start, end, hweight_long(sc.huge) +
				sc.edge_lo + sc.edge_hi);
		return;
	}
	/*
	 * A huge page the range only partly covers: a mover would move its
	 * bytes outside the range too (move_pages(2) moves a whole THP). It
	 * stays where it is (huge_partial), or with TT_MIG_SPLIT_PARTIAL
	 * the engine splits it and moves the range's part (huge_split).
	 */
	if (sc.edge_lo) {
		unsigned long cut = min(end, ALIGN(start, TT_HUGE_SIZE));

		tt_mover_edge(r, start, cut);
		start = cut;
	}
	if (sc.edge_hi && start < end) {
		unsigned long cut = max(start, ALIGN_DOWN(end, TT_HUGE_SIZE));

		tt_mover_edge(r, cut, end);
		end = cut;
	}
	if (start >= end)
		return;
	if (!sc.huge) {
		tt_mover_gap(r, start, end, 0);
		return;
	}
	/* the runs of huge blocks to the movers, shared among them */
	per = max_t(unsigned int, TT_ORDER_MIN_BLOCKS,
		    DIV_ROUND_UP(hweight_long(sc.huge), r->movers));
	for (i = find_first_bit(&sc.huge, sc.nb); i < sc.nb;
	     i = find_next_bit(&sc.huge, sc.nb, j)) {
		j = min(find_next_zero_bit(&sc.huge, sc.nb, i), i + per);
		if (r->stop && atomic_read(r->stop))
			break;
		if (tt_mover_issue(r, first + i * TT_HUGE_SIZE,
				   first + j * TT_HUGE_SIZE, 0))
			sent |= GENMASK(j - 1, i);
	}
	/* the gaps between the runs sent to the engine, meanwhile */
	addr = start;
	lo = 0;
	i = find_first_bit(&sent, sc.nb);
	for (;;) {
		next = i < sc.nb ? first + i * TT_HUGE_SIZE : end;
		tt_mover_gap(r, addr, next,
			     tt_bits(sc.huge, lo, min(i, sc.nb)));
		if (i >= sc.nb)
			break;
		j = find_next_zero_bit(&sent, sc.nb, i);
		addr = first + j * TT_HUGE_SIZE;
		lo = j;
		i = find_next_bit(&sent, sc.nb, j);
	}
}

static void tt_mover_run_init(struct tt_mover_run *r, struct tt_ksession *s,
			      const int *nids, unsigned int nr_nids,
			      unsigned int flags, const atomic_t *stop,
			      struct tt_migrate_result *res)
{
	unsigned int i, n;

	memset(r, 0, sizeof(*r));
	r->s = s;
	r->mv = &s->mover;
	r->nr_nids = min_t(unsigned int, nr_nids, TT_MIG_TARGETS);
	for (i = 0; i < r->nr_nids; i++)
		r->nids[i] = nids[i];
	r->flags = flags;
	r->stop = stop;
	r->res = res;
	INIT_LIST_HEAD(&r->flight);
	n = tt_mover_usable_base(r->s, &r->base);
	r->movers = max(n, 1U);
	r->max_flight = clamp_t(unsigned int, n * TT_MOVER_INFLIGHT, 1,
				TT_MOVER_INFLIGHT_MAX);
}

static void tt_mover_run_end(struct tt_mover_run *r)
{
	struct tt_mover *mv = r->mv;

	while (!list_empty(&r->flight))
		tt_mover_reap(r);
	spin_lock(&mv->lock);
	mv->counts.engine_bytes += r->counts.engine_bytes;
	mv->counts.mover_bytes += r->counts.mover_bytes;
	mv->counts.huge_split += r->counts.huge_split;
	mv->counts.huge_partial += r->counts.huge_partial;
	mv->counts.large_pte += r->counts.large_pte;
	spin_unlock(&mv->lock);
}

/**
 * tt_mover_migrate() - move a range, each piece with its backend
 * @s:       the session.
 * @start:   page-aligned start.
 * @end:     page-aligned end, > @start.
 * @nids:    target nodes in order of preference (tt_migrate_range_to()).
 * @nr_nids: entries of @nids, > 0.
 * @flags:   TT_MIG_* bits: TT_MIG_REMOTE from a worker (the mm is pinned
 *           here), else from a thread of the session's process;
 *           TT_MIG_MOVE_ALL is added when the session's opener had
 *           CAP_SYS_NICE.
 * @stop:    optional: stop issuing and moving at the next batch when set
 *           (orders in flight are waited for: they end within
 *           mover_timeout_ms).
 * @res:     out: counts are added to it, elapsed_ns (wall time) too.
 *
 * The huge pages go to the session's movers, the rest to the in-kernel
 * engine (see the top of the file); with no mover, or mover_timeout_ms 0,
 * it is tt_migrate_range_to() plus the counting of the huge pages it
 * splits. Must be called without mmap_lock.
 *
 * Return: as tt_migrate_range_to().
 */
int tt_mover_migrate(struct tt_ksession *s, unsigned long start,
		     unsigned long end, const int *nids, unsigned int nr_nids,
		     unsigned int flags, const atomic_t *stop,
		     struct tt_migrate_result *res)
{
	u64 t0 = ktime_get_ns();
	struct tt_mover_run r;
	unsigned long a, b;

	if ((flags & TT_MIG_REMOTE) && !mmget_not_zero(s->mm))
		return -ESRCH;
	if (READ_ONCE(s->move_all))
		flags |= TT_MIG_MOVE_ALL;
	tt_mover_stale_wait(&s->mover, start, end, !(flags & TT_MIG_REMOTE));
	tt_mover_run_init(&r, s, nids, nr_nids, flags, stop, res);
	for (a = start; a < end && !r.ret; a = b) {
		b = tt_mover_slot_end(a, end);
		if ((stop && atomic_read(stop)) ||
		    (!(flags & TT_MIG_REMOTE) && fatal_signal_pending(current))) {
			r.ret = -EINTR;
			break;
		}
		tt_mover_slot(&r, a, b);
		cond_resched();
	}
	tt_mover_run_end(&r);
	if (flags & TT_MIG_REMOTE)
		mmput(s->mm);
	res->elapsed_ns += ktime_get_ns() - t0;
	return r.ret;
}

/* Huge pages of [start, end) off @nid (to count what the engine splits). */
static u64 tt_mover_count_huge(struct mm_struct *mm, unsigned long start,
			       unsigned long end, int nid)
{
	struct tt_mover_scan sc;
	unsigned long a, b;
	u64 n = 0;

	for (a = start; a < end; a = b) {
		b = tt_mover_slot_end(a, end);
		tt_mover_scan(mm, a, b, &nid, 1, &sc);
		n += hweight_long(sc.huge) + sc.edge_lo + sc.edge_hi;
		cond_resched();
	}
	return n;
}

/*
 * One pass of tt_mover_migrate_sync() over the whole range: the huge pages
 * (and the base pages, in base mode) to the movers and the rest to the
 * engine in the caller when the session has movers and the range has
 * something for them, else tt_migrate_sync() (the engine spread over the worker
 * pool), the huge pages it splits counted.
 */
static int tt_mover_sync_pass(struct tt_ksession *s, unsigned long start,
			      unsigned long end, int nid, unsigned int flags,
			      struct tt_migrate_result *res)
{
	struct tt_mover *mv = &s->mover;
	u64 huge = tt_mover_count_huge(s->mm, start, end, nid);
	struct tt_engine_counts ec = {};
	unsigned long stale;
	unsigned int base;
	u64 held;
	int ret;

	memset(res, 0, sizeof(*res));
	stale = tt_mover_stale_wait(mv, start, end, true);
	if (tt_mover_usable_base(s, &base) && (huge || base)) {
		ret = tt_mover_migrate(s, start, end, &nid, 1,
				       flags | TT_MIG_SPLIT_PARTIAL, NULL, res);
		goto out;
	}
	if (READ_ONCE(s->move_all))
		flags |= TT_MIG_MOVE_ALL;
	ret = tt_migrate_sync(s->mm, start, end, nid, flags, res, &ec);
	spin_lock(&mv->lock);
	mv->counts.large_pte += ec.large_pte;
	mv->counts.engine_bytes += res->moved << PAGE_SHIFT;
	if (res->moved)
		mv->counts.huge_split += min_t(u64, huge,
					       DIV_ROUND_UP(res->moved,
							    TT_HUGE_PAGES));
	spin_unlock(&mv->lock);
out:
	/*
	 * Pages a late mover held during the pass read as absent: as many of
	 * the absent ones as its stale span covered, before or after the
	 * pass, are busy, so that another pass looks at them again.
	 */
	held = min_t(u64, res->skipped_not_present,
		     max(stale, tt_mover_stale(mv, start, end)));
	res->skipped_not_present -= held;
	res->skipped_busy += held;
	return ret;
}

/*
 * @res, the result of a pass over the whole range, after earlier passes
 * moved @moved pages of it or left them busy (a late mover of the call's
 * own orders may have moved those since): as many of the pages found on
 * the target now (already_on_node) count as moved instead.
 */
static void tt_mover_sync_merge(struct tt_migrate_result *res, u64 moved)
{
	u64 there = res->moved + res->already_on_node;

	res->moved = min(there, res->moved + moved);
	res->already_on_node = there - res->moved;
}

/**
 * tt_mover_migrate_sync() - a synchronous TT_IOC_MIGRATE after its checks
 * @s:     the session (the caller is a thread of its process).
 * @start: page-aligned start.
 * @end:   page-aligned end, > @start.
 * @nid:   target node, checked.
 * @flags: TT_MIG_MOVE_ALL (the caller has CAP_SYS_NICE) or 0.
 * @res:   out: zeroed, then filled; elapsed_ns is the wall time.
 *
 * The range is moved in passes over all of it (tt_mover_sync_pass()): a
 * huge page the range covers only in part is split by the engine and its
 * pages in the range moved. While a pass leaves pages busy (isolated by
 * someone else for a moment, in another CPU's LRU batch, a huge page whose
 * split failed) and none for lack of room on @nid, another pass follows,
 * after a sleep that grows from 1 ms to TT_SYNC_BACKOFF_MAX_MS,
 * TT_SYNC_PASSES passes at most (as the kernel's migrate_pages()
 * retries). Pages on the target are counted moved by the
 * pass that moved them; @res is the last pass's result with that
 * correction.
 *
 * Return: 0 only when every present page of the range is on @nid;
 * -ENOSPC when some stayed because @nid was full; else -EBUSY when some
 * stayed busy or unsupported (@res says how many of each); -EINTR (fatal
 * signal: @res is the last whole pass's result, corrected with what the
 * interrupted one moved), -ENOMEM.
 */
int tt_mover_migrate_sync(struct tt_ksession *s, unsigned long start,
			  unsigned long end, int nid, unsigned int flags,
			  struct tt_migrate_result *res)
{
	struct tt_migrate_result pass;
	u64 t0 = ktime_get_ns(), moved, busy, n;
	unsigned int i, ms;
	int ret;

	ret = tt_mover_sync_pass(s, start, end, nid, flags, res);
	moved = res->moved;
	/* a full node stays full: no pass after a page found no room */
	for (i = 1; !ret && res->skipped_busy && !res->skipped_no_memory &&
	     i < TT_SYNC_PASSES; i++) {
		busy = res->skipped_busy;
		ms = min(1U << (i - 1), TT_SYNC_BACKOFF_MAX_MS);
		schedule_timeout_killable(msecs_to_jiffies(ms));
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		ret = tt_mover_sync_pass(s, start, end, nid, flags, &pass);
		if (ret && pass.pages < res->pages) {
			/* cut short: the pages it moved were busy before */
			n = min(pass.moved, res->skipped_busy);
			res->skipped_busy -= n;
			res->moved += n;
			break;
		}
		*res = pass;
		/* busy then, on the target now: a late mover moved them */
		tt_mover_sync_merge(res, moved + busy);
		moved = res->moved;
	}
	res->elapsed_ns = ktime_get_ns() - t0;
	if (ret)
		return ret;
	if (res->skipped_no_memory)
		return -ENOSPC;
	if (res->skipped_busy || res->skipped_unsupported)
		return -EBUSY;
	return 0;
}
