// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierctl simulate: replay a training iteration's per-layer trace through
 * the scheduler's policy, the very code the module runs (core/policy.c is
 * compiled into tierctl), and show what it would evict, when it would
 * prefetch, and what that does to the fast tier's footprint.
 *
 * The trace is CSV: a header naming the columns of enum tt_sim_col in
 * order, then one row per layer. Blank lines and lines whose first
 * non-blank character is '#' are skipped anywhere; spaces and tabs around
 * fields are ignored; a line may end in CRLF. Every error names the file,
 * the line, the column and the text at fault.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "simulate.h"

#define TT_NS_PER_US		((uint64_t)1000)
#define TT_SIM_DEF_RATE		(1024ULL * 1024 * 1024)
#define TT_SIM_DEF_STAY_US	1000ULL
#define TT_SIM_DEF_PAGE_SIZE	4096ULL

const char tt_simulate_usage[] =
	"Usage: tierctl simulate [OPTIONS] TRACE.csv\n"
	"\n"
	"Replay one training iteration through the scheduler's policy (the\n"
	"module's own code: TierTrain's queueing system) and show, per layer,\n"
	"how much of its saved tensors would be evicted to the slow tier and\n"
	"when their prefetch would start, then the predicted fast-tier\n"
	"footprint of saved tensors with and without tiering. Nothing is\n"
	"moved and the module is not needed.\n"
	"\n"
	"TRACE.csv ('-' for standard input) has a header line, exactly\n"
	"  layer,fwd_start_us,fwd_end_us,bwd_start_us,bwd_end_us,saved_bytes\n"
	"then one line per layer: its id (0..4294967295, each once), its\n"
	"forward and backward begin and end in microseconds from the start of\n"
	"the iteration (up to 3 decimals; fwd_start <= fwd_end <= bwd_start <=\n"
	"bwd_end) and the bytes of tensors it saves for its backward pass.\n"
	"Blank lines and lines starting with # are skipped; spaces around\n"
	"fields are ignored.\n"
	"\n"
	"Options:\n"
	"  --er RATE            eviction rate (fast to slow), bytes/s (default 1G)\n"
	"  --pr RATE            prefetch rate (slow to fast), bytes/s (default 1G)\n"
	"  --stay-time-us N     minimum time evicted data stays slow (default 1000)\n"
	"  --page-size N        granularity of partial evictions, a power of two\n"
	"                       (default 4096)\n"
	"  --alap               plan the prefetch queue as late as possible\n"
	"                       (the scheduler's TT_SCHED_ALAP extension)\n"
	"                       instead of the paper's eq. 8-10\n"
	"  -j, --json           print JSON\n"
	"  -p, --pretty         indent the JSON (implies --json)\n"
	"RATE is a number of bytes/s with an optional K, M or G suffix (powers\n"
	"of 1024) and decimals: 1G, 1.5G, 800M, 500000.\n"
	"\n"
	"Per layer: status (accepted: evicted whole, modified: in part,\n"
	"dropped: kept on the fast tier), saved bytes, evicted (szE: what its\n"
	"idle time allows), migrated (szP: what is evicted and prefetched once\n"
	"the prefetch queue is taken into account), the prefetch start time and\n"
	"the idle time (bwd_start - fwd_end).\n";

const char *const tt_sim_col_names[TT_SIM_NR_COLS] = {
	[TT_SIM_LAYER] = "layer",
	[TT_SIM_FWD_START] = "fwd_start_us",
	[TT_SIM_FWD_END] = "fwd_end_us",
	[TT_SIM_BWD_START] = "bwd_start_us",
	[TT_SIM_BWD_END] = "bwd_end_us",
	[TT_SIM_SAVED] = "saved_bytes",
};

#define TT_SIM_HEADER \
	"layer,fwd_start_us,fwd_end_us,bwd_start_us,bwd_end_us,saved_bytes"

static bool tt_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * The decimal digits at *@p into @v, moving *@p past them. Returns their
 * number; *@big is set when the value does not fit 64 bits.
 */
static int tt_parse_digits(const char **p, uint64_t *v, bool *big)
{
	const char *s = *p;
	uint64_t x = 0;
	int n = 0;

	*big = false;
	for (; tt_is_digit(*s); s++, n++) {
		unsigned int d = *s - '0';

		if (x > (UINT64_MAX - d) / 10)
			*big = true;
		else
			x = x * 10 + d;
	}
	*p = s;
	*v = x;
	return n;
}

/* A whole number: digits only. 0, -EINVAL or -ERANGE. */
static int tt_parse_u64(const char *text, uint64_t *v)
{
	const char *p = text;
	bool big;

	if (!tt_parse_digits(&p, v, &big) || *p)
		return -EINVAL;
	return big ? -ERANGE : 0;
}

