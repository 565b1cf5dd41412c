// SPDX-License-Identifier: GPL-2.0-only
/*
 * Generic netlink helpers (see nl.h).
 *
 * Every request carries NLM_F_REQUEST | NLM_F_ACK. The socket has
 * NETLINK_EXT_ACK (the kernel adds a message and the offset of the offending
 * attribute to errors) and NETLINK_CAP_ACK (it does not echo the request
 * back) enabled; a kernel without them still works, with plainer errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/tiertrain.h>

#include "nl.h"

/**
 * struct tt_nl_talk_ctx - state of one request/reply exchange
 * @nl:    the connection.
 * @req:   the request (to name the attribute an error points at).
 * @what:  what the request was, for error text.
 * @cb:    the caller's callback for reply messages.
 * @data:  its argument.
 * @error: the errno of an NLMSG_ERROR or of an NLMSG_DONE ending a dump
 *         with an error, 0 when none came.
 */
struct tt_nl_talk_ctx {
	struct tt_nl *nl;
	const struct nlmsghdr *req;
	const char *what;
	mnl_cb_t cb;
	void *data;
	int error;
};

/* The extended ACK attributes after @hlen bytes of @nlh's payload. */
static const char *tt_nl_ack_tlvs(const struct nlmsghdr *nlh, size_t hlen,
				  long *offs)
{
	const struct nlattr *attr;
	const char *msg = NULL;

	*offs = -1;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) ||
	    mnl_nlmsg_get_payload_len(nlh) < hlen)
		return NULL;
	mnl_attr_for_each(attr, nlh, hlen) {
		switch (mnl_attr_get_type(attr)) {
		case NLMSGERR_ATTR_MSG:
			if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
				msg = mnl_attr_get_str(attr);
			break;
		case NLMSGERR_ATTR_OFFS:
			if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
				*offs = mnl_attr_get_u32(attr);
			break;
		}
	}
	return msg;
}

/*
 * The extended ACK attributes of an NLMSG_ERROR: where they start and what
 * they say. Returns the kernel's message (NULL if none) and sets *offs to
 * the offending attribute's offset in the request, or -1.
 */
static const char *tt_nl_extack(const struct nlmsghdr *nlh, long *offs)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	size_t hlen = sizeof(*e);

	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		hlen += e->msg.nlmsg_len > sizeof(struct nlmsghdr) ?
			e->msg.nlmsg_len - sizeof(struct nlmsghdr) : 0;
	return tt_nl_ack_tlvs(nlh, hlen, offs);
}

/**
 * tt_nl_error_text() - describe an NLMSG_ERROR message.
 * @nlh: the NLMSG_ERROR message.
 * @req: the request it answers, or NULL.
 * @buf: out: "<kernel message> (attribute type N): <strerror>", with the
 *       parts the kernel did not send left out; "" for an ACK without one.
 * @len: size of @buf.
 *
 * The attribute type is read from @req at the offset the kernel gave
 * (NLMSGERR_ATTR_OFFS), when it points at an attribute of @req.
 *
 * Return: the error as -errno; 0 for an ACK (@buf then holds the kernel's
 * warning, if any); -EBADMSG when @nlh is too short to be an error.
 */
int tt_nl_error_text(const struct nlmsghdr *nlh, const struct nlmsghdr *req,
		     char *buf, size_t len)
{
	const struct nlmsgerr *e;
	char attr[48] = "";
	const char *msg;
	long offs;
	int err;

	if (nlh->nlmsg_len < NLMSG_HDRLEN ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*e)) {
		snprintf(buf, len, "truncated netlink error message (%u bytes)",
			 nlh->nlmsg_len);
		return -EBADMSG;
	}
	e = mnl_nlmsg_get_payload(nlh);
	err = e->error < 0 ? -e->error : e->error;
	msg = tt_nl_extack(nlh, &offs);
	if (req && offs >= (long)(NLMSG_HDRLEN + GENL_HDRLEN) &&
	    offs + sizeof(struct nlattr) <= req->nlmsg_len) {
		const struct nlattr *a = (const void *)((const char *)req + offs);

		snprintf(attr, sizeof(attr), " (attribute type %u)",
			 a->nla_type & NLA_TYPE_MASK);
	}
	if (!err)
		snprintf(buf, len, "%s%s", msg ? msg : "", msg ? attr : "");
	else if (msg)
		snprintf(buf, len, "%s%s: %s", msg, attr, strerror(err));
	else if (attr[0])
		snprintf(buf, len, "%s%s", strerror(err), attr);
	else
		snprintf(buf, len, "%s", strerror(err));
	return -err;
}

