/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The sessions dump (TT_CMD_GET_SESSIONS), parsed; used by tierctl
 * sessions, stats and trace.
 */
#ifndef TT_CTL_SESSIONS_H
#define TT_CTL_SESSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libmnl/libmnl.h>
#include <linux/tiertrain.h>

#include "nl.h"

/**
 * struct tt_ctl_session - one session of the dump
 * @id:          TT_A_SESSION.
 * @pid:         TT_A_PID.
 * @uid:         TT_A_UID.
 * @comm:        TT_A_COMM.
 * @opened_ns:   TT_A_OPENED_NS.
 * @st:          TT_A_STATS (the part the module filled; the rest 0).
 * @fast_bytes:  TT_A_FAST_BYTES.
 * @slow_bytes:  TT_A_SLOW_BYTES.
 * @last_seq:    TT_A_LAST_SEQ.
 * @events_lost: TT_A_EVENTS_LOST.
 */
struct tt_ctl_session {
	uint64_t id;
	uint32_t pid;
	uint32_t uid;
	char comm[32];
	uint64_t opened_ns;
	struct tt_ioc_stats st;
	uint64_t fast_bytes;
	uint64_t slow_bytes;
	uint64_t last_seq;
	uint64_t events_lost;
};

/**
 * struct tt_ctl_sessions - the parsed dump
 * @v:   the sessions, in dump (id) order; allocated.
 * @n:   how many.
 * @interrupted: every dump taken was interrupted by sessions coming and
 *       going; this is the last one (ids still increase, none twice).
 * @err: after a parse failure: what is wrong with the reply.
 */
struct tt_ctl_sessions {
	struct tt_ctl_session *v;
	size_t n;
	bool interrupted;
	char err[640];
};

int tt_sessions_parse(const struct nlmsghdr *nlh, struct tt_ctl_sessions *ss);
int tt_sessions_fetch(struct tt_nl *nl, uint32_t pid,
		      struct tt_ctl_sessions *ss);
void tt_sessions_free(struct tt_ctl_sessions *ss);
struct tt_ctl;
int tt_sessions_verb_fetch(const struct tt_ctl *ctl, const char *verb,
			   int argc, char **argv, struct tt_nl *nl,
			   uint32_t *pid, struct tt_ctl_sessions *ss);
int tt_ctl_parse_pid(const char *s, uint32_t *pid);

#endif /* TT_CTL_SESSIONS_H */
