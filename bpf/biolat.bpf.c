// SPDX-License-Identifier: GPL-2.0-only
/* biolat: block I/O latency, from a request's issue to the driver (or its
 * insertion into the OS queue, -Q) to its completion; or request sizes. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "filter.bpf.h"	/* first: see filter_state */
#include "hist.bpf.h"
#include "inflight.bpf.h"
#include "kread.bpf.h"
#include "raw_tp.bpf.h"
#include "biolat.h"

char LICENSE[] SEC("license") = "GPL";

const volatile struct block_layout blk = {};
const volatile __u8 by = 0;			/* enum biolat_by */
const volatile __u32 flags_mask = 0;		/* -F: the cmd_flags bits kept */
const volatile __u32 filter_dev = 0;		/* -d: this disk only */
const volatile bool queued = false;		/* -Q: from insertion */
const volatile bool by_submitter = false;	/* -p/-t/-n/-c: filter by submitter */
const volatile bool sizes = false;		/* --size: bytes, not latency */
/* CLOCK_MONOTONIC when biolat started: a request allocated after it was
 * not in flight when tracing began. */
const volatile __u64 started_ns = 0;

struct biolat_totals totals SEC(".bss") = {};

/* struct rq_entry (biolat.h) begins as struct inflight_head does. */
_Static_assert(__builtin_offsetof(struct rq_entry, born) == __builtin_offsetof(struct inflight_head, born) &&
	       __builtin_offsetof(struct rq_entry, ts) == sizeof(struct inflight_head),
	       "rq_entry must begin with an inflight_head");
_Static_assert(BIOLAT_RQ_ENDED == INFLIGHT_ENDED, "user space reads the ended mark");
INFLIGHT_MAP(inflight, struct rq_entry, BIOLAT_INFLIGHT_SLOTS);

KEYED_HIST_MAP(hists_a, struct biolat_key, BIOLAT_MAX_KEYS);
KEYED_HIST_MAP(hists_b, struct biolat_key, BIOLAT_MAX_KEYS);
KEYED_HIST_SLOT(hists, hists_a);

/* I/Os whose completion no program saw, per histogram key, over the whole
 * run (user space reports each interval's growth). Preallocated. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BIOLAT_MAX_KEYS);
	__type(key, struct biolat_key);
	__type(value, __u64);
} lost SEC(".maps");

/* The request's disk, as a kernel dev_t (its gendisk's first minor). */
static __always_inline __u32 rq_dev(void *rq)
{
	void *disk;

	if (blk.rq_disk != BIOLAT_NO_FIELD)
		disk = read_ptr(rq, blk.rq_disk);
	else
		disk = read_ptr(read_ptr(rq, blk.rq_q), blk.q_disk);
	if (!disk)
		return 0;
	if (blk.disk_first_minor == blk.disk_major + 4) {	/* one read (6.x) */
		struct { __s32 major, first_minor; } mm = {};

		bpf_probe_read_kernel(&mm, sizeof(mm), (char *)disk + blk.disk_major);
		return (__u32)mm.major << 20 | (__u32)mm.first_minor;
	}
	return read_u32(disk, blk.disk_major) << 20 | read_u32(disk, blk.disk_first_minor);
}

/* When the request was allocated (start_time_ns: set by kernels that
 * time it, for I/O statistics or a scheduler), or 0. */
static __always_inline __u64 rq_alloc(void *rq)
{
	__u64 ns = 0;

	if (blk.rq_start_time != BIOLAT_NO_FIELD)
		bpf_probe_read_kernel(&ns, sizeof(ns), (char *)rq + blk.rq_start_time);
	return ns;
}

/* The request is seen for the first time (inserted, or issued directly):
 * in the context of the process that submitted it, which the filters
 * judge here, once. */
static __always_inline void rq_first_seen(struct rq_entry *e, __u32 dev)
{
	e->dev = dev;
	e->skip = by_submitter && !traced();
}

/* The histogram @e's I/O is counted in. */
static __always_inline struct biolat_key key_of(const struct rq_entry *e)
{
	struct biolat_key key = {};

	if (by & BY_DISK)
		key.dev = e->dev;
	if (by & BY_FLAGS)
		key.flags = e->flags;
	return key;
}

/* @e's I/O completed unseen: lost, in its own histogram's count; where
 * no histogram can be named (the disk unread, the map full), in the
 * run's remainder. Each such I/O is found once, here. */
static __always_inline void lost_add(const struct rq_entry *e)
{
	struct biolat_key key = key_of(e);
	__u64 one = 1, *n;

	if ((by & BY_DISK) && !key.dev) {
		__sync_fetch_and_add(&totals.lost_unattributed, 1);
		return;
	}
	n = bpf_map_lookup_elem(&lost, &key);
	if (!n) {
		/* Made, or made meanwhile by another CPU (-EEXIST): add to it. */
		if (!bpf_map_update_elem(&lost, &key, &one, BPF_NOEXIST))
			return;
		n = bpf_map_lookup_elem(&lost, &key);
	}
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		__sync_fetch_and_add(&totals.lost_unattributed, 1);
}

