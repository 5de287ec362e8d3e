// SPDX-License-Identifier: GPL-2.0-only
/*
 * openbench: the workload of opensnoop's rows in make bench.
 *
 *   openbench PATH [OPENS]
 *     open() and close() PATH, an existing file, 1000 times (warm-up) and
 *     then OPENS times (default 150000) as fast as it can; print
 *     "OPENS_PER_S OPENS_MADE": the rate of the timed loop and every open
 *     of PATH made (warm-up included), what a tracer must deliver.
 *   openbench -w OUTFILE PATH
 *     open OUTFILE (a tracer's output), then open PATH once and read
 *     OUTFILE every 1 ms until a line ends in PATH; print the ms from the
 *     open to then (-1 if not within 5 s).
 * Static, so that it makes no open but these (no loader, no locale).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WARMUP 1000

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int open_close(const char *path)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* Has the file (read from the start) a line ending in path? */
static int has_line(int fd, const char *needle)
{
	static char buf[1 << 20];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

static int wait_for_line(const char *outfile, const char *path)
{
	const struct timespec ms = { .tv_nsec = 1000000 };
	char needle[4200];
	double t0;
	int fd = open(outfile, O_RDONLY);

	if (fd < 0 || snprintf(needle, sizeof(needle), "%s\n", path) >= (int)sizeof(needle)) {
		perror(outfile);
		return 2;
	}
	t0 = now_ns();
	if (open_close(path)) {
		perror(path);
		return 2;
	}
	while (!has_line(fd, needle)) {
		if (now_ns() - t0 > 5e9) {
			printf("-1\n");
			return 1;
		}
		nanosleep(&ms, NULL);
	}
	printf("%.1f\n", (now_ns() - t0) / 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	long opens;
	double t0, t1;

	if (argc == 4 && !strcmp(argv[1], "-w"))
		return wait_for_line(argv[2], argv[3]);
	opens = argc > 2 ? atol(argv[2]) : 150000;
	if (argc < 2 || argc > 3 || opens <= 0) {
		fprintf(stderr, "usage: openbench PATH [OPENS] | openbench -w OUTFILE PATH\n");
		return 2;
	}
	for (int i = 0; i < WARMUP; i++)
		if (open_close(argv[1])) {
			perror(argv[1]);
			return 1;
		}
	t0 = now_ns();
	for (long i = 0; i < opens; i++)
		if (open_close(argv[1])) {
			perror(argv[1]);
			return 1;
		}
	t1 = now_ns();
	printf("%.0f %ld\n", (double)opens * 1e9 / (t1 - t0), WARMUP + opens);
	return 0;
}
