// SPDX-License-Identifier: GPL-2.0-only
/*
 * The metrics store and its one renderer. Series are found by a hash of
 * their label text, so a report costs O(series x buckets) at any count
 * of series: no lookup walks a list (make bench measures 1000 series).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "escape.h"
#include "hist.h"
#include "metrics.h"
#include "output.h"

#define OTHER "[other]"
#define NO_SERIES SIZE_MAX
/* Folded keys remembered, so that each is counted as dropped once: one
 * costs its label text, not a histogram. Past this many, a key folded
 * before is counted again (the count errs high, never low). */
#define FOLDED_MAX 100000

/* The le set of a histogram family: one bucket per power of two of its
 * raw unit, le = 2^k - 1 for k in [lo, hi], then +Inf. The same set on
 * every series, every run and every host, counted in or not, so that
 * sum by (le) over processes or hosts adds like with like (ebpf_exporter
 * fills missing buckets for the same reason). The fine buckets nest in
 * these powers of two, so each count is exact; they stay for the text
 * and JSON percentiles. */
struct le_range {
	const char *unit;	/* the family's; NULL: any other */
	unsigned int lo, hi;
};

static const struct le_range le_ranges[] = {
	{ "seconds", 7, 37 },	/* nanoseconds: 127 ns to 137.4 s */
	{ NULL, 0, 30 },	/* bytes, and counts of anything: 0 to 1 GiB - 1 */
};

#define LE_MAX 64		/* +Inf included; a scrape's size grows with it */
#define LE_TEXT_MAX 32		/* `le="137.438953471"` and the like */

struct series {
	char *labels;		/* `comm="x",fd="3"`, escaped; "" for none */
	uint64_t hash;
	size_t next;		/* in its hash chain */
	size_t into;		/* NO_SERIES, or folded: the [other] series */
	unsigned long long value;	/* a counter's, raw units */
	unsigned long long sum, count;	/* a histogram's, raw units */
	__u64 *buckets;		/* a histogram's, one per le (not cumulative), since the start */
};

struct family {
	struct metric_family f;
	unsigned int decimals;	/* scale is 10^-decimals; UINT_MAX: it is not */
	struct series *s;	/* in the order first seen */
	size_t n, cap;
	size_t *chains;		/* hash table of heads, a power of two */
	size_t nchains;
	size_t live;		/* series of their own, against max_series */
	size_t other;		/* the [other] series, or NO_SERIES */
	/* Histograms: nle buckets (+Inf the last), each le="..." label, and
	 * the one each fine bucket (struct hist) is counted in. */
	unsigned int nle;
	char (*le)[LE_TEXT_MAX];
	unsigned char le_len[LE_MAX];
	unsigned char le_of[HIST_BUCKETS];
};

struct metrics {
	struct metrics_config c;
	char *fixed;		/* c.labels' text, `a="x",b="y"`, escaped; "" for none */
	size_t fixed_len;
	char fixed_names[METRICS_MAX_LABELS][METRICS_LABEL_NAME_MAX];
	struct family *fam;
	size_t nfam;
	char *dropped_name;
	struct metric_family dropped;	/* <tool>_series_dropped */
	unsigned long long ndropped;
	size_t nfolded;
	char *buf;		/* label text being built */
	size_t len, size;
};

#define NO_DECIMALS 0xffffffffU

/* The decimals d of a scale of 10^-d, so values print as exact decimals. */
static unsigned int decimals_of(double scale)
{
	double p = 1;

	for (unsigned int d = 0; d <= 19; d++, p *= 10)
		if (fabs(scale * p - 1) < 1e-9)
			return d;
	return NO_DECIMALS;
}

/* @v raw units times the family's scale, exactly where the scale is a
 * power of ten (nanoseconds as seconds: 0.000001023), into @out. */
