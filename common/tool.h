/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a tool declares; common/runtime.c runs it. A tool owns its options,
 * its probe chain, its BPF skeleton and how it names and renders its keys;
 * option conventions, lifecycle, diagnostics and output live in common/.
 */
#ifndef COMMON_TOOL_H
#define COMMON_TOOL_H

#include <argp.h>
#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "filter.h"
#include "hist_layout.h"
#include "output.h"

struct bpf_object_skeleton;
struct ring_buffer;

/* Groups of shared options a tool takes (DESIGN.md, "Options every tool shares"). */
enum shared_options {
	SHARED_FILTERS = 1 << 0,	/* -p -t -n -c */
	SHARED_UNITS = 1 << 1,		/* -m --ns */
};

/* The shared options, parsed; tools read it, only the runtime writes it. */
struct run_config {
	pid_t pid;			/* -p: 0 = any */
	pid_t tid;			/* -t: 0 = any */
	char comm[FILTER_COMM_LEN];	/* -n: "" = any */
	const char *cgroup;		/* -c: cgroup v2 directory */
	double interval;		/* seconds, 0 = only at the end */
	long count;			/* reports, 0 = until stopped */
	double duration;		/* seconds, 0 = until stopped */
	const char *btf_path;		/* --btf: kernel BTF for CO-RE */
	int probe_kind;			/* --probe: only this enum probe_kind, or -1 */
	bool timestamp, json, check, verbose, self_cost;
	enum hist_unit unit;
	char err[256];			/* a usage error, for the user */
};

enum probe_kind {
	PROBE_TRACEPOINT,	/* target "category/name" */
	PROBE_FENTRY,		/* target: kernel function (BTF trampoline) */
	PROBE_KPROBE,		/* target: kernel function */
	PROBE_RAW_TRACEPOINT,	/* target "category/name": the raw arguments,
				 * no record copy (block_rq_issue's request) */
};

/* One way to observe one event. Probes naming the same event are its
 * alternatives, tried in the order listed: the first available wins. */
struct probe {
	const char *event;
	enum probe_kind kind;
	const char *target;
	const char *prog;	/* program name in the tool's BPF object */
	bool optional;		/* the event may be absent (a syscall this
				 * kernel or architecture lacks): skipped */
};

struct tool {
	const char *name;
	const char *summary;		/* one line, for --help */
	const char *doc;		/* examples, after the options in --help */
	/* "Tracing read, pread64 syscalls", after the options are parsed. */
	const char *(*banner)(void);
	unsigned int shared;		/* enum shared_options */
	bool needs_btf;			/* CO-RE: cannot run without kernel BTF */
	const struct argp_option *options;
	/* One of the tool's own options. Returns 0, ARGP_ERR_UNKNOWN, or
	 * EINVAL after cli_error(). */
	int (*parse)(int key, char *arg, struct run_config *rc);
	/* After all options: cross-checks. Returns 0 or EINVAL after cli_error(). */
	int (*validate)(struct run_config *rc);

	const struct probe *probes;
	int nprobes;
	bool (*wants)(const char *event);	/* NULL: every event */

	/* Decide kernel features (start-time store, ...) and report them
	 * with check_row(). Returns 0 if the tool can run. */
	int (*features)(const struct run_config *rc);
	/* Open the skeleton and set its read-only config; return skel->skeleton
	 * (the runtime loads through it, which maps .bss for user space). */
	struct bpf_object_skeleton *(*open)(const struct run_config *rc);
	/* After load: set up maps and ring buffers. @out is the run's
	 * output, for a tool that prints events as they come. */
	int (*loaded)(const struct run_config *rc, struct output *out);
	/* The tool's ring buffer, if it has one (NULL otherwise): consumed
	 * as data arrives and before each report. */
	struct ring_buffer *(*events)(void);
	/* True if its records are printed as they come (one line each, a
	 * time on each), rather than feeding the interval reports. */
	bool (*streams_events)(void);
	/* Read and clear one interval and render it. */
	int (*report)(struct output *out);
	/* Printed once at the very end (event tools: totals). */
	void (*finish)(struct output *out);
	void (*close)(void);
};

/* In a tool's argp_option flags: the option may be given more than once
 * (each adds to the last). Not one of argp's flags, which it ignores. */
#define OPTION_REPEATABLE 0x1000

/* Record a usage error (one line, exit 2). Returns EINVAL for argp. */
int cli_error(struct run_config *rc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Strict number parsing for options: 0 on success, *out untouched on error.
 * Whole numbers: digits only, 1 and up. Decimals: digits with at most one
 * '.', in min..max; no sign, space, hex, exponent, inf or nan. */
int parse_pid(const char *s, pid_t *out);
int parse_count(const char *s, long *out);
int parse_decimal(const char *s, double min, double max, double *out);

/* The valid interval and --duration, in seconds: under 1 ms a report is
 * all the tool would do; over a year is a typo, not a trace. */
#define SECONDS_MIN 0.001
#define SECONDS_MAX 31536000.0	/* 365 days */

enum cli_result { CLI_RUN, CLI_EXIT_OK, CLI_USAGE };
enum cli_result cli_parse(const struct tool *t, int argc, char **argv, struct run_config *rc);

/* Options for <skeleton>__open_opts(): the --btf file, if any. */
const struct bpf_object_open_opts *tool_open_opts(const struct run_config *rc);

/* Verify, load, attach and run the tool; returns the process exit code. */
int tool_run(const struct tool *t, int argc, char **argv);

/* One row of --check (printed there, and with -v on a normal run). */
enum check_status { CHECK_OK, CHECK_FALLBACK, CHECK_MISSING, CHECK_FAILED };
void check_row(const char *what, enum check_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

#endif /* COMMON_TOOL_H */
