// SPDX-License-Identifier: GPL-2.0-only
/* badprog: the runtime's handling of a verifier rejection, for the tests. */
#include "tool.h"
#include "tests/badprog.skel.h"

static struct badprog_bpf *skel;

static const struct probe probes[] = {
	{ "sys_enter_getppid", PROBE_TRACEPOINT, "syscalls/sys_enter_getppid", "bad_prog", false },
};

static struct bpf_object_skeleton *open_bpf(const struct run_config *rc)
{
	skel = badprog_bpf__open_opts(tool_open_opts(rc));
	return skel ? skel->skeleton : NULL;
}

static void close_bpf(void)
{
	badprog_bpf__destroy(skel);
}

static const char *banner(void)
{
	return "Tracing nothing";
}

static const struct tool badprog = {
	.name = "badprog",
	.summary = "Load a program that the verifier rejects.",
	.banner = banner,
	.probes = probes,
	.nprobes = 1,
	.open = open_bpf,
	.close = close_bpf,
};

int main(int argc, char **argv)
{
	return tool_run(&badprog, argc, argv);
}
