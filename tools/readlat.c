// SPDX-License-Identifier: GPL-2.0-only
/* readlat: summarize read(2) latency as a histogram. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "diag.h"
#include "drain.h"
#include "escape.h"
#include "events.h"
#include "filenames.h"
#include "keyed.h"
#include "probe.h"
#include "tool.h"
#include "readlat.h"
#include "readlat.skel.h"

enum {
	OPT_SLOWER = 0x2000,
	OPT_ERRORS,
};

static const char *const syscall_names[] = { "read", "pread64", "readv", "preadv", "preadv2" };
#define NR_SYSCALLS (int)(sizeof(syscall_names) / sizeof(syscall_names[0]))

static struct {
	enum readlat_mode mode;
	unsigned int syscalls;		/* bit i: syscall_names[i] */
	double slower_us;
	bool errors_in_hist;
	bool by_cache;			/* -B */
	bool task_storage;
} opt = { .syscalls = 1 };

static struct readlat_bpf *skel;
static struct keyed_hist keyed;
static struct drain drain;
static struct ring_buffer *rb;
static long unprinted;		/* left in the ring at the end, not printed */
static struct output *events_out;
static const struct run_config *config;
static struct kernel_layout layout;
static struct filenames files;	/* -F: names the kernel sent, by file */

static const struct metric_family read_duration = {
	.name = "readlat_read_duration_seconds", .unit = "seconds", .type = METRIC_HISTOGRAM,
	.help = "Latency of the traced read syscalls, from entry to exit", .scale = 1e-9,
};
static const struct metric_family read_errors = {
	.name = "readlat_read_errors", .type = METRIC_COUNTER, .help = "Reads that failed",
};

static const struct argp_option options[] = {
	{ "syscalls", 's', "LIST", 0,
	  "Syscalls to time, comma-separated: read,pread64,readv,preadv,preadv2 (default read)", 0 },
	{ "per-process", 'P', NULL, 0, "One histogram per process", 0 },
	{ "per-fd", 'F', NULL, 0, "One histogram per process and file descriptor", 0 },
	{ "slower", OPT_SLOWER, "USECS", 0, "Print each read slower than USECS, one line each", 0 },
	{ "errors", OPT_ERRORS, NULL, 0, "Put failed reads in the histogram too (always counted)", 0 },
	{ "by-cache", 'B', NULL, 0, "Two histograms: reads that submitted or waited for block I/O "
	  "(disk) and reads that did not (cache)", 0 },
	{},
};

static const struct option_value values[] = {
	VALUE_WORDS('s', VALUE_WORD_LIST, syscall_names),
	{ 0 },
};

#define READ_PROBES(sc)								\
	{ "sys_enter_" sc, PROBE_TRACEPOINT, "syscalls/sys_enter_" sc, "enter_" sc, false },	\
	{ "sys_exit_" sc, PROBE_TRACEPOINT, "syscalls/sys_exit_" sc, "exit_" sc, false }

/* Listed start before end: they are attached last to first. */
static const struct probe probes[] = {
	READ_PROBES("read"),
	READ_PROBES("pread64"),
	READ_PROBES("readv"),
	READ_PROBES("preadv"),
	READ_PROBES("preadv2"),
	/* A read interrupted by a signal: restarted, or EINTR (rare: off the read path). */
	{ "signal_deliver", PROBE_TRACEPOINT, "signal/signal_deliver", "signal_deliver", false },
	/* -B: a read that submits block I/O, or sleeps waiting for I/O. */
	{ "block_bio_queue", PROBE_RAW_TRACEPOINT, "block/block_bio_queue", "bio_queue", false },
	{ "sched_switch", PROBE_RAW_TRACEPOINT, "sched/sched_switch", "sched_switch", false },
	START_EXIT_PROBE,
};

/* Reads the list without cutting it up: argv stays as given (ps shows it). */
static int parse_syscalls(const char *arg, struct run_config *rc)
{
	opt.syscalls = 0;
	for (const char *name = arg + strspn(arg, ","); *name; name += strspn(name, ",")) {
		int len = (int)strcspn(name, ","), i;

		for (i = 0; i < NR_SYSCALLS && (strncmp(name, syscall_names[i], len) ||
						syscall_names[i][len]); i++)
			;
		if (i == NR_SYSCALLS) {
			char list[128];

			word_list(syscall_names, NR_SYSCALLS, list, sizeof(list));
			return cli_error(rc, "unknown syscall '%.*s' for -s: expected %s", len, name, list);
		}
		opt.syscalls |= 1U << i;
		name += len;
	}
	if (!opt.syscalls)
		return cli_error(rc, "-s needs at least one syscall");
	return 0;
}

