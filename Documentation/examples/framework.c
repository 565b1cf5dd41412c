// SPDX-License-Identifier: MIT
/*
 * framework.c: what a training framework does to drive the tiertrain
 * scheduler, in a small multi-layer perceptron trained with plain C loops.
 * Copy the pattern, not the code: the numbered steps below are the ones a
 * framework's hooks take (tiertrain.torch does the same for PyTorch).
 *
 *  1. One session per process, opened once: tt_open().
 *  2. Stable layer ids: the same layer gets the same id every iteration
 *     (a layer run twice per iteration gets two ids).
 *  3. tt_iter_begin() when an iteration's forward pass starts.
 *  4. Forward of a layer: its begin, the tensors it saves for its
 *     backward pass, its end. Only the end must reach the scheduler at once
 *     (it starts the eviction), so the begin is stamped (TT_EV_TIMESTAMP,
 *     CLOCK_MONOTONIC) and sent in one tt_events() call with the saves and
 *     the end: one system call per layer.
 *  5. Register each tensor with the LAST layer (in forward order) that
 *     saves it: that layer's backward runs first, so the tensor is back in
 *     time for every user. Here layer l saves its input, which layer l-1
 *     wrote; it is registered by l, not by l-1, so l-1's eviction never
 *     moves the input l is about to read.
 *  6. Backward: the begin of a layer reaches the scheduler before the
 *     layer touches its saved tensors (the scheduler counts what is not
 *     back yet as late and, with TT_SCHED_SYNC_LATE, fetches it in that
 *     call); the end of the previous backward layer goes in the same call.
 *  7. Never fail the training because tiering failed: report and go on.
 *
 * It trains twice from the same seed, without tiering and with it, and
 * checks that the weights come out bit for bit the same: tiertrain moves
 * pages, never bytes. Exit status 0 when they do, 1 otherwise.
 *
 *   cc -O2 -I lib -I uapi Documentation/examples/framework.c -L lib -ltiertrain
 *   ./a.out [iterations] [width] [batch] [layers]   (defaults: 6 256 256 6)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tiertrain.h"

#define MAX_LAYERS	32
#define BATCH_EVENTS	64

struct net {
	unsigned int layers, width, batch;
	float *w[MAX_LAYERS];		/* width x width weights */
	float *act[MAX_LAYERS + 1];	/* act[l]: input of layer l (batch x width) */
	float *grad[2];			/* gradients flowing backward */
};

