// SPDX-License-Identifier: GPL-2.0-only
/* biolat: summarize block device I/O latency (or request sizes) as a
 * histogram, for all disks, per disk or per I/O flag set. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "btf_fields.h"
#include "diag.h"
#include "drain.h"
#include "keyed.h"
#include "probe.h"
#include "tool.h"
#include "biolat.h"
#include "biolat.skel.h"

enum {
	OPT_SIZE = 0x2000,
};

static struct {
	unsigned int by;		/* enum biolat_by */
	bool queued, sizes;
	bool by_submitter;		/* -p -t -n -c: filter by who submitted */
	const char *disk;		/* -d, as given */
	__u32 dev;			/* -d, as a kernel dev_t */
} opt;

/* How requests look on this kernel: struct request offsets for the
 * programs; the numbers of the operations and flags that -F names. */
struct request_bits {
	__u32 rq_params;		/* of btf_trace_block_rq_issue: 3 before 5.11 */
	__u32 flag_first;		/* __REQ_FAILFAST_DEV: the op is in the bits below */
	__u32 op[6];			/* REQ_OP_READ, WRITE, FLUSH, DISCARD, SECURE_ERASE, WRITE_ZEROES */
	__u32 flag[6];			/* __REQ_SYNC, META, FUA, PREFLUSH, RAHEAD, BACKGROUND */
};

static const char *const op_names[6] = { "Read", "Write", "Flush", "Discard", "SecureErase",
					 "WriteZeroes" };
static const char *const flag_names[6] = { "Sync", "Meta", "FUA", "PreFlush", "ReadAhead",
					   "Background" };

/* Both read from kernel BTF in one pass. */
static struct kernel_facts {
	struct block_layout layout;
	struct request_bits bits;
} facts;
static struct biolat_bpf *skel;
static struct keyed_hist keyed;
static struct drain drain;
static const struct run_config *config;

/* The lost map's counts (I/Os whose completion no program saw, per
 * histogram key, over the run) as last read; each report shows the growth. */
static struct lost_row {
	struct biolat_key key;
	__u64 seen, delta;
} lost_rows[BIOLAT_MAX_KEYS];
static size_t nlost;
static __u64 unattributed_seen;		/* of totals.lost_unattributed */
static __u64 unattributed_total;	/* lost I/Os shown in no histogram, over the run */

/* Each member with what bpf/biolat.bpf.c reads there. */
#define L(f, t, p, ...)							\
	BTF_WANT(BTF_WANT_OFFSET, t, p, struct kernel_facts, layout.f, false, __VA_ARGS__)
#define L_OPT(f, t, p, ...)							\
	BTF_WANT(BTF_WANT_OFFSET, t, p, struct kernel_facts, layout.f, true, __VA_ARGS__)
#define E(f, name) BTF_WANT(BTF_WANT_ENUM, NULL, name, struct kernel_facts, bits.f, true, BTF_NOREAD)
static const struct btf_want wants_btf[] = {
	L(rq_q, "request", "q", BTF_PTR),
	L_OPT(rq_disk, "request", "rq_disk", BTF_PTR),
	L(rq_cmd_flags, "request", "cmd_flags", BTF_U32),
	L(rq_data_len, "request", "__data_len", BTF_U32),
	L_OPT(q_disk, "request_queue", "disk", BTF_PTR),
	L(disk_major, "gendisk", "major", BTF_S32),
	L(disk_first_minor, "gendisk", "first_minor", BTF_S32),
	L_OPT(rq_start_time, "request", "start_time_ns", BTF_U64),
	L_OPT(rq_biotail, "request", "biotail", BTF_PTR),
	L_OPT(q_last_merge, "request_queue", "last_merge", BTF_PTR),
	BTF_WANT(BTF_WANT_PARAMS, "btf_trace_block_rq_issue", NULL, struct kernel_facts,
		 bits.rq_params, false, BTF_NOREAD),
	E(flag_first, "__REQ_FAILFAST_DEV"),
	E(op[0], "REQ_OP_READ"), E(op[1], "REQ_OP_WRITE"), E(op[2], "REQ_OP_FLUSH"),
	E(op[3], "REQ_OP_DISCARD"), E(op[4], "REQ_OP_SECURE_ERASE"), E(op[5], "REQ_OP_WRITE_ZEROES"),
	E(flag[0], "__REQ_SYNC"), E(flag[1], "__REQ_META"), E(flag[2], "__REQ_FUA"),
	E(flag[3], "__REQ_PREFLUSH"), E(flag[4], "__REQ_RAHEAD"), E(flag[5], "__REQ_BACKGROUND"),
};
#define LOST_NOTE_SECS 60.0	/* with metrics, the lost note at most this often */
#define NWANTS(w) (sizeof(w) / sizeof((w)[0]))

