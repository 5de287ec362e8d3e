/* SPDX-License-Identifier: GPL-2.0-only */
/* What bench/tcpcount.bpf.c and bench/tcpcount.c share: the per-CPU
 * counters' keys. */
#ifndef TCPCOUNT_H
#define TCPCOUNT_H

enum tcpcount_key {
	TCPCOUNT_PROBE,		/* tcp_probe: a segment reached TCP */
	TCPCOUNT_RCV_SPACE,	/* tcp_rcv_space_adjust: a chunk copied out */
	TCPCOUNT_KEYS,
};

#endif /* TCPCOUNT_H */
