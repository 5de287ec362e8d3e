/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * In-kernel histograms, exact across interval reads and consistent within
 * one interval (count, sum, max and min of the same reads):
 *  - the single histogram lives in a double-buffered per-CPU interval
 *    (struct hist_interval): programs add to element interval_cur & 1 of
 *    the per-CPU array with plain adds (programs on one CPU never overlap:
 *    the kernel runs one tracing program per CPU at a time), user space
 *    flips interval_cur, waits for running programs and drains the
 *    retired element, summing the CPUs (common/drain.c);
 *  - keyed histograms are keyed aggregates (keyed.bpf.h).
 */
#ifndef HIST_BPF_H
#define HIST_BPF_H

#include "hist_layout.h"
#include "keyed.bpf.h"

#define KEYED_HIST_MAP(name, key_type, entries) KEYED_MAP(name, key_type, struct hist, entries)
#define KEYED_HIST_SLOT(name, inner) KEYED_SLOT(name, inner)

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct hist_interval);
} intervals SEC(".maps");
__u32 interval_cur SEC(".bss");

/* The unit the buckets count in (enum hist_unit); set by the runtime. */
const volatile __u8 hist_unit = UNIT_USECS;

/* A zeroed value to insert new keys from: 2 KiB is too big for the stack. */
const struct hist hist_zero = {};

/* This CPU's share of the current interval (never NULL in practice). */
static __always_inline struct hist_interval *interval_now(void)
{
	__u32 k = interval_cur & 1;

	return bpf_map_lookup_elem(&intervals, &k);
}

/* Raise *p to v; a new maximum is rare after warm-up: usually one load. */
static __always_inline void raise_to(__u64 *p, __u64 v)
{
	__u64 old;

	for (int i = 0; i < 4; i++) {
		old = *p;
		if (v <= old)
			break;
		if (__sync_val_compare_and_swap(p, old, v) == old)
			break;
	}
}

/* Count @n values of @raw (kept exact in sum/max/min) in the bucket of
 * @v (its value in the display unit). @shared: other CPUs add to @h too
 * (a keyed histogram), so atomically; else @h is this CPU's own. */
static __always_inline void hist_add_n(struct hist *h, __u64 raw, __u64 v, __u32 n, bool shared)
{
	__u32 idx = hist_bucket(v);

	if (idx >= HIST_BUCKETS)
		idx = HIST_BUCKETS - 1;
	if (!shared) {
		h->buckets[idx] += n;
		h->sum += raw * n;
		if (raw > h->max)
			h->max = raw;
		if (~raw > h->min_inv)
			h->min_inv = ~raw;
		return;
	}
	__sync_fetch_and_add(&h->buckets[idx], n);
	__sync_fetch_and_add(&h->sum, raw * n);
	raise_to(&h->max, raw);
	raise_to(&h->min_inv, ~raw);
}

static __always_inline void hist_add(struct hist *h, __u64 raw, __u64 v, bool shared)
{
	hist_add_n(h, raw, v, 1, shared);
}

/* ns / 1000 and ns / 1000000, exact: below 2^32 ns (4.3 s) as a multiply
 * and a shift (the reciprocals compilers use for 32-bit division), which
 * costs a few cycles where a 64-bit divide costs tens. */
static __always_inline __u64 ns_to_us(__u64 ns)
{
	return ns < (1ULL << 32) ? (ns * 274877907ULL) >> 38 : ns / 1000;
}

static __always_inline __u64 ns_to_ms(__u64 ns)
{
	return ns < (1ULL << 32) ? (ns * 1125899907ULL) >> 50 : ns / 1000000;
}

/* @n latencies of @ns nanoseconds, bucketed in the unit the user asked for. */
static __always_inline void hist_add_ns_n(struct hist *h, __u64 ns, __u32 n, bool shared)
{
	__u64 v = ns;

	if (hist_unit == UNIT_USECS)
		v = ns_to_us(ns);
	else if (hist_unit == UNIT_MSECS)
		v = ns_to_ms(ns);
	hist_add_n(h, ns, v, n, shared);
}

static __always_inline void hist_add_ns(struct hist *h, __u64 ns, bool shared)
{
	hist_add_ns_n(h, ns, 1, shared);
}

/* The histogram for @key in the current inner map, created on first use;
 * *created tells the caller to record what it names the key by. */
static __always_inline struct hist *hist_keyed(void *slot, const void *key, bool *created)
{
	struct hist *h = keyed_get(slot, key, &hist_zero, created);
	struct hist_interval *iv;

	if (!h && (iv = interval_now()))
		iv->lost_keys++;
	return h;
}

#endif /* HIST_BPF_H */
