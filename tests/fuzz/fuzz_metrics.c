// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the metrics store and its two renderers
 * (common/metrics.c), fed records as hostile as the traced system can
 * make them: names with control bytes, invalid UTF-8, quotes and
 * backslashes, empty and 255-byte strings, any numbers, more series
 * than --max-series allows. The input is a configuration byte, then
 * records: an operation byte, the key's values, and the counts.
 *
 * Both expositions are read back by a parser of its own here and must
 * be well-formed (every line a comment or a sample, every label value
 * quoted and escaped, no control byte, UTF-8), and must add up: each
 * family's counts over all its series (the folded [other] one too) are
 * what was added, each series' buckets rise to its +Inf, which is its
 * _count, every series of a family has the same le set, and no family
 * has more than max_series + 1 series.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "escape.h"
#include "hist.h"
#include "metrics.h"
#include "output.h"

/* The line being read back, named when a check fails. */
static const char *line_at;
static size_t line_len;

#define MUST(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz_metrics: %s, at: %.*s\n", #c, (int)line_len, line_at ? line_at : ""); \
	abort(); } } while (0)
#define MAX_KEY 4
#define MAX_STR 255

static const struct metric_family fam_lat = {
	.name = "t_read_duration_seconds", .help = "Latency",
	.unit = "seconds", .type = METRIC_HISTOGRAM, .scale = 1e-9,
};
static const struct metric_family fam_size = {
	.name = "t_io_size_bytes", .help = "Sizes", .unit = "bytes", .type = METRIC_HISTOGRAM,
	.scale = 1,
};
static const struct metric_family fam_err = {
	.name = "t_errors", .help = "Errors", .type = METRIC_COUNTER,
};
static const struct metric_family *const families[] = { &fam_lat, &fam_size, &fam_err };
#define NFAM 3

/* A family's key, as a tool's: the same fields in the same order. */
static const struct { const char *name; int type; } key_schema[MAX_KEY] = {
	{ "pid", KEY_U64 }, { "comm", KEY_STR }, { "errno", KEY_ERRNO }, { "file", KEY_STR },
};

struct input {
	const uint8_t *p;
	size_t n;
};

static unsigned long long take(struct input *in, int bytes)
{
	unsigned long long v = 0;

	for (int i = 0; i < bytes && in->n; i++, in->p++, in->n--)
		v |= (unsigned long long)*in->p << (8 * i);
	return v;
}

static void take_str(struct input *in, char *s)
{
	size_t len = take(in, 1);

	if (len > in->n)
		len = in->n;
	memcpy(s, in->p, len);
	s[len] = '\0';	/* an embedded NUL ends it early, as in a C string */
	in->p += len;
	in->n -= len;
}

struct totals {
	double count[NFAM];	/* observations of a histogram, a counter's sum */
};

/* ---- reading the exposition back ----------------------------------- */

struct series {
	char name[96];		/* the sample's name */
	char labels[2048];	/* its labels but le, decoded, as one string */
	double le_last, last_bucket;
	bool in_buckets;
	char les[1024];		/* its le values, each ending in "," */
};

/* The le set of each family's first series, that of every other. */
static char family_les[NFAM][1024];

/* Decode one label value at *p (after the opening quote) into @out. */
static const char *label_value(const char *p, char *out, size_t len)
{
	size_t o = 0;

	for (; *p != '"'; p++) {
		MUST(*p && *p != '\n');
		if (*p == '\\') {
			p++;
			MUST(*p == '\\' || *p == '"' || *p == 'n');
			out[o++] = *p == 'n' ? '\n' : *p;
		} else {
			out[o++] = *p;
		}
		MUST(o < len);
	}
	out[o] = '\0';
	MUST(utf8_valid(out, o));
	return p + 1;
}

static int family_of(const char *name, size_t n)
{
	for (int f = 0; f < NFAM; f++) {
		size_t fl = strlen(families[f]->name);

		if (n > fl && !strncmp(name, families[f]->name, fl) && name[fl] == '_')
			return f;
	}
	return -1;
}

