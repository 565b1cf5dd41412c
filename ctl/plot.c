// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierctl plot TRACE.json -o FILE.png: runs the tt-plot script (Python and
 * Debian's python3-matplotlib) on a trace written by tierctl trace.
 *
 * tierctl runs the script in a child and exits 0 when it succeeded, 1
 * otherwise (its messages say why). The script is looked up next to tierctl in the source tree
 * (ctl/../scripts/tt-plot), then where 'make install' puts it
 * (TT_PLOT_DIR, $(PREFIX)/share/tiertrain); TT_PLOT_SCRIPT in the
 * environment overrides both.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "tierctl.h"

#ifndef TT_PLOT_DIR
#define TT_PLOT_DIR	"/usr/local/share/tiertrain"
#endif
#define TT_PLOT_PYTHON	"/usr/bin/python3"

const char tt_plot_usage[] =
	"Usage: tierctl plot TRACE.json -o FILE.png [--session ID] [--iters N]\n"
	"\n"
	"Draw a trace written by 'tierctl trace' as a PNG: on top, the saved\n"
	"activations on the fast and on the slow tier over time, forward passes\n"
	"shaded blue, backward passes orange, a line at each layer boundary;\n"
	"below, one row per layer with its evictions (red) and prefetches\n"
	"(green), late (x) and dropped (o) layers. Needs python3-matplotlib.\n"
	"  --session ID  the session to draw (default: the one with most events)\n"
	"  --iters N     only the last N iterations\n";

/* The script to run: @buf, or NULL when none is found. */
static const char *tt_plot_script(char *buf, size_t len)
{
	const char *env = getenv("TT_PLOT_SCRIPT");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		snprintf(buf, len, "%s/../scripts/tt-plot", dirname(exe));
		if (!access(buf, R_OK))
			return buf;
	}
	snprintf(buf, len, "%s/tt-plot", TT_PLOT_DIR);
	return access(buf, R_OK) ? NULL : buf;
}

int tt_plot_main(const struct tt_ctl *ctl, int argc, char **argv)
{
	char path[PATH_MAX + 32];
	const char *script;
	char **args;
	int i, status, have_out = 0, have_in = 0;
	pid_t pid;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--session") ||
		    !strcmp(argv[i], "--iters")) {
			if (i + 1 == argc) {
				fprintf(ctl->err, "tierctl plot: %s needs a value\n",
					argv[i]);
				return 1;
			}
			have_out |= !strcmp(argv[i], "-o");
			i++;
		} else if (argv[i][0] == '-' || have_in) {
			fprintf(ctl->err, "tierctl plot: unexpected argument '%s'; try 'tierctl plot --help'\n",
				argv[i]);
			return 1;
		} else {
			have_in = 1;
		}
	}
	if (!have_in || !have_out) {
		fprintf(ctl->err, "tierctl plot: %s; try 'tierctl plot --help'\n",
			!have_in ? "give the trace file (from tierctl trace)" :
				   "give the PNG to write with -o FILE.png");
		return 1;
	}
	script = tt_plot_script(path, sizeof(path));
	if (!script) {
		fprintf(ctl->err, "tierctl plot: the tt-plot script is not installed (looked next to tierctl and in %s)\n",
			TT_PLOT_DIR);
		return 1;
	}
	args = calloc(argc + 2, sizeof(*args));
	if (!args) {
		fprintf(ctl->err, "tierctl plot: %s\n", strerror(ENOMEM));
		return 1;
	}
	args[0] = (char *)TT_PLOT_PYTHON;
	args[1] = (char *)script;
	for (i = 1; i < argc; i++)
		args[i + 1] = argv[i];
	fflush(ctl->out);
	fflush(ctl->err);
	pid = fork();
	if (pid == 0) {
		execv(TT_PLOT_PYTHON, args);
		fprintf(stderr, "tierctl plot: cannot run %s: %s%s\n",
			TT_PLOT_PYTHON, strerror(errno),
			errno == ENOENT ? " (install python3 and python3-matplotlib)" :
					  "");
		_exit(1);
	}
	free(args);
	if (pid < 0) {
		fprintf(ctl->err, "tierctl plot: cannot start %s: %s\n",
			TT_PLOT_PYTHON, strerror(errno));
		return 1;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(ctl->err, "tierctl plot: waitpid: %s\n",
				strerror(errno));
			return 1;
		}
	}
	/* The script prints its own errors; tierctl exits 0 or 1 only. */
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : 1;
}
