// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "tiertrain" used by tierctl.
 *
 * TT_CMD_GET_STATUS (any user) replies with the module version, the pool
 * settings, the number of sessions and, per online node with memory, its
 * role, CPUs and memory. Requests are validated strictly: the command takes
 * no attributes, so every attribute is rejected with an extended ACK that
 * points at it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/nodemask.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <linux/tiertrain.h>

#include "migrate.h"
#include "netlink.h"
#include "session.h"
#include "tiers.h"
#include "version.h"

static const struct nla_policy tt_status_policy[TT_A_MAX + 1] = {
	[TT_A_PAD ... TT_A_MAX] = {
		.type = NLA_REJECT,
		.reject_message = "TT_CMD_GET_STATUS takes no attributes (this one is reply-only)",
	},
};

static struct genl_family tt_genl_family;

/* Upper bound of the reply's payload. */
static size_t tt_nl_status_size(void)
{
	size_t node = nla_total_size(0) +			/* TT_A_NODE */
		      4 * nla_total_size(sizeof(u32)) +		/* id..nr_cpus */
		      2 * nla_total_size_64bit(sizeof(u64));	/* bytes */

	return nla_total_size(sizeof(TT_VERSION)) +
	       4 * nla_total_size(sizeof(u32)) +
	       nla_total_size(0) +				/* TT_A_NODES */
	       nr_node_ids * node;
}

static int tt_nl_put_node(struct sk_buff *msg, int nid)
{
	enum tt_role_source source;
	enum tt_node_role role = tt_tier_role(nid, &source);
	struct tt_node_info info;
	struct nlattr *nest;

	tt_tier_node_info(nid, &info);
	nest = nla_nest_start(msg, TT_A_NODE);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(msg, TT_NODE_A_ID, nid) ||
	    nla_put_u32(msg, TT_NODE_A_ROLE, role) ||
	    nla_put_u32(msg, TT_NODE_A_ROLE_SOURCE, source) ||
	    nla_put_u32(msg, TT_NODE_A_NR_CPUS, info.nr_cpus) ||
	    nla_put_u64_64bit(msg, TT_NODE_A_TOTAL_BYTES, info.total_bytes,
			      TT_NODE_A_PAD) ||
	    nla_put_u64_64bit(msg, TT_NODE_A_FREE_BYTES, info.free_bytes,
			      TT_NODE_A_PAD)) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

static int tt_nl_put_status(struct sk_buff *msg)
{
	struct nlattr *nodes;
	int nid;

	if (nla_put_string(msg, TT_A_VERSION, TT_VERSION) ||
	    nla_put_u32(msg, TT_A_ABI_VERSION, TT_ABI_VERSION) ||
	    nla_put_u32(msg, TT_A_WORKERS, tt_migrate_workers()) ||
	    nla_put_u32(msg, TT_A_BATCH_PAGES, tt_migrate_batch_pages()) ||
	    nla_put_u32(msg, TT_A_NR_SESSIONS, tt_session_count()))
		return -EMSGSIZE;
	nodes = nla_nest_start(msg, TT_A_NODES);
	if (!nodes)
		return -EMSGSIZE;
	for_each_node_state(nid, N_MEMORY) {
		if (tt_nl_put_node(msg, nid))
			return -EMSGSIZE;
	}
	nla_nest_end(msg, nodes);
	return 0;
}

static int tt_nl_get_status(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(tt_nl_status_size(), GFP_KERNEL);
	if (!msg) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "no memory for the status reply");
		return -ENOMEM;
	}
	hdr = genlmsg_put_reply(msg, info, &tt_genl_family, 0,
				TT_CMD_GET_STATUS);
	if (!hdr || tt_nl_put_status(msg)) {
		nlmsg_free(msg);
		NL_SET_ERR_MSG_MOD(info->extack,
				   "the status does not fit in the reply message");
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static const struct genl_ops tt_genl_ops[] = {
	{
		.cmd = TT_CMD_GET_STATUS,
		.doit = tt_nl_get_status,
		.policy = tt_status_policy,
		.maxattr = TT_A_MAX,
	},
};

static struct genl_family tt_genl_family __ro_after_init = {
	.name = TT_GENL_NAME,
	.version = TT_GENL_VERSION,
	.netnsok = true,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.ops = tt_genl_ops,
	.n_ops = ARRAY_SIZE(tt_genl_ops),
};

/**
 * tt_netlink_init() - register the generic netlink family
 *
 * Return: 0 or the error of genl_register_family().
 */
int __init tt_netlink_init(void)
{
	return genl_register_family(&tt_genl_family);
}

/**
 * tt_netlink_exit() - unregister the family
 */
void tt_netlink_exit(void)
{
	genl_unregister_family(&tt_genl_family);
}
