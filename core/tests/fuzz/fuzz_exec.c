// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fuzz_exec - libFuzzer harness of the executor (core/exec.c,
 * core/exec_budget.c) in the fake single-threaded world of the unit tests
 * (../exec_fake.h): fake clock, pages on a fast and a slow node, a work
 * queue and a timer this program runs.
 *
 * The input is a program. Its first bytes choose the session (flags,
 * profile_iters, stay, rates, chunk size, the limits); then each byte
 * chooses an operation and the next bytes its arguments: events (one or
 * a batch; well-formed layer, iteration and tensor events, or any field
 * values), hints through tt_hint_check(), settings through
 * tt_exec_cfg_check() and the nodes' check, running a queued work item
 * the input picks (or all of them), firing the timer, advancing the clock
 * (up to huge steps), how the mover goes (all, fail, half, busy), a
 * mover's late landing (tt_exec_landed()), failing allocations, the
 * module-wide budget and its visits, the reads (stats,
 * layers, resident, settings), and closing (with or without
 * tt_exec_fetch_all()), which ends the program.
 *
 * After every operation the invariants of exec.h's contracts are checked
 * (check()): the lock is free; every queued item is a live layer's evict
 * or prefetch item; every layer's state is an enum value, its chunk
 * cursors within its chunk array; the budget's registered bytes are what
 * the layers' ranges hold and its slow bytes at most those; fast and peak
 * as tt_exec_stats() reports them, the peak at least the fast bytes once
 * an event call returned; every counter monotonic; errors only the ones
 * the uapi documents. Closing frees everything the executor was given
 * (the fake's count of live objects is 0; ASan's leak check).
 */
#include "fuzz.h"

#define FAKE_CHECK(cond) FZ_CHECK(cond, "fake world")
#include "../exec_fake.h"

#include "../../event.h"

/* The clock never passes this (584 years of ns would wrap the kernel's). */
#define CLK_MAX		(1ULL << 62)
#define TASK_SIZE	(1ULL << 47)
#define NR_NODES	2

#ifdef FZ_EXEC_VERBOSE		/* to see what an input does */
#define VLOG(...) fprintf(stderr, __VA_ARGS__)
#else
#define VLOG(...) do { } while (0)
#endif

static struct tt_sched_stats prev;
static int peak_due;

/* An address: in the fake memory (page-wise or not) or anywhere. */
static u64 addr(struct fz *f)
{
	uint8_t k = fz_u8(f);

	switch (k % 4) {
	case 0:
		return BASE + (fz_u16(f) % (NPAGES + 1)) * PG;
	case 1:
		return BASE + fz_u32(f) % (SPACE + PG);
	case 2:
		return BASE + (fz_u8(f) % 32) * (2 * MIB);
	default:
		return fz_u64(f);
	}
}

static u64 len(struct fz *f)
{
	uint8_t k = fz_u8(f);

	switch (k % 4) {
	case 0:
		return (u64)(fz_u8(f) % 65) * PG;
	case 1:
		return (u64)(fz_u8(f) % 33) * MIB;
	case 2:
		return fz_u16(f);
	default:
		return fz_u64(f);
	}
}

static unsigned int layer_id(struct fz *f)
{
	uint8_t k = fz_u8(f);

	return k < 224 ? k % 8 : fz_u32(f);
}

static void one_event(struct fz *f, struct tt_event *ev)
{
	uint8_t k = fz_u8(f);

	memset(ev, 0, sizeof(*ev));
	switch (k % 8) {
	case 0:
		ev->type = TT_EV_ITER_BEGIN;
		break;
	case 1:
	case 2:
		ev->type = k % 8 == 1 ? TT_EV_LAYER_BEGIN : TT_EV_LAYER_END;
		ev->flags = k & 0x10 ? TT_BWD : TT_FWD;
		ev->layer = layer_id(f);
		break;
	case 3:
	case 4:
	case 5:
		ev->type = TT_EV_TENSOR_SAVED;
		ev->flags = k & 0x10 ? TT_EV_PERSISTENT : 0;
		ev->layer = layer_id(f);
		ev->addr = addr(f);
		ev->len = len(f);
		break;
	case 6:			/* a stamped event, any time */
		ev->type = 1 + fz_u8(f) % 4;
		ev->flags = TT_EV_TIMESTAMP |
			    (ev->type == TT_EV_LAYER_BEGIN ||
			     ev->type == TT_EV_LAYER_END ? TT_FWD << (k >> 7) : 0);
		ev->layer = ev->type == TT_EV_ITER_BEGIN ? 0 : layer_id(f);
		ev->ts_ns = fz_u8(f) & 1 ? clk - fz_u32(f) % 1000000 :
					   fz_u64(f);
		if (ev->type == TT_EV_TENSOR_SAVED) {
			ev->addr = addr(f);
			ev->len = len(f);
		}
		break;
	default:		/* any fields */
		ev->type = fz_u16(f) % 6;
		ev->flags = fz_u16(f);
		ev->layer = fz_u32(f);
		ev->ts_ns = fz_u64(f);
		ev->addr = fz_u64(f);
		ev->len = fz_u64(f);
		break;
	}
}

