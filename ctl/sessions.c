// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierctl sessions: which processes are tiering and how much of each is
 * where (TT_CMD_GET_SESSIONS). The dump is taken again when the kernel
 * flags it as interrupted (a session came or went meanwhile), so what is
 * printed is one consistent snapshot.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <linux/genetlink.h>

#include "sessions.h"
#include "stats.h"
#include "tierctl.h"

/* Dumps taken before settling for an interrupted one. */
#define TT_DUMP_TRIES	5

const char tt_sessions_usage[] =
	"Usage: tierctl sessions [PID] [-j|-p]\n"
	"\n"
	"List the open tiertrain sessions (one per open of /dev/tiertrain),\n"
	"or only those of process PID. Without CAP_SYS_ADMIN, only your own.\n"
	"  session     the session id\n"
	"  pid         the process that opened it\n"
	"  command     its command name\n"
	"  uid         its owner (effective uid)\n"
	"  iters       iterations reported\n"
	"  fast, slow  bytes of its saved tensors the scheduler holds now, not\n"
	"              evicted (fast tier) and evicted (slow tier)\n"
	"  evicted     bytes the scheduler moved to the slow tier, in total\n"
	"  prefetched  bytes it moved back\n"
	"  on-time     evicted bytes back before their backward pass began\n"
	"  late        evicted bytes still slow when it began\n"
	"  dropped     layer-iterations the policy kept on the fast tier\n"
	"  modified    layer-iterations evicted in part\n"
	"  budget      its fast-tier budget in force (its own or its share of\n"
	"              the module's budget_mib), - when it has none\n"
	"With -j, an array of objects with these members (exact byte counts)\n"
	"and \"stats\", every counter of the session (see tierctl stats).\n"
	"The list is one snapshot: a dump interrupted by sessions opening or\n"
	"closing is taken again (after 5 tries, the last is printed with a\n"
	"warning).\n";

/**
 * tt_ctl_parse_pid() - a process id argument.
 * @s:   the text.
 * @pid: out: the pid.
 *
 * Return: 0, or -EINVAL when @s is not a number in 1..INT_MAX.
 */
int tt_ctl_parse_pid(const char *s, uint32_t *pid)
{
	unsigned long v;
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	v = strtoul(s, &end, 10);
	if (*end || errno || !v || v > INT_MAX)
		return -EINVAL;
	*pid = v;
	return 0;
}

static const struct {
	unsigned int type;
	enum mnl_attr_data_type kind;
	const char *name;
} tt_session_attrs[] = {
	{ TT_A_SESSION, MNL_TYPE_U64, "TT_A_SESSION" },
	{ TT_A_PID, MNL_TYPE_U32, "TT_A_PID" },
	{ TT_A_COMM, MNL_TYPE_NUL_STRING, "TT_A_COMM" },
	{ TT_A_UID, MNL_TYPE_U32, "TT_A_UID" },
	{ TT_A_OPENED_NS, MNL_TYPE_U64, "TT_A_OPENED_NS" },
	{ TT_A_STATS, MNL_TYPE_BINARY, "TT_A_STATS" },
	{ TT_A_FAST_BYTES, MNL_TYPE_U64, "TT_A_FAST_BYTES" },
	{ TT_A_SLOW_BYTES, MNL_TYPE_U64, "TT_A_SLOW_BYTES" },
	{ TT_A_LAST_SEQ, MNL_TYPE_U64, "TT_A_LAST_SEQ" },
	{ TT_A_EVENTS_LOST, MNL_TYPE_U64, "TT_A_EVENTS_LOST" },
};

/**
 * tt_sessions_parse() - add one message of the sessions dump to @ss.
 * @nlh: the message.
 * @ss:  the sessions so far.
 *
 * Return: MNL_CB_OK, or MNL_CB_ERROR with errno and @ss->err set.
 */
