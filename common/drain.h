/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading one interval of a tool's kernel aggregates, consistently: flip
 * the double-buffered interval (struct hist_interval, element
 * interval_cur & 1 of a per-CPU array, and the per-key map in entry
 * interval_cur & 1 of the keyed slot); wait until no program can still be
 * adding to the old ones (at the per-CPU gates of bpf/interval.bpf.h for
 * short intervals, else for an RCU grace period); then read them (summing
 * the CPUs) and zero them. A count, its sum, its
 * maximum and the interval's counters always describe the same events.
 */
#ifndef COMMON_DRAIN_H
#define COMMON_DRAIN_H

#include "hist.h"
#include <stdbool.h>
#include "keyed.h"

/* Reports more often than this wait at the per-CPU gates, which cost the
 * programs two fully ordered atomic adds (~20 ns) an event; less often, for an RCU
 * grace period (10-20 ms a report, nothing per event). */
#define DRAIN_GATED_BELOW 0.1

/* Before load: how a run at @interval seconds (0: one report) waits; true
 * for the gates, the value of the programs' interval_gated.
 * @fetch_atomics: the programs loaded are those built with BPF atomics
 * (without them, only x86 gates: bpf/interval.bpf.h). */
bool drain_choose(double interval, bool fetch_atomics);

struct drain {
	int intervals_fd;		/* the object's per-CPU intervals map */
	__u32 *cur;			/* its interval_cur, in the mmap'd .bss */
	struct keyed_hist *keyed;	/* flipped in the same step, or NULL */
	const struct interval_gate *gates;	/* the object's interval_gates, mmap'd, or NULL */
	int sync_outer, sync_inner;	/* else: a map whose update waits for RCU */
	size_t gates_len;
	__u64 missed;			/* the gates' missed, summed, at the last report */
	/* The object's start_missed_ends (bpf/start.bpf.h, in the mmap'd
	 * .bss) if it has one, set by the tool; its value at the last report.
	 * Its growth is the interval's missed_ends. */
	const __u64 *start_missed;
	__u64 start_missed_seen;
	int ncpus;
	struct hist_interval *percpu;	/* one value per possible CPU */
};

/* @gates_fd: the object's interval_gates, one entry per possible CPU. */
int drain_init(struct drain *d, int intervals_fd, int gates_fd, __u32 *cur, struct keyed_hist *keyed);
/* A tool's setup after load: the per-key maps @slot/@a/@b into @keyed
 * (none when @slot is NULL), then the drain; a failure is reported. */
int drain_setup(struct drain *d, int intervals_fd, int gates_fd, __u32 *cur, struct keyed_hist *keyed,
		struct bpf_map *slot, struct bpf_map *a, struct bpf_map *b);
/* Move the current interval into @out (and the per-key histograms into
 * @snap when there are any); the kernel goes on into a zeroed one. */
int drain_interval(struct drain *d, struct hist_interval *out, struct keyed_snapshot *snap);
void drain_close(struct drain *d);

#endif /* COMMON_DRAIN_H */
