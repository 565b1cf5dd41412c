// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * vm_usched: the move_pages backend's userspace scheduler on a real
 * two-tier machine (the QEMU guest of scripts/vmrun: node 0 with the CPUs,
 * node 1 memory only), without the kernel module:
 *
 *   scripts/vmrun --no-module -- build/lib/tests/vm_usched [-v]
 *
 * A synthetic trainer (N layers, each saving a tensor of pattern data in
 * its forward pass, busy compute per layer pass: 20 ms, or more where
 * the migration rate measured at the start (the median of 5 round
 * trips), with a thread computing meanwhile, says a layer's round trip
 * needs it) runs a few
 * iterations with TIERTRAIN_BACKEND=move_pages, then checks, each as one
 * "ok"/"not ok" line:
 *   evicted       after each planned forward end the layer's data shows
 *                 up on the slow node (residency polled);
 *   back          at each backward begin of a layer whose prefetch was on
 *                 time, all its data is on the fast node again;
 *   data          every tensor is intact at every backward begin and at
 *                 the end;
 *   timeline      per layer: eviction after the forward end, prefetch
 *                 after the eviction, on time ones ending before the
 *                 backward begin (tt_layers());
 *   counters      bytes_evicted == bytes_prefetched == bytes_to_slow ==
 *                 bytes_to_fast, rates measured, no late byte without a
 *                 late layer;
 *   sync_late     with TT_SCHED_SYNC_LATE every layer is all on the fast
 *                 node when tt_layer_begin(TT_BWD) returns;
 *   close         tt_close() right after a forward pass (data evicted,
 *                 prefetches pending) leaves everything on the fast node,
 *                 intact;
 *   budget        with a fast-tier budget of 6 MiB (the executor's, as in
 *                 the module) every tensor registration returns with at
 *                 most the budget (plus one huge page) of the saved
 *                 tensors on the fast node, victims counted, no overrun,
 *                 the data intact and all of it back after tt_close().
 * It ends with kselftest's "# Totals:" line. Exit status: 0 when every
 * check passed, 1 otherwise, 4 (kselftest's "skip") when the machine has
 * no second node.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tiertrain.h"

#define MAXL		16
#define MS		1000000ULL
#define WATCH_MIN_MS	20U	/* run_async(): a slow window the watch sees */
#define NODES		64
#define THP		(2UL << 20)

/**
 * struct trainer - the synthetic training process
 * @s:          session.
 * @fast:       the node the process runs on.
 * @nl:         layers (ids 1..nl).
 * @sz:         bytes of each layer's tensor.
 * @compute_ms: busy compute per layer pass.
 * @t:          the tensors.
 * @iter:       iterations run.
 * @watch:      this iteration polls the slow node after each forward end
 *              and records the fast bytes at each backward begin.
 * @slow_seen:  bytes seen on other nodes after the forward end.
 * @planned_seen: the plan evicted the layer at its forward end (watched).
 * @fast_at_bwd: bytes on the fast node right after the backward begin.
 * @bad_data:   tensors found changed.
 * @budget:     the session's fast-tier budget (0: none): forward() then
 *              measures the saved tensors on the fast node after each
 *              registration.
 * @peak_fast:  the most it measured.
 * @rate:       migration_rate()'s measurement, bytes/s (0: none).
 */
struct trainer {
	struct tt_session *s;
	int fast;
	unsigned int nl;
	size_t sz;
	unsigned int compute_ms;
	uint64_t *t[MAXL];
	unsigned int iter;
	int watch;
	uint64_t slow_seen[MAXL];
	unsigned int planned_seen[MAXL];
	uint64_t fast_at_bwd[MAXL];
	unsigned int bad_data;
	uint64_t budget;
	uint64_t peak_fast;
	uint64_t rate;
};

static int failures, passes, verbose;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif

static void check(int ok, const char *name, const char *fmt, ...)
	__printf(3, 4);

static void check(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%s %s: ", ok ? "ok" : "not ok", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		passes++;
	else
		failures++;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "vm_usched: %s: %s\n", what, strerror(err));
	exit(1);
}

static void busy_ms(unsigned int ms)
{
	uint64_t end = now_ns() + ms * MS;

	while (now_ns() < end)
		;
}

/* Bytes of [p, p + len) on the fast node and elsewhere. */
static void where(struct trainer *tr, const void *p, size_t len,
		  uint64_t *fast, uint64_t *other)
{
	uint64_t b[NODES], np, oth;
	int ret, i;

	ret = tt_residency_ex(tr->s, p, len, b, NODES, &np, &oth);
	if (ret)
		die("tt_residency", -ret);
	*fast = b[tr->fast];
	*other = oth;
	for (i = 0; i < NODES; i++)
		if (i != tr->fast)
			*other += b[i];
}