/*
 * Microseconds with up to 3 decimals (more are allowed when they are 0)
 * into ns. 0, -EINVAL (not a number), -EDOM (a fraction of a nanosecond)
 * or -ERANGE.
 */
static int tt_parse_us(const char *text, uint64_t *ns)
{
	bool big, sub_ns = false;
	const char *p = text;
	uint64_t us, frac = 0;
	int i;

	if (!tt_parse_digits(&p, &us, &big))
		return -EINVAL;
	if (*p == '.') {
		p++;
		if (!tt_is_digit(*p))
			return -EINVAL;
		for (i = 0; tt_is_digit(*p); p++, i++) {
			if (i < 3)
				frac = frac * 10 + (*p - '0');
			else if (*p != '0')
				sub_ns = true;
		}
		for (; i < 3; i++)
			frac *= 10;
	}
	if (*p)
		return -EINVAL;
	if (big || us > (UINT64_MAX - frac) / TT_NS_PER_US)
		return -ERANGE;
	if (sub_ns)
		return -EDOM;
	*ns = us * TT_NS_PER_US + frac;
	return 0;
}

/* @ns as microseconds: "12", "12.5", "12.345". */
static void tt_fmt_us(uint64_t ns, char *buf, size_t len)
{
	uint64_t frac = ns % TT_NS_PER_US;
	int digits = 3;

	if (!frac) {
		snprintf(buf, len, "%" PRIu64, ns / TT_NS_PER_US);
		return;
	}
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64, ns / TT_NS_PER_US, digits,
		 frac);
}

/**
 * tt_sim_parse_rate() - parse a RATE: bytes/s, optional decimals and
 * K/M/G suffix (powers of 1024), rounded down to whole bytes/s.
 * @opt:  the option, for the message ("--er").
 * @text: what the user gave.
 * @bps:  out: the rate.
 * @err:  out: the message on failure, naming @opt and @text.
 * @len:  size of @err.
 *
 * Return: 0 or -EINVAL.
 */
int tt_sim_parse_rate(const char *opt, const char *text, uint64_t *bps,
		      char *err, size_t len)
{
	unsigned __int128 v, frac = 0, scale = 1, mult = 1;
	const char *p = text;
	uint64_t whole;
	bool big;
	int n;

	if (!tt_parse_digits(&p, &whole, &big))
		goto not_rate;
	if (*p == '.') {
		p++;
		if (!tt_is_digit(*p))
			goto not_rate;
		/* 19 decimals are finer than a byte/s at any suffix. */
		for (n = 0; tt_is_digit(*p); p++, n++) {
			if (n < 19) {
				frac = frac * 10 + (*p - '0');
				scale *= 10;
			}
		}
	}
	switch (*p) {
	case 'K':
	case 'k':
		mult = 1ULL << 10;
		p++;
		break;
	case 'M':
	case 'm':
		mult = 1ULL << 20;
		p++;
		break;
	case 'G':
	case 'g':
		mult = 1ULL << 30;
		p++;
		break;
	}
	if (*p)
		goto not_rate;
	v = (unsigned __int128)whole * mult + frac * mult / scale;
	if (big || v > UINT64_MAX)
		goto too_large;
	if (!v) {
		if (!whole && !frac)
			snprintf(err, len, "%s \"%s\": a rate must be > 0", opt,
				 text);
		else
			snprintf(err, len, "%s \"%s\": a rate must be at least 1 byte/s",
				 opt, text);
		return -EINVAL;
	}
	*bps = (uint64_t)v;
	return 0;
not_rate:
	snprintf(err, len,
		 "%s \"%s\" is not a rate: give bytes/s with an optional K, M or G suffix, e.g. 1G, 1.5G, 800M, 500000",
		 opt, text);
	return -EINVAL;
too_large:
	snprintf(err, len, "%s \"%s\": too large (at most %" PRIu64 " bytes/s)",
		 opt, text, UINT64_MAX);
	return -EINVAL;
}

/* --stay-time-us N: whole microseconds, into ns. */
static int tt_sim_parse_stay(const char *opt, const char *text, uint64_t *ns,
			     char *err, size_t len)
{
	uint64_t us;
	int ret = tt_parse_u64(text, &us);

	if (ret == -EINVAL) {
		snprintf(err, len, "%s \"%s\" is not a whole number of microseconds",
			 opt, text);
		return -EINVAL;
	}
	if (ret < 0 || us > UINT64_MAX / TT_NS_PER_US) {
		snprintf(err, len, "%s \"%s\": too large (at most %" PRIu64 " us)",
			 opt, text, UINT64_MAX / TT_NS_PER_US);
		return -EINVAL;
	}
	*ns = us * TT_NS_PER_US;
	return 0;
}

