/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the benchmarks share.
 *
 * TT_KERNEL: a compute kernel, a function of its own, under 256 bytes and
 * 256-byte aligned, so that its loop never crosses a 4 KiB page: QEMU's
 * TCG ends a translation block at a page boundary and does not chain
 * blocks across one, and a loop that crossed ran about 5 times slower in
 * the guest (bench/README.md, "Reading the figures from the QEMU guest").
 * bench/Makefile checks each one after linking (TT_KERNELS_CHECK).
 */
#ifndef TT_BENCH_H
#define TT_BENCH_H

#define TT_KERNEL __attribute__((noinline, aligned(256)))

#endif
