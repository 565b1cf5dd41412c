// SPDX-License-Identifier: GPL-2.0
/*
 * The control plane in the guest: the generic netlink family "tiertrain"
 * (raw, without libmnl) and every tierctl verb (the built ctl/tierctl),
 * driven by a synthetic trainer in a child process (4 layers, 2 MiB saved
 * per layer, 10 ms of compute per layer pass, scaled by the fixture's
 * calibration: tt_st_calibrate()).
 *
 *   usage            help lists every verb; a verb's --help; an unknown
 *                    verb exits 1 (every --help: the host unit tests).
 *   status_tiers     status and tiers with -j, parsed by python3's json:
 *                    roles, the fast node's eviction target.
 *   tiers_set        tiers set moves the slow role (and the eviction
 *                    target); a node that does not exist, one without
 *                    memory, one in both lists, a bad list: exit 1 with the
 *                    node named, nothing changed; auto restores.
 *   config_get_set   every key within its range; set prints old -> new and
 *                    shows in /sys/module/.../parameters and back (one
 *                    table); unknown key, out-of-range and non-numeric
 *                    values: exit 1 naming key and value, nothing changed
 *                    (also the good pair of the same request).
 *   config_effects   sync_late reaches new sessions; min_migrate_kib drops
 *                    every layer (drop events, reason min_size, nothing
 *                    evicted); a 16-event ring reports the events it lost.
 *   bw_cap           bw_cap_mbps=32: a 32 MiB migration takes at least the
 *                    time the cap allows (a lower bound, which load cannot
 *                    break); the rate without the cap is logged.
 *   permissions      as nobody (uid 65534, no groups): config set, tiers
 *                    set, monitor and trace --follow refused naming
 *                    CAP_SYS_ADMIN; reads work; sessions, stats and trace
 *                    see only nobody's own session, root sees both.
 *   dump_churn       1000 sessions: a raw dump needs several parts and
 *                    reports each exactly once; with another process
 *                    opening and closing sessions meanwhile, every dump
 *                    (flagged NLM_F_DUMP_INTR or not) has increasing ids
 *                    and every permanent session, a dump of our pid is
 *                    never interrupted, tierctl -j sessions PID lists the
 *                    1000 once; dump cost per session for 10, 100 and
 *                    1000 sessions (logged).
 *   netlink_errors   raw requests: events dump without a target, both
 *                    targets, an unknown session, an unsupported attribute,
 *                    config set without a value, an empty tiers set: the
 *                    errno and an extended ACK message naming what is
 *                    wrong; TT_A_SINCE returns exactly the newer events.
 *   monitor          tierctl monitor receives evictions and prefetches as
 *                    they happen (text, and -j lines parsed by python), and
 *                    exits 0 on SIGINT.
 *   trace_json       tierctl trace: the Chrome trace parsed by python3's
 *                    json: every iteration's layer spans, migration spans
 *                    with bytes, each eviction after its forward pass, the
 *                    fast/slow counter, nothing lost; --follow collects
 *                    every event until the process exits (tierctl plot:
 *                    the host unit tests, matplotlib is slow in TCG).
 *   tracepoints      tiertrain:tt_evict and tt_prefetch in the ftrace
 *                    buffer with the trainer's pid.
 *   ynl_cli          the kernel's ynl CLI with the family's YAML spec:
 *                    the status, the trainer's session and its trace
 *                    events as tierctl -j gives them.
 *   prometheus_scrape tierctl stats --prometheus -o into the textfile
 *                    directory of Debian's prometheus-node-exporter, scraped
 *                    over loopback: the values of tierctl -j stats (SKIP
 *                    without the exporter).
 *
 * The fixture saves every writable module parameter and restores it, sets
 * the node roles back to automatic and /dev/tiertrain's mode, and removes
 * its files.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "kselftest_harness.h"
#include "tt_harness.h"

#define CT_NOBODY	65534
#define CT_MAX_PARAMS	32
#define CT_LAYERS	4
#define CT_TENSOR	(2 * TT_ST_MIB)
#define CT_PY		"/usr/bin/python3"

/* ---- running programs ------------------------------------------------- */

static char ct_tierctl[PATH_MAX];

/**
 * struct ct_run - a finished program
 * @status: its exit code, or 128 + the signal that killed it.
 * @out:    its standard output (allocated, NUL-terminated).
 * @err:    its standard error.
 */
struct ct_run {
	int status;
	char *out;
	char *err;
};

static void ct_run_free(struct ct_run *r)
{
	free(r->out);
	free(r->err);
	r->out = NULL;
	r->err = NULL;
}

static char *ct_slurp_fd(int fd)
{
	off_t len = lseek(fd, 0, SEEK_END);
	char *buf = malloc(len > 0 ? len + 1 : 1);
	ssize_t n = 0;

	if (!buf)
		return NULL;
	if (len > 0) {
		n = pread(fd, buf, len, 0);
		if (n < 0)
			n = 0;
	}
	buf[n] = 0;
	return buf;
}

/* In a child: become nobody, without supplementary groups. */
static void ct_become_nobody(void)
{
	if (setgroups(0, NULL) || setgid(CT_NOBODY) || setuid(CT_NOBODY)) {
		perror("become nobody");
		_exit(126);
	}
}

/* Run @argv (NULL-terminated) as @uid (0 or CT_NOBODY); 0 or -errno. */
static int ct_exec(struct ct_run *r, uid_t uid, char *const argv[])
{
	int fo = memfd_create("out", 0), fe = memfd_create("err", 0), st;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (fo < 0 || fe < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		dup2(fo, 1);
		dup2(fe, 2);
		if (uid)
			ct_become_nobody();
		execv(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->out = ct_slurp_fd(fo);
	r->err = ct_slurp_fd(fe);
	close(fo);
	close(fe);
	return r->out && r->err ? 0 : -ENOMEM;
}

/* argv = @first, then the strings of @ap up to NULL (at most @max - 1). */
static void ct_argv(char **argv, unsigned int max, char *first, va_list ap)
{
	unsigned int n = 0;

	argv[n++] = first;
	while (n < max - 1 && (argv[n] = va_arg(ap, char *)))
		n++;
	argv[n] = NULL;
}

/* tierctl ARGS... (NULL-terminated) as @uid. */
static int ct_ctl(struct ct_run *r, uid_t uid, ...)
{
	char *argv[32];
	va_list ap;

	va_start(ap, uid);
	ct_argv(argv, 32, ct_tierctl, ap);
	va_end(ap);
	return ct_exec(r, uid, argv);
}

/* Start tierctl ARGS... in the background with its output in @outfile. */
static pid_t ct_spawn(const char *outfile, uid_t uid, ...)
{
	char *argv[32];
	va_list ap;
	pid_t pid;
	int fd;

	va_start(ap, uid);
	ct_argv(argv, 32, ct_tierctl, ap);
	va_end(ap);
	fd = open(outfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -errno;
	pid = fork();
	if (!pid) {
		dup2(fd, 1);
		if (uid)
			ct_become_nobody();
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd);
	return pid;
}

/* Wait for @pid at most @ms: its exit code / 128 + signal, or -ETIMEDOUT. */
static int ct_wait(pid_t pid, unsigned int ms)
{
	unsigned int waited = 0;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) :
					       128 + WTERMSIG(st);
		if (r < 0)
			return -errno;
		if (waited >= ms)
			return -ETIMEDOUT;
		usleep(20000);
		waited += 20;
	}
}

/*
 * python3 -c @script ARGS... (NULL-terminated): 0 when the script exits 0;
 * its output goes into @r for the log.
 */
static int ct_py(struct ct_run *r, const char *script, ...)
{
	char *argv[16];
	va_list ap;

	/* python3 -S (no site: seconds faster in the TCG guest) -c SCRIPT */
	va_start(ap, script);
	ct_argv(argv + 3, 13, (char *)script, ap);
	va_end(ap);
	argv[0] = CT_PY;
	argv[1] = "-S";
	argv[2] = "-c";
	if (ct_exec(r, 0, argv))
		return -1;
	return r->status;
}

static int ct_write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -errno : 0;
}

/* ---- the trainer ------------------------------------------------------ */

/**
 * struct ct_trainer - a training process (a child)
 * @pid:  its pid.
 * @go:   parent -> child: one byte per command.
 * @done: child -> parent: one byte per step done.
 */
struct ct_trainer {
	pid_t pid;
	int go;
	int done;
};

static void ct_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* One iteration of @s over the tensors @t. */
static int ct_iteration(struct tt_session *s, char **t)
{
	int l, ret = tt_iter_begin(s);

	for (l = 0; !ret && l < CT_LAYERS; l++) {
		ret = tt_layer_begin(s, l, TT_FWD);
		if (!ret)
			ret = tt_tensor_saved(s, l, t[l], CT_TENSOR);
		ct_sleep_ms(tt_st_ms(10));
		if (!ret)
			ret = tt_layer_end(s, l, TT_FWD);
	}
	for (l = CT_LAYERS - 1; !ret && l >= 0; l--) {
		ret = tt_layer_begin(s, l, TT_BWD);
		if (!ret && tt_st_check_sample(t[l], CT_TENSOR, l) != -1)
			ret = -EIO;
		ct_sleep_ms(tt_st_ms(10));
		if (!ret)
			ret = tt_layer_end(s, l, TT_BWD);
	}
	return ret;
}

