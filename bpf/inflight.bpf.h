/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Operations in flight, keyed by a kernel object's address (a block
 * request, say), when the start and the end run on different CPUs and in
 * any context: process, softirq, hardirq. A BPF hash map does not fit:
 * its updates and deletes take a bucket lock, and a program that
 * interrupts another on the same CPU while that one holds the lock fails
 * its update (-EBUSY before 6.15, deadlock detection after): the start or
 * the end of an operation is silently lost. That is how peers come to
 * miss block I/O completions.
 *
 * Here the table is a preallocated array of slots, open addressing over a
 * short window: a slot is claimed and released with one compare-and-swap
 * on its key, and nothing ever waits or fails for another program. When
 * every slot of the window is taken, the oldest entry is evicted and
 * counted (an operation whose end never came, such as one that started
 * before an earlier run stopped tracing, must not hold a slot forever).
 *
 * An entry type starts with struct inflight_head; declare the map with
 * INFLIGHT_MAP(name, type, slots), slots a power of two.
 */
#ifndef INFLIGHT_BPF_H
#define INFLIGHT_BPF_H

#define INFLIGHT_WINDOW 8	/* slots tried from the key's hash on */

/* One load the compiler may not merge or repeat. */
#define INFLIGHT_LOAD(x) (*(volatile __u64 *)&(x))

struct inflight_head {
	__u64 key;		/* the object's address; 0: the slot is free */
	__u64 born;		/* when the key took the slot */
};

#define INFLIGHT_MAP(name, entry_type, slots)					\
	struct {							\
		__uint(type, BPF_MAP_TYPE_ARRAY);			\
		__uint(max_entries, slots);				\
		__type(key, __u32);					\
		__type(value, entry_type);				\
	} name SEC(".maps")

/* Fibonacci hashing: kernel addresses differ mostly in their middle bits. */
static __always_inline __u32 inflight_hash(__u64 key, __u32 slots)
{
	return (__u32)((key * 0x9E3779B97F4A7C15ULL) >> 32) & (slots - 1);
}

static __always_inline struct inflight_head *inflight_slot(void *map, __u32 slots, __u32 first, int i)
{
	__u32 idx = (first + (__u32)i) & (slots - 1);

	return bpf_map_lookup_elem(map, &idx);
}

/* The entry of @key, or NULL. */
static __always_inline struct inflight_head *inflight_find(void *map, __u32 slots, __u64 key)
{
	__u32 first = inflight_hash(key, slots);
	struct inflight_head *e;

	for (int i = 0; i < INFLIGHT_WINDOW; i++) {
		e = inflight_slot(map, slots, first, i);
		if (e && INFLIGHT_LOAD(e->key) == key)
			return e;
	}
	return NULL;
}

/* A new entry for @key (not in the table: check with inflight_find),
 * zeroed past the head; NULL only if every claim lost a race. Evicting
 * the window's oldest entry adds one to *evicted. */
static __always_inline struct inflight_head *inflight_claim(void *map, __u32 slots, __u64 key,
							    __u64 now, __u32 value_size,
							    __u64 *evicted)
{
	__u32 first = inflight_hash(key, slots);
	struct inflight_head *e, *oldest = NULL;
	__u64 cur;

	for (int i = 0; i < INFLIGHT_WINDOW; i++) {
		e = inflight_slot(map, slots, first, i);
		if (!e)
			continue;
		cur = INFLIGHT_LOAD(e->key);
		if (!cur && __sync_val_compare_and_swap(&e->key, 0, key) == 0)
			goto claimed;
		if (!oldest || e->born < oldest->born)
			oldest = e;
	}
	if (!oldest)
		return NULL;
	e = oldest;
	cur = INFLIGHT_LOAD(e->key);
	if (!cur || __sync_val_compare_and_swap(&e->key, cur, key) != cur)
		return NULL;
	__sync_fetch_and_add(evicted, 1);
claimed:
	e->born = now;
	/* The rest of the entry: zero it word by word (no memset in BPF). */
	for (__u32 off = sizeof(*e); off + 8 <= value_size && off < 256; off += 8)
		*(__u64 *)((char *)e + off) = 0;
	return e;
}

/* The entry of @key, found or made in one pass over the window (the
 * common case: a free slot in it); *created when made. NULL only if every
 * claim lost a race. */
static __always_inline struct inflight_head *inflight_get(void *map, __u32 slots, __u64 key,
							  __u64 now, __u32 value_size,
							  __u64 *evicted, bool *created)
{
	__u32 first = inflight_hash(key, slots);
	struct inflight_head *e, *free = NULL;
	__u64 cur;

	*created = false;
	for (int i = 0; i < INFLIGHT_WINDOW; i++) {
		e = inflight_slot(map, slots, first, i);
		if (!e)
			continue;
		cur = INFLIGHT_LOAD(e->key);
		if (cur == key)
			return e;
		if (!cur && !free)
			free = e;
	}
	if (free && __sync_val_compare_and_swap(&free->key, 0, key) == 0) {
		e = free;
		e->born = now;
		for (__u32 off = sizeof(*e); off + 8 <= value_size && off < 256; off += 8)
			*(__u64 *)((char *)e + off) = 0;
	} else {
		e = inflight_claim(map, slots, key, now, value_size, evicted);
	}
	*created = e != NULL;
	return e;
}

/* The operation of @e's key is over: free the slot. False if the entry
 * was evicted meanwhile (what was read from it may be another's). */
static __always_inline bool inflight_release(struct inflight_head *e, __u64 key)
{
	return __sync_val_compare_and_swap(&e->key, key, 0) == key;
}

#endif /* INFLIGHT_BPF_H */