static int is_event_error(int ret)
{
	return ret == 0 || ret == -TT_EXEC_EINVAL || ret == -TT_EXEC_EOPNOTSUPP ||
	       ret == -TT_EXEC_ENOSPC || ret == -TT_EXEC_EOVERFLOW ||
	       ret == -TT_EXEC_EFAULT || ret == -TT_EXEC_ENOMEM ||
	       ret == -TT_EXEC_EINTR;
}

static void events(struct fz *f, unsigned int n)
{
	struct tt_event ev[8];
	unsigned int i, done = ~0U;
	int ret;

	for (i = 0; i < n; i++)
		one_event(f, &ev[i]);
	for (i = 0; i < n; i++)
		VLOG("event type %u flags %#x layer %u ts %llu addr %#llx len %#llx\n",
		     ev[i].type, ev[i].flags, ev[i].layer,
		     (u64)ev[i].ts_ns, (u64)ev[i].addr, (u64)ev[i].len);
	ret = tt_exec_events(&X, ev, n, clk, &done);
	VLOG("  -> %d done %u\n", ret, done);
	FZ_CHECK(is_event_error(ret), "tt_exec_events returned %d", ret);
	FZ_CHECK(ret ? done < n : done == n, "ret %d done %u of %u", ret,
		 done, n);
	if (ret && done < n)	/* the refused event alone: its check */
		FZ_CHECK(tt_event_check(&ev[done]) == 0 ||
			 tt_event_check(&ev[done]) == ret,
			 "event %u refused with %d, its check says %d", done,
			 ret, tt_event_check(&ev[done]));
	peak_due = 1;
}

static void hint(struct fz *f)
{
	struct tt_ioc_hint req = { 0 };
	__u64 start, end;
	uint8_t k = fz_u8(f);
	int ret;

	req.addr = addr(f);
	req.len = len(f);
	req.hint = k < 240 ? 1U << (k % 4) : fz_u32(f);
	if (k >= 250)
		req.reserved = fz_u8(f);
	if (tt_hint_check(&req, PG, TASK_SIZE, &start, &end))
		return;
	ret = tt_exec_hint(&X, start, end, req.hint);
	VLOG("hint %#x [%#llx, %#llx) -> %d\n", req.hint, (u64)start,
	     (u64)end, ret);
	FZ_CHECK(ret == 0 || ret == -TT_EXEC_ENOSPC || ret == -TT_EXEC_ENOMEM ||
		 ret == -TT_EXEC_EINTR || ret == -TT_EXEC_ESRCH,
		 "tt_exec_hint returned %d", ret);
}

static void cfg(struct fz *f)
{
	struct tt_ioc_sched req = { 0 }, got;
	uint8_t k = fz_u8(f);

	req.valid = k < 200 ? 1U << (k % 6) : fz_u8(f);
	req.flags = fz_u8(f) < 200 ? fz_u16(f) & TT_SCHED_FLAGS_ALL : fz_u32(f);
	req.profile_iters = fz_u8(f) < 200 ? fz_u8(f) % 4 : fz_u32(f);
	req.budget_mib = fz_u8(f) < 200 ? fz_u8(f) % 80 : fz_u32(f);
	req.stay_ns = fz_u64(f);
	req.er_bps = fz_u8(f) < 200 ? RATE >> (fz_u8(f) % 40) : fz_u64(f);
	req.pr_bps = fz_u8(f) < 200 ? RATE >> (fz_u8(f) % 40) : fz_u64(f);
	req.slow_node = (int8_t)fz_u8(f) % 3;
	req.fast_node = (int8_t)fz_u8(f) % 3;
	if (tt_exec_cfg_check(&req))
		return;
	if (req.valid & TT_SCHED_SET_NODES) {	/* the drivers' node check */
		if (req.slow_node >= 0 && t_node_check(&X, req.slow_node))
			return;
		if (req.fast_node >= 0 && t_node_check(&X, req.fast_node))
			return;
	}
	VLOG("cfg valid %#x flags %#x budget %u\n", req.valid, req.flags,
	     req.budget_mib);
	tt_exec_cfg_set(&X, &req);
	tt_exec_cfg_get(&X, &got);
	FZ_CHECK(got.valid == TT_SCHED_SET_ALL, "valid %#x", got.valid);
	if (req.valid & TT_SCHED_SET_FLAGS)
		FZ_CHECK(got.flags == req.flags, "flags %#x set, %#x got",
			 req.flags, got.flags);
	if (req.valid & TT_SCHED_SET_PROFILE)
		FZ_CHECK(got.profile_iters == req.profile_iters,
			 "profile_iters %u set, %u got", req.profile_iters,
			 got.profile_iters);
	if (req.valid & TT_SCHED_SET_BUDGET)
		FZ_CHECK(got.budget_mib == req.budget_mib,
			 "budget %u set, %u got", req.budget_mib,
			 got.budget_mib);
}

