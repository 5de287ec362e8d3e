// SPDX-License-Identifier: GPL-2.0-only
/* opensnoop: who opens what, one line per open. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "diag.h"
#include "drain.h"
#include "escape.h"
#include "events.h"
#include "filenames.h"
#include "keyed.h"
#include "probe.h"
#include "table.h"
#include "tool.h"
#include "opensnoop.h"
#include "opensnoop.skel.h"

enum {
	OPT_ERRNO = 0x2000,
	OPT_BY,
};


static struct {
	enum opensnoop_mode mode;
	enum opensnoop_by by;
	long rows;
	bool per_process, saw_by, saw_rows, full_path;
	bool print_uid, extended, failed_only, task_storage;
	__u32 uid;			/* OPENSNOOP_NO_UID: any */
	int err;			/* --errno, 0: any */
	__u32 flags_all;
	int accmode;			/* -1: any */
	__u32 ring_bytes;
	bool saw_uid, saw_errno, saw_buffer;
} opt = { .uid = OPENSNOOP_NO_UID, .accmode = -1, .ring_bytes = OPENSNOOP_RINGBUF_DEFAULT };

static struct opensnoop_bpf *skel;
static struct ring_buffer *rb;
static struct output *events_out;
static __u64 delivered;		/* events printed; with totals.lost, every open traced */
static long unprinted;		/* left in the ring at the end, not printed */
static struct kernel_layout layout;
static struct keyed_hist keyed;
static struct drain drain;

static const struct metric_family open_duration = {
	.name = "opensnoop_open_duration_seconds", .unit = "seconds", .type = METRIC_HISTOGRAM,
	.help = "Latency of open, openat and openat2 syscalls, from entry to exit (-L)", .scale = 1e-9,
};
static const struct metric_family open_failures = {
	.name = "opensnoop_open_failures", .type = METRIC_COUNTER, .help = "Opens that failed",
};

static const struct argp_option options[] = {
	{ "print-uid", 'U', NULL, 0, "Show the UID column", 0 },
	{ "extended-fields", 'e', NULL, 0, "Show the open flags and mode", 0 },
	{ "failed", 'x', NULL, 0, "Only opens that failed", 0 },
	{ "uid", 'u', "UID", 0, "Only opens by this user id", 0 },
	{ "errno", OPT_ERRNO, "E", 0, "Only opens that failed with this error (ENOENT or 2)", 0 },
	{ "flag", 'f', "FLAG", OPTION_REPEATABLE,
	  "Only opens with this flag (O_CREAT, O_WRONLY, ...); repeatable: all of them", 0 },
	{ "buffer-size", 'b', "BYTES", 0,
	  "Ring buffer size, a power of two (K and M suffixes; default 1M)", 0 },
	/* bcc's opensnoop -d: refused with a pointer, not taken, since a
	 * shared option is spelled alike in every tool (biolat's -d is a disk) */
	{ NULL, 'd', "SECONDS", OPTION_HIDDEN, NULL, 0 },
	{ "full-path", 'F', NULL, 0,
	  "Absolute paths: a relative one joined to its directory (the dirfd's, or the cwd)", 0 },
	{ "count", 'C', NULL, 0, "No events: count opens in the kernel, print a top list per interval", 0 },
	{ "by", OPT_BY, "KEY", 0, "With -C: count by process (default), comm (command name), file "
	  "or errno", 0 },
	{ "rows", 'r', "N", 0, "With -C: print the top N rows (text default 20; JSON: all)", 0 },
	{ "latency", 'L', NULL, 0, "No events: histogram of open latency (entry to exit)", 0 },
	{ "per-process", 'P', NULL, 0, "With -L: one histogram per process", 0 },
	{},
};

#define OPEN_PROBES(sc, optional)								\
	{ "sys_enter_" sc, PROBE_TRACEPOINT, "syscalls/sys_enter_" sc, "enter_" sc, optional },	\
	{ "sys_exit_" sc, PROBE_TRACEPOINT, "syscalls/sys_exit_" sc, "exit_" sc, optional }

/* Listed start before end: they are attached last to first. arm64 has no
 * open(2); openat2(2) is 5.6+. */
