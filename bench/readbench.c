// SPDX-License-Identifier: GPL-2.0-only
/*
 * readbench: time N 1-byte read()s of /dev/zero or of a pipe kept full by
 * a writer thread, and print the mean cost per read in ns. The hot loop is
 * nothing but read(): what a tracer adds shows up directly.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

static int pipe_fds[2];
static volatile int done;

static void *writer(void *arg)
{
	static char buf[65536];

	(void)arg;
	memset(buf, 'x', sizeof(buf));
	while (!done)
		if (write(pipe_fds[1], buf, sizeof(buf)) < 0)
			break;
	return NULL;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long reads = argc > 2 ? atol(argv[2]) : 1000000;
	const char *source = argc > 1 ? argv[1] : "zero";
	pthread_t thr;
	double t0, t1;
	char c;
	int fd;

	if (!strcmp(source, "pipe")) {
		if (pipe(pipe_fds) || pthread_create(&thr, NULL, writer, NULL))
			return 1;
		fd = pipe_fds[0];
	} else {
		fd = open("/dev/zero", O_RDONLY);
	}
	if (fd < 0 || reads <= 0) {
		fprintf(stderr, "usage: readbench zero|pipe [reads]\n");
		return 2;
	}
	for (int i = 0; i < 1000; i++)		/* warm up */
		if (read(fd, &c, 1) != 1)
			return 1;
	t0 = now_ns();
	for (long i = 0; i < reads; i++)
		if (read(fd, &c, 1) != 1)
			return 1;
	t1 = now_ns();
	done = 1;
	printf("%.1f\n", (t1 - t0) / (double)reads);
	return 0;
}
