// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "filenames.h"

/* s_magic of the pseudo filesystems whose files /proc names specially. */
#define PIPEFS_MAGIC 0x50495045
#define SOCKFS_MAGIC 0x534F434B
#define ANON_INODE_FS_MAGIC 0x09041934

struct filename_entry {
	__u64 ino;
	__u32 dev;
	char *label;		/* NULL: free slot */
	__u64 report;		/* struct filenames' when last added or used */
};

static size_t slot_of(const struct filenames *f, __u32 dev, __u64 ino)
{
	__u64 h = (ino ^ ((__u64)dev << 32)) * 0x9E3779B97F4A7C15ULL;
	size_t i = (size_t)(h >> 32) & (f->cap - 1);

	while (f->slots[i].label && (f->slots[i].dev != dev || f->slots[i].ino != ino))
		i = (i + 1) & (f->cap - 1);
	return i;
}

/* Into a table of @cap slots, the names stamped @since or later; the
 * others are freed. */
static int rehash(struct filenames *f, size_t cap, __u64 since)
{
	struct filenames t = { .cap = cap, .report = f->report };

	t.slots = calloc(t.cap, sizeof(*t.slots));
	if (!t.slots)
		return -ENOMEM;
	for (size_t i = 0; i < f->cap; i++) {
		struct filename_entry *e = &f->slots[i];

		if (!e->label)
			continue;
		if (e->report < since) {
			free(e->label);
			continue;
		}
		t.slots[slot_of(&t, e->dev, e->ino)] = *e;
		t.used++;
	}
	free(f->slots);
	*f = t;
	return 0;
}

static int grow(struct filenames *f)
{
	return rehash(f, f->cap ? f->cap * 2 : 256, 0);
}

size_t filenames_trim(struct filenames *f, size_t max)
{
	size_t before = f->used;

	/* The same size: the names kept never fill more of it than before. */
	if (f->used > max && rehash(f, f->cap, f->report))
		return 0;	/* all kept: no memory to drop any */
	f->report++;
	return before - f->used;
}

void file_name_format(const struct file_name *n, char *buf, size_t len)
{
	/* A record's depth is the kernel's word: never read past comp[] */
	int depth = n->depth < FILE_NAME_DEPTH ? (int)n->depth : FILE_NAME_DEPTH;
	size_t at = 0;

	buf[0] = '\0';
	if (n->magic == PIPEFS_MAGIC) {
		snprintf(buf, len, "pipe:[%llu]", (unsigned long long)n->ino);
		return;
	}
	if (n->magic == SOCKFS_MAGIC) {
		snprintf(buf, len, "socket:[%llu]", (unsigned long long)n->ino);
		return;
	}
	if (n->magic == ANON_INODE_FS_MAGIC && n->depth) {
		snprintf(buf, len, "anon_inode:%.*s", FILE_NAME_COMP, n->comp[0]);
		return;
	}
	if (!n->ino) {
		snprintf(buf, len, "?");
		return;
	}
	if (n->truncated || n->depth > FILE_NAME_DEPTH)
		at += (size_t)snprintf(buf + at, len - at, "...");
	/* Empty slots are the walk's steps from a mount to its mountpoint. */
	/* A component cut to FILE_NAME_COMP - 1 bytes ends in "...". */
	for (int i = depth - 1; i >= 0 && at < len; i--)
		if (n->comp[i][0])
			at += (size_t)snprintf(buf + at, len - at, "/%.*s%s", FILE_NAME_COMP,
					       n->comp[i], n->cut & (1U << i) ? "..." : "");
	if (!at)
		snprintf(buf, len, "/");
}

int filenames_add(struct filenames *f, const struct file_name *n)
{
	char label[FILENAME_LABEL_MAX];
	struct filename_entry *e;

	if ((f->used + 1) * 2 > f->cap && grow(f))
		return -ENOMEM;
	file_name_format(n, label, sizeof(label));
	e = &f->slots[slot_of(f, n->dev, n->ino)];
	if (!e->label)
		f->used++;
	free(e->label);
	e->dev = n->dev;
	e->ino = n->ino;
	e->report = f->report;
	e->label = strdup(label);
	return e->label ? 0 : -ENOMEM;
}

const char *filenames_get(struct filenames *f, __u32 dev, __u64 ino)
{
	struct filename_entry *e;

	if (!f->cap || !ino)
		return NULL;
	e = &f->slots[slot_of(f, dev, ino)];
	if (e->label)
		e->report = f->report;
	return e->label;
}

bool filenames_known(const struct filenames *f, __u32 dev, __u64 ino)
{
	return f->cap && ino && f->slots[slot_of(f, dev, ino)].label;
}

void filenames_free(struct filenames *f)
{
	for (size_t i = 0; i < f->cap; i++)
		free(f->slots[i].label);
	free(f->slots);
	memset(f, 0, sizeof(*f));
}

/* The link is opened once, and what was opened is both checked and named:
 * a stat(2) then a readlink(2) of the link could check one file and name
 * another, the fd closed and reused in between. */
int filenames_resolve_fd(const char *link, __u32 dev, __u64 ino, char *buf, size_t len)
{
	char self[32];
	struct stat st;
	ssize_t n = -1;
	int fd = open(link, O_PATH | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (ino && (fstat(fd, &st) || st.st_ino != ino ||
		    major(st.st_dev) != dev >> 20 || minor(st.st_dev) != (dev & 0xfffff)))
		goto out;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	n = readlink(self, buf, len - 1);
	if (n >= 0)
		buf[n] = '\0';
out:
	close(fd);
	return n < 0 ? -1 : 0;
}
