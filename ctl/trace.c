// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierctl trace PID -o FILE [--follow]: a process's trace events as a
 * Chrome/Perfetto trace ({"traceEvents":[...]}, ui.perfetto.dev opens it).
 *
 * Without --follow the events are those the module keeps in the rings of
 * the process's sessions (the last event_ring of each). With --follow,
 * tierctl also joins the events multicast group and collects the events
 * as they come until the process exits (or Ctrl-C), then writes the file.
 *
 * What the file holds, per session (Perfetto shows one process with one
 * track per row below):
 *   iterations  a span per iteration (from one iteration begin to the next)
 *   forward     a span per layer forward pass ("L3 fwd"); drops as instants
 *   backward    a span per layer backward pass; late layers as instants
 *   evict       a span per eviction (bytes, target node)
 *   prefetch    a span per prefetch (bytes, node, sync)
 * and a counter "saved activations": the bytes of saved tensors the
 * scheduler holds, on the fast and on the slow tier, from the events
 * (saved tensors add to the fast tier, an eviction moves bytes to the slow
 * tier, a prefetch back, a backward end or the next iteration begin
 * forgets a layer's one-shot tensors, on both tiers). Times are microseconds from the
 * first event; otherData.t0_ns is that event's CLOCK_MONOTONIC time.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/genetlink.h>

#include "../lib/tiertrain.h"
#include "sessions.h"
#include "trace.h"
#include "tierctl.h"

const char tt_trace_usage[] =
	"Usage: tierctl trace PID -o FILE [--follow]\n"
	"\n"
	"Write what the scheduler saw and did for process PID as a Chrome /\n"
	"Perfetto trace (JSON {\"traceEvents\":[...]}; open it in\n"
	"ui.perfetto.dev or chrome://tracing; 'tierctl plot' draws it): per\n"
	"session, iteration spans, layer forward and backward spans, eviction\n"
	"and prefetch spans (bytes, node), late and dropped layers, and a\n"
	"counter of the saved activations on the fast and the slow tier.\n"
	"  -o FILE    where to write the trace ('-': standard output)\n"
	"  --follow   also collect events as they happen, until the process\n"
	"             exits or Ctrl-C (needs CAP_SYS_ADMIN, like monitor)\n"
	"Without --follow, the trace holds the events the module still keeps\n"
	"(setting event_ring, per session). Events that were lost are counted\n"
	"in otherData.events_lost and reported.\n";

/* Tracks of a session: tid = 1 + session index * TT_TR_TRACKS + track. */
enum {
	TT_TR_ITER,
	TT_TR_FWD,
	TT_TR_BWD,
	TT_TR_EVICT,
	TT_TR_PREFETCH,
	TT_TR_TRACKS,
};

static const char *const tt_tr_track_names[TT_TR_TRACKS] = {
	"iterations", "forward", "backward", "evict", "prefetch",
};

/**
 * struct tt_tr_layer - what the writer tracks of one layer
 * @id:      layer id.
 * @begin:   start of the open forward/backward span (ns).
 * @open:    a forward/backward span is open.
 * @oneshot: bytes of one-shot saved tensors held.
 * @persist: bytes of persistent saved tensors held.
 * @slow:    bytes evicted and not yet back.
 */
struct tt_tr_layer {
	uint32_t id;
	uint64_t begin[2];
	bool open[2];
	uint64_t oneshot;
	uint64_t persist;
	uint64_t slow;
};

/**
 * struct tt_tr - the writer's state for one session
 * @j:       the JSON writer.
 * @t0:      the trace's time origin (ns).
 * @pid:     the trace pid of the session.
 * @tid:     its first track.
 * @session: its id.
 * @l:       its layers; allocated.
 * @n:       how many.
 * @iter:    the current iteration number (0: none yet).
 * @iter_ts: when it began.
 * @tot:     the totals.
 */
struct tt_tr {
	struct tt_json *j;
	uint64_t t0;
	uint32_t pid;
	uint32_t tid;
	uint64_t session;
	struct tt_tr_layer *l;
	size_t n;
	uint64_t iter;
	uint64_t iter_ts;
	struct tt_trace_totals *tot;
};

static struct tt_tr_layer *tt_tr_layer(struct tt_tr *t, uint32_t id)
{
	struct tt_tr_layer *l;
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->l[i].id == id)
			return &t->l[i];
	l = realloc(t->l, (t->n + 1) * sizeof(*l));
	if (!l)
		return NULL;
	t->l = l;
	l = &l[t->n++];
	memset(l, 0, sizeof(*l));
	l->id = id;
	return l;
}