static uint64_t word(unsigned int iter, unsigned int id, size_t i)
{
	return ((uint64_t)iter << 40) ^ ((uint64_t)id << 32) ^ i;
}

static void fill(struct trainer *tr, unsigned int id)
{
	uint64_t *w = tr->t[id - 1];
	size_t i;

	for (i = 0; i < tr->sz / 8; i++)
		w[i] = word(tr->iter, id, i);
}

static int intact(struct trainer *tr, unsigned int id, unsigned int iter)
{
	const uint64_t *w = tr->t[id - 1];
	size_t i;

	for (i = 0; i < tr->sz / 8; i++)
		if (w[i] != word(iter, id, i))
			return 0;
	return 1;
}

static void call(int ret, const char *what)
{
	if (ret)
		die(what, -ret);
}

/* Layer @id's entry of tt_layers() into *@li: 0, or -1 when it has none. */
static int layer_info(struct trainer *tr, unsigned int id,
		      struct tt_layer_info *li)
{
	struct tt_layer_info info[MAXL];
	int n = tt_layers(tr->s, info, MAXL), i;

	for (i = 0; i < n && i < MAXL; i++)
		if (info[i].layer == id) {
			*li = info[i];
			return 0;
		}
	return -1;
}

/* Whether the current plan evicts something of layer @id. */
static int planned(struct trainer *tr, unsigned int id)
{
	struct tt_layer_info li;

	return !layer_info(tr, id, &li) && li.final_bytes > 0 &&
	       (li.status == TT_LAYER_ACCEPTED || li.status == TT_LAYER_MODIFIED);
}

/* Layer @id's prefetch began after its forward end in this iteration. */
static int prefetch_began(struct trainer *tr, unsigned int id)
{
	struct tt_layer_info li;

	return !layer_info(tr, id, &li) && li.last_prefetch_start_ns &&
	       li.last_prefetch_start_ns >= li.last_fwd_end_ns;
}

static void forward(struct trainer *tr, unsigned int id)
{
	uint64_t fast, other, end;

	call(tt_layer_begin(tr->s, id, TT_FWD), "tt_layer_begin(FWD)");
	fill(tr, id);
	call(tt_tensor_saved(tr->s, id, tr->t[id - 1], tr->sz),
	     "tt_tensor_saved");
	if (tr->budget) {
		uint64_t sum = 0;
		unsigned int l;

		for (l = 1; l <= id; l++) {
			where(tr, tr->t[l - 1], tr->sz, &fast, &other);
			sum += fast;
		}
		if (sum > tr->peak_fast)
			tr->peak_fast = sum;
	}
	busy_ms(tr->compute_ms);
	call(tt_layer_end(tr->s, id, TT_FWD), "tt_layer_end(FWD)");
	if (!tr->watch || !planned(tr, id))
		return;
	tr->planned_seen[id - 1] = 1;
	/*
	 * Until something shows on the slow node, at most 1 s, or until the
	 * layer's prefetch began (whatever moved is on its way back: waiting
	 * on would only delay the rest of the iteration past its plan).
	 */
	end = now_ns() + 1000 * MS;
	do {
		where(tr, tr->t[id - 1], tr->sz, &fast, &other);
		if (other || prefetch_began(tr, id))
			break;
		usleep(500);
	} while (now_ns() < end);
	tr->slow_seen[id - 1] = other;
}

static void backward(struct trainer *tr, unsigned int id)
{
	uint64_t fast, other;

	call(tt_layer_begin(tr->s, id, TT_BWD), "tt_layer_begin(BWD)");
	if (tr->watch) {
		where(tr, tr->t[id - 1], tr->sz, &fast, &other);
		tr->fast_at_bwd[id - 1] = fast;
	}
	if (!intact(tr, id, tr->iter))
		tr->bad_data++;
	busy_ms(tr->compute_ms);
	call(tt_layer_end(tr->s, id, TT_BWD), "tt_layer_end(BWD)");
}

static void iteration(struct trainer *tr, int watch)
{
	unsigned int l;

	tr->watch = watch;
	memset(tr->slow_seen, 0, sizeof(tr->slow_seen));
	memset(tr->planned_seen, 0, sizeof(tr->planned_seen));
	memset(tr->fast_at_bwd, 0, sizeof(tr->fast_at_bwd));
	call(tt_iter_begin(tr->s), "tt_iter_begin");
	for (l = 1; l <= tr->nl; l++)
		forward(tr, l);
	busy_ms(tr->compute_ms);
	for (l = tr->nl; l >= 1; l--)
		backward(tr, l);
	tr->iter++;
}

