// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcprcv: TCP receive per process. Segments are processed in softirq,
 * where the current task is whoever was interrupted, so nothing there is
 * keyed by the current process: everything is kept per socket (struct
 * sock address), and a socket's owner is learned where its process is
 * current (a read, connect(2), accept(2)). User space (tools/tcprcv.c)
 * adds the sockets up per owner at each report.
 *
 * Every update of a socket's counters happens under the kernel's own
 * socket lock (the receive path, the read path, state changes,
 * retransmits and the destroy all hold it), so they are plain adds. The
 * one exception is accept(2), which learns the owner without the lock: it
 * writes only the owner word (struct tcprcv_ident), in one store, and
 * nothing in softirq writes an accepted socket's word. (Softirq writes
 * the word of a connecting socket, whose identity it takes when the
 * handshake ends, sock_ident(); a connecting socket is never accepted.)
 *
 * Bytes received are rcv_nxt's advance, not a sum of segment lengths: a
 * segment seen by tcp_probe may be a duplicate, out of order, or dropped
 * after the tracepoint (rmem, window, PAWS), and only rcv_nxt says what
 * TCP took in. It is read wherever the socket is seen (the next segment,
 * a read, a state change, the destroy), in every state: data that comes
 * after the local side half-closed (FIN_WAIT1/2, where tcp_probe does not
 * fire) is counted at the reads and the close.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "filter.bpf.h"	/* first: see filter_state */
#include "hist.bpf.h"
#include "kernel.bpf.h"
#include "lookup.bpf.h"
#include "names.bpf.h"
#include "raw_tp.bpf.h"
#include "syscall_tp.bpf.h"
#include "tcprcv.h"

char LICENSE[] SEC("license") = "GPL";

const volatile struct tcp_layout tcp = {};
const volatile bool table = false;		/* the default report: counts per socket */
const volatile bool latency = false;		/* -L: arrival times, read-side samples */
const volatile bool per_process = false;	/* -P: a histogram per reader */
const volatile __u16 filter_family = 0;		/* -4 / -6 */
const volatile __u16 filter_lport = 0;
const volatile __u16 filter_rport = 0;

#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define TCP_ESTABLISHED 1
#define TCP_SYN_SENT 2
#define TCP_SYN_RECV 3
#define TCP_FIN_WAIT1 4
#define TCP_FIN_WAIT2 5
#define TCPHDR_FIN 0x01
#define TCPHDR_SYN 0x02

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TCPRCV_MAX_SOCKS);
	__type(key, __u64);
	__type(value, struct tcprcv_sock);
} socks SEC(".maps");

/* -L: arrivals waiting to be read, per socket (one entry otherwise). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TCPRCV_MAX_RINGS);
	__type(key, __u64);
	__type(value, struct tcprcv_ring);
} rings SEC(".maps");

const struct tcprcv_ring ring_zero = {};
const struct tcprcv_final final_zero = {};

/* Sockets closed in an interval, and reads from shared sockets. */
KEYED_MAP(closed_a, struct tcprcv_final_key, struct tcprcv_final, TCPRCV_MAX_KEYS);
KEYED_MAP(closed_b, struct tcprcv_final_key, struct tcprcv_final, TCPRCV_MAX_KEYS);
KEYED_SLOT(closed, closed_a);

/* -L -P: a receive-queue latency histogram per reading process. */
KEYED_HIST_MAP(hists_a, __u32, TCPRCV_MAX_READERS);
KEYED_HIST_MAP(hists_b, __u32, TCPRCV_MAX_READERS);
KEYED_HIST_SLOT(hists, hists_a);

/* --rcv-time: when this CPU entered tcp_v4_rcv/tcp_v6_rcv (softirq: the
 * calls do not nest on a CPU). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rcv_start SEC(".maps");

/* TCP sequence numbers wrap: a is after b. */
static __always_inline bool after(__u32 a, __u32 b)
{
	return (__s32)(a - b) > 0;
}

static __always_inline __u16 read_u16(const void *base, __u32 off)
{
	__u16 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (const char *)base + off);
	return v;
}

