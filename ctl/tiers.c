// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierctl tiers [set --fast LIST --slow LIST]: the node roles
 * (TT_CMD_GET_TIERS, TT_CMD_SET_TIERS), with each node's memory tier,
 * abstract distance source, distance and eviction order as the module
 * reports them (the memory tier read from sysfs for a module that does not
 * send it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/tiertrain.h>

#include "nl.h"
#include "status.h"
#include "tierctl.h"

#define TT_MEMORY_TIERING_DIR	"/sys/devices/virtual/memory_tiering"

const char tt_tiers_usage[] =
	"Usage: tierctl tiers [-j|-p]\n"
	"       tierctl tiers set [--fast LIST] [--slow LIST]\n"
	"\n"
	"Without 'set': which nodes are fast memory (tensors in use live there)\n"
	"and which are slow (idle tensors are evicted there), whether that was\n"
	"set or is automatic (fast: nodes with CPUs; slow: memory-only nodes),\n"
	"and per node with memory:\n"
	"  role    fast, slow or none\n"
	"  source  where the role comes from: cpus (automatic) or param (set)\n"
	"  cpus    online CPUs on the node\n"
	"  tier    the kernel's memory tier (lower is faster: 4 is RAM, 22\n"
	"          NVDIMM or CXL memory onlined by dax/kmem), '-' if none\n"
	"  adist   what gave the node its tier (its abstract distance): dram\n"
	"          (the kernel's default for RAM) or kmem (the dax/kmem driver)\n"
	"  dist    how far the node is from the CPUs: HMAT read latency ('ns')\n"
	"          when the firmware describes it, else the NUMA distance\n"
	"  total, free  the node's memory\n"
	"  evicts  for a fast node: the slow nodes it evicts to, in order: by\n"
	"          memory tier, then distance; a full node spills to the next\n"
	"\n"
	"'set' changes the roles at once (needs CAP_SYS_ADMIN). LIST is a node\n"
	"list such as 1, 1,3 or 2-3, or 'auto' for the automatic choice. A list\n"
	"not given stays as it is. A node cannot be both fast and slow.\n";

/**
 * struct tt_tiers - the parsed TT_CMD_GET_TIERS reply
 * @fast:    TT_A_FAST_NODES ("" when automatic).
 * @slow:    TT_A_SLOW_NODES.
 * @st:      the nodes (in @st.nodes) and parse errors (in @st.err).
 * @replies: reply messages parsed.
 */
struct tt_tiers {
	char fast[256];
	char slow[256];
	struct tt_status st;
	unsigned int replies;
};

static int tt_tiers_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[TT_A_MAX + 1];
	struct tt_tiers *t = data;
	static const unsigned int need[] = {
		TT_A_FAST_NODES, TT_A_SLOW_NODES, TT_A_NODES,
	};
	unsigned int i;
	int ret;

	if (tt_nl_parse(nlh, tb, TT_A_MAX)) {
		snprintf(t->st.err, sizeof(t->st.err),
			 "the module's reply is malformed (message of %u bytes)",
			 nlh->nlmsg_len);
		errno = EPROTO;
		return MNL_CB_ERROR;
	}
	for (i = 0; i < TT_ARRAY_SIZE(need); i++) {
		const struct nlattr *a = tb[need[i]];
		enum mnl_attr_data_type kind = need[i] == TT_A_NODES ?
					       MNL_TYPE_NESTED :
					       MNL_TYPE_NUL_STRING;

		if (!a || mnl_attr_validate(a, kind) < 0) {
			snprintf(t->st.err, sizeof(t->st.err),
				 "the module's reply has %s attribute %u",
				 a ? "a malformed" : "no", need[i]);
			errno = EPROTO;
			return MNL_CB_ERROR;
		}
	}
	snprintf(t->fast, sizeof(t->fast), "%s",
		 mnl_attr_get_str(tb[TT_A_FAST_NODES]));
	snprintf(t->slow, sizeof(t->slow), "%s",
		 mnl_attr_get_str(tb[TT_A_SLOW_NODES]));
	ret = tt_status_parse_nodes(tb[TT_A_NODES], &t->st);
	if (ret < 0) {
		errno = -ret;
		return MNL_CB_ERROR;
	}
	t->replies++;
	return MNL_CB_OK;
}

static void tt_tiers_print_text(const struct tt_ctl *ctl,
				const struct tt_tiers *t, const int *tier_of)
{
	size_t i;

	fprintf(ctl->out, "fast nodes: %s\nslow nodes: %s\n\n",
		t->fast[0] ? t->fast : "automatic (nodes with CPUs)",
		t->slow[0] ? t->slow : "automatic (memory-only nodes)");
	fprintf(ctl->out, "%-5s %-11s %-11s %4s %4s %-5s %6s %10s %10s  %s\n",
		"node", "role", "source", "cpus", "tier", "adist", "dist",
		"total", "free", "evicts");
	for (i = 0; i < t->st.nr_nodes; i++) {
		const struct tt_status_node *n = &t->st.nodes[i];

		tt_status_node_text(ctl->out, n,
				    tt_status_node_tier(n, tier_of,
							TT_MAX_NODES),
				    true);
	}
}

static int tt_tiers_print_json(const struct tt_ctl *ctl,
			       const struct tt_tiers *t, const int *tier_of)
{
	struct tt_json *j = tt_json_new(ctl->out, ctl->pretty);
	size_t i;

	if (!j)
		return -ENOMEM;
	tt_json_object_open(j, NULL);
	tt_json_string(j, "fast_nodes", t->fast);
	tt_json_string(j, "slow_nodes", t->slow);
	tt_json_array_open(j, "nodes");
	for (i = 0; i < t->st.nr_nodes; i++) {
		const struct tt_status_node *n = &t->st.nodes[i];

		tt_status_node_json(j, n,
				    tt_status_node_tier(n, tier_of,
							TT_MAX_NODES));
	}
	tt_json_array_close(j);
	tt_json_object_close(j);
	return tt_json_end(j);
}

