/* SPDX-License-Identifier: GPL-2.0-only */
/* What readlat's kernel and user sides share. */
#ifndef READLAT_H
#define READLAT_H

#include "filter.h"
#include "kernel_layout.h"
#include "process_key.h"

enum readlat_mode {
	READLAT_HIST,		/* one histogram */
	READLAT_PER_PROCESS,	/* -P: one per process */
	READLAT_PER_FD,		/* -F: one per process, file descriptor and file */
	READLAT_SLOWER,		/* --slower: one event per slow read */
};

#define READLAT_MAX_KEYS 4096
#define READLAT_MAX_FILES (2 * READLAT_MAX_KEYS)
#define READLAT_RINGBUF_BYTES (256 * 1024)

/* One histogram of -P (fd = -1, no file) or -F. */
struct readlat_key {
	struct process_key proc;	/* pid in the user's PID namespace, name at the read */
	__s32 fd;		/* -1 when per process */
	__u64 ino;		/* -F: the file read through fd (0 if unknown) */
	__u32 dev;		/* -F: its filesystem, kernel dev_t */
	__u32 disk;		/* -B: the read submitted or waited for block I/O */
};

/* What --slower counts for its closing line. */
struct readlat_totals {
	__u64 reads;		/* timed (failed ones only with --errors) */
	__u64 errors;		/* failed */
	__u64 slower;		/* at or over the threshold, sent as events */
	__u64 lost;		/* of those, not sent: ring buffer full */
};

enum readlat_event_kind {
	READLAT_EV_READ,	/* --slower: one slow read */
	READLAT_EV_FILE,	/* -F: the name of a file, the first time it is read */
};

struct readlat_event {
	__u32 kind;		/* READLAT_EV_READ */
	__u32 pid;
	__u32 tid;
	__s32 fd;
	__u64 lat_ns;
	__s64 ret;
	char comm[FILTER_COMM_LEN];
};

struct readlat_file_event {
	__u32 kind;		/* READLAT_EV_FILE */
	__u32 pad;
	struct file_name name;
};

#endif /* READLAT_H */