/*
 * The child: open a session ('o'), then per byte from the parent: 'i'
 * runs one iteration ('d' when done, 'e' on an error), 'x' (or the pipe
 * closing) closes the session and exits.
 */
static void ct_trainer_child(int go, int done, uid_t uid)
{
	struct tt_session *s;
	char *t[CT_LAYERS], c;
	int l;

	if (uid)
		ct_become_nobody();
	s = tt_open();
	if (!s || strcmp(tt_backend(s), "kernel"))
		_exit(3);
	for (l = 0; l < CT_LAYERS; l++) {
		t[l] = tt_st_map(CT_TENSOR, -1);
		if (!t[l])
			_exit(4);
		tt_st_fill(t[l], CT_TENSOR, l);
	}
	c = 'o';
	if (write(done, &c, 1) != 1)
		_exit(5);
	while (read(go, &c, 1) == 1 && c == 'i') {
		c = ct_iteration(s, t) ? 'e' : 'd';
		if (write(done, &c, 1) != 1)
			_exit(5);
	}
	tt_close(s);
	_exit(0);
}

/* Start a trainer running as @uid; 0 once its session is open. */
static int ct_trainer_start(struct ct_trainer *tr, uid_t uid)
{
	int go[2], done[2];
	char c;

	if (pipe(go) || pipe(done))
		return -errno;
	tr->pid = fork();
	if (tr->pid < 0)
		return -errno;
	if (!tr->pid) {
		close(go[1]);
		close(done[0]);
		ct_trainer_child(go[0], done[1], uid);
	}
	close(go[0]);
	close(done[1]);
	tr->go = go[1];
	tr->done = done[0];
	if (read(tr->done, &c, 1) != 1 || c != 'o')
		return -EIO;
	return 0;
}

/* Run @n iterations in the trainer: 0, or -EIO. */
static int ct_trainer_iters(struct ct_trainer *tr, unsigned int n)
{
	char c = 'i';

	while (n--) {
		if (write(tr->go, &c, 1) != 1 || read(tr->done, &c, 1) != 1 ||
		    c != 'd')
			return -EIO;
		c = 'i';
	}
	return 0;
}

/* Let the trainer close its session and exit; its exit code. */
static int ct_trainer_stop(struct ct_trainer *tr)
{
	char c = 'x';
	int st;

	if (tr->pid <= 0)
		return 0;
	if (write(tr->go, &c, 1) != 1)
		kill(tr->pid, SIGKILL);
	close(tr->go);
	close(tr->done);
	waitpid(tr->pid, &st, 0);
	tr->pid = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- raw generic netlink ---------------------------------------------- */

/**
 * struct ct_ids - session ids seen in a sessions dump
 * @id:    the ids, in dump order.
 * @n:     how many.
 * @cap:   room.
 */
struct ct_ids {
	uint64_t *id;
	size_t n;
	size_t cap;
};

static void ct_ids_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[TT_A_MAX + 1];
	struct ct_ids *ids = arg;

	tt_st_nl_attrs(nlh, tb, TT_A_MAX);
	if (!tb[TT_A_SESSION])
		return;
	if (ids->n == ids->cap) {
		ids->cap = ids->cap ? 2 * ids->cap : 1024;
		ids->id = realloc(ids->id, ids->cap * sizeof(*ids->id));
	}
	ids->id[ids->n++] = tt_st_nla_u64(tb[TT_A_SESSION]);
}

/* A raw sessions dump into @ids (reset first). */
static int ct_dump_sessions(struct tt_st_nl *nl, struct ct_ids *ids,
			    struct tt_st_nl_reply *rep)
{
	ids->n = 0;
	tt_st_nl_msg(nl, nl->family, TT_CMD_GET_SESSIONS, NLM_F_DUMP);
	return tt_st_nl_talk(nl, rep, ct_ids_cb, ids);
}

/* ---- the fixture ------------------------------------------------------ */

FIXTURE(ctl)
{
	struct tt_st_topo topo;
	char dir[64];
	unsigned int nparams;
	char pname[CT_MAX_PARAMS][256];
	char pval[CT_MAX_PARAMS][64];
	mode_t dev_mode;
	struct ct_trainer tr;
	struct ct_trainer tr2;
	pid_t kids[4];
};

FIXTURE_SETUP(ctl)
{
	char path[PATH_MAX], exe[PATH_MAX];
	struct dirent *de;
	struct stat st;
	ssize_t n;
	DIR *d;

	memset(&self->tr, 0, sizeof(self->tr));
	memset(&self->tr2, 0, sizeof(self->tr2));
	memset(self->kids, 0, sizeof(self->kids));
	self->dir[0] = 0;
	self->dev_mode = 0;
	self->nparams = 0;
	TT_SETUP_NODES(&self->topo, 1);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_LT(0, n);
	exe[n] = 0;
	snprintf(ct_tierctl, sizeof(ct_tierctl), "%s/../ctl/tierctl",
		 dirname(exe));
	/* make selftests builds it: missing is a broken build, not a skip */
	ASSERT_EQ(0, access(ct_tierctl, X_OK))
		TH_LOG("%s: %s", ct_tierctl, strerror(errno));
	/* the trainers' 10 ms per layer pass, scaled to this guest's moves */
	TT_CALIBRATE(&self->topo, CT_TENSOR);
	ASSERT_EQ(0, stat(TT_ST_DEV, &st));
	self->dev_mode = st.st_mode & 07777;

	/* Every writable parameter, to restore. */
	d = opendir(TT_ST_PARAMS);
	ASSERT_NE(NULL, d);
	while ((de = readdir(d)) && self->nparams < CT_MAX_PARAMS) {
		unsigned int i = self->nparams;

		snprintf(path, sizeof(path), TT_ST_PARAMS "/%s", de->d_name);
		if (de->d_name[0] == '.' || stat(path, &st) ||
		    !(st.st_mode & S_IWUSR))
			continue;
		snprintf(self->pname[i], sizeof(self->pname[i]), "%s",
			 de->d_name);
		ASSERT_LT(0, tt_st_read_file(path, self->pval[i],
					     sizeof(self->pval[i])));
		self->nparams++;
	}
	closedir(d);
	snprintf(self->dir, sizeof(self->dir), "/tmp/ct.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, chmod(self->dir, 0777));
}

FIXTURE_TEARDOWN(ctl)
{
	char path[PATH_MAX], cmd[PATH_MAX + 16];
	struct ct_run r;
	unsigned int i;

	/* Helpers left by a failed test (they hold the output pipe open). */
	for (i = 0; i < 4; i++) {
		if (self->kids[i] > 0) {
			kill(self->kids[i], SIGKILL);
			waitpid(self->kids[i], NULL, 0);
		}
	}
	ct_trainer_stop(&self->tr);
	ct_trainer_stop(&self->tr2);
	for (i = 0; i < self->nparams; i++) {
		snprintf(path, sizeof(path), TT_ST_PARAMS "/%s", self->pname[i]);
		tt_st_write_file(path, self->pval[i]);
	}
	if (ct_tierctl[0] && !access(ct_tierctl, X_OK)) {
		ct_ctl(&r, 0, "tiers", "set", "--fast", "auto", "--slow",
		       "auto", NULL);
		ct_run_free(&r);
	}
	if (self->dev_mode)
		chmod(TT_ST_DEV, self->dev_mode);
	tt_st_write_file("/sys/kernel/tracing/events/tiertrain/enable", "0");
	if (self->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
		if (system(cmd))
			fprintf(stderr, "# could not remove %s\n", self->dir);
	}
}

/* The output of a run, for failure messages. */
#define CT_LOG(r) TH_LOG("exit %d\nstdout:\n%s\nstderr:\n%s", (r)->status, \
			 (r)->out ? (r)->out : "", (r)->err ? (r)->err : "")

/* tierctl ... exits @code. */
#define CT_EXPECT(r, code, uid, ...) do {				\
	ASSERT_EQ(0, ct_ctl((r), (uid), __VA_ARGS__, NULL));		\
	ASSERT_EQ((code), (r)->status) CT_LOG(r);			\
} while (0)

/* python3 -c SCRIPT ARGS... exits 0. */
#define CT_PY_OK(r, script, ...) do {					\
	int _st = ct_py((r), (script), __VA_ARGS__, NULL);		\
	ASSERT_EQ(0, _st) CT_LOG(r);					\
	ct_run_free(r);							\
} while (0)

/* ---- the tests -------------------------------------------------------- */

