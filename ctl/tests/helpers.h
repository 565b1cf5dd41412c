/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers the tierctl unit tests share: output captured in memory, and
 * tierctl run with an argument list.
 */
#ifndef TT_CTL_TESTS_HELPERS_H
#define TT_CTL_TESTS_HELPERS_H

#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>

/**
 * struct capture - a memory stream to compare output with
 * @f:   the stream.
 * @buf: its contents after capture_text().
 * @len: their length.
 */
struct capture {
	FILE *f;
	char *buf;
	size_t len;
};

void capture_open(struct capture *c);
const char *capture_text(struct capture *c);
void capture_close(struct capture *c);
int run_ctl(struct capture *out, struct capture *err, int argc, ...);
void args_from_va(char **argv, int argc, va_list ap);

#endif /* TT_CTL_TESTS_HELPERS_H */