/* The connection's addresses and ports, and whether -4/-6/--lport/--rport
 * exclude it. */
static __always_inline void sock_ident(void *sk, struct tcprcv_ident *id)
{
	__u32 ports = read_u32(sk, tcp.sk_portpair);

	id->family = read_u16(sk, tcp.sk_family);
	id->rport = bpf_ntohs((__u16)ports);	/* skc_dport, network order */
	id->lport = (__u16)(ports >> 16);	/* skc_num, host order */
	if (id->family == AF_INET6) {
		bpf_probe_read_kernel(id->laddr, 16, (char *)sk + tcp.sk_v6_rcv_saddr);
		bpf_probe_read_kernel(id->raddr, 16, (char *)sk + tcp.sk_v6_daddr);
	} else {
		bpf_probe_read_kernel(id->laddr, 4, (char *)sk + tcp.sk_rcv_saddr);
		bpf_probe_read_kernel(id->raddr, 4, (char *)sk + tcp.sk_daddr);
	}
	id->flags &= ~SOCK_SKIP_TUPLE;
	if ((filter_family && id->family != filter_family) ||
	    (filter_lport && id->lport != filter_lport) ||
	    (filter_rport && id->rport != filter_rport))
		id->flags |= SOCK_SKIP_TUPLE;
}

/* rcv_nxt less the FIN, if one came (tcp_fin() sets SOCK_DONE with the
 * FIN's sequence number in rcv_nxt): where the data TCP took in ends.
 * @established: no FIN yet (it would have moved the state), no need to
 * look. */
static __always_inline __u32 data_end(void *sk, bool established)
{
	__u32 flags = established ? 0 : read_u32(sk, tcp.sk_flags);	/* the low word */

	return read_u32(sk, tcp.tp_rcv_nxt) - ((flags >> (tcp.sock_done & 31)) & 1);
}

enum sock_start {
	START_SEEN,		/* first sight: from the socket's present state */
	START_CONNECTING,	/* SYN_SENT: no sequence numbers yet */
	START_ACCEPTED,		/* an accepted connection, made: every data
				 * segment it had is new (the one making it) */
};

/* The entry of @sk, made on first sight with the socket's present
 * positions and counts as the starting point. Filled before it is
 * inserted: another CPU never sees a half-made entry. */
static __always_inline struct tcprcv_sock *sock_make(void *sk, enum sock_start start)
{
	bool connecting = start == START_CONNECTING;
	__u64 key = (__u64)sk;
	struct tcprcv_sock init = {};
	struct tcprcv_sock *s = bpf_map_lookup_elem(&socks, &key);

	if (s)
		return s;
	init.gen = bpf_ktime_get_ns();
	init.connecting = connecting;
	if (!connecting) {
		init.copied = read_u32(sk, tcp.tp_copied_seq);
		init.rcv_seen = data_end(sk, false);
	}
	if (start != START_ACCEPTED)
		init.segs_seen = read_u32(sk, tcp.tp_data_segs_in);
	init.drops_seen = read_u32(sk, tcp.sk_drops);
	init.retrans_seen = read_u32(sk, tcp.tp_total_retrans);
	sock_ident(sk, &init.id);
	bpf_map_update_elem(&socks, &key, &init, BPF_NOEXIST);
	return bpf_map_lookup_elem(&socks, &key);	/* ours, or the one another CPU made */
}

static __always_inline struct tcprcv_sock *sock_get(void *sk)
{
	return sock_make(sk, START_SEEN);
}

/* The socket's read side is used by the current process: its owner from
 * now on. A second process makes it shared: its reads are then counted
 * per reader. Process context only; the owner word is written in one
 * 8-byte store (see the top of the file). */
