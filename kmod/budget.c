// SPDX-License-Identifier: GPL-2.0
/*
 * The module-wide side of the fast-tier budget (Documentation/scheduler.md,
 * "Fast-tier budget"). Each session's executor keeps its own accounts
 * (struct tt_exec_bud, core/exec_budget.c) and makes room itself, and
 * publishes them into its struct tt_budget (in its struct tt_sched); here
 * are the list of sessions that share the budget_mib setting, their
 * max-min fair shares (heat.c's tt_heat_share()), and one work item that
 * visits every session when the others must react: a session released
 * registered memory or closed, a budget changed, or the sessions together
 * are over the module's budget. A visit first makes every session that is
 * over its budget in force give room back (its share may have shrunk),
 * then retries every session's prefetches waiting for room.
 *
 * The work does not know what a visit does: the scheduler, which owns the
 * sessions' accounts, registers its visitor at its init
 * (tt_budget_visitor()); the budget only decides when and whom to visit.
 *
 * Locking: tt_budget_lock (a mutex) protects the list, the share scratch
 * and the visit counts. It is taken under a session's scheduler lock
 * (tt_budget_limit()) and never the other way round: the work takes
 * references under it, drops it, and then takes each session's scheduler
 * lock in turn. A closing session leaves the list and waits only for a
 * visit of itself that has begun (tt_budget_leave()): the work skips the
 * sessions that left, so a close never waits for the visits of other
 * sessions (their scheduler locks may be held by other processes).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "budget.h"
#include "config.h"
#include "heat.h"
#include "session.h"

static DEFINE_MUTEX(tt_budget_lock);
static LIST_HEAD(tt_budget_sessions);
static unsigned int tt_budget_nr;
/* demands then shares, 2 * tt_budget_scratch_cap entries */
static u64 *tt_budget_scratch;
static unsigned int tt_budget_scratch_cap;
/* tt_budget_init() .. tt_budget_exit(): the work may be queued */
static bool tt_budget_up;
/* what a visit does; set before the work may run, cleared after it stopped */
static tt_budget_visit_fn tt_budget_visit;

static void tt_budget_work_fn(struct work_struct *work);
static DECLARE_WORK(tt_budget_work, tt_budget_work_fn);

static struct tt_budget *tt_budget_of(struct tt_ksession *s)
{
	return &s->sched.bud;
}

/* The module's budget in bytes, 0 when off. */
static u64 tt_budget_global(void)
{
	return (u64)tt_config_get(TT_CFG_BUDGET_MIB) << 20;
}

/**
 * tt_budget_active() - does the session have a budget in force?
 * @s: the session.
 *
 * Return: true when it has a budget of its own or the module has one.
 */
bool tt_budget_active(struct tt_ksession *s)
{
	return READ_ONCE(tt_budget_of(s)->own) || tt_budget_global();
}

/**
 * tt_budget_publish() - let the other sessions see the session's accounts
 * @s:    the session; its scheduler lock is held.
 * @held: its registered bytes (the executor's @bud.held).
 * @slow: of them, the bytes counted on the slow tier (@bud.slow).
 */
void tt_budget_publish(struct tt_ksession *s, u64 held, u64 slow)
{
	struct tt_budget *b = tt_budget_of(s);

	WRITE_ONCE(b->pub_held, held);
	WRITE_ONCE(b->pub_fast, held > slow ? held - slow : 0);
}

/* Room for @n sessions' demands and shares (tt_budget_lock held). */
static bool tt_budget_scratch_room(unsigned int n)
{
	u64 *p;

	if (n <= tt_budget_scratch_cap)
		return true;
	p = krealloc_array(tt_budget_scratch, 2 * (size_t)n, sizeof(*p),
			   GFP_KERNEL | __GFP_NOWARN);
	if (!p)
		return false;
	tt_budget_scratch = p;
	tt_budget_scratch_cap = n;
	return true;
}