TEST_F_TIMEOUT(ctl, usage, 120)
{
	static const char *const verbs[] = {
		"status", "tiers", "sessions", "stats", "config", "trace",
		"monitor", "plot", "simulate", "help",
	};
	struct ct_run r;
	unsigned int i;

	TT_SKIP_IF_SETUP_SKIPPED();
	/* Every verb's --help is checked by the host unit tests. */
	CT_EXPECT(&r, 0, 0, "help");
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		ASSERT_NE(NULL, strstr(r.out, verbs[i])) CT_LOG(&r);
	ct_run_free(&r);
	CT_EXPECT(&r, 0, 0, "trace", "--help");
	ASSERT_EQ(0, strncmp(r.out, "Usage: tierctl trace", 20)) CT_LOG(&r);
	ct_run_free(&r);
	CT_EXPECT(&r, 1, 0, "nope");
	ASSERT_NE(NULL, strstr(r.err, "unknown verb 'nope'")) CT_LOG(&r);
	ct_run_free(&r);
}

TEST_F_TIMEOUT(ctl, status_tiers, 120)
{
	char fast[16], slow[16], sj[PATH_MAX], tj[PATH_MAX];
	struct ct_run r, py;

	TT_SKIP_IF_SETUP_SKIPPED();
	snprintf(sj, sizeof(sj), "%s/status.json", self->dir);
	snprintf(tj, sizeof(tj), "%s/tiers.json", self->dir);
	CT_EXPECT(&r, 0, 0, "-j", "status");
	ASSERT_EQ(0, ct_write_text(sj, r.out));
	ct_run_free(&r);
	CT_EXPECT(&r, 0, 0, "-j", "tiers");
	ASSERT_EQ(0, ct_write_text(tj, r.out));
	ct_run_free(&r);
	/* the global options go after the verb too: the same JSON (but free) */
	CT_EXPECT(&r, 0, 0, "tiers", "-j");
	ASSERT_EQ(0, ct_py(&py, "import json, sys\n"
			   "def strip(d):\n"
			   "    d['nodes'] = [{k: v for k, v in n.items() if k != 'free_bytes'} for n in d['nodes']]\n"
			   "    return d\n"
			   "a, b = json.loads(sys.argv[1]), json.load(open(sys.argv[2]))\n"
			   "assert strip(a) == strip(b), (a, b)\n",
			   r.out, tj, NULL)) CT_LOG(&py);
	ct_run_free(&py);
	ct_run_free(&r);
	snprintf(fast, sizeof(fast), "%d", self->topo.fast);
	snprintf(slow, sizeof(slow), "%d", self->topo.slow);
	CT_PY_OK(&r,
		 "import json, sys\n"
		 "st = json.load(open(sys.argv[1])); ti = json.load(open(sys.argv[2]))\n"
		 "fast, slow = int(sys.argv[3]), int(sys.argv[4])\n"
		 "assert st['abi'] == 1 and st['sessions'] >= 0, st\n"
		 "roles = {n['node']: n['role'] for n in ti['nodes']}\n"
		 "assert roles[fast] == 'fast' and roles[slow] == 'slow', roles\n"
		 "assert ti['fast_nodes'] == '' and ti['slow_nodes'] == '', ti\n"
		 "f = [n for n in ti['nodes'] if n['node'] == fast][0]\n"
		 "assert roles[f['slow_target']] == 'slow', f\n"
		 "assert all(n['slow_target'] is None for n in ti['nodes'] if n['role'] != 'fast')\n"
		 "assert [n['node'] for n in st['nodes']] == [n['node'] for n in ti['nodes']]\n",
		 sj, tj, fast, slow);
	CT_EXPECT(&r, 0, 0, "tiers");
	ASSERT_NE(NULL, strstr(r.out, "automatic (nodes with CPUs)")) CT_LOG(&r);
	ct_run_free(&r);
}

TEST_F_TIMEOUT(ctl, tiers_set, 120)
{
	char small[16], slow[16], bad[16], t1[PATH_MAX], t2[PATH_MAX],
	     t3[PATH_MAX], fast[16];
	struct ct_run r;

	TT_SKIP_IF_SETUP_SKIPPED();
	if (self->topo.small < 0)
		SKIP(return, "needs two memory-only nodes");
	snprintf(t1, sizeof(t1), "%s/tiers1.json", self->dir);
	snprintf(t2, sizeof(t2), "%s/tiers2.json", self->dir);
	snprintf(t3, sizeof(t3), "%s/tiers3.json", self->dir);
	snprintf(small, sizeof(small), "%d", self->topo.small);
	snprintf(slow, sizeof(slow), "%d", self->topo.slow);
	snprintf(fast, sizeof(fast), "%d", self->topo.fast);

	CT_EXPECT(&r, 0, 0, "tiers", "set", "--slow", small);
	ct_run_free(&r);
	CT_EXPECT(&r, 0, 0, "-j", "tiers");
	ASSERT_EQ(0, ct_write_text(t1, r.out));
	ct_run_free(&r);

	/* Refused requests name the node and change nothing. */
	CT_EXPECT(&r, 1, 0, "tiers", "set", "--slow", "63");
	ASSERT_NE(NULL, strstr(r.err, "node 63")) CT_LOG(&r);
	ASSERT_NE(NULL, strstr(r.err, "does not exist")) CT_LOG(&r);
	ct_run_free(&r);
	CT_EXPECT(&r, 1, 0, "tiers", "set", "--fast", fast, "--slow", fast);
	ASSERT_NE(NULL, strstr(r.err, "both fast and slow")) CT_LOG(&r);
	ct_run_free(&r);
	CT_EXPECT(&r, 1, 0, "tiers", "set", "--fast", small);
	ASSERT_NE(NULL, strstr(r.err, "both fast and slow")) CT_LOG(&r);
	ct_run_free(&r);
	if (self->topo.offline >= 0) {
		snprintf(bad, sizeof(bad), "%d", self->topo.offline);
		CT_EXPECT(&r, 1, 0, "tiers", "set", "--slow", bad);
		ASSERT_NE(NULL, strstr(r.err, "offline or has no memory"))
			CT_LOG(&r);
		ct_run_free(&r);
	}
	CT_EXPECT(&r, 1, 0, "tiers", "set", "--slow", "1;2");
	ASSERT_NE(NULL, strstr(r.err, "'1;2' is not a node list")) CT_LOG(&r);
	ct_run_free(&r);
	CT_EXPECT(&r, 0, 0, "-j", "tiers");
	ASSERT_EQ(0, ct_write_text(t2, r.out));
	ct_run_free(&r);

	CT_EXPECT(&r, 0, 0, "tiers", "set", "--slow", "auto");
	ct_run_free(&r);
	CT_EXPECT(&r, 0, 0, "-j", "tiers");
	ASSERT_EQ(0, ct_write_text(t3, r.out));
	ct_run_free(&r);
	CT_PY_OK(&r,
		 "import json, sys\n"
		 "t1, t2, t3 = (json.load(open(f)) for f in sys.argv[1:4])\n"
		 "fast, small, slow = map(int, sys.argv[4:7])\n"
		 "n = {x['node']: x for x in t1['nodes']}\n"
		 "assert t1['slow_nodes'] == sys.argv[5] and t1['fast_nodes'] == '', t1\n"
		 "assert n[small]['role'] == 'slow' and n[small]['role_source'] == 'param', n[small]\n"
		 "assert n[slow]['role'] == 'none', n[slow]\n"
		 "assert n[fast]['slow_target'] == small, n[fast]\n"
		 "assert t2['slow_nodes'] == t1['slow_nodes'] and t2['fast_nodes'] == '', t2\n"
		 "n = {x['node']: x for x in t3['nodes']}\n"
		 "assert t3['slow_nodes'] == '' and n[slow]['role'] == 'slow', t3\n",
		 t1, t2, t3, fast, small, slow);
}

