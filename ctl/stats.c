// SPDX-License-Identifier: GPL-2.0-only
/*
 * tierctl stats [PID]: every counter of the sessions (struct tt_ioc_stats,
 * from the sessions dump), summed over all visible sessions or, for one
 * process, per session with the scheduler's per-layer view
 * (TT_CMD_GET_LAYERS).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/genetlink.h>

#include "prometheus.h"
#include "sessions.h"
#include "stats.h"
#include "tierctl.h"

#define TT_DUMP_TRIES	5

const char tt_stats_usage[] =
	"Usage: tierctl stats [PID] [-j|-p]\n"
	"       tierctl stats [PID] --prometheus [-o FILE]\n"
	"\n"
	"Without PID: every counter of struct tt_ioc_stats summed over the\n"
	"sessions you can see (all of them with CAP_SYS_ADMIN), rates and heat\n"
	"weights left out.\n"
	"With PID: for each session of that process, every counter, the rates\n"
	"the scheduler measured, the heat weights of its fast-tier budget\n"
	"(heat_w*, 1024 = 1.0), and its per-layer view:\n"
	"  layer      layer id\n"
	"  status     profiling, accepted (evicted whole), modified (in part)\n"
	"             or dropped (kept on the fast tier) in the current plan\n"
	"  saved      profiled saved bytes\n"
	"  planned    bytes the plan evicts and prefetches\n"
	"  lead       extra prefetch lead time learned from late prefetches\n"
	"  evicted    bytes evicted in the last iteration\n"
	"  late       bytes still slow at the last backward begin\n"
	"  evict ms   when the last eviction ran, ms from the iteration start\n"
	"  fetch ms   when the last prefetch ran\n"
	"  bwd ms     when the last backward pass began\n"
	"Counter names are those of struct tt_ioc_stats in <linux/tiertrain.h>;\n"
	"tierctl(8) describes them, the fast-tier budget's (budget_bytes,\n"
	"fast_registered_bytes, victims, budget_waits, ...) included.\n"
	"\n"
	"  --prometheus  Prometheus' text exposition format instead: per session\n"
	"                (labels session, pid, command) every counter as\n"
	"                tiertrain_NAME_total and every gauge as tiertrain_NAME,\n"
	"                in bytes and seconds; tiertrain_sessions and the sums over\n"
	"                the sessions as tiertrain_module_NAME (gauges)\n"
	"  -o FILE       with --prometheus: write FILE whole or not at all (a\n"
	"                temporary file renamed over it), as node-exporter's textfile\n"
	"                collector wants (*.prom in its directory)\n";

#define TT_F(m, k) { #m, offsetof(struct tt_ioc_stats, m), k }

const struct tt_stat_field tt_stat_fields[] = {
	TT_F(registered_ranges, TT_STAT_COUNT),
	TT_F(registered_bytes, TT_STAT_BYTES),
	TT_F(ranges_unmapped, TT_STAT_COUNT),
	TT_F(migrate_calls, TT_STAT_COUNT),
	TT_F(async_queued, TT_STAT_COUNT),
	TT_F(async_done, TT_STAT_COUNT),
	TT_F(async_cancelled, TT_STAT_COUNT),
	TT_F(async_failed, TT_STAT_COUNT),
	TT_F(bytes_to_fast, TT_STAT_BYTES),
	TT_F(bytes_to_slow, TT_STAT_BYTES),
	TT_F(total.pages, TT_STAT_COUNT),
	TT_F(total.moved, TT_STAT_COUNT),
	TT_F(total.already_on_node, TT_STAT_COUNT),
	TT_F(total.skipped_not_present, TT_STAT_COUNT),
	TT_F(total.skipped_busy, TT_STAT_COUNT),
	TT_F(total.skipped_unsupported, TT_STAT_COUNT),
	TT_F(total.skipped_no_memory, TT_STAT_COUNT),
	TT_F(total.elapsed_ns, TT_STAT_NS),
	TT_F(iterations, TT_STAT_COUNT),
	TT_F(events, TT_STAT_COUNT),
	TT_F(tensors_saved, TT_STAT_COUNT),
	TT_F(tensors_ignored, TT_STAT_COUNT),
	TT_F(layers_accepted, TT_STAT_COUNT),
	TT_F(layers_modified, TT_STAT_COUNT),
	TT_F(layers_dropped, TT_STAT_COUNT),
	TT_F(layers_unknown, TT_STAT_COUNT),
	TT_F(bytes_evicted, TT_STAT_BYTES),
	TT_F(bytes_prefetched, TT_STAT_BYTES),
	TT_F(ontime_bytes, TT_STAT_BYTES),
	TT_F(late_bytes, TT_STAT_BYTES),
	TT_F(late_count, TT_STAT_COUNT),
	TT_F(sync_fetched_bytes, TT_STAT_BYTES),
	TT_F(reprofiles, TT_STAT_COUNT),
	TT_F(er_bps, TT_STAT_RATE),
	TT_F(pr_bps, TT_STAT_RATE),
	TT_F(pinned_bytes, TT_STAT_BYTES),
	TT_F(archived_bytes, TT_STAT_BYTES),
	TT_F(count_ahead, TT_STAT_COUNT),
	TT_F(count_released, TT_STAT_COUNT),
	TT_F(engine_bytes, TT_STAT_BYTES),
	TT_F(mover_bytes, TT_STAT_BYTES),
	TT_F(huge_kept, TT_STAT_COUNT),
	TT_F(huge_split, TT_STAT_COUNT),
	TT_F(huge_partial, TT_STAT_COUNT),
	TT_F(large_pte, TT_STAT_COUNT),
	TT_F(mover_orders, TT_STAT_COUNT),
	TT_F(mover_fallbacks, TT_STAT_COUNT),
	TT_F(mover_late, TT_STAT_COUNT),
	TT_F(movers, TT_STAT_COUNT),
	TT_F(dyn_signatures, TT_STAT_COUNT),
	TT_F(dyn_predicted, TT_STAT_COUNT),
	TT_F(dyn_mispredicted, TT_STAT_COUNT),
	TT_F(dyn_fallback, TT_STAT_COUNT),
	TT_F(dyn_misses, TT_STAT_COUNT),
	TT_F(last_miss_iter, TT_STAT_COUNT),
	TT_F(last_miss_layer, TT_STAT_COUNT),
	TT_F(last_miss_kind, TT_STAT_COUNT),
	TT_F(budget_bytes, TT_STAT_BYTES),
	TT_F(fast_registered_bytes, TT_STAT_BYTES),
	TT_F(fast_peak_bytes, TT_STAT_BYTES),
	TT_F(victims, TT_STAT_COUNT),
	TT_F(victim_bytes, TT_STAT_BYTES),
	TT_F(victim_archived_bytes, TT_STAT_BYTES),
	TT_F(victims_skipped_pages, TT_STAT_COUNT),
	TT_F(budget_waits, TT_STAT_COUNT),
	TT_F(budget_overruns, TT_STAT_COUNT),
	TT_F(heat_wf, TT_STAT_WEIGHT),
	TT_F(heat_wr, TT_STAT_WEIGHT),
	TT_F(heat_ws, TT_STAT_WEIGHT),
	TT_F(heat_wl, TT_STAT_WEIGHT),
	TT_F(kmem_bytes, TT_STAT_BYTES),
	TT_F(prefetch_left_bytes, TT_STAT_BYTES),
	TT_F(landed_bytes, TT_STAT_BYTES),
	TT_F(rate_probes, TT_STAT_COUNT),
	TT_F(left_returned_bytes, TT_STAT_BYTES),
	{ NULL, 0, TT_STAT_COUNT },
};

uint64_t tt_stat_get(const struct tt_ioc_stats *st,
		     const struct tt_stat_field *f)
{
	uint64_t v;

	memcpy(&v, (const char *)st + f->off, sizeof(v));
	return v;
}

/* tt_stats_add() - add the counters of @st to @acc (rates are not added). */
void tt_stats_add(struct tt_ioc_stats *acc, const struct tt_ioc_stats *st)
{
	const struct tt_stat_field *f;
	uint64_t v;

	for (f = tt_stat_fields; f->name; f++) {
		if (f->kind == TT_STAT_RATE || f->kind == TT_STAT_WEIGHT)
			continue;
		v = tt_stat_get(acc, f) + tt_stat_get(st, f);
		memcpy((char *)acc + f->off, &v, sizeof(v));
	}
}

