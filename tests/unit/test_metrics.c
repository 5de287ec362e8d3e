// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for the metrics store and its renderer, common/metrics.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "escape.h"
#include "hist.h"
#include "metrics.h"
#include "output.h"
#include "checks.h"

static const struct metric_family lat = {
	.name = "t_read_duration_seconds", .help = "Test latency", .unit = "seconds",
	.type = METRIC_HISTOGRAM, .scale = 1e-9,
};
static const struct metric_family sizes = {
	.name = "t_io_size_bytes", .help = "Test sizes", .unit = "bytes", .type = METRIC_HISTOGRAM,
	.scale = 1,
};
static const struct metric_family errs = {
	.name = "t_errors", .help = "Test errors", .type = METRIC_COUNTER,
};
static const struct metric_family run = {
	.name = "t_bpf_run_seconds", .help = "Test run time", .unit = "seconds",
	.type = METRIC_COUNTER, .scale = 1e-9,
};

static void add(struct hist *h, __u64 raw, __u64 n)
{
	h->buckets[hist_bucket(raw)] += n;
	h->sum += raw * n;
}

static struct hist *hist_zero(void)
{
	struct hist *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	return h;
}

/* 5 ns x2, 1000 ns x3, 1.5 ms x1. */
static struct hist *sample(void)
{
	struct hist *h = hist_zero();

	add(h, 5, 2);
	add(h, 1000, 3);
	add(h, 1500000, 1);
	return h;
}

static struct metrics *store(long max_series, bool label_pid)
{
	struct metrics_config c = { .max_series = max_series, .label_pid = label_pid };
	struct metrics *m = metrics_new("t", &c);

	assert_non_null(m);
	return m;
}

