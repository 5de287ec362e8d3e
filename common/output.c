// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include "escape.h"
#include "filter.h"
#include "keyed.h"
#include "output.h"

const char *unit_label(enum hist_unit unit)
{
	switch (unit) {
	case UNIT_NSECS: return "nsecs";
	case UNIT_MSECS: return "msecs";
	case UNIT_BYTES: return "bytes";
	default: return "usecs";
	}
}

const char *unit_abbrev(enum hist_unit unit)
{
	switch (unit) {
	case UNIT_NSECS: return "ns";
	case UNIT_MSECS: return "ms";
	case UNIT_BYTES: return "B";
	default: return "us";
	}
}

double unit_scale(enum hist_unit unit)
{
	switch (unit) {
	case UNIT_NSECS:
	case UNIT_BYTES: return 1;
	case UNIT_MSECS: return 1e6;
	default: return 1e3;
	}
}

double unit_from_ns(enum hist_unit unit, unsigned long long ns)
{
	return (double)ns / unit_scale(unit);
}

int output_flush(struct output *o)
{
	errno = 0;
	if (!o->err && (fflush(o->f) == EOF || ferror(o->f)))
		o->err = errno ? errno : EIO;
	return o->err ? -1 : 0;
}

void output_now(struct output *o)
{
	struct timeval tv;
	struct tm tm;
	char zone[8];

	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(o->hms, sizeof(o->hms), "%H:%M:%S", &tm);
	strftime(zone, sizeof(zone), "%z", &tm);
	/* ISO-8601 wants the offset as +hh:mm */
	snprintf(o->iso, sizeof(o->iso), "%04d-%02d-%02dT%.8s.%03d%.3s:%.2s",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, o->hms,
		 (int)(tv.tv_usec / 1000) % 1000, zone, zone + 3);
}

void output_stamp(struct output *o)
{
	output_now(o);
	if (o->timestamp && !o->json && o->format != OUTPUT_OPENMETRICS)
		fprintf(o->f, "%s\n", o->hms);
}

void output_report_begin(struct output *o)
{
	output_stamp(o);
	o->counted = false;
}

void output_json_begin(struct output *o, struct json *j)
{
	json_begin(j, o->f);
	json_str(j, "tool", o->tool);
	json_str(j, "time", o->iso);
	json_str(j, "unit", unit_label(o->unit));
	if (o->skipped)
		json_u64(j, "skipped", o->skipped);
}

/* Whole numbers as such; fractions with three significant digits, so
 * that 0.301 usecs or 0.00170 msecs do not print as 0.30 or 0.00. */
static void print_value(FILE *f, const char *name, double v)
{
	if (v == (double)(long long)v)
		fprintf(f, ", %s %.0f", name, v);
	else
		fprintf(f, ", %s %.*f", name, fraction_digits(v, 3, 0, FRACTION_DIGITS_MAX), v);
}

void output_key_text(FILE *f, const struct key_field *k)
{
	if (k->type == KEY_U64)
		fprintf(f, "%llu", k->u);
	else if (k->type == KEY_I64 || k->type == KEY_ERRNO)
		fprintf(f, "%lld", k->i);
	else if (k->type == KEY_BOOL)
		fputs(k->u ? "true" : "false", f);
	else
		escape_text(f, k->s, strlen(k->s));
}

static void text_key(FILE *f, const struct key_field *key, int nkey)
{
	for (int i = 0; i < nkey; i++) {
		fprintf(f, "%s%s = ", i ? ", " : "", key[i].name);
		output_key_text(f, &key[i]);
	}
	if (nkey)
		fputc('\n', f);
}

