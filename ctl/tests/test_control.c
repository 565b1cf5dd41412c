// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierctl unit tests for the control-plane verbs, on the host (no module
 * needed): argument checking of tiers, sessions, stats, config, trace,
 * monitor and plot (every error exits 1 and names the bad input), the
 * parsers of the sessions, layers and events dumps on synthetic messages,
 * the end of a dump with an error, the counters' sums, and the Chrome
 * trace writer on a synthetic iteration (its JSON read back by python3's
 * json module, its counter checked step by step).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "events.h"
#include "helpers.h"
#include "nl.h"
#include "prometheus.h"
#include "sessions.h"
#include "stats.h"
#include "tierctl.h"
#include "tiertrain.h"
#include "trace.h"

/* ---- argument parsing ---------------------------------------------------- */

static void test_parse_helpers(void **state)
{
	char key[16];
	uint64_t v;
	uint32_t pid;
	const char *out;

	(void)state;
	assert_int_equal(tt_cfg_parse_pair("stay_time_us=12", key, sizeof(key),
					   &v), 0);
	assert_string_equal(key, "stay_time_us");
	assert_int_equal(v, 12);
	assert_int_equal(tt_cfg_parse_pair("a=18446744073709551615", key,
					   sizeof(key), &v), 0);
	assert_int_equal(v, UINT64_MAX);
	assert_int_equal(tt_cfg_parse_pair("a=18446744073709551616", key,
					   sizeof(key), &v), -ERANGE);
	assert_int_equal(tt_cfg_parse_pair("a=-1", key, sizeof(key), &v),
			 -ERANGE);
	assert_int_equal(tt_cfg_parse_pair("a=", key, sizeof(key), &v),
			 -ERANGE);
	assert_int_equal(tt_cfg_parse_pair("a=1k", key, sizeof(key), &v),
			 -ERANGE);
	assert_int_equal(tt_cfg_parse_pair("a= 1", key, sizeof(key), &v),
			 -ERANGE);
	assert_int_equal(tt_cfg_parse_pair("=1", key, sizeof(key), &v),
			 -EINVAL);
	assert_int_equal(tt_cfg_parse_pair("a", key, sizeof(key), &v),
			 -EINVAL);
	assert_int_equal(tt_cfg_parse_pair("a_very_long_key_name=1", key,
					   sizeof(key), &v), -EINVAL);

	assert_int_equal(tt_ctl_parse_pid("1", &pid), 0);
	assert_int_equal(pid, 1);
	assert_int_equal(tt_ctl_parse_pid("2147483647", &pid), 0);
	assert_int_equal(tt_ctl_parse_pid("2147483648", &pid), -EINVAL);
	assert_int_equal(tt_ctl_parse_pid("0", &pid), -EINVAL);
	assert_int_equal(tt_ctl_parse_pid("-3", &pid), -EINVAL);
	assert_int_equal(tt_ctl_parse_pid("+3", &pid), -EINVAL);
	assert_int_equal(tt_ctl_parse_pid("3x", &pid), -EINVAL);
	assert_int_equal(tt_ctl_parse_pid("", &pid), -EINVAL);

	assert_int_equal(tt_tiers_list_arg("auto", &out), 0);
	assert_string_equal(out, "");
	assert_int_equal(tt_tiers_list_arg("0-2,5", &out), 0);
	assert_string_equal(out, "0-2,5");
	assert_int_equal(tt_tiers_list_arg("", &out), -EINVAL);
	assert_int_equal(tt_tiers_list_arg("1 2", &out), -EINVAL);
	assert_int_equal(tt_tiers_list_arg("node1", &out), -EINVAL);
}

/* tierctl ARGS exits 1 with @msg on standard error and nothing on stdout. */
static void expect_fail(const char *msg, int argc, ...)
{
	struct capture out, err;
	char *argv[16];
	va_list ap;
	int i;

	va_start(ap, argc);
	argv[0] = "tierctl";
	for (i = 1; i <= argc; i++)
		argv[i] = va_arg(ap, char *);
	argv[argc + 1] = NULL;
	va_end(ap);
	capture_open(&out);
	capture_open(&err);
	assert_int_equal(tt_ctl_run(argc + 1, argv, out.f, err.f), 1);
	if (!strstr(capture_text(&err), msg))
		fail_msg("'%s' not in: %s", msg, capture_text(&err));
	assert_string_equal(capture_text(&out), "");
	capture_close(&out);
	capture_close(&err);
}