TEST_F_TIMEOUT(ctl, config_get_set, 120)
{
	char cj[PATH_MAX], v[64];
	struct ct_run r;

	TT_SKIP_IF_SETUP_SKIPPED();
	snprintf(cj, sizeof(cj), "%s/config.json", self->dir);
	CT_EXPECT(&r, 0, 0, "-j", "config");
	ASSERT_EQ(0, ct_write_text(cj, r.out));
	ct_run_free(&r);
	CT_PY_OK(&r,
		 "import json, sys, os\n"
		 "c = json.load(open(sys.argv[1]))\n"
		 "keys = [e['key'] for e in c]\n"
		 "for k in ['workers', 'batch_pages', 'max_ranges', 'max_layers', 'profile_iters',\n"
		 "          'stay_time_us', 'er_seed_mbps', 'pr_seed_mbps', 'evict_workers',\n"
		 "          'prefetch_workers', 'sync_late', 'bw_cap_mbps', 'min_migrate_kib', 'event_ring',\n"
		 "          'anchor', 'alap', 'defer_late', 'merge', 'count', 'dynamic',\n"
		 "          'mover_timeout_ms', 'budget_mib', 'mover_base']:\n"
		 "    assert k in keys, k\n"
		 "for e in c:\n"
		 "    assert e['min'] <= e['value'] <= e['max'] and e['min'] <= e['default'] <= e['max'], e\n"
		 "    p = '/sys/module/tiertrain/parameters/' + e['key']\n"
		 "    assert int(open(p).read()) == e['value'], e\n"
		 "    assert e['description'] and e['applies'], e\n",
		 cj);

	/* One table: tierctl and the parameters see the same values. */
	CT_EXPECT(&r, 0, 0, "config", "set", "stay_time_us=1234");
	ASSERT_NE(NULL, strstr(r.out, " -> 1234")) CT_LOG(&r);
	ct_run_free(&r);
	ASSERT_LT(0, tt_st_param_read_str("stay_time_us", v, sizeof(v)));
	ASSERT_STREQ("1234", v);
	ASSERT_EQ(0, tt_st_param_write_str("stay_time_us", "4321"));
	CT_EXPECT(&r, 0, 0, "-j", "config", "get", "stay_time_us");
	ASSERT_NE(NULL, strstr(r.out, "\"value\":4321")) CT_LOG(&r);
	ct_run_free(&r);
	ASSERT_EQ(-EINVAL, tt_st_param_write_str("stay_time_us",
					    "60000001"));

	/* Refused: nothing changes, the key and value are named. */
	CT_EXPECT(&r, 1, 0, "config", "set", "stay_time_us=7", "nosuch=2");
	ASSERT_NE(NULL, strstr(r.err, "unknown key \"nosuch\"")) CT_LOG(&r);
	ct_run_free(&r);
	CT_EXPECT(&r, 1, 0, "config", "set", "stay_time_us=7",
		  "max_layers=0");
	ASSERT_NE(NULL, strstr(r.err, "max_layers=0 is out of range 1..")) CT_LOG(&r);
	ct_run_free(&r);
	CT_EXPECT(&r, 1, 0, "config", "set", "stay_time_us=99999999999");
	ASSERT_NE(NULL, strstr(r.err, "stay_time_us=99999999999 is out of range 0..60000000"))
		CT_LOG(&r);
	ct_run_free(&r);
	ASSERT_LT(0, tt_st_param_read_str("stay_time_us", v, sizeof(v)));
	ASSERT_STREQ("4321", v);
	CT_EXPECT(&r, 1, 0, "config", "set", "stay_time_us=-1");
	ASSERT_NE(NULL, strstr(r.err, "must be a whole number")) CT_LOG(&r);
	ct_run_free(&r);
	CT_EXPECT(&r, 1, 0, "config", "set", "stay_time_us");
	ASSERT_NE(NULL, strstr(r.err, "is not KEY=VALUE")) CT_LOG(&r);
	ct_run_free(&r);
	CT_EXPECT(&r, 1, 0, "config", "get", "nosuch");
	ASSERT_NE(NULL, strstr(r.err, "unknown key \"nosuch\"")) CT_LOG(&r);
	ct_run_free(&r);
	CT_EXPECT(&r, 0, 0, "config", "get", "workers");
	ASSERT_EQ(0, strncmp(r.out, "workers = ", 10)) CT_LOG(&r);
	ct_run_free(&r);

	/* A pool size applies at once, like the parameter. */
	CT_EXPECT(&r, 0, 0, "config", "set", "evict_workers=3",
		  "prefetch_workers=2");
	ct_run_free(&r);
	ASSERT_LT(0, tt_st_param_read_str("evict_workers", v, sizeof(v)));
	ASSERT_STREQ("3", v);
}

/* The sessions of @pid as JSON, into @file. */
static int ct_sessions_json(const char *file, uid_t uid, pid_t pid)
{
	char p[16];
	struct ct_run r;
	int ret;

	snprintf(p, sizeof(p), "%d", pid);
	ret = ct_ctl(&r, uid, "-j", "sessions", pid ? p : NULL, NULL);
	if (!ret && r.status)
		ret = -EIO;
	if (!ret)
		ret = ct_write_text(file, r.out);
	ct_run_free(&r);
	return ret;
}

TEST_F_TIMEOUT(ctl, config_effects, 300)
{
	char sj[PATH_MAX], tj[PATH_MAX], sj2[PATH_MAX], tj2[PATH_MAX], pid[16];
	struct tt_ioc_sched cfg;
	struct tt_session *s;
	struct ct_run r;

	TT_SKIP_IF_SETUP_SKIPPED();
	snprintf(sj, sizeof(sj), "%s/sessions.json", self->dir);
	snprintf(tj, sizeof(tj), "%s/trace.json", self->dir);
	snprintf(sj2, sizeof(sj2), "%s/sessions2.json", self->dir);
	snprintf(tj2, sizeof(tj2), "%s/trace2.json", self->dir);

	/* sync_late: the flag new sessions start with. */
	CT_EXPECT(&r, 0, 0, "config", "set", "sync_late=1");
	ct_run_free(&r);
	TT_OPEN_KERNEL_SESSION(&s);
	ASSERT_EQ(0, tt_sched_get(s, &cfg));
	ASSERT_TRUE(cfg.flags & TT_SCHED_SYNC_LATE);
	tt_close(s);
	CT_EXPECT(&r, 0, 0, "config", "set", "sync_late=0");
	ct_run_free(&r);
	TT_OPEN_KERNEL_SESSION(&s);
	ASSERT_EQ(0, tt_sched_get(s, &cfg));
	ASSERT_FALSE(cfg.flags & TT_SCHED_SYNC_LATE);
	tt_close(s);

	/*
	 * The extensions: the flags new sessions start with, each alone
	 * (from the default, TT_SCHED_DEFAULT_FLAGS, to the reference's none).
	 */
	CT_EXPECT(&r, 0, 0, "config", "set", "anchor=1", "defer_late=1",
		  "alap=0", "count=0");
	ct_run_free(&r);
	TT_OPEN_KERNEL_SESSION(&s);
	ASSERT_EQ(0, tt_sched_get(s, &cfg));
	ASSERT_EQ(TT_SCHED_ANCHOR | TT_SCHED_DEFER_LATE, cfg.flags);
	tt_close(s);
	CT_EXPECT(&r, 0, 0, "config", "set", "anchor=0", "defer_late=0", "alap=1");
	ct_run_free(&r);
	TT_OPEN_KERNEL_SESSION(&s);
	ASSERT_EQ(0, tt_sched_get(s, &cfg));
	ASSERT_EQ(TT_SCHED_ALAP, cfg.flags);
	tt_close(s);
	CT_EXPECT(&r, 0, 0, "config", "set", "alap=0");
	ct_run_free(&r);
	CT_EXPECT(&r, 1, 0, "config", "set", "alap=2");
	ct_run_free(&r);

	/* min_migrate_kib above every layer: all dropped, nothing moves. */
	CT_EXPECT(&r, 0, 0, "config", "set", "min_migrate_kib=65536");
	ct_run_free(&r);
	ASSERT_EQ(0, ct_trainer_start(&self->tr, 0));
	ASSERT_EQ(0, ct_trainer_iters(&self->tr, 4));
	snprintf(pid, sizeof(pid), "%d", self->tr.pid);
	ASSERT_EQ(0, ct_sessions_json(sj, 0, self->tr.pid));
	CT_EXPECT(&r, 0, 0, "trace", pid, "-o", tj);
	ct_run_free(&r);
	ASSERT_EQ(0, ct_trainer_stop(&self->tr));
	CT_EXPECT(&r, 0, 0, "config", "set", "min_migrate_kib=0",
		  "event_ring=16");
	ct_run_free(&r);

	/* A 16-event ring: what it lost is reported. */
	ASSERT_EQ(0, ct_trainer_start(&self->tr, 0));
	ASSERT_EQ(0, ct_trainer_iters(&self->tr, 2));
	snprintf(pid, sizeof(pid), "%d", self->tr.pid);
	ASSERT_EQ(0, ct_sessions_json(sj2, 0, self->tr.pid));
	CT_EXPECT(&r, 0, 0, "trace", pid, "-o", tj2);
	ASSERT_NE(NULL, strstr(r.out, "events lost")) CT_LOG(&r);
	ct_run_free(&r);
	CT_PY_OK(&r,
		 "import json, sys\n"
		 "s, t, s2, t2 = (json.load(open(f)) for f in sys.argv[1:5])\n"
		 "assert len(s) == 1, s\n"
		 "s = s[0]\n"
		 "assert s['iterations'] == 4 and s['evicted_bytes'] == 0, s\n"
		 "assert s['layers_dropped'] >= 4, s\n"
		 "t = t['traceEvents']\n"
		 "d = [e['args']['reason'] for e in t if e.get('cat') == 'drop']\n"
		 "assert d.count('min_size') >= 6 and set(d) <= {'min_size', 'policy'}, d\n"
		 "assert not [e for e in t if e.get('cat') == 'migration']\n"
		 "s2 = s2[0]\n"
		 "assert s2['trace_events'] > 16, s2\n"
		 "assert s2['trace_events_lost'] == s2['trace_events'] - 16, s2\n"
		 "assert t2['otherData']['events'] == 16, t2['otherData']\n"
		 "assert t2['otherData']['events_lost'] > 0, t2['otherData']\n",
		 sj, tj, sj2, tj2);
}