/* The exposition as a string (the caller frees it). */
static char *render(struct metrics *m, enum metrics_dialect d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(metrics_render(m, d, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* Every le of the set, counted in or not: 2^k - 1 ns for k 7..37. */
static void test_histogram_exact(void **state)
{
	static const char head[] =
		"# HELP t_read_duration_seconds Test latency\n"
		"# TYPE t_read_duration_seconds histogram\n"
		"# UNIT t_read_duration_seconds seconds\n";
	static const char tail[] =
		"t_read_duration_seconds_bucket{le=\"+Inf\"} 6\n"
		"t_read_duration_seconds_sum 0.00150301\n"
		"t_read_duration_seconds_count 6\n"
		"# HELP t_series_dropped Series folded into one whose labels are [other]: past "
		"--max-series in their family\n"
		"# TYPE t_series_dropped counter\n"
		"t_series_dropped_total 0\n"
		"# EOF\n";
	struct metrics *m = store(0, false);
	struct hist *h = sample();
	char want[4096], *out;
	size_t n = 0;

	(void)state;
	n += (size_t)snprintf(want + n, sizeof(want) - n, "%s", head);
	for (unsigned int k = 7; k <= 37; k++) {
		unsigned long long le = (1ULL << k) - 1;
		/* 5 ns x2, 1000 ns x3, 1.5 ms x1 */
		int cum = le < 1000 ? 2 : le < 1500000 ? 5 : 6;

		n += (size_t)snprintf(want + n, sizeof(want) - n,
				      "t_read_duration_seconds_bucket{le=\"%llu.%09llu\"} %d\n",
				      le / 1000000000, le % 1000000000, cum);
	}
	snprintf(want + n, sizeof(want) - n, "%s", tail);
	assert_int_equal(metrics_hist_add(m, &lat, NULL, 0, h), 0);
	out = render(m, METRICS_OPENMETRICS);
	assert_string_equal(out, want);
	free(out);
	free(h);
	metrics_free(m);
}

/* The value of the sample line that begins with @prefix, or -1. */
static long long sample_value(const char *out, const char *prefix)
{
	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, prefix, strlen(prefix)) && p[strlen(prefix)] == ' ')
			return strtoll(p + strlen(prefix) + 1, NULL, 10);
	return -1;
}

/* Reports add up: every bucket at its cumulative count since the start. */
static void test_cumulative(void **state)
{
	struct metrics *m = store(0, false);
	struct hist *h = sample(), *later = hist_zero();
	char *out;

	(void)state;
	add(later, 1000, 4);
	assert_int_equal(metrics_hist_add(m, &lat, NULL, 0, h), 0);
	assert_int_equal(metrics_hist_add(m, &lat, NULL, 0, later), 0);
	out = render(m, METRICS_OPENMETRICS);
	assert_int_equal(sample_value(out, "t_read_duration_seconds_bucket{le=\"0.000000127\"}"), 2);
	assert_int_equal(sample_value(out, "t_read_duration_seconds_bucket{le=\"0.000001023\"}"), 9);
	assert_int_equal(sample_value(out, "t_read_duration_seconds_bucket{le=\"0.001048575\"}"), 9);
	assert_int_equal(sample_value(out, "t_read_duration_seconds_bucket{le=\"0.002097151\"}"), 10);
	assert_int_equal(sample_value(out, "t_read_duration_seconds_bucket{le=\"+Inf\"}"), 10);
	assert_int_equal(sample_value(out, "t_read_duration_seconds_count"), 10);
	assert_non_null(strstr(out, "t_read_duration_seconds_sum 0.00150701\n"));
	free(out);
	free(h);
	free(later);
	metrics_free(m);
}

/* "le" text to nanoseconds, exactly: digits, an optional point and at
 * most 9 decimals. -1 if it is not such a number. */
static long long le_ns(const char *s)
{
	unsigned long long v = 0;
	int decimals = -1;

	for (; *s && *s != '"'; s++) {
		if (*s == '.' && decimals < 0) {
			decimals = 0;
			continue;
		}
		if (*s < '0' || *s > '9' || decimals >= 9)
			return -1;
		v = v * 10 + (unsigned long long)(*s - '0');
		decimals += decimals >= 0;
	}
	for (int d = decimals < 0 ? 0 : decimals; d < 9; d++)
		v *= 10;
	return (long long)v;
}

/* Every fine bucket counted once: each le is 2^k - 1 ns exactly, k from
 * 7 to 37, and counts every fine bucket at or below it; +Inf all. */
static void test_every_bucket(void **state)
{
	struct metrics *m = store(0, false);
	struct hist *h = hist_zero();
	long long want_cum, total = 0;
	unsigned int k = 7;
	char *out;

	(void)state;
	/* up to 2^62 ns: le below 2^63 ns fits the check's long long */
	for (unsigned int i = 0; i + 1 < HIST_BUCKETS && hist_bucket_hi(i) < (1ULL << 62); i++) {
		h->buckets[i] = 1;
		total++;
	}
	assert_int_equal(metrics_hist_add(m, &lat, NULL, 0, h), 0);
	out = render(m, METRICS_OPENMETRICS);
	for (const char *p = strstr(out, "_bucket{le=\""); p; p = strstr(p + 1, "_bucket{le=\"")) {
		const char *le = p + strlen("_bucket{le=\"");
		long long ns = le_ns(le), cum = strtoll(strchr(le, ' ') + 1, NULL, 10);

		if (!strncmp(le, "+Inf", 4)) {
			CHECK(k == 38, "+Inf after 2^%u - 1 ns, not 2^37 - 1", k - 1);
			CHECK(cum == total, "+Inf %lld, count %lld", cum, total);
			break;
		}
		want_cum = 0;
		for (unsigned int i = 0; i < HIST_BUCKETS; i++)
			want_cum += h->buckets[i] && hist_bucket_hi(i) <= (long long unsigned)ns;
		CHECK(ns == (long long)(1ULL << k) - 1, "le %.24s is not 2^%u - 1 ns", le, k);
		CHECK(cum == want_cum, "le %.24s: %lld, not cumulative %lld", le, cum, want_cum);
		k++;
	}
	CHECK(sample_value(out, "t_read_duration_seconds_count") == total, "_count");
	CHECKS_END();
	free(out);
	free(h);
	metrics_free(m);
}

/* The le labels of @prefix's bucket lines in @out, one string. */
static void les_of(const char *out, const char *prefix, char *les, size_t len)
{
	size_t n = 0;

	les[0] = '\0';
	for (const char *p = strstr(out, prefix); p; p = strstr(p + 1, prefix)) {
		const char *le = strstr(p, "le=\"");
		size_t l = le ? strcspn(le + 4, "\"") : 0;

		if (le && n + l + 2 < len)
			n += (size_t)snprintf(les + n, len - n, "%.*s,", (int)l, le + 4);
	}
}

/* One le set on every series of a family however far apart their
 * values (sub-microsecond and milliseconds), counted in or not; a
 * family in bytes has its own, from 0 to 1 GiB - 1. */
static void test_one_le_set(void **state)
{
	struct metrics *m = store(0, false);
	struct hist *fast = hist_zero(), *slow = hist_zero();
	struct key_field a[1] = { KEY_STRING("comm", "fast") }, b[1] = { KEY_STRING("comm", "slow") };
	char les_a[2048], les_b[2048], les_s[2048], *out;

	(void)state;
	add(fast, 300, 1000);
	add(slow, 3000000, 10);
	assert_int_equal(metrics_hist_add(m, &lat, a, 1, fast), 0);
	assert_int_equal(metrics_hist_add(m, &lat, b, 1, slow), 0);
	assert_int_equal(metrics_hist_add(m, &sizes, a, 1, slow), 0);
	out = render(m, METRICS_OPENMETRICS);
	les_of(out, "t_read_duration_seconds_bucket{comm=\"fast\"", les_a, sizeof(les_a));
	les_of(out, "t_read_duration_seconds_bucket{comm=\"slow\"", les_b, sizeof(les_b));
	assert_string_equal(les_a, les_b);
	assert_non_null(strstr(les_a, ",0.000001023,0.000002047,"));
	assert_int_equal(strchr(les_a, '\0') - strstr(les_a, ",137.438953471,+Inf,"),
			 strlen(",137.438953471,+Inf,"));
	les_of(out, "t_io_size_bytes_bucket{comm=\"fast\"", les_s, sizeof(les_s));
	assert_int_equal(strncmp(les_s, "0,1,3,7,15,", 11), 0);
	assert_int_equal(strchr(les_s, '\0') - strstr(les_s, ",536870911,1073741823,+Inf,"),
			 strlen(",536870911,1073741823,+Inf,"));
	assert_int_equal(sample_value(out, "t_read_duration_seconds_bucket{comm=\"slow\",le=\"0.002097151\"}"), 0);
	assert_int_equal(sample_value(out, "t_read_duration_seconds_bucket{comm=\"slow\",le=\"0.004194303\"}"), 10);
	assert_int_equal(sample_value(out, "t_read_duration_seconds_bucket{comm=\"fast\",le=\"0.000000255\"}"), 0);
	assert_int_equal(sample_value(out, "t_read_duration_seconds_bucket{comm=\"fast\",le=\"0.000000511\"}"), 1000);
	free(out);
	free(fast);
	free(slow);
	metrics_free(m);
}

static void test_bytes_and_counters(void **state)
{
	struct metrics *m = store(0, false);
	struct hist *h = hist_zero();
	char *out;

	(void)state;
	add(h, 4096, 3);
	assert_int_equal(metrics_hist_add(m, &sizes, NULL, 0, h), 0);
	assert_int_equal(metrics_counter_add(m, &run, NULL, 0, 1500), 0);
	assert_int_equal(metrics_counter_add(m, &run, NULL, 0, 2000000000ULL), 0);
	assert_int_equal(metrics_counter_add(m, &errs, NULL, 0, 0), 0);
	/* a family is one type */
	assert_int_equal(metrics_counter_add(m, &(struct metric_family){ .name = "t_io_size_bytes",
			 .type = METRIC_COUNTER }, NULL, 0, 1), -1);
	assert_int_equal(metrics_hist_add(m, &errs, NULL, 0, h), -1);
	out = render(m, METRICS_OPENMETRICS);
	assert_non_null(strstr(out, "t_io_size_bytes_bucket{le=\"4095\"} 0\n"));
	assert_non_null(strstr(out, "t_io_size_bytes_bucket{le=\"8191\"} 3\n"));
	assert_non_null(strstr(out, "t_io_size_bytes_sum 12288\n"));
	assert_non_null(strstr(out, "# UNIT t_io_size_bytes bytes\n"));
	assert_non_null(strstr(out, "# TYPE t_bpf_run_seconds counter\n# UNIT t_bpf_run_seconds seconds\n"));
	assert_non_null(strstr(out, "\nt_bpf_run_seconds_total 2.0000015\n"));
	assert_non_null(strstr(out, "# TYPE t_errors counter\nt_errors_total 0\n"));
	free(out);
	free(h);
	metrics_free(m);
}

/* 0.0.4: a counter's HELP and TYPE name its _total sample; no UNIT. */
static void test_text_004(void **state)
{
	struct metrics *m = store(0, false);
	struct hist *h = sample();
	char *out;

	(void)state;
	assert_int_equal(metrics_hist_add(m, &lat, NULL, 0, h), 0);
	assert_int_equal(metrics_counter_add(m, &run, NULL, 0, 7), 0);
	out = render(m, METRICS_TEXT_004);
	assert_non_null(strstr(out, "# TYPE t_read_duration_seconds histogram\n"));
	assert_non_null(strstr(out, "# HELP t_bpf_run_seconds_total Test run time\n"
				    "# TYPE t_bpf_run_seconds_total counter\n"
				    "t_bpf_run_seconds_total 0.000000007\n"));
	assert_non_null(strstr(out, "# TYPE t_series_dropped_total counter\n"));
	assert_null(strstr(out, "# UNIT"));
	assert_non_null(strstr(out, "t_read_duration_seconds_bucket{le=\"+Inf\"} 6\n"));
	assert_string_equal(out + strlen(out) - 6, "# EOF\n");
	free(out);
	free(h);
	metrics_free(m);
}

static void test_escaping(void **state)
{
	static const struct {
		const char *comm, *label;
	} cases[] = {
		{ "a\"b", "comm=\"a\\\"b\"" },
		{ "back\\slash", "comm=\"back\\\\slash\"" },
		{ "new\nline", "comm=\"new\\nline\"" },
		{ "tab\there", "comm=\"tab\\\\there\"" },
		{ "bad\xff", "comm=\"bad\\\\xff\"" },
		{ "esc\x1b[0m", "comm=\"esc\\\\x1b[0m\"" },
		{ "caf\xc3\xa9", "comm=\"caf\xc3\xa9\"" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct metrics *m = store(0, false);
		struct key_field key[1] = { KEY_STRING("comm", cases[i].comm) };
		char want[128], *out;

		assert_int_equal(metrics_counter_add(m, &errs, key, 1, 3), 0);
		out = render(m, METRICS_OPENMETRICS);
		snprintf(want, sizeof(want), "\nt_errors_total{%s} 3\n", cases[i].label);
		CHECK(strstr(out, want), "%zu: no %s in %s", i, want, out);
		CHECK(utf8_valid(out, strlen(out)), "%zu: not UTF-8", i);
		free(out);
		metrics_free(m);
	}
	CHECKS_END();
}

static void test_key_types(void **state)
{
	struct metrics *m = store(0, false);
	struct key_field key[4] = {
		KEY_STRING("comm", "cat"), KEY_ERRNO_OF("errno", 2), KEY_INT("fd", -1),
		{ .name = "truncated", .type = KEY_BOOL, .u = 1, .json_only = true },
	};
	char *out;

	(void)state;
	assert_int_equal(metrics_counter_add(m, &errs, key, 4, 1), 0);
	key[1].i = 0;
	assert_int_equal(metrics_counter_add(m, &errs, key, 4, 1), 0);
	out = render(m, METRICS_OPENMETRICS);
	assert_non_null(strstr(out, "t_errors_total{comm=\"cat\",errno=\"ENOENT\",fd=\"-1\"} 1\n"));
	assert_non_null(strstr(out, "t_errors_total{comm=\"cat\",errno=\"0\",fd=\"-1\"} 1\n"));
	free(out);
	metrics_free(m);
}

/* Without --label pid two processes of one name are one series, summed. */
static void test_pid_label(void **state)
{
	struct hist *h = sample();

	(void)state;
	for (int with_pid = 0; with_pid < 2; with_pid++) {
		struct metrics *m = store(0, with_pid);
		struct key_field a[2] = { KEY_UINT("pid", 10), KEY_STRING("comm", "cat") };
		struct key_field b[2] = { KEY_UINT("pid", 11), KEY_STRING("comm", "cat") };
		char *out;

		assert_int_equal(metrics_hist_add(m, &lat, a, 2, h), 0);
		assert_int_equal(metrics_hist_add(m, &lat, b, 2, h), 0);
		out = render(m, METRICS_OPENMETRICS);
		if (with_pid) {
			assert_int_equal(sample_value(out, "t_read_duration_seconds_count{pid=\"10\",comm=\"cat\"}"), 6);
			assert_int_equal(sample_value(out, "t_read_duration_seconds_count{pid=\"11\",comm=\"cat\"}"), 6);
		} else {
			assert_int_equal(sample_value(out, "t_read_duration_seconds_count{comm=\"cat\"}"), 12);
			assert_int_equal(sample_value(out, "t_read_duration_seconds_bucket{comm=\"cat\",le=\"+Inf\"}"), 12);
			assert_null(strstr(out, "pid="));
		}
		free(out);
		metrics_free(m);
	}
	free(h);
}

/* Past max_series, new series fold into [other], each counted once. */
static void test_series_cap(void **state)
{
	static const char *const names[] = { "a", "b", "c", "d", "c", "a" };
	struct metrics *m = store(2, false);
	struct hist *h = sample();
	char *out;

	(void)state;
	for (size_t i = 0; i < 6; i++) {
		struct key_field key[2] = { KEY_STRING("comm", names[i]), KEY_INT("fd", 3) };

		assert_int_equal(metrics_hist_add(m, &lat, key, 2, h), 0);
		assert_int_equal(metrics_counter_add(m, &errs, key, 2, 1), 0);
	}
	out = render(m, METRICS_OPENMETRICS);
	assert_int_equal(sample_value(out, "t_read_duration_seconds_count{comm=\"a\",fd=\"3\"}"), 12);
	assert_int_equal(sample_value(out, "t_read_duration_seconds_count{comm=\"b\",fd=\"3\"}"), 6);
	assert_int_equal(sample_value(out,
		"t_read_duration_seconds_count{comm=\"[other]\",fd=\"[other]\"}"), 18);
	assert_int_equal(sample_value(out,
		"t_read_duration_seconds_bucket{comm=\"[other]\",fd=\"[other]\",le=\"+Inf\"}"), 18);
	assert_int_equal(sample_value(out, "t_errors_total{comm=\"[other]\",fd=\"[other]\"}"), 3);
	assert_null(strstr(out, "comm=\"c\""));
	assert_null(strstr(out, "comm=\"d\""));
	/* c and d, in each of the two families */
	assert_int_equal(sample_value(out, "t_series_dropped_total"), 4);
	free(out);
	free(h);
	metrics_free(m);
}

/* 1000 series of 30 buckets each, rendered: the lookups stay O(1). */
static void test_many_series(void **state)
{
	struct metrics *m = store(0, true);
	struct hist *h = hist_zero();
	char *out;

	(void)state;
	for (unsigned int i = 40; i < 70; i++)
		h->buckets[i] = i;
	for (int round = 0; round < 3; round++)
		for (unsigned int pid = 1; pid <= 1000; pid++) {
			struct key_field key[2] = { KEY_UINT("pid", pid), KEY_STRING("comm", "w") };

			assert_int_equal(metrics_hist_add(m, &lat, key, 2, h), 0);
		}
	out = render(m, METRICS_OPENMETRICS);
	assert_int_equal(sample_value(out, "t_read_duration_seconds_count{pid=\"1000\",comm=\"w\"}"),
			 3 * (long long)hist_count(h));
	assert_int_equal(sample_value(out, "t_series_dropped_total"), 0);
	free(out);
	free(h);
	metrics_free(m);
}

static void test_empty(void **state)
{
	struct metrics *m = store(0, false);
	char *out;

	(void)state;
	out = render(m, METRICS_OPENMETRICS);
	assert_non_null(strstr(out, "t_series_dropped_total 0\n# EOF\n"));
	free(out);
	metrics_free(m);
	metrics_free(NULL);
}

/* The labels of every series: those of two runs writing beside each
 * other, on every family (counters, histograms, the store's own
 * series_dropped); [other] keeps them; a key field of one of their
 * names is left out; the config's strings may go after metrics_new(). */
static void test_fixed_labels(void **state)
{
	struct metrics_label labels[2] = { { "textfile", NULL }, { "team", "a\"b" } };
	struct metrics_config c = { .max_series = 1, .labels = labels, .nlabels = 2 };
	struct key_field a[2] = { KEY_STRING("comm", "cat"), KEY_STRING("team", "mine") };
	struct key_field b[2] = { KEY_STRING("comm", "dog"), KEY_STRING("team", "mine") };
	struct hist *h = sample();
	char value[16] = "rdA", *out;
	struct metrics *m;

	(void)state;
	labels[0].value = value;
	m = metrics_new("t", &c);
	assert_non_null(m);
	strcpy(value, "gone");
	strcpy(labels[0].name, "gone");
	assert_int_equal(metrics_hist_add(m, &lat, a, 2, h), 0);
	assert_int_equal(metrics_hist_add(m, &lat, b, 2, h), 0);
	assert_int_equal(metrics_counter_add(m, &errs, NULL, 0, 3), 0);
	out = render(m, METRICS_OPENMETRICS);
	assert_int_equal(sample_value(out,
		"t_read_duration_seconds_count{textfile=\"rdA\",team=\"a\\\"b\",comm=\"cat\"}"), 6);
	assert_int_equal(sample_value(out,
		"t_read_duration_seconds_bucket{textfile=\"rdA\",team=\"a\\\"b\",comm=\"[other]\",le=\"+Inf\"}"), 6);
	assert_int_equal(sample_value(out, "t_errors_total{textfile=\"rdA\",team=\"a\\\"b\"}"), 3);
	assert_int_equal(sample_value(out, "t_series_dropped_total{textfile=\"rdA\",team=\"a\\\"b\"}"), 1);
	assert_null(strstr(out, "mine"));
	assert_null(strstr(out, "gone"));
	free(out);
	free(h);
	metrics_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_histogram_exact),
		cmocka_unit_test(test_cumulative),
		cmocka_unit_test(test_every_bucket),
		cmocka_unit_test(test_one_le_set),
		cmocka_unit_test(test_bytes_and_counters),
		cmocka_unit_test(test_text_004),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_key_types),
		cmocka_unit_test(test_pid_label),
		cmocka_unit_test(test_series_cap),
		cmocka_unit_test(test_many_series),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_fixed_labels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
