/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One session per open of /dev/tiertrain.
 */
#ifndef TT_SESSION_H
#define TT_SESSION_H

#include <linux/atomic.h>
#include <linux/cred.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <net/net_namespace.h>
#include <linux/tiertrain.h>

#include "evlog.h"
#include "mover.h"
#include "registry.h"
#include "sched.h"
#include "stats.h"

/**
 * struct tt_ksession - the state behind one open file of /dev/tiertrain
 * @ref:       references: the open file, each asynchronous migration
 *             queued or running, and each scheduler work item queued.
 * @mm:        the opener's mm (mmgrab), the only one its ioctls accept.
 * @reg:       registered ranges.
 * @lock:      protects @stats, @async, @async_seq, @nr_async,
 *             @async_on_pool, @async_err and @closing.
 * @stats:     migration counters.
 * @async:     asynchronous migrations queued or running, in queue order.
 * @async_seq: sequence number of the last asynchronous migration queued.
 * @nr_async:  entries of @async (at most TT_ASYNC_MAX_QUEUED).
 * @async_on_pool: the first entry of @async is queued or running on the
 *             worker pool (the others wait for it to end).
 * @async_err: the error of the first asynchronous migration that failed
 *             since the last TT_IOC_FLUSH, 0 if none.
 * @move_all:  the opener had CAP_SYS_NICE: every migration of the session
 *             also moves pages other processes map (TT_MIG_MOVE_ALL).
 * @wq:        woken whenever an entry leaves @async.
 * @stop:      set when the session closes: running asynchronous and
 *             scheduler migrations stop at their next batch.
 * @closing:   the file was released.
 * @sched:     the scheduler (events, profile, plan, evictions, prefetches).
 * @id:        unique while the module is loaded, increasing in open order.
 * @pid:       the opener's thread group (a reference).
 * @comm:      the opener's command name at open time.
 * @uid:       the opener's effective uid: the session's owner.
 * @user_ns:   the opener's user namespace (a reference): whoever has
 *             CAP_SYS_ADMIN there may see the session over netlink.
 * @net:       the opener's network namespace (a reference): the only one
 *             whose netlink callers may see the session.
 * @visitors:  tt_session_for_each() callers visiting the session now,
 *             under the session list lock.
 * @unlisted:  close began: no new visit, under the session list lock.
 * @opened_ns: when it was opened, CLOCK_MONOTONIC ns.
 * @link:      on the list of open sessions, in @id order.
 * @evlog:     its trace events.
 * @mover:     its mover threads and their orders (mover.c).
 */
struct tt_ksession {
	struct kref ref;
	struct mm_struct *mm;
	struct tt_registry reg;
	spinlock_t lock;	/* see @lock above */
	struct tt_stats stats;
	struct list_head async;
	u64 async_seq;
	unsigned int nr_async;
	bool async_on_pool;
	int async_err;
	bool move_all;
	wait_queue_head_t wq;
	atomic_t stop;
	bool closing;
	struct tt_sched sched;
	u64 id;
	struct pid *pid;
	char comm[TASK_COMM_LEN];
	kuid_t uid;
	struct user_namespace *user_ns;
	struct net *net;
	unsigned int visitors;
	bool unlisted;
	u64 opened_ns;
	struct list_head link;
	struct tt_evlog evlog;
	struct tt_mover mover;
};

int tt_session_init(void);
void tt_session_exit(void);

struct tt_ksession *tt_session_open(void);
void tt_session_close(struct tt_ksession *s);
void tt_session_get(struct tt_ksession *s);
void tt_session_put(struct tt_ksession *s);
unsigned int tt_session_count(void);
int tt_session_for_each(u64 after,
			void (*pre)(struct tt_ksession *s, void *arg),
			int (*fn)(struct tt_ksession *s, void *arg), void *arg);

int tt_session_check_caller(struct tt_ksession *s);
int tt_session_register(struct tt_ksession *s, const struct tt_ioc_range *arg);
int tt_session_unregister(struct tt_ksession *s,
			  const struct tt_ioc_range *arg);
int tt_session_migrate(struct tt_ksession *s, struct tt_ioc_migrate *arg);
int tt_session_residency(struct tt_ksession *s, struct tt_ioc_residency *arg);
size_t tt_session_stats(struct tt_ksession *s, struct tt_ioc_stats *out,
			size_t size);
int tt_session_flush(struct tt_ksession *s);

#endif /* TT_SESSION_H */