/*
 * tt_stats_json() - every counter as members of an object @name ("total."
 * members inside an object "total"); rates only with @with_rates.
 */
void tt_stats_json(struct tt_json *j, const char *name,
		   const struct tt_ioc_stats *st, int with_rates)
{
	const struct tt_stat_field *f;
	int in_total = 0;

	tt_json_object_open(j, name);
	for (f = tt_stat_fields; f->name; f++) {
		int total = !strncmp(f->name, "total.", 6);

		if ((f->kind == TT_STAT_RATE || f->kind == TT_STAT_WEIGHT) &&
		    !with_rates)
			continue;
		if (total && !in_total)
			tt_json_object_open(j, "total");
		else if (!total && in_total)
			tt_json_object_close(j);
		in_total = total;
		tt_json_u64(j, total ? f->name + 6 : f->name,
			    tt_stat_get(st, f));
	}
	if (in_total)
		tt_json_object_close(j);
	tt_json_object_close(j);
}

static void tt_stats_text(FILE *out, const struct tt_ioc_stats *st,
			  int with_rates)
{
	const struct tt_stat_field *f;
	char b[32];

	for (f = tt_stat_fields; f->name; f++) {
		uint64_t v = tt_stat_get(st, f);

		switch (f->kind) {
		case TT_STAT_BYTES:
			tt_fmt_bytes(v, b, sizeof(b));
			fprintf(out, "  %-26s %20" PRIu64 "  (%s)\n", f->name, v,
				b);
			break;
		case TT_STAT_RATE:
			if (!with_rates)
				break;
			tt_fmt_bytes(v, b, sizeof(b));
			fprintf(out, "  %-26s %20" PRIu64 "  (%s/s)\n", f->name,
				v, b);
			break;
		case TT_STAT_NS:
			fprintf(out, "  %-26s %20" PRIu64 "  (%.3f s)\n",
				f->name, v, v / 1e9);
			break;
		case TT_STAT_WEIGHT:
			if (with_rates)
				fprintf(out, "  %-26s %20" PRIu64 "  (%.3f)\n",
					f->name, v, v / 1024.0);
			break;
		default:
			fprintf(out, "  %-26s %20" PRIu64 "\n", f->name, v);
			break;
		}
	}
}