static size_t format_value(const struct family *fam, unsigned long long v, char *out, size_t len)
{
	unsigned long long p = 1;
	unsigned int d = fam->decimals;
	int n;

	if (d == NO_DECIMALS)
		return (size_t)snprintf(out, len, "%.17g", (double)v * fam->f.scale);
	for (unsigned int i = 0; i < d; i++)
		p *= 10;
	if (!d || v % p == 0)
		return (size_t)snprintf(out, len, "%llu", v / p);
	n = snprintf(out, len, "%llu.%0*llu", v / p, (int)d, v % p);
	while (n > 0 && out[n - 1] == '0')
		out[--n] = '\0';
	return (size_t)n;
}

static bool fixed_labels(struct metrics *m);

struct metrics *metrics_new(const char *tool, const struct metrics_config *c)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (c)
		m->c = *c;
	if (m->c.max_series <= 0)
		m->c.max_series = METRICS_MAX_SERIES_DEFAULT;
	if (!fixed_labels(m) || asprintf(&m->dropped_name, "%s_series_dropped", tool) < 0) {
		free(m->fixed);
		free(m->buf);
		free(m);
		return NULL;
	}
	m->dropped = (struct metric_family){
		.name = m->dropped_name, .type = METRIC_COUNTER,
		.help = "Series folded into one whose labels are [other]: past --max-series in their family",
	};
	return m;
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nfam; i++) {
		for (size_t j = 0; j < m->fam[i].n; j++) {
			free(m->fam[i].s[j].labels);
			free(m->fam[i].s[j].buckets);
		}
		free(m->fam[i].s);
		free(m->fam[i].chains);
		free(m->fam[i].le);
	}
	free(m->fam);
	free(m->fixed);
	free(m->dropped_name);
	free(m->buf);
	free(m);
}

/* ---- Building the label text of a key ---- */

static bool buf_reserve(struct metrics *m, size_t more)
{
	char *p;
	size_t size;

	if (m->len + more < m->size)
		return true;
	size = (m->len + more) * 2 + 256;
	p = realloc(m->buf, size);
	if (!p)
		return false;
	m->buf = p;
	m->size = size;
	return true;
}

static bool buf_add(struct metrics *m, const char *s, size_t n)
{
	if (!buf_reserve(m, n))
		return false;
	memcpy(m->buf + m->len, s, n);
	m->len += n;
	m->buf[m->len] = '\0';
	return true;
}

/* An untrusted string, escaped as escape_label_buf() says. */
static bool buf_add_escaped(struct metrics *m, const char *s)
{
	size_t need = escape_label_buf(NULL, 0, s, strlen(s));

	if (!buf_reserve(m, need + 1))
		return false;
	escape_label_buf(m->buf + m->len, need + 1, s, strlen(s));
	m->len += need;
	return true;
}

static bool labelled(const struct metrics *m, const struct key_field *k)
{
	for (int i = 0; i < m->c.nlabels; i++)
		if (!strcmp(k->name, m->fixed_names[i]))
			return false;
	return !k->json_only && (m->c.label_pid || strcmp(k->name, "pid"));
}

/* `name="value"`, value escaped, after a comma unless first. */
static bool buf_add_label(struct metrics *m, const char *name, const char *value)
{
	return (!m->len || buf_add(m, ",", 1)) && buf_add(m, name, strlen(name)) &&
	       buf_add(m, "=\"", 2) && buf_add_escaped(m, value) && buf_add(m, "\"", 1);
}

/* The config's labels, as text once; their names kept (the config's
 * strings are the caller's). */
static bool fixed_labels(struct metrics *m)
{
	const struct metrics_label *l = m->c.labels;
	bool ok = buf_reserve(m, 0);

	m->len = 0;
	if (ok)
		m->buf[0] = '\0';
	if (m->c.nlabels > METRICS_MAX_LABELS)
		m->c.nlabels = METRICS_MAX_LABELS;
	for (int i = 0; ok && i < m->c.nlabels; i++) {
		snprintf(m->fixed_names[i], sizeof(m->fixed_names[i]), "%s", l[i].name);
		ok = buf_add_label(m, m->fixed_names[i], l[i].value);
	}
	m->c.labels = NULL;
	m->fixed = ok ? strdup(m->buf) : NULL;
	m->fixed_len = m->len;
	return m->fixed;
}

