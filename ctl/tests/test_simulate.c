// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierctl simulate unit tests, on the host: the RATE and option parsers,
 * the trace reader (every error with its exact message), a worked example
 * computed by hand, and the verb end to end through tt_ctl_run().
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

#include "simulate.h"
#include "helpers.h"
#include "tierctl.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define HEADER "layer,fwd_start_us,fwd_end_us,bwd_start_us,bwd_end_us,saved_bytes\n"
#define HINT " (the header must be layer,fwd_start_us,fwd_end_us,bwd_start_us,bwd_end_us,saved_bytes)"

/* ---- RATE -------------------------------------------------------------- */

static void assert_rate(const char *text, uint64_t want)
{
	uint64_t v = 0;
	char err[256] = "";

	if (tt_sim_parse_rate("--er", text, &v, err, sizeof(err)))
		fail_msg("\"%s\" refused: %s", text, err);
	if (v != want)
		fail_msg("\"%s\" gave %llu instead of %llu", text,
			 (unsigned long long)v, (unsigned long long)want);
}

static void assert_bad_rate(const char *opt, const char *text,
			    const char *want)
{
	uint64_t v = 12345;
	char err[256] = "";

	assert_int_equal(tt_sim_parse_rate(opt, text, &v, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, want);
	assert_int_equal(v, 12345);
}

#define NOT_RATE "is not a rate: give bytes/s with an optional K, M or G suffix, e.g. 1G, 1.5G, 800M, 500000"

static void test_rate(void **state)
{
	(void)state;
	assert_rate("1", 1);
	assert_rate("500000", 500000);
	assert_rate("1K", 1024);
	assert_rate("1k", 1024);
	assert_rate("800M", 800ULL << 20);
	assert_rate("800m", 800ULL << 20);
	assert_rate("1G", 1ULL << 30);
	assert_rate("1g", 1ULL << 30);
	assert_rate("1.5G", 3ULL << 29);
	assert_rate("0.5K", 512);
	assert_rate("2.25M", 9ULL << 18);
	assert_rate("007", 7);
	/* Decimals are rounded down to whole bytes/s. */
	assert_rate("1.9", 1);
	assert_rate("0.001K", 1);
	assert_rate("1.0000000000000000000000001G", 1ULL << 30);
	assert_rate("0.9999999999999999999999G", (1ULL << 30) - 1);
	/* The extremes. */
	assert_rate("18446744073709551615", UINT64_MAX);
	assert_rate("17179869183.999999999G", UINT64_MAX - 1);
	assert_rate("16777216G", 1ULL << 54);

	assert_bad_rate("--er", "0", "--er \"0\": a rate must be > 0");
	assert_bad_rate("--pr", "0.0G", "--pr \"0.0G\": a rate must be > 0");
	assert_bad_rate("--er", "0.5", "--er \"0.5\": a rate must be at least 1 byte/s");
	assert_bad_rate("--er", "0.0000000001G",
			"--er \"0.0000000001G\": a rate must be at least 1 byte/s");
	assert_bad_rate("--er", "", "--er \"\" " NOT_RATE);
	assert_bad_rate("--er", "G", "--er \"G\" " NOT_RATE);
	assert_bad_rate("--er", "1.", "--er \"1.\" " NOT_RATE);
	assert_bad_rate("--er", ".5G", "--er \".5G\" " NOT_RATE);
	assert_bad_rate("--er", "1.5.2", "--er \"1.5.2\" " NOT_RATE);
	assert_bad_rate("--er", "1T", "--er \"1T\" " NOT_RATE);
	assert_bad_rate("--er", "1GB", "--er \"1GB\" " NOT_RATE);
	assert_bad_rate("--er", "1 G", "--er \"1 G\" " NOT_RATE);
	assert_bad_rate("--er", " 1G", "--er \" 1G\" " NOT_RATE);
	assert_bad_rate("--er", "-1", "--er \"-1\" " NOT_RATE);
	assert_bad_rate("--er", "+1", "--er \"+1\" " NOT_RATE);
	assert_bad_rate("--er", "0x10", "--er \"0x10\" " NOT_RATE);
	assert_bad_rate("--er", "1e9", "--er \"1e9\" " NOT_RATE);
	assert_bad_rate("--er", "99999999999999999999x",
			"--er \"99999999999999999999x\" " NOT_RATE);
	assert_bad_rate("--pr", "18446744073709551616",
			"--pr \"18446744073709551616\": too large (at most 18446744073709551615 bytes/s)");
	assert_bad_rate("--pr", "17179869184G",
			"--pr \"17179869184G\": too large (at most 18446744073709551615 bytes/s)");
	assert_bad_rate("--pr", "99999999999999999999999.5K",
			"--pr \"99999999999999999999999.5K\": too large (at most 18446744073709551615 bytes/s)");
}

/* ---- options ----------------------------------------------------------- */

/*
 * tt_sim_parse_opts() on "simulate" followed by the arguments in @ap, up
 * to a NULL.
 */
static int vparse(struct tt_sim_opts *o, char *err, size_t len, va_list ap)
{
	char *argv[16] = { "simulate" };
	int argc = 1;

	while ((argv[argc] = va_arg(ap, char *)))
		assert_in_range(++argc, 2, 15);
	memset(o, 0, sizeof(*o));
	err[0] = '\0';
	return tt_sim_parse_opts(argc, argv, o, err, len);
}

static int parse(struct tt_sim_opts *o, char *err, size_t len, ...)
{
	va_list ap;
	int ret;

	va_start(ap, len);
	ret = vparse(o, err, len, ap);
	va_end(ap);
	return ret;
}

/* The arguments, up to a NULL, are refused with the message @want. */
static void assert_bad_opts(const char *want, ...)
{
	struct tt_sim_opts o;
	char err[256];
	va_list ap;
	int ret;

	va_start(ap, want);
	ret = vparse(&o, err, sizeof(err), ap);
	va_end(ap);
	assert_int_equal(ret, -EINVAL);
	assert_string_equal(err, want);
}

static void test_opts(void **state)
{
	struct tt_sim_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, sizeof(err), "t.csv", NULL), 0);
	assert_int_equal(o.er_bps, 1ULL << 30);
	assert_int_equal(o.pr_bps, 1ULL << 30);
	assert_int_equal(o.stay_ns, 1000000);
	assert_int_equal(o.page_size, 4096);
	assert_string_equal(o.trace, "t.csv");
	assert_false(o.json);
	assert_false(o.pretty);

	assert_int_equal(parse(&o, err, sizeof(err), "--er", "2G",
			       "--pr=1.5M", "--stay-time-us", "0", "-j",
			       "--page-size=65536", "-", "--stay-time-us=7",
			       NULL), 0);
	assert_int_equal(o.er_bps, 2ULL << 30);
	assert_int_equal(o.pr_bps, 3ULL << 19);
	assert_int_equal(o.stay_ns, 7000);
	assert_int_equal(o.page_size, 65536);
	assert_string_equal(o.trace, "-");
	assert_true(o.json);
	assert_false(o.pretty);

	assert_int_equal(parse(&o, err, sizeof(err), "--pretty", "--", "-j",
			       NULL), 0);
	assert_string_equal(o.trace, "-j");
	assert_true(o.json);
	assert_true(o.pretty);
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "x", NULL), 0);
	assert_true(o.pretty);
	assert_int_equal(parse(&o, err, sizeof(err), "--json", "x", NULL), 0);
	assert_true(o.json);
	assert_false(o.pretty);
	assert_int_equal(parse(&o, err, sizeof(err), "--stay-time-us",
			       "18446744073709551", "x", NULL), 0);
	assert_int_equal(o.stay_ns, 18446744073709551000ULL);
	assert_int_equal(parse(&o, err, sizeof(err), "--page-size", "1", "x",
			       NULL), 0);
	assert_int_equal(o.page_size, 1);

	assert_bad_opts("no trace file given", NULL);
	assert_bad_opts("no trace file given", "--er", "1G", NULL);
	assert_bad_opts("unexpected argument 'b' after the trace a", "a", "b",
			NULL);
	assert_bad_opts("unknown option '--rate'", "--rate", "x", NULL);
	assert_bad_opts("unknown option '--err=1'", "--err=1", "x", NULL);
	assert_bad_opts("unknown option '-x'", "-x", NULL);
	assert_bad_opts("--er needs a value", "x", "--er", NULL);
	assert_bad_opts("--er \"0\": a rate must be > 0", "--er", "0", "x",
			NULL);
	assert_bad_opts("--pr \"\" " NOT_RATE, "--pr=", "x", NULL);
	assert_bad_opts("--stay-time-us \"1.5\" is not a whole number of microseconds",
			"--stay-time-us", "1.5", "x", NULL);
	assert_bad_opts("--stay-time-us \"-1\" is not a whole number of microseconds",
			"--stay-time-us", "-1", "x", NULL);
	assert_bad_opts("--stay-time-us \"18446744073709552\": too large (at most 18446744073709551 us)",
			"--stay-time-us", "18446744073709552", "x", NULL);
	assert_bad_opts("--page-size \"4k\" is not a whole number of bytes",
			"--page-size", "4k", "x", NULL);
	assert_bad_opts("--page-size \"0\": a page size must be a power of two (e.g. 4096)",
			"--page-size", "0", "x", NULL);
	assert_bad_opts("--page-size \"1000\": a page size must be a power of two (e.g. 4096)",
			"--page-size=1000", "x", NULL);
	assert_bad_opts("--page-size \"99999999999999999999\": a page size must be a power of two (e.g. 4096)",
			"--page-size=99999999999999999999", "x", NULL);
}