static const struct probe probes[] = {
	OPEN_PROBES("open", true),
	OPEN_PROBES("openat", false),
	OPEN_PROBES("openat2", true),
	/* An open interrupted by a signal (a FIFO): restarted, or EINTR. */
	{ "signal_deliver", PROBE_TRACEPOINT, "signal/signal_deliver", "signal_deliver", false },
	START_EXIT_PROBE,
};

static const struct { const char *name; int value; } open_flags[] = {
	{ "RDONLY", O_RDONLY }, { "WRONLY", O_WRONLY }, { "RDWR", O_RDWR },
	{ "CREAT", O_CREAT }, { "EXCL", O_EXCL }, { "NOCTTY", O_NOCTTY },
	{ "TRUNC", O_TRUNC }, { "APPEND", O_APPEND }, { "NONBLOCK", O_NONBLOCK },
	{ "DSYNC", O_DSYNC }, { "SYNC", O_SYNC }, { "DIRECT", O_DIRECT },
	{ "LARGEFILE", O_LARGEFILE }, { "DIRECTORY", O_DIRECTORY }, { "NOFOLLOW", O_NOFOLLOW },
	{ "NOATIME", O_NOATIME }, { "CLOEXEC", O_CLOEXEC }, { "PATH", O_PATH },
	{ "TMPFILE", O_TMPFILE },
};
#define NR_FLAGS (int)(sizeof(open_flags) / sizeof(open_flags[0]))

/* Errno numbers by name run below this (glibc's strerrorname_np). */
#define ERRNO_LIMIT 4096

static const char *const by_names[] = {
	[BY_PROCESS] = "process", [BY_FILE] = "file", [BY_ERRNO] = "errno", [BY_COMM] = "comm",
};

/* As -f is mostly written: O_CREAT (the parser also takes creat). */
static const char *flag_word(int i)
{
	static char word[32];

	if (i >= NR_FLAGS)
		return NULL;
	snprintf(word, sizeof(word), "O_%s", open_flags[i].name);
	return word;
}

/* The names parse_errno() takes: errno i + 1's, "" if it has none. */
static const char *errno_word(int i)
{
	const char *name;

	if (i + 1 >= ERRNO_LIMIT)
		return NULL;
	name = strerrorname_np(i + 1);
	return name ? name : "";
}

static const struct option_value values[] = {
	{ OPT_ERRNO, VALUE_WORD, NULL, 0, errno_word },
	{ 'f', VALUE_WORD, NULL, 0, flag_word },
	VALUE_WORDS(OPT_BY, VALUE_WORD, by_names),
	{ 0 },
};

static int parse_flag(const char *arg, struct run_config *rc)
{
	const char *name = strncasecmp(arg, "O_", 2) ? arg : arg + 2;

	for (int i = 0; i < NR_FLAGS; i++) {
		if (strcasecmp(name, open_flags[i].name))
			continue;
		if (open_flags[i].value <= O_RDWR) {
			if (opt.accmode >= 0 && opt.accmode != open_flags[i].value)
				return cli_error(rc, "-f %s conflicts with the access mode already given", arg);
			opt.accmode = open_flags[i].value;
		} else {
			opt.flags_all |= (__u32)open_flags[i].value;
		}
		return 0;
	}
	return cli_error(rc, "unknown open flag '%s': expected O_CREAT, O_WRONLY, O_RDWR, O_RDONLY, "
			 "O_TRUNC, O_APPEND, O_EXCL, O_DIRECTORY, O_CLOEXEC, ...", arg);
}

/* An errno by name (ENOENT) or number (2). */
static int parse_errno(const char *arg, struct run_config *rc)
{
	const char *name;
	long n;

	if (opt.saw_errno)
		return cli_error(rc, "option '--errno' given twice");
	opt.saw_errno = true;
	if (!parse_count(arg, &n) && n < ERRNO_LIMIT) {
		opt.err = (int)n;
		return 0;
	}
	for (int i = 0; (name = errno_word(i)); i++) {
		if (*name && !strcmp(name, arg)) {
			opt.err = i + 1;
			return 0;
		}
	}
	return cli_error(rc, "invalid errno '%s': expected a name like ENOENT or a number", arg);
}

