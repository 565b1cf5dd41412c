/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tierctl simulate: replay a per-layer trace through the scheduler's policy
 * (core/policy.c, compiled into tierctl) and print the plan and the
 * predicted fast-tier footprint.
 */
#ifndef TT_CTL_SIMULATE_H
#define TT_CTL_SIMULATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/policy.h"
#include "tierctl.h"

/* Columns of a trace, in the order its header must name them. */
enum tt_sim_col {
	TT_SIM_LAYER,
	TT_SIM_FWD_START,
	TT_SIM_FWD_END,
	TT_SIM_BWD_START,
	TT_SIM_BWD_END,
	TT_SIM_SAVED,
	TT_SIM_NR_COLS,
};

/* Most layers a trace may have. */
#define TT_SIM_MAX_LAYERS	(1U << 20)

/**
 * struct tt_sim_opts - what tierctl simulate was asked to do
 * @er_bps:    --er: eviction rate, bytes/s.
 * @pr_bps:    --pr: prefetch rate, bytes/s.
 * @stay_ns:   --stay-time-us, in ns.
 * @page_size: --page-size, bytes (a power of two).
 * @alap:      --alap: plan prefetches as late as possible (TT_SCHED_ALAP).
 * @trace:     the trace file, "-" for standard input.
 * @json:      -j: print JSON.
 * @pretty:    -p: indent the JSON.
 */
struct tt_sim_opts {
	uint64_t er_bps;
	uint64_t pr_bps;
	uint64_t stay_ns;
	uint64_t page_size;
	bool alap;
	const char *trace;
	bool json;
	bool pretty;
};

/**
 * struct tt_sim_trace - a trace as read from its CSV file
 * @layers: one entry per row, in file order: the policy's input fields
 *          are filled (times in ns), its outputs are zero.
 * @lines:  the line number of each row.
 * @n:      rows read.
 * @cap:    entries allocated in @layers and @lines.
 */
struct tt_sim_trace {
	struct tt_policy_layer *layers;
	unsigned int *lines;
	unsigned int n;
	unsigned int cap;
};

/**
 * struct tt_sim_result - the plan's totals and footprint
 * @sum:       counts of tt_policy_plan().
 * @footprint: tt_policy_footprint() of the plan.
 */
struct tt_sim_result {
	struct tt_policy_summary sum;
	struct tt_policy_footprint footprint;
};

extern const char *const tt_sim_col_names[TT_SIM_NR_COLS];

int tt_sim_parse_rate(const char *opt, const char *text, uint64_t *bps,
		      char *err, size_t len);
int tt_sim_parse_opts(int argc, char **argv, struct tt_sim_opts *o,
		      char *err, size_t len);
int tt_sim_trace_read(FILE *f, const char *name, struct tt_sim_trace *t,
		      char *err, size_t len);
void tt_sim_trace_free(struct tt_sim_trace *t);
int tt_sim_run(const struct tt_sim_opts *o, struct tt_sim_trace *t,
	       struct tt_sim_result *r);
int tt_sim_print(const struct tt_sim_opts *o, const struct tt_sim_trace *t,
		 const struct tt_sim_result *r, FILE *out);

#endif /* TT_CTL_SIMULATE_H */
