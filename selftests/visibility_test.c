// SPDX-License-Identifier: GPL-2.0
/*
 * Who sees what over netlink, and requests that must not disturb each
 * other (issue 14, findings 4 (lock part), 7, 8 and 9), in the guest:
 *
 *   netns_root       a child that is root in a new network namespace
 *                    without a user namespace (a container) sees none of
 *                    the host's sessions, layers or events, and cannot
 *                    change the module's settings or node roles; its own
 *                    session is visible to it and not to the host.
 *   userns_unpriv    nobody in a new user + network namespace (root
 *                    there) sees none of the host's sessions and cannot
 *                    change settings (SKIP when unprivileged user
 *                    namespaces are off).
 *   since_max        TT_A_SINCE = U64_MAX (and U64_MAX - 1, the last seq)
 *                    gives an empty events dump, without error; 0 gives
 *                    every event.
 *   extack_threads   16 threads on one CPU sending 800 bad requests each
 *                    at once (tt_st_count(): 200 on the debug kernel)
 *                    (dumps of sessions that do not exist, out-of-range
 *                    settings), each with a value of its own: every
 *                    reply's extended ACK names that request's own value.
 *   dynamic_grow     TT_SCHED_DYNAMIC, first iteration (the fallback) of
 *                    17, 33 and 100 new layer ids: the layer table grows
 *                    mid-iteration and the fallback still evicts every
 *                    layer but the last 2, in forward order, no hole.
 *   busy_session     while a session's SET_SCHED holds its lock for long
 *                    (a budget far below what it holds, 8192 one-page
 *                    tensors to choose victims from; 8192 /
 *                    TT_ST_TIME_MUL where every move is slower) and a
 *                    sessions dump waits for it, other sessions open and
 *                    close and a layers dump of another session completes
 *                    promptly.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "kselftest_harness.h"
#include "tt_harness.h"

#define VT_NOBODY	65534
#define VT_SKIP_EXIT	4

/* ---- requests over raw generic netlink (tt_st_nl_*) ------------------ */

/* Sessions in a dump: how many, and whether @want is among them. */
struct vt_ids {
	unsigned int n;
	uint64_t want;
	bool found;
};

static void vt_ids_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *a = tt_st_nl_attr(nlh, TT_A_SESSION);
	struct vt_ids *ids = arg;
	uint64_t id;

	if (!a)
		return;
	memcpy(&id, tt_st_nla_data(a), sizeof(id));
	ids->n++;
	if (id == ids->want)
		ids->found = true;
}

/* A sessions dump (of process @pid when not 0): 0 or -errno. */
static int vt_sessions(struct tt_st_nl *nl, uint32_t pid, struct vt_ids *ids,
		       struct tt_st_nl_reply *rep)
{
	struct nlmsghdr *nlh = tt_st_nl_msg(nl, nl->family, TT_CMD_GET_SESSIONS,
				      NLM_F_DUMP);

	ids->n = 0;
	ids->found = false;
	if (pid)
		tt_st_nl_put(nlh, TT_A_PID, &pid, sizeof(pid));
	return tt_st_nl_talk(nl, rep, vt_ids_cb, ids);
}

/* Events in a dump, and the largest seq seen. */
struct vt_events {
	unsigned int n;
	uint64_t last;
};

static void vt_events_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct vt_events *ev = arg;
	const struct nlattr *a;

	for (a = tt_st_nl_next(nlh, NULL); a; a = tt_st_nl_next(nlh, a)) {
		if ((a->nla_type & NLA_TYPE_MASK) == TT_A_EVENT) {
			struct tt_trace_event e;
			size_t l = (size_t)a->nla_len - NLA_HDRLEN;

			memset(&e, 0, sizeof(e));
			memcpy(&e, tt_st_nla_data(a),
			       l < sizeof(e) ? l : sizeof(e));
			ev->n++;
			if (e.seq > ev->last)
				ev->last = e.seq;
		}
	}
}