static int layers(struct trainer *tr, struct tt_layer_info *info)
{
	int n = tt_layers(tr->s, info, MAXL);

	if (n < 0)
		die("tt_layers", -n);
	return n;
}

static void print_layers(struct trainer *tr, const char *title)
{
	struct tt_layer_info info[MAXL];
	int n = layers(tr, info), i;

	static const char *const status[] = {
		"profiling", "accepted", "modified", "dropped",
	};

	printf("# %s (ms from the iteration start)\n", title);
	printf("# layer status    sz_MiB  szP_MiB  te_F   ts_B  trigger lead | fwd_end evict        prefetch      bwd    evicted late\n");
	for (i = 0; i < n && i < MAXL; i++)
		printf("# %5u %-9s %6.2f %8.2f %6.1f %6.1f %7.1f %4.1f | %7.1f %5.1f-%-6.1f %5.1f-%-6.1f %6.1f %7.2f %4.2f\n",
		       info[i].layer,
		       status[info[i].status & 3],
		       info[i].saved_bytes / 1048576.0,
		       info[i].final_bytes / 1048576.0,
		       info[i].fwd_end_ns / 1e6, info[i].bwd_start_ns / 1e6,
		       info[i].prefetch_ns / 1e6, info[i].lead_ns / 1e6,
		       info[i].last_fwd_end_ns / 1e6,
		       info[i].last_evict_start_ns / 1e6,
		       info[i].last_evict_end_ns / 1e6,
		       info[i].last_prefetch_start_ns / 1e6,
		       info[i].last_prefetch_end_ns / 1e6,
		       info[i].last_bwd_start_ns / 1e6,
		       info[i].last_evicted_bytes / 1048576.0,
		       info[i].last_late_bytes / 1048576.0);
}

static void print_stats(const struct tt_ioc_stats *st)
{
	printf("# iterations %llu events %llu accepted %llu modified %llu dropped %llu unknown %llu reprofiles %llu\n",
	       (unsigned long long)st->iterations,
	       (unsigned long long)st->events,
	       (unsigned long long)st->layers_accepted,
	       (unsigned long long)st->layers_modified,
	       (unsigned long long)st->layers_dropped,
	       (unsigned long long)st->layers_unknown,
	       (unsigned long long)st->reprofiles);
	printf("# evicted %.1f MiB prefetched %.1f MiB on time %.1f MiB late %.1f MiB (%llu) sync %.1f MiB ER %.0f MiB/s PR %.0f MiB/s busy %llu pages\n",
	       st->bytes_evicted / 1048576.0, st->bytes_prefetched / 1048576.0,
	       st->ontime_bytes / 1048576.0, st->late_bytes / 1048576.0,
	       (unsigned long long)st->late_count,
	       st->sync_fetched_bytes / 1048576.0, st->er_bps / 1048576.0,
	       st->pr_bps / 1048576.0,
	       (unsigned long long)st->total.skipped_busy);
}

static void print_watch(const struct trainer *tr)
{
	unsigned int l;

	for (l = 1; l <= tr->nl; l++)
		printf("# layer %u: %.2f MiB seen off the fast node after the forward end, %.2f MiB on it at the backward begin\n",
		       l, tr->slow_seen[l - 1] / 1048576.0,
		       tr->fast_at_bwd[l - 1] / 1048576.0);
}

static void open_session(struct trainer *tr, uint32_t flags)
{
	struct tt_ioc_sched cfg = { .valid = TT_SCHED_SET_FLAGS };

	setenv("TIERTRAIN_BACKEND", "move_pages", 1);
	tr->s = tt_open();
	if (!tr->s)
		die("tt_open", errno);
	cfg.flags = flags;
	call(tt_sched_set(tr->s, &cfg), "tt_sched_set");
	tr->iter = 0;
}

/* Iterations until one was planned for layer 1 (at most @max). */
static void warm_up(struct trainer *tr, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		iteration(tr, 0);
}

/*
 * Whether every tensor is all on the fast node, waiting up to 5 s for
 * prefetches still running (a backward pass does not wait for them).
 */
