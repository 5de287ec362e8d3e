// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for the shared command line, common/cli.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/btf.h>
#include <bpf/libbpf_version.h>
#include "tool.h"
#include "version.h"
#include "capture.h"
#include "checks.h"

#ifndef TOOLS_VERSION
#define TOOLS_VERSION "0.0"
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_ARGS 16

/* ---- a minimal tool ------------------------------------------------- */

#define OPT_MIN 'L'

static long tool_min;
static bool tool_saw_shared;

static int t_parse(int key, char *arg, struct run_config *rc)
{
	if (key == 'p' || key == 't' || key == 'm' || key == 'j' ||
	    (key >= 0x1000 && key < 0x1000000)) /* shared long-only options, not ARGP_KEY_* */
		tool_saw_shared = true;
	if (key != OPT_MIN)
		return ARGP_ERR_UNKNOWN;
	if (parse_count(arg, &tool_min))
		return cli_error(rc, "invalid minimum '%s'", arg);
	return 0;
}

static int t_validate(struct run_config *rc)
{
	if (tool_min > 1000 && rc->unit == UNIT_MSECS)
		return cli_error(rc, "minimum too large for -m");
	return 0;
}

static const struct argp_option t_options[] = {
	{ "min", OPT_MIN, "USECS", 0, "Only latencies of at least USECS", 0 },
	{},
};

static const struct tool tool_full = {
	.name = "t",
	.summary = "Summarise test latencies as a histogram.",
	.doc = "EXAMPLES:\n  t -p 1",
	.shared = SHARED_FILTERS | SHARED_UNITS,
	.options = t_options,
	.parse = t_parse,
	.validate = t_validate,
};

/* No shared filters or units, no options of its own. */
static const struct tool tool_bare = {
	.name = "t",
	.summary = "A bare tool.",
};

/* Options whose values the completion names: words, one hidden option. */
#define OPT_KIND 'k'
#define OPT_SECRET 's'

static const char *const kind_names[] = { "alpha", "beta", "gamma" };

static const struct argp_option w_options[] = {
	{ "kind", OPT_KIND, "KIND", 0, "Of this kind:\tone of three\nsecond line", 0 },
	{ "secret", OPT_SECRET, NULL, OPTION_HIDDEN, "Not for users", 0 },
	{},
};

static const struct option_value w_values[] = {
	VALUE_WORDS(OPT_KIND, VALUE_WORD, kind_names),
	{ 0 },
};

static int w_parse(int key, char *arg, struct run_config *rc)
{
	if (key == OPT_KIND)
		return parse_word(arg, kind_names, NWORDS(kind_names), "kind", rc) < 0 ? EINVAL : 0;
	return key == OPT_SECRET ? 0 : ARGP_ERR_UNKNOWN;
}

static const struct tool tool_words = {
	.name = "t",
	.summary = "A tool with word values.",
	.shared = SHARED_FILTERS,
	.options = w_options,
	.values = w_values,
	.parse = w_parse,
};

/* ---- running cli_parse ---------------------------------------------- */

static char arg_store[MAX_ARGS][256];
static char *argv_store[MAX_ARGS + 1];
static struct run_config rc;
static char stdout_text[8192];

/* cli_parse(t, {"t", args..., NULL}) on fresh writable strings; what it
 * writes to stdout lands in stdout_text. */
static enum cli_result run_argv(const struct tool *t, const char *const *args)
{
	struct capture c;
	int argc = 0;
	enum cli_result r;

	strcpy(arg_store[argc], "t");
	argv_store[argc] = arg_store[argc];
	argc++;
	for (; *args; args++, argc++) {
		assert_true(argc < MAX_ARGS);
		assert_true(strlen(*args) < sizeof(arg_store[0]));
		strcpy(arg_store[argc], *args);
		argv_store[argc] = arg_store[argc];
	}
	argv_store[argc] = NULL;

	tool_min = 0;
	tool_saw_shared = false;
	memset(&rc, 0x5a, sizeof(rc)); /* cli_parse must reset everything */

	capture_begin(&c, STDOUT_FILENO);
	r = cli_parse(t, argc, argv_store, &rc);
	capture_end(&c, stdout_text, sizeof(stdout_text));
	return r;
}

#define RUN(t, ...) run_argv((t), (const char *const[]){ __VA_ARGS__, NULL })
#define RUN0(t) run_argv((t), (const char *const[]){ NULL })

/* A usage error whose message holds every one of the given words. */
static void expect_usage(enum cli_result r, const char *const *words)
{
	if (r != CLI_USAGE)
		fail_msg("expected CLI_USAGE, got %d (err \"%s\")", r, rc.err);
	assert_true(rc.err[0] != '\0');
	assert_null(strchr(rc.err, '\n'));
	for (; *words; words++)
		if (!strstr(rc.err, *words))
			fail_msg("\"%s\" missing from error \"%s\"", *words, rc.err);
	/* nothing printed: the caller prints rc.err */
	assert_string_equal(stdout_text, "");
}

