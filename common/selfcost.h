/* SPDX-License-Identifier: GPL-2.0-only */
/* --self-cost: the tool's own BPF run time, from the kernel's BPF stats. */
#ifndef COMMON_SELFCOST_H
#define COMMON_SELFCOST_H

struct bpf_object;
struct output;

/* Turn on BPF_STATS_RUN_TIME (system-wide while the returned fd is open). */
int selfcost_start(void);
/* Print each loaded program's run count and average ns. */
void selfcost_report(int stats_fd, struct bpf_object *obj);
/* Into the report's metrics: each program's run time and runs since the
 * last call (<tool>_bpf_run_seconds_total, <tool>_bpf_runs_total). */
void selfcost_count(int stats_fd, struct bpf_object *obj, struct output *o);

#endif /* COMMON_SELFCOST_H */
