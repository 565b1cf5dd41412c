// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierctl config [get [KEY]] | set KEY=VALUE...: the module's settings
 * (TT_CMD_GET_CONFIG, TT_CMD_SET_CONFIG). The keys, their ranges and
 * descriptions come from the module: tierctl knows none of them, so a new
 * module's keys work with an old tierctl.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/tiertrain.h>

#include "nl.h"
#include "tierctl.h"

const char tt_config_usage[] =
	"Usage: tierctl config [get [KEY]] [-j|-p]\n"
	"       tierctl config set KEY=VALUE [KEY=VALUE...]\n"
	"\n"
	"Without arguments or with 'get': every setting of the module with its\n"
	"value, unit, default, range and when a change applies (now, to new\n"
	"sessions, at the next iteration, to new trace rings). 'get KEY' shows\n"
	"one, with its description.\n"
	"\n"
	"'set' changes settings (needs CAP_SYS_ADMIN). VALUE is a whole number\n"
	"in the key's unit. All pairs are checked first: when one is refused\n"
	"(unknown key, value out of range), nothing changes. Each change is\n"
	"printed as KEY: OLD -> NEW. The same keys are module parameters\n"
	"(modprobe tiertrain KEY=VALUE, /sys/module/tiertrain/parameters/).\n";

/**
 * struct tt_cfg_entry - one setting of the TT_CMD_GET_CONFIG reply
 * @key:     TT_CFG_A_KEY.
 * @value:   TT_CFG_A_VALUE.
 * @def:     TT_CFG_A_DEFAULT.
 * @min:     TT_CFG_A_RANGE_MIN.
 * @max:     TT_CFG_A_RANGE_MAX.
 * @unit:    TT_CFG_A_UNIT.
 * @desc:    TT_CFG_A_DESC.
 * @applies: TT_CFG_A_APPLIES.
 */
struct tt_cfg_entry {
	char key[64];
	uint64_t value;
	uint64_t def;
	uint64_t min;
	uint64_t max;
	char unit[32];
	char desc[256];
	uint32_t applies;
};

/**
 * struct tt_cfg_list - the parsed reply
 * @v:   the settings; allocated.
 * @n:   how many.
 * @err: after a parse failure: what is wrong.
 */
struct tt_cfg_list {
	struct tt_cfg_entry *v;
	size_t n;
	char err[640];
};

static int tt_cfg_parse_entry(const struct nlattr *nest, struct tt_cfg_list *l)
{
	const struct nlattr *tb[TT_CFG_A_MAX + 1];
	static const struct {
		unsigned int type;
		enum mnl_attr_data_type kind;
	} need[] = {
		{ TT_CFG_A_KEY, MNL_TYPE_NUL_STRING },
		{ TT_CFG_A_VALUE, MNL_TYPE_U64 },
		{ TT_CFG_A_DEFAULT, MNL_TYPE_U64 },
		{ TT_CFG_A_RANGE_MIN, MNL_TYPE_U64 },
		{ TT_CFG_A_RANGE_MAX, MNL_TYPE_U64 },
		{ TT_CFG_A_UNIT, MNL_TYPE_NUL_STRING },
		{ TT_CFG_A_DESC, MNL_TYPE_NUL_STRING },
		{ TT_CFG_A_APPLIES, MNL_TYPE_U32 },
	};
	struct tt_cfg_entry *v, *e;
	unsigned int i;

	if (tt_nl_parse_nested(nest, tb, TT_CFG_A_MAX))
		goto bad;
	for (i = 0; i < TT_ARRAY_SIZE(need); i++) {
		if (!tb[need[i].type] ||
		    mnl_attr_validate(tb[need[i].type], need[i].kind) < 0) {
			snprintf(l->err, sizeof(l->err),
				 "setting %zu of the module's reply has %s attribute %u",
				 l->n, tb[need[i].type] ? "a malformed" : "no",
				 need[i].type);
			return -EPROTO;
		}
	}
	v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v) {
		snprintf(l->err, sizeof(l->err), "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	l->v = v;
	e = &v[l->n++];
	snprintf(e->key, sizeof(e->key), "%s", mnl_attr_get_str(tb[TT_CFG_A_KEY]));
	e->value = mnl_attr_get_u64(tb[TT_CFG_A_VALUE]);
	e->def = mnl_attr_get_u64(tb[TT_CFG_A_DEFAULT]);
	e->min = mnl_attr_get_u64(tb[TT_CFG_A_RANGE_MIN]);
	e->max = mnl_attr_get_u64(tb[TT_CFG_A_RANGE_MAX]);
	snprintf(e->unit, sizeof(e->unit), "%s",
		 mnl_attr_get_str(tb[TT_CFG_A_UNIT]));
	snprintf(e->desc, sizeof(e->desc), "%s",
		 mnl_attr_get_str(tb[TT_CFG_A_DESC]));
	e->applies = mnl_attr_get_u32(tb[TT_CFG_A_APPLIES]);
	return 0;
bad:
	snprintf(l->err, sizeof(l->err),
		 "setting %zu of the module's reply is malformed", l->n);
	return -EPROTO;
}

static int tt_cfg_cb(const struct nlmsghdr *nlh, void *data)
{
	struct tt_cfg_list *l = data;
	const struct nlattr *a;
	int ret;

	if (mnl_nlmsg_get_payload_len(nlh) < GENL_HDRLEN) {
		snprintf(l->err, sizeof(l->err), "the module's reply is malformed");
		errno = EPROTO;
		return MNL_CB_ERROR;
	}
	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		if (mnl_attr_get_type(a) != TT_A_CONFIG)
			continue;
		ret = tt_cfg_parse_entry(a, l);
		if (ret < 0) {
			errno = -ret;
			return MNL_CB_ERROR;
		}
	}
	return MNL_CB_OK;
}