static void test_bad_arguments(void **state)
{
	(void)state;
	expect_fail("'abc' is not a process id", 2, "sessions", "abc");
	expect_fail("unexpected argument '2'", 3, "sessions", "1", "2");
	expect_fail("'0' is not a process id", 2, "stats", "0");
	expect_fail("unexpected argument 'b'", 3, "stats", "1", "b");
	expect_fail("-o 'f' is for --prometheus", 3, "stats", "-o", "f");
	expect_fail("-o needs a file", 3, "stats", "--prometheus", "-o");
	expect_fail("--prometheus and -j are two output formats", 3, "stats",
		    "--prometheus", "-j");
	expect_fail("unexpected argument '2'", 4, "stats", "1", "--prometheus",
		    "2");
	expect_fail("unknown argument 'bogus' (expected get or set)", 2,
		    "config", "bogus");
	expect_fail("unexpected argument 'b'", 4, "config", "get", "a", "b");
	expect_fail("give at least one KEY=VALUE", 2, "config", "set");
	expect_fail("'x' is not KEY=VALUE", 3, "config", "set", "x");
	expect_fail("'x' is not KEY=VALUE", 4, "config", "set", "a=1", "x");
	expect_fail("the value of x must be a whole number", 3, "config",
		    "set", "x=1y");
	expect_fail("unknown argument 'bogus'", 2, "tiers", "bogus");
	expect_fail("give --fast LIST, --slow LIST or both", 2, "tiers", "set");
	expect_fail("--fast needs a node list or 'auto'", 3, "tiers", "set",
		    "--fast");
	expect_fail("--slow 'a' is not a node list", 4, "tiers", "set",
		    "--slow", "a");
	expect_fail("unknown argument '--what'", 4, "tiers", "set", "--what",
		    "1");
	expect_fail("give the PID of a process", 1, "trace");
	expect_fail("give the output file with -o FILE", 2, "trace", "12");
	expect_fail("-o needs a file name", 3, "trace", "12", "-o");
	expect_fail("'x' is not a process id", 3, "trace", "x", "-o", "f");
	expect_fail("unexpected argument '2'", 5, "trace", "1", "2", "-o", "f");
	expect_fail("unexpected argument '--all'", 5, "trace", "1", "--all",
		    "-o", "f");
	expect_fail("--count '0' is not a number in 1..", 3, "monitor",
		    "--count", "0");
	expect_fail("--timeout 'x' is not a number", 3, "monitor",
		    "--timeout", "x");
	expect_fail("--pid 'x' is not a process id", 3, "monitor", "--pid",
		    "x");
	expect_fail("unknown argument '--bogus'", 2, "monitor", "--bogus");
	expect_fail("--count needs a value", 2, "monitor", "--count");
	expect_fail("give the trace file", 1, "plot");
	expect_fail("give the PNG to write with -o FILE.png", 2, "plot",
		    "t.json");
	expect_fail("unexpected argument 'b'", 4, "plot", "a", "b", "-o");
	expect_fail("-o needs a value", 3, "plot", "a", "-o");
}

/*
 * tierctl ARGS (argv[0] included) with the module-independent part of the
 * answer: where the module is not loaded (the host) the verb gets as far
 * as opening netlink and says so; where it is loaded it prints JSON (an
 * object or an array).
 */
static void expect_json_or_no_module(int argc, ...)
{
	struct capture out, err;
	char *argv[16];
	va_list ap;
	int ret;

	va_start(ap, argc);
	args_from_va(argv, argc, ap);
	va_end(ap);
	capture_open(&out);
	capture_open(&err);
	ret = tt_ctl_run(argc, argv, out.f, err.f);
	if (strstr(capture_text(&err), "unexpected argument") ||
	    strstr(capture_text(&err), "unknown argument"))
		fail_msg("tierctl %s: a global option after the verb refused: %s",
			 argv[1], capture_text(&err));
	if (access("/sys/module/tiertrain", F_OK)) {
		assert_int_equal(ret, 1);
		assert_string_equal(capture_text(&err),
				    "tierctl: the tiertrain kernel module is not loaded (generic netlink family \"tiertrain\" not found); try 'modprobe tiertrain'\n");
		assert_string_equal(capture_text(&out), "");
	} else {
		assert_int_equal(ret, 0);
		if (!strchr("{[", capture_text(&out)[0]))
			fail_msg("tierctl %s: not JSON: %s", argv[1],
				 capture_text(&out));
	}
	capture_close(&out);
	capture_close(&err);
}

