// SPDX-License-Identifier: GPL-2.0
/*
 * What a plain session gets (issue 15): no scheduler flags, no module
 * parameters, no environment, the defaults of tt_open().
 *
 *   fresh_mmap_trainer   12 layers, 8 MiB saved per layer in a fresh
 *                        anonymous mmap every iteration (base pages or
 *                        THP as the guest has it), 30 ms of compute per
 *                        layer forward and backward (more where the guest
 *                        moves 8 MiB slower than in 10 ms while another
 *                        thread computes: a loaded host,
 *                        see dt_compute_ms()), until DT_COUNT planned
 *                        iterations after the warm-up (the profile
 *                        iterations and the first two planned ones,
 *                        whose leads have not learnt the machine's noise
 *                        yet: their late bytes are logged, not counted;
 *                        issue 27) were seen, at most DT_ITERS. An
 *                        iteration that ran over twice its profile's time
 *                        (a burst of load on the host) makes the
 *                        scheduler profile again: those iterations have
 *                        no plan, and they and the first two planned
 *                        ones after them are a warm-up again, logged,
 *                        not counted. Over the
 *                        counted ones the
 *                        scheduler evicted some of the bytes and at least
 *                        95 % of what it evicted is on the fast node when
 *                        its backward pass begins (as bench/train
 *                        --verify-ontime: residency queries, their time
 *                        excluded from the compute, over the bytes the
 *                        scheduler says were due), and every tensor holds
 *                        its data; and at least half of the first six
 *                        layers' bytes are on a slow node when the
 *                        forward pass ends (evicted in time).
 *   default_flags        a new session reports TT_SCHED_DEFAULT_FLAGS;
 *                        TT_SCHED_REFERENCE alone is accepted, with any
 *                        extension bit it is EINVAL.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tt_harness.h"

#define DT_LAYERS	12
#define DT_SIZE		(8 * TT_ST_MIB)
#define DT_MS		30
#define DT_COUNT	4	/* planned iterations counted */
#define DT_ITERS	24	/* at most, to see DT_COUNT of them */
#define DT_BALANCING	"/proc/sys/kernel/numa_balancing"

FIXTURE(defaults)
{
	struct tt_st_topo topo;
	char balancing[16];
	int have_balancing;
};

FIXTURE_SETUP(defaults)
{
	TT_SETUP_NODES(&self->topo, 1);
	self->have_balancing =
		tt_st_read_file(DT_BALANCING, self->balancing,
				sizeof(self->balancing)) >= 0;
	if (self->have_balancing)
		tt_st_write_file(DT_BALANCING, "0");
}

FIXTURE_TEARDOWN(defaults)
{
	if (self->have_balancing)
		tt_st_write_file(DT_BALANCING, self->balancing);
}

/* Bytes of [p, p + len) on @fast and on every other node (residency). */
static int dt_where(struct tt_session *s, const void *p, size_t len,
		    int fast, uint64_t *on_fast, uint64_t *other)
{
	uint64_t b[TT_ST_MAX_NODES];
	int ret, i;

	ret = tt_residency(s, p, len, b, TT_ST_MAX_NODES);
	if (ret)
		return ret;
	*on_fast = b[fast];
	*other = 0;
	for (i = 0; i < TT_ST_MAX_NODES; i++)
		if (i != fast)
			*other += b[i];
	return 0;
}

/*
 * The compute per layer pass, ms before tt_st_compute()'s multiplier:
 * DT_MS, or, when this guest moves 8 MiB one way slower than a third of
 * DT_MS (a loaded host: QEMU's TCG shares the CPUs with everything
 * else), 3 times its slower direction (the median of 3 round trips of a
 * fresh 8 MiB mapping with tt_migrate(), timed while another thread of
 * the process computes, as the trainer's does while its tensors move:
 * the moves wait for its TLB shootdowns), so that every layer's eviction
 * and prefetch can fit in its compute as in the run (an unloaded
 * guest: ~8 ms per 8 MiB). 0 on error. The caller skips above 1 s: a
 * slow tier that moves 8 MiB slower than in a third of a second (emulated
 * CXL under TCG, ~5 MB/s) cannot have a 12-layer step's bytes back on
 * time within the test's time.
 */
