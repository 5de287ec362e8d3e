// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for common/hist_layout.h and common/hist.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include "hist.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const __u64 big_values[] = {
	(1ULL << 20) - 1, 1ULL << 20, (1ULL << 20) + 1,
	(1ULL << 32) - 1, 1ULL << 32, (1ULL << 32) + 1,
	1ULL << 40, (1ULL << 40) + 12345, 1000000000000ULL,
	(1ULL << 62) - 1, 1ULL << 62, (1ULL << 62) + 1,
	(1ULL << 63) - 1, 1ULL << 63, (1ULL << 63) + 1,
	UINT64_MAX - 1, UINT64_MAX,
};

static struct hist *hist_new(void)
{
	struct hist *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	return h;
}

/* Record @n copies of @v, as the BPF side does. */
static void hist_add(struct hist *h, __u64 v, __u64 n)
{
	unsigned int idx = hist_bucket(v);

	assert_true(idx < HIST_BUCKETS);
	h->buckets[idx] += n;
	h->sum += v * n;
	if (n && v > h->max)
		h->max = v;
	if (n && ~v > h->min_inv)
		h->min_inv = ~v;
}

/* Render @h with hist_print_log2() into a malloc'd string, @scale raw
 * values per unit. */
static char *render_scaled(const struct hist *h, const char *label, __u64 scale)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	hist_print_log2(f, h, label, scale);
	assert_int_equal(fclose(f), 0);
	assert_non_null(buf);
	return buf;
}

static char *render(const struct hist *h, const char *label)
{
	return render_scaled(h, label, 1);
}

/* ---- layout ---------------------------------------------------------- */

static void test_layout_constants(void **state)
{
	(void)state;
	assert_int_equal(HIST_SUB, 4);
	/* 4 exact buckets + 4 sub-buckets for each of 2^2 .. 2^63 */
	assert_int_equal(HIST_BUCKETS, 4 + 62 * 4);
	assert_int_equal(sizeof(struct hist), (HIST_BUCKETS + 5) * sizeof(__u64));
}

static void test_log2(void **state)
{
	(void)state;
	for (__u64 v = 1; v <= 100000; v++)
		assert_int_equal(hist_log2(v), 63 - __builtin_clzll(v));
	for (unsigned int k = 0; k < 64; k++) {
		__u64 p = 1ULL << k;

		assert_int_equal(hist_log2(p), k);
		if (p > 1)
			assert_int_equal(hist_log2(p - 1), k - 1);
		if (k < 63)
			assert_int_equal(hist_log2(p + 1), k == 0 ? 1 : k);
		assert_int_equal(hist_log2(p | (p - 1)), k); /* all ones up to bit k */
	}
	assert_int_equal(hist_log2(UINT64_MAX), 63);
}

static void check_contains(__u64 v)
{
	unsigned int idx = hist_bucket(v);

	if (idx >= HIST_BUCKETS)
		fail_msg("value %llu: bucket %u out of range", (unsigned long long)v, idx);
	if (hist_bucket_lo(idx) > v || v > hist_bucket_hi(idx))
		fail_msg("value %llu in bucket %u = [%llu, %llu]", (unsigned long long)v, idx,
			 (unsigned long long)hist_bucket_lo(idx),
			 (unsigned long long)hist_bucket_hi(idx));
}

static void test_bucket_contains_value(void **state)
{
	(void)state;
	for (__u64 v = 0; v <= 100000; v++)
		check_contains(v);
	for (size_t i = 0; i < ARRAY_SIZE(big_values); i++)
		check_contains(big_values[i]);
	for (unsigned int k = 0; k < 64; k++) {
		check_contains(1ULL << k);
		check_contains((1ULL << k) - 1);
		check_contains((1ULL << k) + 1);
		check_contains((1ULL << k) | ((1ULL << k) - 1));
	}
}

