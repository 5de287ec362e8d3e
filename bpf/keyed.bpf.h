/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Keyed aggregates (a histogram or counters per process, file, disk...):
 * two preallocated hash maps in a two-entry ARRAY_OF_MAPS, filled once;
 * programs add to entry interval_cur & 1, entered through interval.bpf.h,
 * and user space drains the other one after the flip and the wait
 * (common/drain.c, common/keyed.c). No map update per interval.
 * Preallocated: a run-time allocated hash in a tracing program makes
 * 5.12-6.0 kernels print a WARN and PREEMPT_RT kernels refuse the load.
 */
#ifndef KEYED_BPF_H
#define KEYED_BPF_H

#include "interval.bpf.h"
#include "lookup.bpf.h"

/* Inner hash map; declare two, plus the outer slot. */
#define KEYED_MAP(name, key_type, value_type, entries)			\
	struct {							\
		__uint(type, BPF_MAP_TYPE_HASH);			\
		__uint(max_entries, entries);				\
		__type(key, key_type);					\
		__type(value, value_type);				\
	} name SEC(".maps")

/* The slot's values are described by a one-entry template of the same
 * key and value: libbpf creates the template to make the slot, and the
 * kernel (5.10 and later) compares a hash inner map's type, key, value
 * and flags, not its size (a template the size of the real map costs 2 MiB and ~5 ms per
 * 1024 histograms at start). */
#define KEYED_SLOT(name, inner)						\
	struct {							\
		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);		\
		__uint(max_entries, 2);					\
		__type(key, __u32);					\
		__array(values, struct {				\
			__uint(type, BPF_MAP_TYPE_HASH);		\
			__uint(max_entries, 1);				\
			__type(key, typeof(*inner.key));		\
			__type(value, typeof(*inner.value));		\
		});							\
	} name SEC(".maps")

/* The value for @key in the inner map of the interval @p entered, created
 * from @zero on first use (*created then); NULL when the map is full. */
static __always_inline void *keyed_get(void *slot, const struct interval_pass *p, const void *key,
				       const void *zero, bool *created)
{
	__u32 slot_key = p->idx;
	void *inner;

	*created = false;
	if (!p->entered)
		return NULL;
	inner = bpf_map_lookup_elem(slot, &slot_key);
	if (!inner)
		return NULL;
	return lookup_or_create(inner, key, zero, created);
}

#endif /* KEYED_BPF_H */
