/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Assertion helpers for the tiertrain selftests, on top of the kernel's
 * kselftest_harness.h (which must be included first). They need the
 * harness's _metadata, so they are macros.
 */
#ifndef TT_HARNESS_H
#define TT_HARNESS_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tiertrain.h>

#include "tt_selftest.h"

/*
 * The 6.1 harness runs the test body even when FIXTURE_SETUP called SKIP();
 * every test body starts with this.
 */
#define TT_SKIP_IF_SETUP_SKIPPED() do {					\
	if (_metadata->skip)						\
		return;							\
} while (0)

/*
 * FIXTURE_SETUP preamble: SKIP when tt_st_left_out() (TT_ST_LEAVE_OUT,
 * TT_ST_ONLY; the reason from TT_ST_LEAVE_OUT_WHY), without /dev/tiertrain (when
 * @need_dev) or without a node with CPUs plus a memory-only node;
 * otherwise read the topology into *@topo and run on the fast node's CPUs.
 */
#define TT_SETUP_NODES(topo, need_dev) do {				\
	if (tt_st_left_out(_metadata->fixture->name, _metadata->name))	\
		SKIP(return, "left out here: %s",	\
		     getenv("TT_ST_LEAVE_OUT_WHY") ?: "no reason given"); \
	if ((need_dev) && access(TT_ST_DEV, F_OK))			\
		SKIP(return, "%s missing: tiertrain.ko is not loaded",	\
		     TT_ST_DEV);					\
	ASSERT_EQ(0, tt_st_topo_read(topo));				\
	if ((topo)->fast < 0 || (topo)->slow < 0)			\
		SKIP(return, "needs a node with CPUs and a memory-only node (fast %d, slow %d)", \
		     (topo)->fast, (topo)->slow);			\
	ASSERT_EQ(0, tt_st_run_on_node((topo)->fast));			\
} while (0)

/*
 * FIXTURE_SETUP of a timing test, after TT_SETUP_NODES(@topo): time moves
 * of @len bytes between the fast and the slow node through the module's
 * engine and scale the test's compute to them (tt_st_calibrate()); logs
 * what it measured.
 */
#define TT_CALIBRATE(topo, len) do {					\
	struct tt_st_calib _c;						\
	int _ret = tt_st_calibrate((topo)->fast, (topo)->slow, (len), &_c); \
	ASSERT_EQ(0, _ret) TH_LOG("calibration: %s", strerror(-_ret));	\
	TH_LOG("calibration: %zu KiB node %d <-> %d, %d rounds: %.2f ms/MiB (%.2f-%.2f), factor %.2f, compute x %.2f%s", \
	       (size_t)(len) >> 10, (topo)->fast, (topo)->slow, _c.rounds, \
	       _c.ms_per_mib, _c.min_ms_per_mib, _c.max_ms_per_mib,	\
	       _c.factor, _c.scale,					\
	       _c.finished_sync ? " (a move's pass left busy pages: finished synchronously)" : ""); \
} while (0)

/*
 * TT_CALIBRATE(), then set session @s's ER and PR to the rate it measured
 * (TT_SCHED_SET_RATES: known, so the scheduler runs no rate probe while it
 * profiles) for tests whose profile iterations must move nothing but
 * what they order.
 */
#define TT_CALIBRATE_RATES(topo, len, s) do {				\
	struct tt_st_calib _c;						\
	int _ret = tt_st_calibrate((topo)->fast, (topo)->slow, (len), &_c); \
	struct tt_ioc_sched _r = { .valid = TT_SCHED_SET_RATES };	\
	ASSERT_EQ(0, _ret) TH_LOG("calibration: %s", strerror(-_ret));	\
	TH_LOG("calibration: %zu KiB node %d <-> %d, %d rounds: %.2f ms/MiB (%.2f-%.2f), factor %.2f, compute x %.2f%s; the session's rates set to it", \
	       (size_t)(len) >> 10, (topo)->fast, (topo)->slow, _c.rounds, \
	       _c.ms_per_mib, _c.min_ms_per_mib, _c.max_ms_per_mib,	\
	       _c.factor, _c.scale,					\
	       _c.finished_sync ? " (a move's pass left busy pages: finished synchronously)" : ""); \
	_r.er_bps = _r.pr_bps = (__u64)(1048576.0 * 1000.0 /		\
		(_c.ms_per_mib > 0 ? _c.ms_per_mib : 1.0));		\
	ASSERT_EQ(0, tt_sched_set((s), &_r));				\
} while (0)

/*
 * Set session @s's ER and PR to @bps (known: no rate probe while it
 * profiles), for tests whose profile iterations must move nothing but
 * what they order and whose timing does not depend on the rates.
 */
#define TT_SET_RATES(s, bps) do {					\
	struct tt_ioc_sched _r = { .valid = TT_SCHED_SET_RATES,	\
				   .er_bps = (bps), .pr_bps = (bps) };	\
	ASSERT_EQ(0, tt_sched_set((s), &_r));				\
} while (0)

/* Open a libtiertrain session on the kernel backend into *@sp. */
#define TT_OPEN_KERNEL_SESSION(sp) do {					\
	unsetenv("TIERTRAIN_BACKEND");					\
	*(sp) = tt_open();						\
	ASSERT_NE(NULL, *(sp)) TH_LOG("tt_open: %s", strerror(errno));	\
	ASSERT_STREQ("kernel", tt_backend(*(sp)));			\
} while (0)