static const struct metric_family io_duration = {
	.name = "biolat_io_duration_seconds", .unit = "seconds", .type = METRIC_HISTOGRAM,
	.help = "Block I/O latency, from issue (-Q: insertion) to completion", .scale = 1e-9,
};
static const struct metric_family io_size = {
	.name = "biolat_io_size_bytes", .unit = "bytes", .type = METRIC_HISTOGRAM,
	.help = "Block I/O request sizes (--size)", .scale = 1,
};
static const struct metric_family evicted_family = {
	.name = "biolat_evicted", .type = METRIC_COUNTER,
	.help = "Requests dropped from the in-flight table for newer ones (not counted)",
};

static const struct argp_option options[] = {
	{ "queued", 'Q', NULL, 0, "Include the time queued in the OS (from insertion, not issue)", 0 },
	{ "per-disk", 'D', NULL, 0, "One histogram per disk", 0 },
	{ "per-flags", 'F', NULL, 0, "One histogram per I/O operation and flag set", 0 },
	{ "disk", 'd', "DISK", 0, "This disk only (a name in /sys/block, as sda or nvme0n1)", 0 },
	{ "size", OPT_SIZE, NULL, 0, "Histogram of request sizes in bytes, not of latency", 0 },
	{},
};

static const struct option_value values[] = {
	{ 'd', VALUE_DISK, NULL, 0, NULL },
	{ 0 },
};

/* Listed start before end: they are attached last to first. */
static const struct probe probes[] = {
	{ "block_rq_insert", PROBE_RAW_TRACEPOINT, "block/block_rq_insert", "rq_insert", false },
	{ "block_rq_issue", PROBE_RAW_TRACEPOINT, "block/block_rq_issue", "rq_issue", false },
	/* A request the driver gives back (rare): issued again, not lost. */
	{ "block_rq_requeue", PROBE_RAW_TRACEPOINT, "block/block_rq_requeue", "rq_requeue", false },
	/* An inserted request merged into another (5.10+; before, a merged
	 * request's slot waits for the next I/O of its struct request). */
	{ "block_rq_merge", PROBE_RAW_TRACEPOINT, "block/block_rq_merge", "rq_merge", true },
	{ "block_rq_complete", PROBE_RAW_TRACEPOINT, "block/block_rq_complete", "rq_complete", false },
};

static int not_dot(const struct dirent *de)
{
	return de->d_name[0] != '.';
}

/* Whole disks, as /sys/block lists them, sorted, comma-separated into @buf. */
static void list_disks(char *buf, size_t len)
{
	struct dirent **de;
	int n = scandir("/sys/block", &de, not_dot, alphasort);
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (at < len)
			at += snprintf(buf + at, len - at, "%s%s", at ? ", " : "", de[i]->d_name);
		free(de[i]);
	}
	if (n >= 0)
		free(de);
}

/* The disk a partition is on: the parent of /sys/class/block/PART. */
static void partition_disk(const char *part, char *buf, size_t len)
{
	char path[320], real[PATH_MAX], *slash;

	snprintf(path, sizeof(path), "/sys/class/block/%s/..", part);
	if (!realpath(path, real) || !(slash = strrchr(real, '/'))) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, "%s", slash + 1);
}

