// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcpload: move a known number of bytes over TCP, for the tcprcv tests and
 * benchmark. The first argument is the mode:
 *
 * serve ADDR PORT: listen on ADDR (an IPv4 or IPv6 literal), PORT (0: the
 * kernel picks), SO_REUSEADDR; print "listening PORT pid=P" (the real
 * port); wait for --go FILE; accept --conns connections one after another
 * ("accepted" after each accept(2) returned) and read() each to EOF,
 * --read-size bytes a call (with --reply N, then
 * write N bytes back, 1 KiB a call); print "read BYTES" (all
 * connections); wait for --hold FILE; exit. --share: fork after each
 * accept(); parent and child both read the one socket to EOF (each read
 * goes to whichever asks), each prints "pid=P read N" for its own bytes,
 * the child exits, and the parent reaps it and counts both in "read".
 *
 * send ADDR PORT BYTES: wait for --go FILE; connect; wait for --write-go
 * FILE; write() exactly BYTES bytes, --chunk a call (the last may be
 * shorter; a short write is continued by the next call); shut down the
 * sending side; read until the peer closes (so it has read every byte: a
 * half-closed client, as nc -N);
 * "connected port=L" (the local port) is printed after connect, then
 * "received N" if the peer sent N > 0 bytes, then "sent BYTES pid=P".
 *
 * pair BYTES: the benchmark. Listen on --addr, port 0; a forked child
 * accepts one connection, reads it to EOF and exits 0 if it read exactly
 * BYTES. The parent connects, writes BYTES in --chunk writes, closes, reaps
 * the child and prints "bytes=B seconds=S mbps=M": S from just after
 * connect() to the child's exit (CLOCK_MONOTONIC), M = B / S / 1e6
 * (megabytes, not megabits, per second).
 *
 * BYTES is decimal digits and an optional K, M or G (powers of 1024: 1G is
 * 1073741824). Lines are flushed as printed; SIGPIPE is ignored. A failure:
 * a message and status 1 (killing any child first); a bad argument: a
 * one-line message naming it and status 2.
 *
 * Options:
 *   --comm NAME        serve, send: process name (PR_SET_NAME, cut at 15
 *                      bytes), set while parsing, before any socket
 *   --go FILE          serve, send: see above (access() every 10 ms)
 *   --write-go FILE    send: see above: a test makes FILE once the server
 *                      said "accepted", so that no byte arrives while the
 *                      connection's owner is unknown
 *   --pause FILE       send: up to 4 times: BYTES is written in one part
 *                      more than there are pauses (equal, but for the
 *                      last), each part after the first once its FILE
 *                      exists (a test's points between the writes)
 *   --sleep-us USEC    serve: sleep after each read that returned data;
 *                      send: sleep between writes (default 0)
 *   --read-size BYTES  serve, pair: bytes per read() (default 65536)
 *   --chunk BYTES      send, pair: bytes per write() (default 1024)
 *   --addr ADDR        pair: where to listen (default 127.0.0.1)
 *   --conns N          serve: connections to accept (default 1)
 *   --reply BYTES      serve: bytes to write back after each EOF
 *   --rcvbuf BYTES     serve: SO_RCVBUF of the listener, set before listen()
 *                      so that every accepted socket inherits it
 *   --share, --hold FILE  serve: see above (only the parent holds)
 *   --defer-accept     serve: TCP_DEFER_ACCEPT on the listener (as nginx's
 *                      "deferred"): the connection is made by the first
 *                      data segment, not by the handshake's last ACK
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_READ_SIZE 65536
#define DEFAULT_CHUNK 1024
#define MAX_IO (1LL << 30)	/* --chunk, --read-size: one malloc()ed buffer */
#define GO_POLL_US 10000
#define BACKLOG 128
#define MAX_PAUSES 4

enum mode { SERVE = 1, SEND = 2, PAIR = 4 };

static const char *const usages[] = {
	[0] = "tcpload serve|send|pair ... (see the comment at the top of tcpload.c)",
	[SERVE] = "tcpload serve ADDR PORT [--conns N] [--read-size BYTES] [--sleep-us USEC] "
		  "[--rcvbuf BYTES] [--share] [--defer-accept] [--reply BYTES] [--comm NAME] [--go FILE] "
		  "[--hold FILE]",
	[SEND] = "tcpload send ADDR PORT BYTES [--chunk BYTES] [--sleep-us USEC] "
		 "[--comm NAME] [--go FILE] [--write-go FILE] [--pause FILE]...",
	[PAIR] = "tcpload pair BYTES [--chunk BYTES] [--read-size BYTES] [--addr ADDR]",
};

static enum mode mode;
static const char *addr = "127.0.0.1", *go_file, *hold_file, *write_go_file;
static long long nbytes, conns = 1, delay_us, rcvbuf, reply;
static int defer_accept;
static const char *pauses[MAX_PAUSES];
static int npauses;
static long long read_size = DEFAULT_READ_SIZE, chunk = DEFAULT_CHUNK;
static int share;
static struct sockaddr_storage sa;	/* ADDR and PORT */
static socklen_t salen;
static char *buf;
static pid_t child;			/* killed if we fail */

static void usage(const char *what, const char *arg)
{
	if (what)
		fprintf(stderr, "tcpload: bad %s \"%s\"; usage: %s\n", what, arg, usages[mode]);
	else
		fprintf(stderr, "tcpload: wrong number of arguments; usage: %s\n", usages[mode]);
	exit(2);
}

static void fail(const char *what)
{
	fprintf(stderr, "tcpload: %s: %s\n", what, strerror(errno));
	if (child > 0)
		kill(child, SIGKILL);
	exit(1);
}

static void alloc_buf(long long size)
{
	if (!(buf = malloc(size)))
		fail("malloc");
	memset(buf, 'x', size);
}

static void sleep_us(long long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };

	while (us && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void wait_file(const char *path)
{
	while (path && access(path, F_OK))
		sleep_us(GO_POLL_US);
}

/* Digits only, then (with units) one of K, M, G; within [min, max]. */
static long long number(const char *s, const char *what, long long min, long long max,
			int units)
{
	static const char suffixes[] = "KMG";
	const char *p = s, *u;
	long long v = 0, unit = 1;

	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (LLONG_MAX - (*p - '0')) / 10)
			usage(what, s);
		v = v * 10 + (*p - '0');
	}
	if (p == s)
		usage(what, s);
	if (units && *p && (u = strchr(suffixes, *p))) {
		unit = 1LL << (10 * (u - suffixes + 1));
		p++;
	}
	if (*p || v > max / unit || v * unit < min)
		usage(what, s);
	return v * unit;
}

