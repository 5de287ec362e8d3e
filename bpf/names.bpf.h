/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The name of each process a per-process key was made for, for keys that
 * hold only a pid (tcprcv's, made where the process is not current): its
 * group leader's comm (kernel.bpf.h), kept up to date at each of the
 * process's events, in an LRU map that user space reads at report time
 * (keyed_process_name() in common/keyed.c). So a process is named by
 * itself, not by whichever of its threads happened to do the work, and by
 * its name at its latest event: after exec(), the new one. Keys made in
 * the process's own context carry the name instead (struct process_key).
 */
#ifndef NAMES_BPF_H
#define NAMES_BPF_H

#include "kernel.bpf.h"

#define NAMES_MAX 8192

struct names_comm {
	__u64 w[FILTER_COMM_LEN / 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, NAMES_MAX);
	__type(key, __u32);
	__type(value, struct names_comm);
} names SEC(".maps");

/* Called at each event of @pid (the current process): an update only
 * when the name changed, so the common case is a lookup. */
static __always_inline void name_process(__u32 pid)
{
	struct names_comm comm = {}, *old;

	process_comm((char *)&comm, sizeof(comm));
	old = bpf_map_lookup_elem(&names, &pid);
	if (old && old->w[0] == comm.w[0] && old->w[1] == comm.w[1])
		return;
	bpf_map_update_elem(&names, &pid, &comm, BPF_ANY);
}

#endif /* NAMES_BPF_H */
