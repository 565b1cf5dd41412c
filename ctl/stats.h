/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The counters of struct tt_ioc_stats by name, and the layers dump
 * (TT_CMD_GET_LAYERS); used by tierctl stats and sessions.
 */
#ifndef TT_CTL_STATS_H
#define TT_CTL_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/tiertrain.h>

#include "json.h"
#include "nl.h"

/* What a counter counts (how to print it). */
enum tt_stat_kind {
	TT_STAT_COUNT,
	TT_STAT_BYTES,
	TT_STAT_RATE,		/* bytes/s: not summed over sessions */
	TT_STAT_NS,
	TT_STAT_WEIGHT,		/* 1024 = 1.0: not summed over sessions */
};

/**
 * struct tt_stat_field - one counter of struct tt_ioc_stats
 * @name: its name (the member's, "total." for the members of @total).
 * @off:  its offset in the structure.
 * @kind: enum tt_stat_kind.
 */
struct tt_stat_field {
	const char *name;
	size_t off;
	enum tt_stat_kind kind;
};

/* Every counter, in structure order; ends with a NULL name. */
extern const struct tt_stat_field tt_stat_fields[];

uint64_t tt_stat_get(const struct tt_ioc_stats *st,
		     const struct tt_stat_field *f);
void tt_stats_add(struct tt_ioc_stats *acc, const struct tt_ioc_stats *st);
void tt_stats_json(struct tt_json *j, const char *name,
		   const struct tt_ioc_stats *st, int with_rates);

/**
 * struct tt_ctl_layers - a session's layers (TT_CMD_GET_LAYERS)
 * @v:   the layers, in layer id order; allocated.
 * @n:   how many.
 * @err: after a parse failure: what is wrong with the reply.
 */
struct tt_ctl_layers {
	struct tt_layer_info *v;
	size_t n;
	char err[640];
};

int tt_layers_parse(const struct nlmsghdr *nlh, struct tt_ctl_layers *ls);
int tt_layers_fetch(struct tt_nl *nl, uint64_t session,
		    struct tt_ctl_layers *ls);
void tt_layers_free(struct tt_ctl_layers *ls);
const char *tt_layer_status_name(uint32_t status, char *buf, size_t len);

#endif /* TT_CTL_STATS_H */
