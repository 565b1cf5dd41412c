// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierctl stats --prometheus: the sessions' counters in Prometheus' text
 * exposition format (see prometheus.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "prometheus.h"
#include "stats.h"

/* Counters of struct tt_ioc_stats that are values now, not running sums. */
static const char *const tt_prom_gauges[] = {
	"registered_ranges", "registered_bytes", "pinned_bytes",
	"archived_bytes", "count_ahead", "movers", "dyn_signatures",
	"last_miss_iter", "last_miss_layer", "last_miss_kind", "budget_bytes",
	"fast_registered_bytes", "fast_peak_bytes", "kmem_bytes", NULL,
};

/* Gauges a sum over sessions says nothing of (left out of the module's). */
static const char *const tt_prom_no_sum[] = {
	"count_ahead", "movers", "dyn_signatures", "last_miss_iter",
	"last_miss_layer", "last_miss_kind", NULL,
};

static bool tt_prom_in(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (!strcmp(*list, name))
			return true;
	return false;
}

/**
 * struct tt_prom_metric - how one counter is exposed
 * @name:    the metric name without the tiertrain_ prefix (and without
 *           _total, which tt_prometheus_write() adds to counters).
 * @counter: a running sum (TYPE counter), else a gauge.
 * @scale:   the exposed value is the counter's times this (1: exact).
 */
struct tt_prom_metric {
	char name[64];
	bool counter;
	double scale;
};

static void tt_prom_metric(const struct tt_stat_field *f,
			   struct tt_prom_metric *m)
{
	const char *n = f->name;

	m->counter = f->kind != TT_STAT_RATE && f->kind != TT_STAT_WEIGHT &&
		     !tt_prom_in(tt_prom_gauges, n);
	m->scale = 1;
	if (!strncmp(n, "total.", 6)) {
		n += 6;
		if (f->kind == TT_STAT_NS) {
			snprintf(m->name, sizeof(m->name),
				 "migrate_elapsed_seconds");
			m->scale = 1e-9;
		} else if (!strcmp(n, "pages")) {
			snprintf(m->name, sizeof(m->name), "migrate_pages");
		} else {
			snprintf(m->name, sizeof(m->name), "migrate_%s_pages",
				 n);
		}
	} else if (!strcmp(n, "er_bps")) {
		snprintf(m->name, sizeof(m->name),
			 "eviction_rate_bytes_per_second");
	} else if (!strcmp(n, "pr_bps")) {
		snprintf(m->name, sizeof(m->name),
			 "prefetch_rate_bytes_per_second");
	} else if (f->kind == TT_STAT_WEIGHT) {
		snprintf(m->name, sizeof(m->name), "%s_ratio", n);
		m->scale = 1.0 / 1024;
	} else if (!strncmp(n, "bytes_", 6)) {
		snprintf(m->name, sizeof(m->name), "%s_bytes", n + 6);
	} else {
		snprintf(m->name, sizeof(m->name), "%s", n);
	}
}

/* @s as a label value: backslash, double quote and newline escaped. */
static void tt_prom_label(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

static void tt_prom_value(FILE *out, uint64_t v, double scale)
{
	if (scale == 1)
		fprintf(out, " %" PRIu64 "\n", v);
	else
		fprintf(out, " %.9g\n", v * scale);
}

static void tt_prom_labels(FILE *out, const struct tt_ctl_session *x)
{
	fprintf(out, "{session=\"%" PRIu64 "\",pid=\"%u\",command=\"",
		x->id, x->pid);
	tt_prom_label(out, x->comm);
	fputs("\"}", out);
}

/*
 * tiertrain_session_@tier_bytes of every session: the u64 at @off of
 * struct tt_ctl_session, bytes of its saved tensors that are @what.
 */
static void tt_prom_session_gauge(FILE *out, const struct tt_ctl_sessions *ss,
				  const char *tier, const char *what,
				  size_t off)
{
	uint64_t v;
	size_t i;

	fprintf(out, "# HELP tiertrain_session_%s_bytes Bytes of the saved tensors the session's scheduler holds that are %s.\n"
		"# TYPE tiertrain_session_%s_bytes gauge\n", tier, what, tier);
	for (i = 0; i < ss->n; i++) {
		memcpy(&v, (const char *)&ss->v[i] + off, sizeof(v));
		fprintf(out, "tiertrain_session_%s_bytes", tier);
		tt_prom_labels(out, &ss->v[i]);
		tt_prom_value(out, v, 1);
	}
}

int tt_prometheus_write(FILE *out, const struct tt_ctl_sessions *ss)
{
	const struct tt_stat_field *f;
	struct tt_ioc_stats sum;
	struct tt_prom_metric m;
	size_t i;

	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < ss->n; i++)
		tt_stats_add(&sum, &ss->v[i].st);

	fputs("# HELP tiertrain_sessions Open tiertrain sessions this reader can see.\n"
	      "# TYPE tiertrain_sessions gauge\n", out);
	fprintf(out, "tiertrain_sessions %zu\n", ss->n);

	/* the module's: each counter summed over the sessions */
	for (f = tt_stat_fields; f->name; f++) {
		if (f->kind == TT_STAT_RATE || f->kind == TT_STAT_WEIGHT ||
		    tt_prom_in(tt_prom_no_sum, f->name))
			continue;
		tt_prom_metric(f, &m);
		fprintf(out, "# HELP tiertrain_module_%s struct tt_ioc_stats.%s summed over the open sessions (tierctl(8)).\n"
			"# TYPE tiertrain_module_%s gauge\n"
			"tiertrain_module_%s", m.name, f->name, m.name, m.name);
		tt_prom_value(out, tt_stat_get(&sum, f), m.scale);
	}

	/* each session's */
	tt_prom_session_gauge(out, ss, "fast", "not evicted",
			      offsetof(struct tt_ctl_session, fast_bytes));
	tt_prom_session_gauge(out, ss, "slow",
			      "evicted and not brought back",
			      offsetof(struct tt_ctl_session, slow_bytes));
	for (f = tt_stat_fields; f->name; f++) {
		const char *suffix;

		tt_prom_metric(f, &m);
		suffix = m.counter ? "_total" : "";
		fprintf(out, "# HELP tiertrain_%s%s struct tt_ioc_stats.%s of the session (tierctl(8)).\n"
			"# TYPE tiertrain_%s%s %s\n", m.name, suffix, f->name,
			m.name, suffix, m.counter ? "counter" : "gauge");
		for (i = 0; i < ss->n; i++) {
			fprintf(out, "tiertrain_%s%s", m.name, suffix);
			tt_prom_labels(out, &ss->v[i]);
			tt_prom_value(out, tt_stat_get(&ss->v[i].st, f),
				      m.scale);
		}
	}
	return ferror(out) ? -EIO : 0;
}