/* ---- the trace reader -------------------------------------------------- */

/* Read @len bytes of @text as the trace "t.csv". */
static int read_trace(const char *text, size_t len, struct tt_sim_trace *t,
		      char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)text, len ? len : 1, "r");
	int ret;

	assert_non_null(f);
	if (!len)
		fgetc(f);	/* fmemopen() refuses size 0: skip the byte */
	err[0] = '\0';
	ret = tt_sim_trace_read(f, "t.csv", t, err, errlen);
	fclose(f);
	return ret;
}

static void test_trace_ok(void **state)
{
	static const char text[] =
		"# a comment before the header\n"
		"\n"
		"  layer , fwd_start_us,fwd_end_us\t,bwd_start_us,bwd_end_us,saved_bytes\x20\r\n"
		"  # an indented comment\n"
		"7, 0, 1.5, 2.25, 3.125, 4096\r\n"
		"\t\x20\n"
		"0,10,20,30,40,0\n"
		"4294967295,0,0,0,0,18446744073709551615\n"
		"3,1.500000,1.5,18446744073709551.615,18446744073709551.615,1";
	struct tt_sim_trace t;
	char err[512];

	(void)state;
	assert_int_equal(read_trace(text, strlen(text), &t, err, sizeof(err)),
			 0);
	assert_string_equal(err, "");
	assert_int_equal(t.n, 4);
	assert_int_equal(t.layers[0].layer, 7);
	assert_int_equal(t.layers[0].fwd_start_ns, 0);
	assert_int_equal(t.layers[0].fwd_end_ns, 1500);
	assert_int_equal(t.layers[0].bwd_start_ns, 2250);
	assert_int_equal(t.layers[0].bwd_end_ns, 3125);
	assert_int_equal(t.layers[0].saved_bytes, 4096);
	assert_int_equal(t.lines[0], 5);
	assert_int_equal(t.layers[1].layer, 0);
	assert_int_equal(t.layers[1].fwd_start_ns, 10000);
	assert_int_equal(t.layers[1].bwd_end_ns, 40000);
	assert_int_equal(t.layers[1].saved_bytes, 0);
	assert_int_equal(t.lines[1], 7);
	assert_int_equal(t.layers[2].layer, UINT32_MAX);
	assert_int_equal(t.layers[2].saved_bytes, UINT64_MAX);
	assert_int_equal(t.layers[3].layer, 3);
	assert_int_equal(t.layers[3].fwd_start_ns, 1500);
	assert_int_equal(t.layers[3].bwd_end_ns, UINT64_MAX);
	assert_int_equal(t.lines[3], 9);
	/* The policy's outputs start at zero. */
	assert_int_equal(t.layers[0].evict_bytes, 0);
	assert_int_equal(t.layers[0].final_bytes, 0);
	assert_int_equal(t.layers[0].lead_ns, 0);
	tt_sim_trace_free(&t);
	assert_null(t.layers);
	assert_int_equal(t.n, 0);
}

