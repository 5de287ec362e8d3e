// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for report rendering, common/output.c. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "output.h"
#include "minijson.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ISO "2024-01-02T03:04:05.678+01:00"

struct capture {
	char *buf;
	size_t len;
	struct output o;
};

static void capture_open(struct capture *c, bool json, enum hist_unit unit)
{
	memset(c, 0, sizeof(*c));
	c->o.f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->o.f);
	c->o.tool = "readlat";
	c->o.json = json;
	c->o.unit = unit;
	strcpy(c->o.iso, ISO);
	strcpy(c->o.hms, "03:04:05");
}

static char *capture_close(struct capture *c)
{
	assert_int_equal(fclose(c->o.f), 0);
	assert_non_null(c->buf);
	return c->buf;
}

static struct hist *hist_new(void)
{
	struct hist *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	return h;
}

/* @n values of @v units, each @scale raw units (ns) as the kernel keeps
 * them, buckets too. */
static void hist_add_scaled(struct hist *h, __u64 v, __u64 scale, __u64 n)
{
	__u64 raw = v * scale;

	h->buckets[hist_bucket(raw)] += n;
	h->sum += raw * n;
	if (n && raw > h->max)
		h->max = raw;
	if (n && ~raw > h->min_inv)
		h->min_inv = ~raw;
}

/* In microseconds, the unit of most tests here. */
static void hist_add(struct hist *h, __u64 v, __u64 n)
{
	hist_add_scaled(h, v, 1000, n);
}

static double scale_of(const char *unit)
{
	return !strcmp(unit, "nsecs") ? 1 : !strcmp(unit, "msecs") ? 1e6 : 1e3;
}

/* A sample: 0 x2, 7 x10, 150 x30, 3000 x5, 1000000 x1. */
static struct hist *sample(void)
{
	struct hist *h = hist_new();

	hist_add(h, 0, 2);
	hist_add(h, 7, 10);
	hist_add(h, 150, 30);
	hist_add(h, 3000, 5);
	hist_add(h, 1000000, 1);
	h->errors = 3;
	return h;
}

static struct jv *parse_one_line(const char *text)
{
	struct jv *v;

	assert_true(strlen(text) > 1);
	assert_int_equal(text[strlen(text) - 1], '\n');
	if (strchr(text, '\n') != text + strlen(text) - 1)
		fail_msg("more than one line: %s", text);
	v = jv_parse(text);
	if (!v)
		fail_msg("not valid JSON: %s", text);
	assert_int_equal(v->type, JV_OBJ);
	assert_true(jv_unique_keys(v));
	return v;
}

static unsigned long long get_u64(const struct jv *o, const char *key)
{
	unsigned long long u;

	if (!jv_u64(jv_get(o, key), &u))
		fail_msg("\"%s\" is not an unsigned integer", key);
	return u;
}

static double get_num(const struct jv *o, const char *key)
{
	const struct jv *v = jv_get(o, key);

	if (!v || v->type != JV_NUM)
		fail_msg("\"%s\" is not a number", key);
	return v->num;
}

static const char *get_str(const struct jv *o, const char *key)
{
	const struct jv *v = jv_get(o, key);

	if (!v || v->type != JV_STR)
		fail_msg("\"%s\" is not a string", key);
	return v->str;
}