/* tierctl ARGS exits 0 and prints exactly @text. */
static void expect_out(const char *text, int argc, ...)
{
	struct capture out, err;
	char *argv[16];
	va_list ap;

	va_start(ap, argc);
	args_from_va(argv, argc, ap);
	va_end(ap);
	capture_open(&out);
	capture_open(&err);
	assert_int_equal(tt_ctl_run(argc, argv, out.f, err.f), 0);
	assert_string_equal(capture_text(&err), "");
	assert_string_equal(capture_text(&out), text);
	capture_close(&out);
	capture_close(&err);
}

/*
 * The global options -j, -p, --json, --pretty and -V work after the verb,
 * anywhere among its arguments; the value of a verb's option (-o -j) and
 * anything after "--" stay the verb's.
 */
static void test_global_options_after_verb(void **state)
{
	char version[64];

	(void)state;
	expect_json_or_no_module(3, "tierctl", "status", "-j");
	expect_json_or_no_module(3, "tierctl", "status", "--json");
	expect_json_or_no_module(4, "tierctl", "-j", "status", "-p");
	expect_json_or_no_module(3, "tierctl", "tiers", "-j");
	expect_json_or_no_module(3, "tierctl", "tiers", "--pretty");
	expect_json_or_no_module(3, "tierctl", "sessions", "-j");
	expect_json_or_no_module(4, "tierctl", "stats", "-p", "-j");
	expect_json_or_no_module(3, "tierctl", "config", "-j");
	expect_json_or_no_module(5, "tierctl", "config", "get", "-j",
				 "stay_time_us");
	if (access("/sys/module/tiertrain", F_OK)) {
		/* these need a process or run until stopped: the host only */
		expect_json_or_no_module(4, "tierctl", "stats", "-j", "1");
		expect_json_or_no_module(6, "tierctl", "trace", "1", "-j",
					 "-o", "/dev/null");
		expect_json_or_no_module(6, "tierctl", "monitor", "--all",
					 "-p", "--count", "1");
	}
	expect_out(tt_status_usage, 4, "tierctl", "help", "status", "-j");
	snprintf(version, sizeof(version), "tierctl %s\n", tt_version());
	expect_out(version, 3, "tierctl", "status", "-V");
	expect_out(version, 4, "tierctl", "stats", "1", "--version");

	/* Misplaced or wrong arguments are still the verb's to refuse. */
	expect_fail("give the PID of a process", 4, "trace", "-j", "-o", "f");
	expect_fail("unexpected argument 'x'", 3, "status", "-j", "x");
	expect_fail("unexpected argument '2'", 4, "stats", "-p", "1", "2");
	expect_fail("unknown argument '-x'", 3, "monitor", "-j", "-x");
	/* A verb's option takes the next argument as its value, even -j. */
	expect_fail("--count '-j' is not a number", 3, "monitor", "--count",
		    "-j");
	expect_fail("--fast '-p' is not a node list", 4, "tiers", "set",
		    "--fast", "-p");
	expect_fail("give the trace file", 3, "plot", "-o", "-j");
	expect_fail("--er \"--json\"", 4, "simulate", "--er", "--json",
		    "t.csv");
	/* After "--", -j is an argument like any other. */
	expect_fail("cannot open the trace -j", 3, "simulate", "--", "-j");
	expect_fail("unexpected argument '--'", 3, "status", "--", "-j");
}

