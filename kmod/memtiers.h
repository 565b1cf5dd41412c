/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's memory tiers, HMAT performance and dax/kmem memory of each
 * node, as the module reads them (see memtiers.c), kept up to date across
 * memory hotplug.
 */
#ifndef TT_MEMTIERS_H
#define TT_MEMTIERS_H

#include <linux/types.h>
#include <linux/tiertrain.h>

/**
 * struct tt_memtier_node - what the kernel says about one node
 * @tier:        the kernel's memory tier id (memory_tierN in sysfs), or -1
 *               when the node is in none (no memory, or not read yet).
 * @adist_src:   what set the node's abstract distance (enum tt_adist_source).
 * @read_latency_ns: HMAT read latency from the node's best CPU initiators,
 *               in ns; 0 without HMAT data for the node.
 * @read_bw_mbps: HMAT read bandwidth from them, in MB/s; 0 without.
 */
struct tt_memtier_node {
	int tier;
	enum tt_adist_source adist_src;
	u32 read_latency_ns;
	u32 read_bw_mbps;
};

int tt_memtiers_init(void);
void tt_memtiers_exit(void);

void tt_memtiers_node(int nid, struct tt_memtier_node *out);
bool tt_memtiers_leaving(int nid);
void tt_memtiers_sync(void);
u64 tt_memtiers_generation(void);

#endif /* TT_MEMTIERS_H */