#define USAGE(r, ...) expect_usage((r), (const char *const[]){ __VA_ARGS__, NULL })

static void expect_run(enum cli_result r)
{
	if (r != CLI_RUN)
		fail_msg("expected CLI_RUN, got %d (err \"%s\")", r, rc.err);
	assert_string_equal(rc.err, "");
	assert_string_equal(stdout_text, "");
}

/* ---- the tests ------------------------------------------------------ */

static void test_defaults(void **state)
{
	(void)state;
	expect_run(RUN0(&tool_full));
	assert_int_equal(rc.pid, 0);
	assert_int_equal(rc.tid, 0);
	assert_string_equal(rc.comm, "");
	assert_null(rc.cgroup);
	assert_true(rc.interval == 0);
	assert_int_equal(rc.count, 0);
	assert_true(rc.duration == 0);
	assert_null(rc.btf_path);
	assert_null(rc.btf_name);
	assert_int_equal(rc.btf_fd, -1);
	assert_false(rc.timestamp || rc.json || rc.check || rc.verbose || rc.self_cost);
	assert_int_equal(rc.unit, UNIT_USECS);
	assert_int_equal(tool_min, 0);
}

static void test_pid(void **state)
{
	(void)state;
	expect_run(RUN(&tool_full, "-p", "123"));
	assert_int_equal(rc.pid, 123);
	expect_run(RUN(&tool_full, "-p123"));
	assert_int_equal(rc.pid, 123);
	expect_run(RUN(&tool_full, "--pid", "7"));
	assert_int_equal(rc.pid, 7);
	expect_run(RUN(&tool_full, "--pid=2147483647"));
	assert_int_equal(rc.pid, 2147483647);
	expect_run(RUN(&tool_full, "-t", "99"));
	assert_int_equal(rc.tid, 99);
	assert_int_equal(rc.pid, 0);
}

static void test_pid_invalid(void **state)
{
	(void)state;
	USAGE(RUN(&tool_full, "-p", "abc"), "invalid PID", "'abc'");
	USAGE(RUN(&tool_full, "-p", "0"), "invalid PID", "'0'");
	USAGE(RUN(&tool_full, "-p", "-5"), "invalid PID", "'-5'");
	USAGE(RUN(&tool_full, "-p", "12x"), "invalid PID", "'12x'");
	USAGE(RUN(&tool_full, "-p", ""), "invalid PID");
	USAGE(RUN(&tool_full, "-p", "+5"), "invalid PID", "'+5'");
	USAGE(RUN(&tool_full, "-p", " 5"), "invalid PID");
	USAGE(RUN(&tool_full, "-p", "2147483648"), "invalid PID", "2147483648");
	USAGE(RUN(&tool_full, "-p", "99999999999999999999"), "invalid PID");
	USAGE(RUN(&tool_full, "-t", "x"), "invalid TID", "'x'");
	USAGE(RUN(&tool_full, "--tid=0"), "invalid TID", "'0'");
}

static void test_pid_tid_conflict(void **state)
{
	(void)state;
	USAGE(RUN(&tool_full, "-p", "1", "-t", "2"), "-p", "-t", "cannot be combined");
	USAGE(RUN(&tool_full, "-t", "2", "-p", "1"), "cannot be combined");
}

static void test_positional(void **state)
{
	(void)state;
	expect_run(RUN(&tool_full, "1"));
	assert_true(rc.interval == 1);
	assert_int_equal(rc.count, 0);
	expect_run(RUN(&tool_full, "1", "5"));
	assert_true(rc.interval == 1);
	assert_int_equal(rc.count, 5);
	expect_run(RUN(&tool_full, "0.5", "3"));
	assert_true(rc.interval == 0.5);
	assert_int_equal(rc.count, 3);
	/* the ends of the range */
	expect_run(RUN(&tool_full, "0.001"));
	assert_true(rc.interval == SECONDS_MIN);
	expect_run(RUN(&tool_full, "31536000"));
	assert_true(rc.interval == SECONDS_MAX);
	/* options and positionals mix */
	expect_run(RUN(&tool_full, "2", "-m", "10", "-p", "3"));
	assert_true(rc.interval == 2);
	assert_int_equal(rc.count, 10);
	assert_int_equal(rc.unit, UNIT_MSECS);
	assert_int_equal(rc.pid, 3);
}

