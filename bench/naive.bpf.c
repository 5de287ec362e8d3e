// SPDX-License-Identifier: GPL-2.0-only
/* The straightforward libbpf latency tool, as a reference: start times in a
 * hash keyed by thread id, a log2 array with atomic adds (what most
 * libbpf-tools do). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} start SEC(".maps");

__u64 slots[64] SEC(".bss");

SEC("tp/syscalls/sys_enter_read")
int naive_enter(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&start, &tid, &ts, BPF_ANY);
	return 0;
}

SEC("tp/syscalls/sys_exit_read")
int naive_exit(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *tsp = bpf_map_lookup_elem(&start, &tid), delta;
	__u32 slot = 0;

	if (!tsp)
		return 0;
	delta = (bpf_ktime_get_ns() - *tsp) / 1000;
	bpf_map_delete_elem(&start, &tid);
	while (delta > 1 && slot < 63) {
		delta >>= 1;
		slot++;
	}
	__sync_fetch_and_add(&slots[slot & 63], 1);
	return 0;
}
