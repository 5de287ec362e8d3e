/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The names of files as the kernel sent them (struct file_name, see
 * kernel_layout.h), kept by filesystem and inode for the whole run, so a
 * report labels a file correctly after its fd was closed or reused and
 * after its process exited. Also: formatting one name ("/etc/passwd",
 * "pipe:[1234]"), and the fallback of asking /proc what an fd is now.
 */
#ifndef COMMON_FILENAMES_H
#define COMMON_FILENAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "kernel_layout.h"

/* Room for the longest label file_name_format() writes: "..." (a path
 * truncated), then per component "/", its bytes (at most FILE_NAME_COMP,
 * for one the kernel sent without a NUL) and "..." (cut), and the NUL. */
#define FILENAME_LABEL_MAX (3 + FILE_NAME_DEPTH * (1 + FILE_NAME_COMP + 3) + 1)

struct filename_entry;

struct filenames {
	struct filename_entry *slots;
	size_t used, cap;	/* open addressing, cap a power of two */
	__u64 report;		/* names are stamped with it when added or used */
};

/* Keep (or replace) the name of the file @n identifies. */
int filenames_add(struct filenames *f, const struct file_name *n);
/* The label of file (dev, ino), or NULL if the kernel never sent it (or
 * filenames_trim() dropped it); a name asked for is kept by the next trim. */
const char *filenames_get(struct filenames *f, __u32 dev, __u64 ino);
/* After a report: with more than @max names, drop those neither added
 * nor used since the last trim (files of processes long gone, under
 * churn); the count dropped. The caller then has the kernel send those
 * files' names again at their next read. */
size_t filenames_trim(struct filenames *f, size_t max);
/* Whether file (dev, ino) has a name here (not a use of it). */
bool filenames_known(const struct filenames *f, __u32 dev, __u64 ino);
void filenames_free(struct filenames *f);

/* "/a/b/c" from the components; pseudo files as /proc shows them. */
void file_name_format(const struct file_name *n, char *buf, size_t len);
/* What the fd behind @link (/proc/PID/fd/N) names now, if it is still
 * file (dev, ino) (ino 0: any file). 0 on success. */
int filenames_resolve_fd(const char *link, __u32 dev, __u64 ino, char *buf, size_t len);

#endif /* COMMON_FILENAMES_H */