/* TT_CMD_GET_CONFIG for every key, or @key only. */
static int tt_cfg_get(struct tt_nl *nl, const char *key, struct tt_cfg_list *l)
{
	struct nlmsghdr *req;
	struct nlattr *nest;
	int ret;

	req = tt_nl_request(nl, nl->family, TT_CMD_GET_CONFIG, TT_GENL_VERSION);
	if (key) {
		nest = mnl_attr_nest_start(req, TT_A_CONFIG);
		mnl_attr_put_strz(req, TT_CFG_A_KEY, key);
		mnl_attr_nest_end(req, nest);
	}
	ret = tt_nl_talk(nl, req, "config get", tt_cfg_cb, l);
	if (ret < 0 && !l->err[0])
		snprintf(l->err, sizeof(l->err), "%s", nl->err);
	return ret;
}

/* tt_cfg_applies_name() - "now", "new sessions", ... or "unknown(N)". */
static const char *tt_cfg_applies_name(uint32_t a, char *buf, size_t len)
{
	switch (a) {
	case TT_CFG_APPLIES_NOW:
		return "now";
	case TT_CFG_APPLIES_NEW_SESSIONS:
		return "new sessions";
	case TT_CFG_APPLIES_NEXT_ITER:
		return "next iteration";
	case TT_CFG_APPLIES_NEW_RINGS:
		return "new trace rings";
	}
	snprintf(buf, len, "unknown(%u)", a);
	return buf;
}

static void tt_cfg_entry_json(struct tt_json *j, const struct tt_cfg_entry *e)
{
	char b[32];

	tt_json_object_open(j, NULL);
	tt_json_string(j, "key", e->key);
	tt_json_u64(j, "value", e->value);
	tt_json_string(j, "unit", e->unit);
	tt_json_u64(j, "default", e->def);
	tt_json_u64(j, "min", e->min);
	tt_json_u64(j, "max", e->max);
	tt_json_string(j, "applies", tt_cfg_applies_name(e->applies, b,
							  sizeof(b)));
	tt_json_string(j, "description", e->desc);
	tt_json_object_close(j);
}

static int tt_cfg_print(const struct tt_ctl *ctl, const struct tt_cfg_list *l,
			bool one)
{
	char range[48], b[32];
	struct tt_json *j;
	size_t i;

	if (ctl->json) {
		j = tt_json_new(ctl->out, ctl->pretty);
		if (!j)
			return -ENOMEM;
		if (!one)
			tt_json_array_open(j, NULL);
		for (i = 0; i < l->n; i++)
			tt_cfg_entry_json(j, &l->v[i]);
		if (!one)
			tt_json_array_close(j);
		return tt_json_end(j);
	}
	if (one && l->n == 1) {
		const struct tt_cfg_entry *e = &l->v[0];

		fprintf(ctl->out,
			"%s = %" PRIu64 "%s%s\n  %s\n  default %" PRIu64 ", range %" PRIu64 "..%" PRIu64 ", a change applies: %s\n",
			e->key, e->value, e->unit[0] ? " " : "", e->unit,
			e->desc, e->def, e->min, e->max,
			tt_cfg_applies_name(e->applies, b, sizeof(b)));
		return 0;
	}
	fprintf(ctl->out, "%-17s %10s %-10s %10s %-16s %s\n", "key", "value",
		"unit", "default", "range", "a change applies");
	for (i = 0; i < l->n; i++) {
		const struct tt_cfg_entry *e = &l->v[i];

		snprintf(range, sizeof(range), "%" PRIu64 "..%" PRIu64, e->min,
			 e->max);
		fprintf(ctl->out, "%-17s %10" PRIu64 " %-10s %10" PRIu64 " %-16s %s\n",
			e->key, e->value, e->unit, e->def, range,
			tt_cfg_applies_name(e->applies, b, sizeof(b)));
	}
	return 0;
}

/**
 * tt_cfg_parse_pair() - split and check one KEY=VALUE argument.
 * @arg:   the argument.
 * @key:   out: the key.
 * @klen:  size of @key.
 * @value: out: the value.
 *
 * Return: 0; -EINVAL when there is no '=' or no key (or the key is too
 * long); -ERANGE when the value is not a whole number that fits in 64 bits.
 */