static void test_help(void **state)
{
	static const struct {
		const char *verb;
		const char *usage;
	} verbs[] = {
		{ "tiers", tt_tiers_usage },
		{ "sessions", tt_sessions_usage },
		{ "stats", tt_stats_usage },
		{ "config", tt_config_usage },
		{ "trace", tt_trace_usage },
		{ "monitor", tt_monitor_usage },
		{ "plot", tt_plot_usage },
	};
	struct capture out, err;
	unsigned int i;

	(void)state;
	for (i = 0; i < TT_ARRAY_SIZE(verbs); i++) {
		assert_int_equal(run_ctl(&out, &err, 3, "tierctl",
					 verbs[i].verb, "--help"), 0);
		assert_string_equal(capture_text(&out), verbs[i].usage);
		assert_string_equal(capture_text(&err), "");
		capture_close(&out);
		capture_close(&err);
		assert_ptr_equal(tt_ctl_find_verb(verbs[i].verb)->usage,
				 verbs[i].usage);
	}
}

/* ---- synthetic messages -------------------------------------------------- */

static struct nlmsghdr *make_msg(char *buf, uint8_t cmd)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = 0x20;
	nlh->nlmsg_flags = NLM_F_MULTI;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = TT_GENL_VERSION;
	return nlh;
}

/* A sessions dump message without attribute @skip (0: complete). */
static struct nlmsghdr *make_session(char *buf, unsigned int skip,
				     const struct tt_ioc_stats *st)
{
	struct nlmsghdr *nlh;

	memset(buf, 0, 4096);
	nlh = make_msg(buf, TT_CMD_GET_SESSIONS);
	if (skip != TT_A_SESSION)
		mnl_attr_put_u64(nlh, TT_A_SESSION, 3);
	if (skip != TT_A_PID)
		mnl_attr_put_u32(nlh, TT_A_PID, 42);
	if (skip != TT_A_COMM)
		mnl_attr_put_strz(nlh, TT_A_COMM, "train");
	if (skip != TT_A_UID)
		mnl_attr_put_u32(nlh, TT_A_UID, 1000);
	if (skip != TT_A_OPENED_NS)
		mnl_attr_put_u64(nlh, TT_A_OPENED_NS, 5);
	/* An older module's shorter structure is fine. */
	if (skip != TT_A_STATS)
		mnl_attr_put(nlh, TT_A_STATS,
			     offsetof(struct tt_ioc_stats, bytes_evicted) + 8,
			     st);
	if (skip != TT_A_FAST_BYTES)
		mnl_attr_put_u64(nlh, TT_A_FAST_BYTES, 100);
	if (skip != TT_A_SLOW_BYTES)
		mnl_attr_put_u64(nlh, TT_A_SLOW_BYTES, 200);
	if (skip != TT_A_LAST_SEQ)
		mnl_attr_put_u64(nlh, TT_A_LAST_SEQ, 9);
	if (skip != TT_A_EVENTS_LOST)
		mnl_attr_put_u64(nlh, TT_A_EVENTS_LOST, 1);
	/* Attributes of a newer module are skipped. */
	mnl_attr_put_u32(nlh, TT_A_MAX + 5, 1);
	return nlh;
}

static void test_sessions_parse(void **state)
{
	static const unsigned int need[] = {
		TT_A_SESSION, TT_A_PID, TT_A_COMM, TT_A_UID, TT_A_OPENED_NS,
		TT_A_STATS, TT_A_FAST_BYTES, TT_A_SLOW_BYTES, TT_A_LAST_SEQ,
		TT_A_EVENTS_LOST,
	};
	struct tt_ctl_sessions ss = { 0 };
	struct tt_ioc_stats st;
	char buf[4096];
	unsigned int i;

	(void)state;
	memset(&st, 0, sizeof(st));
	st.iterations = 7;
	st.bytes_evicted = 1 << 20;
	st.bytes_prefetched = 99;	/* beyond the length sent */
	assert_int_equal(tt_sessions_parse(make_session(buf, 0, &st), &ss),
			 MNL_CB_OK);
	for (i = 0; i < TT_ARRAY_SIZE(need); i++) {
		assert_int_equal(tt_sessions_parse(make_session(buf, need[i],
								&st), &ss),
				 MNL_CB_ERROR);
		assert_non_null(strstr(ss.err,
				       "session entry 1 of the dump has no TT_A_"));
	}
	assert_int_equal(ss.n, 1);
	assert_int_equal(ss.v[0].id, 3);
	assert_int_equal(ss.v[0].pid, 42);
	assert_string_equal(ss.v[0].comm, "train");
	assert_int_equal(ss.v[0].uid, 1000);
	assert_int_equal(ss.v[0].st.iterations, 7);
	assert_int_equal(ss.v[0].st.bytes_evicted, 1 << 20);
	assert_int_equal(ss.v[0].st.bytes_prefetched, 0);
	assert_int_equal(ss.v[0].fast_bytes, 100);
	assert_int_equal(ss.v[0].slow_bytes, 200);
	assert_int_equal(ss.v[0].last_seq, 9);
	assert_int_equal(ss.v[0].events_lost, 1);
	tt_sessions_free(&ss);
}