static __always_inline void sock_owned(struct tcprcv_sock *s, __u32 pid)
{
	struct tcprcv_ident id;
	__u64 *word = (__u64 *)&s->id;

	*(__u64 *)&id = *(volatile __u64 *)word;
	if (pid == id.pid) {
		/* Named at its latest event: after exec(), by the new name. */
		if (!(id.flags & SOCK_SKIP_OWNER))
			name_process(pid);
		return;
	}
	if (id.pid)
		id.flags |= SOCK_SHARED;
	id.pid = pid;
	/* A process outside the user's PID namespace has no number there. */
	if (!pid || !traced()) {
		id.flags |= SOCK_SKIP_OWNER;
	} else {
		id.flags &= ~SOCK_SKIP_OWNER;
		name_process(pid);
	}
	*(volatile __u64 *)word = *(__u64 *)&id;
}

/* Drops TCP charged to the socket since it was last seen. */
static __always_inline void sock_drops(void *sk, struct tcprcv_sock *s)
{
	__u32 d = read_u32(sk, tcp.sk_drops);

	if (!(s->id.flags & SOCK_SKIP))
		s->c.drops += d - s->drops_seen;
	s->drops_seen = d;
}

/* What TCP took in since the socket was last seen: data (rcv_nxt's
 * advance) and data segments. Counted unless the socket is skipped; the
 * starting points move on either way. */
static __always_inline void sock_rx_in(void *sk, struct tcprcv_sock *s, bool established)
{
	__u32 end, segs = read_u32(sk, tcp.tp_data_segs_in);
	bool counted = !(s->id.flags & SOCK_SKIP);

	if (counted)
		s->c.segs += segs - s->segs_seen;
	s->segs_seen = segs;
	if (s->connecting)
		return;
	end = data_end(sk, established);
	if (!after(end, s->rcv_seen))
		return;
	if (counted)
		s->c.bytes += end - s->rcv_seen;
	s->rcv_seen = end;
}

/* ... and the drops: everywhere but at reads (a read is no drop's
 * occasion; the next segment, state change or close counts them). */
static __always_inline void sock_rx(void *sk, struct tcprcv_sock *s)
{
	sock_rx_in(sk, s, false);
	sock_drops(sk, s);
}

/* Segments retransmitted since it was last seen: the kernel's own count,
 * which is what TcpRetransSegs adds up (a GSO packet is its segments; an
 * attempt that failed, traced with an error since 6.17, is none). */
static __always_inline void sock_retrans(void *sk, struct tcprcv_sock *s)
{
	__u32 r = read_u32(sk, tcp.tp_total_retrans);

	if (!(s->id.flags & SOCK_SKIP))
		s->c.retrans += r - s->retrans_seen;
	s->retrans_seen = r;
}

/* Enters the interval through @p: the caller leaves it when done with
 * the entry (NULL or not). */
static __always_inline struct tcprcv_final *final_get(struct interval_pass *p, __u64 sk,
						      __u64 gen, __u32 reader)
{
	struct tcprcv_final_key key = { .sk = sk, .gen = gen, .reader = reader };
	struct hist_interval *iv = interval_enter(p);
	struct tcprcv_final *f;
	bool created;

	if (!iv)
		return NULL;
	f = keyed_get(&closed, p, &key, &final_zero, &created);
	if (!f)
		iv->lost_keys++;
	return f;
}

/* The socket is gone (or its address starts a new connection): its last
 * counts go to the closed map, for user space's next report. */
static __always_inline void sock_final(void *sk, struct tcprcv_sock *s)
{
	struct interval_pass pass = {};
	__u64 key = (__u64)sk;
	struct tcprcv_final *f;

	sock_rx(sk, s);
	sock_retrans(sk, s);
	f = table ? final_get(&pass, key, s->gen, 0) : NULL;
	if (f) {
		f->id = s->id;
		f->read_pid = s->read_pid;
		f->c = s->c;
	}
	/* Deleted before leaving: a report that drained this interval's
	 * closed map must not find the socket live too (counted twice). */
	bpf_map_delete_elem(&socks, &key);
	interval_leave(&pass);
	if (latency)
		bpf_map_delete_elem(&rings, &key);
}

/* A global function: the verifier checks it once, not at each of the
 * TCPRCV_RING unrolled calls (-L's load took 15-20 ms before). */