/* A dump of @cmd (layers or events) of session @id. */
static int vt_dump_of(struct tt_st_nl *nl, uint8_t cmd, uint64_t id,
		      const uint64_t *since, struct vt_events *ev,
		      struct tt_st_nl_reply *rep)
{
	struct nlmsghdr *nlh = tt_st_nl_msg(nl, nl->family, cmd, NLM_F_DUMP);

	tt_st_nl_put(nlh, TT_A_SESSION, &id, sizeof(id));
	if (since)
		tt_st_nl_put(nlh, TT_A_SINCE, since, sizeof(*since));
	memset(ev, 0, sizeof(*ev));
	return tt_st_nl_talk(nl, rep, vt_events_cb, ev);
}

/* TT_CMD_SET_CONFIG of one key: 0 or -errno of the transport. */
static int vt_set_config(struct tt_st_nl *nl, const char *key, uint64_t v,
			 struct tt_st_nl_reply *rep)
{
	struct nlmsghdr *nlh = tt_st_nl_msg(nl, nl->family, TT_CMD_SET_CONFIG, 0);
	struct nlattr *nest = tt_st_nl_put(nlh, TT_A_CONFIG | NLA_F_NESTED, NULL, 0);

	tt_st_nl_put(nlh, TT_CFG_A_KEY, key, strlen(key) + 1);
	tt_st_nl_put(nlh, TT_CFG_A_VALUE, &v, sizeof(v));
	nest->nla_len = (char *)nlh + nlh->nlmsg_len - (char *)nest;
	return tt_st_nl_talk(nl, rep, NULL, NULL);
}

static int vt_set_tiers(struct tt_st_nl *nl, struct tt_st_nl_reply *rep)
{
	struct nlmsghdr *nlh = tt_st_nl_msg(nl, nl->family, TT_CMD_SET_TIERS, 0);

	tt_st_nl_put(nlh, TT_A_SLOW_NODES, "", 1);
	return tt_st_nl_talk(nl, rep, NULL, NULL);
}

static uint64_t vt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- the fixture: a host session with layers and events --------------- */

FIXTURE(vis)
{
	struct tt_st_topo topo;
	struct tt_session *s;
	void *buf;
	size_t len;
	uint64_t id;
	struct tt_st_nl nl;
};

static void vt_session_id_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *a = tt_st_nl_attr(nlh, TT_A_SESSION);

	if (a)
		memcpy(arg, tt_st_nla_data(a), sizeof(uint64_t));
}

/* The id of the newest visible session of process @pid, 0 if none. */
static uint64_t vt_id_of(struct tt_st_nl *nl, uint32_t pid)
{
	struct nlmsghdr *nlh = tt_st_nl_msg(nl, nl->family, TT_CMD_GET_SESSIONS,
				      NLM_F_DUMP);
	struct tt_st_nl_reply rep;
	uint64_t id = 0;

	tt_st_nl_put(nlh, TT_A_PID, &pid, sizeof(pid));
	if (tt_st_nl_talk(nl, &rep, vt_session_id_cb, &id) || rep.error)
		return 0;
	return id;
}

FIXTURE_SETUP(vis)
{
	unsigned int l;

	self->s = NULL;
	self->buf = NULL;
	self->nl.fd = -1;
	self->nl.buf = NULL;
	TT_SETUP_NODES(&self->topo, 1);
	ASSERT_EQ(0, tt_st_nl_open(&self->nl));
	TT_OPEN_KERNEL_SESSION(&self->s);
	self->len = 4 * tt_page_size();
	self->buf = tt_st_map(self->len, -1);
	ASSERT_NE(NULL, self->buf);
	memset(self->buf, 1, self->len);
	/* one iteration of two layers: layers and events to see */
	ASSERT_EQ(0, tt_iter_begin(self->s));
	for (l = 1; l <= 2; l++) {
		ASSERT_EQ(0, tt_layer_begin(self->s, l, TT_FWD));
		ASSERT_EQ(0, tt_tensor_saved(self->s, l, self->buf,
					     self->len));
		ASSERT_EQ(0, tt_layer_end(self->s, l, TT_FWD));
	}
	self->id = vt_id_of(&self->nl, getpid());
	ASSERT_NE(0, self->id);
}

