// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "minijson.h"

#define MAX_DEPTH 64

struct rd {
	const char *p;
	int depth;
};

static struct jv *parse_value(struct rd *r);

static void skip_ws(struct rd *r)
{
	while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')
		r->p++;
}

static struct jv *new_value(enum jv_type t)
{
	struct jv *v = calloc(1, sizeof(*v));

	if (v)
		v->type = t;
	return v;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static size_t put_utf8(char *d, unsigned int cp)
{
	if (cp < 0x80) {
		d[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = (char)(0xc0 | (cp >> 6));
		d[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	d[0] = (char)(0xe0 | (cp >> 12));
	d[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
	d[2] = (char)(0x80 | (cp & 0x3f));
	return 3;
}

/* The length of the well-formed UTF-8 character at s (RFC 3629), 0 if
 * none: JSON text is UTF-8 (RFC 8259 section 8.1). Written apart from
 * common/escape.c, so that the writer is not checked by its own decoder. */
static size_t utf8_len(const unsigned char *s)
{
	static const unsigned int min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
	unsigned int cp;

	if (!len || s[0] >= 0xf8)
		return 0;
	cp = s[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* At the opening quote; returns a malloc'd decoded string. */
static char *parse_string(struct rd *r)
{
	const char *s = r->p + 1;
	char *out, *d;

	/* decoded is never longer than the source */
	out = malloc(strlen(s) + 1);
	if (!out)
		return NULL;
	d = out;
	for (;;) {
		unsigned char c = (unsigned char)*s;

		if (c == '"')
			break;
		if (c < 0x20) /* includes the terminating NUL */
			goto fail;
		if (c >= 0x80) {
			size_t len = utf8_len((const unsigned char *)s);

			if (!len)
				goto fail;
			memcpy(d, s, len);
			d += len;
			s += len;
			continue;
		}
		if (c != '\\') {
			*d++ = (char)c;
			s++;
			continue;
		}
		s++;
		switch (*s) {
		case '"': *d++ = '"'; break;
		case '\\': *d++ = '\\'; break;
		case '/': *d++ = '/'; break;
		case 'b': *d++ = '\b'; break;
		case 'f': *d++ = '\f'; break;
		case 'n': *d++ = '\n'; break;
		case 'r': *d++ = '\r'; break;
		case 't': *d++ = '\t'; break;
		case 'u': {
			unsigned int cp = 0;

			for (int i = 1; i <= 4; i++) {
				int h = hexval(s[i]);

				if (h < 0)
					goto fail;
				cp = cp << 4 | (unsigned int)h;
			}
			if (cp == 0)
				goto fail; /* would truncate the C string */
			d += put_utf8(d, cp);
			s += 4;
			break;
		}
		default:
			goto fail;
		}
		s++;
	}
	*d = '\0';
	r->p = s + 1;
	return out;
fail:
	free(out);
	return NULL;
}

static struct jv *parse_number(struct rd *r)
{
	const char *s = r->p, *start = r->p;
	struct jv *v;
	size_t len;

	if (*s == '-')
		s++;
	if (*s == '0') {
		s++;
	} else if (*s >= '1' && *s <= '9') {
		while (*s >= '0' && *s <= '9')
			s++;
	} else {
		return NULL;
	}
	if (*s == '.') {
		s++;
		if (!(*s >= '0' && *s <= '9'))
			return NULL;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return NULL;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	v = new_value(JV_NUM);
	if (!v)
		return NULL;
	len = (size_t)(s - start);
	v->raw = malloc(len + 1);
	if (!v->raw) {
		free(v);
		return NULL;
	}
	memcpy(v->raw, start, len);
	v->raw[len] = '\0';
	v->num = strtod(v->raw, NULL);
	r->p = s;
	return v;
}

static bool push(struct jv *c, char *key, struct jv *item)
{
	struct jv **items = realloc(c->items, (c->n + 1) * sizeof(*items));

	if (!items)
		return false;
	c->items = items;
	if (c->type == JV_OBJ) {
		char **keys = realloc(c->keys, (c->n + 1) * sizeof(*keys));

		if (!keys)
			return false;
		c->keys = keys;
		c->keys[c->n] = key;
	}
	c->items[c->n++] = item;
	return true;
}

static struct jv *parse_container(struct rd *r, char open)
{
	char close = open == '{' ? '}' : ']';
	struct jv *c = new_value(open == '{' ? JV_OBJ : JV_ARR);

	if (!c || ++r->depth > MAX_DEPTH)
		goto fail;
	r->p++;
	skip_ws(r);
	if (*r->p == close) {
		r->p++;
		r->depth--;
		return c;
	}
	for (;;) {
		char *key = NULL;
		struct jv *item;

		skip_ws(r);
		if (open == '{') {
			if (*r->p != '"')
				goto fail;
			key = parse_string(r);
			if (!key)
				goto fail;
			skip_ws(r);
			if (*r->p != ':') {
				free(key);
				goto fail;
			}
			r->p++;
		}
		item = parse_value(r);
		if (!item || !push(c, key, item)) {
			free(key);
			jv_free(item);
			goto fail;
		}
		skip_ws(r);
		if (*r->p == ',') {
			r->p++;
			continue;
		}
		if (*r->p == close) {
			r->p++;
			r->depth--;
			return c;
		}
		goto fail;
	}
fail:
	jv_free(c);
	return NULL;
}

static struct jv *parse_literal(struct rd *r, const char *word, enum jv_type t, bool b)
{
	size_t len = strlen(word);
	struct jv *v;

	if (strncmp(r->p, word, len))
		return NULL;
	v = new_value(t);
	if (v) {
		v->b = b;
		r->p += len;
	}
	return v;
}

static struct jv *parse_value(struct rd *r)
{
	skip_ws(r);
	switch (*r->p) {
	case '{':
	case '[':
		return parse_container(r, *r->p);
	case '"': {
		char *s = parse_string(r);
		struct jv *v;

		if (!s)
			return NULL;
		v = new_value(JV_STR);
		if (!v) {
			free(s);
			return NULL;
		}
		v->str = s;
		return v;
	}
	case 't':
		return parse_literal(r, "true", JV_BOOL, true);
	case 'f':
		return parse_literal(r, "false", JV_BOOL, false);
	case 'n':
		return parse_literal(r, "null", JV_NULL, false);
	default:
		return parse_number(r);
	}
}

struct jv *jv_parse(const char *s)
{
	struct rd r = { .p = s };
	struct jv *v = parse_value(&r);

	if (!v)
		return NULL;
	skip_ws(&r);
	if (*r.p) {
		jv_free(v);
		return NULL;
	}
	return v;
}

void jv_free(struct jv *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		if (v->keys)
			free(v->keys[i]);
		jv_free(v->items[i]);
	}
	free(v->keys);
	free(v->items);
	free(v->raw);
	free(v->str);
	free(v);
}

const struct jv *jv_get(const struct jv *o, const char *key)
{
	if (!o || o->type != JV_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return o->items[i];
	return NULL;
}

bool jv_u64(const struct jv *v, unsigned long long *out)
{
	char *end;

	if (!v || v->type != JV_NUM || v->raw[0] == '-' || strpbrk(v->raw, ".eE"))
		return false;
	errno = 0;
	*out = strtoull(v->raw, &end, 10);
	return !errno && !*end;
}

bool jv_i64(const struct jv *v, long long *out)
{
	char *end;

	if (!v || v->type != JV_NUM || strpbrk(v->raw, ".eE"))
		return false;
	errno = 0;
	*out = strtoll(v->raw, &end, 10);
	return !errno && !*end;
}

bool jv_unique_keys(const struct jv *v)
{
	if (!v)
		return true;
	for (size_t i = 0; i < v->n; i++) {
		if (v->type == JV_OBJ)
			for (size_t k = 0; k < i; k++)
				if (!strcmp(v->keys[i], v->keys[k]))
					return false;
		if (!jv_unique_keys(v->items[i]))
			return false;
	}
	return true;
}
