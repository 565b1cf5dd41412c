/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * heapsort.h - one in-place heapsort for the pure-C cores (policy.c,
 * timeline.c, hint.c): no includes, no allocation, O(n log n), so the
 * module and userspace sort alike. Not stable.
 */
#ifndef TT_HEAPSORT_H
#define TT_HEAPSORT_H

/* @before(@a, @b, @ctx): nonzero when @a sorts before @b. */
typedef int (*tt_before_fn)(const void *a, const void *b, const void *ctx);

static inline void tt_heap_swap(char *a, char *b, unsigned long size)
{
	/* the cores sort index arrays: an unsigned int at a time */
	if (size == sizeof(unsigned int)) {
		unsigned int t;

		__builtin_memcpy(&t, a, sizeof(t));
		__builtin_memcpy(a, b, sizeof(t));
		__builtin_memcpy(b, &t, sizeof(t));
		return;
	}
	for (; size >= sizeof(unsigned long long);
	     size -= sizeof(unsigned long long)) {
		unsigned long long t;

		__builtin_memcpy(&t, a, sizeof(t));
		__builtin_memcpy(a, b, sizeof(t));
		__builtin_memcpy(b, &t, sizeof(t));
		a += sizeof(t);
		b += sizeof(t);
	}
	while (size--) {
		char t = *a;

		*a++ = *b;
		*b++ = t;
	}
}

static inline void tt_heap_sift(char *base, unsigned long size,
				unsigned int root, unsigned int n,
				tt_before_fn before, const void *ctx)
{
	for (;;) {
		unsigned int child = 2 * root + 1;

		if (child >= n)
			return;
		if (child + 1 < n && before(base + child * size,
					    base + (child + 1) * size, ctx))
			child++;
		if (!before(base + root * size, base + child * size, ctx))
			return;
		tt_heap_swap(base + root * size, base + child * size, size);
		root = child;
	}
}

/* tt_heapsort() - sort @n elements of @size bytes at @base by @before. */
static inline void tt_heapsort(void *base, unsigned int n, unsigned long size,
			       tt_before_fn before, const void *ctx)
{
	char *b = base;
	unsigned int i;

	for (i = n / 2; i-- > 0;)
		tt_heap_sift(b, size, i, n, before, ctx);
	for (i = n; i-- > 1;) {
		tt_heap_swap(b, b + i * size, size);
		tt_heap_sift(b, size, 0, i, before, ctx);
	}
}

#endif /* TT_HEAPSORT_H */