static int parse_uid(const char *arg, struct run_config *rc)
{
	long n;

	if (opt.saw_uid)
		return cli_error(rc, "option '-u' given twice");
	opt.saw_uid = true;
	if (!strcmp(arg, "0")) {
		opt.uid = 0;
		return 0;
	}
	if (parse_count(arg, &n) || n >= OPENSNOOP_NO_UID)
		return cli_error(rc, "invalid UID '%s': expected a number", arg);
	opt.uid = (__u32)n;
	return 0;
}

/* A power of two of at least a page, with an optional K or M suffix. */
static int parse_buffer(const char *arg, struct run_config *rc)
{
	char *end;
	unsigned long long n;
	int shift = 0;

	if (opt.saw_buffer)
		return cli_error(rc, "option '-b' given twice");
	opt.saw_buffer = true;
	errno = 0;
	n = *arg >= '0' && *arg <= '9' ? strtoull(arg, &end, 10) : 0;
	if (n && (*end == 'K' || *end == 'k'))
		shift = 10, end++;
	else if (n && (*end == 'M' || *end == 'm'))
		shift = 20, end++;
	/* bounded before the shift: shifted, 2^54 + 1K "M" would wrap to 1G */
	if (errno || !n || *end || n > OPENSNOOP_RINGBUF_MAX >> shift)
		n = 0;
	n <<= shift;
	if (n < (unsigned long long)getpagesize() || (n & (n - 1)))
		return cli_error(rc, "invalid buffer size '%s': expected a power of two from %dK "
				 "to 1024M (e.g. 64K, 4M)", arg, getpagesize() / 1024);
	opt.ring_bytes = (__u32)n;
	return 0;
}

static int set_mode(enum opensnoop_mode mode, struct run_config *rc)
{
	if (opt.mode != OPENSNOOP_EVENTS && opt.mode != mode)
		return cli_error(rc, "-C and -L cannot be combined");
	opt.mode = mode;
	return 0;
}

static int parse_by(const char *arg, struct run_config *rc)
{
	int i = parse_word(arg, by_names, NWORDS(by_names), "--by", rc);

	opt.saw_by = true;
	if (i < 0)
		return EINVAL;
	opt.by = (enum opensnoop_by)i;
	return 0;
}

static int parse(int key, char *arg, struct run_config *rc)
{
	switch (key) {
	case 'U': opt.print_uid = true; return 0;
	case 'e': opt.extended = true; return 0;
	case 'x': opt.failed_only = true; return 0;
	case 'u': return parse_uid(arg, rc);
	case OPT_ERRNO: return parse_errno(arg, rc);
	case 'f': return parse_flag(arg, rc);
	case 'b': return parse_buffer(arg, rc);
	case 'C': return set_mode(OPENSNOOP_COUNT, rc);
	case 'L': return set_mode(OPENSNOOP_LATENCY, rc);
	case 'P': opt.per_process = true; return 0;
	case 'F': opt.full_path = true; return 0;
	case OPT_BY: return parse_by(arg, rc);
	case 'r':
		opt.saw_rows = true;
		if (parse_count(arg, &opt.rows) || opt.rows > OPENSNOOP_MAX_KEYS)
			return cli_error(rc, "invalid row count '%s': expected 1 to %d", arg, OPENSNOOP_MAX_KEYS);
		return 0;
	case 'd':
		return cli_error(rc, "no -d: a duration is --duration SECONDS, as in every tool "
				 "here (biolat's -d is a disk)");
	}
	return ARGP_ERR_UNKNOWN;
}

static int validate(struct run_config *rc)
{
	if (opt.mode == OPENSNOOP_EVENTS && rc->interval)
		return cli_error(rc, "opensnoop prints each open as it happens: no interval without "
				 "-C or -L (use --duration to stop after a time)");
	if (opt.mode != OPENSNOOP_COUNT && (opt.saw_by || opt.saw_rows))
		return cli_error(rc, "--by and -r go with -C");
	if (opt.mode != OPENSNOOP_LATENCY && opt.per_process)
		return cli_error(rc, "-P goes with -L");
	if (opt.mode != OPENSNOOP_LATENCY && rc->unit != UNIT_USECS)
		return cli_error(rc, "-m and --ns go with -L");
	if (opt.mode != OPENSNOOP_EVENTS && (opt.print_uid || opt.extended || opt.saw_buffer ||
					     opt.full_path))
		return cli_error(rc, "-U, -e, -F and -b go with the per-open events, not -C or -L");
	return 0;
}

