// SPDX-License-Identifier: GPL-2.0-only
/* readlat: summarize read(2) latency as a histogram. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "diag.h"
#include "keyed.h"
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
	bool task_storage;
} opt = { .syscalls = 1 };

static struct readlat_bpf *skel;
static struct keyed_hist keyed;
static struct ring_buffer *rb;
static struct output *events_out;

static const struct argp_option options[] = {
	{ "syscalls", 's', "LIST", 0,
	  "Syscalls to time, comma-separated: read,pread64,readv,preadv,preadv2 (default read)", 0 },
	{ "per-process", 'P', NULL, 0, "One histogram per process", 0 },
	{ "per-fd", 'F', NULL, 0, "One histogram per process and file descriptor", 0 },
	{ "slower", OPT_SLOWER, "USECS", 0, "Print each read slower than USECS, one line each", 0 },
	{ "errors", OPT_ERRORS, NULL, 0, "Put failed reads in the histogram too (always counted)", 0 },
	{},
};

#define READ_PROBES(sc)								\
	{ "sys_enter_" sc, PROBE_TRACEPOINT, "syscalls/sys_enter_" sc, "enter_" sc },	\
	{ "sys_exit_" sc, PROBE_TRACEPOINT, "syscalls/sys_exit_" sc, "exit_" sc }

static const struct probe probes[] = {
	READ_PROBES("read"),
	READ_PROBES("pread64"),
	READ_PROBES("readv"),
	READ_PROBES("preadv"),
	READ_PROBES("preadv2"),
};

static int parse_syscalls(char *arg, struct run_config *rc)
{
	char *save = NULL, *name;

	opt.syscalls = 0;
	for (name = strtok_r(arg, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		int i;

		for (i = 0; i < NR_SYSCALLS && strcmp(name, syscall_names[i]); i++)
			;
		if (i == NR_SYSCALLS)
			return cli_error(rc, "unknown syscall '%s' for -s: expected read, pread64, "
					 "readv, preadv or preadv2", name);
		opt.syscalls |= 1U << i;
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
	char *end;

	errno = 0;
	opt.slower_us = strtod(arg, &end);
	if (errno || end == arg || *end || !(opt.slower_us >= 0) || opt.slower_us > 1e12)
		return cli_error(rc, "invalid threshold '%s' for --slower: expected microseconds", arg);
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
	}
	return ARGP_ERR_UNKNOWN;
}

static bool wants(const char *event)
{
	const char *sc = strchr(event + strlen("sys_"), '_') + 1;

	for (int i = 0; i < NR_SYSCALLS; i++)
		if (!strcmp(sc, syscall_names[i]))
			return opt.syscalls & (1U << i);
	return false;
}

/* Task storage (Linux 5.11+, needs kernel BTF) is the cheapest place for
 * a thread's start time; an LRU hash by thread id works everywhere. */
static int features(const struct run_config *rc)
{
	(void)rc;
	opt.task_storage = diag_btf_present() &&
		libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1 &&
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_get_current_task_btf, NULL) == 1 &&
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_task_storage_get, NULL) == 1;
	if (opt.task_storage)
		check_row("start-time store", CHECK_OK, "task storage");
	else
		check_row("start-time store", CHECK_FALLBACK,
			  "LRU hash by thread id (task storage needs kernel BTF and Linux 5.11+)");
	return 0;
}

static struct bpf_object_skeleton *open_bpf(const struct run_config *rc)
{
	skel = readlat_bpf__open_opts(tool_open_opts(rc));
	if (!skel)
		return NULL;
	skel->rodata->mode = (__u8)opt.mode;
	skel->rodata->unit = (__u8)rc->unit;
	skel->rodata->errors_in_hist = opt.errors_in_hist;
	skel->rodata->use_task_storage = opt.task_storage;
	skel->rodata->slower_ns = (__u64)(opt.slower_us * 1000);
	/* Size down what this mode does not use. */
	if (opt.task_storage)
		bpf_map__set_max_entries(skel->maps.start_tid, (__u32)libbpf_num_possible_cpus());
	if (opt.mode != READLAT_PER_PROCESS && opt.mode != READLAT_PER_FD) {
		bpf_map__set_max_entries(skel->maps.hists_a, 1);
		bpf_map__set_max_entries(skel->maps.hists_b, 1);
	}
	if (opt.mode != READLAT_SLOWER)
		bpf_map__set_max_entries(skel->maps.events, (__u32)getpagesize());
	return skel->skeleton;
}

static int print_event(void *ctx, void *data, size_t size)
{
	const struct readlat_event *e = data;
	struct output *o = events_out;
	double lat = unit_from_ns(o->unit, e->lat_ns);
	struct json j;

	(void)ctx;
	(void)size;
	output_now(o);
	if (!o->json) {
		fprintf(o->f, "%-8s %-7u %-7u %-16s %-5d %-8lld %.3f\n", o->hms, e->pid, e->tid,
			e->comm, e->fd, (long long)e->ret, lat);
		return 0;
	}
	output_json_begin(o, &j);
	json_u64(&j, "pid", e->pid);
	json_u64(&j, "tid", e->tid);
	json_str(&j, "comm", e->comm);
	json_i64(&j, "fd", e->fd);
	json_i64(&j, "ret", e->ret);
	json_num(&j, "latency", lat);
	json_end(&j);
	return 0;
}