static int all_fast(struct trainer *tr, uint64_t *other_sum)
{
	uint64_t fast, other, end = now_ns() + 5000 * MS;
	unsigned int l;

	do {
		*other_sum = 0;
		for (l = 1; l <= tr->nl; l++) {
			where(tr, tr->t[l - 1], tr->sz, &fast, &other);
			*other_sum += other;
		}
		if (!*other_sum)
			return 1;
		usleep(2000);
	} while (now_ns() < end);
	return 0;
}

/* Layers evicted in the latest iteration. */
static unsigned int nr_evicted(struct trainer *tr)
{
	struct tt_layer_info info[MAXL];
	int n = layers(tr, info), i;
	unsigned int k = 0;

	for (i = 0; i < n && i < MAXL; i++)
		k += info[i].last_evicted_bytes > 0;
	return k;
}

static void run_async(struct trainer *tr, unsigned int iters)
{
	struct tt_layer_info info[MAXL];
	struct tt_ioc_stats st;
	unsigned int l, evicted = 0, seen = 0, ontime = 0, back = 0;
	unsigned int order_ok = 0, tl_checked = 0, tries, watchable = 0;
	uint64_t other;
	int n, i, all_ok = 0;

	open_session(tr, 0);
	warm_up(tr, iters);
	/*
	 * The last iteration watches; a slow guest can make an iteration miss
	 * its plan (nothing evicted): then watch another one.
	 */
	for (tries = 0; tries < 5; tries++) {
		iteration(tr, 1);
		all_ok = all_fast(tr, &other);
		if (nr_evicted(tr))
			break;
	}
	n = layers(tr, info);
	if (verbose) {
		print_layers(tr, "last iteration, prefetch in the background");
		print_watch(tr);
	}
	for (i = 0; i < n; i++) {
		const struct tt_layer_info *li = &info[i];
		int late = li->last_late_bytes > 0;

		l = li->layer;
		if (l < 1 || l > tr->nl || !li->last_evicted_bytes)
			continue;
		evicted++;
		/*
		 * The watch polls every 0.5 ms, which a loaded guest stretches
		 * to tens: a layer whose prefetch began within WATCH_MIN_MS of
		 * its eviction's end (a few pages of it, due at once) can come
		 * and go unseen
		 */
		if (li->last_prefetch_start_ns >=
		    li->last_evict_end_ns + WATCH_MIN_MS * MS) {
			watchable++;
			seen += tr->slow_seen[l - 1] > 0;
		}
		/*
		 * Eviction after the forward end, prefetch after the eviction,
		 * and an on-time one done by the backward begin.
		 */
		tl_checked++;
		order_ok += li->last_evict_start_ns >= li->last_fwd_end_ns &&
			    li->last_evict_end_ns >= li->last_evict_start_ns &&
			    li->last_prefetch_start_ns >= li->last_evict_end_ns &&
			    (late || li->last_prefetch_end_ns <=
					     li->last_bwd_start_ns);
		if (late)
			continue;
		ontime++;
		back += tr->fast_at_bwd[l - 1] == tr->sz;
	}
	check(evicted > 0, "evicted",
	      "%u of %u layers evicted in the last iteration, %u of them seen on the slow node after the forward end",
	      evicted, tr->nl, seen);
	check(watchable > 0 && seen == watchable, "slow_between",
	      "every evicted layer was on the slow node between its forward end and its prefetch (%u/%u; %u more whose prefetch began within %u ms of the eviction's end, not watched)",
	      seen, watchable, evicted - watchable, WATCH_MIN_MS);
	check(back == ontime, "back",
	      "%u on-time layers, %u of them all on the fast node at their backward begin",
	      ontime, back);
	check(order_ok == tl_checked, "timeline",
	      "%u of %u evicted layers: evict after forward end, prefetch after evict, on-time ones done by the backward begin",
	      order_ok, tl_checked);
	check(tr->bad_data == 0, "data", "%u tensors changed", tr->bad_data);
	check(all_ok, "all_fast_after",
	      "%llu bytes off the fast node 5 s after the last iteration",
	      (unsigned long long)other);

	call(tt_stats(tr->s, &st), "tt_stats");
	if (verbose)
		print_stats(&st);
	check(st.bytes_evicted > 0 && st.bytes_evicted == st.bytes_prefetched &&
	      st.bytes_to_slow == st.bytes_evicted &&
	      st.bytes_to_fast == st.bytes_prefetched && st.migrate_calls == 0,
	      "counters",
	      "evicted %llu prefetched %llu to_slow %llu to_fast %llu",
	      (unsigned long long)st.bytes_evicted,
	      (unsigned long long)st.bytes_prefetched,
	      (unsigned long long)st.bytes_to_slow,
	      (unsigned long long)st.bytes_to_fast);
	check(st.ontime_bytes + st.late_bytes > 0 &&
	      (st.late_bytes == 0) == (st.late_count == 0) &&
	      st.iterations == tr->iter &&
	      st.events == (uint64_t)tr->iter * (1 + 5 * tr->nl),
	      "accounting",
	      "on time %llu late %llu (%llu layers), %llu iterations, %llu events",
	      (unsigned long long)st.ontime_bytes,
	      (unsigned long long)st.late_bytes,
	      (unsigned long long)st.late_count,
	      (unsigned long long)st.iterations,
	      (unsigned long long)st.events);
	check(st.er_bps != 1024ULL << 20 && st.pr_bps != 1024ULL << 20,
	      "rates", "ER %.0f MiB/s, PR %.0f MiB/s measured",
	      st.er_bps / 1048576.0, st.pr_bps / 1048576.0);
	tt_close(tr->s);
	tr->s = NULL;
}

