// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>
#include <string.h>
#include "escape.h"
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

/* Well-formed UTF-8 as is, except the characters JSON or a terminal
 * cannot take raw; a byte that is not well-formed UTF-8 becomes U+FFFD. */
static void put_chars(FILE *f, const char *s, size_t n)
{
	unsigned int cp;
	size_t k;

	for (size_t i = 0; i < n; i += k ? k : 1) {
		k = utf8_decode(s + i, n - i, &cp);
		if (!k)
			fputs("\\ufffd", f);
		else if (cp == '"' || cp == '\\')
			fprintf(f, "\\%c", cp);
		else if (cp == '\n')
			fputs("\\n", f);
		else if (cp == '\t')
			fputs("\\t", f);
		else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
			fprintf(f, "\\u%04x", cp);
		else
			fwrite(s + i, 1, k, f);
	}
}

static void put_string(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	put_chars(f, s, n);
	fputc('"', f);
}

static void put_hex(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", (unsigned char)s[i]);
	fputc('"', f);
}

/* ,"<key><suffix>": */
static void put_key(struct json *j, const char *key, const char *suffix)
{
	if (j->need_comma)
		fputc(',', j->f);
	j->need_comma = true;
	if (key) {
		fputc('"', j->f);
		put_chars(j->f, key, strlen(key));
		fputs(suffix, j->f);
		fputs("\":", j->f);
	}
}

void json_key(struct json *j, const char *key)
{
	put_key(j, key, "");
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

void json_strn(struct json *j, const char *key, const char *buf, size_t len)
{
	len = strnlen(buf, len);
	put_key(j, key, "");
	put_string(j->f, buf, len);
	if (key && !utf8_valid(buf, len)) {
		put_key(j, key, "_hex");
		put_hex(j->f, buf, len);
	}
}

void json_str(struct json *j, const char *key, const char *val)
{
	json_strn(j, key, val, strlen(val));
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
		fprintf(j->f, "%.*f", fraction_digits(val, 3, 3, FRACTION_DIGITS_MAX), val);
}

void json_decimal(struct json *j, const char *key, unsigned long long v, unsigned int digits)
{
	unsigned long long div = 1;
	unsigned int d;

	for (d = 0; d < digits; d++)
		div *= 10;
	json_key(j, key);
	fprintf(j->f, "%llu", v / div);
	v %= div;
	/* no trailing zeros: 0.128, not 0.128000 */
	for (; digits && v % 10 == 0; v /= 10, digits--)
		;
	if (digits)
		fprintf(j->f, ".%0*llu", (int)digits, v);
}

int fraction_digits(double v, int sig, int min, int max)
{
	int d = sig - 1;

	v = fabs(v);
	if (v == 0 || !isfinite(v))
		return min;
	for (; v >= 10 && d > 0; v /= 10)
		d--;
	for (; v < 1 && d < max; v *= 10)
		d++;
	return d < min ? min : d > max ? max : d;
}

void json_bool(struct json *j, const char *key, bool val)
{
	json_key(j, key);
	fputs(val ? "true" : "false", j->f);
}