static int tt_nl_error_cb(const struct nlmsghdr *nlh, void *data)
{
	struct tt_nl_talk_ctx *ctx = data;
	char text[384];
	int err;

	err = -tt_nl_error_text(nlh, ctx->req, text, sizeof(text));
	if (!err) {
		if (text[0])
			fprintf(stderr, "tierctl: warning: %s: %s\n", ctx->what,
				text);
		return MNL_CB_STOP;
	}
	ctx->error = err;
	snprintf(ctx->nl->err, sizeof(ctx->nl->err), "%s: %s", ctx->what, text);
	errno = err;
	return MNL_CB_ERROR;
}

/**
 * tt_nl_done_text() - describe the NLMSG_DONE that ends a dump.
 * @nlh: the NLMSG_DONE message.
 * @buf: out: with an error, "<kernel message>: <strerror>" (the message
 *       left out when the kernel sent none).
 * @len: size of @buf.
 *
 * Return: 0 when the dump ended normally, else the dump's error as -errno.
 */
int tt_nl_done_text(const struct nlmsghdr *nlh, char *buf, size_t len)
{
	const char *msg;
	long offs;
	int err;

	buf[0] = 0;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(int))
		return 0;
	memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
	if (err >= 0)
		return 0;
	msg = tt_nl_ack_tlvs(nlh, sizeof(int), &offs);
	if (msg)
		snprintf(buf, len, "%s: %s", msg, strerror(-err));
	else
		snprintf(buf, len, "%s", strerror(-err));
	return err;
}

static int tt_nl_done_cb(const struct nlmsghdr *nlh, void *data)
{
	struct tt_nl_talk_ctx *ctx = data;
	char text[384];
	int err;

	err = -tt_nl_done_text(nlh, text, sizeof(text));
	if (!err)
		return MNL_CB_STOP;
	ctx->error = err;
	snprintf(ctx->nl->err, sizeof(ctx->nl->err), "%s: %s", ctx->what, text);
	errno = err;
	return MNL_CB_ERROR;
}

static int tt_nl_data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct tt_nl_talk_ctx *ctx = data;

	return ctx->cb ? ctx->cb(nlh, ctx->data) : MNL_CB_OK;
}

/**
 * tt_nl_request() - start a generic netlink request in @nl->buf.
 * @nl:      the connection.
 * @type:    the family id.
 * @cmd:     the command.
 * @version: the family version.
 *
 * Return: the message, to add attributes to and pass to tt_nl_talk().
 */
struct nlmsghdr *tt_nl_request(struct tt_nl *nl, uint16_t type, uint8_t cmd,
			       uint8_t version)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *genl;

	/* Attribute padding is not written by libmnl: start from zeroes. */
	memset(nl->buf, 0, TT_NL_BUF_SIZE);
	nlh = mnl_nlmsg_put_header(nl->buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = ++nl->seq;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = cmd;
	genl->version = version;
	return nlh;
}

/**
 * tt_nl_talk() - send @req and run @cb on every reply until the ACK.
 * @nl:   the connection.
 * @req:  a message from tt_nl_request(), in @nl->buf.
 * @what: what the request is, for error text ("status request").
 * @cb:   called for each reply message that is not an ACK or error; NULL
 *        to ignore replies.
 * @data: its argument.
 *
 * The request is copied before @nl->buf is reused for replies.
 *
 * Return: 0, or -errno with @nl->err describing the failure.
 */
