// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierctl unit tests, on the host (no module needed): the JSON writer, byte
 * formatting, node lists and memory tiers, global option parsing, the verb
 * table, netlink error text from synthetic NLMSG_ERROR messages, and the
 * status reply parser and printers on a synthetic reply.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "../lib/internal.h"
#include "json.h"
#include "nl.h"
#include "status.h"
#include "helpers.h"
#include "tierctl.h"

/* ---- JSON writer ------------------------------------------------------ */

static void test_json_compact(void **state)
{
	struct capture c;
	struct tt_json *j;

	(void)state;
	capture_open(&c);
	j = tt_json_new(c.f, false);
	assert_non_null(j);
	tt_json_object_open(j, NULL);
	tt_json_string(j, "s", "x");
	tt_json_u64(j, "u", UINT64_MAX);
	tt_json_i64(j, "i", INT64_MIN);
	tt_json_i64(j, "z", 0);
	tt_json_bool(j, "t", true);
	tt_json_bool(j, "f", false);
	tt_json_null(j, "n");
	tt_json_array_open(j, "a");
	tt_json_u64(j, NULL, 1);
	tt_json_object_open(j, NULL);
	tt_json_array_open(j, "e");
	tt_json_array_close(j);
	tt_json_object_open(j, "o");
	tt_json_object_close(j);
	tt_json_object_close(j);
	tt_json_array_open(j, NULL);
	tt_json_string(j, NULL, "y");
	tt_json_array_close(j);
	tt_json_array_close(j);
	tt_json_object_close(j);
	assert_int_equal(tt_json_end(j), 0);
	assert_string_equal(capture_text(&c),
			    "{\"s\":\"x\",\"u\":18446744073709551615,\"i\":-9223372036854775808,\"z\":0,\"t\":true,\"f\":false,\"n\":null,\"a\":[1,{\"e\":[],\"o\":{}},[\"y\"]]}\n");
	capture_close(&c);

	/* A bare top-level value. */
	capture_open(&c);
	j = tt_json_new(c.f, false);
	tt_json_u64(j, NULL, 7);
	assert_int_equal(tt_json_end(j), 0);
	assert_string_equal(capture_text(&c), "7\n");
	capture_close(&c);
}

static void test_json_pretty(void **state)
{
	struct capture c;
	struct tt_json *j;

	(void)state;
	capture_open(&c);
	j = tt_json_new(c.f, true);
	tt_json_object_open(j, NULL);
	tt_json_string(j, "version", "0.1.0");
	tt_json_array_open(j, "nodes");
	tt_json_object_open(j, NULL);
	tt_json_u64(j, "node", 0);
	tt_json_null(j, "memory_tier");
	tt_json_object_close(j);
	tt_json_object_open(j, NULL);
	tt_json_object_close(j);
	tt_json_array_close(j);
	tt_json_array_open(j, "empty");
	tt_json_array_close(j);
	tt_json_object_close(j);
	assert_int_equal(tt_json_end(j), 0);
	assert_string_equal(capture_text(&c),
			    "{\n"
			    "    \"version\": \"0.1.0\",\n"
			    "    \"nodes\": [\n"
			    "        {\n"
			    "            \"node\": 0,\n"
			    "            \"memory_tier\": null\n"
			    "        },\n"
			    "        {}\n"
			    "    ],\n"
			    "    \"empty\": []\n"
			    "}\n");
	capture_close(&c);
}

static void test_json_escaping(void **state)
{
	struct capture c;

	(void)state;
	capture_open(&c);
	tt_json_write_string(c.f, "q\"b\\s/\b\f\n\r\t\x01\x1f\x7f é ✓");
	assert_string_equal(capture_text(&c),
			    "\"q\\\"b\\\\s/\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f é ✓\"");
	capture_close(&c);

	capture_open(&c);
	tt_json_write_string(c.f, "");
	assert_string_equal(capture_text(&c), "\"\"");
	capture_close(&c);

	/* Names are escaped too. */
	capture_open(&c);
	{
		struct tt_json *j = tt_json_new(c.f, false);

		tt_json_object_open(j, NULL);
		tt_json_bool(j, "a\"b", true);
		tt_json_object_close(j);
		assert_int_equal(tt_json_end(j), 0);
	}
	assert_string_equal(capture_text(&c), "{\"a\\\"b\":true}\n");
	capture_close(&c);
}

/* Exact decimals from thousandths. */
static void test_json_milli(void **state)
{
	struct capture c;
	struct tt_json *j;

	(void)state;
	capture_open(&c);
	j = tt_json_new(c.f, false);
	tt_json_array_open(j, NULL);
	tt_json_milli(j, NULL, 0);
	tt_json_milli(j, NULL, 1);
	tt_json_milli(j, NULL, 10);
	tt_json_milli(j, NULL, 100);
	tt_json_milli(j, NULL, 1000);
	tt_json_milli(j, NULL, 1500);
	tt_json_milli(j, NULL, 12345);
	tt_json_milli(j, NULL, 20010);
	tt_json_milli(j, NULL, UINT64_MAX);
	tt_json_object_open(j, NULL);
	tt_json_milli(j, "t", 450003662);
	tt_json_object_close(j);
	tt_json_array_close(j);
	assert_int_equal(tt_json_end(j), 0);
	assert_string_equal(capture_text(&c),
			    "[0,0.001,0.01,0.1,1,1.5,12.345,20.01,18446744073709551.615,{\"t\":450003.662}]\n");
	capture_close(&c);

	/* Misuse is caught as for the other values. */
	capture_open(&c);
	j = tt_json_new(c.f, false);
	tt_json_object_open(j, NULL);
	tt_json_milli(j, NULL, 1);
	tt_json_object_close(j);
	assert_int_equal(tt_json_end(j), -EINVAL);
	capture_close(&c);
}

