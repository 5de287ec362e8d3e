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
#include "escape.h"
#include "probe.h"
#include "tool.h"
#include "opensnoop.h"
#include "opensnoop.skel.h"

enum {
	OPT_ERRNO = 0x2000,
};

static struct {
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

static const struct argp_option options[] = {
	{ "print-uid", 'U', NULL, 0, "Show the UID column", 0 },
	{ "extended-fields", 'e', NULL, 0, "Show the open flags and mode", 0 },
	{ "failed", 'x', NULL, 0, "Only opens that failed", 0 },
	{ "uid", 'u', "UID", 0, "Only opens by this user id", 0 },
	{ "errno", OPT_ERRNO, "E", 0, "Only opens that failed with this error (ENOENT or 2)", 0 },
	{ "flag", 'f', "FLAG", OPTION_REPEATABLE,
	  "Only opens with this flag (O_CREAT, O_WRONLY, ...); repeatable: all of them", 0 },
	{ "buffer-size", 'b', "BYTES", 0,
	  "Ring buffer size, a power of two (K and M suffixes; default 4M)", 0 },
	{ "duration", 'd', "SECONDS", OPTION_HIDDEN, "Same as --duration (bcc's -d)", 0 },
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
	long n;

	if (opt.saw_errno)
		return cli_error(rc, "option '--errno' given twice");
	opt.saw_errno = true;
	if (!parse_count(arg, &n) && n < 4096) {
		opt.err = (int)n;
		return 0;
	}
	for (int e = 1; e < 4096; e++) {
		const char *name = strerrorname_np(e);

		if (name && !strcmp(name, arg)) {
			opt.err = e;
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

	if (opt.saw_buffer)
		return cli_error(rc, "option '-b' given twice");
	opt.saw_buffer = true;
	errno = 0;
	n = *arg >= '0' && *arg <= '9' ? strtoull(arg, &end, 10) : 0;
	if (n && (*end == 'K' || *end == 'k'))
		n <<= 10, end++;
	else if (n && (*end == 'M' || *end == 'm'))
		n <<= 20, end++;
	if (errno || !n || *end || n < (unsigned long long)getpagesize() || n > (1ULL << 30) ||
	    (n & (n - 1)))
		return cli_error(rc, "invalid buffer size '%s': expected a power of two from %dK "
				 "to 1024M (e.g. 64K, 4M)", arg, getpagesize() / 1024);
	opt.ring_bytes = (__u32)n;
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
	case 'd':
		if (rc->duration)
			return cli_error(rc, "option '--duration' given twice");
		if (parse_decimal(arg, SECONDS_MIN, SECONDS_MAX, &rc->duration))
			return cli_error(rc, "invalid duration '%s': expected seconds from %g to %.0f",
					 arg, SECONDS_MIN, SECONDS_MAX);
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

static int validate(struct run_config *rc)
{
	if (rc->interval)
		return cli_error(rc, "opensnoop prints each open as it happens: no interval "
				 "(use --duration to stop after a time)");
	return 0;
}

static int features(const struct run_config *rc)
{
	(void)rc;
	opt.task_storage = probe_task_storage();
	return 0;
}

static struct bpf_object_skeleton *open_bpf(const struct run_config *rc)
{
	skel = opensnoop_bpf__open_opts(tool_open_opts(rc));
	if (!skel)
		return NULL;
	skel->rodata->filter_uid = opt.uid;
	skel->rodata->failed_only = opt.failed_only;
	skel->rodata->filter_errno = opt.err;
	skel->rodata->flags_all = opt.flags_all;
	skel->rodata->flags_accmode = opt.accmode;
	skel->rodata->wakeup_bytes = opt.ring_bytes / 4;
	skel->rodata->use_task_storage = opt.task_storage;
	if (opt.task_storage)
		bpf_map__set_max_entries(skel->maps.start_tid, (__u32)libbpf_num_possible_cpus());
	bpf_map__set_max_entries(skel->maps.events, opt.ring_bytes);
	return skel->skeleton;
}

static void print_text(struct output *o, const struct opensnoop_event *e)
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
	escape_text(o->f, e->path, sizeof(e->path));
	fputs(e->path_state == PATH_TRUNCATED ? "... [truncated]\n" : "\n", o->f);
}

static void print_json(struct output *o, const struct opensnoop_event *e)
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
		json_strn(&j, "path", e->path, sizeof(e->path));
		if (e->path_state == PATH_TRUNCATED)
			json_bool(&j, "truncated", true);
	}
	json_end(&j);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct output *o = events_out;

	(void)ctx;
	if (size < sizeof(struct opensnoop_event))
		return 0;
	output_now(o);
	if (o->json)
		print_json(o, data);
	else
		print_text(o, data);
	return 0;
}

static int loaded(const struct run_config *rc, struct output *out)
{
	events_out = out;
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, NULL, NULL);
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
	return true;
}

static void finish(struct output *out)
{
	const struct opensnoop_totals *t = &skel->bss->totals;
	struct json j;

	ring_buffer__consume(rb);
	if (!out->json) {
		fprintf(stderr, "%llu opens traced; %llu lost (ring buffer full: try a larger -b); "
			"%llu paths unreadable; %llu truncated\n",
			(unsigned long long)t->events, (unsigned long long)t->lost,
			(unsigned long long)t->unreadable, (unsigned long long)t->truncated);
		return;
	}
	output_now(out);
	json_begin(&j, out->f);
	json_str(&j, "tool", out->tool);
	json_str(&j, "time", out->iso);
	json_u64(&j, "events", t->events);
	json_u64(&j, "lost", t->lost);
	json_u64(&j, "unreadable", t->unreadable);
	json_u64(&j, "truncated", t->truncated);
	json_end(&j);
}

static void close_bpf(void)
{
	ring_buffer__free(rb);
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
	       "  opensnoop -j --duration 10   # JSON, for 10 seconds\n",
	.banner = banner,
	.shared = SHARED_FILTERS,
	.options = options,
	.parse = parse,
	.validate = validate,
	.probes = probes,
	.nprobes = sizeof(probes) / sizeof(probes[0]),
	.features = features,
	.open = open_bpf,
	.loaded = loaded,
	.events = events,
	.streams_events = streams_events,
	.finish = finish,
	.close = close_bpf,
};

int main(int argc, char **argv)
{
	return tool_run(&opensnoop, argc, argv);
}