int tt_sessions_parse(const struct nlmsghdr *nlh, struct tt_ctl_sessions *ss)
{
	const struct nlattr *tb[TT_A_MAX + 1];
	struct tt_ctl_session *v, *x;
	size_t i, len;

	if (tt_nl_parse(nlh, tb, TT_A_MAX)) {
		snprintf(ss->err, sizeof(ss->err),
			 "a message of the sessions dump is malformed (%u bytes)",
			 nlh->nlmsg_len);
		errno = EPROTO;
		return MNL_CB_ERROR;
	}
	for (i = 0; i < TT_ARRAY_SIZE(tt_session_attrs); i++) {
		const struct nlattr *a = tb[tt_session_attrs[i].type];

		if (!a || mnl_attr_validate(a, tt_session_attrs[i].kind) < 0) {
			snprintf(ss->err, sizeof(ss->err),
				 "session entry %zu of the dump has %s %s attribute",
				 ss->n, a ? "a malformed" : "no",
				 tt_session_attrs[i].name);
			errno = EPROTO;
			return MNL_CB_ERROR;
		}
	}
	v = realloc(ss->v, (ss->n + 1) * sizeof(*v));
	if (!v) {
		snprintf(ss->err, sizeof(ss->err), "%s", strerror(ENOMEM));
		errno = ENOMEM;
		return MNL_CB_ERROR;
	}
	ss->v = v;
	x = &v[ss->n++];
	memset(x, 0, sizeof(*x));
	x->id = mnl_attr_get_u64(tb[TT_A_SESSION]);
	x->pid = mnl_attr_get_u32(tb[TT_A_PID]);
	snprintf(x->comm, sizeof(x->comm), "%s",
		 mnl_attr_get_str(tb[TT_A_COMM]));
	x->uid = mnl_attr_get_u32(tb[TT_A_UID]);
	x->opened_ns = mnl_attr_get_u64(tb[TT_A_OPENED_NS]);
	len = mnl_attr_get_payload_len(tb[TT_A_STATS]);
	memcpy(&x->st, mnl_attr_get_payload(tb[TT_A_STATS]),
	       len < sizeof(x->st) ? len : sizeof(x->st));
	x->fast_bytes = mnl_attr_get_u64(tb[TT_A_FAST_BYTES]);
	x->slow_bytes = mnl_attr_get_u64(tb[TT_A_SLOW_BYTES]);
	x->last_seq = mnl_attr_get_u64(tb[TT_A_LAST_SEQ]);
	x->events_lost = mnl_attr_get_u64(tb[TT_A_EVENTS_LOST]);
	return MNL_CB_OK;
}

static int tt_sessions_cb(const struct nlmsghdr *nlh, void *data)
{
	return tt_sessions_parse(nlh, data);
}

void tt_sessions_free(struct tt_ctl_sessions *ss)
{
	free(ss->v);
	ss->v = NULL;
	ss->n = 0;
}

static void tt_sessions_reset(void *data)
{
	struct tt_ctl_sessions *ss = data;

	tt_sessions_free(ss);
	ss->err[0] = 0;
}

/**
 * tt_sessions_fetch() - dump the sessions (of one process).
 * @nl:  the connection.
 * @pid: only this process's sessions; 0 for all.
 * @ss:  out: the sessions (zeroed by the caller).
 *
 * A dump the kernel flags as interrupted (a session opened or closed
 * between its parts) is taken again; when every try was interrupted, the
 * last one is kept and @ss->interrupted set.
 *
 * Return: 0, or -errno with the reason in @ss->err (the kernel's text for
 * an error it sent, e.g. "process 7 has no tiertrain session").
 */
int tt_sessions_fetch(struct tt_nl *nl, uint32_t pid,
		      struct tt_ctl_sessions *ss)
{
	int ret;

	ret = tt_nl_dump_again(nl, TT_CMD_GET_SESSIONS, pid ? TT_A_PID : 0,
			       pid, false, "sessions dump", tt_sessions_cb, ss,
			       tt_sessions_reset, TT_DUMP_TRIES);
	ss->interrupted = ret == -EINTR;
	if (ss->interrupted)
		ret = 0;
	if (ret < 0 && !ss->err[0])
		snprintf(ss->err, sizeof(ss->err), "%s", nl->err);
	return ret;
}

/**
 * tt_sessions_verb_fetch() - what "tierctl sessions" and "tierctl stats"
 * begin with: their optional process id argument, a connection and the
 * sessions dump.
 * @ctl:  the streams; the errors are printed to @ctl->err.
 * @verb: the verb, for the messages.
 * @argc: the verb's arguments (argv[0] is the verb).
 * @argv: them.
 * @nl:   out: the connection, open on success (close it).
 * @pid:  out: the process id given, 0 for none.
 * @ss:   out: the sessions (zeroed by the caller; free them either way);
 *        an interrupted dump is warned about and kept.
 *
 * Return: 0, or 1 (the exit status) with the error printed and @nl closed.
 */
int tt_sessions_verb_fetch(const struct tt_ctl *ctl, const char *verb,
			   int argc, char **argv, struct tt_nl *nl,
			   uint32_t *pid, struct tt_ctl_sessions *ss)
{
	*pid = 0;
	if (argc > 2) {
		fprintf(ctl->err, "tierctl %s: unexpected argument '%s'; try 'tierctl %s --help'\n",
			verb, argv[2], verb);
		return 1;
	}
	if (argc == 2 && tt_ctl_parse_pid(argv[1], pid)) {
		fprintf(ctl->err, "tierctl %s: '%s' is not a process id (a number in 1..%d)\n",
			verb, argv[1], INT_MAX);
		return 1;
	}
	if (tt_nl_open(nl) < 0) {
		fprintf(ctl->err, "tierctl: %s\n", nl->err);
		return 1;
	}
	if (tt_sessions_fetch(nl, *pid, ss) < 0) {
		fprintf(ctl->err, "tierctl: %s: %s\n", verb, ss->err);
		tt_nl_close(nl);
		return 1;
	}
	if (ss->interrupted)
		fprintf(ctl->err, "tierctl: %s: warning: sessions kept opening and closing during the dump; sessions opened or closed meanwhile may be missing\n",
			verb);
	return 0;
}

