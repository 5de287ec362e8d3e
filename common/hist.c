// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hist.h"

#define STARS_MAX 40

void hist_merge(struct hist *dst, const struct hist *src)
{
	for (unsigned int i = 0; i < HIST_BUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
	dst->sum += src->sum;
	dst->errors += src->errors;
	dst->races += src->races;
	if (src->max > dst->max)
		dst->max = src->max;
	if (src->min_inv > dst->min_inv)
		dst->min_inv = src->min_inv;
}

void hist_settle(struct hist *h)
{
	unsigned int lo = HIST_BUCKETS, hi = 0;
	bool raised = false;

	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		if (!h->buckets[i])
			continue;
		if (lo == HIST_BUCKETS)
			lo = i;
		hi = i;
	}
	if (lo == HIST_BUCKETS)
		return;
	if (h->max < hist_bucket_lo(hi)) {
		h->max = hist_bucket_lo(hi);
		raised = true;
	}
	if (!h->min_inv || ~h->min_inv > hist_bucket_hi(lo)) {
		h->min_inv = ~hist_bucket_hi(lo);
		raised = true;
	}
	if (raised && !h->races)
		h->races = 1;
}

__u64 hist_bucket_lo(unsigned int idx)
{
	unsigned int msb, sub;

	if (idx < HIST_SUB)
		return idx;
	msb = HIST_SUB_BITS + (idx - HIST_SUB) / HIST_SUB;
	sub = (idx - HIST_SUB) % HIST_SUB;
	return (__u64)(HIST_SUB + sub) << (msb - HIST_SUB_BITS);
}

__u64 hist_bucket_hi(unsigned int idx)
{
	if (idx + 1 >= HIST_BUCKETS)
		return UINT64_MAX;
	return hist_bucket_lo(idx + 1) - 1;
}

__u64 hist_count(const struct hist *h)
{
	__u64 n = 0;

	for (unsigned int i = 0; i < HIST_BUCKETS; i++)
		n += h->buckets[i];
	return n;
}

/* The raw value of rank @rank's bucket, assuming its values evenly
 * spread, kept inside [lo_clamp, hi_clamp] (what was observed). Buckets
 * hold whole raw values (nanoseconds, bytes): a bucket one value wide
 * gives that value exactly. */
static double percentile(const struct hist *h, double q, double lo_clamp, double hi_clamp)
{
	__u64 total = hist_count(h), seen = 0, rank;
	double lo, hi, v;

	if (!total)
		return 0;
	rank = (__u64)(q * (double)total + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > total)
		rank = total;
	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		if (!h->buckets[i] || seen + h->buckets[i] < rank) {
			seen += h->buckets[i];
			continue;
		}
		lo = (double)hist_bucket_lo(i);
		hi = (double)hist_bucket_hi(i);
		if (lo < lo_clamp)
			lo = lo_clamp;
		if (hi > hi_clamp)
			hi = hi_clamp;
		if (hi < lo)
			hi = lo;
		v = lo + (hi - lo) * ((double)(rank - seen) - 0.5) / (double)h->buckets[i];
		return v < lo ? lo : v > hi ? hi : v;
	}
	return hi_clamp;
}

double hist_min(const struct hist *h, double scale)
{
	return h->min_inv ? (double)~h->min_inv / scale : 0;
}

double hist_max(const struct hist *h, double scale)
{
	return (double)h->max / scale;
}

double hist_percentile(const struct hist *h, double q, double scale)
{
	return percentile(h, q, hist_min(h, 1), hist_max(h, 1)) / scale;
}

void hist_summarise(const struct hist *h, double scale, struct hist_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->count = hist_count(h);
	if (!s->count)
		return;
	s->avg = (double)h->sum / scale / (double)s->count;
	s->min = hist_min(h, scale);
	s->max = hist_max(h, scale);
	s->p50 = hist_percentile(h, 0.50, scale);
	s->p90 = hist_percentile(h, 0.90, scale);
	s->p99 = hist_percentile(h, 0.99, scale);
	s->p999 = hist_percentile(h, 0.999, scale);
}

/* Row k of the log2 table holds display values [2^k, 2^(k+1)), row 0
 * also 0: a bucket goes wholly to the row of its lower bound in the unit.
 * At @scale 1000 or 1000000 that is exactly the rows of raw powers of two
 * (2^k * 1024 ns, 2^k * 2^20 ns): a unit's edge 1000 * 2^k falls in the
 * last quarter-bucket [896 * 2^k, 1024 * 2^k) below 1024 * 2^k (1000000
 * likewise below 2^20), so no bucket straddles a row the table draws. */
static unsigned int log2_row(unsigned int idx, __u64 scale)
{
	__u64 lo = hist_bucket_lo(idx) / scale;

	return lo < 2 ? 0 : hist_log2(lo);
}

static void print_bar(FILE *f, __u64 val, __u64 val_max, int width)
{
	int stars = (int)(val * (__u64)width / val_max);

	for (int i = 0; i < width; i++)
		fputc(i < stars ? '*' : ' ', f);
}

void hist_print_log2(FILE *f, const struct hist *h, const char *unit_label, __u64 scale)
{
	__u64 rows[64] = {0}, val_max = 0;
	int last = -1, width, stars;

	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		if (!h->buckets[i])
			continue;
		rows[log2_row(i, scale)] += h->buckets[i];
	}
	for (int r = 0; r < 64; r++) {
		if (rows[r])
			last = r;
		if (rows[r] > val_max)
			val_max = rows[r];
	}
	if (last < 0)
		return;
	width = last <= 32 ? 10 : 20;
	stars = last <= 32 ? STARS_MAX : STARS_MAX / 2;
	fprintf(f, "%*s%-*s : count    distribution\n", last <= 32 ? 5 : 15, "",
		last <= 32 ? 19 : 29, unit_label);
	for (int r = 0; r <= last; r++) {
		__u64 lo = r ? 1ULL << r : 0;
		__u64 hi = r == 63 ? UINT64_MAX : (1ULL << (r + 1)) - 1;

		fprintf(f, "%*llu -> %-*llu : %-8llu |", width, (unsigned long long)lo,
			width, (unsigned long long)hi, (unsigned long long)rows[r]);
		print_bar(f, rows[r], val_max, stars);
		fputs("|\n", f);
	}
}
