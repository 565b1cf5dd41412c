/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tierctl trace: trace events to Chrome/Perfetto trace JSON.
 */
#ifndef TT_CTL_TRACE_H
#define TT_CTL_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "events.h"

/**
 * struct tt_trace_session - what the trace says about one session
 * @id:   the session id.
 * @pid:  its process.
 * @comm: the process's command name.
 */
struct tt_trace_session {
	uint64_t id;
	uint32_t pid;
	char comm[32];
};

/**
 * struct tt_trace_totals - what tt_trace_write() wrote
 * @events:    trace events read.
 * @spans:     layer and migration spans written.
 * @unmatched: layer begins or ends without their other half (left out).
 */
struct tt_trace_totals {
	size_t events;
	size_t spans;
	size_t unmatched;
};

int tt_trace_write(FILE *out, const struct tt_trace_session *ss, size_t nss,
		   const struct tt_ctl_events *es, bool pretty,
		   struct tt_trace_totals *tot);

#endif /* TT_CTL_TRACE_H */
