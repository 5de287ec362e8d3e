// SPDX-License-Identifier: GPL-2.0-only
/* Clock only: the floor's two programs, each reading bpf_ktime_get_ns()
 * once, as readlat does at entry and at exit. The value goes to a global
 * so that the call is kept; that store is the cheapest place there is. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

__u64 enter_ns, exit_ns;

SEC("tp/syscalls/sys_enter_read")
int clock_enter(void *ctx)
{
	enter_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("tp/syscalls/sys_exit_read")
int clock_exit(void *ctx)
{
	exit_ns = bpf_ktime_get_ns();
	return 0;
}