/* --page-size N: a power of two. */
static int tt_sim_parse_page(const char *opt, const char *text, uint64_t *ps,
			     char *err, size_t len)
{
	uint64_t v;
	int ret = tt_parse_u64(text, &v);

	if (ret == -EINVAL) {
		snprintf(err, len, "%s \"%s\" is not a whole number of bytes",
			 opt, text);
		return -EINVAL;
	}
	if (ret < 0 || !v || (v & (v - 1))) {
		snprintf(err, len, "%s \"%s\": a page size must be a power of two (e.g. 4096)",
			 opt, text);
		return -EINVAL;
	}
	*ps = v;
	return 0;
}

/**
 * struct tt_sim_opt - a simulate option that takes a value
 * @name:  "--er".
 * @parse: checks and stores the value.
 * @off:   offset of the value in struct tt_sim_opts.
 */
struct tt_sim_opt {
	const char *name;
	int (*parse)(const char *opt, const char *text, uint64_t *v, char *err,
		     size_t len);
	size_t off;
};

static const struct tt_sim_opt tt_sim_value_opts[] = {
	{ "--er", tt_sim_parse_rate, offsetof(struct tt_sim_opts, er_bps) },
	{ "--pr", tt_sim_parse_rate, offsetof(struct tt_sim_opts, pr_bps) },
	{ "--stay-time-us", tt_sim_parse_stay,
	  offsetof(struct tt_sim_opts, stay_ns) },
	{ "--page-size", tt_sim_parse_page,
	  offsetof(struct tt_sim_opts, page_size) },
};

/*
 * The value option @arg names, alone ("--er") or with its value
 * ("--er=1G", *@value then points at "1G"); NULL if none.
 */
static const struct tt_sim_opt *tt_sim_find_opt(const char *arg,
						const char **value)
{
	size_t i, n;

	for (i = 0; i < TT_ARRAY_SIZE(tt_sim_value_opts); i++) {
		n = strlen(tt_sim_value_opts[i].name);
		if (strncmp(arg, tt_sim_value_opts[i].name, n))
			continue;
		if (!arg[n]) {
			*value = NULL;
			return &tt_sim_value_opts[i];
		}
		if (arg[n] == '=') {
			*value = arg + n + 1;
			return &tt_sim_value_opts[i];
		}
	}
	return NULL;
}

/**
 * tt_sim_parse_opts() - parse the arguments of tierctl simulate.
 * @argc: argument count; argv[0] is the verb.
 * @argv: the arguments.
 * @o:    in: the defaults for -j/-p (from the global options); out: the
 *        options, with the defaults for those not given.
 * @err:  out: the message on failure (naming the option and its value).
 * @len:  size of @err.
 *
 * Return: 0 or -EINVAL.
 */
int tt_sim_parse_opts(int argc, char **argv, struct tt_sim_opts *o,
		      char *err, size_t len)
{
	bool opts_done = false;
	int i;

	o->er_bps = TT_SIM_DEF_RATE;
	o->pr_bps = TT_SIM_DEF_RATE;
	o->stay_ns = TT_SIM_DEF_STAY_US * TT_NS_PER_US;
	o->page_size = TT_SIM_DEF_PAGE_SIZE;
	o->alap = false;
	o->trace = NULL;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *value;
		const struct tt_sim_opt *opt;

		if (opts_done || a[0] != '-' || !a[1]) {
			if (o->trace) {
				snprintf(err, len, "unexpected argument '%s' after the trace %s",
					 a, o->trace);
				return -EINVAL;
			}
			o->trace = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			opts_done = true;
			continue;
		}
		if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			o->json = true;
			continue;
		}
		if (!strcmp(a, "--alap")) {
			o->alap = true;
			continue;
		}
		if (!strcmp(a, "-p") || !strcmp(a, "--pretty")) {
			o->json = true;
			o->pretty = true;
			continue;
		}
		opt = tt_sim_find_opt(a, &value);
		if (!opt) {
			snprintf(err, len, "unknown option '%s'", a);
			return -EINVAL;
		}
		if (!value) {
			if (i + 1 >= argc) {
				snprintf(err, len, "%s needs a value", a);
				return -EINVAL;
			}
			value = argv[++i];
		}
		if (opt->parse(opt->name, value,
			       (uint64_t *)((char *)o + opt->off), err, len) < 0)
			return -EINVAL;
	}
	if (!o->trace) {
		snprintf(err, len, "no trace file given");
		return -EINVAL;
	}
	return 0;
}

