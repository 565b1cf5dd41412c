// SPDX-License-Identifier: GPL-2.0
/*
 * The scheduler's kernel glue: the executor (core/exec.c, the episode
 * state machine written once for the module and libtiertrain's move_pages
 * backend) driven with the kernel's means. Documentation/scheduler.md
 * describes the whole; the comments here are about the mechanics.
 *
 * This file keeps: the worker pools (one evict and one prefetch work item
 * per layer, embedded in struct tt_klayer), the prefetch hrtimer and its
 * work, the range entry slab cache, the executor's mutex, session
 * references (each queued work item holds one, dropped by its function or
 * by tt_sched_close() when it cancels a pending one; queueing an item that
 * is still pending only drops the new reference), the address-space checks
 * (mmap_lock, vmas), memory charged to the session's memory cgroup, the
 * mover and engine calls, the trace events and the module-wide budget.
 *
 * Event path. One ioctl, one copy of the event, one mutex (sched->lock),
 * one clock reading per call; a saved tensor's range is checked on arrival
 * (inside the user address space, covered by the caller's mappings: a walk
 * of the vmas with mmap_lock read-held, taken inside sched->lock). The only
 * allocations on the path are a range entry when the executor's free list
 * is empty, a layer object the first time a layer id is seen and the
 * growth of the layer table.
 *
 * Kernel memory sized by the input (chunk lists, the budget's scratch, the
 * hint set) is bounded by the executor, allocated with TT_SCHED_GFP
 * (charged to the session's memory cgroup, also from a worker, no warning
 * when large) and counted in the executor's @kmem.
 *
 * Close: the timer and every work item are cancelled or waited for
 * (running migrations stop at their next batch through the session's stop
 * flag); data already on the slow node stays there, intact.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/topology.h>
#include <linux/workqueue.h>

#include "config.h"
#include "event.h"
#include "evlog.h"
#include "migrate.h"
#include "mover.h"
#include "pagescan.h"
#include "sched.h"
#include "session.h"
#include "tiers.h"

/*
 * Allocations whose size the session's input decides: charged to the
 * session's memory cgroup (the caller's in its ioctls; what workers
 * allocate goes through set_active_memcg() with the session's mm's), no
 * warning when they are large and fail.
 */
#define TT_SCHED_GFP		(GFP_KERNEL_ACCOUNT | __GFP_NOWARN)

/* NULL outside tt_sched_module_init()..tt_sched_module_exit(). */
static struct workqueue_struct *tt_evict_wq;
static struct workqueue_struct *tt_prefetch_wq;
static struct kmem_cache *tt_srange_cache;

/*
 * The evict_workers and prefetch_workers settings' change hook
 * (tt_config_hook()): resize the pools; kernel_param_lock(THIS_MODULE)
 * held, like the pools' creation and destruction.
 */
static void tt_sched_pools_resize(void)
{
	if (tt_evict_wq)
		workqueue_set_max_active(tt_evict_wq,
					 tt_config_get(TT_CFG_EVICT_WORKERS));
	if (tt_prefetch_wq)
		workqueue_set_max_active(tt_prefetch_wq,
					 tt_config_get(TT_CFG_PREFETCH_WORKERS));
}

/**
 * struct tt_klayer - the kernel's per-layer object
 * @xl:            the executor's layer (core/exec.h).
 * @s:             the session.
 * @evict_work:    runs tt_exec_evict_step(), on the evict pool.
 * @prefetch_work: runs tt_exec_prefetch_step(), on the prefetch pool.
 */
struct tt_klayer {
	struct tt_exec_layer xl;
	struct tt_ksession *s;
	struct work_struct evict_work;
	struct work_struct prefetch_work;
};

/* The mover reads the layer's abort flag as an atomic_t: one int. */
static_assert(sizeof(atomic_t) == sizeof(int));

static struct tt_klayer *tt_klayer(struct tt_exec_layer *l)
{
	return container_of(l, struct tt_klayer, xl);
}

static const atomic_t *tt_sched_abort(struct tt_exec_layer *l)
{
	return (const atomic_t *)&l->abort;
}

static struct tt_sched *tt_sched_of(struct tt_ksession *s)
{
	return &s->sched;
}

static struct tt_ksession *tt_sched_session(struct tt_exec *x)
{
	return container_of(x, struct tt_ksession, sched.x);
}

/* Add a migration's result to the session totals. */
static void tt_sched_account(struct tt_ksession *s,
			     const struct tt_migrate_result *res, int nid)
{
	spin_lock(&s->lock);
	tt_stats_account(&s->stats, res, nid);
	spin_unlock(&s->lock);
}