TEST_F_TIMEOUT(ctl, bw_cap, 300)
{
	const size_t len = 32 * TT_ST_MIB;
	struct tt_migrate_result res;
	uint64_t capped, free_ns;
	struct ct_run r;
	int fd;
	char *buf;

	TT_SKIP_IF_SETUP_SKIPPED();
	buf = tt_st_map(len, -1);
	ASSERT_NE(NULL, buf);
	tt_st_fill(buf, len, 7);
	fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);

	CT_EXPECT(&r, 0, 0, "config", "set", "bw_cap_mbps=32");
	ct_run_free(&r);
	ASSERT_EQ(0, tt_st_ioc_migrate(fd, (uintptr_t)buf, len, self->topo.slow,
				       0, &res));
	ASSERT_EQ(len / getpagesize(), res.moved);
	capped = res.elapsed_ns;
	CT_EXPECT(&r, 0, 0, "config", "set", "bw_cap_mbps=0");
	ct_run_free(&r);
	ASSERT_EQ(0, tt_st_ioc_migrate(fd, (uintptr_t)buf, len, self->topo.fast,
				       0, &res));
	free_ns = res.elapsed_ns;
	TT_ASSERT_PATTERN(buf, len, 7);
	TH_LOG("32 MiB with bw_cap_mbps=32: %.3f s (%.1f MiB/s); without: %.3f s (%.1f MiB/s)",
	       capped / 1e9, 32e9 / capped, free_ns / 1e9, 32e9 / free_ns);
	/*
	 * At most the cap, plus the bucket's 10 ms burst: the sleeps make
	 * this a lower bound on the time, which a loaded host cannot break.
	 */
	ASSERT_GE(capped, (uint64_t)((32.0 - 0.32) / 32.0 * 1e9));
	close(fd);
	munmap(buf, len);
}

TEST_F_TIMEOUT(ctl, permissions, 300)
{
	char rp[16], np[16], sj[PATH_MAX], nj[PATH_MAX], tf[PATH_MAX];
	struct ct_run r;

	TT_SKIP_IF_SETUP_SKIPPED();
	snprintf(sj, sizeof(sj), "%s/root.json", self->dir);
	snprintf(nj, sizeof(nj), "%s/nobody.json", self->dir);
	snprintf(tf, sizeof(tf), "%s/nobody-trace.json", self->dir);

	/* Writes need CAP_SYS_ADMIN; the message says so. */
	CT_EXPECT(&r, 1, CT_NOBODY, "config", "set", "stay_time_us=1");
	ASSERT_NE(NULL, strstr(r.err, "CAP_SYS_ADMIN")) CT_LOG(&r);
	ct_run_free(&r);
	CT_EXPECT(&r, 1, CT_NOBODY, "tiers", "set", "--slow", "auto");
	ASSERT_NE(NULL, strstr(r.err, "CAP_SYS_ADMIN")) CT_LOG(&r);
	ct_run_free(&r);
	CT_EXPECT(&r, 1, CT_NOBODY, "monitor", "--timeout", "1");
	ASSERT_NE(NULL, strstr(r.err, "CAP_SYS_ADMIN")) CT_LOG(&r);
	ct_run_free(&r);
	/* Reads work. */
	CT_EXPECT(&r, 0, CT_NOBODY, "status");
	ct_run_free(&r);
	CT_EXPECT(&r, 0, CT_NOBODY, "config");
	ct_run_free(&r);
	CT_EXPECT(&r, 0, CT_NOBODY, "tiers");
	ct_run_free(&r);

	/* A session of root and one of nobody. */
	ASSERT_EQ(0, chmod(TT_ST_DEV, 0666));
	ASSERT_EQ(0, ct_trainer_start(&self->tr, 0));
	ASSERT_EQ(0, ct_trainer_start(&self->tr2, CT_NOBODY));
	ASSERT_EQ(0, ct_trainer_iters(&self->tr2, 1));
	snprintf(rp, sizeof(rp), "%d", self->tr.pid);
	snprintf(np, sizeof(np), "%d", self->tr2.pid);
	ASSERT_EQ(0, ct_sessions_json(sj, 0, 0));
	ASSERT_EQ(0, ct_sessions_json(nj, CT_NOBODY, 0));
	CT_EXPECT(&r, 1, CT_NOBODY, "stats", rp);
	ASSERT_NE(NULL, strstr(r.err, "no tiertrain session owned by you"))
		CT_LOG(&r);
	ct_run_free(&r);
	CT_EXPECT(&r, 1, CT_NOBODY, "sessions", rp);
	ct_run_free(&r);
	CT_EXPECT(&r, 1, CT_NOBODY, "trace", rp, "-o", tf);
	ASSERT_NE(NULL, strstr(r.err, "owned by you")) CT_LOG(&r);
	ct_run_free(&r);
	CT_EXPECT(&r, 1, CT_NOBODY, "trace", np, "-o", tf, "--follow");
	ASSERT_NE(NULL, strstr(r.err, "CAP_SYS_ADMIN")) CT_LOG(&r);
	ct_run_free(&r);
	CT_EXPECT(&r, 0, CT_NOBODY, "stats", np);
	ASSERT_NE(NULL, strstr(r.out, "iterations")) CT_LOG(&r);
	ct_run_free(&r);
	CT_EXPECT(&r, 0, CT_NOBODY, "trace", np, "-o", tf);
	ct_run_free(&r);
	CT_PY_OK(&r,
		 "import json, sys\n"
		 "root = json.load(open(sys.argv[1])); nobody = json.load(open(sys.argv[2]))\n"
		 "rp, np = int(sys.argv[3]), int(sys.argv[4])\n"
		 "assert {rp, np} <= {s['pid'] for s in root}, root\n"
		 "assert [s['pid'] for s in nobody] == [np], nobody\n"
		 "assert nobody[0]['uid'] == 65534 and nobody[0]['iterations'] == 1, nobody\n"
		 "d = json.load(open(sys.argv[5]))\n"
		 "assert [e for e in d['traceEvents'] if e.get('cat') == 'layer'], d\n",
		 sj, nj, rp, np, tf);
	CT_EXPECT(&r, 0, CT_NOBODY, "stats");
	ASSERT_NE(NULL, strstr(r.out, "sessions: 1\n")) CT_LOG(&r);
	ct_run_free(&r);
}

/* Open @n sessions into @fds; 0 or -errno. */
static int ct_open_sessions(int *fds, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		fds[i] = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
		if (fds[i] < 0)
			return -errno;
	}
	return 0;
}

static uint64_t ct_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int ct_u64_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* Median of 5 full dumps of the sessions, in ns. */
static uint64_t ct_dump_cost(struct tt_st_nl *nl, struct ct_ids *ids)
{
	uint64_t t[5];
	struct tt_st_nl_reply rep;
	unsigned int i;

	for (i = 0; i < 5; i++) {
		uint64_t t0 = ct_now_ns();

		ct_dump_sessions(nl, ids, &rep);
		t[i] = ct_now_ns() - t0;
	}
	qsort(t, 5, sizeof(t[0]), ct_u64_cmp);
	return t[2];
}

TEST_F_TIMEOUT(ctl, dump_churn, 600)
{
	static const unsigned int steps[] = { 10, 100, 1000 };
	struct rlimit rl = { 4096, 4096 };
	unsigned int i, k, n = 0, intr = 0;
	struct ct_ids ids = { 0 };
	struct tt_st_nl_reply rep;
	char sj[PATH_MAX];
	uint64_t first;
	struct tt_st_nl nl;
	struct ct_run r;
	int fds[1000];
	pid_t churn;

	TT_SKIP_IF_SETUP_SKIPPED();
	snprintf(sj, sizeof(sj), "%s/sessions.json", self->dir);
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	ASSERT_EQ(0, tt_st_nl_open(&nl));

	/* Dump cost and restart: a large dump takes several parts. */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, ct_open_sessions(fds + n, steps[i] - n));
		n = steps[i];
		TH_LOG("sessions dump with %u sessions: %.1f us per session",
		       n, ct_dump_cost(&nl, &ids) / 1e3 / n);
	}
	ASSERT_EQ(0, ct_dump_sessions(&nl, &ids, &rep));
	ASSERT_EQ(0, rep.error);
	ASSERT_FALSE(rep.intr);
	ASSERT_EQ(1000, ids.n);
	ASSERT_LT(1, rep.parts);
	for (k = 1; k < ids.n; k++)
		ASSERT_LT(ids.id[k - 1], ids.id[k]);
	TH_LOG("1000 sessions: %u messages in %u parts", rep.msgs, rep.parts);
	first = ids.id[0];

	/* Sessions come and go while we dump. */
	churn = fork();
	ASSERT_LE(0, churn);
	self->kids[2] = churn;
	if (!churn) {
		for (;;) {
			int fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);

			if (fd >= 0)
				close(fd);
		}
	}
	for (i = 0; i < 15; i++) {
		ASSERT_EQ(0, ct_dump_sessions(&nl, &ids, &rep));
		ASSERT_EQ(0, rep.error);
		intr += rep.intr;
		/* Interrupted or not: never twice, never one of ours missing. */
		for (k = 1; k < ids.n; k++)
			ASSERT_LT(ids.id[k - 1], ids.id[k]);
		for (k = 0; k < ids.n && ids.id[k] != first; k++)
			;
		ASSERT_GT(ids.n, k);
		ASSERT_LE(1000, ids.n - k);
	}
	TH_LOG("15 dumps with sessions coming and going: %u flagged NLM_F_DUMP_INTR",
	       intr);
	/* Only our sessions: the churn of another process does not matter. */
	for (i = 0; i < 5; i++) {
		struct nlmsghdr *nlh;
		uint32_t me = getpid();

		ids.n = 0;
		nlh = tt_st_nl_msg(&nl, nl.family, TT_CMD_GET_SESSIONS, NLM_F_DUMP);
		tt_st_nl_put(nlh, TT_A_PID, &me, sizeof(me));
		ASSERT_EQ(0, tt_st_nl_talk(&nl, &rep, ct_ids_cb, &ids));
		ASSERT_EQ(0, rep.error);
		ASSERT_FALSE(rep.intr);
		ASSERT_EQ(1000, ids.n);
	}
	ASSERT_EQ(0, ct_sessions_json(sj, 0, getpid()));
	CT_PY_OK(&r,
		 "import json, sys\n"
		 "s = json.load(open(sys.argv[1]))\n"
		 "ids = [x['session'] for x in s]\n"
		 "assert len(ids) == 1000 and ids == sorted(set(ids)), len(ids)\n",
		 sj);
	kill(churn, SIGKILL);
	waitpid(churn, NULL, 0);
	self->kids[2] = 0;
	for (i = 0; i < n; i++)
		close(fds[i]);
	free(ids.id);
	tt_st_nl_close(&nl);
}