static void test_positional_invalid(void **state)
{
	(void)state;
	USAGE(RUN(&tool_full, "0"), "invalid interval", "'0'");
	USAGE(RUN(&tool_full, "-1"), "invalid interval", "'-1'");
	USAGE(RUN(&tool_full, "--", "-1"), "invalid interval", "'-1'");
	USAGE(RUN(&tool_full, "abc"), "invalid interval", "'abc'");
	USAGE(RUN(&tool_full, "1s"), "invalid interval", "'1s'");
	USAGE(RUN(&tool_full, "inf"), "invalid interval", "'inf'");
	USAGE(RUN(&tool_full, "nan"), "invalid interval", "'nan'");
	USAGE(RUN(&tool_full, "1e300"), "invalid interval", "'1e300'", "0.001 to 31536000");
	USAGE(RUN(&tool_full, "0.0000001"), "invalid interval", "0.001 to 31536000");
	USAGE(RUN(&tool_full, "0.0009"), "invalid interval", "0.001 to 31536000");
	USAGE(RUN(&tool_full, "31536000.5"), "invalid interval", "0.001 to 31536000");
	USAGE(RUN(&tool_full, "0x10"), "invalid interval", "'0x10'");
	USAGE(RUN(&tool_full, " 5"), "invalid interval", "' 5'");
	USAGE(RUN(&tool_full, "1", "0"), "invalid count", "'0'");
	USAGE(RUN(&tool_full, "1", "-1"), "invalid", "'-1'");
	USAGE(RUN(&tool_full, "1", "2.5"), "invalid count", "'2.5'");
	USAGE(RUN(&tool_full, "1", "x"), "invalid count", "'x'");
	USAGE(RUN(&tool_full, "1", "5", "3"), "unexpected argument", "'3'");
}

static void test_unknown_options(void **state)
{
	(void)state;
	USAGE(RUN(&tool_full, "--bogus"), "unknown option", "--bogus");
	USAGE(RUN(&tool_full, "--bogus=3"), "unknown option", "--bogus");
	USAGE(RUN(&tool_full, "-x"), "unknown option", "-x");
	USAGE(RUN(&tool_full, "1", "-x"), "unknown option", "-x");
	USAGE(RUN(&tool_full, "-m", "-x"), "unknown option", "-x");
	/* the shared filters exist only where the tool asks for them */
	USAGE(RUN(&tool_bare, "-p", "1"), "unknown option", "-p");
	USAGE(RUN(&tool_bare, "-m"), "unknown option", "-m");
	USAGE(RUN(&tool_bare, "--ns"), "unknown option", "--ns");
	USAGE(RUN(&tool_bare, "--min=3"), "unknown option", "--min");
}

static void test_missing_argument(void **state)
{
	(void)state;
	USAGE(RUN(&tool_full, "-p"), "-p", "needs an argument");
	USAGE(RUN(&tool_full, "-m", "-p"), "-p", "needs an argument");
	USAGE(RUN(&tool_full, "--pid"), "--pid", "needs an argument");
	USAGE(RUN(&tool_full, "-n"), "-n", "needs an argument");
	USAGE(RUN(&tool_full, "--duration"), "--duration", "needs an argument");
	USAGE(RUN(&tool_full, "-L"), "-L", "needs an argument");
	USAGE(RUN(&tool_full, "--min"), "--min", "needs an argument");
	USAGE(RUN(&tool_full, "--ns=3"), "--ns", "takes no argument");
	USAGE(RUN(&tool_full, "--json=yes"), "--json", "takes no argument");
}

/* cli.o's build says how it is linked; the test program runs with the
 * libbpf it was built with. */
#define STR(x) #x
#define XSTR(x) STR(x)
#if TOOLS_STATIC
#define LINKED "static"
#else
#define LINKED "dynamic"
#endif
#define VERSION_TEXT "t " TOOLS_VERSION "\n" LINKED ", libbpf " \
	XSTR(LIBBPF_MAJOR_VERSION) "." XSTR(LIBBPF_MINOR_VERSION) "\n"

static void test_help_version(void **state)
{
	(void)state;
	assert_int_equal(RUN(&tool_full, "-h"), CLI_EXIT_OK);
	assert_string_equal(rc.err, "");
	assert_int_equal(RUN(&tool_full, "--help"), CLI_EXIT_OK);
	assert_string_equal(rc.err, "");
	/* help wins over what follows */
	assert_int_equal(RUN(&tool_full, "-h", "--bogus"), CLI_EXIT_OK);
	assert_int_equal(RUN(&tool_full, "-h", "-p", "1", "-t", "2"), CLI_EXIT_OK);
	assert_int_equal(RUN(&tool_bare, "-h"), CLI_EXIT_OK);
	assert_null(strstr(stdout_text, "--pid"));
	/* but not over an error before it */
	USAGE(RUN(&tool_full, "-p", "x", "-h"), "invalid PID");

	assert_int_equal(RUN(&tool_full, "-V"), CLI_EXIT_OK);
	assert_string_equal(stdout_text, VERSION_TEXT);
	assert_string_equal(rc.err, "");
	assert_int_equal(RUN(&tool_full, "--version"), CLI_EXIT_OK);
	assert_string_equal(stdout_text, VERSION_TEXT);
}

/* --completion-table: each option --help shows, what its value is, and
 * the words the parser takes (completion/generate reads it). */
