// SPDX-License-Identifier: GPL-2.0
/*
 * The event hot path (issue 16) keeps every observable effect, in the
 * guest:
 *
 *   listener_sees_every_event
 *                    a member of the "trace" multicast group sees every
 *                    event of the session, unbatched and in a
 *                    TT_IOC_EVENTS batch of three pieces, in order, seq
 *                    without gaps, each with its type, layer and phase;
 *                    times never go backwards, an unstamped event's time
 *                    lies within its call, a stamped one keeps its stamp;
 *                    the session's ring (TT_CMD_GET_EVENTS) holds the
 *                    same events.
 *   listener_joins_later
 *                    nobody listens to the first 41 events (the event
 *                    path stops looking for listeners within a call);
 *                    a listener that joins then sees every later event,
 *                    unbatched and batched.
 *   ring_wraps       with event_ring 7 the ring, written round and round,
 *                    holds exactly the last 7 of 50 events, in order.
 *   copy_faults      events are read from user memory at any alignment;
 *                    an event reaching into an unmapped page is EFAULT
 *                    and not processed, alone and as the 33rd of a batch
 *                    (done 32).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "kselftest_harness.h"
#include "tt_harness.h"

/* Events a test submits, at most. */
#define HP_MAX		128

/* What a test submitted and what came back. */
struct hp_log {
	unsigned int n;
	struct tt_trace_event ev[HP_MAX];
};

/* ---- the multicast group --------------------------------------------- */

/* CTRL_CMD_GETFAMILY reply: the id of the group named *(char **)arg. */
struct hp_grp {
	const char *name;
	uint32_t id;
};

static void hp_grp_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *grps = tt_st_nl_attr(nlh, CTRL_ATTR_MCAST_GROUPS);
	struct hp_grp *g = arg;
	const struct nlattr *grp, *a;
	int left, l2;

	if (!grps)
		return;
	left = grps->nla_len - NLA_HDRLEN;
	for (grp = tt_st_nla_data(grps); left >= (int)NLA_HDRLEN &&
	     grp->nla_len >= NLA_HDRLEN && grp->nla_len <= left;
	     left -= NLA_ALIGN(grp->nla_len),
	     grp = (const void *)((const char *)grp + NLA_ALIGN(grp->nla_len))) {
		const char *name = NULL;
		uint32_t id = 0;

		l2 = grp->nla_len - NLA_HDRLEN;
		for (a = tt_st_nla_data(grp); l2 >= (int)NLA_HDRLEN &&
		     a->nla_len >= NLA_HDRLEN && a->nla_len <= l2;
		     l2 -= NLA_ALIGN(a->nla_len),
		     a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len))) {
			if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_MCAST_GRP_NAME)
				name = tt_st_nla_data(a);
			else if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_MCAST_GRP_ID)
				memcpy(&id, tt_st_nla_data(a), sizeof(id));
		}
		if (name && !strcmp(name, g->name))
			g->id = id;
	}
}

/* A socket in group @name of the family: the fd or -errno. */
static int hp_listen(struct tt_st_nl *nl, const char *name)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct hp_grp g = { .name = name };
	struct tt_st_nl_reply rep;
	struct nlmsghdr *nlh;
	int fd, sz = 8 << 20, ret;

	nlh = tt_st_nl_msg(nl, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	tt_st_nl_put(nlh, CTRL_ATTR_FAMILY_NAME, TT_GENL_NAME,
		     sizeof(TT_GENL_NAME));
	ret = tt_st_nl_talk(nl, &rep, hp_grp_cb, &g);
	if (ret)
		return ret;
	if (rep.error || !g.id)
		return rep.error ? rep.error : -ENOENT;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	/* room for every event: nothing may be dropped for want of it */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g.id,
		       sizeof(g.id))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/* The events of process @pid queued on @fd so far, into @log. */
