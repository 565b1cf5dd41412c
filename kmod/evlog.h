/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A session's trace events (struct tt_trace_event): a bounded ring, the
 * netlink multicast group and the tiertrain tracepoints.
 */
#ifndef TT_EVLOG_H
#define TT_EVLOG_H

#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/tiertrain.h>

struct tt_ksession;

/* Events held back to be recorded together (struct tt_evlog). */
#define TT_EVLOG_PEND	16

/**
 * struct tt_evlog - the trace events of one session (embedded in struct
 * tt_session)
 * @lock: protects everything below; taken with interrupts enabled, never
 *        around an allocation.
 * @ring: @size events, the one with seq n at index (n - 1) % @size; NULL
 *        until the first event (and when event_ring was 0 then).
 * @size: events @ring holds.
 * @head: index in @ring of the next event, seq % @size (the ring exists
 *        from seq 0 on or never).
 * @seq:  seq of the last event recorded (0: none yet).
 * @lost: events not kept because the ring could not be allocated.
 * @tried: the ring's allocation was attempted (it is never retried).
 * @trace_quiet: an accepted scheduler event of the current event call
 *        found nobody in the "trace" multicast group; the call's later
 *        events skip the look (tt_evlog_sched_event()). Only the event
 *        path touches it, under the scheduler lock; tt_evlog_call_begin()
 *        clears it.
 * @npend: events in @pend.
 * @pend: the events added and not yet recorded, without their seq:
 *        tt_evlog_flush() records them, in order, under one hold of
 *        @lock, when @pend is full and at the scheduler's unlock. Every
 *        writer holds the scheduler lock, which protects @pend and
 *        @npend: an event call's events are in the ring when it returns,
 *        a worker's when it drops the lock.
 */
struct tt_evlog {
	spinlock_t lock;	/* see @lock above */
	struct tt_trace_event *ring;
	u32 size;
	u32 head;
	u64 seq;
	u64 lost;
	bool tried;
	bool trace_quiet;
	u32 npend;
	struct tt_trace_event pend[TT_EVLOG_PEND];
};

/**
 * tt_evlog_call_begin() - a scheduler event call begins (or goes on after
 * whatever may have blocked): look for "trace" listeners again
 * @log: the session's log; the scheduler lock is held.
 *
 * A listener that joined the group before this is called sees every event
 * recorded after it (Documentation/architecture.md, "Trace events").
 */
static inline void tt_evlog_call_begin(struct tt_evlog *log)
{
	log->trace_quiet = false;
}

/**
 * tt_evlog_is_sched() - is @type one of the scheduler's own events
 * (iteration, layer boundary, saved tensor)? They go to the "trace"
 * multicast group and have no tracepoint; every other type goes to
 * "events".
 * @type: a TT_TRACE_* type.
 */
static inline bool tt_evlog_is_sched(u32 type)
{
	switch (type) {
	case TT_TRACE_ITER_BEGIN:
	case TT_TRACE_LAYER_BEGIN:
	case TT_TRACE_LAYER_END:
	case TT_TRACE_SAVED:
		return true;
	}
	return false;
}

/**
 * struct tt_evlog_sink - where else a recorded event goes (the netlink
 * multicast groups; netlink.c installs it with tt_evlog_sink())
 * @event: called for every event recorded, after the ring and the
 *         tracepoints, in a context that may sleep; it must not call into
 *         the event log. Return: false when nobody listened to the
 *         event's group (see tt_netlink_event()).
 */
struct tt_evlog_sink {
	bool (*event)(struct tt_ksession *s, const struct tt_trace_event *ev);
};

void tt_evlog_sink(const struct tt_evlog_sink *sink);
void tt_evlog_init(struct tt_evlog *log);
void tt_evlog_free(struct tt_evlog *log);
unsigned int tt_evlog_read(struct tt_evlog *log, u64 since,
			   struct tt_trace_event *out, unsigned int max,
			   u64 *missed);
void tt_evlog_state(struct tt_evlog *log, u64 *last_seq, u64 *lost);

void tt_evlog_flush(struct tt_ksession *s);
void tt_evlog_sched_event(struct tt_ksession *s, const struct tt_event *ev,
			  u64 now, u64 iter);
void tt_evlog_migration(struct tt_ksession *s, u32 type, u32 layer, u64 iter,
			u64 bytes, u64 start, int node, u32 flags);
void tt_evlog_layer(struct tt_ksession *s, u32 type, u32 layer, u64 iter,
		    u64 bytes, u64 ts, u32 flags);

#endif /* TT_EVLOG_H */