static void field_value(const struct key_field *k, char *num, size_t len, const char **s)
{
	const char *name;

	*s = num;
	switch (k->type) {
	case KEY_U64:
		snprintf(num, len, "%llu", k->u);
		break;
	case KEY_I64:
		snprintf(num, len, "%lld", k->i);
		break;
	case KEY_BOOL:
		*s = k->u ? "true" : "false";
		break;
	case KEY_ERRNO:
		/* 0 is an open that did not fail: "0", as unknown numbers */
		name = k->i > 0 && k->i < 4096 ? strerrorname_np((int)k->i) : NULL;
		if (name)
			*s = name;
		else
			snprintf(num, len, "%lld", k->i);
		break;
	default:
		*s = k->s ? k->s : "";
	}
}

/* The fixed labels, then `a="x",b="y"` of @key, into m->buf; each of
 * @key's values "[other]" if @other. */
static bool build_labels(struct metrics *m, const struct key_field *key, int nkey, bool other)
{
	bool ok;
	char num[32];
	const char *v;

	m->len = 0;
	ok = buf_add(m, m->fixed, m->fixed_len);
	for (int i = 0; ok && i < nkey; i++) {
		if (!labelled(m, &key[i]))
			continue;
		field_value(&key[i], num, sizeof(num), &v);
		ok = buf_add_label(m, key[i].name, other ? OTHER : v);
	}
	return ok;
}

/* ---- Families and series ---- */

static unsigned int bit_length(__u64 v)
{
	return v ? 64 - (unsigned int)__builtin_clzll(v) : 0;
}

/* @fam's le set (le_ranges), its labels, and the le bucket of each fine
 * bucket: the least 2^k - 1 at or above the fine bucket's upper bound. */
static bool make_bounds(struct family *fam)
{
	const struct le_range *r = le_ranges;
	unsigned int k;
	size_t n;

	while (r->unit && !(fam->f.unit && !strcmp(r->unit, fam->f.unit)))
		r++;
	fam->nle = r->hi - r->lo + 2;
	fam->le = fam->nle <= LE_MAX ? malloc(fam->nle * sizeof(*fam->le)) : NULL;
	if (!fam->le)
		return false;
	for (unsigned int j = 0; j + 1 < fam->nle; j++) {
		n = format_value(fam, (1ULL << (r->lo + j)) - 1, fam->le[j] + 4, LE_TEXT_MAX - 5);
		memcpy(fam->le[j], "le=\"", 4);
		memcpy(fam->le[j] + 4 + n, "\"", 2);
		fam->le_len[j] = (unsigned char)(n + 5);
	}
	strcpy(fam->le[fam->nle - 1], "le=\"+Inf\"");
	fam->le_len[fam->nle - 1] = (unsigned char)strlen(fam->le[fam->nle - 1]);
	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		k = bit_length(hist_bucket_hi(i));
		fam->le_of[i] = (unsigned char)(k < r->lo ? 0 : k > r->hi ? fam->nle - 1 : k - r->lo);
	}
	return true;
}

static struct family *family_of(struct metrics *m, const struct metric_family *f)
{
	struct family *fam;

	for (size_t i = 0; i < m->nfam; i++)
		if (!strcmp(m->fam[i].f.name, f->name))
			return m->fam[i].f.type == f->type ? &m->fam[i] : NULL;
	fam = realloc(m->fam, (m->nfam + 1) * sizeof(*fam));
	if (!fam)
		return NULL;
	m->fam = fam;
	fam = &m->fam[m->nfam++];
	*fam = (struct family){ .f = *f, .other = NO_SERIES };
	if (!fam->f.scale)
		fam->f.scale = 1;
	fam->decimals = decimals_of(fam->f.scale);
	if (fam->f.type == METRIC_HISTOGRAM && !make_bounds(fam)) {
		m->nfam--;
		return NULL;
	}
	return fam;
}

