// SPDX-License-Identifier: GPL-2.0
/*
 * One session per open of /dev/tiertrain, bound to the opener's
 * mm, with its registrations, counters and asynchronous migrations.
 *
 * Lifetime. The open file holds one reference, every asynchronous
 * migration queued or running holds another, and so does every scheduler
 * work item queued (sched.c). Closing (tt_session_close(), from the file's
 * release) cancels the asynchronous migrations that are not running,
 * makes the running one stop at its next batch without waiting for it (it
 * holds its reference and touches nothing close frees), stops the
 * scheduler (tt_sched_close()), then forgets every registration; the
 * session is freed by the last reference. Release may
 * come after the mm has been torn down (a process exiting runs exit_mm()
 * before exit_files()): the session only holds mm_count (mmgrab), workers
 * take mm_users with mmget_not_zero() and give up when it is zero, and the
 * registrations were already forgotten by MMU_NOTIFY_RELEASE; removing
 * their notifiers needs only mm_count.
 *
 * Asynchronous migrations share the module's worker pool fairly: a
 * session has at most TT_ASYNC_MAX_QUEUED of them queued or running
 * (more are refused with -EAGAIN), only the oldest is on the pool at a
 * time, and it runs TT_ASYNC_SLICE bytes per turn, then goes back to the
 * tail of the pool's queue. So one session's flood, or a migration that
 * waits for its session's stalled mover, holds at most one worker for one
 * slice at a time, and every other session's work is queued behind at
 * most one slice per session.
 *
 * An asynchronous migration is owned by its work function once it is
 * RUNNING; while QUEUED it may be taken by close, which marks it CANCELLED
 * under the lock: cancel_work_sync() then either removes it from the queue
 * (or finds it was never queued: only the oldest is on the pool, and the
 * pool's work is queued under the lock) or waits for the work function,
 * which sees CANCELLED and returns without touching it again.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/err.h>
#include <linux/ktime.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/nsproxy.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

#include "migrate.h"
#include "pagescan.h"
#include "session.h"
#include "tiers.h"

enum tt_async_state {
	TT_ASYNC_QUEUED,
	TT_ASYNC_RUNNING,
	TT_ASYNC_CANCELLED,
};

/**
 * struct tt_async - one asynchronous migration (TT_MIGRATE_ASYNC)
 * @work:  runs on the migration worker pool.
 * @s:     the session (a reference).
 * @link:  on @s->async.
 * @seq:   queue order, for TT_IOC_FLUSH.
 * @pos:   where the next slice starts (start of the range at first).
 * @end:   range end.
 * @nid:   target node.
 * @flags: TT_MIG_MOVE_ALL when the caller had CAP_SYS_NICE, else 0.
 * @state: enum tt_async_state, under @s->lock.
 * @res:   what the slices so far did.
 */
struct tt_async {
	struct work_struct work;
	struct tt_ksession *s;
	struct list_head link;
	u64 seq;
	unsigned long pos;
	unsigned long end;
	int nid;
	unsigned int flags;
	enum tt_async_state state;
	struct tt_migrate_result res;
};

/* Bytes an asynchronous migration moves per turn on the worker pool. */
#define TT_ASYNC_SLICE		(16UL << 20)

static struct kmem_cache *tt_async_cache;
static atomic_t tt_nr_sessions = ATOMIC_INIT(0);

/*
 * The open sessions, in id order (for the netlink dumps): a session is on
 * the list from the end of tt_session_open() to the start of
 * tt_session_close(), so whoever holds the lock may read its counters.
 * Ids only grow, so the number of sessions of a set and its largest id
 * together change whenever a session of the set opens or closes.
 */
static DEFINE_MUTEX(tt_sessions_lock);
static LIST_HEAD(tt_sessions);
static u64 tt_sessions_last_id;

static void tt_session_free(struct kref *ref)
{
	struct tt_ksession *s = container_of(ref, struct tt_ksession, ref);

	WARN_ON_ONCE(!list_empty(&s->async));
	tt_evlog_free(&s->evlog);
	tt_mover_free(&s->mover);
	put_pid(s->pid);
	put_user_ns(s->user_ns);
	put_net(s->net);
	mmdrop(s->mm);
	kfree(s);
}

/**
 * tt_session_get() - take a reference (a work item about to be queued)
 * @s: the session; the caller holds a reference already.
 */
void tt_session_get(struct tt_ksession *s)
{
	kref_get(&s->ref);
}

/**
 * tt_session_put() - drop a reference; the last one frees the session
 * @s: the session.
 */
