// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for what reports give the metrics (common/output.c) and for
 * the table model in every format (common/table.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "output.h"
#include "table.h"
#include "minijson.h"

static const struct metric_family lat = {
	.name = "t_read_duration_seconds", .help = "Test latency", .unit = "seconds",
	.type = METRIC_HISTOGRAM, .scale = 1e-9,
};

struct capture {
	char *buf;
	size_t len;
	struct output o;
};

static void capture_open(struct capture *c, enum output_format format, bool metrics)
{
	memset(c, 0, sizeof(*c));
	c->o.f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->o.f);
	c->o.tool = "t";
	c->o.format = format;
	c->o.json = format == OUTPUT_JSON;
	c->o.hist_family = &lat;
	if (metrics)
		assert_int_equal(output_metrics_start(&c->o, NULL), 0);
}

/* What the tool printed (the caller frees it). */
static char *capture_close(struct capture *c)
{
	assert_int_equal(fclose(c->o.f), 0);
	return c->buf ? c->buf : strdup("");
}

/* In OpenMetrics mode the tool's calls print nothing: the runtime
 * writes the exposition. Ends the capture. */
static void printed_nothing(struct capture *c)
{
	char *printed;

	output_metrics_stop(&c->o);
	printed = capture_close(c);
	assert_string_equal(printed, "");
	free(printed);
}

/* Each of @want (NULL-terminated) is in @out. */
static void has_all(const char *out, const char *const *want)
{
	for (; *want; want++)
		if (!strstr(out, *want))
			fail_msg("no %s in:\n%s", *want, out);
}