static void test_json_misuse(void **state)
{
	struct capture c;
	struct tt_json *j;
	int i;

	(void)state;
	capture_open(&c);

	/* A name inside an array. */
	j = tt_json_new(c.f, false);
	tt_json_array_open(j, NULL);
	tt_json_u64(j, "x", 1);
	tt_json_array_close(j);
	assert_int_equal(tt_json_end(j), -EINVAL);

	/* No name inside an object. */
	j = tt_json_new(c.f, false);
	tt_json_object_open(j, NULL);
	tt_json_u64(j, NULL, 1);
	tt_json_object_close(j);
	assert_int_equal(tt_json_end(j), -EINVAL);

	/* A name at the top level. */
	j = tt_json_new(c.f, false);
	tt_json_u64(j, "x", 1);
	assert_int_equal(tt_json_end(j), -EINVAL);

	/* Closing what is not open. */
	j = tt_json_new(c.f, false);
	tt_json_object_open(j, NULL);
	tt_json_array_close(j);
	assert_int_equal(tt_json_end(j), -EINVAL);
	j = tt_json_new(c.f, false);
	tt_json_object_close(j);
	assert_int_equal(tt_json_end(j), -EINVAL);

	/* Left open. */
	j = tt_json_new(c.f, false);
	tt_json_object_open(j, NULL);
	assert_int_equal(tt_json_end(j), -EINVAL);

	/* Two top-level values; none at all. */
	j = tt_json_new(c.f, false);
	tt_json_u64(j, NULL, 1);
	tt_json_u64(j, NULL, 2);
	assert_int_equal(tt_json_end(j), -EINVAL);
	j = tt_json_new(c.f, false);
	assert_int_equal(tt_json_end(j), -EINVAL);

	/* 32 levels are fine, 33 are not. */
	j = tt_json_new(c.f, false);
	for (i = 0; i < 32; i++)
		tt_json_array_open(j, NULL);
	for (i = 0; i < 32; i++)
		tt_json_array_close(j);
	assert_int_equal(tt_json_end(j), 0);
	j = tt_json_new(c.f, false);
	for (i = 0; i < 33; i++)
		tt_json_array_open(j, NULL);
	for (i = 0; i < 33; i++)
		tt_json_array_close(j);
	assert_int_equal(tt_json_end(j), -EINVAL);
	capture_close(&c);
}

/* ---- byte formatting, node lists, memory tiers ------------------------- */