/* The fields every histogram line has, checked against hist_summarise(). */
static void check_hist_json(const struct jv *v, const struct hist *h, const char *unit)
{
	static const char *required[] = {
		"tool", "time", "unit", "count", "avg", "p50", "p90", "p99", "p999", "max", "buckets",
	};
	const struct jv *buckets;
	unsigned long long total = 0, prev_max = 0;
	struct hist_stats s;

	for (size_t i = 0; i < ARRAY_SIZE(required); i++)
		if (!jv_get(v, required[i]))
			fail_msg("missing \"%s\"", required[i]);
	hist_summarise(h, scale_of(unit), &s);
	assert_string_equal(get_str(v, "tool"), "readlat");
	assert_string_equal(get_str(v, "time"), ISO);
	assert_string_equal(get_str(v, "unit"), unit);
	assert_int_equal(get_u64(v, "count"), s.count);
	assert_float_equal(get_num(v, "max"), s.max, 0.0006);
	assert_float_equal(get_num(v, "min"), s.min, 0.0006);
	assert_float_equal(get_num(v, "avg"), s.avg, 0.0006);
	assert_float_equal(get_num(v, "p50"), s.p50, 0.0006);
	assert_float_equal(get_num(v, "p90"), s.p90, 0.0006);
	assert_float_equal(get_num(v, "p99"), s.p99, 0.0006);
	assert_float_equal(get_num(v, "p999"), s.p999, 0.0006);

	buckets = jv_get(v, "buckets");
	assert_int_equal(buckets->type, JV_ARR);
	for (size_t i = 0; i < buckets->n; i++) {
		const struct jv *b = buckets->items[i];
		unsigned long long lo, hi, n;
		unsigned int idx;

		assert_int_equal(b->type, JV_OBJ);
		assert_int_equal(b->n, 3);
		/* in the unit: raw nanoseconds / scale, inclusive */
		lo = (unsigned long long)llround(get_num(b, "min") * scale_of(unit));
		hi = (unsigned long long)llround(get_num(b, "max") * scale_of(unit));
		n = get_u64(b, "count");
		idx = hist_bucket(lo);
		assert_int_equal(lo, hist_bucket_lo(idx));
		assert_int_equal(hi, hist_bucket_hi(idx));
		assert_int_equal(n, h->buckets[idx]);
		assert_true(n > 0);
		/* ascending, not overlapping */
		if (i)
			assert_true(lo > prev_max);
		prev_max = hi;
		total += n;
	}
	assert_int_equal(total, s.count);
}

static void test_json_basic(void **state)
{
	struct hist *h = sample();
	struct capture c;
	struct jv *v;
	char *out;

	(void)state;
	capture_open(&c, true, UNIT_USECS);
	output_hist(&c.o, NULL, 0, h, NULL);
	out = capture_close(&c);
	v = parse_one_line(out);
	check_hist_json(v, h, "usecs");
	assert_int_equal(jv_get(v, "buckets")->n, 5);
	assert_null(jv_get(v, "key"));
	/* without a hist_extra, neither errors nor lost */
	assert_null(jv_get(v, "errors"));
	assert_null(jv_get(v, "lost"));
	/* field order as documented: tool first */
	assert_int_equal(strncmp(out, "{\"tool\":\"readlat\",\"time\":\"" ISO "\",\"unit\":\"usecs\",",
				 strlen("{\"tool\":\"readlat\",\"time\":\"" ISO "\",\"unit\":\"usecs\",")), 0);
	jv_free(v);
	free(out);
	free(h);
}

static void test_json_keys(void **state)
{
	const struct key_field key[] = {
		KEY_UINT("pid", 4242),
		KEY_INT("ret", -11),
		KEY_STRING("comm", "my \"app\"\n"),
		KEY_UINT("big", UINT64_MAX),
	};
	const struct jv *k;
	struct hist *h = sample();
	struct capture c;
	struct jv *v;
	long long ret;
	char *out;

	(void)state;
	capture_open(&c, true, UNIT_MSECS);
	output_hist(&c.o, key, ARRAY_SIZE(key), h, NULL);
	out = capture_close(&c);
	v = parse_one_line(out);
	check_hist_json(v, h, "msecs");
	k = jv_get(v, "key");
	assert_non_null(k);
	assert_int_equal(k->type, JV_OBJ);
	assert_int_equal(k->n, 4);
	assert_int_equal(get_u64(k, "pid"), 4242);
	assert_true(jv_i64(jv_get(k, "ret"), &ret));
	assert_int_equal(ret, -11);
	assert_string_equal(get_str(k, "comm"), "my \"app\"\n");
	assert_int_equal(get_u64(k, "big"), UINT64_MAX);
	jv_free(v);
	free(out);
	free(h);
}

