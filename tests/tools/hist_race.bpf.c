// SPDX-License-Identifier: GPL-2.0-only
/*
 * Keyed histograms' max and min under contention, for the tests: every
 * CPU that runs add() adds one value to two shared histograms, with
 * hist_add (shared), and checks raise_to's answers as it goes. RAISE_TRIES
 * is 1 here, so that two CPUs raising the same word lose races often;
 * what the histograms say is checked by tests/tools/hist_race.c.
 * up: the values 1, 2, 3, ... from one counter that every CPU takes the
 * next from, so the max is raised at every add, by whichever CPU is
 * adding; down: the same values from the top down, so the min is.
 */
#define RAISE_TRIES 1
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "hist.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define TOP (1ULL << 34)

struct hist up SEC(".bss");
struct hist down SEC(".bss");
__u64 last_v SEC(".bss");	/* the last value taken: 1, 2, ... last_v were added */
__u64 short_max SEC(".bss");	/* adds that left up.max below their value */
__u64 short_min SEC(".bss");	/* adds that left down's min above theirs */
__u64 solo SEC(".bss");		/* a word raised by raise_to() alone */
__u64 lied SEC(".bss");		/* raise_to(&solo) said true, solo was below v */

/* One add per run: the test runs it with BPF_PROG_TEST_RUN, repeat N, on
 * each CPU at once. */
SEC("tc")
int add(struct __sk_buff *skb)
{
	__u64 v = __sync_fetch_and_add(&last_v, 1) + 1;

	hist_add(&up, v, true);
	/* A max, once raised to v, never falls below it: an add that finds
	 * it below its value now lost its race, and must have been counted. */
	if (*(volatile __u64 *)&up.max < v)
		__sync_fetch_and_add(&short_max, 1);
	hist_add(&down, TOP - v, true);
	if (~*(volatile __u64 *)&down.min_inv > TOP - v)
		__sync_fetch_and_add(&short_min, 1);
	/* raise_to's own answer: true means the word is at v or above, now
	 * and for good (it never falls) */
	if (raise_to(&solo, v) && *(volatile __u64 *)&solo < v)
		__sync_fetch_and_add(&lied, 1);
	return 0;
}