__noinline int latency_sample(__u64 ns, __u32 segs, __u32 pid)
{
	struct interval_pass pass;
	struct hist_interval *iv = interval_enter(&pass);
	struct hist *h;
	bool created;

	if (!iv)
		return 0;
	if (per_process) {
		h = hist_keyed(&hists, &pass, &pid, &created);
		if (h)
			hist_add_ns_n(h, ns, segs, true);
	} else {
		hist_add_ns_n(&iv->hist, ns, segs, false);
	}
	interval_leave(&pass);
	return 0;
}

/* -L: data up to @end arrived now. */
static __always_inline void arrived(void *sk, __u32 end)
{
	__u64 key = (__u64)sk;
	struct tcprcv_arrival *a;
	struct tcprcv_ring *r;
	bool created;

	r = lookup_or_create(&rings, &key, &ring_zero, &created);
	if (!r)
		return;
	if (r->head - r->tail < TCPRCV_RING) {
		a = &r->ring[r->head & (TCPRCV_RING - 1)];
		a->ts = bpf_ktime_get_ns();
		a->end_seq = end;
		a->segs = 1;
		r->head++;
		return;
	}
	/* Full: the newest entry takes it, timed from its own arrival (an
	 * upper bound for the later segments). */
	a = &r->ring[(r->head - 1) & (TCPRCV_RING - 1)];
	if (after(end, a->end_seq))
		a->end_seq = end;
	a->segs++;
}

/* A data segment reached TCP on an established socket (softirq, or the
 * owner's backlog), before TCP processed it: what came before it is
 * counted now, it at the next sight; -L remembers when it arrived. */
SEC("raw_tp/tcp_probe")
int tcp_probe(struct raw_tp_ctx *ctx)
{
	void *sk = (void *)ctx->args[0], *skb = (void *)ctx->args[1];
	struct { __u32 seq, end_seq, x; __u8 flags[4]; } cb = {};
	struct tcprcv_sock *s;
	__u32 len, end;

	bpf_probe_read_kernel(&cb, sizeof(cb), (char *)skb + tcp.skb_cb + tcp.cb_seq);
	/* cb_flags is 12 past seq on every kernel so far (checked at start). */
	len = cb.end_seq - cb.seq - (cb.flags[0] & TCPHDR_FIN) - !!(cb.flags[0] & TCPHDR_SYN);
	if (!len)
		return 0;	/* an ACK without data */
	s = sock_get(sk);
	if (!s || (s->id.flags & SOCK_SKIP_TUPLE))
		return 0;
	sock_rx_in(sk, s, true);	/* tcp_rcv_established() */
	sock_drops(sk, s);
	end = cb.seq + len;
	if (latency && !(s->id.flags & SOCK_SKIP) && after(end, s->rcv_seen))
		arrived(sk, end);	/* not all of it had arrived before */
	return 0;
}

/* -L: in-order data became readable on a socket in FIN_WAIT1/2, where
 * tcp_probe does not fire (sock:sk_data_ready, Linux 6.3+; it fires for
 * every kind of socket, so the state is checked first). */
SEC("raw_tp/sk_data_ready")
int data_ready(struct raw_tp_ctx *ctx)
{
	void *sk = (void *)ctx->args[0];
	__u8 state = 0;
	struct tcprcv_sock *s;
	__u32 was;

	bpf_probe_read_kernel(&state, 1, (char *)sk + tcp.sk_state);
	if (state != TCP_FIN_WAIT1 && state != TCP_FIN_WAIT2)
		return 0;
	if (read_u16(sk, tcp.sk_protocol) != IPPROTO_TCP)
		return 0;
	s = sock_get(sk);
	if (!s || (s->id.flags & SOCK_SKIP))
		return 0;
	was = s->rcv_seen;
	sock_rx(sk, s);
	if (after(s->rcv_seen, was))
		arrived(sk, s->rcv_seen);
	return 0;
}

