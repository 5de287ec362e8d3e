// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcprcv: TCP receive per process: segments and bytes that arrived, bytes
 * the application read, retransmits and drops, attributed to the socket's
 * owner; or how long received data waits before it is read (-L); or the
 * time spent in tcp_v4_rcv/tcp_v6_rcv (--rcv-time).
 *
 * The kernel keeps cumulative counts per socket (bpf/tcprcv.bpf.c). Each
 * report, user space reads every socket, takes the difference from what
 * it reported last time (kept here, sorted by socket), adds the sockets
 * closed since (the closed map, swapped each interval) and sums it all
 * per owner, port or flow.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "btf_fields.h"
#include "diag.h"
#include "drain.h"
#include "escape.h"
#include "kernel_layout.h"
#include "keyed.h"
#include "probe.h"
#include "table.h"
#include "tool.h"
#include "tcprcv.h"
#include "tcprcv.skel.h"

enum {
	OPT_BY = 0x2000,
	OPT_RCV_TIME,
	OPT_LPORT,
	OPT_RPORT,
};

enum mode { MODE_TABLE, MODE_LATENCY, MODE_RCV_TIME };
enum by { BY_PROCESS, BY_PORT, BY_FLOW };
enum sort { SORT_BYTES, SORT_READ, SORT_SEGS, SORT_RETRANS, SORT_DROPS };

static const char *const by_names[] = { "process", "port", "flow" };
static const char *const sort_names[] = { "bytes", "read", "segs", "retrans", "drops" };


static struct {
	enum mode mode;
	enum by by;
	enum sort sort;
	long rows;
	bool per_process, saw_by, saw_sort, saw_rows, saw_mode;
	__u16 family, lport, rport;
} opt;

/* Read from kernel BTF in one pass. */
static struct kernel_facts {
	struct tcp_layout tcp;
	struct kernel_layout layout;
} facts;
static struct tcprcv_bpf *skel;
static double last_report;	/* CLOCK_MONOTONIC seconds: the table's counts are since then */
static struct keyed_hist keyed;
static struct drain drain;
static const struct run_config *config;

/* Each with what bpf/tcprcv.bpf.c reads there. */
#define T(f, t, p, ...) BTF_OFFSET(struct tcp_layout, f, t, p, __VA_ARGS__)
#define T_OPT(f, t, p, ...) BTF_WANT(BTF_WANT_OFFSET, t, p, struct tcp_layout, f, true, __VA_ARGS__)
static const struct btf_want wants_btf[] = {
	T(sk_daddr, "sock_common", "skc_daddr", BTF_U32),
	T(sk_rcv_saddr, "sock_common", "skc_rcv_saddr", BTF_U32),
	T(sk_portpair, "sock_common", "skc_portpair", BTF_U32),
	T(sk_family, "sock_common", "skc_family", BTF_U16),
	T(sk_state, "sock_common", "skc_state", BTF_U8),
	/* Without IPv6 in the kernel: no IPv6 sockets to read. */
	T_OPT(sk_v6_daddr, "sock_common", "skc_v6_daddr", BTF_BYTES(16)),
	T_OPT(sk_v6_rcv_saddr, "sock_common", "skc_v6_rcv_saddr", BTF_BYTES(16)),
	T(sk_protocol, "sock", "sk_protocol", BTF_U16),
	T(sk_drops, "sock", "sk_drops", BTF_BYTES(4)),	/* an atomic_t */
	/* A member of struct sock until 6.1 at least, of sock_common's union
	 * (the start of struct sock) since: one of the two. The program reads
	 * the low word of the unsigned long. */
	T_OPT(sk_flags, "sock", "sk_flags", BTF_LOW(4)),
	T_OPT(skc_flags, "sock_common", "skc_flags", BTF_LOW(4)),
	BTF_ENUM(struct tcp_layout, sock_done, "sock_flags", "SOCK_DONE"),
	T(tp_rcv_nxt, "tcp_sock", "rcv_nxt", BTF_U32),
	T(tp_copied_seq, "tcp_sock", "copied_seq", BTF_U32),
	T(tp_total_retrans, "tcp_sock", "total_retrans", BTF_U32),
	T(tp_data_segs_in, "tcp_sock", "data_segs_in", BTF_U32),
	T(skb_cb, "sk_buff", "cb", BTF_NOREAD),		/* holds a tcp_skb_cb */
	T(cb_seq, "tcp_skb_cb", "seq", BTF_U32),
	T(cb_end_seq, "tcp_skb_cb", "end_seq", BTF_U32),
	/* __u8 until the AccECN change (6.1 has it so), __u16 after: the
	 * program reads the low byte, the header's flags[13]. */
	T(cb_flags, "tcp_skb_cb", "tcp_flags", BTF_LOW(1)),
	T(file_private_data, "file", "private_data", BTF_PTR),
	T(socket_sk, "socket", "sk", BTF_PTR),
};
#define NWANTS(w) (sizeof(w) / sizeof((w)[0]))

