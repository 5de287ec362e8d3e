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
 * With --fifo PATH (made with mkfifo(3) if missing) it opens no --file:
 * the main thread opens PATH for reading, which blocks (no writer), while
 * another thread sends it SIGUSR1 (pthread_kill) --interrupts K times
 * (default 3), each --signal-us US (default 1000) microseconds after the
 * opener is blocked in the open again, then opens PATH for writing
 * (O_WRONLY, which unblocks the reader) and closes it once the reader's
 * open has returned. --sa-restart 1 (default) installs the handler with
 * SA_RESTART: the kernel restarts the interrupted open unseen, one open.
 * With 0 the open fails EINTR at each signal; the reader counts that and
 * opens again, so it still ends with exactly one successful open. All of
 * this --opens times; then "eintr=N" (the failed opens) is printed on its
 * own line before "done". The process's opens are then: --opens reads
 * (flags as --flags, O_RDONLY by default), N failed ones (EINTR, same
 * flags) and --opens writes (O_WRONLY), and no other.
 *
 * It prints "pid=P" and waits for --go FILE (polling with access(), which
 * is not an open) so a tracer can attach first; after the opens it prints
 * "done" and waits for --hold FILE before exiting.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES 16
#define BLOCKED_POLL_US 50
#define BLOCKED_POLLS 40000	/* give up waiting for the opener after 2 s */

enum place { PLACE_PLAIN, PLACE_COLD, PLACE_EDGE };
enum call { CALL_OPEN, CALL_OPENAT, CALL_OPENAT2 };
/* open(2) is x86's and other old ABIs'; arm64 has only openat(2) and
 * openat2(2): --call open is refused there (exit 3), see main(). */
#ifdef SYS_open
#define SYS_OPEN_NR SYS_open
#else
#define SYS_OPEN_NR -1L
#endif

static const char *files[MAX_FILES];
static int nfiles;
static long opens = 1;
static int flags = O_RDONLY;
static enum place place = PLACE_PLAIN;
static enum call call = CALL_OPENAT;
static const char *go_file, *hold_file, *comm;
static int dirfd = AT_FDCWD;

/* --fifo */
static const char *fifo;
static long signal_us = 1000, interrupts = 3;
static int sa_restart = 1;
static pthread_t opener;		/* the main thread */
static int opener_syscall_fd = -1;	/* its /proc/.../syscall */
static volatile int go;
static long handled;			/* signals the handler has seen */
static long rounds_opened, rounds_closed;	/* reader's opens, writer's closes */

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

/* Wait until *counter > than. */
static void wait_above(long *counter, long than)
{
	while (__atomic_load_n(counter, __ATOMIC_ACQUIRE) <= than)
		sleep_us(20);
}

static int do_open(const char *path)
{
	/* openat2 refuses a mode without O_CREAT or O_TMPFILE (EINVAL). */
	struct open_how how = { .flags = (__u64)flags,
				.mode = flags & (O_CREAT | __O_TMPFILE) ? 0600 : 0 };

	switch (call) {
	case CALL_OPEN:
		return (int)syscall(SYS_OPEN_NR, path, flags, 0600);
	case CALL_OPENAT2:
		return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	default:
		return openat(dirfd, path, flags, 0600);
	}
}

static long call_nr(void)
{
	return call == CALL_OPEN ? SYS_OPEN_NR : call == CALL_OPENAT2 ? SYS_openat2 : SYS_openat;
}

/* Is the opener blocked in its open? /proc/PID/task/TID/syscall says
 * "running" or the number of the syscall it sleeps in; read with pread
 * on an fd opened before "pid=" (an open now would be traced). */
