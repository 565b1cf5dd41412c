/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Trace events (struct tt_trace_event) for tierctl trace and monitor: the
 * events dump (TT_CMD_GET_EVENTS), TT_CMD_EVENT messages, names and text.
 */
#ifndef TT_CTL_EVENTS_H
#define TT_CTL_EVENTS_H

#include <stdint.h>
#include <stdio.h>
#include <libmnl/libmnl.h>
#include <linux/tiertrain.h>

#include "json.h"
#include "nl.h"

/**
 * struct tt_ctl_event - a trace event and its session
 * @session: TT_A_SESSION.
 * @pid:     TT_A_PID.
 * @ev:      the event.
 */
struct tt_ctl_event {
	uint64_t session;
	uint32_t pid;
	struct tt_trace_event ev;
};

/**
 * struct tt_ctl_events - events collected from dumps and messages
 * @v:    the events; allocated.
 * @n:    how many.
 * @cap:  room in @v.
 * @lost: events the kernel reported as missed (TT_A_EVENTS_LOST).
 * @err:  after a parse failure: what is wrong.
 */
struct tt_ctl_events {
	struct tt_ctl_event *v;
	size_t n;
	size_t cap;
	uint64_t lost;
	char err[640];
};

const char *tt_trace_type_name(uint32_t type);
const char *tt_miss_kind_name(uint32_t flags);
const char *tt_drop_reason(uint32_t flags);
int tt_events_parse(const struct nlmsghdr *nlh, struct tt_ctl_events *es);
int tt_events_notification(const struct nlmsghdr *nlh,
			   struct tt_ctl_events *msg);
int tt_events_add(struct tt_ctl_events *es, const struct tt_ctl_event *e);
int tt_events_fetch(struct tt_nl *nl, uint32_t pid, uint64_t session,
		    uint64_t since, struct tt_ctl_events *es);
void tt_events_sort(struct tt_ctl_events *es);
void tt_events_free(struct tt_ctl_events *es);
void tt_event_text(FILE *f, const struct tt_ctl_event *e);
void tt_event_json(struct tt_json *j, const struct tt_ctl_event *e);

#endif /* TT_CTL_EVENTS_H */