/* Many layers: the duplicate table grows and still finds a late repeat. */
static void test_trace_many(void **state)
{
	struct tt_sim_trace t;
	char *text, err[512];
	size_t len = 0, cap = 64 * 5002;
	unsigned int i;

	(void)state;
	text = malloc(cap);
	assert_non_null(text);
	len += snprintf(text + len, cap - len, HEADER);
	for (i = 0; i < 5000; i++)
		len += snprintf(text + len, cap - len, "%u,0,1,2,3,4096\n",
				i * 7919);
	assert_int_equal(read_trace(text, len, &t, err, sizeof(err)), 0);
	assert_int_equal(t.n, 5000);
	assert_int_equal(t.layers[4999].layer, 4999 * 7919);
	assert_int_equal(t.lines[4999], 5001);
	tt_sim_trace_free(&t);

	len += snprintf(text + len, cap - len, "%u,0,1,2,3,4096\n",
			1234 * 7919);
	assert_int_equal(read_trace(text, len, &t, err, sizeof(err)), -EINVAL);
	assert_string_equal(err,
			    "t.csv:5002: layer 9772046 appears twice (first on line 1236)");
	tt_sim_trace_free(&t);
	free(text);
}

/**
 * struct bad_trace - a trace and the message reading it must give
 * @text: the trace.
 * @err:  the message.
 */
struct bad_trace {
	const char *text;
	const char *err;
};