static void test_bucket_small_exact(void **state)
{
	(void)state;
	for (unsigned int v = 0; v < HIST_SUB; v++) {
		assert_int_equal(hist_bucket(v), v);
		assert_int_equal(hist_bucket_lo(v), v);
		assert_int_equal(hist_bucket_hi(v), v);
	}
	/* first split row: [4,7] has four buckets of width 1, [8,15] width 2 */
	assert_int_equal(hist_bucket(4), 4);
	assert_int_equal(hist_bucket(7), 7);
	assert_int_equal(hist_bucket(8), 8);
	assert_int_equal(hist_bucket(9), 8);
	assert_int_equal(hist_bucket(10), 9);
	assert_int_equal(hist_bucket(15), 11);
	assert_int_equal(hist_bucket(16), 12);
	assert_int_equal(hist_bucket(UINT64_MAX), HIST_BUCKETS - 1);
}

static void test_bucket_contiguous(void **state)
{
	(void)state;
	assert_int_equal(hist_bucket_lo(0), 0);
	for (unsigned int i = 0; i + 1 < HIST_BUCKETS; i++) {
		if (hist_bucket_lo(i + 1) != hist_bucket_hi(i) + 1)
			fail_msg("gap or overlap after bucket %u: hi %llu, next lo %llu", i,
				 (unsigned long long)hist_bucket_hi(i),
				 (unsigned long long)hist_bucket_lo(i + 1));
		assert_true(hist_bucket_lo(i) <= hist_bucket_hi(i));
	}
	assert_true(hist_bucket_hi(HIST_BUCKETS - 1) == UINT64_MAX);
	/* each bucket's bounds map back to that bucket */
	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		assert_int_equal(hist_bucket(hist_bucket_lo(i)), i);
		assert_int_equal(hist_bucket(hist_bucket_hi(i)), i);
	}
}

static void test_bucket_width(void **state)
{
	(void)state;
	for (unsigned int i = HIST_SUB; i < HIST_BUCKETS; i++) {
		__u64 lo = hist_bucket_lo(i), hi = hist_bucket_hi(i);
		__u64 width = hi - lo + 1; /* last bucket: 2^64 - 7 * 2^61, no wrap */

		if (width > lo / 4)
			fail_msg("bucket %u = [%llu, %llu] wider than lo/4", i,
				 (unsigned long long)lo, (unsigned long long)hi);
	}
}

/* ---- drain, merge, count --------------------------------------------- */

/* Sums, extremes and buckets are raw (ns): an average in a coarser unit
 * is exact, not computed from values truncated to that unit. */
static void test_scaled_sum(void **state)
{
	struct hist *h = hist_new();
	struct hist_stats s;

	(void)state;
	hist_add(h, 1900000, 200);	/* 200 reads of 1.9 ms, shown in ms */
	hist_summarise(h, 1e6, &s);
	assert_int_equal(s.count, 200);
	assert_true(s.avg > 1.8999 && s.avg < 1.9001);
	assert_true(s.max > 1.8999 && s.max < 1.9001);
	assert_true(s.min > 1.8999 && s.min < 1.9001);
	assert_true(s.p50 >= s.min && s.p999 <= s.max);
	free(h);
}

/* Percentiles stay inside what was observed: 97 values near 5.1 ms in ns
 * sit in a bucket [4194304, 5242879] whose interpolation alone would give
 * a p50 below every one of them. */
static void test_percentile_clamped(void **state)
{
	struct hist *h = hist_new();
	struct hist_stats s;

	(void)state;
	for (__u64 i = 0; i < 97; i++)
		hist_add(h, 5100000 + i * 100, 1);
	hist_summarise(h, 1, &s);
	assert_true(s.min == 5100000);
	assert_true(s.max == 5100000 + 96 * 100);
	assert_true(s.p50 >= s.min && s.p50 <= s.max);
	assert_true(s.p90 >= s.p50 && s.p99 >= s.p90 && s.p999 >= s.p99 && s.p999 <= s.max);
	free(h);
}

