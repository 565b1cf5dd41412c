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
 * The kernel's own memory tiers (memory-tiers: node_is_toptier(),
 * next_demotion_node(), node_get_memory_tier()) are not exported to modules
 * in 6.1, so they cannot inform the roles here; tierctl reads them from
 * /sys/devices/virtual/memory_tiering/ and shows them next to ours.
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

/**
 * tt_tier_nearest_slow() - the slow node closest to a fast node
 * @fast_nid: the fast node (any valid node id).
 *
 * Distance is the firmware's NUMA distance (SLIT); ties go to the lowest id.
 *
 * Return: a node id, or NUMA_NO_NODE when there is no slow node with memory.
 */
int tt_tier_nearest_slow(int fast_nid)
{
	int best = NUMA_NO_NODE, best_dist = INT_MAX, nid, dist;

	if (fast_nid < 0 || fast_nid >= nr_node_ids)
		return NUMA_NO_NODE;
	for_each_node_state(nid, N_MEMORY) {
		if (tt_tier_role(nid, NULL) != TT_ROLE_SLOW)
			continue;
		dist = node_distance(fast_nid, nid);
		if (dist < best_dist) {
			best = nid;
			best_dist = dist;
		}
	}
	return best;
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
 * Nothing is allocated, so there is no tt_tiers_exit().
 *
 * Return: 0, or -EINVAL (with a message naming the bad text) for a bad list.
 */
int tt_tiers_init(void)
{
	enum tt_role_source src;
	struct tt_node_info info;
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

		tt_tier_node_info(nid, &info);
		pr_info("node %d: %s (%s), %u cpus, %llu MiB\n", nid,
			tt_tier_role_name(role),
			src == TT_ROLE_SRC_PARAM ? "parameter" : "cpus",
			info.nr_cpus, info.total_bytes >> 20);
	}
	return 0;
}
