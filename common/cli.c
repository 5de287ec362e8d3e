// SPDX-License-Identifier: GPL-2.0-only
/* The shared command line: libbpf-tools letters, long names, strict values. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "tool.h"

#ifndef TOOLS_VERSION
#define TOOLS_VERSION "0.0"
#endif

enum {
	OPT_DURATION = 0x1000,
	OPT_CHECK,
	OPT_SELF_COST,
	OPT_NS,
	OPT_BTF,
	OPT_PROBE,
};

#define MAX_OPTIONS 64

static const struct argp_option shared_filters[] = {
	{ "pid", 'p', "PID", 0, "Trace this process only (all its threads)", 1 },
	{ "tid", 't', "TID", 0, "Trace this thread only", 1 },
	{ "name", 'n', "COMM", 0, "Trace threads with this command name only", 1 },
	{ "cgroup", 'c', "PATH", 0, "Trace processes in this cgroup v2 (and below) only", 1 },
	{},
};

static const struct argp_option shared_units[] = {
	{ "milliseconds", 'm', NULL, 0, "Millisecond histogram", 3 },
	{ "ns", OPT_NS, NULL, 0, "Nanosecond histogram", 3 },
	{},
};

static const struct argp_option shared_always[] = {
	{ "duration", OPT_DURATION, "SECONDS", 0, "Trace for this long, then print and exit", 2 },
	{ "timestamp", 'T', NULL, 0, "Timestamp each report", 3 },
	{ "json", 'j', NULL, 0, "Newline-delimited JSON output", 3 },
	{ "btf", OPT_BTF, "FILE", 0, "Kernel BTF to use where /sys/kernel/btf/vmlinux is missing", 4 },
	{ "probe", OPT_PROBE, "KIND", 0,
	  "Use only probes of this kind: tracepoint, fentry or kprobe (default: the best available)", 4 },
	{ "check", OPT_CHECK, NULL, 0, "Check the environment and every probe, then exit", 4 },
	{ "verbose", 'v', NULL, 0, "Show libbpf's log and the probes chosen", 4 },
	{ "self-cost", OPT_SELF_COST, NULL, 0,
	  "Measure and print this tool's own BPF run time at exit (adds ~100 ns per event while on)", 4 },
	{ "help", 'h', NULL, 0, "Show this help", -1 },
	{ "version", 'V', NULL, 0, "Show the version", -1 },
	{},
};

struct cli_state {
	const struct tool *tool;
	struct run_config *rc;
	const struct argp_option *opts;
	int positional;
	bool given[MAX_OPTIONS];	/* by index in opts */
	bool exit_ok;		/* -h or -V: printed, exit 0 */
};

int cli_error(struct run_config *rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rc->err, sizeof(rc->err), fmt, ap);
	va_end(ap);
	return EINVAL;
}

/* A whole number in 1..max, nothing around it (strtol would skip spaces). */
static int parse_whole(const char *s, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > max || *s == '+' || isspace((unsigned char)*s))
		return -1;
	*out = v;
	return 0;
}

int parse_pid(const char *s, pid_t *out)
{
	long v;

	if (parse_whole(s, INT_MAX, &v))
		return -1;
	*out = (pid_t)v;
	return 0;
}

int parse_count(const char *s, long *out)
{
	return parse_whole(s, LONG_MAX, out);
}

