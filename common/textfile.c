// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writing --textfile for node_exporter, which may read it at any moment:
 * each report is rendered into a new file in the same
 * directory (the same file system, so rename(2) replaces the path in one
 * step) under a name the collector skips (it reads "*.prom" only), and
 * renamed over the path. A write that fails (a full disk) leaves the
 * previous file as it was; the tool goes on tracing and says so on
 * stderr, once a minute at most.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "diag.h"
#include "textfile.h"
#include "userpath.h"

/* node_exporter runs as a user of its own: it must be able to read it. */
#define TEXTFILE_MODE 0644
/* ".<name>.<pid>.<seq>": at most this much longer than the name. */
#define TEMP_EXTRA (sizeof(".") + sizeof(".4294967295") * 2)
/* A temporary name already taken (left by a killed run whose PID this
 * one has again) is passed over for the next; this many at most. */
#define TEMP_TRIES 16
/* At a 1 s interval a full disk would otherwise fill the log with it. */
#define WARN_EVERY_NS (60 * 1000000000ULL)

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* @path's directory into @dir ("." for a bare name) and its last part
 * into tf->name; -1 if the directory is too long, -2 if the name is
 * (it must leave room for the temporary file's longer one). */
static int split_path(struct textfile *tf, const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	size_t dlen = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);

	if (dlen >= len)
		return -1;
	if (strlen(name) + TEMP_EXTRA > sizeof(tf->name))
		return -2;
	memcpy(dir, slash ? path : ".", dlen);
	dir[dlen] = '\0';
	strcpy(tf->name, name);
	return 0;
}

static void why_not_writable(const char *path, const char *dir, int err, char *why, size_t len)
{
	if (err == ENOENT)
		snprintf(why, len, "--textfile %s: there is no directory %s (node_exporter reads "
			 "the directory given by its --collector.textfile.directory; Debian's is "
			 "/var/lib/prometheus/node-exporter)", path, dir);
	else if (err == ENOTDIR)
		snprintf(why, len, "--textfile %s: %s is not a directory", path, dir);
	else if (err == EACCES || err == EPERM)
		snprintf(why, len, "--textfile %s: uid %u may not create files in %s", path,
			 (unsigned int)getuid(), dir);
	else
		snprintf(why, len, "--textfile %s: cannot create files in %s: %s", path, dir,
			 strerror(err));
}

/* A temporary file of an earlier run at this path that was killed while
 * writing (SIGKILL, a crash, the OOM killer): ".<name>.<pid>.<seq>" older
 * than any write takes, or of a PID that no longer runs and a few seconds
 * old (the PID may be one of another PID namespace's, alive and writing
 * the same path, whose writes take milliseconds). node_exporter skips
 * these files; without this they would pile up, one per killed run. */
#define STALE_SECS 60
#define GONE_SECS 5