static void assert_bytes(uint64_t v, const char *want)
{
	char buf[32];

	tt_fmt_bytes(v, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void test_fmt_bytes(void **state)
{
	(void)state;
	assert_bytes(0, "0 B");
	assert_bytes(1, "1 B");
	assert_bytes(1023, "1023 B");
	assert_bytes(1024, "1.0 KiB");
	assert_bytes(1536, "1.5 KiB");
	assert_bytes(1024 * 1023, "1023.0 KiB");
	assert_bytes(1024 * 1024 - 1, "1.0 MiB");
	assert_bytes(1024 * 1024, "1.0 MiB");
	assert_bytes(2ULL << 30, "2.0 GiB");
	assert_bytes((2ULL << 30) - (100ULL << 20), "1.9 GiB");
	assert_bytes(1717986918ULL, "1.6 GiB");
	assert_bytes(5ULL << 40, "5.0 TiB");
	assert_bytes(3ULL << 50, "3.0 PiB");
	assert_bytes(UINT64_MAX, "16.0 EiB");
}

static void test_nodelist(void **state)
{
	struct tt_nodemask m;

	(void)state;
	assert_int_equal(tt_nodelist_parse("0-1,4\n", &m), 0);
	assert_true(tt_nodemask_test(&m, 0));
	assert_true(tt_nodemask_test(&m, 1));
	assert_false(tt_nodemask_test(&m, 2));
	assert_true(tt_nodemask_test(&m, 4));
	assert_int_equal(tt_nodelist_parse("1-0", &m), -EINVAL);
	assert_int_equal(tt_nodelist_parse("x", &m), -EINVAL);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_memory_tiers(void **state)
{
	char dir[] = "/tmp/tt-tiers-XXXXXX", sub[256];
	int tier_of[8];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/memory_tier4", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	write_file(sub, "nodelist", "0-1\n");
	snprintf(sub, sizeof(sub), "%s/memory_tier22", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	write_file(sub, "nodelist", "3\n");
	/* Not tiers. */
	write_file(dir, "uevent", "");
	snprintf(sub, sizeof(sub), "%s/memory_tierx", dir);
	assert_int_equal(mkdir(sub, 0755), 0);

	assert_int_equal(tt_memory_tiers(dir, tier_of, 8), 2);
	assert_int_equal(tier_of[0], 4);
	assert_int_equal(tier_of[1], 4);
	assert_int_equal(tier_of[2], -1);
	assert_int_equal(tier_of[3], 22);
	assert_int_equal(tier_of[7], -1);

	/* A malformed nodelist is an error, not a silent "-". */
	snprintf(sub, sizeof(sub), "%s/memory_tier22", dir);
	write_file(sub, "nodelist", "3-\n");
	assert_int_equal(tt_memory_tiers(dir, tier_of, 8), -EINVAL);

	snprintf(sub, sizeof(sub), "rm -rf '%s'", dir);
	assert_int_equal(system(sub), 0);

	/* No memory tiering in the kernel: every node shows '-'. */
	assert_int_equal(tt_memory_tiers(dir, tier_of, 8), 0);
	assert_int_equal(tier_of[0], -1);
}

/* ---- global options and verbs ----------------------------------------- */

/* The verb's arguments after the last parse(), the verb first. */
static char *parsed_argv[16];
static int parsed_argc;

static enum tt_ctl_action parse(struct tt_ctl *ctl, int *vi,
				struct capture *out, struct capture *err,
				int argc, ...)
{
	enum tt_ctl_action act;
	char *argv[16];
	va_list ap;

	va_start(ap, argc);
	args_from_va(argv, argc, ap);
	va_end(ap);
	parsed_argc = -1;
	act = tt_ctl_parse_args(argc, argv, ctl, vi, &parsed_argc, out->f,
				err->f);
	memset(parsed_argv, 0, sizeof(parsed_argv));
	if (act == TT_CTL_RUN) {
		assert_in_range(parsed_argc, 1, argc - *vi);
		assert_null(argv[*vi + parsed_argc]);
		memcpy(parsed_argv, argv + *vi, parsed_argc * sizeof(char *));
	}
	return act;
}

/* The verb's arguments after parse() are exactly ARGS (NULL-terminated). */
static void expect_verb_args(const char *first, ...)
{
	const char *a = first;
	va_list ap;
	int i = 0;

	va_start(ap, first);
	for (; a; a = va_arg(ap, const char *), i++) {
		assert_true(i < parsed_argc);
		assert_string_equal(parsed_argv[i], a);
	}
	va_end(ap);
	assert_int_equal(i, parsed_argc);
}

static void test_parse_args(void **state)
{
	struct capture out, err;
	struct tt_ctl ctl;
	int vi;

	(void)state;
	capture_open(&out);
	capture_open(&err);

	vi = -1;
	assert_int_equal(parse(&ctl, &vi, &out, &err, 2, "tierctl", "status"),
			 TT_CTL_RUN);
	assert_int_equal(vi, 1);
	assert_false(ctl.json);
	assert_false(ctl.pretty);
	assert_ptr_equal(ctl.out, out.f);
	assert_ptr_equal(ctl.err, err.f);

	assert_int_equal(parse(&ctl, &vi, &out, &err, 3, "tierctl", "-j",
			       "status"), TT_CTL_RUN);
	assert_int_equal(vi, 2);
	assert_true(ctl.json);
	assert_false(ctl.pretty);
	assert_int_equal(parse(&ctl, &vi, &out, &err, 4, "tierctl", "--json",
			       "--pretty", "status"), TT_CTL_RUN);
	assert_int_equal(vi, 3);
	assert_true(ctl.json);
	assert_true(ctl.pretty);
	/* -p implies -j. */
	assert_int_equal(parse(&ctl, &vi, &out, &err, 3, "tierctl", "-p",
			       "status"), TT_CTL_RUN);
	assert_true(ctl.json);
	assert_true(ctl.pretty);
	expect_verb_args("status", NULL);
	/* The global options go after the verb too, anywhere. */
	assert_int_equal(parse(&ctl, &vi, &out, &err, 3, "tierctl", "status",
			       "-j"), TT_CTL_RUN);
	assert_int_equal(vi, 1);
	assert_true(ctl.json);
	assert_false(ctl.pretty);
	expect_verb_args("status", NULL);
	assert_int_equal(parse(&ctl, &vi, &out, &err, 5, "tierctl", "stats",
			       "-p", "123", "--json"), TT_CTL_RUN);
	assert_true(ctl.json);
	assert_true(ctl.pretty);
	expect_verb_args("stats", "123", NULL);
	assert_int_equal(parse(&ctl, &vi, &out, &err, 6, "tierctl", "-j",
			       "config", "--pretty", "set", "a=1"), TT_CTL_RUN);
	assert_int_equal(vi, 2);
	assert_true(ctl.pretty);
	expect_verb_args("config", "set", "a=1", NULL);
	/* Other options stay the verb's, in their order. */
	assert_int_equal(parse(&ctl, &vi, &out, &err, 7, "tierctl", "monitor",
			       "--all", "-j", "--count", "3", "-x"), TT_CTL_RUN);
	assert_true(ctl.json);
	assert_false(ctl.pretty);
	expect_verb_args("monitor", "--all", "--count", "3", "-x", NULL);
	/* The value of a verb's option is the verb's, even "-j". */
	assert_int_equal(parse(&ctl, &vi, &out, &err, 6, "tierctl", "trace",
			       "1", "-o", "-j", "-p"), TT_CTL_RUN);
	assert_true(ctl.pretty);
	expect_verb_args("trace", "1", "-o", "-j", NULL);
	assert_int_equal(parse(&ctl, &vi, &out, &err, 7, "tierctl", "plot",
			       "--iters", "-p", "t.json", "-o", "--json"),
			 TT_CTL_RUN);
	assert_false(ctl.json);
	expect_verb_args("plot", "--iters", "-p", "t.json", "-o", "--json",
			 NULL);
	assert_int_equal(parse(&ctl, &vi, &out, &err, 7, "tierctl", "simulate",
			       "--er", "-j", "--pr=-p", "-p", "t.csv"),
			 TT_CTL_RUN);
	assert_true(ctl.pretty);
	expect_verb_args("simulate", "--er", "-j", "--pr=-p", "t.csv", NULL);
	assert_int_equal(parse(&ctl, &vi, &out, &err, 6, "tierctl", "tiers",
			       "set", "--slow", "-j", "-j"), TT_CTL_RUN);
	assert_true(ctl.json);
	expect_verb_args("tiers", "set", "--slow", "-j", NULL);
	/* A value option last has no value to skip: the verb says so. */
	assert_int_equal(parse(&ctl, &vi, &out, &err, 4, "tierctl", "trace",
			       "-j", "-o"), TT_CTL_RUN);
	assert_true(ctl.json);
	expect_verb_args("trace", "-o", NULL);
	/* After "--" every argument is the verb's, "--" included. */
	assert_int_equal(parse(&ctl, &vi, &out, &err, 6, "tierctl", "simulate",
			       "-j", "--", "-p", "--json"), TT_CTL_RUN);
	assert_true(ctl.json);
	assert_false(ctl.pretty);
	expect_verb_args("simulate", "--", "-p", "--json", NULL);
	/* An unknown verb's arguments are left alone (it is refused). */
	assert_int_equal(parse(&ctl, &vi, &out, &err, 3, "tierctl", "stat",
			       "-j"), TT_CTL_RUN);
	assert_false(ctl.json);
	expect_verb_args("stat", "-j", NULL);
	/* "--" ends the options before the verb. */
	assert_int_equal(parse(&ctl, &vi, &out, &err, 4, "tierctl", "-j", "--",
			       "-weird"), TT_CTL_RUN);
	assert_int_equal(vi, 3);
	expect_verb_args("-weird", NULL);
	assert_string_equal(capture_text(&out), "");
	assert_string_equal(capture_text(&err), "");

	assert_int_equal(parse(&ctl, &vi, &out, &err, 2, "tierctl",
			       "--version"), TT_CTL_EXIT_OK);
	assert_string_equal(capture_text(&out), "tierctl 0.1.0\n");
	assert_string_equal(tt_version(), "0.1.0");
	assert_int_equal(parse(&ctl, &vi, &out, &err, 2, "tierctl", "-V"),
			 TT_CTL_EXIT_OK);
	assert_int_equal(parse(&ctl, &vi, &out, &err, 4, "tierctl", "status",
			       "-j", "-V"), TT_CTL_EXIT_OK);
	assert_int_equal(parse(&ctl, &vi, &out, &err, 3, "tierctl", "stats",
			       "--version"), TT_CTL_EXIT_OK);
	assert_string_equal(capture_text(&out),
			    "tierctl 0.1.0\ntierctl 0.1.0\ntierctl 0.1.0\ntierctl 0.1.0\n");
	assert_int_equal(parse(&ctl, &vi, &out, &err, 3, "tierctl", "--help",
			       "status"), TT_CTL_EXIT_OK);
	assert_non_null(strstr(capture_text(&out), "Verbs:\n"));
	assert_non_null(strstr(capture_text(&out), "  status "));
	assert_string_equal(capture_text(&err), "");

	assert_int_equal(parse(&ctl, &vi, &out, &err, 3, "tierctl", "--jsn",
			       "status"), TT_CTL_EXIT_FAIL);
	assert_string_equal(capture_text(&err),
			    "tierctl: unknown option '--jsn'; try 'tierctl --help'\n");
	capture_close(&err);
	capture_open(&err);
	assert_int_equal(parse(&ctl, &vi, &out, &err, 2, "tierctl", "-jp"),
			 TT_CTL_EXIT_FAIL);
	assert_string_equal(capture_text(&err),
			    "tierctl: unknown option '-jp'; try 'tierctl --help'\n");
	capture_close(&err);
	capture_open(&err);
	assert_int_equal(parse(&ctl, &vi, &out, &err, 2, "tierctl", "-j"),
			 TT_CTL_EXIT_FAIL);
	assert_true(!strncmp(capture_text(&err), "tierctl: no verb given\n",
			     23));
	capture_close(&out);
	capture_close(&err);
}

static void test_verb_table(void **state)
{
	static const char *const globals[] = {
		"-j", "--json", "-p", "--pretty", "-V", "--version", "-h",
		"--help", "--", NULL
	};
	const char *const *o, *const *g;
	const struct tt_verb *v, *w;

	(void)state;
	assert_non_null(tt_ctl_find_verb("status"));
	assert_ptr_equal(tt_ctl_find_verb("status")->handler, tt_status_main);
	assert_non_null(tt_ctl_find_verb("help"));
	assert_null(tt_ctl_find_verb("stat"));
	assert_null(tt_ctl_find_verb("statuss"));
	assert_null(tt_ctl_find_verb("STATUS"));
	assert_null(tt_ctl_find_verb(""));
	for (v = tt_verbs; v->name; v++) {
		assert_non_null(v->handler);
		assert_non_null(v->help);
		assert_true(!strncmp(v->usage, "Usage: tierctl ", 15));
		/* its options that take a value are in its usage */
		for (o = v->value_opts; o && *o; o++) {
			if (!strstr(v->usage, *o))
				fail_msg("%s: %s not in the usage", v->name,
					 *o);
			/* and none is spelled like a global option */
			for (g = globals; *g; g++)
				assert_string_not_equal(*o, *g);
		}
		assert_ptr_equal(tt_ctl_find_verb(v->name), v);
		for (w = v + 1; w->name; w++)
			assert_string_not_equal(v->name, w->name);
	}
}

static void test_run(void **state)
{
	struct capture out, err;

	(void)state;
	assert_int_equal(run_ctl(&out, &err, 2, "tierctl", "nope"), 1);
	assert_string_equal(capture_text(&err),
			    "tierctl: unknown verb 'nope'; try 'tierctl help'\n");
	capture_close(&out);
	capture_close(&err);

	assert_int_equal(run_ctl(&out, &err, 3, "tierctl", "status", "--help"), 0);
	assert_string_equal(capture_text(&out), tt_status_usage);
	capture_close(&out);
	capture_close(&err);

	assert_int_equal(run_ctl(&out, &err, 3, "tierctl", "help", "status"), 0);
	assert_string_equal(capture_text(&out), tt_status_usage);
	capture_close(&out);
	capture_close(&err);

	assert_int_equal(run_ctl(&out, &err, 2, "tierctl", "help"), 0);
	assert_non_null(strstr(capture_text(&out), "  help "));
	capture_close(&out);
	capture_close(&err);

	assert_int_equal(run_ctl(&out, &err, 3, "tierctl", "help", "nope"), 1);
	assert_string_equal(capture_text(&err),
			    "tierctl help: unknown verb 'nope'; try 'tierctl help'\n");
	capture_close(&out);
	capture_close(&err);

	assert_int_equal(run_ctl(&out, &err, 3, "tierctl", "status", "extra"), 1);
	assert_string_equal(capture_text(&err),
			    "tierctl status: unexpected argument 'extra'; try 'tierctl status --help'\n");
	assert_string_equal(capture_text(&out), "");
	capture_close(&out);
	capture_close(&err);

	/*
	 * The real thing: on the host there is no module and the family
	 * lookup fails; where it is loaded (the test guest), status works.
	 */
	if (access("/sys/module/tiertrain", F_OK)) {
		assert_int_equal(run_ctl(&out, &err, 2, "tierctl", "status"), 1);
		assert_string_equal(capture_text(&err),
				    "tierctl: the tiertrain kernel module is not loaded (generic netlink family \"tiertrain\" not found); try 'modprobe tiertrain'\n");
		assert_string_equal(capture_text(&out), "");
	} else {
		assert_int_equal(run_ctl(&out, &err, 2, "tierctl", "status"), 0);
		assert_string_equal(capture_text(&err), "");
		assert_true(!strncmp(capture_text(&out), "module version: ",
				     16));
	}
	capture_close(&out);
	capture_close(&err);
}

/* ---- netlink error text ------------------------------------------------ */

/* A request like tierctl's, with two attributes; returns the second's offset. */
static size_t make_request(char *buf)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;
	size_t offs;

	nlh->nlmsg_type = 0x20;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = 7;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = TT_CMD_GET_STATUS;
	g->version = TT_GENL_VERSION;
	mnl_attr_put_u32(nlh, TT_A_WORKERS, 2);
	offs = nlh->nlmsg_len;
	mnl_attr_put_u32(nlh, 9, 1);
	return offs;
}

/*
 * An NLMSG_ERROR answering @req: @capped leaves the request out, @msg and
 * @offs (>= 0) become extended ACK attributes.
 */
static struct nlmsghdr *make_error(char *buf, const struct nlmsghdr *req,
				   int error, bool capped, const char *msg,
				   long offs)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nlmsgerr *e;
	size_t len = sizeof(*e);

	if (!capped)
		len += req->nlmsg_len - sizeof(*req);
	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_seq = req->nlmsg_seq;
	e = mnl_nlmsg_put_extra_header(nlh, MNL_ALIGN(len));
	e->error = error;
	memcpy(&e->msg, req, capped ? sizeof(*req) : req->nlmsg_len);
	if (capped)
		nlh->nlmsg_flags |= NLM_F_CAPPED;
	if (msg || offs >= 0)
		nlh->nlmsg_flags |= NLM_F_ACK_TLVS;
	if (msg)
		mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, msg);
	if (offs >= 0)
		mnl_attr_put_u32(nlh, NLMSGERR_ATTR_OFFS, offs);
	return nlh;
}

static void test_nl_error_text(void **state)
{
	char reqbuf[256], buf[512], text[256];
	const struct nlmsghdr *req = (void *)reqbuf;
	struct nlmsghdr *nlh;
	size_t offs;

	(void)state;
	memset(reqbuf, 0, sizeof(reqbuf));
	memset(buf, 0, sizeof(buf));
	offs = make_request(reqbuf);

	/* Strict validation rejecting attribute 9. */
	nlh = make_error(buf, req, -EINVAL, true, "Unknown attribute type",
			 offs);
	assert_int_equal(tt_nl_error_text(nlh, req, text, sizeof(text)),
			 -EINVAL);
	assert_string_equal(text,
			    "Unknown attribute type (attribute type 9): Invalid argument");
	/* The same without the request at hand. */
	assert_int_equal(tt_nl_error_text(nlh, NULL, text, sizeof(text)),
			 -EINVAL);
	assert_string_equal(text, "Unknown attribute type: Invalid argument");

	/* The request echoed back (no NETLINK_CAP_ACK), TLVs after it. */
	nlh = make_error(buf, req, -EPERM, false, "Needs CAP_NET_ADMIN", -1);
	assert_int_equal(tt_nl_error_text(nlh, req, text, sizeof(text)),
			 -EPERM);
	assert_string_equal(text,
			    "Needs CAP_NET_ADMIN: Operation not permitted");

	/* Only an offset. */
	nlh = make_error(buf, req, -ERANGE, true, NULL, offs);
	assert_int_equal(tt_nl_error_text(nlh, req, text, sizeof(text)),
			 -ERANGE);
	assert_string_equal(text,
			    "Numerical result out of range (attribute type 9)");

	/* An offset that does not point into the request's attributes. */
	nlh = make_error(buf, req, -EINVAL, true, "Bad", 4);
	assert_int_equal(tt_nl_error_text(nlh, req, text, sizeof(text)),
			 -EINVAL);
	assert_string_equal(text, "Bad: Invalid argument");
	nlh = make_error(buf, req, -EINVAL, true, "Bad", 4000);
	assert_int_equal(tt_nl_error_text(nlh, req, text, sizeof(text)),
			 -EINVAL);
	assert_string_equal(text, "Bad: Invalid argument");

	/* No extended ACK at all. */
	nlh = make_error(buf, req, -ENOENT, true, NULL, -1);
	assert_int_equal(tt_nl_error_text(nlh, req, text, sizeof(text)),
			 -ENOENT);
	assert_string_equal(text, "No such file or directory");

	/* An ACK, plain and with a warning. */
	nlh = make_error(buf, req, 0, true, NULL, -1);
	assert_int_equal(tt_nl_error_text(nlh, req, text, sizeof(text)), 0);
	assert_string_equal(text, "");
	nlh = make_error(buf, req, 0, true, "deprecated attribute", -1);
	assert_int_equal(tt_nl_error_text(nlh, req, text, sizeof(text)), 0);
	assert_string_equal(text, "deprecated attribute");

	/* A message attribute without its NUL is ignored. */
	nlh = make_error(buf, req, -EINVAL, true, NULL, -1);
	nlh->nlmsg_flags |= NLM_F_ACK_TLVS;
	{
		struct nlattr *a = mnl_nlmsg_get_payload_tail(nlh);

		a->nla_type = NLMSGERR_ATTR_MSG;
		a->nla_len = sizeof(*a) + 4;
		memcpy(a + 1, "abcd", 4);
		nlh->nlmsg_len += MNL_ALIGN(a->nla_len);
	}
	assert_int_equal(tt_nl_error_text(nlh, req, text, sizeof(text)),
			 -EINVAL);
	assert_string_equal(text, "Invalid argument");

	/* Too short to hold a struct nlmsgerr. */
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = NLMSG_ERROR;
	assert_int_equal(tt_nl_error_text(nlh, req, text, sizeof(text)),
			 -EBADMSG);
	assert_string_equal(text, "truncated netlink error message (16 bytes)");
}

/* ---- the status reply --------------------------------------------------- */

static void put_node(struct nlmsghdr *nlh, uint32_t id, uint32_t role,
		     uint32_t src, uint32_t cpus, uint64_t total,
		     uint64_t free_b, int skip)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, TT_A_NODE);

	if (skip != TT_NODE_A_ID)
		mnl_attr_put_u32(nlh, TT_NODE_A_ID, id);
	if (skip != TT_NODE_A_ROLE)
		mnl_attr_put_u32(nlh, TT_NODE_A_ROLE, role);
	if (skip != TT_NODE_A_ROLE_SOURCE)
		mnl_attr_put_u32(nlh, TT_NODE_A_ROLE_SOURCE, src);
	if (skip != TT_NODE_A_NR_CPUS)
		mnl_attr_put_u32(nlh, TT_NODE_A_NR_CPUS, cpus);
	/* What nla_put_u64_64bit() may emit before a u64. */
	mnl_attr_put(nlh, TT_NODE_A_PAD, 0, NULL);
	if (skip != TT_NODE_A_TOTAL_BYTES)
		mnl_attr_put_u64(nlh, TT_NODE_A_TOTAL_BYTES, total);
	if (skip != TT_NODE_A_FREE_BYTES)
		mnl_attr_put_u64(nlh, TT_NODE_A_FREE_BYTES, free_b);
	mnl_attr_nest_end(nlh, n);
}