/* ---- layers ---------------------------------------------------------- */

/* tt_layer_status_name() - "profiling", "accepted", ... or "unknown(N)". */
const char *tt_layer_status_name(uint32_t status, char *buf, size_t len)
{
	switch (status) {
	case TT_LAYER_PROFILING:
		return "profiling";
	case TT_LAYER_ACCEPTED:
		return "accepted";
	case TT_LAYER_MODIFIED:
		return "modified";
	case TT_LAYER_DROPPED:
		return "dropped";
	}
	snprintf(buf, len, "unknown(%u)", status);
	return buf;
}

/**
 * tt_layers_parse() - add the layers of one message of the layers dump.
 * @nlh: the message.
 * @ls:  the layers so far.
 *
 * Return: MNL_CB_OK, or MNL_CB_ERROR with errno and @ls->err set.
 */
int tt_layers_parse(const struct nlmsghdr *nlh, struct tt_ctl_layers *ls)
{
	const struct nlattr *a;
	struct tt_layer_info *v;

	if (mnl_nlmsg_get_payload_len(nlh) < GENL_HDRLEN) {
		snprintf(ls->err, sizeof(ls->err),
			 "a message of the layers dump is malformed (%u bytes)",
			 nlh->nlmsg_len);
		errno = EPROTO;
		return MNL_CB_ERROR;
	}
	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		size_t len;

		if (mnl_attr_get_type(a) != TT_A_LAYER)
			continue;
		v = realloc(ls->v, (ls->n + 1) * sizeof(*v));
		if (!v) {
			snprintf(ls->err, sizeof(ls->err), "%s",
				 strerror(ENOMEM));
			errno = ENOMEM;
			return MNL_CB_ERROR;
		}
		ls->v = v;
		memset(&v[ls->n], 0, sizeof(*v));
		len = mnl_attr_get_payload_len(a);
		memcpy(&v[ls->n], mnl_attr_get_payload(a),
		       len < sizeof(*v) ? len : sizeof(*v));
		ls->n++;
	}
	return MNL_CB_OK;
}

