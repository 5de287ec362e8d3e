// SPDX-License-Identifier: GPL-2.0-only
/* Store only: readlat's start store (bpf/start.bpf.h), get/create at entry
 * and get-and-release at exit, with no clock read: a constant stands in for
 * the start time. The tracepoint records are read without CO-RE, as readlat
 * reads them (bpf/syscall_tp.bpf.h): nothing parses the kernel BTF. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "syscall_tp.bpf.h"
#include "start.bpf.h"

char LICENSE[] SEC("license") = "GPL";

__u64 taken;

SEC("tp/syscalls/sys_enter_read")
int store_enter(struct syscall_enter_ctx *ctx)
{
	struct start *s = start_begin(ctx->args[1] ^ ctx->args[0] << 48);

	if (s) {
		s->fd = (__s32)ctx->args[0];
		s->ts = 1;
	}
	return 0;
}

SEC("tp/syscalls/sys_exit_read")
int store_exit(struct syscall_exit_ctx *ctx)
{
	struct start *s = start_get();

	(void)ctx;
	if (s && s->ts) {
		taken = s->ts;
		start_release(s);
	}
	return 0;
}
