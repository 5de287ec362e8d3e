/* SPDX-License-Identifier: GPL-2.0-only */
/* Reading, summarising and printing the kernel's log-linear histograms. */
#ifndef COMMON_HIST_H
#define COMMON_HIST_H

#include <stdio.h>
#include <linux/types.h>
#include "hist_layout.h"

/* A histogram summarised in its display unit. */
struct hist_stats {
	__u64 count;
	double avg;		/* exact: from the raw sum */
	double min, max;	/* exact */
	double p50, p90, p99, p999;	/* within a bucket, and within [min, max] */
};

/* Add @src into @dst (merging intervals or keys). */
void hist_merge(struct hist *dst, const struct hist *src);
/* A keyed histogram's max and min are raised by CPUs racing
 * (bpf/hist.bpf.h): a lost race can leave max below the lower edge of
 * the highest bucket that holds a value, or min above the upper edge of
 * the lowest, and the kernel's count of them (races) may miss it (the
 * programs without BPF atomics see few). Such a max is raised to that
 * edge (the true max is at least that), such a min lowered to its, and
 * races made at least 1. */
void hist_settle(struct hist *h);

struct keyed_snapshot;

__u64 hist_bucket_lo(unsigned int idx);
__u64 hist_bucket_hi(unsigned int idx);
__u64 hist_count(const struct hist *h);
/* Everything the kernel keeps is raw (nanoseconds for latencies, bytes
 * for sizes), buckets too; @scale is raw values per display unit (1000
 * for nanoseconds shown as microseconds), and these return display units. */
double hist_min(const struct hist *h, double scale);
double hist_max(const struct hist *h, double scale);
/* The value at quantile @q (0 < q <= 1), interpolated inside its bucket
 * and kept between the observed minimum and maximum. */
double hist_percentile(const struct hist *h, double q, double scale);
void hist_summarise(const struct hist *h, double scale, struct hist_stats *s);

/* The bcc log2 table ("usecs : count distribution", 40-column bar), its
 * rows powers of two of the display unit, @scale raw values each: a raw
 * bucket counts in the row of its lower bound (see log2_row()). */
void hist_print_log2(FILE *f, const struct hist *h, const char *unit_label, __u64 scale);

#endif /* COMMON_HIST_H */