/* "MAJ:MIN" of a /sys file, as a kernel dev_t. */
static int read_dev(const char *path, __u32 *dev)
{
	unsigned int major, minor;
	FILE *f = fopen(path, "re");
	int n = f ? fscanf(f, "%u:%u", &major, &minor) : 0;

	if (f)
		fclose(f);
	if (n != 2)
		return -1;
	*dev = major << 20 | minor;
	return 0;
}

static int parse_disk(const char *arg, struct run_config *rc)
{
	char path[320], disks[1024];

	opt.disk = arg;
	if (*arg && !strchr(arg, '/') && strcmp(arg, ".") && strcmp(arg, "..") && strlen(arg) < 64) {
		snprintf(path, sizeof(path), "/sys/block/%s/dev", arg);
		if (!read_dev(path, &opt.dev))
			return 0;
		snprintf(path, sizeof(path), "/sys/class/block/%s/partition", arg);
		if (!access(path, F_OK)) {
			partition_disk(arg, disks, sizeof(disks));
			return cli_error(rc, "'%s' is a partition: biolat traces whole disks "
					 "(this one is on %s)", arg, disks);
		}
	}
	list_disks(disks, sizeof(disks));
	return cli_error(rc, "unknown disk '%s' for -d: expected one of %s", arg,
			 disks[0] ? disks : "(none: /sys/block is empty)");
}

