/* SPDX-License-Identifier: GPL-2.0-only */
/* What tcprcv's kernel and user sides share. */
#ifndef TCPRCV_H
#define TCPRCV_H

#define TCPRCV_MAX_SOCKS 8192	/* TCP sockets followed at once (LRU beyond) */
#define TCPRCV_MAX_KEYS 2048	/* closed sockets and shared reads per interval */
#define TCPRCV_MAX_READERS 1024	/* -L -P: histograms (2 KiB each) per interval */
#define TCPRCV_RING 16		/* -L: arrival times kept per socket (power of two) */
#define TCPRCV_MAX_RINGS 4096	/* -L: sockets whose arrivals are kept (the most
				 * recently receiving ones) */
#define TCPRCV_NO_FIELD 0xffffffffU

/* Where the programs find what they need in the kernel's socket structs,
 * read from kernel BTF by user space (tools/tcprcv.c): no CO-RE. */
struct tcp_layout {
	__u32 sk_daddr, sk_rcv_saddr, sk_portpair, sk_family;	/* struct sock_common */
	__u32 sk_v6_daddr, sk_v6_rcv_saddr;
	__u32 sk_state, skc_flags;				/* struct sock_common */
	__u32 sk_protocol, sk_drops, sk_flags;			/* struct sock */
	__u32 sock_done;		/* enum sock_flags: SOCK_DONE, the bit a FIN sets */
	__u32 tp_rcv_nxt, tp_copied_seq, tp_total_retrans;	/* struct tcp_sock */
	__u32 tp_data_segs_in;
	__u32 skb_cb, cb_seq, cb_end_seq, cb_flags;		/* sk_buff, tcp_skb_cb */
	__u32 file_private_data, socket_sk;			/* accept(2): fd -> sock */
};

/* What a socket has done since tcprcv first saw it (cumulative). */
struct tcprcv_counts {
	__u64 segs;		/* data segments that reached the socket (the
				 * kernel's data_segs_in, as ss -ti shows it: a GRO
				 * packet is its segments; duplicates and segments TCP
				 * then dropped included) */
	__u64 bytes;		/* data TCP took in, in order: rcv_nxt's advance,
				 * less the FIN (duplicates, dropped segments and
				 * out-of-order data before its gap fills not counted) */
	__u64 read;		/* bytes the application copied out (copied_seq moved) */
	__u64 retrans;		/* segments this socket retransmitted (the
				 * kernel's total_retrans, as TcpRetransSegs) */
	__u64 drops;		/* packets TCP dropped on this socket (sk_drops) */
};

/* Who a socket belongs to and where it goes: enough to key a row. The
 * first 8 bytes (pid, flags, family) are the owner word: accept(2) sets
 * the owner without the socket lock, so the word is written in one 8-byte
 * store, by process context only; the softirq never writes an accepted
 * socket's (only a connecting one's, at ESTABLISHED, never accepted). */
struct tcprcv_ident {
	__u32 pid;		/* owner (as the user's PID namespace numbers
				 * it); 0: not seen yet */
	__u16 flags;		/* enum tcprcv_sock_flags */
	__u16 family;		/* AF_INET or AF_INET6 */
	__u16 lport, rport;	/* host byte order */
	__u8 laddr[16], raddr[16];	/* IPv4: the first 4 bytes */
	__u32 pad;
};

enum tcprcv_sock_flags {
	SOCK_SKIP_TUPLE = 1 << 0,	/* -4/-6/--lport/--rport exclude it */
	SOCK_SKIP_OWNER = 1 << 1,	/* the process filters exclude its owner */
	SOCK_SKIP = SOCK_SKIP_TUPLE | SOCK_SKIP_OWNER,	/* not counted */
	SOCK_SHARED = 1 << 2,	/* read by more than one process: the reads of
				 * others than read_pid go to the closed map */
};

/* A receive-queue arrival: data up to end_seq arrived at ts. */
struct tcprcv_arrival {
	__u64 ts;
	__u32 end_seq;
	__u32 segs;		/* segments merged in (the ring was full) */
};

/* A live socket, keyed by its struct sock address. */
struct tcprcv_sock {
	__u64 gen;		/* when tcprcv first saw it: tells a reused
				 * address from the socket that had it */
	struct tcprcv_ident id;
	__u32 read_pid;		/* the first reader: c.read is its reads */
	__u32 copied;		/* copied_seq when last seen */
	__u32 rcv_seen;		/* rcv_nxt, less a FIN, when last seen */
	__u32 segs_seen;	/* data_segs_in when last seen */
	__u32 drops_seen;	/* sk_drops when last seen */
	__u32 retrans_seen;	/* total_retrans when last seen */
	__u32 connecting;	/* made in SYN_SENT: copied and rcv_seen are
				 * taken when it is established (before, the
				 * kernel has not set them from the peer's ISN) */
	__u32 pad;
	struct tcprcv_counts c;
};

/* -L: a socket's data waiting to be read, ring[tail..head), by arrival. */
struct tcprcv_ring {
	__u32 head, tail;
	struct tcprcv_arrival ring[TCPRCV_RING];
};

/* The closed map's key: a socket closed in this interval (reader 0), or
 * the bytes a process read from a shared socket (reader = its PID). */
struct tcprcv_final_key {
	__u64 sk;
	__u64 gen;
	__u32 reader;
	__u32 pad;
};

struct tcprcv_final {
	struct tcprcv_ident id;
	__u32 read_pid;		/* a closed socket's first reader: c.read is its */
	struct tcprcv_counts c;
};

#endif /* TCPRCV_H */
