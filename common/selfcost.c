// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "diag.h"
#include "output.h"
#include "probe.h"
#include "selfcost.h"

/* The programs whose counts selfcost_count() has taken, by their order
 * in the object; more than a tool has. */
#define PROGS_MAX 128

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
		struct bpf_prog_info info;

		if (prog_info(prog, &info))
			continue;
		fprintf(stderr, "%-24s %14llu %10.1f\n", bpf_program__name(prog),
			(unsigned long long)info.run_cnt,
			info.run_cnt ? (double)info.run_time_ns / (double)info.run_cnt : 0.0);
		runs += info.run_cnt;
		ns += info.run_time_ns;
	}
	fprintf(stderr, "%-24s %14llu %10.1f\n", "total", runs, runs ? (double)ns / (double)runs : 0.0);
}

static struct metric_family run_seconds = {
	.help = "Time this tool's BPF programs ran, while --self-cost had the kernel's stats on",
	.unit = "seconds", .type = METRIC_COUNTER, .scale = 1e-9,
};
static struct metric_family runs_family = {
	.help = "Runs of this tool's BPF programs, while --self-cost had the kernel's stats on",
	.type = METRIC_COUNTER,
};

/* The kernel's counts are totals since the stats were on: the store adds
 * what each program ran since the last report. */
void selfcost_count(int stats_fd, struct bpf_object *obj, struct output *o)
{
	static unsigned long long seen_ns[PROGS_MAX], seen_runs[PROGS_MAX];
	static char names[2][96];
	struct bpf_program *prog;
	int i = 0;

	if (stats_fd < 0 || !output_metrics(o))
		return;
	if (!run_seconds.name) {
		snprintf(names[0], sizeof(names[0]), "%s_bpf_run_seconds", o->tool);
		snprintf(names[1], sizeof(names[1]), "%s_bpf_runs", o->tool);
		run_seconds.name = names[0];
		runs_family.name = names[1];
	}
	bpf_object__for_each_program(prog, obj) {
		struct key_field key[1] = { KEY_STRING("program", bpf_program__name(prog)) };
		struct bpf_prog_info info;

		if (i >= PROGS_MAX)
			break;
		if (prog_info(prog, &info)) {
			i++;
			continue;
		}
		output_count(o, &run_seconds, key, 1, info.run_time_ns - seen_ns[i]);
		output_count(o, &runs_family, key, 1, info.run_cnt - seen_runs[i]);
		seen_ns[i] = info.run_time_ns;
		seen_runs[i++] = info.run_cnt;
	}
}