static void test_merge(void **state)
{
	struct hist *a = hist_new(), *b = hist_new(), *empty = hist_new();

	(void)state;
	hist_add(a, 10, 3);
	hist_add(a, 5000, 1);
	a->errors = 2;
	hist_add(b, 10, 4);
	hist_add(b, 1ULL << 40, 2);
	b->errors = 5;

	hist_merge(a, b);
	assert_int_equal(a->buckets[hist_bucket(10)], 7);
	assert_int_equal(a->buckets[hist_bucket(5000)], 1);
	assert_int_equal(a->buckets[hist_bucket(1ULL << 40)], 2);
	assert_int_equal(hist_count(a), 10);
	assert_int_equal(a->sum, 10 * 7 + 5000 + 2 * (1ULL << 40));
	assert_int_equal(a->max, 1ULL << 40);
	assert_int_equal(a->errors, 7);
	/* src untouched */
	assert_int_equal(hist_count(b), 6);
	assert_int_equal(b->errors, 5);

	/* a smaller max does not lower dst's */
	hist_merge(b, empty);
	assert_int_equal(b->max, 1ULL << 40);
	assert_int_equal(hist_count(b), 6);
	hist_merge(empty, b);
	assert_memory_equal(empty, b, sizeof(*b));
	free(a);
	free(b);
	free(empty);
}

/* A max below its highest bucket, a min above its lowest: a race lost
 * (bpf/hist.bpf.h). Settled to the edges, and counted once if nothing
 * counted it; a consistent histogram is left as it is. */
static void test_settle(void **state)
{
	struct hist *h = hist_new(), *copy = hist_new();

	(void)state;
	hist_settle(h);
	assert_memory_equal(h, copy, sizeof(*h));	/* empty: nothing to do */
	hist_add(h, 1000, 3);
	hist_add(h, 90000, 1);
	*copy = *h;
	hist_settle(h);
	assert_memory_equal(h, copy, sizeof(*h));
	assert_int_equal(h->races, 0);

	h->max = 5000;			/* 90000's add lost its race */
	hist_settle(h);
	assert_int_equal(h->max, hist_bucket_lo(hist_bucket(90000)));
	assert_true(h->max <= 90000);
	assert_int_equal(~h->min_inv, 1000);
	assert_int_equal(h->races, 1);

	h->min_inv = ~(__u64)50000;	/* and 1000's min too; races already said */
	h->races = 3;
	hist_settle(h);
	assert_int_equal(~h->min_inv, hist_bucket_hi(hist_bucket(1000)));
	assert_true(~h->min_inv >= 1000);
	assert_int_equal(h->races, 3);
	free(h);
	free(copy);
}

static void test_count(void **state)
{
	struct hist *h = hist_new();
	__u64 want = 0;

	(void)state;
	assert_int_equal(hist_count(h), 0);
	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		h->buckets[i] = i;
		want += i;
	}
	h->errors = 1000; /* errors are not latencies */
	assert_int_equal(hist_count(h), want);
	memset(h, 0, sizeof(*h));
	h->buckets[HIST_BUCKETS - 1] = 1ULL << 50;
	h->buckets[0] = 1ULL << 50;
	assert_int_equal(hist_count(h), 1ULL << 51);
	free(h);
}

/* ---- percentiles ----------------------------------------------------- */

static void test_percentile_empty(void **state)
{
	struct hist *h = hist_new();
	struct hist_stats s;

	(void)state;
	assert_true(hist_percentile(h, 0.5, 1) == 0);
	assert_true(hist_percentile(h, 1.0, 1) == 0);
	h->errors = 3; /* only failures: still no latency */
	memset(&s, 0x5a, sizeof(s));
	hist_summarise(h, 1, &s);
	assert_int_equal(s.count, 0);
	assert_true(s.avg == 0 && s.p50 == 0 && s.p90 == 0 && s.p99 == 0 && s.p999 == 0);
	assert_int_equal(s.max, 0);
	free(h);
}

static void test_percentile_small_exact(void **state)
{
	struct hist *h = hist_new();

	(void)state;
	for (__u64 v = 0; v < 4; v++) {
		memset(h, 0, sizeof(*h));
		hist_add(h, v, 17);
		assert_true(hist_percentile(h, 0.5, 1) == (double)v);
		assert_true(hist_percentile(h, 0.999, 1) == (double)v);
		assert_true(hist_percentile(h, 1.0, 1) == (double)v);
	}
	/* 10 each of 0, 1, 2, 3 */
	memset(h, 0, sizeof(*h));
	for (__u64 v = 0; v < 4; v++)
		hist_add(h, v, 10);
	assert_true(hist_percentile(h, 0.10, 1) == 0);
	assert_true(hist_percentile(h, 0.25, 1) == 0);
	assert_true(hist_percentile(h, 0.26, 1) == 1);
	assert_true(hist_percentile(h, 0.50, 1) == 1);
	assert_true(hist_percentile(h, 0.75, 1) == 2);
	assert_true(hist_percentile(h, 0.90, 1) == 3);
	assert_true(hist_percentile(h, 1.00, 1) == 3);
	free(h);
}