static void advance(u64 d)
{
	clk = d > CLK_MAX - clk ? CLK_MAX : clk + d;
}

static void fire(void)
{
	if (!timer_at)
		return;
	if (clk < timer_at)	/* it fires at or after its time */
		clk = timer_at < CLK_MAX ? timer_at : CLK_MAX;
	timer_at = 0;
	tt_exec_timer(&X);
}

static int is_layer(const struct tt_exec_layer *l)
{
	unsigned int i, n = X.tl.n;

	for (i = 0; i < n; i++)
		if (tt_exec_layer_at(&X, i) == l)
			return 1;
	return 0;
}

#define MONO(field) \
	FZ_CHECK(st.field >= prev.field, #field " went from %llu to %llu", \
		 prev.field, st.field)

static void check(void)
{
	struct tt_sched_stats st;
	unsigned long long held, slow, h = 0;
	unsigned int i, n;

	FZ_CHECK(lock_depth == 0, "lock depth %d after a call", lock_depth);
	for (i = 0; i < qn; i++) {
		FZ_CHECK(q[i].what == TT_EXEC_WORK_EVICT ||
			 q[i].what == TT_EXEC_WORK_PREFETCH, "item %d", q[i].what);
		FZ_CHECK(is_layer(q[i].l), "queued item %u of no layer", i);
	}
	n = tt_exec_nr_layers(&X);
	FZ_CHECK(n <= fake_lim[TT_EXEC_LIM_MAX_LAYERS], "%u layers", n);
	for (i = 0; i < n; i++) {
		const struct tt_exec_layer *l = tt_exec_layer_at(&X, i);
		const struct tt_exec_link *e;

		FZ_CHECK(l, "layer %u of %u missing", i, n);
		FZ_CHECK(l->state <= TT_EXEC_PREFETCHING, "layer %u state %d",
			 l->id, l->state);
		FZ_CHECK(l->nr_chunks <= l->chunk_cap &&
			 l->next_chunk <= l->nr_chunks &&
			 (l->state != TT_EXEC_EVICTING ||
			  l->ev_next <= l->nr_chunks),
			 "layer %u chunks: next %u ev_next %u nr %u cap %u",
			 l->id, l->next_chunk, l->ev_next, l->nr_chunks,
			 l->chunk_cap);
		FZ_CHECK(l->returned <= l->evicted,
			 "layer %u returned %llu of %llu evicted", l->id,
			 l->returned, l->evicted);
		VLOG("  layer %u state %d evicted %llu returned %llu chunks %u/%u\n",
		     l->id, l->state, l->evicted, l->returned, l->next_chunk,
		     l->nr_chunks);
		for (e = l->ranges.next; e != &l->ranges; e = e->next) {
			const struct tt_exec_range *r = (const void *)e;

			VLOG("    range [%#llx, %#llx) taken %llu\n", r->start,
			     r->end, r->taken);

			FZ_CHECK(r->start < r->end && r->start % PG == 0 &&
				 r->end % PG == 0 && r->start >= BASE &&
				 r->end <= BASE + SPACE,
				 "range [%#llx, %#llx)", r->start, r->end);
			h += r->end - r->start;
		}
	}
	FZ_CHECK(X.nr_ranges <= fake_lim[TT_EXEC_LIM_MAX_RANGES],
		 "%lu ranges", X.nr_ranges);
	tt_exec_resident(&X, &held, &slow);
	FZ_CHECK(held == h && X.bud.held == h,
		 "held %llu, budget's %llu, the ranges hold %llu", held,
		 X.bud.held, h);
	FZ_CHECK(X.bud.slow <= X.bud.held, "slow %llu of %llu held",
		 X.bud.slow, X.bud.held);
	FZ_CHECK(X.bud.busy == 0, "%u victim evictions after a call",
		 X.bud.busy);
	VLOG("  held %llu slow %llu nr_layers %u qn %u clk %llu\n",
	     X.bud.held, X.bud.slow, n, qn, clk);

	tt_exec_stats(&X, &st);
	FZ_CHECK(st.fast_registered_bytes == X.bud.held - X.bud.slow,
		 "fast %llu", st.fast_registered_bytes);
	if (peak_due)
		FZ_CHECK(st.fast_peak_bytes >= st.fast_registered_bytes,
			 "peak %llu under fast %llu", st.fast_peak_bytes,
			 st.fast_registered_bytes);
	peak_due = 0;
	FZ_CHECK(st.victim_archived_bytes <= st.victim_bytes,
		 "archived victims %llu of %llu", st.victim_archived_bytes,
		 st.victim_bytes);
	FZ_CHECK(st.er_bps && st.pr_bps, "a rate of 0");
	MONO(iterations);
	MONO(events);
	MONO(tensors_saved);
	MONO(tensors_ignored);
	MONO(layers_accepted);
	MONO(layers_modified);
	MONO(layers_dropped);
	MONO(layers_unknown);
	MONO(bytes_evicted);
	MONO(bytes_prefetched);
	MONO(ontime_bytes);
	MONO(late_bytes);
	MONO(late_count);
	MONO(sync_fetched_bytes);
	MONO(reprofiles);
	MONO(fast_peak_bytes);
	MONO(victims);
	MONO(victim_bytes);
	MONO(victim_archived_bytes);
	MONO(victims_skipped_pages);
	MONO(budget_waits);
	MONO(budget_overruns);
	MONO(prefetch_left_bytes);
	MONO(left_returned_bytes);
	MONO(dyn_predicted);
	MONO(dyn_mispredicted);
	MONO(dyn_fallback);
	MONO(dyn_misses);
	prev = st;
}

