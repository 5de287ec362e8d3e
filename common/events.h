/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The ring buffer of a tool that prints events as they come, consumed in
 * bounded steps. libbpf's ring_buffer__consume() returns only once the
 * ring is empty: with producers faster than the output (opens in a loop,
 * the report to a slow pipe) it never does, and neither a report nor a
 * stop is ever seen. events_consume() takes at most one ring's worth of
 * records a call (256 KiB at most), then returns to the loop; nothing is
 * lost, the rest waits for the next call. At the end, what the output did
 * not take in time is counted by events_finish(), never left unsaid.
 */
#ifndef COMMON_EVENTS_H
#define COMMON_EVENTS_H

#include <bpf/libbpf.h>

/* The ring of @map, each record to @cb (its ctx NULL); one a process. NULL
 * and errno on failure. */
struct ring_buffer *events_open(const struct bpf_map *map, ring_buffer_sample_fn cb);
/* Records of @rb to its callback, one ring's worth at most: the number
 * taken, or a negative error (the callback's). */
int events_consume(struct ring_buffer *rb);
/* At the end: one step more to the callback, then the records left in
 * @rb taken without it, at most twice the ring's size (the programs still
 * run until they are detached): how many, for the tool to report as not
 * printed (0 on an error). */
long events_finish(struct ring_buffer *rb);
void events_close(struct ring_buffer *rb);

#endif