void tt_session_put(struct tt_ksession *s)
{
	kref_put(&s->ref, tt_session_free);
}

/**
 * tt_session_count() - sessions open now
 *
 * Return: the number of open sessions.
 */
unsigned int tt_session_count(void)
{
	return atomic_read(&tt_nr_sessions);
}

/**
 * tt_session_open() - create a session bound to the caller's mm
 *
 * Return: the session, or ERR_PTR(-ENOMEM), or ERR_PTR(-EPERM) for a
 * caller without an mm (a kernel thread).
 */
struct tt_ksession *tt_session_open(void)
{
	struct tt_ksession *s;

	if (!current->mm)
		return ERR_PTR(-EPERM);
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return ERR_PTR(-ENOMEM);
	kref_init(&s->ref);
	mmgrab(current->mm);
	s->mm = current->mm;
	tt_registry_init(&s->reg, s->mm);
	spin_lock_init(&s->lock);
	INIT_LIST_HEAD(&s->async);
	init_waitqueue_head(&s->wq);
	atomic_set(&s->stop, 0);
	tt_sched_init(s);
	s->pid = get_pid(task_tgid(current));
	get_task_comm(s->comm, current->group_leader);
	s->uid = current_euid();
	s->user_ns = get_user_ns(current_user_ns());
	s->net = get_net(current->nsproxy->net_ns);
	s->opened_ns = ktime_get_ns();
	/* as move_pages(2)'s MPOL_MF_MOVE_ALL, for the session's lifetime */
	s->move_all = has_capability_noaudit(current, CAP_SYS_NICE);
	tt_evlog_init(&s->evlog);
	tt_mover_init(&s->mover);
	s->mover.landed = tt_sched_mover_landed;
	atomic_inc(&tt_nr_sessions);

	mutex_lock(&tt_sessions_lock);
	s->id = ++tt_sessions_last_id;
	list_add_tail(&s->link, &tt_sessions);
	mutex_unlock(&tt_sessions_lock);
	return s;
}

/*
 * The first session of the list from @pos on (NULL: from the start) with
 * an id larger than @after that close has not unlisted (list lock held).
 */
static struct tt_ksession *tt_session_next(struct tt_ksession *pos, u64 after)
{
	struct tt_ksession *s = pos ? pos :
			       list_first_entry(&tt_sessions, struct tt_ksession,
						link);

	list_for_each_entry_from(s, &tt_sessions, link)
		if (s->id > after && !s->unlisted)
			return s;
	return NULL;
}

/* The visit of @s is over (list lock held). */
static void tt_session_unvisit(struct tt_ksession *s)
{
	if (!--s->visitors && s->unlisted) {
		/* pairs with the waiter's check in wait_var_event() */
		smp_mb();
		wake_up_var(&s->visitors);
	}
}

/**
 * tt_session_for_each() - visit the open sessions in id order
 * @after: call @fn from the first session whose id is larger.
 * @pre:   optional: called first for every open session, in id order, with
 *         the session list locked (must not sleep for long).
 * @fn:    called for each session after @after, without the session list
 *         lock: the session stays open until @fn returns (its close waits
 *         for the visit before it winds the session down), and other
 *         sessions open and close meanwhile; @fn may sleep (on this
 *         session's locks, never on another session), but must not open
 *         or close a session; a non-zero return stops the walk.
 * @arg:   their argument.
 *
 * @pre sees the list as it was when the walk started; @fn is not called
 * for sessions opened later, nor for those whose close began meanwhile.
 * One session busy for long delays only the walks that visit it, never an
 * open or a close of another session.
 *
 * Return: what @fn returned last, 0 when every session was visited.
 */
int tt_session_for_each(u64 after,
			void (*pre)(struct tt_ksession *s, void *arg),
			int (*fn)(struct tt_ksession *s, void *arg), void *arg)
{
	struct tt_ksession *s, *next;
	u64 last;
	int ret = 0;

	mutex_lock(&tt_sessions_lock);
	if (pre)
		list_for_each_entry(s, &tt_sessions, link)
			if (!s->unlisted)
				pre(s, arg);
	last = tt_sessions_last_id;
	s = list_empty(&tt_sessions) ? NULL : tt_session_next(NULL, after);
	while (s && s->id <= last) {
		s->visitors++;
		mutex_unlock(&tt_sessions_lock);
		ret = fn(s, arg);
		cond_resched();
		mutex_lock(&tt_sessions_lock);
		/* a visited session stays on the list: its close waits */
		next = list_is_last(&s->link, &tt_sessions) ? NULL :
		       tt_session_next(list_next_entry(s, link), s->id);
		tt_session_unvisit(s);
		if (ret)
			break;
		s = next;
	}
	mutex_unlock(&tt_sessions_lock);
	return ret;
}

