/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The process filter every program calls first. Each switch is a rodata
 * constant set before load, so the verifier drops what is not in use and
 * an unfiltered tool pays nothing here.
 */
#ifndef FILTER_BPF_H
#define FILTER_BPF_H

#include "filter.h"
#include "raw_tp.bpf.h"

const volatile __u32 filter_tgid = 0;
const volatile __u32 filter_tid = 0;
const volatile bool filter_by_comm = false;
const volatile __u64 filter_comm[FILTER_COMM_LEN / 8] = {};
const volatile __u64 filter_comm_mask[FILTER_COMM_LEN / 8] = {};	/* name and NUL */
/* Offsets of comm and group_leader in this kernel's task_struct; 0: copy
 * the name out, and match the thread's own name only. */
const volatile __u32 filter_comm_at = 0;
const volatile __u32 filter_leader_at = 0;
const volatile bool filter_by_cgroup = false;
/* The tool runs in a PID namespace other than the initial one: PIDs in
 * filters and output are that namespace's (nsfs device and inode of
 * /proc/self/ns/pid), and tasks it cannot see have none (0). */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;
/* The tool's own process (as current_ids() numbers it), for tools whose
 * own work at start-up would otherwise show (opensnoop's opens of tracefs). */
const volatile __u32 self_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} filter_cgroup SEC(".maps");

/* tgid << 32 | tid of the current thread, as the user's PID namespace
 * numbers them (0 where it cannot see the thread). */
static __always_inline __u64 current_ids(void)
{
	/* struct bpf_pidns_info, declared here: a vmlinux.h type would make
	 * its field accesses CO-RE relocations. */
	struct { __u32 pid, tgid; } ns;

	if (!pidns_ino)
		return bpf_get_current_pid_tgid();
	if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, (void *)&ns, sizeof(ns)))
		return 0;
	return (__u64)ns.tgid << 32 | ns.pid;
}

/* The event is the tool's own doing. */
static __always_inline bool is_self(void)
{
	return self_tgid && (__u32)(current_ids() >> 32) == self_tgid;
}

/* Two words of the task's name compare it, read in place where kernel BTF
 * gave its offset: copying it out with bpf_get_current_comm() cost a read
 * left out by -n 10-15 ns more of BPF on 6.18. The mask keeps the name and
 * its NUL: what follows is not the name (a kernel that sets names with
 * strlcpy leaves a former, longer name's bytes there). */
static __always_inline bool comm_is(const __u64 *comm)
{
	return (comm[0] & filter_comm_mask[0]) == filter_comm[0] &&
	       (comm[1] & filter_comm_mask[1]) == filter_comm[1];
}

static __always_inline bool comm_copy_matches(void)
{
	__u64 copy[FILTER_COMM_LEN / 8] = {};

	bpf_get_current_comm(copy, sizeof(copy));
	return comm_is(copy);
}

/* -n NAME: the thread's own name, or its process's (its group leader's,
 * the name every row shows): the threads w0, w1 of a process thrload are
 * found by either name. */
static __always_inline bool comm_matches(void)
{
	/* bpf_get_current_task_btf() is 5.11's: the programs for kernels
	 * without BPF atomics (5.12, the Makefile's BPF_NO_ATOMICS) copy. */
#ifndef BPF_NO_ATOMICS
	if (filter_comm_at) {
		const void *task = bpf_get_current_task_btf(), *leader;

		if (comm_is(task + filter_comm_at))
			return true;
		if (!filter_leader_at)
			return false;
		leader = *(const void *const *)(task + filter_leader_at);
		return leader && leader != task && comm_is(leader + filter_comm_at);
	}
#endif
	if (comm_copy_matches())
		return true;
	if (filter_leader_at) {
		__u64 comm[FILTER_COMM_LEN / 8] = {};
		const void *task = (const void *)bpf_get_current_task(), *leader = NULL;

		if (!bpf_probe_read_kernel(&leader, sizeof(leader), task + filter_leader_at) &&
		    leader && leader != task &&
		    !bpf_probe_read_kernel(comm, sizeof(comm), leader + filter_comm_at))
			return comm_is(comm);
	}
	return false;
}

/* The process and thread filters alone: the cheap part of traced(). */
static __always_inline bool traced_ids(void)
{
	if (filter_tgid || filter_tid) {
		__u64 id = current_ids();

		if (filter_tgid && (__u32)(id >> 32) != filter_tgid)
			return false;
		if (filter_tid && (__u32)id != filter_tid)
			return false;
	}
	return true;
}

/* The name and cgroup filters, asked of the kernel. */
static __always_inline bool traced_by_comm_and_cgroup(void)
{
	if (filter_by_cgroup && bpf_current_task_under_cgroup(&filter_cgroup, 0) != 1)
		return false;
	if (filter_by_comm && !comm_matches())
		return false;
	return true;
}

