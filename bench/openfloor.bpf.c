// SPDX-License-Identifier: GPL-2.0-only
/* The floor for opens: empty programs on the two tracepoints an open(3)
 * of glibc reaches (openat). What they cost no tool on them can avoid. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp/syscalls/sys_enter_openat")
int openfloor_enter(void *ctx)
{
	return 0;
}

SEC("tp/syscalls/sys_exit_openat")
int openfloor_exit(void *ctx)
{
	return 0;
}
