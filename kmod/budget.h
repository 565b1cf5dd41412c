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

struct tt_ksession;

/* The budget in force when there is none. */
#define TT_BUDGET_NONE		(~0ULL)

/**
 * struct tt_budget - one session's side of the module-wide budget, in its
 * scheduler (the session's own accounts, victims and waits are the
 * executor's: struct tt_exec_bud, core/exec_budget.c)
 * @link:     on the module's list of sessions (tt_budget_lock).
 * @own:      the session's own budget in bytes (TT_SCHED_SET_BUDGET), 0
 *            for none; written under the scheduler's lock, read by others
 *            with READ_ONCE().
 * @pub_held: the executor's registered bytes as the other sessions read
 *            them (tt_budget_publish(), WRITE_ONCE()).
 * @pub_fast: of them, the bytes counted on the fast tier, as the other
 *            sessions read them.
 * @visits:   visits of the module's budget work to this session in
 *            progress (tt_budget_lock); closing waits for none.
 * @wq:       woken when @visits goes down, or the executor's victim
 *            evictions in flight (struct tt_exec_bud @busy) do.
 * @stuck:    the session's last attempt to get within its budget in force
 *            left it over (no victim could give the rest back: ranges in
 *            use, pinned, not present), or it is TT_SCHED_OFF: the module
 *            total counts it at most at that budget (tt_budget_limit()).
 *            Written under the scheduler's lock with WRITE_ONCE(), read by
 *            the others with READ_ONCE().
 */
struct tt_budget {
	struct list_head link;
	u64 own;
	u64 pub_held;
	u64 pub_fast;
	unsigned int visits;
	wait_queue_head_t wq;
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
void tt_budget_publish(struct tt_ksession *s, u64 held, u64 slow);
u64 tt_budget_limit(struct tt_ksession *s, u64 *total, u64 *global);
bool tt_budget_active(struct tt_ksession *s);
void tt_budget_kick(void);

#endif /* TT_BUDGET_H */
