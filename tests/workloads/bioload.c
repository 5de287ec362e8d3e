// SPDX-License-Identifier: GPL-2.0-only
/*
 * bioload: make a known number of block I/O requests, for the biolat and
 * readlat -B tests. It works on --dev, a block device (a loop device set
 * up by the test) or a regular file, in one of two modes:
 *
 * --direct: opens it O_RDWR|O_DIRECT and makes exactly --reads pread()
 * then --writes pwrite() calls (alternating while both remain, with
 * --interleave), each of exactly --size bytes from one 4096-aligned buffer.
 * The i-th call (reads and writes counted together) is at --offset +
 * i * --size, wrapping back to --offset at the end of the device (so the
 * offsets are distinct while the calls fit). No fsync, no O_SYNC: the
 * device sees no flush. One call is one request as long as the block
 * layer need not split it: --size at most the device's max_sectors_kb, and
 * at most max_segments pages (a loop device: 128, so 512 KiB; a 1 MiB call
 * there makes 2 requests).
 *
 * --cached: opens it O_RDONLY, turns readahead off (POSIX_FADV_RANDOM) and
 * drops its cached pages (POSIX_FADV_DONTNEED); then makes --reads read()
 * calls of --size bytes at --offset + i MiB (lseek, which is not a read,
 * then read), each of uncached data that must come from the disk; prints
 * "cold done"; waits for --pause FILE if given; and makes the same reads
 * again, now served from the page cache.
 *
 * It prints "pid=P" and waits for --go FILE (polling with access(), which
 * is not a read) so a tracer can attach first; after the I/O it prints
 * "done" and waits for --hold FILE before exiting. A call that transfers
 * less than --size bytes, or fails, ends it with status 1 and a message.
 *
 * Options:
 *   --dev PATH       the device or file (required)
 *   --direct         see above
 *   --cached         see above (exactly one of --direct and --cached)
 *   --reads N        read calls (default 100; --cached: per phase)
 *   --writes M       --direct: write calls after the reads (default 0)
 *   --interleave     --direct: read, write, read, ... while both remain
 *   --size BYTES     bytes per call, a multiple of 512 (default 4096)
 *   --offset BYTES   where the first call is, a multiple of 512 (default 0)
 *   --comm NAME      the process's name (PR_SET_NAME, cut at 15 bytes)
 *   --pause FILE     --cached: after "cold done", wait for FILE
 *   --go FILE, --hold FILE  see above
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SECTOR 512		/* --size and --offset are multiples of it */
#define BUF_ALIGN 4096		/* O_DIRECT buffer alignment, safe for any device */
#define CACHED_STRIDE (1L << 20)	/* --cached: far apart, no shared page */

enum mode { MODE_DIRECT, MODE_CACHED };

static enum mode mode;
static int nmodes;		/* --direct and --cached given */
static const char *dev, *go_file, *hold_file, *pause_file;
static long reads = 100, writes, size = 4096;
static off_t offset;
static int interleave;

static void sleep_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void wait_file(const char *path)
{
	while (path && access(path, F_OK))
		sleep_us(1000);
}

static void say(const char *line)
{
	printf("%s\n", line);
	fflush(stdout);
}

static void fail(const char *what)
{
	fprintf(stderr, "bioload: %s %s: %s\n", what, dev, strerror(errno));
	exit(1);
}

/* A short transfer is not the request the test counts on: give up. */
static void check(ssize_t n, const char *call, off_t at)
{
	if (n == size)
		return;
	if (n < 0)
		fprintf(stderr, "bioload: %s %s at %lld: %s\n", call, dev,
			(long long)at, strerror(errno));
	else
		fprintf(stderr, "bioload: %s %s at %lld: %zd bytes, not %ld\n", call,
			dev, (long long)at, n, size);
	exit(1);
}

static off_t dev_size(int fd)
{
	struct stat st;
	unsigned long long bytes;

	if (fstat(fd, &st))
		fail("fstat");
	if (!S_ISBLK(st.st_mode))
		return st.st_size;
	if (ioctl(fd, BLKGETSIZE64, &bytes))
		fail("ioctl BLKGETSIZE64");
	return (off_t)bytes;
}

/* --direct: the calls go to `slots` places, --size apart, from --offset. */
static long direct_setup(char *buf, off_t end)
{
	long slots = end > offset ? (end - offset) / size : 0;

	if (slots < 1) {
		fprintf(stderr, "bioload: %s: no room for %ld bytes after offset %lld\n",
			dev, size, (long long)offset);
		exit(1);
	}
	memset(buf, 0xa5, size);
	return slots;
}