/**
 * struct tt_sim_reader - state of one trace being read
 * @name:  the file's name for messages.
 * @line:  the current line number.
 * @err:   the message buffer.
 * @len:   its size (> 0).
 * @at:    where the message continues after its "NAME:LINE: " prefix.
 * @slots: open-addressing table of row indexes + 1 by layer id (0: empty),
 *         to find a layer id given twice.
 * @nslots: its size, a power of two above twice the rows.
 */
struct tt_sim_reader {
	const char *name;
	unsigned int line;
	char *err;
	size_t len;
	size_t at;
	unsigned int *slots;
	unsigned int nslots;
};

/* Write "NAME:LINE: " into r->err and set r->at past it. */
static void tt_sim_err_prefix(struct tt_sim_reader *r)
{
	int n = snprintf(r->err, r->len, "%s:%u: ", r->name, r->line);

	r->at = (n < 0 || (size_t)n >= r->len) ? r->len - 1 : (size_t)n;
}

/*
 * The message "NAME:LINE: ..." in r->err; evaluates to -EINVAL. A macro,
 * so that the compiler checks the format against its arguments.
 */
#define tt_sim_error(r, fmt, ...)					\
	(tt_sim_err_prefix(r),						\
	 snprintf((r)->err + (r)->at, (r)->len - (r)->at, fmt,		\
		  ##__VA_ARGS__),					\
	 -EINVAL)

static char *tt_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' ||
			 e[-1] == '\n'))
		e--;
	*e = '\0';
	return s;
}

/*
 * Split @line at commas into @f (at most TT_SIM_NR_COLS + 1 fields are
 * kept, trimmed). Returns the number of fields in the line.
 */
static unsigned int tt_sim_split(char *line, char **f)
{
	unsigned int n = 0;
	char *p = line, *comma;

	for (;;) {
		comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (n <= TT_SIM_NR_COLS)
			f[n] = tt_trim(p);
		n++;
		if (!comma)
			return n;
		p = comma + 1;
	}
}

/* "saved_bytes", "bwd_end_us and saved_bytes", "a, b and c". */
static void tt_sim_missing(unsigned int have, char *buf, size_t len)
{
	size_t used = 0;
	unsigned int c;

	buf[0] = '\0';
	for (c = have; c < TT_SIM_NR_COLS && used < len; c++) {
		const char *sep = c == have ? "" :
				  c + 1 == TT_SIM_NR_COLS ? " and " : ", ";

		used += snprintf(buf + used, len - used, "%s%s", sep,
				 tt_sim_col_names[c]);
	}
}

/*
 * Check that there are TT_SIM_NR_COLS fields; the message starts with
 * @what and ends with @hint (either may be "").
 */
static int tt_sim_check_cols(struct tt_sim_reader *r, unsigned int n,
			     char **f, const char *what, const char *hint)
{
	char missing[128];

	if (n < TT_SIM_NR_COLS) {
		tt_sim_missing(n, missing, sizeof(missing));
		return tt_sim_error(r, "%s%u column%s instead of %u: %s %s missing%s",
				    what, n, n == 1 ? "" : "s", TT_SIM_NR_COLS,
				    missing,
				    n + 1 == TT_SIM_NR_COLS ? "is" : "are",
				    hint);
	}
	if (n > TT_SIM_NR_COLS)
		return tt_sim_error(r, "%s%u columns instead of %u: unexpected \"%s\" after %s%s",
				    what, n, TT_SIM_NR_COLS,
				    f[TT_SIM_NR_COLS],
				    tt_sim_col_names[TT_SIM_NR_COLS - 1], hint);
	return 0;
}

#define TT_SIM_HEADER_HINT	" (the header must be " TT_SIM_HEADER ")"

static int tt_sim_header(struct tt_sim_reader *r, char *line)
{
	char *f[TT_SIM_NR_COLS + 1];
	unsigned int n, c;

	n = tt_sim_split(line, f);
	for (c = 0; c < n && c < TT_SIM_NR_COLS; c++)
		if (strcmp(f[c], tt_sim_col_names[c]))
			return tt_sim_error(r, "bad header: column %u is \"%s\" where \"%s\" was expected" TT_SIM_HEADER_HINT,
					    c + 1, f[c], tt_sim_col_names[c]);
	return tt_sim_check_cols(r, n, f, "bad header: ", TT_SIM_HEADER_HINT);
}