static char *render(struct output *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(metrics_render(output_metrics(o), METRICS_OPENMETRICS, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static struct hist *hist_of(__u64 ns, __u64 n, __u64 errors)
{
	struct hist *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	h->buckets[hist_bucket(ns)] = n;
	h->sum = ns * n;
	h->errors = errors;
	return h;
}

/* Two keys, two reports: the histograms and errors per key; lost,
 * unmatched and missed, repeated with every key, once per report. */
static void test_counts_once_per_report(void **state)
{
	struct hist_extra x = { .errors = true, .lost = 5, .unmatched = 2, .missed = 1, .has_missed = true };
	struct key_field a[2] = { KEY_UINT("pid", 1), KEY_STRING("comm", "a") };
	struct key_field b[2] = { KEY_UINT("pid", 2), KEY_STRING("comm", "b") };
	struct hist *h = hist_of(1000, 3, 1);
	static const char *const want[] = {
		"t_read_duration_seconds_count{comm=\"a\"} 6\n",
		"t_read_duration_seconds_count{comm=\"b\"} 6\n",
		"t_errors_total{comm=\"a\"} 2\n",
		"\nt_lost_events_total 10\n", "\nt_unmatched_total 4\n", "\nt_missed_total 2\n", NULL,
	};
	struct capture c;
	char *out;

	(void)state;
	capture_open(&c, OUTPUT_OPENMETRICS, true);
	for (int report = 0; report < 2; report++) {
		output_report_begin(&c.o);
		output_hist(&c.o, a, 2, h, &x);
		output_hist(&c.o, b, 2, h, &x);
	}
	out = render(&c.o);
	has_all(out, want);
	printed_nothing(&c);
	free(out);
	free(h);
}

/* One report of one histogram; the exposition after it. */
static char *report_once(struct capture *c, const struct key_field *key, int nkey,
			 const struct hist *h, const struct hist_extra *x)
{
	output_report_begin(&c->o);
	output_hist(&c->o, key, nkey, h, x);
	return render(&c->o);
}

/* Per key: biolat's lost; an idle keyed report: the family, no series. */
static void test_lost_by_key_and_idle(void **state)
{
	struct hist_extra x = { .errors = true, .lost = 3, .unmatched = -1, .lost_by_key = true,
				.per_key = true };
	struct key_field disk[1] = { KEY_STRING("disk", "sda") };
	struct hist *h = hist_of(1000, 3, 0), *empty = hist_of(0, 0, 0);
	struct capture c;
	char *out;

	(void)state;
	capture_open(&c, OUTPUT_TEXT, true);
	out = report_once(&c, NULL, 0, empty, &x);
	assert_non_null(strstr(out, "# TYPE t_read_duration_seconds histogram\n"));
	assert_null(strstr(out, "t_read_duration_seconds_count"));
	assert_null(strstr(out, "t_errors_total"));
	free(out);
	out = report_once(&c, disk, 1, h, &x);
	assert_non_null(strstr(out, "t_lost_events_total{disk=\"sda\"} 3\n"));
	assert_non_null(strstr(out, "t_read_duration_seconds_count{disk=\"sda\"} 3\n"));
	assert_null(strstr(out, "t_unmatched"));
	free(out);
	output_metrics_stop(&c.o);
	free(capture_close(&c));	/* text, printed as well: not checked here */
	free(h);
	free(empty);
}

static const struct metric_family opens = { .name = "t_opens", .help = "Opens", .type = METRIC_COUNTER };
static const struct table_count counts[] = { { "opens", &opens }, { "failed", NULL } };
static const struct table_column cols[] = {
	{ "OPENS", -6, NULL, 0, 0, NULL }, { "FAILED", 6, NULL, 1, 0, NULL },
	{ "PID", -5, "pid", 0, CELL_DASH_ZERO, NULL }, { "ERR", -4, "errno", 0, CELL_PLAIN, NULL },
	{ "NAME", -9, "errno", 0, CELL_ERRNO_NAME, NULL }, { "PATH", 0, "path", 0, CELL_PATH, NULL },
};

static void note(FILE *f, const struct table *t)
{
	fprintf(f, "%llu opens in %zu rows\n", table_sum_u64(t, "total"), t->n);
}

static const struct table_spec spec = { "test", TABLE_ARRAY(cols), TABLE_ARRAY(counts), NULL, note };

/* Three rows: one with a hostile path, one truncated, one unreadable;
 * @limit as -r gives it (0: not given). */
static void fill(struct table *t, struct output *o, size_t limit)
{
	static const struct {
		unsigned long long pid, opens, failed;
		int err;
		const char *path;
		bool cut;
	} rows[] = {
		{ 12, 7, 2, 2, "/tmp/a\nb", false },
		{ 0, 5, 0, 0, "/long", true },
		{ 13, 1, 1, 13, "", false },
	};

	table_init(t, &spec);
	t->limit = limit;
	for (size_t i = 0; i < 3; i++) {
		struct key_field key[4] = {
			KEY_UINT("pid", rows[i].pid), KEY_ERRNO_OF("errno", rows[i].err),
			KEY_STRING("path", rows[i].path),
			{ .name = "truncated", .type = KEY_BOOL, .u = 1, .json_only = true },
		};
		unsigned long long v[2] = { rows[i].opens, rows[i].failed };

		assert_int_equal(table_add(t, key, rows[i].cut ? 4 : 3, v), 0);
	}
	table_sum(t, &(struct table_sum){ .json = "total", .u = 13 });
	table_sum(t, &(struct table_sum){ .json = "missed", .omit_zero = true });
	table_sum(t, &(struct table_sum){ .json = "lost", .u = 4, .family = &o->fam.lost });
}

static void test_table_text(void **state)
{
	static const char want[] =
		"OPENS  FAILED PID   ERR  NAME      PATH\n"
		"7           2 12    2    ENOENT    /tmp/a\\nb\n"
		"5           0 -     0    (success) /long... [truncated]\n"
		"13 opens in 3 rows\n";
	struct capture c;
	struct table t;
	char *out;

	(void)state;
	capture_open(&c, OUTPUT_TEXT, false);
	fill(&t, &c.o, 2);
	output_table(&c.o, &t);
	table_free(&t);
	out = capture_close(&c);
	assert_string_equal(out, want);
	free(out);
}

static void test_table_json(void **state)
{
	struct capture c;
	struct table t;
	struct jv *v;
	const struct jv *rows, *r;
	char *out;
	unsigned long long u;

	(void)state;
	capture_open(&c, OUTPUT_JSON, false);
	strcpy(c.o.iso, "2024-01-02T03:04:05.678+01:00");
	fill(&t, &c.o, 0);
	output_table(&c.o, &t);
	table_free(&t);
	out = capture_close(&c);
	v = jv_parse(out);
	assert_non_null(v);
	assert_string_equal(jv_get(v, "by")->str, "test");
	assert_true(jv_u64(jv_get(v, "total"), &u) && u == 13);
	assert_null(jv_get(v, "missed"));	/* 0: left out */
	rows = jv_get(v, "rows");
	assert_non_null(rows);
	assert_int_equal(rows->n, 3);		/* JSON: every row */
	r = rows->items[0];
	assert_true(jv_u64(jv_get(r, "errno"), &u) && u == 2);
	assert_string_equal(jv_get(r, "path")->str, "/tmp/a\nb");
	assert_null(jv_get(r, "truncated"));
	assert_true(jv_u64(jv_get(r, "failed"), &u) && u == 2);
	assert_true(jv_get(rows->items[1], "truncated")->type == JV_BOOL && jv_get(rows->items[1], "truncated")->b);
	jv_free(v);
	free(out);
}

/* Without -r text shows TABLE_TEXT_ROWS and JSON every row (a script's
 * sum of the rows is the total); -r N cuts both. */
static void test_table_rows(void **state)
{
	const enum output_format formats[] = { OUTPUT_TEXT, OUTPUT_JSON };
	const size_t limits[] = { 0, 5 }, n = TABLE_TEXT_ROWS + 5;

	(void)state;
	for (size_t f = 0; f < 2; f++) {
		for (size_t l = 0; l < 2; l++) {
			size_t want = limits[l] ? limits[l] : formats[f] == OUTPUT_JSON ? n : TABLE_TEXT_ROWS;
			struct capture c;
			struct table t;
			char *out, *p;
			size_t shown = 0;

			capture_open(&c, formats[f], false);
			table_init(&t, &spec);
			t.limit = limits[l];
			for (size_t i = 0; i < n; i++) {
				struct key_field key[1] = { KEY_UINT("pid", 1000 + i) };
				unsigned long long v[2] = { 1, 0 };

				assert_int_equal(table_add(&t, key, 1, v), 0);
			}
			assert_int_equal(table_text_rows(&t), limits[l] ? limits[l] : TABLE_TEXT_ROWS);
			output_table(&c.o, &t);
			table_free(&t);
			out = capture_close(&c);
			for (p = out; (p = strstr(p, formats[f] == OUTPUT_JSON ? "\"pid\"" : " 10")); p++)
				shown++;
			if (shown != want)
				fail_msg("%s, limit %zu: %zu rows, want %zu:\n%s",
					 formats[f] == OUTPUT_JSON ? "JSON" : "text", limits[l], shown, want, out);
			free(out);
		}
	}
}

/* Every row (not only the text's top ones), cumulative; OpenMetrics
 * prints nothing of its own. */
static void test_table_metrics(void **state)
{
	static const char *const want[] = {
		"t_opens_total{errno=\"ENOENT\",path=\"/tmp/a\\nb\"} 14\n",
		"t_opens_total{errno=\"0\",path=\"/long\"} 10\n",
		"t_opens_total{errno=\"EACCES\",path=\"\"} 2\n",
		"\nt_lost_events_total 8\n", NULL,
	};
	struct capture c;
	struct table t;
	char *out;

	(void)state;
	capture_open(&c, OUTPUT_OPENMETRICS, true);
	for (int report = 0; report < 2; report++) {
		fill(&t, &c.o, 1);
		output_table(&c.o, &t);
		table_free(&t);
	}
	out = render(&c.o);
	has_all(out, want);
	assert_null(strstr(out, "failed"));
	assert_null(strstr(out, "truncated"));
	printed_nothing(&c);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_once_per_report),
		cmocka_unit_test(test_lost_by_key_and_idle),
		cmocka_unit_test(test_table_text),
		cmocka_unit_test(test_table_json),
		cmocka_unit_test(test_table_rows),
		cmocka_unit_test(test_table_metrics),
	};

	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
