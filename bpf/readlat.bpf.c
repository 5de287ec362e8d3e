// SPDX-License-Identifier: GPL-2.0-only
/* readlat: latency of read-family syscalls, from entry to exit, as the
 * application experiences them (a read restarted after a signal is one). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "filter.bpf.h"	/* first: see filter_state */
#include "hist.bpf.h"
#include "kernel.bpf.h"
#include "syscall_tp.bpf.h"
#include "start.bpf.h"
#include "readlat.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u8 mode = READLAT_HIST;
const volatile bool errors_in_hist = false;
const volatile __u64 slower_ns = 0;
/* -B: split reads by whether they submitted or waited for block I/O. */
const volatile bool by_cache = false;

/* --slower keeps counts only: a histogram per read would be wasted work. */
struct readlat_totals totals SEC(".bss") = {};

KEYED_HIST_MAP(hists_a, struct readlat_key, READLAT_MAX_KEYS);
KEYED_HIST_MAP(hists_b, struct readlat_key, READLAT_MAX_KEYS);
KEYED_HIST_SLOT(hists, hists_a);

/* -F: files whose name was already sent to user space. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, READLAT_MAX_FILES);
	__type(key, struct readlat_key);
	__type(value, __u8);
} files_sent SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, READLAT_RINGBUF_BYTES);
} events SEC(".maps");

static __always_inline void emit(__u64 lat_ns, long ret, __s32 fd)
{
	struct readlat_event *e;
	__u64 id;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&totals.lost, 1);
		return;
	}
	id = current_ids();
	e->kind = READLAT_EV_READ;
	e->lat_ns = lat_ns;
	e->ret = ret;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->fd = fd;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
}

/* -F: send the file's name once (user space keeps it for the run). */
static __always_inline void send_file_name(const struct readlat_key *key, void *file)
{
	struct readlat_file_event *e;
	__u8 one = 1;

	if (bpf_map_update_elem(&files_sent, key, &one, BPF_NOEXIST))
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		bpf_map_delete_elem(&files_sent, key);	/* try again next time */
		return;
	}
	e->kind = READLAT_EV_FILE;
	file_name_fill(file, &e->name);
	bpf_ringbuf_submit(e, 0);
}

static __always_inline struct hist *keyed_hist(const struct interval_pass *p, __s32 fd, __u32 disk)
{
	struct readlat_key key = {};
	struct hist *h;
	void *file = NULL;
	bool created;

	key.disk = disk;
	key.fd = -1;
	if (mode == READLAT_HIST) {	/* -B alone: one histogram per source */
		h = hist_keyed(&hists, p, &key, &created);
		return h;
	}
	/* Named by what it is called now: after exec(), a key of its own. */
	process_key_fill(&key.proc, current_ids() >> 32);
	if (mode == READLAT_PER_FD) {
		key.fd = fd;
		file = task_fd_file(fd);
		file_identity(file, &key.dev, &key.ino);
	}
	h = hist_keyed(&hists, p, &key, &created);
	if (!created)
		return h;
	if (file) {
		__builtin_memset(&key.proc, 0, sizeof(key.proc));
		key.fd = 0;
		send_file_name(&key, file);
	}
	return h;
}

/* Failed reads are always counted in @errors, and timed only with --errors. */
static __always_inline bool counted(long ret, __u64 *errors)
{
	if (ret >= 0)
		return true;
	__sync_fetch_and_add(errors, 1);
	return errors_in_hist;
}

static __always_inline void on_slower(__u64 delta, long ret, __s32 fd)
{
	if (!counted(ret, &totals.errors))
		return;
	__sync_fetch_and_add(&totals.reads, 1);
	if (delta >= slower_ns) {
		__sync_fetch_and_add(&totals.slower, 1);
		emit(delta, ret, fd);
	}
}