static const struct bad_trace bad_traces[] = {
	/* Empty traces. */
	{ "", "t.csv: empty trace: no header line (expected layer,fwd_start_us,fwd_end_us,bwd_start_us,bwd_end_us,saved_bytes)" },
	{ "# only\n\n\x20\x20\n", "t.csv: empty trace: no header line (expected layer,fwd_start_us,fwd_end_us,bwd_start_us,bwd_end_us,saved_bytes)" },
	{ HEADER, "t.csv: empty trace: no layer after the header on line 1" },
	{ "#\n" HEADER "\n# x\n", "t.csv: empty trace: no layer after the header on line 2" },
	/* Headers. */
	{ "layer,fwd_start,fwd_end_us,bwd_start_us,bwd_end_us,saved_bytes\n",
	  "t.csv:1: bad header: column 2 is \"fwd_start\" where \"fwd_start_us\" was expected" HINT },
	{ "Layer,fwd_start_us,fwd_end_us,bwd_start_us,bwd_end_us,saved_bytes\n",
	  "t.csv:1: bad header: column 1 is \"Layer\" where \"layer\" was expected" HINT },
	{ "layer,fwd_start_us,bwd_start_us,fwd_end_us,bwd_end_us,saved_bytes\n",
	  "t.csv:1: bad header: column 3 is \"bwd_start_us\" where \"fwd_end_us\" was expected" HINT },
	{ "0,0,1,2,3,4\n",
	  "t.csv:1: bad header: column 1 is \"0\" where \"layer\" was expected" HINT },
	{ "\n\"layer\",fwd_start_us,fwd_end_us,bwd_start_us,bwd_end_us,saved_bytes\n",
	  "t.csv:2: bad header: column 1 is \"\"layer\"\" where \"layer\" was expected" HINT },
	{ "layer,fwd_start_us,fwd_end_us,bwd_start_us,bwd_end_us\n",
	  "t.csv:1: bad header: 5 columns instead of 6: saved_bytes is missing" HINT },
	{ "layer\n",
	  "t.csv:1: bad header: 1 column instead of 6: fwd_start_us, fwd_end_us, bwd_start_us, bwd_end_us and saved_bytes are missing" HINT },
	{ "layer,fwd_start_us,fwd_end_us,bwd_start_us,bwd_end_us,saved_bytes,extra\n",
	  "t.csv:1: bad header: 7 columns instead of 6: unexpected \"extra\" after saved_bytes" HINT },
	{ "layer;fwd_start_us;fwd_end_us;bwd_start_us;bwd_end_us;saved_bytes\n",
	  "t.csv:1: bad header: column 1 is \"layer;fwd_start_us;fwd_end_us;bwd_start_us;bwd_end_us;saved_bytes\" where \"layer\" was expected" HINT },
	/* Columns. */
	{ HEADER "1,0,1,2\n",
	  "t.csv:2: 4 columns instead of 6: bwd_end_us and saved_bytes are missing" },
	{ HEADER "1,0,1,2,3\n",
	  "t.csv:2: 5 columns instead of 6: saved_bytes is missing" },
	{ HEADER "1\n",
	  "t.csv:2: 1 column instead of 6: fwd_start_us, fwd_end_us, bwd_start_us, bwd_end_us and saved_bytes are missing" },
	{ HEADER "1,0,1,2,3,4,5\n",
	  "t.csv:2: 7 columns instead of 6: unexpected \"5\" after saved_bytes" },
	{ HEADER "1,0,1,2,3,4,\n",
	  "t.csv:2: 7 columns instead of 6: unexpected \"\" after saved_bytes" },
	{ HEADER "1,0,1,2,3,4,x,y,z\n",
	  "t.csv:2: 9 columns instead of 6: unexpected \"x\" after saved_bytes" },
	/* Layer ids. */
	{ HEADER "x,0,1,2,3,4\n", "t.csv:2: layer \"x\" is not a number" },
	{ HEADER ",0,1,2,3,4\n", "t.csv:2: layer \"\" is not a number" },
	{ HEADER "-1,0,1,2,3,4\n", "t.csv:2: layer \"-1\" is not a number" },
	{ HEADER "1.0,0,1,2,3,4\n", "t.csv:2: layer \"1.0\" is not a number" },
	{ HEADER "4294967296,0,1,2,3,4\n",
	  "t.csv:2: layer \"4294967296\" is out of range (at most 4294967295)" },
	{ HEADER "99999999999999999999999,0,1,2,3,4\n",
	  "t.csv:2: layer \"99999999999999999999999\" is out of range (at most 4294967295)" },
	/* Times. */
	{ HEADER "1,,1,2,3,4\n", "t.csv:2: fwd_start_us \"\" is not a number" },
	{ HEADER "1,0,1,12x,30,4\n",
	  "t.csv:2: bwd_start_us \"12x\" is not a number" },
	{ HEADER "1,0,1.,2,3,4\n", "t.csv:2: fwd_end_us \"1.\" is not a number" },
	{ HEADER "1,0,.5,2,3,4\n", "t.csv:2: fwd_end_us \".5\" is not a number" },
	{ HEADER "1,0,1,2,3e3,4\n", "t.csv:2: bwd_end_us \"3e3\" is not a number" },
	{ HEADER "1,-0,1,2,3,4\n", "t.csv:2: fwd_start_us \"-0\" is not a number" },
	{ HEADER "1,0,1 000,2000,3000,4\n",
	  "t.csv:2: fwd_end_us \"1 000\" is not a number" },
	{ HEADER "1,0,1.0001,2,3,4\n",
	  "t.csv:2: fwd_end_us \"1.0001\" has a fraction of a nanosecond (at most 3 decimals)" },
	{ HEADER "1,0,18446744073709552,18446744073709552,18446744073709552,4\n",
	  "t.csv:2: fwd_end_us \"18446744073709552\" is too large (at most 18446744073709551 us)" },
	{ HEADER "1,0,1,2,18446744073709551.616,4\n",
	  "t.csv:2: bwd_end_us \"18446744073709551.616\" is too large (at most 18446744073709551 us)" },
	{ HEADER "1,0,1,2,99999999999999999999999x,4\n",
	  "t.csv:2: bwd_end_us \"99999999999999999999999x\" is not a number" },
	/* Saved bytes. */
	{ HEADER "1,0,1,2,3,4k\n", "t.csv:2: saved_bytes \"4k\" is not a number" },
	{ HEADER "1,0,1,2,3,1 2\n", "t.csv:2: saved_bytes \"1 2\" is not a number" },
	{ HEADER "1,0,1,2,3,\n", "t.csv:2: saved_bytes \"\" is not a number" },
	{ HEADER "1,0,1,2,3,18446744073709551616\n",
	  "t.csv:2: saved_bytes \"18446744073709551616\" is too large (at most 18446744073709551615)" },
	/* Times out of order. */
	{ HEADER "3,150,120,200,300,4\n",
	  "t.csv:2: layer 3: fwd_start_us 150 is after fwd_end_us 120" },
	{ HEADER "3,0,120,100,300,4\n",
	  "t.csv:2: layer 3: fwd_end_us 120 is after bwd_start_us 100" },
	{ HEADER "3,0,1,200.5,200.25,4\n",
	  "t.csv:2: layer 3: bwd_start_us 200.5 is after bwd_end_us 200.25" },
	{ HEADER "1,0,1,2,3,4\n3,0.001,0,0,0,4\n",
	  "t.csv:3: layer 3: fwd_start_us 0.001 is after fwd_end_us 0" },
	/* Duplicates, reported on the second line. */
	{ HEADER "1,0,1,2,3,4\n2,0,1,2,3,4\n#\n01,0,1,2,3,4\n",
	  "t.csv:5: layer 1 appears twice (first on line 2)" },
	/* The first error in the file wins. */
	{ HEADER "1,0,1,2,3,4\n1,0,1,2,3,4\n2,x,1,2,3,4\n",
	  "t.csv:3: layer 1 appears twice (first on line 2)" },
	{ HEADER "1,0,1,2,3\n1,x,1,2,3,4\n",
	  "t.csv:2: 5 columns instead of 6: saved_bytes is missing" },
};

