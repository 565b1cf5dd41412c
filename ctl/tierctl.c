// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierctl - administer tiertrain.
 *
 *   tierctl [OPTIONS] VERB [ARGS...]
 *
 * The global options (-j, -p, --json, --pretty, -V, --version) go before
 * the verb or after it, anywhere among its arguments: they are taken out
 * before the verb parses the rest. Not taken: the value of a verb's option
 * that takes one (tt_verb.value_opts: `trace 1 -o -j` writes to a file
 * named "-j") and anything after "--". No verb gives -j, -p or -V another
 * meaning; -h and --help after the verb print the verb's usage.
 * Exit status: 0 on success, 1 on any error (the message names the
 * offending value).
 *
 * Adding a verb: write ctl/VERB.c with its handler and usage text, declare
 * them in tierctl.h, add a line to tt_verbs[] (with the verb's options that
 * take a value) and the file to the Makefile. A verb's own options must not
 * be spelled like a global one.
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

/* The options of the verbs that take the next argument as their value. */
static const char *const tt_tiers_value_opts[] = { "--fast", "--slow", NULL };
static const char *const tt_trace_value_opts[] = { "-o", NULL };
static const char *const tt_stats_value_opts[] = { "-o", NULL };
static const char *const tt_monitor_value_opts[] = {
	"--pid", "--count", "--timeout", NULL
};
static const char *const tt_plot_value_opts[] = {
	"-o", "--session", "--iters", NULL
};
static const char *const tt_simulate_value_opts[] = {
	"--er", "--pr", "--stay-time-us", "--page-size", NULL
};

/* The verbs, in the order `tierctl help` lists them. */
const struct tt_verb tt_verbs[] = {
	{ "status", tt_status_main,
	  "show the module's settings and the memory nodes", tt_status_usage,
	  NULL },
	{ "tiers", tt_tiers_main,
	  "show or set which nodes are fast and which are slow",
	  tt_tiers_usage, tt_tiers_value_opts },
	{ "sessions", tt_sessions_main,
	  "list the processes that are tiering and what is where",
	  tt_sessions_usage, NULL },
	{ "stats", tt_stats_main,
	  "every counter, in total or per session with its layers",
	  tt_stats_usage, tt_stats_value_opts },
	{ "config", tt_config_main,
	  "show or change the module's settings", tt_config_usage, NULL },
	{ "trace", tt_trace_main,
	  "write a process's trace events as a Chrome/Perfetto trace",
	  tt_trace_usage, tt_trace_value_opts },
	{ "monitor", tt_monitor_main,
	  "print evictions, prefetches, late and dropped layers live",
	  tt_monitor_usage, tt_monitor_value_opts },
	{ "plot", tt_plot_main,
	  "draw a trace as a PNG (fast and slow tier over time)",
	  tt_plot_usage, tt_plot_value_opts },
	{ "simulate", tt_simulate_main,
	  "replay a layer trace through the scheduler's policy",
	  tt_simulate_usage, tt_simulate_value_opts },
	{ "help", tt_help_main,
	  "list the verbs, or print the usage of one", tt_help_usage, NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static void tt_ctl_usage(FILE *f)
{
	const struct tt_verb *v;

	fputs("Usage: tierctl [OPTIONS] VERB [ARGS...] [OPTIONS]\n"
	      "       tierctl VERB --help\n"
	      "\n"
	      "Administer tiertrain, which moves DNN training tensors between\n"
	      "memory tiers (NUMA nodes).\n"
	      "\n"
	      "Options, before or after the verb (anywhere among its arguments):\n"
	      "  -j, --json      print JSON\n"
	      "  -p, --pretty    indent the JSON (implies --json)\n"
	      "  -h, --help      print this help (after the verb: the verb's)\n"
	      "  -V, --version   print the version\n"
	      "A verb's option that takes a value takes the next argument,\n"
	      "whatever it is ('trace 1 -o -j' writes a file named -j), and\n"
	      "after '--' every argument is the verb's.\n"
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

/* The JSON options: true when @a is one (and set in @ctl). */
static bool tt_ctl_json_opt(struct tt_ctl *ctl, const char *a)
{
	if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
		ctl->json = true;
		return true;
	}
	if (!strcmp(a, "-p") || !strcmp(a, "--pretty")) {
		ctl->json = true;
		ctl->pretty = true;
		return true;
	}
	return false;
}

static bool tt_ctl_version_opt(const char *a)
{
	return !strcmp(a, "-V") || !strcmp(a, "--version");
}

/* Whether @a is an option of @v that takes the next argument as its value. */
static bool tt_ctl_takes_value(const struct tt_verb *v, const char *a)
{
	const char *const *o;

	for (o = v->value_opts; o && *o; o++)
		if (!strcmp(*o, a))
			return true;
	return false;
}

/**
 * tt_ctl_parse_args() - parse the global options, before and after the verb.
 * @argc:       argument count.
 * @argv:       arguments; argv[0] is the program. The global options after
 *              the verb are taken out: the verb's arguments are moved down
 *              in place, in their order, and NULL-terminated.
 * @ctl:        out: the options.
 * @verb_index: out: with TT_CTL_RUN, the index of the verb in @argv.
 * @verb_argc:  out: with TT_CTL_RUN, the verb's argument count (the verb
 *              included) once the global options are taken out.
 * @out:        where --help and --version print.
 * @err:        where errors print.
 *
 * Before the verb, "--" ends the options and anything else starting with
 * '-' is an error. After a known verb, -j, -p, --json, --pretty, -V and
 * --version are global wherever they stand, except as the value of one of
 * the verb's options (tt_verb.value_opts) and after "--", which stays in
 * the verb's arguments. An unknown verb's arguments are left alone.
 *
 * Return: what to do next (enum tt_ctl_action).
 */
enum tt_ctl_action tt_ctl_parse_args(int argc, char **argv,
				     struct tt_ctl *ctl, int *verb_index,
				     int *verb_argc, FILE *out, FILE *err)
{
	const struct tt_verb *v;
	int i, k, n;

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
		if (tt_ctl_json_opt(ctl, a))
			continue;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			tt_ctl_usage(out);
			return TT_CTL_EXIT_OK;
		}
		if (tt_ctl_version_opt(a)) {
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
	*verb_argc = argc - i;
	v = tt_ctl_find_verb(argv[i]);
	if (!v)
		return TT_CTL_RUN;
	for (k = n = i + 1; k < argc; k++) {
		char *a = argv[k];

		if (!strcmp(a, "--")) {
			while (k < argc)
				argv[n++] = argv[k++];
			break;
		}
		if (tt_ctl_takes_value(v, a) && k + 1 < argc) {
			argv[n++] = a;
			argv[n++] = argv[++k];
			continue;
		}
		if (tt_ctl_json_opt(ctl, a))
			continue;
		if (tt_ctl_version_opt(a)) {
			fprintf(out, "tierctl %s\n", tt_version());
			return TT_CTL_EXIT_OK;
		}
		argv[n++] = a;
	}
	argv[n] = NULL;
	*verb_argc = n - i;
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
	int i, vi = 0, vargc = 0;

	switch (tt_ctl_parse_args(argc, argv, &ctl, &vi, &vargc, out, err)) {
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
	for (i = vi + 1; i < vi + vargc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(v->usage, out);
			return 0;
		}
	}
	return v->handler(&ctl, vargc, argv + vi) ? 1 : 0;
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