static void test_layers_events_parse(void **state)
{
	struct tt_ctl_layers ls = { 0 };
	struct tt_ctl_events es = { 0 };
	struct tt_layer_info li[2];
	struct tt_trace_event ev;
	struct nlmsghdr *nlh;
	char buf[4096];
	int i;

	(void)state;
	memset(buf, 0, sizeof(buf));
	memset(li, 0, sizeof(li));
	li[0].layer = 1;
	li[0].status = TT_LAYER_ACCEPTED;
	li[1].layer = 5;
	li[1].last_late_bytes = 4096;
	nlh = make_msg(buf, TT_CMD_GET_LAYERS);
	mnl_attr_put_u64(nlh, TT_A_SESSION, 3);
	mnl_attr_put(nlh, TT_A_LAYER, sizeof(li[0]), &li[0]);
	mnl_attr_put(nlh, TT_A_LAYER, sizeof(li[1]), &li[1]);
	assert_int_equal(tt_layers_parse(nlh, &ls), MNL_CB_OK);
	assert_int_equal(ls.n, 2);
	assert_int_equal(ls.v[1].layer, 5);
	assert_int_equal(ls.v[1].last_late_bytes, 4096);
	tt_layers_free(&ls);

	/* Two messages with events 3..5 and 4..6 of a session: 3..6 once. */
	for (i = 0; i < 2; i++) {
		uint64_t seq;

		memset(buf, 0, sizeof(buf));
		nlh = make_msg(buf, TT_CMD_GET_EVENTS);
		mnl_attr_put_u64(nlh, TT_A_SESSION, 3);
		mnl_attr_put_u32(nlh, TT_A_PID, 42);
		if (!i)
			mnl_attr_put_u64(nlh, TT_A_EVENTS_LOST, 2);
		for (seq = 5 + i; seq >= 3 + (uint64_t)i; seq--) {
			memset(&ev, 0, sizeof(ev));
			ev.seq = seq;
			ev.type = TT_TRACE_EVICT;
			mnl_attr_put(nlh, TT_A_EVENT, sizeof(ev), &ev);
		}
		assert_int_equal(tt_events_parse(nlh, &es), MNL_CB_OK);
	}
	assert_int_equal(es.n, 6);
	assert_int_equal(es.lost, 2);
	tt_events_sort(&es);
	assert_int_equal(es.n, 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(es.v[i].ev.seq, 3 + i);
		assert_int_equal(es.v[i].pid, 42);
	}

	/* No session attribute, a short event: malformed. */
	memset(buf, 0, sizeof(buf));
	nlh = make_msg(buf, TT_CMD_EVENT);
	mnl_attr_put_u32(nlh, TT_A_PID, 42);
	assert_int_equal(tt_events_parse(nlh, &es), MNL_CB_ERROR);
	memset(buf, 0, sizeof(buf));
	nlh = make_msg(buf, TT_CMD_EVENT);
	mnl_attr_put_u64(nlh, TT_A_SESSION, 3);
	mnl_attr_put_u32(nlh, TT_A_PID, 42);
	mnl_attr_put(nlh, TT_A_EVENT, 8, &ev);
	assert_int_equal(tt_events_parse(nlh, &es), MNL_CB_ERROR);
	assert_non_null(strstr(es.err, "malformed"));
	tt_events_free(&es);
}