/*
 * A node with the memory tier attributes, which are optional (nodes 0-2
 * of make_status() go without, as from an older module); @bad sends one
 * of them malformed.
 */
static void put_node_tier(struct nlmsghdr *nlh, uint32_t id, uint32_t role,
			  uint32_t cpus, uint32_t tier, uint32_t adist,
			  uint32_t dist, uint32_t dist_src, uint32_t bw,
			  const uint32_t *order, unsigned int nr_order,
			  int bad)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, TT_A_NODE);

	mnl_attr_put_u32(nlh, TT_NODE_A_ID, id);
	mnl_attr_put_u32(nlh, TT_NODE_A_ROLE, role);
	mnl_attr_put_u32(nlh, TT_NODE_A_ROLE_SOURCE, TT_ROLE_SRC_CPUS);
	mnl_attr_put_u32(nlh, TT_NODE_A_NR_CPUS, cpus);
	mnl_attr_put(nlh, TT_NODE_A_PAD, 0, NULL);
	mnl_attr_put_u64(nlh, TT_NODE_A_TOTAL_BYTES, 2147483648ULL);
	mnl_attr_put_u64(nlh, TT_NODE_A_FREE_BYTES, 1717986918ULL);
	if (nr_order)
		mnl_attr_put_u32(nlh, TT_NODE_A_SLOW_TARGET, order[0]);
	mnl_attr_put_u32(nlh, TT_NODE_A_MEMORY_TIER, tier);
	mnl_attr_put_u32(nlh, TT_NODE_A_ADIST_SOURCE, adist);
	mnl_attr_put_u32(nlh, TT_NODE_A_DISTANCE, dist);
	if (bad == TT_NODE_A_DISTANCE_SOURCE)
		mnl_attr_put_u16(nlh, TT_NODE_A_DISTANCE_SOURCE, dist_src);
	else
		mnl_attr_put_u32(nlh, TT_NODE_A_DISTANCE_SOURCE, dist_src);
	if (bw)
		mnl_attr_put_u32(nlh, TT_NODE_A_READ_BANDWIDTH, bw);
	if (bad == TT_NODE_A_EVICT_ORDER)
		mnl_attr_put(nlh, TT_NODE_A_EVICT_ORDER, 6, order);
	else if (nr_order)
		mnl_attr_put(nlh, TT_NODE_A_EVICT_ORDER,
			     nr_order * sizeof(*order), order);
	mnl_attr_nest_end(nlh, n);
}

