// SPDX-License-Identifier: GPL-2.0
/*
 * What the module's files registered with each other at load time still
 * happens (scripts/calls-check: calls point down; owners register hooks):
 *
 *   budget_hook   a session holds 16 MiB of saved tensors on the fast
 *                 node and reports nothing more; writing the module
 *                 setting budget_mib=8 alone (budget.c's config hook,
 *                 which kicks the budget work, whose visitor is the
 *                 scheduler's) makes it give room back: victims are
 *                 evicted until its fast registered bytes are within the
 *                 budget plus one scheduler chunk; its data stays intact.
 *   workers_hooks the pool size settings (workers, evict_workers,
 *                 prefetch_workers; their hooks resize the pools) take a
 *                 new value and the old one back, and a migration and a
 *                 training iteration still run on the resized pools.
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

#define CA_MIB		TT_ST_MIB
#define CA_LAYERS	4
#define CA_SZ		(4 * CA_MIB)
#define CA_BALANCING	"/proc/sys/kernel/numa_balancing"

FIXTURE(calls)
{
	struct tt_st_topo topo;
	struct tt_session *s;
	char *t[CA_LAYERS];
	long long balancing;	/* to restore; -1: untouched */
	long long saved[3];	/* workers, evict_workers, prefetch_workers; -1: untouched */
	int budget_set;
};

static const char *const ca_pools[3] = {
	"workers", "evict_workers", "prefetch_workers",
};

FIXTURE_SETUP(calls)
{
	unsigned int l;

	self->s = NULL;
	self->balancing = -1;
	self->budget_set = 0;
	for (l = 0; l < 3; l++)
		self->saved[l] = -1;
	memset(self->t, 0, sizeof(self->t));
	TT_SETUP_NODES(&self->topo, 1);
	if (tt_st_param_read("budget_mib") < 0)
		SKIP(return, "the module has no budget_mib parameter");
	/* NUMA balancing would pull touched pages back behind our back */
	ASSERT_EQ(0, tt_st_read_ll(CA_BALANCING, &self->balancing));
	ASSERT_EQ(0, tt_st_write_file(CA_BALANCING, "0"));
	TT_OPEN_KERNEL_SESSION(&self->s);
	for (l = 0; l < CA_LAYERS; l++) {
		self->t[l] = tt_st_map(CA_SZ, -1);
		ASSERT_NE(NULL, self->t[l]);
	}
}

FIXTURE_TEARDOWN(calls)
{
	unsigned int l;
	char v[32];

	if (self->s)
		tt_close(self->s);
	for (l = 0; l < CA_LAYERS; l++)
		if (self->t[l])
			munmap(self->t[l], CA_SZ);
	if (self->budget_set)
		tt_st_param_write("budget_mib", 0);
	for (l = 0; l < 3; l++)
		if (self->saved[l] >= 0)
			tt_st_param_write(ca_pools[l], self->saved[l]);
	if (self->balancing >= 0) {
		snprintf(v, sizeof(v), "%lld", self->balancing);
		tt_st_write_file(CA_BALANCING, v);
	}
}

/* The forward passes of every layer: fill, save, end. */
static int ca_forward(struct tt_session *s, char *const *t, unsigned int iter)
{
	unsigned int l;
	int ret;

	for (l = 0; l < CA_LAYERS; l++) {
		ret = tt_layer_begin(s, l + 1, TT_FWD);
		if (ret)
			return ret;
		tt_st_fill(t[l], CA_SZ, iter * 64 + l);
		ret = tt_tensor_saved(s, l + 1, t[l], CA_SZ);
		if (ret)
			return ret;
		ret = tt_layer_end(s, l + 1, TT_FWD);
		if (ret)
			return ret;
	}
	return 0;
}

/* The backward passes: data intact (-1), else the layer whose data differs. */
static int ca_backward(struct tt_session *s, char *const *t, unsigned int iter)
{
	unsigned int l;
	int bad = -1;

	for (l = CA_LAYERS; l-- > 0;) {
		if (tt_layer_begin(s, l + 1, TT_BWD))
			return -2;
		if (tt_st_check(t[l], CA_SZ, iter * 64 + l) != -1 && bad < 0)
			bad = l + 1;
		if (tt_layer_end(s, l + 1, TT_BWD))
			return -2;
	}
	return bad;
}

