// SPDX-License-Identifier: GPL-2.0-only
/*
 * readload: perform an exact number of read-family syscalls with a known
 * latency, for the readlat tests. Each reader thread reads 1 byte at a time
 * from a pipe whose writer thread (same process, never reads) sends a byte
 * --delay-us after the reader starts each read (lockstep: every read waits
 * a whole delay), or from /dev/zero, or from an invalid fd (fails EBADF),
 * or (--source files) from files named by --files.
 *
 * It prints "pid=P tids=T1,T2,... fds=F1,..." and then waits for --go FILE
 * (polling with access(), which is not a read) so a tracer can attach
 * first; after the reads it prints "done" and waits for --hold FILE
 * before exiting.
 *
 * Options:
 *   --reads N        read() calls per reader thread (default 100)
 *   --delay-us D     pipe: each read waits D microseconds (default 1000)
 *   --source S       pipe (default), zero (/dev/zero), badfd (fd -1, every
 *                    read fails EBADF) or files (see --files)
 *   --syscall S      read (default), pread64, readv or preadv
 *   --threads T      reader threads, 1 to 8 (default 1)
 *   --bad N          then N more reads of fd -1 per thread (fail EBADF)
 *   --comm NAME      the process's name (PR_SET_NAME, cut at 15 bytes: any
 *                    bytes but NUL); threads inherit it
 *   --thread-comm N1,N2,...  reader thread i names itself Ni (before "pid="
 *                    is printed); the main thread, the group leader, keeps
 *                    --comm. At most --threads names; a name has no comma
 *   --signal-us US   while the reads run, another thread sends SIGUSR1 to
 *                    each reader thread every US microseconds (pthread_kill)
 *   --sa-restart 1|0 the SIGUSR1 handler is installed with SA_RESTART (1,
 *                    default: the kernel restarts an interrupted read
 *                    unseen) or without (0: read() fails EINTR, the reader
 *                    counts it and retries the same read, so there are still
 *                    exactly --reads successful reads per thread). With
 *                    --signal-us, "eintr=K" (failed reads, all threads) is
 *                    printed on its own line before "done"
 *   --files P1,P2,...  with --source files: one reader thread; for each path
 *                    in turn it opens it, makes --reads 1-byte read() calls
 *                    (every call counts, also one that returns 0 at EOF,
 *                    after which it lseeks to 0, which is not a read), and
 *                    closes it. Every path is read through the same fd
 *                    number (the one in "fds="; the first file is opened
 *                    before "pid=" is printed). A path has no comma
 *   --first N --then FILE  with --source zero: after --go, each reader
 *                    first makes N reads, then main prints "first-done" and
 *                    the readers wait for FILE before their --reads reads
 *                    (the same threads: a test moves the process to
 *                    another cgroup in between)
 *   --rename NAME    with --first: main renames each reader NAME between
 *                    the two (pthread_setname_np: another thread's name,
 *                    through /proc), before "first-done"
 *   --rename-self NAME  the same, each reader renaming itself (prctl)
 *   --go FILE, --hold FILE  see above
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 8
#define MAX_FILES 16

enum source { SRC_PIPE, SRC_ZERO, SRC_BADFD, SRC_FILES };

static long reads = 100, delay_us = 1000, bad_reads, signal_us, first_reads;
static int nthreads = 1, sa_restart = 1;
static enum source source = SRC_PIPE;
static const char *syscall_name = "read";
static const char *go_file, *hold_file, *then_file, *rename_to, *rename_self;
static char *thread_comms[MAX_THREADS];	/* --thread-comm, NULL: inherit */
static int nthread_comms;
static char *files[MAX_FILES];		/* --files */
static int nfiles;

