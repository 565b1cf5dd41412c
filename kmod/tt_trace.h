/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the scheduler: tiertrain:tt_evict, tiertrain:tt_prefetch,
 * tiertrain:tt_late and tiertrain:tt_drop, one per trace event of those
 * types (struct tt_trace_event in the uapi header says what each field
 * means). Defined in evlog.c (CREATE_TRACE_POINTS); for perf and ftrace:
 *
 *   perf record -e 'tiertrain:*' -a -- sleep 10
 *   echo 1 > /sys/kernel/tracing/events/tiertrain/enable
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tiertrain

#if !defined(TT_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define TT_TRACE_H

#include <linux/tracepoint.h>
#include <linux/types.h>
#include <linux/tiertrain.h>

DECLARE_EVENT_CLASS(tt_sched_class,
		    TP_PROTO(u64 session, int pid,
			     const struct tt_trace_event *ev),
		    TP_ARGS(session, pid, ev),
		    TP_STRUCT__entry(__field(u64, session)
				     __field(int, pid)
				     __field(u32, layer)
				     __field(u64, iter)
				     __field(u64, bytes)
				     __field(u64, dur_ns)
				     __field(int, node)
				     __field(u32, flags)),
		    TP_fast_assign(__entry->session = session;
				   __entry->pid = pid;
				   __entry->layer = ev->layer;
				   __entry->iter = ev->iter;
				   __entry->bytes = ev->bytes;
				   __entry->dur_ns = ev->dur_ns;
				   __entry->node = ev->node;
				   __entry->flags = ev->flags;),
		    TP_printk("session=%llu pid=%d iter=%llu layer=%u bytes=%llu dur_ns=%llu node=%d flags=%#x",
			      __entry->session, __entry->pid, __entry->iter,
			      __entry->layer, __entry->bytes, __entry->dur_ns,
			      __entry->node, __entry->flags));

DEFINE_EVENT(tt_sched_class, tt_evict,
	     TP_PROTO(u64 session, int pid, const struct tt_trace_event *ev),
	     TP_ARGS(session, pid, ev));

DEFINE_EVENT(tt_sched_class, tt_prefetch,
	     TP_PROTO(u64 session, int pid, const struct tt_trace_event *ev),
	     TP_ARGS(session, pid, ev));

DEFINE_EVENT(tt_sched_class, tt_late,
	     TP_PROTO(u64 session, int pid, const struct tt_trace_event *ev),
	     TP_ARGS(session, pid, ev));

DEFINE_EVENT(tt_sched_class, tt_drop,
	     TP_PROTO(u64 session, int pid, const struct tt_trace_event *ev),
	     TP_ARGS(session, pid, ev));

#endif /* TT_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE tt_trace
#include <trace/define_trace.h>