static void remove_stale_temps(const struct textfile *tf)
{
	size_t nlen = strlen(tf->name);
	int fd = openat(tf->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;		/* not readable: nothing to tidy, the writes may still work */
	}
	while ((e = readdir(d))) {
		const char *p = e->d_name;
		unsigned long pid;
		struct stat st;
		time_t age;
		char *end;

		if (p[0] != '.' || strncmp(p + 1, tf->name, nlen) || p[1 + nlen] != '.')
			continue;
		p += 2 + nlen;
		if (*p < '0' || *p > '9')
			continue;
		errno = 0;
		pid = strtoul(p, &end, 10);
		/* then ".<seq>", digits only */
		if (end == p || errno || end[0] != '.' || !end[1] ||
		    end[1 + strspn(end + 1, "0123456789")] ||
		    fstatat(tf->dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		age = time(NULL) - st.st_mtime;
		/* This run has written none yet: one of its PID is an earlier
		 * run's (a container's tool is PID 1 every time). */
		if (age > STALE_SECS ||
		    (age > GONE_SECS && pid != (unsigned long)getpid() &&
		     pid <= (unsigned long)INT_MAX && kill((pid_t)pid, 0) && errno == ESRCH))
			unlinkat(tf->dir_fd, e->d_name, 0);
	}
	closedir(d);
}

/* access(2) judges by the real user, capabilities set aside unless that
 * user is root: a user given the README's file capabilities may write
 * only where they may themselves (user_open() does the same for -c and
 * --btf), and the run fails now, before anything is loaded. */
int textfile_open(struct textfile *tf, const char *path, char *why, size_t len)
{
	char dir[PATH_MAX];
	struct stat st;

	*tf = (struct textfile){ .path = path, .dir_fd = -1 };
	switch (split_path(tf, path, dir, sizeof(dir))) {
	case -1:
		snprintf(why, len, "--textfile %s: the path is too long", path);
		return -1;
	case -2:
		snprintf(why, len, "--textfile %s: the file name is too long (at most %zu bytes, "
			 "to leave room for its temporary file's)", path, sizeof(tf->name) - TEMP_EXTRA);
		return -1;
	}
	tf->dir_fd = user_open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (tf->dir_fd < 0 || access(dir, W_OK | X_OK)) {
		why_not_writable(path, dir, errno, why, len);
		textfile_close(tf, true);
		return -1;
	}
	if (!fstatat(tf->dir_fd, tf->name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode)) {
		snprintf(why, len, "--textfile %s: is a directory (give the path of a file in it)", path);
		textfile_close(tf, true);
		return -1;
	}
	remove_stale_temps(tf);
	return 0;
}

/* A new file of ours in the directory, mode TEXTFILE_MODE; its name in @temp. */
static int create_temp(struct textfile *tf, char *temp, size_t len)
{
	int fd = -1;

	for (int i = 0; i < TEMP_TRIES && fd < 0; i++) {
		if ((size_t)snprintf(temp, len, ".%s.%u.%u", tf->name, (unsigned int)getpid(),
				     tf->temp_seq++) >= len) {
			errno = ENAMETOOLONG;	/* textfile_open() leaves room: never */
			return -1;
		}
		fd = openat(tf->dir_fd, temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			    TEXTFILE_MODE);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	/* open's mode is cut by the umask: a shell's 077 would hide it. */
	if (fd >= 0 && fchmod(fd, TEXTFILE_MODE)) {
		int err = errno;

		close(fd);
		unlinkat(tf->dir_fd, temp, 0);
		errno = err;
		return -1;
	}
	return fd;
}

/* Render straight into the temporary file, through one large stdio
 * buffer: a copy in memory first (open_memstream) cost a third of a
 * report's CPU at 1,000 series, in its reallocations. No fsync: the file
 * is replaced every interval and removed at exit, so a crash can lose
 * nothing worth a flush request per report on the disk biolat may be
 * timing. fclose() is checked: NFS reports write errors at close. */
static int render_to_file(int fd, textfile_render_fn render, void *arg)
{
	static char buf[1 << 16];
	FILE *f = fdopen(fd, "w");
	int failed, err;

	if (!f) {
		err = errno;
		close(fd);
		return err;
	}
	setvbuf(f, buf, _IOFBF, sizeof(buf));
	errno = 0;
	failed = render(arg, f);
	err = failed ? errno : 0;	/* a flush inside it (ENOSPC) */
	if (fflush(f) && !err)
		err = errno;
	if (fclose(f) && !err)
		err = errno;
	if (!err && failed)
		err = EIO;	/* the renderer's own failure, without an errno of the file */
	return err;
}

static void count_failure(struct textfile *tf, int err)
{
	unsigned long long now = now_ns();

	tf->errors++;
	tf->untold++;
	if (tf->warned && now - tf->warned_ns < WARN_EVERY_NS)
		return;
	if (tf->untold > 1)
		diag_error("cannot write %s: %s (%llu writes failed since the last message; the "
			   "previous file is kept, tracing goes on)", tf->path, strerror(err), tf->untold);
	else
		diag_error("cannot write %s: %s (the previous file is kept, tracing goes on)",
			   tf->path, strerror(err));
	tf->warned = true;
	tf->warned_ns = now;
	tf->untold = 0;
}

int textfile_write(struct textfile *tf, textfile_render_fn render, void *arg)
{
	char temp[NAME_MAX + 1];
	int fd, err;

	fd = create_temp(tf, temp, sizeof(temp));
	err = fd < 0 ? errno : render_to_file(fd, render, arg);
	if (!err && renameat(tf->dir_fd, temp, tf->dir_fd, tf->name))
		err = errno;
	if (err && fd >= 0)
		unlinkat(tf->dir_fd, temp, 0);
	if (err) {
		count_failure(tf, err);
		return err;
	}
	tf->written = true;
	return 0;
}

void textfile_label(const char *path, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	size_t n = strlen(name), suffix = strlen(TEXTFILE_SUFFIX);

	if (n >= suffix && !strcmp(name + n - suffix, TEXTFILE_SUFFIX))
		n -= suffix;
	snprintf(out, len, "%.*s", (int)n, name);
}

void textfile_close(struct textfile *tf, bool keep)
{
	if (tf->dir_fd < 0)
		return;
	if (tf->written && !keep)
		unlinkat(tf->dir_fd, tf->name, 0);
	close(tf->dir_fd);
	tf->dir_fd = -1;
}
