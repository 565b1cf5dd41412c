// SPDX-License-Identifier: GPL-2.0
/*
 * Node roles: which nodes are fast memory and which are slow.
 *
 * Automatic roles: a node with memory and CPUs is fast, a node with memory
 * and no CPUs (CXL expander, NVMM, emulated memory-only node) is slow. The
 * module parameters fast_nodes= and slow_nodes= override that: a node named
 * in one of them has that role; when a list is given, nodes that would have
 * had that role automatically but are not in it get no role. Roles are
 * evaluated on every call, so memory or CPUs hot-added later get their
 * automatic role at once.
 *
 * Eviction order. A fast node evicts to its slow nodes nearest first:
 * ordered by the kernel's memory tier (memtiers.c reads it: on 6.1 RAM is
 * tier 4 and NVDIMM or CXL memory onlined by dax/kmem tier 22, so a RAM
 * node without CPUs comes before them), then, inside a tier, by HMAT read
 * latency when the firmware describes both nodes, else by NUMA distance
 * (SLIT), then by node id. The migration engine takes the first node of
 * that order with a free page for each page, so a full node spills to the
 * next one. A node whose memory is being offlined leaves the order at once;
 * the order is computed on each call from the current node states and the
 * latest memory tier view, so hotplug needs no further step here.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/moduleparam.h>
#include <linux/nodemask.h>
#include <linux/seqlock.h>
#include <linux/topology.h>
#include <linux/vmstat.h>

#include "memtiers.h"
#include "tiers.h"

static char *tt_fast_nodes;
module_param_named(fast_nodes, tt_fast_nodes, charp, 0444);
MODULE_PARM_DESC(fast_nodes,
		 "Node list (e.g. \"0\", \"0,2\", \"0-1\") used as fast memory instead of the nodes with CPUs; empty: automatic");

static char *tt_slow_nodes;
module_param_named(slow_nodes, tt_slow_nodes, charp, 0444);
MODULE_PARM_DESC(slow_nodes,
		 "Node list used as slow memory instead of the memory-only nodes; empty: automatic");

/*
 * The overrides: the parsed parameters after tt_tiers_init(), changed by
 * tt_tiers_set() (tierctl tiers set); readers retry while a writer runs.
 */
static DEFINE_SEQLOCK(tt_tiers_lock);
static nodemask_t tt_fast_mask;
static nodemask_t tt_slow_mask;
static bool tt_fast_given;
static bool tt_slow_given;

/* Every node of @mask must exist and have memory: 0, or -errno and *@bad. */
static int tt_tiers_check_mask(const nodemask_t *mask, int *bad)
{
	int nid;

	for_each_node_mask(nid, *mask) {
		*bad = nid;
		if (nid >= nr_node_ids)
			return -EINVAL;
		if (!node_state(nid, N_MEMORY))
			return -ENODEV;
	}
	return 0;
}

static int tt_tiers_parse(const char *param, const char *text,
			  nodemask_t *mask, bool *given)
{
	int nid, ret;

	nodes_clear(*mask);
	*given = text && *text;
	if (!*given)
		return 0;

	ret = nodelist_parse(text, *mask);
	if (ret) {
		pr_err("%s=\"%s\" is not a node list (expected e.g. \"0\", \"1,2\" or \"2-3\")\n",
		       param, text);
		return -EINVAL;
	}
	ret = tt_tiers_check_mask(mask, &nid);
	if (ret == -EINVAL)
		pr_err("%s=\"%s\": node %d does not exist (this system has nodes 0-%u)\n",
		       param, text, nid, nr_node_ids - 1);
	else if (ret)
		pr_err("%s=\"%s\": node %d is offline or has no memory\n",
		       param, text, nid);
	return ret ? -EINVAL : 0;
}

/* tt_tier_role() inside a read section of tt_tiers_lock. */
static enum tt_node_role tt_tier_role_of(int nid, enum tt_role_source *source)
{
	enum tt_role_source src = TT_ROLE_SRC_CPUS;
	enum tt_node_role role = TT_ROLE_NONE;

