// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierctl status: TT_CMD_GET_STATUS, plus the memory tier of each node from
 * /sys/devices/virtual/memory_tiering (read here, in userspace).
 *
 * The reply is checked strictly: every attribute the ABI documents must be
 * there with its documented type, or tierctl says which one is wrong.
 * Attributes this tierctl does not know are skipped (newer modules may add
 * some).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/tiertrain.h>

#include "nl.h"
#include "status.h"

#define TT_MEMORY_TIERING_DIR	"/sys/devices/virtual/memory_tiering"

const char tt_status_usage[] =
	"Usage: tierctl status [-j|-p]\n"
	"\n"
	"Show the tiertrain module's version, ABI version, migration worker\n"
	"pool size, pages per migration batch and open sessions, then one line\n"
	"per online node with memory:\n"
	"  node    the node id\n"
	"  role    fast (tensors in use live here), slow (idle tensors are\n"
	"          evicted here) or none\n"
	"  source  where the role comes from: cpus (automatic: fast with CPUs,\n"
	"          slow without) or param (fast_nodes=/slow_nodes=)\n"
	"  cpus    online CPUs on the node\n"
	"  tier    the kernel's memory tier of the node, '-' if none\n"
	"  total   memory the kernel manages on the node\n"
	"  free    free memory on the node\n";

static const char *const tt_attr_names[TT_A_MAX + 1] = {
	[TT_A_VERSION] = "TT_A_VERSION",
	[TT_A_ABI_VERSION] = "TT_A_ABI_VERSION",
	[TT_A_WORKERS] = "TT_A_WORKERS",
	[TT_A_BATCH_PAGES] = "TT_A_BATCH_PAGES",
	[TT_A_NR_SESSIONS] = "TT_A_NR_SESSIONS",
	[TT_A_NODES] = "TT_A_NODES",
	[TT_A_NODE] = "TT_A_NODE",
};

static const char *const tt_node_attr_names[TT_NODE_A_MAX + 1] = {
	[TT_NODE_A_ID] = "TT_NODE_A_ID",
	[TT_NODE_A_ROLE] = "TT_NODE_A_ROLE",
	[TT_NODE_A_ROLE_SOURCE] = "TT_NODE_A_ROLE_SOURCE",
	[TT_NODE_A_NR_CPUS] = "TT_NODE_A_NR_CPUS",
	[TT_NODE_A_TOTAL_BYTES] = "TT_NODE_A_TOTAL_BYTES",
	[TT_NODE_A_FREE_BYTES] = "TT_NODE_A_FREE_BYTES",
	[TT_NODE_A_SLOW_TARGET] = "TT_NODE_A_SLOW_TARGET",
	[TT_NODE_A_MEMORY_TIER] = "TT_NODE_A_MEMORY_TIER",
	[TT_NODE_A_ADIST_SOURCE] = "TT_NODE_A_ADIST_SOURCE",
	[TT_NODE_A_DISTANCE] = "TT_NODE_A_DISTANCE",
	[TT_NODE_A_DISTANCE_SOURCE] = "TT_NODE_A_DISTANCE_SOURCE",
	[TT_NODE_A_READ_BANDWIDTH] = "TT_NODE_A_READ_BANDWIDTH",
	[TT_NODE_A_EVICT_ORDER] = "TT_NODE_A_EVICT_ORDER",
};

/**
 * struct tt_parse - attributes collected at one nesting level
 * @tb:    the last attribute of each known type, or NULL.
 * @names: their names, for errors.
 * @max:   the highest known type.
 * @st:    where errors are written.
 */
struct tt_parse {
	const struct nlattr *tb[TT_A_MAX + TT_NODE_A_MAX + 2];
	const char *const *names;
	unsigned int max;
	struct tt_status *st;
};

static int tt_parse_attr_cb(const struct nlattr *attr, void *data)
{
	struct tt_parse *p = data;
	unsigned int type = mnl_attr_get_type(attr);

	if (type <= p->max && p->names[type])
		p->tb[type] = attr;
	return MNL_CB_OK;
}

/* Check that attribute @type is present and of @kind; errors go to p->st. */
static bool tt_parse_need(struct tt_parse *p, unsigned int type,
			  enum mnl_attr_data_type kind, const char *where)
{
	const struct nlattr *a = p->tb[type];

