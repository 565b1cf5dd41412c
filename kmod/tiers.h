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

int tt_tiers_init(void);
int tt_tiers_set(const struct tt_tiers_req *req, int *bad);
void tt_tiers_get(char *fast, char *slow, size_t len);

enum tt_node_role tt_tier_role(int nid, enum tt_role_source *source);
int tt_tier_nearest_slow(int fast_nid);
int tt_tier_node_check(int nid);
void tt_tier_node_info(int nid, struct tt_node_info *info);
const char *tt_tier_role_name(enum tt_node_role role);

#endif /* TT_TIERS_H */
