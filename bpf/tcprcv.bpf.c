// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcprcv: TCP receive per process. Segments are processed in softirq,
 * where the current task is whoever was interrupted, so nothing there is
 * keyed by the current process: everything is kept per socket (struct
 * sock address), and a socket's owner is learned where its process is
 * current (a read, connect(2), accept(2)). User space (tools/tcprcv.c)
 * adds the sockets up per owner at each report.
 *
 * Every update of a socket's entry happens under the kernel's own socket
 * lock (the receive path, the read path, retransmits and the destroy all
 * hold it), so the counters are plain adds.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "filter.bpf.h"
#include "hist.bpf.h"
#include "kernel.bpf.h"
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
#define TCP_CLOSE_WAIT 8
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

const struct tcprcv_sock sock_zero = {};
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
static __always_inline void sock_ident(void *sk, struct tcprcv_sock *s)
{
	__u32 ports = read_u32(sk, tcp.sk_portpair);

	s->id.family = read_u16(sk, tcp.sk_family);
	s->id.rport = bpf_ntohs((__u16)ports);	/* skc_dport, network order */
	s->id.lport = (__u16)(ports >> 16);	/* skc_num, host order */
	if (s->id.family == AF_INET6) {
		bpf_probe_read_kernel(s->id.laddr, 16, (char *)sk + tcp.sk_v6_rcv_saddr);
		bpf_probe_read_kernel(s->id.raddr, 16, (char *)sk + tcp.sk_v6_daddr);
	} else {
		bpf_probe_read_kernel(s->id.laddr, 4, (char *)sk + tcp.sk_rcv_saddr);
		bpf_probe_read_kernel(s->id.raddr, 4, (char *)sk + tcp.sk_daddr);
	}
	if ((filter_family && s->id.family != filter_family) ||
	    (filter_lport && s->id.lport != filter_lport) ||
	    (filter_rport && s->id.rport != filter_rport))
		s->id.flags |= SOCK_SKIP_TUPLE;
}

/* The entry of @sk, made on first sight with the socket's present
 * read position and drop count as the starting point. */
static __always_inline struct tcprcv_sock *sock_get(void *sk)
{
	__u64 key = (__u64)sk;
	struct tcprcv_sock *s = bpf_map_lookup_elem(&socks, &key);

	if (s)
		return s;
	bpf_map_update_elem(&socks, &key, &sock_zero, BPF_NOEXIST);
	s = bpf_map_lookup_elem(&socks, &key);
	if (!s || s->gen)
		return s;	/* another CPU made it first */
	s->gen = bpf_ktime_get_ns();
	s->copied = read_u32(sk, tcp.tp_copied_seq);
	s->drops_seen = read_u32(sk, tcp.sk_drops);
	s->retrans_seen = read_u32(sk, tcp.tp_total_retrans);
	sock_ident(sk, s);
	return s;
}

/* The socket's read side is used by the current process: its owner from
 * now on. A second process makes it shared: its reads are then counted
 * per reader. */
static __always_inline void sock_owned(struct tcprcv_sock *s, __u32 pid)
{
	if (pid == s->id.pid)
		return;
	if (s->id.pid)
		s->id.flags |= SOCK_SHARED;
	s->id.pid = pid;
	/* A process outside the user's PID namespace has no number there. */
	if (!pid || !traced()) {
		s->id.flags |= SOCK_SKIP_OWNER;
		return;
	}
	s->id.flags &= ~SOCK_SKIP_OWNER;
	name_process(pid);
}

/* Drops TCP charged to the socket since it was last seen. */
static __always_inline void sock_drops(void *sk, struct tcprcv_sock *s)
{
	__u32 d = read_u32(sk, tcp.sk_drops);

	s->c.drops += d - s->drops_seen;
	s->drops_seen = d;
}

/* An accepted connection is made by tcp_rcv_state_process(), which takes
 * in the data of the segment that made it (with TCP_DEFER_ACCEPT, the
 * first data segment; without, a lost last ACK of the handshake) without
 * tcp_probe. set_state() keeps rcv_nxt from before it; the next sight of
 * the socket counts what came since, less a FIN (@fin). Data in a TCP Fast
 * Open SYN is before that: counted in read, not in bytes. */