/* -C by process or errno needs nothing from the entry unless -f judges
 * the flags there: no entry programs, each open counted at its exit. */
static bool count_at_exit(void)
{
	return opt.mode == OPENSNOOP_COUNT && opt.by != BY_FILE && !opt.flags_all &&
	       opt.accmode < 0;
}

static bool wants(const char *event)
{
	/* Counted at the exit, a thread killed in an open leaves its
	 * restart mark (start_restarts_pending) in task storage too. */
	if (!strcmp(event, START_EXIT_EVENT))
		return start_store_fallback() || count_at_exit();
	return !(count_at_exit() && !strncmp(event, "sys_enter_", strlen("sys_enter_")));
}

/* -C by process or comm and -L -P name a process by its leader, -F walks
 * the directory of a relative path: kernel offsets. */
static bool names_processes(void)
{
	return (opt.mode == OPENSNOOP_COUNT && (opt.by == BY_PROCESS || opt.by == BY_COMM)) ||
	       (opt.mode == OPENSNOOP_LATENCY && opt.per_process);
}

static int features(const struct run_config *rc)
{
	int err;

	/* -C --by file hashes a path too long for its key with bpf_loop
	 * (5.17), whose callback every mode's programs name, which 5.12 also
	 * refuses: without it, the programs built without BPF atomics, which
	 * loop by themselves. */
	if (!tool_noatomics() && libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_loop, NULL) != 1) {
		tool_use_noatomics();
		check_row("bpf_loop", CHECK_FALLBACK, "no such BPF helper (Linux 5.17+): the programs "
			  "built without BPF atomics, which loop by themselves");
	}
	opt.task_storage = probe_task_storage();
	if (!names_processes() && !opt.full_path)
		return 0;
	err = kernel_layout_load(&layout, rc->btf_fd);
	if (!err || layout.valid) {
		check_row("process and directory names", CHECK_OK, "kernel struct offsets from BTF");
	} else if (err != -ENOENT) {
		check_row("process and directory names", CHECK_FAILED, "cannot read %s: %s",
			  btf_source(rc), btf_fields_error());
		return -1;
	} else {
		check_row("process and directory names", CHECK_FALLBACK,
			  "no kernel BTF: a process is named by the thread that opened, -F leaves "
			  "relative paths as given");
	}
	return 0;
}

static struct bpf_object_skeleton *open_bpf(const struct run_config *rc)
{
	skel = opensnoop_bpf__open_opts(tool_open_opts(rc));
	if (!skel)
		return NULL;
	skel->rodata->mode = (__u8)opt.mode;
	skel->rodata->count_by = (__u8)opt.by;
	skel->rodata->per_process = opt.per_process;
	skel->rodata->full_path = opt.full_path;
	skel->rodata->count_at_exit = count_at_exit();
	skel->rodata->layout = layout;
	skel->rodata->filter_uid = opt.uid;
	skel->rodata->failed_only = opt.failed_only;
	skel->rodata->filter_errno = opt.err;
	skel->rodata->flags_all = opt.flags_all;
	skel->rodata->flags_accmode = opt.accmode;
	skel->rodata->wakeup_bytes = opt.ring_bytes / 4;
	skel->rodata->use_task_storage = opt.task_storage;
	start_store_unused(skel->maps.start_task, skel->maps.start_tid, opt.task_storage);
	/* Size down what this mode does not use. */
	bpf_map__set_max_entries(skel->maps.events,
				 opt.mode == OPENSNOOP_EVENTS ? opt.ring_bytes : (__u32)getpagesize());
	if (opt.mode != OPENSNOOP_COUNT || opt.by == BY_FILE) {
		keyed_unused(skel->maps.counts_a, skel->maps.counts_b);
	}
	if (opt.mode != OPENSNOOP_COUNT || opt.by != BY_FILE) {
		keyed_unused(skel->maps.file_counts_a, skel->maps.file_counts_b);
		bpf_map__set_max_entries(skel->maps.long_path, 1);
	}
	if (!opt.per_process) {
		keyed_unused(skel->maps.hists_a, skel->maps.hists_b);
	}
	return skel->skeleton;
}