static void test_trace_errors(void **state)
{
	struct tt_sim_trace t;
	char err[512];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad_traces); i++) {
		const struct bad_trace *b = &bad_traces[i];
		int ret;

		ret = read_trace(b->text, strlen(b->text), &t, err,
				 sizeof(err));
		if (ret != -EINVAL || strcmp(err, b->err))
			fail_msg("case %zu: got %d \"%s\", expected \"%s\"", i,
				 ret, err, b->err);
		tt_sim_trace_free(&t);
	}

	/* A NUL byte inside a line. */
	{
		static const char text[] = HEADER "1,0,1\0,2,3,4\n";

		assert_int_equal(read_trace(text, sizeof(text) - 1, &t, err,
					    sizeof(err)), -EINVAL);
		assert_string_equal(err, "t.csv:2: the line holds a NUL byte");
		tt_sim_trace_free(&t);
	}

	/* A message cut short by a small buffer is still terminated. */
	assert_int_equal(read_trace(HEADER "1,0,1,12x,30,4\n", strlen(HEADER) + 15,
				    &t, err, 12), -EINVAL);
	assert_string_equal(err, "t.csv:2: bw");
	tt_sim_trace_free(&t);
}

/* ---- the worked example ------------------------------------------------ */

/*
 * ER = PR = 4096000 bytes/s, so one 4096-byte page moves in 1000 us each
 * way, and eviction plus prefetch together move one page per 2000 us
 * (1/MR = ER*PR/(ER+PR) = 2048000 bytes/s). Stay time ST = 1000 us.
 *
 *   layer fwd_start fwd_end bwd_start bwd_end  saved      IT = bwd_start - fwd_end
 *   0          0      500    21000    22000   4096 (1p)  20500
 *   1        500     1000    17000    21000  16384 (4p)  16000
 *   2       1000     2000    15000    17000  32768 (8p)  13000
 *   3       2000     3000     3500    15000  32768 (8p)    500
 *
 * Eviction (eq. 6/7): accepted when IT >= pages*2000 + 1000.
 *   0: 20500 >= 3000       -> szE = 4096
 *   1: 16000 >= 9000       -> szE = 16384
 *   2: 13000 <  17000      -> szE = (13000 - 1000) us * 2048000 B/s = 24576
 *   3:   500 <= ST         -> szE = 0
 * Prefetch (eq. 8-10), in increasing bwd_start, t_busy = 0:
 *   3 (3500):  szE 0                    -> dropped
 *   2 (15000): 24576 B take 6000 us, 15000 - 6000 = 9000 >= t_busy 0
 *              -> szP = 24576 (modified: < 32768), prefetch at 9000,
 *                 t_busy = 15000
 *   1 (17000): 16384 B take 4000 us, 17000 - 4000 = 13000 < 15000
 *              -> szP = (17000 - 15000) us * 4096000 B/s = 8192
 *                 (modified), prefetch at 17000 - 2000 = 15000,
 *                 t_busy = 17000
 *   0 (21000): 4096 B take 1000 us, 20000 >= 17000 -> szP = 4096
 *              (accepted), prefetch at 20000
 * Totals: 1 accepted, 2 modified, 1 dropped, 4096 + 8192 + 24576 = 36864
 * bytes migrated.
 *
 * Footprint over [0, 22000 us] (the latest bwd_end). Without tiering each
 * layer holds its saved bytes from fwd_end to bwd_end:
 *   area = 4096*21500 + 16384*20000 + 32768*15000 + 32768*12000
 *        = 1300480000 B*us -> average 1300480000 / 22000 = 59112 (rounded
 *          down); peak 4096+16384+32768+32768 = 86016 in [3000, 15000].
 * Oracle: saved bytes only from bwd_start to bwd_end:
 *   area = 4096*1000 + 16384*4000 + 32768*2000 + 32768*11500
 *        = 512000000 -> average 23272; peak 32768 (the intervals are
 *          disjoint, the largest holds 32768).
 * With tiering, each evicted part leaves at ER from fwd_end and returns at
 * PR from the prefetch start (trapezoids):
 *   0: 4096 B out over [500, 1500], back over [20000, 21000]:
 *      area 4096*(1000+1000)/2 + 4096*(20000-1500) = 79872000
 *   1: 8192 B out over [1000, 3000], back over [15000, 17000]:
 *      area 8192*(2000+2000)/2 + 8192*(15000-3000) = 114688000
 *   2: 24576 B out over [2000, 8000], back over [9000, 15000]:
 *      area 24576*(6000+6000)/2 + 24576*(9000-8000) = 172032000
 *   area = 1300480000 - 366592000 = 933888000 -> average 42449.
 *   Peak: just before 15000, layer 3 (32768) is still there, layer 2 is
 *   all back (32768), layer 1 is still half out (16384 - 8192), layer 0
 *   is out (0): 73728, the maximum (at 3000 it is 0 + 8192 + 28672 +
 *   32768 = 69632).
 */
