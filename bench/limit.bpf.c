// SPDX-License-Identifier: GPL-2.0-only
/* The limit: what readlat cannot avoid on top of the floor. The clock at
 * entry, kept in readlat's own store (bpf/start.bpf.h); at exit the clock,
 * read before the lookup as readlat reads it, then the start taken from the
 * store and the delta computed. No filter, no histogram: the delta goes to
 * a global so that none of it is optimised away. readlat's added cost over
 * this one's is what its histogram (and anything else it does) costs. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "syscall_tp.bpf.h"
#include "start.bpf.h"

char LICENSE[] SEC("license") = "GPL";

__u64 delta_ns;

SEC("tp/syscalls/sys_enter_read")
int limit_enter(struct syscall_enter_ctx *ctx)
{
	struct start *s = start_begin(ctx->args[1] ^ ctx->args[0] << 48);

	if (s) {
		s->fd = (__s32)ctx->args[0];
		s->ts = bpf_ktime_get_ns();
	}
	return 0;
}

SEC("tp/syscalls/sys_exit_read")
int limit_exit(struct syscall_exit_ctx *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	struct start *s = start_get();

	(void)ctx;
	if (s && s->ts) {
		delta_ns = now - s->ts;
		start_release(s);
	}
	return 0;
}
