/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * heat.h - the fast-tier budget's decisions (Documentation/scheduler.md,
 * "Fast-tier budget"): DeepTM's tensor heat with its dynamic weights
 * (Algorithm 1), the max-min fair share of a global budget among
 * sessions, and the walk that cuts a victim's pages out of a saved range.
 *
 * Pure C with no includes but hint.h and heapsort.h, no allocation,
 * integer arithmetic only (no 128-bit division either), like policy.c and
 * hint.c: compiled into the module and into the cmocka unit tests
 * (core/tests/test_heat.c).
 * The caller (kmod/sched.c) gathers the features, moves memory and keeps
 * the accounts; these functions only decide.
 */
#ifndef TT_HEAT_H
#define TT_HEAT_H

#include "hint.h"

/* Fixed point: a weight of TT_HEAT_ONE is 1.0; normalised features are 0..TT_HEAT_ONE. */
#define TT_HEAT_ONE		1024U
/* Bounds of a weight (1/64 .. 64). */
#define TT_HEAT_W_MIN		(TT_HEAT_ONE / 64)
#define TT_HEAT_W_MAX		(TT_HEAT_ONE * 64)
/* Algorithm 1: each step changes one weight by this many percent... */
#define TT_HEAT_STEP_PCT	2U
/* ...and one adjustment takes at most this many steps. */
#define TT_HEAT_STEPS_MAX	64U
/* The heat of an item in use (its backward pass runs): hotter than any. */
#define TT_HEAT_IN_USE		1099511627776LL	/* 2^40 */

/*
 * struct tt_heat_w - the weights of the four features, TT_HEAT_ONE = 1.0
 * @f: future access count (hotter when higher).
 * @r: future-use (reuse) distance (colder when farther).
 * @s: size (colder when larger: small tensors are kept on the fast tier).
 * @l: lifetime (colder when longer; DeepTM's formula has +w_l, its text
 *     says long-lived tensors belong on the slow tier: we follow the text).
 */
struct tt_heat_w {
	unsigned int f;
	unsigned int r;
	unsigned int s;
	unsigned int l;
};

/*
 * struct tt_heat_item - one saved range as the heat sees it
 * @bytes:  s, its size.
 * @dist:   r, how far its next use is (ns; any unit common to all items).
 * @uses:   f, how often it was used (saved) so far.
 * @life:   l, how long it stays saved (ns; common unit).
 * @in_use: its layer's backward pass runs: hottest, never a victim.
 * @done:   the caller's mark: already taken as a victim (tt_heat_coldest()
 *          skips it).
 * @heat:   out: H = (w_f f' - w_r r' - w_s s' - w_l l') / TT_HEAT_ONE with
 *          the features min-max normalised over the items (not in use),
 *          or TT_HEAT_IN_USE.
 */
struct tt_heat_item {
	unsigned long long bytes;
	unsigned long long dist;
	unsigned long long uses;
	unsigned long long life;
	int in_use;
	int done;
	long long heat;
};

/* tt_heat_w_init() - every weight 1.0 (DeepTM's start). */
void tt_heat_w_init(struct tt_heat_w *w);

/* tt_heat_score() - the heat of each of the @n items with weights @w. */
void tt_heat_score(struct tt_heat_item *it, unsigned int n,
		   const struct tt_heat_w *w);

/*
 * tt_heat_hot_bytes() - S_h: bytes of the items whose heat is >= 0 (the
 * hot threshold T_h = 0), after tt_heat_score().
 */
unsigned long long tt_heat_hot_bytes(const struct tt_heat_item *it,
				     unsigned int n);

/*
 * tt_heat_adjust() - DeepTM's Algorithm 1: while the hot set S_h is not
 * within 0.9..1.1 times @budget (> 0), change one weight by
 * TT_HEAT_STEP_PCT percent (at least 1) and score again: w_s when the
 * items total at least 2.5 times @budget (high pressure), else w_r; up
 * when S_h is too large (fewer hot items), down when too small; at most
 * TT_HEAT_STEPS_MAX steps, and never beyond TT_HEAT_W_MIN..TT_HEAT_W_MAX.
 * The weights carry over to the next call. The items are left scored
 * with the final weights. Returns the number of steps taken.
 */
unsigned int tt_heat_adjust(struct tt_heat_w *w, struct tt_heat_item *it,
			    unsigned int n, unsigned long long budget);

/*
 * tt_heat_adjust_step() - one step of tt_heat_adjust() on items scored
 * with @w (tt_heat_score()) that total @live bytes: 1 when a weight moved
 * (the items are scored again), 0 when Algorithm 1 is done (the hot set
 * is in its band, @budget is 0, or the weight is at its bound). O(@n):
 * the caller bounds the steps (TT_HEAT_STEPS_MAX) and may reschedule
 * between them.
 */
int tt_heat_adjust_step(struct tt_heat_w *w, struct tt_heat_item *it,
			unsigned int n, unsigned long long budget,
			unsigned long long live);

/*
 * tt_heat_coldest() - the index of the coldest item not @done whose heat
 * is below @below (ties: the farther next use, then the lower index), or
 * -1 when there is none.
 */
int tt_heat_coldest(const struct tt_heat_item *it, unsigned int n,
		    long long below);

/*
 * tt_heat_heap() - the victim candidates as a heap, for picking them in
 * tt_heat_coldest()'s order in O(log n) each: the indices of the items
 * not @done, not in use and with heat below @below go to @heap (room for
 * @n), heapified, O(@n). Return: their number (the heap's size).
 */
unsigned int tt_heat_heap(const struct tt_heat_item *it, unsigned int n,
			  long long below, unsigned int *heap);

/*
 * tt_heat_pop() - take the coldest candidate off the heap of *@m entries
 * built by tt_heat_heap() over the same, unchanged scores: its index
 * (items marked @done since are passed over), or -1 when none is left.
 * The sequence is the one repeated tt_heat_coldest() calls give when
 * each pick is marked @done. O(log n) each.
 */
int tt_heat_pop(const struct tt_heat_item *it, unsigned int *heap,
		unsigned int *m);

/*
 * tt_heat_share() - max-min fair shares of @total bytes among @n
 * sessions demanding @demand[i] bytes each (a session's registered
 * bytes, capped by its own budget): a session demanding less than an
 * equal split gets its demand, the others split the rest equally
 * (water-filling). A session demanding 0 gets 0. The shares sum to at
 * most @total. O(n log n) (a heapsort in @share), no allocation.
 */
void tt_heat_share(const unsigned long long *demand, unsigned int n,
		   unsigned long long total, unsigned long long *share);

/*
 * tt_heat_cut() - walk a victim's pages of [@start, @end): with @want 0,
 * the pieces outside every interval of @h (the pages the schedule
 * evicts); else the pieces inside intervals whose flags have a bit of
 * @want and none of @avoid (e.g. archived, not pinned). The first *@skip
 * bytes of those pieces are passed over (*@skip goes down by what is),
 * then at most *@left bytes are walked (*@left goes down by what is),
 * cut at the multiples of @batch (> 0) as tt_hint_cut() does:
 * @emit(@arg, a, b) for each piece [a, b). Returns the number of pieces.
 */
unsigned int tt_heat_cut(const struct tt_hint_set *h,
			 unsigned long long start, unsigned long long end,
			 unsigned int want, unsigned int avoid,
			 unsigned long long *skip, unsigned long long *left,
			 unsigned long long batch,
			 void (*emit)(void *arg, unsigned long long a,
				      unsigned long long b),
			 void *arg);

#endif /* TT_HEAT_H */