/*
 * What session @b counts in the module's total: its fast registered bytes,
 * at most @cap (its budget in force) when it is stuck over it.
 */
static u64 tt_budget_charge(const struct tt_budget *b, u64 cap)
{
	u64 fast = READ_ONCE(b->pub_fast), o = READ_ONCE(b->own);

	if (!READ_ONCE(b->stuck))
		return fast;
	if (o && o < cap)
		cap = o;
	return min(fast, cap);
}

/**
 * tt_budget_limit() - the budget in force for a session
 * @s:      the session; its scheduler lock is held and its accounts are
 *          published (tt_budget_publish()).
 * @total:  out: what the sessions count on the fast tier together (0 when
 *          the module has no budget): each its fast registered bytes, a
 *          session stuck over its budget in force (struct tt_budget
 *          @stuck) at most that budget.
 * @global: out: the module's budget in bytes (0: off).
 *
 * The smaller of the session's own budget and its max-min fair share of
 * the module's budget among the open sessions, each demanding its
 * registered bytes capped by its own budget. Should the share scratch not
 * grow (out of memory), the share is an equal split instead, which also
 * sums to at most the module's budget.
 *
 * Return: the budget in force in bytes, TT_BUDGET_NONE when there is none.
 */
u64 tt_budget_limit(struct tt_ksession *s, u64 *total, u64 *global)
{
	struct tt_budget *me = tt_budget_of(s), *b;
	u64 own = me->own, g = tt_budget_global(), lim, sum = 0;
	unsigned int i = 0, n, mine = 0;
	u64 *dem, *share;

	*global = g;
	*total = 0;
	if (!g)
		return own ? own : TT_BUDGET_NONE;
	mutex_lock(&tt_budget_lock);
	n = tt_budget_nr;
	if (!tt_budget_scratch_room(n)) {
		lim = n ? g / n : g;
		list_for_each_entry(b, &tt_budget_sessions, link)
			sum += tt_budget_charge(b, lim);
		goto out;
	}
	dem = tt_budget_scratch;
	share = tt_budget_scratch + n;
	list_for_each_entry(b, &tt_budget_sessions, link) {
		u64 held = READ_ONCE(b->pub_held), o = READ_ONCE(b->own);

		dem[i] = o && o < held ? o : held;
		if (b == me)
			mine = i;
		i++;
	}
	tt_heat_share(dem, n, g, share);
	i = 0;
	list_for_each_entry(b, &tt_budget_sessions, link)
		sum += tt_budget_charge(b, share[i++]);
	lim = n ? share[mine] : g;
out:
	mutex_unlock(&tt_budget_lock);
	*total = sum;
	return own && own < lim ? own : lim;
}

/**
 * tt_budget_kick() - have every session visited: those over their budget
 * in force make room, waiting prefetches are retried (asynchronously; a
 * kick while a visit is queued is the same visit)
 */
void tt_budget_kick(void)
{
	if (READ_ONCE(tt_budget_up))
		queue_work(system_unbound_wq, &tt_budget_work);
}

/* The budget_mib setting's change hook (tt_config_hook()). */
static void tt_budget_changed(void)
{
	tt_budget_kick();
}