static void test_done_text(void **state)
{
	struct nlmsghdr *nlh;
	char buf[512], text[256];
	int err = 0;

	(void)state;
	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = NLMSG_DONE;
	mnl_nlmsg_put_extra_header(nlh, sizeof(int));
	assert_int_equal(tt_nl_done_text(nlh, text, sizeof(text)), 0);
	assert_string_equal(text, "");

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = NLMSG_DONE;
	nlh->nlmsg_flags = NLM_F_ACK_TLVS;
	err = -ENOENT;
	memcpy(mnl_nlmsg_put_extra_header(nlh, sizeof(int)), &err, sizeof(err));
	mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG,
			  "tiertrain: process 7 has no tiertrain session");
	assert_int_equal(tt_nl_done_text(nlh, text, sizeof(text)), -ENOENT);
	assert_string_equal(text, "tiertrain: process 7 has no tiertrain session: No such file or directory");
}

/*
 * --prometheus: the exposition format, counters with _total and base
 * units, gauges without, labels escaped, the module's sums; -o writes the
 * file whole.
 */
static void test_prometheus(void **state)
{
	struct tt_ctl_session v[2];
	struct tt_ctl_sessions ss = { .v = v, .n = 2 };
	struct capture c;
	const char *t;

	(void)state;
	memset(v, 0, sizeof(v));
	v[0].id = 3;
	v[0].pid = 42;
	strcpy(v[0].comm, "tr\"a\\in");
	v[0].st.bytes_evicted = 4096;
	v[0].st.fast_registered_bytes = 100;
	v[0].st.total.elapsed_ns = 1500000000;
	v[0].st.heat_wf = 512;
	v[0].st.er_bps = 7;
	v[0].st.count_ahead = 2;
	v[0].fast_bytes = 11;
	v[1].id = 4;
	v[1].pid = 43;
	strcpy(v[1].comm, "b");
	v[1].st.bytes_evicted = 1;
	v[1].st.count_ahead = 3;
	v[1].slow_bytes = 22;
	capture_open(&c);
	assert_int_equal(tt_prometheus_write(c.f, &ss), 0);
	t = capture_text(&c);
	assert_non_null(strstr(t, "# TYPE tiertrain_sessions gauge\n"
				  "tiertrain_sessions 2\n"));
	assert_non_null(strstr(t, "# TYPE tiertrain_evicted_bytes_total counter\n"
				  "tiertrain_evicted_bytes_total{session=\"3\",pid=\"42\",command=\"tr\\\"a\\\\in\"} 4096\n"
				  "tiertrain_evicted_bytes_total{session=\"4\",pid=\"43\",command=\"b\"} 1\n"));
	assert_non_null(strstr(t, "# TYPE tiertrain_fast_registered_bytes gauge\n"));
	assert_non_null(strstr(t, "tiertrain_migrate_elapsed_seconds_total{session=\"3\",pid=\"42\",command=\"tr\\\"a\\\\in\"} 1.5\n"));
	assert_non_null(strstr(t, "tiertrain_heat_wf_ratio{session=\"3\",pid=\"42\",command=\"tr\\\"a\\\\in\"} 0.5\n"));
	assert_non_null(strstr(t, "# TYPE tiertrain_eviction_rate_bytes_per_second gauge\n"));
	assert_non_null(strstr(t, "tiertrain_migrate_moved_pages_total{"));
	assert_non_null(strstr(t, "tiertrain_session_fast_bytes{session=\"3\",pid=\"42\",command=\"tr\\\"a\\\\in\"} 11\n"));
	assert_non_null(strstr(t, "tiertrain_session_slow_bytes{session=\"4\",pid=\"43\",command=\"b\"} 22\n"));
	/* the module's: sums, rates and per-session gauges left out */
	assert_non_null(strstr(t, "# TYPE tiertrain_module_evicted_bytes gauge\n"
				  "tiertrain_module_evicted_bytes 4097\n"));
	assert_null(strstr(t, "tiertrain_module_count_ahead"));
	assert_null(strstr(t, "tiertrain_module_eviction_rate"));
	/* no metric name twice in TYPE lines */
	{
		const char *p = t;
		char name[128];
		int n = 0;

		while ((p = strstr(p, "# TYPE "))) {
			const char *q;

			p += 7;
			q = strchr(p, ' ');
			assert_non_null(q);
			snprintf(name, sizeof(name), "# TYPE %.*s ",
				 (int)(q - p), p);
			assert_ptr_equal(strstr(t, name), p - 7);
			n++;
		}
		assert_true(n > 100);
	}
	capture_close(&c);
}

