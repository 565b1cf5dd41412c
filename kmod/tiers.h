/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which NUMA node plays which role (fast or slow memory).
 */
#ifndef TT_TIERS_H
#define TT_TIERS_H

#include <linux/nodemask.h>
#include <linux/types.h>
#include <linux/tiertrain.h>

/**
 * struct tt_node_info - a node's size as reported to tierctl
 * @nr_cpus:     online CPUs on the node.
 * @total_bytes: memory the page allocator manages on the node.
 * @free_bytes:  free memory on the node.
 */
struct tt_node_info {
	u32 nr_cpus;
	u64 total_bytes;
	u64 free_bytes;
};

/**
 * struct tt_tiers_req - a change of the node roles (tt_tiers_set())
 * @set_fast: change the fast list.
 * @set_slow: change the slow list.
 * @fast:     the new fast nodes; empty for automatic.
 * @slow:     the new slow nodes; empty for automatic.
 */
struct tt_tiers_req {
	bool set_fast;
	bool set_slow;
	nodemask_t fast;
	nodemask_t slow;
};

/**
 * struct tt_node_perf - a node's memory tier and distance, for tierctl
 * @memory_tier:  the kernel's memory tier id, -1 for none.
 * @adist_src:    what set its abstract distance (enum tt_adist_source).
 * @distance:     HMAT read latency in ns, or SLIT distance (@dist_src).
 * @dist_src:     enum tt_dist_source.
 * @read_bw_mbps: HMAT read bandwidth in MB/s, 0 without HMAT data.
 */
struct tt_node_perf {
	int memory_tier;
	enum tt_adist_source adist_src;
	u32 distance;
	enum tt_dist_source dist_src;
	u32 read_bw_mbps;
};

/* Slow nodes an eviction considers at most (tt_tier_evict_order()). */
#define TT_TIER_ORDER_MAX	8

int tt_tiers_init(void);
int tt_tiers_set(const struct tt_tiers_req *req, int *bad);
void tt_tiers_get(char *fast, char *slow, size_t len);

enum tt_node_role tt_tier_role(int nid, enum tt_role_source *source);
int tt_tier_nearest_slow(int fast_nid);
int tt_tier_evict_order(int fast_nid, int *nids, int max);
void tt_tier_node_perf(int nid, struct tt_node_perf *perf);
int tt_tier_node_check(int nid);
void tt_tier_node_info(int nid, struct tt_node_info *info);
const char *tt_tier_role_name(enum tt_node_role role);

#endif /* TT_TIERS_H */
