/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The name of each process a per-process key was made for: its group
 * leader's comm (kernel.bpf.h), recorded once when the key is created in
 * an interval, kept in an LRU map that user space reads at report time
 * (keyed_process_name() in common/keyed.c). So a process is named by
 * itself, not by whichever of its threads happened to do the work.
 */
#ifndef NAMES_BPF_H
#define NAMES_BPF_H

#include "kernel.bpf.h"

#define NAMES_MAX 8192

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, NAMES_MAX);
	__type(key, __u32);
	__type(value, char[FILTER_COMM_LEN]);
} names SEC(".maps");

static __always_inline void name_process(__u32 pid)
{
	char comm[FILTER_COMM_LEN];

	process_comm(comm, sizeof(comm));
	bpf_map_update_elem(&names, &pid, comm, BPF_ANY);
}

#endif /* NAMES_BPF_H */
