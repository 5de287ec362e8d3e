// SPDX-License-Identifier: GPL-2.0-only
/*
 * openload: open a known set of files a known number of times, for the
 * opensnoop tests. Each --file is opened --opens times with open(2) (or
 * openat(2), openat2(2): --call) and closed; files that do not exist make
 * failed opens. The path can be placed where a tracer reading it at the
 * syscall's entry cannot: --cold puts it in a file-backed page dropped
 * before each open (not present until the kernel faults it in), --edge
 * ends it on the last byte of a page followed by an unmapped one. With
 * --dir DIR, openat(2) and openat2(2) resolve the paths against an fd of
 * DIR instead of the working directory.
 *
 * It prints "pid=P" and waits for --go FILE (polling with access(), which
 * is not an open) so a tracer can attach first; after the opens it prints
 * "done" and waits for --hold FILE before exiting.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES 16

enum place { PLACE_PLAIN, PLACE_COLD, PLACE_EDGE };
enum call { CALL_OPEN, CALL_OPENAT, CALL_OPENAT2 };

static const char *files[MAX_FILES];
static int nfiles;
static long opens = 1;
static int flags = O_RDONLY;
static enum place place = PLACE_PLAIN;
static enum call call = CALL_OPENAT;
static const char *go_file, *hold_file, *comm;
static int dirfd = AT_FDCWD;

static void wait_file(const char *path)
{
	struct timespec ts = { .tv_nsec = 1000000 };

	while (path && access(path, F_OK))
		nanosleep(&ts, NULL);
}

static int do_open(const char *path)
{
	/* openat2 refuses a mode without O_CREAT or O_TMPFILE (EINVAL). */
	struct open_how how = { .flags = (__u64)flags,
				.mode = flags & (O_CREAT | __O_TMPFILE) ? 0600 : 0 };

	switch (call) {
	case CALL_OPEN:
		return (int)syscall(SYS_open, path, flags, 0600);
	case CALL_OPENAT2:
		return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	default:
		return openat(dirfd, path, flags, 0600);
	}
}

/* The path in a private file-backed page, dropped before each open. */
static char *cold_copy(const char *path, size_t page)
{
	char tmpl[] = "/tmp/openload-XXXXXX";
	int fd = mkstemp(tmpl);
	char *p;

	if (fd < 0 || ftruncate(fd, (off_t)page) || pwrite(fd, path, strlen(path) + 1, 0) < 0) {
		perror("openload: cold page");
		exit(1);
	}
	p = mmap(NULL, page, PROT_READ, MAP_PRIVATE, fd, 0);
	unlink(tmpl);
	close(fd);
	if (p == MAP_FAILED) {
		perror("openload: mmap");
		exit(1);
	}
	return p;
}

/* The path ending on the last byte of a page whose successor is unmapped. */
static char *edge_copy(const char *path, size_t page)
{
	size_t len = strlen(path) + 1;
	char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || len > page || munmap(p + page, page)) {
		perror("openload: edge page");
		exit(1);
	}
	memcpy(p + page - len, path, len);
	return p + page - len;
}

static int open_all(void)
{
	size_t page = (size_t)getpagesize();
	int failed = 0;

	for (int i = 0; i < nfiles; i++) {
		char *name = (char *)files[i];

		if (place == PLACE_COLD)
			name = cold_copy(files[i], page);
		else if (place == PLACE_EDGE)
			name = edge_copy(files[i], page);
		for (long k = 0; k < opens; k++) {
			int fd;

			if (place == PLACE_COLD)
				madvise(name, page, MADV_DONTNEED);
			fd = do_open(name);
			if (fd < 0)
				failed++;
			else
				close(fd);
		}
	}
	return failed;
}

static void usage(void)
{
	fprintf(stderr, "usage: openload --file PATH [--file PATH...] [--opens N] "
		"[--call open|openat|openat2] [--flags creat|write|rdwr|...] [--cold|--edge] "
		"[--dir DIR] [--comm NAME] [--go FILE] [--hold FILE]\n");
	exit(2);
}

static void parse_flags(const char *s)
{
	if (!strcmp(s, "creat"))
		flags = O_CREAT | O_WRONLY;
	else if (!strcmp(s, "write"))
		flags = O_WRONLY;
	else if (!strcmp(s, "rdwr"))
		flags = O_RDWR;
	else if (!strcmp(s, "cloexec"))
		flags = O_RDONLY | O_CLOEXEC;
	else
		usage();
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "opens", required_argument, NULL, 'o' },
		{ "call", required_argument, NULL, 'c' },
		{ "flags", required_argument, NULL, 'F' },
		{ "cold", no_argument, NULL, 'C' },
		{ "edge", no_argument, NULL, 'E' },
		{ "comm", required_argument, NULL, 'n' },
		{ "go", required_argument, NULL, 'g' },
		{ "hold", required_argument, NULL, 'h' },
		{ "dir", required_argument, NULL, 'D' },
		{},
	};
	int c, failed;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': if (nfiles == MAX_FILES) usage(); files[nfiles++] = optarg; break;
		case 'o': opens = strtol(optarg, NULL, 10); break;
		case 'c':
			call = !strcmp(optarg, "open") ? CALL_OPEN :
			       !strcmp(optarg, "openat2") ? CALL_OPENAT2 : CALL_OPENAT;
			break;
		case 'F': parse_flags(optarg); break;
		case 'C': place = PLACE_COLD; break;
		case 'E': place = PLACE_EDGE; break;
		case 'n': comm = optarg; break;
		case 'g': go_file = optarg; break;
		case 'h': hold_file = optarg; break;
		case 'D':
			dirfd = open(optarg, O_RDONLY | O_DIRECTORY);
			if (dirfd < 0) {
				perror("openload: --dir");
				return 1;
			}
			break;
		default: usage();
		}
	}
	if (!nfiles || opens < 1)
		usage();
	if (comm)
		prctl(PR_SET_NAME, comm);
	printf("pid=%d\n", getpid());
	fflush(stdout);
	wait_file(go_file);
	failed = open_all();
	printf("failed=%d\ndone\n", failed);
	fflush(stdout);
	wait_file(hold_file);
	return 0;
}
