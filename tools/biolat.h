/* SPDX-License-Identifier: GPL-2.0-only */
/* What biolat's kernel and user sides share. */
#ifndef BIOLAT_H
#define BIOLAT_H

#include "filter.h"

#define BIOLAT_MAX_KEYS 1024
#define BIOLAT_NO_FIELD 0xffffffffU	/* an optional layout field the kernel lacks */

/* What a histogram is kept per. */
enum biolat_by {
	BY_DISK = 1 << 0,	/* -D */
	BY_FLAGS = 1 << 1,	/* -F */
};

/* Where the programs find what they need in a struct request, read from
 * kernel BTF by user space (tools/biolat.c) and handed over as rodata:
 * the programs carry no CO-RE relocation. */
struct block_layout {
	__u32 rq_q, rq_disk;		/* rq_disk: before 5.17, else BIOLAT_NO_FIELD */
	__u32 rq_cmd_flags, rq_data_len;
	__u32 q_disk;			/* 5.17+: the disk is rq->q->disk */
	__u32 disk_major, disk_first_minor;
	__u32 rq_arg;			/* where the request is in the raw tracepoint
					 * args of insert/issue: 1 before 5.11 (q, rq), else 0 */
	__u32 rq_start_time;		/* start_time_ns: when it was allocated */
	__u32 rq_biotail;		/* the last bio: the same in a merged request */
	__u32 q_last_merge;		/* the request a merge went into */
};

/* One histogram of -D / -F. */
struct biolat_key {
	__u32 dev;		/* kernel dev_t (major << 20 | minor); 0 without -D */
	__u32 flags;		/* the request's cmd_flags & the -F mask; 0 without -F */
};

#define BIOLAT_INFLIGHT_SLOTS 8192	/* requests tracked at once (power of two) */

/* struct rq_entry's key with this bit: ended (inflight.bpf.h's INFLIGHT_ENDED). */
#define BIOLAT_RQ_ENDED 1ULL

/* A request between its first sighting and its completion: a slot of
 * the in-flight table (bpf/inflight.bpf.h), read by user space at exit. */
struct rq_entry {
	__u64 key;		/* the struct request's address; 0: free; with
				 * BIOLAT_RQ_ENDED: completed, the slot may be taken */
	__u64 born;		/* when the request took the slot */
	__u64 ts;		/* start: issue (or insertion with -Q); 0 not yet */
	__u32 dev;
	__u32 flags;
	__u32 bytes;		/* its size at issue */
	__u32 skip;		/* submitted by a process the filters exclude */
	__u32 issued;		/* handed to the driver: its completion is due */
	__u32 requeued;		/* given back by the driver: to be issued again */
};

/* Counted over the whole run (the interval's counts are in the histograms). */
struct biolat_totals {
	__u64 evicted;		/* in-flight entries dropped for a newer request:
				 * their completion, if it comes, is unmatched */
	__u64 lost_unattributed;	/* lost I/Os no histogram can be named for
					 * (-D and the disk unread, or the lost map full) */
};

#endif /* BIOLAT_H */