static void tt_sessions_print_json(const struct tt_ctl *ctl,
				   const struct tt_ctl_sessions *ss,
				   struct tt_json *j)
{
	size_t i;

	tt_json_array_open(j, NULL);
	for (i = 0; i < ss->n; i++) {
		const struct tt_ctl_session *x = &ss->v[i];

		tt_json_object_open(j, NULL);
		tt_json_u64(j, "session", x->id);
		tt_json_u64(j, "pid", x->pid);
		tt_json_string(j, "command", x->comm);
		tt_json_u64(j, "uid", x->uid);
		tt_json_u64(j, "opened_ns", x->opened_ns);
		tt_json_u64(j, "iterations", x->st.iterations);
		tt_json_u64(j, "fast_bytes", x->fast_bytes);
		tt_json_u64(j, "slow_bytes", x->slow_bytes);
		tt_json_u64(j, "evicted_bytes", x->st.bytes_evicted);
		tt_json_u64(j, "prefetched_bytes", x->st.bytes_prefetched);
		tt_json_u64(j, "ontime_bytes", x->st.ontime_bytes);
		tt_json_u64(j, "late_bytes", x->st.late_bytes);
		tt_json_u64(j, "layers_dropped", x->st.layers_dropped);
		tt_json_u64(j, "layers_modified", x->st.layers_modified);
		tt_json_u64(j, "registered_bytes", x->st.registered_bytes);
		tt_json_u64(j, "budget_bytes", x->st.budget_bytes);
		tt_json_u64(j, "trace_events", x->last_seq);
		tt_json_u64(j, "trace_events_lost", x->events_lost);
		tt_stats_json(j, "stats", &x->st, 1);
		tt_json_object_close(j);
	}
	tt_json_array_close(j);
	(void)ctl;
}

static void tt_sessions_print_text(const struct tt_ctl *ctl,
				   const struct tt_ctl_sessions *ss)
{
	char b[7][16];
	size_t i;

	fprintf(ctl->out, "%7s %7s %-15s %6s %6s %9s %9s %9s %10s %9s %9s %7s %8s %9s\n",
		"session", "pid", "command", "uid", "iters", "fast", "slow",
		"evicted", "prefetched", "on-time", "late", "dropped",
		"modified", "budget");
	for (i = 0; i < ss->n; i++) {
		const struct tt_ctl_session *x = &ss->v[i];

		tt_fmt_bytes(x->fast_bytes, b[0], sizeof(b[0]));
		tt_fmt_bytes(x->slow_bytes, b[1], sizeof(b[1]));
		tt_fmt_bytes(x->st.bytes_evicted, b[2], sizeof(b[2]));
		tt_fmt_bytes(x->st.bytes_prefetched, b[3], sizeof(b[3]));
		tt_fmt_bytes(x->st.ontime_bytes, b[4], sizeof(b[4]));
		tt_fmt_bytes(x->st.late_bytes, b[5], sizeof(b[5]));
		if (x->st.budget_bytes)
			tt_fmt_bytes(x->st.budget_bytes, b[6], sizeof(b[6]));
		else
			snprintf(b[6], sizeof(b[6]), "-");
		fprintf(ctl->out,
			"%7llu %7u %-15s %6u %6llu %9s %9s %9s %10s %9s %9s %7llu %8llu %9s\n",
			(unsigned long long)x->id, x->pid, x->comm, x->uid,
			(unsigned long long)x->st.iterations, b[0], b[1], b[2],
			b[3], b[4], b[5],
			(unsigned long long)x->st.layers_dropped,
			(unsigned long long)x->st.layers_modified, b[6]);
	}
	if (!ss->n)
		fputs("(no sessions)\n", ctl->out);
}

int tt_sessions_main(const struct tt_ctl *ctl, int argc, char **argv)
{
	struct tt_ctl_sessions ss = { 0 };
	uint32_t pid;
	struct tt_nl nl;
	int ret = 0;

	if (tt_sessions_verb_fetch(ctl, "sessions", argc, argv, &nl, &pid,
				   &ss)) {
		tt_sessions_free(&ss);
		return 1;
	}
	tt_nl_close(&nl);
	if (ctl->json) {
		struct tt_json *j = tt_json_new(ctl->out, ctl->pretty);

		if (!j) {
			ret = -ENOMEM;
		} else {
			tt_sessions_print_json(ctl, &ss, j);
			ret = tt_json_end(j);
		}
	} else {
		tt_sessions_print_text(ctl, &ss);
	}
	tt_sessions_free(&ss);
	if (ret < 0) {
		fprintf(ctl->err, "tierctl: sessions: cannot print the JSON output: %s\n",
			strerror(-ret));
		return 1;
	}
	return 0;
}