static const struct metric_family queue_latency = {
	.name = "tcprcv_receive_queue_seconds", .unit = "seconds", .type = METRIC_HISTOGRAM,
	.help = "Receive-queue latency: from a segment's arrival in TCP to its last byte's copy "
		"to the application (-L)", .scale = 1e-9,
};
static const struct metric_family rcv_time = {
	.name = "tcprcv_rcv_duration_seconds", .unit = "seconds", .type = METRIC_HISTOGRAM,
	.help = "Time spent in tcp_v4_rcv/tcp_v6_rcv per segment (--rcv-time)", .scale = 1e-9,
};

static const struct argp_option options[] = {
	{ "latency", 'L', NULL, 0,
	  "Histogram of receive-queue latency: from a segment's arrival in TCP to its "
	  "last byte's copy to the application", 0 },
	{ "per-process", 'P', NULL, 0, "With -L: one histogram per reading process", 0 },
	{ "rcv-time", OPT_RCV_TIME, NULL, 0,
	  "Histogram of the time spent in tcp_v4_rcv/tcp_v6_rcv per segment (needs fentry or "
	  "kprobes)", 0 },
	{ "by", OPT_BY, "KEY", 0, "Rows per process (default), port (local port) or flow", 0 },
	{ "sort", 's', "FIELD", 0, "Sort rows by bytes (received; default), read, segs, retrans "
	  "or drops", 0 },
	{ "rows", 'r', "N", 0, "Print the top N rows (text default 20; JSON: all)", 0 },
	{ "ipv4", '4', NULL, 0, "IPv4 connections only", 0 },
	{ "ipv6", '6', NULL, 0, "IPv6 connections only", 0 },
	{ "lport", OPT_LPORT, "PORT", 0, "Connections with this local port only", 0 },
	{ "rport", OPT_RPORT, "PORT", 0, "Connections with this remote port only", 0 },
	{},
};

static const struct option_value values[] = {
	VALUE_WORDS(OPT_BY, VALUE_WORD, by_names),
	VALUE_WORDS('s', VALUE_WORD, sort_names),
	{ 0 },
};

/* Listed start before end: they are attached last to first. */
static const struct probe probes[] = {
	{ "tcp_probe", PROBE_RAW_TRACEPOINT, "tcp/tcp_probe", "tcp_probe", false },
	{ "tcp_rcv_space_adjust", PROBE_RAW_TRACEPOINT, "tcp/tcp_rcv_space_adjust", "rcv_space", false },
	{ "inet_sock_set_state", PROBE_RAW_TRACEPOINT, "sock/inet_sock_set_state", "set_state", false },
	/* -L after a half-close; before 6.3 no such tracepoint: -L misses
	 * that data (the table counts it anyway). */
	{ "sk_data_ready", PROBE_RAW_TRACEPOINT, "sock/sk_data_ready", "data_ready", true },
	{ "sys_exit_accept4", PROBE_TRACEPOINT, "syscalls/sys_exit_accept4", "exit_accept4", true },
	{ "sys_exit_accept", PROBE_TRACEPOINT, "syscalls/sys_exit_accept", "exit_accept", true },
	{ "tcp_retransmit_skb", PROBE_RAW_TRACEPOINT, "tcp/tcp_retransmit_skb", "retransmit", false },
	{ "tcp_destroy_sock", PROBE_RAW_TRACEPOINT, "tcp/tcp_destroy_sock", "destroy", false },
	/* --rcv-time: fentry first (cheaper), then kprobes. */
	{ "tcp_v4_rcv", PROBE_FENTRY, "tcp_v4_rcv", "rcv4_fentry", false },
	{ "tcp_v4_rcv", PROBE_KPROBE, "tcp_v4_rcv", "rcv4_kprobe", false },
	{ "tcp_v4_rcv return", PROBE_FENTRY, "tcp_v4_rcv", "rcv4_fexit", false },
	{ "tcp_v4_rcv return", PROBE_KPROBE, "tcp_v4_rcv", "rcv4_kretprobe", false },
	/* A kernel without IPv6 has no tcp_v6_rcv. */
	{ "tcp_v6_rcv", PROBE_FENTRY, "tcp_v6_rcv", "rcv6_fentry", true },
	{ "tcp_v6_rcv", PROBE_KPROBE, "tcp_v6_rcv", "rcv6_kprobe", true },
	{ "tcp_v6_rcv return", PROBE_FENTRY, "tcp_v6_rcv", "rcv6_fexit", true },
	{ "tcp_v6_rcv return", PROBE_KPROBE, "tcp_v6_rcv", "rcv6_kretprobe", true },
};
#define NPROBES (int)(sizeof(probes) / sizeof(probes[0]))