static int tt_layers_cb(const struct nlmsghdr *nlh, void *data)
{
	return tt_layers_parse(nlh, data);
}

void tt_layers_free(struct tt_ctl_layers *ls)
{
	free(ls->v);
	ls->v = NULL;
	ls->n = 0;
}

static void tt_layers_reset(void *data)
{
	struct tt_ctl_layers *ls = data;

	tt_layers_free(ls);
	ls->err[0] = 0;
}

/**
 * tt_layers_fetch() - the per-layer view of one session.
 * @nl:      the connection.
 * @session: the session id.
 * @ls:      out: the layers (zeroed by the caller).
 *
 * A dump interrupted by a new layer is taken again, up to TT_DUMP_TRIES
 * times; then the last one is kept.
 *
 * Return: 0, or -errno with the reason in @ls->err.
 */
int tt_layers_fetch(struct tt_nl *nl, uint64_t session,
		    struct tt_ctl_layers *ls)
{
	int ret;

	ret = tt_nl_dump_again(nl, TT_CMD_GET_LAYERS, TT_A_SESSION, session,
			       true, "layers dump", tt_layers_cb, ls,
			       tt_layers_reset, TT_DUMP_TRIES);
	if (ret == -EINTR)
		ret = 0;
	if (ret < 0 && !ls->err[0])
		snprintf(ls->err, sizeof(ls->err), "%s", nl->err);
	return ret;
}

static void tt_layers_json(struct tt_json *j, const struct tt_ctl_layers *ls)
{
	char b[32];
	size_t i;

	tt_json_array_open(j, "layers");
	for (i = 0; i < ls->n; i++) {
		const struct tt_layer_info *l = &ls->v[i];

		tt_json_object_open(j, NULL);
		tt_json_u64(j, "layer", l->layer);
		tt_json_string(j, "status",
			       tt_layer_status_name(l->status, b, sizeof(b)));
		tt_json_u64(j, "saved_bytes", l->saved_bytes);
		tt_json_u64(j, "fwd_end_ns", l->fwd_end_ns);
		tt_json_u64(j, "bwd_start_ns", l->bwd_start_ns);
		tt_json_u64(j, "final_bytes", l->final_bytes);
		tt_json_u64(j, "prefetch_ns", l->prefetch_ns);
		tt_json_u64(j, "lead_ns", l->lead_ns);
		tt_json_u64(j, "last_fwd_end_ns", l->last_fwd_end_ns);
		tt_json_u64(j, "last_evict_start_ns", l->last_evict_start_ns);
		tt_json_u64(j, "last_evict_end_ns", l->last_evict_end_ns);
		tt_json_u64(j, "last_prefetch_start_ns",
			    l->last_prefetch_start_ns);
		tt_json_u64(j, "last_prefetch_end_ns", l->last_prefetch_end_ns);
		tt_json_u64(j, "last_bwd_start_ns", l->last_bwd_start_ns);
		tt_json_u64(j, "last_evicted_bytes", l->last_evicted_bytes);
		tt_json_u64(j, "last_late_bytes", l->last_late_bytes);
		tt_json_object_close(j);
	}
	tt_json_array_close(j);
}

static void tt_ms_span(char *buf, size_t len, uint64_t a, uint64_t b)
{
	if (!a && !b)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f-%.1f", a / 1e6, b / 1e6);
}