static void set_addr(const char *ip, int port)
{
	struct sockaddr_in *in = (struct sockaddr_in *)&sa;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&sa;

	if (inet_pton(AF_INET, ip, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		salen = sizeof(*in);
	} else if (inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		salen = sizeof(*in6);
	} else {
		usage("ADDR", ip);
	}
}

static void parse(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "comm", 1, NULL, 'c' }, { "go", 1, NULL, 'g' }, { "sleep-us", 1, NULL, 's' },
		{ "read-size", 1, NULL, 'r' }, { "chunk", 1, NULL, 'k' }, { "addr", 1, NULL, 'a' },
		{ "conns", 1, NULL, 'n' }, { "rcvbuf", 1, NULL, 'R' }, { "share", 0, NULL, 'S' },
		{ "hold", 1, NULL, 'h' }, { "defer-accept", 0, NULL, 'D' }, { "reply", 1, NULL, 'y' },
		{ "write-go", 1, NULL, 'w' }, { "pause", 1, NULL, 'p' },
		{},
	};
	/* The modes that take each option, in the order above. */
	static const int modes[] = { SERVE | SEND, SERVE | SEND, SERVE | SEND, SERVE | PAIR,
				     SEND | PAIR, PAIR, SERVE, SERVE, SERVE, SERVE, SERVE, SERVE, SEND, SEND };
	char name[16];
	int c, i, nargs;

	if (argc < 2)
		usage(NULL, NULL);
	mode = !strcmp(argv[1], "serve") ? SERVE : !strcmp(argv[1], "send") ? SEND :
	       !strcmp(argv[1], "pair") ? PAIR : 0;
	if (!mode)
		usage("mode", argv[1]);
	argc--, argv++;		/* getopt_long sees the mode as argv[0] */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, &i)) != -1) {
		if (c == '?')
			usage("option", argv[optind - 1]);
		if (!(modes[i] & mode)) {
			snprintf(name, sizeof(name), "--%s", opts[i].name);
			usage("option", name);
		}
		switch (c) {
		case 'c': prctl(PR_SET_NAME, optarg); break;
		case 'g': go_file = optarg; break;
		case 's': delay_us = number(optarg, "--sleep-us", 0, LLONG_MAX, 0); break;
		case 'n': conns = number(optarg, "--conns", 1, INT_MAX, 0); break;
		case 'r': read_size = number(optarg, "--read-size", 1, MAX_IO, 1); break;
		case 'R': rcvbuf = number(optarg, "--rcvbuf", 1, INT_MAX, 1); break;
		case 'S': share = 1; break;
		case 'D': defer_accept = 1; break;
		case 'y': reply = number(optarg, "--reply", 0, LLONG_MAX, 1); break;
		case 'h': hold_file = optarg; break;
		case 'w': write_go_file = optarg; break;
		case 'p':
			if (npauses == MAX_PAUSES)
				usage("option", "--pause (a fifth)");
			pauses[npauses++] = optarg;
			break;
		case 'k': chunk = number(optarg, "--chunk", 1, MAX_IO, 1); break;
		case 'a': addr = optarg; break;
		}
	}
	argv += optind;
	nargs = argc - optind;
	if (nargs != (mode == SERVE ? 2 : mode == SEND ? 3 : 1))
		usage(NULL, NULL);
	if (mode == PAIR) {
		nbytes = number(argv[0], "BYTES", 0, LLONG_MAX, 1);
		set_addr(addr, 0);
		return;
	}
	set_addr(argv[0], number(argv[1], "PORT", mode == SERVE ? 0 : 1, 65535, 0));
	if (mode == SEND)
		nbytes = number(argv[2], "BYTES", 0, LLONG_MAX, 1);
}