/* The executor's operations (core/exec.h, struct tt_exec_ops). */

static unsigned long long tt_sched_op_now(struct tt_exec *x)
{
	return ktime_get_ns();
}

static void tt_sched_op_lock(struct tt_exec *x)
{
	mutex_lock(&tt_sched_session(x)->sched.lock);
}

static void tt_sched_op_unlock(struct tt_exec *x)
{
	struct tt_ksession *s = tt_sched_session(x);

	tt_evlog_flush(s);	/* an event call's events are recorded now */
	mutex_unlock(&s->sched.lock);
}

/*
 * Queue a work item of @l with a session reference (lock held). Also the
 * re-queue of a running item for its next slice: only while the session is
 * not closing (the executor tests it under the same lock hold), so
 * tt_sched_close() finds it pending and cancels it, or running and waits
 * for it.
 */
static void tt_sched_op_queue(struct tt_exec *x, struct tt_exec_layer *l,
			      int what)
{
	struct tt_klayer *kl = tt_klayer(l);
	struct tt_ksession *s = kl->s;
	bool queued;

	tt_session_get(s);
	if (what == TT_EXEC_WORK_EVICT)
		queued = queue_work(tt_evict_wq, &kl->evict_work);
	else
		queued = queue_work(tt_prefetch_wq, &kl->prefetch_work);
	if (!queued)
		tt_session_put(s);	/* still pending: it holds one already */
}

static void tt_sched_op_wait(struct tt_exec *x, struct tt_exec_layer *l,
			     int what)
{
	struct tt_sched *sc = &tt_sched_session(x)->sched;

	if (what == TT_EXEC_WORK_VICTIM)
		wait_event(sc->bud.wq, !READ_ONCE(l->victim));
	else if (what == TT_EXEC_WORK_EVICT)
		flush_work(&tt_klayer(l)->evict_work);
	else
		flush_work(&tt_klayer(l)->prefetch_work);
}

static void tt_sched_op_victims_done(struct tt_exec *x)
{
	wake_up_all(&tt_sched_session(x)->sched.bud.wq);
}

static void tt_sched_op_timer_arm(struct tt_exec *x, unsigned long long t)
{
	struct hrtimer *timer = &tt_sched_session(x)->sched.timer;

	/* armed for that time already: re-arming would only reprogram it */
	if (hrtimer_is_queued(timer) &&
	    ktime_to_ns(hrtimer_get_expires(timer)) == t)
		return;
	hrtimer_start(timer, ns_to_ktime(t), HRTIMER_MODE_ABS);
}

static int tt_sched_op_stopped(struct tt_exec *x, struct tt_exec_layer *l,
			       unsigned int flags)
{
	struct tt_ksession *s = tt_sched_session(x);

	if ((flags & (TT_EXEC_MV_REMOTE | TT_EXEC_MV_EVICT)) &&
	    atomic_read(tt_sched_abort(l)))
		return 1;
	return atomic_read(&s->stop) ||
	       (!(flags & TT_EXEC_MV_REMOTE) && fatal_signal_pending(current));
}

static int tt_sched_op_pin(struct tt_exec *x)
{
	return mmget_not_zero(tt_sched_session(x)->mm);
}

static void tt_sched_op_unpin(struct tt_exec *x)
{
	mmput(tt_sched_session(x)->mm);
}

/*
 * Move one range for the executor: an eviction is checked first
 * (tt_migrate_check(); a range failing it is counted as not present /
 * unsupported and its error returned), then moved by the session's mover
 * or the engine.
 */
static int tt_sched_op_move(struct tt_exec *x, struct tt_exec_layer *l,
			    const struct tt_exec_move *m,
			    struct tt_migrate_result *res)
{
	struct tt_ksession *s = tt_sched_session(x);
	unsigned long pages = (m->end - m->start) >> PAGE_SHIFT;
	bool remote = m->flags & TT_EXEC_MV_REMOTE;
	int ret;