static void test_json_extra(void **state)
{
	struct hist_extra both = { .errors = true, .lost = 0 };
	struct hist_extra lost = { .errors = false, .lost = 17 };
	struct hist_extra none = { .errors = false, .lost = -1 };
	struct hist *h = sample();
	struct capture c;
	struct jv *v;
	char *out;

	(void)state;
	capture_open(&c, true, UNIT_NSECS);
	output_hist(&c.o, NULL, 0, h, &both);
	out = capture_close(&c);
	v = parse_one_line(out);
	check_hist_json(v, h, "nsecs");
	assert_int_equal(get_u64(v, "errors"), 3);
	assert_int_equal(get_u64(v, "lost"), 0);
	jv_free(v);
	free(out);

	capture_open(&c, true, UNIT_USECS);
	output_hist(&c.o, NULL, 0, h, &lost);
	out = capture_close(&c);
	v = parse_one_line(out);
	assert_null(jv_get(v, "errors"));
	assert_int_equal(get_u64(v, "lost"), 17);
	jv_free(v);
	free(out);

	capture_open(&c, true, UNIT_USECS);
	output_hist(&c.o, NULL, 0, h, &none);
	out = capture_close(&c);
	v = parse_one_line(out);
	assert_null(jv_get(v, "errors"));
	assert_null(jv_get(v, "lost"));
	jv_free(v);
	free(out);
	free(h);
}

static void test_json_empty(void **state)
{
	struct hist *h = hist_new();
	const struct key_field key[] = { KEY_STRING("comm", "x") };
	struct capture c;
	struct jv *v;
	char *out;

	(void)state;
	capture_open(&c, true, UNIT_USECS);
	output_hist(&c.o, key, 1, h, NULL);
	out = capture_close(&c);
	assert_string_equal(out,
		"{\"tool\":\"readlat\",\"time\":\"" ISO "\",\"unit\":\"usecs\",\"key\":{\"comm\":\"x\"},"
		"\"count\":0,\"avg\":0,\"p50\":0,\"p90\":0,\"p99\":0,\"p999\":0,\"min\":0,\"max\":0,"
		"\"buckets\":[]}\n");
	v = parse_one_line(out);
	check_hist_json(v, h, "usecs");
	jv_free(v);
	free(out);
	free(h);
}

/* Races (keyed adds whose max or min lost every compare-and-swap): shown
 * in both forms when there are any, absent when none. */
static void test_races(void **state)
{
	struct hist *h = sample();
	struct capture c;
	struct jv *v;
	char *out;

	(void)state;
	capture_open(&c, true, UNIT_USECS);
	output_hist(&c.o, NULL, 0, h, NULL);
	out = capture_close(&c);
	v = parse_one_line(out);
	assert_null(jv_get(v, "races"));
	jv_free(v);
	free(out);
	capture_open(&c, false, UNIT_USECS);
	output_hist(&c.o, NULL, 0, h, NULL);
	out = capture_close(&c);
	assert_null(strstr(out, "races"));
	free(out);

	h->races = 3;
	capture_open(&c, true, UNIT_USECS);
	output_hist(&c.o, NULL, 0, h, NULL);
	out = capture_close(&c);
	v = parse_one_line(out);
	assert_int_equal(get_u64(v, "races"), 3);
	jv_free(v);
	free(out);
	capture_open(&c, false, UNIT_USECS);
	output_hist(&c.o, NULL, 0, h, NULL);
	out = capture_close(&c);
	assert_non_null(strstr(out, ", max 1000000 usecs, max/min short by 3 races\n"));
	free(out);
	free(h);
}

