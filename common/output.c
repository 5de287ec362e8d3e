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
	case UNIT_NSECS: return 1;
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
	if (o->timestamp && !o->json)
		fprintf(o->f, "%s\n", o->hms);
}

void output_json_begin(struct output *o, struct json *j)
{
	json_begin(j, o->f);
	json_str(j, "tool", o->tool);
	json_str(j, "time", o->iso);
	json_str(j, "unit", unit_label(o->unit));
}

/* Whole numbers as such; fractions with about three significant digits. */
static void print_value(FILE *f, const char *name, double v)
{
	if (v == (double)(long long)v || v >= 100)
		fprintf(f, ", %s %.0f", name, v);
	else if (v >= 10)
		fprintf(f, ", %s %.1f", name, v);
	else
		fprintf(f, ", %s %.2f", name, v);
}

static void text_key(FILE *f, const struct key_field *key, int nkey)
{
	for (int i = 0; i < nkey; i++) {
		fprintf(f, "%s%s = ", i ? ", " : "", key[i].name);
		if (key[i].type == KEY_U64)
			fprintf(f, "%llu", key[i].u);
		else if (key[i].type == KEY_I64)
			fprintf(f, "%lld", key[i].i);
		else
			escape_text(f, key[i].s, strlen(key[i].s));
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
	hist_print_log2(o->f, h, unit_label(o->unit));
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
	if (x && x->lost > 0)
		fprintf(o->f, ", lost %lld", x->lost);
	if (x && x->unmatched > 0)
		fprintf(o->f, ", unmatched %lld", x->unmatched);
	fputc('\n', o->f);
	fputc('\n', o->f);	/* a blank line between histograms, as bcc */
}

void output_key_json(struct json *j, const struct key_field *key, int nkey)
{
	json_open(j, "key", '{');
	for (int i = 0; i < nkey; i++) {
		if (key[i].type == KEY_U64)
			json_u64(j, key[i].name, key[i].u);
		else if (key[i].type == KEY_I64)
			json_i64(j, key[i].name, key[i].i);
		else
			json_str(j, key[i].name, key[i].s);
	}
	json_close(j, '}');
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
	if (x && x->lost >= 0)
		json_i64(&j, "lost", x->lost);
	if (x && x->unmatched >= 0)
		json_i64(&j, "unmatched", x->unmatched);
	json_open(&j, "buckets", '[');
	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		if (!h->buckets[i])
			continue;
		json_open(&j, NULL, '{');
		json_u64(&j, "min", hist_bucket_lo(i));
		json_u64(&j, "max", hist_bucket_hi(i));
		json_u64(&j, "count", h->buckets[i]);
		json_close(&j, '}');
	}
	json_close(&j, ']');
	json_end(&j);
}

void output_hist(struct output *o, const struct key_field *key, int nkey,
		 const struct hist *h, const struct hist_extra *x)
{
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
