// SPDX-License-Identifier: GPL-2.0-only
/*
 * keysload: make N keys of a per-key mode, each exactly once, for the
 * key-limit tests. It names itself --comm, prints "pid=P", waits for
 * --go FILE (polling with access(), neither an open nor a read), then:
 *
 *   files N  opens --dir's k0 .. k<N-1> once each (made before "pid=")
 *   procs N  forks N children, each reading one byte of /dev/zero from
 *            an fd opened before "pid=" (one read per process) and opening
 *            --dir's k<i> once if --dir is given; no child is reaped
 *            before all have exited, so all N PIDs differ
 *   comms N  like procs, child i named <comm><i> first
 *   fds N    opens /dev/zero N times (or --dir's k0 .. k<N-1>, made one
 *            byte long), then reads one byte from each
 *   conns N  N TCP connections over 127.0.0.1, one after another;
 *            connection i carries i % 100 + 1 bytes, client to server,
 *            read by the server; --close closes each after its bytes,
 *            otherwise all stay open until --hold
 *
 * then prints "done" and waits for --hold FILE.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *dir, *comm = "keysload";

static void die(const char *what)
{
	fprintf(stderr, "keysload: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void wait_file(const char *path)
{
	struct timespec ts = { 0, 1000000 };

	while (access(path, F_OK))
		nanosleep(&ts, NULL);
}

static void open_key(int i)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/k%d", dir, i);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die(path);
	close(fd);
}

static void children(int n, bool named, int zero)
{
	int status;
	char c;

	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid)
			continue;
		if (named) {
			char name[16];

			snprintf(name, sizeof(name), "%s%d", comm, i);
			prctl(PR_SET_NAME, name);
		}
		if (read(zero, &c, 1) != 1)
			_exit(1);
		if (dir)
			open_key(i);
		_exit(0);
	}
	for (int i = 0; i < n; i++)
		if (wait(&status) < 0 || status)
			die("a child");
}

static void fds(int n)
{
	int *fd = calloc(n, sizeof(*fd));
	char c;

	for (int i = 0; i < n; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/k%d", dir, i);
		if ((fd[i] = open(dir ? path : "/dev/zero", O_RDONLY)) < 0)
			die(dir ? path : "/dev/zero");
	}
	for (int i = 0; i < n; i++)
		if (read(fd[i], &c, 1) != 1)
			die("read");
}

static void conns(int n, bool close_each)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	char buf[100];
	int server = socket(AF_INET, SOCK_STREAM, 0);

	memset(buf, 'x', sizeof(buf));
	if (server < 0 || bind(server, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(server, 64) || getsockname(server, (struct sockaddr *)&a, &len))
		die("listen");
	for (int i = 0; i < n; i++) {
		int client = socket(AF_INET, SOCK_STREAM, 0), peer;
		int want = i % 100 + 1, got = 0;
		ssize_t r;

		if (client < 0 || connect(client, (struct sockaddr *)&a, sizeof(a)))
			die("connect");
		if ((peer = accept(server, NULL, NULL)) < 0)
			die("accept");
		if (write(client, buf, want) != want)
			die("write");
		while (got < want && (r = read(peer, buf, want - got)) > 0)
			got += r;
		if (got != want)
			die("read");
		if (close_each) {
			close(client);
			close(peer);
		}
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "comm", required_argument, NULL, 'c' },
		{ "go", required_argument, NULL, 'g' },
		{ "hold", required_argument, NULL, 'h' },
		{ "close", no_argument, NULL, 'x' },
		{}
	};
	const char *go = NULL, *hold = NULL, *mode;
	bool close_each = false;
	int o, n, zero;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'd': dir = optarg; break;
		case 'c': comm = optarg; break;
		case 'g': go = optarg; break;
		case 'h': hold = optarg; break;
		case 'x': close_each = true; break;
		default: return 2;
		}
	}
	if (argc - optind != 2 || !go || !hold || (n = atoi(argv[optind + 1])) <= 0) {
		fprintf(stderr, "usage: keysload files|procs|comms|fds|conns N --go FILE --hold FILE "
				"[--dir DIR] [--comm NAME] [--close]\n");
		return 2;
	}
	mode = argv[optind];
	if (!strcmp(mode, "files") && !dir)
		return 2;
	for (int i = 0; dir && i < n; i++) {
		char path[4096];
		int fd;

		snprintf(path, sizeof(path), "%s/k%d", dir, i);
		if ((fd = open(path, O_WRONLY | O_CREAT, 0644)) < 0 || write(fd, "x", 1) != 1)
			die(path);
		close(fd);
	}
	if (!strcmp(mode, "fds") || !strcmp(mode, "conns")) {
		struct rlimit r = { 2 * n + 64, 2 * n + 64 };

		if (setrlimit(RLIMIT_NOFILE, &r))
			die("setrlimit");
	}
	if ((zero = open("/dev/zero", O_RDONLY)) < 0)	/* not an open after go */
		die("/dev/zero");
	prctl(PR_SET_NAME, comm);
	printf("pid=%d\n", getpid());
	fflush(stdout);
	wait_file(go);
	if (!strcmp(mode, "files"))
		for (int i = 0; i < n; i++)
			open_key(i);
	else if (!strcmp(mode, "procs") || !strcmp(mode, "comms"))
		children(n, !strcmp(mode, "comms"), zero);
	else if (!strcmp(mode, "fds"))
		fds(n);
	else if (!strcmp(mode, "conns"))
		conns(n, close_each);
	else
		return 2;
	printf("done\n");
	fflush(stdout);
	wait_file(hold);
	return 0;
}