static void test_percentile_constant_3000(void **state)
{
	static const __u64 ns[] = { 1, 2, 3, 10, 1000, 123457 };
	struct hist *h = hist_new();
	unsigned int b = hist_bucket(3000);
	double lo = (double)hist_bucket_lo(b), hi = (double)hist_bucket_hi(b);
	struct hist_stats s;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(ns); i++) {
		memset(h, 0, sizeof(*h));
		hist_add(h, 3000, ns[i]);
		hist_summarise(h, 1, &s);
		assert_int_equal(s.count, ns[i]);
		assert_true(s.avg == 3000);
		assert_int_equal(s.max, 3000);
		double p[] = { s.p50, s.p90, s.p99, s.p999 };

		for (size_t k = 0; k < ARRAY_SIZE(p); k++) {
			if (!(p[k] >= 2048 && p[k] <= 3071))
				fail_msg("N=%llu: p[%zu] = %f outside the log2 row [2048, 3071]",
					 (unsigned long long)ns[i], k, p[k]);
			if (!(p[k] >= lo && p[k] <= hi))
				fail_msg("N=%llu: p[%zu] = %f outside 3000's bucket [%.0f, %.0f]",
					 (unsigned long long)ns[i], k, p[k], lo, hi);
			/* never above the exact maximum */
			assert_true(p[k] <= 3000);
		}
	}
	free(h);
}