/* One read, as the application saw it, is over. */
static __always_inline void read_done(struct start *s, __u64 now, long ret)
{
	__u64 delta = now - s->ts;
	__s32 fd = s->fd;
	__u32 disk = by_cache && s->arg[0];
	struct interval_pass pass;
	struct hist_interval *iv;
	struct hist *h;

	start_release(s);
	if (mode == READLAT_SLOWER) {
		on_slower(delta, ret, fd);
		return;
	}
	iv = interval_enter(&pass);
	if (!iv)
		return;
	if (mode == READLAT_HIST && !by_cache)
		h = &iv->hist;
	else
		h = keyed_hist(&pass, fd, disk);
	if (h && counted(ret, &h->errors))
		hist_add_ns(h, delta, mode != READLAT_HIST || by_cache);
	interval_leave(&pass);
}

static __always_inline int on_enter(__u64 fd, __u64 buf)
{
	struct start *s;

	if (!traced())
		return 0;
	s = start_begin(buf ^ fd << 48);
	if (s) {
		s->fd = (__s32)fd;
		if (by_cache)
			s->arg[0] = 0;
		s->ts = bpf_ktime_get_ns();
	}
	return 0;
}

static __always_inline int on_exit(long ret)
{
	struct start *s;
	__u64 now;

	/* Every filter again, so that a filtered-out read costs no clock
	 * and no lookup; the clock is read before the lookup so that the
	 * lookup is not part of the latency. */
	if (!traced())
		return 0;
	now = bpf_ktime_get_ns();
	s = start_get();
	if (!s || !s->ts) {
		INTERVAL_COUNT(unmatched);
		return 0;
	}
	/* Interrupted: not over until a restart or a signal decides. */
	if (start_restarting(s, ret, now))
		return 0;
	read_done(s, now, ret);
	return 0;
}

/* A signal is delivered after a read returned a restart code: if the
 * application gets EINTR, the read ended at that return. */
SEC("tp/signal/signal_deliver")
int signal_deliver(struct signal_deliver_ctx *ctx)
{
	struct start *s = start_interrupted(ctx);

	if (s)
		read_done(s, s->exit_ts, -EINTR_ERR);
	return 0;
}

/* -B: the current thread, if it is in a read, needed the disk for it. */
static __always_inline void read_needs_disk(void)
{
	struct start *s = start_get();

	if (s && s->ts)
		s->arg[0] = 1;
}

/* A bio is submitted, in the context of the thread that submits it:
 * synchronous readahead or direct I/O of the read in progress. */
SEC("raw_tp/block_bio_queue")
int bio_queue(void *ctx)
{
	read_needs_disk();
	return 0;
}

/* The current thread is switched out (the tracepoint runs before the
 * switch): in a read and waiting for I/O (io_schedule() sets
 * in_iowait), such as a page another thread's readahead is reading. */
SEC("raw_tp/sched_switch")
int sched_switch(void *ctx)
{
	__u8 byte = 0;

	if (!layout.valid || layout.task_in_iowait == KERNEL_LAYOUT_NONE)
		return 0;
	bpf_probe_read_kernel(&byte, 1, (char *)bpf_get_current_task() + layout.task_in_iowait / 8);
	if (byte & (1 << (layout.task_in_iowait % 8)))
		read_needs_disk();
	return 0;
}

#define READ_SYSCALL(name)						\
SEC("tp/syscalls/sys_enter_" #name)					\
int enter_##name(struct syscall_enter_ctx *ctx)				\
{									\
	return on_enter(ctx->args[0], ctx->args[1]);			\
}									\
SEC("tp/syscalls/sys_exit_" #name)					\
int exit_##name(struct syscall_exit_ctx *ctx)				\
{									\
	return on_exit(ctx->ret);					\
}

READ_SYSCALL(read)
READ_SYSCALL(pread64)
READ_SYSCALL(readv)
READ_SYSCALL(preadv)
READ_SYSCALL(preadv2)

/* A thread exits: its start record goes (the LRU fallback keeps it otherwise). */
START_EXIT_PROGRAM
