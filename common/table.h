/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A report's table (opensnoop -C, tcprcv): rows of key fields and counts,
 * which the tool fills in the order it ranks them and output_table()
 * renders once per format: columns in text, one object in JSON, and in
 * the metrics each count a counter labelled by the row's key (cumulative:
 * the store adds every report's rows). The tool declares its columns and
 * counts once and never asks which format was chosen.
 */
#ifndef COMMON_TABLE_H
#define COMMON_TABLE_H

#include <stddef.h>
#include <stdio.h>
#include "output.h"

#define TABLE_KEYS_MAX 8
#define TABLE_COUNTS_MAX 8
#define TABLE_SUMS_MAX 12
/* The rows text shows when -r is not given; JSON then shows every row,
 * so that a script's sum of the rows is the table's total. */
#define TABLE_TEXT_ROWS 20

/* How a text cell shows its key field. */
enum cell_style {
	CELL_PLAIN,		/* the value, a string escaped */
	CELL_DASH_ZERO,		/* a number; 0 (no one known) as "-" */
	CELL_ERRNO_NAME,	/* ENOENT; "(success)" for 0, "?" for a number without a name */
	CELL_PATH,		/* escaped; "[unreadable]" when empty, then "... [truncated]"
				 * when the row's "truncated" is true */
	CELL_ADDRESS,		/* "addr:port", "[addr]:port" where "family" is "ipv6" */
};

struct table_column {
	const char *head;
	int width;		/* as printf's: negative, left-aligned; 0, as wide as it is */
	const char *key;	/* the key field shown, by name; NULL: */
	int count;		/* the count shown, by index */
	enum cell_style style;
	const char *port;	/* CELL_ADDRESS: the key field of the port */
};

struct table_count {
	const char *json;			/* its name in a JSON row */
	const struct metric_family *family;	/* its counter; NULL: not a metric */
};

struct table;

struct table_spec {
	const char *by;		/* JSON "by" */
	const struct table_column *cols;
	int ncols;
	const struct table_count *counts;
	int ncounts;
	/* Text only: a line before the column heads, and the sentence after
	 * the rows (totals, rows not shown, what was lost). NULL: none. */
	void (*text_title)(FILE *f, const struct table *t);
	void (*text_note)(FILE *f, const struct table *t);
};

/* A number of the whole table, in JSON before the rows ("total": 87). */
struct table_sum {
	const char *json;
	enum { SUM_U64, SUM_NUM } type;
	unsigned long long u;
	double d;
	bool omit_zero;				/* not in JSON while 0 */
	const struct metric_family *family;	/* a counter (with no labels) too */
};

struct table_row {
	struct key_field key[TABLE_KEYS_MAX];
	int nkey;
	unsigned long long count[TABLE_COUNTS_MAX];
	char *strings;		/* the key's strings, owned */
};

struct table {
	const struct table_spec *spec;
	struct table_row *rows;
	size_t n, cap;
	struct table_sum sums[TABLE_SUMS_MAX];
	int nsums;
	/* -r N: the rows rendered, the first ones, in text and JSON; 0: not
	 * given (text TABLE_TEXT_ROWS, JSON all). The metrics take every row. */
	size_t limit;
};

/* An array and its length, as table_spec wants its columns and counts. */
#define TABLE_ARRAY(a) (a), (int)(sizeof(a) / sizeof((a)[0]))

void table_init(struct table *t, const struct table_spec *spec);
void table_free(struct table *t);
/* A row; its strings are copied. 0, or -1 when out of memory. */
int table_add(struct table *t, const struct key_field *key, int nkey, const unsigned long long *counts);
void table_sum(struct table *t, const struct table_sum *s);
/* The rows text shows: for text_note's "more rows not shown". */
size_t table_text_rows(const struct table *t);
/* The value of the sum named @json (0 if none): for text_note. */
unsigned long long table_sum_u64(const struct table *t, const char *json);
double table_sum_num(const struct table *t, const char *json);
/* The key field named @name of @row, or NULL. */
const struct key_field *table_key(const struct table_row *row, const char *name);

void output_table(struct output *o, const struct table *t);

#endif /* COMMON_TABLE_H */