/* Several histograms in a row: one line each. */
static void test_json_stream(void **state)
{
	struct hist *h = sample();
	struct capture c;
	char *out, *line, *save;
	int n = 0;

	(void)state;
	capture_open(&c, true, UNIT_USECS);
	for (int i = 0; i < 3; i++) {
		const struct key_field key[] = { KEY_INT("i", i) };

		output_hist(&c.o, key, 1, h, NULL);
	}
	out = capture_close(&c);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct jv *v = jv_parse(line);
		long long i;

		assert_non_null(v);
		assert_true(jv_i64(jv_get(jv_get(v, "key"), "i"), &i));
		assert_int_equal(i, n);
		jv_free(v);
		n++;
	}
	assert_int_equal(n, 3);
	free(out);
	free(h);
}

/* The histogram table, then the summary line. */
static void test_text(void **state)
{
	struct hist *h = sample();
	struct hist_extra x = { .errors = true, .lost = 4 };
	struct capture c;
	char *out, *table = NULL, *summary;
	size_t table_len = 0;
	FILE *f;

	(void)state;
	f = open_memstream(&table, &table_len);
	assert_non_null(f);
	hist_print_log2(f, h, "usecs", 1000);
	fclose(f);

	capture_open(&c, false, UNIT_USECS);
	output_hist(&c.o, NULL, 0, h, &x);
	out = capture_close(&c);
	assert_true(table_len > 0);
	assert_memory_equal(out, table, table_len);
	assert_true(strncmp(out, "     usecs               : count    distribution\n", 49) == 0);
	summary = out + table_len;
	/* exactly one more line, then the blank line that ends a histogram */
	assert_ptr_equal(strchr(summary, '\n'), summary + strlen(summary) - 2);
	assert_int_equal(summary[strlen(summary) - 1], '\n');
	assert_true(strncmp(summary, "count 48, avg ", strlen("count 48, avg ")) == 0);
	assert_non_null(strstr(summary, ", p50 "));
	assert_non_null(strstr(summary, ", p90 "));
	assert_non_null(strstr(summary, ", p99 "));
	assert_non_null(strstr(summary, ", p99.9 "));
	assert_non_null(strstr(summary, ", max 1000000 usecs, errors 3, lost 4\n"));
	free(out);
	free(table);
	free(h);
}

static void test_text_summary_values(void **state)
{
	struct hist *h = hist_new();
	struct capture c;
	char *out, *summary;
	regex_t re;
	double avg, p50, p90, p99, p999;
	unsigned long long count, max;
	char unit[16];

	(void)state;
	hist_add_scaled(h, 3000, 1000000, 4);
	capture_open(&c, false, UNIT_MSECS);
	output_hist(&c.o, NULL, 0, h, NULL);
	out = capture_close(&c);
	summary = strstr(out, "\ncount ");
	assert_non_null(summary);
	summary++;
	assert_int_equal(regcomp(&re,
		"^count [0-9]+, avg [0-9]+(\\.[0-9]+)?, p50 [0-9]+(\\.[0-9]+)?, p90 [0-9]+(\\.[0-9]+)?, "
		"p99 [0-9]+(\\.[0-9]+)?, p99\\.9 [0-9]+(\\.[0-9]+)?, max [0-9]+ msecs\n\n$",
		REG_EXTENDED), 0);
	if (regexec(&re, summary, 0, NULL, 0))
		fail_msg("summary line: %s", summary);
	regfree(&re);
	assert_int_equal(sscanf(summary, "count %llu, avg %lf, p50 %lf, p90 %lf, p99 %lf, p99.9 %lf, max %llu %15s",
				&count, &avg, &p50, &p90, &p99, &p999, &max, unit), 8);
	assert_int_equal(count, 4);
	assert_true(avg == 3000);
	assert_int_equal(max, 3000);
	assert_string_equal(unit, "msecs");
	assert_true(p50 >= 2048 && p50 <= 3000);
	assert_true(p50 <= p90 && p90 <= p99 && p99 <= p999 && p999 <= 3000);
	free(out);

	/* fractions keep three significant digits; a value alone in its
	 * bucket is read from the middle of the bucket's part inside [min,
	 * max] (1000 ns in [896, 1023] ns, 2000 ns in [1792, 2047]), so
	 * within 25%, not from [1, 2) usecs */
	memset(h, 0, sizeof(*h));
	hist_add(h, 1, 1);
	hist_add(h, 2, 1);
	capture_open(&c, false, UNIT_USECS);
	output_hist(&c.o, NULL, 0, h, NULL);
	out = capture_close(&c);
	assert_non_null(strstr(out, "\ncount 2, avg 1.50, p50 1.01, p90 1.90, p99 1.90, p99.9 1.90, max 2 usecs\n"));
	free(out);
	free(h);
}