static int listener(int *port)
{
	struct sockaddr_storage got;
	socklen_t len = sizeof(got);
	int one = 1, size = rcvbuf, fd = socket(sa.ss_family, SOCK_STREAM, 0);

	if (fd < 0)
		fail("socket");
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		fail("setsockopt SO_REUSEADDR");
	if (rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)))
		fail("setsockopt SO_RCVBUF");
	size = 30;		/* seconds */
	if (defer_accept && setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &size, sizeof(size)))
		fail("setsockopt TCP_DEFER_ACCEPT");
	if (bind(fd, (struct sockaddr *)&sa, salen))
		fail("bind");
	if (listen(fd, BACKLOG))
		fail("listen");
	if (getsockname(fd, (struct sockaddr *)&got, &len))
		fail("getsockname");
	sa = got;		/* pair connects to it */
	salen = len;
	*port = ntohs(got.ss_family == AF_INET ? ((struct sockaddr_in *)&got)->sin_port :
						  ((struct sockaddr_in6 *)&got)->sin6_port);
	return fd;
}

static int accept_one(int lfd)
{
	int fd;

	while ((fd = accept(lfd, NULL, NULL)) < 0 && errno == EINTR)
		;
	if (fd < 0)
		fail("accept");
	return fd;
}

/* The port the kernel chose for @fd. */
static int local_port(int fd)
{
	struct sockaddr_storage me;
	socklen_t len = sizeof(me);

	if (getsockname(fd, (struct sockaddr *)&me, &len))
		fail("getsockname");
	return ntohs(me.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&me)->sin6_port
					      : ((struct sockaddr_in *)&me)->sin_port);
}

static int connect_to(void)
{
	int fd = socket(sa.ss_family, SOCK_STREAM, 0);

	if (fd < 0)
		fail("socket");
	if (connect(fd, (struct sockaddr *)&sa, salen))
		fail("connect");
	return fd;
}