static __always_inline void sock_unprobed(void *sk, struct tcprcv_sock *s, bool fin)
{
	__u32 len;

	if (!(s->id.flags & SOCK_UNPROBED))
		return;
	s->id.flags &= ~SOCK_UNPROBED;
	len = read_u32(sk, tcp.tp_rcv_nxt) - s->made_at - fin;
	if ((__s32)len > 0 && !(s->id.flags & SOCK_SKIP)) {
		s->c.segs++;
		s->c.bytes += len;
	}
}

/* Segments retransmitted since it was last seen: the kernel's own count,
 * which is what TcpRetransSegs adds up (a GSO packet is its segments; an
 * attempt that failed, traced with an error since 6.17, is none). */
static __always_inline void sock_retrans(void *sk, struct tcprcv_sock *s)
{
	__u32 r = read_u32(sk, tcp.tp_total_retrans);

	s->c.retrans += r - s->retrans_seen;
	s->retrans_seen = r;
}

static __always_inline struct tcprcv_final *final_get(__u64 sk, __u64 gen, __u32 reader)
{
	struct tcprcv_final_key key = { .sk = sk, .gen = gen, .reader = reader };
	struct hist_interval *iv;
	struct tcprcv_final *f;
	bool created;

	f = keyed_get(&closed, &key, &final_zero, &created);
	if (!f && (iv = interval_now()))
		iv->lost_keys++;
	return f;
}

/* The socket is gone (or its address starts a new connection): its last
 * counts go to the closed map, for user space's next report. */
static __always_inline void sock_final(void *sk, struct tcprcv_sock *s)
{
	__u64 key = (__u64)sk;
	struct tcprcv_final *f;

	sock_unprobed(sk, s, false);
	sock_drops(sk, s);
	sock_retrans(sk, s);
	f = table ? final_get(key, s->gen, 0) : NULL;
	if (f) {
		f->id = s->id;
		f->read_pid = s->read_pid;
		f->c = s->c;
	}
	bpf_map_delete_elem(&socks, &key);
	if (latency)
		bpf_map_delete_elem(&rings, &key);
}

/* A global function: the verifier checks it once, not at each of the
 * TCPRCV_RING unrolled calls (-L's load took 15-20 ms before). */
__noinline int latency_sample(__u64 ns, __u32 segs, __u32 pid)
{
	struct hist_interval *iv;
	struct hist *h;
	bool created;

	if (per_process) {
		h = hist_keyed(&hists, &pid, &created);
		if (h)
			hist_add_ns_n(h, ns, segs, true);
		return 0;
	}
	iv = interval_now();
	if (iv)
		hist_add_ns_n(&iv->hist, ns, segs, false);
	return 0;
}