static int parse(int key, char *arg, struct run_config *rc)
{
	switch (key) {
	case 'Q':
		opt.queued = true;
		return 0;
	case 'D':
		opt.by |= BY_DISK;
		return 0;
	case 'F':
		opt.by |= BY_FLAGS;
		return 0;
	case 'd':
		return parse_disk(arg, rc);
	case OPT_SIZE:
		opt.sizes = true;
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

static int validate(struct run_config *rc)
{
	/* The shared process filters judge the process that submitted the I/O. */
	opt.by_submitter = rc->pid || rc->tid || rc->comm[0] || rc->cgroup;
	if (!opt.sizes)
		return 0;
	if (rc->unit != UNIT_USECS)
		return cli_error(rc, "--size counts bytes: -m and --ns do not apply");
	if (opt.queued)
		return cli_error(rc, "--size counts bytes: -Q (time queued) does not apply");
	rc->unit = UNIT_BYTES;
	return 0;
}

static bool wants(const char *event)
{
	/* The insertion is where a queued request's submitter is seen; a
	 * merge, where an inserted request ends without completing. */
	if (!strcmp(event, "block_rq_insert") || !strcmp(event, "block_rq_merge"))
		return opt.queued || opt.by_submitter;
	return true;
}

static int features(const struct run_config *rc)
{
	int err;

	config = rc;
	err = btf_fields_load(wants_btf, NWANTS(wants_btf), &facts, rc->btf_fd);
	if (!err && facts.layout.rq_disk == BTF_FIELD_NONE && facts.layout.q_disk == BTF_FIELD_NONE)
		err = -ENOENT;
	if (err) {
		check_row("request layout", CHECK_FAILED,
			  "cannot read struct request from %s (%s): biolat needs it to find a "
			  "request's disk, size and flags%s", btf_source(rc),
			  btf_fields_error()[0] ? btf_fields_error() : strerror(-err),
			  rc->btf_name ? "" : "; pass a BTF file with --btf FILE");
		return -1;
	}
	check_raw_tp_nests();
	facts.layout.rq_arg = facts.bits.rq_params >= 3;	/* (q, rq) before 5.11 */
	check_row("request layout", CHECK_OK, "from kernel BTF: disk via %s, request argument %u%s",
		  facts.layout.rq_disk != BTF_FIELD_NONE ? "rq->rq_disk" : "rq->q->disk",
		  facts.layout.rq_arg,
		  facts.layout.rq_biotail == BTF_FIELD_NONE || facts.layout.q_last_merge == BTF_FIELD_NONE ?
		  "; no rq->biotail or q->last_merge: a merged request keeps only its own start" : "");
	return 0;
}

static __u32 flags_mask(void)
{
	__u32 mask = facts.bits.flag_first != BTF_FIELD_NONE && facts.bits.flag_first < 32 ?
		     (1U << facts.bits.flag_first) - 1 : 0xff;

	for (int i = 0; i < 6; i++)
		if (facts.bits.flag[i] < 32)
			mask |= 1U << facts.bits.flag[i];
	return mask;
}

static __u64 monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static struct bpf_object_skeleton *open_bpf(const struct run_config *rc)
{
	skel = biolat_bpf__open_opts(tool_open_opts(rc));
	if (!skel)
		return NULL;
	skel->rodata->blk = facts.layout;
	skel->rodata->by = (__u8)opt.by;
	skel->rodata->flags_mask = flags_mask();
	skel->rodata->filter_dev = opt.dev;
	skel->rodata->queued = opt.queued;
	skel->rodata->by_submitter = opt.by_submitter;
	skel->rodata->sizes = opt.sizes;
	skel->rodata->started_ns = monotonic_ns();
	skel->rodata->interval_nests = probe_raw_tp_nests();
	if (!opt.by) {
		keyed_unused(skel->maps.hists_a, skel->maps.hists_b);
	}
	return skel->skeleton;
}

static int loaded(const struct run_config *rc, struct output *out)
{
	(void)rc;
	if (opt.sizes)
		out->hist_family = &io_size;
	return drain_setup(&drain, bpf_map__fd(skel->maps.intervals), bpf_map__fd(skel->maps.interval_gates),
			   &skel->bss->interval_cur, &keyed,
			   opt.by ? skel->maps.hists : NULL, skel->maps.hists_a, skel->maps.hists_b);
}

/* The disk's name, from /sys/dev/block/MAJ:MIN (a link into /sys/devices). */
static void disk_name(__u32 dev, char *buf, size_t len)
{
	char path[64], link[512], *base;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", dev >> 20, dev & 0xfffff);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0) {
		snprintf(buf, len, "%u:%u", dev >> 20, dev & 0xfffff);
		return;
	}
	link[n] = '\0';
	base = strrchr(link, '/');
	snprintf(buf, len, "%.*s", (int)(len - 1), base ? base + 1 : link);
}

/* As bcc's biolatency names them: the flags, then the operation ("Sync-Write"). */
static void flags_name(__u32 flags, char *buf, size_t len)
{
	__u32 op = flags & ((facts.bits.flag_first < 32 ? 1U << facts.bits.flag_first : 0x100) - 1);
	size_t n = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < 6; i++)
		if (facts.bits.flag[i] < 32 && flags & (1U << facts.bits.flag[i]))
			n += snprintf(buf + n, len > n ? len - n : 0, "%s-", flag_names[i]);
	for (i = 0; i < 6 && facts.bits.op[i] != op; i++)
		;
	if (i < 6)
		snprintf(buf + n, len > n ? len - n : 0, "%s", op_names[i]);
	else
		snprintf(buf + n, len > n ? len - n : 0, "Op%u", op);
}

static int by_key(const void *a, const void *b)
{
	const struct biolat_key *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->flags < y->flags ? -1 : x->flags > y->flags;
}

static struct lost_row *lost_row_of(const struct biolat_key *key)
{
	for (size_t i = 0; i < nlost; i++)
		if (!memcmp(&lost_rows[i].key, key, sizeof(*key)))
			return &lost_rows[i];
	if (nlost == BIOLAT_MAX_KEYS)
		return NULL;	/* the map holds no more */
	lost_rows[nlost] = (struct lost_row){ .key = *key };
	return &lost_rows[nlost++];
}

/* I/Os whose completion no program ran for (a run the kernel skipped
 * because the program was running on that CPU, or one it never made:
 * README, "Counts match the device"), found since the last report, when
 * their struct request began another I/O
 * (bpf/biolat.bpf.c, lost_add): each key's into lost_rows[].delta. The
 * kernel's count of skipped runs is not used: a skipped start is no lost
 * I/O, and a skipped completion is found here. */