static int parse_port(const char *arg, __u16 *port, const char *name, struct run_config *rc)
{
	long n;

	if (*port)
		return cli_error(rc, "option '--%s' given twice", name);
	if (parse_count(arg, &n) || n > 65535)
		return cli_error(rc, "invalid port '%s' for --%s: expected 1 to 65535", arg, name);
	*port = (__u16)n;
	return 0;
}

static int set_mode(enum mode m, struct run_config *rc)
{
	if (opt.saw_mode && opt.mode != m)
		return cli_error(rc, "-L and --rcv-time are different reports: give one");
	opt.saw_mode = true;
	opt.mode = m;
	return 0;
}

static int set_family(__u16 family, struct run_config *rc)
{
	if (opt.family && opt.family != family)
		return cli_error(rc, "-4 and -6 exclude each other");
	opt.family = family;
	return 0;
}

static int parse(int key, char *arg, struct run_config *rc)
{
	int i;

	switch (key) {
	case 'L':
		return set_mode(MODE_LATENCY, rc);
	case OPT_RCV_TIME:
		return set_mode(MODE_RCV_TIME, rc);
	case 'P':
		opt.per_process = true;
		return 0;
	case OPT_BY:
		if (opt.saw_by)
			return cli_error(rc, "option '--by' given twice");
		opt.saw_by = true;
		if ((i = parse_word(arg, by_names, NWORDS(by_names), "--by key", rc)) < 0)
			return EINVAL;
		opt.by = (enum by)i;
		return 0;
	case 's':
		if (opt.saw_sort)
			return cli_error(rc, "option '--sort' given twice");
		opt.saw_sort = true;
		if ((i = parse_word(arg, sort_names, NWORDS(sort_names), "sort field", rc)) < 0)
			return EINVAL;
		opt.sort = (enum sort)i;
		return 0;
	case 'r':
		if (opt.saw_rows)
			return cli_error(rc, "option '--rows' given twice");
		opt.saw_rows = true;
		if (parse_count(arg, &opt.rows) || opt.rows > TCPRCV_MAX_SOCKS)
			return cli_error(rc, "invalid row count '%s': expected 1 to %d", arg,
					 TCPRCV_MAX_SOCKS);
		return 0;
	case '4':
		return set_family(AF_INET, rc);
	case '6':
		return set_family(AF_INET6, rc);
	case OPT_LPORT:
		return parse_port(arg, &opt.lport, "lport", rc);
	case OPT_RPORT:
		return parse_port(arg, &opt.rport, "rport", rc);
	}
	return ARGP_ERR_UNKNOWN;
}

static int validate(struct run_config *rc)
{
	if (opt.mode != MODE_TABLE && (opt.saw_by || opt.saw_sort || opt.saw_rows))
		return cli_error(rc, "--by, -s and -r go with the table, not -L or --rcv-time");
	if (opt.mode != MODE_LATENCY && opt.per_process)
		return cli_error(rc, "-P goes with -L");
	if (opt.mode == MODE_RCV_TIME &&
	    (opt.family || opt.lport || opt.rport || rc->pid || rc->tid || rc->comm[0] || rc->cgroup))
		return cli_error(rc, "--rcv-time times every segment: in tcp_v4_rcv the socket and "
				 "its owner are not known yet, so no filter applies");
	if (opt.mode == MODE_TABLE && rc->unit != UNIT_USECS)
		return cli_error(rc, "-m and --ns go with -L and --rcv-time");
	/* A top table is read as it changes: every second, unless an interval
	 * or --duration (one table, for the whole run) is given. */
	if (opt.mode == MODE_TABLE && !rc->interval && !rc->duration)
		rc->interval = 1;
	return 0;
}

static bool rcv_event(const char *event)
{
	return !strncmp(event, "tcp_v4_rcv", 10) || !strncmp(event, "tcp_v6_rcv", 10);
}

static bool wants(const char *event)
{
	if (opt.mode == MODE_RCV_TIME)
		return rcv_event(event);
	if (rcv_event(event))
		return false;
	/* -L needs no retransmit counts; only -L needs arrivals outside
	 * tcp_probe (the table counts at the reads and the close). */
	if (!strcmp(event, "sk_data_ready"))
		return opt.mode == MODE_LATENCY;
	return opt.mode == MODE_TABLE || strcmp(event, "tcp_retransmit_skb");
}

/* --check without --rcv-time: say whether --rcv-time could run here. */
static void check_rcv_time(void)
{
	char why[2][512];
	const int kinds[2] = { PROBE_FENTRY, PROBE_KPROBE };

	for (int k = 0; k < 2; k++)
		for (int i = 0; i < NPROBES; i++)
			if (!strcmp(probes[i].event, "tcp_v4_rcv") && (int)probes[i].kind == kinds[k]) {
				if (probe_available(&probes[i], why[k], sizeof(why[k]))) {
					check_row("--rcv-time", CHECK_OK, "%s tcp_v4_rcv",
						  probe_kind_name(probes[i].kind));
					return;
				}
			}
	check_row("--rcv-time", CHECK_FALLBACK, "unavailable, the rest works: %s; %s", why[0], why[1]);
}

