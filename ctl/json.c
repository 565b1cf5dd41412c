// SPDX-License-Identifier: GPL-2.0-only
/*
 * Streaming JSON writer (see json.h). Compact output is one line,
 * {"a":1,"b":[1,2]}; pretty output indents by four spaces per level and puts
 * one member or element per line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "json.h"

#define TT_JSON_MAX_DEPTH	32

/**
 * struct tt_json - writer state
 * @out:    where the text goes.
 * @pretty: indent and break lines.
 * @depth:  open containers.
 * @object: per level: true for an object, false for an array.
 * @count:  per level: values written in it so far.
 * @done:   a complete top-level value has been written.
 * @error:  misuse seen (sticky; output stops).
 */
struct tt_json {
	FILE *out;
	bool pretty;
	int depth;
	bool object[TT_JSON_MAX_DEPTH];
	unsigned long count[TT_JSON_MAX_DEPTH];
	bool done;
	bool error;
};

/**
 * tt_json_new() - start a JSON document on @out.
 * @out:    the stream.
 * @pretty: indent the output.
 *
 * Return: the writer, or NULL when out of memory.
 */
struct tt_json *tt_json_new(FILE *out, bool pretty)
{
	struct tt_json *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->out = out;
	j->pretty = pretty;
	return j;
}

/**
 * tt_json_end() - finish the document with a newline and free @j.
 * @j: the writer.
 *
 * Return: 0, or -EINVAL when the writer was misused or left containers open
 * (the output is then incomplete).
 */
int tt_json_end(struct tt_json *j)
{
	int ret = (j->error || j->depth || !j->done) ? -EINVAL : 0;

	if (!ret)
		fputc('\n', j->out);
	free(j);
	return ret;
}

static void tt_json_indent(struct tt_json *j)
{
	int i;

	fputc('\n', j->out);
	for (i = 0; i < j->depth; i++)
		fputs("    ", j->out);
}

/**
 * tt_json_write_string() - write @s as a JSON string literal.
 * @out: the stream.
 * @s:   the text (bytes >= 0x80 pass through: UTF-8 stays UTF-8).
 */
void tt_json_write_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', out);
	for (; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\b':
			fputs("\\b", out);
			break;
		case '\f':
			fputs("\\f", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

/* Separator, indentation and name before a value; false on misuse. */
static bool tt_json_begin_value(struct tt_json *j, const char *name)
{
	bool in_object = j->depth && j->object[j->depth - 1];

	if (j->error)
		return false;
	if ((in_object && !name) || (!in_object && name) ||
	    (!j->depth && j->done)) {
		j->error = true;
		return false;
	}
	if (j->depth) {
		if (j->count[j->depth - 1]++)
			fputc(',', j->out);
		if (j->pretty)
			tt_json_indent(j);
	}
	if (name) {
		tt_json_write_string(j->out, name);
		fputs(j->pretty ? ": " : ":", j->out);
	}
	if (!j->depth)
		j->done = true;
	return true;
}

static void tt_json_open(struct tt_json *j, const char *name, bool object)
{
	if (j->depth == TT_JSON_MAX_DEPTH) {
		j->error = true;
		return;
	}
	if (!tt_json_begin_value(j, name))
		return;
	fputc(object ? '{' : '[', j->out);
	j->object[j->depth] = object;
	j->count[j->depth] = 0;
	j->depth++;
}

static void tt_json_close(struct tt_json *j, bool object)
{
	if (j->error)
		return;
	if (!j->depth || j->object[j->depth - 1] != object) {
		j->error = true;
		return;
	}
	j->depth--;
	if (j->pretty && j->count[j->depth])
		tt_json_indent(j);
	fputc(object ? '}' : ']', j->out);
}

void tt_json_object_open(struct tt_json *j, const char *name)
{
	tt_json_open(j, name, true);
}

void tt_json_object_close(struct tt_json *j)
{
	tt_json_close(j, true);
}

void tt_json_array_open(struct tt_json *j, const char *name)
{
	tt_json_open(j, name, false);
}

void tt_json_array_close(struct tt_json *j)
{
	tt_json_close(j, false);
}

void tt_json_string(struct tt_json *j, const char *name, const char *value)
{
	if (tt_json_begin_value(j, name))
		tt_json_write_string(j->out, value);
}

void tt_json_u64(struct tt_json *j, const char *name, uint64_t value)
{
	if (tt_json_begin_value(j, name))
		fprintf(j->out, "%" PRIu64, value);
}

void tt_json_i64(struct tt_json *j, const char *name, int64_t value)
{
	if (tt_json_begin_value(j, name))
		fprintf(j->out, "%" PRId64, value);
}

void tt_json_bool(struct tt_json *j, const char *name, bool value)
{
	if (tt_json_begin_value(j, name))
		fputs(value ? "true" : "false", j->out);
}

void tt_json_null(struct tt_json *j, const char *name)
{
	if (tt_json_begin_value(j, name))
		fputs("null", j->out);
}

/**
 * tt_json_milli() - write @thousandths / 1000 as an exact decimal number:
 * 12, 12.5, 12.345 (no trailing zeros, no exponent).
 * @j:           the writer.
 * @name:        the member name (NULL outside objects).
 * @thousandths: the value in thousandths, e.g. nanoseconds for a value in
 *               microseconds.
 */
void tt_json_milli(struct tt_json *j, const char *name, uint64_t thousandths)
{
	uint64_t frac = thousandths % 1000;
	int digits = 3;

	if (!tt_json_begin_value(j, name))
		return;
	if (!frac) {
		fprintf(j->out, "%" PRIu64, thousandths / 1000);
		return;
	}
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	fprintf(j->out, "%" PRIu64 ".%0*" PRIu64, thousandths / 1000, digits,
		frac);
}
