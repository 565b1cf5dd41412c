// SPDX-License-Identifier: GPL-2.0-only
/*
 * Trace events for tierctl trace and monitor (see events.h): parsing the
 * events dump and TT_CMD_EVENT messages, and printing one event.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/genetlink.h>

#include "events.h"
#include "tierctl.h"

/* tt_trace_type_name() - "evict", "prefetch", ... or "unknown". */
const char *tt_trace_type_name(uint32_t type)
{
	switch (type) {
	case TT_TRACE_ITER_BEGIN:
		return "iteration";
	case TT_TRACE_LAYER_BEGIN:
		return "layer_begin";
	case TT_TRACE_LAYER_END:
		return "layer_end";
	case TT_TRACE_SAVED:
		return "saved";
	case TT_TRACE_EVICT:
		return "evict";
	case TT_TRACE_PREFETCH:
		return "prefetch";
	case TT_TRACE_LATE:
		return "late";
	case TT_TRACE_DROP:
		return "drop";
	case TT_TRACE_MISS:
		return "miss";
	case TT_TRACE_LEFT_SLOW:
		return "left_slow";
	}
	return "unknown";
}

/* tt_miss_kind_name() - the TT_TRACE_F_MISS_* kind in @flags, by name. */
const char *tt_miss_kind_name(uint32_t flags)
{
	if (flags & TT_TRACE_F_MISS_NEW)
		return "new_signature";
	if (flags & TT_TRACE_F_MISS_PREDICT)
		return "mispredicted";
	if (flags & TT_TRACE_F_MISS_LATE)
		return "late";
	return "unknown";
}

/*
 * tt_drop_reason() - why a TT_TRACE_DROP's layer stayed fast, by the name
 * JSON gives it: min_size, expired or policy.
 */
const char *tt_drop_reason(uint32_t flags)
{
	if (flags & TT_TRACE_F_MIN_SIZE)
		return "min_size";
	if (flags & TT_TRACE_F_EXPIRED)
		return "expired";
	return "policy";
}

/* tt_events_add() - append a copy of @e: 0 or -ENOMEM. */
int tt_events_add(struct tt_ctl_events *es, const struct tt_ctl_event *e)
{
	struct tt_ctl_event *v;

	if (es->n == es->cap) {
		size_t cap = es->cap ? 2 * es->cap : 1024;

		v = realloc(es->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		es->v = v;
		es->cap = cap;
	}
	es->v[es->n++] = *e;
	return 0;
}

/**
 * tt_events_parse() - the events of one message (a part of the events dump
 * or a TT_CMD_EVENT notification), appended to @es.
 * @nlh: the message.
 * @es:  the events so far.
 *
 * Return: MNL_CB_OK, or MNL_CB_ERROR with errno and @es->err set.
 */
int tt_events_parse(const struct nlmsghdr *nlh, struct tt_ctl_events *es)
{
	const struct nlattr *a;
	struct tt_ctl_event e;
	bool have_s = false, have_p = false;

	memset(&e, 0, sizeof(e));
	if (mnl_nlmsg_get_payload_len(nlh) < GENL_HDRLEN)
		goto bad;
	/* The session and pid come first: a first pass finds them. */
	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		switch (mnl_attr_get_type(a)) {
		case TT_A_SESSION:
			if (mnl_attr_validate(a, MNL_TYPE_U64) < 0)
				goto bad;
			e.session = mnl_attr_get_u64(a);
			have_s = true;
			break;
		case TT_A_PID:
			if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
				goto bad;
			e.pid = mnl_attr_get_u32(a);
			have_p = true;
			break;
		case TT_A_EVENTS_LOST:
			if (mnl_attr_validate(a, MNL_TYPE_U64) < 0)
				goto bad;
			es->lost += mnl_attr_get_u64(a);
			break;
		}
	}
	if (!have_s || !have_p)
		goto bad;
	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		size_t len;

		if (mnl_attr_get_type(a) != TT_A_EVENT)
			continue;
		len = mnl_attr_get_payload_len(a);
		/* Older modules never send less than the first version. */
		if (len < sizeof(e.ev))
			goto bad;
		memcpy(&e.ev, mnl_attr_get_payload(a), sizeof(e.ev));
		if (tt_events_add(es, &e)) {
			snprintf(es->err, sizeof(es->err), "%s",
				 strerror(ENOMEM));
			errno = ENOMEM;
			return MNL_CB_ERROR;
		}
	}
	return MNL_CB_OK;