static void reads(struct fz *f)
{
	struct tt_layer_info info[8];
	struct tt_ioc_sched got;
	unsigned int from = fz_u8(f) < 200 ? fz_u8(f) % 10 : fz_u32(f);
	unsigned int max = fz_u8(f) % 9, known = ~0U, got_n, i;

	memset(info, 0xbe, sizeof(info));
	got_n = tt_exec_layers(&X, from, info, max, &known);
	FZ_CHECK(known == tt_exec_nr_layers(&X), "known %u", known);
	FZ_CHECK(got_n <= max && (from >= known ? got_n == 0 :
				  got_n == (known - from < max ?
					    known - from : max)),
		 "%u entries from %u of %u, max %u", got_n, from, known, max);
	for (i = 0; i < got_n; i++)
		FZ_CHECK(info[i].status <= TT_LAYER_DROPPED,
			 "layer %u status %u", info[i].layer, info[i].status);
	for (i = 1; i < got_n; i++)
		FZ_CHECK(info[i - 1].layer < info[i].layer,
			 "layers out of order: %u then %u", info[i - 1].layer,
			 info[i].layer);
	tt_exec_cfg_get(&X, &got);
	FZ_CHECK(got.valid == TT_SCHED_SET_ALL, "valid %#x", got.valid);
}

static void session(struct fz *f)
{
	struct tt_exec_cfg c = {
		.slow_node = -1, .fast_node = -1,
	};
	unsigned long long er, pr;

	fake_reset(1000000000ULL);
	memset(&prev, 0, sizeof(prev));
	peak_due = 0;
	c.flags = fz_u8(f) < 128 ? TT_SCHED_DEFAULT_FLAGS :
				   fz_u16(f) & TT_SCHED_FLAGS_ALL;
	if ((c.flags & TT_SCHED_REFERENCE) && (c.flags & TT_SCHED_EXTENSIONS))
		c.flags &= ~TT_SCHED_REFERENCE;
	c.profile_iters = 1 + fz_u8(f) % 3;
	c.stay_ns = fz_u8(f) * 100000ULL;
	er = RATE >> (fz_u8(f) % 24);
	pr = RATE >> (fz_u8(f) % 24);
	chunk_bytes = fz_pow2(f, 12, 24);
	fake_lim[TT_EXEC_LIM_MAX_LAYERS] = 1 + fz_u8(f) % 64;
	fake_lim[TT_EXEC_LIM_MAX_RANGES] = 2 + fz_u16(f) % 1024;
	fake_lim[TT_EXEC_LIM_MIN_MIGRATE] = fz_u8(f) % 4 ? 0 : fz_u8(f) * PG;
	fake_lim[TT_EXEC_LIM_EPISODE_MAX] = fz_u8(f) % 4 ? SPACE :
					    fz_u16(f) * PG;
	fake_lim[TT_EXEC_LIM_BUDGET_GLOBAL] = fz_u8(f) % 2;
	tt_exec_init(&X, &ops, &c, er, pr, PG, 2 * MIB, TASK_SIZE, NR_NODES);
}