static void test_stats_sum(void **state)
{
	struct tt_ioc_stats a, b;
	struct capture c;
	struct tt_json *j;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.late_bytes = 5;
	a.er_bps = 100;
	a.total.moved = 3;
	b.late_bytes = 7;
	b.er_bps = 200;
	b.total.moved = 4;
	tt_stats_add(&a, &b);
	assert_int_equal(a.late_bytes, 12);
	assert_int_equal(a.total.moved, 7);
	assert_int_equal(a.er_bps, 100);

	capture_open(&c);
	j = tt_json_new(c.f, false);
	tt_stats_json(j, NULL, &a, 0);
	assert_int_equal(tt_json_end(j), 0);
	assert_non_null(strstr(capture_text(&c),
			       "\"bytes_to_slow\":0,\"total\":{\"pages\":0,\"moved\":7,"));
	assert_non_null(strstr(capture_text(&c), "\"late_bytes\":12,"));
	assert_null(strstr(capture_text(&c), "er_bps"));
	capture_close(&c);
}

/* ---- the trace writer ---------------------------------------------------- */

/* One event of session 9 (pid 42) at @ts_us. */
static void add_ev(struct tt_ctl_events *es, uint32_t type, uint32_t layer,
		   uint32_t flags, uint64_t ts_us, uint64_t dur_us,
		   uint64_t bytes)
{
	struct tt_ctl_event e = { .session = 9, .pid = 42 };

	e.ev.seq = es->n + 1;
	e.ev.type = type;
	e.ev.layer = layer;
	e.ev.flags = flags;
	e.ev.ts_ns = 1000000000ULL + ts_us * 1000;
	e.ev.dur_ns = dur_us * 1000;
	e.ev.bytes = bytes;
	e.ev.iter = 1;
	e.ev.node = type == TT_TRACE_EVICT ? 1 : type == TT_TRACE_PREFETCH ?
		    0 : -1;
	assert_int_equal(tt_events_add(es, &e), 0);
}

/* A drop's reason, as text and JSON name it: the flag that says why. */
static void test_drop_reason(void **state)
{
	(void)state;
	assert_string_equal(tt_drop_reason(0), "policy");
	assert_string_equal(tt_drop_reason(TT_TRACE_F_MIN_SIZE), "min_size");
	assert_string_equal(tt_drop_reason(TT_TRACE_F_EXPIRED), "expired");
}

