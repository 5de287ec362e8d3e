/* SPDX-License-Identifier: GPL-2.0-only */
/* Rendering a report: text for people, newline-delimited JSON for tools. */
#ifndef COMMON_OUTPUT_H
#define COMMON_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include "hist.h"
#include "json.h"

struct output {
	FILE *f;
	const char *tool;
	bool json;
	bool timestamp;
	enum hist_unit unit;
	char iso[64];		/* when the current report was taken */
	char hms[16];
	int err;		/* the first write error (errno), 0 if none */
};

/* One field of the key a histogram or event belongs to. */
struct key_field {
	const char *name;
	enum { KEY_U64, KEY_I64, KEY_STR } type;
	unsigned long long u;
	long long i;
	const char *s;
};

#define KEY_UINT(n, v) { .name = (n), .type = KEY_U64, .u = (v) }
#define KEY_INT(n, v) { .name = (n), .type = KEY_I64, .i = (v) }
#define KEY_STRING(n, v) { .name = (n), .type = KEY_STR, .s = (v) }

/* How a histogram is shown: errors and lost are left out where the tool
 * cannot have them. */
struct hist_extra {
	bool errors;
	long long lost;		/* negative: not shown */
	long long unmatched;	/* ends with no recorded start; negative: not shown */
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
/* Open a JSON object with the fields every object has: tool, time, unit. */
void output_json_begin(struct output *o, struct json *j);
void output_hist(struct output *o, const struct key_field *key, int nkey,
		 const struct hist *h, const struct hist_extra *x);
void output_key_json(struct json *j, const struct key_field *key, int nkey);

struct keyed_snapshot;
/* One histogram per process: @snap's keys begin with a __u32 PID (sorted
 * by it here), each named by bpf/names.bpf.h's map @names_fd. */
void output_hists_by_pid(struct output *o, struct keyed_snapshot *snap, int names_fd,
			 const struct hist_extra *x);

#endif /* COMMON_OUTPUT_H */