bad:
	snprintf(es->err, sizeof(es->err),
		 "a trace event message from the module is malformed (%u bytes)",
		 nlh->nlmsg_len);
	errno = EPROTO;
	return MNL_CB_ERROR;
}

/**
 * tt_events_notification() - the events of a TT_CMD_EVENT message.
 * @nlh: a message from the multicast group.
 * @msg: out: its events only (the previous contents are dropped).
 *
 * Return: 1 with the events in @msg, 0 for another message, -1 for a
 * malformed one (errno and @msg->err set).
 */
int tt_events_notification(const struct nlmsghdr *nlh,
			   struct tt_ctl_events *msg)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);

	if (mnl_nlmsg_get_payload_len(nlh) < GENL_HDRLEN ||
	    g->cmd != TT_CMD_EVENT)
		return 0;
	msg->n = 0;
	return tt_events_parse(nlh, msg) == MNL_CB_OK ? 1 : -1;
}

static int tt_events_cb(const struct nlmsghdr *nlh, void *data)
{
	return tt_events_parse(nlh, data);
}

/**
 * tt_events_fetch() - dump the events of a process's sessions (or of one
 * session) kept in the module's rings.
 * @nl:      the connection.
 * @pid:     the process, or 0 with @session.
 * @session: the session, or 0 with @pid.
 * @since:   only events with a larger seq.
 * @es:      the events are appended here.
 *
 * Return: 0, or -errno with @es->err set.
 */
int tt_events_fetch(struct tt_nl *nl, uint32_t pid, uint64_t session,
		    uint64_t since, struct tt_ctl_events *es)
{
	struct nlmsghdr *req;
	int ret;

	es->err[0] = 0;
	req = tt_nl_request(nl, nl->family, TT_CMD_GET_EVENTS, TT_GENL_VERSION);
	if (pid)
		mnl_attr_put_u32(req, TT_A_PID, pid);
	else
		mnl_attr_put_u64(req, TT_A_SESSION, session);
	if (since)
		mnl_attr_put_u64(req, TT_A_SINCE, since);
	ret = tt_nl_dump(nl, req, "events dump", tt_events_cb, es);
	if (ret < 0 && !es->err[0])
		snprintf(es->err, sizeof(es->err), "%s", nl->err);
	return ret;
}

static int tt_event_cmp(const void *a, const void *b)
{
	const struct tt_ctl_event *x = a, *y = b;

	if (x->session != y->session)
		return x->session < y->session ? -1 : 1;
	if (x->ev.seq != y->ev.seq)
		return x->ev.seq < y->ev.seq ? -1 : 1;
	return 0;
}

/* tt_events_sort() - by session, then seq, without duplicates. */
void tt_events_sort(struct tt_ctl_events *es)
{
	size_t i, k = 0;

	qsort(es->v, es->n, sizeof(*es->v), tt_event_cmp);
	for (i = 0; i < es->n; i++)
		if (!k || tt_event_cmp(&es->v[k - 1], &es->v[i]))
			es->v[k++] = es->v[i];
	es->n = k;
}

void tt_events_free(struct tt_ctl_events *es)
{
	free(es->v);
	es->v = NULL;
	es->n = 0;
	es->cap = 0;
}

static const char *tt_event_phase(const struct tt_trace_event *ev)
{
	if (ev->flags & TT_FWD)
		return "fwd";
	if (ev->flags & TT_BWD)
		return "bwd";
	return "";
}

/**
 * tt_event_text() - one line for humans.
 * @f: the stream.
 * @e: the event.
 *
 * "12.345678 pid 7 session 3 iter 5 layer 2 evict 4.0 MiB to node 1 in
 * 1.234 ms", the time in seconds of CLOCK_MONOTONIC.
 */
