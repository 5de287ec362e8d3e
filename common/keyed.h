/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Keyed aggregates: histograms or counters, one per process, file, disk,
 * flow (any value type). The kernel adds to
 * inner hash map interval_cur & 1 of a two-entry ARRAY_OF_MAPS (filled
 * once); each interval user space flips interval_cur, waits until no
 * program can still add to the old map (common/drain.c) and then
 * reads and empties it. No add is lost between read and clear.
 */
#ifndef COMMON_KEYED_H
#define COMMON_KEYED_H

#include <stddef.h>
#include "hist.h"
#include "process_key.h"

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
/* Follow the flip of interval_cur (drain_interval() does it, and waits
 * until no program can still add to the retired map). */
void keyed_hist_swap(struct keyed_hist *k);
/* Read and empty the map retired by the last swap. */
int keyed_hist_read(struct keyed_hist *k, struct keyed_snapshot *s);
void keyed_sort(struct keyed_snapshot *s, int (*cmp)(const void *a, const void *b));
const void *keyed_key(const struct keyed_snapshot *s, size_t i);
const void *keyed_value(const struct keyed_snapshot *s, size_t i);
void keyed_snapshot_free(struct keyed_snapshot *s);
/* bpf_map_lookup_batch() on map @fd, up to *count entries into @keys
 * and @values, *count then those read (0 after an error but ENOENT, the
 * end). What the kernel wrote is told to valgrind, which does not model
 * the batch commands (common/memcheck.h): every batch read goes here. */
int keyed_lookup_batch(int fd, void *in_batch, void *out_batch, void *keys, size_t key_size,
		       void *values, size_t value_size, __u32 *count);
/* The name bpf/names.bpf.h recorded for process @pid at its latest
 * event, or "?". */
void keyed_process_name(int names_fd, __u32 pid, char *comm, size_t len);
/* struct process_key (common/process_key.h): by pid, then name; its name
 * as a C string ("?" if the kernel could not read one). */
int process_key_cmp(const struct process_key *a, const struct process_key *b);
void process_key_name(const struct process_key *k, char *comm, size_t len);

#endif /* COMMON_KEYED_H */
