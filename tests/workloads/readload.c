// SPDX-License-Identifier: GPL-2.0-only
/*
 * readload: perform an exact number of read-family syscalls with a known
 * latency, for the readlat tests. Each reader thread reads 1 byte at a time
 * from a pipe whose writer thread (same process, never reads) sends a byte
 * --delay-us after the reader starts each read (lockstep: every read waits
 * a whole delay), or from /dev/zero, or from an invalid fd (fails EBADF).
 *
 * It prints "pid=P tids=T1,T2,... fds=F1,..." and then waits for --go FILE
 * (polling with access(), which is not a read) so a tracer can attach
 * first; after the reads it prints "done" and waits for --hold FILE
 * before exiting.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 8

enum source { SRC_PIPE, SRC_ZERO, SRC_BADFD };

static long reads = 100, delay_us = 1000, bad_reads;
static int nthreads = 1;
static enum source source = SRC_PIPE;
static const char *syscall_name = "read";
static const char *go_file, *hold_file;

struct reader {
	pthread_t thread, writer;
	int fd, wfd;
	pid_t tid;
	volatile int ready;
	volatile long want;	/* reads the reader has started */
};

static struct reader readers[MAX_THREADS];
static volatile int go;

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

static ssize_t one_read(int fd, char *buf)
{
	struct iovec iov = { .iov_base = buf, .iov_len = 1 };

	if (!strcmp(syscall_name, "pread64"))
		return pread(fd, buf, 1, 0);
	if (!strcmp(syscall_name, "readv"))
		return readv(fd, &iov, 1);
	if (!strcmp(syscall_name, "preadv"))
		return preadv(fd, &iov, 1, 0);
	return read(fd, buf, 1);
}

static void *writer_main(void *arg)
{
	struct reader *r = arg;
	char c = 'x';

	/* Lockstep: each delay starts when the reader starts that read, so
	 * every read waits a whole delay, however late the reader comes back
	 * (a slow scheduler or an emulated CPU). */
	for (long i = 0; i < reads; i++) {
		while (__atomic_load_n(&r->want, __ATOMIC_ACQUIRE) <= i)
			sleep_us(20);
		sleep_us(delay_us);
		if (write(r->wfd, &c, 1) != 1)
			break;
	}
	return NULL;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	char buf[1];

	r->tid = (pid_t)syscall(SYS_gettid);
	r->ready = 1;
	while (!go)
		sleep_us(200);
	for (long i = 0; i < reads; i++) {
		__atomic_store_n(&r->want, i + 1, __ATOMIC_RELEASE);
		if (one_read(r->fd, buf) != 1 && source != SRC_BADFD) {
			perror("readload: read");
			exit(1);
		}
	}
	for (long i = 0; i < bad_reads; i++)
		if (read(-1, buf, 1) != -1)
			exit(1);
	return NULL;
}

static int open_source(struct reader *r)
{
	int p[2];

	switch (source) {
	case SRC_ZERO:
		r->fd = open("/dev/zero", O_RDONLY);
		return r->fd < 0 ? -1 : 0;
	case SRC_BADFD:
		r->fd = -1;
		return 0;
	case SRC_PIPE:
		if (pipe(p))
			return -1;
		r->fd = p[0];
		r->wfd = p[1];
		return pthread_create(&r->writer, NULL, writer_main, r);
	}
	return -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: readload [--reads N] [--delay-us D] [--source pipe|zero|badfd]\n"
			"  [--syscall read|pread64|readv|preadv] [--threads T] [--bad N]\n"
			"  [--comm NAME] [--go FILE] [--hold FILE]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "reads", 1, NULL, 'r' }, { "delay-us", 1, NULL, 'd' },
		{ "source", 1, NULL, 's' }, { "syscall", 1, NULL, 'S' },
		{ "threads", 1, NULL, 't' }, { "bad", 1, NULL, 'b' },
		{ "comm", 1, NULL, 'c' }, { "go", 1, NULL, 'g' }, { "hold", 1, NULL, 'h' },
		{},
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r': reads = atol(optarg); break;
		case 'd': delay_us = atol(optarg); break;
		case 's':
			source = !strcmp(optarg, "zero") ? SRC_ZERO :
				 !strcmp(optarg, "badfd") ? SRC_BADFD : SRC_PIPE;
			break;
		case 'S': syscall_name = optarg; break;
		case 't': nthreads = atoi(optarg); break;
		case 'b': bad_reads = atol(optarg); break;
		case 'c': prctl(PR_SET_NAME, optarg); break;
		case 'g': go_file = optarg; break;
		case 'h': hold_file = optarg; break;
		default: usage();
		}
	}
	if (nthreads < 1 || nthreads > MAX_THREADS || reads < 0)
		usage();
	if (source == SRC_BADFD) {
		bad_reads += reads;
		reads = 0;
	}
}

int main(int argc, char **argv)
{
	parse(argc, argv);
	for (int i = 0; i < nthreads; i++) {
		if (open_source(&readers[i]) ||
		    pthread_create(&readers[i].thread, NULL, reader_main, &readers[i])) {
			perror("readload: setup");
			return 1;
		}
	}
	for (int i = 0; i < nthreads; i++)
		while (!readers[i].ready)
			sleep_us(100);
	printf("pid=%d tids=", getpid());
	for (int i = 0; i < nthreads; i++)
		printf("%s%d", i ? "," : "", readers[i].tid);
	printf(" fds=");
	for (int i = 0; i < nthreads; i++)
		printf("%s%d", i ? "," : "", readers[i].fd);
	printf("\n");
	fflush(stdout);
	wait_file(go_file);
	go = 1;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(readers[i].thread, NULL);
		if (source == SRC_PIPE)
			pthread_join(readers[i].writer, NULL);
	}
	printf("done\n");
	fflush(stdout);
	wait_file(hold_file);
	return 0;
}
