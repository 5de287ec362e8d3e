/* SPDX-License-Identifier: GPL-2.0-only */
/* What readlat's kernel and user sides share. */
#ifndef READLAT_H
#define READLAT_H

#include "filter.h"

enum readlat_mode {
	READLAT_HIST,		/* one histogram */
	READLAT_PER_PROCESS,	/* -P: one per process */
	READLAT_PER_FD,		/* -F: one per process and file descriptor */
	READLAT_SLOWER,		/* --slower: one event per slow read */
};

#define READLAT_MAX_KEYS 4096
#define READLAT_RINGBUF_BYTES (256 * 1024)

struct readlat_key {
	__u32 pid;
	__s32 fd;		/* -1 when per process */
	char comm[FILTER_COMM_LEN];
};

/* What --slower counts for its closing line. */
struct readlat_totals {
	__u64 reads;		/* timed (failed ones only with --errors) */
	__u64 errors;		/* failed */
	__u64 slower;		/* at or over the threshold, sent as events */
	__u64 lost;		/* of those, not sent: ring buffer full */
};

struct readlat_event {
	__u64 lat_ns;
	__s64 ret;
	__u32 pid;
	__u32 tid;
	__s32 fd;
	char comm[FILTER_COMM_LEN];
};

#endif /* READLAT_H */
