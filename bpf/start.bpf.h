/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where a thread's operation start waits for its end (a syscall's entry
 * for its exit): task storage, freed with the task, or on kernels without
 * it (5.11, or no BTF) a bounded LRU hash by thread id. An operation that
 * the kernel restarts after a signal keeps its first start (see
 * signal_tp.bpf.h). Shared by the tools and by bench/, which measures
 * exactly this store.
 */
#ifndef START_BPF_H
#define START_BPF_H

#include "signal_tp.bpf.h"

#define START_FALLBACK_THREADS 65536

const volatile bool use_task_storage = true;

struct start {
	__u64 ts;		/* entry time; 0: no operation in progress */
	__u64 exit_ts;		/* when it returned a restart code */
	__s32 fd;
	__s32 restart;		/* that code, until a restart or a signal decides */
	__u64 arg[3];		/* what else the tool keeps from the entry */
	__u64 op;		/* the operation's arguments, as start_begin got them */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct start);
} start_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, START_FALLBACK_THREADS);
	__type(key, __u32);
	__type(value, struct start);
} start_tid SEC(".maps");

static __always_inline __u32 current_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

/* The current thread's start record, if it has one. */
static __always_inline struct start *start_get(void)
{
	__u32 tid;

	if (use_task_storage)
		return bpf_task_storage_get(&start_task, bpf_get_current_task_btf(), 0, 0);
	tid = current_tid();
	return bpf_map_lookup_elem(&start_tid, &tid);
}

/* The current thread's start record, made if it has none. */
static __always_inline struct start *start_get_or_create(void)
{
	struct start *s;
	__u32 tid;

	if (use_task_storage)
		return bpf_task_storage_get(&start_task, bpf_get_current_task_btf(), 0,
					    BPF_LOCAL_STORAGE_GET_F_CREATE);
	tid = current_tid();
	s = bpf_map_lookup_elem(&start_tid, &tid);
	if (!s) {
		struct start zero = {};

		bpf_map_update_elem(&start_tid, &tid, &zero, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&start_tid, &tid);
	}
	return s;
}

/* Operations whose end no program saw: the thread's next start found the
 * last one still open. The kernel skips a tracepoint's program when this
 * CPU's bpf_prog_active is held, which a map syscall of user space does
 * while it runs; on a preemptible kernel (PREEMPT_RT) the traced thread
 * can run, and end a read, on that CPU meanwhile. 6.1 counts such a skip
 * nowhere. Rare: an atomic add where it happens, nothing otherwise. */
__u64 start_missed_ends SEC(".bss") = 0;

/* An operation starts: the record for the tool to fill in, its start time
 * (ts) last, or NULL when this entry is the kernel restarting an
 * interrupted operation (to the application the same one, timed from its
 * first entry). @op identifies the operation by its arguments, which a
 * restart repeats: an entry with others after a restart code is a new
 * operation (a signal handler that left with siglongjmp abandoned the
 * old one, which the kernel never restarts). The clock is read after
 * the lookup: measured ~30 ns cheaper per operation than before it (BPF
 * run-time stats, 6.18). */
static __always_inline struct start *start_begin(__u64 op)
{
	struct start *s = start_get_or_create();

	if (!s)
		return NULL;
	if (s->restart) {
		s->restart = 0;
		if (s->op == op)
			return NULL;
	} else if (s->ts) {
		__sync_fetch_and_add(&start_missed_ends, 1);
	}
	s->op = op;
	return s;
}

/* The operation is over: the record waits for the thread's next one (a
 * fallback entry stays until the thread exits, start_thread_exit). */
static __always_inline void start_release(struct start *s)
{
	s->ts = 0;
}

/* At the exit: a restart code means the operation is not over. Keep its
 * start; a restart continues it, a signal may end it (start_interrupted). */
static __always_inline bool start_restarting(struct start *s, long ret, __u64 now)
{
	if (!syscall_restarting(ret))
		return false;
	s->restart = (__s32)ret;
	s->exit_ts = now;
	return true;
}

/*
 * Operations seen at their exit only (a tool that needs nothing from the
 * entry has no entry program). A restart code still does not end one: a
 * record remembers it for start_interrupted(), and the restarted call's
 * exit clears it. start_restarts_pending counts the threads with such a
 * record: 0 nearly always, so a common exit reads it and nothing else.
 */
#define START_OP_EXIT_ONLY (~0ULL)	/* start.op of such a record */
__u64 start_restarts_pending SEC(".bss") = 0;

/* At the exit of an exit-only operation: true if it is not over (the
 * kernel restarts it, or a signal ends it with EINTR). */
static __always_inline bool start_exit_only(long ret)
{
	struct start *s;

	if (start_restarts_pending && (s = start_get()) && s->restart) {
		/* The restarted call is ending: its mark goes. */
		s->restart = 0;
		s->ts = 0;
		__sync_fetch_and_sub(&start_restarts_pending, 1);
	}
	if (!syscall_restarting(ret))
		return false;
	s = start_get_or_create();
	if (s && !s->restart) {
		s->ts = 1;
		s->exit_ts = 0;
		s->arg[0] = s->arg[1] = s->arg[2] = 0;
		s->op = START_OP_EXIT_ONLY;
		s->restart = (__s32)ret;
		__sync_fetch_and_add(&start_restarts_pending, 1);
	}
	return true;
}

/* At a signal's delivery: the operation of this thread that the signal
 * ends with EINTR (it ended at s->exit_ts), or NULL. */
static __always_inline struct start *start_interrupted(const struct signal_deliver_ctx *ctx)
{
	struct start *s = start_get();

	if (!s || !s->restart || !s->ts || !signal_interrupts(ctx, s->restart))
		return NULL;
	s->restart = 0;
	if (s->op == START_OP_EXIT_ONLY)
		__sync_fetch_and_sub(&start_restarts_pending, 1);
	return s;
}

/* A thread exits: its record goes. Task storage goes with the task by
 * itself; a fallback record would stay until the LRU evicted it, and the
 * record of a thread killed in its operation (SIGKILL: no signal_deliver,
 * the restart code at its exit was the last the programs saw) is still
 * open: such records crowd live starts out of the LRU (without this,
 * all 200 of tests/killed_threads.bats's killed readers kept theirs). The
 * mark of an exit-only operation goes from start_restarts_pending in
 * either store, once. */
static __always_inline void start_thread_exit(void)
{
	struct start *s = start_get();
	__u32 tid;

	if (s && s->restart && s->op == START_OP_EXIT_ONLY) {
		s->restart = 0;
		__sync_fetch_and_sub(&start_restarts_pending, 1);
	}
	if (use_task_storage)
		return;
	tid = current_tid();
	bpf_map_delete_elem(&start_tid, &tid);
}

/* The program of common/probe.h's START_EXIT_PROBE, for a tool's object
 * (the bench objects that include this header have none). */
#define START_EXIT_PROGRAM						\
SEC("tp/sched/sched_process_exit")					\
int start_exit(void *ctx)						\
{									\
	start_thread_exit();						\
	return 0;							\
}

#endif /* START_BPF_H */