static void test_completion_table(void **state)
{
	static const char *const want[] = {
		"option\tk\tkind\tKIND\tword\tOf this kind: one of three\n",
		"word\tk\tkind\talpha\nword\tk\tkind\tbeta\nword\tk\tkind\tgamma\n",
		"option\tp\tpid\tPID\tpid\t",
		"option\tt\ttid\tTID\ttid\t",
		"option\tc\tcgroup\tPATH\tdir\t",
		"option\t-\tduration\tSECONDS\tnone\t",
		"option\tj\tjson\t-\tflag\t",
		"word\to\toutput\ttext\nword\to\toutput\tjson\nword\to\toutput\topenmetrics\n",
		"word\t-\tprobe\tkprobe\n",
		"option\t-\tbtf\tFILE\tfile\t",
		"option\th\thelp\t-\tflag\t",
	};

	(void)state;
	assert_int_equal(RUN(&tool_words, "--completion-table"), CLI_EXIT_OK);
	assert_string_equal(rc.err, "");
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		CHECK(strstr(stdout_text, want[i]), "the table lacks \"%s\" (stdout: \"%s\")",
		      want[i], stdout_text);
	CHECKS_END();
	assert_null(strstr(stdout_text, "secret"));
	assert_null(strstr(stdout_text, "completion-table"));
	assert_null(strstr(stdout_text, "second line"));
	/* and the words are what the parser takes */
	expect_run(RUN(&tool_words, "--kind", "beta"));
	USAGE(RUN(&tool_words, "--kind", "delta"), "invalid kind 'delta': expected alpha, beta or gamma");
	/* a tool without the shared filters has none in its table */
	assert_int_equal(RUN(&tool_bare, "--completion-table"), CLI_EXIT_OK);
	assert_null(strstr(stdout_text, "option\tp\tpid\t"));
	assert_non_null(strstr(stdout_text, "\toutput\t"));
	/* and --help does not show it */
	assert_int_equal(RUN(&tool_words, "--help"), CLI_EXIT_OK);
	assert_null(strstr(stdout_text, "completion-table"));
}

/*
 * Regression (was a bug): -h prints nothing. parse_opt() calls argp_state_help(), which
 * glibc makes a no-op when the parse has ARGP_NO_ERRS, and cli_parse()
 * passes ARGP_NO_ERRS.
 */
static void test_help_text(void **state)
{
	static const char *want[] = {
		"Usage: t", "Summarise test latencies as a histogram.", "--pid=PID",
		"--min=USECS", "--milliseconds", "--duration=SECONDS", "EXAMPLES:",
	};

	(void)state;
	assert_int_equal(RUN(&tool_full, "-h"), CLI_EXIT_OK);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		CHECK(strstr(stdout_text, want[i]), "-h output lacks \"%s\" (stdout: \"%s\")",
			  want[i], stdout_text);
	CHECKS_END();
}

static void test_units(void **state)
{
	(void)state;
	expect_run(RUN(&tool_full, "-m"));
	assert_int_equal(rc.unit, UNIT_MSECS);
	expect_run(RUN(&tool_full, "--milliseconds"));
	assert_int_equal(rc.unit, UNIT_MSECS);
	expect_run(RUN(&tool_full, "--ns"));
	assert_int_equal(rc.unit, UNIT_NSECS);
	expect_run(RUN0(&tool_full));
	assert_int_equal(rc.unit, UNIT_USECS);
	/* the same unit twice is no conflict */
	expect_run(RUN(&tool_full, "-m", "--milliseconds"));
	assert_int_equal(rc.unit, UNIT_MSECS);
	expect_run(RUN(&tool_full, "--ns", "--ns"));
	assert_int_equal(rc.unit, UNIT_NSECS);
}

static void test_units_conflict(void **state)
{
	(void)state;
	USAGE(RUN(&tool_full, "-m", "--ns"), "-m", "--ns", "cannot be combined");
	USAGE(RUN(&tool_full, "--ns", "-m"), "-m", "--ns", "cannot be combined");
	USAGE(RUN(&tool_full, "--ns", "--milliseconds"), "cannot be combined");
}