void tt_event_text(FILE *f, const struct tt_ctl_event *e)
{
	const struct tt_trace_event *ev = &e->ev;
	char b[32];

	fprintf(f, "%" PRIu64 ".%06" PRIu64 " pid %u session %" PRIu64 " iter %" PRIu64,
		(uint64_t)ev->ts_ns / 1000000000,
		(uint64_t)ev->ts_ns / 1000 % 1000000, e->pid, e->session,
		(uint64_t)ev->iter);
	if (ev->type != TT_TRACE_ITER_BEGIN)
		fprintf(f, " layer %u", ev->layer);
	fprintf(f, " %s", tt_trace_type_name(ev->type));
	tt_fmt_bytes(ev->bytes, b, sizeof(b));
	switch (ev->type) {
	case TT_TRACE_LAYER_BEGIN:
	case TT_TRACE_LAYER_END:
		fprintf(f, " %s", tt_event_phase(ev));
		break;
	case TT_TRACE_SAVED:
		fprintf(f, " %s%s", b,
			ev->flags & TT_EV_PERSISTENT ? " persistent" : "");
		break;
	case TT_TRACE_EVICT:
	case TT_TRACE_PREFETCH:
		fprintf(f, " %s to node %d in %.3f ms%s%s%s", b, ev->node,
			ev->dur_ns / 1e6,
			ev->flags & TT_TRACE_F_SYNC ? " (sync)" : "",
			ev->flags & TT_TRACE_F_STOPPED ? " (stopped)" : "",
			ev->flags & TT_TRACE_F_VICTIM ? " (victim: budget)" : "");
		break;
	case TT_TRACE_LATE:
		fprintf(f, " %s still on the slow tier", b);
		break;
	case TT_TRACE_DROP:
		fprintf(f, " %s kept on the fast tier (%s)", b,
			ev->flags & TT_TRACE_F_MIN_SIZE ? "below min_migrate_kib" :
			ev->flags & TT_TRACE_F_EXPIRED ?
			"its eviction waited past its prefetch" : "policy");
		break;
	case TT_TRACE_MISS:
		if (ev->flags & TT_TRACE_F_MISS_NEW)
			fprintf(f, " new layer sequence of %llu forward layers",
				(unsigned long long)ev->bytes);
		else if (ev->flags & TT_TRACE_F_MISS_PREDICT)
			fprintf(f, " predicted layer sequence left at forward position %llu",
				(unsigned long long)ev->bytes);
		else
			fprintf(f, " %s late on the layer-count fallback", b);
		break;
	}
	fputc('\n', f);
}

/* tt_event_json() - the event as one JSON object. */
void tt_event_json(struct tt_json *j, const struct tt_ctl_event *e)
{
	const struct tt_trace_event *ev = &e->ev;

	tt_json_object_open(j, NULL);
	tt_json_u64(j, "session", e->session);
	tt_json_u64(j, "pid", e->pid);
	tt_json_u64(j, "seq", ev->seq);
	tt_json_u64(j, "ts_ns", ev->ts_ns);
	tt_json_string(j, "type", tt_trace_type_name(ev->type));
	tt_json_u64(j, "iter", ev->iter);
	tt_json_u64(j, "layer", ev->layer);
	if (ev->flags & (TT_FWD | TT_BWD))
		tt_json_string(j, "phase", tt_event_phase(ev));
	tt_json_u64(j, "bytes", ev->bytes);
	tt_json_u64(j, "dur_ns", ev->dur_ns);
	if (ev->node >= 0)
		tt_json_i64(j, "node", ev->node);
	else
		tt_json_null(j, "node");
	tt_json_bool(j, "persistent", ev->flags & TT_EV_PERSISTENT);
	tt_json_bool(j, "sync", ev->flags & TT_TRACE_F_SYNC);
	tt_json_bool(j, "stopped", ev->flags & TT_TRACE_F_STOPPED);
	if (ev->type == TT_TRACE_EVICT)
		tt_json_bool(j, "victim", ev->flags & TT_TRACE_F_VICTIM);
	if (ev->type == TT_TRACE_DROP)
		tt_json_string(j, "reason", tt_drop_reason(ev->flags));
	if (ev->type == TT_TRACE_MISS)
		tt_json_string(j, "miss", tt_miss_kind_name(ev->flags));
	tt_json_object_close(j);
}