FIXTURE_TEARDOWN(vis)
{
	if (self->s)
		tt_close(self->s);
	if (self->buf)
		munmap(self->buf, self->len);
	tt_st_nl_close(&self->nl);
}

/*
 * In a child in its new namespaces: nothing of the host session @id of
 * process @host is visible, settings and node roles cannot change.
 * Returns 0 or the number of the check that failed.
 */
static int vt_outsider_checks(uint64_t id, pid_t host, bool own_session)
{
	struct tt_st_nl nl;
	struct tt_st_nl_reply rep;
	struct vt_ids ids = { .want = id };
	struct vt_events ev;
	uint64_t since = 0;

	if (tt_st_nl_open(&nl))
		return 10;
	if (vt_sessions(&nl, 0, &ids, &rep) || rep.error || ids.found)
		return 11;
	if (!own_session && ids.n)
		return 12;
	if (vt_sessions(&nl, host, &ids, &rep) || rep.error != -ENOENT ||
	    ids.n)
		return 13;
	if (vt_dump_of(&nl, TT_CMD_GET_LAYERS, id, NULL, &ev, &rep) ||
	    rep.error != -ENOENT || rep.msgs)
		return 14;
	if (vt_dump_of(&nl, TT_CMD_GET_EVENTS, id, &since, &ev, &rep) ||
	    rep.error != -ENOENT || ev.n)
		return 15;
	/* a valid value: only the permission can refuse it */
	if (vt_set_config(&nl, "stay_time_us", 1000, &rep) ||
	    rep.error != -EPERM)
		return 16;
	if (vt_set_tiers(&nl, &rep) || rep.error != -EPERM)
		return 17;
	tt_st_nl_close(&nl);
	return 0;
}

static const char *vt_step(int code)
{
	switch (code) {
	case 10: return "cannot open the netlink family";
	case 11: return "the host session is in the sessions dump";
	case 12: return "host sessions are in the sessions dump";
	case 13: return "the host process's sessions are visible by pid";
	case 14: return "the host session's layers are visible";
	case 15: return "the host session's events are visible";
	case 16: return "TT_CMD_SET_CONFIG was not refused with EPERM";
	case 17: return "TT_CMD_SET_TIERS was not refused with EPERM";
	case 20: return "cannot open a session in the namespace";
	case 21: return "its own session is not visible in the namespace";
	case 22: return "cannot report to the parent";
	default: return "?";
	}
}

static int vt_wait(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

TEST_F_TIMEOUT(vis, netns_root, 120)
{
	uint64_t host_id = self->id, child_id = 0;
	struct vt_ids ids = { 0 };
	struct tt_st_nl_reply rep;
	int p[2], code;
	pid_t pid, host = getpid();

	TT_SKIP_IF_SETUP_SKIPPED();
	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct tt_session *s;
		struct tt_st_nl nl;

		close(p[0]);
		if (unshare(CLONE_NEWNET))
			_exit(VT_SKIP_EXIT);
		code = vt_outsider_checks(host_id, host, false);
		if (code)
			_exit(code);
		/* a session opened here is visible here */
		unsetenv("TIERTRAIN_BACKEND");
		s = tt_open();
		if (!s)
			_exit(20);
		if (tt_st_nl_open(&nl))
			_exit(10);
		child_id = vt_id_of(&nl, getpid());
		if (!child_id)
			_exit(21);
		if (write(p[1], &child_id, sizeof(child_id)) !=
		    sizeof(child_id))
			_exit(22);
		/* until the parent looked */
		pause();
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &child_id, sizeof(child_id)) == sizeof(child_id)) {
		/* the host does not see the container's session either */
		ASSERT_EQ(0, vt_sessions(&self->nl, 0, &ids, &rep));
		ids.want = child_id;
		ASSERT_EQ(0, vt_sessions(&self->nl, 0, &ids, &rep));
		kill(pid, SIGKILL);
		vt_wait(pid);
		close(p[0]);
		ASSERT_FALSE(ids.found)
			TH_LOG("the host sees session %llu of a child in another network namespace",
			       (unsigned long long)child_id);
	} else {
		code = vt_wait(pid);
		close(p[0]);
		if (code == VT_SKIP_EXIT)
			SKIP(return, "unshare(CLONE_NEWNET) failed");
		ASSERT_EQ(0, code) TH_LOG("in the new network namespace: %s",
					  vt_step(code));
	}
	/* the host still sees its own session */
	ids.want = host_id;
	ASSERT_EQ(0, vt_sessions(&self->nl, 0, &ids, &rep));
	ASSERT_TRUE(ids.found);
}

