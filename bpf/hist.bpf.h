/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * In-kernel histograms, exact across interval reads and consistent within
 * one interval (count, sum, max and min of the same reads):
 *  - the single histogram lives in a double-buffered per-CPU interval
 *    (struct hist_interval, interval.bpf.h): programs add to element
 *    interval_cur & 1 of the per-CPU array with plain adds where no
 *    program can interrupt another that adds to it on the same CPU (the
 *    kernel runs one tracepoint program per CPU at a time,
 *    bpf_prog_active, and from 6.1 skips a raw tracepoint's program that
 *    would nest in itself, 05b24ff9b2cf), and with atomic adds where one
 *    can (before 6.1 a raw tracepoint's program can: biolat's
 *    completion program, run in softirq or process context, is
 *    interrupted by a completion in hardirq; interval_nests); user space flips interval_cur, waits for running
 *    programs (interval.bpf.h) and drains the retired element, summing
 *    the CPUs (common/drain.c);
 *  - a keyed histogram is a keyed aggregate (keyed.bpf.h) that every CPU
 *    adds to, with atomic adds; its max and min by compare-and-swap (see
 *    raise_to). One entry per key whatever the number of CPUs: a
 *    histogram per key and CPU would divide the keys a map holds by the
 *    CPUs that add to them.
 */
#ifndef HIST_BPF_H
#define HIST_BPF_H

#include "hist_layout.h"
#include "interval.bpf.h"
#include "keyed.bpf.h"

#define KEYED_HIST_MAP(name, key_type, entries) KEYED_MAP(name, key_type, struct hist, entries)
#define KEYED_HIST_SLOT(name, inner) KEYED_SLOT(name, inner)

/* The display unit (enum hist_unit), set by the runtime. Not used for
 * bucketing: buckets count nanoseconds whatever the unit (DESIGN.md),
 * user space converts when printing. */
const volatile __u8 hist_unit = UNIT_USECS;

/* A zeroed value to insert new keys from: 2 KiB is too big for the stack. */
const struct hist hist_zero = {};

/* Add one to a counter of this CPU's interval. */
static __always_inline void interval_inc(__u64 *count)
{
	if (interval_nests)
		__sync_fetch_and_add(count, 1);
	else
		(*count)++;
}

/* Add one to a counter of the current interval (unmatched, missed_ends). */
#define INTERVAL_COUNT(field)						\
	({								\
		struct interval_pass pass_;				\
		struct hist_interval *iv_ = interval_enter(&pass_);	\
									\
		if (iv_)						\
			interval_inc(&iv_->field);			\
		interval_leave(&pass_);					\
	})

/* Raise *p to v, by compare-and-swap: a new maximum is rare after warm-up,
 * so usually one load. False if it lost RAISE_TRIES races in a row to
 * other CPUs raising the same word, each of them to a value below v, and
 * the word is still below v: then the caller counts it (struct hist's
 * races). A test build may set RAISE_TRIES lower to lose races often
 * (tests/tools/hist_race.bpf.c). */
#ifndef RAISE_TRIES
#define RAISE_TRIES 4
#endif
#ifdef BPF_NO_ATOMICS
/* Without compare-and-swap (kernels before 5.12; see the Makefile's
 * BPF_NO_ATOMICS): store v and look again. Another CPU raising the word
 * at the same moment may store a lower value over ours, which the next
 * look sees and raises again; false if it is still below v after
 * RAISE_TRIES looks. A lower value stored after our last look goes
 * unseen: there a keyed max or min can be short by one such race
 * (README, Kernels). */
static __always_inline bool raise_to(__u64 *p, __u64 v)
{
	for (int i = 0; i < RAISE_TRIES; i++) {
		if (v <= *(volatile __u64 *)p)
			return true;
		*(volatile __u64 *)p = v;
	}
	return v <= *(volatile __u64 *)p;
}
#else
static __always_inline bool raise_to(__u64 *p, __u64 v)
{
	__u64 old = *p, seen;

	for (int i = 0; i < RAISE_TRIES; i++) {
		if (v <= old)
			return true;
		seen = __sync_val_compare_and_swap(p, old, v);
		if (seen == old)
			return true;
		old = seen;	/* what the CPU that won put there */
	}
	return v <= old;
}
#endif

/* Count @n values @v (nanoseconds or bytes: raw, whatever the display
 * unit) in @h. @shared: other CPUs add to @h too (a keyed histogram), so
 * atomically; else @h is this CPU's own, atomically too where programs
 * nest (interval_nests). */
static __always_inline void hist_add_n(struct hist *h, __u64 v, __u32 n, bool shared)
{
	__u32 idx = hist_bucket(v);

	if (idx >= HIST_BUCKETS)
		idx = HIST_BUCKETS - 1;
	if (!shared && !interval_nests) {
		h->buckets[idx] += n;
		h->sum += v * n;
		if (v > h->max)
			h->max = v;
		if (~v > h->min_inv)
			h->min_inv = ~v;
		return;
	}
	__sync_fetch_and_add(&h->buckets[idx], n);
#ifdef BPF_NO_ATOMICS
	/* clang makes an atomic add of a known 0 an atomic or, which
	 * kernels before 5.12 refuse. */
	if (v)
#endif
	__sync_fetch_and_add(&h->sum, v * n);
	/* Both raised, whatever the first gave. */
	bool max_ok = raise_to(&h->max, v), min_ok = raise_to(&h->min_inv, ~v);

	if (!max_ok || !min_ok)
		__sync_fetch_and_add(&h->races, 1);
}

static __always_inline void hist_add(struct hist *h, __u64 v, bool shared)
{
	hist_add_n(h, v, 1, shared);
}

/* Latencies are added in nanoseconds: the unit is only a question of display. */
static __always_inline void hist_add_ns_n(struct hist *h, __u64 ns, __u32 n, bool shared)
{
	hist_add_n(h, ns, n, shared);
}

static __always_inline void hist_add_ns(struct hist *h, __u64 ns, bool shared)
{
	hist_add_n(h, ns, 1, shared);
}

static __always_inline struct hist *hist_keyed_get(void *slot, const struct interval_pass *p,
						   const void *key, bool *created)
{
	struct hist *h = keyed_get(slot, p, key, &hist_zero, created);
	struct hist_interval *iv;

	if (!h && (iv = interval_of(p)))
		interval_inc(&iv->lost_keys);
	return h;
}

/* The histogram for the tool's key *@key_ptr in the inner map of @slot
 * that the interval @pass entered, created on first use; *created tells
 * the caller to record what it names the key by. */
#define hist_keyed(slot, pass, key_ptr, created) hist_keyed_get((slot), (pass), (key_ptr), (created))

#endif /* HIST_BPF_H */