static int loaded(const struct run_config *rc, struct output *out)
{
	int err;

	if (opt.mode == READLAT_PER_PROCESS || opt.mode == READLAT_PER_FD) {
		err = keyed_hist_init(&keyed, skel->maps.hists, skel->maps.hists_a, skel->maps.hists_b);
		if (err)
			diag_error("cannot set up per-key histograms: %s", strerror(-err));
		return err;
	}
	if (opt.mode != READLAT_SLOWER)
		return 0;
	events_out = out;
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), print_event, NULL, NULL);
	if (!rb) {
		diag_error("cannot open the ring buffer: %s", strerror(errno));
		return -1;
	}
	if (!rc->json)
		fprintf(out->f, "%-8s %-7s %-7s %-16s %-5s %-8s LAT(%s)\n", "TIME", "PID", "TID",
			"COMM", "FD", "BYTES", unit_abbrev(rc->unit));
	return 0;
}

static struct ring_buffer *events(void)
{
	return rb;
}

static int by_pid_fd(const void *a, const void *b)
{
	const struct readlat_key *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->fd != y->fd)
		return x->fd < y->fd ? -1 : 1;
	return strncmp(x->comm, y->comm, sizeof(x->comm));
}

static void fd_path(const struct readlat_key *k, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%u/fd/%d", k->pid, k->fd);
	n = readlink(link, buf, len - 1);
	if (n < 0)
		n = snprintf(buf, len, "?");
	buf[n] = '\0';
}

static int report_keyed(struct output *out)
{
	struct hist_extra extra = { .errors = true };
	struct keyed_snapshot snap;
	char path[256];
	int err;

	err = keyed_hist_drain(&keyed, &snap);
	if (err) {
		diag_error("cannot read the per-key histograms: %s", strerror(-err));
		keyed_snapshot_free(&snap);
		return err;
	}
	/* Reads of this interval that found the map full are in no key. */
	extra.lost = (long long)__atomic_exchange_n(&skel->bss->hist_lost_keys, 0, __ATOMIC_RELAXED);
	keyed_sort(&snap, by_pid_fd);
	for (size_t i = 0; i < snap.n; i++) {
		const struct readlat_key *k = keyed_key(&snap, i);
		char comm[FILTER_COMM_LEN + 1] = {};
		struct key_field key[4] = {
			KEY_UINT("pid", k->pid),
			KEY_STRING("comm", comm),
			KEY_INT("fd", k->fd),
			KEY_STRING("path", path),
		};

		memcpy(comm, k->comm, sizeof(k->comm));
		if (opt.mode == READLAT_PER_FD)
			fd_path(k, path, sizeof(path));
		output_hist(out, key, opt.mode == READLAT_PER_FD ? 4 : 2, keyed_value(&snap, i), &extra);
	}
	keyed_snapshot_free(&snap);
	if (extra.lost && !out->json)
		diag_error("%lld reads not counted: more than %d processes/files in one interval",
			   extra.lost, READLAT_MAX_KEYS);
	return 0;
}

static int report(struct output *out)
{
	const struct hist_extra extra = { .errors = true, .lost = -1 };
	struct hist h;

	if (opt.mode == READLAT_PER_PROCESS || opt.mode == READLAT_PER_FD)
		return report_keyed(out);
	if (opt.mode == READLAT_SLOWER)
		return 0;
	hist_drain(&skel->bss->hist, &h);
	output_hist(out, NULL, 0, &h, &extra);
	return 0;
}

static void finish(struct output *out)
{
	const struct readlat_totals *t = &skel->bss->totals;
	struct json j;

	if (opt.mode != READLAT_SLOWER)
		return;
	ring_buffer__consume(rb);
	if (!out->json) {
		fprintf(stderr, "%llu of %llu reads took %g usecs or longer; %llu failed; %llu lost\n",
			(unsigned long long)t->slower, (unsigned long long)t->reads, opt.slower_us,
			(unsigned long long)t->errors, (unsigned long long)t->lost);
		return;
	}
	output_now(out);
	output_json_begin(out, &j);
	json_u64(&j, "reads", t->reads);
	json_u64(&j, "slower", t->slower);
	json_u64(&j, "errors", t->errors);
	json_u64(&j, "lost", t->lost);
	json_end(&j);
}

static void close_bpf(void)
{
	ring_buffer__free(rb);
	readlat_bpf__destroy(skel);
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
	       "  readlat -s read,pread64,readv,preadv  # the read family\n",
	.banner = "Tracing read() syscalls",
	.shared = SHARED_FILTERS | SHARED_UNITS,
	.options = options,
	.parse = parse,
	.probes = probes,
	.nprobes = sizeof(probes) / sizeof(probes[0]),
	.wants = wants,
	.features = features,
	.open = open_bpf,
	.loaded = loaded,
	.events = events,
	.report = report,
	.finish = finish,
	.close = close_bpf,
};

int main(int argc, char **argv)
{
	return tool_run(&readlat, argc, argv);
}