static unsigned int dt_compute_ms(struct __test_metadata *_metadata,
				  struct tt_session *s, int fast, int slow)
{
	uint64_t t0, t1, t2, one[3], x;
	unsigned int i, j, ms, mul = tt_st_time_mul();
	struct tt_st_busy busy;
	int ok = 1;
	char *p;

	if (tt_st_busy_start(&busy, 4 * TT_ST_MIB))
		return 0;
	for (i = 0; ok && i < 3; i++) {
		p = mmap(NULL, DT_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			ok = 0;
			break;
		}
		tt_st_fill(p, DT_SIZE, i);
		t0 = tt_st_now_ns();
		ok = !tt_migrate(s, p, DT_SIZE, slow);
		t1 = tt_st_now_ns();
		ok = ok && !tt_migrate(s, p, DT_SIZE, fast);
		t2 = tt_st_now_ns();
		munmap(p, DT_SIZE);
		one[i] = t1 - t0 > t2 - t1 ? t1 - t0 : t2 - t1;
		/* in order: the median is one[1] */
		for (j = i; j > 0 && one[j] < one[j - 1]; j--) {
			x = one[j];
			one[j] = one[j - 1];
			one[j - 1] = x;
		}
	}
	tt_st_busy_stop(&busy);
	if (!ok)
		return 0;
	ms = (unsigned int)((3 * one[1] / 1000000 + mul - 1) / mul);
	TH_LOG("8 MiB move one way, another thread computing: %.1f ms (median; %.1f-%.1f); compute %u ms x %u per layer pass",
	       one[1] / 1e6, one[0] / 1e6, one[2] / 1e6,
	       ms > DT_MS ? ms : DT_MS, mul);
	return ms > DT_MS ? ms : DT_MS;
}

/*
 * One line on iteration @it as the scheduler saw it (TT_IOC_LAYERS, the
 * stats): what its plan evicts, the leads, what was evicted and came back
 * late, the reprofiles so far: what a failure of the checks needs.
 */
static void dt_log_iter(struct __test_metadata *_metadata,
			struct tt_session *s, unsigned int it)
{
	struct tt_layer_info info[DT_LAYERS + 1];
	int n = tt_layers(s, info, DT_LAYERS + 1), i, planned = 0;
	uint64_t plan = 0, done = 0, late = 0, lead = 0;
	struct tt_ioc_stats st;

	for (i = 0; i < n && i <= DT_LAYERS; i++) {
		planned += !!info[i].final_bytes;
		plan += info[i].final_bytes;
		done += info[i].last_evicted_bytes;
		late += info[i].last_late_bytes;
		if (info[i].lead_ns > lead)
			lead = info[i].lead_ns;
	}
	if (n < 0 || tt_stats(s, &st))
		return;
	TH_LOG("iteration %u: plan evicts %llu KiB from %d of %d layers (lead up to %.1f ms); evicted %llu KiB, late %llu KiB; reprofiles so far %llu",
	       it, (unsigned long long)plan >> 10, planned, n, lead / 1e6,
	       (unsigned long long)done >> 10, (unsigned long long)late >> 10,
	       (unsigned long long)st.reprofiles);
	/* each late layer: its plan against what happened */
	for (i = 0; i < n && i <= DT_LAYERS; i++)
		if (info[i].last_late_bytes)
			TT_LOG_LAYER(&info[i]);
}

/* The bytes the current iteration's plan evicts (0: no plan, profiling). */
static uint64_t dt_planned(struct tt_session *s)
{
	struct tt_layer_info info[DT_LAYERS + 1];
	int n = tt_layers(s, info, DT_LAYERS + 1), i;
	uint64_t plan = 0;

	for (i = 0; i < n && i <= DT_LAYERS; i++)
		plan += info[i].final_bytes;
	return plan;
}

