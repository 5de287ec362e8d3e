// SPDX-License-Identifier: GPL-2.0-only
/* readlat: latency of read-family syscalls, from entry to exit. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "hist.bpf.h"
#include "filter.bpf.h"
#include "syscall_tp.bpf.h"
#include "readlat.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u8 mode = READLAT_HIST;
const volatile __u8 unit = UNIT_USECS;
const volatile bool errors_in_hist = false;
const volatile bool use_task_storage = true;
const volatile __u64 slower_ns = 0;

struct hist hist SEC(".bss");
/* --slower keeps counts only: a histogram per read would be wasted work. */
struct readlat_totals totals SEC(".bss");

struct start {
	__u64 ts;
	__s64 fd;
};

/* Where a thread's entry time waits for its exit: task storage, freed
 * with the task, or (kernels without it) a bounded LRU hash by thread id. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct start);
} start_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct start);
} start_tid SEC(".maps");

KEYED_HIST_MAP(hists_a, struct readlat_key, READLAT_MAX_KEYS);
KEYED_HIST_MAP(hists_b, struct readlat_key, READLAT_MAX_KEYS);
KEYED_HIST_SLOT(hists, hists_a);

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, READLAT_RINGBUF_BYTES);
} events SEC(".maps");

static __always_inline void start_record(__u64 fd)
{
	if (use_task_storage) {
		struct start *s = bpf_task_storage_get(&start_task, bpf_get_current_task_btf(),
						       0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (s) {
			s->fd = (__s64)fd;
			s->ts = bpf_ktime_get_ns();
		}
	} else {
		__u32 tid = (__u32)bpf_get_current_pid_tgid();
		struct start s = { .fd = (__s64)fd, .ts = bpf_ktime_get_ns() };

		bpf_map_update_elem(&start_tid, &tid, &s, BPF_ANY);
	}
}

static __always_inline bool start_take(struct start *out)
{
	struct start *s;

	if (use_task_storage) {
		s = bpf_task_storage_get(&start_task, bpf_get_current_task_btf(), 0, 0);
		if (!s || !s->ts)
			return false;
		*out = *s;
		s->ts = 0;
		return true;
	}
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	s = bpf_map_lookup_elem(&start_tid, &tid);
	if (!s)
		return false;
	*out = *s;
	bpf_map_delete_elem(&start_tid, &tid);
	return true;
}

static __always_inline __u64 to_unit(__u64 ns)
{
	if (unit == UNIT_USECS)
		return ns / 1000;
	if (unit == UNIT_MSECS)
		return ns / 1000000;
	return ns;
}

static __always_inline void emit(__u64 lat_ns, long ret, __s64 fd)
{
	struct readlat_event *e;
	__u64 id;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&totals.lost, 1);
		return;
	}
	id = bpf_get_current_pid_tgid();
	e->lat_ns = lat_ns;
	e->ret = ret;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->fd = (__s32)fd;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
}

static __always_inline struct hist *hist_for_thread(__s64 fd)
{
	struct readlat_key key = {};

	if (mode == READLAT_HIST)
		return &hist;
	key.pid = bpf_get_current_pid_tgid() >> 32;
	key.fd = mode == READLAT_PER_FD ? (__s32)fd : -1;
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	return hist_keyed(&hists, &key);
}

/* Failed reads are always counted in @errors, and timed only with --errors. */
static __always_inline bool counted(long ret, __u64 *errors)
{
	if (ret >= 0)
		return true;
	__sync_fetch_and_add(errors, 1);
	return errors_in_hist;
}

static __always_inline int on_slower(__u64 delta, long ret, __s64 fd)
{
	if (!counted(ret, &totals.errors))
		return 0;
	__sync_fetch_and_add(&totals.reads, 1);
	if (delta >= slower_ns) {
		__sync_fetch_and_add(&totals.slower, 1);
		emit(delta, ret, fd);
	}
	return 0;
}

static __always_inline int on_enter(__u64 fd)
{
	if (!traced())
		return 0;
	start_record(fd);
	return 0;
}

static __always_inline int on_exit(long ret)
{
	struct start s;
	struct hist *h;
	__u64 now, delta;

	/* Only the id filters are cheaper than the storage lookup below;
	 * name and cgroup filters already decided at entry. The clock is read
	 * before that lookup so that it is not part of the latency. */
	if (!traced_ids())
		return 0;
	now = bpf_ktime_get_ns();
	if (!start_take(&s))
		return 0;
	delta = now - s.ts;
	if (mode == READLAT_SLOWER)
		return on_slower(delta, ret, s.fd);
	h = hist_for_thread(s.fd);
	if (!h || !counted(ret, &h->errors))
		return 0;
	hist_add(h, to_unit(delta));
	return 0;
}

#define READ_SYSCALL(name)						\
SEC("tp/syscalls/sys_enter_" #name)					\
int enter_##name(struct syscall_enter_ctx *ctx)				\
{									\
	return on_enter(ctx->args[0]);					\
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
