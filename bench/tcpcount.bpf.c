// SPDX-License-Identifier: GPL-2.0-only
/* The floor for tcprcv: raw tracepoint programs on tcp_probe (every
 * segment TCP receives) and tcp_rcv_space_adjust (every chunk an
 * application copies out) that only add one to a per-CPU counter. What
 * they cost is what the tracepoints themselves cost; a tool on them cannot
 * cost less (bench/tcpcount.c loads it). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "tcpcount.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TCPCOUNT_KEYS);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static __always_inline void count(__u32 key)
{
	__u64 *n = bpf_map_lookup_elem(&counts, &key);

	if (n)
		(*n)++;
}

SEC("raw_tp/tcp_probe")
int count_probe(void *ctx)
{
	count(TCPCOUNT_PROBE);
	return 0;
}

SEC("raw_tp/tcp_rcv_space_adjust")
int count_rcv_space(void *ctx)
{
	count(TCPCOUNT_RCV_SPACE);
	return 0;
}