	if (m->flags & TT_EXEC_MV_EVICT) {
		ret = tt_migrate_check(s->mm, m->start, m->end);
		if (ret == -EFAULT || ret == -EOPNOTSUPP) {
			res->pages += pages;
			if (ret == -EFAULT)
				res->skipped_not_present += pages;
			else
				res->skipped_unsupported += pages;
		} else {
			tt_mover_migrate(s, m->start, m->end, m->nids, m->nr,
					 TT_MIG_REMOTE | TT_MIG_SPLIT_PARTIAL |
					 TT_MIG_SCHED, tt_sched_abort(l), res);
			ret = 0;
		}
	} else if (m->flags & TT_EXEC_MV_REPAIR) {
		struct tt_engine_counts ec = {};

		/* in a mover's own call: the engine, never an order */
		ret = tt_migrate_range_to(s->mm, m->start, m->end, m->nids,
					  m->nr, 0, &s->stop, res, &ec);
	} else {
		ret = tt_mover_migrate(s, m->start, m->end, m->nids, m->nr,
				       (remote ? TT_MIG_REMOTE : 0) |
				       TT_MIG_SPLIT_PARTIAL | TT_MIG_SCHED |
				       TT_MIG_URGENT,
				       remote ? &s->stop : NULL, res);
	}
	tt_sched_account(s, res, m->nids[0]);
	return ret;
}

/*
 * Move the @n plain pieces @p of the session's memory to @nids, in the
 * session's own process (lock not held): only where its mm maps them with
 * a supported mapping, one vma at a time (an unmapped hint costs nothing),
 * with the session's mover or engine; @sync: to @nids[0] only, as
 * TT_IOC_MIGRATE; else to the first of @nids with room, as an eviction.
 * Stops at a fatal signal or when the session stops. The results are
 * added to the session's migration counters (stats) and to @res. Return:
 * 0, -EINTR, -ESRCH (the mm is gone) or -ENOMEM.
 */
static int tt_sched_plain_move(struct tt_ksession *s,
			       const struct tt_hint_iv *p, long n,
			       const int *nids, int nr, bool sync,
			       struct tt_migrate_result *res)
{
	unsigned int flags = (capable(CAP_SYS_NICE) ? TT_MIG_MOVE_ALL : 0) |
			     TT_MIG_SPLIT_PARTIAL;
	struct mm_struct *mm = s->mm;
	int ret = 0;
	long i;

	if (!nr || n <= 0)
		return 0;
	if (!mmget_not_zero(mm))
		return -ESRCH;
	for (i = 0; i < n && !ret; i++) {
		unsigned long a = p[i].start, b = p[i].end;

		while (a < b && !ret) {
			struct tt_migrate_result r = {};
			struct vm_area_struct *vma;
			unsigned long va, vb;
			bool ok;

			if (fatal_signal_pending(current) ||
			    atomic_read(&s->stop)) {
				ret = -EINTR;
				break;
			}
			if (mmap_read_lock_killable(mm)) {
				ret = -EINTR;
				break;
			}
			vma = find_vma(mm, a);
			if (!vma || vma->vm_start >= b) {
				mmap_read_unlock(mm);
				break;
			}
			va = max(a, vma->vm_start);
			vb = min(b, vma->vm_end);
			ok = tt_vma_supported(vma);
			mmap_read_unlock(mm);
			if (ok && sync)
				ret = tt_mover_migrate_sync(s, va, vb, nids[0],
							    flags, &r);
			else if (ok)
				ret = tt_mover_migrate(s, va, vb, nids, nr,
						       flags, &s->stop, &r);
			tt_sched_account(s, &r, nids[0]);
			res->pages += r.pages;
			res->moved += r.moved;
			res->skipped_no_memory += r.skipped_no_memory;
			a = vb;
			cond_resched();
		}
	}
	mmput(mm);
	return ret;
}

static int tt_sched_op_move_plain(struct tt_exec *x,
				  const struct tt_hint_iv *p, long n,
				  const int *nids, int nr, unsigned int flags,
				  struct tt_migrate_result *res)
{
	return tt_sched_plain_move(tt_sched_session(x), p, n, nids, nr,
				   flags & TT_EXEC_MV_SYNC, res);
}

/*
 * The bytes of [start, end) on each node, added into @bytes (nr_node_ids
 * entries); the caller holds an mm_users reference.
 */
static void tt_sched_op_residency(struct tt_exec *x, unsigned long long start,
				  unsigned long long end,
				  unsigned long long *bytes,
				  unsigned long long *scratch)
{
	u64 np, other;
	int nid;

	memset(scratch, 0, nr_node_ids * sizeof(*scratch));
	if (tt_pagescan_residency(tt_sched_session(x)->mm, start, end,
				  (u64 *)scratch, nr_node_ids, &np, &other))
		return;
	for (nid = 0; nid < nr_node_ids; nid++)
		bytes[nid] += scratch[nid];
}

static int tt_sched_op_node_slow(struct tt_exec *x, int nid)
{
	return tt_tier_role(nid, NULL) == TT_ROLE_SLOW;
}