static void text_hist(struct output *o, const struct key_field *key, int nkey,
		      const struct hist *h, const struct hist_extra *x)
{
	struct hist_stats s;

	hist_summarise(h, unit_scale(o->unit), &s);
	text_key(o->f, key, nkey);
	hist_print_log2(o->f, h, unit_label(o->unit), (__u64)unit_scale(o->unit));
	fprintf(o->f, "count %llu", (unsigned long long)s.count);
	if (s.count) {
		print_value(o->f, "avg", s.avg);
		print_value(o->f, "p50", s.p50);
		print_value(o->f, "p90", s.p90);
		print_value(o->f, "p99", s.p99);
		print_value(o->f, "p99.9", s.p999);
		print_value(o->f, "max", s.max);
		fprintf(o->f, " %s", unit_label(o->unit));
	}
	if (x && x->errors)
		fprintf(o->f, ", errors %llu", (unsigned long long)h->errors);
	if (h->races)
		fprintf(o->f, ", max/min short by %llu races", (unsigned long long)h->races);
	if (x && x->lost > 0)
		fprintf(o->f, ", lost %lld", x->lost);
	if (x && x->unmatched > 0 && o->verbose)
		fprintf(o->f, ", unmatched %lld", x->unmatched);
	if (x && x->missed)
		fprintf(o->f, ", missed %llu", x->missed);
	fputc('\n', o->f);
	fputc('\n', o->f);	/* a blank line between histograms, as bcc */
}

void output_key_json(struct json *j, const struct key_field *key, int nkey)
{
	json_open(j, "key", '{');
	output_key_fields_json(j, key, nkey);
	json_close(j, '}');
}

void output_key_fields_json(struct json *j, const struct key_field *key, int nkey)
{
	for (int i = 0; i < nkey; i++) {
		if (key[i].type == KEY_U64)
			json_u64(j, key[i].name, key[i].u);
		else if (key[i].type == KEY_I64 || key[i].type == KEY_ERRNO)
			json_i64(j, key[i].name, key[i].i);
		else if (key[i].type == KEY_BOOL)
			json_bool(j, key[i].name, key[i].u);
		else
			json_str(j, key[i].name, key[i].s);
	}
}

/* A bucket's inclusive edge @raw (ns or bytes) in the display unit,
 * exactly: 0.128 usecs, 0.000128 msecs. */
static void json_bucket_edge(struct json *j, const char *name, __u64 raw, enum hist_unit unit)
{
	unsigned int digits = 0;

	for (double s = unit_scale(unit); s >= 10; s /= 10)
		digits++;
	json_decimal(j, name, raw, digits);
}

static void json_hist(struct output *o, const struct key_field *key, int nkey,
		      const struct hist *h, const struct hist_extra *x)
{
	struct hist_stats s;
	struct json j;

	hist_summarise(h, unit_scale(o->unit), &s);
	output_json_begin(o, &j);
	if (nkey)
		output_key_json(&j, key, nkey);
	json_u64(&j, "count", s.count);
	json_num(&j, "avg", s.avg);
	json_num(&j, "p50", s.p50);
	json_num(&j, "p90", s.p90);
	json_num(&j, "p99", s.p99);
	json_num(&j, "p999", s.p999);
	json_num(&j, "min", s.min);
	json_num(&j, "max", s.max);
	if (x && x->errors)
		json_u64(&j, "errors", h->errors);
	if (h->races)
		json_u64(&j, "races", h->races);
	if (x && x->lost >= 0)
		json_i64(&j, "lost", x->lost);
	if (x && x->unmatched >= 0)
		json_i64(&j, "unmatched", x->unmatched);
	if (x && x->missed)
		json_u64(&j, "missed", x->missed);
	json_open(&j, "buckets", '[');
	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		if (!h->buckets[i])
			continue;
		json_open(&j, NULL, '{');
		json_bucket_edge(&j, "min", hist_bucket_lo(i), o->unit);
		json_bucket_edge(&j, "max", hist_bucket_hi(i), o->unit);
		json_u64(&j, "count", h->buckets[i]);
		json_close(&j, '}');
	}
	json_close(&j, ']');
	json_end(&j);
}

/* A store that cannot grow fails the output as a write would: the run
 * ends with the reason, rather than export counts that stopped. */
static void metrics_failed(struct output *o, int err)
{
	if (err && !o->err)
		o->err = ENOMEM;
}

void output_count(struct output *o, const struct metric_family *f, const struct key_field *key,
		  int nkey, unsigned long long delta)
{
	if (o->metrics)
		metrics_failed(o, metrics_counter_add(o->metrics, f, key, nkey, delta));
}

/* Per key: the histogram and its errors. Per report, once (they come
 * with every key's histogram): lost, unmatched and missed. */