/* Find or add @layer (row @idx) in the duplicate table. */
static int tt_sim_seen(struct tt_sim_reader *r, struct tt_sim_trace *t,
		       uint32_t layer, unsigned int idx)
{
	unsigned int mask, i;

	if (2 * (idx + 1) > r->nslots) {
		unsigned int n = r->nslots ? 2 * r->nslots : 64, *s, k;

		s = calloc(n, sizeof(*s));
		if (!s)
			return tt_sim_error(r, "out of memory for %u layers",
					    idx + 1);
		for (k = 0; k < idx; k++) {
			i = (t->layers[k].layer * 2654435761U) & (n - 1);
			while (s[i])
				i = (i + 1) & (n - 1);
			s[i] = k + 1;
		}
		free(r->slots);
		r->slots = s;
		r->nslots = n;
	}
	mask = r->nslots - 1;
	for (i = (layer * 2654435761U) & mask; r->slots[i];
	     i = (i + 1) & mask) {
		unsigned int k = r->slots[i] - 1;

		if (t->layers[k].layer == layer)
			return tt_sim_error(r, "layer %u appears twice (first on line %u)",
					    layer, t->lines[k]);
	}
	r->slots[i] = idx + 1;
	return 0;
}

/* One field that holds microseconds. */
static int tt_sim_field_us(struct tt_sim_reader *r, const char *text,
			   enum tt_sim_col c, unsigned long long *ns)
{
	uint64_t v;

	switch (tt_parse_us(text, &v)) {
	case 0:
		*ns = v;
		return 0;
	case -ERANGE:
		return tt_sim_error(r, "%s \"%s\" is too large (at most %" PRIu64 " us)",
				    tt_sim_col_names[c], text,
				    UINT64_MAX / TT_NS_PER_US);
	case -EDOM:
		return tt_sim_error(r, "%s \"%s\" has a fraction of a nanosecond (at most 3 decimals)",
				    tt_sim_col_names[c], text);
	}
	return tt_sim_error(r, "%s \"%s\" is not a number", tt_sim_col_names[c],
			    text);
}

/* Check that time column @a <= column @b of row @l. */
static int tt_sim_order(struct tt_sim_reader *r,
			const struct tt_policy_layer *l, enum tt_sim_col a,
			unsigned long long ta, enum tt_sim_col b,
			unsigned long long tb)
{
	char sa[32], sb[32];

	if (ta <= tb)
		return 0;
	tt_fmt_us(ta, sa, sizeof(sa));
	tt_fmt_us(tb, sb, sizeof(sb));
	return tt_sim_error(r, "layer %u: %s %s is after %s %s", l->layer,
			    tt_sim_col_names[a], sa, tt_sim_col_names[b], sb);
}

static int tt_sim_row(struct tt_sim_reader *r, struct tt_sim_trace *t,
		      char *line)
{
	char *f[TT_SIM_NR_COLS + 1];
	struct tt_policy_layer l;
	unsigned int n;
	uint64_t v;
	int ret;

	n = tt_sim_split(line, f);
	ret = tt_sim_check_cols(r, n, f, "", "");
	if (ret < 0)
		return ret;
	memset(&l, 0, sizeof(l));
	ret = tt_parse_u64(f[TT_SIM_LAYER], &v);
	if (ret == -EINVAL)
		return tt_sim_error(r, "layer \"%s\" is not a number",
				    f[TT_SIM_LAYER]);
	if (ret < 0 || v > UINT32_MAX)
		return tt_sim_error(r, "layer \"%s\" is out of range (at most %u)",
				    f[TT_SIM_LAYER], UINT32_MAX);
	l.layer = v;
	if (tt_sim_field_us(r, f[TT_SIM_FWD_START], TT_SIM_FWD_START,
			    &l.fwd_start_ns) ||
	    tt_sim_field_us(r, f[TT_SIM_FWD_END], TT_SIM_FWD_END,
			    &l.fwd_end_ns) ||
	    tt_sim_field_us(r, f[TT_SIM_BWD_START], TT_SIM_BWD_START,
			    &l.bwd_start_ns) ||
	    tt_sim_field_us(r, f[TT_SIM_BWD_END], TT_SIM_BWD_END,
			    &l.bwd_end_ns))
		return -EINVAL;
	ret = tt_parse_u64(f[TT_SIM_SAVED], &v);
	if (ret == -EINVAL)
		return tt_sim_error(r, "saved_bytes \"%s\" is not a number",
				    f[TT_SIM_SAVED]);
	if (ret < 0)
		return tt_sim_error(r, "saved_bytes \"%s\" is too large (at most %" PRIu64 ")",
				    f[TT_SIM_SAVED], UINT64_MAX);
	l.saved_bytes = v;
	if (tt_sim_order(r, &l, TT_SIM_FWD_START, l.fwd_start_ns,
			 TT_SIM_FWD_END, l.fwd_end_ns) ||
	    tt_sim_order(r, &l, TT_SIM_FWD_END, l.fwd_end_ns,
			 TT_SIM_BWD_START, l.bwd_start_ns) ||
	    tt_sim_order(r, &l, TT_SIM_BWD_START, l.bwd_start_ns,
			 TT_SIM_BWD_END, l.bwd_end_ns))
		return -EINVAL;

	if (t->n == TT_SIM_MAX_LAYERS)
		return tt_sim_error(r, "too many layers (at most %u)",
				    TT_SIM_MAX_LAYERS);
	if (t->n == t->cap) {
		unsigned int cap = t->cap ? 2 * t->cap : 64;
		struct tt_policy_layer *nl;
		unsigned int *lines;

		nl = realloc(t->layers, cap * sizeof(*nl));
		if (nl)
			t->layers = nl;
		lines = realloc(t->lines, cap * sizeof(*lines));
		if (lines)
			t->lines = lines;
		if (!nl || !lines)
			return tt_sim_error(r, "out of memory for %u layers",
					    cap);
		t->cap = cap;
	}
	t->layers[t->n] = l;
	t->lines[t->n] = r->line;
	ret = tt_sim_seen(r, t, l.layer, t->n);
	if (ret < 0)
		return ret;
	t->n++;
	return 0;
}

