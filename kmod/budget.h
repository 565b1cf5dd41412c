/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fast-tier budget: each session's accounts (kept by the scheduler,
 * sched.c) and the module-wide side, the sessions sharing the budget_mib
 * setting (Documentation/scheduler.md, "Fast-tier budget").
 */
#ifndef TT_BUDGET_H
#define TT_BUDGET_H

#include <linux/list.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "heat.h"

struct tt_ksession;

/* The budget in force when there is none. */
#define TT_BUDGET_NONE		(~0ULL)

/**
 * struct tt_budget_counts - what the budget did (see the same names in
 * struct tt_ioc_stats)
 * @peak:            highest fast registered bytes after a call returned or
 *                   a prefetch was admitted.
 * @victims:         victim evictions (tensors or pieces of them).
 * @victim_bytes:    bytes they moved to the slow tier.
 * @victim_archived: of those, bytes hinted TT_HINT_ARCHIVE.
 * @skipped_pages:   victim pages that could not move.
 * @waits:           times a prefetch stopped to wait for room.
 * @overruns:        calls that returned over the budget, no victim found.
 */
struct tt_budget_counts {
	u64 peak;
	u64 victims;
	u64 victim_bytes;
	u64 victim_archived;
	u64 skipped_pages;
	u64 waits;
	u64 overruns;
};

/**
 * struct tt_budget - one session's budget state, in its scheduler
 * @link:     on the module's list of sessions (tt_budget_lock).
 * @own:      the session's own budget in bytes (TT_SCHED_SET_BUDGET), 0
 *            for none; written under the scheduler's lock, read by others
 *            with READ_ONCE().
 * @held:     registered bytes: the saved ranges the scheduler holds.
 * @slow:     bytes of them counted on the slow tier: moved there by an
 *            eviction of the session and not yet admitted back.
 * @pub_held: @held as the other sessions read it (WRITE_ONCE()).
 * @pub_fast: @held - @slow as the other sessions read it.
 * @w:        the heat weights (Algorithm 1 carries them over).
 * @counts:   counters.
 * @busy:     victim evictions in flight (scheduler lock); closing waits
 *            for none.
 * @visits:   visits of the module's budget work to this session in
 *            progress (tt_budget_lock); closing waits for none.
 * @wq:       woken when @busy or @visits goes down.
 * @items:    scratch of a victim round: one heat item per saved range.
 * @refs:     scratch: the range and layer of each item (2 per item).
 * @cap:      entries of @items (and pairs of @refs).
 * @room:     an event took the session over its budget: make room once
 *            the event is done (the event loop, lock dropped).
 * @released: registered memory was released: retry waiting prefetches.
 * @waiting:  a layer may be waiting for room (@bud_wait set since the last
 *            retry found none): without a budget, releases look for them
 *            only then.
 * @stuck:    the session's last attempt to get within its budget in force
 *            left it over (no victim could give the rest back: ranges in
 *            use, pinned, not present), or it is TT_SCHED_OFF: the module
 *            total counts it at most at that budget (tt_budget_limit()).
 *            Written under the scheduler's lock with WRITE_ONCE(), read by
 *            the others with READ_ONCE().
 *
 * Everything but @link, @visits and the published values is under the
 * scheduler's lock.
 */
struct tt_budget {
	struct list_head link;
	u64 own;
	u64 held;
	u64 slow;
	u64 pub_held;
	u64 pub_fast;
	struct tt_heat_w w;
	struct tt_budget_counts counts;
	unsigned int busy;
	unsigned int visits;
	wait_queue_head_t wq;
	struct tt_heat_item *items;
	void **refs;
	unsigned int cap;
	bool room;
	bool released;
	bool waiting;
	bool stuck;
};

/*
 * What the module's budget work does to each session it visits (the
 * scheduler's, registered with tt_budget_visitor()): @shrink true, evict
 * victims down to the budget in force; false, retry the prefetches waiting
 * for room. Called with a reference to @s held, no lock held.
 */
typedef void (*tt_budget_visit_fn)(struct tt_ksession *s, bool shrink);

int tt_budget_init(void);
void tt_budget_exit(void);
void tt_budget_visitor(tt_budget_visit_fn fn);

void tt_budget_join(struct tt_ksession *s);
void tt_budget_leave(struct tt_ksession *s);
void tt_budget_publish(struct tt_ksession *s);
u64 tt_budget_limit(struct tt_ksession *s, u64 *total, u64 *global);
bool tt_budget_active(struct tt_ksession *s);
void tt_budget_kick(void);

#endif /* TT_BUDGET_H */
