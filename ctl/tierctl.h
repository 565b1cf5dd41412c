/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tierctl: the tiertrain administration tool. Each verb lives in its own
 * file and is listed in tt_verbs[] (tierctl.c).
 */
#ifndef TT_CTL_TIERCTL_H
#define TT_CTL_TIERCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"

#define TT_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/**
 * struct tt_ctl - global options, as every verb sees them
 * @json:   -j: print JSON instead of text.
 * @pretty: -p: indent the JSON.
 * @out:    where results go (stdout).
 * @err:    where errors go (stderr).
 */
struct tt_ctl {
	bool json;
	bool pretty;
	FILE *out;
	FILE *err;
};

/**
 * struct tt_verb - one subcommand
 * @name:    what the user types.
 * @handler: runs it; argv[0] is the verb, the rest its arguments. Returns
 *           the exit code, 0 or 1.
 * @help:    one line for the verb list of `tierctl help`.
 * @usage:   the full usage text of `tierctl VERB --help`.
 * @value_opts: NULL-terminated, or NULL: the verb's options that take the
 *           next argument as their value, which is then never taken for
 *           a global option (`trace 1 -o -j` writes to "-j").
 */
struct tt_verb {
	const char *name;
	int (*handler)(const struct tt_ctl *ctl, int argc, char **argv);
	const char *help;
	const char *usage;
	const char *const *value_opts;
};

extern const struct tt_verb tt_verbs[];

/* What tt_ctl_parse_args() decided. */
enum tt_ctl_action {
	TT_CTL_RUN,		/* run the verb at argv[*verb_index] */
	TT_CTL_EXIT_OK,		/* help or version printed: exit 0 */
	TT_CTL_EXIT_FAIL,	/* error printed: exit 1 */
};

enum tt_ctl_action tt_ctl_parse_args(int argc, char **argv,
				     struct tt_ctl *ctl, int *verb_index,
				     int *verb_argc, FILE *out, FILE *err);
const struct tt_verb *tt_ctl_find_verb(const char *name);
int tt_ctl_run(int argc, char **argv, FILE *out, FILE *err);

/* util.c */
void tt_fmt_bytes(uint64_t bytes, char *buf, size_t len);
const char *tt_enum_name(const char *const *names, size_t nr, int64_t value,
			 char *buf, size_t len);
int tt_memory_tiers(const char *dir, int *tier_of, int nr);

/* The verbs. */
int tt_status_main(const struct tt_ctl *ctl, int argc, char **argv);
extern const char tt_status_usage[];
int tt_simulate_main(const struct tt_ctl *ctl, int argc, char **argv);
extern const char tt_simulate_usage[];
int tt_tiers_main(const struct tt_ctl *ctl, int argc, char **argv);
extern const char tt_tiers_usage[];
int tt_tiers_list_arg(const char *s, const char **out);
int tt_sessions_main(const struct tt_ctl *ctl, int argc, char **argv);
extern const char tt_sessions_usage[];
int tt_stats_main(const struct tt_ctl *ctl, int argc, char **argv);
extern const char tt_stats_usage[];
int tt_config_main(const struct tt_ctl *ctl, int argc, char **argv);
extern const char tt_config_usage[];
int tt_cfg_parse_pair(const char *arg, char *key, size_t klen,
		      uint64_t *value);
int tt_trace_main(const struct tt_ctl *ctl, int argc, char **argv);
extern const char tt_trace_usage[];
int tt_monitor_main(const struct tt_ctl *ctl, int argc, char **argv);
extern const char tt_monitor_usage[];
int tt_plot_main(const struct tt_ctl *ctl, int argc, char **argv);
extern const char tt_plot_usage[];

#endif /* TT_CTL_TIERCTL_H */
