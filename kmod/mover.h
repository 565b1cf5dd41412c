/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The process-context mover: migration orders executed by threads of the
 * session's process with move_pages(2), which keeps huge pages whole
 * (Documentation/mover.md).
 */
#ifndef TT_MOVER_H
#define TT_MOVER_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/poll.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/tiertrain.h>

#include "stats.h"

struct file;
struct tt_ksession;

/**
 * struct tt_mover - a session's mover threads and their orders (embedded
 * in struct tt_ksession)
 * @lock:         protects everything below.
 * @wq:           movers wait here for orders (TT_MOVER_WAIT, poll()).
 * @done_wq:      issuers wait here for their orders' completion.
 * @threads:      the registered movers (struct tt_mover_thread).
 * @queue:        orders not taken yet, oldest first.
 * @taken:        orders taken by a mover and not completed yet.
 * @last_id:      id of the last order issued (ids start at 1).
 * @suspect_until: an order timed out: no new orders before this time
 *                (CLOCK_MONOTONIC ns), unless a mover calls in first.
 * @closed:       the session is closing: no new orders.
 * @counts:       the mover's part of the session counters.
 * @landed:       set by the session's owner before any mover registers:
 *                called (no lock held, in the thread's own TT_IOC_MOVER
 *                call, so in the session's process) when a mover whose
 *                orders of a TT_MIG_SCHED migration went back to the
 *                engine calls in again: it may have moved pages of
 *                [start, end) to those orders' targets after the engine
 *                and newer migrations went past them.
 */
struct tt_mover {
	spinlock_t lock;	/* see @lock above */
	wait_queue_head_t wq;
	wait_queue_head_t done_wq;
	struct list_head threads;
	struct list_head queue;
	struct list_head taken;
	u64 last_id;
	u64 suspect_until;
	bool closed;
	struct tt_mover_counts counts;
	void (*landed)(struct tt_mover *mv, unsigned long start,
		       unsigned long end);
};

void tt_mover_init(struct tt_mover *mv);
void tt_mover_close(struct tt_mover *mv);
void tt_mover_free(struct tt_mover *mv);
void tt_mover_get_counts(struct tt_mover *mv, struct tt_mover_counts *out);

long tt_mover_ioctl(struct tt_ksession *s, void __user *argp);
__poll_t tt_mover_poll(struct tt_ksession *s, struct file *file,
		       poll_table *wait);

int tt_mover_migrate(struct tt_ksession *s, unsigned long start,
		     unsigned long end, const int *nids, unsigned int nr_nids,
		     unsigned int flags, const atomic_t *stop,
		     struct tt_migrate_result *res);
int tt_mover_migrate_sync(struct tt_ksession *s, unsigned long start,
			  unsigned long end, int nid, unsigned int flags,
			  struct tt_migrate_result *res);

#endif /* TT_MOVER_H */