/*
 * The scheduler forgets a layer's one-shot tensors (backward end, next
 * iteration): they are no saved activations any more, on either tier.
 */
static void tt_tr_forget(struct tt_tr_layer *l)
{
	l->oneshot = 0;
	if (l->slow > l->persist)
		l->slow = l->persist;
}

/* Open a trace event object with its common members. */
static void tt_tr_open(struct tt_tr *t, const char *name, const char *cat,
		       const char *ph, unsigned int track, uint64_t ts)
{
	tt_json_object_open(t->j, NULL);
	tt_json_string(t->j, "name", name);
	if (cat)
		tt_json_string(t->j, "cat", cat);
	tt_json_string(t->j, "ph", ph);
	tt_json_milli(t->j, "ts", ts > t->t0 ? ts - t->t0 : 0);
	tt_json_u64(t->j, "pid", t->pid);
	tt_json_u64(t->j, "tid", t->tid + track);
}

static void tt_tr_span(struct tt_tr *t, const char *name, const char *cat,
		       unsigned int track, uint64_t start, uint64_t end)
{
	tt_tr_open(t, name, cat, "X", track, start);
	tt_json_milli(t->j, "dur", end > start ? end - start : 0);
	t->tot->spans++;
}

static void tt_tr_counter(struct tt_tr *t, uint64_t ts)
{
	uint64_t fast = 0, slow = 0;
	char name[64];
	size_t i;

	for (i = 0; i < t->n; i++) {
		const struct tt_tr_layer *l = &t->l[i];
		uint64_t held = l->oneshot + l->persist;

		slow += l->slow;
		fast += held > l->slow ? held - l->slow : 0;
	}
	snprintf(name, sizeof(name), "saved activations (session %" PRIu64 ")",
		 t->session);
	tt_tr_open(t, name, NULL, "C", TT_TR_ITER, ts);
	tt_json_object_open(t->j, "args");
	tt_json_u64(t->j, "fast", fast);
	tt_json_u64(t->j, "slow", slow);
	tt_json_object_close(t->j);
	tt_json_object_close(t->j);
}

static void tt_tr_iter_end(struct tt_tr *t, uint64_t ts)
{
	char name[48];

	if (!t->iter)
		return;
	snprintf(name, sizeof(name), "iteration %" PRIu64, t->iter);
	tt_tr_span(t, name, "iteration", TT_TR_ITER, t->iter_ts, ts);
	tt_json_object_open(t->j, "args");
	tt_json_u64(t->j, "iter", t->iter);
	tt_json_object_close(t->j);
	tt_json_object_close(t->j);
}