/* An option with a value given twice: neither silently wins. */
static void test_given_twice(void **state)
{
	static const struct {
		const char *args[5];
		const char *want;
	} cases[] = {
		{ { "-p", "1", "-p", "2" }, "option '-p' given twice" },
		{ { "-p", "1", "--pid=1" }, "option '-p' given twice" },
		{ { "-t", "1", "-t", "2" }, "option '-t' given twice" },
		{ { "-n", "a", "-n", "b" }, "option '-n' given twice" },
		{ { "-na", "--name", "b" }, "option '-n' given twice" },
		{ { "-c", "/a", "-c", "/b" }, "option '-c' given twice" },
		{ { "--duration", "1", "--duration", "2" }, "option '--duration' given twice" },
		{ { "--btf", "/nonexistent", "--btf", "/x" }, "cannot read BTF file" }, /* first error */
		{ { "--probe", "kprobe", "--probe", "fentry" }, "option '--probe' given twice" },
		{ { "-L", "1", "--min=2" }, "option '-L' given twice" }, /* a tool's own too */
		{ { "-p", "1", "-p", "x" }, "option '-p' given twice" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		enum cli_result r = run_argv(&tool_full, cases[i].args);

		CHECK(r == CLI_USAGE && strstr(rc.err, cases[i].want),
		      "%s %s ...: got %d \"%s\", want \"%s\"", cases[i].args[0],
		      cases[i].args[1], r, rc.err, cases[i].want);
	}
	CHECKS_END();
	/* flags may repeat */
	expect_run(RUN(&tool_full, "-j", "-j", "-v", "--verbose", "-T", "-T"));
}

static void test_duration(void **state)
{
	(void)state;
	expect_run(RUN(&tool_full, "--duration", "2.5"));
	assert_true(rc.duration == 2.5);
	expect_run(RUN(&tool_full, "--duration=10"));
	assert_true(rc.duration == 10);
	USAGE(RUN(&tool_full, "--duration", "0"), "invalid duration", "'0'");
	USAGE(RUN(&tool_full, "--duration", "-1"), "invalid duration", "'-1'");
	USAGE(RUN(&tool_full, "--duration", "abc"), "invalid duration", "'abc'");
	/* the same range as the interval, stated in the message */
	expect_run(RUN(&tool_full, "--duration", "0.001"));
	assert_true(rc.duration == SECONDS_MIN);
	expect_run(RUN(&tool_full, "--duration", "31536000"));
	assert_true(rc.duration == SECONDS_MAX);
	USAGE(RUN(&tool_full, "--duration", "1e300"), "invalid duration", "0.001 to 31536000", "365 days");
	USAGE(RUN(&tool_full, "--duration", "31536001"), "invalid duration", "0.001 to 31536000");
	USAGE(RUN(&tool_full, "--duration", "0.0000001"), "invalid duration", "0.001 to 31536000");
	USAGE(RUN(&tool_full, "--duration", "0x10"), "invalid duration", "'0x10'");
	USAGE(RUN(&tool_full, "--duration", " 5"), "invalid duration", "' 5'");
	USAGE(RUN(&tool_full, "1", "--duration", "5"), "--duration", "cannot be combined");
}

/* --textfile: a report every TEXTFILE_INTERVAL unless an interval is
 * given, also within --duration; only a *.prom name; -keep needs it. */
static void test_textfile(void **state)
{
	(void)state;
	expect_run(RUN0(&tool_full));
	assert_null(rc.textfile);
	assert_false(rc.textfile_keep);
	expect_run(RUN(&tool_full, "--textfile", "/var/lib/x/t.prom"));
	assert_string_equal(rc.textfile, "/var/lib/x/t.prom");
	assert_true(rc.interval == TEXTFILE_INTERVAL);
	assert_int_equal(rc.count, 0);
	expect_run(RUN(&tool_full, "--textfile=t.prom", "--textfile-keep", "2", "3"));
	assert_true(rc.textfile_keep);
	assert_true(rc.interval == 2);
	assert_int_equal(rc.count, 3);
	expect_run(RUN(&tool_full, "--textfile", "d/t.prom", "--duration", "60"));
	assert_true(rc.interval == TEXTFILE_INTERVAL && rc.duration == 60);
	USAGE(RUN(&tool_full, "--textfile", "d/t.txt"), "--textfile", "'d/t.txt'", ".prom");
	USAGE(RUN(&tool_full, "--textfile", "d/.prom"), "--textfile", ".prom");
	USAGE(RUN(&tool_full, "--textfile", "t.prom/"), "--textfile", ".prom");
	USAGE(RUN(&tool_full, "--textfile", ""), "--textfile", ".prom");
	USAGE(RUN(&tool_full, "--textfile-keep"), "--textfile-keep", "goes with --textfile");
	USAGE(RUN(&tool_full, "--textfile", "a.prom", "--textfile", "b.prom"), "--textfile", "twice");
}

/* --label pid and NAME=VALUE, given as often as there are places. */
static void test_label(void **state)
{
	(void)state;
	expect_run(RUN0(&tool_full));
	assert_false(rc.label_pid);
	assert_int_equal(rc.nlabels, 0);
	expect_run(RUN(&tool_full, "--label", "pid", "--label", "textfile=web a", "--label=team=x=y"));
	assert_true(rc.label_pid);
	assert_int_equal(rc.nlabels, 2);
	assert_string_equal(rc.labels[0].name, "textfile");
	assert_string_equal(rc.labels[0].value, "web a");
	assert_string_equal(rc.labels[1].name, "team");
	assert_string_equal(rc.labels[1].value, "x=y");
	expect_run(RUN(&tool_full, "--label=a=1", "--label=b=2", "--label=c=3", "--label=d=4",
		       "--label=e=5", "--label=f=6", "--label=_g7=7"));
	assert_int_equal(rc.nlabels, 7);
	USAGE(RUN(&tool_full, "--label=a=1", "--label=b=2", "--label=c=3", "--label=d=4",
		  "--label=e=5", "--label=f=6", "--label=g=7", "--label=h=8"), "too many labels", "7");
	USAGE(RUN(&tool_full, "--label", "comm"), "invalid label 'comm'", "pid or NAME=VALUE");
	USAGE(RUN(&tool_full, "--label", "a=1", "--label", "a=2"), "label 'a' given twice");
	USAGE(RUN(&tool_full, "--label", "a="), "'a='", "a value");
	USAGE(RUN(&tool_full, "--label", "=x"), "invalid label name ''");
	USAGE(RUN(&tool_full, "--label", "1a=x"), "invalid label name '1a'");
	USAGE(RUN(&tool_full, "--label", "a-b=x"), "invalid label name 'a-b'");
	USAGE(RUN(&tool_full, "--label", "__name__=x"), "invalid label name '__name__'");
	USAGE(RUN(&tool_full, "--label", "le=x"), "invalid label name 'le'");
	USAGE(RUN(&tool_full, "--label", "pid=1"), "invalid label name 'pid'");
}

static void test_name(void **state)
{
	(void)state;
	expect_run(RUN(&tool_full, "-n", "bash"));
	assert_string_equal(rc.comm, "bash");
	expect_run(RUN(&tool_full, "-n", "abcdefghijklmno")); /* 15: TASK_COMM_LEN - 1 */
	assert_string_equal(rc.comm, "abcdefghijklmno");
	USAGE(RUN(&tool_full, "-n", "abcdefghijklmnop"), "invalid name", "abcdefghijklmnop", "15");
	USAGE(RUN(&tool_full, "--name", "a-very-long-command-name"), "invalid name");
	USAGE(RUN(&tool_full, "-n", ""), "invalid name");
}

static void test_flags(void **state)
{
	(void)state;
	expect_run(RUN(&tool_full, "-T", "-j", "-v", "--check", "--self-cost", "-c", "/sys/fs/cgroup/a"));
	assert_true(rc.timestamp);
	assert_true(rc.json);
	assert_true(rc.verbose);
	assert_true(rc.check);
	assert_true(rc.self_cost);
	assert_string_equal(rc.cgroup, "/sys/fs/cgroup/a");
	USAGE(RUN(&tool_full, "-c", ""), "invalid cgroup ''");
	USAGE(RUN(&tool_full, "--cgroup="), "invalid cgroup ''");
	expect_run(RUN(&tool_full, "-Tjv"));
	assert_true(rc.timestamp && rc.json && rc.verbose);
	/* the previous run's flags do not leak */
	expect_run(RUN0(&tool_full));
	assert_false(rc.timestamp || rc.json || rc.verbose);
}

/* A raw BTF file holding one type, int, like /sys/kernel/btf/vmlinux
 * holds thousands; its path in @path. */
static void write_raw_btf(char *path)
{
	static const char strings[] = "\0int";
	struct {
		struct btf_header hdr;
		struct btf_type type;
		__u32 encoding;
		char strings[sizeof(strings)];
	} __attribute__((packed)) raw = {
		.hdr = {
			.magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(struct btf_header),
			.type_off = 0, .type_len = sizeof(struct btf_type) + sizeof(__u32),
			.str_off = sizeof(struct btf_type) + sizeof(__u32), .str_len = sizeof(strings),
		},
		.type = { .name_off = 1, .info = BTF_KIND_INT << 24, .size = 4 },
		.encoding = BTF_INT_SIGNED << 24 | 32,
	};
	int fd;

	memcpy(raw.strings, strings, sizeof(strings));
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, &raw, sizeof(raw)), sizeof(raw));
	close(fd);
}

