/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small streaming JSON writer for tierctl -j: values go straight to a
 * stream, containers are tracked on a fixed stack. Inside an object every
 * value needs a name; at the top level and inside arrays names must be NULL.
 * Misuse (a name where none belongs, unbalanced closes, too deep nesting, a
 * second top-level value) is remembered and reported by tt_json_end().
 */
#ifndef TT_CTL_JSON_H
#define TT_CTL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct tt_json;

struct tt_json *tt_json_new(FILE *out, bool pretty);
int tt_json_end(struct tt_json *j);

void tt_json_object_open(struct tt_json *j, const char *name);
void tt_json_object_close(struct tt_json *j);
void tt_json_array_open(struct tt_json *j, const char *name);
void tt_json_array_close(struct tt_json *j);

void tt_json_string(struct tt_json *j, const char *name, const char *value);
void tt_json_u64(struct tt_json *j, const char *name, uint64_t value);
void tt_json_i64(struct tt_json *j, const char *name, int64_t value);
void tt_json_bool(struct tt_json *j, const char *name, bool value);
void tt_json_null(struct tt_json *j, const char *name);
void tt_json_milli(struct tt_json *j, const char *name, uint64_t thousandths);

void tt_json_write_string(FILE *out, const char *s);

#endif /* TT_CTL_JSON_H */