static void lost_read(void)
{
	int fd = bpf_map__fd(skel->maps.lost);
	struct biolat_key key, next;
	struct lost_row *r;
	__u64 v;

	for (size_t i = 0; i < nlost; i++)
		lost_rows[i].delta = 0;
	for (int err = bpf_map_get_next_key(fd, NULL, &next); !err;
	     err = bpf_map_get_next_key(fd, &key, &next)) {
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &v) || !(r = lost_row_of(&key)))
			continue;
		r->delta += v - r->seen;	/* += : a key the walk meets twice */
		r->seen = v;
	}
}

static __u64 lost_of(const struct biolat_key *key)
{
	for (size_t i = 0; i < nlost; i++)
		if (!memcmp(&lost_rows[i].key, key, sizeof(*key)))
			return lost_rows[i].delta;
	return 0;
}

/* Lost I/Os of this report that no histogram can be named for: adds that
 * found the per-key map full, and lost I/Os of an unread disk. */
static __u64 lost_remainder(const struct hist_interval *iv)
{
	__u64 now = skel->bss->totals.lost_unattributed, delta = now - unattributed_seen;

	unattributed_seen = now;
	return delta + iv->lost_keys;
}

/* The fields naming @k's histogram, into @key (buffers @disk, @flags). */
static int key_fields(const struct biolat_key *k, struct key_field *key, char *disk, size_t dlen,
		      char *flags, size_t flen)
{
	int nkey = 0;

	if (opt.by & BY_DISK) {
		disk_name(k->dev, disk, dlen);
		key[nkey++] = (struct key_field)KEY_STRING("disk", disk);
	}
	if (opt.by & BY_FLAGS) {
		flags_name(k->flags, flags, flen);
		key[nkey++] = (struct key_field)KEY_STRING("flags", flags);
	}
	return nkey;
}

/* One histogram of a keyed report, or a key with lost I/Os only. */
struct row {
	const struct biolat_key *key;
	const struct hist *hist;
};

static int by_row(const void *a, const void *b)
{
	return by_key(((const struct row *)a)->key, ((const struct row *)b)->key);
}

/* Every key with a histogram or lost I/Os this report, sorted. */
static size_t keyed_rows(const struct keyed_snapshot *snap, struct row *rows)
{
	static const struct hist empty;
	size_t n = 0;

	for (size_t i = 0; i < snap->n; i++)
		rows[n++] = (struct row){ keyed_key(snap, i), keyed_value(snap, i) };
	for (size_t i = 0; i < nlost; i++) {
		size_t j = 0;

		while (j < snap->n && memcmp(keyed_key(snap, j), &lost_rows[i].key, sizeof(lost_rows[i].key)))
			j++;
		if (lost_rows[i].delta && j == snap->n)
			rows[n++] = (struct row){ &lost_rows[i].key, &empty };
	}
	qsort(rows, n, sizeof(*rows), by_row);
	return n;
}

static void report_keyed(struct output *out, const struct keyed_snapshot *snap, struct hist_extra *x)
{
	static struct row rows[2 * BIOLAT_MAX_KEYS];
	char disk[64], flags[128];
	size_t n = keyed_rows(snap, rows);

	for (size_t i = 0; i < n; i++) {
		struct key_field key[2];
		int nkey = key_fields(rows[i].key, key, disk, sizeof(disk), flags, sizeof(flags));

		x->lost = (long long)lost_of(rows[i].key);
		output_hist(out, key, nkey, rows[i].hist, x);
	}
}

/* The in-flight table's evictions, a total in .bss: its growth. */
static void evicted_count(struct output *out)
{
	static __u64 seen;
	__u64 now = skel->bss->totals.evicted;

	output_count(out, &evicted_family, NULL, 0, now - seen);
	seen = now;
}

/* The lost I/Os of a report, said on stderr. With metrics (--textfile,
 * -o openmetrics: a unit's journal) the metrics count them; the note is
 * then said at most once a minute, with what it stands for since, and
 * at exit (@last). */