/* FNV-1a: the label texts are short and not chosen to collide (a
 * process may name itself, but a chain is at worst a slower lookup). */
static uint64_t hash_of(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static bool rehash(struct family *fam)
{
	size_t n = fam->nchains ? fam->nchains * 2 : 64, *chains = malloc(n * sizeof(*chains));

	if (!chains)
		return false;
	for (size_t i = 0; i < n; i++)
		chains[i] = NO_SERIES;
	for (size_t i = 0; i < fam->n; i++) {
		size_t *head = &chains[fam->s[i].hash & (n - 1)];

		fam->s[i].next = *head;
		*head = i;
	}
	free(fam->chains);
	fam->chains = chains;
	fam->nchains = n;
	return true;
}

static size_t series_find(const struct family *fam, const char *labels, uint64_t hash)
{
	if (!fam->nchains)
		return NO_SERIES;
	for (size_t i = fam->chains[hash & (fam->nchains - 1)]; i != NO_SERIES; i = fam->s[i].next)
		if (fam->s[i].hash == hash && !strcmp(fam->s[i].labels, labels))
			return i;
	return NO_SERIES;
}

/* A new series of the labels in m->buf; NO_SERIES when out of memory. */
static size_t series_new(struct metrics *m, struct family *fam, uint64_t hash, size_t into)
{
	struct series *s;

	if (fam->n + 1 > fam->nchains * 3 / 4 && !rehash(fam))
		return NO_SERIES;
	if (fam->n == fam->cap) {
		s = realloc(fam->s, (fam->cap * 2 + 16) * sizeof(*s));
		if (!s)
			return NO_SERIES;
		fam->s = s;
		fam->cap = fam->cap * 2 + 16;
	}
	s = &fam->s[fam->n];
	*s = (struct series){ .hash = hash, .into = into, .labels = strdup(m->buf) };
	if (!s->labels)
		return NO_SERIES;
	if (fam->f.type == METRIC_HISTOGRAM && into == NO_SERIES &&
	    !(s->buckets = calloc(fam->nle, sizeof(*s->buckets)))) {
		free(s->labels);
		return NO_SERIES;
	}
	s->next = fam->chains[hash & (fam->nchains - 1)];
	fam->chains[hash & (fam->nchains - 1)] = fam->n;
	return fam->n++;
}

/* The [other] series of @fam, made from @key's label names. */
static size_t other_series(struct metrics *m, struct family *fam, const struct key_field *key, int nkey)
{
	uint64_t hash;
	size_t i;

	if (fam->other != NO_SERIES)
		return fam->other;
	if (!build_labels(m, key, nkey, true))
		return NO_SERIES;
	hash = hash_of(m->buf);
	i = series_find(fam, m->buf, hash);
	fam->other = i != NO_SERIES ? i : series_new(m, fam, hash, NO_SERIES);
	return fam->other;
}

/* A key past the cap: into [other], and counted once (while remembered). */
static size_t fold(struct metrics *m, struct family *fam, const struct key_field *key, int nkey,
		   uint64_t hash)
{
	char *labels = strdup(m->buf);
	size_t other, i;

	if (!labels)
		return NO_SERIES;
	other = other_series(m, fam, key, nkey);
	m->ndropped++;
	if (other != NO_SERIES && m->nfolded < FOLDED_MAX) {
		m->len = strlen(labels);
		if (buf_reserve(m, 0)) {
			strcpy(m->buf, labels);
			i = series_new(m, fam, hash, other);
			m->nfolded += i != NO_SERIES;
		}
	}
	free(labels);
	return other;
}

/* The series @key's values go to: its own, or [other]. */
static struct series *series_of(struct metrics *m, struct family *fam, const struct key_field *key,
				int nkey)
{
	uint64_t hash;
	size_t i;

	if (!fam || !build_labels(m, key, nkey, false))
		return NULL;
	hash = hash_of(m->buf);
	i = series_find(fam, m->buf, hash);
	if (i == NO_SERIES && m->len > m->fixed_len && fam->live >= (size_t)m->c.max_series) {
		i = fold(m, fam, key, nkey, hash);
	} else if (i == NO_SERIES) {
		i = series_new(m, fam, hash, NO_SERIES);
		fam->live += i != NO_SERIES;
	}
	if (i == NO_SERIES)
		return NULL;
	if (fam->s[i].into != NO_SERIES)
		i = fam->s[i].into;
	return &fam->s[i];
}

int metrics_declare(struct metrics *m, const struct metric_family *f)
{
	return family_of(m, f) ? 0 : -1;
}

int metrics_hist_add(struct metrics *m, const struct metric_family *f, const struct key_field *key,
		     int nkey, const struct hist *h)
{
	struct family *fam = f->type == METRIC_HISTOGRAM ? family_of(m, f) : NULL;
	struct series *s = fam ? series_of(m, fam, key, nkey) : NULL;

	if (!s)
		return -1;
	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		s->buckets[fam->le_of[i]] += h->buckets[i];
		s->count += h->buckets[i];
	}
	s->sum += h->sum;
	return 0;
}