static int hp_drain(int fd, uint32_t pid, struct hp_log *log)
{
	static char buf[65536];
	struct nlmsghdr *nlh;
	ssize_t len;

	for (;;) {
		len = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (len < 0)
			return errno == EAGAIN ? 0 : -errno;
		for (nlh = (void *)buf; NLMSG_OK(nlh, len);
		     nlh = NLMSG_NEXT(nlh, len)) {
			const struct nlattr *p = tt_st_nl_attr(nlh, TT_A_PID);
			const struct nlattr *e = tt_st_nl_attr(nlh, TT_A_EVENT);
			uint32_t who;
			size_t l;

			if (!p || !e)
				continue;
			memcpy(&who, tt_st_nla_data(p), sizeof(who));
			if (who != pid)
				continue;
			if (log->n >= HP_MAX)
				return -E2BIG;
			l = e->nla_len - NLA_HDRLEN;
			memset(&log->ev[log->n], 0, sizeof(log->ev[0]));
			memcpy(&log->ev[log->n], tt_st_nla_data(e),
			       l < sizeof(log->ev[0]) ? l : sizeof(log->ev[0]));
			log->n++;
		}
	}
}

/* ---- the ring --------------------------------------------------------- */

static void hp_dump_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct hp_log *log = arg;
	const struct nlattr *a;

	for (a = tt_st_nl_next(nlh, NULL); a; a = tt_st_nl_next(nlh, a)) {
		size_t l = (size_t)a->nla_len - NLA_HDRLEN;

		if ((a->nla_type & NLA_TYPE_MASK) != TT_A_EVENT ||
		    log->n >= HP_MAX)
			continue;
		memset(&log->ev[log->n], 0, sizeof(log->ev[0]));
		memcpy(&log->ev[log->n], tt_st_nla_data(a),
		       l < sizeof(log->ev[0]) ? l : sizeof(log->ev[0]));
		log->n++;
	}
}

/* The ring of process @pid's sessions (TT_CMD_GET_EVENTS): 0 or -errno. */
static int hp_dump(struct tt_st_nl *nl, uint32_t pid, struct hp_log *log)
{
	struct nlmsghdr *nlh = tt_st_nl_msg(nl, nl->family, TT_CMD_GET_EVENTS,
					    NLM_F_DUMP);
	struct tt_st_nl_reply rep;
	int ret;

	tt_st_nl_put(nlh, TT_A_PID, &pid, sizeof(pid));
	log->n = 0;
	ret = tt_st_nl_talk(nl, &rep, hp_dump_cb, log);
	return ret ? ret : rep.error;
}

/* ---- events ----------------------------------------------------------- */

/* Event @i of the test's pattern: an iteration begin, then layers. */
static struct tt_event hp_event(unsigned int i)
{
	struct tt_event ev = { .type = TT_EV_ITER_BEGIN };

	if (i == 0)
		return ev;
	i--;
	/* forward of layers 0..29, then backward of 29..0 */
	if (i < 60) {
		ev.layer = i / 2;
		ev.flags = TT_FWD;
	} else {
		ev.layer = 29 - (i - 60) / 2;
		ev.flags = TT_BWD;
	}
	ev.type = i % 2 ? TT_EV_LAYER_END : TT_EV_LAYER_BEGIN;
	return ev;
}

/* The trace event the module records for @ev. */
static uint32_t hp_trace_type(const struct tt_event *ev)
{
	switch (ev->type) {
	case TT_EV_ITER_BEGIN: return TT_TRACE_ITER_BEGIN;
	case TT_EV_LAYER_BEGIN: return TT_TRACE_LAYER_BEGIN;
	default: return TT_TRACE_LAYER_END;
	}
}

static int hp_ioc_events(int fd, struct tt_event *ev, unsigned int n)
{
	struct tt_ioc_events a = {
		.events_ptr = (uintptr_t)ev,
		.count = n,
	};

	if (ioctl(fd, TT_IOC_EVENTS, &a))
		return -errno;
	return a.done == n ? 0 : -EIO;
}

FIXTURE(hot)
{
	struct tt_st_nl nl;
	int fd;
	int lfd;
	char ring[32];
	struct tt_event sub[HP_MAX];
	uint64_t t0[HP_MAX];
	uint64_t t1[HP_MAX];
	unsigned int n;
	struct hp_log heard;
	struct hp_log dumped;
};

FIXTURE_SETUP(hot)
{
	self->fd = -1;
	self->lfd = -1;
	self->nl.fd = -1;
	self->nl.buf = NULL;
	self->ring[0] = 0;
	self->n = 0;
	if (access(TT_ST_DEV, F_OK))
		SKIP(return, "%s missing: tiertrain.ko is not loaded", TT_ST_DEV);
	ASSERT_EQ(0, tt_st_nl_open(&self->nl));
	ASSERT_LT(0, tt_st_param_read_str("event_ring", self->ring,
					  sizeof(self->ring)));
	self->lfd = hp_listen(&self->nl, TT_GENL_MCGRP_TRACE);
	ASSERT_LE(0, self->lfd) TH_LOG("joining \"trace\": %s",
				      strerror(-self->lfd));
}