/* The socket offsets and the walk from a task's fd to its file. */
static int read_btf(int btf_fd)
{
	struct btf_want *w = malloc((NWANTS(wants_btf) + kernel_layout_nwants) * sizeof(*w)), *end;
	int err;

	if (!w)
		return -ENOMEM;
	end = btf_wants_into(w, wants_btf, NWANTS(wants_btf), offsetof(struct kernel_facts, tcp));
	/* Not the optional ones (readlat -B's in_iowait): a change there
	 * must not refuse tcprcv, which does not read them. */
	for (size_t i = 0; i < kernel_layout_nwants; i++)
		if (!kernel_layout_wants[i].optional)
			end = btf_wants_into(end, &kernel_layout_wants[i], 1,
					     offsetof(struct kernel_facts, layout));
	facts.layout.task_in_iowait = KERNEL_LAYOUT_NONE;
	err = btf_fields_load(w, (size_t)(end - w), &facts, btf_fd);
	free(w);
	facts.layout.valid = !err;
	return err;
}

static int features(const struct run_config *rc)
{
	int err;

	config = rc;
	if (rc->check && opt.mode != MODE_RCV_TIME)
		check_rcv_time();
	if (opt.mode == MODE_RCV_TIME)
		return 0;
	err = read_btf(rc->btf_fd);
	if (!err && facts.tcp.cb_flags != facts.tcp.cb_seq + 12)
		err = -EPROTO;	/* bpf/tcprcv.bpf.c reads seq..tcp_flags in one go */
	if (!err && facts.tcp.sk_flags == BTF_FIELD_NONE)
		facts.tcp.sk_flags = facts.tcp.skc_flags;
	if (!err && facts.tcp.sk_flags == BTF_FIELD_NONE)
		err = -ENOENT;
	if (err) {
		check_row("socket layout", CHECK_FAILED,
			  "cannot read struct sock, tcp_sock and sk_buff from %s (%s): tcprcv "
			  "needs them%s", btf_source(rc),
			  btf_fields_error()[0] ? btf_fields_error() : "tcp_skb_cb.tcp_flags is not "
			  "12 bytes after seq", rc->btf_name ? "" : "; pass a BTF file with --btf FILE");
		return -1;
	}
	check_row("socket layout", CHECK_OK, "from kernel BTF%s",
		  facts.tcp.sk_v6_daddr == BTF_FIELD_NONE ? " (no IPv6 in this kernel)" : "");
	return 0;
}

static struct bpf_object_skeleton *open_bpf(const struct run_config *rc)
{
	skel = tcprcv_bpf__open_opts(tool_open_opts(rc));
	if (!skel)
		return NULL;
	skel->rodata->tcp = facts.tcp;
	skel->rodata->layout = facts.layout;
	skel->rodata->table = opt.mode == MODE_TABLE;
	skel->rodata->latency = opt.mode == MODE_LATENCY;
	skel->rodata->per_process = opt.per_process;
	skel->rodata->filter_family = opt.family;
	skel->rodata->filter_lport = opt.lport;
	skel->rodata->filter_rport = opt.rport;
	/* Size down what this mode does not use. */
	if (opt.mode == MODE_RCV_TIME) {
		bpf_map__set_max_entries(skel->maps.socks, 1);
		bpf_map__set_max_entries(skel->maps.names, 1);
	}
	if (opt.mode != MODE_TABLE)
		keyed_unused(skel->maps.closed_a, skel->maps.closed_b);
	if (opt.mode != MODE_LATENCY)
		bpf_map__set_max_entries(skel->maps.rings, 1);
	if (!opt.per_process)
		keyed_unused(skel->maps.hists_a, skel->maps.hists_b);
	return skel->skeleton;
}

static double now_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int loaded(const struct run_config *rc, struct output *out)
{
	struct bpf_map *slot = NULL, *a = NULL, *b = NULL;

	last_report = now_secs();
	(void)rc;
	if (opt.mode == MODE_RCV_TIME)
		out->hist_family = &rcv_time;
	if (opt.mode == MODE_TABLE)
		slot = skel->maps.closed, a = skel->maps.closed_a, b = skel->maps.closed_b;
	else if (opt.per_process)
		slot = skel->maps.hists, a = skel->maps.hists_a, b = skel->maps.hists_b;
	return drain_setup(&drain, bpf_map__fd(skel->maps.intervals), bpf_map__fd(skel->maps.interval_gates),
			   &skel->bss->interval_cur, &keyed,
			   slot, a, b);
}

/* ---- The table: per-socket differences, summed per row. ---- */