struct reader {
	pthread_t thread, writer;
	int fd, wfd;
	pid_t tid;
	const char *comm;	/* the name it gives itself, or NULL */
	long eintr;		/* reads that failed EINTR (and were retried) */
	volatile int ready, finished, first_done;
	volatile long want;	/* reads the reader has started */
	int seq, waiting;	/* the writer's futex, and whether it sleeps on it */
	int syscall_fd;		/* pipe: the reader's /proc/thread-self/syscall */
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

/* "a,b,c" cut in place into at most max strings; -1 if more. */
static int split(char *list, char **out, int max)
{
	int n = 0;

	for (char *s = list, *next; s; s = next) {
		next = strchr(s, ',');
		if (next)
			*next++ = '\0';
		if (n == max)
			return -1;
		out[n++] = s;
	}
	return n;
}

static void on_signal(int sig)
{
	(void)sig;
}

/* Every signal_us, SIGUSR1 to each reader thread still reading. A thread
 * that has returned stays valid for pthread_kill until main joins it,
 * which main does after this thread ends. */
static void *signaler_main(void *arg)
{
	(void)arg;
	while (!go)
		sleep_us(200);
	for (;;) {
		int live = 0;

		for (int i = 0; i < nthreads; i++) {
			if (readers[i].finished)
				continue;
			live++;
			pthread_kill(readers[i].thread, SIGUSR1);
		}
		if (!live)
			break;
		sleep_us(signal_us);
	}
	return NULL;
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

/* The writer until the reader has started read @i (a futex: polling every
 * 20 us made 4 workloads' writers take a PREEMPT_RT guest's emulated CPUs,
 * over 60 s for 77 reads). Seq is read before the want that decides, so a
 * reader's wake in between fails the wait (EAGAIN) instead of being lost. */
static void wait_for_read(struct reader *r, long i)
{
	while (__atomic_load_n(&r->want, __ATOMIC_SEQ_CST) <= i) {
		int seq = __atomic_load_n(&r->seq, __ATOMIC_SEQ_CST);

		__atomic_store_n(&r->waiting, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&r->want, __ATOMIC_SEQ_CST) <= i)
			syscall(SYS_futex, &r->seq, FUTEX_WAIT_PRIVATE, seq, NULL, NULL, 0);
		__atomic_store_n(&r->waiting, 0, __ATOMIC_SEQ_CST);
	}
}

/* The reader starts read @i + 1: the writer, if it sleeps, is woken. */
static void read_started(struct reader *r, long i)
{
	__atomic_store_n(&r->want, i + 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&r->waiting, __ATOMIC_SEQ_CST)) {
		__atomic_fetch_add(&r->seq, 1, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, &r->seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

/* The writer, after read_started(), until the reader is inside the read
 * syscall: between the two an emulated CPU has kept the reader away from
 * the kernel for longer than a 3 ms delay (arm64 under TCG), and that read
 * then found its byte waiting. /proc/PID/task/TID/syscall names the
 * syscall a thread is in ("running", or -1, when it is in none); pread64,
 * so that the writer adds no read() of its own to the process. */
static void wait_in_read(struct reader *r)
{
	long nr = strcmp(syscall_name, "readv") ? SYS_read : SYS_readv;
	char buf[32], *end;
	ssize_t n;

	while ((n = pread(r->syscall_fd, buf, sizeof(buf) - 1, 0)) > 0) {
		buf[n] = '\0';
		if (strtol(buf, &end, 10) == nr && end != buf && *end == ' ')
			return;
		sleep_us(100);
	}
	perror("readload: pread /proc/thread-self/syscall");
	exit(1);
}

static void *writer_main(void *arg)
{
	struct reader *r = arg;
	char c = 'x';

	/* Lockstep: each delay starts when the reader is in that read, so
	 * every read waits a whole delay, however late the reader comes back
	 * (a slow scheduler or an emulated CPU). */
	for (long i = 0; i < reads; i++) {
		wait_for_read(r, i);
		wait_in_read(r);
		sleep_us(delay_us);
		if (write(r->wfd, &c, 1) != 1)
			break;
	}
	return NULL;
}

/* One read; one that fails EINTR (a signal, no SA_RESTART) is counted
 * and made again: the same read, so the writer's lockstep (want) is
 * unchanged and its byte still answers it. */
static ssize_t read_retrying(struct reader *r, char *buf)
{
	ssize_t n;

	while ((n = one_read(r->fd, buf)) < 0 && errno == EINTR)
		r->eintr++;
	return n;
}

/* --source files: --reads read() calls on each file in turn, all through
 * fd r->fd (the first file is already open on it). */
static void read_files(struct reader *r, char *buf)
{
	for (int f = 0; f < nfiles; f++) {
		if (f) {
			int fd = open(files[f], O_RDONLY);

			if (fd < 0) {
				perror("readload: open");
				exit(1);
			}
			/* close() freed r->fd, the lowest: open() took it. */
			if (fd != r->fd) {
				fprintf(stderr, "readload: open gave fd %d, not %d\n", fd, r->fd);
				exit(1);
			}
		}
		for (long i = 0; i < reads; i++) {
			ssize_t n = read_retrying(r, buf);

			if (n < 0) {
				perror("readload: read");
				exit(1);
			}
			if (n == 0 && lseek(r->fd, 0, SEEK_SET)) {
				perror("readload: lseek");
				exit(1);
			}
		}
		close(r->fd);
	}
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	char buf[1];

	r->tid = (pid_t)syscall(SYS_gettid);
	if (r->comm)
		prctl(PR_SET_NAME, r->comm);
	/* thread-self: the right thread in any PID namespace. Opened before
	 * ready, so before a tracer attaches. */
	if (source == SRC_PIPE && (r->syscall_fd = open("/proc/thread-self/syscall", O_RDONLY)) < 0) {
		perror("readload: open /proc/thread-self/syscall");
		exit(1);
	}
	r->ready = 1;
	while (!go)
		sleep_us(200);
	for (long i = 0; i < first_reads; i++) {
		if (read(r->fd, buf, 1) != 1) {
			perror("readload: read");
			exit(1);
		}
	}
	if (rename_self)
		prctl(PR_SET_NAME, rename_self);
	r->first_done = 1;
	wait_file(then_file);
	if (source == SRC_FILES)
		read_files(r, buf);
	for (long i = 0; i < reads && source != SRC_FILES; i++) {
		read_started(r, i);
		if (read_retrying(r, buf) != 1 && source != SRC_BADFD) {
			perror("readload: read");
			exit(1);
		}
	}
	for (long i = 0; i < bad_reads; i++)
		if (read(-1, buf, 1) != -1)
			exit(1);
	r->finished = 1;
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
	case SRC_FILES:
		r->fd = open(files[0], O_RDONLY);
		return r->fd < 0 ? -1 : 0;
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
	fprintf(stderr, "usage: readload [--reads N] [--delay-us D] [--source pipe|zero|badfd|files]\n"
			"  [--syscall read|pread64|readv|preadv] [--threads T] [--bad N]\n"
			"  [--comm NAME] [--thread-comm NAME1,NAME2,...] [--signal-us US]\n"
			"  [--sa-restart 1|0] [--files PATH1,PATH2,...] [--first N --then FILE]\n"
			"  [--rename NAME | --rename-self NAME]\n"
			"  [--go FILE] [--hold FILE]\n"
			"(see the comment at the top of readload.c)\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "reads", 1, NULL, 'r' }, { "delay-us", 1, NULL, 'd' },
		{ "source", 1, NULL, 's' }, { "syscall", 1, NULL, 'S' },
		{ "threads", 1, NULL, 't' }, { "bad", 1, NULL, 'b' },
		{ "comm", 1, NULL, 'c' }, { "go", 1, NULL, 'g' }, { "hold", 1, NULL, 'h' },
		{ "thread-comm", 1, NULL, 'T' }, { "signal-us", 1, NULL, 'k' },
		{ "sa-restart", 1, NULL, 'R' }, { "files", 1, NULL, 'f' },
		{ "first", 1, NULL, 'F' }, { "then", 1, NULL, 'n' },
		{ "rename", 1, NULL, 'N' }, { "rename-self", 1, NULL, 'M' },
		{},
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r': reads = atol(optarg); break;
		case 'd': delay_us = atol(optarg); break;
		case 's':
			source = !strcmp(optarg, "zero") ? SRC_ZERO :
				 !strcmp(optarg, "badfd") ? SRC_BADFD :
				 !strcmp(optarg, "files") ? SRC_FILES : SRC_PIPE;
			break;
		case 'S': syscall_name = optarg; break;
		case 't': nthreads = atoi(optarg); break;
		case 'b': bad_reads = atol(optarg); break;
		case 'c': prctl(PR_SET_NAME, optarg); break;
		case 'g': go_file = optarg; break;
		case 'h': hold_file = optarg; break;
		case 'T':
			if ((nthread_comms = split(optarg, thread_comms, MAX_THREADS)) < 0)
				usage();
			break;
		case 'k': signal_us = atol(optarg); break;
		case 'F': first_reads = atol(optarg); break;
		case 'n': then_file = optarg; break;
		case 'N': rename_to = optarg; break;
		case 'M': rename_self = optarg; break;
		case 'R': sa_restart = atoi(optarg); break;
		case 'f':
			if ((nfiles = split(optarg, files, MAX_FILES)) < 0)
				usage();
			break;
		default: usage();
		}
	}
	if (nthreads < 1 || nthreads > MAX_THREADS || reads < 0 || signal_us < 0 ||
	    nthread_comms > nthreads || (source == SRC_FILES) != (nfiles > 0) ||
	    (source == SRC_FILES && nthreads != 1) || first_reads < 0 ||
	    (first_reads && (source != SRC_ZERO || !then_file)) ||
	    ((rename_to || rename_self) && !first_reads))
		usage();
	for (int i = 0; i < nthread_comms; i++)
		readers[i].comm = thread_comms[i];
	if (source == SRC_BADFD) {
		bad_reads += reads;
		reads = 0;
	}
}

/* --signal-us: the handler, then the thread that sends the signals. */
static int start_signals(pthread_t *signaler)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sa.sa_flags = sa_restart ? SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		return -1;
	return pthread_create(signaler, NULL, signaler_main, NULL);
}

int main(int argc, char **argv)
{
	pthread_t signaler;
	long eintr = 0;

	parse(argc, argv);
	if (signal_us && start_signals(&signaler)) {
		perror("readload: signals");
		return 1;
	}
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
	if (first_reads) {
		for (int i = 0; i < nthreads; i++)
			while (!readers[i].first_done)
				sleep_us(100);
		for (int i = 0; rename_to && i < nthreads; i++)
			if (pthread_setname_np(readers[i].thread, rename_to)) {
				fprintf(stderr, "readload: cannot rename a reader\n");
				return 1;
			}
		printf("first-done\n");
		fflush(stdout);
	}
	if (signal_us)
		pthread_join(signaler, NULL);	/* before the readers: see signaler_main */
	for (int i = 0; i < nthreads; i++) {
		pthread_join(readers[i].thread, NULL);
		if (source == SRC_PIPE)
			pthread_join(readers[i].writer, NULL);
		eintr += readers[i].eintr;
	}
	if (signal_us)
		printf("eintr=%ld\n", eintr);
	printf("done\n");
	fflush(stdout);
	wait_file(hold_file);
	return 0;
}
