// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "diag.h"
#include "selfcost.h"

int selfcost_start(void)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	if (fd < 0)
		diag_error("--self-cost: cannot enable BPF run-time stats: %s", strerror(errno));
	return fd;
}

void selfcost_report(int stats_fd, struct bpf_object *obj)
{
	struct bpf_program *prog;
	unsigned long long runs = 0, ns = 0;

	if (stats_fd < 0)
		return;
	fprintf(stderr, "\nself-cost (BPF run time while stats were on; enabling them adds ~100 ns per event):\n");
	fprintf(stderr, "%-24s %14s %10s\n", "PROGRAM", "RUNS", "AVG NS");
	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		fprintf(stderr, "%-24s %14llu %10.1f\n", bpf_program__name(prog),
			(unsigned long long)info.run_cnt,
			info.run_cnt ? (double)info.run_time_ns / (double)info.run_cnt : 0.0);
		runs += info.run_cnt;
		ns += info.run_time_ns;
	}
	fprintf(stderr, "%-24s %14llu %10.1f\n", "total", runs, runs ? (double)ns / (double)runs : 0.0);
}