/* The events of a dump: how many, and the seq of the first and last. */
struct ct_events {
	unsigned int n;
	unsigned int gaps;	/* events whose seq is not the previous + 1 */
	uint64_t first;
	uint64_t last;
};

static void ct_events_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct ct_events *ev = arg;
	struct tt_trace_event te;
	const struct nlattr *a;

	for (a = tt_st_nl_next(nlh, NULL); a; a = tt_st_nl_next(nlh, a)) {
		if (a->nla_type == TT_A_EVENT) {
			memcpy(&te, tt_st_nla_data(a), sizeof(te));
			if (!ev->n++)
				ev->first = te.seq;
			else if (te.seq != ev->last + 1)
				ev->gaps++;
			ev->last = te.seq;
		}
	}
}

TEST_F_TIMEOUT(ctl, netlink_errors, 300)
{
	struct ct_events ev = { 0 };
	struct tt_st_nl_reply rep;
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	uint64_t since, big = 999999999;
	uint32_t pid;
	struct tt_st_nl nl;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, tt_st_nl_open(&nl));
	ASSERT_EQ(0, ct_trainer_start(&self->tr, 0));
	ASSERT_EQ(0, ct_trainer_iters(&self->tr, 2));
	pid = self->tr.pid;

	tt_st_nl_msg(&nl, nl.family, TT_CMD_GET_EVENTS, NLM_F_DUMP);
	ASSERT_EQ(0, tt_st_nl_talk(&nl, &rep, NULL, NULL));
	ASSERT_EQ(-EINVAL, rep.error);
	ASSERT_NE(NULL, strstr(rep.extack, "exactly one of TT_A_SESSION and TT_A_PID"))
		TH_LOG("extack: %s", rep.extack);

	nlh = tt_st_nl_msg(&nl, nl.family, TT_CMD_GET_EVENTS, NLM_F_DUMP);
	tt_st_nl_put(nlh, TT_A_PID, &pid, sizeof(pid));
	tt_st_nl_put(nlh, TT_A_SESSION, &big, sizeof(big));
	ASSERT_EQ(0, tt_st_nl_talk(&nl, &rep, NULL, NULL));
	ASSERT_EQ(-EINVAL, rep.error);
	ASSERT_NE(NULL, strstr(rep.extack, "(got both)")) TH_LOG("%s", rep.extack);

	nlh = tt_st_nl_msg(&nl, nl.family, TT_CMD_GET_LAYERS, NLM_F_DUMP);
	tt_st_nl_put(nlh, TT_A_SESSION, &big, sizeof(big));
	ASSERT_EQ(0, tt_st_nl_talk(&nl, &rep, NULL, NULL));
	ASSERT_EQ(-ENOENT, rep.error);
	ASSERT_NE(NULL, strstr(rep.extack, "no session 999999999"))
		TH_LOG("%s", rep.extack);

	nlh = tt_st_nl_msg(&nl, nl.family, TT_CMD_GET_EVENTS, NLM_F_DUMP);
	tt_st_nl_put(nlh, TT_A_COMM, "x", 2);
	ASSERT_EQ(0, tt_st_nl_talk(&nl, &rep, NULL, NULL));
	ASSERT_EQ(-EINVAL, rep.error);
	ASSERT_NE(0, rep.extack[0]);

	nlh = tt_st_nl_msg(&nl, nl.family, TT_CMD_SET_CONFIG, 0);
	nest = tt_st_nl_put(nlh, TT_A_CONFIG | NLA_F_NESTED, NULL, 0);
	tt_st_nl_put(nlh, TT_CFG_A_KEY, "stay_time_us", sizeof("stay_time_us"));
	nest->nla_len = (char *)nlh + nlh->nlmsg_len - (char *)nest;
	ASSERT_EQ(0, tt_st_nl_talk(&nl, &rep, NULL, NULL));
	ASSERT_EQ(-EINVAL, rep.error);
	ASSERT_NE(NULL, strstr(rep.extack, "key \"stay_time_us\" without TT_CFG_A_VALUE"))
		TH_LOG("%s", rep.extack);

	tt_st_nl_msg(&nl, nl.family, TT_CMD_SET_TIERS, 0);
	ASSERT_EQ(0, tt_st_nl_talk(&nl, &rep, NULL, NULL));
	ASSERT_EQ(-EINVAL, rep.error);
	ASSERT_NE(NULL, strstr(rep.extack, "needs TT_A_FAST_NODES or TT_A_SLOW_NODES"))
		TH_LOG("%s", rep.extack);

	nlh = tt_st_nl_msg(&nl, nl.family, TT_CMD_GET_STATUS, 0);
	tt_st_nl_put(nlh, TT_A_WORKERS, &pid, sizeof(pid));
	ASSERT_EQ(0, tt_st_nl_talk(&nl, &rep, NULL, NULL));
	ASSERT_EQ(-EINVAL, rep.error);
	ASSERT_NE(NULL, strstr(rep.extack, "TT_CMD_GET_STATUS takes no attributes"))
		TH_LOG("%s", rep.extack);

	/* TT_A_SINCE: exactly the events after it. */
	nlh = tt_st_nl_msg(&nl, nl.family, TT_CMD_GET_EVENTS, NLM_F_DUMP);
	tt_st_nl_put(nlh, TT_A_PID, &pid, sizeof(pid));
	ASSERT_EQ(0, tt_st_nl_talk(&nl, &rep, ct_events_cb, &ev));
	ASSERT_EQ(0, rep.error);
	ASSERT_LT(20, ev.n);
	ASSERT_EQ(1, ev.first);
	ASSERT_EQ(ev.n, ev.last);
	ASSERT_EQ(0, ev.gaps);
	since = ev.last - 5;
	memset(&ev, 0, sizeof(ev));
	nlh = tt_st_nl_msg(&nl, nl.family, TT_CMD_GET_EVENTS, NLM_F_DUMP);
	tt_st_nl_put(nlh, TT_A_PID, &pid, sizeof(pid));
	tt_st_nl_put(nlh, TT_A_SINCE, &since, sizeof(since));
	ASSERT_EQ(0, tt_st_nl_talk(&nl, &rep, ct_events_cb, &ev));
	ASSERT_EQ(0, rep.error);
	/*
	 * The session's workers may log migrations after the trainer's last
	 * iteration returned, so the log can have grown since the first dump:
	 * exactly the events after @since means from since + 1, without gaps,
	 * and at least the five that were there.
	 */
	ASSERT_EQ(since + 1, ev.first);
	ASSERT_EQ(0, ev.gaps);
	ASSERT_EQ(ev.last - since, ev.n);
	ASSERT_LE(5, ev.n);
	if (ev.n != 5)
		TH_LOG("%u events logged between the two dumps", ev.n - 5);
	tt_st_nl_close(&nl);
}

/* Lines of @path: -errno, or how many contain @needle. */
static int ct_count_lines(const char *path, const char *needle)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, needle);
	fclose(f);
	return n;
}