static int tt_sched_op_node_check(struct tt_exec *x, int nid)
{
	return tt_tier_node_check(nid);
}

static int tt_sched_op_evict_order(struct tt_exec *x, int from, int *nids,
				   int max)
{
	return tt_tier_evict_order(from, nids, max);
}

static int tt_sched_op_cpu_node(struct tt_exec *x)
{
	return numa_node_id();
}

static int tt_sched_op_mapped(struct tt_exec *x, unsigned long long start,
			      unsigned long long end)
{
	/* every byte mapped: -EFAULT at a hole, -EINTR on a fatal signal */
	return tt_pagescan_vmas(tt_sched_session(x)->mm, start, end, NULL);
}

/*
 * Memory for the executor: charged to the memory cgroup of the session's
 * mm, also from a worker; bounded by the executor.
 */
static void *tt_sched_op_alloc(struct tt_exec *x, unsigned long n,
			       unsigned long size, int zero)
{
	struct mem_cgroup *memcg, *old;
	void *p;

	memcg = get_mem_cgroup_from_mm(tt_sched_session(x)->mm);
	old = set_active_memcg(memcg);
	if (zero)
		p = kvcalloc(n, size, TT_SCHED_GFP);
	else
		p = kvmalloc_array(n, size, TT_SCHED_GFP);
	set_active_memcg(old);
	mem_cgroup_put(memcg);
	return p;
}

static void tt_sched_op_free(struct tt_exec *x, void *p)
{
	kvfree(p);
}

static void tt_sched_evict_work(struct work_struct *work);
static void tt_sched_prefetch_work(struct work_struct *work);

static struct tt_exec_layer *tt_sched_op_layer_new(struct tt_exec *x)
{
	struct tt_klayer *kl = kzalloc(sizeof(*kl), GFP_KERNEL_ACCOUNT);

	if (!kl)
		return NULL;
	kl->s = tt_sched_session(x);
	INIT_WORK(&kl->evict_work, tt_sched_evict_work);
	INIT_WORK(&kl->prefetch_work, tt_sched_prefetch_work);
	return &kl->xl;
}

static void tt_sched_op_layer_free(struct tt_exec *x, struct tt_exec_layer *l)
{
	kfree(tt_klayer(l));
}

static struct tt_exec_range *tt_sched_op_range_alloc(struct tt_exec *x)
{
	return kmem_cache_alloc(tt_srange_cache, GFP_KERNEL_ACCOUNT);
}

static void tt_sched_op_range_free(struct tt_exec *x, struct tt_exec_range *r)
{
	kmem_cache_free(tt_srange_cache, r);
}

static unsigned long long tt_sched_op_limit(struct tt_exec *x,
					    enum tt_exec_limit what)
{
	switch (what) {
	case TT_EXEC_LIM_MAX_LAYERS:
		return tt_config_get(TT_CFG_MAX_LAYERS);
	case TT_EXEC_LIM_MAX_RANGES:
		return tt_config_get(TT_CFG_MAX_RANGES);
	case TT_EXEC_LIM_MIN_MIGRATE:
		return (u64)tt_config_get(TT_CFG_MIN_MIGRATE_KIB) << 10;
	case TT_EXEC_LIM_CHUNK_BYTES:
		/*
		 * The migration batch rounded up to whole huge pages, so no
		 * chunk boundary cuts a huge page (the mover leaves a huge
		 * page a chunk only partly covers where it is;
		 * Documentation/mover.md).
		 */
		return ALIGN((u64)tt_migrate_batch_pages() << PAGE_SHIFT,
			     PMD_SIZE);
	case TT_EXEC_LIM_EPISODE_MAX:
		/* the machine's RAM: the rest of a larger layer stays */
		return (u64)totalram_pages() << PAGE_SHIFT;
	case TT_EXEC_LIM_BUDGET_GLOBAL:
		return !!tt_config_get(TT_CFG_BUDGET_MIB);
	}
	return 0;
}

static void tt_sched_op_call_begin(struct tt_exec *x)
{
	tt_evlog_call_begin(&tt_sched_session(x)->evlog);
}

static void tt_sched_op_trace_event(struct tt_exec *x, const struct tt_event *ev,
				    unsigned long long now,
				    unsigned long long iter)
{
	tt_evlog_sched_event(tt_sched_session(x), ev, now, iter);
}

static void tt_sched_op_trace_migration(struct tt_exec *x, unsigned int type,
					unsigned int layer,
					unsigned long long iter,
					unsigned long long bytes,
					unsigned long long start, int node,
					unsigned int flags)
{
	tt_evlog_migration(tt_sched_session(x), type, layer, iter, bytes,
			   start, node, flags);
}