static __u64 lcg(__u64 *seed)
{
	*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return *seed >> 33;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* Random data sets: percentiles are ordered, bounded by max, and inside the
 * bucket of the true value of that rank. */
static void test_percentile_random(void **state)
{
	static const double qs[] = { 0.5, 0.9, 0.99, 0.999, 1.0 };
	struct hist *h = hist_new();
	__u64 seed = 12345;
	__u64 vals[5000];

	(void)state;
	for (int round = 0; round < 200; round++) {
		size_t n = 1 + lcg(&seed) % ARRAY_SIZE(vals);
		unsigned int shift = (unsigned int)(lcg(&seed) % 40);
		struct hist_stats s;
		double prev = 0;

		memset(h, 0, sizeof(*h));
		for (size_t i = 0; i < n; i++) {
			/* log-uniform-ish: a heavy tail like real latencies */
			vals[i] = lcg(&seed) >> (lcg(&seed) % 31);
			vals[i] = (vals[i] << shift) >> (lcg(&seed) % 8);
			hist_add(h, vals[i], 1);
		}
		qsort(vals, n, sizeof(vals[0]), cmp_u64);
		assert_int_equal(h->max, vals[n - 1]);

		hist_summarise(h, 1, &s);
		assert_int_equal(s.count, n);
		if (!(s.p50 <= s.p90 && s.p90 <= s.p99 && s.p99 <= s.p999 &&
		      s.p999 <= (double)s.max))
			fail_msg("round %d: not monotone: %f %f %f %f max %llu", round,
				 s.p50, s.p90, s.p99, s.p999, (unsigned long long)s.max);
		assert_true(s.p50 >= (double)hist_bucket_lo(hist_bucket(vals[0])));

		for (size_t k = 0; k < ARRAY_SIZE(qs); k++) {
			double p = hist_percentile(h, qs[k], 1);
			__u64 rank = (__u64)(qs[k] * (double)n + 0.999999);
			__u64 truth;
			unsigned int b;

			if (rank < 1)
				rank = 1;
			if (rank > n)
				rank = n;
			truth = vals[rank - 1];
			b = hist_bucket(truth);
			if (!(p >= (double)hist_bucket_lo(b) && p <= (double)hist_bucket_hi(b)))
				fail_msg("round %d q=%g: %f not in bucket [%llu, %llu] of %llu",
					 round, qs[k], p, (unsigned long long)hist_bucket_lo(b),
					 (unsigned long long)hist_bucket_hi(b),
					 (unsigned long long)truth);
			assert_true(p >= prev);
			prev = p;
		}
		/* q = 1 interpolates up to the exact max */
		assert_true(hist_percentile(h, 1.0, 1) <= (double)h->max);
	}
	free(h);
}

static void test_percentile_extremes(void **state)
{
	struct hist *h = hist_new();
	struct hist_stats s;

	(void)state;
	hist_add(h, UINT64_MAX, 1);
	h->sum = UINT64_MAX;
	hist_summarise(h, 1, &s);
	assert_int_equal(s.count, 1);
	assert_true(s.max == (double)UINT64_MAX);
	assert_true(s.p50 >= (double)hist_bucket_lo(HIST_BUCKETS - 1));
	assert_true(s.p999 <= (double)UINT64_MAX);

	memset(h, 0, sizeof(*h));
	hist_add(h, 1, 999);
	hist_add(h, 1000000, 1);
	hist_summarise(h, 1, &s);
	assert_true(s.p50 == 1);
	assert_true(s.p99 == 1);
	assert_true(s.p999 == 1);
	assert_true(hist_percentile(h, 1.0, 1) >= (double)hist_bucket_lo(hist_bucket(1000000)));
	assert_true(hist_percentile(h, 1.0, 1) <= 1000000);
	free(h);
}

static void test_summarise(void **state)
{
	struct hist *h = hist_new();
	struct hist_stats s;

	(void)state;
	hist_add(h, 100, 50);
	hist_add(h, 200, 30);
	hist_add(h, 5000, 20);
	h->errors = 9;
	hist_summarise(h, 1, &s);
	assert_int_equal(s.count, 100);
	assert_true(s.avg == (100.0 * 50 + 200.0 * 30 + 5000.0 * 20) / 100);
	assert_int_equal(s.max, 5000);
	assert_true(s.p50 == hist_percentile(h, 0.50, 1));
	assert_true(s.p90 == hist_percentile(h, 0.90, 1));
	assert_true(s.p99 == hist_percentile(h, 0.99, 1));
	assert_true(s.p999 == hist_percentile(h, 0.999, 1));
	/* p50 is a 100 (rank 50), p90 a 5000 (rank 90) */
	assert_true(s.p50 >= 96 && s.p50 <= 111);
	assert_true(s.p90 >= 4096 && s.p90 <= 5000);
	free(h);
}

/* The true quantile @q of sorted @v[@n] (nearest rank). */
static double true_quantile(const __u64 *v, size_t n, double q)
{
	size_t rank = (size_t)(q * (double)n + 0.999999);

	return (double)v[(rank ? rank : 1) - 1];
}

/* Latencies in nanoseconds shown in microseconds and milliseconds: each
 * percentile within 25% of the true one, at every scale, sub-unit values
 * included (300,000 reads of ~0.3 us gave p50 0.63 us when the kernel
 * bucketed in microseconds: everything below 1 us in one bucket). */
static void test_percentile_sub_unit(void **state)
{
	static const __u64 bases[] = { 3, 57, 120, 301, 999, 1700, 12345, 999999, 1700000, 4000000000ULL };
	static const double scales[] = { 1, 1e3, 1e6 };
	static const double qs[] = { 0.5, 0.9, 0.99, 0.999 };
	enum { N = 30000 };
	__u64 *v = malloc(N * sizeof(*v));
	struct hist *h = hist_new();

	(void)state;
	assert_non_null(v);
	srand(17);
	for (size_t b = 0; b < ARRAY_SIZE(bases); b++) {
		memset(h, 0, sizeof(*h));
		/* most near the base, a tail up to 4x */
		for (size_t i = 0; i < N; i++) {
			double u = (double)rand() / RAND_MAX;

			v[i] = bases[b] + (__u64)((double)bases[b] * (i % 10 ? u * 0.4 : u * 3));
			hist_add(h, v[i], 1);
		}
		qsort(v, N, sizeof(*v), cmp_u64);
		for (size_t s = 0; s < ARRAY_SIZE(scales); s++) {
			for (size_t k = 0; k < ARRAY_SIZE(qs); k++) {
				double want = true_quantile(v, N, qs[k]) / scales[s];
				double got = hist_percentile(h, qs[k], scales[s]);

				if (got < want * 0.75 || got > want * 1.25)
					fail_msg("base %llu ns, scale %g: p%g %g, true %g",
						 (unsigned long long)bases[b], scales[s], qs[k] * 100,
						 got, want);
			}
		}
	}
	free(v);
	free(h);
}

/* ---- the log2 table -------------------------------------------------- */

static void test_print_log2_layout(void **state)
{
	struct hist *h = hist_new();
	char *out;

	(void)state;
	hist_add(h, 0, 3);
	hist_add(h, 1, 2);	/* row 0: 0 -> 1, count 5 */
	hist_add(h, 5, 3);	/* row 2 */
	hist_add(h, 100, 2);	/* row 6: 64 -> 127 */
	h->errors = 4;		/* not drawn */
	out = render(h, "usecs");
	assert_string_equal(out,
		"     usecs               : count    distribution\n"
		"         0 -> 1          : 5        |****************************************|\n"
		"         2 -> 3          : 0        |                                        |\n"
		"         4 -> 7          : 3        |************************                |\n"
		"         8 -> 15         : 0        |                                        |\n"
		"        16 -> 31         : 0        |                                        |\n"
		"        32 -> 63         : 0        |                                        |\n"
		"        64 -> 127        : 2        |****************                        |\n");
	free(out);
	free(h);
}

static void test_print_log2_rows(void **state)
{
	struct hist *h = hist_new();
	char *out, *line;
	int row = 0;

	(void)state;
	/* one value at each edge of each row 0..20: 2^k and 2^(k+1)-1 */
	for (unsigned int k = 0; k <= 20; k++) {
		hist_add(h, 1ULL << k, 1);
		hist_add(h, (2ULL << k) - 1, 1);
	}
	hist_add(h, 0, 1);
	out = render(h, "msecs");
	line = strtok(out, "\n");
	assert_non_null(line);
	assert_string_equal(line, "     msecs               : count    distribution");
	while ((line = strtok(NULL, "\n"))) {
		unsigned long long lo, hi, count;
		char bar[64];

		assert_int_equal(sscanf(line, "%llu -> %llu : %llu |%40[* ]|", &lo, &hi, &count, bar), 4);
		assert_int_equal(strlen(line), 10 + 4 + 10 + 3 + 8 + 2 + 40 + 1);
		assert_int_equal(lo, row ? 1ULL << row : 0);
		assert_int_equal(hi, (2ULL << row) - 1);
		/* row 0 has 0, 1 and 1 again; row 1 has 2, 3; others two values */
		assert_int_equal(count, row == 0 ? 3 : 2);
		assert_int_equal(strspn(bar, "*"), row == 0 ? 40 : 26);
		row++;
	}
	assert_int_equal(row, 21);
	free(out);

	/* every sub-bucket of a row adds into that row */
	memset(h, 0, sizeof(*h));
	for (__u64 v = 1024; v < 2048; v += 100)
		hist_add(h, v, 1);
	out = render(h, "usecs");
	assert_non_null(strstr(out, "\n      1024 -> 2047       : 11       |****************************************|\n"));
	assert_null(strstr(out, "2048 ->"));
	free(out);
	free(h);
}

/* The rows of the usecs and msecs tables from nanosecond buckets: each
 * bucket lies wholly in one row, the row labelled 2^r -> 2^(r+1)-1 units
 * holding [2^r * R, 2^(r+1) * R) ns, R = 1024 (usecs) or 2^20 (msecs);
 * row 0 from 0. Checked for every bucket, by rendering it alone. */
static void check_rows_scaled(__u64 scale, __u64 R)
{
	struct hist *h = hist_new();

	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		__u64 lo = hist_bucket_lo(i), hi = hist_bucket_hi(i);
		unsigned long long a = 0, b = 0, count = 0;
		char *out, *line;
		int found = 0;

		if (hi >= (1ULL << 62) / 2)
			break;
		memset(h, 0, sizeof(*h));
		h->buckets[i] = 1;
		out = render_scaled(h, "usecs", scale);
		for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
			if (sscanf(line, "%llu -> %llu : %llu", &a, &b, &count) == 3 && count) {
				found++;
				break;
			}
		assert_int_equal(found, 1);
		assert_int_equal(count, 1);
		if (lo < a * R || hi >= (b + 1) * R)
			fail_msg("scale %llu: bucket [%llu, %llu] ns drawn in row %llu -> %llu",
				 (unsigned long long)scale, (unsigned long long)lo,
				 (unsigned long long)hi, a, b);
		free(out);
	}
	free(h);
}

