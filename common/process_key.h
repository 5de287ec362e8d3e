/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A process as part of a key: its number and its name when it did the
 * counted work (bpf/kernel.bpf.h process_key_fill()). A process that
 * exec()s is two keys, each with its own counts: a shell's child that
 * execs cat counts cat's work under "cat", as bpftrace's @[comm] does.
 */
#ifndef PROCESS_KEY_H
#define PROCESS_KEY_H

#include "filter.h"

struct process_key {
	__u32 pid;			/* 0: by name alone (opensnoop --by comm) */
	char comm[FILTER_COMM_LEN];	/* zero-padded: part of the key */
};

#endif