static void tt_tr_args(struct tt_tr *t, const struct tt_trace_event *ev)
{
	tt_json_object_open(t->j, "args");
	tt_json_u64(t->j, "layer", ev->layer);
	tt_json_u64(t->j, "iter", ev->iter);
	if (ev->type != TT_TRACE_LAYER_END)
		tt_json_u64(t->j, "bytes", ev->bytes);
	if (ev->type == TT_TRACE_EVICT || ev->type == TT_TRACE_PREFETCH) {
		tt_json_i64(t->j, "node", ev->node);
		tt_json_bool(t->j, "stopped", ev->flags & TT_TRACE_F_STOPPED);
	}
	if (ev->type == TT_TRACE_EVICT)
		tt_json_bool(t->j, "victim", ev->flags & TT_TRACE_F_VICTIM);
	if (ev->type == TT_TRACE_PREFETCH)
		tt_json_bool(t->j, "sync", ev->flags & TT_TRACE_F_SYNC);
	if (ev->type == TT_TRACE_DROP)
		tt_json_string(t->j, "reason", tt_drop_reason(ev->flags));
	if (ev->type == TT_TRACE_MISS)
		tt_json_string(t->j, "miss", tt_miss_kind_name(ev->flags));
	tt_json_object_close(t->j);
}

/* One event of the session; -ENOMEM. */
static int tt_tr_event(struct tt_tr *t, const struct tt_trace_event *ev)
{
	int phase = ev->flags & TT_BWD ? 1 : 0;
	struct tt_tr_layer *l = NULL;
	uint64_t start;
	char name[64];
	size_t i;

	t->tot->events++;
	if (ev->type != TT_TRACE_ITER_BEGIN) {
		l = tt_tr_layer(t, ev->layer);
		if (!l)
			return -ENOMEM;
	}
	switch (ev->type) {
	case TT_TRACE_ITER_BEGIN:
		tt_tr_iter_end(t, ev->ts_ns);
		t->iter = ev->iter;
		t->iter_ts = ev->ts_ns;
		for (i = 0; i < t->n; i++) {
			t->tot->unmatched += t->l[i].open[0] + t->l[i].open[1];
			t->l[i].open[0] = false;
			t->l[i].open[1] = false;
			tt_tr_forget(&t->l[i]);
		}
		tt_tr_counter(t, ev->ts_ns);
		break;
	case TT_TRACE_LAYER_BEGIN:
		t->tot->unmatched += l->open[phase];
		l->open[phase] = true;
		l->begin[phase] = ev->ts_ns;
		break;
	case TT_TRACE_LAYER_END:
		if (!l->open[phase]) {
			t->tot->unmatched++;
		} else {
			l->open[phase] = false;
			snprintf(name, sizeof(name), "L%u %s", ev->layer,
				 phase ? "bwd" : "fwd");
			tt_tr_span(t, name, "layer",
				   phase ? TT_TR_BWD : TT_TR_FWD,
				   l->begin[phase], ev->ts_ns);
			tt_tr_args(t, ev);
			tt_json_object_close(t->j);
		}
		if (phase) {
			tt_tr_forget(l);
			tt_tr_counter(t, ev->ts_ns);
		}
		break;
	case TT_TRACE_SAVED:
		if (ev->flags & TT_EV_PERSISTENT)
			l->persist += ev->bytes;
		else
			l->oneshot += ev->bytes;
		tt_tr_counter(t, ev->ts_ns);
		break;
	case TT_TRACE_EVICT:
	case TT_TRACE_PREFETCH:
		start = ev->ts_ns - (ev->dur_ns < ev->ts_ns ? ev->dur_ns : 0);
		snprintf(name, sizeof(name), "%s L%u",
			 tt_trace_type_name(ev->type), ev->layer);
		tt_tr_span(t, name, "migration",
			   ev->type == TT_TRACE_EVICT ? TT_TR_EVICT :
							TT_TR_PREFETCH,
			   start, ev->ts_ns);
		tt_tr_args(t, ev);
		tt_json_object_close(t->j);
		if (ev->type == TT_TRACE_EVICT)
			l->slow += ev->bytes;
		else
			l->slow -= ev->bytes < l->slow ? ev->bytes : l->slow;
		tt_tr_counter(t, ev->ts_ns);
		break;
	case TT_TRACE_LATE:
	case TT_TRACE_DROP:
	case TT_TRACE_MISS:
		snprintf(name, sizeof(name), "%s L%u",
			 tt_trace_type_name(ev->type), ev->layer);
		tt_tr_open(t, name, tt_trace_type_name(ev->type), "i",
			   ev->type == TT_TRACE_LATE ? TT_TR_BWD : TT_TR_FWD,
			   ev->ts_ns);
		tt_json_string(t->j, "s", "t");
		tt_tr_args(t, ev);
		tt_json_object_close(t->j);
		break;
	default:
		break;
	}
	return 0;
}

