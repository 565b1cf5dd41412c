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
#include "hint.h"
#include "stats.h"
#include "timeline.h"

/* Events one TT_IOC_EVENTS call may carry. */
#define TT_SCHED_EVENTS_MAX	4096

struct tt_ksession;

/**
 * struct tt_sched_cfg - a session's scheduler settings (TT_IOC_SET_SCHED)
 * @flags:         TT_SCHED_* bits.
 * @profile_iters: iterations that only record the profile.
 * @stay_ns:       stay time ST.
 * @slow_node:     node to evict to, -1 for automatic.
 * @fast_node:     node to prefetch to, -1 for automatic.
 *
 * The rates are kept by the timeline, which updates them.
 */
struct tt_sched_cfg {
	u32 flags;
	u32 profile_iters;
	u64 stay_ns;
	int slow_node;
	int fast_node;
};

/**
 * struct tt_sched_counts - counters only the executor keeps (the others
 * are the timeline's)
 * @events:             events accepted.
 * @tensors_saved:      tensor events that covered whole pages.
 * @tensors_ignored:    tensor events smaller than a page after rounding.
 * @bytes_evicted:      bytes moved to slow nodes.
 * @bytes_prefetched:   bytes moved back.
 * @sync_fetched_bytes: late bytes fetched by TT_EV_LAYER_BEGIN(TT_BWD)
 *                      itself (TT_SCHED_SYNC_LATE).
 * @prefetch_left_bytes: bytes prefetches left on slow nodes after their
 *                      retries (stats prefetch_left_bytes).
 */
struct tt_sched_counts {
	u64 events;
	u64 tensors_saved;
	u64 tensors_ignored;
	u64 bytes_evicted;
	u64 bytes_prefetched;
	u64 sync_fetched_bytes;
	u64 prefetch_left_bytes;
};

struct tt_slayer;

/**
 * struct tt_sched - one session's scheduler (embedded in struct tt_ksession)
 * @lock:       serialises the event path, the workers' bookkeeping, the
 *              timer work and the settings; never held while memory moves.
 * @tl:         the timeline: profile, plan, feedback, rates.
 * @cfg:        the settings.
 * @last_ts:    time of the latest event accepted (CLOCK_MONOTONIC ns).
 * @free:       range entries kept for reuse (one-shot ranges come and go
 *              every iteration).
 * @nr_ranges:  saved ranges held (one-shot and persistent).
 * @range_seq:  id given to the last range entry.
 * @timer:      fires at the next prefetch trigger time.
 * @timer_work: queued by @timer: hands the due prefetches to the prefetch
 *              workers (an hrtimer callback cannot take @lock).
 * @closing:    the session is closing: nothing new is queued.
 * @misses_seen: the timeline's miss log entries already traced.
 * @counts:     the executor's counters.
 * @hints:      the ranges hinted TT_HINT_PIN_FAST or TT_HINT_ARCHIVE
 *              (whole pages): evictions skip them.
 * @bud:        the fast-tier budget's accounts and victim state.
 * @kmem:       bytes of the arrays sized by the session's input that the
 *              scheduler holds for it (chunk lists, @bud's scratch, @hints):
 *              stats kmem_bytes.
 * @ev_turn:    the layer whose eviction continues slice by slice; the
 *              session's other evictions wait while its next slice is
 *              queued (sched.c, TT_SCHED_SLICE_BYTES). NULL: none.
 * @pf_turn:    the same for the prefetches.
 */
struct tt_sched {
	struct mutex lock;	/* see @lock above */
	struct tt_tl tl;
	struct tt_sched_cfg cfg;
	u64 last_ts;
	struct list_head free;
	unsigned long nr_ranges;
	u64 range_seq;
	struct hrtimer timer;
	struct work_struct timer_work;
	bool closing;
	unsigned int misses_seen;
	struct tt_sched_counts counts;
	struct tt_hint_set hints;
	struct tt_budget bud;
	u64 kmem;
	struct tt_slayer *ev_turn;
	struct tt_slayer *pf_turn;
};

int tt_sched_module_init(void);
void tt_sched_module_exit(void);

void tt_sched_init(struct tt_ksession *s);
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