static void run_sync(struct trainer *tr, unsigned int iters)
{
	struct tt_ioc_stats st;
	unsigned int l, all = 0, tries;
	uint64_t other;
	int ok;

	open_session(tr, TT_SCHED_SYNC_LATE);
	warm_up(tr, iters);
	for (tries = 0; tries < 5; tries++) {
		iteration(tr, 1);
		if (nr_evicted(tr))
			break;
	}
	if (verbose) {
		print_layers(tr, "last iteration, TT_SCHED_SYNC_LATE");
		print_watch(tr);
	}
	for (l = 1; l <= tr->nl; l++)
		all += tr->fast_at_bwd[l - 1] == tr->sz;
	call(tt_stats(tr->s, &st), "tt_stats");
	if (verbose)
		print_stats(&st);
	check(all == tr->nl, "sync_late",
	      "%u of %u layers all on the fast node when tt_layer_begin(BWD) returned; %.1f MiB fetched by it",
	      all, tr->nl, st.sync_fetched_bytes / 1048576.0);
	check(st.sync_fetched_bytes <= st.late_bytes, "sync_counted",
	      "sync fetched %llu <= late %llu",
	      (unsigned long long)st.sync_fetched_bytes,
	      (unsigned long long)st.late_bytes);
	ok = all_fast(tr, &other);
	check(tr->bad_data == 0 && ok, "sync_data",
	      "%u tensors changed, %llu bytes off the fast node", tr->bad_data,
	      (unsigned long long)other);
	tt_close(tr->s);
	tr->s = NULL;
}

/*
 * Hints on the userspace scheduler: layer 2 pinned is never evicted while
 * the others are; WILL_USE brings an evicted tensor back at once; RETIRE
 * ends the pin.
 */