/*
 * A reply as the module sends it for the VM's layout; @skip leaves one
 * top-level attribute out, @skip_node one attribute of node 1, and
 * @short_workers makes TT_A_WORKERS a 2-byte attribute.
 */
static struct nlmsghdr *make_status(char *buf, int skip, int skip_node,
				    bool short_workers)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;
	struct nlattr *nodes;

	nlh->nlmsg_type = 0x20;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = TT_CMD_GET_STATUS;
	g->version = TT_GENL_VERSION;
	if (skip != TT_A_VERSION)
		mnl_attr_put_strz(nlh, TT_A_VERSION, "0.1.0");
	if (skip != TT_A_ABI_VERSION)
		mnl_attr_put_u32(nlh, TT_A_ABI_VERSION, TT_ABI_VERSION);
	if (short_workers)
		mnl_attr_put_u16(nlh, TT_A_WORKERS, 2);
	else if (skip != TT_A_WORKERS)
		mnl_attr_put_u32(nlh, TT_A_WORKERS, 2);
	if (skip != TT_A_BATCH_PAGES)
		mnl_attr_put_u32(nlh, TT_A_BATCH_PAGES, 512);
	if (skip != TT_A_NR_SESSIONS)
		mnl_attr_put_u32(nlh, TT_A_NR_SESSIONS, 3);
	/* An attribute from a newer module: skipped. */
	mnl_attr_put_u32(nlh, TT_A_MAX + 5, 77);
	if (skip != TT_A_NODES) {
		static const uint32_t order[] = { 1, 3 };

		nodes = mnl_attr_nest_start(nlh, TT_A_NODES);
		put_node(nlh, 0, TT_ROLE_FAST, TT_ROLE_SRC_CPUS, 2,
			 2147483648ULL, 1717986918ULL, -1);
		put_node(nlh, 1, TT_ROLE_SLOW, TT_ROLE_SRC_CPUS, 0,
			 2147483648ULL, 2147483648ULL - 4096,
			 skip_node < TT_NODE_A_MEMORY_TIER ? skip_node : -1);
		put_node(nlh, 2, 7, 9, 0, 512ULL << 20, 0, -1);
		/* three tiers: DRAM with the CPUs, then CXL memory (tier 22) */
		put_node_tier(nlh, 4, TT_ROLE_FAST, 2, 4, TT_ADIST_SRC_DRAM,
			      80, TT_DIST_SRC_HMAT, 20480, order, 2,
			      skip_node == TT_NODE_A_EVICT_ORDER ? skip_node :
			      -1);
		put_node_tier(nlh, 3, TT_ROLE_SLOW, 0, 22, TT_ADIST_SRC_KMEM,
			      20, TT_DIST_SRC_SLIT, 0, NULL, 0,
			      skip_node == TT_NODE_A_DISTANCE_SOURCE ?
			      skip_node : -1);
		mnl_attr_nest_end(nlh, nodes);
	}
	return nlh;
}