int tt_nl_talk(struct tt_nl *nl, struct nlmsghdr *req, const char *what,
	       mnl_cb_t cb, void *data)
{
	mnl_cb_t ctl_cb[NLMSG_MIN_TYPE] = {
		[NLMSG_ERROR] = tt_nl_error_cb,
		[NLMSG_DONE] = tt_nl_done_cb,
	};
	struct tt_nl_talk_ctx ctx = {
		.nl = nl, .what = what, .cb = cb, .data = data,
	};
	struct nlmsghdr *copy, *m;
	bool intr = false;
	ssize_t n;
	int ret, left;

	copy = malloc(req->nlmsg_len);
	if (!copy) {
		snprintf(nl->err, sizeof(nl->err), "%s: %s", what,
			 strerror(ENOMEM));
		return -ENOMEM;
	}
	memcpy(copy, req, req->nlmsg_len);
	ctx.req = copy;
	if (mnl_socket_sendto(nl->sock, copy, copy->nlmsg_len) < 0) {
		ret = -errno;
		snprintf(nl->err, sizeof(nl->err), "%s: cannot send: %s", what,
			 strerror(-ret));
		goto out;
	}
	for (;;) {
		n = mnl_socket_recvfrom(nl->sock, nl->buf,
					TT_NL_BUF_SIZE);
		if (n < 0) {
			ret = -errno;
			snprintf(nl->err, sizeof(nl->err),
				 "%s: cannot receive the reply: %s", what,
				 strerror(-ret));
			goto out;
		}
		/*
		 * libmnl stops at a part flagged NLM_F_DUMP_INTR: note it,
		 * take the whole dump, and report it at the end.
		 */
		left = n;
		for (m = (struct nlmsghdr *)nl->buf; mnl_nlmsg_ok(m, left);
		     m = mnl_nlmsg_next(m, &left)) {
			if (m->nlmsg_flags & NLM_F_DUMP_INTR) {
				intr = true;
				m->nlmsg_flags &= ~NLM_F_DUMP_INTR;
			}
		}
		ret = mnl_cb_run2(nl->buf, n, copy->nlmsg_seq, nl->portid,
				  tt_nl_data_cb, &ctx, ctl_cb, NLMSG_MIN_TYPE);
		if (ret == MNL_CB_STOP) {
			ret = 0;
			if (intr) {
				ret = -EINTR;
				snprintf(nl->err, sizeof(nl->err),
					 "%s: the dump was interrupted by a change in the kernel's state",
					 what);
			}
			goto out;
		}
		if (ret == MNL_CB_ERROR) {
			ret = -(ctx.error ? ctx.error : errno);
			if (!ctx.error)
				snprintf(nl->err, sizeof(nl->err), "%s: %s",
					 what, strerror(-ret));
			goto out;
		}
	}
out:
	free(copy);
	return ret;
}

/**
 * tt_nl_dump() - tt_nl_talk() for a dump request (NLM_F_DUMP).
 * @nl:   the connection.
 * @req:  a message from tt_nl_request().
 * @what: what the request is, for error text.
 * @cb:   called for each reply message.
 * @data: its argument.
 *
 * Return: 0; -EINTR when a part of the dump was flagged NLM_F_DUMP_INTR
 * (the kernel's state changed meanwhile: start over with fresh state);
 * else -errno. @nl->err describes the failure.
 */
int tt_nl_dump(struct tt_nl *nl, struct nlmsghdr *req, const char *what,
	       mnl_cb_t cb, void *data)
{
	req->nlmsg_flags |= NLM_F_DUMP;
	return tt_nl_talk(nl, req, what, cb, data);
}

/**
 * tt_nl_join() - receive a multicast group of the family.
 * @nl:    the connection.
 * @group: the group id (e.g. @nl->mcgrp_events).
 * @name:  its name, for error text.
 *
 * The socket's receive buffer is enlarged (8 MiB where allowed) so that
 * bursts of events are not dropped.
 *
 * Return: 0, or -errno with @nl->err set (-EPERM: the group needs
 * CAP_SYS_ADMIN; -ENOENT: the module has no such group).
 */