/*
 * Take @s off the session list for its close: no visit starts after this,
 * and the visits running end first (a visit waits at most for this
 * session's own locks, which the close takes next anyway).
 */
static void tt_session_unlist(struct tt_ksession *s)
{
	mutex_lock(&tt_sessions_lock);
	s->unlisted = true;
	mutex_unlock(&tt_sessions_lock);
	wait_var_event(&s->visitors, !READ_ONCE(s->visitors));
	mutex_lock(&tt_sessions_lock);
	list_del(&s->link);
	mutex_unlock(&tt_sessions_lock);
}

/**
 * tt_session_close() - the file was released: wind the session down
 * @s: the session; the caller's reference is dropped.
 */
void tt_session_close(struct tt_ksession *s)
{
	struct tt_async *a, *tmp;
	LIST_HEAD(cancel);

	tt_session_unlist(s);

	spin_lock(&s->lock);
	s->closing = true;
	atomic_set(&s->stop, 1);
	list_for_each_entry_safe(a, tmp, &s->async, link) {
		if (a->state != TT_ASYNC_QUEUED)
			continue;
		a->state = TT_ASYNC_CANCELLED;
		list_move_tail(&a->link, &cancel);
	}
	spin_unlock(&s->lock);
	/* orders waited for by migrations go back to the engine, which stops */
	tt_mover_close(&s->mover);

	list_for_each_entry_safe(a, tmp, &cancel, link) {
		/* at most the one on the pool: the others were never queued */
		cancel_work_sync(&a->work);
		list_del(&a->link);
		spin_lock(&s->lock);
		s->nr_async--;
		s->stats.async_cancelled++;
		spin_unlock(&s->lock);
		kmem_cache_free(tt_async_cache, a);
		tt_session_put(s);
	}
	/*
	 * A running one is not waited for: it stops at its next batch (its
	 * mover orders came back above), may be queued behind other sessions'
	 * work, and needs nothing that is freed below.
	 */

	tt_sched_close(s);
	tt_registry_destroy(&s->reg);
	atomic_dec(&tt_nr_sessions);
	tt_session_put(s);
}

/**
 * tt_session_check_caller() - is the caller allowed to use this session?
 * @s: the session.
 *
 * Return: 0, or -EPERM when the caller's mm is not the session's.
 */
int tt_session_check_caller(struct tt_ksession *s)
{
	return current->mm == s->mm ? 0 : -EPERM;
}

/**
 * tt_session_register() - TT_IOC_REGISTER
 * @s:   the session.
 * @arg: the ioctl argument.
 *
 * Return: 0 or a negative errno (see TT_IOC_REGISTER).
 */
int tt_session_register(struct tt_ksession *s, const struct tt_ioc_range *arg)
{
	unsigned long start, end;
	int ret;

	if (arg->flags & ~TT_RANGE_FLAGS_ALL)
		return -EOPNOTSUPP;
	ret = tt_range_from_user(arg->addr, arg->len, &start, &end);
	if (ret)
		return ret;
	return tt_registry_add(&s->reg, start, end, arg->layer, arg->flags);
}

/**
 * tt_session_unregister() - TT_IOC_UNREGISTER
 * @s:   the session.
 * @arg: the ioctl argument.
 *
 * Return: 0 or a negative errno (see TT_IOC_UNREGISTER).
 */
int tt_session_unregister(struct tt_ksession *s,
			  const struct tt_ioc_range *arg)
{
	unsigned long start, end;
	int ret;

	if (arg->flags)
		return -EOPNOTSUPP;
	ret = tt_range_from_user(arg->addr, arg->len, &start, &end);
	if (ret)
		return ret;
	return tt_registry_remove(&s->reg, start, end);
}

/*
 * The end of an asynchronous migration that is not cancelled (lock held):
 * counted, off the list, the next one of the session put on the pool.
 */