static void test_status_parse(void **state)
{
	struct tt_status st = { 0 };
	char buf[2048];

	(void)state;
	memset(buf, 0, sizeof(buf));
	assert_int_equal(tt_status_parse(make_status(buf, -1, -1, false), &st),
			 MNL_CB_OK);
	assert_string_equal(st.version, "0.1.0");
	assert_int_equal(st.abi, 1);
	assert_int_equal(st.workers, 2);
	assert_int_equal(st.batch_pages, 512);
	assert_int_equal(st.sessions, 3);
	assert_int_equal(st.replies, 1);
	assert_int_equal(st.nr_nodes, 5);
	assert_int_equal(st.nodes[0].id, 0);
	assert_int_equal(st.nodes[0].role, TT_ROLE_FAST);
	assert_int_equal(st.nodes[0].nr_cpus, 2);
	assert_int_equal(st.nodes[0].total_bytes, 2147483648ULL);
	assert_int_equal(st.nodes[1].role, TT_ROLE_SLOW);
	assert_int_equal(st.nodes[1].free_bytes, 2147483648ULL - 4096);
	assert_int_equal(st.nodes[2].role, 7);
	/* without the memory tier attributes */
	assert_int_equal(st.nodes[1].memory_tier, -1);
	assert_int_equal(st.nodes[1].adist_source, -1);
	assert_int_equal(st.nodes[1].dist_source, -1);
	assert_int_equal(st.nodes[1].nr_evict_order, 0);
	/* with them */
	assert_int_equal(st.nodes[3].id, 4);
	assert_int_equal(st.nodes[3].slow_target, 1);
	assert_int_equal(st.nodes[3].memory_tier, 4);
	assert_int_equal(st.nodes[3].adist_source, TT_ADIST_SRC_DRAM);
	assert_int_equal(st.nodes[3].distance, 80);
	assert_int_equal(st.nodes[3].dist_source, TT_DIST_SRC_HMAT);
	assert_int_equal(st.nodes[3].read_bw_mbps, 20480);
	assert_int_equal(st.nodes[3].nr_evict_order, 2);
	assert_int_equal(st.nodes[3].evict_order[0], 1);
	assert_int_equal(st.nodes[3].evict_order[1], 3);
	assert_int_equal(st.nodes[4].memory_tier, 22);
	assert_int_equal(st.nodes[4].adist_source, TT_ADIST_SRC_KMEM);
	assert_int_equal(st.nodes[4].dist_source, TT_DIST_SRC_SLIT);
	assert_int_equal(st.nodes[4].read_bw_mbps, 0);
	assert_int_equal(st.nodes[4].nr_evict_order, 0);
	tt_status_free(&st);
}

