/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading one interval of a tool's kernel aggregates, consistently: flip
 * the double-buffered per-CPU interval (struct hist_interval, element
 * interval_cur & 1 of a per-CPU array) and, in the same step, swap the
 * per-key maps; wait until no program can still be adding to the old ones;
 * then read them (summing the CPUs) and zero them. A count, its sum, its
 * maximum and the interval's counters always describe the same events.
 */
#ifndef COMMON_DRAIN_H
#define COMMON_DRAIN_H

#include "hist.h"
#include "keyed.h"

struct drain {
	int intervals_fd;		/* the object's per-CPU intervals map */
	__u32 *cur;			/* its interval_cur, in the mmap'd .bss */
	struct keyed_hist *keyed;	/* swapped in the same step, or NULL */
	int sync_outer, sync_inner;	/* a map whose update waits for programs */
	int ncpus;
	struct hist_interval *percpu;	/* one value per possible CPU */
};

int drain_init(struct drain *d, int intervals_fd, __u32 *cur, struct keyed_hist *keyed);
/* A tool's setup after load: the per-key maps @slot/@a/@b into @keyed
 * (none when @slot is NULL), then the drain; a failure is reported. */
int drain_setup(struct drain *d, int intervals_fd, __u32 *cur, struct keyed_hist *keyed,
		struct bpf_map *slot, struct bpf_map *a, struct bpf_map *b);
/* Move the current interval into @out (and the per-key histograms into
 * @snap when there are any); the kernel goes on into a zeroed one. */
int drain_interval(struct drain *d, struct hist_interval *out, struct keyed_snapshot *snap);
void drain_close(struct drain *d);

#endif /* COMMON_DRAIN_H */
