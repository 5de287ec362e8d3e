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
const volatile __u64 filter_comm[FILTER_COMM_LEN / 8] = {};
const volatile bool filter_by_cgroup = false;
/* The tool runs in a PID namespace other than the initial one: PIDs in
 * filters and output are that namespace's (nsfs device and inode of
 * /proc/self/ns/pid), and tasks it cannot see have none (0). */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;
/* The tool's own process (as current_ids() numbers it), for tools whose
 * own work at start-up would otherwise show (opensnoop's opens of tracefs). */
const volatile __u32 self_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} filter_cgroup SEC(".maps");

/* tgid << 32 | tid of the current thread, as the user's PID namespace
 * numbers them (0 where it cannot see the thread). */
static __always_inline __u64 current_ids(void)
{
	/* struct bpf_pidns_info, declared here: a vmlinux.h type would make
	 * its field accesses CO-RE relocations. */
	struct { __u32 pid, tgid; } ns;

	if (!pidns_ino)
		return bpf_get_current_pid_tgid();
	if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, (void *)&ns, sizeof(ns)))
		return 0;
	return (__u64)ns.tgid << 32 | ns.pid;
}

/* The event is the tool's own doing. */
static __always_inline bool is_self(void)
{
	return self_tgid && (__u32)(current_ids() >> 32) == self_tgid;
}

/* Two words compare the name; zeroed first, because before 6.x
 * bpf_get_current_comm() does not pad after the NUL. */
static __always_inline bool comm_matches(void)
{
	__u64 comm[FILTER_COMM_LEN / 8] = {};

	bpf_get_current_comm(comm, sizeof(comm));
	return comm[0] == filter_comm[0] && comm[1] == filter_comm[1];
}

/* The process and thread filters alone: the cheap part of traced(). */
static __always_inline bool traced_ids(void)
{
	if (filter_tgid || filter_tid) {
		__u64 id = current_ids();

		if (filter_tgid && (__u32)(id >> 32) != filter_tgid)
			return false;
		if (filter_tid && (__u32)id != filter_tid)
			return false;
	}
	return true;
}

/* Every filter the user gave; the first thing every program calls, at
 * both ends of an operation, so that an event filtered out costs no map
 * work and no clock read. */
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
