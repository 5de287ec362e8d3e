/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The process filter every program calls first. Each switch is a rodata
 * constant set before load, so the verifier drops what is not in use and
 * an unfiltered tool pays nothing here.
 */
#ifndef FILTER_BPF_H
#define FILTER_BPF_H

#include "filter.h"

const volatile __u32 filter_tgid = 0;
const volatile __u32 filter_tid = 0;
const volatile bool filter_by_comm = false;
const volatile char filter_comm[FILTER_COMM_LEN] = {};
const volatile bool filter_by_cgroup = false;

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} filter_cgroup SEC(".maps");

static __always_inline bool comm_matches(void)
{
	char comm[FILTER_COMM_LEN];

	bpf_get_current_comm(comm, sizeof(comm));
	for (int i = 0; i < FILTER_COMM_LEN; i++) {
		if (comm[i] != filter_comm[i])
			return false;
		if (!comm[i])
			break;
	}
	return true;
}

/* The process and thread filters alone: the cheap part of traced(). */
static __always_inline bool traced_ids(void)
{
	if (filter_tgid || filter_tid) {
		__u64 id = bpf_get_current_pid_tgid();

		if (filter_tgid && (__u32)(id >> 32) != filter_tgid)
			return false;
		if (filter_tid && (__u32)id != filter_tid)
			return false;
	}
	return true;
}

static __always_inline bool traced(void)
{
	if (!traced_ids())
		return false;
	if (filter_by_cgroup && bpf_current_task_under_cgroup(&filter_cgroup, 0) != 1)
		return false;
	if (filter_by_comm && !comm_matches())
		return false;
	return true;
}

#endif /* FILTER_BPF_H */
