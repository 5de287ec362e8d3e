/* SPDX-License-Identifier: GPL-2.0-only */
/* A minimal streaming JSON writer: one object per line, no allocation. */
#ifndef COMMON_JSON_H
#define COMMON_JSON_H

#include <stdbool.h>
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
void json_str(struct json *j, const char *key, const char *val);
void json_u64(struct json *j, const char *key, unsigned long long val);
void json_i64(struct json *j, const char *key, long long val);
void json_num(struct json *j, const char *key, double val);
void json_bool(struct json *j, const char *key, bool val);

#endif /* COMMON_JSON_H */