static void test_print_log2_scaled(void **state)
{
	struct hist *h = hist_new();
	char *out;

	(void)state;
	check_rows_scaled(1000, 1024);
	check_rows_scaled(1000000, 1ULL << 20);

	/* the edges: 2047 ns in row 0, 2048 ns in 2 -> 3 usecs */
	hist_add(h, 301, 5);
	hist_add(h, 2047, 1);
	hist_add(h, 2048, 2);
	hist_add(h, 4095, 1);
	hist_add(h, 4096, 3);
	out = render_scaled(h, "usecs", 1000);
	assert_string_equal(out,
		"     usecs               : count    distribution\n"
		"         0 -> 1          : 6        |****************************************|\n"
		"         2 -> 3          : 3        |********************                    |\n"
		"         4 -> 7          : 3        |********************                    |\n");
	free(out);
	free(h);
}

static void test_print_log2_empty(void **state)
{
	struct hist *h = hist_new();
	char *out;

	(void)state;
	h->errors = 5;
	out = render(h, "usecs");
	assert_string_equal(out, "");
	free(out);
	free(h);
}

static void test_print_log2_wide(void **state)
{
	struct hist *h = hist_new();
	char *out, *last;
	int lines = 0;

	(void)state;
	hist_add(h, 1, 1);
	hist_add(h, UINT64_MAX, 1);
	out = render(h, "nsecs");
	for (char *p = out; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 1 + 64);
	/* past row 32, bcc widens the columns to 20 and halves the bar */
	assert_memory_equal(out, "               nsecs                         : count    distribution\n",
			    strlen("               nsecs                         : count    distribution\n"));
	assert_non_null(strstr(out, "\n                   0 -> 1                    : 1        |********************|\n"));
	assert_non_null(strstr(out, "\n                   2 -> 3                    : 0        |                    |\n"));
	last = strstr(out, "\n 9223372036854775808 -> 18446744073709551615 : 1        |********************|\n");
	assert_non_null(last);
	assert_int_equal(strlen(last), strlen("\n 9223372036854775808 -> 18446744073709551615 : 1        |********************|\n"));
	free(out);

	/* row 32 still uses the narrow layout */
	memset(h, 0, sizeof(*h));
	hist_add(h, 1ULL << 32, 1);
	out = render(h, "usecs");
	assert_non_null(strstr(out, "\n4294967296 -> 8589934591 : 1        |****************************************|\n"));
	free(out);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_constants),
		cmocka_unit_test(test_log2),
		cmocka_unit_test(test_bucket_contains_value),
		cmocka_unit_test(test_bucket_small_exact),
		cmocka_unit_test(test_bucket_contiguous),
		cmocka_unit_test(test_bucket_width),
		cmocka_unit_test(test_scaled_sum),
		cmocka_unit_test(test_percentile_clamped),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_settle),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_percentile_empty),
		cmocka_unit_test(test_percentile_small_exact),
		cmocka_unit_test(test_percentile_constant_3000),
		cmocka_unit_test(test_percentile_random),
		cmocka_unit_test(test_percentile_extremes),
		cmocka_unit_test(test_summarise),
		cmocka_unit_test(test_percentile_sub_unit),
		cmocka_unit_test(test_print_log2_layout),
		cmocka_unit_test(test_print_log2_rows),
		cmocka_unit_test(test_print_log2_scaled),
		cmocka_unit_test(test_print_log2_empty),
		cmocka_unit_test(test_print_log2_wide),
	};

	return cmocka_run_group_tests_name("hist", tests, NULL, NULL);
}