static void test_btf(void **state)
{
	char btf[] = "/tmp/test_cli_btf.XXXXXX", fd_path[32];

	(void)state;
	write_raw_btf(btf);
	expect_run(RUN(&tool_full, "--btf", btf));
	assert_string_equal(rc.btf_name, btf);
	/* Opened once, here: the rest reads the descriptor. */
	assert_true(rc.btf_fd >= 0);
	snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", rc.btf_fd);
	assert_string_equal(rc.btf_path, fd_path);
	unlink(btf);
	USAGE(RUN(&tool_full, "--btf", "/nonexistent/vmlinux"), "cannot read BTF file",
	      "/nonexistent/vmlinux");
	/* readable, but not BTF: text, ELF without .BTF, not a file */
	USAGE(RUN(&tool_full, "--btf", "/etc/passwd"), "/etc/passwd is not a BTF file (");
	USAGE(RUN(&tool_full, "--btf", "/proc/self/exe"), "is not a BTF file (");
	USAGE(RUN(&tool_full, "--btf", "/dev/null"), "/dev/null is not a BTF file (");
	USAGE(RUN(&tool_full, "--btf", "/tmp"), "/tmp is not a BTF file (");
}

static void test_tool_option(void **state)
{
	(void)state;
	expect_run(RUN(&tool_full, "-L", "5"));
	assert_int_equal(tool_min, 5);
	expect_run(RUN(&tool_full, "--min=7", "-p", "1"));
	assert_int_equal(tool_min, 7);
	assert_int_equal(rc.pid, 1);
	USAGE(RUN(&tool_full, "-L", "x"), "invalid minimum", "'x'");
	/* the tool's validate runs after the shared checks */
	USAGE(RUN(&tool_full, "-L", "5000", "-m"), "minimum too large");
	expect_run(RUN(&tool_full, "-L", "5000"));
	/* a shared option is never handed to the tool */
	expect_run(RUN(&tool_full, "-p", "3", "-m", "-j", "--duration", "1"));
	assert_false(tool_saw_shared);
	expect_run(RUN(&tool_full, "-t", "3", "--ns", "--probe", "kprobe", "-c", "/a"));
	assert_false(tool_saw_shared);
}