/* Blank, or a comment. */
static bool tt_sim_skip(const char *line)
{
	line += strspn(line, " \t\r\n");
	return !*line || *line == '#';
}

/**
 * tt_sim_trace_read() - read a trace.
 * @f:    the stream.
 * @name: its name for messages ("trace.csv", "<stdin>").
 * @t:    out: the rows (zeroed here; tt_sim_trace_free() frees them, also
 *        after a failure).
 * @err:  out: on failure, "NAME:LINE: what is wrong" (or "NAME: ..." for
 *        a read error or an empty trace).
 * @len:  size of @err.
 *
 * Return: 0 or -EINVAL.
 */
int tt_sim_trace_read(FILE *f, const char *name, struct tt_sim_trace *t,
		      char *err, size_t len)
{
	struct tt_sim_reader r = { .name = name, .err = err, .len = len };
	unsigned int header_line = 0;
	size_t cap = 0;
	char *line = NULL;
	ssize_t n;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	errno = 0;
	while ((n = getline(&line, &cap, f)) >= 0) {
		r.line++;
		if ((size_t)n != strlen(line)) {
			ret = tt_sim_error(&r, "the line holds a NUL byte");
			break;
		}
		if (tt_sim_skip(line))
			continue;
		if (!header_line) {
			header_line = r.line;
			ret = tt_sim_header(&r, line);
		} else {
			ret = tt_sim_row(&r, t, line);
		}
		if (ret < 0)
			break;
	}
	if (!ret && ferror(f)) {
		snprintf(err, len, "%s: read error: %s", name,
			 strerror(errno ? errno : EIO));
		ret = -EINVAL;
	} else if (!ret && !header_line) {
		snprintf(err, len, "%s: empty trace: no header line (expected " TT_SIM_HEADER ")",
			 name);
		ret = -EINVAL;
	} else if (!ret && !t->n) {
		snprintf(err, len, "%s: empty trace: no layer after the header on line %u",
			 name, header_line);
		ret = -EINVAL;
	}
	free(line);
	free(r.slots);
	return ret;
}

void tt_sim_trace_free(struct tt_sim_trace *t)
{
	free(t->layers);
	free(t->lines);
	memset(t, 0, sizeof(*t));
}

static void tt_sim_params(const struct tt_sim_opts *o,
			  struct tt_policy_params *p)
{
	p->er_bps = o->er_bps;
	p->pr_bps = o->pr_bps;
	p->stay_ns = o->stay_ns;
	p->page_size = o->page_size;
	p->alap = o->alap;
}

/**
 * tt_sim_run() - plan the trace with tt_policy_plan() and predict its
 * footprint with tt_policy_footprint().
 * @o: the options (rates, stay time, page size).
 * @t: the trace; the policy's outputs are written into its layers.
 * @r: out: totals and footprint.
 *
 * Return: 0, -ENOMEM, or -EINVAL when the policy refuses the input (which
 * tt_sim_parse_opts() and tt_sim_trace_read() have ruled out).
 */
int tt_sim_run(const struct tt_sim_opts *o, struct tt_sim_trace *t,
	       struct tt_sim_result *r)
{
	struct tt_policy_params p;
	unsigned int *order;
	int ret;

	tt_sim_params(o, &p);
	order = calloc(t->n ? t->n : 1, sizeof(*order));
	if (!order)
		return -ENOMEM;
	ret = tt_policy_plan(&p, t->layers, t->n, order, &r->sum, NULL);
	free(order);
	if (ret < 0)
		return -EINVAL;
	tt_policy_footprint(&p, t->layers, t->n, &r->footprint);
	return 0;
}