/* Every segment wholly copied out: one sample each, from its arrival. */
static __always_inline void latency_read(void *sk, __u32 copied, __u32 pid)
{
	__u64 key = (__u64)sk, now;
	struct tcprcv_ring *r = bpf_map_lookup_elem(&rings, &key);

	if (!r)
		return;
	now = bpf_ktime_get_ns();
#pragma clang loop unroll(full)
	for (int i = 0; i < TCPRCV_RING; i++) {
		struct tcprcv_arrival *a = &r->ring[r->tail & (TCPRCV_RING - 1)];

		if (r->tail != r->head && !after(a->end_seq, copied)) {
			latency_sample(now - a->ts, a->segs, pid);
			r->tail++;
		}
	}
}

/* The application copied data out (tcp_recvmsg once per chunk, splice,
 * zero-copy receive): process context, the reader is current. */
SEC("raw_tp/tcp_rcv_space_adjust")
int rcv_space(struct raw_tp_ctx *ctx)
{
	void *sk = (void *)ctx->args[0];
	__u32 pid = (__u32)(current_ids() >> 32), copied, delta;
	struct tcprcv_sock *s = sock_get(sk);
	struct interval_pass pass = {};
	struct tcprcv_final *f;

	/* Left out by -4/-6/--lport/--rport: for good, whoever reads it. */
	if (!s || (s->id.flags & SOCK_SKIP_TUPLE) || s->connecting)
		return 0;
	if (!s->read_pid)
		s->read_pid = pid;
	sock_owned(s, pid);
	sock_rx_in(sk, s, false);
	copied = read_u32(sk, tcp.tp_copied_seq);
	/* tcp_read_sock() (splice, sockmap) moves copied_seq past the FIN
	 * too: no read goes beyond the data (rcv_seen, just taken). */
	if ((__s32)(copied - s->rcv_seen) > 0)
		copied = s->rcv_seen;
	delta = copied - s->copied;
	s->copied = copied;
	if (s->id.flags & SOCK_SKIP)
		return 0;
	if (pid == s->read_pid)
		s->c.read += delta;
	else if (table && delta && (f = final_get(&pass, (__u64)sk, s->gen, pid))) {
		f->id = s->id;
		__sync_fetch_and_add(&f->c.read, delta);
	}
	interval_leave(&pass);
	if (latency)
		latency_read(sk, copied, pid);
	return 0;
}

/* connect(2) starts a connection (process context: the connecting
 * process owns it); an accepted connection starts in SYN_RECV. A socket
 * tcprcv still has an entry for is starting over: its old counts are
 * final. A connection's sequence numbers are set from the peer's when it
 * is established: the starting points are taken there (an accepted one's
 * before the data of the segment that made it, counted at the next
 * sight). Every other change (a FIN, a half-close, a reset) is a sight. */
SEC("raw_tp/inet_sock_set_state")
int set_state(struct raw_tp_ctx *ctx)
{
	void *sk = (void *)ctx->args[0];
	int oldstate = (int)ctx->args[1], newstate = (int)ctx->args[2];
	struct tcprcv_sock *s;
	__u64 key = (__u64)sk;

	if (newstate != TCP_SYN_SENT && newstate != TCP_SYN_RECV &&
	    !(newstate == TCP_ESTABLISHED && oldstate == TCP_SYN_RECV)) {
		s = bpf_map_lookup_elem(&socks, &key);	/* entries are TCP sockets */
		if (!s)
			return 0;
		if (s->connecting && newstate == TCP_ESTABLISHED) {
			/* connect() sets SYN_SENT before it picks the local
			 * port (inet_hash_connect()): the tuple, and what the
			 * filters say of it, are taken again now. Nothing else
			 * writes the entry while it is connecting. */
			sock_ident(sk, &s->id);
			s->copied = read_u32(sk, tcp.tp_copied_seq);
			s->rcv_seen = data_end(sk, true);
			s->connecting = 0;
		}
		sock_rx(sk, s);
		return 0;
	}
	if (read_u16(sk, tcp.sk_protocol) != IPPROTO_TCP)
		return 0;
	if (newstate == TCP_ESTABLISHED) {
		sock_make(sk, START_ACCEPTED);
		return 0;
	}
	s = bpf_map_lookup_elem(&socks, &key);
	if (s)
		sock_final(sk, s);
	if (newstate != TCP_SYN_SENT)
		return 0;
	s = sock_make(sk, START_CONNECTING);
	if (s)
		sock_owned(s, (__u32)(current_ids() >> 32));
	return 0;
}