static int set_mode(enum readlat_mode mode, struct run_config *rc)
{
	if (opt.mode != READLAT_HIST && opt.mode != mode)
		return cli_error(rc, "-P, -F and --slower cannot be combined");
	opt.mode = mode;
	return 0;
}

static int parse_threshold(const char *arg, struct run_config *rc)
{
	const double max_us = 1e12;	/* in ns, still far inside a __u64 */

	if (parse_decimal(arg, 0, max_us, &opt.slower_us))
		return cli_error(rc, "invalid threshold '%s' for --slower: expected microseconds "
				 "from 0 to %.0f", arg, max_us);
	return set_mode(READLAT_SLOWER, rc);
}

static int parse(int key, char *arg, struct run_config *rc)
{
	switch (key) {
	case 's':
		return parse_syscalls(arg, rc);
	case 'P':
		return set_mode(READLAT_PER_PROCESS, rc);
	case 'F':
		return set_mode(READLAT_PER_FD, rc);
	case OPT_SLOWER:
		return parse_threshold(arg, rc);
	case OPT_ERRORS:
		opt.errors_in_hist = true;
		return 0;
	case 'B':
		opt.by_cache = true;
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

static bool wants(const char *event)
{
	const char *sc;

	if (!strcmp(event, "block_bio_queue") || !strcmp(event, "sched_switch"))
		return opt.by_cache;
	if (!strcmp(event, START_EXIT_EVENT))
		return start_store_fallback();
	if (strncmp(event, "sys_", 4))
		return true;
	sc = strchr(event + strlen("sys_"), '_') + 1;

	for (int i = 0; i < NR_SYSCALLS; i++)
		if (!strcmp(sc, syscall_names[i]))
			return opt.syscalls & (1U << i);
	return false;
}

static bool keyed_mode(void)
{
	return opt.mode == READLAT_PER_PROCESS || opt.mode == READLAT_PER_FD || opt.by_cache;
}

static int validate(struct run_config *rc)
{
	if (opt.by_cache && (opt.mode == READLAT_PER_FD || opt.mode == READLAT_SLOWER))
		return cli_error(rc, "-B cannot be combined with -F or --slower");
	return 0;
}

/* -B: the bit of task_struct that says a thread waits for I/O; -1 if
 * the BTF has it (or the layout) in another shape than is read. */
static int iowait_checks(const struct run_config *rc, int err)
{
	if (layout.valid && layout.task_in_iowait != KERNEL_LAYOUT_NONE) {
		check_row("waits for I/O (-B)", CHECK_OK, "task_struct.in_iowait from kernel BTF");
		return 0;
	}
	if (err == -BTF_FIELDS_MISMATCH) {
		check_row("waits for I/O (-B)", CHECK_FAILED, "%s (%s): -B cannot tell a wait for I/O",
			  btf_fields_error(), btf_source(rc));
		return -1;
	}
	check_row("waits for I/O (-B)", CHECK_FALLBACK, "no kernel BTF: -B sees the block I/O "
		  "a read submits, not a wait for I/O that another thread submitted");
	return 0;
}

/* Where start times wait (probe_task_storage), and for -P/-F how to name
 * a process and a file. */
static int features(const struct run_config *rc)
{
	bool per_key = opt.mode == READLAT_PER_PROCESS || opt.mode == READLAT_PER_FD;
	int err;

	opt.task_storage = probe_task_storage();
	if (!per_key && !opt.by_cache)
		return 0;
	/* Naming a process by its leader, a file by what it is, seeing a
	 * thread wait for I/O: offsets read from kernel BTF (only these
	 * modes pay for reading it). */
	err = kernel_layout_load(&layout, rc->btf_fd);
	if (err && err != -ENOENT && err != -BTF_FIELDS_MISMATCH) {
		check_row("kernel layout", CHECK_FAILED, "cannot read %s: %s", btf_source(rc),
			  btf_fields_error());
		return -1;
	}
	if (opt.by_cache && iowait_checks(rc, err))
		return -1;
	if (!per_key)
		return 0;
	if (!err || layout.valid)
		check_row("process and file names", CHECK_OK, "kernel struct offsets from BTF");
	else if (err == -BTF_FIELDS_MISMATCH)
		check_row("process and file names", CHECK_FAILED, "%s (%s): -P and -F cannot "
			  "name processes and files with it", btf_fields_error(), btf_source(rc));
	else
		check_row("process and file names", CHECK_FALLBACK,
			  "no kernel BTF: -P names a process by the thread that read, -F a file by "
			  "what its fd is at report time");
	return err == -BTF_FIELDS_MISMATCH && !layout.valid ? -1 : 0;
}

static struct bpf_object_skeleton *open_bpf(const struct run_config *rc)
{
	skel = readlat_bpf__open_opts(tool_open_opts(rc));
	if (!skel)
		return NULL;
	skel->rodata->mode = (__u8)opt.mode;
	skel->rodata->layout = layout;
	skel->rodata->errors_in_hist = opt.errors_in_hist;
	skel->rodata->by_cache = opt.by_cache;
	skel->rodata->use_task_storage = opt.task_storage;
	skel->rodata->slower_ns = (__u64)(opt.slower_us * 1000);
	/* Size down what this mode does not use. */
	start_store_unused(skel->maps.start_task, skel->maps.start_tid, opt.task_storage);
	if (!keyed_mode()) {
		keyed_unused(skel->maps.hists_a, skel->maps.hists_b);
	}
	if (opt.mode != READLAT_PER_FD)
		bpf_map__set_max_entries(skel->maps.files_sent, 1);
	if (opt.mode != READLAT_SLOWER && opt.mode != READLAT_PER_FD)
		bpf_map__set_max_entries(skel->maps.events, (__u32)getpagesize());
	return skel->skeleton;
}

static void print_read(const struct readlat_event *e)
{
	struct output *o = events_out;
	double lat = unit_from_ns(o->unit, e->lat_ns);
	char comm[4 * FILTER_COMM_LEN + 1];
	struct json j;

	output_now(o);
	if (!o->json) {
		escape_text_buf(comm, sizeof(comm), e->comm, sizeof(e->comm));
		fprintf(o->f, "%-8s %-7u %-7u %-16s %-5d %-8lld %.3f\n", o->hms, e->pid, e->tid,
			comm, e->fd, (long long)e->ret, lat);
		return;
	}
	output_json_begin(o, &j);
	json_u64(&j, "pid", e->pid);
	json_u64(&j, "tid", e->tid);
	json_strn(&j, "comm", e->comm, sizeof(e->comm));
	json_i64(&j, "fd", e->fd);
	json_i64(&j, "ret", e->ret);
	json_num(&j, "latency", lat);
	json_end(&j);
}

static int on_event(void *ctx, void *data, size_t size)
{
	const __u32 *kind = data;

	(void)ctx;
	if (size >= sizeof(struct readlat_event) && *kind == READLAT_EV_READ)
		print_read(data);
	else if (size >= sizeof(struct readlat_file_event) && *kind == READLAT_EV_FILE)
		filenames_add(&files, &((const struct readlat_file_event *)data)->name);
	return 0;
}

static int loaded(const struct run_config *rc, struct output *out)
{
	int err;

	config = rc;
	events_out = out;
	err = drain_setup(&drain, bpf_map__fd(skel->maps.intervals), bpf_map__fd(skel->maps.interval_gates),
			   &skel->bss->interval_cur, &keyed,
			  keyed_mode() ? skel->maps.hists : NULL, skel->maps.hists_a, skel->maps.hists_b);
	if (err)
		return err;
	drain.start_missed = &skel->bss->start_missed_ends;
	if (opt.mode != READLAT_SLOWER && opt.mode != READLAT_PER_FD)
		return 0;
	rb = events_open(skel->maps.events, on_event);
	if (!rb) {
		diag_error("cannot open the ring buffer: %s", strerror(errno));
		return -1;
	}
	if (opt.mode == READLAT_SLOWER && !rc->json)
		fprintf(out->f, "%-8s %-7s %-7s %-16s %-5s %-8s LAT(%s)\n", "TIME", "PID", "TID",
			"COMM", "FD", "BYTES", unit_abbrev(rc->unit));
	return 0;
}

static struct ring_buffer *events(void)
{
	return rb;
}

static bool streams_events(void)
{
	return opt.mode == READLAT_SLOWER;
}

static int by_pid_fd(const void *a, const void *b)
{
	const struct readlat_key *x = a, *y = b;
	int c = process_key_cmp(&x->proc, &y->proc);

	if (c)
		return c;
	if (x->fd != y->fd)
		return x->fd < y->fd ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->disk < y->disk ? -1 : x->disk > y->disk;
}

/* The name the kernel sent when the file was first read; failing that
 * (no kernel BTF, or its event lost), what the fd is now, if it is still
 * the same file. */
static void fd_path(const struct readlat_key *k, char *buf, size_t len)
{
	const char *name = filenames_get(&files, k->dev, k->ino);
	char link[64];

	if (name) {
		snprintf(buf, len, "%s", name);
		return;
	}
	snprintf(link, sizeof(link), "/proc/%u/fd/%d", k->proc.pid, k->fd);
	if (filenames_resolve_fd(link, k->dev, k->ino, buf, len))
		snprintf(buf, len, "?");
}

/* -F, after names were dropped (filenames_trim()): the kernel sends the
 * name of each of those files again at its next read. */
static void forget_sent_names(void)
{
	static struct readlat_key gone[READLAT_MAX_FILES];
	struct readlat_key prev, key;
	int fd = bpf_map__fd(skel->maps.files_sent);
	size_t n = 0;
	void *at = NULL;

	/* The kernel adds (and evicts) meanwhile: a walk whose key was
	 * evicted starts again, so it is bounded by steps, not by its end. */
	for (int steps = 0; steps < 2 * READLAT_MAX_FILES && n < READLAT_MAX_FILES &&
			    !bpf_map_get_next_key(fd, at, &key); steps++) {
		prev = key;
		at = &prev;
		if (!filenames_known(&files, key.dev, key.ino))
			gone[n++] = key;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &gone[i]);
}

static struct hist_extra interval_extra(const struct hist_interval *iv)
{
	struct hist_extra x = { .errors = true, .lost = -1, .has_missed = true,
				.per_key = keyed_mode() };

	/* Reads in flight at attach, or whose start was evicted. */
	x.unmatched = (long long)iv->unmatched;
	if (keyed_mode())
		x.lost = (long long)iv->lost_keys;
	x.missed = iv->missed_ends;
	return x;
}

static const char *source_name(__u32 disk)
{
	return disk ? "disk" : "cache";
}

/* -B alone: both sources, every interval, in the same order. */
static void report_sources(struct output *out, struct keyed_snapshot *snap, const struct hist_extra *x)
{
	static const struct hist empty;

	for (__u32 disk = 0; disk < 2; disk++) {
		const struct hist *h = &empty;
		struct key_field key[1] = { KEY_STRING("source", source_name(disk)) };

		for (size_t i = 0; i < snap->n; i++)
			if (((const struct readlat_key *)keyed_key(snap, i))->disk == disk)
				h = keyed_value(snap, i);
		output_hist(out, key, 1, h, x);
	}
}

static int report_keyed(struct output *out, struct keyed_snapshot *snap, const struct hist_extra *x)
{
	char path[FILENAME_LABEL_MAX], comm[FILTER_COMM_LEN + 1];

	keyed_sort(snap, by_pid_fd);
	if (opt.mode == READLAT_HIST) {
		report_sources(out, snap, x);
		return 0;
	}
	for (size_t i = 0; i < snap->n; i++) {
		const struct readlat_key *k = keyed_key(snap, i);
		struct key_field key[4] = {
			KEY_UINT("pid", k->proc.pid),
			KEY_STRING("comm", comm),
			KEY_INT("fd", k->fd),
			KEY_STRING("path", path),
		};
		int nkey = opt.mode == READLAT_PER_FD ? 4 : 2;

		process_key_name(&k->proc, comm, sizeof(comm));
		if (opt.mode == READLAT_PER_FD)
			fd_path(k, path, sizeof(path));
		if (opt.by_cache)	/* with -P */
			key[nkey++] = (struct key_field)KEY_STRING("source", source_name(k->disk));
		output_hist(out, key, nkey, keyed_value(snap, i), x);
	}
	if (x->lost > 0 && !out->json)
		diag_error("%lld reads not counted: more than %d processes/files in one interval",
			   x->lost, READLAT_MAX_KEYS);
	return 0;
}

static int report(struct output *out)
{
	bool per_key = keyed_mode();
	struct keyed_snapshot snap = {};
	struct hist_interval iv;
	struct hist_extra x;
	int err;

	if (opt.mode == READLAT_SLOWER)
		return 0;
	err = drain_interval(&drain, &iv, per_key ? &snap : NULL);
	if (err) {
		diag_error("cannot read the histograms: %s", strerror(-err));
		if (per_key)
			keyed_snapshot_free(&snap);
		return err;
	}
	x = interval_extra(&iv);
	/* Per key, an idle interval still shows: one empty histogram. */
	if (per_key && (snap.n || (opt.by_cache && opt.mode == READLAT_HIST)))
		report_keyed(out, &snap, &x);
	else
		output_hist(out, NULL, 0, &iv.hist, &x);
	if (per_key)
		keyed_snapshot_free(&snap);
	if (opt.mode == READLAT_PER_FD && filenames_trim(&files, READLAT_MAX_FILES))
		forget_sent_names();
	return 0;
}

static void finish(struct output *out)
{
	const struct readlat_totals *t = &skel->bss->totals;
	__u64 missed = skel->bss->start_missed_ends;
	struct json j;

	if (opt.mode != READLAT_SLOWER)
		return;
	unprinted = events_finish(rb);
	if (!out->json) {
		fprintf(stderr, "%llu of %llu reads took %g usecs or longer; %llu failed; %llu lost",
			(unsigned long long)t->slower, (unsigned long long)t->reads, opt.slower_us,
			(unsigned long long)t->errors, (unsigned long long)t->lost);
		if (unprinted)
			fprintf(stderr, "; %ld not printed (the run ended before the output took them)",
				unprinted);
		if (missed)
			fprintf(stderr, "; %llu missed (their end not seen)", (unsigned long long)missed);
		fputc('\n', stderr);
		return;
	}
	output_now(out);
	output_json_begin(out, &j);
	json_u64(&j, "reads", t->reads);
	json_u64(&j, "slower", t->slower);
	json_u64(&j, "errors", t->errors);
	json_u64(&j, "lost", t->lost);
	json_u64(&j, "unprinted", unprinted);
	if (missed)
		json_u64(&j, "missed", missed);
	json_end(&j);
}

static void close_bpf(void)
{
	events_close(rb);
	drain_close(&drain);
	filenames_free(&files);
	readlat_bpf__destroy(skel);
}

static const char *banner(void)
{
	static char text[128];
	size_t n = snprintf(text, sizeof(text), "Tracing");

	for (int i = 0; i < NR_SYSCALLS; i++)
		if (opt.syscalls & (1U << i))
			n += snprintf(text + n, sizeof(text) - n, "%s %s", n > 7 ? "," : "",
				      syscall_names[i]);
	snprintf(text + n, sizeof(text) - n, " syscalls");
	return text;
}

static const struct tool readlat = {
	.name = "readlat",
	.summary = "Summarize read() syscall latency as a histogram.",
	.doc = "Examples:\n"
	       "  readlat                 # all reads, histogram at Ctrl-C\n"
	       "  readlat 1 10            # print every second, 10 times\n"
	       "  readlat -p 181 -m       # process 181 only, milliseconds\n"
	       "  readlat -P              # one histogram per process\n"
	       "  readlat -F -p 181       # one per file descriptor of process 181\n"
	       "  readlat --slower 10000  # each read slower than 10 ms\n"
	       "  readlat -s read,pread64,readv,preadv  # the read family\n"
	       "  readlat -B              # reads that needed the disk, and those that did not\n",
	.banner = banner,
	.shared = SHARED_FILTERS | SHARED_UNITS,
	.hist_family = &read_duration,
	.errors_family = &read_errors,
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
	.events = events,
	.streams_events = streams_events,
	.report = report,
	.finish = finish,
	.close = close_bpf,
};

int main(int argc, char **argv)
{
	return tool_run(&readlat, argc, argv);
}
