// SPDX-License-Identifier: GPL-2.0-only
/* opensnoop: open(2), openat(2) and openat2(2), one event per open. The
 * path is read at the syscall's exit: at entry it may lie in a page not
 * yet faulted in (bpftrace and libbpf-tools then print an empty name);
 * by the exit the kernel has copied it, so the page is present. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "filter.bpf.h"	/* first: see filter_state */
#include "hist.bpf.h"
#include "kernel.bpf.h"
#include "syscall_tp.bpf.h"
#include "start.bpf.h"
#include "opensnoop.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u8 mode = OPENSNOOP_EVENTS;
const volatile __u8 count_by = BY_PROCESS;
const volatile bool per_process = false;	/* -L -P */
const volatile bool full_path = false;		/* -F */
/* -C by process or errno without -f: nothing is needed from the entry,
 * so there is no entry program; an open is counted at its exit. */
const volatile bool count_at_exit = false;

/* Filters beyond filter.bpf.h's, set before load. */
const volatile __u32 filter_uid = OPENSNOOP_NO_UID;
const volatile bool failed_only = false;
const volatile __s32 filter_errno = 0;		/* 0: any */
const volatile __u32 flags_all = 0;		/* every one of these flags set */
const volatile __s32 flags_accmode = -1;	/* O_RDONLY/O_WRONLY/O_RDWR, or -1 */
/* Wake user space only when this much waits in the ring (it also polls). */
const volatile __u64 wakeup_bytes = OPENSNOOP_RINGBUF_DEFAULT / 4;

struct opensnoop_totals totals SEC(".bss") = {};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, OPENSNOOP_RINGBUF_DEFAULT);
} events SEC(".maps");

KEYED_MAP(counts_a, struct opensnoop_key, struct opensnoop_count, OPENSNOOP_MAX_KEYS);
KEYED_MAP(counts_b, struct opensnoop_key, struct opensnoop_count, OPENSNOOP_MAX_KEYS);
KEYED_SLOT(counts, counts_a);
KEYED_MAP(file_counts_a, struct opensnoop_file_key, struct opensnoop_count, OPENSNOOP_MAX_KEYS);
KEYED_MAP(file_counts_b, struct opensnoop_file_key, struct opensnoop_count, OPENSNOOP_MAX_KEYS);
KEYED_SLOT(file_counts, file_counts_a);
KEYED_HIST_MAP(hists_a, struct opensnoop_key, OPENSNOOP_MAX_KEYS);
KEYED_HIST_MAP(hists_b, struct opensnoop_key, OPENSNOOP_MAX_KEYS);
KEYED_HIST_SLOT(hists, hists_a);

const struct opensnoop_count count_zero = {};

/* Where a file key is built: 256 bytes do not belong on the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct opensnoop_file_key);
} file_key SEC(".maps");

/* Where a path too long for a file key is read whole, to be hashed. */
struct long_path {
	__u64 w[OPENSNOOP_LONG_PATH_MAX / 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct long_path);
} long_path SEC(".maps");

#define O_ACCMODE_MASK 3

/* struct open_how of openat2(2): its ABI since 5.6. */
struct open_how_abi {
	__u64 flags;
	__u64 mode;
	__u64 resolve;
};

static __always_inline bool uid_traced(void)
{
	return filter_uid == OPENSNOOP_NO_UID || (__u32)bpf_get_current_uid_gid() == filter_uid;
}

static __always_inline int on_enter(__s64 dfd, __u64 filename, __u64 flags, __u64 open_mode,
				    enum opensnoop_call call)
{
	struct start *s;

	if (!traced() || !uid_traced())
		return 0;
	s = start_begin(filename ^ (__u64)dfd << 48 ^ flags << 16);
	if (!s)
		return 0;
	s->fd = (__s32)dfd;
	s->arg[ARG_FILENAME] = filename;
	s->arg[ARG_FLAGS] = flags;	/* openat2: the address of its struct open_how */
	s->arg[ARG_MODE_CALL] = (__u32)open_mode | (__u64)call << 32;
	/* -C times nothing: a non-zero mark is all its start needs. */
	s->ts = mode == OPENSNOOP_COUNT ? 1 : bpf_ktime_get_ns();
	return 0;
}