static void tt_async_finish(struct tt_ksession *s, struct tt_async *a,
			    int ret)
{
	struct tt_async *next;

	tt_stats_account(&s->stats, &a->res, a->nid);
	if (ret == -ESRCH) {
		/* The process exited: nobody is left to wait for it. */
		s->stats.async_cancelled++;
	} else if (ret) {
		/* stopped (-EINTR) or out of memory: TT_IOC_FLUSH says so */
		s->stats.async_failed++;
		if (!s->async_err)
			s->async_err = ret;
	} else {
		s->stats.async_done++;
	}
	list_del(&a->link);
	s->nr_async--;
	next = list_first_entry_or_null(&s->async, struct tt_async, link);
	if (next && !s->closing)
		tt_migrate_queue(&next->work);
	else
		s->async_on_pool = false;
}

static void tt_async_work(struct work_struct *work)
{
	struct tt_async *a = container_of(work, struct tt_async, work);
	struct tt_ksession *s = a->s;
	struct mem_cgroup *memcg, *old;
	unsigned long end;
	int ret;

	spin_lock(&s->lock);
	if (a->state == TT_ASYNC_CANCELLED) {
		/* tt_session_close() owns @a now. */
		spin_unlock(&s->lock);
		return;
	}
	a->state = TT_ASYNC_RUNNING;
	spin_unlock(&s->lock);

	end = a->pos + min(a->end - a->pos, TT_ASYNC_SLICE);
	/* the slice's kernel memory is charged to the session's memcg */
	memcg = get_mem_cgroup_from_mm(s->mm);
	old = set_active_memcg(memcg);
	ret = tt_mover_migrate(s, a->pos, end, &a->nid, 1,
			       TT_MIG_REMOTE | a->flags, &s->stop, &a->res);
	set_active_memcg(old);
	mem_cgroup_put(memcg);
	a->pos = end;
	if (ret == -ENOMEM)
		pr_warn_ratelimited("asynchronous migration to node %d: out of memory\n",
				    a->nid);

	spin_lock(&s->lock);
	if (!ret && a->pos < a->end) {
		if (!s->closing) {
			/* the next slice after the other sessions' turns */
			a->state = TT_ASYNC_QUEUED;
			tt_migrate_queue(&a->work);
			spin_unlock(&s->lock);
			return;
		}
		ret = -EINTR;
	}
	tt_async_finish(s, a, ret);
	spin_unlock(&s->lock);
	wake_up_all(&s->wq);
	kmem_cache_free(tt_async_cache, a);
	tt_session_put(s);
}

static int tt_session_queue(struct tt_ksession *s, unsigned long start,
			    unsigned long end, int nid, unsigned int flags)
{
	struct tt_async *a;

	a = kmem_cache_zalloc(tt_async_cache,
			      GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!a)
		return -ENOMEM;
	INIT_WORK(&a->work, tt_async_work);
	a->s = s;
	a->pos = start;
	a->end = end;
	a->nid = nid;
	a->flags = flags;
	a->state = TT_ASYNC_QUEUED;

	spin_lock(&s->lock);
	if (s->nr_async >= TT_ASYNC_MAX_QUEUED) {
		spin_unlock(&s->lock);
		kmem_cache_free(tt_async_cache, a);
		return -EAGAIN;
	}
	kref_get(&s->ref);
	a->seq = ++s->async_seq;
	list_add_tail(&a->link, &s->async);
	s->nr_async++;
	s->stats.migrate_calls++;
	s->stats.async_queued++;
	/* one per session on the pool: the others follow it (fair share) */
	if (!s->async_on_pool) {
		s->async_on_pool = true;
		tt_migrate_queue(&a->work);
	}
	spin_unlock(&s->lock);
	return 0;
}

/**
 * tt_session_migrate() - TT_IOC_MIGRATE
 * @s:   the session.
 * @arg: the ioctl argument; @arg->result is filled (zero for an
 *       asynchronous migration or a call rejected by the checks).
 *
 * Return: 0 or a negative errno (see TT_IOC_MIGRATE); @arg->result is
 * meaningful also with -ENOSPC and -EINTR.
 */
int tt_session_migrate(struct tt_ksession *s, struct tt_ioc_migrate *arg)
{
	unsigned long start, end;
	unsigned int flags;
	int ret;

	memset(&arg->result, 0, sizeof(arg->result));
	if (arg->flags & ~TT_MIGRATE_FLAGS_ALL)
		return -EOPNOTSUPP;
	ret = tt_range_from_user(arg->addr, arg->len, &start, &end);
	if (ret)
		return ret;
	ret = tt_tier_node_check(arg->node);
	if (ret)
		return ret;
	ret = tt_migrate_check(s->mm, start, end);
	if (ret)
		return ret;
	/* as move_pages(2) with MPOL_MF_MOVE_ALL */
	flags = capable(CAP_SYS_NICE) ? TT_MIG_MOVE_ALL : 0;

	if (arg->flags & TT_MIGRATE_ASYNC)
		return tt_session_queue(s, start, end, arg->node, flags);

	ret = tt_mover_migrate_sync(s, start, end, arg->node, flags,
				    &arg->result);
	spin_lock(&s->lock);
	s->stats.migrate_calls++;
	tt_stats_account(&s->stats, &arg->result, arg->node);
	spin_unlock(&s->lock);
	if (!ret && arg->result.skipped_no_memory)
		ret = -ENOSPC;
	return ret;
}

