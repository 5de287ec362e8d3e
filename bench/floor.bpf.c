// SPDX-License-Identifier: GPL-2.0-only
/* The floor: empty programs on the two tracepoints readlat uses. What they
 * cost is what no tool on these tracepoints can avoid. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp/syscalls/sys_enter_read")
int floor_enter(void *ctx)
{
	return 0;
}

SEC("tp/syscalls/sys_exit_read")
int floor_exit(void *ctx)
{
	return 0;
}
