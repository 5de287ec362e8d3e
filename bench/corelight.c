// SPDX-License-Identifier: GPL-2.0-only
/*
 * corelight: bench/core.bpf.c through a light skeleton (bpftool gen
 * skeleton -L). The kernel performs the CO-RE relocation (Linux 5.17+), so
 * user space never parses the kernel BTF. Light skeletons do not attach
 * classic tracepoints: that is done here by hand. Prints "attached", then
 * verifies on SIGINT that the relocated read saw this process's tgid.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include "core.lskel.h"

static void nothing(int sig)
{
	(void)sig;
}

static int attach_tracepoint(const char *name, int prog_fd)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_TRACEPOINT, .size = sizeof(attr),
					.sample_period = 1, .wakeup_events = 1 };
	char path[256];
	int id = -1, fd;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/id", name);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%d", &id) != 1)
		return -1;
	fclose(f);
	attr.config = (__u64)id;
	fd = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd) || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
		return -1;
	return fd;
}

int main(void)
{
	struct core_bpf *skel = core_bpf__open_and_load();
	int ok;

	if (!skel || attach_tracepoint("syscalls/sys_enter_getppid", skel->progs.core_prog.prog_fd) < 0) {
		perror("corelight");
		return 1;
	}
	signal(SIGINT, nothing);
	fprintf(stderr, "attached\n");
	pause();
	getppid();
	ok = skel->bss->seen == (__u64)getpid();
	printf("relocated read %s\n", ok ? "correct" : "WRONG");
	core_bpf__destroy(skel);
	return !ok;
}
