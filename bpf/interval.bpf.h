/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The double-buffered interval every tool adds to: buffer interval_cur & 1
 * (the per-CPU struct hist_interval, and entry interval_cur & 1 of each
 * two-entry keyed slot, keyed.bpf.h). Each report user space flips
 * interval_cur and waits until no program can still be adding to the old
 * buffer, then reads and zeroes it (common/drain.c).
 *
 * Programs run under RCU, so a grace period is such a wait (10-20 ms,
 * too long for short intervals). Below 0.1 s (DRAIN_GATED_BELOW) a program
 * instead enters the buffer through this CPU's gate (struct
 * interval_gate) and leaves it when done:
 *
 *   program:     enter[i]++ (a full barrier), check that interval_cur is
 *                still i, add to buffer i, leave[i]++ (a full barrier)
 *   user space:  interval_cur = new (seq_cst), then on each CPU wait until
 *                leave[old] == enter[old] (leave read first)
 *
 * Dekker's argument: a program whose enter[old]++ user space did not see
 * reads interval_cur after the flip, so it leaves old again and enters the
 * new buffer. The counts are cumulative (never reset), so programs that
 * nest on one CPU (a raw tracepoint's program interrupted by another's)
 * are counted right.
 *
 * Each gate add is a fetching atomic (BPF_FETCH) whose result is used
 * (gate_add): an add whose result is unused clang emits without fetch,
 * which x86's JIT makes a locked add (a full barrier) but arm64's a STADD
 * or an exclusive-store loop, neither ordered. A fetching add is fully
 * ordered on every arch (arm64: LDADDAL, or a store-release and a DMB).
 * Kernels before 5.12 have the add without fetch only (BPF_NO_ATOMICS;
 * arm64's JIT before 5.18 too, which probe_bpf_atomics() finds):
 * there the runtime gates on x86 alone, and elsewhere waits for RCU at
 * every interval (drain_choose(), common/drain.c).
 *
 * Every event pays the two adds, so only those short intervals use the
 * gates (interval_gated, set by the runtime); with it false the verifier
 * drops the gate's code.
 */
#ifndef INTERVAL_BPF_H
#define INTERVAL_BPF_H

#include "hist_layout.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct hist_interval);
} intervals SEC(".maps");
__u32 interval_cur SEC(".bss") = 0;

/* Set by the runtime: reports wait at the gates (else for RCU). */
const volatile bool interval_gated = false;

/* Set by a tool whose programs may run again on their CPU while they run
 * (probe_raw_tp_nests(), common/probe.c: raw tracepoints before Linux
 * 6.1): then this CPU's buffer is not its own alone, and takes atomic
 * adds as a shared one does. False: the verifier drops those. */
const volatile bool interval_nests = false;

/* One gate per possible CPU: the runtime sets max_entries before load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct interval_gate);
} interval_gates SEC(".maps");

/* A program's way into the current buffer: between interval_enter() and
 * interval_leave() it may add to buffer @idx (and nothing else). */
struct interval_pass {
	__u64 *leave;			/* gated: the count to add to on leaving, or NULL */
	__u32 idx;
	bool entered;
};

/* Add one to a gate's count, as a full barrier (see above). The build
 * checks that every atomic of this file is such an add
 * (bpf/gates-ordered.sh): keep other atomics out of it. */
static __always_inline void gate_add(__u64 *count)
{
#ifdef BPF_NO_ATOMICS
	__sync_fetch_and_add(count, 1);
#else
	__u64 old = __sync_fetch_and_add(count, 1);

	/* The result used: clang keeps the fetch. */
	asm volatile("" : : "r"(old));
#endif
}

static __always_inline __u32 interval_side(void)
{
	return *(volatile __u32 *)&interval_cur & 1;
}

/* Enter the current buffer through this CPU's gate; its per-CPU interval,
 * or NULL (then not entered). Two flips during these few instructions (a
 * program preempted across two reports) give up the add; it is counted in
 * the gate's missed, which user space reports on stderr. */
static __always_inline struct hist_interval *interval_enter_gated(struct interval_pass *p)
{
	__u32 cpu = bpf_get_smp_processor_id(), i;
	struct interval_gate *g = bpf_map_lookup_elem(&interval_gates, &cpu);
	struct hist_interval *iv;

	/* leave alone tells interval_leave() what to do: a pointer's spill
	 * is tracked by every verifier, a bool's not by older ones. */
	p->leave = NULL;
	p->entered = false;
	if (!g)
		return NULL;
	for (int tries = 0; tries < 2; tries++) {
		i = interval_side();
		gate_add(&g->enter[i]);
		if (interval_side() == i) {
			/* The counter's address, taken while i is known to be
			 * 0 or 1: a key passed to a helper loses its bounds. */
			__u64 *leave = &g->leave[i];

			p->idx = i;
			iv = bpf_map_lookup_elem(&intervals, &p->idx);
			if (iv) {
				p->leave = leave;
				p->entered = true;
			} else {
				gate_add(leave);
			}
			return iv;
		}
		gate_add(&g->leave[i]);
	}
	gate_add(&g->missed);
	return NULL;
}

/* Enter the current buffer: its per-CPU interval, or NULL (not entered). */
static __always_inline struct hist_interval *interval_enter(struct interval_pass *p)
{
	struct hist_interval *iv;
	__u32 k;

	if (interval_gated)
		return interval_enter_gated(p);
	/* Programs run under RCU: the report's grace period waits. */
	k = interval_side();
	iv = bpf_map_lookup_elem(&intervals, &k);
	p->idx = k;
	p->entered = iv != NULL;
	return iv;
}

static __always_inline void interval_leave(struct interval_pass *p)
{
	if (interval_gated && p->leave)
		gate_add(p->leave);
}

/* The interval entered by @p (NULL if not entered). */
static __always_inline struct hist_interval *interval_of(const struct interval_pass *p)
{
	__u32 k = p->idx;

	return p->entered ? bpf_map_lookup_elem(&intervals, &k) : NULL;
}

#endif /* INTERVAL_BPF_H */