TEST_F_TIMEOUT(defaults, fresh_mmap_trainer, 900)
{
	struct tt_session *s;
	struct tt_ioc_sched cfg;
	struct tt_ioc_stats st;
	char *t[DT_LAYERS + 1] = { NULL };
	uint64_t fast = 0, total = 0, f, o, late_iter[DT_ITERS] = { 0 };
	uint64_t ev_slow = 0, ev_total = 0, due = 0;
	struct tt_ioc_stats st0;
	unsigned int it, l, warm, ms, counted = 0, last = 0, fresh = 0;
	uint64_t reprofiles = 0;
	unsigned char was_counted[DT_ITERS] = { 0 };
	int count_it;
	double pct, ev_pct;

	TT_SKIP_IF_SETUP_SKIPPED();
	TT_OPEN_KERNEL_SESSION(&s);
	ASSERT_EQ(0, tt_sched_get(s, &cfg));
	TH_LOG("session flags %#x (TT_SCHED_DEFAULT_FLAGS %#x), profile_iters %u",
	       cfg.flags, (unsigned int)TT_SCHED_DEFAULT_FLAGS,
	       cfg.profile_iters);
	warm = cfg.profile_iters + 2;
	ASSERT_LT(warm, DT_ITERS);
	ms = dt_compute_ms(_metadata, s, self->topo.fast, self->topo.slow);
	ASSERT_LT(0, ms);
	if (ms > 1000) {
		tt_close(s);
		SKIP(return, "the slow tier moves 8 MiB one way in over 333 ms (compute would be %u ms per layer pass): too slow for this trainer",
		     ms);
	}
	for (it = 0; it < DT_ITERS && counted < DT_COUNT; it++) {
		last = it;
		ASSERT_EQ(0, tt_iter_begin(s));
		ASSERT_EQ(0, tt_stats(s, &st0));
		/*
		 * The plan is made at the iteration's begin; @fresh counts
		 * the planned iterations since the last (re)profile, of which
		 * the first two are a warm-up.
		 */
		if (st0.reprofiles != reprofiles) {
			reprofiles = st0.reprofiles;
			fresh = 0;
		}
		if (dt_planned(s) > 0)
			fresh++;
		count_it = it >= warm && fresh > 2;
		was_counted[it] = count_it;
		for (l = 1; l <= DT_LAYERS; l++) {
			ASSERT_EQ(0, tt_layer_begin(s, l, TT_FWD));
			t[l] = mmap(NULL, DT_SIZE, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			ASSERT_NE(MAP_FAILED, t[l]);
			tt_st_fill(t[l], DT_SIZE, it * 131 + l);
			ASSERT_EQ(0, tt_tensor_saved(s, l, t[l], DT_SIZE));
			tt_st_compute(t[l], DT_SIZE, ms);
			ASSERT_EQ(0, tt_layer_end(s, l, TT_FWD));
		}
		/* evicted in time: the first half's bytes at the forward end */
		for (l = 1; count_it && l <= DT_LAYERS / 2; l++) {
			ASSERT_EQ(0, dt_where(s, t[l], DT_SIZE, self->topo.fast,
					      &f, &o));
			ev_slow += o;
			ev_total += f + o;
		}
		usleep(ms * 1000 * tt_st_time_mul());	/* the loss */
		for (l = DT_LAYERS; l >= 1; l--) {
			ASSERT_EQ(0, tt_layer_begin(s, l, TT_BWD));
			/* the query is not compute: the clock of the pass starts after it */
			ASSERT_EQ(0, dt_where(s, t[l], DT_SIZE, self->topo.fast,
					      &f, &o));
			late_iter[it] += o;
			if (count_it) {
				fast += f;
				total += f + o;
			}
			TT_ASSERT_PATTERN(t[l], DT_SIZE, it * 131 + l);
			tt_st_compute(t[l], DT_SIZE, ms);
			ASSERT_EQ(0, munmap(t[l], DT_SIZE));
			t[l] = NULL;
			ASSERT_EQ(0, tt_layer_end(s, l, TT_BWD));
		}
		ASSERT_EQ(0, tt_stats(s, &st));
		/* the bytes due back: what the counted iterations evicted */
		if (count_it) {
			due += st.ontime_bytes + st.late_bytes -
			       st0.ontime_bytes - st0.late_bytes;
			counted++;
		}
		dt_log_iter(_metadata, s, it);
	}
	for (it = cfg.profile_iters; it <= last; it++)
		TH_LOG("iteration %u%s: %llu KiB off the fast node at backward begins",
		       it, was_counted[it] ? "" :
		       " (no plan, or a warm-up: not counted)",
		       (unsigned long long)late_iter[it] >> 10);
	/* at least half of DT_COUNT: else the host reprofiled it throughout */
	ASSERT_LE(DT_COUNT / 2, counted)
		TH_LOG("%u planned iterations after the warm-up in %u", counted,
		       last + 1);
	ASSERT_LT(0, total);
	ASSERT_LT(0, ev_total);
	pct = due ? 100.0 * (double)(due - (total - fast < due ? total - fast : due)) / due : 0;
	ev_pct = 100.0 * ev_slow / ev_total;
	TH_LOG("%u planned iterations after the warm-up (%u iterations), of %u: %.1f %% of the first %u layers' %llu MiB on a slow node at the forward end",
	       counted, warm, last + 1, ev_pct, DT_LAYERS / 2, (unsigned long long)ev_total >> 20);
	TH_LOG("after the warm-up: %llu of %llu MiB saved were evicted; %llu KiB of them off the fast node at their backward begin: %.1f %% on time",
	       (unsigned long long)due >> 20, (unsigned long long)total >> 20,
	       (unsigned long long)(total - fast) >> 10, pct);
	TH_LOG("stats: evicted %llu MiB, prefetched %llu MiB, on time %llu MiB, late %llu MiB, prefetch_left %llu KiB, skipped busy %llu / no memory %llu pages, er %llu pr %llu MiB/s",
	       (unsigned long long)st.bytes_evicted >> 20,
	       (unsigned long long)st.bytes_prefetched >> 20,
	       (unsigned long long)st.ontime_bytes >> 20,
	       (unsigned long long)st.late_bytes >> 20,
	       (unsigned long long)st.prefetch_left_bytes >> 10,
	       (unsigned long long)st.total.skipped_busy,
	       (unsigned long long)st.total.skipped_no_memory,
	       (unsigned long long)st.er_bps >> 20,
	       (unsigned long long)st.pr_bps >> 20);
	tt_close(s);
	/* a default that moves nothing has nothing on time */
	EXPECT_LT(0, due);
	EXPECT_LE(95.0, pct);
	/*
	 * evicted in time: the reference semantics had 5-21 % here in this
	 * guest, 18-48 % in the issue's; the default 67-82 %, ~100 % there
	 */
	EXPECT_LE(50.0, ev_pct);
}

TEST_F(defaults, default_flags)
{
	struct tt_session *s;
	struct tt_ioc_sched cfg, req;
	static const uint32_t ext[] = {
		TT_SCHED_ANCHOR, TT_SCHED_ALAP, TT_SCHED_DEFER_LATE,
		TT_SCHED_MERGE, TT_SCHED_COUNT, TT_SCHED_DYNAMIC,
	};
	unsigned int i;

	TT_SKIP_IF_SETUP_SKIPPED();
	TT_OPEN_KERNEL_SESSION(&s);
	ASSERT_EQ(0, tt_sched_get(s, &cfg));
	ASSERT_EQ((uint32_t)TT_SCHED_DEFAULT_FLAGS, cfg.flags);
	memset(&req, 0, sizeof(req));
	req.valid = TT_SCHED_SET_FLAGS;
	for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		req.flags = TT_SCHED_REFERENCE | ext[i];
		ASSERT_EQ(-EINVAL, tt_sched_set(s, &req))
			TH_LOG("flags %#x", req.flags);
	}
	ASSERT_EQ(0, tt_sched_get(s, &cfg));
	ASSERT_EQ((uint32_t)TT_SCHED_DEFAULT_FLAGS, cfg.flags);
	req.flags = TT_SCHED_REFERENCE | TT_SCHED_SYNC_LATE;
	ASSERT_EQ(0, tt_sched_set(s, &req));
	ASSERT_EQ(0, tt_sched_get(s, &cfg));
	ASSERT_EQ(TT_SCHED_REFERENCE | TT_SCHED_SYNC_LATE, cfg.flags);
	tt_close(s);
}

TEST_HARNESS_MAIN