/* The path to show: with -F a relative one joined to its directory. */
static const char *shown_path(const struct opensnoop_event *e, size_t size, char *buf, size_t len)
{
	const struct opensnoop_full_event *f = (const void *)e;
	size_t at;

	if (!opt.full_path || size < sizeof(*f) || !f->dir.ino || e->path_state == PATH_UNREADABLE) {
		snprintf(buf, len, "%.*s", OPENSNOOP_PATH_MAX, e->path);
		return buf;
	}
	file_name_format(&f->dir, buf, len);
	at = strlen(buf);
	snprintf(buf + at, len - at, "%s%.*s", at && buf[at - 1] == '/' ? "" : "/",
		 OPENSNOOP_PATH_MAX, e->path);
	return buf;
}

#define SHOWN_PATH_MAX (FILENAME_LABEL_MAX + OPENSNOOP_PATH_MAX + 2)

static void print_text(struct output *o, const struct opensnoop_event *e, const char *path)
{
	char comm[4 * FILTER_COMM_LEN + 1];
	long fd = e->ret >= 0 ? e->ret : -1, err = e->ret >= 0 ? 0 : -e->ret;

	if (o->timestamp)
		fprintf(o->f, "%-8s ", o->hms);
	if (opt.print_uid)
		fprintf(o->f, "%-6u ", e->uid);
	escape_text_buf(comm, sizeof(comm), e->comm, sizeof(e->comm));
	fprintf(o->f, "%-7u %-16s %3ld %3ld ", e->pid, comm, fd, err);
	if (opt.extended)
		fprintf(o->f, "%08o %04o ", e->flags, e->mode);
	if (e->path_state == PATH_UNREADABLE) {
		fputs("[unreadable]\n", o->f);
		return;
	}
	escape_text(o->f, path, SHOWN_PATH_MAX);
	fputs(e->path_state == PATH_TRUNCATED ? "... [truncated]\n" : "\n", o->f);
}

static void print_json(struct output *o, const struct opensnoop_event *e, const char *path)
{
	struct json j;

	json_begin(&j, o->f);
	json_str(&j, "tool", o->tool);
	json_str(&j, "time", o->iso);
	json_u64(&j, "pid", e->pid);
	json_u64(&j, "tid", e->tid);
	json_u64(&j, "uid", e->uid);
	json_strn(&j, "comm", e->comm, sizeof(e->comm));
	json_i64(&j, "fd", e->ret >= 0 ? e->ret : -1);
	json_i64(&j, "err", e->ret >= 0 ? 0 : -e->ret);
	json_u64(&j, "flags", e->flags);
	json_u64(&j, "mode", e->mode);
	json_num(&j, "latency_ns", (double)e->lat_ns);
	if (e->path_state == PATH_UNREADABLE) {
		json_key(&j, "path");
		fputs("null", o->f);
		json_bool(&j, "unreadable", true);
	} else {
		json_strn(&j, "path", path, SHOWN_PATH_MAX);
		if (e->path_state == PATH_TRUNCATED)
			json_bool(&j, "truncated", true);
	}
	json_end(&j);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct output *o = events_out;
	char path[SHOWN_PATH_MAX];

	(void)ctx;
	if (size < sizeof(struct opensnoop_event))
		return 0;
	delivered++;
	shown_path(data, size, path, sizeof(path));
	output_now(o);
	if (o->json)
		print_json(o, data, path);
	else
		print_text(o, data, path);
	return 0;
}

