/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The metrics of a run, cumulative from its start, for Prometheus: every
 * report adds its interval's histograms and counts here, and the whole
 * store is written out in one of two dialects of the text exposition.
 *
 * A series is named by the config's labels, then its key fields (struct
 * key_field, output.h) as labels; "pid" only with label_pid, else the processes of one name are
 * one series (their histograms summed). A family holds at most
 * max_series series: a new one past that is folded into one series whose
 * labels all say "[other]", and counted in <tool>_series_dropped_total.
 * A series, once there, stays until the store is freed (a process that
 * ended keeps its last counts), as Prometheus expects of counters.
 * Every series of a histogram family has the same le set, whatever it
 * counted (le_ranges in metrics.c), so that series sum by (le).
 */
#ifndef COMMON_METRICS_H
#define COMMON_METRICS_H

#include <stdbool.h>
#include <stdio.h>
#include "hist_layout.h"

struct key_field;

enum metrics_dialect {
	METRICS_OPENMETRICS,	/* OpenMetrics 1.0: --output openmetrics */
	METRICS_TEXT_004,	/* Prometheus text 0.0.4, which node_exporter's textfile
				 * collector (1.5) parses: a counter's TYPE line names
				 * its _total sample, no # UNIT */
};

enum metric_type { METRIC_COUNTER, METRIC_HISTOGRAM };

/* Strings are kept by pointer: they must live as long as the store. */
struct metric_family {
	const char *name;	/* a counter's without _total */
	const char *help;
	const char *unit;	/* "seconds", "bytes" or NULL; the name ends in it */
	enum metric_type type;
	double scale;		/* base units per raw unit: 1e-9 for nanoseconds; 0: 1 */
};

#define METRICS_MAX_SERIES_DEFAULT 1000
#define METRICS_MAX_LABELS 8
#define METRICS_LABEL_NAME_MAX 64

/* A label every series of every family carries (--label NAME=VALUE, or
 * --textfile's name): two runs writing beside each other (two files for
 * one node_exporter) are then never one series. */
struct metrics_label {
	char name[METRICS_LABEL_NAME_MAX];
	const char *value;
};

struct metrics_config {
	long max_series;	/* per family; <= 0: METRICS_MAX_SERIES_DEFAULT */
	bool label_pid;		/* --label pid */
	/* Copied by metrics_new(). A key field of one of these names is
	 * left out: the label says VALUE on every series. */
	const struct metrics_label *labels;
	int nlabels;
};

struct metrics;

/* NULL when out of memory. @tool prefixes <tool>_series_dropped_total. */
struct metrics *metrics_new(const char *tool, const struct metrics_config *c);
void metrics_free(struct metrics *m);
/* The family is there (its HELP and TYPE), with no series yet: an idle
 * report's. 0, or -1 as below. */
int metrics_declare(struct metrics *m, const struct metric_family *f);
/* Add one interval's histogram (raw units, as the kernel counts) to the
 * series of @key. 0, or -1: out of memory, or @f is a counter. */
int metrics_hist_add(struct metrics *m, const struct metric_family *f, const struct key_field *key,
		     int nkey, const struct hist *h);
/* Add @delta (raw units) to a counter; with 0 the series is there, at 0. */
int metrics_counter_add(struct metrics *m, const struct metric_family *f, const struct key_field *key,
			int nkey, unsigned long long delta);
/* The whole exposition, families in the order they were first added,
 * ending "# EOF\n". 0, or -1 when a write failed (errno). */
int metrics_render(struct metrics *m, enum metrics_dialect d, FILE *f);

#endif /* COMMON_METRICS_H */