	if (nid < 0 || nid >= nr_node_ids)
		goto out;
	if (tt_fast_given && node_isset(nid, tt_fast_mask)) {
		src = TT_ROLE_SRC_PARAM;
		role = TT_ROLE_FAST;
		goto out;
	}
	if (tt_slow_given && node_isset(nid, tt_slow_mask)) {
		src = TT_ROLE_SRC_PARAM;
		role = TT_ROLE_SLOW;
		goto out;
	}
	if (!node_state(nid, N_MEMORY))
		goto out;
	role = node_state(nid, N_CPU) ? TT_ROLE_FAST : TT_ROLE_SLOW;
	if ((role == TT_ROLE_FAST && tt_fast_given) ||
	    (role == TT_ROLE_SLOW && tt_slow_given)) {
		src = TT_ROLE_SRC_PARAM;
		role = TT_ROLE_NONE;
	}
out:
	if (source)
		*source = src;
	return role;
}

/**
 * tt_tier_role() - the role of a node
 * @nid:    node id.
 * @source: out (may be NULL): why the node has that role.
 *
 * Return: TT_ROLE_FAST, TT_ROLE_SLOW, or TT_ROLE_NONE for an invalid node,
 * a node without memory or a node an override left out.
 */
enum tt_node_role tt_tier_role(int nid, enum tt_role_source *source)
{
	enum tt_node_role role;
	unsigned int seq;

	do {
		seq = read_seqbegin(&tt_tiers_lock);
		role = tt_tier_role_of(nid, source);
	} while (read_seqretry(&tt_tiers_lock, seq));
	return role;
}

/**
 * tt_tiers_set() - change the fast/slow overrides while loaded
 * @req: what to change.
 * @bad: out: with -EINVAL, -ENODEV or -EEXIST, the node at fault.
 *
 * Return: 0; -EINVAL (a node id the kernel does not have), -ENODEV (a node
 * offline or without memory), -EEXIST (a node in both lists, counting a
 * list left unchanged); nothing changes then.
 */
int tt_tiers_set(const struct tt_tiers_req *req, int *bad)
{
	nodemask_t fast, slow, both;
	bool fast_given, slow_given;
	unsigned int seq;
	int ret;

	do {
		seq = read_seqbegin(&tt_tiers_lock);
		fast = tt_fast_mask;
		slow = tt_slow_mask;
		fast_given = tt_fast_given;
		slow_given = tt_slow_given;
	} while (read_seqretry(&tt_tiers_lock, seq));
	if (req->set_fast) {
		ret = tt_tiers_check_mask(&req->fast, bad);
		if (ret)
			return ret;
		fast = req->fast;
		fast_given = !nodes_empty(fast);
	}
	if (req->set_slow) {
		ret = tt_tiers_check_mask(&req->slow, bad);
		if (ret)
			return ret;
		slow = req->slow;
		slow_given = !nodes_empty(slow);
	}
	nodes_and(both, fast, slow);
	if (fast_given && slow_given && !nodes_empty(both)) {
		*bad = first_node(both);
		return -EEXIST;
	}

	write_seqlock(&tt_tiers_lock);
	tt_fast_mask = fast;
	tt_slow_mask = slow;
	tt_fast_given = fast_given;
	tt_slow_given = slow_given;
	write_sequnlock(&tt_tiers_lock);
	pr_info("roles set: fast nodes \"%*pbl\"%s, slow nodes \"%*pbl\"%s\n",
		nodemask_pr_args(&fast), fast_given ? "" : " (automatic)",
		nodemask_pr_args(&slow), slow_given ? "" : " (automatic)");
	return 0;
}

/**
 * tt_tiers_get() - the overrides in force, as node lists
 * @fast: out: e.g. "0" or "0-1"; "" when the fast nodes are automatic.
 * @slow: out: the same for the slow nodes.
 * @len:  size of each buffer.
 */