/* Sub-unit values in every unit: buckets are nanoseconds, edges shown
 * exactly in the unit, summaries with three significant digits. */
static void test_sub_unit(void **state)
{
	struct hist *h = hist_new();
	struct capture c;
	struct jv *v;
	char *out;

	(void)state;
	hist_add_scaled(h, 301, 1, 3);		/* 301 ns, bucket [256, 319] */
	capture_open(&c, false, UNIT_USECS);
	output_hist(&c.o, NULL, 0, h, NULL);
	out = capture_close(&c);
	assert_non_null(strstr(out, "\ncount 3, avg 0.301, p50 0.301, p90 0.301, p99 0.301, p99.9 0.301, max 0.301 usecs\n"));
	free(out);
	capture_open(&c, false, UNIT_MSECS);
	output_hist(&c.o, NULL, 0, h, NULL);
	out = capture_close(&c);
	assert_non_null(strstr(out, "\ncount 3, avg 0.000301, p50 0.000301, p90 0.000301, p99 0.000301, p99.9 0.000301, max 0.000301 msecs\n"));
	free(out);

	capture_open(&c, true, UNIT_USECS);
	output_hist(&c.o, NULL, 0, h, NULL);
	out = capture_close(&c);
	assert_non_null(strstr(out, "\"buckets\":[{\"min\":0.256,\"max\":0.319,\"count\":3}]"));
	v = parse_one_line(out);
	check_hist_json(v, h, "usecs");
	jv_free(v);
	free(out);
	capture_open(&c, true, UNIT_MSECS);
	output_hist(&c.o, NULL, 0, h, NULL);
	out = capture_close(&c);
	assert_non_null(strstr(out, "\"p50\":0.000301,"));
	assert_non_null(strstr(out, "\"buckets\":[{\"min\":0.000256,\"max\":0.000319,\"count\":3}]"));
	free(out);
	free(h);
}

static void test_text_empty(void **state)
{
	struct hist *h = hist_new();
	struct hist_extra x = { .errors = true, .lost = 0 };
	struct capture c;
	char *out;

	(void)state;
	capture_open(&c, false, UNIT_USECS);
	output_hist(&c.o, NULL, 0, h, NULL);
	out = capture_close(&c);
	assert_string_equal(out, "count 0\n\n");
	free(out);

	h->errors = 2;
	capture_open(&c, false, UNIT_USECS);
	output_hist(&c.o, NULL, 0, h, &x);
	out = capture_close(&c);
	assert_string_equal(out, "count 0, errors 2\n\n");
	free(out);
	free(h);
}

static void test_text_keys(void **state)
{
	const struct key_field key[] = {
		KEY_UINT("pid", 42), KEY_STRING("comm", "cat"), KEY_INT("ret", -2),
	};
	struct hist *h = hist_new();
	struct capture c;
	char *out;

	(void)state;
	hist_add(h, 1, 1);
	capture_open(&c, false, UNIT_USECS);
	output_hist(&c.o, key, ARRAY_SIZE(key), h, NULL);
	out = capture_close(&c);
	assert_string_equal(out,
		"pid = 42, comm = cat, ret = -2\n"
		"     usecs               : count    distribution\n"
		"         0 -> 1          : 1        |****************************************|\n"
		"count 1, avg 1, p50 1, p90 1, p99 1, p99.9 1, max 1 usecs\n"
		"\n");
	free(out);
	free(h);
}

/* Names from the traced system cannot break a text record into lines
 * nor reach the terminal as control sequences; in JSON they stay valid. */