TEST_F_TIMEOUT(vis, userns_unpriv, 120)
{
	int code;
	pid_t pid, host = getpid();

	TT_SKIP_IF_SETUP_SKIPPED();
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setgroups(0, NULL) || setgid(VT_NOBODY) ||
		    setuid(VT_NOBODY))
			_exit(3);
		if (unshare(CLONE_NEWUSER | CLONE_NEWNET))
			_exit(VT_SKIP_EXIT);
		_exit(vt_outsider_checks(self->id, host, false));
	}
	code = vt_wait(pid);
	if (code == VT_SKIP_EXIT)
		SKIP(return, "unprivileged user namespaces are not available");
	ASSERT_EQ(0, code) TH_LOG("as nobody in new user+network namespaces: %s",
				  vt_step(code));
}

TEST_F_TIMEOUT(vis, since_max, 60)
{
	struct vt_events ev;
	struct tt_st_nl_reply rep;
	uint64_t since, last;

	TT_SKIP_IF_SETUP_SKIPPED();
	since = 0;
	ASSERT_EQ(0, vt_dump_of(&self->nl, TT_CMD_GET_EVENTS, self->id,
				&since, &ev, &rep));
	ASSERT_EQ(0, rep.error) TH_LOG("%s", rep.extack);
	ASSERT_LT(0, ev.n);
	last = ev.last;
	ASSERT_EQ(ev.n, last);

	since = last;
	ASSERT_EQ(0, vt_dump_of(&self->nl, TT_CMD_GET_EVENTS, self->id,
				&since, &ev, &rep));
	ASSERT_EQ(0, rep.error) TH_LOG("%s", rep.extack);
	ASSERT_EQ(0, ev.n);

	since = UINT64_MAX - 1;
	ASSERT_EQ(0, vt_dump_of(&self->nl, TT_CMD_GET_EVENTS, self->id,
				&since, &ev, &rep));
	ASSERT_EQ(0, rep.error) TH_LOG("%s", rep.extack);
	ASSERT_EQ(0, ev.n);

	since = UINT64_MAX;
	ASSERT_EQ(0, vt_dump_of(&self->nl, TT_CMD_GET_EVENTS, self->id,
				&since, &ev, &rep));
	ASSERT_EQ(0, rep.error) TH_LOG("%s", rep.extack);
	ASSERT_EQ(0, ev.n) TH_LOG("TT_A_SINCE=U64_MAX returned %u events (last seq %llu)",
				  ev.n, (unsigned long long)ev.last);
}

#define VT_THREADS	16
#define VT_REQS		800

static int vt_cpu = -1;

struct vt_thread {
	pthread_t t;
	unsigned int k;
	unsigned int wrong;
	unsigned int errors;
	char first_wrong[400];
};