void tt_tiers_get(char *fast, char *slow, size_t len)
{
	unsigned int seq;

	do {
		seq = read_seqbegin(&tt_tiers_lock);
		if (tt_fast_given)
			scnprintf(fast, len, "%*pbl",
				  nodemask_pr_args(&tt_fast_mask));
		else
			fast[0] = 0;
		if (tt_slow_given)
			scnprintf(slow, len, "%*pbl",
				  nodemask_pr_args(&tt_slow_mask));
		else
			slow[0] = 0;
	} while (read_seqretry(&tt_tiers_lock, seq));
}

/**
 * tt_tier_role_name() - printable name of a role
 * @role: the role.
 *
 * Return: "fast", "slow" or "none".
 */
const char *tt_tier_role_name(enum tt_node_role role)
{
	switch (role) {
	case TT_ROLE_FAST:
		return "fast";
	case TT_ROLE_SLOW:
		return "slow";
	default:
		return "none";
	}
}

/* Is @a before @b in the eviction order of @fast_nid? */
static bool tt_tier_before(int fast_nid, int a, int b)
{
	struct tt_memtier_node ma, mb;
	int ta, tb, da, db;

	tt_memtiers_node(a, &ma);
	tt_memtiers_node(b, &mb);
	ta = ma.tier < 0 ? INT_MAX : ma.tier;
	tb = mb.tier < 0 ? INT_MAX : mb.tier;
	if (ta != tb)
		return ta < tb;
	if (ma.read_latency_ns && mb.read_latency_ns &&
	    ma.read_latency_ns != mb.read_latency_ns)
		return ma.read_latency_ns < mb.read_latency_ns;
	da = node_distance(fast_nid, a);
	db = node_distance(fast_nid, b);
	if (da != db)
		return da < db;
	return a < b;
}

/**
 * tt_tier_evict_order() - the slow nodes a fast node evicts to, in order
 * @fast_nid: the node the data is on, or the CPUs' node (any valid id).
 * @nids:     out: node ids, nearest first.
 * @max:      room in @nids.
 *
 * Only slow nodes with memory that is not being offlined are listed; see
 * the comment at the top for the order.
 *
 * Return: the number of nodes written, 0 when there is no slow node.
 */
int tt_tier_evict_order(int fast_nid, int *nids, int max)
{
	nodemask_t left = NODE_MASK_NONE;
	int n = 0, nid, best;

	if (fast_nid < 0 || fast_nid >= nr_node_ids)
		return 0;
	for_each_node_state(nid, N_MEMORY) {
		if (nid != fast_nid && !tt_memtiers_leaving(nid) &&
		    tt_tier_role(nid, NULL) == TT_ROLE_SLOW)
			node_set(nid, left);
	}
	while (n < max && !nodes_empty(left)) {
		best = NUMA_NO_NODE;
		for_each_node_mask(nid, left)
			if (best == NUMA_NO_NODE ||
			    tt_tier_before(fast_nid, nid, best))
				best = nid;
		node_clear(best, left);
		nids[n++] = best;
	}
	return n;
}

/**
 * tt_tier_nearest_slow() - the first node of a fast node's eviction order
 * @fast_nid: the fast node (any valid node id).
 *
 * Return: a node id, or NUMA_NO_NODE when there is no slow node with memory.
 */
int tt_tier_nearest_slow(int fast_nid)
{
	int nid;

	return tt_tier_evict_order(fast_nid, &nid, 1) ? nid : NUMA_NO_NODE;
}

/**
 * tt_tier_node_perf() - a node's memory tier and distance, for tierctl
 * @nid:  an online node.
 * @perf: out.
 */