static void run_direct(int fd, char *buf, long slots)
{
	long r = 0, w = 0;

	for (long i = 0; r < reads || w < writes; i++) {
		off_t at = offset + (i % slots) * size;
		int do_read = r < reads && (!interleave || w >= writes || r <= w);

		if (do_read) {
			check(pread(fd, buf, size, at), "pread", at);
			r++;
		} else {
			check(pwrite(fd, buf, size, at), "pwrite", at);
			w++;
		}
	}
}

static void cached_pass(int fd, char *buf)
{
	for (long i = 0; i < reads; i++) {
		off_t at = offset + i * CACHED_STRIDE;

		if (lseek(fd, at, SEEK_SET) != at)
			fail("lseek");
		check(read(fd, buf, size), "read", at);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: bioload --dev PATH --direct [--reads N] [--writes M] [--interleave]\n"
			"         [--size BYTES] [--offset BYTES] [--comm NAME] [--go FILE] [--hold FILE]\n"
			"       bioload --dev PATH --cached [--reads N] [--size BYTES] [--offset BYTES]\n"
			"         [--comm NAME] [--pause FILE] [--go FILE] [--hold FILE]\n"
			"(see the comment at the top of bioload.c)\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", 1, NULL, 'D' }, { "direct", 0, NULL, 'd' },
		{ "cached", 0, NULL, 'C' }, { "reads", 1, NULL, 'r' },
		{ "writes", 1, NULL, 'w' }, { "interleave", 0, NULL, 'i' },
		{ "size", 1, NULL, 's' }, { "offset", 1, NULL, 'o' },
		{ "comm", 1, NULL, 'c' }, { "pause", 1, NULL, 'p' },
		{ "go", 1, NULL, 'g' }, { "hold", 1, NULL, 'h' },
		{},
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'D': dev = optarg; break;
		case 'd': mode = MODE_DIRECT; nmodes++; break;
		case 'C': mode = MODE_CACHED; nmodes++; break;
		case 'r': reads = atol(optarg); break;
		case 'w': writes = atol(optarg); break;
		case 'i': interleave = 1; break;
		case 's': size = atol(optarg); break;
		case 'o': offset = atoll(optarg); break;
		case 'c': prctl(PR_SET_NAME, optarg); break;
		case 'p': pause_file = optarg; break;
		case 'g': go_file = optarg; break;
		case 'h': hold_file = optarg; break;
		default: usage();
		}
	}
	if (optind != argc || !dev || nmodes != 1 ||
	    reads < 0 || writes < 0 || size <= 0 || size % SECTOR ||
	    offset < 0 || offset % SECTOR ||
	    (mode == MODE_CACHED && (writes || interleave)) ||
	    (mode == MODE_DIRECT && pause_file))
		usage();
}

/* --cached: every cold read must find its pages uncached, so none may
 * share a page or lie past the end. */
static void cached_setup(int fd, off_t end)
{
	if (size > CACHED_STRIDE ||
	    (reads && offset + (reads - 1) * CACHED_STRIDE + size > end)) {
		fprintf(stderr, "bioload: %s: %ld reads %ld MiB apart from offset %lld do not fit\n",
			dev, reads, CACHED_STRIDE >> 20, (long long)offset);
		exit(1);
	}
	errno = posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	if (errno)
		fail("posix_fadvise RANDOM");
	errno = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (errno)
		fail("posix_fadvise DONTNEED");
}

int main(int argc, char **argv)
{
	char *buf;
	long slots = 0;
	off_t end;
	int fd;

	parse(argc, argv);
	fd = open(dev, mode == MODE_DIRECT ? O_RDWR | O_DIRECT : O_RDONLY);
	if (fd < 0)
		fail("open");
	end = dev_size(fd);
	errno = posix_memalign((void **)&buf, BUF_ALIGN, size);
	if (errno)
		fail("posix_memalign for");
	if (mode == MODE_DIRECT)
		slots = direct_setup(buf, end);
	else
		cached_setup(fd, end);
	printf("pid=%d\n", getpid());
	fflush(stdout);
	wait_file(go_file);
	if (mode == MODE_DIRECT) {
		run_direct(fd, buf, slots);
	} else {
		cached_pass(fd, buf);
		say("cold done");
		wait_file(pause_file);
		cached_pass(fd, buf);
	}
	say("done");
	wait_file(hold_file);
	free(buf);
	close(fd);
	return 0;
}