int tt_nl_join(struct tt_nl *nl, uint32_t group, const char *name)
{
	int size = 8 << 20, fd = mnl_socket_get_fd(nl->sock);

	if (!group) {
		snprintf(nl->err, sizeof(nl->err),
			 "the module has no multicast group \"%s\" (an older module?)",
			 name);
		return -ENOENT;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (mnl_socket_setsockopt(nl->sock, NETLINK_ADD_MEMBERSHIP, &group,
				  sizeof(group)) < 0) {
		int err = errno;

		snprintf(nl->err, sizeof(nl->err),
			 "cannot join the multicast group \"%s\": %s%s", name,
			 strerror(err),
			 err == EPERM ? " (it needs CAP_SYS_ADMIN: run as root)" : "");
		return -err;
	}
	return 0;
}

/**
 * tt_nl_recv_run() - receive one datagram of multicast messages and run
 * @cb on each.
 * @nl:   the connection (joined to a group).
 * @who:  the verb, for warnings ("monitor").
 * @err:  where warnings and errors go.
 * @cb:   called for each message.
 * @data: its argument.
 *
 * An overrun receive buffer (the kernel dropped messages: ENOBUFS) is
 * reported on @err and is not an error; a signal (EINTR) returns
 * MNL_CB_OK without a message.
 *
 * Return: what @cb returned last (MNL_CB_OK, MNL_CB_STOP, MNL_CB_ERROR),
 * or MNL_CB_ERROR with errno when the socket failed (printed).
 */
int tt_nl_recv_run(struct tt_nl *nl, const char *who, FILE *err, mnl_cb_t cb,
		   void *data)
{
	ssize_t n = mnl_socket_recvfrom(nl->sock, nl->buf, TT_NL_BUF_SIZE);

	if (n < 0 && errno == ENOBUFS) {
		fprintf(err, "tierctl: %s: the kernel dropped events: tierctl read them too slowly\n",
			who);
		return MNL_CB_OK;
	}
	if (n < 0 && errno == EINTR)
		return MNL_CB_OK;
	if (n < 0) {
		fprintf(err, "tierctl: %s: cannot receive: %s\n", who,
			strerror(errno));
		return MNL_CB_ERROR;
	}
	return mnl_cb_run(nl->buf, n, 0, 0, cb, data);
}

/**
 * tt_nl_dump_again() - a dump of @cmd with one attribute, taken again while
 * the kernel flags it as interrupted.
 * @nl:    the connection.
 * @cmd:   the command.
 * @type:  the attribute (0: none).
 * @value: its value.
 * @u64:   it is a u64 (else a u32).
 * @what:  what the dump is, for error text.
 * @cb:    called for each reply message.
 * @data:  its argument.
 * @reset: called before each try, to forget a previous one.
 * @tries: tries at most.
 *
 * Return: 0; -EINTR when every try was interrupted (the last one's
 * messages were seen by @cb); else -errno with @nl->err set.
 */
int tt_nl_dump_again(struct tt_nl *nl, uint8_t cmd, uint16_t type,
		     uint64_t value, bool u64, const char *what, mnl_cb_t cb,
		     void *data, void (*reset)(void *data), unsigned int tries)
{
	struct nlmsghdr *req;
	int ret = -EINTR;

	while (tries-- && ret == -EINTR) {
		reset(data);
		req = tt_nl_request(nl, nl->family, cmd, TT_GENL_VERSION);
		if (type && u64)
			mnl_attr_put_u64(req, type, value);
		else if (type)
			mnl_attr_put_u32(req, type, value);
		ret = tt_nl_dump(nl, req, what, cb, data);
	}
	return ret;
}

struct tt_nl_table {
	const struct nlattr **tb;
	unsigned int max;
};

static int tt_nl_table_cb(const struct nlattr *attr, void *data)
{
	struct tt_nl_table *t = data;
	unsigned int type = mnl_attr_get_type(attr);

	if (type <= t->max)
		t->tb[type] = attr;
	return MNL_CB_OK;
}

/**
 * tt_nl_parse() - the attributes of a generic netlink message by type.
 * @nlh: the message.
 * @tb:  out: @max + 1 entries; entry t is the last attribute of type t or
 *       NULL. Types above @max are skipped (a newer module).
 * @max: the highest type wanted.
 *
 * Return: 0, or -EPROTO for a malformed message.
 */
int tt_nl_parse(const struct nlmsghdr *nlh, const struct nlattr **tb,
		unsigned int max)
{
	struct tt_nl_table t = { tb, max };

	memset(tb, 0, (max + 1) * sizeof(*tb));
	if (mnl_nlmsg_get_payload_len(nlh) < GENL_HDRLEN ||
	    mnl_attr_parse(nlh, GENL_HDRLEN, tt_nl_table_cb, &t) < 0)
		return -EPROTO;
	return 0;
}

/* tt_nl_parse_nested() - tt_nl_parse() for the attributes inside @nest. */
int tt_nl_parse_nested(const struct nlattr *nest, const struct nlattr **tb,
		       unsigned int max)
{
	struct tt_nl_table t = { tb, max };

	memset(tb, 0, (max + 1) * sizeof(*tb));
	if (mnl_attr_parse_nested(nest, tt_nl_table_cb, &t) < 0)
		return -EPROTO;
	return 0;
}

static int tt_nl_group_cb(const struct nlattr *grp, struct tt_nl *nl)
{
	const struct nlattr *tb[CTRL_ATTR_MCAST_GRP_MAX + 1];

	if (tt_nl_parse_nested(grp, tb, CTRL_ATTR_MCAST_GRP_MAX) ||
	    !tb[CTRL_ATTR_MCAST_GRP_NAME] || !tb[CTRL_ATTR_MCAST_GRP_ID] ||
	    mnl_attr_validate(tb[CTRL_ATTR_MCAST_GRP_NAME],
			      MNL_TYPE_NUL_STRING) < 0 ||
	    mnl_attr_validate(tb[CTRL_ATTR_MCAST_GRP_ID], MNL_TYPE_U32) < 0)
		return 0;
	if (!strcmp(mnl_attr_get_str(tb[CTRL_ATTR_MCAST_GRP_NAME]),
		    TT_GENL_MCGRP_EVENTS))
		nl->mcgrp_events = mnl_attr_get_u32(tb[CTRL_ATTR_MCAST_GRP_ID]);
	if (!strcmp(mnl_attr_get_str(tb[CTRL_ATTR_MCAST_GRP_NAME]),
		    TT_GENL_MCGRP_TRACE))
		nl->mcgrp_trace = mnl_attr_get_u32(tb[CTRL_ATTR_MCAST_GRP_ID]);
	return 0;
}

static int tt_nl_family_attr_cb(const struct nlattr *attr, void *data)
{
	struct tt_nl *nl = data;
	const struct nlattr *grp;

	switch (mnl_attr_get_type(attr)) {
	case CTRL_ATTR_FAMILY_ID:
		if (mnl_attr_validate(attr, MNL_TYPE_U16) == 0)
			nl->family = mnl_attr_get_u16(attr);
		break;
	case CTRL_ATTR_MCAST_GROUPS:
		mnl_attr_for_each_nested(grp, attr)
			tt_nl_group_cb(grp, nl);
		break;
	}
	return MNL_CB_OK;
}

static int tt_nl_family_cb(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, GENL_HDRLEN, tt_nl_family_attr_cb, data);
}