int metrics_counter_add(struct metrics *m, const struct metric_family *f, const struct key_field *key,
			int nkey, unsigned long long delta)
{
	struct family *fam = f->type == METRIC_COUNTER ? family_of(m, f) : NULL;
	struct series *s = fam ? series_of(m, fam, key, nkey) : NULL;

	if (!s)
		return -1;
	s->value += delta;
	return 0;
}

/* ---- Rendering ---- */

/* What a render writes, in blocks: stdio's lock and checks per call
 * would cost more than the rest of a report at 1000 series. */
struct out {
	FILE *f;
	size_t len;
	char buf[1 << 16];
};

static void out_flush(struct out *o)
{
	fwrite(o->buf, 1, o->len, o->f);
	o->len = 0;
}

static void out_put(struct out *o, const char *s, size_t n)
{
	if (!n)		/* s may be NULL then */
		return;
	if (o->len + n > sizeof(o->buf)) {
		out_flush(o);
		if (n > sizeof(o->buf)) {
			fwrite(s, 1, n, o->f);
			return;
		}
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static void out_str(struct out *o, const char *s)
{
	out_put(o, s, strlen(s));
}

/* "# HELP name text", "# TYPE name type": a counter's name is its
 * family's in OpenMetrics (the samples add _total), the sample's in 0.0.4. */
static void print_meta(struct out *o, const char *what, const struct family *fam,
		       enum metrics_dialect d, const char *text)
{
	out_str(o, what);
	out_str(o, fam->f.name);
	if (fam->f.type == METRIC_COUNTER && d == METRICS_TEXT_004)
		out_str(o, "_total");
	out_put(o, " ", 1);
	out_str(o, text);
	out_put(o, "\n", 1);
}

static void print_header(struct out *o, const struct family *fam, enum metrics_dialect d)
{
	print_meta(o, "# HELP ", fam, d, fam->f.help);
	print_meta(o, "# TYPE ", fam, d, fam->f.type == METRIC_COUNTER ? "counter" : "histogram");
	if (d == METRICS_OPENMETRICS && fam->f.unit)
		print_meta(o, "# UNIT ", fam, d, fam->f.unit);
}

/* Digits of @v into @out (24 bytes); their count. Not snprintf: a
 * report at 1000 series writes tens of thousands of these. */
static size_t print_u64(char *out, unsigned long long v)
{
	char tmp[24];
	size_t n = 0, len;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (len = 0; len < n; len++)
		out[len] = tmp[n - 1 - len];
	out[len] = '\0';
	return len;
}

/* A sample's name and labels, as lengths: a histogram's series writes
 * them once per bucket. */
struct sample_name {
	const char *name, *labels;
	size_t name_len, labels_len;
};

/* name<suffix>{labels,extra} value, copied into the block whole. */
static void print_sample(struct out *o, const struct sample_name *sn, const char *suffix,
			 const char *extra, size_t extra_len, const char *value, size_t value_len)
{
	size_t suffix_len = strlen(suffix), braces = sn->labels_len || extra_len;
	size_t n = sn->name_len + suffix_len + sn->labels_len + extra_len + value_len + 4;
	char *p;

	if (o->len + n > sizeof(o->buf))
		out_flush(o);
	if (n > sizeof(o->buf)) {	/* a label longer than the block: piece by piece */
		out_put(o, sn->name, sn->name_len);
		out_put(o, suffix, suffix_len);
		out_put(o, "{", braces);
		out_put(o, sn->labels, sn->labels_len);
		out_put(o, ",", sn->labels_len && extra_len);
		out_put(o, extra, extra_len);
		out_put(o, "} ", braces + 1);
		out_put(o, value, value_len);
		out_put(o, "\n", 1);
		return;
	}
	p = o->buf + o->len;
	p = mempcpy(mempcpy(p, sn->name, sn->name_len), suffix, suffix_len);
	if (braces) {
		*p++ = '{';
		if (sn->labels_len)
			p = mempcpy(p, sn->labels, sn->labels_len);
		if (sn->labels_len && extra_len)
			*p++ = ',';
		if (extra_len)	/* extra may be NULL then */
			p = mempcpy(p, extra, extra_len);
		*p++ = '}';
	}
	*p++ = ' ';
	p = mempcpy(p, value, value_len);
	*p++ = '\n';
	o->len = (size_t)(p - o->buf);
}

static void print_counter(struct out *o, const struct family *fam, const struct series *s)
{
	struct sample_name sn = { fam->f.name, s->labels, strlen(fam->f.name), strlen(s->labels) };
	char v[48];
	size_t n = format_value(fam, s->value, v, sizeof(v));

	print_sample(o, &sn, "_total", NULL, 0, v, n);
}

/* Cumulative buckets, every one of the family's le set whether counted
 * in or not, then _sum and _count. */
static void print_histogram(struct out *o, const struct family *fam, const struct series *s)
{
	struct sample_name sn = { fam->f.name, s->labels, strlen(fam->f.name), strlen(s->labels) };
	unsigned long long cum = 0;
	char v[48], sum[48];
	size_t n;

	for (unsigned int j = 0; j < fam->nle; j++) {
		cum += s->buckets[j];
		n = print_u64(v, cum);
		print_sample(o, &sn, "_bucket", fam->le[j], fam->le_len[j], v, n);
	}
	n = format_value(fam, s->sum, sum, sizeof(sum));
	print_sample(o, &sn, "_sum", NULL, 0, sum, n);
	n = print_u64(v, s->count);
	print_sample(o, &sn, "_count", NULL, 0, v, n);
}

static void print_family(struct out *o, const struct family *fam, enum metrics_dialect d)
{
	print_header(o, fam, d);
	for (size_t i = 0; i < fam->n; i++) {
		if (fam->s[i].into != NO_SERIES)
			continue;
		if (fam->f.type == METRIC_COUNTER)
			print_counter(o, fam, &fam->s[i]);
		else
			print_histogram(o, fam, &fam->s[i]);
	}
}

int metrics_render(struct metrics *m, enum metrics_dialect d, FILE *f)
{
	struct family dropped = { .f = m->dropped, .decimals = 0 };
	struct series s = { .labels = m->fixed, .into = NO_SERIES, .value = m->ndropped };
	struct out *o = malloc(sizeof(*o));

	if (!o) {
		errno = ENOMEM;
		return -1;
	}
	o->f = f;
	o->len = 0;
	for (size_t i = 0; i < m->nfam; i++)
		print_family(o, &m->fam[i], d);
	print_header(o, &dropped, d);
	print_counter(o, &dropped, &s);
	out_str(o, "# EOF\n");
	out_flush(o);
	free(o);
	errno = 0;
	if (fflush(f) == EOF || ferror(f)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