static void run_hints(struct trainer *tr, unsigned int iters)
{
	uint64_t fast = 0, other = 0, end;
	unsigned int tries, l, nplanned;
	int ok;

	open_session(tr, 0);
	/*
	 * The rates this guest was measured at, set: these checks are about
	 * the hints, not about the rate estimates (Documentation/scheduler.md,
	 * "Lead time": a rate miss).
	 */
	if (tr->rate) {
		struct tt_ioc_sched cfg = {
			.valid = TT_SCHED_SET_RATES,
			.er_bps = tr->rate, .pr_bps = tr->rate,
		};

		call(tt_sched_set(tr->s, &cfg), "tt_sched_set(rates)");
	}
	warm_up(tr, iters);
	call(tt_hint(tr->s, tr->t[1], tr->sz, TT_HINT_PIN_FAST), "tt_hint(PIN_FAST)");
	for (tries = 0; tries < 5; tries++) {
		iteration(tr, 1);
		if (nr_evicted(tr))
			break;
	}
	check(nr_evicted(tr) > 0 && !tr->slow_seen[1], "hint_pin",
	      "layer 2 pinned: %llu bytes seen slow; %u layers evicted",
	      (unsigned long long)tr->slow_seen[1], nr_evicted(tr));

	/*
	 * WILL_USE on an evicted tensor: back on the fast node at once. A
	 * busy guest can miss its rates and leave layer 1 fast for several
	 * iterations (Documentation/scheduler.md, "Lead time"): up to 20.
	 * Only layer 1 is watched: the watch's wait for a layer whose planned
	 * bytes are pinned (layer 2) would delay the rest of the iteration
	 * past its plan.
	 */
	for (tries = 0; tries < 20; tries++) {
		memset(tr->slow_seen, 0, sizeof(tr->slow_seen));
		call(tt_iter_begin(tr->s), "tt_iter_begin");
		for (l = 1; l <= tr->nl; l++) {
			tr->watch = l == 1;
			forward(tr, l);
		}
		tr->watch = 0;
		if (tr->slow_seen[0])
			break;
		for (l = tr->nl; l >= 1; l--)
			backward(tr, l);
		tr->iter++;
	}
	ok = tr->slow_seen[0] > 0;
	if (ok) {
		call(tt_hint(tr->s, tr->t[0], tr->sz, TT_HINT_WILL_USE),
		     "tt_hint(WILL_USE)");
		end = now_ns() + 2000 * MS;
		do {
			where(tr, tr->t[0], tr->sz, &fast, &other);
			if (fast == tr->sz)
				break;
			usleep(1000);
		} while (now_ns() < end);
		busy_ms(tr->compute_ms);
		for (l = tr->nl; l >= 1; l--)
			backward(tr, l);
		tr->iter++;
	}
	if (verbose || !ok || fast != tr->sz)
		print_layers(tr, "last iteration of WILL_USE");
	check(ok && fast == tr->sz, "hint_will_use",
	      "layer 1 evicted (%d, in %u iterations), then %llu of %zu bytes back after WILL_USE",
	      ok, tries + !!ok, (unsigned long long)fast, tr->sz);

	/*
	 * RETIRE: layer 2 is evicted again in an iteration whose plan evicts
	 * it (a plan can leave it fast for timing on a busy guest: a few
	 * iterations, counted in the message).
	 */
	call(tt_hint(tr->s, tr->t[1], tr->sz, TT_HINT_RETIRE), "tt_hint(RETIRE)");
	for (tries = 0, nplanned = 0; tries < 10; tries++) {
		iteration(tr, 1);
		nplanned += tr->planned_seen[1];
		if (tr->slow_seen[1])
			break;
	}
	if (verbose || !tr->slow_seen[1])
		print_layers(tr, "last iteration after RETIRE of layer 2");
	ok = all_fast(tr, &other);
	check(tr->slow_seen[1] > 0 && tr->bad_data == 0 && ok, "hint_retire",
	      "layer 2 evicted again after RETIRE: %llu bytes (planned in %u of %u iterations); %u tensors changed, %llu bytes off the fast node",
	      (unsigned long long)tr->slow_seen[1], nplanned,
	      tries < 10 ? tries + 1 : tries, tr->bad_data,
	      (unsigned long long)other);
	tt_close(tr->s);
	tr->s = NULL;
}

static void run_close(struct trainer *tr, unsigned int iters)
{
	uint64_t other, out = 0, fast;
	unsigned int l, ok = 1, tries;
	int fast_ok;

	open_session(tr, 0);
	warm_up(tr, iters);
	/*
	 * A forward pass, then close with the data out (a slow guest can make
	 * an iteration miss its plan: then finish it and try again).
	 */
	for (tries = 0; tries < 5 && !out; tries++) {
		if (tries) {
			busy_ms(tr->compute_ms);
			for (l = tr->nl; l >= 1; l--)
				backward(tr, l);
			tr->iter++;
		}
		call(tt_iter_begin(tr->s), "tt_iter_begin");
		for (l = 1; l <= tr->nl; l++)
			forward(tr, l);
		usleep(20 * 1000);
		for (l = 1; l <= tr->nl; l++) {
			where(tr, tr->t[l - 1], tr->sz, &fast, &other);
			out += other;
		}
	}
	tt_close(tr->s);
	tr->s = NULL;
	/* A new session only to read residency. */
	setenv("TIERTRAIN_BACKEND", "move_pages", 1);
	tr->s = tt_open();
	if (!tr->s)
		die("tt_open", errno);
	for (l = 1; l <= tr->nl; l++)
		ok &= intact(tr, l, tr->iter);
	check(out > 0, "close_out", "%.1f MiB on the slow node at tt_close()",
	      out / 1048576.0);
	fast_ok = all_fast(tr, &other);
	check(fast_ok && ok, "close",
	      "after tt_close(): %llu bytes off the fast node, data %s",
	      (unsigned long long)other, ok ? "intact" : "CHANGED");
	tt_close(tr->s);
	tr->s = NULL;
}

