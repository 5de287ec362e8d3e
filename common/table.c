// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>
#include <string.h>
#include "escape.h"
#include "table.h"

/* The widest text cell: a kernel path (256 bytes) escaped, and a marker. */
#define CELL_MAX 4096

void table_init(struct table *t, const struct table_spec *spec)
{
	memset(t, 0, sizeof(*t));
	t->spec = spec;
}

void table_free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->rows[i].strings);
	free(t->rows);
	t->rows = NULL;
	t->n = t->cap = 0;
}

/* The row's key, its strings copied into one block of its own. */
static int copy_key(struct table_row *r, const struct key_field *key, int nkey)
{
	size_t len = 0;
	char *p;

	r->nkey = nkey < TABLE_KEYS_MAX ? nkey : TABLE_KEYS_MAX;
	for (int i = 0; i < r->nkey; i++)
		if (key[i].type == KEY_STR)
			len += strlen(key[i].s) + 1;
	p = r->strings = malloc(len ? len : 1);
	if (!p)
		return -1;
	for (int i = 0; i < r->nkey; i++) {
		r->key[i] = key[i];
		if (key[i].type != KEY_STR)
			continue;
		len = strlen(key[i].s) + 1;
		r->key[i].s = memcpy(p, key[i].s, len);
		p += len;
	}
	return 0;
}

int table_add(struct table *t, const struct key_field *key, int nkey, const unsigned long long *counts)
{
	struct table_row *r;

	if (t->n == t->cap) {
		r = realloc(t->rows, (t->cap * 2 + 64) * sizeof(*r));
		if (!r)
			return -1;
		t->rows = r;
		t->cap = t->cap * 2 + 64;
	}
	r = &t->rows[t->n];
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < t->spec->ncounts && i < TABLE_COUNTS_MAX; i++)
		r->count[i] = counts[i];
	if (copy_key(r, key, nkey))
		return -1;
	t->n++;
	return 0;
}

void table_sum(struct table *t, const struct table_sum *s)
{
	if (t->nsums < TABLE_SUMS_MAX)
		t->sums[t->nsums++] = *s;
}

size_t table_text_rows(const struct table *t)
{
	size_t max = t->limit ? t->limit : TABLE_TEXT_ROWS;

	return t->n < max ? t->n : max;
}

static size_t json_rows(const struct table *t)
{
	return t->limit && t->limit < t->n ? t->limit : t->n;
}

static const struct table_sum *sum_of(const struct table *t, const char *json)
{
	for (int i = 0; i < t->nsums; i++)
		if (!strcmp(t->sums[i].json, json))
			return &t->sums[i];
	return NULL;
}

unsigned long long table_sum_u64(const struct table *t, const char *json)
{
	const struct table_sum *s = sum_of(t, json);

	return s ? s->u : 0;
}

double table_sum_num(const struct table *t, const char *json)
{
	const struct table_sum *s = sum_of(t, json);

	return s ? s->d : 0;
}

const struct key_field *table_key(const struct table_row *row, const char *name)
{
	for (int i = 0; i < row->nkey; i++)
		if (!strcmp(row->key[i].name, name))
			return &row->key[i];
	return NULL;
}

/* ---- Text ---- */

static void cell_number(const struct key_field *k, char *buf, size_t len)
{
	if (k->type == KEY_U64 || k->type == KEY_BOOL)
		snprintf(buf, len, "%llu", k->u);
	else
		snprintf(buf, len, "%lld", k->i);
}

static void cell_path(const struct table_row *r, const struct key_field *k, char *buf, size_t len)
{
	const struct key_field *cut = table_key(r, "truncated");
	size_t n;

	if (!k->s[0]) {
		snprintf(buf, len, "[unreadable]");
		return;
	}
	n = escape_text_buf(buf, len, k->s, strlen(k->s));
	if (cut && cut->u && n < len)
		snprintf(buf + n, len - n, "... [truncated]");
}

static void cell_address(const struct table_row *r, const struct table_column *c,
			 const struct key_field *k, char *buf, size_t len)
{
	const struct key_field *port = table_key(r, c->port), *family = table_key(r, "family");
	bool v6 = family && family->type == KEY_STR && !strcmp(family->s, "ipv6");

	snprintf(buf, len, v6 ? "[%s]:%llu" : "%s:%llu", k->s, port ? port->u : 0);
}

