// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierctl - administer tiertrain.
 *
 *   tierctl [OPTIONS] VERB [ARGS...]
 *
 * Global options come before the verb; each verb parses its own arguments.
 * Exit status: 0 on success, 1 on any error (the message names the
 * offending value).
 *
 * Adding a verb: write ctl/VERB.c with its handler and usage text, declare
 * them in tierctl.h, add a line to tt_verbs[] and the file to the Makefile.
 */
#include <stdio.h>
#include <string.h>

#include "tiertrain.h"
#include "tierctl.h"

static int tt_help_main(const struct tt_ctl *ctl, int argc, char **argv);

static const char tt_help_usage[] =
	"Usage: tierctl help [VERB]\n"
	"\n"
	"Without VERB, list the options and verbs; with VERB, print its usage\n"
	"(the same as 'tierctl VERB --help').\n";

/* The verbs, in the order `tierctl help` lists them. */
const struct tt_verb tt_verbs[] = {
	{ "status", tt_status_main,
	  "show the module's settings and the memory nodes", tt_status_usage },
	{ "tiers", tt_tiers_main,
	  "show or set which nodes are fast and which are slow",
	  tt_tiers_usage },
	{ "sessions", tt_sessions_main,
	  "list the processes that are tiering and what is where",
	  tt_sessions_usage },
	{ "stats", tt_stats_main,
	  "every counter, in total or per session with its layers",
	  tt_stats_usage },
	{ "config", tt_config_main,
	  "show or change the module's settings", tt_config_usage },
	{ "trace", tt_trace_main,
	  "write a process's trace events as a Chrome/Perfetto trace",
	  tt_trace_usage },
	{ "monitor", tt_monitor_main,
	  "print evictions, prefetches, late and dropped layers live",
	  tt_monitor_usage },
	{ "plot", tt_plot_main,
	  "draw a trace as a PNG (fast and slow tier over time)",
	  tt_plot_usage },
	{ "simulate", tt_simulate_main,
	  "replay a layer trace through the scheduler's policy",
	  tt_simulate_usage },
	{ "help", tt_help_main,
	  "list the verbs, or print the usage of one", tt_help_usage },
	{ NULL, NULL, NULL, NULL },
};

static void tt_ctl_usage(FILE *f)
{
	const struct tt_verb *v;

	fputs("Usage: tierctl [OPTIONS] VERB [ARGS...]\n"
	      "       tierctl VERB --help\n"
	      "\n"
	      "Administer tiertrain, which moves DNN training tensors between\n"
	      "memory tiers (NUMA nodes).\n"
	      "\n"
	      "Options:\n"
	      "  -j, --json      print JSON\n"
	      "  -p, --pretty    indent the JSON (implies --json)\n"
	      "  -h, --help      print this help\n"
	      "  -V, --version   print the version\n"
	      "\n"
	      "Verbs:\n", f);
	for (v = tt_verbs; v->name; v++)
		fprintf(f, "  %-10s %s\n", v->name, v->help);
}

/**
 * tt_ctl_find_verb() - look a verb up by its exact name.
 * @name: what the user typed.
 *
 * Return: the verb, or NULL.
 */
const struct tt_verb *tt_ctl_find_verb(const char *name)
{
	const struct tt_verb *v;

	for (v = tt_verbs; v->name; v++)
		if (!strcmp(v->name, name))
			return v;
	return NULL;
}

/**
 * tt_ctl_parse_args() - parse the global options.
 * @argc:       argument count.
 * @argv:       arguments; argv[0] is the program.
 * @ctl:        out: the options.
 * @verb_index: out: with TT_CTL_RUN, the index of the verb in @argv.
 * @out:        where --help and --version print.
 * @err:        where errors print.
 *
 * Return: what to do next (enum tt_ctl_action).
 */
enum tt_ctl_action tt_ctl_parse_args(int argc, char **argv,
				     struct tt_ctl *ctl, int *verb_index,
				     FILE *out, FILE *err)
{
	int i;

	memset(ctl, 0, sizeof(*ctl));
	ctl->out = out;
	ctl->err = err;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (a[0] != '-' || !a[1])
			break;
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			ctl->json = true;
			continue;
		}
		if (!strcmp(a, "-p") || !strcmp(a, "--pretty")) {
			ctl->json = true;
			ctl->pretty = true;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			tt_ctl_usage(out);
			return TT_CTL_EXIT_OK;
		}
		if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			fprintf(out, "tierctl %s\n", tt_version());
			return TT_CTL_EXIT_OK;
		}
		fprintf(err, "tierctl: unknown option '%s'; try 'tierctl --help'\n",
			a);
		return TT_CTL_EXIT_FAIL;
	}
	if (i >= argc) {
		fputs("tierctl: no verb given\n", err);
		tt_ctl_usage(err);
		return TT_CTL_EXIT_FAIL;
	}
	*verb_index = i;
	return TT_CTL_RUN;
}

static int tt_help_main(const struct tt_ctl *ctl, int argc, char **argv)
{
	const struct tt_verb *v;

	if (argc == 1) {
		tt_ctl_usage(ctl->out);
		return 0;
	}
	if (argc > 2) {
		fprintf(ctl->err, "tierctl help: unexpected argument '%s'\n",
			argv[2]);
		return 1;
	}
	v = tt_ctl_find_verb(argv[1]);
	if (!v) {
		fprintf(ctl->err, "tierctl help: unknown verb '%s'; try 'tierctl help'\n",
			argv[1]);
		return 1;
	}
	fputs(v->usage, ctl->out);
	return 0;
}

/**
 * tt_ctl_run() - tierctl itself: parse, dispatch, return the exit code.
 * @argc: argument count.
 * @argv: arguments.
 * @out:  standard output.
 * @err:  standard error.
 *
 * Return: 0 or 1.
 */
int tt_ctl_run(int argc, char **argv, FILE *out, FILE *err)
{
	const struct tt_verb *v;
	struct tt_ctl ctl;
	int i, vi = 0;

	switch (tt_ctl_parse_args(argc, argv, &ctl, &vi, out, err)) {
	case TT_CTL_EXIT_OK:
		return 0;
	case TT_CTL_EXIT_FAIL:
		return 1;
	case TT_CTL_RUN:
		break;
	}
	v = tt_ctl_find_verb(argv[vi]);
	if (!v) {
		fprintf(err, "tierctl: unknown verb '%s'; try 'tierctl help'\n",
			argv[vi]);
		return 1;
	}
	for (i = vi + 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(v->usage, out);
			return 0;
		}
	}
	return v->handler(&ctl, argc - vi, argv + vi) ? 1 : 0;
}

#ifndef TT_CTL_UNIT_TEST
int main(int argc, char **argv)
{
	int ret = tt_ctl_run(argc, argv, stdout, stderr);

	if (fflush(stdout) || ferror(stdout)) {
		perror("tierctl: cannot write the output");
		ret = 1;
	}
	return ret;
}
#endif