/* The session's own fast-tier budget, kept by the executor's victims. */
static void run_budget(struct trainer *tr, unsigned int iters)
{
	struct tt_ioc_sched cfg = {
		.valid = TT_SCHED_SET_BUDGET,
		.budget_mib = 6,
	};
	struct tt_ioc_stats st;
	uint64_t other;
	unsigned int l, ok = 1;
	int fast_ok;

	open_session(tr, 0);
	call(tt_sched_set(tr->s, &cfg), "tt_sched_set(budget)");
	tr->budget = (uint64_t)cfg.budget_mib << 20;
	tr->peak_fast = 0;
	tr->bad_data = 0;
	warm_up(tr, iters);
	call(tt_stats(tr->s, &st), "tt_stats");
	if (verbose)
		print_stats(&st);
	check(st.budget_bytes == tr->budget && st.victims > 0 &&
	      st.victim_bytes > 0, "budget_victims",
	      "budget %.1f MiB, %llu victims, %.1f MiB",
	      st.budget_bytes / 1048576.0, (unsigned long long)st.victims,
	      st.victim_bytes / 1048576.0);
	check(tr->peak_fast <= tr->budget + THP, "budget_kept",
	      "at most %.1f MiB of saved tensors on the fast node when a registration returned (budget %.1f MiB)",
	      tr->peak_fast / 1048576.0, tr->budget / 1048576.0);
	/*
	 * Over the budget only when said so (budget_overruns), and that only
	 * when the plan's timing slipped: a registration finds the other
	 * layers' prefetches for the coming backward pass already in flight
	 * (no victims: Documentation/scheduler.md), which a prefetch can
	 * only be when prefetches run late, as on a loaded host.
	 */
	check((st.fast_peak_bytes <= tr->budget) == !st.budget_overruns &&
	      (!st.budget_overruns || st.late_count),
	      "budget_counted", "fast peak %.1f MiB, %llu overruns, %llu layer-iterations late",
	      st.fast_peak_bytes / 1048576.0,
	      (unsigned long long)st.budget_overruns,
	      (unsigned long long)st.late_count);
	tt_close(tr->s);
	tr->s = NULL;
	tr->budget = 0;
	/* A new session only to read residency. */
	setenv("TIERTRAIN_BACKEND", "move_pages", 1);
	tr->s = tt_open();
	if (!tr->s)
		die("tt_open", errno);
	for (l = 1; l <= tr->nl; l++)
		ok &= intact(tr, l, tr->iter - 1);
	fast_ok = all_fast(tr, &other);
	check(fast_ok && ok && !tr->bad_data, "budget_data",
	      "after tt_close(): %llu bytes off the fast node, data %s, %u tensors changed during the run",
	      (unsigned long long)other, ok ? "intact" : "CHANGED",
	      tr->bad_data);
	tt_close(tr->s);
	tr->s = NULL;
}

/* migration_rate()'s mover: the round trip, timed. */
struct rate_probe {
	const struct trainer *tr;
	struct tt_session *s;
	char *p;
	uint64_t ns;
	int ok;
	volatile int done;
};

