// SPDX-License-Identifier: GPL-2.0-only
/*
 * --completion-table: the options a tool parses, as the build reads them
 * to make bash, zsh and fish completion (completion/generate). One line
 * per option and per word its value can be, tab-separated, "-" for none:
 *
 *	option	SHORT	LONG	ARG	KIND	HELP
 *	word	SHORT	LONG	WORD
 *
 * KIND is flag (no value), or what the value is (enum value_kind).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "tool.h"

static const char *const kind_names[] = {
	[VALUE_NONE] = "none", [VALUE_WORD] = "word", [VALUE_WORD_LIST] = "list",
	[VALUE_PID] = "pid", [VALUE_TID] = "tid", [VALUE_DISK] = "disk",
	[VALUE_FILE] = "file", [VALUE_DIR] = "dir",
};

static const struct option_value *find_value(const struct option_value *v, int key)
{
	for (; v && v->key; v++)
		if (v->key == key)
			return v;
	return NULL;
}

static bool has_short(const struct argp_option *o)
{
	return o->key > 0 && o->key < 128 && isalnum(o->key);
}

/* The option's names, as both kinds of line start. */
static void print_names(FILE *f, const char *what, const struct argp_option *o)
{
	fprintf(f, "%s\t", what);
	if (has_short(o))
		fprintf(f, "%c\t", o->key);
	else
		fputs("-\t", f);
	fprintf(f, "%s", o->name ? o->name : "-");
}

/* Its first line, with no tab to split a field. */
static void print_help(FILE *f, const char *doc)
{
	for (; doc && *doc && *doc != '\n'; doc++)
		fputc(*doc == '\t' ? ' ' : *doc, f);
	fputc('\n', f);
}

static const char *word_at(const struct option_value *v, int i)
{
	if (v->words)
		return i < v->nwords ? v->words[i] : NULL;
	return v->word(i);
}

static void print_words(FILE *f, const struct argp_option *o, const struct option_value *v)
{
	const char *w;

	for (int i = 0; (w = word_at(v, i)); i++) {
		if (!*w)
			continue;
		print_names(f, "word", o);
		fprintf(f, "\t%s\n", w);
	}
}

void completion_table(FILE *f, const struct argp_option *opts, const struct option_value *values,
		      const struct option_value *shared)
{
	for (const struct argp_option *o = opts; o->name || o->key; o++) {
		const struct option_value *v = find_value(values, o->key);

		if (o->flags & OPTION_HIDDEN || (!o->name && !has_short(o)))
			continue;
		if (!v)
			v = find_value(shared, o->key);
		print_names(f, "option", o);
		fprintf(f, "\t%s\t%s\t", o->arg ? o->arg : "-",
			!o->arg ? "flag" : kind_names[v ? v->kind : VALUE_NONE]);
		print_help(f, o->doc);
		if (o->arg && v && (v->kind == VALUE_WORD || v->kind == VALUE_WORD_LIST))
			print_words(f, o, v);
	}
}