static void tt_budget_work_fn(struct work_struct *work)
{
	tt_budget_visit_fn visit = READ_ONCE(tt_budget_visit);
	struct tt_ksession **ss;
	struct tt_budget *b;
	unsigned int n = 0, i, pass;
	bool left;

	if (WARN_ON_ONCE(!visit))
		return;
	mutex_lock(&tt_budget_lock);
	ss = kvmalloc_array(max(tt_budget_nr, 1U), sizeof(*ss),
			    GFP_KERNEL | __GFP_NOWARN);
	if (ss) {
		list_for_each_entry(b, &tt_budget_sessions, link) {
			ss[n] = container_of(b, struct tt_ksession, sched.bud);
			tt_session_get(ss[n]);
			n++;
		}
	}
	mutex_unlock(&tt_budget_lock);
	if (!ss)
		return;
	/*
	 * First room from those over their budget, then the waiting ones.
	 * A visit holds a session only while it visits it, and skips one
	 * that left (list_del_init() in tt_budget_leave()).
	 */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			b = tt_budget_of(ss[i]);
			mutex_lock(&tt_budget_lock);
			left = list_empty(&b->link);
			if (!left)
				WRITE_ONCE(b->visits, b->visits + 1);
			mutex_unlock(&tt_budget_lock);
			if (left)
				continue;
			visit(ss[i], pass == 0);
			mutex_lock(&tt_budget_lock);
			WRITE_ONCE(b->visits, b->visits - 1);
			mutex_unlock(&tt_budget_lock);
			wake_up_all(&b->wq);
		}
	}
	for (i = 0; i < n; i++)
		tt_session_put(ss[i]);
	kvfree(ss);
}

/*
 * No visit holds @b. A wait_event() condition: it runs in TASK_UNINTERRUPTIBLE
 * and must not sleep, so it reads @visits without tt_budget_lock (written
 * under it with WRITE_ONCE; the wake-up follows the last decrement).
 */
static bool tt_budget_unvisited(struct tt_budget *b)
{
	return !READ_ONCE(b->visits);
}

/**
 * tt_budget_join() - a new session shares the module's budget
 * @s: the session, not yet visible to anyone.
 */
void tt_budget_join(struct tt_ksession *s)
{
	struct tt_budget *b = tt_budget_of(s);

	init_waitqueue_head(&b->wq);
	mutex_lock(&tt_budget_lock);
	list_add_tail(&b->link, &tt_budget_sessions);
	tt_budget_nr++;
	mutex_unlock(&tt_budget_lock);
}

/**
 * tt_budget_leave() - a closing session leaves: no visit holds it when
 * this returns, and its share goes to the others (they are visited: their
 * waiting prefetches retried; nothing is forced on them)
 * @s: the session; its scheduler is closing (no new victim eviction).
 *
 * Waits only for a visit of @s itself that has begun: it finds the
 * scheduler closing and ends as soon as it has the session's own lock.
 */
void tt_budget_leave(struct tt_ksession *s)
{
	struct tt_budget *b = tt_budget_of(s);

	mutex_lock(&tt_budget_lock);
	list_del_init(&b->link);
	tt_budget_nr--;
	mutex_unlock(&tt_budget_lock);
	wait_event(b->wq, tt_budget_unvisited(b));
	if (tt_budget_global())
		tt_budget_kick();
}

/**
 * tt_budget_visitor() - what the budget work does to a session it visits
 * @fn: the visitor, or NULL to remove it.
 *
 * Set before tt_budget_init() and removed after tt_budget_exit() (the
 * scheduler's tt_sched_module_init() and tt_sched_module_exit(), main.c's
 * order): the work never runs without a visitor.
 */
void tt_budget_visitor(tt_budget_visit_fn fn)
{
	WARN_ON_ONCE(READ_ONCE(tt_budget_up));
	WRITE_ONCE(tt_budget_visit, fn);
}

/**
 * tt_budget_init() - the work may be queued from now on; register the
 * budget_mib setting's change hook
 *
 * Return: 0.
 */
int tt_budget_init(void)
{
	WRITE_ONCE(tt_budget_up, true);
	tt_config_hook(TT_CFG_BUDGET_MIB, tt_budget_changed);
	return 0;
}

/**
 * tt_budget_exit() - no session is left; remove the hook, stop the work
 * and free the scratch
 */
void tt_budget_exit(void)
{
	tt_config_unhook(TT_CFG_BUDGET_MIB, tt_budget_changed);
	WRITE_ONCE(tt_budget_up, false);
	cancel_work_sync(&tt_budget_work);
	kfree(tt_budget_scratch);
	tt_budget_scratch = NULL;
	tt_budget_scratch_cap = 0;
}