int parse_decimal(const char *s, double min, double max, double *out)
{
	size_t digits = strspn(s, "0123456789");
	size_t fraction = 0;
	double v;

	if (s[digits] == '.')
		fraction = strspn(s + digits + 1, "0123456789");
	if (digits + fraction == 0 || s[digits + (s[digits] == '.') + fraction])
		return -1;
	/* only digits and one '.' are left, so strtod cannot wander */
	errno = 0;
	v = strtod(s, NULL);
	if (errno || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_seconds(const char *what, const char *arg, double *out, struct run_config *rc)
{
	if (parse_decimal(arg, SECONDS_MIN, SECONDS_MAX, out))
		return cli_error(rc, "invalid %s '%s': expected seconds from %.10g to %.10g (%.10g days)",
				 what, arg, SECONDS_MIN, SECONDS_MAX, SECONDS_MAX / 86400);
	return 0;
}

/* Raw BTF (/sys/kernel/btf/vmlinux) or ELF with a .BTF section: what
 * libbpf takes as btf_custom_path. Checked now, not at load time. */
static int check_btf_file(const char *path, struct run_config *rc)
{
	libbpf_print_fn_t print;
	struct stat sb;
	struct btf *btf;

	if (access(path, R_OK) || stat(path, &sb))
		return cli_error(rc, "cannot read BTF file '%s': %s", path, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return cli_error(rc, "%s is not a BTF file (not a regular file)", path);
	print = libbpf_set_print(NULL);	/* its warnings would be more lines */
	btf = btf__parse(path, NULL);
	libbpf_set_print(print);
	if (!btf)	/* libbpf's reasons (ENOENT for no .BTF section) would mislead */
		return cli_error(rc, "%s is not a BTF file (neither raw BTF nor ELF with a .BTF section)",
				 path);
	btf__free(btf);
	return 0;
}

static int parse_shared(int key, char *arg, struct cli_state *st)
{
	struct run_config *rc = st->rc;

	switch (key) {
	case 'p':
		if (parse_pid(arg, &rc->pid))
			return cli_error(rc, "invalid PID '%s': expected a positive integer", arg);
		return 0;
	case 't':
		if (parse_pid(arg, &rc->tid))
			return cli_error(rc, "invalid TID '%s': expected a positive integer", arg);
		return 0;
	case 'n':
		if (!*arg || strlen(arg) >= FILTER_COMM_LEN)
			return cli_error(rc, "invalid name '%s': expected 1 to %d characters",
					 arg, FILTER_COMM_LEN - 1);
		strcpy(rc->comm, arg);
		return 0;
	case 'c':
		if (!*arg)
			return cli_error(rc, "invalid cgroup '': expected a cgroup v2 directory");
		rc->cgroup = arg;
		return 0;
	case OPT_DURATION:
		return parse_seconds("duration", arg, &rc->duration, rc);
	case 'm':
	case OPT_NS:
		if (rc->unit != UNIT_USECS && rc->unit != (key == 'm' ? UNIT_MSECS : UNIT_NSECS))
			return cli_error(rc, "-m and --ns cannot be combined");
		rc->unit = key == 'm' ? UNIT_MSECS : UNIT_NSECS;
		return 0;
	case OPT_BTF:
		if (check_btf_file(arg, rc))
			return EINVAL;
		rc->btf_path = arg;
		return 0;
	case OPT_PROBE:
		if (!strcmp(arg, "tracepoint"))
			rc->probe_kind = PROBE_TRACEPOINT;
		else if (!strcmp(arg, "fentry"))
			rc->probe_kind = PROBE_FENTRY;
		else if (!strcmp(arg, "kprobe"))
			rc->probe_kind = PROBE_KPROBE;
		else
			return cli_error(rc, "invalid probe kind '%s': expected tracepoint, fentry or kprobe", arg);
		return 0;
	case 'T': rc->timestamp = true; return 0;
	case 'j': rc->json = true; return 0;
	case OPT_CHECK: rc->check = true; return 0;
	case 'v': rc->verbose = true; return 0;
	case OPT_SELF_COST: rc->self_cost = true; return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

static int parse_positional(char *arg, struct cli_state *st)
{
	struct run_config *rc = st->rc;

	switch (st->positional++) {
	case 0:
		return parse_seconds("interval", arg, &rc->interval, rc);
	case 1:
		if (parse_count(arg, &rc->count))
			return cli_error(rc, "invalid count '%s': expected a positive integer", arg);
		return 0;
	}
	return cli_error(rc, "unexpected argument '%s'", arg);
}

static const struct argp_option *find_option(const struct argp_option *opts, int key)
{
	for (const struct argp_option *o = opts; o->name || o->key; o++)
		if (o->key == key)
			return o;
	return NULL;
}

/* What is wrong with one command-line word, if anything (false: nothing). */
static bool word_problem(struct cli_state *st, const char *word)
{
	const struct argp_option *o;
	size_t len;

	if (word[0] != '-' || !word[1])
		return false;
	if (word[1] == '.' || (word[1] >= '0' && word[1] <= '9')) {
		cli_error(st->rc, "invalid interval or count '%s': expected a positive number", word);
		return true;
	}
	if (word[1] != '-') {
		for (const char *c = word + 1; *c; c++) {
			o = find_option(st->opts, *c);
			if (!o) {
				cli_error(st->rc, "unknown option '-%c'", *c);
				return true;
			}
			if (o->arg && c[1])
				return false;	/* the rest of the word is its argument */
			if (o->arg) {
				cli_error(st->rc, "option '-%c' needs an argument", *c);
				return true;
			}
		}
		return false;
	}
	len = strcspn(word + 2, "=");
	for (o = st->opts; o->name || o->key; o++) {
		if (!o->name || strncmp(o->name, word + 2, len) || o->name[len])
			continue;
		if (o->arg && !word[2 + len])
			cli_error(st->rc, "option '--%s' needs an argument", o->name);
		else if (!o->arg && word[2 + len])
			cli_error(st->rc, "option '--%s' takes no argument", o->name);
		else
			return false;
		return true;
	}
	cli_error(st->rc, "unknown option '%.*s'", (int)len + 2, word);
	return true;
}

/* An option with a value given again: which one counts would be a guess. */
static int given_twice(struct cli_state *st, int key)
{
	const struct argp_option *o = find_option(st->opts, key);

	if (!o || !o->arg || (o->flags & OPTION_REPEATABLE))
		return 0;
	if (!st->given[o - st->opts]) {
		st->given[o - st->opts] = true;
		return 0;
	}
	if (key > 0 && key < 128 && isalnum(key))
		return cli_error(st->rc, "option '-%c' given twice", key);
	return cli_error(st->rc, "option '--%s' given twice", o->name);
}

/* Name what getopt rejected. It has moved past the bad word, or not yet
 * (a bad letter inside a group), so look at the word before and at. */
static void explain_bad_option(struct cli_state *st, struct argp_state *state)
{
	if (state->next > 0 && word_problem(st, state->argv[state->next - 1]))
		return;
	if (state->next < state->argc && word_problem(st, state->argv[state->next]))
		return;
	cli_error(st->rc, "invalid command line near '%s'",
		  state->argv[state->next < state->argc ? state->next : state->argc - 1]);
}

/* argp stops at the first non-zero return; -h and -V stop it on purpose. */
static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct cli_state *st = state->input;
	int err;

	switch (key) {
	case 'h':
		/* argp_state_help() prints nothing under ARGP_NO_ERRS */
		argp_help(state->root_argp, stdout, ARGP_HELP_STD_HELP, (char *)st->tool->name);
		st->exit_ok = true;
		return EINVAL;
	case 'V':
		printf("%s %s\n", st->tool->name, TOOLS_VERSION);
		st->exit_ok = true;
		return EINVAL;
	case ARGP_KEY_ERROR:
		if (!st->exit_ok && !st->rc->err[0])
			explain_bad_option(st, state);
		return 0;
	case ARGP_KEY_ARG:
		err = parse_positional(arg, st);
		break;
	default:
		err = given_twice(st, key);
		if (!err)
			err = parse_shared(key, arg, st);
		if (err == ARGP_ERR_UNKNOWN && st->tool->parse)
			err = st->tool->parse(key, arg, st->rc);
		if (err == ARGP_ERR_UNKNOWN)
			return err;
	}
	return err ? EINVAL : 0;
}

static int append(struct argp_option *dst, int n, const struct argp_option *src)
{
	for (; src && (src->name || src->key); src++)
		if (n < MAX_OPTIONS - 1)
			dst[n++] = *src;
	return n;
}

static int validate_shared(struct run_config *rc)
{
	if (rc->pid && rc->tid)
		return cli_error(rc, "-p and -t cannot be combined: -t alone selects one thread");
	if (rc->interval && rc->duration)
		return cli_error(rc, "an interval and --duration cannot be combined");
	return 0;
}

enum cli_result cli_parse(const struct tool *t, int argc, char **argv, struct run_config *rc)
{
	static struct argp_option opts[MAX_OPTIONS];
	struct cli_state st = { .tool = t, .rc = rc, .opts = opts };
	char doc[1024];
	struct argp argp = {
		.options = opts,
		.parser = parse_opt,
		.args_doc = "[interval [count]]",
		.doc = doc,
	};
	int n = 0, err;

	memset(rc, 0, sizeof(*rc));
	rc->unit = UNIT_USECS;
	rc->probe_kind = -1;
	memset(opts, 0, sizeof(opts));
	n = append(opts, n, t->options);
	if (t->shared & SHARED_FILTERS)
		n = append(opts, n, shared_filters);
	if (t->shared & SHARED_UNITS)
		n = append(opts, n, shared_units);
	append(opts, n, shared_always);
	/* argp prints the text after \v below the options */
	snprintf(doc, sizeof(doc), "%s\v%s", t->summary, t->doc ? t->doc : "");

	err = argp_parse(&argp, argc, argv, ARGP_NO_ERRS | ARGP_NO_HELP | ARGP_IN_ORDER, NULL, &st);
	if (st.exit_ok)
		return CLI_EXIT_OK;
	if (!err && !rc->err[0]) {
		validate_shared(rc);
		if (!rc->err[0] && t->validate)
			t->validate(rc);
	}
	if (err && !rc->err[0])
		cli_error(rc, "invalid command line");
	return rc->err[0] ? CLI_USAGE : CLI_RUN;
}