static void tt_tr_metadata(struct tt_json *j, const char *what, uint32_t pid,
			   uint32_t tid, const char *key, const char *str,
			   int64_t num)
{
	tt_json_object_open(j, NULL);
	tt_json_string(j, "name", what);
	tt_json_string(j, "ph", "M");
	tt_json_u64(j, "pid", pid);
	tt_json_u64(j, "tid", tid);
	tt_json_object_open(j, "args");
	if (str)
		tt_json_string(j, key, str);
	else
		tt_json_i64(j, key, num);
	tt_json_object_close(j);
	tt_json_object_close(j);
}

/**
 * tt_trace_write() - write the trace of @es.
 * @out:    the stream.
 * @ss:     the sessions (id, pid, command); sessions of @es missing here
 *          are written with the pid of their events and command "?".
 * @nss:    entries of @ss.
 * @es:     the events, sorted by session and seq (tt_events_sort()).
 * @pretty: indent the JSON.
 * @tot:    out: what was written.
 *
 * Return: 0, -ENOMEM, or -EINVAL when the JSON writer was misused (a bug).
 */
int tt_trace_write(FILE *out, const struct tt_trace_session *ss, size_t nss,
		   const struct tt_ctl_events *es, bool pretty,
		   struct tt_trace_totals *tot)
{
	struct tt_tr t = { .tot = tot };
	uint64_t t0 = UINT64_MAX, start;
	size_t i, k, first, idx = 0;
	char name[64];
	int ret = 0;

	memset(tot, 0, sizeof(*tot));
	for (i = 0; i < es->n; i++) {
		const struct tt_trace_event *ev = &es->v[i].ev;

		start = ev->ts_ns - (ev->dur_ns < ev->ts_ns ? ev->dur_ns : 0);
		if (start < t0)
			t0 = start;
	}
	if (t0 == UINT64_MAX)
		t0 = 0;
	t.t0 = t0;
	t.j = tt_json_new(out, pretty);
	if (!t.j)
		return -ENOMEM;
	tt_json_object_open(t.j, NULL);
	tt_json_array_open(t.j, "traceEvents");
	for (i = 0; i < es->n && !ret; i = k, idx++) {
		const char *comm = "?";

		first = i;
		for (k = i; k < es->n && es->v[k].session == es->v[i].session; k++)
			;
		t.session = es->v[first].session;
		t.pid = es->v[first].pid;
		for (size_t s = 0; s < nss; s++) {
			if (ss[s].id == t.session) {
				comm = ss[s].comm;
				t.pid = ss[s].pid;
			}
		}
		t.tid = 1 + idx * TT_TR_TRACKS;
		snprintf(name, sizeof(name), "%s (pid %u)", comm, t.pid);
		tt_tr_metadata(t.j, "process_name", t.pid, 0, "name", name, 0);
		for (unsigned int tr = 0; tr < TT_TR_TRACKS; tr++) {
			snprintf(name, sizeof(name), "session %" PRIu64 " %s",
				 t.session, tt_tr_track_names[tr]);
			tt_tr_metadata(t.j, "thread_name", t.pid, t.tid + tr,
				       "name", name, 0);
			tt_tr_metadata(t.j, "thread_sort_index", t.pid,
				       t.tid + tr, "sort_index", NULL,
				       t.tid + tr);
		}
		t.n = 0;
		t.iter = 0;
		for (; i < k && !ret; i++)
			ret = tt_tr_event(&t, &es->v[i].ev);
		if (!ret && k > first)
			tt_tr_iter_end(&t, es->v[k - 1].ev.ts_ns);
		for (size_t m = 0; m < t.n; m++)
			tot->unmatched += t.l[m].open[0] + t.l[m].open[1];
	}
	free(t.l);
	tt_json_array_close(t.j);
	tt_json_string(t.j, "displayTimeUnit", "ms");
	tt_json_object_open(t.j, "otherData");
	tt_json_string(t.j, "generator", "tierctl trace");
	tt_json_string(t.j, "version", tt_version());
	tt_json_u64(t.j, "t0_ns", t0);
	tt_json_u64(t.j, "events", es->n);
	tt_json_u64(t.j, "events_lost", es->lost);
	tt_json_array_open(t.j, "sessions");
	for (i = 0; i < nss; i++) {
		tt_json_object_open(t.j, NULL);
		tt_json_u64(t.j, "session", ss[i].id);
		tt_json_u64(t.j, "pid", ss[i].pid);
		tt_json_string(t.j, "command", ss[i].comm);
		tt_json_object_close(t.j);
	}
	tt_json_array_close(t.j);
	tt_json_object_close(t.j);
	tt_json_object_close(t.j);
	if (ret) {
		tt_json_end(t.j);
		return ret;
	}
	return tt_json_end(t.j);
}