static int tt_tiers_show(const struct tt_ctl *ctl, struct tt_nl *nl)
{
	static int tier_of[TT_MAX_NODES];
	struct tt_tiers t;
	struct nlmsghdr *req;
	int ret;

	memset(&t, 0, sizeof(t));
	req = tt_nl_request(nl, nl->family, TT_CMD_GET_TIERS, TT_GENL_VERSION);
	ret = tt_nl_talk(nl, req, "tiers request", tt_tiers_cb, &t);
	if (ret < 0) {
		fprintf(ctl->err, "tierctl: tiers: %s\n",
			t.st.err[0] ? t.st.err : nl->err);
		goto out;
	}
	if (t.replies != 1) {
		fprintf(ctl->err, "tierctl: tiers: the module sent %u replies instead of 1\n",
			t.replies);
		ret = -EPROTO;
		goto out;
	}
	ret = tt_memory_tiers(TT_MEMORY_TIERING_DIR, tier_of, TT_MAX_NODES);
	if (ret < 0) {
		fprintf(ctl->err, "tierctl: tiers: cannot read the memory tiers in %s: %s\n",
			TT_MEMORY_TIERING_DIR, strerror(-ret));
		goto out;
	}
	if (ctl->json) {
		ret = tt_tiers_print_json(ctl, &t, tier_of);
		if (ret < 0)
			fprintf(ctl->err, "tierctl: tiers: cannot print the JSON output: %s\n",
				strerror(-ret));
	} else {
		tt_tiers_print_text(ctl, &t, tier_of);
		ret = 0;
	}
out:
	tt_status_free(&t.st);
	return ret;
}

/**
 * tt_tiers_list_arg() - check a --fast/--slow argument.
 * @s:   the argument: "auto" or a node list ("0", "1,3", "2-3").
 * @out: out: what to send: "" for auto, else @s.
 *
 * Only the characters are checked here; the kernel checks the nodes.
 * Return: 0, or -EINVAL.
 */
int tt_tiers_list_arg(const char *s, const char **out)
{
	const char *p;

	if (!strcmp(s, "auto")) {
		*out = "";
		return 0;
	}
	if (!*s || strlen(s) > 200)
		return -EINVAL;
	for (p = s; *p; p++)
		if (!strchr("0123456789,-", *p))
			return -EINVAL;
	*out = s;
	return 0;
}

/* Parse the arguments of 'tiers set': 0, or -EINVAL (printed). */
static int tt_tiers_set_args(const struct tt_ctl *ctl, int argc, char **argv,
			     const char **fast, const char **slow)
{
	const char **dst;
	int i;

	*fast = NULL;
	*slow = NULL;
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--fast")) {
			dst = fast;
		} else if (!strcmp(argv[i], "--slow")) {
			dst = slow;
		} else {
			fprintf(ctl->err, "tierctl tiers set: unknown argument '%s'; try 'tierctl tiers --help'\n",
				argv[i]);
			return -EINVAL;
		}
		if (i + 1 == argc) {
			fprintf(ctl->err, "tierctl tiers set: %s needs a node list or 'auto'\n",
				argv[i]);
			return -EINVAL;
		}
		if (tt_tiers_list_arg(argv[i + 1], dst)) {
			fprintf(ctl->err, "tierctl tiers set: %s '%s' is not a node list (e.g. 1, 1,3, 2-3) or 'auto'\n",
				argv[i], argv[i + 1]);
			return -EINVAL;
		}
		i++;
	}
	if (!*fast && !*slow) {
		fputs("tierctl tiers set: give --fast LIST, --slow LIST or both\n",
		      ctl->err);
		return -EINVAL;
	}
	return 0;
}

static int tt_tiers_set(const struct tt_ctl *ctl, struct tt_nl *nl,
			const char *fast, const char *slow)
{
	struct nlmsghdr *req;
	int ret;

	req = tt_nl_request(nl, nl->family, TT_CMD_SET_TIERS, TT_GENL_VERSION);
	if (fast)
		mnl_attr_put_strz(req, TT_A_FAST_NODES, fast);
	if (slow)
		mnl_attr_put_strz(req, TT_A_SLOW_NODES, slow);
	ret = tt_nl_talk(nl, req, "tiers set", NULL, NULL);
	if (ret == -EPERM && !strstr(nl->err, "CAP_SYS_ADMIN"))
		fprintf(ctl->err, "tierctl: %s (changing the node roles needs CAP_SYS_ADMIN: run as root)\n",
			nl->err);
	else if (ret < 0)
		fprintf(ctl->err, "tierctl: %s\n", nl->err);
	return ret;
}

int tt_tiers_main(const struct tt_ctl *ctl, int argc, char **argv)
{
	const char *fast = NULL, *slow = NULL;
	struct tt_nl nl;
	int ret;

	if (argc > 1 && strcmp(argv[1], "set")) {
		fprintf(ctl->err, "tierctl tiers: unknown argument '%s'; try 'tierctl tiers --help'\n",
			argv[1]);
		return 1;
	}
	if (argc > 1 && tt_tiers_set_args(ctl, argc, argv, &fast, &slow))
		return 1;
	if (tt_nl_open(&nl) < 0) {
		fprintf(ctl->err, "tierctl: %s\n", nl.err);
		return 1;
	}
	ret = argc > 1 ? tt_tiers_set(ctl, &nl, fast, slow) :
			 tt_tiers_show(ctl, &nl);
	tt_nl_close(&nl);
	return ret < 0 ? 1 : 0;
}