TEST_F_TIMEOUT(ctl, monitor, 600)
{
	char out[PATH_MAX], jout[PATH_MAX], pid[16];
	unsigned int round;
	struct ct_run r;
	pid_t mon;
	int st;

	TT_SKIP_IF_SETUP_SKIPPED();
	snprintf(out, sizeof(out), "%s/monitor.txt", self->dir);
	snprintf(jout, sizeof(jout), "%s/monitor.json", self->dir);
	ASSERT_EQ(0, ct_trainer_start(&self->tr, 0));
	snprintf(pid, sizeof(pid), "%d", self->tr.pid);

	/*
	 * The monitor joins the group some time after it starts: iterations
	 * run until its output shows an eviction and a prefetch.
	 */
	mon = ct_spawn(out, 0, "monitor", NULL);
	ASSERT_LT(0, mon);
	self->kids[0] = mon;
	for (round = 0; round < 30; round++) {
		ASSERT_EQ(0, ct_trainer_iters(&self->tr, 1));
		if (ct_count_lines(out, " evict ") > 0 &&
		    ct_count_lines(out, " prefetch ") > 0)
			break;
	}
	ASSERT_GT(30, round);
	ASSERT_EQ(0, kill(mon, SIGINT));
	st = ct_wait(mon, 30000);
	ASSERT_EQ(0, st);
	self->kids[0] = 0;
	TH_LOG("monitor: %d eviction and %d prefetch lines after %u rounds",
	       ct_count_lines(out, " evict "), ct_count_lines(out, " prefetch "),
	       round + 1);
	ASSERT_EQ(0, ct_count_lines(out, " layer_begin "));

	/* -j --all --count: JSON lines, every type, then it stops by itself. */
	mon = ct_spawn(jout, 0, "-j", "monitor", "--all", "--count", "40",
		       "--timeout", "300", NULL);
	ASSERT_LT(0, mon);
	self->kids[0] = mon;
	for (round = 0; round < 30; round++) {
		st = ct_wait(mon, 0);
		if (st != -ETIMEDOUT)
			break;
		ASSERT_EQ(0, ct_trainer_iters(&self->tr, 1));
	}
	if (st == -ETIMEDOUT)
		st = ct_wait(mon, 60000);
	ASSERT_EQ(0, st);
	self->kids[0] = 0;
	CT_PY_OK(&r,
		 "import json, sys\n"
		 "ev = [json.loads(l) for l in open(sys.argv[1])]\n"
		 "assert len(ev) == 40, len(ev)\n"
		 "types = {e['type'] for e in ev}\n"
		 "assert {'layer_begin', 'layer_end', 'saved'} <= types, types\n"
		 "assert all(e['pid'] == int(sys.argv[2]) for e in ev)\n",
		 jout, pid);
}

TEST_F_TIMEOUT(ctl, trace_json, 600)
{
	char tj[PATH_MAX], fj[PATH_MAX], pid[16], out[PATH_MAX];
	struct ct_run r;
	pid_t tracer;

	TT_SKIP_IF_SETUP_SKIPPED();
	snprintf(tj, sizeof(tj), "%s/trace.json", self->dir);
	snprintf(fj, sizeof(fj), "%s/follow.json", self->dir);
	snprintf(out, sizeof(out), "%s/follow.out", self->dir);

	ASSERT_EQ(0, ct_trainer_start(&self->tr, 0));
	snprintf(pid, sizeof(pid), "%d", self->tr.pid);
	/* --follow from before the first iteration to the exit. */
	tracer = ct_spawn(out, 0, "trace", pid, "-o", fj, "--follow", NULL);
	ASSERT_LT(0, tracer);
	self->kids[1] = tracer;
	ASSERT_EQ(0, ct_trainer_iters(&self->tr, 5));

	CT_EXPECT(&r, 0, 0, "trace", pid, "-o", tj);
	ASSERT_NE(NULL, strstr(r.out, " spans")) CT_LOG(&r);
	ct_run_free(&r);

	/* The follower ends with the process. */
	ASSERT_EQ(0, ct_trainer_stop(&self->tr));
	ASSERT_EQ(0, ct_wait(tracer, 60000));
	self->kids[1] = 0;
	CT_PY_OK(&r,
		 "import json, sys, collections\n"
		 "d = json.load(open(sys.argv[1])); t = d['traceEvents']\n"
		 "assert d['otherData']['events_lost'] == 0, d['otherData']\n"
		 "layer = [e for e in t if e.get('cat') == 'layer']\n"
		 "per = collections.Counter((e['args']['iter'], e['name'][-3:]) for e in layer)\n"
		 "for i in range(1, 6):\n"
		 "    assert per[(i, 'fwd')] == 4 and per[(i, 'bwd')] == 4, (i, per)\n"
		 "assert all(e['dur'] >= 0 and e['ts'] >= 0 for e in t if e['ph'] == 'X')\n"
		 "mig = [e for e in t if e.get('cat') == 'migration']\n"
		 "ev = [e for e in mig if e['name'].startswith('evict')]\n"
		 "pf = [e for e in mig if e['name'].startswith('prefetch')]\n"
		 "# an eviction its layer's backward begin stopped may have moved nothing\n"
		 "assert ev and pf and any(e['args']['bytes'] > 0 for e in ev), mig[:3]\n"
		 "assert all(e['args']['bytes'] > 0 or e['args']['stopped'] for e in ev), ev\n"
		 "fwd = {(e['args']['iter'], e['args']['layer']): e for e in layer if e['name'].endswith('fwd')}\n"
		 "for e in ev:\n"
		 "    f = fwd[(e['args']['iter'], e['args']['layer'])]\n"
		 "    assert e['ts'] >= f['ts'] + f['dur'] - 0.001, (e, f)\n"
		 "c = [e for e in t if e['ph'] == 'C']\n"
		 "assert c and max(e['args']['slow'] for e in c) > 0, c[:3]\n"
		 "assert max(e['args']['fast'] for e in c) >= 4 * 2 * 1024 * 1024 - 4 * 4096\n"
		 "names = {e['args']['name'] for e in t if e['ph'] == 'M' and e['name'] == 'thread_name'}\n"
		 "assert any(n.endswith(' evict') for n in names), names\n"
		 "# --follow: every event, from the first iteration to the exit\n"
		 "d = json.load(open(sys.argv[2])); o = d['otherData']\n"
		 "assert o['events_lost'] == 0 and o['events'] > 5 * 8 * 2, o\n"
		 "its = [e for e in d['traceEvents'] if e.get('cat') == 'iteration']\n"
		 "assert [e['args']['iter'] for e in its] == [1, 2, 3, 4, 5], its\n"
		 "assert o['sessions'] and all(s['command'] != '?' for s in o['sessions']), o\n",
		 tj, fj);
	CT_EXPECT(&r, 1, 0, "trace", pid, "-o", fj);
	ct_run_free(&r);
}

TEST_F_TIMEOUT(ctl, tracepoints, 300)
{
	const char *tr = "/sys/kernel/tracing";
	char buf[256], path[PATH_MAX], rec[PATH_MAX], needle[64], cmd[8];
	unsigned int evict = 0, prefetch = 0;
	int started;
	FILE *f;

	TT_SKIP_IF_SETUP_SKIPPED();
	snprintf(path, sizeof(path), "%s/events/tiertrain/enable", tr);
	if (access(path, F_OK))
		mount("nodev", tr, "tracefs", 0, NULL);
	if (access(path, F_OK))
		SKIP(return, "no tracefs with tiertrain events at %s", tr);
	snprintf(path, sizeof(path), "%s/trace", tr);
	ASSERT_EQ(0, tt_st_write_file(path, ""));
	/*
	 * no comm recording: it would enable the scheduler's tracepoints, and
	 * patching the core kernel's text while the other vCPU runs it trapped
	 * on a stale int3 under TCG (ttwu_do_activate, 6.12, once in CI)
	 */
	snprintf(rec, sizeof(rec), "%s/options/record-cmd", tr);
	if (tt_st_read_file(rec, cmd, sizeof(cmd)) <= 0)
		cmd[0] = 0;
	if (cmd[0]) {
		ASSERT_EQ(0, tt_st_write_file(rec, "0"));
	}
	snprintf(path, sizeof(path), "%s/events/tiertrain/enable", tr);
	ASSERT_EQ(0, tt_st_write_file(path, "1"));
	started = ct_trainer_start(&self->tr, 0) ||
		  ct_trainer_iters(&self->tr, 3) ? -1 : 0;
	ASSERT_EQ(0, tt_st_write_file(path, "0"));
	if (cmd[0]) {
		ASSERT_EQ(0, tt_st_write_file(rec, cmd[0] == '1' ? "1" : "0"));
	}
	ASSERT_EQ(0, started);
	snprintf(needle, sizeof(needle), "pid=%d ", self->tr.pid);
	snprintf(path, sizeof(path), "%s/trace", tr);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	while (fgets(buf, sizeof(buf), f)) {
		if (!strstr(buf, needle))
			continue;
		evict += !!strstr(buf, "tt_evict:");
		prefetch += !!strstr(buf, "tt_prefetch:");
	}
	fclose(f);
	TH_LOG("ftrace: %u tt_evict and %u tt_prefetch events", evict, prefetch);
	ASSERT_LT(0, evict);
	ASSERT_LT(0, prefetch);
}

/*
 * tierctl stats --prometheus -o into the textfile directory of Debian's
 * real prometheus-node-exporter, scraped over loopback: the tiertrain
 * series are there with the values `tierctl -j stats PID` gives.
 */
#define CT_EXPORTER "/usr/bin/prometheus-node-exporter"
#define CT_EXPORTER_ADDR "127.0.0.1:19100"