/* What was reported of a socket so far. */
struct seen {
	__u64 sk, gen;
	struct tcprcv_counts c;
	__u32 missing;		/* reports it was neither live nor closed in */
	__u32 found;		/* looked up in this report */
};

/* Sorted by (sk, gen): last report's and this one's. */
static struct seen *seen_old, *seen_new;
static size_t n_old, n_new, cap_old, cap_new;

struct row {
	struct tcprcv_ident id;	/* the key: fields --by does not use are 0 */
	struct tcprcv_counts c;
};

static struct row *rows;
static size_t n_rows, cap_rows;

static int by_sock(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;

	if (x->sk != y->sk)
		return x->sk < y->sk ? -1 : 1;
	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

/* @p with room for @need elements, or NULL (@p and @cap as they were)
 * when out of memory: the report fails and the runtime cleans up. */
static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t ncap = need * 2 + 64;
	void *q;

	if (need <= *cap)
		return p;
	q = realloc(p, ncap * size);
	if (q)
		*cap = ncap;
	return q;
}

/* The counts of (sk, gen) reported last time, or zeros. */
static struct tcprcv_counts reported(__u64 sk, __u64 gen)
{
	struct seen key = { .sk = sk, .gen = gen }, *s;

	s = n_old ? bsearch(&key, seen_old, n_old, sizeof(*s), by_sock) : NULL;
	if (!s)
		return (struct tcprcv_counts){};
	s->found = 1;
	return s->c;
}

static int add_row(const struct tcprcv_ident *id, const struct tcprcv_counts *d)
{
	struct row r = { .c = *d };
	struct row *more;

	if (!(d->segs | d->bytes | d->read | d->retrans | d->drops))
		return 0;
	/* Without a process filter a socket whose owner is not known yet is
	 * shown as such; with one it may be anybody's: left out. */
	if (!id->pid && (config->pid || config->tid || config->comm[0] || config->cgroup))
		return 0;
	r.id.pid = id->pid;
	if (opt.by != BY_PROCESS)
		r.id.lport = id->lport;
	if (opt.by == BY_FLOW) {
		r.id.family = id->family;
		r.id.rport = id->rport;
		memcpy(r.id.laddr, id->laddr, sizeof(r.id.laddr));
		memcpy(r.id.raddr, id->raddr, sizeof(r.id.raddr));
	}
	more = grow(rows, &cap_rows, n_rows + 1, sizeof(*rows));
	if (!more)
		return -ENOMEM;
	rows = more;
	rows[n_rows++] = r;
	return 0;
}

static int keep_seen(const struct seen *s)
{
	struct seen *more = grow(seen_new, &cap_new, n_new + 1, sizeof(*seen_new));

	if (!more)
		return -ENOMEM;
	seen_new = more;
	seen_new[n_new++] = *s;
	return 0;
}

static struct tcprcv_counts minus(const struct tcprcv_counts *a, const struct tcprcv_counts *b)
{
	return (struct tcprcv_counts){ a->segs - b->segs, a->bytes - b->bytes, a->read - b->read,
				       a->retrans - b->retrans, a->drops - b->drops };
}

/* A socket's counts now: the difference goes to its row; the counts are
 * kept for the next report unless it is closed. */
static int account(__u64 sk, __u64 gen, struct tcprcv_ident id, const struct tcprcv_counts *c,
		   __u32 read_pid, bool live)
{
	struct tcprcv_counts was = reported(sk, gen), d = minus(c, &was);

	if (live && keep_seen(&(struct seen){ .sk = sk, .gen = gen, .c = *c }))
		return -ENOMEM;
	if (id.flags & SOCK_SKIP)
		return 0;
	/* The bytes read belong to the first reader; the rest to the owner. */
	if (read_pid && read_pid != id.pid && d.read) {
		struct tcprcv_counts r = { .read = d.read };
		struct tcprcv_ident rid = id;

		rid.pid = read_pid;
		if (add_row(&rid, &r))
			return -ENOMEM;
		d.read = 0;
	}
	return add_row(&id, &d);
}

/* Every live socket, read in batches from the kernel. */
static int read_live(void)
{
	static struct tcprcv_sock vals[64];
	__u64 keys[64], batch = 0;
	int fd = bpf_map__fd(skel->maps.socks), err;
	bool first = true;
	__u32 count;

	do {
		count = 64;
		err = keyed_lookup_batch(fd, first ? NULL : &batch, &batch, keys, sizeof(*keys), vals,
					 sizeof(*vals), &count);
		first = false;
		if (err && errno != ENOENT)
			return -errno;
		for (__u32 i = 0; i < count; i++)
			if (vals[i].gen && account(keys[i], vals[i].gen, vals[i].id, &vals[i].c,
						   vals[i].read_pid, true))
				return -ENOMEM;
	} while (!err);
	return 0;
}

