/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Records of the syscalls:sys_enter_* / sys_exit_* tracepoints. Their layout
 * is ABI (events/syscalls/<name>/format has not changed since the events
 * appeared), so they are declared here without CO-RE: a program that needs
 * no relocation never makes libbpf parse the kernel BTF, which saves ~11 MiB
 * of RSS and ~65 ms of start-up.
 */
#ifndef SYSCALL_TP_BPF_H
#define SYSCALL_TP_BPF_H

struct syscall_enter_ctx {
	__u64 common;		/* common_type, flags, preempt_count, pid */
	__s32 nr;
	__u32 pad;
	__u64 args[6];
};

struct syscall_exit_ctx {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__s64 ret;
};

#endif /* SYSCALL_TP_BPF_H */