static bool opener_blocked(void)
{
	char buf[32];
	ssize_t n = pread(opener_syscall_fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	return buf[0] >= '0' && buf[0] <= '9' && strtol(buf, NULL, 10) == call_nr();
}

/* So that each signal interrupts the open, not the code around it (where
 * /proc cannot tell, or after 2 s, send it anyway). */
static void wait_opener_blocked(void)
{
	for (int i = 0; opener_syscall_fd >= 0 && i < BLOCKED_POLLS && !opener_blocked(); i++)
		sleep_us(BLOCKED_POLL_US);
}

static void on_signal(int sig)
{
	(void)sig;
	__atomic_add_fetch(&handled, 1, __ATOMIC_RELEASE);
}

/* --fifo: per round, the signals, then the writer that ends the open. */
static void *signaler_main(void *arg)
{
	long sent = 0;

	(void)arg;
	while (!go)
		sleep_us(200);
	for (long r = 0; r < opens; r++) {
		int fd;

		for (long k = 0; k < interrupts; k++) {
			wait_opener_blocked();
			sleep_us(signal_us);
			pthread_kill(opener, SIGUSR1);
			wait_above(&handled, sent++);
		}
		fd = openat(dirfd, fifo, O_WRONLY);
		if (fd < 0) {
			perror("openload: fifo writer");
			exit(1);
		}
		wait_above(&rounds_opened, r);
		close(fd);
		__atomic_store_n(&rounds_closed, r + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* --fifo: the reader's side; returns the opens that failed EINTR. */
static long open_fifo(void)
{
	long eintr = 0;

	for (long r = 0; r < opens; r++) {
		int fd;

		while ((fd = do_open(fifo)) < 0 && errno == EINTR)
			eintr++;
		if (fd < 0) {
			perror("openload: fifo reader");
			exit(1);
		}
		__atomic_store_n(&rounds_opened, r + 1, __ATOMIC_RELEASE);
		close(fd);
		/* A writer still there would make the next open return at once. */
		wait_above(&rounds_closed, r);
	}
	return eintr;
}

static int fifo_setup(pthread_t *signaler)
{
	struct sigaction sa = { .sa_handler = on_signal };
	char path[64];

	if (mkfifoat(dirfd, fifo, 0600) && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", getpid());
	opener_syscall_fd = open(path, O_RDONLY);	/* -1: no such file, send blind */
	opener = pthread_self();
	sa.sa_flags = sa_restart ? SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		return -1;
	return pthread_create(signaler, NULL, signaler_main, NULL) ? -1 : 0;
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
		"[--dir DIR] [--comm NAME] [--go FILE] [--hold FILE]\n"
		"       openload --fifo PATH [--signal-us US] [--sa-restart 1|0] [--interrupts K] "
		"[--opens N] [same options]\n");
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
		{ "fifo", required_argument, NULL, 'P' },
		{ "signal-us", required_argument, NULL, 'k' },
		{ "sa-restart", required_argument, NULL, 'R' },
		{ "interrupts", required_argument, NULL, 'K' },
		{},
	};
	pthread_t signaler;
	int c;
	long eintr;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': if (nfiles == MAX_FILES) usage(); files[nfiles++] = optarg; break;
		case 'o': opens = strtol(optarg, NULL, 10); break;
		case 'c':
			call = !strcmp(optarg, "open") ? CALL_OPEN :
			       !strcmp(optarg, "openat2") ? CALL_OPENAT2 : CALL_OPENAT;
			if (call == CALL_OPEN && SYS_OPEN_NR < 0) {
				fprintf(stderr, "openload: this architecture has no open(2)\n");
				exit(3);
			}
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
		case 'P': fifo = optarg; break;
		case 'k': signal_us = strtol(optarg, NULL, 10); break;
		case 'R': sa_restart = atoi(optarg); break;
		case 'K': interrupts = strtol(optarg, NULL, 10); break;
		default: usage();
		}
	}
	if (!nfiles == !fifo || opens < 1 || signal_us < 0 || interrupts < 0)
		usage();
	if (comm)
		prctl(PR_SET_NAME, comm);
	if (fifo && fifo_setup(&signaler)) {
		perror("openload: --fifo");
		return 1;
	}
	printf("pid=%d\n", getpid());
	fflush(stdout);
	wait_file(go_file);
	if (fifo) {
		go = 1;
		eintr = open_fifo();
		pthread_join(signaler, NULL);
		printf("eintr=%ld\n", eintr);
	} else {
		printf("failed=%d\n", open_all());
	}
	printf("done\n");
	fflush(stdout);
	wait_file(hold_file);
	return 0;
}
