// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include "output.h"

const char *unit_label(enum hist_unit unit)
{
	switch (unit) {
	case UNIT_NSECS: return "nsecs";
	case UNIT_MSECS: return "msecs";
	default: return "usecs";
	}
}

const char *unit_abbrev(enum hist_unit unit)
{
	switch (unit) {
	case UNIT_NSECS: return "ns";
	case UNIT_MSECS: return "ms";
	default: return "us";
	}
}

double unit_from_ns(enum hist_unit unit, unsigned long long ns)
{
	switch (unit) {
	case UNIT_NSECS: return (double)ns;
	case UNIT_MSECS: return (double)ns / 1e6;
	default: return (double)ns / 1e3;
	}
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

static void print_value(FILE *f, const char *name, double v)
{
	if (v < 100 && v != (double)(long long)v)
		fprintf(f, ", %s %.1f", name, v);
	else
		fprintf(f, ", %s %.0f", name, v);
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
			fputs(key[i].s, f);
	}
	if (nkey)
		fputc('\n', f);
}

static void text_hist(struct output *o, const struct key_field *key, int nkey,
		      const struct hist *h, const struct hist_extra *x)
{
	struct hist_stats s;

	hist_summarise(h, &s);
	text_key(o->f, key, nkey);
	hist_print_log2(o->f, h, unit_label(o->unit));
	fprintf(o->f, "count %llu", (unsigned long long)s.count);
	if (s.count) {
		print_value(o->f, "avg", s.avg);
		print_value(o->f, "p50", s.p50);
		print_value(o->f, "p90", s.p90);
		print_value(o->f, "p99", s.p99);
		print_value(o->f, "p99.9", s.p999);
		fprintf(o->f, ", max %llu %s", (unsigned long long)s.max, unit_label(o->unit));
	}
	if (x && x->errors)
		fprintf(o->f, ", errors %llu", (unsigned long long)h->errors);
	if (x && x->lost > 0)
		fprintf(o->f, ", lost %lld", x->lost);
	fputc('\n', o->f);
	if (nkey)
		fputc('\n', o->f);
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

	hist_summarise(h, &s);
	output_json_begin(o, &j);
	if (nkey)
		output_key_json(&j, key, nkey);
	json_u64(&j, "count", s.count);
	json_num(&j, "avg", s.avg);
	json_num(&j, "p50", s.p50);
	json_num(&j, "p90", s.p90);
	json_num(&j, "p99", s.p99);
	json_num(&j, "p999", s.p999);
	json_u64(&j, "max", s.max);
	if (x && x->errors)
		json_u64(&j, "errors", h->errors);
	if (x && x->lost >= 0)
		json_i64(&j, "lost", x->lost);
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
