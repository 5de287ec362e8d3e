/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Keyed aggregates: histograms or counters, one per process, file, disk,
 * flow (any value type). The kernel adds to
 * the inner hash map in a one-slot ARRAY_OF_MAPS; each interval user space
 * puts the other inner map in the slot (the update returns only after
 * every program that could still see the old map has finished) and then
 * reads and empties the retired one. No add is lost between read and clear.
 */
#ifndef COMMON_KEYED_H
#define COMMON_KEYED_H

#include <stddef.h>
#include "hist.h"

struct bpf_map;

struct keyed_hist {
	int slot_fd;
	int inner_fd[2];
	int active;
	size_t key_size, value_size;
};

struct keyed_snapshot {
	size_t n;
	size_t key_size, value_size;
	unsigned char *keys;
	unsigned char *values;
	size_t *order;		/* sorted view, see keyed_sort() */
};

/* Before load: an unused keyed map (this mode keeps no keys) gets one
 * entry in each inner map (1024 histograms cost 2 MiB and ~5 ms). */
void keyed_unused(struct bpf_map *a, struct bpf_map *b);
int keyed_hist_init(struct keyed_hist *k, struct bpf_map *slot,
		    struct bpf_map *a, struct bpf_map *b);
/* Put the other inner map in the slot; returns once no program can
 * still add to the retired one. */
int keyed_hist_swap(struct keyed_hist *k);
/* Read and empty the map retired by the last swap. */
int keyed_hist_read(struct keyed_hist *k, struct keyed_snapshot *s);
void keyed_sort(struct keyed_snapshot *s, int (*cmp)(const void *a, const void *b));
const void *keyed_key(const struct keyed_snapshot *s, size_t i);
const void *keyed_value(const struct keyed_snapshot *s, size_t i);
void keyed_snapshot_free(struct keyed_snapshot *s);
/* The name bpf/names.bpf.h recorded for process @pid, or "?". */
void keyed_process_name(int names_fd, __u32 pid, char *comm, size_t len);

#endif /* COMMON_KEYED_H */