void tt_tier_node_perf(int nid, struct tt_node_perf *perf)
{
	struct tt_memtier_node m;
	int f, d, best = INT_MAX;

	tt_memtiers_node(nid, &m);
	perf->memory_tier = m.tier;
	perf->adist_src = m.adist_src;
	perf->read_bw_mbps = m.read_bw_mbps;
	if (m.read_latency_ns) {
		perf->distance = m.read_latency_ns;
		perf->dist_src = TT_DIST_SRC_HMAT;
		return;
	}
	for_each_node_state(f, N_MEMORY) {
		if (tt_tier_role(f, NULL) != TT_ROLE_FAST)
			continue;
		d = node_distance(f, nid);
		if (d < best)
			best = d;
	}
	perf->distance = best == INT_MAX ? node_distance(nid, nid) : best;
	perf->dist_src = TT_DIST_SRC_SLIT;
}

/**
 * tt_tier_node_check() - can pages be moved to this node?
 * @nid: node id from user space.
 *
 * Return: 0, -EINVAL when @nid is not a possible node id, -ENODEV when the
 * node is offline or has no memory.
 */
int tt_tier_node_check(int nid)
{
	if (nid < 0 || nid >= nr_node_ids)
		return -EINVAL;
	if (!node_online(nid) || !node_state(nid, N_MEMORY))
		return -ENODEV;
	return 0;
}

/**
 * tt_tier_node_info() - CPUs and memory of a node
 * @nid:  an online node.
 * @info: out.
 */
void tt_tier_node_info(int nid, struct tt_node_info *info)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	unsigned long managed = 0, free = 0;
	int z;

	for (z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];

		managed += zone_managed_pages(zone);
		free += zone_page_state(zone, NR_FREE_PAGES);
	}
	info->nr_cpus = cpumask_weight_and(cpumask_of_node(nid),
					   cpu_online_mask);
	info->total_bytes = (u64)managed << PAGE_SHIFT;
	info->free_bytes = (u64)free << PAGE_SHIFT;
}

/**
 * tt_tiers_init() - parse fast_nodes= and slow_nodes=, log the roles
 *
 * Nothing is allocated, so there is no tt_tiers_exit(). Needs the memory
 * tier view (tt_memtiers_init()) for the order it logs.
 *
 * Return: 0, or -EINVAL (with a message naming the bad text) for a bad list.
 */
int tt_tiers_init(void)
{
	enum tt_role_source src;
	struct tt_node_info info;
	struct tt_node_perf perf;
	int nid, ret;

	ret = tt_tiers_parse("fast_nodes", tt_fast_nodes, &tt_fast_mask,
			     &tt_fast_given);
	if (ret)
		return ret;
	ret = tt_tiers_parse("slow_nodes", tt_slow_nodes, &tt_slow_mask,
			     &tt_slow_given);
	if (ret)
		return ret;
	for_each_node_mask(nid, tt_fast_mask) {
		if (tt_slow_given && node_isset(nid, tt_slow_mask)) {
			pr_err("node %d is in both fast_nodes=\"%s\" and slow_nodes=\"%s\"\n",
			       nid, tt_fast_nodes, tt_slow_nodes);
			return -EINVAL;
		}
	}

	for_each_node_state(nid, N_MEMORY) {
		enum tt_node_role role = tt_tier_role(nid, &src);
		int order[TT_TIER_ORDER_MAX], n, i;
		char list[64];
		size_t len = 0;

		tt_tier_node_info(nid, &info);
		tt_tier_node_perf(nid, &perf);
		list[0] = '\0';
		n = role == TT_ROLE_FAST ?
		    tt_tier_evict_order(nid, order, ARRAY_SIZE(order)) : 0;
		for (i = 0; i < n; i++)
			len += scnprintf(list + len, sizeof(list) - len, "%s%d",
					 i ? "," : ", evicts to ", order[i]);
		pr_info("node %d: %s (%s), %u cpus, %llu MiB, memory tier %d%s\n",
			nid, tt_tier_role_name(role),
			src == TT_ROLE_SRC_PARAM ? "parameter" : "cpus",
			info.nr_cpus, info.total_bytes >> 20, perf.memory_tier,
			list);
	}
	return 0;
}