/* "(-12.3%)": the reduction from @base to @v; "" when there is no base. */
static void tt_sim_fmt_cut(uint64_t base, uint64_t v, char *buf, size_t len)
{
	if (!base)
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, "(-%.1f%%)",
			 100.0 * ((double)base - (double)v) / (double)base);
}

/* One footprint line: average and peak, each with its reduction. */
static void tt_sim_print_fp_line(FILE *out, const char *what, uint64_t avg,
				 uint64_t base_avg, uint64_t peak,
				 uint64_t base_peak)
{
	char b1[32], b2[32], c1[32], c2[32], line[192];
	size_t n;

	tt_fmt_bytes(avg, b1, sizeof(b1));
	tt_fmt_bytes(peak, b2, sizeof(b2));
	tt_sim_fmt_cut(base_avg, avg, c1, sizeof(c1));
	tt_sim_fmt_cut(base_peak, peak, c2, sizeof(c2));
	snprintf(line, sizeof(line), "%-16s %10s %-9s %10s %s", what, b1, c1,
		 b2, c2);
	/* Without a base there is no reduction column: no trailing blanks. */
	n = strlen(line);
	while (n && line[n - 1] == ' ')
		line[--n] = '\0';
	fprintf(out, "%s\n", line);
}

static void tt_sim_print_text(const struct tt_sim_opts *o,
			      const struct tt_sim_trace *t,
			      const struct tt_sim_result *r, FILE *out)
{
	const struct tt_policy_footprint *fp = &r->footprint;
	char b1[32], b2[32], b3[32], b4[32], b5[32];
	unsigned int i;

	tt_fmt_bytes(o->er_bps, b1, sizeof(b1));
	tt_fmt_bytes(o->pr_bps, b2, sizeof(b2));
	tt_fmt_us(o->stay_ns, b3, sizeof(b3));
	fprintf(out,
		"%u layers; eviction rate %s/s (%" PRIu64 " bytes/s), prefetch rate %s/s (%" PRIu64 " bytes/s),\n"
		"stay time %s us, page size %" PRIu64 " bytes, prefetch plan %s\n\n",
		t->n, b1, o->er_bps, b2, o->pr_bps, b3, o->page_size,
		o->alap ? "as late as possible (--alap)" : "eq. 8-10");
	fprintf(out, "%10s  %-8s  %10s  %13s  %14s  %19s  %14s\n", "layer",
		"status", "saved", "evicted (szE)", "migrated (szP)",
		"prefetch start (us)", "idle time (us)");
	for (i = 0; i < t->n; i++) {
		const struct tt_policy_layer *l = &t->layers[i];

		tt_fmt_bytes(l->saved_bytes, b1, sizeof(b1));
		tt_fmt_bytes(l->evict_bytes, b2, sizeof(b2));
		tt_fmt_bytes(l->final_bytes, b3, sizeof(b3));
		if (l->status == TT_POLICY_DROPPED)
			snprintf(b4, sizeof(b4), "-");
		else
			tt_fmt_us(l->prefetch_ns, b4, sizeof(b4));
		tt_fmt_us(l->bwd_start_ns - l->fwd_end_ns, b5, sizeof(b5));
		fprintf(out, "%10u  %-8s  %10s  %13s  %14s  %19s  %14s\n",
			l->layer, tt_policy_status_name(l->status), b1, b2, b3,
			b4, b5);
	}
	tt_fmt_bytes(r->sum.migrated_bytes, b1, sizeof(b1));
	fprintf(out,
		"\naccepted %u, modified %u, dropped %u; migrated %s (%llu bytes), each evicted and prefetched once\n",
		r->sum.accepted, r->sum.modified, r->sum.dropped, b1,
		r->sum.migrated_bytes);

	tt_fmt_us(fp->end_ns, b1, sizeof(b1));
	fprintf(out,
		"\npredicted fast-tier footprint of saved tensors (iteration of %s us):\n",
		b1);
	fprintf(out, "%-16s %10s %9s %10s\n", "", "average", "", "peak");
	tt_fmt_bytes(fp->base_avg_bytes, b1, sizeof(b1));
	tt_fmt_bytes(fp->base_peak_bytes, b2, sizeof(b2));
	fprintf(out, "%-16s %10s %9s %10s\n", "without tiering", b1, "", b2);
	tt_sim_print_fp_line(out, "with tiering", fp->avg_bytes,
			     fp->base_avg_bytes, fp->peak_bytes,
			     fp->base_peak_bytes);
	tt_sim_print_fp_line(out, "oracle", fp->oracle_avg_bytes,
			     fp->base_avg_bytes, fp->oracle_peak_bytes,
			     fp->base_peak_bytes);
}