/**
 * tt_nl_open() - connect to the tiertrain generic netlink family.
 * @nl: out: the connection.
 *
 * Return: 0, or -errno with @nl->err set; -ENOENT when the family does not
 * exist (the module is not loaded).
 */
int tt_nl_open(struct tt_nl *nl)
{
	struct nlmsghdr *nlh;
	int one = 1, ret;

	memset(nl, 0, sizeof(*nl));
	nl->buf = malloc(TT_NL_BUF_SIZE);
	if (!nl->buf) {
		snprintf(nl->err, sizeof(nl->err), "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	nl->sock = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	if (!nl->sock || mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		snprintf(nl->err, sizeof(nl->err),
			 "cannot open a generic netlink socket: %s",
			 strerror(-ret));
		tt_nl_close(nl);
		return ret;
	}
	/* Older kernels lack these; errors are then just less detailed. */
	mnl_socket_setsockopt(nl->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	nl->portid = mnl_socket_get_portid(nl->sock);
	nl->seq = time(NULL);

	nlh = tt_nl_request(nl, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, TT_GENL_NAME);
	ret = tt_nl_talk(nl, nlh, "generic netlink family lookup",
			 tt_nl_family_cb, nl);
	if (ret == -ENOENT) {
		snprintf(nl->err, sizeof(nl->err),
			 "the tiertrain kernel module is not loaded (generic netlink family \"%s\" not found); try 'modprobe tiertrain'",
			 TT_GENL_NAME);
	} else if (!ret && !nl->family) {
		ret = -EPROTO;
		snprintf(nl->err, sizeof(nl->err),
			 "generic netlink family lookup: the reply for \"%s\" has no family id",
			 TT_GENL_NAME);
	}
	if (ret < 0) {
		tt_nl_close(nl);
		return ret;
	}
	return 0;
}

/* tt_nl_close() - close the connection; the error text stays readable. */
void tt_nl_close(struct tt_nl *nl)
{
	if (nl->sock)
		mnl_socket_close(nl->sock);
	nl->sock = NULL;
	free(nl->buf);
	nl->buf = NULL;
}