/* -C and -L: the per-key maps (if any) and the interval drain. */
static int setup_intervals(void)
{
	struct bpf_map *slot = NULL, *a = NULL, *b = NULL;

	if (opt.mode == OPENSNOOP_COUNT && opt.by == BY_FILE)
		slot = skel->maps.file_counts, a = skel->maps.file_counts_a, b = skel->maps.file_counts_b;
	else if (opt.mode == OPENSNOOP_COUNT)
		slot = skel->maps.counts, a = skel->maps.counts_a, b = skel->maps.counts_b;
	else if (opt.per_process)
		slot = skel->maps.hists, a = skel->maps.hists_a, b = skel->maps.hists_b;
	drain.start_missed = &skel->bss->start_missed_ends;
	return drain_setup(&drain, bpf_map__fd(skel->maps.intervals), bpf_map__fd(skel->maps.interval_gates),
			   &skel->bss->interval_cur, &keyed,
			   slot, a, b);
}

static int loaded(const struct run_config *rc, struct output *out)
{
	events_out = out;
	if (opt.mode != OPENSNOOP_EVENTS)
		return setup_intervals();
	rb = events_open(skel->maps.events, on_event);
	if (!rb) {
		diag_error("cannot open the ring buffer: %s", strerror(errno));
		return -1;
	}
	if (rc->json)
		return 0;
	if (rc->timestamp)
		fprintf(out->f, "%-8s ", "TIME");
	if (opt.print_uid)
		fprintf(out->f, "%-6s ", "UID");
	fprintf(out->f, "%-7s %-16s %3s %3s ", "PID", "COMM", "FD", "ERR");
	if (opt.extended)
		fprintf(out->f, "%-8s %-4s ", "FLAGS", "MODE");
	fprintf(out->f, "PATH\n");
	return 0;
}

static struct ring_buffer *events(void)
{
	return rb;
}

static bool streams_events(void)
{
	return opt.mode == OPENSNOOP_EVENTS;
}

static int by_opens(const void *a, const void *b)
{
	const struct opensnoop_count *x = a, *y = b;

	return x->opens != y->opens ? (x->opens > y->opens ? -1 : 1) : 0;
}

/* keyed_sort() compares keys; the top list sorts by value: an index.
 * The element is the value's own index (not a position in the order
 * being sorted, which qsort permutes as it goes). Ties by key, so the
 * rows come in the same order every time. */
static const struct keyed_snapshot *sorting;

static int by_value(const void *a, const void *b)
{
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	int c = by_opens(sorting->values + ia * sorting->value_size,
			 sorting->values + ib * sorting->value_size);

	return c ? c : memcmp(sorting->keys + ia * sorting->key_size,
			      sorting->keys + ib * sorting->key_size, sorting->key_size);
}

static const struct metric_family opens_family = {
	.name = "opensnoop_opens", .type = METRIC_COUNTER, .help = "Opens traced (-C)",
};

static const struct table_count counts[] = {
	{ "opens", &opens_family },
	{ "failed", &open_failures },
};

#define COUNT_COLUMNS { "OPENS", -8, NULL, 0, 0, NULL }, { "FAILED", -8, NULL, 1, 0, NULL }
static const struct table_column by_process_cols[] = {
	COUNT_COLUMNS, { "PID", -7, "pid", 0, CELL_PLAIN, NULL }, { "COMM", 0, "comm", 0, CELL_PLAIN, NULL },
};
static const struct table_column by_file_cols[] = {
	COUNT_COLUMNS, { "PATH", 0, "path", 0, CELL_PATH, NULL },
};
static const struct table_column by_errno_cols[] = {
	COUNT_COLUMNS, { "ERRNO", -5, "errno", 0, CELL_PLAIN, NULL },
	{ "NAME", 0, "errno", 0, CELL_ERRNO_NAME, NULL },
};
static const struct table_column by_comm_cols[] = {
	COUNT_COLUMNS, { "COMM", 0, "comm", 0, CELL_PLAIN, NULL },
};

static void count_note(FILE *f, const struct table *t);

static const struct table_spec specs[] = {	/* by enum opensnoop_by */
	{ "process", TABLE_ARRAY(by_process_cols), TABLE_ARRAY(counts), NULL, count_note },
	{ "file", TABLE_ARRAY(by_file_cols), TABLE_ARRAY(counts), NULL, count_note },
	{ "errno", TABLE_ARRAY(by_errno_cols), TABLE_ARRAY(counts), NULL, count_note },
	{ "comm", TABLE_ARRAY(by_comm_cols), TABLE_ARRAY(counts), NULL, count_note },
};