static void test_trace_write(void **state)
{
	struct tt_trace_session ts = { .id = 9, .pid = 42, .comm = "train" };
	struct tt_ctl_events es = { 0 };
	struct tt_trace_totals tot;
	char path[] = "/tmp/tt-trace-test.XXXXXX", cmd[2048];
	FILE *f;
	int fd;

	(void)state;
	/* One iteration of two layers, layer 1 evicted, late, prefetched. */
	add_ev(&es, TT_TRACE_ITER_BEGIN, 0, 0, 0, 0, 0);
	add_ev(&es, TT_TRACE_LAYER_BEGIN, 0, TT_FWD, 10, 0, 0);
	add_ev(&es, TT_TRACE_SAVED, 0, 0, 15, 0, 4096);
	add_ev(&es, TT_TRACE_LAYER_END, 0, TT_FWD, 20, 0, 0);
	add_ev(&es, TT_TRACE_DROP, 0, TT_TRACE_F_MIN_SIZE, 20, 0, 4096);
	add_ev(&es, TT_TRACE_LAYER_BEGIN, 1, TT_FWD, 30, 0, 0);
	add_ev(&es, TT_TRACE_SAVED, 1, TT_EV_PERSISTENT, 35, 0, 8192);
	add_ev(&es, TT_TRACE_LAYER_END, 1, TT_FWD, 40, 0, 0);
	add_ev(&es, TT_TRACE_EVICT, 1, 0, 60, 15, 8192);
	add_ev(&es, TT_TRACE_LAYER_BEGIN, 1, TT_BWD, 70, 0, 0);
	add_ev(&es, TT_TRACE_LATE, 1, 0, 70, 0, 8192);
	add_ev(&es, TT_TRACE_PREFETCH, 1, TT_TRACE_F_SYNC, 80, 9, 8192);
	add_ev(&es, TT_TRACE_LAYER_END, 1, TT_BWD, 90, 0, 0);
	add_ev(&es, TT_TRACE_LAYER_BEGIN, 0, TT_BWD, 100, 0, 0);
	add_ev(&es, TT_TRACE_LAYER_END, 0, TT_BWD, 110, 0, 0);
	/* A backward end without its begin: left out, counted. */
	add_ev(&es, TT_TRACE_LAYER_END, 3, TT_BWD, 120, 0, 0);
	es.lost = 2;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	assert_int_equal(tt_trace_write(f, &ts, 1, &es, false, &tot), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(tot.events, 16);
	/* 4 layer spans, evict, prefetch, the iteration. */
	assert_int_equal(tot.spans, 7);
	assert_int_equal(tot.unmatched, 1);

	/*
	 * A real JSON parser reads it back; the counter follows the model:
	 * saved adds to the fast tier, an eviction moves bytes to the slow
	 * tier and a prefetch back, a backward end forgets one-shot tensors
	 * (the persistent ones stay).
	 */
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c \""
		 "import json, sys\n"
		 "d = json.load(open(sys.argv[1])); t = d['traceEvents']\n"
		 "assert d['otherData']['events_lost'] == 2 and d['otherData']['t0_ns'] == 1000000000\n"
		 "c = [(e['ts'], e['args']['fast'], e['args']['slow']) for e in t if e['ph'] == 'C']\n"
		 "assert c == [(0, 0, 0), (15, 4096, 0), (35, 12288, 0), (60, 4096, 8192), (80, 12288, 0),"
		 " (90, 12288, 0), (110, 8192, 0), (120, 8192, 0)], c\n"
		 "x = {e['name']: e for e in t if e['ph'] == 'X'}\n"
		 "assert x['L0 fwd']['ts'] == 10 and x['L0 fwd']['dur'] == 10, x\n"
		 "assert x['evict L1']['ts'] == 45 and x['evict L1']['dur'] == 15 and x['evict L1']['args']['node'] == 1\n"
		 "assert x['prefetch L1']['args']['sync'] is True\n"
		 "assert x['iteration 1']['dur'] == 120\n"
		 "i = {e['name']: e for e in t if e['ph'] == 'i'}\n"
		 "assert i['drop L0']['args']['reason'] == 'min_size' and i['late L1']['args']['bytes'] == 8192\n"
		 "m = [e['args'].get('name') for e in t if e['ph'] == 'M']\n"
		 "assert 'train (pid 42)' in m and 'session 9 prefetch' in m, m\n"
		 "\" %s", path);
	assert_int_equal(system(cmd), 0);

	/* tierctl plot draws it (the script from the source tree). */
	if (getenv("TT_PLOT_SCRIPT")) {
		struct capture out, err;
		char png[64];
		unsigned char magic[8];

		snprintf(png, sizeof(png), "%s.png", path);
		assert_int_equal(run_ctl(&out, &err, 5, "tierctl", "plot", path,
					 "-o", png), 0);
		fflush(out.f);
		f = fopen(png, "rb");
		assert_non_null(f);
		assert_int_equal(fread(magic, 1, 8, f), 8);
		fclose(f);
		assert_memory_equal(magic, "\x89PNG\r\n\x1a\n", 8);
		unlink(png);
		capture_close(&out);
		capture_close(&err);
		/* A file that is not a trace: exit 1 with the script's reason. */
		assert_int_equal(run_ctl(&out, &err, 5, "tierctl", "plot",
					 "/etc/hostname", "-o", png), 1);
		capture_close(&out);
		capture_close(&err);
	}
	unlink(path);
	tt_events_free(&es);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_helpers),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_global_options_after_verb),
		cmocka_unit_test(test_sessions_parse),
		cmocka_unit_test(test_layers_events_parse),
		cmocka_unit_test(test_done_text),
		cmocka_unit_test(test_stats_sum),
		cmocka_unit_test(test_prometheus),
		cmocka_unit_test(test_drop_reason),
		cmocka_unit_test(test_trace_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