static void metrics_hist(struct output *o, const struct key_field *key, int nkey,
			 const struct hist *h, const struct hist_extra *x)
{
	const struct metric_family *errors = o->errors_family ? o->errors_family : &o->fam.errors;
	bool idle = x && x->per_key && !nkey;

	if (idle)
		metrics_failed(o, metrics_declare(o->metrics, o->hist_family) ||
				  (x->errors && metrics_declare(o->metrics, errors)));
	else
		metrics_failed(o, metrics_hist_add(o->metrics, o->hist_family, key, nkey, h));
	if (!x)
		return;
	if (x->errors && !idle)
		output_count(o, errors, key, nkey, h->errors);
	if (x->lost >= 0 && x->lost_by_key)
		output_count(o, &o->fam.lost, key, nkey, (unsigned long long)x->lost);
	if (o->counted)
		return;
	o->counted = true;
	if (x->lost >= 0 && !x->lost_by_key)
		output_count(o, &o->fam.lost, NULL, 0, (unsigned long long)x->lost);
	if (x->unmatched >= 0)
		output_count(o, &o->fam.unmatched, NULL, 0, (unsigned long long)x->unmatched);
	if (x->has_missed)
		output_count(o, &o->fam.missed, NULL, 0, x->missed);
}

void output_hist(struct output *o, const struct key_field *key, int nkey,
		 const struct hist *raw, const struct hist_extra *x)
{
	struct hist settled = *raw, *h = &settled;

	hist_settle(h);
	if (o->metrics && o->hist_family)
		metrics_hist(o, key, nkey, h, x);
	if (o->format == OUTPUT_OPENMETRICS)
		return;
	if (o->json)
		json_hist(o, key, nkey, h, x);
	else
		text_hist(o, key, nkey, h, x);
}

static int by_pid(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

void output_hists_by_pid(struct output *o, struct keyed_snapshot *snap, int names_fd,
			 const struct hist_extra *x)
{
	char comm[FILTER_COMM_LEN + 1];

	keyed_sort(snap, by_pid);
	for (size_t i = 0; i < snap->n; i++) {
		__u32 pid = *(const __u32 *)keyed_key(snap, i);
		struct key_field key[2] = { KEY_UINT("pid", pid), KEY_STRING("comm", comm) };

		keyed_process_name(names_fd, pid, comm, sizeof(comm));
		output_hist(o, key, 2, keyed_value(snap, i), x);
	}
}

static int by_process(const void *a, const void *b)
{
	return process_key_cmp(a, b);
}

void output_hists_by_process(struct output *o, struct keyed_snapshot *snap,
			     const struct hist_extra *x)
{
	char comm[FILTER_COMM_LEN + 1];

	keyed_sort(snap, by_process);
	for (size_t i = 0; i < snap->n; i++) {
		const struct process_key *k = keyed_key(snap, i);
		struct key_field key[2] = { KEY_UINT("pid", k->pid), KEY_STRING("comm", comm) };

		process_key_name(k, comm, sizeof(comm));
		output_hist(o, key, 2, keyed_value(snap, i), x);
	}
}

static void generic_family(struct output *o, int i, struct metric_family *f, const char *what,
			   const char *help)
{
	snprintf(o->fam.names[i], sizeof(o->fam.names[i]), "%s_%s", o->tool, what);
	*f = (struct metric_family){ .name = o->fam.names[i], .help = help, .type = METRIC_COUNTER };
}

int output_metrics_start(struct output *o, const struct metrics_config *c)
{
	if (o->metrics)
		return 0;
	generic_family(o, 0, &o->fam.lost, "lost_events",
		       "Events not counted: a map or buffer was full");
	generic_family(o, 1, &o->fam.unmatched, "unmatched",
		       "Ends seen with no recorded start (in flight at attach, or evicted)");
	generic_family(o, 2, &o->fam.missed, "missed",
		       "Starts whose end no program saw (not counted)");
	generic_family(o, 3, &o->fam.errors, "errors", "Failed operations");
	o->metrics = metrics_new(o->tool, c);
	return o->metrics ? 0 : -1;
}

void output_metrics_stop(struct output *o)
{
	metrics_free(o->metrics);
	o->metrics = NULL;
}

struct metrics *output_metrics(struct output *o)
{
	return o->metrics;
}