static void *vt_bad_requests(void *arg)
{
	struct vt_thread *th = arg;
	struct vt_events ev;
	struct tt_st_nl_reply rep;
	struct tt_st_nl nl;
	const char *got;
	char want[64];
	unsigned int i, reqs = tt_st_count(VT_REQS);

	/* every thread on one CPU: they preempt each other mid-request */
	if (vt_cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(vt_cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	if (tt_st_nl_open(&nl)) {
		th->errors++;
		return NULL;
	}
	for (i = 0; i < reqs; i++) {
		/* a value no other request uses */
		uint64_t v = 1000000000ULL + th->k * 1000000ULL + i;
		int ret, want_err;

		if (i % 2) {
			ret = vt_dump_of(&nl, TT_CMD_GET_LAYERS, v, NULL, &ev,
					 &rep);
			snprintf(want, sizeof(want), "no session %llu",
				 (unsigned long long)v);
			want_err = -ENOENT;
		} else {
			ret = vt_set_config(&nl, "stay_time_us", v, &rep);
			snprintf(want, sizeof(want), "stay_time_us=%llu ",
				 (unsigned long long)v);
			want_err = -ERANGE;
		}
		if (ret || rep.error != want_err) {
			th->errors++;
			continue;
		}
		got = strstr(rep.extack, want);
		/* the value, not a longer number beginning with it */
		if (!got || (got[strlen(want)] >= '0' &&
			     got[strlen(want)] <= '9')) {
			if (!th->wrong++)
				snprintf(th->first_wrong,
					 sizeof(th->first_wrong),
					 "wanted \"%s\", got \"%s\"", want,
					 rep.extack);
		}
	}
	tt_st_nl_close(&nl);
	return NULL;
}

TEST_F_TIMEOUT(vis, extack_threads, 300)
{
	struct vt_thread th[VT_THREADS];
	unsigned int k, wrong = 0, errors = 0;

	TT_SKIP_IF_SETUP_SKIPPED();
	if (geteuid())
		SKIP(return, "needs root (out-of-range settings)");
	memset(th, 0, sizeof(th));
	vt_cpu = sched_getcpu();
	for (k = 0; k < VT_THREADS; k++) {
		th[k].k = k;
		ASSERT_EQ(0, pthread_create(&th[k].t, NULL, vt_bad_requests,
					    &th[k]));
	}
	for (k = 0; k < VT_THREADS; k++) {
		pthread_join(th[k].t, NULL);
		wrong += th[k].wrong;
		errors += th[k].errors;
		if (th[k].wrong)
			TH_LOG("thread %u: %u wrong messages; first: %s", k,
			       th[k].wrong, th[k].first_wrong);
	}
	ASSERT_EQ(0, errors);
	ASSERT_EQ(0, wrong);
}

/*
 * The last layers a fallback iteration keeps fast: the core's
 * TT_TL_EVICT_DELAY (core/timeline.h; the selftests see only the uapi).
 */
#define VT_EVICT_DELAY	2U

/*
 * One fallback iteration of @depth new layers 1..depth (64 KiB saved each,
 * @fwd_us of forward each); the layers evicted must be 1..m without a hole,
 * m = depth - VT_EVICT_DELAY: with rates this high every eviction
 * fits the fallback's admission.
 */
static int vt_dynamic_run(struct __test_metadata *_metadata,
			  unsigned int depth, unsigned int fwd_us)
{
	size_t tsz = 16 * tt_page_size(), len = depth * tsz;
	struct tt_ioc_sched c = {
		.valid = TT_SCHED_SET_FLAGS | TT_SCHED_SET_RATES,
		.flags = TT_SCHED_DYNAMIC,
		.er_bps = 100000000000ULL, .pr_bps = 100000000000ULL,
	};
	struct tt_layer_info *info;
	struct tt_session *s;
	unsigned int l, m = 0, holes = 0, t, still;
	int n = 0, prev = -1;
	char *buf;

	unsetenv("TIERTRAIN_BACKEND");
	s = tt_open();
	if (!s)
		return -errno;
	buf = tt_st_map(len, -1);
	info = calloc(depth + 1, sizeof(*info));
	if (!buf || !info)
		return -ENOMEM;
	memset(buf, 7, len);
	if (tt_sched_set(s, &c) || tt_iter_begin(s))
		return -EIO;
	for (l = 1; l <= depth; l++) {
		if (tt_layer_begin(s, l, TT_FWD) ||
		    tt_tensor_saved(s, l, buf + (l - 1) * tsz, tsz))
			return -EIO;
		usleep(fwd_us);
		if (tt_layer_end(s, l, TT_FWD))
			return -EIO;
	}
	/*
	 * The evictions run on the workers: until all that should be evicted
	 * are, or no more were for 1 s (times TT_ST_TIME_MUL), or 60 s. (Two
	 * reads 200 ms apart that agreed were taken for the end: on the debug
	 * kernel on a loaded host a worker can make no progress that long.)
	 */
	for (t = 0, still = 0; t < 300; t++) {
		unsigned int evicted = 0;

		usleep(200000);
		n = tt_layers(s, info, depth + 1);
		if (n != (int)depth)
			break;
		for (l = 0; l < depth; l++)
			evicted += !!info[l].last_evicted_bytes;
		if (evicted + VT_EVICT_DELAY >= depth)
			break;
		if ((int)evicted != prev)
			still = 0;
		else if (++still >= 5 * tt_st_time_mul())
			break;
		prev = evicted;
	}
	if (n != (int)depth) {
		TH_LOG("depth %u: %d layers known", depth, n);
		return -EIO;
	}
	for (l = 0; l < depth; l++) {
		if (!info[l].last_evicted_bytes)
			continue;
		if (info[l].layer != l + 1)
			return -EIO;
		holes += m != l;
		m = l + 1;
	}
	/* the backward pass brings everything back */
	for (l = depth; l >= 1; l--) {
		tt_layer_begin(s, l, TT_BWD);
		tt_layer_end(s, l, TT_BWD);
	}
	tt_close(s);
	munmap(buf, len);
	TH_LOG("depth %u: layers evicted 1..%u with %u holes", depth, m,
	       holes);
	if (m + VT_EVICT_DELAY < depth)
		TH_LOG("  layers %u..%u not evicted", m + 1,
		       depth - VT_EVICT_DELAY);
	if (holes) {
		for (l = 0; l < depth; l++)
			if (!info[l].last_evicted_bytes && l < m)
				TH_LOG("  layer %u not evicted", l + 1);
	}
	free(info);
	/* every position but the last VT_EVICT_DELAY */
	return holes ? -EFAULT : m + VT_EVICT_DELAY >= depth ? 0 : -ERANGE;
}

TEST_F_TIMEOUT(vis, dynamic_grow, 300)
{
	static const unsigned int depths[] = { 17, 33, 100 };
	unsigned int i, fwd_us = 5000 * tt_st_time_mul();

	TT_SKIP_IF_SETUP_SKIPPED();
	for (i = 0; i < ARRAY_SIZE(depths); i++)
		EXPECT_EQ(0, vt_dynamic_run(_metadata, depths[i], fwd_us));
}

/* ---- busy_session ------------------------------------------------------ */

/* the busy session's one-page tensors, divided by tt_st_time_mul() */
#define VT_BUSY_RANGES	8192

struct vt_busy {
	struct tt_session *s;
	uint64_t t0, t1;
	int ret;
	volatile bool done;
};

static void *vt_busy_set(void *arg)
{
	struct vt_busy *b = arg;
	struct tt_ioc_sched c = {
		.valid = TT_SCHED_SET_BUDGET, .budget_mib = 1,
	};

	b->t0 = vt_now_ns();
	b->ret = tt_sched_set(b->s, &c);
	b->t1 = vt_now_ns();
	b->done = true;
	return NULL;
}

struct vt_dumper {
	uint64_t t1;
	volatile bool done;
};

static void *vt_full_dump(void *arg)
{
	struct vt_dumper *d = arg;
	struct vt_ids ids = { 0 };
	struct tt_st_nl_reply rep;
	struct tt_st_nl nl;

	if (!tt_st_nl_open(&nl)) {
		vt_sessions(&nl, 0, &ids, &rep);
		tt_st_nl_close(&nl);
	}
	d->t1 = vt_now_ns();
	d->done = true;
	return NULL;
}

TEST_F_TIMEOUT(vis, busy_session, 600)
{
	unsigned int nr = VT_BUSY_RANGES / tt_st_time_mul();
	size_t pg = tt_page_size(), len = nr * pg;
	struct tt_event *ev;
	struct vt_busy b = { 0 };
	struct vt_dumper d = { 0 };
	uint64_t worst_oc = 0, worst_dump = 0, worst, t, hold, bound;
	struct vt_events lev;
	pthread_t bt, dt;
	struct tt_st_nl_reply rep;
	unsigned int i, ops = 0;
	char *buf;

	TT_SKIP_IF_SETUP_SKIPPED();
	/* a session holding nr one-page tensors */
	TT_OPEN_KERNEL_SESSION(&b.s);
	buf = tt_st_map(len, -1);
	ASSERT_NE(NULL, buf);
	memset(buf, 3, len);
	ev = calloc(nr + 3, sizeof(*ev));
	ASSERT_NE(NULL, ev);
	ev[0].type = TT_EV_ITER_BEGIN;
	ev[1].type = TT_EV_LAYER_BEGIN;
	ev[1].layer = 1;
	ev[1].flags = TT_FWD;
	for (i = 0; i < nr; i++) {
		ev[2 + i].type = TT_EV_TENSOR_SAVED;
		ev[2 + i].layer = 1;
		ev[2 + i].addr = (uintptr_t)(buf + i * pg);
		ev[2 + i].len = pg;
	}
	ev[2 + i].type = TT_EV_LAYER_END;
	ev[2 + i].layer = 1;
	ev[2 + i].flags = TT_FWD;
	ASSERT_EQ(nr + 3, tt_events(b.s, ev, nr + 3));
	free(ev);

	/* its budget drops far below: victims chosen under its lock */
	ASSERT_EQ(0, pthread_create(&bt, NULL, vt_busy_set, &b));
	usleep(100000);
	/* a full dump waits for the busy session */
	ASSERT_EQ(0, pthread_create(&dt, NULL, vt_full_dump, &d));
	usleep(200000);
	/* meanwhile: other sessions open and close, another pid's dump */
	while (!b.done) {
		uint64_t t0 = vt_now_ns();
		int fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);

		ASSERT_LE(0, fd);
		close(fd);
		t = vt_now_ns() - t0;
		if (t > worst_oc)
			worst_oc = t;
		/* the layers of the fixture's session, not the busy one */
		t0 = vt_now_ns();
		ASSERT_EQ(0, vt_dump_of(&self->nl, TT_CMD_GET_LAYERS, self->id,
					NULL, &lev, &rep));
		ASSERT_EQ(0, rep.error) TH_LOG("%s", rep.extack);
		ASSERT_LT(0, rep.msgs);
		t = vt_now_ns() - t0;
		if (t > worst_dump)
			worst_dump = t;
		ops++;
		usleep(50000);
	}
	pthread_join(bt, NULL);
	pthread_join(dt, NULL);
	hold = b.t1 - b.t0;
	munmap(buf, len);
	tt_close(b.s);
	b.s = NULL;
	worst = worst_oc > worst_dump ? worst_oc : worst_dump;
	TH_LOG("SET_SCHED took %.2f s (the full dump ended %.2f s after it began); %u opens/closes and layers dumps of another session meanwhile, the slowest %.3f s and %.3f s",
	       hold / 1e9, (d.t1 - b.t0) / 1e9, ops, worst_oc / 1e9,
	       worst_dump / 1e9);
	ASSERT_EQ(0, b.ret);
	/* a generous bound, and a quarter of the hold at most */
	bound = 500000000ULL * tt_st_time_mul();
	if (bound > hold / 4 && hold > 4 * 100000000ULL)
		bound = hold / 4;
	if (hold < 1000000000ULL)
		TH_LOG("the hold was short (%.2f s): this run proves little",
		       hold / 1e9);
	ASSERT_GE(bound, worst)
		TH_LOG("an open/close or a dump of another session waited %.3f s behind a busy session",
		       worst / 1e9);
}

TEST_HARNESS_MAIN