static void count_note(FILE *f, const struct table *t)
{
	static const char *const what[] = { "processes", "files", "results", "commands" };
	unsigned long long lost = table_sum_u64(t, "lost"), missed = table_sum_u64(t, "missed");
	size_t n = table_text_rows(t);

	fprintf(f, "%llu opens by %zu %s", table_sum_u64(t, "total"), t->n, what[opt.by]);
	if (t->n > n)
		fprintf(f, "; %zu more row%s not shown (-r N)", t->n - n, t->n - n == 1 ? "" : "s");
	if (lost)
		fprintf(f, "; %llu not counted: more than %d keys", lost, OPENSNOOP_MAX_KEYS);
	if (missed)
		fprintf(f, "; missed %llu", missed);
	fputs("\n\n", f);
}

/* One key of the kernel's as the row's key fields (@comm and @path hold
 * its strings, NUL-terminated). */
static int row_key(const void *key, struct key_field *k, char *comm, char *path)
{
	const struct opensnoop_key *pk = key;
	const struct opensnoop_file_key *fk = key;
	int n = 0;

	if (opt.by == BY_PROCESS || opt.by == BY_COMM) {
		snprintf(comm, FILTER_COMM_LEN + 1, "%.*s", FILTER_COMM_LEN, pk->proc.comm);
		if (opt.by == BY_PROCESS)
			k[n++] = (struct key_field)KEY_UINT("pid", pk->proc.pid);
		k[n++] = (struct key_field)KEY_STRING("comm", comm);
	} else if (opt.by == BY_ERRNO) {
		k[n++] = (struct key_field)KEY_ERRNO_OF("errno", pk->err);
	} else {
		snprintf(path, OPENSNOOP_PATH_MAX, "%.*s", OPENSNOOP_PATH_MAX - 1, fk->path);
		k[n++] = (struct key_field)KEY_STRING("path", path);
		if (fk->len) {
			k[n++] = (struct key_field){ .name = "truncated", .type = KEY_BOOL, .u = 1,
						     .json_only = true };
			k[n++] = (struct key_field){ .name = "path_bytes", .type = KEY_U64, .u = fk->len,
						     .json_only = true };
		}
	}
	return n;
}

/* Every key, ranked; the table shows the rows -r asks for (table.h). */
static int report_counts(struct output *o, struct keyed_snapshot *snap, const struct hist_interval *iv)
{
	char comm[FILTER_COMM_LEN + 1], path[OPENSNOOP_PATH_MAX];
	struct table t;
	__u64 total = 0;
	int err = 0;

	sorting = snap;
	if (snap->n)	/* order is NULL for an empty snapshot */
		qsort(snap->order, snap->n, sizeof(*snap->order), by_value);
	table_init(&t, &specs[opt.by]);
	t.limit = (size_t)opt.rows;
	for (size_t i = 0; i < snap->n && !err; i++) {
		const struct opensnoop_count *c = keyed_value(snap, i);
		unsigned long long v[2] = { c->opens, c->failed };
		struct key_field key[4];
		int nkey = row_key(keyed_key(snap, i), key, comm, path);

		total += c->opens;
		err = table_add(&t, key, nkey, v);
	}
	table_sum(&t, &(struct table_sum){ .json = "total", .u = total });
	table_sum(&t, &(struct table_sum){ .json = "keys", .u = snap->n });
	table_sum(&t, &(struct table_sum){ .json = "lost", .u = iv->lost_keys, .family = &o->fam.lost });
	table_sum(&t, &(struct table_sum){ .json = "missed", .u = iv->missed_ends, .omit_zero = true,
					   .family = &o->fam.missed });
	if (!err)
		output_table(o, &t);
	else
		diag_error("out of memory");
	table_free(&t);
	return err ? -ENOMEM : 0;
}

static void report_latency(struct output *o, struct keyed_snapshot *snap, const struct hist_interval *iv)
{
	struct hist_extra x = { .errors = true, .lost = -1, .unmatched = -1, .missed = iv->missed_ends,
				.has_missed = true, .per_key = opt.per_process };

	if (!opt.per_process || !snap->n) {
		output_hist(o, NULL, 0, &iv->hist, &x);
		return;
	}
	x.lost = (long long)iv->lost_keys;
	output_hists_by_process(o, snap, &x);
}

