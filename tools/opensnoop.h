/* SPDX-License-Identifier: GPL-2.0-only */
/* What opensnoop's kernel and user sides share. */
#ifndef OPENSNOOP_H
#define OPENSNOOP_H

#include "filter.h"

#define OPENSNOOP_PATH_MAX 256		/* bytes of a path kept, with its NUL */
#define OPENSNOOP_RINGBUF_DEFAULT (4 * 1024 * 1024)
#define OPENSNOOP_NO_UID 0xFFFFFFFFU

/* Which open syscall an event came from (start.arg[2] at entry). */
enum opensnoop_call { CALL_OPEN, CALL_OPENAT, CALL_OPENAT2 };

/* What the entry keeps in the start store's args. */
enum { ARG_FILENAME, ARG_FLAGS, ARG_MODE };

/* How the path was read at the syscall's exit. */
enum opensnoop_path_state {
	PATH_OK,
	PATH_TRUNCATED,		/* longer than OPENSNOOP_PATH_MAX - 1 bytes */
	PATH_UNREADABLE,	/* not readable even after the kernel copied it in */
};

struct opensnoop_event {
	__u64 lat_ns;
	__s64 ret;		/* fd, or -errno */
	__u32 pid;
	__u32 tid;
	__u32 uid;
	__u32 flags;
	__u32 mode;
	__u32 path_state;	/* enum opensnoop_path_state */
	char comm[FILTER_COMM_LEN];
	char path[OPENSNOOP_PATH_MAX];
};

/* Counted for the closing line. */
struct opensnoop_totals {
	__u64 events;		/* opens that passed every filter */
	__u64 lost;		/* of those, not delivered: ring buffer full */
	__u64 unreadable;	/* path not readable at exit */
	__u64 truncated;	/* path longer than the capture limit */
};

#endif /* OPENSNOOP_H */