static void close_session(int fetch)
{
	unsigned int i;

	tt_exec_close(&X);
	check();
#ifdef FZ_EXEC_VERBOSE		/* to see what a seed does */
	fprintf(stderr, "iters %llu events %llu saved %llu evicted %llu "
		"prefetched %llu late %llu sync %llu victims %llu waits %llu "
		"overruns %llu peak %llu left %llu moves %u plain %u\n",
		prev.iterations, prev.events, prev.tensors_saved,
		prev.bytes_evicted, prev.bytes_prefetched, prev.late_bytes,
		prev.sync_fetched_bytes, prev.victims, prev.budget_waits,
		prev.budget_overruns, prev.fast_peak_bytes,
		prev.prefetch_left_bytes, moves, plain_moves);
#endif
	/* the side cancels its timer and work items, then waits */
	qn = 0;
	timer_at = 0;
	FZ_CHECK(X.bud.busy == 0, "closing with %u victim rounds", X.bud.busy);
	if (fetch) {
		tt_exec_fetch_all(&X);
		FZ_CHECK(lock_depth == 0, "lock depth %d", lock_depth);
		for (i = 0; i < X.tl.n; i++)
			FZ_CHECK(tt_exec_layer_at(&X, i)->state == TT_EXEC_IDLE,
				 "layer %u not idle after fetch_all",
				 tt_exec_layer_at(&X, i)->id);
		FZ_CHECK(qn == 0, "fetch_all queued work");
	}
	tt_exec_free(&X);
	FZ_CHECK(fake_live == 0, "%ld objects not given back", fake_live);
}

/*
 * A mover's late landing over a span of the fake memory (pages; the module
 * gives tt_exec_landed() the page-aligned span of an order of the
 * process's own): some pages of it put on the slow node first.
 */
static void landed(struct fz *f)
{
	u64 a = BASE + (fz_u16(f) % (NPAGES + 1)) * PG;
	u64 b = a + (fz_u16(f) % (NPAGES + 1)) * PG;
	uint8_t k = fz_u8(f) % 3;	/* none, all, every other page slow */
	u64 p;

	if (b > BASE + SPACE)
		b = BASE + SPACE;
	for (p = (a - BASE) / PG; k && p < (b - BASE) / PG; p++)
		if (k == 1 || (p & 1))
			node_of[p] = 1;
	VLOG("landed %llx-%llx\n", (unsigned long long)a,
	     (unsigned long long)b);
	tt_exec_landed(&X, a, b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz fz = { data, size }, *f = &fz;
	unsigned int steps = 0;
	uint8_t op;

	session(f);
	check();
	while (fz_more(f) && steps++ < 4096) {
		op = fz_u8(f);
		VLOG("op %u\n", op % 16);
		switch (op % 16) {
		case 0: case 1: case 2: case 3:
			events(f, 1);
			break;
		case 4:
			events(f, 1 + fz_u8(f) % 8);
			break;
		case 5:
			hint(f);
			break;
		case 6:
			cfg(f);
			break;
		case 7:
			if (qn)
				run_one(fz_u8(f) % qn);
			break;
		case 8:
			run_work(op & 0x10 ? -1 : (op >> 5) & 1);
			break;
		case 9:
			fire();
			break;
		case 10:
			advance(op & 0x10 ? fz_u64(f) : fz_u16(f) * 100000ULL);
			break;
		case 11:
			mv_mode = fz_u8(f) % FAKE_MV_NR;
			fetch_gone = fz_u8(f) % 8;
			break;
		case 12:
			if (op & 0x10)
				landed(f);
			else
				alloc_fail = fz_u8(f) < 32;
			break;
		case 13:
			budget = fz_u8(f) < 128 ? TT_EXEC_BUDGET_NONE :
						  (u64)fz_u8(f) * MIB;
			if (op & 0x10)
				tt_exec_budget_visit(&X, (op >> 5) & 1,
						     (op >> 6) & 1);
			else
				tt_exec_budget_room(&X);
			break;
		case 14:
			reads(f);
			break;
		default:
			if (op & 0x10) {
				close_session(op & 0x20);
				return 0;
			}
			break;
		}
		check();
	}
	/* a clean close: moves go, allocations do not fail */
	mv_mode = FAKE_MV_OK;
	alloc_fail = 0;
	close_session(size & 1);
	return 0;
}
