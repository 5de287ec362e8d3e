/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Operations in flight, keyed by a kernel object's address (a block
 * request, say), when the start and the end run on different CPUs and in
 * any context: process, softirq, hardirq. A BPF hash map does not fit:
 * its updates and deletes take a bucket lock, and a program that
 * interrupts another on the same CPU while that one holds the lock fails
 * its update (-EBUSY before 6.15, deadlock detection after): the start or
 * the end of an operation is silently lost.
 *
 * Here the table is a preallocated array of slots, open addressing over a
 * short window: a slot is claimed with one compare-and-swap on its key,
 * and nothing ever waits or fails for another program. An operation that
 * ends keeps its key in the slot, marked ended, until another operation
 * needs the slot: a late second end of the same object (the block layer
 * completes a flushed write twice) is then known as such, and the same
 * object starting again takes its own slot back. Empty slots are taken
 * before ended ones. When every slot of the window holds an operation
 * still in flight, the oldest is evicted and counted (an operation whose
 * end never comes must not hold a slot forever). A claim that loses its
 * race to another program's gets no slot: the caller counts that
 * operation as it counts one it never saw start.
 *
 * A slot's state is its key word alone, so that one load tells it and
 * one compare-and-swap on what was seen changes it: 0 free; the object's
 * address, in flight; the address | INFLIGHT_ENDED, ended (addresses are
 * aligned: bit 0 is free); INFLIGHT_CLAIMED, being set up. A program
 * takes a slot by claiming it (compare-and-swap from what it saw to
 * INFLIGHT_CLAIMED), initialises the rest, then publishes its key (a
 * second compare-and-swap, fully ordered like the first: the rest is
 * written before any CPU sees the key). A scan passes over a claimed
 * slot, so no program can take a slot that another is setting up, nor
 * find one under a key before it is initialised: with the key published
 * first and the rest cleared after (as before), a scan on another CPU saw
 * the new key beside the old owner's ended flag and took the slot from
 * its new owner. Ending is a compare-and-swap of the key to key |
 * INFLIGHT_ENDED, which fails if the slot was evicted meanwhile.
 *
 * An entry type starts with struct inflight_head; declare the map with
 * INFLIGHT_MAP(name, type, slots), slots a power of two.
 *
 * Kernels without compare-and-swap (before 5.12: the Makefile's
 * BPF_NO_ATOMICS) get an LRU hash by key instead (libbpf-tools'
 * biolatency keeps a plain hash): an update that the bucket lock refuses loses that
 * operation's start (its end is then counted as unmatched), and the LRU
 * evicts what it evicts uncounted; ended entries stay until evicted. The
 * entry's key word there keeps the same states but INFLIGHT_CLAIMED
 * (the hash makes the entry).
 */
#ifndef INFLIGHT_BPF_H
#define INFLIGHT_BPF_H

#include "lookup.bpf.h"

#define INFLIGHT_WINDOW 8	/* slots tried from the key's hash on */

/* One load the compiler may not merge or repeat. */
#define INFLIGHT_LOAD(x) (*(volatile __u64 *)&(x))

/* The key word's states (above). */
#define INFLIGHT_ENDED 1ULL
#define INFLIGHT_CLAIMED INFLIGHT_ENDED	/* "address 0, ended": no object's */

struct inflight_head {
	__u64 key;		/* the object's address and state; 0: the slot is free */
	__u64 born;		/* when the key took the slot */
};

/* Whether @e's operation is over (it may be another's already, if the
 * caller does not own it: a claimed slot reads as ended too). */
static __always_inline bool inflight_ended(const struct inflight_head *e)
{
	return *(volatile const __u64 *)&e->key & INFLIGHT_ENDED;
}

/* A slot taken for a new operation: zeroed past the key (no memset in
 * BPF), born @now. */
static __always_inline void inflight_init(struct inflight_head *e, __u64 now, __u32 value_size)
{
	e->born = now;
	for (__u32 off = sizeof(*e); off + 8 <= value_size && off < 256; off += 8)
		*(__u64 *)((char *)e + off) = 0;
}

#ifdef BPF_NO_ATOMICS
#define INFLIGHT_MAP_TYPE BPF_MAP_TYPE_LRU_HASH
#define INFLIGHT_KEY_TYPE __u64
#else
#define INFLIGHT_MAP_TYPE BPF_MAP_TYPE_ARRAY
#define INFLIGHT_KEY_TYPE __u32
#endif

/* With a zeroed entry to create the hash's from (in both builds: their
 * variables must be the same, bpf/skeleton.sh). */
#define INFLIGHT_MAP(name, entry_type, slots)					\
	struct {							\
		__uint(type, INFLIGHT_MAP_TYPE);			\
		__uint(max_entries, slots);				\
		__type(key, INFLIGHT_KEY_TYPE);				\
		__type(value, entry_type);				\
	} name SEC(".maps");						\
	const entry_type name##_zero = {}

#ifdef BPF_NO_ATOMICS
static __always_inline struct inflight_head *inflight_find(void *map, __u32 slots, __u64 key)
{
	return bpf_map_lookup_elem(map, &key);
}