int tt_cfg_parse_pair(const char *arg, char *key, size_t klen,
		      uint64_t *value)
{
	const char *eq = strchr(arg, '=');
	unsigned long long v;
	char *end;

	if (!eq || eq == arg || (size_t)(eq - arg) >= klen)
		return -EINVAL;
	memcpy(key, arg, eq - arg);
	key[eq - arg] = 0;
	if (eq[1] < '0' || eq[1] > '9')
		return -ERANGE;
	errno = 0;
	v = strtoull(eq + 1, &end, 10);
	if (*end || errno)
		return -ERANGE;
	*value = v;
	return 0;
}

static int tt_cfg_set(const struct tt_ctl *ctl, struct tt_nl *nl, int argc,
		      char **argv)
{
	struct tt_cfg_list before = { 0 };
	struct nlmsghdr *req;
	struct nlattr *nest;
	char key[64];
	uint64_t v;
	size_t k;
	int i, ret;

	/* The old values, to print each change. */
	ret = tt_cfg_get(nl, NULL, &before);
	if (ret < 0) {
		fprintf(ctl->err, "tierctl: config set: %s\n", before.err);
		goto out;
	}
	req = tt_nl_request(nl, nl->family, TT_CMD_SET_CONFIG, TT_GENL_VERSION);
	for (i = 2; i < argc; i++) {
		tt_cfg_parse_pair(argv[i], key, sizeof(key), &v);
		nest = mnl_attr_nest_start(req, TT_A_CONFIG);
		mnl_attr_put_strz(req, TT_CFG_A_KEY, key);
		mnl_attr_put_u64(req, TT_CFG_A_VALUE, v);
		mnl_attr_nest_end(req, nest);
	}
	ret = tt_nl_talk(nl, req, "config set", NULL, NULL);
	if (ret == -EPERM && !strstr(nl->err, "CAP_SYS_ADMIN")) {
		fprintf(ctl->err, "tierctl: %s (changing the settings needs CAP_SYS_ADMIN: run as root)\n",
			nl->err);
		goto out;
	}
	if (ret < 0) {
		fprintf(ctl->err, "tierctl: %s\n", nl->err);
		goto out;
	}
	for (i = 2; i < argc; i++) {
		tt_cfg_parse_pair(argv[i], key, sizeof(key), &v);
		for (k = 0; k < before.n && strcmp(before.v[k].key, key); k++)
			;
		if (k < before.n)
			fprintf(ctl->out, "%s: %" PRIu64 " -> %" PRIu64 "\n", key,
				before.v[k].value, v);
		else
			fprintf(ctl->out, "%s: -> %" PRIu64 "\n", key, v);
	}
out:
	free(before.v);
	return ret;
}

int tt_config_main(const struct tt_ctl *ctl, int argc, char **argv)
{
	struct tt_cfg_list l = { 0 };
	const char *key = NULL;
	struct tt_nl nl;
	char k[64];
	uint64_t v;
	int i, ret;

	if (argc > 1 && strcmp(argv[1], "get") && strcmp(argv[1], "set")) {
		fprintf(ctl->err, "tierctl config: unknown argument '%s' (expected get or set); try 'tierctl config --help'\n",
			argv[1]);
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "get")) {
		if (argc > 3) {
			fprintf(ctl->err, "tierctl config get: unexpected argument '%s'; try 'tierctl config --help'\n",
				argv[3]);
			return 1;
		}
		key = argc == 3 ? argv[2] : NULL;
	}
	if (argc > 1 && !strcmp(argv[1], "set")) {
		if (argc == 2) {
			fputs("tierctl config set: give at least one KEY=VALUE ('tierctl config' lists the keys)\n",
			      ctl->err);
			return 1;
		}
		for (i = 2; i < argc; i++) {
			ret = tt_cfg_parse_pair(argv[i], k, sizeof(k), &v);
			if (ret == -EINVAL) {
				fprintf(ctl->err, "tierctl config set: '%s' is not KEY=VALUE\n",
					argv[i]);
				return 1;
			}
			if (ret) {
				fprintf(ctl->err, "tierctl config set: '%s': the value of %s must be a whole number (0 or more)\n",
					argv[i], k);
				return 1;
			}
		}
	}
	if (tt_nl_open(&nl) < 0) {
		fprintf(ctl->err, "tierctl: %s\n", nl.err);
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "set")) {
		ret = tt_cfg_set(ctl, &nl, argc, argv);
	} else {
		ret = tt_cfg_get(&nl, key, &l);
		if (ret < 0) {
			fprintf(ctl->err, "tierctl: config: %s\n", l.err);
		} else {
			ret = tt_cfg_print(ctl, &l, key);
			if (ret < 0)
				fprintf(ctl->err, "tierctl: config: cannot print the output: %s\n",
					strerror(-ret));
		}
	}
	tt_nl_close(&nl);
	free(l.v);
	return ret < 0 ? 1 : 0;
}