static int tt_sim_print_json(const struct tt_sim_opts *o,
			     const struct tt_sim_trace *t,
			     const struct tt_sim_result *r, FILE *out)
{
	const struct tt_policy_footprint *fp = &r->footprint;
	struct tt_json *j = tt_json_new(out, o->pretty);
	unsigned int i;

	if (!j)
		return -ENOMEM;
	tt_json_object_open(j, NULL);
	tt_json_array_open(j, "layers");
	for (i = 0; i < t->n; i++) {
		const struct tt_policy_layer *l = &t->layers[i];

		tt_json_object_open(j, NULL);
		tt_json_u64(j, "layer", l->layer);
		tt_json_string(j, "status", tt_policy_status_name(l->status));
		tt_json_u64(j, "evict_bytes", l->final_bytes);
		if (l->status == TT_POLICY_DROPPED)
			tt_json_null(j, "prefetch_start_us");
		else
			tt_json_milli(j, "prefetch_start_us", l->prefetch_ns);
		tt_json_u64(j, "saved_bytes", l->saved_bytes);
		tt_json_u64(j, "allowed_bytes", l->evict_bytes);
		tt_json_milli(j, "fwd_end_us", l->fwd_end_ns);
		tt_json_milli(j, "bwd_start_us", l->bwd_start_ns);
		tt_json_milli(j, "idle_us", l->bwd_start_ns - l->fwd_end_ns);
		tt_json_object_close(j);
	}
	tt_json_array_close(j);
	tt_json_u64(j, "accepted", r->sum.accepted);
	tt_json_u64(j, "modified", r->sum.modified);
	tt_json_u64(j, "dropped", r->sum.dropped);
	tt_json_u64(j, "migrated_bytes", r->sum.migrated_bytes);
	tt_json_object_open(j, "footprint");
	tt_json_u64(j, "avg_bytes", fp->avg_bytes);
	tt_json_u64(j, "peak_bytes", fp->peak_bytes);
	tt_json_u64(j, "base_avg_bytes", fp->base_avg_bytes);
	tt_json_u64(j, "base_peak_bytes", fp->base_peak_bytes);
	tt_json_u64(j, "oracle_avg_bytes", fp->oracle_avg_bytes);
	tt_json_u64(j, "oracle_peak_bytes", fp->oracle_peak_bytes);
	tt_json_object_close(j);
	tt_json_object_close(j);
	return tt_json_end(j);
}

/**
 * tt_sim_print() - print the plan of tt_sim_run() as text or JSON.
 * @o:   the options (-j, -p, and the parameters shown in the text).
 * @t:   the planned trace.
 * @r:   the totals and footprint.
 * @out: where to print.
 *
 * Return: 0, or -errno.
 */
int tt_sim_print(const struct tt_sim_opts *o, const struct tt_sim_trace *t,
		 const struct tt_sim_result *r, FILE *out)
{
	if (o->json)
		return tt_sim_print_json(o, t, r, out);
	tt_sim_print_text(o, t, r, out);
	return 0;
}

int tt_simulate_main(const struct tt_ctl *ctl, int argc, char **argv)
{
	struct tt_sim_opts o = { .json = ctl->json, .pretty = ctl->pretty };
	struct tt_sim_result res;
	struct tt_sim_trace t;
	const char *name;
	char err[512];
	FILE *f;
	int ret;

	if (tt_sim_parse_opts(argc, argv, &o, err, sizeof(err)) < 0) {
		fprintf(ctl->err, "tierctl simulate: %s; try 'tierctl simulate --help'\n",
			err);
		return 1;
	}
	if (!strcmp(o.trace, "-")) {
		f = stdin;
		name = "<stdin>";
	} else {
		f = fopen(o.trace, "re");
		name = o.trace;
		if (!f) {
			fprintf(ctl->err, "tierctl: cannot open the trace %s: %s\n",
				o.trace, strerror(errno));
			return 1;
		}
	}
	ret = tt_sim_trace_read(f, name, &t, err, sizeof(err));
	if (f != stdin)
		fclose(f);
	if (ret < 0) {
		fprintf(ctl->err, "tierctl: %s\n", err);
		goto fail;
	}
	ret = tt_sim_run(&o, &t, &res);
	if (ret < 0) {
		fprintf(ctl->err, "tierctl: simulate: the policy refused the trace %s: %s\n",
			name, strerror(-ret));
		goto fail;
	}
	ret = tt_sim_print(&o, &t, &res, ctl->out);
	if (ret < 0) {
		fprintf(ctl->err, "tierctl: simulate: cannot print the JSON output: %s\n",
			strerror(-ret));
		goto fail;
	}
	tt_sim_trace_free(&t);
	return 0;
fail:
	tt_sim_trace_free(&t);
	return 1;
}