TEST_F_TIMEOUT(ctl, prometheus_scrape, 600)
{
	char prom[128], sj[128], pid[16], arg[160];
	struct ct_run r;

	TT_SKIP_IF_SETUP_SKIPPED();
	if (access(CT_EXPORTER, X_OK))
		SKIP(return, "%s is missing (Debian's prometheus-node-exporter; make deps installs it)",
		     CT_EXPORTER);
	snprintf(prom, sizeof(prom), "%s/tiertrain.prom", self->dir);
	snprintf(sj, sizeof(sj), "%s/stats.json", self->dir);
	ASSERT_EQ(0, ct_trainer_start(&self->tr, 0));
	ASSERT_EQ(0, ct_trainer_iters(&self->tr, 4));
	/* the last iteration's prefetches have ended: the counters hold */
	usleep(200000);
	snprintf(pid, sizeof(pid), "%d", self->tr.pid);
	CT_EXPECT(&r, 0, 0, "stats", pid, "--prometheus", "-o", prom);
	ct_run_free(&r);
	CT_EXPECT(&r, 0, 0, "-j", "stats", pid);
	ASSERT_EQ(0, ct_write_text(sj, r.out));
	ct_run_free(&r);

	self->kids[0] = fork();
	ASSERT_LE(0, self->kids[0]);
	if (!self->kids[0]) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		snprintf(arg, sizeof(arg), "--collector.textfile.directory=%s",
			 self->dir);
		execl(CT_EXPORTER, CT_EXPORTER, "--collector.disable-defaults",
		      "--collector.textfile", arg,
		      "--web.listen-address=" CT_EXPORTER_ADDR, (char *)NULL);
		_exit(127);
	}
	CT_PY_OK(&r,
		 "import json, sys, time, urllib.request\n"
		 "url, sj, pid = sys.argv[1:4]\n"
		 "body = None\n"
		 "for i in range(300):\n"
		 "    try:\n"
		 "        body = urllib.request.urlopen(url, timeout=5).read().decode()\n"
		 "        break\n"
		 "    except OSError:\n"
		 "        time.sleep(0.1)\n"
		 "assert body is not None, 'the node exporter never answered on ' + url\n"
		 "got = {}\n"
		 "for line in body.splitlines():\n"
		 "    if line.startswith('tiertrain_') and 'pid=\"%s\"' % pid in line:\n"
		 "        name, value = line.rsplit(' ', 1)\n"
		 "        got[name.split('{')[0]] = float(value)\n"
		 "assert 'node_textfile_scrape_error 0' in body, 'the textfile collector failed: ' + '\\n'.join(l for l in body.splitlines() if 'textfile' in l)\n"
		 "st = json.load(open(sj))['sessions'][0]['stats']\n"
		 "want = {'tiertrain_evicted_bytes_total': st['bytes_evicted'],\n"
		 "        'tiertrain_prefetched_bytes_total': st['bytes_prefetched'],\n"
		 "        'tiertrain_ontime_bytes_total': st['ontime_bytes'],\n"
		 "        'tiertrain_late_bytes_total': st['late_bytes'],\n"
		 "        'tiertrain_iterations_total': st['iterations'],\n"
		 "        'tiertrain_rate_probes_total': st['rate_probes'],\n"
		 "        'tiertrain_fast_peak_bytes': st['fast_peak_bytes'],\n"
		 "        'tiertrain_migrate_moved_pages_total': st['total']['moved'],\n"
		 "        'tiertrain_eviction_rate_bytes_per_second': st['er_bps']}\n"
		 "bad = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}\n"
		 "assert not bad, 'scraped != tierctl -j: %s' % bad\n"
		 "assert st['iterations'] == 4 and st['bytes_evicted'] > 0, st\n"
		 "n = sum(1 for k in got)\n"
		 "flat = sum(len(v) if isinstance(v, dict) else 1 for v in st.values())\n"
		 "assert n == flat + 2, '%d tiertrain series for the process, %d counters in tierctl -j stats' % (n, flat)\n"
		 "print('%d tiertrain series scraped for pid %s, %d checked' % (n, pid, len(want)))\n",
		 "http://" CT_EXPORTER_ADDR "/metrics", sj, pid);
	kill(self->kids[0], SIGTERM);
	waitpid(self->kids[0], NULL, 0);
	self->kids[0] = 0;
	ASSERT_EQ(0, ct_trainer_stop(&self->tr));
	unlink(prom);
	unlink(sj);
}

/*
 * The kernel's own ynl CLI (build/ynl: Debian's linux-source-6.12,
 * extracted at build time) with Documentation/netlink/specs/tiertrain.yaml:
 * the status, the trainer's session and its trace events, as tierctl -j
 * gives them.
 */
TEST_F_TIMEOUT(ctl, ynl_cli, 600)
{
	char repo[PATH_MAX], st[128], ss[128], pid[16];
	struct ct_run r;

	TT_SKIP_IF_SETUP_SKIPPED();
	/* ct_tierctl is REPO/selftests/../ctl/tierctl */
	snprintf(repo, sizeof(repo), "%s", dirname(dirname(strdupa(ct_tierctl))));
	snprintf(st, sizeof(st), "%s/status.json", self->dir);
	snprintf(ss, sizeof(ss), "%s/sessions.json", self->dir);
	ASSERT_EQ(0, ct_trainer_start(&self->tr, 0));
	ASSERT_EQ(0, ct_trainer_iters(&self->tr, 3));
	usleep(200000);
	snprintf(pid, sizeof(pid), "%d", self->tr.pid);
	CT_EXPECT(&r, 0, 0, "-j", "status");
	ASSERT_EQ(0, ct_write_text(st, r.out));
	ct_run_free(&r);
	ASSERT_EQ(0, ct_sessions_json(ss, 0, self->tr.pid));
	CT_PY_OK(&r,
		 "import json, subprocess, sys\n"
		 "repo, st, ss, pid = sys.argv[1:5]\n"
		 "def ynl(*a):\n"
		 "    # python3 without -S: ynl imports yaml from dist-packages\n"
		 "    p = subprocess.run(['python3', repo + '/build/ynl/tools/net/ynl/cli.py',\n"
		 "                        '--spec', repo + '/Documentation/netlink/specs/tiertrain.yaml',\n"
		 "                        '--no-schema', '--output-json'] + list(a),\n"
		 "                       capture_output=True, text=True, timeout=300)\n"
		 "    assert p.returncode == 0, 'ynl %s: exit %d: %s' % (a, p.returncode, p.stderr)\n"
		 "    return json.loads(p.stdout)\n"
		 "t = json.load(open(st))\n"
		 "y = ynl('--do', 'get-status')\n"
		 "for a, b in (('version', 'version'), ('abi-version', 'abi'),\n"
		 "             ('workers', 'workers'), ('batch-pages', 'batch_pages'),\n"
		 "             ('nr-sessions', 'sessions')):\n"
		 "    assert y[a] == t[b], 'status %s: ynl %r, tierctl %r' % (a, y[a], t[b])\n"
		 "yn = sorted(n['id'] for n in y['nodes']['node'])\n"
		 "tn = sorted(n['node'] for n in t['nodes'])\n"
		 "assert yn == tn, 'nodes: ynl %s, tierctl %s' % (yn, tn)\n"
		 "s = json.load(open(ss))[0]\n"
		 "d = ynl('--dump', 'get-sessions', '--json', json.dumps({'pid': int(pid)}))\n"
		 "assert len(d) == 1, 'ynl dumped %d sessions of pid %s' % (len(d), pid)\n"
		 "d = d[0]\n"
		 "assert d['session'] == s['session'] and d['pid'] == s['pid'], (d, s)\n"
		 "assert d['comm'] == s['command'], (d['comm'], s['command'])\n"
		 "for a, b in (('bytes-evicted', 'bytes_evicted'), ('bytes-prefetched', 'bytes_prefetched'),\n"
		 "             ('iterations', 'iterations'), ('ontime-bytes', 'ontime_bytes'),\n"
		 "             ('late-bytes', 'late_bytes'), ('rate-probes', 'rate_probes')):\n"
		 "    assert d['stats'][a] == s['stats'][b], 'stats %s: ynl %r, tierctl %r' % (a, d['stats'][a], s['stats'][b])\n"
		 "assert s['stats']['iterations'] == 3, s['stats']\n"
		 "ev = []\n"
		 "for m in ynl('--dump', 'get-events', '--json', json.dumps({'pid': int(pid)})):\n"
		 "    ev += m.get('event', [])\n"
		 "seqs = [e['seq'] for e in ev]\n"
		 "assert seqs == list(range(s['trace_events'] - len(seqs) + 1, s['trace_events'] + 1)), 'event seqs %s.. (%d), tierctl: last %d, lost %d' % (seqs[:3], len(seqs), s['trace_events'], s['trace_events_lost'])\n"
		 "assert len(seqs) == s['trace_events'] - s['trace_events_lost'], (len(seqs), s['trace_events'], s['trace_events_lost'])\n"
		 "assert any(e['type'] in ('iter-begin', 1) for e in ev), ev[:3]\n",
		 repo, st, ss, pid);
	ASSERT_EQ(0, ct_trainer_stop(&self->tr));
	unlink(st);
	unlink(ss);
}

TEST_HARNESS_MAIN
