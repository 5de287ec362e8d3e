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
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>
#include "filter.h"
#include "hist_layout.h"
#include "metrics.h"
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
	const char *btf_name;		/* --btf FILE, as given (for messages) */
	int btf_fd;			/* --btf: the file, opened once; else -1 */
	const char *btf_path;		/* --btf: /proc/self/fd/<btf_fd>, for libbpf */
	int probe_kind;			/* --probe: only this enum probe_kind, or -1 */
	bool timestamp, json, check, verbose, self_cost;
	enum output_format output;	/* -o; json is output == OUTPUT_JSON */
	bool label_pid;			/* --label pid */
	/* --label NAME=VALUE; one place is left for --textfile's label */
	struct metrics_label labels[METRICS_MAX_LABELS - 1];
	int nlabels;
	long max_series;		/* --max-series */
	enum hist_unit unit;
	const char *textfile;		/* --textfile PATH, or NULL */
	bool textfile_keep;		/* --textfile-keep: left in place at exit */
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

/* What an option's value is, for shell completion: the words its parser
 * accepts, or where a shell finds candidates. --completion-table prints
 * them (common/completion.c); completion/generate makes the scripts. */
enum value_kind {
	VALUE_NONE,		/* a number or a name: nothing to offer */
	VALUE_WORD,		/* one of the words */
	VALUE_WORD_LIST,	/* words, comma-separated */
	VALUE_PID,		/* a running process */
	VALUE_TID,		/* a running thread */
	VALUE_DISK,		/* a whole disk, as /sys/block lists them */
	VALUE_FILE,		/* a path to a file */
	VALUE_DIR,		/* a path to a directory */
};

/* The words are the table the option's parser reads: words[0..nwords),
 * or, where they are computed, word(i) for i = 0, 1, ... until NULL (""
 * at an index with no word). */
struct option_value {
	int key;			/* the option's key in its argp table */
	enum value_kind kind;
	const char *const *words;
	int nwords;
	const char *(*word)(int i);
};

#define NWORDS(names) (int)(sizeof(names) / sizeof((names)[0]))
#define VALUE_WORDS(k, kind, names) { k, kind, names, NWORDS(names), NULL }

struct tool {
	const char *name;
	const char *summary;		/* one line, for --help */
	const char *doc;		/* examples, after the options in --help */
	/* "Tracing read, pread64 syscalls", after the options are parsed. */
	const char *(*banner)(void);
	unsigned int shared;		/* enum shared_options */
	bool needs_btf;			/* CO-RE: cannot run without kernel BTF */
	/* What the kernel's skipped runs of its programs mean, finish()
	 * says itself (biolat finds the I/Os they cost): the runtime's
	 * line at exit, "events it did not see", is not printed. */
	bool tells_skipped_runs;
	const struct argp_option *options;
	/* What its options' values are, for completion; ends with { 0 }. */
	const struct option_value *values;
	/* One of the tool's own options. Returns 0, ARGP_ERR_UNKNOWN, or
	 * EINVAL after cli_error(). */
	int (*parse)(int key, char *arg, struct run_config *rc);
	/* After all options: cross-checks. Returns 0 or EINVAL after cli_error(). */
	int (*validate)(struct run_config *rc);

	/* Its metrics (--output openmetrics): what its histograms measure
	 * and, NULL for <tool>_errors_total, what their errors count. A mode
	 * that measures something else (biolat --size) sets out->hist_family
	 * in loaded(). */
	const struct metric_family *hist_family;
	const struct metric_family *errors_family;

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
/* @arg's index in names[0..n), or -1 after a usage error "invalid @what
 * '@arg': expected a, b or c". */
int parse_word(const char *arg, const char *const *names, int n, const char *what,
	       struct run_config *rc);
/* "a, b or c" into @buf. */
void word_list(const char *const *names, int n, char *buf, size_t len);

/* --completion-table: every option in @opts that --help shows, with what
 * its value is (@values, then @shared), one per line, for completion/generate. */
void completion_table(FILE *f, const struct argp_option *opts, const struct option_value *values,
		      const struct option_value *shared);

/* The valid interval and --duration, in seconds: under 1 ms a report is
 * all the tool would do; over a year is a typo, not a trace. Below
 * DRAIN_GATED_BELOW a report needs no RCU grace period (bpf/interval.bpf.h),
 * so 1 ms is kept where the report itself fits in it; ticks it cannot keep
 * are counted ("skipped", common/runtime.c), never silently dropped. */
#define SECONDS_MIN 0.001
#define SECONDS_MAX 31536000.0	/* 365 days */
/* With --textfile and no interval given: a report for each of Prometheus'
 * usual 15 s scrapes, until stopped. */
#define TEXTFILE_INTERVAL 15.0

/* CLI_FAILED: no memory to parse with (rc->err says so), exit 1. */
enum cli_result { CLI_RUN, CLI_EXIT_OK, CLI_USAGE, CLI_FAILED };
enum cli_result cli_parse(const struct tool *t, int argc, char **argv, struct run_config *rc);
/* The tool's name as it was run: "tt-opensnoop" for a binary installed
 * with a prefix (make install APP_PREFIX=tt-), else its own name. For
 * messages, usage and --version; metric names keep the tool's. */
const char *cli_display_name(const struct tool *t, const char *argv0);

/* Where kernel types come from, for messages: "--btf FILE" or "kernel BTF". */
const char *btf_source(const struct run_config *rc);

/* Each tool's programs are built twice: as written, and with
 * BPF_NO_ATOMICS (no atomic operation but add, nor any helper or program
 * feature after 5.10). The second are loaded where this kernel's BPF has
 * no atomics but add, or where the tool asked for them in its features()
 * (tool_use_noatomics(); tool_noatomics() tells which are loaded).
 * tool_elf_bytes() gives the chosen object's bytes, @bytes or
 * @noatomics: each tool's skeleton calls it as it opens (bpf/skeleton.sh). */
void tool_use_noatomics(void);
bool tool_noatomics(void);
const void *tool_elf_bytes(const void *(*bytes)(size_t *sz), const void *(*noatomics)(size_t *sz),
			   size_t *sz);

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
