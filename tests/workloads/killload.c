// SPDX-License-Identifier: GPL-2.0-only
/*
 * killload: threads killed in the middle of a syscall, for the tests of
 * what a tool keeps per thread (tests/killed_threads.bats, tests/soak.py).
 * Each of --threads threads blocks in one call that nothing will end:
 * read(2) of a pipe that no one writes (--call read, default), or
 * openat(2) of a FIFO that no one opens for writing (--call openat; the
 * FIFO is made in --dir, default /tmp, and with --rounds removed at the
 * end).
 *
 * Without --rounds: this process makes the threads, waits until each is
 * in its call (/proc/self/task/TID/syscall shows its number), prints
 * "pid=P tids=T1,T2,..." and waits to be killed (SIGKILL: every thread
 * dies in its call).
 *
 * --rounds R: R times (0: until --stop FILE exists), a forked child does
 * the above and this process SIGKILLs it once every thread is in its
 * call, then reaps it; then prints "rounds=R threads=N" (the threads
 * killed in a call, all rounds). A round whose threads are not all in
 * their call within 10 s fails the run (status 1, a message).
 *
 * Options:
 *   --threads N   1 to 4096 (default 200)
 *   --call C      read or openat
 *   --dir DIR     where the FIFO of --call openat is made
 *   --rounds R    see above
 *   --stop FILE   with --rounds 0: end after the round in which FILE exists
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 4096
#define BLOCK_WAIT_SECS 10
#define THREAD_STACK (64 * 1024)

static int nthreads = 200;
static long call_nr = SYS_read;
static const char *dir = "/tmp", *stop_file;
static char fifo[4096];
static int pipe_fds[2];
static pid_t tids[MAX_THREADS];

static void die(const char *what)
{
	fprintf(stderr, "killload: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *blocker(void *arg)
{
	char byte;

	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	if (call_nr == SYS_read)
		(void)read(pipe_fds[0], &byte, 1);
	else
		(void)open(fifo, O_RDONLY);
	return NULL;
}

/* Thread @tid of @pid is in the call (its syscall number is call_nr). */
static int in_call(pid_t pid, pid_t tid)
{
	char path[64], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "running" (strtol: 0, read's number) or "-1 ..." (not in a call). */
	return buf[0] >= '0' && buf[0] <= '9' && strtol(buf, NULL, 10) == call_nr;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Until every thread of @pid in @tid_list is in its call; -1 after
 * BLOCK_WAIT_SECS. The tids are shared with a child (MAP_SHARED). */
static int wait_blocked(pid_t pid, volatile pid_t *tid_list)
{
	for (int ms = 0; ms < BLOCK_WAIT_SECS * 1000; ms++) {
		int i;

		for (i = 0; i < nthreads && tid_list[i] && in_call(pid, tid_list[i]); i++)
			;
		if (i == nthreads)
			return 0;
		sleep_ms(1);
	}
	return -1;
}

static void start_threads(volatile pid_t *tid_list)
{
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	for (int i = 0; i < nthreads; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, blocker, (void *)&tid_list[i]))
			die("pthread_create");
	}
}

static void one_process(void)
{
	start_threads(tids);
	if (wait_blocked(getpid(), tids)) {
		fprintf(stderr, "killload: threads not in their call after %d s\n", BLOCK_WAIT_SECS);
		exit(1);
	}
	printf("pid=%d tids=", getpid());
	for (int i = 0; i < nthreads; i++)
		printf("%s%d", i ? "," : "", tids[i]);
	printf("\n");
	fflush(stdout);
	for (;;)
		pause();
}

/* One round: a child's threads blocked, then killed. 0, or -1. */
static int round_once(volatile pid_t *shared)
{
	pid_t child;
	int status, err;

	memset((void *)shared, 0, sizeof(pid_t) * nthreads);
	child = fork();
	if (child < 0)
		die("fork");
	if (!child) {
		start_threads(shared);
		for (;;)
			pause();
	}
	err = wait_blocked(child, shared);
	kill(child, SIGKILL);
	if (waitpid(child, &status, 0) != child)
		die("waitpid");
	return err;
}

static void rounds(long n)
{
	volatile pid_t *shared = mmap(NULL, sizeof(pid_t) * nthreads, PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long done = 0;

	if (shared == MAP_FAILED)
		die("mmap");
	while (!n || done < n) {
		if (round_once(shared)) {
			fprintf(stderr, "killload: round %ld: threads not in their call after %d s\n",
				done + 1, BLOCK_WAIT_SECS);
			exit(1);
		}
		done++;
		if (!n && stop_file && !access(stop_file, F_OK))
			break;
	}
	printf("rounds=%ld threads=%ld\n", done, done * nthreads);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "call", required_argument, NULL, 'c' },
		{ "dir", required_argument, NULL, 'd' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "stop", required_argument, NULL, 's' },
		{ 0 },
	};
	long nrounds = -1;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			nthreads = atoi(optarg);
			break;
		case 'c':
			if (!strcmp(optarg, "read"))
				call_nr = SYS_read;
			else if (!strcmp(optarg, "openat"))
				call_nr = SYS_openat;
			else
				goto usage;
			break;
		case 'd': dir = optarg; break;
		case 'r': nrounds = atol(optarg); break;
		case 's': stop_file = optarg; break;
		default:
			goto usage;
		}
	}
	if (optind != argc || nthreads < 1 || nthreads > MAX_THREADS || nrounds < -1)
		goto usage;
	if (pipe(pipe_fds))
		die("pipe");
	if (call_nr == SYS_openat) {
		snprintf(fifo, sizeof(fifo), "%s/killload.%d.fifo", dir, getpid());
		if (mkfifo(fifo, 0600))
			die("mkfifo");
	}
	if (nrounds < 0)
		one_process();
	rounds(nrounds);
	if (*fifo)
		unlink(fifo);
	return 0;
usage:
	fprintf(stderr, "usage: killload [--threads N] [--call read|openat] [--dir DIR] "
		"[--rounds R [--stop FILE]]\n");
	return 2;
}
