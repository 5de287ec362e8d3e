// SPDX-License-Identifier: GPL-2.0-only
/*
 * startup PATTERN CMD...: run CMD with stdout+stderr on a pipe and report
 *   attach_ms  exec until a line containing PATTERN (the tool's "attached")
 *   final_ms   SIGINT until the first output after it (the final report)
 *   exit_ms    SIGINT until the process has exited
 *   rss_kb     the process's peak RSS
 *   resent     how many more signals it took to end it (SIGINT again after
 *              5 s, SIGKILL after 10 s): a tool that ignores Ctrl-C shows here
 * as one line of key=value.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Read what is there into buf (kept NUL-terminated); -1 at EOF. */
static int pump(int fd, char *buf, size_t cap, size_t *len, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, timeout_ms) <= 0)
		return 0;
	n = read(fd, buf + *len, cap - 1 - *len);
	if (n <= 0)
		return -1;
	*len += (size_t)n;
	buf[*len] = '\0';
	return (int)n;
}

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	double t0, t_attach = -1, t_int, t_final = -1, t_exit;
	size_t len = 0, before;
	struct rusage ru;
	int fds[2], status = 0, resent = 0;
	pid_t pid;

	if (argc < 3 || pipe(fds))
		return 2;
	t0 = now_ms();
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	close(fds[1]);
	while (t_attach < 0 && now_ms() - t0 < 20000) {
		if (pump(fds[0], buf, sizeof(buf), &len, 50) < 0)
			break;
		if (strstr(buf, argv[1]))
			t_attach = now_ms();
	}
	usleep(200000);
	while (pump(fds[0], buf, sizeof(buf), &len, 0) > 0)
		;
	before = len;
	t_int = now_ms();
	kill(pid, SIGINT);
	while (wait4(pid, &status, WNOHANG, &ru) == 0) {
		double waited = now_ms() - t_int;

		pump(fds[0], buf, sizeof(buf), &len, 5);
		if (t_final < 0 && len > before)
			t_final = now_ms();
		if ((resent == 0 && waited > 5000) || (resent == 1 && waited > 10000))
			kill(pid, ++resent == 1 ? SIGINT : SIGKILL);
	}
	t_exit = now_ms();
	printf("attach_ms=%.1f final_ms=%.1f exit_ms=%.1f rss_kb=%ld status=%d resent=%d\n",
	       t_attach < 0 ? -1 : t_attach - t0, t_final < 0 ? -1 : t_final - t_int,
	       t_exit - t_int, ru.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : -1, resent);
	return t_attach < 0;
}
