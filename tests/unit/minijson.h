/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small strict JSON reader for the unit tests: it accepts exactly the
 * RFC 8259 grammar (no trailing commas, no raw control characters in
 * strings, no leading zeros, strings in well-formed UTF-8), so a writer
 * bug shows up as a parse failure.
 */
#ifndef TESTS_UNIT_MINIJSON_H
#define TESTS_UNIT_MINIJSON_H

#include <stdbool.h>
#include <stddef.h>

enum jv_type { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ };

struct jv {
	enum jv_type type;
	bool b;
	double num;
	char *raw;		/* JV_NUM: the number's text as written */
	char *str;		/* JV_STR: decoded (UTF-8) */
	size_t n;		/* JV_ARR, JV_OBJ: items */
	char **keys;		/* JV_OBJ */
	struct jv **items;
};

/* Parse one JSON value covering all of @s (whitespace aside); NULL on any
 * syntax error. */
struct jv *jv_parse(const char *s);
void jv_free(struct jv *v);
/* The member @key of object @o, NULL if absent or @o is not an object. */
const struct jv *jv_get(const struct jv *o, const char *key);
/* A JV_NUM that is a non-negative integer, exactly (no double rounding). */
bool jv_u64(const struct jv *v, unsigned long long *out);
bool jv_i64(const struct jv *v, long long *out);
/* No object anywhere in @v names a member twice. */
bool jv_unique_keys(const struct jv *v);

#endif