static void tt_sched_op_trace_layer(struct tt_exec *x, unsigned int type,
				    unsigned int layer, unsigned long long iter,
				    unsigned long long bytes,
				    unsigned long long ts, unsigned int flags)
{
	tt_evlog_layer(tt_sched_session(x), type, layer, iter, bytes, ts,
		       flags);
}

/* The executor's accounts, as the module-wide budget reads them. */
static void tt_sched_op_budget_publish(struct tt_exec *x)
{
	tt_budget_publish(tt_sched_session(x), x->bud.held, x->bud.slow);
}

static unsigned long long tt_sched_op_budget_limit(struct tt_exec *x,
						   unsigned long long *total,
						   unsigned long long *global)
{
	u64 t, g, lim = tt_budget_limit(tt_sched_session(x), &t, &g);

	*total = t;
	*global = g;
	return lim;
}

static int tt_sched_op_budget_active(struct tt_exec *x)
{
	return tt_budget_active(tt_sched_session(x));
}

static void tt_sched_op_budget_kick(struct tt_exec *x)
{
	tt_budget_kick();
}

static void tt_sched_op_budget_stuck(struct tt_exec *x, int stuck)
{
	struct tt_budget *b = &tt_sched_session(x)->sched.bud;

	if (stuck != b->stuck)
		WRITE_ONCE(b->stuck, stuck);
}

static void tt_sched_op_resched(struct tt_exec *x)
{
	cond_resched();
}

static void tt_sched_op_pause(struct tt_exec *x, unsigned int us)
{
	usleep_range(us, 2 * us);
}

static const struct tt_exec_ops tt_sched_ops = {
	.now = tt_sched_op_now,
	.lock = tt_sched_op_lock,
	.unlock = tt_sched_op_unlock,
	.queue = tt_sched_op_queue,
	.wait = tt_sched_op_wait,
	.victims_done = tt_sched_op_victims_done,
	.timer_arm = tt_sched_op_timer_arm,
	.stopped = tt_sched_op_stopped,
	.pin = tt_sched_op_pin,
	.unpin = tt_sched_op_unpin,
	.move = tt_sched_op_move,
	.move_plain = tt_sched_op_move_plain,
	.residency = tt_sched_op_residency,
	.node_slow = tt_sched_op_node_slow,
	.node_check = tt_sched_op_node_check,
	.evict_order = tt_sched_op_evict_order,
	.cpu_node = tt_sched_op_cpu_node,
	.mapped = tt_sched_op_mapped,
	.alloc = tt_sched_op_alloc,
	.free = tt_sched_op_free,
	.layer_new = tt_sched_op_layer_new,
	.layer_free = tt_sched_op_layer_free,
	.range_alloc = tt_sched_op_range_alloc,
	.range_free = tt_sched_op_range_free,
	.limit = tt_sched_op_limit,
	.call_begin = tt_sched_op_call_begin,
	.trace_event = tt_sched_op_trace_event,
	.trace_migration = tt_sched_op_trace_migration,
	.trace_layer = tt_sched_op_trace_layer,
	.budget_publish = tt_sched_op_budget_publish,
	.budget_limit = tt_sched_op_budget_limit,
	.budget_active = tt_sched_op_budget_active,
	.budget_kick = tt_sched_op_budget_kick,
	.budget_stuck = tt_sched_op_budget_stuck,
	.resched = tt_sched_op_resched,
	.pause = tt_sched_op_pause,
};

/* A layer's work items: the executor's steps, then the item's reference. */
static void tt_sched_evict_work(struct work_struct *work)
{
	struct tt_klayer *kl = container_of(work, struct tt_klayer, evict_work);
	struct tt_ksession *s = kl->s;

	tt_exec_evict_step(&s->sched.x, &kl->xl);
	tt_session_put(s);
}

static void tt_sched_prefetch_work(struct work_struct *work)
{
	struct tt_klayer *kl = container_of(work, struct tt_klayer,
					    prefetch_work);
	struct tt_ksession *s = kl->s;

	tt_exec_prefetch_step(&s->sched.x, &kl->xl);
	tt_session_put(s);
}

static enum hrtimer_restart tt_sched_timer_fn(struct hrtimer *timer)
{
	struct tt_sched *sc = container_of(timer, struct tt_sched, timer);

	/* No sleeping here: the mutex is taken by the work. */
	queue_work(system_highpri_wq, &sc->timer_work);
	return HRTIMER_NORESTART;
}

