/* SPDX-License-Identifier: GPL-2.0-only */
/* inflight_race's table entry, for its program and its skeleton's user. */
#ifndef TESTS_INFLIGHT_RACE_H
#define TESTS_INFLIGHT_RACE_H

struct race_entry {
	__u64 key, born;	/* struct inflight_head (bpf/inflight.bpf.h) */
	__u64 op;		/* the run that holds it */
	__u64 unset;		/* 0 but while its run holds it: set up when taken */
};

#endif /* TESTS_INFLIGHT_RACE_H */
