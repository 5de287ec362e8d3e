// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>
#include "escape.h"

/* The longest escaped form of one unit: a label's backslash-backslash-xNN,
 * or a 4-byte character. */
#define UNIT_MAX 5

static bool is_cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

/* RFC 3629 section 4: the lead byte limits the range of the second byte,
 * which excludes overlong forms, surrogates and code points > U+10FFFF. */
size_t utf8_decode(const char *s, size_t n, unsigned int *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t need;

	if (!n)
		return 0;
	if (u[0] < 0x80) {
		*cp = u[0];
		return 1;
	}
	if (u[0] < 0xc2 || u[0] > 0xf4)
		return 0;
	if (u[0] < 0xe0) {
		need = 2;
		*cp = u[0] & 0x1f;
	} else if (u[0] < 0xf0) {
		need = 3;
		*cp = u[0] & 0x0f;
		lo = u[0] == 0xe0 ? 0xa0 : 0x80;
		hi = u[0] == 0xed ? 0x9f : 0xbf;
	} else {
		need = 4;
		*cp = u[0] & 0x07;
		lo = u[0] == 0xf0 ? 0x90 : 0x80;
		hi = u[0] == 0xf4 ? 0x8f : 0xbf;
	}
	if (n < need || u[1] < lo || u[1] > hi)
		return 0;
	for (size_t i = 1; i < need; i++) {
		if (!is_cont(u[i]))
			return 0;
		*cp = *cp << 6 | (u[i] & 0x3f);
	}
	return need;
}

bool utf8_valid(const char *buf, size_t len)
{
	unsigned int cp;
	size_t k;

	len = strnlen(buf, len);
	for (size_t i = 0; i < len; i += k)
		if (!(k = utf8_decode(buf + i, len - i, &cp)))
			return false;
	return true;
}

/* Escape the unit at s[0..n) into out; returns the bytes consumed and
 * sets *outlen. A C1 control is two bytes, each escaped on its own. */
static size_t text_unit(const char *s, size_t n, char out[UNIT_MAX], size_t *outlen)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char c = (unsigned char)s[0];
	unsigned int cp;
	size_t k = utf8_decode(s, n, &cp);

	*outlen = 2;
	out[0] = '\\';
	if (k && cp == '\\') {
		out[1] = '\\';
	} else if (k && cp == '\n') {
		out[1] = 'n';
	} else if (k && cp == '\t') {
		out[1] = 't';
	} else if (k && cp == '\r') {
		out[1] = 'r';
	} else if (!k || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
		out[1] = 'x';
		out[2] = hex[c >> 4];
		out[3] = hex[c & 0xf];
		*outlen = 4;
		return 1;
	} else {
		memcpy(out, s, k);
		*outlen = k;
	}
	return k;
}

/* One unit of a label value: the text rule's, but for the escapes
 * Prometheus undoes itself. Its backslash-backslash and backslash-n are
 * the format's own (Prometheus reads a backslash and a newline), a quote
 * gets a backslash, and the text rule's other escapes (backslash-t,
 * backslash-xNN) get a second backslash, so that Prometheus reads the
 * characters the text output shows. */
static size_t label_unit(const char *s, size_t n, char out[UNIT_MAX], size_t *outlen)
{
	size_t k = text_unit(s, n, out, outlen);

	if (*outlen == 1 && out[0] == '"') {
		out[0] = '\\';
		out[1] = '"';
		*outlen = 2;
	} else if (out[0] == '\\' && *outlen > 1 && out[1] != '\\' && out[1] != 'n') {
		memmove(out + 1, out, *outlen);
		(*outlen)++;
	}
	return k;
}

typedef size_t unit_fn(const char *s, size_t n, char out[UNIT_MAX], size_t *outlen);

void escape_text(FILE *f, const char *buf, size_t len)
{
	char out[UNIT_MAX];
	size_t outlen;

	len = strnlen(buf, len);
	for (size_t i = 0; i < len;) {
		i += text_unit(buf + i, len - i, out, &outlen);
		fwrite(out, 1, outlen, f);
	}
}

static size_t escape_buf(unit_fn *unit, char *dst, size_t size, const char *buf, size_t len)
{
	size_t pos = 0, need = 0, outlen;
	bool full = size == 0;
	char out[UNIT_MAX];

	len = strnlen(buf, len);
	for (size_t i = 0; i < len;) {
		i += unit(buf + i, len - i, out, &outlen);
		need += outlen;
		if (!full && pos + outlen < size) {
			memcpy(dst + pos, out, outlen);
			pos += outlen;
		} else {
			full = true;
		}
	}
	if (size)
		dst[pos] = '\0';
	return need;
}

size_t escape_text_buf(char *dst, size_t size, const char *buf, size_t len)
{
	return escape_buf(text_unit, dst, size, buf, len);
}

size_t escape_label_buf(char *dst, size_t size, const char *buf, size_t len)
{
	return escape_buf(label_unit, dst, size, buf, len);
}