static void *rate_probe_fn(void *arg)
{
	struct rate_probe *rp = arg;
	const struct trainer *tr = rp->tr;
	uint64_t t0 = now_ns();

	rp->ok = !tt_migrate(rp->s, rp->p, tr->sz, tr->fast ? 0 : 1) &&
		 !tt_migrate(rp->s, rp->p, tr->sz, tr->fast);
	rp->ns = now_ns() - t0;
	__atomic_store_n(&rp->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* migration_rate()'s rounds: the median is the rate */
#define RATE_ROUNDS	5

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The rate this guest migrates at while the process computes, bytes/s:
 * one tensor-sized buffer moved to the other node and back by another
 * thread with tt_migrate() on the move_pages backend (the scheduler's own
 * path) while this one spins, as a training thread does (each TLB
 * shootdown then waits for a busy CPU); the median of RATE_ROUNDS round
 * trips (one alone can catch the guest in a stall: a CI run measured 1
 * MiB/s, then the run's own moves 42-80 MiB/s); 0 when it cannot be
 * measured. *@lo and *@hi get the slowest and fastest round's rate.
 */
static uint64_t migration_rate(const struct trainer *tr, uint64_t *lo,
			       uint64_t *hi)
{
	uint64_t ns[RATE_ROUNDS];
	struct rate_probe rp = { .tr = tr };
	unsigned int i, n = 0;
	pthread_t th;
	char *p;

	p = mmap(NULL, tr->sz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	memset(p, 1, tr->sz);
	setenv("TIERTRAIN_BACKEND", "move_pages", 1);
	rp.s = tt_open();
	for (i = 0; rp.s && i < RATE_ROUNDS; i++) {
		rp.p = p;
		rp.ok = 0;
		rp.ns = 0;
		__atomic_store_n(&rp.done, 0, __ATOMIC_RELEASE);
		if (pthread_create(&th, NULL, rate_probe_fn, &rp))
			break;
		while (!__atomic_load_n(&rp.done, __ATOMIC_ACQUIRE))
			;
		pthread_join(th, NULL);
		if (!rp.ok || !rp.ns)
			break;
		ns[n++] = rp.ns;
	}
	tt_close(rp.s);
	munmap(p, tr->sz);
	if (n < RATE_ROUNDS)
		return 0;
	qsort(ns, n, sizeof(ns[0]), cmp_u64);
	*lo = (uint64_t)(2.0 * tr->sz * 1e9 / ns[n - 1]);
	*hi = (uint64_t)(2.0 * tr->sz * 1e9 / ns[0]);
	return (uint64_t)(2.0 * tr->sz * 1e9 / ns[n / 2]);
}

static void print_usage(void)
{
	printf("usage: %s [-v] [-l LAYERS] [-s MIB] [-c COMPUTE_MS] [-i WARMUP_ITERS]\n",
	       program_invocation_short_name);
}

int main(int argc, char **argv)
{
	struct trainer tr = { .nl = 4, .sz = 4 << 20, .compute_ms = 20 };
	unsigned int iters = 4, cpu, node, l, min_ms;
	int opt, compute_set = 0;
	uint64_t rate, rate_lo = 0, rate_hi = 0;

	while ((opt = getopt(argc, argv, "vl:s:c:i:h")) != -1) {
		switch (opt) {
		case 'v':
			verbose = 1;
			break;
		case 'l':
			tr.nl = strtoul(optarg, NULL, 0);
			break;
		case 's':
			tr.sz = strtoul(optarg, NULL, 0) << 20;
			break;
		case 'c':
			tr.compute_ms = strtoul(optarg, NULL, 0);
			compute_set = 1;
			break;
		case 'i':
			iters = strtoul(optarg, NULL, 0);
			break;
		default:
			print_usage();
			return opt == 'h' ? 0 : 2;
		}
	}
	if (tr.nl < 1 || tr.nl > MAXL || !tr.sz || iters < 2) {
		fprintf(stderr, "vm_usched: -l must be 1..%d, -s > 0, -i >= 2\n",
			MAXL);
		return 2;
	}
	if (getcpu(&cpu, &node))
		die("getcpu", errno);
	tr.fast = (int)node;
	if (access("/sys/devices/system/node/node1", F_OK)) {
		printf("# SKIP: no second NUMA node\n");
		printf("# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0\n");
		return 4;
	}
	/*
	 * Each tensor starts on a 2 MiB boundary: move_pages(2) moves a
	 * transparent huge page whole, so one straddling two tensors would
	 * move with either.
	 */
	for (l = 0; l < tr.nl; l++) {
		char *p = mmap(NULL, tr.sz + THP, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			die("mmap", errno);
		tr.t[l] = (uint64_t *)(((uintptr_t)p + THP - 1) & ~(THP - 1));
	}
	/*
	 * The scheduler plans with the rates it measures and keeps fast a
	 * layer whose round trip does not fit in its idle time: without -c,
	 * a pass computes long enough that layer 1's idle time (2 x layers -
	 * 1 passes) holds two round trips at the rate this guest migrates.
	 */
	rate = migration_rate(&tr, &rate_lo, &rate_hi);
	tr.rate = rate;
	if (!compute_set && rate) {
		min_ms = (unsigned int)(2 * 2 * 1000.0 * tr.sz / rate /
					(2 * tr.nl - 1)) + 1;
		if (min_ms > tr.compute_ms)
			tr.compute_ms = min_ms;
	}
	printf("# vm_usched: migration rate %.0f MiB/s measured (median of %d round trips, %.0f-%.0f)\n",
	       rate / 1048576.0, RATE_ROUNDS, rate_lo / 1048576.0,
	       rate_hi / 1048576.0);
	printf("# vm_usched: %u layers of %zu MiB, %u ms compute per pass, fast node %d, %u warm-up iterations\n",
	       tr.nl, tr.sz >> 20, tr.compute_ms, tr.fast, iters);
	run_async(&tr, iters);
	run_sync(&tr, iters);
	run_hints(&tr, iters);
	run_close(&tr, iters);
	run_budget(&tr, iters);
	/* The summary line scripts/check reads (kselftest's format). */
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       passes, failures);
	return failures ? 1 : 0;
}