/* -L: data up to @end arrived now. */
static __always_inline void arrived(void *sk, __u32 end)
{
	__u64 key = (__u64)sk;
	struct tcprcv_arrival *a;
	struct tcprcv_ring *r;

	r = bpf_map_lookup_elem(&rings, &key);
	if (!r) {
		bpf_map_update_elem(&rings, &key, &ring_zero, BPF_NOEXIST);
		r = bpf_map_lookup_elem(&rings, &key);
		if (!r)
			return;
	}
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

/* A segment reached TCP on an established socket (softirq, or the
 * owner's backlog): count its new payload, remember when it arrived. */
SEC("raw_tp/tcp_probe")
int tcp_probe(struct raw_tp_ctx *ctx)
{
	void *sk = (void *)ctx->args[0], *skb = (void *)ctx->args[1];
	struct { __u32 seq, end_seq, x; __u8 flags[4]; } cb = {};
	struct tcprcv_sock *s;
	__u32 len, end, rcv_nxt;

	bpf_probe_read_kernel(&cb, sizeof(cb), (char *)skb + tcp.skb_cb + tcp.cb_seq);
	/* cb_flags is 12 past seq on every kernel so far (checked at start). */
	len = cb.end_seq - cb.seq - (cb.flags[0] & TCPHDR_FIN) - !!(cb.flags[0] & TCPHDR_SYN);
	if (!len)
		return 0;	/* an ACK without data */
	s = sock_get(sk);
	if (s)
		sock_unprobed(sk, s, false);	/* rcv_nxt: before this one */
	if (!s || (s->id.flags & SOCK_SKIP))
		return 0;
	sock_drops(sk, s);
	s->c.segs++;
	rcv_nxt = read_u32(sk, tcp.tp_rcv_nxt);
	end = cb.seq + len;
	if (!after(end, rcv_nxt))
		return 0;	/* all of it had arrived before */
	s->c.bytes += end - (after(cb.seq, rcv_nxt) ? cb.seq : rcv_nxt);
	if (latency)
		arrived(sk, end);
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
	struct tcprcv_final *f;

	/* Left out by -4/-6/--lport/--rport: for good, whoever reads it. */
	if (!s || (s->id.flags & SOCK_SKIP_TUPLE))
		return 0;
	sock_unprobed(sk, s, false);	/* a FIN would have moved the state */
	if (!s->read_pid)
		s->read_pid = pid;
	sock_owned(s, pid);
	copied = read_u32(sk, tcp.tp_copied_seq);
	delta = copied - s->copied;
	s->copied = copied;
	if (s->id.flags & SOCK_SKIP)
		return 0;
	if (pid == s->read_pid)
		s->c.read += delta;
	else if (table && delta && (f = final_get((__u64)sk, s->gen, pid))) {
		f->id = s->id;
		__sync_fetch_and_add(&f->c.read, delta);
	}
	if (latency)
		latency_read(sk, copied, pid);
	return 0;
}

/* connect(2) starts a connection (process context: the connecting
 * process owns it); an accepted connection starts in SYN_RECV. A socket
 * tcprcv still has an entry for is starting over: its old counts are
 * final. An accepted connection made (see sock_unprobed()) is followed
 * from then on; when it leaves ESTABLISHED it takes in what that left
 * uncounted, less the FIN that moved it to CLOSE_WAIT. */
SEC("raw_tp/inet_sock_set_state")
int set_state(struct raw_tp_ctx *ctx)
{
	void *sk = (void *)ctx->args[0];
	int oldstate = (int)ctx->args[1], newstate = (int)ctx->args[2];
	struct tcprcv_sock *s;
	__u64 key = (__u64)sk;
	bool made;

	if (oldstate == TCP_ESTABLISHED) {	/* entries are TCP sockets */
		s = bpf_map_lookup_elem(&socks, &key);
		if (s)
			sock_unprobed(sk, s, newstate == TCP_CLOSE_WAIT);
		return 0;
	}
	made = newstate == TCP_ESTABLISHED && oldstate == TCP_SYN_RECV;
	if (!made && newstate != TCP_SYN_SENT && newstate != TCP_SYN_RECV)
		return 0;
	if (read_u16(sk, tcp.sk_protocol) != IPPROTO_TCP)
		return 0;
	if (made) {
		s = sock_get(sk);
		if (s) {
			s->made_at = read_u32(sk, tcp.tp_rcv_nxt);
			s->id.flags |= SOCK_UNPROBED;
		}
		return 0;
	}
	s = bpf_map_lookup_elem(&socks, &key);
	if (s)
		sock_final(sk, s);
	if (newstate != TCP_SYN_SENT)
		return 0;
	s = sock_get(sk);
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

	if (s && !(s->id.flags & SOCK_SKIP)) {
		sock_retrans(sk, s);
		sock_drops(sk, s);
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
	struct hist_interval *iv;
	__u32 zero = 0;
	__u64 *ts = bpf_map_lookup_elem(&rcv_start, &zero);

	if (!ts || !*ts)
		return 0;
	iv = interval_now();
	if (iv)
		hist_add_ns(&iv->hist, bpf_ktime_get_ns() - *ts, false);
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
