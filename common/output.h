/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Rendering a report: text for people, newline-delimited JSON for tools,
 * OpenMetrics for Prometheus. A tool hands its histograms, tables and
 * counts here and never asks which format was chosen: the text and JSON
 * renderers print each report; with a metrics store (common/metrics.h)
 * every report also adds to it, and the runtime writes it out.
 */
#ifndef COMMON_OUTPUT_H
#define COMMON_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include "hist.h"
#include "json.h"
#include "metrics.h"

enum output_format { OUTPUT_TEXT, OUTPUT_JSON, OUTPUT_OPENMETRICS };

/* The counts every tool may have, as metrics: <tool>_lost_events, ... */
struct output_families {
	struct metric_family lost, unmatched, missed, errors;
	char names[4][96];
};

struct output {
	FILE *f;
	const char *tool;
	bool json;		/* format == OUTPUT_JSON */
	enum output_format format;
	bool timestamp;
	bool verbose;		/* -v: text shows the ends with no start (unmatched) too */
	enum hist_unit unit;
	char iso[64];		/* when the current report was taken */
	char hms[16];
	int err;		/* the first write error (errno), 0 if none */
	/* Intervals passed without a report of their own (the previous
	 * report ran past them): this report covers them too. */
	unsigned long long skipped;
	/* The run's metrics: fed by every report when not NULL. */
	struct metrics *metrics;
	const struct metric_family *hist_family;	/* what the histograms measure */
	const struct metric_family *errors_family;	/* their failed operations; NULL:
							 * <tool>_errors_total */
	struct output_families fam;
	bool counted;		/* this report's once-a-report counts are in the store */
};

/* One field of the key a histogram, row or event belongs to; in metrics,
 * a label (its name the field's). */
struct key_field {
	const char *name;
	enum {
		KEY_U64, KEY_I64, KEY_STR,
		KEY_ERRNO,	/* in .i: a number in text and JSON, its name (ENOENT) as a label */
		KEY_BOOL,	/* in .u */
	} type;
	unsigned long long u;
	long long i;
	const char *s;
	bool json_only;	/* a detail of the key (a path's truncation): no label */
};

#define KEY_UINT(n, v) { .name = (n), .type = KEY_U64, .u = (v) }
#define KEY_INT(n, v) { .name = (n), .type = KEY_I64, .i = (v) }
#define KEY_STRING(n, v) { .name = (n), .type = KEY_STR, .s = (v) }
#define KEY_ERRNO_OF(n, v) { .name = (n), .type = KEY_ERRNO, .i = (v) }

/* How a histogram is shown: errors and lost are left out where the tool
 * cannot have them. */
struct hist_extra {
	bool errors;
	long long lost;		/* negative: not shown */
	long long unmatched;	/* ends with no recorded start; negative: not shown */
	unsigned long long missed;	/* starts whose end no program saw (bpf/start.bpf.h);
					 * shown when not 0 */
	bool lost_by_key;	/* lost is this key's (biolat), not the report's */
	bool per_key;		/* histograms come one per key: one without a key is
				 * an idle report's, no series of its own */
	bool has_missed;	/* the tool pairs starts with ends: missed is a metric */
};

const char *unit_label(enum hist_unit unit);	/* "usecs" */
const char *unit_abbrev(enum hist_unit unit);	/* "us" */
/* Nanoseconds per output unit; and nanoseconds divided into it. */
double unit_scale(enum hist_unit unit);
double unit_from_ns(enum hist_unit unit, unsigned long long ns);
/* Flush; 0, or -1 once any write failed (its errno kept in o->err). */
int output_flush(struct output *o);
/* Take the time (of an event, say) into o->iso and o->hms. */
void output_now(struct output *o);
/* Take the time of a report; with -T in text mode print it as a header. */
void output_stamp(struct output *o);
/* A report begins: output_stamp(), and the store awaits its counts. */
void output_report_begin(struct output *o);
/* Open a JSON object with the fields every object has: tool, time, unit. */
void output_json_begin(struct output *o, struct json *j);
/* One histogram, in every format the run writes, settled first
 * (hist_settle(): max and min kept inside its buckets). */
void output_hist(struct output *o, const struct key_field *key, int nkey,
		 const struct hist *raw, const struct hist_extra *x);
/* "key": {...}; and the fields alone, in an object already open. */
void output_key_json(struct json *j, const struct key_field *key, int nkey);
void output_key_fields_json(struct json *j, const struct key_field *key, int nkey);
/* One field's value as text (strings escaped). */
void output_key_text(FILE *f, const struct key_field *k);
/* A count that only the metrics keep apart (text and JSON say it in a
 * line of their own, or at the end): added to the store, if any. */
void output_count(struct output *o, const struct metric_family *f, const struct key_field *key,
		  int nkey, unsigned long long delta);

/* Feed every report from now on into a metrics store (made once; -1:
 * out of memory). The tool's families are o->hist_family and
 * o->errors_family, set before its first report. */
int output_metrics_start(struct output *o, const struct metrics_config *c);
void output_metrics_stop(struct output *o);
/* The store, NULL if none: what a report renders (metrics_render()). */
struct metrics *output_metrics(struct output *o);

struct keyed_snapshot;
/* One histogram per process: @snap's keys begin with a __u32 PID (sorted
 * by it here), each named by bpf/names.bpf.h's map @names_fd. */
void output_hists_by_pid(struct output *o, struct keyed_snapshot *snap, int names_fd,
			 const struct hist_extra *x);
/* The same for keys that begin with a struct process_key: each is named
 * by the name in its key (a process that exec()s is two rows). */
void output_hists_by_process(struct output *o, struct keyed_snapshot *snap,
			     const struct hist_extra *x);

#endif /* COMMON_OUTPUT_H */