static const char worked_trace[] =
	"layer,fwd_start_us,fwd_end_us,bwd_start_us,bwd_end_us,saved_bytes\n"
	"0,0,500,21000,22000,4096\n"
	"1,500,1000,17000,21000,16384\n"
	"2,1000,2000,15000,17000,32768\n"
	"3,2000,3000,3500,15000,32768\n";

/* The JSON output, one line, in pieces. */
static const char *const worked_json_parts[] = {
	"{\"layers\":[",
	"{\"layer\":0,\"status\":\"accepted\",\"evict_bytes\":4096,\"prefetch_start_us\":20000,",
	"\"saved_bytes\":4096,\"allowed_bytes\":4096,\"fwd_end_us\":500,\"bwd_start_us\":21000,\"idle_us\":20500},",
	"{\"layer\":1,\"status\":\"modified\",\"evict_bytes\":8192,\"prefetch_start_us\":15000,",
	"\"saved_bytes\":16384,\"allowed_bytes\":16384,\"fwd_end_us\":1000,\"bwd_start_us\":17000,\"idle_us\":16000},",
	"{\"layer\":2,\"status\":\"modified\",\"evict_bytes\":24576,\"prefetch_start_us\":9000,",
	"\"saved_bytes\":32768,\"allowed_bytes\":24576,\"fwd_end_us\":2000,\"bwd_start_us\":15000,\"idle_us\":13000},",
	"{\"layer\":3,\"status\":\"dropped\",\"evict_bytes\":0,\"prefetch_start_us\":null,",
	"\"saved_bytes\":32768,\"allowed_bytes\":0,\"fwd_end_us\":3000,\"bwd_start_us\":3500,\"idle_us\":500}],",
	"\"accepted\":1,\"modified\":2,\"dropped\":1,\"migrated_bytes\":36864,",
	"\"footprint\":{\"avg_bytes\":42449,\"peak_bytes\":73728,",
	"\"base_avg_bytes\":59112,\"base_peak_bytes\":86016,",
	"\"oracle_avg_bytes\":23272,\"oracle_peak_bytes\":32768}}\n",
};