static __always_inline bool flags_traced(__u32 flags)
{
	if ((flags & flags_all) != flags_all)
		return false;
	return flags_accmode < 0 || (__s32)(flags & O_ACCMODE_MASK) == flags_accmode;
}

static __always_inline bool result_traced(long ret)
{
	if (failed_only && ret >= 0)
		return false;
	return !filter_errno || ret == -filter_errno;
}

/* The path, read now that the kernel has copied it in; marked truncated
 * past the capture limit and unreadable if even now it cannot be read. */
static __always_inline void read_path(struct opensnoop_event *e, const char *filename)
{
	long n = bpf_probe_read_user_str(e->path, sizeof(e->path), filename);
	char next = 0;

	e->path_state = PATH_OK;
	if (n < 0) {
		e->path[0] = '\0';
		e->path_state = PATH_UNREADABLE;
		__sync_fetch_and_add(&totals.unreadable, 1);
		return;
	}
	if (n == sizeof(e->path) &&
	    !bpf_probe_read_user(&next, 1, filename + sizeof(e->path) - 1) && next) {
		e->path_state = PATH_TRUNCATED;
		__sync_fetch_and_add(&totals.truncated, 1);
	}
}

/* -F: where a relative path starts: the dirfd's directory, or the cwd;
 * read at the exit (a chdir by another thread during the open shows). */
static __always_inline void fill_dir(struct opensnoop_full_event *f, __s32 dfd)
{
	f->dir.ino = 0;
	f->dir.depth = 0;
	if (f->e.path_state == PATH_UNREADABLE || f->e.path[0] == '/')
		return;
	if (dfd == OPENSNOOP_AT_FDCWD)
		cwd_name_fill(&f->dir);
	else
		file_name_fill(task_fd_file(dfd), &f->dir);
}

static __always_inline void emit(const struct start *s, __u64 now, long ret, __u32 flags,
				 __u32 mode_arg)
{
	struct opensnoop_event *e;
	__u64 id, wakeup;

	if (full_path)
		e = bpf_ringbuf_reserve(&events, sizeof(struct opensnoop_full_event), 0);
	else
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&totals.lost, 1);
		return;
	}
	id = current_ids();
	e->lat_ns = now - s->ts;
	e->ret = ret;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->flags = flags;
	e->mode = mode_arg;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	read_path(e, (const char *)s->arg[ARG_FILENAME]);
	if (full_path)
		fill_dir((struct opensnoop_full_event *)e, s->fd);
	wakeup = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
		 BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(e, wakeup);
}

struct path_hash {
	const struct long_path *p;
	__u32 n;		/* bytes to hash */
	__u64 h;
};

#ifdef BPF_NO_ATOMICS
/* Kernels without BPF atomics (before 5.12, the Makefile's
 * BPF_NO_ATOMICS) have no bpf_loop (5.17) and refuse a program that
 * names a callback (before 5.13); their verifier walks a loop that may
 * end early once more for each way out, too much for 512 words (E2BIG).
 * So every word is hashed, without a branch: the bytes past the path
 * masked to 0 (another hash than bpf_loop's; either only names keys). */
/* @v, which clang may no longer see through: it would make a branch of
 * the sign masks below. */
static __always_inline __s64 opaque(__s64 v)
{
	asm volatile("" : "+r"(v));
	return v;
}

static __always_inline __u64 path_hash(const struct long_path *p, __u32 n)
{
	__u64 h = 0xcbf29ce484222325ULL;

#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < OPENSNOOP_LONG_PATH_MAX / 8; i++) {
		__s64 left = (__s64)n - (__s64)i * 8, over;	/* path bytes from word i on */
		__u64 k, mask;

		left &= ~opaque(left >> 63);		/* max(left, 0) */
		over = left - 8;
		k = (__u64)(left - (over & ~opaque(over >> 63)));	/* min(left, 8) */
		mask = ((1ULL << (k * 4)) << (k * 4)) - 1;	/* k bytes; 8: all */
		h = (h ^ (p->w[i] & mask)) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 32;
	}
	return h | 1;
}
#else
/* One word of a path hash (bpf_loop: the verifier checks it once, where
 * an open-coded loop of 512 words is too much for it). */