	if (!a) {
		snprintf(p->st->err, sizeof(p->st->err),
			 "the module's reply has no %s attribute%s",
			 p->names[type], where);
		return false;
	}
	if (mnl_attr_validate(a, kind) < 0) {
		snprintf(p->st->err, sizeof(p->st->err),
			 "the module's reply has a malformed %s attribute (%u bytes of payload)%s",
			 p->names[type], mnl_attr_get_payload_len(a), where);
		return false;
	}
	return true;
}

static int tt_status_parse_node(const struct nlattr *nest, struct tt_status *st)
{
	struct tt_parse p = {
		.names = tt_node_attr_names, .max = TT_NODE_A_MAX, .st = st,
	};
	static const enum mnl_attr_data_type kinds[] = {
		[TT_NODE_A_ID] = MNL_TYPE_U32,
		[TT_NODE_A_ROLE] = MNL_TYPE_U32,
		[TT_NODE_A_ROLE_SOURCE] = MNL_TYPE_U32,
		[TT_NODE_A_NR_CPUS] = MNL_TYPE_U32,
		[TT_NODE_A_TOTAL_BYTES] = MNL_TYPE_U64,
		[TT_NODE_A_FREE_BYTES] = MNL_TYPE_U64,
		[TT_NODE_A_MEMORY_TIER] = MNL_TYPE_U32,
		[TT_NODE_A_ADIST_SOURCE] = MNL_TYPE_U32,
		[TT_NODE_A_DISTANCE] = MNL_TYPE_U32,
		[TT_NODE_A_DISTANCE_SOURCE] = MNL_TYPE_U32,
		[TT_NODE_A_READ_BANDWIDTH] = MNL_TYPE_U32,
		[TT_NODE_A_EVICT_ORDER] = MNL_TYPE_BINARY,
	};
	struct tt_status_node *nodes, *n;
	const struct nlattr *order;
	char where[48];
	unsigned int t, len;

	snprintf(where, sizeof(where), " in node entry %zu", st->nr_nodes);
	mnl_attr_parse_nested(nest, tt_parse_attr_cb, &p);
	for (t = TT_NODE_A_ID; t <= TT_NODE_A_FREE_BYTES; t++)
		if (!tt_parse_need(&p, t, kinds[t], where))
			return -EPROTO;
	/* the memory tier attributes are optional, checked when present */
	for (t = TT_NODE_A_MEMORY_TIER; t <= TT_NODE_A_MAX; t++)
		if (p.tb[t] && !tt_parse_need(&p, t, kinds[t], where))
			return -EPROTO;
	order = p.tb[TT_NODE_A_EVICT_ORDER];
	len = order ? mnl_attr_get_payload_len(order) : 0;
	if (len % sizeof(uint32_t)) {
		snprintf(st->err, sizeof(st->err),
			 "the module's reply has a malformed TT_NODE_A_EVICT_ORDER attribute (%u bytes of payload)%s",
			 len, where);
		return -EPROTO;
	}
	nodes = realloc(st->nodes, (st->nr_nodes + 1) * sizeof(*nodes));
	if (!nodes) {
		snprintf(st->err, sizeof(st->err), "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	st->nodes = nodes;
	n = &nodes[st->nr_nodes++];
	n->id = mnl_attr_get_u32(p.tb[TT_NODE_A_ID]);
	n->role = mnl_attr_get_u32(p.tb[TT_NODE_A_ROLE]);
	n->role_source = mnl_attr_get_u32(p.tb[TT_NODE_A_ROLE_SOURCE]);
	n->nr_cpus = mnl_attr_get_u32(p.tb[TT_NODE_A_NR_CPUS]);
	n->total_bytes = mnl_attr_get_u64(p.tb[TT_NODE_A_TOTAL_BYTES]);
	n->free_bytes = mnl_attr_get_u64(p.tb[TT_NODE_A_FREE_BYTES]);
	n->slow_target = -1;
	if (p.tb[TT_NODE_A_SLOW_TARGET]) {
		if (mnl_attr_validate(p.tb[TT_NODE_A_SLOW_TARGET],
				      MNL_TYPE_U32) < 0) {
			snprintf(st->err, sizeof(st->err),
				 "the module's reply has a malformed TT_NODE_A_SLOW_TARGET attribute%s",
				 where);
			return -EPROTO;
		}
		n->slow_target = mnl_attr_get_u32(p.tb[TT_NODE_A_SLOW_TARGET]);
	}
	n->memory_tier = p.tb[TT_NODE_A_MEMORY_TIER] ?
		(int64_t)mnl_attr_get_u32(p.tb[TT_NODE_A_MEMORY_TIER]) : -1;
	n->adist_source = p.tb[TT_NODE_A_ADIST_SOURCE] ?
		(int64_t)mnl_attr_get_u32(p.tb[TT_NODE_A_ADIST_SOURCE]) : -1;
	n->distance = p.tb[TT_NODE_A_DISTANCE] ?
		mnl_attr_get_u32(p.tb[TT_NODE_A_DISTANCE]) : 0;
	n->dist_source = p.tb[TT_NODE_A_DISTANCE] &&
			 p.tb[TT_NODE_A_DISTANCE_SOURCE] ?
		(int64_t)mnl_attr_get_u32(p.tb[TT_NODE_A_DISTANCE_SOURCE]) : -1;
	n->read_bw_mbps = p.tb[TT_NODE_A_READ_BANDWIDTH] ?
		mnl_attr_get_u32(p.tb[TT_NODE_A_READ_BANDWIDTH]) : 0;
	n->nr_evict_order = 0;
	if (order) {
		const uint32_t *ids = mnl_attr_get_payload(order);

		for (t = 0; t < len / sizeof(*ids) &&
			    t < TT_STATUS_ORDER_MAX; t++)
			memcpy(&n->evict_order[t], &ids[t], sizeof(*ids));
		n->nr_evict_order = t;
	}
	return 0;
}

/**
 * tt_status_parse_nodes() - the TT_A_NODE entries of a TT_A_NODES nest.
 * @nodes: the TT_A_NODES attribute.
 * @st:    out: @st->nodes and @st->nr_nodes are appended to.
 *
 * Return: 0, or -errno with @st->err set.
 */
int tt_status_parse_nodes(const struct nlattr *nodes, struct tt_status *st)
{
	const struct nlattr *a;
	int ret;

	mnl_attr_for_each_nested(a, nodes) {
		if (mnl_attr_get_type(a) != TT_A_NODE)
			continue;
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) < 0) {
			snprintf(st->err, sizeof(st->err),
				 "the module's reply has a malformed TT_A_NODE attribute (entry %zu)",
				 st->nr_nodes);
			return -EPROTO;
		}
		ret = tt_status_parse_node(a, st);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/**
 * tt_status_parse() - parse one TT_CMD_GET_STATUS reply into @st.
 * @nlh: the generic netlink reply.
 * @st:  the status (zeroed by the caller before the first reply).
 *
 * Return: MNL_CB_OK, or MNL_CB_ERROR with errno and @st->err set.
 */
int tt_status_parse(const struct nlmsghdr *nlh, struct tt_status *st)
{
	struct tt_parse p = {
		.names = tt_attr_names, .max = TT_A_MAX, .st = st,
	};
	static const enum mnl_attr_data_type kinds[] = {
		[TT_A_VERSION] = MNL_TYPE_NUL_STRING,
		[TT_A_ABI_VERSION] = MNL_TYPE_U32,
		[TT_A_WORKERS] = MNL_TYPE_U32,
		[TT_A_BATCH_PAGES] = MNL_TYPE_U32,
		[TT_A_NR_SESSIONS] = MNL_TYPE_U32,
		[TT_A_NODES] = MNL_TYPE_NESTED,
	};
	unsigned int t;
	int ret;

	if (mnl_nlmsg_get_payload_len(nlh) < GENL_HDRLEN ||
	    mnl_attr_parse(nlh, GENL_HDRLEN, tt_parse_attr_cb, &p) < 0) {
		snprintf(st->err, sizeof(st->err),
			 "the module's reply is malformed (message of %u bytes)",
			 nlh->nlmsg_len);
		errno = EPROTO;
		return MNL_CB_ERROR;
	}
	for (t = TT_A_VERSION; t <= TT_A_NODES; t++) {
		if (!tt_parse_need(&p, t, kinds[t], "")) {
			errno = EPROTO;
			return MNL_CB_ERROR;
		}
	}
	snprintf(st->version, sizeof(st->version), "%s",
		 mnl_attr_get_str(p.tb[TT_A_VERSION]));
	st->abi = mnl_attr_get_u32(p.tb[TT_A_ABI_VERSION]);
	st->workers = mnl_attr_get_u32(p.tb[TT_A_WORKERS]);
	st->batch_pages = mnl_attr_get_u32(p.tb[TT_A_BATCH_PAGES]);
	st->sessions = mnl_attr_get_u32(p.tb[TT_A_NR_SESSIONS]);
	ret = tt_status_parse_nodes(p.tb[TT_A_NODES], st);
	if (ret < 0) {
		errno = -ret;
		return MNL_CB_ERROR;
	}
	st->replies++;
	return MNL_CB_OK;
}

static int tt_status_cb(const struct nlmsghdr *nlh, void *data)
{
	return tt_status_parse(nlh, data);
}

void tt_status_free(struct tt_status *st)
{
	free(st->nodes);
	st->nodes = NULL;
	st->nr_nodes = 0;
}

/* tt_status_role_name() - "none", "fast", "slow" or "unknown(N)". */
const char *tt_status_role_name(uint32_t role, char *buf, size_t len)
{
	static const char *const names[] = {
		[TT_ROLE_NONE] = "none",
		[TT_ROLE_FAST] = "fast",
		[TT_ROLE_SLOW] = "slow",
	};

	return tt_enum_name(names, TT_ARRAY_SIZE(names), role, buf, len);
}

/* tt_status_source_name() - "cpus", "param" or "unknown(N)". */
const char *tt_status_source_name(uint32_t source, char *buf, size_t len)
{
	static const char *const names[] = {
		[TT_ROLE_SRC_CPUS] = "cpus",
		[TT_ROLE_SRC_PARAM] = "param",
	};

	return tt_enum_name(names, TT_ARRAY_SIZE(names), source, buf, len);
}

/* tt_status_adist_name() - "none", "dram", "kmem", "hmat" or "unknown(N)". */
const char *tt_status_adist_name(int64_t source, char *buf, size_t len)
{
	static const char *const names[] = {
		[TT_ADIST_SRC_NONE] = "none",
		[TT_ADIST_SRC_DRAM] = "dram",
		[TT_ADIST_SRC_KMEM] = "kmem",
		[TT_ADIST_SRC_HMAT] = "hmat",
	};

	return tt_enum_name(names, TT_ARRAY_SIZE(names), source, buf, len);
}

/**
 * tt_status_node_tier() - a node's memory tier, -1 for none
 * @n:          the node.
 * @tier_of:    memory tier per node id read from sysfs, -1 for none.
 * @nr_tier_of: entries in @tier_of.
 *
 * Return: the module's TT_NODE_A_MEMORY_TIER, or @tier_of's entry for a
 * module that does not send the memory tier attributes.
 */
int tt_status_node_tier(const struct tt_status_node *n, const int *tier_of,
			int nr_tier_of)
{
	if (n->memory_tier >= 0 || n->adist_source >= 0)
		return n->memory_tier;
	return n->id < (uint32_t)nr_tier_of ? tier_of[n->id] : -1;
}

/* "150ns" (HMAT), "20" (SLIT) or "-". */
static const char *tt_status_dist_text(const struct tt_status_node *n,
				       char *buf, size_t len)
{
	if (n->dist_source == TT_DIST_SRC_HMAT)
		snprintf(buf, len, "%uns", n->distance);
	else if (n->dist_source == TT_DIST_SRC_SLIT)
		snprintf(buf, len, "%u", n->distance);
	else
		snprintf(buf, len, "-");
	return buf;
}

/*
 * The eviction order ("1,2"), the slow target of a module that does not
 * send the order, or "-".
 */
static const char *tt_status_order_text(const struct tt_status_node *n,
					char *buf, size_t len)
{
	size_t off = 0;
	unsigned int i;

	if (!n->nr_evict_order && n->slow_target >= 0)
		snprintf(buf, len, "%d", n->slow_target);
	else
		snprintf(buf, len, "-");
	for (i = 0; i < n->nr_evict_order && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%u", i ? "," : "",
				n->evict_order[i]);
	return buf;
}

/**
 * tt_status_node_json() - one node as a JSON object (status and tiers).
 * @j:    the writer.
 * @n:    the node.
 * @tier: its memory tier, -1 for none.
 */
void tt_status_node_json(struct tt_json *j, const struct tt_status_node *n,
			 int tier)
{
	char b1[32], b2[32];
	unsigned int i;

	tt_json_object_open(j, NULL);
	tt_json_u64(j, "node", n->id);
	tt_json_string(j, "role", tt_status_role_name(n->role, b1, sizeof(b1)));
	tt_json_string(j, "role_source",
		       tt_status_source_name(n->role_source, b2, sizeof(b2)));
	tt_json_u64(j, "cpus", n->nr_cpus);
	if (tier >= 0)
		tt_json_i64(j, "memory_tier", tier);
	else
		tt_json_null(j, "memory_tier");
	tt_json_u64(j, "total_bytes", n->total_bytes);
	tt_json_u64(j, "free_bytes", n->free_bytes);
	if (n->slow_target >= 0)
		tt_json_i64(j, "slow_target", n->slow_target);
	else
		tt_json_null(j, "slow_target");
	if (n->adist_source >= 0)
		tt_json_string(j, "adist_source",
			       tt_status_adist_name(n->adist_source, b1,
						    sizeof(b1)));
	else
		tt_json_null(j, "adist_source");
	if (n->dist_source >= 0) {
		tt_json_u64(j, "distance", n->distance);
		tt_json_string(j, "distance_source",
			       n->dist_source == TT_DIST_SRC_HMAT ? "hmat" :
			       n->dist_source == TT_DIST_SRC_SLIT ? "slit" :
			       "unknown");
	} else {
		tt_json_null(j, "distance");
		tt_json_null(j, "distance_source");
	}
	if (n->read_bw_mbps)
		tt_json_u64(j, "read_bandwidth_mbps", n->read_bw_mbps);
	else
		tt_json_null(j, "read_bandwidth_mbps");
	tt_json_array_open(j, "evict_order");
	for (i = 0; i < n->nr_evict_order; i++)
		tt_json_u64(j, NULL, n->evict_order[i]);
	tt_json_array_close(j);
	tt_json_object_close(j);
}

/**
 * tt_status_node_text() - one node as a table row (status and tiers).
 * @out:    the stream.
 * @n:      the node.
 * @tier:   its memory tier, -1 for none.
 * @target: the row of tierctl tiers: with the adist, dist and evicts
 *          columns.
 */
void tt_status_node_text(FILE *out, const struct tt_status_node *n, int tier,
			 bool target)
{
	char b1[32], b2[32], b3[32], total[32], free_b[32], tier_s[16];
	char dist[16], order[64];

	snprintf(tier_s, sizeof(tier_s), tier >= 0 ? "%d" : "-", tier);
	tt_fmt_bytes(n->total_bytes, total, sizeof(total));
	tt_fmt_bytes(n->free_bytes, free_b, sizeof(free_b));
	if (!target) {
		fprintf(out, "%-5u %-11s %-11s %4u %4s %10s %10s\n", n->id,
			tt_status_role_name(n->role, b1, sizeof(b1)),
			tt_status_source_name(n->role_source, b2, sizeof(b2)),
			n->nr_cpus, tier_s, total, free_b);
		return;
	}
	fprintf(out, "%-5u %-11s %-11s %4u %4s %-5s %6s %10s %10s  %s\n",
		n->id, tt_status_role_name(n->role, b1, sizeof(b1)),
		tt_status_source_name(n->role_source, b2, sizeof(b2)),
		n->nr_cpus, tier_s,
		n->adist_source >= 0 ?
		tt_status_adist_name(n->adist_source, b3, sizeof(b3)) : "-",
		tt_status_dist_text(n, dist, sizeof(dist)), total, free_b,
		tt_status_order_text(n, order, sizeof(order)));
}

static int tt_status_print_json(const struct tt_ctl *ctl,
				const struct tt_status *st,
				const int *tier_of, int nr_tier_of)
{
	struct tt_json *j = tt_json_new(ctl->out, ctl->pretty);
	size_t i;

	if (!j)
		return -ENOMEM;
	tt_json_object_open(j, NULL);
	tt_json_string(j, "version", st->version);
	tt_json_u64(j, "abi", st->abi);
	tt_json_u64(j, "workers", st->workers);
	tt_json_u64(j, "batch_pages", st->batch_pages);
	tt_json_u64(j, "sessions", st->sessions);
	tt_json_array_open(j, "nodes");
	for (i = 0; i < st->nr_nodes; i++)
		tt_status_node_json(j, &st->nodes[i],
				    tt_status_node_tier(&st->nodes[i], tier_of,
							nr_tier_of));
	tt_json_array_close(j);
	tt_json_object_close(j);
	return tt_json_end(j);
}

static void tt_status_print_text(const struct tt_ctl *ctl,
				 const struct tt_status *st,
				 const int *tier_of, int nr_tier_of)
{
	size_t i;

	fprintf(ctl->out,
		"module version: %s\n"
		"abi version:    %u\n"
		"workers:        %u\n"
		"batch pages:    %u\n"
		"sessions:       %u\n"
		"\n",
		st->version, st->abi, st->workers, st->batch_pages,
		st->sessions);
	fprintf(ctl->out, "%-5s %-11s %-11s %4s %4s %10s %10s\n", "node",
		"role", "source", "cpus", "tier", "total", "free");
	for (i = 0; i < st->nr_nodes; i++)
		tt_status_node_text(ctl->out, &st->nodes[i],
				    tt_status_node_tier(&st->nodes[i], tier_of,
							nr_tier_of), false);
}

/**
 * tt_status_print() - print @st as text or JSON.
 * @ctl:        global options.
 * @st:         the status.
 * @tier_of:    memory tier per node id, -1 for none.
 * @nr_tier_of: entries in @tier_of.
 *
 * Return: 0, or -errno.
 */
int tt_status_print(const struct tt_ctl *ctl, const struct tt_status *st,
		    const int *tier_of, int nr_tier_of)
{
	if (ctl->json)
		return tt_status_print_json(ctl, st, tier_of, nr_tier_of);
	tt_status_print_text(ctl, st, tier_of, nr_tier_of);
	return 0;
}

int tt_status_main(const struct tt_ctl *ctl, int argc, char **argv)
{
	static int tier_of[TT_MAX_NODES];
	struct tt_status st = { 0 };
	struct nlmsghdr *req;
	struct tt_nl nl;
	int ret, tiers;

	if (argc > 1) {
		fprintf(ctl->err, "tierctl status: unexpected argument '%s'; try 'tierctl status --help'\n",
			argv[1]);
		return 1;
	}
	if (tt_nl_open(&nl) < 0) {
		fprintf(ctl->err, "tierctl: %s\n", nl.err);
		return 1;
	}
	req = tt_nl_request(&nl, nl.family, TT_CMD_GET_STATUS,
			    TT_GENL_VERSION);
	ret = tt_nl_talk(&nl, req, "status request", tt_status_cb, &st);
	tt_nl_close(&nl);
	if (ret < 0) {
		if (st.err[0])
			fprintf(ctl->err, "tierctl: status: %s\n", st.err);
		else
			fprintf(ctl->err, "tierctl: %s\n", nl.err);
		goto fail;
	}
	if (st.replies != 1) {
		fprintf(ctl->err, "tierctl: status: the module sent %u replies to the status request instead of 1\n",
			st.replies);
		goto fail;
	}
	tiers = tt_memory_tiers(TT_MEMORY_TIERING_DIR, tier_of, TT_MAX_NODES);
	if (tiers < 0) {
		fprintf(ctl->err, "tierctl: status: cannot read the memory tiers in %s: %s\n",
			TT_MEMORY_TIERING_DIR, strerror(-tiers));
		goto fail;
	}
	ret = tt_status_print(ctl, &st, tier_of, TT_MAX_NODES);
	if (ret < 0) {
		fprintf(ctl->err, "tierctl: status: cannot print the JSON output: %s\n",
			strerror(-ret));
		goto fail;
	}
	tt_status_free(&st);
	return 0;
fail:
	tt_status_free(&st);
	return 1;
}