/* The pattern written with tt_st_fill(@seed) is intact. */
#define TT_ASSERT_PATTERN(buf, len, seed) do {				\
	long long _off = tt_st_check((buf), (len), (seed));		\
	ASSERT_EQ(-1, _off)						\
		TH_LOG("data differs at offset %lld of %zu bytes "	\
		       "(pattern seed %d)", _off, (size_t)(len),	\
		       (int)(seed));					\
} while (0)

/* move_pages(2) status queries find exactly @want pages of the range on @node. */
#define TT_ASSERT_PAGES_ON(addr, len, node, want) do {			\
	struct tt_st_place *_p = malloc(sizeof(*_p));			\
	char _d[512];							\
	ASSERT_NE(NULL, _p);						\
	ASSERT_EQ(0, tt_st_place_settled((addr), (len), (node),	\
					 (want), _p));			\
	ASSERT_EQ((uint64_t)(want), _p->on_node[(node)])		\
		TH_LOG("move_pages(2) placement: %s; expected %llu "	\
		       "pages on node %d",				\
		       tt_st_place_str(_p, _d, sizeof(_d)),		\
		       (unsigned long long)(want), (node));		\
	free(_p);							\
} while (0)

/* Every page of the range is on @node according to move_pages(2). */
#define TT_ASSERT_PLACED(addr, len, node)				\
	TT_ASSERT_PAGES_ON((addr), (len), (node),			\
			   (len) / tt_page_size())

/*
 * TT_IOC_RESIDENCY through the library: exactly @on_node bytes of the range
 * are on @node, @absent bytes are not present, none are on nodes beyond
 * TT_ST_MAX_NODES, and the per-node bytes plus the absent ones add up to
 * the range.
 */
#define TT_ASSERT_RESIDENT(s, addr, len, node, on_node, absent) do {	\
	uint64_t _b[TT_ST_MAX_NODES], _np = ~0ULL, _ot = ~0ULL, _sum = 0; \
	int _i;								\
	memset(_b, 0xff, sizeof(_b));					\
	ASSERT_EQ(0, tt_residency_ex((s), (addr), (len), _b,		\
				     TT_ST_MAX_NODES, &_np, &_ot));	\
	for (_i = 0; _i < TT_ST_MAX_NODES; _i++)			\
		_sum += _b[_i];						\
	ASSERT_EQ((uint64_t)(on_node), _b[(node)])			\
		TH_LOG("residency: %llu bytes on node %d, want %llu",	\
		       (unsigned long long)_b[(node)], (node),		\
		       (unsigned long long)(on_node));			\
	ASSERT_EQ((uint64_t)(absent), _np);				\
	ASSERT_EQ((uint64_t)0, _ot);						\
	ASSERT_EQ((uint64_t)(len), _sum + _np)				\
		TH_LOG("residency: %llu bytes on nodes + %llu absent",	\
		       (unsigned long long)_sum,			\
		       (unsigned long long)_np);			\
} while (0)

/*
 * One TT_IOC_LAYERS entry in the test's log: the plan (saved size, te_F,
 * ts_B, szP, trigger, lead) and the last iteration (forward end,
 * eviction, prefetch, backward begin, bytes evicted and late); ms, bytes.
 */
#define TT_LOG_LAYER(li) do {						\
	const struct tt_layer_info *_li = (li);				\
	TH_LOG("layer %u: status %u sz %llu te_F %.1f ts_B %.1f szP %llu prefetch %.1f lead %.2f | fwd_end %.1f evict %.1f-%.1f prefetch %.1f-%.1f bwd %.1f evicted %llu late %llu", \
	       _li->layer, _li->status,					\
	       (unsigned long long)_li->saved_bytes,			\
	       _li->fwd_end_ns / 1e6, _li->bwd_start_ns / 1e6,		\
	       (unsigned long long)_li->final_bytes,			\
	       _li->prefetch_ns / 1e6, _li->lead_ns / 1e6,		\
	       _li->last_fwd_end_ns / 1e6,				\
	       _li->last_evict_start_ns / 1e6,				\
	       _li->last_evict_end_ns / 1e6,				\
	       _li->last_prefetch_start_ns / 1e6,			\
	       _li->last_prefetch_end_ns / 1e6,				\
	       _li->last_bwd_start_ns / 1e6,				\
	       (unsigned long long)_li->last_evicted_bytes,		\
	       (unsigned long long)_li->last_late_bytes);		\
} while (0)

/* Result counters of one migration, field by field. */
#define TT_ASSERT_RESULT(r, pages_, moved_, already_, notpresent_,	\
			 busy_, nomem_) do {				\
	const struct tt_migrate_result *_res = &(r);			\
	ASSERT_EQ((uint64_t)(pages_), _res->pages);			\
	ASSERT_EQ((uint64_t)(moved_), _res->moved);			\
	ASSERT_EQ((uint64_t)(already_), _res->already_on_node);		\
	ASSERT_EQ((uint64_t)(notpresent_), _res->skipped_not_present);	\
	ASSERT_EQ((uint64_t)(busy_), _res->skipped_busy);			\
	ASSERT_EQ((uint64_t)0, _res->skipped_unsupported);				\
	ASSERT_EQ((uint64_t)(nomem_), _res->skipped_no_memory);		\
	ASSERT_EQ(_res->pages, _res->moved + _res->already_on_node +		\
		  _res->skipped_not_present + _res->skipped_busy +		\
		  _res->skipped_unsupported + _res->skipped_no_memory);	\
} while (0)

#endif /* TT_HARNESS_H */