static long path_hash_word(__u32 i, void *data)
{
	struct path_hash *ph = data;
	__u32 left;
	__u64 w;

	if (i >= OPENSNOOP_LONG_PATH_MAX / 8 || i * 8 >= ph->n)
		return 1;
	w = ph->p->w[i];
	left = ph->n - i * 8;
	if (left < 8)	/* the bytes after the NUL are an older path's */
		w &= (1ULL << (left * 8)) - 1;
	ph->h = (ph->h ^ w) * 0x9e3779b97f4a7c15ULL;
	ph->h ^= ph->h >> 32;
	return 0;
}

/* The first @n bytes of @p, hashed a word at a time; paid only by paths
 * too long for a file key. Never 0, which marks a path that fits. */
static __always_inline __u64 path_hash(const struct long_path *p, __u32 n)
{
	struct path_hash ph = { .p = p, .n = n, .h = 0xcbf29ce484222325ULL };

	bpf_loop(OPENSNOOP_LONG_PATH_MAX / 8, path_hash_word, &ph, 0);
	return ph.h | 1;
}
#endif

/* -C --by file: @fk for the path at @filename; a path longer than the
 * key's prefix is read whole (up to PATH_MAX) for its length and hash. */
static __always_inline void file_key_fill(struct opensnoop_file_key *fk, const char *filename)
{
	struct long_path *lp;
	__u32 zero = 0;
	long n;

	__builtin_memset(fk, 0, sizeof(*fk));
	/* Unreadable: the helper leaves the path zeroed, the key empty. */
	n = bpf_probe_read_user_str(fk->path, sizeof(fk->path), filename);
	if (n < (long)sizeof(fk->path) || !(lp = bpf_map_lookup_elem(&long_path, &zero)))
		return;
	n = bpf_probe_read_user_str(lp, sizeof(*lp), filename);
	if (n <= (long)sizeof(fk->path))	/* exactly 255 bytes: it fits */
		return;
	fk->len = (__u32)(n - 1);
	fk->hash = path_hash(lp, fk->len);
}

/* -C: count the open under its process, path or errno, in the interval
 * @p entered (@iv). */
static __always_inline void count_in(const struct interval_pass *p, struct hist_interval *iv,
				     const struct start *s, long ret)
{
	struct opensnoop_key key = {};
	struct opensnoop_file_key *fk;
	struct opensnoop_count *c;
	__u32 zero = 0;
	bool created;

	if (count_by == BY_FILE) {
		fk = bpf_map_lookup_elem(&file_key, &zero);
		if (!fk)
			return;
		file_key_fill(fk, (const char *)s->arg[ARG_FILENAME]);
		c = keyed_get(&file_counts, p, fk, &count_zero, &created);
	} else {
		/* Named now, by what it is called at this open. */
		if (count_by == BY_PROCESS)
			process_key_fill(&key.proc, current_ids() >> 32);
		else if (count_by == BY_COMM)
			process_key_fill(&key.proc, 0);
		else
			key.err = ret < 0 ? (__s32)-ret : 0;
		c = keyed_get(&counts, p, &key, &count_zero, &created);
	}
	if (!c) {
		iv->lost_keys++;
		return;
	}
	__sync_fetch_and_add(&c->opens, 1);
	if (ret < 0)
		__sync_fetch_and_add(&c->failed, 1);
}

static __always_inline void count_open(const struct start *s, long ret)
{
	struct interval_pass pass;
	struct hist_interval *iv = interval_enter(&pass);

	if (iv)
		count_in(&pass, iv, s, ret);
	interval_leave(&pass);
}

/* -L: the open's latency, in one histogram or its process's, in the
 * interval @p entered (@iv). */
static __always_inline void time_in(const struct interval_pass *p, struct hist_interval *iv,
				    __u64 lat_ns, long ret)
{
	struct opensnoop_key key = {};
	struct hist *h;
	bool created;

	if (!per_process) {
		h = &iv->hist;
		if (ret < 0)
			h->errors++;
		hist_add_ns(h, lat_ns, false);
		return;
	}
	process_key_fill(&key.proc, current_ids() >> 32);
	h = hist_keyed(&hists, p, &key, &created);
	if (!h)
		return;
	if (ret < 0)
		__sync_fetch_and_add(&h->errors, 1);
	hist_add_ns(h, lat_ns, true);
}

