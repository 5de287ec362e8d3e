/* SPDX-License-Identifier: GPL-2.0-only */
/* A minimal streaming JSON writer: one object per line, no allocation. */
#ifndef COMMON_JSON_H
#define COMMON_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct json {
	FILE *f;
	bool need_comma;
};

void json_begin(struct json *j, FILE *f);	/* "{" */
void json_end(struct json *j);			/* "}\n" */
void json_key(struct json *j, const char *key);
void json_open(struct json *j, const char *key, char bracket); /* key may be NULL in arrays */
void json_close(struct json *j, char bracket);
/*
 * Strings are always valid JSON: well-formed UTF-8 as is (control
 * characters, U+007F to U+009F, quote and backslash escaped), each byte
 * that is not well-formed UTF-8 as U+FFFD. Then, and only then, the field
 * "<key>_hex" follows with the exact bytes in lowercase hex, e.g.
 * "comm":"ab\ufffd","comm_hex":"6162ff" (not in arrays: key NULL).
 * json_strn() reads buf[0..len) up to the first NUL.
 */
void json_strn(struct json *j, const char *key, const char *buf, size_t len);
void json_str(struct json *j, const char *key, const char *val);
void json_u64(struct json *j, const char *key, unsigned long long val);
void json_i64(struct json *j, const char *key, long long val);
/* Integers as such; fractions with 3 decimals, or more below 1 for three
 * significant digits (0.00170), at most FRACTION_DIGITS_MAX. */
void json_num(struct json *j, const char *key, double val);

/* @v / 10^@digits (@digits <= 19), exactly: nanoseconds as microseconds. */
void json_decimal(struct json *j, const char *key, unsigned long long v, unsigned int digits);

/* Digits after the point that show @sig significant digits of @v, kept in
 * [@min, @max]. FRACTION_DIGITS_MAX: a nanosecond in milliseconds is
 * 0.000001; interpolated percentiles and averages go a little finer. */
#define FRACTION_DIGITS_MAX 9
int fraction_digits(double v, int sig, int min, int max);
void json_bool(struct json *j, const char *key, bool val);

#endif /* COMMON_JSON_H */
