/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-session scheduler: events in, evictions and prefetches out
 * (Documentation/scheduler.md).
 */
#ifndef TT_SCHED_H
#define TT_SCHED_H

#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/tiertrain.h>

#include "budget.h"
#include "exec.h"
#include "stats.h"

/* Events one TT_IOC_EVENTS call may carry. */
#define TT_SCHED_EVENTS_MAX	4096

struct tt_ksession;

/**
 * struct tt_sched - one session's scheduler (embedded in struct tt_ksession):
 * the executor (core/exec.c) and what the kernel drives it with
 * @lock:       the executor's lock (its ops lock/unlock): serialises the
 *              event path, the workers' bookkeeping, the timer work and
 *              the settings; never held while memory moves.
 * @x:          the executor: layers, ranges, episodes, timeline, counters.
 * @timer:      fires at the next prefetch trigger time.
 * @timer_work: queued by @timer: runs tt_exec_timer() (an hrtimer callback
 *              cannot take @lock).
 * @bud:        the module-wide side of the fast-tier budget (budget.c);
 *              its held/slow are the executor's, copied when published.
 */
struct tt_sched {
	struct mutex lock;	/* see @lock above */
	struct tt_exec x;
	struct hrtimer timer;
	struct work_struct timer_work;
	struct tt_budget bud;
};

int tt_sched_module_init(void);
void tt_sched_module_exit(void);

void tt_sched_init(struct tt_ksession *s);
/*
 * tt_sched_mover_landed() - the session's struct tt_mover @landed hook:
 * the scheduler makes its view of [start, end) hold again
 * (tt_exec_landed()).
 */
struct tt_mover;
void tt_sched_mover_landed(struct tt_mover *mv, unsigned long start,
			   unsigned long end);
void tt_sched_close(struct tt_ksession *s);
void tt_sched_budget_visit(struct tt_ksession *s, bool shrink);

int tt_sched_events(struct tt_ksession *s, const struct tt_event *ev,
		    unsigned int n, unsigned int *done);
int tt_sched_cfg_set(struct tt_ksession *s, const struct tt_ioc_sched *req);
void tt_sched_cfg_get(struct tt_ksession *s, struct tt_ioc_sched *out);
unsigned int tt_sched_nr_layers(struct tt_ksession *s);
unsigned int tt_sched_layers(struct tt_ksession *s, struct tt_layer_info *info,
			     unsigned int max, unsigned int *known);
unsigned int tt_sched_layers_from(struct tt_ksession *s, unsigned int from,
				  struct tt_layer_info *info, unsigned int max,
				  unsigned int *known);
void tt_sched_resident(struct tt_ksession *s, u64 *held, u64 *slow);
void tt_sched_stats(struct tt_ksession *s, struct tt_sched_stats *out);
int tt_sched_hint(struct tt_ksession *s, const struct tt_ioc_hint *req);

#endif /* TT_SCHED_H */