static char worked_json[2048];

static int setup_worked_json(void **state)
{
	size_t i;

	(void)state;
	worked_json[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(worked_json_parts); i++)
		strcat(worked_json, worked_json_parts[i]);
	return 0;
}

static const char worked_text[] =
	"4 layers; eviction rate 3.9 MiB/s (4096000 bytes/s), prefetch rate 3.9 MiB/s (4096000 bytes/s),\n"
	"stay time 1000 us, page size 4096 bytes, prefetch plan eq. 8-10\n"
	"\n"
	"     layer  status         saved  evicted (szE)  migrated (szP)  prefetch start (us)  idle time (us)\n"
	"         0  accepted     4.0 KiB        4.0 KiB         4.0 KiB                20000           20500\n"
	"         1  modified    16.0 KiB       16.0 KiB         8.0 KiB                15000           16000\n"
	"         2  modified    32.0 KiB       24.0 KiB        24.0 KiB                 9000           13000\n"
	"         3  dropped     32.0 KiB            0 B             0 B                    -             500\n"
	"\n"
	"accepted 1, modified 2, dropped 1; migrated 36.0 KiB (36864 bytes), each evicted and prefetched once\n"
	"\n"
	"predicted fast-tier footprint of saved tensors (iteration of 22000 us):\n"
	"                    average                 peak\n"
	"without tiering    57.7 KiB             84.0 KiB\n"
	"with tiering       41.5 KiB (-28.2%)    72.0 KiB (-14.3%)\n"
	"oracle             22.7 KiB (-60.6%)    32.0 KiB (-61.9%)\n";

static void test_worked_example(void **state)
{
	struct tt_sim_opts o = {
		.er_bps = 4096000, .pr_bps = 4096000, .stay_ns = 1000000,
		.page_size = 4096, .json = true,
	};
	const struct tt_policy_layer *l;
	struct tt_sim_result r;
	struct tt_sim_trace t;
	struct capture c;
	char err[512];

	(void)state;
	assert_int_equal(read_trace(worked_trace, strlen(worked_trace), &t,
				    err, sizeof(err)), 0);
	assert_int_equal(tt_sim_run(&o, &t, &r), 0);
	l = t.layers;
	assert_int_equal(l[0].status, TT_POLICY_ACCEPTED);
	assert_int_equal(l[0].evict_bytes, 4096);
	assert_int_equal(l[0].final_bytes, 4096);
	assert_int_equal(l[0].prefetch_ns, 20000000);
	assert_int_equal(l[1].status, TT_POLICY_MODIFIED);
	assert_int_equal(l[1].evict_bytes, 16384);
	assert_int_equal(l[1].final_bytes, 8192);
	assert_int_equal(l[1].prefetch_ns, 15000000);
	assert_int_equal(l[2].status, TT_POLICY_MODIFIED);
	assert_int_equal(l[2].evict_bytes, 24576);
	assert_int_equal(l[2].final_bytes, 24576);
	assert_int_equal(l[2].prefetch_ns, 9000000);
	assert_int_equal(l[3].status, TT_POLICY_DROPPED);
	assert_int_equal(l[3].evict_bytes, 0);
	assert_int_equal(l[3].final_bytes, 0);
	assert_int_equal(r.sum.accepted, 1);
	assert_int_equal(r.sum.modified, 2);
	assert_int_equal(r.sum.dropped, 1);
	assert_int_equal(r.sum.migrated_bytes, 36864);
	assert_int_equal(r.footprint.end_ns, 22000000);
	assert_int_equal(r.footprint.base_avg_bytes, 59112);
	assert_int_equal(r.footprint.base_peak_bytes, 86016);
	assert_int_equal(r.footprint.oracle_avg_bytes, 23272);
	assert_int_equal(r.footprint.oracle_peak_bytes, 32768);
	assert_int_equal(r.footprint.avg_bytes, 42449);
	assert_int_equal(r.footprint.peak_bytes, 73728);

	capture_open(&c);
	assert_int_equal(tt_sim_print(&o, &t, &r, c.f), 0);
	assert_string_equal(capture_text(&c), worked_json);
	capture_close(&c);

	o.json = false;
	capture_open(&c);
	assert_int_equal(tt_sim_print(&o, &t, &r, c.f), 0);
	assert_string_equal(capture_text(&c), worked_text);
	capture_close(&c);
	tt_sim_trace_free(&t);
}

