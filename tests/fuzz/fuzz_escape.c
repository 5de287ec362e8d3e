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

/* A JSON string at *p (from its opening quote) decoded into @out (room
 * for 3 bytes an input byte: \ufffd for one byte not of UTF-8); its
 * length, or -1. */
static long json_string(const char **p, char *out)
{
	const char *s = *p;
	size_t o = 0;

	if (*s++ != '"')
		return -1;
	for (;;) {
		unsigned char c = (unsigned char)*s++;
		unsigned int cp = 0;

		if (c == '"')
			break;
		if (c < 0x20)
			return -1;	/* a raw control byte: not JSON */
		if (c != '\\') {
			out[o++] = (char)c;
			continue;
		}
		switch (*s++) {
		case '"': out[o++] = '"'; break;
		case '\\': out[o++] = '\\'; break;
		case '/': out[o++] = '/'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u':
			for (int k = 0; k < 4; k++) {
				int h = hexval((char)(s[k] | 0x20));

				if (h < 0)
					return -1;
				cp = cp << 4 | (unsigned int)h;
			}
			s += 4;
			if (cp >= 0xd800 && cp <= 0xdfff)
				return -1;	/* the writer writes no surrogate pair */
			if (cp < 0x80) {
				out[o++] = (char)cp;
			} else if (cp < 0x800) {
				out[o++] = (char)(0xc0 | cp >> 6);
				out[o++] = (char)(0x80 | (cp & 0x3f));
			} else {
				out[o++] = (char)(0xe0 | cp >> 12);
				out[o++] = (char)(0x80 | (cp >> 6 & 0x3f));
				out[o++] = (char)(0x80 | (cp & 0x3f));
			}
			break;
		default:
			return -1;
		}
	}
	*p = s;
	return (long)o;
}

static void check_json(const char *in, size_t n)
{
	char *buf = NULL, *dec = malloc(3 * n + 1), *hex = malloc(n + 1);
	size_t size = 0;
	const char *p;
	struct json j;
	long len;
	FILE *f = open_memstream(&buf, &size);

	MUST(f && dec && hex);
	json_begin(&j, f);
	json_strn(&j, "k", in, n);
	json_end(&j);
	MUST(!fclose(f));
	p = buf;
	MUST(!strncmp(p, "{\"k\":", 5));
	p += 5;
	len = json_string(&p, dec);
	MUST(len >= 0);
	if (utf8_valid(in, n)) {
		MUST((size_t)len == n && !memcmp(dec, in, n));
		MUST(!strcmp(p, "}\n"));
	} else {
		/* What the string could not say, as hex of every byte. */
		MUST(!strncmp(p, ",\"k_hex\":", 9));
		p += 9;
		len = json_string(&p, dec);
		MUST(len == (long)(2 * n) && !strcmp(p, "}\n"));
		for (size_t i = 0; i < n; i++) {
			MUST(hexval(dec[2 * i]) >= 0 && hexval(dec[2 * i + 1]) >= 0);
			hex[i] = (char)(hexval(dec[2 * i]) << 4 | hexval(dec[2 * i + 1]));
		}
		MUST(!memcmp(hex, in, n));
	}
	free(buf);
	free(dec);
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