static void test_status_parse_errors(void **state)
{
	struct tt_status st;
	char buf[2048];

	(void)state;
	memset(&st, 0, sizeof(st));
	errno = 0;
	assert_int_equal(tt_status_parse(make_status(buf, TT_A_WORKERS, -1,
						     false), &st),
			 MNL_CB_ERROR);
	assert_int_equal(errno, EPROTO);
	assert_string_equal(st.err,
			    "the module's reply has no TT_A_WORKERS attribute");
	tt_status_free(&st);

	memset(&st, 0, sizeof(st));
	assert_int_equal(tt_status_parse(make_status(buf, TT_A_NODES, -1,
						     false), &st),
			 MNL_CB_ERROR);
	assert_string_equal(st.err,
			    "the module's reply has no TT_A_NODES attribute");
	tt_status_free(&st);

	memset(&st, 0, sizeof(st));
	assert_int_equal(tt_status_parse(make_status(buf, -1, -1, true), &st),
			 MNL_CB_ERROR);
	assert_string_equal(st.err,
			    "the module's reply has a malformed TT_A_WORKERS attribute (2 bytes of payload)");
	tt_status_free(&st);

	memset(&st, 0, sizeof(st));
	assert_int_equal(tt_status_parse(make_status(buf, -1,
						     TT_NODE_A_FREE_BYTES,
						     false), &st),
			 MNL_CB_ERROR);
	assert_string_equal(st.err,
			    "the module's reply has no TT_NODE_A_FREE_BYTES attribute in node entry 1");
	tt_status_free(&st);

	/* the optional attributes are checked when present */
	memset(&st, 0, sizeof(st));
	assert_int_equal(tt_status_parse(make_status(buf, -1,
						     TT_NODE_A_DISTANCE_SOURCE,
						     false), &st),
			 MNL_CB_ERROR);
	assert_string_equal(st.err,
			    "the module's reply has a malformed TT_NODE_A_DISTANCE_SOURCE attribute (2 bytes of payload) in node entry 4");
	tt_status_free(&st);

	memset(&st, 0, sizeof(st));
	assert_int_equal(tt_status_parse(make_status(buf, -1,
						     TT_NODE_A_EVICT_ORDER,
						     false), &st),
			 MNL_CB_ERROR);
	assert_string_equal(st.err,
			    "the module's reply has a malformed TT_NODE_A_EVICT_ORDER attribute (6 bytes of payload) in node entry 3");
	tt_status_free(&st);
}

