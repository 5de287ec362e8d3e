// SPDX-License-Identifier: GPL-2.0-only
/* A program the verifier must reject: it dereferences a plain number. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "syscall_tp.bpf.h"

char LICENSE[] SEC("license") = "GPL";

SEC("tp/syscalls/sys_enter_getppid")
int bad_prog(struct syscall_enter_ctx *ctx)
{
	return *(volatile int *)(long)ctx->args[0];
}