static void check_line(const char *line, size_t n, struct series *cur, double *sum_count,
		       int *nseries)
{
	char name[96], labels[2048] = "", le[64] = "", value[2048];
	const char *p = line, *end;
	size_t at = 0, nl;
	double v;
	int f;

	for (size_t i = 0; i < n; i++)
		MUST((unsigned char)line[i] >= 0x20 && line[i] != 0x7f);
	if (line[0] == '#') {
		MUST(!strncmp(line, "# HELP ", 7) || !strncmp(line, "# TYPE ", 7) ||
		     !strncmp(line, "# UNIT ", 7) || (n == 5 && !strncmp(line, "# EOF", 5)));
		return;
	}
	nl = strcspn(p, "{ ");
	MUST(nl > 0 && nl < sizeof(name));
	memcpy(name, p, nl);
	name[nl] = '\0';
	for (size_t i = 0; i < nl; i++)
		MUST((name[i] >= 'a' && name[i] <= 'z') || name[i] == '_');
	p += nl;
	if (*p == '{') {
		for (p++; *p != '}';) {
			size_t kl = strcspn(p, "=");

			MUST(kl > 0 && p[kl] == '=' && p[kl + 1] == '"');
			if (kl == 2 && !strncmp(p, "le", 2)) {
				p = label_value(p + kl + 2, le, sizeof(le));
			} else {
				at += (size_t)snprintf(labels + at, sizeof(labels) - at, "%.*s=", (int)kl, p);
				MUST(at < sizeof(labels));
				p = label_value(p + kl + 2, value, sizeof(value));
				at += (size_t)snprintf(labels + at, sizeof(labels) - at, "%s\x01", value);
				MUST(at < sizeof(labels));
			}
			MUST(*p == ',' || *p == '}');
			if (*p == ',')
				p++;
		}
		p++;
	}
	MUST(*p == ' ');
	v = strtod(p + 1, (char **)&end);
	MUST(end == line + n && end != p + 1 && v >= 0);

	f = family_of(name, nl);
	if (f < 0)
		return;	/* t_series_dropped_total */
	if (strstr(name, "_bucket")) {
		MUST(le[0]);
		if (!cur->in_buckets || strcmp(cur->labels, labels)) {
			snprintf(cur->labels, sizeof(cur->labels), "%s", labels);
			cur->in_buckets = true;
			cur->last_bucket = 0;
			cur->les[0] = '\0';
		}
		MUST(strlen(cur->les) + strlen(le) + 2 < sizeof(cur->les));
		strcat(strcat(cur->les, le), ",");
		MUST(v >= cur->last_bucket);
		cur->last_bucket = v;
		if (!strcmp(le, "+Inf"))
			cur->le_last = v;
		return;
	}
	MUST(!le[0]);
	if (families[f]->type == METRIC_COUNTER) {
		MUST(!strcmp(name + strlen(families[f]->name), "_total"));
		sum_count[f] += v;
		nseries[f]++;
	} else if (!strcmp(name + strlen(families[f]->name), "_count")) {
		MUST(cur->in_buckets && !strcmp(cur->labels, labels) && cur->le_last == v);
		if (!family_les[f][0])
			strcpy(family_les[f], cur->les);
		MUST(!strcmp(family_les[f], cur->les));
		cur->in_buckets = false;
		sum_count[f] += v;
		nseries[f]++;
	}
}

static void check(struct metrics *m, enum metrics_dialect d, const struct totals *t, long max_series)
{
	double sum_count[NFAM] = { 0 };
	int nseries[NFAM] = { 0 };
	struct series cur = { .in_buckets = false };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	MUST(f);
	memset(family_les, 0, sizeof(family_les));
	MUST(metrics_render(m, d, f) == 0);
	MUST(fclose(f) == 0);
	MUST(len >= 6 && !strcmp(buf + len - 6, "# EOF\n"));
	MUST(strlen(buf) == len);
	for (char *line = buf, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		MUST(nl);
		line_at = line;
		line_len = (size_t)(nl - line);
		check_line(line, (size_t)(nl - line), &cur, sum_count, nseries);
	}
	line_at = NULL;
	line_len = 0;
	for (int i = 0; i < NFAM; i++) {
		MUST(sum_count[i] == t->count[i]);
		MUST(nseries[i] <= max_series + 1);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char strs[MAX_KEY][MAX_STR + 1];
	struct input in = { data, size };
	unsigned int conf = (unsigned int)take(&in, 1);
	struct metrics_config c = { .max_series = 1 + (conf & 7), .label_pid = conf & 8 };
	int nkey = (int)((conf >> 4) % (MAX_KEY + 1));
	struct totals t = { { 0 } };
	struct metrics *m = metrics_new("t", &c);

	MUST(m);
	for (int ops = 0; in.n && ops < 64; ops++) {
		unsigned int op = (unsigned int)take(&in, 1);
		int fi = (int)(op % NFAM);
		const struct metric_family *fam = families[fi];
		struct key_field key[MAX_KEY];

		for (int k = 0; k < nkey; k++) {
			key[k] = (struct key_field){ .name = key_schema[k].name,
						     .type = key_schema[k].type };
			if (key[k].type == KEY_STR) {
				take_str(&in, strs[k]);
				key[k].s = strs[k];
			} else if (key[k].type == KEY_ERRNO) {
				key[k].i = (long long)(int8_t)take(&in, 1);
			} else {
				key[k].u = take(&in, 1);	/* few: series repeat */
			}
		}
		if (op & 0x80) {
			MUST(metrics_declare(m, fam) == 0);
		} else if (fam->type == METRIC_COUNTER) {
			unsigned long long delta = take(&in, 4);

			MUST(metrics_counter_add(m, fam, key, nkey, delta) == 0);
			t.count[fi] += (double)delta;
		} else {
			struct hist h = { .buckets = { 0 } };
			int nb = (int)take(&in, 1) % 4;

			for (int b = 0; b < nb; b++) {
				unsigned int bucket = (unsigned int)take(&in, 1) % HIST_BUCKETS;
				unsigned long long n = take(&in, 2);

				h.buckets[bucket] += n;
				h.sum += n << (bucket < 40 ? bucket : 40);
				t.count[fi] += (double)n;
			}
			MUST(metrics_hist_add(m, fam, key, nkey, &h) == 0);
		}
	}
	check(m, METRICS_OPENMETRICS, &t, c.max_series);
	check(m, METRICS_TEXT_004, &t, c.max_series);
	metrics_free(m);
	return 0;
}
