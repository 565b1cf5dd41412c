/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * fuzz.h - what the libFuzzer harnesses of core/'s pure C share:
 * a reader that turns the input bytes into a sequence of API calls and
 * their arguments, and the invariant check that aborts (libFuzzer then
 * writes the input as a crash reproducer).
 *
 * Numbers are drawn in shapes that matter to range arithmetic: small
 * values, page multiples, powers of two plus or minus a few pages or huge
 * pages (2^53 + 6 MiB), values near 2^64 (wrapping), and raw bytes. When
 * the input runs out every read returns 0, so each input is a finite
 * program.
 */
#ifndef TT_FUZZ_H
#define TT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FZ_PAGE		4096ULL
#define FZ_HUGE		(2ULL << 20)

typedef unsigned long long u64;
typedef unsigned __int128 fz_u128;

struct fz {
	const uint8_t *p;
	size_t n;
};

static inline int fz_more(const struct fz *f)
{
	return f->n > 0;
}

static inline uint8_t fz_u8(struct fz *f)
{
	if (!f->n)
		return 0;
	f->n--;
	return *f->p++;
}

static inline u64 fz_raw(struct fz *f, int bytes)
{
	u64 v = 0;
	int i;

	for (i = 0; i < bytes; i++)
		v |= (u64)fz_u8(f) << (8 * i);
	return v;
}

static inline uint16_t fz_u16(struct fz *f)
{
	return (uint16_t)fz_raw(f, 2);
}

static inline uint32_t fz_u32(struct fz *f)
{
	return (uint32_t)fz_raw(f, 4);
}

/* A 64-bit number in one of the shapes above (first byte: the shape). */
static inline u64 fz_u64(struct fz *f)
{
	uint8_t shape = fz_u8(f);
	u64 k;

	switch (shape % 10) {
	case 0:
		return fz_u8(f);
	case 1:
		return (u64)fz_u16(f) * FZ_PAGE;
	case 2:			/* 2^k + pages */
		k = fz_u8(f) % 64;
		return (1ULL << k) + (u64)(long long)(int8_t)fz_u8(f) * FZ_PAGE;
	case 3:			/* 2^k + huge pages */
		k = fz_u8(f) % 64;
		return (1ULL << k) + (u64)(long long)(int8_t)fz_u8(f) * FZ_HUGE;
	case 4:
		return fz_raw(f, 8);
	case 5:			/* near the top of the address space */
		return ~0ULL - fz_u16(f);
	case 6:
		k = fz_u8(f) % 64;
		return (1ULL << k) - 1;
	case 7:
		return fz_u32(f);
	case 8:
		return (u64)fz_u16(f) * FZ_HUGE;
	default:
		return fz_u16(f);
	}
}

/* A power of two 2^lo .. 2^hi. */
static inline u64 fz_pow2(struct fz *f, unsigned int lo, unsigned int hi)
{
	return 1ULL << (lo + fz_u8(f) % (hi - lo + 1));
}

#define FZ_CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "fuzz invariant failed: %s (%s:%d): ", \
				#cond, __FILE__, __LINE__);		\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			abort();					\
		}							\
	} while (0)

/*
 * An array of exactly @n elements (at least one byte so that malloc(0)
 * does not hide anything), filled with a pattern so that a read of an
 * element nobody wrote yields huge values instead of zeroes.
 */
static inline void *fz_alloc(size_t n, size_t size)
{
	void *p = malloc(n * size ? n * size : 1);

	if (!p)
		abort();
	memset(p, 0xbe, n * size);
	return p;
}

#endif /* TT_FUZZ_H */
