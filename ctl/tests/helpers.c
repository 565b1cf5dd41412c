// SPDX-License-Identifier: GPL-2.0-only
/* Helpers the tierctl unit tests share (see helpers.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "helpers.h"
#include "tierctl.h"

/* capture_open() - start capturing into @c (both fields reset). */
void capture_open(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
}

/* capture_text() - what was written to @c so far, NUL terminated. */
const char *capture_text(struct capture *c)
{
	fflush(c->f);
	return c->buf;
}

/* capture_close() - stop capturing and free the text. */
void capture_close(struct capture *c)
{
	fclose(c->f);
	free(c->buf);
}

/**
 * run_ctl() - run tierctl on @argc arguments (at most 15, strings),
 *             argv[0] included.
 * @out:  opened here: captures standard output.
 * @err:  opened here: captures standard error.
 * @argc: the number of arguments that follow.
 *
 * Return: tierctl's exit code.
 */
int run_ctl(struct capture *out, struct capture *err, int argc, ...)
{
	char *argv[16];
	va_list ap;

	capture_open(out);
	capture_open(err);
	va_start(ap, argc);
	args_from_va(argv, argc, ap);
	va_end(ap);
	return tt_ctl_run(argc, argv, out->f, err->f);
}

/**
 * args_from_va() - an argument vector from variable arguments
 * @argv: room for 16 pointers: receives @argc strings and a NULL.
 * @argc: the number of strings @ap holds, 1..15.
 * @ap:   the strings.
 */
void args_from_va(char **argv, int argc, va_list ap)
{
	int i;

	assert_in_range(argc, 1, 15);
	for (i = 0; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	argv[argc] = NULL;
}