static void test_key_escaped(void **state)
{
	const struct key_field key[] = {
		KEY_STRING("comm", "a\nb\x1b[2J\xff"), KEY_STRING("path", "/tmp/\\x"),
	};
	const char *want = "comm = a\\nb\\x1b[2J\\xff, path = /tmp/\\\\x\n";
	const struct jv *k;
	struct hist *h = hist_new();
	struct capture c;
	struct jv *v;
	char *out;

	(void)state;
	capture_open(&c, false, UNIT_USECS);
	output_hist(&c.o, key, ARRAY_SIZE(key), h, NULL);
	out = capture_close(&c);
	assert_int_equal(strncmp(out, want, strlen(want)), 0);
	free(out);

	capture_open(&c, true, UNIT_USECS);
	output_hist(&c.o, key, ARRAY_SIZE(key), h, NULL);
	out = capture_close(&c);
	v = parse_one_line(out);
	k = jv_get(v, "key");
	assert_string_equal(get_str(k, "comm"), "a\nb\x1b[2J\xef\xbf\xbd");
	assert_string_equal(get_str(k, "comm_hex"), "610a621b5b324aff");
	assert_string_equal(get_str(k, "path"), "/tmp/\\x");
	assert_null(jv_get(k, "path_hex"));
	jv_free(v);
	free(out);
	free(h);
}

static void test_units(void **state)
{
	(void)state;
	assert_string_equal(unit_label(UNIT_NSECS), "nsecs");
	assert_string_equal(unit_label(UNIT_USECS), "usecs");
	assert_string_equal(unit_label(UNIT_MSECS), "msecs");
	assert_true(unit_from_ns(UNIT_NSECS, 1500) == 1500);
	assert_true(unit_from_ns(UNIT_USECS, 1500) == 1.5);
	assert_true(unit_from_ns(UNIT_MSECS, 2500000) == 2.5);
	assert_true(unit_from_ns(UNIT_MSECS, 0) == 0);
}

static void test_stamp(void **state)
{
	struct capture c;
	regex_t re;
	char *out;

	(void)state;
	/* JSON: the time is taken, nothing printed */
	capture_open(&c, true, UNIT_USECS);
	c.o.timestamp = true;
	output_stamp(&c.o);
	out = capture_close(&c);
	assert_string_equal(out, "");
	free(out);
	assert_int_equal(regcomp(&re,
		"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}[+-][0-9]{2}:[0-9]{2}$",
		REG_EXTENDED), 0);
	if (regexec(&re, c.o.iso, 0, NULL, 0))
		fail_msg("not ISO-8601: %s", c.o.iso);
	regfree(&re);

	/* text with -T: the time as a header line */
	capture_open(&c, false, UNIT_USECS);
	c.o.timestamp = true;
	output_stamp(&c.o);
	out = capture_close(&c);
	assert_int_equal(regcomp(&re, "^[0-9]{2}:[0-9]{2}:[0-9]{2}\n$", REG_EXTENDED), 0);
	if (regexec(&re, out, 0, NULL, 0))
		fail_msg("not a time line: %s", out);
	regfree(&re);
	assert_int_equal(strncmp(out, c.o.hms, 8), 0);
	free(out);

	/* text without -T: silent */
	capture_open(&c, false, UNIT_USECS);
	output_stamp(&c.o);
	out = capture_close(&c);
	assert_string_equal(out, "");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_basic),
		cmocka_unit_test(test_json_keys),
		cmocka_unit_test(test_json_extra),
		cmocka_unit_test(test_json_empty),
		cmocka_unit_test(test_races),
		cmocka_unit_test(test_json_stream),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_text_summary_values),
		cmocka_unit_test(test_sub_unit),
		cmocka_unit_test(test_text_empty),
		cmocka_unit_test(test_text_keys),
		cmocka_unit_test(test_key_escaped),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_stamp),
	};

	return cmocka_run_group_tests_name("output", tests, NULL, NULL);
}