/* ---- collecting ------------------------------------------------------- */

static volatile sig_atomic_t tt_trace_stop;

static void tt_trace_signal(int sig)
{
	(void)sig;
	tt_trace_stop = 1;
}

/*
 * Give every session of @es an entry in @ts (those the sessions dump did
 * not see, closed by now, get @comm, read from /proc when the trace began).
 */
static void tt_trace_fill_sessions(const struct tt_ctl_events *es,
				   const char *comm,
				   struct tt_trace_session **ts, size_t *nts)
{
	struct tt_trace_session *v;
	size_t i, k;

	for (i = 0; i < es->n; i++) {
		if (i && es->v[i].session == es->v[i - 1].session)
			continue;
		for (k = 0; k < *nts && (*ts)[k].id != es->v[i].session; k++)
			;
		if (k < *nts)
			continue;
		v = realloc(*ts, (*nts + 1) * sizeof(*v));
		if (!v)
			return;
		*ts = v;
		v[*nts].id = es->v[i].session;
		v[*nts].pid = es->v[i].pid;
		snprintf(v[*nts].comm, sizeof(v[*nts].comm), "%s", comm);
		(*nts)++;
	}
}

/* The command name of @pid from /proc, "?" when it cannot be read. */
static void tt_trace_comm(uint32_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(buf, len, "?");
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/* The sessions of @pid now, for their command names (none is fine). */
static void tt_trace_sessions(struct tt_nl *nl, uint32_t pid,
			      struct tt_trace_session **ts, size_t *nts)
{
	struct tt_ctl_sessions ss = { 0 };
	struct tt_trace_session *v;
	size_t i, k;

	if (tt_sessions_fetch(nl, pid, &ss) < 0)
		return;
	for (i = 0; i < ss.n; i++) {
		for (k = 0; k < *nts && (*ts)[k].id != ss.v[i].id; k++)
			;
		if (k < *nts)
			continue;
		v = realloc(*ts, (*nts + 1) * sizeof(*v));
		if (!v)
			break;
		*ts = v;
		v[*nts].id = ss.v[i].id;
		v[*nts].pid = ss.v[i].pid;
		snprintf(v[*nts].comm, sizeof(v[*nts].comm), "%s", ss.v[i].comm);
		(*nts)++;
	}
	tt_sessions_free(&ss);
}

/**
 * struct tt_follow - multicast events of one process
 * @pid: the process.
 * @es:  where they go.
 * @msg: scratch for one message.
 */
struct tt_follow {
	uint32_t pid;
	struct tt_ctl_events *es;
	struct tt_ctl_events msg;
};

static int tt_follow_cb(const struct nlmsghdr *nlh, void *data)
{
	struct tt_follow *f = data;
	size_t i;
	int r = tt_events_notification(nlh, &f->msg);

	if (r <= 0)
		return r ? MNL_CB_ERROR : MNL_CB_OK;
	for (i = 0; i < f->msg.n; i++) {
		if (f->msg.v[i].pid != f->pid)
			continue;
		if (tt_events_add(f->es, &f->msg.v[i])) {
			snprintf(f->msg.err, sizeof(f->msg.err), "%s",
				 strerror(ENOMEM));
			errno = ENOMEM;
			return MNL_CB_ERROR;
		}
	}
	return MNL_CB_OK;
}

/* Receive on @mc until @pid exits or a signal; 0 or -errno (printed). */
static int tt_trace_follow(const struct tt_ctl *ctl, struct tt_nl *mc,
			   uint32_t pid, int pidfd, struct tt_ctl_events *es)
{
	struct sigaction sa = { .sa_handler = tt_trace_signal };
	struct tt_follow f = { .pid = pid, .es = es };
	struct pollfd pfd[2];
	int ret = 0, r;
	bool gone = false;

	tt_trace_stop = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	pfd[0].fd = mnl_socket_get_fd(mc->sock);
	pfd[0].events = POLLIN;
	pfd[1].fd = pidfd;
	pfd[1].events = POLLIN;
	while (!tt_trace_stop) {
		/* Once the process is gone, take what is queued and stop. */
		r = poll(pfd, gone ? 1 : 2, gone ? 0 : -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			fprintf(ctl->err, "tierctl: trace: poll: %s\n",
				strerror(errno));
			break;
		}
		if (!r && gone)
			break;
		if (!gone && (pfd[1].revents & (POLLIN | POLLHUP)))
			gone = true;
		if (!(pfd[0].revents & POLLIN))
			continue;
		if (tt_nl_recv_run(mc, "trace", ctl->err, tt_follow_cb, &f) ==
		    MNL_CB_ERROR) {
			ret = -EPROTO;
			if (f.msg.err[0])
				fprintf(ctl->err, "tierctl: trace: %s\n",
					f.msg.err);
			break;
		}
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	tt_events_free(&f.msg);
	return ret;
}

/* Count the seq gaps of @es (sorted): events lost between the parts. */
static uint64_t tt_trace_gaps(const struct tt_ctl_events *es)
{
	uint64_t gaps = 0;
	size_t i;

	for (i = 1; i < es->n; i++)
		if (es->v[i].session == es->v[i - 1].session &&
		    es->v[i].ev.seq > es->v[i - 1].ev.seq + 1)
			gaps += es->v[i].ev.seq - es->v[i - 1].ev.seq - 1;
	return gaps;
}

int tt_trace_main(const struct tt_ctl *ctl, int argc, char **argv)
{
	struct tt_ctl_events es = { 0 };
	struct tt_trace_session *ts = NULL;
	struct tt_trace_totals tot;
	const char *file = NULL;
	struct tt_nl nl, mc;
	bool follow = false, have_mc = false;
	char comm[32];
	uint32_t pid = 0;
	int i, ret, pidfd = -1;
	size_t nts = 0;
	FILE *out;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--follow")) {
			follow = true;
		} else if (!strcmp(argv[i], "-o")) {
			if (i + 1 == argc) {
				fputs("tierctl trace: -o needs a file name ('-' for standard output)\n",
				      ctl->err);
				return 1;
			}
			file = argv[++i];
		} else if (!pid && argv[i][0] != '-') {
			if (tt_ctl_parse_pid(argv[i], &pid)) {
				fprintf(ctl->err, "tierctl trace: '%s' is not a process id (a number in 1..%d)\n",
					argv[i], INT_MAX);
				return 1;
			}
		} else {
			fprintf(ctl->err, "tierctl trace: unexpected argument '%s'; try 'tierctl trace --help'\n",
				argv[i]);
			return 1;
		}
	}
	if (!pid || !file) {
		fprintf(ctl->err, "tierctl trace: %s; try 'tierctl trace --help'\n",
			!pid ? "give the PID of a process" :
			       "give the output file with -o FILE");
		return 1;
	}
	if (tt_nl_open(&nl) < 0) {
		fprintf(ctl->err, "tierctl: %s\n", nl.err);
		return 1;
	}
	if (follow) {
		pidfd = syscall(SYS_pidfd_open, pid, 0);
		if (pidfd < 0) {
			fprintf(ctl->err, "tierctl: trace: process %u: %s\n", pid,
				errno == ESRCH ? "no such process (it may have exited already)" :
						 strerror(errno));
			ret = -errno;
			goto out;
		}
		/* Listen first, then dump: no event falls in between. */
		ret = tt_nl_open(&mc);
		if (!ret) {
			have_mc = true;
			ret = tt_nl_join(&mc, mc.mcgrp_events,
					 TT_GENL_MCGRP_EVENTS);
		}
		if (!ret)
			ret = tt_nl_join(&mc, mc.mcgrp_trace,
					 TT_GENL_MCGRP_TRACE);
		if (ret < 0) {
			fprintf(ctl->err, "tierctl: trace: %s\n", mc.err);
			goto out;
		}
	}
	tt_trace_comm(pid, comm, sizeof(comm));
	tt_trace_sessions(&nl, pid, &ts, &nts);
	ret = tt_events_fetch(&nl, pid, 0, 0, &es);
	if (ret == -ENOENT && follow) {
		ret = 0;	/* no session yet: it may come */
	} else if (ret < 0) {
		fprintf(ctl->err, "tierctl: trace: %s\n", es.err);
		goto out;
	}
	if (follow) {
		ret = tt_trace_follow(ctl, &mc, pid, pidfd, &es);
		if (ret < 0)
			goto out;
		tt_trace_sessions(&nl, pid, &ts, &nts);
	}
	tt_events_sort(&es);
	es.lost += tt_trace_gaps(&es);
	tt_trace_fill_sessions(&es, comm, &ts, &nts);

	out = strcmp(file, "-") ? fopen(file, "w") : ctl->out;
	if (!out) {
		ret = -errno;
		fprintf(ctl->err, "tierctl: trace: cannot create '%s': %s\n",
			file, strerror(errno));
		goto out;
	}
	ret = tt_trace_write(out, ts, nts, &es, ctl->pretty, &tot);
	if (out != ctl->out && fclose(out) && !ret)
		ret = -errno;
	if (ret < 0) {
		fprintf(ctl->err, "tierctl: trace: cannot write '%s': %s\n",
			file, strerror(-ret));
		goto out;
	}
	if (out != ctl->out)
		fprintf(ctl->out, "%s: %zu events of process %u, %zu spans%s",
			file, tot.events, pid, tot.spans,
			es.lost || tot.unmatched ? "" : "\n");
	else if (es.lost || tot.unmatched)
		fputs("tierctl: trace", ctl->err);
	if (es.lost || tot.unmatched)
		fprintf(out != ctl->out ? ctl->out : ctl->err,
			"; %" PRIu64 " events lost, %zu layer begins or ends without their other half\n",
			es.lost, tot.unmatched);
	if (!es.n)
		fprintf(ctl->err, "tierctl: trace: warning: process %u has no trace events (the module keeps the last event_ring per session)\n",
			pid);
out:
	if (pidfd >= 0)
		close(pidfd);
	if (have_mc)
		tt_nl_close(&mc);
	tt_nl_close(&nl);
	tt_events_free(&es);
	free(ts);
	return ret < 0 ? 1 : 0;
}