static void tt_sched_timer_work(struct work_struct *work)
{
	struct tt_sched *sc = container_of(work, struct tt_sched, timer_work);

	tt_exec_timer(&sc->x);
}

/**
 * tt_sched_budget_visit() - the module's budget work visits the session
 * (budget.c)
 * @s:      the session (the caller holds a reference).
 * @shrink: true: evict victims down to the budget in force when over it
 *          (its share may have shrunk); false: retry the prefetches
 *          waiting for room.
 */
void tt_sched_budget_visit(struct tt_ksession *s, bool shrink)
{
	tt_exec_budget_visit(&tt_sched_of(s)->x, shrink, 1);
}

/**
 * tt_sched_events() - TT_IOC_EVENT and one piece of TT_IOC_EVENTS
 * @s:    the session.
 * @ev:   @n events, a kernel copy.
 * @n:    number of events.
 * @done: out: events processed before the first error (@n on success).
 *
 * Return: 0 or the error of the first event rejected (see TT_IOC_EVENT).
 */
int tt_sched_events(struct tt_ksession *s, const struct tt_event *ev,
		    unsigned int n, unsigned int *done)
{
	return tt_exec_events(&tt_sched_of(s)->x, ev, n, 0, done);
}

/**
 * tt_sched_cfg_set() - TT_IOC_SET_SCHED
 * @s:   the session.
 * @req: the request.
 *
 * Return: 0, -EOPNOTSUPP, -EINVAL or -ENODEV (nothing changed then).
 */
int tt_sched_cfg_set(struct tt_ksession *s, const struct tt_ioc_sched *req)
{
	struct tt_sched *sc = tt_sched_of(s);
	int ret;

	ret = tt_exec_cfg_check(req);
	if (ret)
		return ret;
	if (req->valid & TT_SCHED_SET_NODES) {
		if (req->slow_node != -1) {
			ret = tt_tier_node_check(req->slow_node);
			if (ret)
				return ret;
		}
		if (req->fast_node != -1) {
			ret = tt_tier_node_check(req->fast_node);
			if (ret)
				return ret;
		}
	}

	if (req->valid & TT_SCHED_SET_BUDGET)
		WRITE_ONCE(sc->bud.own, (u64)req->budget_mib << 20);
	tt_exec_cfg_set(&sc->x, req);
	return 0;
}

/**
 * tt_sched_cfg_get() - TT_IOC_GET_SCHED
 * @s:   the session.
 * @out: the settings, with every TT_SCHED_SET_* bit in @out->valid.
 */
void tt_sched_cfg_get(struct tt_ksession *s, struct tt_ioc_sched *out)
{
	tt_exec_cfg_get(&tt_sched_of(s)->x, out);
}

/**
 * tt_sched_nr_layers() - layers the scheduler knows now
 * @s: the session.
 *
 * Return: the number of layer ids seen.
 */
unsigned int tt_sched_nr_layers(struct tt_ksession *s)
{
	return tt_exec_nr_layers(&tt_sched_of(s)->x);
}

/**
 * tt_sched_layers_from() - the scheduler's per-layer view from a position
 * @s:     the session.
 * @from:  index of the first layer (in layer id order) to copy.
 * @info:  out: up to @max layers from @from on.
 * @max:   elements of @info.
 * @known: out: the number of layers known.
 *
 * Return: the number of elements of @info filled.
 */
unsigned int tt_sched_layers_from(struct tt_ksession *s, unsigned int from,
				  struct tt_layer_info *info, unsigned int max,
				  unsigned int *known)
{
	return tt_exec_layers(&tt_sched_of(s)->x, from, info, max, known);
}

/**
 * tt_sched_layers() - TT_IOC_LAYERS
 * @s:     the session.
 * @info:  out: up to @max layers, in layer id order.
 * @max:   elements of @info.
 * @known: out: the number of layers known.
 *
 * Return: the number of elements of @info filled.
 */
unsigned int tt_sched_layers(struct tt_ksession *s, struct tt_layer_info *info,
			     unsigned int max, unsigned int *known)
{
	return tt_sched_layers_from(s, 0, info, max, known);
}

/**
 * tt_sched_resident() - the saved tensors the scheduler holds, by tier
 * @s:    the session.
 * @held: out: bytes of every saved range held (one-shot and persistent).
 * @slow: out: bytes of them evicted and not yet brought back.
 */
void tt_sched_resident(struct tt_ksession *s, u64 *held, u64 *slow)
{
	unsigned long long h, o;

	tt_exec_resident(&tt_sched_of(s)->x, &h, &o);
	*held = h;
	*slow = o;
}