/* The entry of the request in insert/issue's arguments, made if new
 * (NULL: not traced, another disk). An entry that was issued and not
 * requeued belongs to an earlier I/O of the same struct request, whose
 * completion no program saw: the kernel did not run rq_complete for it
 * (seen on 6.18, while ftrace recorded the event; see README). It is
 * counted, never silent, and the entry starts over for this I/O. */
static __always_inline struct rq_entry *rq_entry(struct raw_tp_ctx *ctx, void **rq, __u64 now)
{
	struct rq_entry *e;
	__u32 dev = 0;
	bool created;

	*rq = (void *)(blk.rq_arg ? ctx->args[1] : ctx->args[0]);
	/* -d: other disks cost this and nothing more. */
	if (filter_dev && (dev = rq_dev(*rq)) != filter_dev)
		return NULL;
	e = (struct rq_entry *)inflight_get(&inflight, BIOLAT_INFLIGHT_SLOTS, (__u64)*rq, now,
					    &inflight_zero, sizeof(*e), &totals.evicted, &created);
	if (!e)
		return NULL;
	/* Found in flight (an ended slot is taken afresh, created). */
	if (!created) {
		if (!e->issued || e->requeued)
			return e;	/* inserted, or requeued: the same I/O */
		if (!e->skip)
			lost_add(e);
		/* A new I/O of the same struct request, in its slot. */
		e->born = now;
		e->ts = 0;
		e->issued = 0;
		e->requeued = 0;
	}
	/* The disk: known already with -d, needed otherwise by -D only. */
	rq_first_seen(e, filter_dev ? dev : (by & BY_DISK) ? rq_dev(*rq) : 0);
	return e;
}

/* The driver gives the request back; it will be issued again. */
SEC("raw_tp/block_rq_requeue")
int rq_requeue(struct raw_tp_ctx *ctx)
{
	void *rq = (void *)(blk.rq_arg ? ctx->args[1] : ctx->args[0]);
	struct rq_entry *e;

	e = (struct rq_entry *)inflight_find(&inflight, BIOLAT_INFLIGHT_SLOTS, (__u64)rq);
	if (e)
		e->requeued = 1;
	return 0;
}

/* The request @next was merged into, or NULL: the kernel's attempt_merge()
 * has just made it q->last_merge (elv_merge_requests()) and appended
 * @next's bios to it, so the two end with the same bio. */
static __always_inline void *merged_into(void *next)
{
	void *req, *tail;

	if (blk.q_last_merge == BIOLAT_NO_FIELD || blk.rq_biotail == BIOLAT_NO_FIELD)
		return NULL;
	req = read_ptr(read_ptr(next, blk.rq_q), blk.q_last_merge);
	tail = read_ptr(next, blk.rq_biotail);
	if (!req || req == next || !tail || read_ptr(req, blk.rq_biotail) != tail)
		return NULL;
	return req;
}

/* A request inserted and not yet issued is merged into another one and
 * freed: it will never complete, and its struct request comes back for
 * a new I/O, which must not inherit its start or submitter. Its slot is
 * ended here. What it carried now completes with the request it joined:
 * that one is timed from the earlier of the two insertions (with -Q; the
 * kernel keeps the earlier start_time_ns too) and counted if either
 * part's submitter passes the filters. */
SEC("raw_tp/block_rq_merge")
int rq_merge(struct raw_tp_ctx *ctx)
{
	void *next = (void *)(blk.rq_arg ? ctx->args[1] : ctx->args[0]);
	struct rq_entry *n, *s, v;
	void *req;

	n = (struct rq_entry *)inflight_find(&inflight, BIOLAT_INFLIGHT_SLOTS, (__u64)next);
	if (!n || inflight_ended((struct inflight_head *)n))
		return 0;
	v = *n;
	if (!inflight_end((struct inflight_head *)n, (__u64)next))
		return 0;
	/* An earlier I/O of this struct request, issued, its completion
	 * unseen: this one was merged before its insertion was traced. */
	if (v.issued && !v.requeued) {
		if (!v.skip)
			lost_add(&v);
		return 0;
	}
	req = merged_into(next);
	if (!req)
		return 0;
	s = (struct rq_entry *)inflight_find(&inflight, BIOLAT_INFLIGHT_SLOTS, (__u64)req);
	if (!s || inflight_ended((struct inflight_head *)s) || (s->issued && !s->requeued))
		return 0;
	if (queued && v.ts && (!s->ts || v.ts < s->ts))
		s->ts = v.ts;
	if (!v.skip)
		s->skip = 0;
	return 0;
}