/* A tool with more options than any fixed table held (64, with the
 * shared ones): the last of them and the shared ones after it still
 * parse, and count as given. */
#define MANY_OPTIONS 100
#define OPT_MANY 0x2000

static int many_seen;

static int many_parse(int key, char *arg, struct run_config *rc)
{
	(void)arg;
	(void)rc;
	if (key < OPT_MANY || key >= OPT_MANY + MANY_OPTIONS)
		return ARGP_ERR_UNKNOWN;
	many_seen = key - OPT_MANY;
	return 0;
}

static void test_many_options(void **state)
{
	static char names[MANY_OPTIONS][8];
	static struct argp_option opts[MANY_OPTIONS + 1];
	struct tool many = { .name = "t", .summary = "Many options.", .shared = SHARED_FILTERS,
			     .options = opts, .parse = many_parse };

	(void)state;
	for (int i = 0; i < MANY_OPTIONS; i++) {
		snprintf(names[i], sizeof(names[i]), "o%d", i);
		opts[i] = (struct argp_option){ names[i], OPT_MANY + i, "N", 0, "An option", 0 };
	}
	many_seen = -1;
	expect_run(RUN(&many, "--o99", "1", "-p", "7", "--duration", "2"));
	assert_int_equal(many_seen, 99);
	assert_int_equal(rc.pid, 7);
	USAGE(RUN(&many, "--o98", "1", "--o98", "2"), "'--o98' given twice");
	USAGE(RUN(&many, "-p", "1", "-p", "2"), "given twice");
}

/* Once an error is recorded, later options do not overwrite it. */
static void test_first_error_wins(void **state)
{
	(void)state;
	USAGE(RUN(&tool_full, "-p", "abc", "-t", "x"), "invalid PID", "'abc'");
	USAGE(RUN(&tool_full, "-p", "abc", "--bogus"), "invalid PID");
	USAGE(RUN(&tool_full, "0", "--bogus"), "invalid interval");
}

/*
 * Regression (was a bug): explain_bad_option() names state->argv[state->next - 1], but
 * when getopt rejects a character that is not the last of its word, getopt
 * has not moved on yet, so the message names the word before.
 */
static void test_bad_option_word(void **state)
{
	static const struct {
		const char *args[3];
		const char *want;
	} cases[] = {
		{ { "-0.5" }, "invalid interval" },	/* was: "unexpected argument 't'" */
		{ { "-xm" }, "'-x" },			/* was: "unexpected argument 't'" */
		{ { "-m", "-xj" }, "'-x" },		/* was: "unknown option '-m'" */
		{ { "-xp" }, "unknown option" },	/* was: "unexpected argument 't'" */
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		enum cli_result r = run_argv(&tool_full, cases[i].args);

		assert_int_equal(r, CLI_USAGE);
		CHECK(strstr(rc.err, cases[i].want), "%s%s%s: error \"%s\" lacks \"%s\"",
			  cases[i].args[0], cases[i].args[1] ? " " : "",
			  cases[i].args[1] ? cases[i].args[1] : "", rc.err, cases[i].want);
	}
	CHECKS_END();
}

/*
 * Regression (was a bug): parse_pid(), parse_positive() (now parse_decimal())
 * and parse_count() reject a leading ' ' but not the other whitespace
 * strtol()/strtod() skip.
 */
static void test_parse_leading_whitespace(void **state)
{
	static const char *ws[] = { "\t5", "\n5", "\v5", "\r5" };
	pid_t pid;
	double d;
	long n;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(ws); i++) {
		CHECK(parse_pid(ws[i], &pid) != 0, "parse_pid accepts \"\\x%02x5\"", ws[i][0]);
		CHECK(parse_decimal(ws[i], 0, 10, &d) != 0, "parse_decimal accepts \"\\x%02x5\"", ws[i][0]);
		CHECK(parse_count(ws[i], &n) != 0, "parse_count accepts \"\\x%02x5\"", ws[i][0]);
	}
	CHECKS_END();
}

