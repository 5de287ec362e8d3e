/* SPDX-License-Identifier: GPL-2.0-only */
/* What the bench's control programs (blkcount, tcpcount: raw tracepoint
 * programs that only count, next to a tool) share: libbpf's warnings
 * only, a handler that lets SIGINT/SIGTERM end pause(), and the kernel's
 * count of the runs it skipped. */
#ifndef BENCH_CONTROL_H
#define BENCH_CONTROL_H

#include <stdarg.h>
#include <stdio.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static int quiet(enum libbpf_print_level l, const char *f, va_list ap)
{
	return l == LIBBPF_WARN ? vfprintf(stderr, f, ap) : 0;
}

static void nothing(int sig)
{
	(void)sig;
}

static unsigned long long misses(const struct bpf_program *prog)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return 0;
	return info.recursion_misses;
}

#endif /* BENCH_CONTROL_H */
