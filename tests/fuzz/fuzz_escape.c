// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the escaping of strings from the traced system
 * (common/escape.c) and JSON's strings (common/json.c), on any bytes.
 * Each output is read back by a decoder of its own here and must give the
 * input (up to its first NUL): text's escapes, a Prometheus label value's,
 * a JSON string's (or its _hex twin for bytes that are not UTF-8). And no
 * output holds a byte a terminal or a parser would take as control.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "escape.h"
#include "json.h"
#include "minijson.h"

#define MUST(c) do { if (!(c)) abort(); } while (0)

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Undo the text rule of escape.h into @out; the length, or -1. */
static long text_unescape(const char *s, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\') {
			out[o++] = s[i];
			continue;
		}
		if (++i == n)
			return -1;
		switch (s[i]) {
		case '\\': out[o++] = '\\'; break;
		case 'n': out[o++] = '\n'; break;
		case 't': out[o++] = '\t'; break;
		case 'r': out[o++] = '\r'; break;
		case 'x':
			if (i + 2 >= n || hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0)
				return -1;
			out[o++] = (char)(hexval(s[i + 1]) << 4 | hexval(s[i + 2]));
			i += 2;
			break;
		default:
			return -1;
		}
	}
	return (long)o;
}

/* No C0 control, DEL or C1 control, and well-formed UTF-8. */
static void terminal_safe(const char *s, size_t n)
{
	unsigned int cp;

	for (size_t i = 0; i < n;) {
		size_t k = utf8_decode(s + i, n - i, &cp);

		MUST(k);
		MUST(cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp < 0xa0));
		i += k;
	}
}

/* json_strn's output, read by the unit tests' strict reader: the string
 * is the input where it is UTF-8; else its _hex twin is every byte. */
static void check_json(const char *in, size_t n)
{
	char *buf = NULL, *hex = malloc(n + 1);
	size_t size = 0;
	const struct jv *k, *k_hex;
	struct jv *v;
	struct json j;
	FILE *f = open_memstream(&buf, &size);

	MUST(f && hex);
	json_begin(&j, f);
	json_strn(&j, "k", in, n);
	json_end(&j);
	MUST(!fclose(f));
	v = jv_parse(buf);
	MUST(v && v->type == JV_OBJ && jv_unique_keys(v));
	k = jv_get(v, "k");
	k_hex = jv_get(v, "k_hex");
	MUST(k && k->type == JV_STR);
	if (utf8_valid(in, n)) {
		MUST(v->n == 1 && strlen(k->str) == n && !memcmp(k->str, in, n));
	} else {
		MUST(v->n == 2 && k_hex && k_hex->type == JV_STR && strlen(k_hex->str) == 2 * n);
		for (size_t i = 0; i < n; i++) {
			MUST(hexval(k_hex->str[2 * i]) >= 0 && hexval(k_hex->str[2 * i + 1]) >= 0);
			hex[i] = (char)(hexval(k_hex->str[2 * i]) << 4 | hexval(k_hex->str[2 * i + 1]));
		}
		MUST(!memcmp(hex, in, n));
	}
	jv_free(v);
	free(buf);
	free(hex);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	size_t n = strnlen(in, size), cap = 4 * n + 1, need, small;
	char *full = malloc(cap), *part = malloc(cap), *dec = malloc(cap), *label = malloc(2 * cap);
	long len;

	MUST(full && part && dec && label);
	/* Text: reversible, safe, and the whole of what escape_text writes. */
	need = escape_text_buf(full, cap, in, size);
	MUST(need < cap && strlen(full) == need);
	terminal_safe(full, need);
	len = text_unescape(full, need, dec);
	MUST(len == (long)n && !memcmp(dec, in, n));
	/* Cut short: a prefix, ended before an escape or character that
	 * would not fit whole, and still the whole length needed. */
	small = n ? (size_t)data[0] % (need + 1) : 0;
	MUST(escape_text_buf(part, small, in, size) == need);
	if (small) {
		MUST(strlen(part) < small && !strncmp(part, full, strlen(part)));
		MUST(text_unescape(part, strlen(part), dec) >= 0);
	}
	/* A label value: Prometheus reads \\ \" and \n as the byte each
	 * was; every other character as the text output shows it. */
	need = escape_label_buf(label, 2 * cap, in, size);
	MUST(need < 2 * cap && strlen(label) == need);
	terminal_safe(label, need);
	len = 0;
	for (size_t i = 0; i < need; i++) {
		MUST(label[i] != '"');
		if (label[i] != '\\') {
			dec[len++] = label[i];
			continue;
		}
		MUST(++i < need);
		MUST(label[i] == '\\' || label[i] == '"' || label[i] == 'n');
		dec[len++] = label[i] == 'n' ? '\n' : label[i];
	}
	{
		size_t o = 0;
		unsigned int cp;

		for (size_t i = 0, k; i < n; i += k) {
			k = utf8_decode(in + i, n - i, &cp);
			if (!k)
				k = 1;	/* a byte not of UTF-8: \xNN */
			if (k == 1 && (in[i] == '\\' || in[i] == '"' || in[i] == '\n'))
				part[o++] = in[i];
			else
				o += escape_text_buf(part + o, cap - o, in + i, k);
		}
		MUST((long)o == len && !memcmp(part, dec, o));
	}
	check_json(in, n);
	free(full);
	free(part);
	free(dec);
	free(label);
	return 0;
}