SEC("raw_tp/block_rq_insert")
int rq_insert(struct raw_tp_ctx *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	struct rq_entry *e;
	void *rq;

	e = rq_entry(ctx, &rq, now);
	/* -Q: time from the first insertion (a requeued request keeps it). */
	if (e && queued && !e->ts)
		e->ts = now;
	return 0;
}

SEC("raw_tp/block_rq_issue")
int rq_issue(struct raw_tp_ctx *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	struct rq_entry *e;
	void *rq;

	e = rq_entry(ctx, &rq, now);
	if (!e)
		return 0;
	e->issued = 1;
	e->requeued = 0;
	if (by & BY_FLAGS)
		e->flags = read_u32(rq, blk.rq_cmd_flags) & flags_mask;
	if (sizes)
		e->bytes = read_u32(rq, blk.rq_data_len);
	/* Without -Q, the last issue counts (a requeued request is issued again). */
	if (!queued || !e->ts)
		e->ts = now;
	return 0;
}

static __always_inline struct hist *hist_for(const struct interval_pass *p,
					     struct hist_interval *iv, const struct rq_entry *e)
{
	struct biolat_key key = key_of(e);
	bool created;

	if (!by)
		return &iv->hist;
	return hist_keyed(&hists, p, &key, &created);
}

static __always_inline void count_io(const struct rq_entry *v, __u64 lat_ns, long error)
{
	struct interval_pass pass;
	struct hist_interval *iv = interval_enter(&pass);
	struct hist *h = iv ? hist_for(&pass, iv, v) : NULL;

	if (h) {
		if (sizes)
			hist_add(h, v->bytes, by != 0);
		else
			hist_add_ns(h, lat_ns, by != 0);
		if (error)
			__sync_fetch_and_add(&h->errors, 1);
	}
	interval_leave(&pass);
}

/* A request completed that was never issued (or not while biolat ran). The
 * block layer completes an fsync's empty cache-flush request without
 * issuing it (it issues a flush of its own for it, counted apart): if the
 * request was allocated after biolat started, it is counted, timed from
 * its allocation. Otherwise it was in flight when tracing began. */
static __always_inline void unissued_done(void *rq, __u64 now, long error)
{
	struct rq_entry v = {};
	__u64 born;

	if (by_submitter)
		return;		/* its submitter is not known */
	v.dev = filter_dev ? filter_dev : (by & BY_DISK) ? rq_dev(rq) : 0;
	born = rq_alloc(rq);
	if (born > started_ns && born <= now) {
		if (by & BY_FLAGS)
			v.flags = read_u32(rq, blk.rq_cmd_flags) & flags_mask;
		count_io(&v, now - born, error);
		return;
	}
	INTERVAL_COUNT(unmatched);
}

/* Counted once per request, at the completion that ends it (a driver may
 * complete a request in parts; the flush machinery ends a written request
 * a second time, after its data completed: that one is not counted);
 * failed requests are timed too, and counted in errors. */
SEC("raw_tp/block_rq_complete")
int rq_complete(struct raw_tp_ctx *ctx)
{
	void *rq = (void *)ctx->args[0];
	__u32 nr_bytes = (__u32)ctx->args[2];
	__u64 now = bpf_ktime_get_ns();
	struct rq_entry *e, v;

	/* -d: other disks' completions cost this and nothing more. */
	if (filter_dev && rq_dev(rq) != filter_dev)
		return 0;
	/* Not the last part of the request: its completion is still to come. */
	if (nr_bytes < read_u32(rq, blk.rq_data_len))
		return 0;
	e = (struct rq_entry *)inflight_find(&inflight, BIOLAT_INFLIGHT_SLOTS, (__u64)rq);
	/* An ended slot: this is its I/O's second completion, or, if the
	 * struct request was allocated after the slot was taken (the same
	 * clock), an I/O of it that was never inserted or issued while
	 * traced: an fsync's empty flush write, which the flush machinery
	 * completes without issuing it. Only here is the allocation time
	 * read; a kernel that does not time requests gives 0: a second
	 * completion. */
	if (e && inflight_ended((struct inflight_head *)e)) {
		if (rq_alloc(rq) <= e->born)
			return 0;	/* its second completion */
		e = NULL;
	}
	if (e) {
		v = *e;
		if (!inflight_end((struct inflight_head *)e, (__u64)rq))
			e = NULL;	/* evicted meanwhile: v may be another's */
	}
	if (!e || !v.ts) {
		unissued_done(rq, now, (long)ctx->args[1]);
		return 0;
	}
	if (!v.skip)
		count_io(&v, now - v.ts, (long)ctx->args[1]);
	return 0;
}
