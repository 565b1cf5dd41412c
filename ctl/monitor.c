// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierctl monitor: print the trace events of every session as the module
 * multicasts them (group TT_GENL_MCGRP_EVENTS), until Ctrl-C.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/genetlink.h>

#include "events.h"
#include "sessions.h"
#include "tierctl.h"

const char tt_monitor_usage[] =
	"Usage: tierctl monitor [--all] [--pid PID] [--count N] [--timeout SEC]\n"
	"                       [-j|-p]\n"
	"\n"
	"Print what the scheduler of every session does as it happens, one\n"
	"line per event, until Ctrl-C (needs CAP_SYS_ADMIN: the events of every\n"
	"user's sessions go to one multicast group):\n"
	"  evict     bytes moved to a slow node, and how long it took\n"
	"  prefetch  bytes moved back (sync: by the backward pass itself)\n"
	"  late      bytes still on the slow tier when the backward pass began\n"
	"  drop      a planned layer kept on the fast tier, and why (policy:\n"
	"            no room in the queueing system; below min_migrate_kib)\n"
	"Each line starts with the CLOCK_MONOTONIC time in seconds, the pid, the\n"
	"session and the iteration.\n"
	"  --all          also iteration begins, layer begins and ends, saved\n"
	"                 tensors (these cost every event a message: watching\n"
	"                 only the four kinds above costs the events nothing)\n"
	"  --pid PID      only the sessions of process PID\n"
	"  --count N      stop after N events\n"
	"  --timeout SEC  stop after SEC seconds\n"
	"With -j, one JSON object per event and line. Events the kernel had to\n"
	"drop because tierctl read too slowly are reported on standard error.\n";

static volatile sig_atomic_t tt_monitor_stop;

static void tt_monitor_signal(int sig)
{
	(void)sig;
	tt_monitor_stop = 1;
}

/**
 * struct tt_monitor - what monitor prints
 * @ctl:     the global options.
 * @all:     every event type.
 * @pid:     only this process (0: all).
 * @left:    events still to print before stopping (0: no limit).
 * @limited: --count was given.
 * @es:      scratch for the events of one message.
 */
struct tt_monitor {
	const struct tt_ctl *ctl;
	bool all;
	uint32_t pid;
	unsigned long left;
	bool limited;
	struct tt_ctl_events es;
};

static bool tt_monitor_wanted(const struct tt_monitor *m,
			      const struct tt_ctl_event *e)
{
	if (m->pid && e->pid != m->pid)
		return false;
	if (m->all)
		return true;
	return e->ev.type == TT_TRACE_EVICT || e->ev.type == TT_TRACE_PREFETCH ||
	       e->ev.type == TT_TRACE_LATE || e->ev.type == TT_TRACE_DROP ||
	       e->ev.type == TT_TRACE_MISS;
}

static int tt_monitor_cb(const struct nlmsghdr *nlh, void *data)
{
	struct tt_monitor *m = data;
	size_t i;
	int r = tt_events_notification(nlh, &m->es);

	if (r <= 0)
		return r ? MNL_CB_ERROR : MNL_CB_OK;
	for (i = 0; i < m->es.n; i++) {
		const struct tt_ctl_event *e = &m->es.v[i];

		if (!tt_monitor_wanted(m, e))
			continue;
		if (m->ctl->json) {
			struct tt_json *j = tt_json_new(m->ctl->out,
							m->ctl->pretty);

			if (!j)
				return MNL_CB_ERROR;
			tt_event_json(j, e);
			tt_json_end(j);
		} else {
			tt_event_text(m->ctl->out, e);
		}
		fflush(m->ctl->out);
		if (m->limited && !--m->left)
			return MNL_CB_STOP;
	}
	return MNL_CB_OK;
}

/* Parse the options: 0, or -EINVAL (printed). */
static int tt_monitor_args(struct tt_monitor *m, int argc, char **argv,
			   long *timeout_ms)
{
	const struct tt_ctl *ctl = m->ctl;
	unsigned long v;
	char *end;
	int i;

	*timeout_ms = -1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--all")) {
			m->all = true;
			continue;
		}
		if (strcmp(a, "--pid") && strcmp(a, "--count") &&
		    strcmp(a, "--timeout")) {
			fprintf(ctl->err, "tierctl monitor: unknown argument '%s'; try 'tierctl monitor --help'\n",
				a);
			return -EINVAL;
		}
		if (i + 1 == argc) {
			fprintf(ctl->err, "tierctl monitor: %s needs a value\n", a);
			return -EINVAL;
		}
		if (!strcmp(a, "--pid")) {
			if (tt_ctl_parse_pid(argv[++i], &m->pid)) {
				fprintf(ctl->err, "tierctl monitor: --pid '%s' is not a process id (a number in 1..%d)\n",
					argv[i], INT_MAX);
				return -EINVAL;
			}
			continue;
		}
		errno = 0;
		v = strtoul(argv[++i], &end, 10);
		if (argv[i][0] < '0' || argv[i][0] > '9' || *end || errno ||
		    !v || v > 86400UL * 365) {
			fprintf(ctl->err, "tierctl monitor: %s '%s' is not a number in 1..%lu\n",
				a, argv[i], 86400UL * 365);
			return -EINVAL;
		}
		if (!strcmp(a, "--count")) {
			m->left = v;
			m->limited = true;
		} else {
			*timeout_ms = v * 1000;
		}
	}
	return 0;
}

static long tt_monitor_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

int tt_monitor_main(const struct tt_ctl *ctl, int argc, char **argv)
{
	struct tt_monitor m = { .ctl = ctl };
	struct sigaction sa = { .sa_handler = tt_monitor_signal };
	long timeout_ms, deadline = 0;
	struct tt_nl nl;
	struct pollfd pfd;
	int ret = 0, r;

	if (tt_monitor_args(&m, argc, argv, &timeout_ms))
		return 1;
	if (tt_nl_open(&nl) < 0) {
		fprintf(ctl->err, "tierctl: %s\n", nl.err);
		return 1;
	}
	if (tt_nl_join(&nl, nl.mcgrp_events, TT_GENL_MCGRP_EVENTS) < 0 ||
	    (m.all && tt_nl_join(&nl, nl.mcgrp_trace, TT_GENL_MCGRP_TRACE) < 0)) {
		fprintf(ctl->err, "tierctl: monitor: %s\n", nl.err);
		tt_nl_close(&nl);
		return 1;
	}
	/* No SA_RESTART: a signal ends the wait in poll(). */
	tt_monitor_stop = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (timeout_ms >= 0)
		deadline = tt_monitor_now_ms() + timeout_ms;
	pfd.fd = mnl_socket_get_fd(nl.sock);
	pfd.events = POLLIN;
	while (!tt_monitor_stop) {
		long wait = -1;

		if (deadline) {
			wait = deadline - tt_monitor_now_ms();
			if (wait <= 0)
				break;
		}
		r = poll(&pfd, 1, wait > INT_MAX ? INT_MAX : (int)wait);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(ctl->err, "tierctl: monitor: poll: %s\n",
				strerror(errno));
			ret = -errno;
			break;
		}
		if (!r)
			continue;
		r = tt_nl_recv_run(&nl, "monitor", ctl->err, tt_monitor_cb, &m);
		if (r == MNL_CB_STOP)
			break;
		if (r == MNL_CB_ERROR) {
			if (m.es.err[0])
				fprintf(ctl->err, "tierctl: monitor: %s\n",
					m.es.err);
			ret = -EPROTO;
			break;
		}
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	tt_events_free(&m.es);
	tt_nl_close(&nl);
	return ret < 0 ? 1 : 0;
}
