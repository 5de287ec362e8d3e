// SPDX-License-Identifier: GPL-2.0-only
/* The count control for biolat: raw tracepoint programs on block_rq_issue
 * and block_rq_complete that only count one disk's requests. What they
 * count is what the kernel runs BPF programs for; a tool on the same
 * tracepoints cannot see more (bench/blkcount.c loads it). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 dev = 0;	/* kernel dev_t: major << 20 | minor */
__u64 issued, completed;

/* 5.17+: the disk is rq->q->disk (the bench host's kernel; not a tool). */
static __always_inline __u32 rq_dev(struct request *rq)
{
	struct gendisk *disk = BPF_CORE_READ(rq, q, disk);

	if (!disk)
		return 0;
	return (__u32)BPF_CORE_READ(disk, major) << 20 | (__u32)BPF_CORE_READ(disk, first_minor);
}

SEC("raw_tp/block_rq_issue")
int BPF_PROG(count_issue, struct request *rq)
{
	if (rq_dev(rq) == dev)
		__sync_fetch_and_add(&issued, 1);
	return 0;
}

SEC("raw_tp/block_rq_complete")
int BPF_PROG(count_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	if (rq_dev(rq) == dev && nr_bytes >= BPF_CORE_READ(rq, __data_len))
		__sync_fetch_and_add(&completed, 1);
	return 0;
}
