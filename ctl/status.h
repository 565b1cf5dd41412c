/* SPDX-License-Identifier: GPL-2.0-only */
/* tierctl status: the reply of TT_CMD_GET_STATUS, parsed and printed. */
#ifndef TT_CTL_STATUS_H
#define TT_CTL_STATUS_H

#include <stddef.h>
#include <stdint.h>
#include <libmnl/libmnl.h>

#include "tierctl.h"

/* Eviction order entries kept per node (the module sends at most 8). */
#define TT_STATUS_ORDER_MAX	16

/**
 * struct tt_status_node - one TT_A_NODE of the reply
 * @id:          TT_NODE_A_ID.
 * @role:        TT_NODE_A_ROLE (enum tt_node_role).
 * @role_source: TT_NODE_A_ROLE_SOURCE (enum tt_role_source).
 * @nr_cpus:     TT_NODE_A_NR_CPUS.
 * @total_bytes: TT_NODE_A_TOTAL_BYTES.
 * @free_bytes:  TT_NODE_A_FREE_BYTES.
 * @slow_target: TT_NODE_A_SLOW_TARGET, -1 when absent.
 * The attributes below are optional too (a module before them sends none):
 * @memory_tier: TT_NODE_A_MEMORY_TIER, -1 when absent.
 * @adist_source: TT_NODE_A_ADIST_SOURCE (enum tt_adist_source), -1 absent.
 * @distance:    TT_NODE_A_DISTANCE.
 * @dist_source: TT_NODE_A_DISTANCE_SOURCE (enum tt_dist_source), -1 when
 *               it or TT_NODE_A_DISTANCE is absent.
 * @read_bw_mbps: TT_NODE_A_READ_BANDWIDTH, 0 when absent.
 * @evict_order: TT_NODE_A_EVICT_ORDER, the first @nr_evict_order entries.
 * @nr_evict_order: entries of @evict_order (0: absent).
 */
struct tt_status_node {
	uint32_t id;
	uint32_t role;
	uint32_t role_source;
	uint32_t nr_cpus;
	uint64_t total_bytes;
	uint64_t free_bytes;
	int32_t slow_target;
	int64_t memory_tier;
	int64_t adist_source;
	uint32_t distance;
	int64_t dist_source;
	uint32_t read_bw_mbps;
	uint32_t evict_order[TT_STATUS_ORDER_MAX];
	unsigned int nr_evict_order;
};

/**
 * struct tt_status - the parsed reply of TT_CMD_GET_STATUS
 * @version:     TT_A_VERSION.
 * @abi:         TT_A_ABI_VERSION.
 * @workers:     TT_A_WORKERS.
 * @batch_pages: TT_A_BATCH_PAGES.
 * @sessions:    TT_A_NR_SESSIONS.
 * @nodes:       the TT_A_NODE entries of TT_A_NODES, in reply order
 *               (allocated; tt_status_free() frees it).
 * @nr_nodes:    entries in @nodes.
 * @replies:     reply messages parsed.
 * @err:         after a parse failure: what is wrong with the reply.
 */
struct tt_status {
	char version[64];
	uint32_t abi;
	uint32_t workers;
	uint32_t batch_pages;
	uint32_t sessions;
	struct tt_status_node *nodes;
	size_t nr_nodes;
	unsigned int replies;
	char err[256];
};

int tt_status_parse(const struct nlmsghdr *nlh, struct tt_status *st);
int tt_status_parse_nodes(const struct nlattr *nodes, struct tt_status *st);
void tt_status_free(struct tt_status *st);
const char *tt_status_role_name(uint32_t role, char *buf, size_t len);
const char *tt_status_source_name(uint32_t source, char *buf, size_t len);
const char *tt_status_adist_name(int64_t source, char *buf, size_t len);
int tt_status_node_tier(const struct tt_status_node *n, const int *tier_of,
			int nr_tier_of);
int tt_status_print(const struct tt_ctl *ctl, const struct tt_status *st,
		    const int *tier_of, int nr_tier_of);
void tt_status_node_json(struct tt_json *j, const struct tt_status_node *n,
			 int tier);
void tt_status_node_text(FILE *out, const struct tt_status_node *n, int tier,
			 bool target);

#endif /* TT_CTL_STATUS_H */
