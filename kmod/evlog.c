// SPDX-License-Identifier: GPL-2.0
/*
 * Trace events: what a session's scheduler saw (iterations, layer
 * boundaries, saved tensors) and did (evictions, prefetches, late and
 * dropped layers), each recorded once (held back in a small batch the
 * scheduler's lock protects, then tt_evlog_flush()) into three places:
 *
 *  - the session's ring of the last event_ring events (module setting),
 *    allocated at the session's first event so that sessions which never
 *    report events cost nothing, and read by the TT_CMD_GET_EVENTS dump
 *    (tt_evlog_read(): by seq, so a reader that falls behind learns how
 *    many events it missed);
 *  - the sink netlink.c installs (tt_evlog_sink()): its multicast groups,
 *    when someone listens;
 *  - the tracepoints tiertrain:tt_evict/tt_prefetch/tt_late/tt_drop.
 *
 * The scheduler calls in from its event path and its workers (sched.c),
 * always with its lock held, and flushes the batch before it drops the
 * lock; every caller may sleep. The hooks only observe: nothing here changes
 * what the scheduler does, and a failure (no memory for the ring or a
 * multicast message) only loses trace events, counted.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/string.h>

#include "config.h"
#include "event.h"
#include "evlog.h"
#include "session.h"

#define CREATE_TRACE_POINTS
#include "tt_trace.h"

/*
 * The installed sink, NULL when none. Its calls may sleep, so readers hold
 * tt_evlog_srcu (sleepable RCU) around them and a removal waits for them.
 */
static const struct tt_evlog_sink __rcu *tt_evlog_out;
DEFINE_STATIC_SRCU(tt_evlog_srcu);

/**
 * tt_evlog_sink() - install or remove the sink every event also goes to
 * @sink: the sink, or NULL to remove the installed one.
 *
 * One owner (netlink.c) installs it at its init and removes it at its
 * exit; the two never run at once. Removing waits for the calls of the old
 * sink in progress: none runs, and none begins, when this returns. May
 * sleep.
 */
void tt_evlog_sink(const struct tt_evlog_sink *sink)
{
	rcu_assign_pointer(tt_evlog_out, sink);
	if (!sink)
		synchronize_srcu(&tt_evlog_srcu);
}

/**
 * tt_evlog_init() - an empty log without a ring
 * @log: the log.
 */
void tt_evlog_init(struct tt_evlog *log)
{
	memset(log, 0, sizeof(*log));
	spin_lock_init(&log->lock);
}

/**
 * tt_evlog_free() - free the ring; the session is being freed
 * @log: the log.
 */
void tt_evlog_free(struct tt_evlog *log)
{
	kvfree(log->ring);
	log->ring = NULL;
}

