/* SPDX-License-Identifier: GPL-2.0-only */
/* Reading, summarising and printing the kernel's log-linear histograms. */
#ifndef COMMON_HIST_H
#define COMMON_HIST_H

#include <stdio.h>
#include <linux/types.h>
#include "hist_layout.h"

struct hist_stats {
	__u64 count;
	double avg;
	double p50, p90, p99, p999;
	__u64 max;
};

/* Move @live (shared with the kernel) into @out and leave @live zeroed,
 * one atomic exchange per word, so a concurrent add is never lost. */
void hist_drain(struct hist *live, struct hist *out);
/* Add @src into @dst (merging intervals or keys). */
void hist_merge(struct hist *dst, const struct hist *src);

__u64 hist_bucket_lo(unsigned int idx);
__u64 hist_bucket_hi(unsigned int idx);
__u64 hist_count(const struct hist *h);
/* The value at quantile @q (0 < q <= 1), interpolated inside its bucket. */
double hist_percentile(const struct hist *h, double q);
void hist_summarise(const struct hist *h, struct hist_stats *s);

/* The bcc log2 table ("usecs : count distribution", 40-column bar). */
void hist_print_log2(FILE *f, const struct hist *h, const char *unit_label);

#endif /* COMMON_HIST_H */