/* The framework side of tiertrain: a session and a batch of events. */
struct tier {
	struct tt_session *s;		/* NULL: no tiering */
	struct tt_event ev[BATCH_EVENTS];
	unsigned int n;
	int failed;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Step 7: a failed submission stops tiering, never the training. */
static void submit(struct tier *t)
{
	int ret;

	if (!t->s || t->failed || !t->n) {
		t->n = 0;
		return;
	}
	ret = tt_events(t->s, t->ev, t->n);
	if (ret < 0) {
		fprintf(stderr, "framework: tt_events(%u events): %s; training goes on untiered\n",
			t->n, strerror(-ret));
		t->failed = 1;
	}
	t->n = 0;
}

static void push(struct tier *t, uint16_t type, uint16_t flags, uint32_t layer,
		 const void *addr, size_t len)
{
	struct tt_event *e;

	if (!t->s)
		return;
	if (t->n == BATCH_EVENTS)
		submit(t);
	e = &t->ev[t->n++];
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->flags = flags;
	e->layer = layer;
	e->addr = (uintptr_t)addr;
	e->len = len;
	if (flags & TT_EV_TIMESTAMP)
		e->ts_ns = now_ns();
}

/* Step 2: layer l has id l + 1 in every iteration. */
static uint32_t layer_id(unsigned int l)
{
	return l + 1;
}

static float frand(uint64_t *seed)
{
	*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return (float)((*seed >> 40) & 0xffffff) / (float)0x1000000 - 0.5f;
}

static int net_init(struct net *n, unsigned int layers, unsigned int width,
		    unsigned int batch)
{
	size_t wsz = (size_t)width * width, asz = (size_t)batch * width;
	uint64_t seed = 42;
	unsigned int l;

	memset(n, 0, sizeof(*n));
	n->layers = layers;
	n->width = width;
	n->batch = batch;
	for (l = 0; l < layers; l++) {
		n->w[l] = malloc(wsz * sizeof(float));
		if (!n->w[l])
			return -ENOMEM;
		for (size_t i = 0; i < wsz; i++)
			n->w[l][i] = frand(&seed) * 2.0f / (float)width;
	}
	for (l = 0; l < 2; l++) {
		n->grad[l] = malloc(asz * sizeof(float));
		if (!n->grad[l])
			return -ENOMEM;
	}
	return 0;
}

static void net_free(struct net *n)
{
	for (unsigned int l = 0; l < n->layers; l++)
		free(n->w[l]);
	for (unsigned int l = 0; l <= n->layers; l++)
		free(n->act[l]);
	free(n->grad[0]);
	free(n->grad[1]);
}

/* One iteration: forward (relu(x W) per layer), squared-error loss against
 * a fixed target, backward, SGD step. Returns the loss. */
static double step(struct net *n, struct tier *t, unsigned int iter)
{
	size_t B = n->batch, W = n->width, asz = B * W * sizeof(float);
	uint64_t seed = 7 + iter;
	double loss = 0;
	unsigned int l;

	/* Step 3 */
	if (t->s && !t->failed && tt_iter_begin(t->s) < 0) {
		fprintf(stderr, "framework: tt_iter_begin: %s\n", strerror(errno));
		t->failed = 1;
	}
	n->act[0] = malloc(asz);
	if (!n->act[0])
		abort();
	for (size_t i = 0; i < B * W; i++)
		n->act[0][i] = frand(&seed);

	for (l = 0; l < n->layers; l++) {
		const float *in = n->act[l], *w = n->w[l];
		float *out = malloc(asz);

		if (!out)
			abort();
		/* Step 4: stamped begin, kept in the batch */
		push(t, TT_EV_LAYER_BEGIN, TT_FWD | TT_EV_TIMESTAMP, layer_id(l), NULL, 0);
		for (size_t b = 0; b < B; b++)
			for (size_t j = 0; j < W; j++) {
				float acc = 0;

				for (size_t k = 0; k < W; k++)
					acc += in[b * W + k] * w[k * W + j];
				out[b * W + j] = acc > 0 ? acc : 0;
			}
		n->act[l + 1] = out;
		/* Step 5: the input is this layer's saved tensor */
		push(t, TT_EV_TENSOR_SAVED, 0, layer_id(l), in, asz);
		push(t, TT_EV_LAYER_END, TT_FWD, layer_id(l), NULL, 0);
		submit(t);		/* the eviction of @in may start now */
	}

	/* loss = sum((out - 0.1)^2) / 2, gradient out - 0.1 */
	for (size_t i = 0; i < B * W; i++) {
		float d = n->act[n->layers][i] - 0.1f;

		loss += 0.5 * d * d;
		n->grad[0][i] = d;
	}

	for (l = n->layers; l-- > 0;) {
		const float *in = n->act[l], *out = n->act[l + 1];
		float *g = n->grad[0], *gin = n->grad[1], *w = n->w[l];

		/* Step 6: end of the previous backward layer + this begin */
		if (l + 1 < n->layers)
			push(t, TT_EV_LAYER_END, TT_BWD, layer_id(l + 1), NULL, 0);
		push(t, TT_EV_LAYER_BEGIN, TT_BWD, layer_id(l), NULL, 0);
		submit(t);
		for (size_t i = 0; i < B * W; i++)	/* through the relu */
			if (out[i] <= 0)
				g[i] = 0;
		for (size_t b = 0; b < B; b++)		/* gradient of the input */
			for (size_t k = 0; k < W; k++) {
				float acc = 0;

				for (size_t j = 0; j < W; j++)
					acc += g[b * W + j] * w[k * W + j];
				gin[b * W + k] = acc;
			}
		for (size_t k = 0; k < W; k++)		/* SGD on the weights */
			for (size_t j = 0; j < W; j++) {
				float acc = 0;

				for (size_t b = 0; b < B; b++)
					acc += in[b * W + k] * g[b * W + j];
				w[k * W + j] -= 1e-3f * acc / (float)B;
			}
		n->grad[0] = gin;
		n->grad[1] = g;
		free(n->act[l + 1]);
		n->act[l + 1] = NULL;
	}
	push(t, TT_EV_LAYER_END, TT_BWD, layer_id(0), NULL, 0);
	submit(t);
	free(n->act[0]);
	n->act[0] = NULL;
	return loss;
}

static unsigned int arg(int argc, char **argv, int i, unsigned int def,
			unsigned int max)
{
	char *end;
	unsigned long v;

	if (argc <= i)
		return def;
	errno = 0;
	v = strtoul(argv[i], &end, 0);
	if (errno || *end || !v || v > max) {
		fprintf(stderr, "framework: argument %d '%s': expected 1..%u\n",
			i, argv[i], max);
		exit(2);
	}
	return (unsigned int)v;
}

int main(int argc, char **argv)
{
	unsigned int iters = arg(argc, argv, 1, 6, 10000);
	unsigned int width = arg(argc, argv, 2, 256, 8192);
	unsigned int batch = arg(argc, argv, 3, 256, 65536);
	unsigned int layers = arg(argc, argv, 4, 6, MAX_LAYERS);
	struct net plain, tiered;
	struct tier none = { 0 }, tier = { 0 };
	struct tt_ioc_stats st;
	double l0 = 0, l1 = 0;
	int same = 1;

	if (net_init(&plain, layers, width, batch) || net_init(&tiered, layers, width, batch)) {
		fprintf(stderr, "framework: out of memory\n");
		return 1;
	}
	/* Step 1 */
	tier.s = tt_open();
	if (!tier.s)
		fprintf(stderr, "framework: tt_open: %s; training untiered\n", strerror(errno));
	printf("framework: %u layers of %u x %u, batch %u, %u iterations, %.1f KiB saved per layer, backend %s\n",
	       layers, width, width, batch, iters,
	       (double)batch * width * sizeof(float) / 1024,
	       tier.s ? tt_backend(tier.s) : "none");
	for (unsigned int i = 0; i < iters; i++) {
		l0 = step(&plain, &none, i);
		l1 = step(&tiered, &tier, i);
		same &= l0 == l1;
		printf("iteration %u: loss %.6f untiered, %.6f tiered\n", i, l0, l1);
	}
	for (unsigned int l = 0; l < layers; l++)
		same &= !memcmp(plain.w[l], tiered.w[l], (size_t)width * width * sizeof(float));
	if (tier.s && tt_stats(tier.s, &st) == 0) {
		uint64_t due = st.ontime_bytes + st.late_bytes;

		printf("tiertrain: evicted %llu bytes, prefetched %llu, on time %llu of %llu (%.1f%%), late in %llu layer-iterations; layers accepted %llu, modified %llu, dropped %llu\n",
		       (unsigned long long)st.bytes_evicted,
		       (unsigned long long)st.bytes_prefetched,
		       (unsigned long long)st.ontime_bytes, (unsigned long long)due,
		       due ? 100.0 * st.ontime_bytes / due : 0.0,
		       (unsigned long long)st.late_count,
		       (unsigned long long)st.layers_accepted,
		       (unsigned long long)st.layers_modified,
		       (unsigned long long)st.layers_dropped);
	}
	printf("weights and losses %s\n", same ? "bit-identical" : "DIFFER");
	tt_close(tier.s);
	net_free(&plain);
	net_free(&tiered);
	return same ? 0 : 1;
}