static __always_inline void time_open(__u64 lat_ns, long ret)
{
	struct interval_pass pass;
	struct hist_interval *iv = interval_enter(&pass);

	if (iv)
		time_in(&pass, iv, lat_ns, ret);
	interval_leave(&pass);
}

/* One open, as the application saw it, is over. */
static __always_inline void open_done(struct start *s, __u64 now, long ret)
{
	struct open_how_abi how = {};
	__u32 flags = (__u32)s->arg[ARG_FLAGS], mode_arg = (__u32)s->arg[ARG_MODE_CALL];

	if (s->arg[ARG_MODE_CALL] >> 32 == CALL_OPENAT2) {
		bpf_probe_read_user(&how, sizeof(how), (const void *)s->arg[ARG_FLAGS]);
		flags = (__u32)how.flags;
		mode_arg = (__u32)how.mode;
	}
	/* The tool's own opens of tracefs while it attaches are not shown. */
	if (flags_traced(flags) && result_traced(ret) && !is_self()) {
		if (mode == OPENSNOOP_COUNT) {
			count_open(s, ret);
		} else if (mode == OPENSNOOP_LATENCY) {
			time_open(now - s->ts, ret);
		} else {
			emit(s, now, ret, flags, mode_arg);
		}
	}
	start_release(s);
}

/* count_at_exit: the open ends here unless the kernel will restart it or
 * a signal turns it into EINTR (signal_deliver then counts it). */
static __always_inline int count_exit(long ret)
{
	if (!traced() || !uid_traced())
		return 0;
	if (start_exit_only(ret))
		return 0;
	if (result_traced(ret) && !is_self())
		count_open(NULL, ret);
	return 0;
}

static __always_inline int on_exit(long ret)
{
	struct start *s;
	__u64 now;

	if (count_at_exit)
		return count_exit(ret);
	/* The entry judged the comm, cgroup and uid filters: a thread has a
	 * start only if they let it through. The ids are cheap to check. */
	if (!traced_ids())
		return 0;
	now = mode == OPENSNOOP_COUNT ? 0 : bpf_ktime_get_ns();
	s = start_get();
	if (!s || !s->ts)
		return 0;
	/* Interrupted: not over until a restart or a signal decides. */
	if (start_restarting(s, ret, now))
		return 0;
	open_done(s, now, ret);
	return 0;
}

SEC("tp/signal/signal_deliver")
int signal_deliver(struct signal_deliver_ctx *ctx)
{
	struct start *s = start_interrupted(ctx);

	if (!s)
		return 0;
	open_done(s, s->exit_ts, -EINTR_ERR);
	return 0;
}

SEC("tp/syscalls/sys_enter_open")
int enter_open(struct syscall_enter_ctx *ctx)
{
	return on_enter(OPENSNOOP_AT_FDCWD, ctx->args[0], ctx->args[1], ctx->args[2], CALL_OPEN);
}

SEC("tp/syscalls/sys_enter_openat")
int enter_openat(struct syscall_enter_ctx *ctx)
{
	return on_enter((__s32)ctx->args[0], ctx->args[1], ctx->args[2], ctx->args[3], CALL_OPENAT);
}

SEC("tp/syscalls/sys_enter_openat2")
int enter_openat2(struct syscall_enter_ctx *ctx)
{
	return on_enter((__s32)ctx->args[0], ctx->args[1], ctx->args[2], 0, CALL_OPENAT2);
}

SEC("tp/syscalls/sys_exit_open")
int exit_open(struct syscall_exit_ctx *ctx)
{
	return on_exit(ctx->ret);
}

SEC("tp/syscalls/sys_exit_openat")
int exit_openat(struct syscall_exit_ctx *ctx)
{
	return on_exit(ctx->ret);
}

SEC("tp/syscalls/sys_exit_openat2")
int exit_openat2(struct syscall_exit_ctx *ctx)
{
	return on_exit(ctx->ret);
}

/* A thread exits: its start record goes (the LRU fallback keeps it otherwise). */
START_EXIT_PROGRAM