static __always_inline struct inflight_head *inflight_get(void *map, __u32 slots, __u64 key,
							  __u64 now, const void *zero, __u32 value_size,
							  __u64 *evicted, bool *created)
{
	struct inflight_head *e = lookup_or_create(map, &key, zero, created);

	if (e && (*created || inflight_ended(e))) {
		inflight_init(e, now, value_size);
		e->key = key;
		*created = true;
	}
	return e;
}

static __always_inline bool inflight_end(struct inflight_head *e, __u64 key)
{
	if (INFLIGHT_LOAD(e->key) != key)
		return false;
	e->key = key | INFLIGHT_ENDED;
	return true;
}
#else

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

/* The slot of @key (in flight or ended), or NULL. A slot never becomes
 * empty again once taken, and a key takes the first empty slot of its
 * window if there is one (or its own ended slot): no key lies past an
 * empty slot. */
static __always_inline struct inflight_head *inflight_find(void *map, __u32 slots, __u64 key)
{
	__u32 first = inflight_hash(key, slots);
	struct inflight_head *e, *found = NULL;
	bool stop = false;
	__u64 cur;

	/* No early exit: a loop clang can unroll. 6.1's verifier rejects the
	 * loop it makes of one ("back-edge"). */
#pragma clang loop unroll(full)
	for (int i = 0; i < INFLIGHT_WINDOW; i++) {
		if (found || stop)
			continue;
		e = inflight_slot(map, slots, first, i);
		if (!e)
			continue;
		cur = INFLIGHT_LOAD(e->key);
		if ((cur & ~INFLIGHT_ENDED) == key)
			found = e;
		else if (!cur)
			stop = true;
	}
	return found;
}

/* Between a slot's claim and its key's publication: a test build may
 * make it longer, for races to land there (tests/tools/inflight_race.bpf.c). */
#ifndef INFLIGHT_TAKE_PAUSE
#define INFLIGHT_TAKE_PAUSE()
#endif

/* Take @e, seen holding @cur (0, or an ended key, or in flight: an
 * eviction), for @key: claimed, initialised, then published (above).
 * False if another program took it first. */
static __always_inline bool inflight_take(struct inflight_head *e, __u64 cur, __u64 key, __u64 now,
					  __u32 value_size)
{
	if (__sync_val_compare_and_swap(&e->key, cur, INFLIGHT_CLAIMED) != cur)
		return false;
	INFLIGHT_TAKE_PAUSE();
	inflight_init(e, now, value_size);
	/* Only the claimer changes a claimed slot: this always succeeds. */
	__sync_val_compare_and_swap(&e->key, INFLIGHT_CLAIMED, key);
	return true;
}

/* The slot of @key, found in flight or taken in one pass over the
 * window: its own ended slot first, then an empty one, then another's
 * ended one, and only where the window holds none of those the oldest in
 * flight (+1 in *evicted). *created when taken. NULL if the claim lost
 * its race (another program took that slot first: an operation in flight
 * is not evicted for it), or every slot is being set up. (@zero: the
 * hash's.) */
static __always_inline struct inflight_head *inflight_get(void *map, __u32 slots, __u64 key,
							  __u64 now, const void *zero, __u32 value_size,
							  __u64 *evicted, bool *created)
{
	__u32 first = inflight_hash(key, slots);
	struct inflight_head *e, *own = NULL, *empty = NULL, *ended = NULL, *oldest = NULL;
	__u64 cur, ended_key = 0, oldest_key = 0;

	*created = false;
#pragma clang loop unroll(full)
	for (int i = 0; i < INFLIGHT_WINDOW; i++) {
		e = inflight_slot(map, slots, first, i);
		if (!e)
			continue;
		cur = INFLIGHT_LOAD(e->key);
		if (cur == key)
			return e;
		if (cur == INFLIGHT_CLAIMED)
			continue;	/* another program's, being set up */
		if (cur == (key | INFLIGHT_ENDED)) {
			own = e;
		} else if (!cur) {
			if (!empty)
				empty = e;
		} else if (cur & INFLIGHT_ENDED) {
			if (!ended) {
				ended = e;
				ended_key = cur;
			}
		} else if (!oldest || e->born < oldest->born) {
			oldest = e;
			oldest_key = cur;
		}
	}
	if (own && inflight_take(own, key | INFLIGHT_ENDED, key, now, value_size))
		e = own;
	else if (empty && inflight_take(empty, 0, key, now, value_size))
		e = empty;
	else if (ended && inflight_take(ended, ended_key, key, now, value_size))
		e = ended;
	else if (!own && !empty && !ended && oldest && inflight_take(oldest, oldest_key, key, now, value_size))
		__sync_fetch_and_add(evicted, 1), e = oldest;
	else
		return NULL;
	*created = true;
	return e;
}

static __always_inline bool inflight_end(struct inflight_head *e, __u64 key)
{
	return __sync_val_compare_and_swap(&e->key, key, key | INFLIGHT_ENDED) == key;
}
#endif /* BPF_NO_ATOMICS */

/* inflight_end(e, key): the operation of @e's key is over; the key stays
 * until the slot is needed. False if the slot was taken for another key
 * meanwhile (what was read from it may be another's). */

#endif /* INFLIGHT_BPF_H */