static void lost_note(const struct output *out, __u64 total, __u64 rest, bool last)
{
	static __u64 pending_total, pending_rest;
	static double last_said = -LOST_NOTE_SECS;
	double now = monotonic_ns() / 1e9;

	pending_total += total;
	pending_rest += rest;
	if (!pending_total && !pending_rest)
		return;
	if (out->metrics && now - last_said < LOST_NOTE_SECS && !last)
		return;
	last_said = now;
	total = pending_total, rest = pending_rest;
	pending_total = pending_rest = 0;
	diag_error("%llu I/Os completed without being counted (lost)%s: the kernel did not "
		   "run biolat's program for their completion%s", (unsigned long long)(total + rest),
		   out->metrics ? " since this note's last line" : "",
		   rest ? ", or no histogram could be named for them (see below)" : "");
	if (rest)
		diag_error("%llu of them in no histogram's lost: their disk was not read, or more than "
			   "%d disks/flag sets", (unsigned long long)rest, BIOLAT_MAX_KEYS);
}

static int report(struct output *out)
{
	bool per_key = opt.by != 0;
	struct hist_extra x = { .errors = true, .lost = 0, .lost_by_key = per_key, .per_key = per_key };
	struct keyed_snapshot snap = {};
	struct hist_interval iv;
	__u64 rest, total = 0;
	int err;

	err = drain_interval(&drain, &iv, per_key ? &snap : NULL);
	if (err) {
		diag_error("cannot read the histograms: %s", strerror(-err));
		if (per_key)
			keyed_snapshot_free(&snap);
		return err;
	}
	lost_read();
	rest = lost_remainder(&iv);
	for (size_t i = 0; i < nlost; i++)
		total += lost_rows[i].delta;
	/* Requests in flight at attach. */
	x.unmatched = (long long)iv.unmatched;
	evicted_count(out);
	if (!per_key) {
		x.lost = (long long)(total + rest);
		output_hist(out, NULL, 0, &iv.hist, &x);
	} else if (!snap.n && !total) {
		output_hist(out, NULL, 0, &iv.hist, &x);	/* idle: one empty histogram */
	} else {
		report_keyed(out, &snap, &x);
	}
	/* Keyed, the rest has no histogram: in the run's closing total, and
	 * in the metrics' lost with no key. */
	if (per_key) {
		unattributed_total += rest;
		output_count(out, &out->fam.lost, NULL, 0, rest);
	}
	if (!out->json)
		lost_note(out, total, rest, false);
	if (per_key)
		keyed_snapshot_free(&snap);
	return 0;
}

/* Requests issued and not seen completing, at exit: in flight still, or
 * completed without the kernel running biolat's program for them (which
 * biolat counts as lost only when the request is issued again); counted
 * per histogram key into lost_rows[].delta (reused: no report follows). */
static __u64 unfinished(void)
{
	static struct rq_entry e[256];
	__u64 keys[256];	/* slot numbers, or addresses (bpf/inflight.bpf.h) */
	__u32 out_batch = 0, count;
	bool first = true;
	__u64 n = 0;
	int fd = bpf_map__fd(skel->maps.inflight), err;
	size_t key_size = bpf_map__key_size(skel->maps.inflight);

	for (size_t i = 0; i < nlost; i++)
		lost_rows[i].delta = 0;
	do {
		count = 256;
		err = keyed_lookup_batch(fd, first ? NULL : &out_batch, &out_batch, keys, key_size,
					 e, sizeof(*e), &count);
		first = false;
		for (__u32 i = 0; i < count; i++) {
			struct biolat_key k = {
				.dev = opt.by & BY_DISK ? e[i].dev : 0,
				.flags = opt.by & BY_FLAGS ? e[i].flags : 0,
			};
			struct lost_row *r;

			if (!e[i].key || (e[i].key & BIOLAT_RQ_ENDED) || !e[i].issued || e[i].requeued ||
			    e[i].skip)
				continue;
			n++;
			if (opt.by && (r = lost_row_of(&k)))
				r->delta++;
		}
	} while (!err);
	return n;
}