/**
 * tt_sched_stats() - the scheduler's counters for TT_IOC_STATS
 * @s:   the session.
 * @out: out.
 */
void tt_sched_stats(struct tt_ksession *s, struct tt_sched_stats *out)
{
	tt_exec_stats(&tt_sched_of(s)->x, out);
}

/**
 * tt_sched_hint() - TT_IOC_HINT
 * @s:   the session.
 * @req: the request.
 *
 * Checked here (whole pages, rounded outward, inside the user address
 * space), then tt_exec_hint(): PIN_FAST and ARCHIVE are remembered for the
 * range and skipped by every later eviction; RETIRE ends them and forgets
 * the tensors the range overlaps; every hint settles the episodes of the
 * layers whose tensors the range overlaps; WILL_USE and PIN_FAST move the
 * range's plain pages to the session's fast node in the calling thread.
 *
 * Return: 0 or a negative errno (see TT_IOC_HINT); nothing changes on an
 * error but -EINTR and -ENOSPC, which come after the hint was recorded
 * (from moving the plain pages).
 */
int tt_sched_hint(struct tt_ksession *s, const struct tt_ioc_hint *req)
{
	__u64 start, end;
	int ret;

	ret = tt_hint_check(req, PAGE_SIZE, TASK_SIZE, &start, &end);
	if (ret)
		return ret;
	return tt_exec_hint(&tt_sched_of(s)->x, start, end, req->hint);
}

/* MiB/s to bytes/s. */
static u64 tt_mbps(unsigned int mbps)
{
	return (u64)mbps << 20;
}

/* The session's mover hook (sched.h). */
void tt_sched_mover_landed(struct tt_mover *mv, unsigned long start,
			   unsigned long end)
{
	struct tt_ksession *s = container_of(mv, struct tt_ksession, mover);

	tt_exec_landed(&s->sched.x, start, end);
}

/**
 * tt_sched_init() - the scheduler of a new session, from the module
 * parameters; allocates nothing (the layer table grows on first use)
 * @s: the session.
 */