/* Reads fd to EOF, --read-size per call, sleeping `pause` after each read
 * that returned data; returns the bytes read. */
static long long drain(int fd, long long pause)
{
	long long total = 0;
	ssize_t n;

	for (;;) {
		n = read(fd, buf, read_size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("read");
		if (!n)
			return total;
		total += n;
		sleep_us(pause);
	}
}

static void write_all(int fd, long long total, long long pause)
{
	long long done = 0;

	while (done < total) {
		ssize_t n = write(fd, buf, total - done < chunk ? total - done : chunk);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("write");
		done += n;
		if (done < total)
			sleep_us(pause);
	}
}

/* Waits for the child; ends us too if it failed. */
static void reap(const char *who)
{
	int status;

	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			fail("waitpid");
	child = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "tcpload: %s failed\n", who);
		exit(1);
	}
}

/* --share: a child reads fd too. Its count comes back in shared memory. */
static long long drain_shared(int fd)
{
	long long *theirs = mmap(NULL, sizeof(*theirs), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long long mine;

	if (theirs == MAP_FAILED)
		fail("mmap");
	child = fork();
	if (child < 0)
		fail("fork");
	mine = drain(fd, delay_us);
	printf("pid=%d read %lld\n", getpid(), mine);
	if (!child) {
		*theirs = mine;
		exit(0);
	}
	reap("the --share child");
	mine += *theirs;
	munmap(theirs, sizeof(*theirs));
	return mine;
}

static void serve(void)
{
	long long total = 0;
	int port, lfd = listener(&port);

	alloc_buf(read_size);
	if (chunk > read_size)
		chunk = read_size;	/* --reply writes from the read buffer */
	printf("listening %d pid=%d\n", port, getpid());
	wait_file(go_file);
	for (long long i = 0; i < conns; i++) {
		int fd = accept_one(lfd);

		printf("accepted\n");
		total += share ? drain_shared(fd) : drain(fd, delay_us);
		write_all(fd, reply, 0);
		close(fd);
	}
	close(lfd);
	printf("read %lld\n", total);
	wait_file(hold_file);
}

static void send_bytes(void)
{
	long long got, part;
	int fd;

	alloc_buf(chunk);
	read_size = chunk;	/* for the wait for EOF */
	wait_file(go_file);
	fd = connect_to();
	printf("connected port=%d\n", local_port(fd));
	wait_file(write_go_file);
	part = nbytes / (npauses + 1);
	for (int i = 0; i < npauses; i++) {
		write_all(fd, part, delay_us);
		wait_file(pauses[i]);
	}
	write_all(fd, nbytes - npauses * part, delay_us);
	if (shutdown(fd, SHUT_WR))
		fail("shutdown");
	got = drain(fd, 0);
	close(fd);
	if (got)
		printf("received %lld\n", got);
	printf("sent %lld pid=%d\n", nbytes, getpid());
}

static void pair_reader(int lfd)
{
	long long got;

	alloc_buf(read_size);
	got = drain(accept_one(lfd), 0);
	if (got != nbytes)
		fprintf(stderr, "tcpload: pair reader read %lld bytes, not %lld\n", got, nbytes);
	exit(got != nbytes);
}

static void pair(void)
{
	struct timespec t0, t1;
	double s;
	int fd, port, lfd = listener(&port);

	child = fork();
	if (child < 0)
		fail("fork");
	if (!child)
		pair_reader(lfd);
	close(lfd);
	alloc_buf(chunk);
	fd = connect_to();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	write_all(fd, nbytes, 0);
	close(fd);
	reap("the pair reader");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("bytes=%lld seconds=%.6f mbps=%.1f\n", nbytes, s, s > 0 ? nbytes / s / 1e6 : 0.0);
}

int main(int argc, char **argv)
{
	parse(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);	/* tests read lines as they come */
	signal(SIGPIPE, SIG_IGN);
	if (mode == SERVE)
		serve();
	else if (mode == SEND)
		send_bytes();
	else
		pair();
	free(buf);
	return 0;
}