static void cell_key(const struct table_row *r, const struct table_column *c, char *buf, size_t len)
{
	const struct key_field *k = table_key(r, c->key);
	const char *name;

	if (!k) {
		buf[0] = '\0';
		return;
	}
	switch (c->style) {
	case CELL_DASH_ZERO:
		if (!k->u && !k->i)
			snprintf(buf, len, "-");
		else
			cell_number(k, buf, len);
		return;
	case CELL_ERRNO_NAME:
		name = k->i > 0 && k->i < 4096 ? strerrorname_np((int)k->i) : NULL;
		snprintf(buf, len, "%s", !k->i ? "(success)" : name ? name : "?");
		return;
	case CELL_PATH:
		cell_path(r, k, buf, len);
		return;
	case CELL_ADDRESS:
		cell_address(r, c, k, buf, len);
		return;
	default:
		if (k->type == KEY_STR)
			escape_text_buf(buf, len, k->s, strlen(k->s));
		else
			cell_number(k, buf, len);
	}
}

/* Cells one space apart, each as wide as its column says. */
static void text_line(FILE *f, const struct table *t, const struct table_row *r)
{
	static char cell[CELL_MAX];

	for (int i = 0; i < t->spec->ncols; i++) {
		const struct table_column *c = &t->spec->cols[i];

		if (!r)
			snprintf(cell, sizeof(cell), "%s", c->head);
		else if (c->key)
			cell_key(r, c, cell, sizeof(cell));
		else
			snprintf(cell, sizeof(cell), "%llu", r->count[c->count]);
		fprintf(f, "%s%*s", i ? " " : "", c->width, cell);
	}
	fputc('\n', f);
}

static void text_table(struct output *o, const struct table *t)
{
	size_t n = table_text_rows(t);

	if (t->spec->text_title)
		t->spec->text_title(o->f, t);
	text_line(o->f, t, NULL);
	for (size_t i = 0; i < n; i++)
		text_line(o->f, t, &t->rows[i]);
	if (t->spec->text_note)
		t->spec->text_note(o->f, t);
}

/* ---- JSON ---- */

static void json_sums(struct json *j, const struct table *t)
{
	for (int i = 0; i < t->nsums; i++) {
		const struct table_sum *s = &t->sums[i];

		if (s->omit_zero && !s->u && !s->d)
			continue;
		if (s->type == SUM_NUM)
			json_num(j, s->json, s->d);
		else
			json_u64(j, s->json, s->u);
	}
}

static void json_table(struct output *o, const struct table *t)
{
	size_t n = json_rows(t);
	struct json j;

	output_json_begin(o, &j);
	json_str(&j, "by", t->spec->by);
	json_sums(&j, t);
	json_open(&j, "rows", '[');
	for (size_t i = 0; i < n; i++) {
		json_open(&j, NULL, '{');
		output_key_fields_json(&j, t->rows[i].key, t->rows[i].nkey);
		for (int c = 0; c < t->spec->ncounts; c++)
			json_u64(&j, t->spec->counts[c].json, t->rows[i].count[c]);
		json_close(&j, '}');
	}
	json_close(&j, ']');
	json_end(&j);
}

/* ---- Metrics: every row, each count its counter ---- */

static void metrics_table(struct output *o, const struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		for (int c = 0; c < t->spec->ncounts; c++)
			if (t->spec->counts[c].family)
				output_count(o, t->spec->counts[c].family, t->rows[i].key, t->rows[i].nkey,
					     t->rows[i].count[c]);
	for (int i = 0; i < t->nsums; i++)
		if (t->sums[i].family)
			output_count(o, t->sums[i].family, NULL, 0, t->sums[i].u);
}

void output_table(struct output *o, const struct table *t)
{
	if (output_metrics(o))
		metrics_table(o, t);
	if (o->format == OUTPUT_OPENMETRICS)
		return;
	if (o->json)
		json_table(o, t);
	else
		text_table(o, t);
}
