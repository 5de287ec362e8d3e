// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: one tool's command line (common/cli.c and the tool's
 * own parse and validate), on any argv. Built once per tool, with
 * FUZZ_TOOL naming it: the tool's source is included here (its main()
 * renamed), so that its options are the ones the binary has, and its
 * option state is put back as it was before each run.
 *
 * The input is the argument words, each ended by a NUL. Whatever they
 * are, cli_parse() must return one of its three answers and leave a
 * run_config that keeps the rules the runtime relies on: a usage error
 * says something, and a run has values in their documented ranges.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define main fuzz_tool_main
#define FUZZ_SRC_(t) #t
#define FUZZ_SRC(t) FUZZ_SRC_(../../tools/t.c)
#include FUZZ_SRC(FUZZ_TOOL)
#undef main

#define MUST(c) do { if (!(c)) { fprintf(stderr, "fuzz_cli: %s\n", #c); abort(); } } while (0)
#define MAX_WORDS 24

static __typeof__(opt) opt_initial;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	opt_initial = opt;
	/* --help and --version print at length: not what is checked */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

static void check_run(const struct run_config *rc)
{
	MUST(!rc->err[0]);
	MUST(!(rc->pid && rc->tid));
	MUST(rc->pid >= 0 && rc->tid >= 0);
	MUST(memchr(rc->comm, '\0', sizeof(rc->comm)));
	MUST(rc->interval == 0 || (rc->interval >= 0.001 && rc->interval <= 31536000));
	MUST(rc->duration == 0 || (rc->duration >= 0.001 && rc->duration <= 31536000));
	MUST(!(rc->interval && rc->duration) || (rc->textfile && rc->duration));
	MUST(rc->count >= 0);
	MUST(rc->json == (rc->output == OUTPUT_JSON));
	MUST(rc->output == OUTPUT_TEXT || rc->output == OUTPUT_JSON ||
	     rc->output == OUTPUT_OPENMETRICS);
	MUST(rc->unit >= UNIT_NSECS && rc->unit <= UNIT_BYTES);
	MUST(rc->probe_kind >= -1 && rc->probe_kind <= PROBE_RAW_TRACEPOINT);
	MUST(rc->max_series >= 1);
	MUST(!rc->textfile_keep || rc->textfile);
	MUST((rc->btf_fd >= 0) == (rc->btf_name != NULL));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1), *argv[MAX_WORDS + 2];
	struct run_config rc;
	enum cli_result r;
	int argc = 0;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[argc++] = (char *)FUZZ_SRC_(FUZZ_TOOL);
	for (size_t at = 0; at < size && argc <= MAX_WORDS; at += strlen(copy + at) + 1)
		argv[argc++] = copy + at;
	argv[argc] = NULL;

	opt = opt_initial;
	r = cli_parse(&FUZZ_TOOL, argc, argv, &rc);
	MUST(r == CLI_RUN || r == CLI_USAGE || r == CLI_EXIT_OK);
	if (r == CLI_USAGE)
		MUST(rc.err[0] && memchr(rc.err, '\0', sizeof(rc.err)));
	if (r == CLI_RUN)
		check_run(&rc);
	if (rc.btf_fd >= 0)
		close(rc.btf_fd);
	free(copy);
	return 0;
}