static int report(struct output *out)
{
	bool keyed_mode = opt.mode == OPENSNOOP_COUNT || opt.per_process;
	struct keyed_snapshot snap = {};
	struct hist_interval iv;
	int err;

	if (opt.mode == OPENSNOOP_EVENTS)
		return 0;
	err = drain_interval(&drain, &iv, keyed_mode ? &snap : NULL);
	if (err)
		diag_error("cannot read the counts: %s", strerror(-err));
	else if (opt.mode == OPENSNOOP_COUNT)
		err = report_counts(out, &snap, &iv);
	else
		report_latency(out, &snap, &iv);
	keyed_snapshot_free(&snap);
	return err;
}

static void finish(struct output *out)
{
	const struct opensnoop_totals *t = &skel->bss->totals;
	__u64 missed = skel->bss->start_missed_ends;
	struct json j;

	if (opt.mode != OPENSNOOP_EVENTS)
		return;
	unprinted = events_finish(rb);
	if (!out->json) {
		fprintf(stderr, "%llu opens traced; %llu lost (ring buffer full: try a larger -b); "
			"%llu paths unreadable; %llu truncated",
			(unsigned long long)(delivered + t->lost + unprinted), (unsigned long long)t->lost,
			(unsigned long long)t->unreadable, (unsigned long long)t->truncated);
		if (unprinted)
			fprintf(stderr, "; %ld not printed (the run ended before the output took them)",
				unprinted);
		if (missed)
			fprintf(stderr, "; %llu missed (their end not seen)", (unsigned long long)missed);
		fputc('\n', stderr);
		return;
	}
	output_now(out);
	json_begin(&j, out->f);
	json_str(&j, "tool", out->tool);
	json_str(&j, "time", out->iso);
	json_u64(&j, "events", delivered + t->lost + unprinted);
	json_u64(&j, "lost", t->lost);
	json_u64(&j, "unprinted", unprinted);
	json_u64(&j, "unreadable", t->unreadable);
	json_u64(&j, "truncated", t->truncated);
	if (missed)
		json_u64(&j, "missed", missed);
	json_end(&j);
}

static void close_bpf(void)
{
	events_close(rb);
	drain_close(&drain);
	opensnoop_bpf__destroy(skel);
}

static const char *banner(void)
{
	return "Tracing open, openat and openat2 syscalls";
}

static const struct tool opensnoop = {
	.name = "opensnoop",
	.summary = "Trace open() syscalls: who opens which file, with what result.",
	.doc = "Examples:\n"
	       "  opensnoop               # every open, as it happens\n"
	       "  opensnoop -x            # failed opens only\n"
	       "  opensnoop -p 181        # process 181 only\n"
	       "  opensnoop -n nginx -T   # processes named nginx, with times\n"
	       "  opensnoop -f O_CREAT    # opens that create\n"
	       "  opensnoop --errno EACCES -U  # permission denied, with the UID\n"
	       "  opensnoop -j --duration 10   # JSON, for 10 seconds\n"
	       "  opensnoop -C 5          # which processes open the most, every 5 s\n"
	       "  opensnoop -C --by file -r 10  # the 10 files opened most\n"
	       "  opensnoop -C --by comm  # which commands open the most (short-lived too)\n"
	       "  opensnoop -L -P         # open latency per process\n"
	       "  opensnoop -F            # absolute paths, also for relative opens\n",
	.banner = banner,
	.shared = SHARED_FILTERS | SHARED_UNITS,
	.hist_family = &open_duration,
	.errors_family = &open_failures,
	.options = options,
	.values = values,
	.parse = parse,
	.validate = validate,
	.probes = probes,
	.wants = wants,
	.nprobes = sizeof(probes) / sizeof(probes[0]),
	.features = features,
	.open = open_bpf,
	.loaded = loaded,
	.events = events,
	.streams_events = streams_events,
	.report = report,
	.finish = finish,
	.close = close_bpf,
};

int main(int argc, char **argv)
{
	return tool_run(&opensnoop, argc, argv);
}