/* Sockets closed and reads from shared sockets, this interval. */
static int read_closed(const struct keyed_snapshot *snap)
{
	int err = 0;

	for (size_t i = 0; i < snap->n && !err; i++) {
		const struct tcprcv_final_key *k = keyed_key(snap, i);
		const struct tcprcv_final *f = keyed_value(snap, i);

		if (k->reader) {
			struct tcprcv_counts r = { .read = f->c.read };

			err = add_row(&f->id, &r);
		} else {
			err = account(k->sk, k->gen, f->id, &f->c, f->read_pid, false);
		}
	}
	return err;
}

static int by_row_key(const void *a, const void *b)
{
	return memcmp(&((const struct row *)a)->id, &((const struct row *)b)->id,
		      sizeof(struct tcprcv_ident));
}

static __u64 sort_value(const struct row *r)
{
	switch (opt.sort) {
	case SORT_READ: return r->c.read;
	case SORT_SEGS: return r->c.segs;
	case SORT_RETRANS: return r->c.retrans;
	case SORT_DROPS: return r->c.drops;
	default: return r->c.bytes;
	}
}

static int by_sort(const void *a, const void *b)
{
	__u64 x = sort_value(a), y = sort_value(b);

	if (x != y)
		return x > y ? -1 : 1;
	return by_row_key(a, b);
}

/* Rows with the same key, added up; then sorted for display. */
static void merge_rows(void)
{
	size_t n = 0;

	if (!n_rows)	/* rows is NULL until a row is kept */
		return;
	qsort(rows, n_rows, sizeof(*rows), by_row_key);
	for (size_t i = 0; i < n_rows; i++) {
		if (n && !by_row_key(&rows[n - 1], &rows[i])) {
			struct tcprcv_counts *c = &rows[n - 1].c;

			c->segs += rows[i].c.segs;
			c->bytes += rows[i].c.bytes;
			c->read += rows[i].c.read;
			c->retrans += rows[i].c.retrans;
			c->drops += rows[i].c.drops;
		} else {
			rows[n++] = rows[i];
		}
	}
	n_rows = n;
	qsort(rows, n_rows, sizeof(*rows), by_sort);
}

static const struct metric_family segs_family = {
	.name = "tcprcv_segments", .type = METRIC_COUNTER, .help = "TCP segments with data received",
};
static const struct metric_family bytes_family = {
	.name = "tcprcv_received_bytes", .unit = "bytes", .type = METRIC_COUNTER,
	.help = "Bytes that arrived in TCP",
};
static const struct metric_family read_family = {
	.name = "tcprcv_read_bytes", .unit = "bytes", .type = METRIC_COUNTER,
	.help = "Bytes the application read",
};
static const struct metric_family retrans_family = {
	.name = "tcprcv_retransmits", .type = METRIC_COUNTER, .help = "Segments retransmitted",
};
static const struct metric_family drops_family = {
	.name = "tcprcv_drops", .type = METRIC_COUNTER, .help = "Packets the socket dropped",
};

static const struct table_count counts[] = {	/* as in struct tcprcv_counts */
	{ "segs", &segs_family }, { "bytes", &bytes_family }, { "read", &read_family },
	{ "retrans", &retrans_family }, { "drops", &drops_family },
};

#define KEY_COLUMNS { "PID", -7, "pid", 0, CELL_DASH_ZERO, NULL }, { "COMM", -16, "comm", 0, CELL_PLAIN, NULL }
#define COUNT_COLUMNS { "SEGS", 8, NULL, 0, 0, NULL }, { "RX_BYTES", 12, NULL, 1, 0, NULL },	\
	{ "READ_BYTES", 12, NULL, 2, 0, NULL }, { "RETRANS", 7, NULL, 3, 0, NULL },		\
	{ "DROPS", 6, NULL, 4, 0, NULL }
static const struct table_column by_process_cols[] = { KEY_COLUMNS, COUNT_COLUMNS };
static const struct table_column by_port_cols[] = {
	KEY_COLUMNS, { "LPORT", -5, "lport", 0, CELL_PLAIN, NULL }, COUNT_COLUMNS,
};
static const struct table_column by_flow_cols[] = {
	KEY_COLUMNS, COUNT_COLUMNS, { "LADDR:LPORT", 0, "laddr", 0, CELL_ADDRESS, "lport" },
	{ "RADDR:RPORT", 0, "raddr", 0, CELL_ADDRESS, "rport" },
};

static void table_title(FILE *f, const struct table *t);
static void table_note(FILE *f, const struct table *t);

static const struct table_spec specs[] = {	/* by enum by */
	{ "process", TABLE_ARRAY(by_process_cols), TABLE_ARRAY(counts), table_title, table_note },
	{ "port", TABLE_ARRAY(by_port_cols), TABLE_ARRAY(counts), table_title, table_note },
	{ "flow", TABLE_ARRAY(by_flow_cols), TABLE_ARRAY(counts), table_title, table_note },
};