static void test_parse_pid(void **state)
{
	static const char *bad[] = {
		"", "0", "-1", "-0", "+1", " 1", "1 ", "1x", "x", "0x10", "2147483648",
		"9223372036854775808", "1.0",
	};
	pid_t pid;

	(void)state;
	assert_int_equal(parse_pid("1", &pid), 0);
	assert_int_equal(pid, 1);
	assert_int_equal(parse_pid("2147483647", &pid), 0);
	assert_int_equal(pid, 2147483647);
	assert_int_equal(parse_pid("00042", &pid), 0);
	assert_int_equal(pid, 42);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		pid = 777;
		if (parse_pid(bad[i], &pid) == 0)
			fail_msg("parse_pid accepted \"%s\"", bad[i]);
		assert_int_equal(pid, 777); /* untouched on error */
	}
}

static void test_parse_decimal(void **state)
{
	static const struct {
		const char *s;
		double want;
	} good[] = {
		{ "1", 1 }, { "0.25", 0.25 }, { ".5", 0.5 }, { "5.", 5 }, { "007", 7 },
		{ "0", 0 }, { "0.0", 0 }, { "1000", 1000 }, { "999.999", 999.999 },
	};
	/* in 0..1000: bad syntax, or outside the range */
	static const char *bad[] = {
		"", ".", "-1", "-0", "+1", "-0.001", " 1", "1 ", "\t1", "1\n", "1s", "x", "1,5",
		"1.2.3", "..5", "1e3", "1E3", "1e-3", "0x10", "0X1p3", "inf", "-inf", "nan",
		"infinity", "1e999", "1000.001", "1001",
		"100000000000000000000000000000000000000000000000000000000000000000000000000000000"
		"000000000000000000000000000000000000000000000000000000000000000000000000000000000"
		"000000000000000000000000000000000000000000000000000000000000000000000000000000000"
		"000000000000000000000000000000000000000000000000000000000000000000000000000000000",
	};
	double d;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		d = 777;
		CHECK(parse_decimal(good[i].s, 0, 1000, &d) == 0 && d == good[i].want,
		      "parse_decimal(\"%s\") gave %g", good[i].s, d);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		d = 777;
		CHECK(parse_decimal(bad[i], 0, 1000, &d) != 0, "parse_decimal accepted \"%s\"", bad[i]);
		CHECK(d == 777, "parse_decimal(\"%s\") wrote %g on error", bad[i], d);
	}
	/* the range is inclusive at both ends */
	CHECK(parse_decimal("0.001", SECONDS_MIN, SECONDS_MAX, &d) == 0, "minimum refused");
	CHECK(parse_decimal("31536000", SECONDS_MIN, SECONDS_MAX, &d) == 0, "maximum refused");
	CHECK(parse_decimal("0.0009999", SECONDS_MIN, SECONDS_MAX, &d) != 0, "under minimum taken");
	CHECK(parse_decimal("0", SECONDS_MIN, SECONDS_MAX, &d) != 0, "0 taken for seconds");
	CHECK(parse_decimal("31536000.001", SECONDS_MIN, SECONDS_MAX, &d) != 0, "over maximum taken");
	CHECKS_END();
}

static void test_parse_count(void **state)
{
	static const char *bad[] = {
		"", "0", "-1", " 1", "1 ", "1.5", "1e3", "x", "9223372036854775808",
	};
	long n;

	(void)state;
	assert_int_equal(parse_count("1", &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(parse_count("9223372036854775807", &n), 0);
	assert_int_equal(n, 9223372036854775807L);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		n = 777;
		if (parse_count(bad[i], &n) == 0)
			fail_msg("parse_count accepted \"%s\"", bad[i]);
		assert_int_equal(n, 777);
	}
}

static void test_cli_error(void **state)
{
	struct run_config r;
	char longer[600];

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_int_equal(cli_error(&r, "bad %s %d", "thing", 42), EINVAL);
	assert_string_equal(r.err, "bad thing 42");
	/* truncated, never overflowing */
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	assert_int_equal(cli_error(&r, "%s", longer), EINVAL);
	assert_int_equal(strlen(r.err), sizeof(r.err) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_pid),
		cmocka_unit_test(test_pid_invalid),
		cmocka_unit_test(test_pid_tid_conflict),
		cmocka_unit_test(test_positional),
		cmocka_unit_test(test_positional_invalid),
		cmocka_unit_test(test_unknown_options),
		cmocka_unit_test(test_missing_argument),
		cmocka_unit_test(test_help_version),
		cmocka_unit_test(test_help_text),
		cmocka_unit_test(test_completion_table),
		cmocka_unit_test(test_bad_option_word),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_units_conflict),
		cmocka_unit_test(test_given_twice),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_textfile),
		cmocka_unit_test(test_label),
		cmocka_unit_test(test_name),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_btf),
		cmocka_unit_test(test_tool_option),
		cmocka_unit_test(test_many_options),
		cmocka_unit_test(test_first_error_wins),
		cmocka_unit_test(test_parse_pid),
		cmocka_unit_test(test_parse_decimal),
		cmocka_unit_test(test_parse_count),
		cmocka_unit_test(test_parse_leading_whitespace),
		cmocka_unit_test(test_cli_error),
	};

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