FIXTURE_TEARDOWN(hot)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->lfd >= 0)
		close(self->lfd);
	if (self->ring[0])
		tt_st_param_write_str("event_ring", self->ring);
	tt_st_nl_close(&self->nl);
}

/* Submit events [@from, @to) of the pattern in one TT_IOC_EVENTS. */
static int hp_batch(FIXTURE_DATA(hot) *self, unsigned int from,
		    unsigned int to)
{
	struct tt_event ev[HP_MAX];
	unsigned int i;
	uint64_t t0 = tt_st_now_ns(), t1;
	int ret;

	for (i = from; i < to; i++)
		ev[i - from] = self->sub[i] = hp_event(i);
	ret = hp_ioc_events(self->fd, ev, to - from);
	t1 = tt_st_now_ns();
	for (i = from; i < to; i++) {
		self->t0[i] = t0;
		self->t1[i] = t1;
	}
	self->n = to;
	return ret;
}

/* Submit event @i of the pattern alone (TT_IOC_EVENT), stamped @ts or not. */
static int hp_one(FIXTURE_DATA(hot) *self, unsigned int i, uint64_t ts)
{
	struct tt_event ev = hp_event(i);

	if (ts) {
		ev.flags |= TT_EV_TIMESTAMP;
		ev.ts_ns = ts;
	}
	self->sub[i] = ev;
	self->t0[i] = ts ? ts : tt_st_now_ns();
	if (ioctl(self->fd, TT_IOC_EVENT, &ev))
		return -errno;
	self->t1[i] = ts ? ts : tt_st_now_ns();
	self->n = i + 1;
	return 0;
}

/* @log holds the submitted events [@first, self->n) in order, seq 1-based. */
static void hp_check(struct __test_metadata *_metadata,
		     FIXTURE_DATA(hot) *self, const struct hp_log *log,
		     unsigned int first, const char *what)
{
	unsigned int i;

	ASSERT_EQ(self->n - first, log->n) TH_LOG("%s: %u of events %u..%u",
						  what, log->n, first + 1, self->n);
	for (i = 0; i < log->n; i++) {
		const struct tt_trace_event *te = &log->ev[i];
		const struct tt_event *ev = &self->sub[first + i];

		ASSERT_EQ(first + i + 1, te->seq) TH_LOG("%s: event %u", what, i);
		ASSERT_EQ(hp_trace_type(ev), te->type) TH_LOG("%s: seq %llu", what,
			(unsigned long long)te->seq);
		ASSERT_EQ(ev->layer, te->layer) TH_LOG("%s: seq %llu", what,
			(unsigned long long)te->seq);
		ASSERT_EQ(ev->flags & (TT_FWD | TT_BWD), te->flags)
			TH_LOG("%s: seq %llu", what, (unsigned long long)te->seq);
		/* within its call; a stamp exactly */
		ASSERT_LE(self->t0[first + i], te->ts_ns) TH_LOG("%s: seq %llu",
			what, (unsigned long long)te->seq);
		ASSERT_GE(self->t1[first + i], te->ts_ns) TH_LOG("%s: seq %llu",
			what, (unsigned long long)te->seq);
		if (i)
			ASSERT_LE(log->ev[i - 1].ts_ns, te->ts_ns)
				TH_LOG("%s: seq %llu goes back in time", what,
				       (unsigned long long)te->seq);
	}
}

TEST_F_TIMEOUT(hot, listener_sees_every_event, 120)
{
	unsigned int i;

	TT_SKIP_IF_SETUP_SKIPPED();
	self->fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	/* 9 alone, 70 in one batch (three pieces of 32), 2 alone */
	for (i = 0; i < 9; i++)
		ASSERT_EQ(0, hp_one(self, i, 0));
	ASSERT_EQ(0, hp_batch(self, 9, 79));
	ASSERT_EQ(0, hp_one(self, 79, tt_st_now_ns()));
	ASSERT_EQ(0, hp_one(self, 80, 0));
	ASSERT_EQ(0, hp_drain(self->lfd, getpid(), &self->heard));
	hp_check(_metadata, self, &self->heard, 0, "multicast");
	ASSERT_EQ(0, hp_dump(&self->nl, getpid(), &self->dumped));
	hp_check(_metadata, self, &self->dumped, 0, "ring");
	for (i = 0; i < self->n; i++)
		ASSERT_EQ(self->heard.ev[i].ts_ns, self->dumped.ev[i].ts_ns);
}

