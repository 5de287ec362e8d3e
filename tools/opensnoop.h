/* SPDX-License-Identifier: GPL-2.0-only */
/* What opensnoop's kernel and user sides share. */
#ifndef OPENSNOOP_H
#define OPENSNOOP_H

#include "filter.h"
#include "kernel_layout.h"
#include "process_key.h"

#define OPENSNOOP_PATH_MAX 256		/* bytes of a path kept, with its NUL */
#define OPENSNOOP_RINGBUF_DEFAULT (1024 * 1024)
#define OPENSNOOP_RINGBUF_MAX (1ULL << 30)
#define OPENSNOOP_NO_UID 0xFFFFFFFFU

enum opensnoop_mode {
	OPENSNOOP_EVENTS,	/* one event per open */
	OPENSNOOP_COUNT,	/* -C: counts per key, a top list each interval */
	OPENSNOOP_LATENCY,	/* -L: latency histogram (per process with -P) */
};

/* What -C counts by. */
enum opensnoop_by { BY_PROCESS, BY_FILE, BY_ERRNO, BY_COMM };

#define OPENSNOOP_MAX_KEYS 4096

/* -C by process (err 0), by comm (pid 0, err 0) or by errno (proc all
 * zero); -L -P (err 0). A process is named by what it is called at the
 * open: after exec(), a key of its own. */
struct opensnoop_key {
	struct process_key proc;
	__s32 err;
};

/* The longest path an open can name (PATH_MAX, with its NUL). */
#define OPENSNOOP_LONG_PATH_MAX 4096

/* -C --by file: the path as given (unreadable: empty). One longer than
 * OPENSNOOP_PATH_MAX - 1 bytes keeps its prefix, its length and a hash of
 * all of it, so two long paths with the same prefix stay two keys. */
struct opensnoop_file_key {
	char path[OPENSNOOP_PATH_MAX];
	__u64 hash;		/* 0 when the path fits */
	__u32 len;		/* its length when it does not fit, else 0 */
	__u32 pad;
};

struct opensnoop_count {
	__u64 opens;
	__u64 failed;
};

/* Which open syscall an event came from (start.arg[2] at entry). */
enum opensnoop_call { CALL_OPEN, CALL_OPENAT, CALL_OPENAT2 };

/* What the entry keeps in the start store's args (and the dirfd in fd). */
enum { ARG_FILENAME, ARG_FLAGS, ARG_MODE_CALL };	/* mode | call << 32 */

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

/* -F: the event, and the directory its relative path starts from (dir.ino
 * 0: the path is absolute, or the directory could not be found). */
struct opensnoop_full_event {
	struct opensnoop_event e;
	struct file_name dir;
};

#define OPENSNOOP_AT_FDCWD (-100)

/* Counted for the closing line. */
struct opensnoop_totals {
	__u64 lost;		/* opens that passed every filter, not delivered: ring full */
	__u64 unreadable;	/* path not readable at exit */
	__u64 truncated;	/* path longer than the capture limit */
};

#endif /* OPENSNOOP_H */