static void tt_layers_text(FILE *out, const struct tt_ctl_layers *ls)
{
	char st[32], b[5][16], ev[32], pf[32];
	size_t i;

	fprintf(out, "  %6s %-9s %9s %9s %8s %9s %9s %13s %13s %8s\n", "layer",
		"status", "saved", "planned", "lead ms", "evicted", "late",
		"evict ms", "fetch ms", "bwd ms");
	for (i = 0; i < ls->n; i++) {
		const struct tt_layer_info *l = &ls->v[i];

		tt_fmt_bytes(l->saved_bytes, b[0], sizeof(b[0]));
		tt_fmt_bytes(l->final_bytes, b[1], sizeof(b[1]));
		tt_fmt_bytes(l->last_evicted_bytes, b[2], sizeof(b[2]));
		tt_fmt_bytes(l->last_late_bytes, b[3], sizeof(b[3]));
		tt_ms_span(ev, sizeof(ev), l->last_evict_start_ns,
			   l->last_evict_end_ns);
		tt_ms_span(pf, sizeof(pf), l->last_prefetch_start_ns,
			   l->last_prefetch_end_ns);
		snprintf(b[4], sizeof(b[4]), "%.1f", l->lead_ns / 1e6);
		fprintf(out, "  %6u %-9s %9s %9s %8s %9s %9s %13s %13s %8.1f\n",
			l->layer, tt_layer_status_name(l->status, st, sizeof(st)),
			b[0], b[1], b[4], b[2], b[3], ev, pf,
			l->last_bwd_start_ns / 1e6);
	}
	if (!ls->n)
		fputs("  (no layers reported yet)\n", out);
}

/* ---- the verb -------------------------------------------------------- */

static int tt_stats_totals(const struct tt_ctl *ctl,
			   const struct tt_ctl_sessions *ss)
{
	struct tt_ioc_stats sum;
	struct tt_json *j;
	size_t i;

	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < ss->n; i++)
		tt_stats_add(&sum, &ss->v[i].st);
	if (!ctl->json) {
		fprintf(ctl->out, "sessions: %zu\ntotals:\n", ss->n);
		tt_stats_text(ctl->out, &sum, 0);
		return 0;
	}
	j = tt_json_new(ctl->out, ctl->pretty);
	if (!j)
		return -ENOMEM;
	tt_json_object_open(j, NULL);
	tt_json_u64(j, "sessions", ss->n);
	tt_stats_json(j, "totals", &sum, 0);
	tt_json_object_close(j);
	return tt_json_end(j);
}

static int tt_stats_process(const struct tt_ctl *ctl, struct tt_nl *nl,
			    const struct tt_ctl_sessions *ss)
{
	struct tt_ctl_layers *ls;
	struct tt_json *j = NULL;
	size_t i;
	int ret = 0;

	/* Everything is fetched first: nothing half-done is printed. */
	ls = calloc(ss->n ? ss->n : 1, sizeof(*ls));
	if (!ls)
		return -ENOMEM;
	for (i = 0; i < ss->n && !ret; i++) {
		ret = tt_layers_fetch(nl, ss->v[i].id, &ls[i]);
		/* A session closed since the sessions dump: no layers. */
		if (ret == -ENOENT)
			ret = 0;
		else if (ret < 0)
			fprintf(ctl->err, "tierctl: stats: %s\n", ls[i].err);
	}
	if (ret < 0)
		goto out;
	if (ctl->json) {
		j = tt_json_new(ctl->out, ctl->pretty);
		if (!j) {
			ret = -ENOMEM;
			goto out;
		}
		tt_json_object_open(j, NULL);
		tt_json_array_open(j, "sessions");
	}
	for (i = 0; i < ss->n; i++) {
		const struct tt_ctl_session *x = &ss->v[i];

		if (j) {
			tt_json_object_open(j, NULL);
			tt_json_u64(j, "session", x->id);
			tt_json_u64(j, "pid", x->pid);
			tt_json_string(j, "command", x->comm);
			tt_json_u64(j, "uid", x->uid);
			tt_json_u64(j, "fast_bytes", x->fast_bytes);
			tt_json_u64(j, "slow_bytes", x->slow_bytes);
			tt_stats_json(j, "stats", &x->st, 1);
			tt_layers_json(j, &ls[i]);
			tt_json_object_close(j);
		} else {
			fprintf(ctl->out,
				"session %llu: pid %u (%s), uid %u\n",
				(unsigned long long)x->id, x->pid, x->comm,
				x->uid);
			tt_stats_text(ctl->out, &x->st, 1);
			fputs("layers:\n", ctl->out);
			tt_layers_text(ctl->out, &ls[i]);
		}
	}
	if (j) {
		tt_json_array_close(j);
		tt_json_object_close(j);
		ret = tt_json_end(j);
	}
out:
	for (i = 0; i < ss->n; i++)
		tt_layers_free(&ls[i]);
	free(ls);
	return ret;
}