TEST_F_TIMEOUT(calls, budget_hook, 300)
{
	const uint64_t budget = 8 * CA_MIB;
	uint64_t end, chunk, huge = 2 * CA_MIB;
	struct tt_ioc_stats st;
	long long pages;

	TT_SKIP_IF_SETUP_SKIPPED();
	pages = tt_st_param_read("batch_pages");
	ASSERT_LT(0, pages);
	chunk = ((uint64_t)pages * tt_page_size() + huge - 1) / huge * huge;

	ASSERT_EQ(0, tt_iter_begin(self->s));
	ASSERT_EQ(0, ca_forward(self->s, self->t, 0));
	ASSERT_EQ(0, tt_stats(self->s, &st));
	ASSERT_EQ(0, st.victims);
	ASSERT_EQ((uint64_t)CA_LAYERS * CA_SZ, st.fast_registered_bytes)
		TH_LOG("the saved tensors are not all counted on the fast tier");

	/* the setting alone, no event of the session */
	ASSERT_EQ(0, tt_st_param_write("budget_mib", budget / CA_MIB));
	self->budget_set = 1;
	end = tt_st_now_ns() + 20000000000ULL * tt_st_time_mul();
	do {
		ASSERT_EQ(0, tt_stats(self->s, &st));
		if (st.victims && st.fast_registered_bytes <= budget + chunk)
			break;
		usleep(20000);
	} while (tt_st_now_ns() < end);
	TH_LOG("after budget_mib=8: %llu victims, %llu MiB moved, fast %llu MiB, budget in force %llu MiB",
	       (unsigned long long)st.victims,
	       (unsigned long long)(st.victim_bytes / CA_MIB),
	       (unsigned long long)(st.fast_registered_bytes / CA_MIB),
	       (unsigned long long)(st.budget_bytes / CA_MIB));
	ASSERT_LT(0, st.victims)
		TH_LOG("budget_mib=8 made no victim: the budget's config hook did not run");
	ASSERT_GE(budget + chunk, st.fast_registered_bytes);

	ASSERT_EQ(0, tt_st_param_write("budget_mib", 0));
	self->budget_set = 0;
	ASSERT_EQ(-1, ca_backward(self->s, self->t, 0));
}

TEST_F_TIMEOUT(calls, workers_hooks, 300)
{
	char *buf = self->t[0];
	unsigned int i;
	long long v;

	TT_SKIP_IF_SETUP_SKIPPED();
	for (i = 0; i < 3; i++) {
		v = tt_st_param_read(ca_pools[i]);
		ASSERT_LT(0, v);
		self->saved[i] = v;
		ASSERT_EQ(0, tt_st_param_write(ca_pools[i], v == 3 ? 4 : 3));
		ASSERT_EQ(v == 3 ? 4 : 3, tt_st_param_read(ca_pools[i]));
	}
	/* a migration there and back on the resized migration pool */
	tt_st_fill(buf, CA_SZ, 7);
	ASSERT_EQ(0, tt_migrate(self->s, buf, CA_SZ, self->topo.slow));
	ASSERT_EQ((long long)(CA_SZ / tt_page_size()),
		  tt_st_pages_on(buf, CA_SZ, self->topo.slow));
	ASSERT_EQ(0, tt_migrate(self->s, buf, CA_SZ, self->topo.fast));
	ASSERT_EQ(-1, tt_st_check(buf, CA_SZ, 7));
	/* two iterations on the resized evict and prefetch pools */
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, tt_iter_begin(self->s));
		ASSERT_EQ(0, ca_forward(self->s, self->t, i + 1));
		ASSERT_EQ(-1, ca_backward(self->s, self->t, i + 1));
	}
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, tt_st_param_write(ca_pools[i], self->saved[i]));
		self->saved[i] = -1;
	}
}

TEST_HARNESS_MAIN
