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
void json_num(struct json *j, const char *key, double val);
void json_bool(struct json *j, const char *key, bool val);

#endif /* COMMON_JSON_H */
