// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>
#include "json.h"

void json_begin(struct json *j, FILE *f)
{
	j->f = f;
	j->need_comma = false;
	fputc('{', f);
}

void json_end(struct json *j)
{
	fputs("}\n", j->f);
}

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void json_key(struct json *j, const char *key)
{
	if (j->need_comma)
		fputc(',', j->f);
	j->need_comma = true;
	if (key) {
		put_string(j->f, key);
		fputc(':', j->f);
	}
}

void json_open(struct json *j, const char *key, char bracket)
{
	json_key(j, key);
	fputc(bracket, j->f);
	j->need_comma = false;
}

void json_close(struct json *j, char bracket)
{
	fputc(bracket, j->f);
	j->need_comma = true;
}

void json_str(struct json *j, const char *key, const char *val)
{
	json_key(j, key);
	put_string(j->f, val);
}

void json_u64(struct json *j, const char *key, unsigned long long val)
{
	json_key(j, key);
	fprintf(j->f, "%llu", val);
}

void json_i64(struct json *j, const char *key, long long val)
{
	json_key(j, key);
	fprintf(j->f, "%lld", val);
}

void json_num(struct json *j, const char *key, double val)
{
	json_key(j, key);
	if (!isfinite(val))
		fputs("null", j->f);
	else if (val == floor(val) && fabs(val) < 1e21)
		fprintf(j->f, "%.0f", val == 0 ? 0.0 : val);	/* no "-0" */
	else
		fprintf(j->f, "%.3f", val);
}

void json_bool(struct json *j, const char *key, bool val)
{
	json_key(j, key);
	fputs(val ? "true" : "false", j->f);
}