/* Allocate the ring at the first event; never retried. */
static void tt_evlog_alloc(struct tt_evlog *log)
{
	u32 size = tt_config_get(TT_CFG_EVENT_RING);
	struct tt_trace_event *ring = NULL;

	if (size)
		ring = kvmalloc_array(size, sizeof(*ring),
				      GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	spin_lock(&log->lock);
	if (!log->tried) {
		log->tried = true;
		log->ring = ring;
		log->size = ring ? size : 0;
		ring = NULL;
	}
	spin_unlock(&log->lock);
	kvfree(ring);
}

static void tt_evlog_tracepoint(struct tt_ksession *s,
				const struct tt_trace_event *ev)
{
	switch (ev->type) {
	case TT_TRACE_EVICT:
		trace_tt_evict(s->id, pid_nr(s->pid), ev);
		break;
	case TT_TRACE_PREFETCH:
		trace_tt_prefetch(s->id, pid_nr(s->pid), ev);
		break;
	case TT_TRACE_LATE:
		trace_tt_late(s->id, pid_nr(s->pid), ev);
		break;
	case TT_TRACE_DROP:
		trace_tt_drop(s->id, pid_nr(s->pid), ev);
		break;
	default:
		break;
	}
}

/*
 * Hand @ev to the installed sink. Return: false when there is none or
 * nobody listened to @ev's group (struct tt_evlog_sink). May sleep.
 */
static bool tt_evlog_out_event(struct tt_ksession *s,
			       const struct tt_trace_event *ev)
{
	const struct tt_evlog_sink *out;
	bool heard = false;
	int idx;

	if (!rcu_access_pointer(tt_evlog_out))
		return false;
	idx = srcu_read_lock(&tt_evlog_srcu);
	out = srcu_dereference(tt_evlog_out, &tt_evlog_srcu);
	if (out)
		heard = out->event(s, ev);
	srcu_read_unlock(&tt_evlog_srcu, idx);
	return heard;
}

/**
 * tt_evlog_flush() - record the events held back
 * @s: the session; the scheduler lock is held.
 *
 * Gives them their seqs and puts them into the ring under one hold of the
 * ring's lock, in the order they were added; then the tracepoints, and the
 * sink while anyone listens: the "trace" group is looked for once per
 * event call (struct tt_evlog @trace_quiet), the "events" group once per
 * flush. May sleep (the ring's first allocation, the sink).
 */
void tt_evlog_flush(struct tt_ksession *s)
{
	struct tt_evlog *log = &s->evlog;
	u32 i, n = log->npend;
	bool events_quiet = false;

	if (!n)
		return;
	if (!READ_ONCE(log->tried))
		tt_evlog_alloc(log);
	spin_lock(&log->lock);
	for (i = 0; i < n; i++) {
		log->pend[i].seq = ++log->seq;
		if (log->ring) {
			/* (seq - 1) % size without a division */
			log->ring[log->head] = log->pend[i];
			if (++log->head == log->size)
				log->head = 0;
		}
	}
	spin_unlock(&log->lock);
	for (i = 0; i < n; i++) {
		const struct tt_trace_event *ev = &log->pend[i];

		if (tt_evlog_is_sched(ev->type)) {
			if (!log->trace_quiet && !tt_evlog_out_event(s, ev))
				log->trace_quiet = true;
			continue;
		}
		tt_evlog_tracepoint(s, ev);
		if (!events_quiet && !tt_evlog_out_event(s, ev))
			events_quiet = true;
	}
	log->npend = 0;
}

/*
 * The next slot of @pend for an event to record, the scheduler lock held:
 * filled by the caller, then tt_evlog_added().
 */
static struct tt_trace_event *tt_evlog_slot(struct tt_evlog *log)
{
	return &log->pend[log->npend];
}

static void tt_evlog_added(struct tt_ksession *s)
{
	if (++s->evlog.npend == TT_EVLOG_PEND)
		tt_evlog_flush(s);
}

/**
 * tt_evlog_read() - copy the events after a seq out of the ring
 * @log:    the log.
 * @since:  copy events with seq > @since.
 * @out:    out: the events, oldest first.
 * @max:    room in @out.
 * @missed: out: events after @since the ring no longer (or never) held:
 *          the first event copied has seq @since + *@missed + 1.
 *
 * Any @since is accepted: one at or past the last seq (up to U64_MAX)
 * copies nothing and misses nothing, and @since + *@missed + the events
 * copied never exceeds the last seq.
 *
 * Return: the number of events copied.
 */
unsigned int tt_evlog_read(struct tt_evlog *log, u64 since,
			   struct tt_trace_event *out, unsigned int max,
			   u64 *missed)
{
	unsigned int n = 0;
	u64 first, seq;
	u32 idx;

	spin_lock(&log->lock);
	*missed = 0;
	/* nothing after @since; since + 1 below cannot wrap past this */
	if (since >= log->seq) {
		spin_unlock(&log->lock);
		return 0;
	}
	first = log->seq > log->size ? log->seq - log->size + 1 : 1;
	if (!log->ring)
		first = log->seq + 1;
	seq = max(since + 1, first);
	*missed = seq - (since + 1);
	for (; n < max && seq <= log->seq; n++, seq++) {
		div_u64_rem(seq - 1, log->size, &idx);
		out[n] = log->ring[idx];
	}
	spin_unlock(&log->lock);
	return n;
}

/**
 * tt_evlog_state() - how far a session's log is
 * @log:      the log.
 * @last_seq: out: seq of the last event recorded, 0 when none.
 * @lost:     out: events recorded that the ring no longer or never held.
 */
void tt_evlog_state(struct tt_evlog *log, u64 *last_seq, u64 *lost)
{
	spin_lock(&log->lock);
	*last_seq = log->seq;
	*lost = log->seq > log->size ? log->seq - log->size : 0;
	spin_unlock(&log->lock);
}

/**
 * tt_evlog_sched_event() - an event the scheduler accepted
 * @s:    the session.
 * @ev:   the event.
 * @now:  its time (the caller's stamp or the kernel's), CLOCK_MONOTONIC ns.
 * @iter: the session's iteration number after the event.
 *
 * Saved tensors are recorded with their whole pages; one without a whole
 * page (ignored by the scheduler) is not recorded. These types have no
 * tracepoint; they go to the "trace" group, looked for once per event call
 * while nobody is in it (struct tt_evlog @trace_quiet). The event is held
 * back in @pend with the others and recorded by tt_evlog_flush(): at the
 * scheduler's unlock, or when @pend is full. Called by the event path
 * only, scheduler lock held.
 */
void tt_evlog_sched_event(struct tt_ksession *s, const struct tt_event *ev,
			  u64 now, u64 iter)
{
	struct tt_evlog *log = &s->evlog;
	struct tt_trace_event *te;
	u32 type;
	u64 bytes = 0;

	switch (ev->type) {
	case TT_EV_ITER_BEGIN:
		type = TT_TRACE_ITER_BEGIN;
		break;
	case TT_EV_LAYER_BEGIN:
		type = TT_TRACE_LAYER_BEGIN;
		break;
	case TT_EV_LAYER_END:
		type = TT_TRACE_LAYER_END;
		break;
	case TT_EV_TENSOR_SAVED:
		type = TT_TRACE_SAVED;
		bytes = tt_event_pages(ev->addr, ev->len, PAGE_SIZE, NULL) *
			PAGE_SIZE;
		if (!bytes)
			return;
		break;
	default:
		return;
	}
	te = tt_evlog_slot(log);
	*te = (struct tt_trace_event){
		.ts_ns = now,
		.bytes = bytes,
		.iter = iter,
		.type = type,
		.layer = ev->layer,
		.flags = ev->flags & (TT_FWD | TT_BWD | TT_EV_PERSISTENT),
		.node = NUMA_NO_NODE,
	};
	tt_evlog_added(s);
}

/**
 * tt_evlog_migration() - an eviction or a prefetch ended now
 * @s:     the session.
 * @type:  TT_TRACE_EVICT or TT_TRACE_PREFETCH.
 * @layer: the layer.
 * @iter:  the iteration the episode belongs to.
 * @bytes: bytes moved.
 * @start: when it started, CLOCK_MONOTONIC ns.
 * @node:  the node the bytes moved to.
 * @flags: TT_TRACE_F_* bits.
 */
void tt_evlog_migration(struct tt_ksession *s, u32 type, u32 layer, u64 iter,
			u64 bytes, u64 start, int node, u32 flags)
{
	u64 now = ktime_get_ns();

	*tt_evlog_slot(&s->evlog) = (struct tt_trace_event){
		.ts_ns = now,
		.dur_ns = start && start < now ? now - start : 0,
		.bytes = bytes,
		.iter = iter,
		.type = type,
		.layer = layer,
		.flags = flags,
		.node = node,
	};
	tt_evlog_added(s);
}

/**
 * tt_evlog_layer() - a late or dropped layer
 * @s:     the session.
 * @type:  TT_TRACE_LATE or TT_TRACE_DROP.
 * @layer: the layer.
 * @iter:  the iteration.
 * @bytes: bytes late, or saved bytes kept on the fast tier.
 * @ts:    when (the backward begin, the forward end), CLOCK_MONOTONIC ns.
 * @flags: TT_TRACE_F_* bits.
 */
void tt_evlog_layer(struct tt_ksession *s, u32 type, u32 layer, u64 iter,
		    u64 bytes, u64 ts, u32 flags)
{
	*tt_evlog_slot(&s->evlog) = (struct tt_trace_event){
		.ts_ns = ts,
		.bytes = bytes,
		.iter = iter,
		.type = type,
		.layer = layer,
		.flags = flags,
		.node = NUMA_NO_NODE,
	};
	tt_evlog_added(s);
}