/**
 * tt_session_residency() - TT_IOC_RESIDENCY
 * @s:   the session.
 * @arg: the ioctl argument; its out fields are filled and the per-node
 *       array is copied to @arg->bytes_ptr.
 *
 * Return: 0 or a negative errno (see TT_IOC_RESIDENCY).
 */
int tt_session_residency(struct tt_ksession *s, struct tt_ioc_residency *arg)
{
	unsigned long start, end;
	u64 *bytes;
	int ret;

	arg->not_present_bytes = 0;
	arg->other_bytes = 0;
	if (arg->flags)
		return -EOPNOTSUPP;
	if (!arg->len || !arg->nr_nodes || arg->nr_nodes > TT_MAX_NODES)
		return -EINVAL;
	if (arg->addr + arg->len < arg->addr || arg->addr + arg->len > TASK_SIZE)
		return -EOVERFLOW;
	start = arg->addr & PAGE_MASK;
	end = PAGE_ALIGN(arg->addr + arg->len);

	bytes = kcalloc(arg->nr_nodes, sizeof(*bytes), GFP_KERNEL);
	if (!bytes)
		return -ENOMEM;
	ret = tt_pagescan_residency(s->mm, start, end, bytes, arg->nr_nodes,
				    &arg->not_present_bytes, &arg->other_bytes);
	if (!ret && copy_to_user(u64_to_user_ptr(arg->bytes_ptr), bytes,
				 arg->nr_nodes * sizeof(*bytes)))
		ret = -EFAULT;
	kfree(bytes);
	return ret;
}

/**
 * tt_session_stats() - TT_IOC_STATS
 * @s:    the session.
 * @out:  the reply.
 * @size: size of the caller's structure.
 *
 * Return: bytes of @out to copy to user space.
 */
size_t tt_session_stats(struct tt_ksession *s, struct tt_ioc_stats *out,
			size_t size)
{
	struct tt_registry_counts rc;
	struct tt_mover_counts mc;
	struct tt_sched_stats sc;
	struct tt_stats st;

	tt_registry_counts(&s->reg, &rc);
	tt_sched_stats(s, &sc);
	tt_mover_get_counts(&s->mover, &mc);
	spin_lock(&s->lock);
	st = s->stats;
	spin_unlock(&s->lock);
	return tt_stats_fill(out, size, &st, &rc, &sc, &mc);
}

static bool tt_session_flushed(struct tt_ksession *s, u64 upto)
{
	struct tt_async *a;
	bool done;

	spin_lock(&s->lock);
	a = list_first_entry_or_null(&s->async, struct tt_async, link);
	done = !a || a->seq > upto;
	spin_unlock(&s->lock);
	return done;
}

/**
 * tt_session_flush() - TT_IOC_FLUSH
 * @s: the session.
 *
 * Return: once every asynchronous migration queued before the call has
 * ended: 0, or the error of the first one that failed since the previous
 * flush (-EINTR: stopped; -ENOMEM: out of kernel memory), which is
 * cleared; -EINTR on a fatal signal of the caller.
 */
int tt_session_flush(struct tt_ksession *s)
{
	u64 upto;
	int ret;

	spin_lock(&s->lock);
	upto = s->async_seq;
	spin_unlock(&s->lock);
	if (wait_event_killable(s->wq, tt_session_flushed(s, upto)))
		return -EINTR;
	spin_lock(&s->lock);
	ret = s->async_err;
	s->async_err = 0;
	spin_unlock(&s->lock);
	return ret;
}

/**
 * tt_session_init() - create the cache of asynchronous migrations
 *
 * Return: 0 or -ENOMEM.
 */
int tt_session_init(void)
{
	tt_async_cache = KMEM_CACHE(tt_async, 0);
	return tt_async_cache ? 0 : -ENOMEM;
}

/**
 * tt_session_exit() - destroy the cache; every session is gone by now
 */
void tt_session_exit(void)
{
	kmem_cache_destroy(tt_async_cache);
}