void tt_sched_init(struct tt_ksession *s)
{
	struct tt_sched *sc = tt_sched_of(s);
	struct tt_exec_cfg cfg = {
		.slow_node = -1,
		.fast_node = -1,
	};

	mutex_init(&sc->lock);
	/* TT_SCHED_DEFAULT_FLAGS unless a flag parameter was changed */
	cfg.flags = (tt_config_get(TT_CFG_SYNC_LATE) ? TT_SCHED_SYNC_LATE : 0) |
		    (tt_config_get(TT_CFG_ANCHOR) ? TT_SCHED_ANCHOR : 0) |
		    (tt_config_get(TT_CFG_ALAP) ? TT_SCHED_ALAP : 0) |
		    (tt_config_get(TT_CFG_DEFER_LATE) ? TT_SCHED_DEFER_LATE : 0) |
		    (tt_config_get(TT_CFG_MERGE) ? TT_SCHED_MERGE : 0) |
		    (tt_config_get(TT_CFG_COUNT) ? TT_SCHED_COUNT : 0) |
		    (tt_config_get(TT_CFG_DYNAMIC) ? TT_SCHED_DYNAMIC : 0);
	cfg.profile_iters = tt_config_get(TT_CFG_PROFILE_ITERS);
	cfg.stay_ns = (u64)tt_config_get(TT_CFG_STAY_TIME_US) * NSEC_PER_USEC;
	/* the timeline's modes are the flag bits themselves */
	BUILD_BUG_ON((TT_TL_MODE_OFF ^ TT_SCHED_OFF) |
		     (TT_TL_MODE_ANCHOR ^ TT_SCHED_ANCHOR) |
		     (TT_TL_MODE_ALAP ^ TT_SCHED_ALAP) |
		     (TT_TL_MODE_COUNT ^ TT_SCHED_COUNT) |
		     (TT_TL_MODE_DYNAMIC ^ TT_SCHED_DYNAMIC));
	/* and its miss kinds the trace flags */
	BUILD_BUG_ON((TT_TL_MISS_NEW ^ TT_TRACE_F_MISS_NEW) |
		     (TT_TL_MISS_PREDICT ^ TT_TRACE_F_MISS_PREDICT) |
		     (TT_TL_MISS_LATE ^ TT_TRACE_F_MISS_LATE));
	BUILD_BUG_ON(TT_EXEC_TARGETS != TT_MIG_TARGETS);
	BUILD_BUG_ON(TT_EXEC_BUDGET_NONE != TT_BUDGET_NONE);
	BUILD_BUG_ON(TT_EXEC_NO_NODE != NUMA_NO_NODE);
	tt_exec_init(&sc->x, &tt_sched_ops, &cfg,
		     tt_mbps(tt_config_get(TT_CFG_ER_SEED_MBPS)),
		     tt_mbps(tt_config_get(TT_CFG_PR_SEED_MBPS)),
		     PAGE_SIZE, PMD_SIZE, TASK_SIZE, nr_node_ids);
	hrtimer_init(&sc->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	sc->timer.function = tt_sched_timer_fn;
	INIT_WORK(&sc->timer_work, tt_sched_timer_work);
	tt_budget_join(s);
}

/**
 * tt_sched_close() - stop the scheduler of a closing session and free it
 * @s: the session; its stop flag is already set, no ioctl can run.
 *
 * Cancels the timer and the work items not started, waits for the running
 * ones (their migrations stop at the next batch) and frees everything. The
 * mm may be gone already: nothing here touches it.
 */
void tt_sched_close(struct tt_ksession *s)
{
	struct tt_sched *sc = tt_sched_of(s);
	struct tt_exec_layer *l;
	unsigned int i;

	tt_exec_close(&sc->x);
	/* no budget visit holds the session after this; its share is free */
	tt_budget_leave(s);

	/* The timer work re-arms nothing once closing is set. */
	hrtimer_cancel(&sc->timer);
	cancel_work_sync(&sc->timer_work);

	/* The layer table changes only in ioctls: none can run now. */
	for (i = 0; (l = tt_exec_layer_at(&sc->x, i)); i++) {
		struct tt_klayer *kl = tt_klayer(l);

		if (cancel_work_sync(&kl->evict_work))
			tt_session_put(s);
		if (cancel_work_sync(&kl->prefetch_work))
			tt_session_put(s);
	}
	/* victim evictions are made by work items or ioctls: none left */
	wait_event(sc->bud.wq, !READ_ONCE(sc->x.bud.busy));
	tt_exec_free(&sc->x);
	mutex_destroy(&sc->lock);
}

/**
 * tt_sched_module_init() - create the worker pools and the range cache,
 * register the pools' change hooks (TT_CFG_EVICT_WORKERS,
 * TT_CFG_PREFETCH_WORKERS) and the budget work's visitor
 *
 * Return: 0 or -ENOMEM.
 */
int tt_sched_module_init(void)
{
	tt_srange_cache = KMEM_CACHE(tt_exec_range, 0);
	if (!tt_srange_cache)
		return -ENOMEM;
	kernel_param_lock(THIS_MODULE);
	tt_evict_wq = alloc_workqueue("tiertrain_evict", WQ_UNBOUND | WQ_SYSFS,
				      tt_config_get(TT_CFG_EVICT_WORKERS));
	tt_prefetch_wq = alloc_workqueue("tiertrain_prefetch", WQ_UNBOUND | WQ_SYSFS,
					 tt_config_get(TT_CFG_PREFETCH_WORKERS));
	kernel_param_unlock(THIS_MODULE);
	if (!tt_evict_wq || !tt_prefetch_wq) {
		tt_sched_module_exit();
		return -ENOMEM;
	}
	tt_config_hook(TT_CFG_EVICT_WORKERS, tt_sched_pools_resize);
	tt_config_hook(TT_CFG_PREFETCH_WORKERS, tt_sched_pools_resize);
	tt_budget_visitor(tt_sched_budget_visit);
	return 0;
}

/**
 * tt_sched_module_exit() - remove the hooks, destroy the pools and the
 * cache; every session is gone
 */
void tt_sched_module_exit(void)
{
	struct workqueue_struct *ewq, *pwq;

	tt_config_unhook(TT_CFG_EVICT_WORKERS, tt_sched_pools_resize);
	tt_config_unhook(TT_CFG_PREFETCH_WORKERS, tt_sched_pools_resize);
	tt_budget_visitor(NULL);
	kernel_param_lock(THIS_MODULE);
	ewq = tt_evict_wq;
	pwq = tt_prefetch_wq;
	tt_evict_wq = NULL;
	tt_prefetch_wq = NULL;
	kernel_param_unlock(THIS_MODULE);
	if (ewq)
		destroy_workqueue(ewq);
	if (pwq)
		destroy_workqueue(pwq);
	kmem_cache_destroy(tt_srange_cache);
	tt_srange_cache = NULL;
}