/* Every count of a table is what happened in its interval (the last one,
 * at a stop, is shorter), never a total: the metrics add them up. */
static void table_title(FILE *f, const struct table *t)
{
	fprintf(f, "Counts in the last %.2f s (per interval, not totals):\n", table_sum_num(t, "seconds"));
}

static void table_note(FILE *f, const struct table *t)
{
	unsigned long long lost = table_sum_u64(t, "lost");

	fprintf(f, "%llu bytes received, %llu read, in %zu %s%s", table_sum_u64(t, "bytes"),
		table_sum_u64(t, "read"), t->n,
		opt.by == BY_PROCESS ? "processes" : opt.by == BY_PORT ? "ports" : "flows",
		t->n > table_text_rows(t) ? " (top rows shown)" : "");
	if (lost)
		fprintf(f, "; %llu closed sockets not counted: more than %d in one interval", lost,
			TCPRCV_MAX_KEYS);
	fputs("\n\n", f);
}

static void row_name(const struct row *r, char *comm, size_t len)
{
	if (!r->id.pid)
		snprintf(comm, len, "[unknown]");
	else
		keyed_process_name(bpf_map__fd(skel->maps.names), r->id.pid, comm, len);
}

/* A row's key fields, its strings in @comm and @addr (2 addresses). */
static int row_key(const struct row *r, struct key_field *k, char *comm,
		   char addr[2][INET6_ADDRSTRLEN])
{
	int af = r->id.family == AF_INET6 ? AF_INET6 : AF_INET, n = 0;

	row_name(r, comm, FILTER_COMM_LEN + 1);
	k[n++] = (struct key_field)KEY_UINT("pid", r->id.pid);
	k[n++] = (struct key_field)KEY_STRING("comm", comm);
	if (opt.by != BY_PROCESS)
		k[n++] = (struct key_field)KEY_UINT("lport", r->id.lport);
	if (opt.by != BY_FLOW)
		return n;
	if (!inet_ntop(af, r->id.laddr, addr[0], INET6_ADDRSTRLEN))
		strcpy(addr[0], "?");
	if (!inet_ntop(af, r->id.raddr, addr[1], INET6_ADDRSTRLEN))
		strcpy(addr[1], "?");
	k[n++] = (struct key_field)KEY_STRING("family", af == AF_INET6 ? "ipv6" : "ipv4");
	k[n++] = (struct key_field)KEY_STRING("laddr", addr[0]);
	k[n++] = (struct key_field)KEY_STRING("raddr", addr[1]);
	k[n++] = (struct key_field)KEY_UINT("rport", r->id.rport);
	return n;
}

/* The rows (sorted), the totals of all of them, the lost. */
static int print_table(struct output *o, __u64 lost, double secs)
{
	char comm[FILTER_COMM_LEN + 1], addr[2][INET6_ADDRSTRLEN];
	struct tcprcv_counts tot = {};
	struct table t;
	int err = 0;

	table_init(&t, &specs[opt.by]);
	t.limit = (size_t)opt.rows;
	for (size_t i = 0; i < n_rows && !err; i++) {
		const struct tcprcv_counts *c = &rows[i].c;
		unsigned long long v[5] = { c->segs, c->bytes, c->read, c->retrans, c->drops };
		struct key_field key[7];
		int nkey = row_key(&rows[i], key, comm, addr);

		tot.segs += c->segs;
		tot.bytes += c->bytes;
		tot.read += c->read;
		tot.retrans += c->retrans;
		tot.drops += c->drops;
		err = table_add(&t, key, nkey, v);
	}
	table_sum(&t, &(struct table_sum){ .json = "seconds", .type = SUM_NUM, .d = secs });
	table_sum(&t, &(struct table_sum){ .json = "segs", .u = tot.segs });
	table_sum(&t, &(struct table_sum){ .json = "bytes", .u = tot.bytes });
	table_sum(&t, &(struct table_sum){ .json = "read", .u = tot.read });
	table_sum(&t, &(struct table_sum){ .json = "retrans", .u = tot.retrans });
	table_sum(&t, &(struct table_sum){ .json = "drops", .u = tot.drops });
	table_sum(&t, &(struct table_sum){ .json = "keys", .u = n_rows });
	table_sum(&t, &(struct table_sum){ .json = "lost", .u = lost, .family = &o->fam.lost });
	if (!err)
		output_table(o, &t);
	table_free(&t);
	return err ? -ENOMEM : 0;
}

/* A socket that left the live map without reaching the closed map yet
 * (closed between the swap and the read) is in the next closed map: what
 * was reported of it is kept for two more reports. */
static int keep_missing(void)
{
	for (size_t i = 0; i < n_old; i++) {
		struct seen s = seen_old[i];

		if (s.found || s.missing >= 2)
			continue;
		s.missing++;
		if (keep_seen(&s))
			return -ENOMEM;
	}
	return 0;
}

