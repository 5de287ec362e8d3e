/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The context of a raw tracepoint program: the tracepoint's arguments, as
 * the kernel passes them, widened to 64 bits. Declared here without CO-RE:
 * vmlinux.h's struct bpf_raw_tracepoint_args is marked for relocation, and
 * one relocation makes libbpf load and parse the whole kernel BTF at start
 * (~12 MiB and ~90 ms here), which the tools avoid.
 */
#ifndef RAW_TP_BPF_H
#define RAW_TP_BPF_H

struct raw_tp_ctx {
	__u64 args[4];		/* the first four arguments; reading past the
				 * tracepoint's own makes the attach fail */
};

#endif /* RAW_TP_BPF_H */