/* With -D/-F: the unfinished requests of each key, as a JSON array. */
static void unfinished_json(struct json *j)
{
	char disk[64], flags[128];

	json_open(j, "unfinished_keys", '[');
	for (size_t i = 0; i < nlost; i++) {
		struct key_field key[2];
		int nkey;

		if (!lost_rows[i].delta)
			continue;
		nkey = key_fields(&lost_rows[i].key, key, disk, sizeof(disk), flags, sizeof(flags));
		json_open(j, NULL, '{');
		output_key_json(j, key, nkey);
		json_u64(j, "unfinished", lost_rows[i].delta);
		json_close(j, '}');
	}
	json_close(j, ']');
}

static void finish(struct output *out)
{
	__u64 evicted = skel->bss->totals.evicted, pending = unfinished();
	unsigned long long skipped = probe_misses(skel->obj);
	struct json j;

	if (!out->json) {
		lost_note(out, 0, 0, true);	/* what the minute held back */
		if (pending)
			fprintf(stderr, "%llu requests issued and not seen completing: in flight at exit, "
				"or completed unseen (then not counted)\n", (unsigned long long)pending);
		if (evicted)
			fprintf(stderr, "%llu requests dropped from the in-flight table for newer ones "
				"(never completed, or more than %d in flight)\n",
				(unsigned long long)evicted, BIOLAT_INFLIGHT_SLOTS);
		if (unattributed_total)
			fprintf(stderr, "%llu lost I/Os in no histogram (disk unread, or more than %d "
				"disks/flag sets)\n", (unsigned long long)unattributed_total,
				BIOLAT_MAX_KEYS);
		if (skipped && config->verbose)
			fprintf(stderr, "%llu runs of biolat's programs skipped by the kernel (an event "
				"interrupting the same program on its CPU)\n", skipped);
		return;
	}
	output_now(out);
	output_json_begin(out, &j);
	json_u64(&j, "unfinished", pending);
	if (opt.by)
		unfinished_json(&j);
	json_u64(&j, "evicted", evicted);
	if (opt.by)
		json_u64(&j, "lost_unattributed", unattributed_total);
	json_u64(&j, "skipped_runs", skipped);
	json_end(&j);
}

static void close_bpf(void)
{
	drain_close(&drain);
	biolat_bpf__destroy(skel);
}

static const char *banner(void)
{
	static char text[160];

	snprintf(text, sizeof(text), "Tracing block device I/O%s%s%s", opt.disk ? " on " : "",
		 opt.disk ? opt.disk : "", opt.sizes ? " sizes" : "");
	return text;
}

static const struct tool biolat = {
	.name = "biolat",
	.summary = "Summarize block device I/O latency as a histogram.",
	.doc = "Examples:\n"
	       "  biolat                  # all disks, histogram at Ctrl-C\n"
	       "  biolat 1 10             # print every second, 10 times\n"
	       "  biolat -mT 1            # milliseconds, with a timestamp\n"
	       "  biolat -Q               # include the time queued in the OS\n"
	       "  biolat -D               # one histogram per disk: p99 by disk\n"
	       "  biolat -F               # one per I/O flag set (reads, writes, ...)\n"
	       "  biolat -d sda           # disk sda only\n"
	       "  biolat -p 181           # I/O submitted by process 181\n"
	       "  biolat --size -D        # request sizes per disk\n",
	.banner = banner,
	.shared = SHARED_FILTERS | SHARED_UNITS,
	.tells_skipped_runs = true,	/* unfinished, evicted; skipped_runs with -v */
	.hist_family = &io_duration,
	.options = options,
	.values = values,
	.parse = parse,
	.validate = validate,
	.probes = probes,
	.nprobes = sizeof(probes) / sizeof(probes[0]),
	.wants = wants,
	.features = features,
	.open = open_bpf,
	.loaded = loaded,
	.report = report,
	.finish = finish,
	.close = close_bpf,
};

int main(int argc, char **argv)
{
	return tool_run(&biolat, argc, argv);
}