/* A trace where nothing is saved: no footprint to cut, no division by 0. */
static void test_nothing_saved(void **state)
{
	static const char text[] = HEADER "5,0,0,0,0,0\n6,0,10,20,30,0\n";
	struct tt_sim_opts o = {
		.er_bps = 1, .pr_bps = 1, .stay_ns = 0, .page_size = 4096,
	};
	struct tt_sim_result r;
	struct tt_sim_trace t;
	struct capture c;
	char err[512];

	(void)state;
	assert_int_equal(read_trace(text, strlen(text), &t, err, sizeof(err)),
			 0);
	assert_int_equal(tt_sim_run(&o, &t, &r), 0);
	assert_int_equal(r.sum.dropped, 2);
	assert_int_equal(r.sum.migrated_bytes, 0);
	assert_int_equal(r.footprint.base_peak_bytes, 0);
	capture_open(&c);
	assert_int_equal(tt_sim_print(&o, &t, &r, c.f), 0);
	assert_non_null(strstr(capture_text(&c),
			       "\nwith tiering            0 B                  0 B\n"));
	capture_close(&c);
	tt_sim_trace_free(&t);
}

/* ---- the verb ---------------------------------------------------------- */

static void test_verb(void **state)
{
	char path[] = "/tmp/tt-sim-XXXXXX", msg[256];
	struct capture out, err;
	FILE *f;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(worked_trace, f);
	fclose(f);

	assert_int_equal(run_ctl(&out, &err, 8, "tierctl", "-j", "simulate",
			     "--er", "4096000", "--pr=4096000", "--", path), 0);
	assert_string_equal(capture_text(&out), worked_json);
	assert_string_equal(capture_text(&err), "");
	capture_close(&out);
	capture_close(&err);

	assert_int_equal(run_ctl(&out, &err, 6, "tierctl", "simulate", path,
			     "--er", "4096000", "--pr=4096000"), 0);
	assert_string_equal(capture_text(&out), worked_text);
	capture_close(&out);
	capture_close(&err);

	/* Errors: exit 1, a message naming the bad value, nothing printed. */
	assert_int_equal(run_ctl(&out, &err, 5, "tierctl", "simulate", "--er", "0",
			     path), 1);
	assert_string_equal(capture_text(&err),
			    "tierctl simulate: --er \"0\": a rate must be > 0; try 'tierctl simulate --help'\n");
	assert_string_equal(capture_text(&out), "");
	capture_close(&out);
	capture_close(&err);

	assert_int_equal(run_ctl(&out, &err, 3, "tierctl", "simulate",
			     "/nonexistent/trace.csv"), 1);
	assert_string_equal(capture_text(&err),
			    "tierctl: cannot open the trace /nonexistent/trace.csv: No such file or directory\n");
	capture_close(&out);
	capture_close(&err);

	f = fopen(path, "w");
	assert_non_null(f);
	fputs(HEADER "7,0,10,12x,30,4096\n", f);
	fclose(f);
	assert_int_equal(run_ctl(&out, &err, 3, "tierctl", "simulate", path), 1);
	snprintf(msg, sizeof(msg),
		 "tierctl: %s:2: bwd_start_us \"12x\" is not a number\n", path);
	assert_string_equal(capture_text(&err), msg);
	assert_string_equal(capture_text(&out), "");
	capture_close(&out);
	capture_close(&err);

	assert_int_equal(run_ctl(&out, &err, 3, "tierctl", "simulate", "--help"),
			 0);
	assert_string_equal(capture_text(&out), tt_simulate_usage);
	capture_close(&out);
	capture_close(&err);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_opts),
		cmocka_unit_test(test_trace_ok),
		cmocka_unit_test(test_trace_many),
		cmocka_unit_test(test_trace_errors),
		cmocka_unit_test(test_worked_example),
		cmocka_unit_test(test_nothing_saved),
		cmocka_unit_test(test_verb),
	};

	return cmocka_run_group_tests(tests, setup_worked_json, NULL);
}
