/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Generic netlink helpers for tierctl (libmnl): resolve the "tiertrain"
 * family, send a request with NLM_F_ACK and extended ACKs enabled, run a
 * callback on each reply, and turn a failure into text.
 */
#ifndef TT_CTL_NL_H
#define TT_CTL_NL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <libmnl/libmnl.h>

/* Receive buffer: a dump part is at most 32 KiB (the kernel's limit). */
#define TT_NL_BUF_SIZE	(64 * 1024)

/**
 * struct tt_nl - a generic netlink connection to the tiertrain family
 * @sock:   the netlink socket.
 * @portid: its port id.
 * @seq:    sequence number of the last request.
 * @family: the resolved id of TT_GENL_NAME.
 * @mcgrp_events: id of its multicast group TT_GENL_MCGRP_EVENTS, 0 when
 *          the module has none.
 * @mcgrp_trace: id of TT_GENL_MCGRP_TRACE, 0 when the module has none.
 * @buf:    TT_NL_BUF_SIZE bytes for requests and replies.
 * @err:    after a failure: what went wrong, as a sentence for a human
 *          (print it after "tierctl: ").
 */
struct tt_nl {
	struct mnl_socket *sock;
	unsigned int portid;
	unsigned int seq;
	uint16_t family;
	uint32_t mcgrp_events;
	uint32_t mcgrp_trace;
	char *buf;
	char err[512];
};

int tt_nl_open(struct tt_nl *nl);
void tt_nl_close(struct tt_nl *nl);
struct nlmsghdr *tt_nl_request(struct tt_nl *nl, uint16_t type, uint8_t cmd,
			       uint8_t version);
int tt_nl_talk(struct tt_nl *nl, struct nlmsghdr *req, const char *what,
	       mnl_cb_t cb, void *data);
int tt_nl_dump(struct tt_nl *nl, struct nlmsghdr *req, const char *what,
	       mnl_cb_t cb, void *data);
int tt_nl_dump_again(struct tt_nl *nl, uint8_t cmd, uint16_t type,
		     uint64_t value, bool u64, const char *what, mnl_cb_t cb,
		     void *data, void (*reset)(void *data), unsigned int tries);
int tt_nl_join(struct tt_nl *nl, uint32_t group, const char *name);
int tt_nl_recv_run(struct tt_nl *nl, const char *who, FILE *err, mnl_cb_t cb,
		   void *data);
int tt_nl_parse(const struct nlmsghdr *nlh, const struct nlattr **tb,
		unsigned int max);
int tt_nl_parse_nested(const struct nlattr *nest, const struct nlattr **tb,
		       unsigned int max);
int tt_nl_done_text(const struct nlmsghdr *nlh, char *buf, size_t len);
int tt_nl_error_text(const struct nlmsghdr *nlh, const struct nlmsghdr *req,
		     char *buf, size_t len);

#endif /* TT_CTL_NL_H */