/*
 * --prometheus: to @file atomically (a temporary file in its directory,
 * renamed over it), or to the output. Return: 0 or 1 (the exit status).
 */
static int tt_stats_prometheus(const struct tt_ctl *ctl, const char *file,
			       const struct tt_ctl_sessions *ss)
{
	char *tmp;
	FILE *f;
	int fd, ret;

	if (!file)
		return tt_prometheus_write(ctl->out, ss) ? 1 : 0;
	if (asprintf(&tmp, "%s.XXXXXX", file) < 0) {
		fprintf(ctl->err, "tierctl: stats: %s\n", strerror(ENOMEM));
		return 1;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(ctl->err, "tierctl: stats: cannot create a file next to '%s': %s\n",
			file, strerror(errno));
		free(tmp);
		return 1;
	}
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		ret = -errno;
	} else {
		/* readable by the exporter, whoever runs it */
		fchmod(fd, 0644);
		ret = tt_prometheus_write(f, ss);
		if (fclose(f) && !ret)
			ret = -errno;
	}
	if (!ret && rename(tmp, file))
		ret = -errno;
	if (ret) {
		fprintf(ctl->err, "tierctl: stats: cannot write '%s': %s\n",
			file, strerror(-ret));
		unlink(tmp);
	}
	free(tmp);
	return ret ? 1 : 0;
}

int tt_stats_main(const struct tt_ctl *ctl, int argc, char **argv)
{
	struct tt_ctl_sessions ss = { 0 };
	const char *file = NULL;
	bool prom = false;
	char *rest[3];
	uint32_t pid;
	struct tt_nl nl;
	int i, n = 0, ret;

	/* the verb's own options; what is left is [PID] */
	for (i = 0; i < argc; i++) {
		if (i && !strcmp(argv[i], "--prometheus")) {
			prom = true;
		} else if (i && !strcmp(argv[i], "-o")) {
			if (i + 1 >= argc) {
				fprintf(ctl->err, "tierctl stats: -o needs a file; try 'tierctl stats --help'\n");
				return 1;
			}
			file = argv[++i];
		} else if (n < 3) {
			rest[n++] = argv[i];
		} else {
			fprintf(ctl->err, "tierctl stats: unexpected argument '%s'; try 'tierctl stats --help'\n",
				argv[i]);
			return 1;
		}
	}
	if (file && !prom) {
		fprintf(ctl->err, "tierctl stats: -o '%s' is for --prometheus; try 'tierctl stats --help'\n",
			file);
		return 1;
	}
	if (prom && ctl->json) {
		fprintf(ctl->err, "tierctl stats: --prometheus and -j are two output formats: choose one\n");
		return 1;
	}
	if (tt_sessions_verb_fetch(ctl, "stats", n, rest, &nl, &pid, &ss)) {
		tt_sessions_free(&ss);
		return 1;
	}
	if (prom) {
		ret = tt_stats_prometheus(ctl, file, &ss);
		tt_nl_close(&nl);
		tt_sessions_free(&ss);
		return ret;
	}
	ret = pid ? tt_stats_process(ctl, &nl, &ss) : tt_stats_totals(ctl, &ss);
	if (ret == -ENOMEM || ret == -EINVAL)
		fprintf(ctl->err, "tierctl: stats: cannot print the output: %s\n",
			strerror(-ret));
	tt_nl_close(&nl);
	tt_sessions_free(&ss);
	return ret < 0 ? 1 : 0;
}