static int report_table(struct output *o)
{
	struct keyed_snapshot snap = {};
	struct hist_interval iv;
	struct seen *swap;
	size_t cap_swap;
	double now;
	int err;

	/* Closed first: a socket closed after the swap is still live below,
	 * or in the next interval's closed map; never in neither. */
	err = drain_interval(&drain, &iv, &snap);
	if (err)
		goto out;
	n_rows = 0;
	n_new = 0;
	err = read_live();
	if (err)
		goto out;
	/* Closed sockets are looked up among the last report's. */
	err = read_closed(&snap);
	if (!err)
		err = keep_missing();
	if (err)
		goto out;
	if (n_new)	/* seen_new is NULL until a socket is seen */
		qsort(seen_new, n_new, sizeof(*seen_new), by_sock);
	swap = seen_old;
	seen_old = seen_new;
	seen_new = swap;
	cap_swap = cap_old;
	cap_old = cap_new;
	cap_new = cap_swap;
	n_old = n_new;
	merge_rows();
	now = now_secs();
	err = print_table(o, iv.lost_keys, now - last_report);
	last_report = now;
out:
	keyed_snapshot_free(&snap);
	if (err)
		diag_error("cannot read the sockets: %s", strerror(-err));
	return err;
}

/* -L and --rcv-time: one histogram, or one per reading process (-L -P). */
static int report_hist(struct output *o)
{
	struct hist_extra x = { .errors = false, .lost = -1, .unmatched = -1,
				.per_key = opt.per_process };
	struct keyed_snapshot snap = {};
	struct hist_interval iv;
	int err;

	err = drain_interval(&drain, &iv, opt.per_process ? &snap : NULL);
	if (err) {
		diag_error("cannot read the histograms: %s", strerror(-err));
		keyed_snapshot_free(&snap);
		return err;
	}
	if (!opt.per_process || !snap.n) {
		output_hist(o, NULL, 0, &iv.hist, &x);
	} else {
		x.lost = (long long)iv.lost_keys;
		output_hists_by_pid(o, &snap, bpf_map__fd(skel->maps.names), &x);
	}
	keyed_snapshot_free(&snap);
	return 0;
}

static int report(struct output *out)
{
	return opt.mode == MODE_TABLE ? report_table(out) : report_hist(out);
}

static void close_bpf(void)
{
	drain_close(&drain);
	tcprcv_bpf__destroy(skel);
	free(seen_old);
	free(seen_new);
	free(rows);
}

static const char *banner(void)
{
	static char text[160];
	char filt[96] = "";

	if (opt.family || opt.lport || opt.rport)
		snprintf(filt, sizeof(filt), " (%s%s%.0u%s%.0u)",
			 opt.family == AF_INET ? "IPv4 " : opt.family == AF_INET6 ? "IPv6 " : "",
			 opt.lport ? "local port " : "", opt.lport,
			 opt.rport ? (opt.lport ? ", remote port " : "remote port ") : "", opt.rport);
	if (opt.mode == MODE_RCV_TIME)
		return "Tracing time in tcp_v4_rcv/tcp_v6_rcv";
	snprintf(text, sizeof(text), "Tracing TCP receive%s%s", opt.mode == MODE_LATENCY ?
		 " queue latency" : "", filt);
	return text;
}

static const struct tool tcprcv = {
	.name = "tcprcv",
	.summary = "TCP receive per process: segments, bytes received and read, retransmits, "
		   "drops; receive-queue latency.",
	.doc = "Rows belong to the process that owns the socket (the one that connected,\n"
	       "accepted or last read it), not to whoever the softirq interrupted.\n"
	       "\n"
	       "Examples:\n"
	       "  tcprcv 1                # top processes by bytes received, every second\n"
	       "  tcprcv --by flow 5      # per connection, every 5 seconds\n"
	       "  tcprcv --by port -s read  # per local port, by bytes read\n"
	       "  tcprcv -p 181           # sockets owned by process 181\n"
	       "  tcprcv -L -P 1          # receive-queue latency per reading process\n"
	       "  tcprcv -L --lport 443   # ... of connections on local port 443\n"
	       "  tcprcv --rcv-time       # time in tcp_v4_rcv (fentry or kprobes)\n",
	.banner = banner,
	.shared = SHARED_FILTERS | SHARED_UNITS,
	.hist_family = &queue_latency,
	.options = options,
	.values = values,
	.parse = parse,
	.validate = validate,
	.probes = probes,
	.nprobes = NPROBES,
	.wants = wants,
	.features = features,
	.open = open_bpf,
	.loaded = loaded,
	.report = report,
	.close = close_bpf,
};

int main(int argc, char **argv)
{
	return tool_run(&tcprcv, argc, argv);
}