/* accept(2) returned a connected socket's fd: its owner. */
static __always_inline int accepted(struct syscall_exit_ctx *ctx)
{
	void *file, *sock, *sk;
	struct tcprcv_sock *s;

	if (ctx->ret < 0)
		return 0;
	file = task_fd_file((int)ctx->ret);
	sock = file ? read_ptr(file, tcp.file_private_data) : NULL;
	sk = sock ? read_ptr(sock, tcp.socket_sk) : NULL;
	if (!sk || read_u16(sk, tcp.sk_protocol) != IPPROTO_TCP)
		return 0;
	s = sock_get(sk);
	if (s && (s->id.family == AF_INET || s->id.family == AF_INET6))
		sock_owned(s, (__u32)(current_ids() >> 32));
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_accept4")
int exit_accept4(struct syscall_exit_ctx *ctx)
{
	return accepted(ctx);
}

SEC("tracepoint/syscalls/sys_exit_accept")
int exit_accept(struct syscall_exit_ctx *ctx)
{
	return accepted(ctx);
}

SEC("raw_tp/tcp_retransmit_skb")
int retransmit(struct raw_tp_ctx *ctx)
{
	void *sk = (void *)ctx->args[0];
	struct tcprcv_sock *s = sock_get(sk);

	if (s && !(s->id.flags & SOCK_SKIP_TUPLE)) {
		sock_retrans(sk, s);
		sock_rx(sk, s);
	}
	return 0;
}

SEC("raw_tp/tcp_destroy_sock")
int destroy(struct raw_tp_ctx *ctx)
{
	void *sk = (void *)ctx->args[0];
	__u64 key = (__u64)sk;
	struct tcprcv_sock *s = bpf_map_lookup_elem(&socks, &key);

	if (s)
		sock_final(sk, s);
	return 0;
}

/* --rcv-time: the time inside tcp_v4_rcv / tcp_v6_rcv, per call. */
static __always_inline int rcv_enter(void)
{
	__u32 zero = 0;
	__u64 *ts = bpf_map_lookup_elem(&rcv_start, &zero);

	if (ts)
		*ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int rcv_exit(void)
{
	struct interval_pass pass;
	struct hist_interval *iv;
	__u32 zero = 0;
	__u64 *ts = bpf_map_lookup_elem(&rcv_start, &zero);

	if (!ts || !*ts)
		return 0;
	iv = interval_enter(&pass);
	if (iv)
		hist_add_ns(&iv->hist, bpf_ktime_get_ns() - *ts, false);
	interval_leave(&pass);
	*ts = 0;
	return 0;
}

SEC("fentry/tcp_v4_rcv")
int rcv4_fentry(void *ctx)
{
	return rcv_enter();
}

SEC("fexit/tcp_v4_rcv")
int rcv4_fexit(void *ctx)
{
	return rcv_exit();
}

SEC("fentry/tcp_v6_rcv")
int rcv6_fentry(void *ctx)
{
	return rcv_enter();
}

SEC("fexit/tcp_v6_rcv")
int rcv6_fexit(void *ctx)
{
	return rcv_exit();
}

SEC("kprobe/tcp_v4_rcv")
int rcv4_kprobe(void *ctx)
{
	return rcv_enter();
}

SEC("kretprobe/tcp_v4_rcv")
int rcv4_kretprobe(void *ctx)
{
	return rcv_exit();
}

SEC("kprobe/tcp_v6_rcv")
int rcv6_kprobe(void *ctx)
{
	return rcv_enter();
}

SEC("kretprobe/tcp_v6_rcv")
int rcv6_kretprobe(void *ctx)
{
	return rcv_exit();
}