static void test_status_print(void **state)
{
	int tier_of[5] = { 4, 4, -1, 7, 7 };
	struct tt_status st = { 0 };
	struct capture out;
	struct tt_ctl ctl = { 0 };
	char buf[2048], b[32];

	(void)state;
	assert_int_equal(tt_status_parse(make_status(buf, -1, -1, false), &st),
			 MNL_CB_OK);

	capture_open(&out);
	ctl.out = out.f;
	assert_int_equal(tt_status_print(&ctl, &st, tier_of, 5), 0);
	assert_string_equal(capture_text(&out),
			    "module version: 0.1.0\n"
			    "abi version:    1\n"
			    "workers:        2\n"
			    "batch pages:    512\n"
			    "sessions:       3\n"
			    "\n"
			    "node  role        source      cpus tier      total       free\n"
			    "0     fast        cpus           2    4    2.0 GiB    1.6 GiB\n"
			    "1     slow        cpus           0    4    2.0 GiB    2.0 GiB\n"
			    "2     unknown(7)  unknown(9)     0    -  512.0 MiB        0 B\n"
			    "4     fast        cpus           2    4    2.0 GiB    1.6 GiB\n"
			    "3     slow        cpus           0   22    2.0 GiB    1.6 GiB\n");
	capture_close(&out);

	capture_open(&out);
	ctl.out = out.f;
	ctl.json = true;
	assert_int_equal(tt_status_print(&ctl, &st, tier_of, 5), 0);
	assert_string_equal(capture_text(&out),
			    "{\"version\":\"0.1.0\",\"abi\":1,\"workers\":2,\"batch_pages\":512,\"sessions\":3,\"nodes\":[{\"node\":0,\"role\":\"fast\",\"role_source\":\"cpus\",\"cpus\":2,\"memory_tier\":4,\"total_bytes\":2147483648,\"free_bytes\":1717986918,\"slow_target\":null,\"adist_source\":null,\"distance\":null,\"distance_source\":null,\"read_bandwidth_mbps\":null,\"evict_order\":[]},{\"node\":1,\"role\":\"slow\",\"role_source\":\"cpus\",\"cpus\":0,\"memory_tier\":4,\"total_bytes\":2147483648,\"free_bytes\":2147479552,\"slow_target\":null,\"adist_source\":null,\"distance\":null,\"distance_source\":null,\"read_bandwidth_mbps\":null,\"evict_order\":[]},{\"node\":2,\"role\":\"unknown(7)\",\"role_source\":\"unknown(9)\",\"cpus\":0,\"memory_tier\":null,\"total_bytes\":536870912,\"free_bytes\":0,\"slow_target\":null,\"adist_source\":null,\"distance\":null,\"distance_source\":null,\"read_bandwidth_mbps\":null,\"evict_order\":[]},{\"node\":4,\"role\":\"fast\",\"role_source\":\"cpus\",\"cpus\":2,\"memory_tier\":4,\"total_bytes\":2147483648,\"free_bytes\":1717986918,\"slow_target\":1,\"adist_source\":\"dram\",\"distance\":80,\"distance_source\":\"hmat\",\"read_bandwidth_mbps\":20480,\"evict_order\":[1,3]},{\"node\":3,\"role\":\"slow\",\"role_source\":\"cpus\",\"cpus\":0,\"memory_tier\":22,\"total_bytes\":2147483648,\"free_bytes\":1717986918,\"slow_target\":null,\"adist_source\":\"kmem\",\"distance\":20,\"distance_source\":\"slit\",\"read_bandwidth_mbps\":null,\"evict_order\":[]}]}\n");
	capture_close(&out);
	tt_status_free(&st);

	assert_string_equal(tt_status_role_name(TT_ROLE_NONE, b, sizeof(b)),
			    "none");
	assert_string_equal(tt_status_source_name(TT_ROLE_SRC_PARAM, b,
						  sizeof(b)), "param");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_compact),
		cmocka_unit_test(test_json_pretty),
		cmocka_unit_test(test_json_escaping),
		cmocka_unit_test(test_json_milli),
		cmocka_unit_test(test_json_misuse),
		cmocka_unit_test(test_fmt_bytes),
		cmocka_unit_test(test_nodelist),
		cmocka_unit_test(test_memory_tiers),
		cmocka_unit_test(test_parse_args),
		cmocka_unit_test(test_verb_table),
		cmocka_unit_test(test_run),
		cmocka_unit_test(test_nl_error_text),
		cmocka_unit_test(test_status_parse),
		cmocka_unit_test(test_status_parse_errors),
		cmocka_unit_test(test_status_print),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
