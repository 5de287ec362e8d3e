/* SPDX-License-Identifier: GPL-2.0-only */
/* Choosing, for each event, the first probe this kernel offers. */
#ifndef COMMON_PROBE_H
#define COMMON_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include "tool.h"

#define MAX_PROBES 32

struct bpf_link;
struct bpf_object;

struct probe_set {
	bool chosen[MAX_PROBES];
	struct bpf_link *links[MAX_PROBES];
};

const char *probe_kind_name(enum probe_kind kind);
bool probe_available(const struct probe *p, char *why, size_t len);
/* The checks are over: what they hold for a next one (the kernel's BTF)
 * is freed; a later check loads it again. */
void probe_checks_done(void);
/* 0 if the id of tracepoint "category/name" (in @path) can be read, as
 * attaching needs; else an errno: ENOENT if the kernel lacks it, EACCES or
 * EPERM if tracefs is closed to us. */
int probe_tracepoint_access(const char *category_name, char *path, size_t len);
/* Pick one probe per wanted event (of kind only_kind, unless it is -1) and
 * report each with check_row(). Returns 0 if every wanted event has one. */
int probes_select(const struct tool *t, int only_kind, struct probe_set *ps);
/* --check: list, with check_row(), the events these options do not
 * need (each one's first probe this kernel offers); nothing fails. */
void probes_list_unwanted(const struct tool *t, int only_kind);
/* Load only the chosen programs. */
int probes_autoload(const struct tool *t, const struct probe_set *ps, struct bpf_object *obj);
/* Load program @name of @obj or not; -ENOENT (said) if it has none. */
int probe_autoload(struct bpf_object *obj, const char *name, bool load);
/* Attach program @prog of @obj, a probe of @kind on @target; NULL, with
 * one error line, if the kernel refuses. */
struct bpf_link *probe_attach(struct bpf_object *obj, const char *prog, enum probe_kind kind, const char *target);
/* Whether this kernel's BPF has fetch-and-add and compare-and-swap
 * (Linux 5.12+): if not, each tool's skeleton opens its programs built
 * without them (the Makefile's BPF_NO_ATOMICS, tool_elf_bytes() in
 * tool.h). check_bpf_atomics() says which in a --check row. */
bool probe_bpf_atomics(void);
void check_bpf_atomics(void);
/* Whether a raw tracepoint's program may run again on its CPU while it
 * runs (before Linux 6.1): then a tool whose raw tracepoint programs add
 * to the per-CPU interval sets bpf/interval.bpf.h's interval_nests.
 * check_raw_tp_nests() says which in a --check row. */
bool probe_raw_tp_nests(void);
void check_raw_tp_nests(void);
/* The start-time store a tool does not use (probe_task_storage's
 * answer) costs nothing: the fallback hash shrinks to a token size, or
 * the task storage map is not made (a kernel without it refuses it). */
void start_store_unused(struct bpf_map *task, struct bpf_map *tid, bool task_storage);
/* Where bpf/start.bpf.h keeps a thread's start: task storage (Linux 5.11+,
 * kernel BTF) if this kernel has it, else the LRU hash; says so in --check. */
bool probe_task_storage(void);
/* bpf/start.bpf.h's START_EXIT_PROGRAM, as a tool lists it (last: it is
 * attached first), and whether it is wanted: with the LRU hash, which
 * would keep the record of an exited thread (one killed in a syscall:
 * open) until evicted. Asked before probe_task_storage() says its row. */
#define START_EXIT_EVENT "sched_process_exit"
#define START_EXIT_PROBE \
	{ START_EXIT_EVENT, PROBE_TRACEPOINT, "sched/sched_process_exit", "start_exit", false }
bool start_store_fallback(void);
/* Attach the chosen probes, in the reverse order of the tool's list. */
int probes_attach(const struct tool *t, struct probe_set *ps, struct bpf_object *obj);
/* Every link of @ps and the @n of @more (the runtime's own) destroyed at
 * once (links_destroy()). */
void probes_detach(const struct tool *t, struct probe_set *ps, struct bpf_link **more, size_t n);
/* @n links destroyed at once, in threads of their own; each set NULL. */
#define LINKS_MAX (MAX_PROBES + 8)
void links_destroy(struct bpf_link **links, size_t n);
/* @prog's kernel info (run counts, recursion misses) into @info: 0, or
 * -1 if it is not loaded or the kernel refuses. */
int prog_info(const struct bpf_program *prog, struct bpf_prog_info *info);
/* Runs of @obj's loaded programs the kernel skipped because one of them
 * was already running on that CPU (an interrupt's event during a
 * program): the sum of their recursion_misses, since load. */
unsigned long long probe_misses(const struct bpf_object *obj);

#endif /* COMMON_PROBE_H */
