/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * In-kernel histograms. Two shapes, both exact across interval reads:
 *  - one global histogram in .bss: user space drains it with atomic
 *    exchanges on the mmap'd page, so no add is lost between read and clear;
 *  - keyed histograms in a hash map reached through a one-slot
 *    ARRAY_OF_MAPS: user space swaps the inner map (the update waits for
 *    running programs via synchronize_rcu) and drains the retired one.
 */
#ifndef HIST_BPF_H
#define HIST_BPF_H

#include "hist_layout.h"

/* Inner hash map of keyed histograms; declare two, plus the outer slot. */
#define KEYED_HIST_MAP(name, key_type, entries)				\
	struct {							\
		__uint(type, BPF_MAP_TYPE_HASH);			\
		__uint(max_entries, entries);				\
		__uint(map_flags, BPF_F_NO_PREALLOC);			\
		__type(key, key_type);					\
		__type(value, struct hist);				\
	} name SEC(".maps")

#define KEYED_HIST_SLOT(name, inner)					\
	struct {							\
		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);		\
		__uint(max_entries, 1);					\
		__type(key, __u32);					\
		__array(values, inner);					\
	} name SEC(".maps")

/* Keys that found the keyed map full: reported to the user as lost. */
__u64 hist_lost_keys SEC(".bss");

/* A zeroed value to insert new keys from: 2 KiB is too big for the stack. */
const struct hist hist_zero = {};

static __always_inline void hist_add(struct hist *h, __u64 v)
{
	__u32 idx = hist_bucket(v);
	__u64 old;

	if (idx >= HIST_BUCKETS)
		idx = HIST_BUCKETS - 1;
	__sync_fetch_and_add(&h->buckets[idx], 1);
	__sync_fetch_and_add(&h->sum, v);
	/* A new maximum is rare after warm-up: usually one load, no CAS. */
	for (int i = 0; i < 4; i++) {
		old = h->max;
		if (v <= old)
			break;
		if (__sync_val_compare_and_swap(&h->max, old, v) == old)
			break;
	}
}

/* The histogram for @key in the current inner map, created on first use. */
static __always_inline struct hist *hist_keyed(void *slot, const void *key)
{
	__u32 zero = 0;
	struct hist *h;
	void *inner;

	inner = bpf_map_lookup_elem(slot, &zero);
	if (!inner)
		return NULL;
	h = bpf_map_lookup_elem(inner, key);
	if (h)
		return h;
	bpf_map_update_elem(inner, key, &hist_zero, BPF_NOEXIST);
	h = bpf_map_lookup_elem(inner, key);
	if (!h)
		__sync_fetch_and_add(&hist_lost_keys, 1);
	return h;
}

#endif /* HIST_BPF_H */