/*
 * -c answers, kept per CPU for the thread that last asked there. Asking
 * walks from the task to its cgroup's ancestors, memory that is cold when
 * a syscall starts: a filtered-out read paid 42 ns of BPF over two empty
 * programs for it, and 18 with this cache (6.18; -p: 6). An answer
 * changes only when its thread moves to another cgroup, or, with -n too,
 * is renamed; a thread id names another thread only after a fork. The
 * programs below move gen on at each of those events, and an answer holds
 * for its generation. The fork and the move bump after the change, so an
 * answer read after the bump is the new one. A rename's tracepoint runs before the name is written: a
 * thread renamed by another one (/proc/TID/comm, as pthread_setname_np
 * does) is not cached until FILTER_RENAMES later such renames have passed
 * (it is asked each time instead, as without the cache). -n alone asks
 * every time: the name is in the task, whose memory a syscall has just
 * used, and the cache measured no faster for it (28 ns against 24; 52 in
 * a per-CPU map).
 *
 * All of it is in one global, a page that a hit touches with .rodata and
 * nothing else: where every syscall flushes the TLB (PTI without PCID, as
 * on the host these figures come from), each page a program touches costs
 * a page walk. Each tool includes this header first, so that the .bss
 * globals defined after it (the interval's side, the start store's
 * counters, the tool's totals) fill the rest of that page. They all have
 * initializers: clang lays out those in the order they are defined, the
 * others in the order code first uses them, which differs between the
 * Makefile's two builds of a tool.
 */
#define FILTER_RENAMES 4
/* Its rename slot takes a fetch-and-add (filter_rename): the programs for
 * kernels without BPF atomics (before 5.12, the Makefile's
 * BPF_NO_ATOMICS) ask every time. */
#ifdef BPF_NO_ATOMICS
#define FILTER_CACHED false
#else
#define FILTER_CACHED true
#endif
#define FILTER_CACHE_CPUS 62	/* with the header, one page; others ask */

struct {
	__u64 gen;
	__u64 renamed[FILTER_RENAMES];	/* task pointers */
	__u64 pad[8 - 1 - FILTER_RENAMES];
	struct {			/* a cache line per CPU */
		__u64 id;		/* pid_tgid; 0: empty, or being written */
		__u64 gen;
		__u64 traced;
		__u64 pad[5];
	} answers[FILTER_CACHE_CPUS];
} filter_state SEC(".bss") __attribute__((aligned(4096))) = {};

static __always_inline void filter_bump(void)
{
	__sync_fetch_and_add(&filter_state.gen, 1);
}

SEC("raw_tp/sched_process_fork")
int filter_fork(void *ctx)
{
	filter_bump();
	return 0;
}

SEC("raw_tp/cgroup_attach_task")
int filter_move(void *ctx)
{
	filter_bump();
	return 0;
}

/* task_rename(task, comm), in the renamer's context. */
SEC("raw_tp/task_rename")
int filter_rename(struct raw_tp_ctx *ctx)
{
#ifndef BPF_NO_ATOMICS
	__u64 task = ctx->args[0];

	if (task != (__u64)bpf_get_current_task()) {
		filter_state.renamed[__sync_fetch_and_add(&filter_state.gen, 1) % FILTER_RENAMES] = task;
		return 0;
	}
#endif
	filter_bump();
	return 0;
}

/* The current thread was renamed by another one, lately. */
static __always_inline bool filter_renamed_lately(void)
{
	__u64 task = (__u64)bpf_get_current_task();
	bool found = false;

#pragma clang loop unroll(full)
	for (int i = 0; i < FILTER_RENAMES; i++)
		found |= filter_state.renamed[i] == task;
	return found;
}

static __always_inline bool traced_cached(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 id = bpf_get_current_pid_tgid();
	/* read before the answer is asked: a change after it moves it on */
	__u64 gen = *(volatile __u64 *)&filter_state.gen;
	typeof(filter_state.answers[0]) *a;
	bool ok;

	if (cpu >= FILTER_CACHE_CPUS)
		return traced_by_comm_and_cgroup();
	a = &filter_state.answers[cpu];
	if (a->id == id && a->gen == gen)
		return a->traced;
	ok = traced_by_comm_and_cgroup();
	if (!(filter_by_comm && filter_renamed_lately())) {
		/* A program that interrupts this one on this CPU (a raw
		 * tracepoint in an interrupt) sees no id until the rest is in;
		 * if it wrote the slot in between, for the same thread, after
		 * a change, the generation moved: the slot is dropped. */
		a->id = 0;
		asm volatile("" ::: "memory");
		a->gen = gen;
		a->traced = ok;
		asm volatile("" ::: "memory");
		a->id = id;
		asm volatile("" ::: "memory");
		if (*(volatile __u64 *)&filter_state.gen != gen)
			a->id = 0;
	}
	return ok;
}

/* Every filter the user gave; the first thing every program calls, at
 * both ends of an operation, so that an event filtered out costs no map
 * work and no clock read. */
static __always_inline bool traced(void)
{
	if (!traced_ids())
		return false;
	if (filter_by_cgroup)
		return FILTER_CACHED ? traced_cached() : traced_by_comm_and_cgroup();
	return !filter_by_comm || comm_matches();
}

#endif /* FILTER_BPF_H */