TEST_F_TIMEOUT(hot, listener_joins_later, 120)
{
	unsigned int i;

	TT_SKIP_IF_SETUP_SKIPPED();
	close(self->lfd);
	self->lfd = -1;
	self->fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	for (i = 0; i < 9; i++)
		ASSERT_EQ(0, hp_one(self, i, 0));
	ASSERT_EQ(0, hp_batch(self, 9, 41));
	self->lfd = hp_listen(&self->nl, TT_GENL_MCGRP_TRACE);
	ASSERT_LE(0, self->lfd);
	for (i = 41; i < 45; i++)
		ASSERT_EQ(0, hp_one(self, i, 0));
	ASSERT_EQ(0, hp_batch(self, 45, 80));
	ASSERT_EQ(0, hp_drain(self->lfd, getpid(), &self->heard));
	hp_check(_metadata, self, &self->heard, 41, "multicast");
	ASSERT_EQ(0, hp_dump(&self->nl, getpid(), &self->dumped));
	hp_check(_metadata, self, &self->dumped, 0, "ring");
}

TEST_F_TIMEOUT(hot, ring_wraps, 120)
{
	TT_SKIP_IF_SETUP_SKIPPED();
	/* read at the session's first event */
	ASSERT_EQ(0, tt_st_param_write_str("event_ring", "7"));
	self->fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, hp_batch(self, 0, 3));
	ASSERT_EQ(0, hp_one(self, 3, 0));
	ASSERT_EQ(0, hp_batch(self, 4, 50));
	ASSERT_EQ(0, hp_drain(self->lfd, getpid(), &self->heard));
	hp_check(_metadata, self, &self->heard, 0, "multicast");
	ASSERT_EQ(0, hp_dump(&self->nl, getpid(), &self->dumped));
	hp_check(_metadata, self, &self->dumped, 43, "ring");
}

TEST_F_TIMEOUT(hot, copy_faults, 120)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct tt_ioc_events a = { 0 };
	struct tt_event *ev, one;
	struct tt_ioc_stats st;
	unsigned int i;
	char *map, *end;

	TT_SKIP_IF_SETUP_SKIPPED();
	self->fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	map = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, munmap(map + pg, pg));
	end = map + pg;

	/* at an odd address */
	one = hp_event(0);
	memcpy(map + 1, &one, sizeof(one));
	ASSERT_EQ(0, ioctl(self->fd, TT_IOC_EVENT, map + 1));
	one = hp_event(1);
	memcpy(end - sizeof(one) - 3, &one, sizeof(one));
	ASSERT_EQ(0, ioctl(self->fd, TT_IOC_EVENT, end - sizeof(one) - 3));

	/* its last 8 bytes unmapped */
	one = hp_event(2);
	memcpy(end - sizeof(one) + 8, &one, sizeof(one) - 8);
	ASSERT_EQ(-1, ioctl(self->fd, TT_IOC_EVENT, end - sizeof(one) + 8));
	ASSERT_EQ(EFAULT, errno);
	/* at the end of the mapping: an event past it */
	ASSERT_EQ(-1, ioctl(self->fd, TT_IOC_EVENT, end));
	ASSERT_EQ(EFAULT, errno);

	/* 33 events, the last reaching 16 bytes into the unmapped page */
	ev = (struct tt_event *)(end - 32 * sizeof(*ev) - 16);
	for (i = 0; i < 32; i++)
		ev[i] = hp_event(2 + i);
	memcpy(&ev[32], &one, 16);
	a.events_ptr = (uintptr_t)ev;
	a.count = 33;
	ASSERT_EQ(-1, ioctl(self->fd, TT_IOC_EVENTS, &a));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(32, a.done);

	/* 2 + 32 events processed, none of the faulting ones */
	memset(&st, 0, sizeof(st));
	ASSERT_EQ(0, ioctl(self->fd, TT_IOC_STATS, &st));
	ASSERT_EQ(34, st.events);
	ASSERT_EQ(0, munmap(map, pg));
}

TEST_HARNESS_MAIN
