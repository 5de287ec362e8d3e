// SPDX-License-Identifier: GPL-2.0-only
/*
 * hist_race: keyed histograms' max and min when two CPUs raise them at
 * once, for the tests (tests/runtime.bats). Runs hist_race.bpf.c's add()
 * N times on CPU 0 and CPU 1 at once (BPF_PROG_TEST_RUN), in rounds until
 * adds have lost races to both the max and the min (at most 30 rounds),
 * then checks what the two histograms say against what was added:
 *  - count and sum exact;
 *  - max never above the largest value added, min never below the least;
 *  - every add that left the max short of its value is among the races
 *    (struct hist's races), and with no race max and min are exact;
 *  - raise_to() never says true of a word still below the value.
 * Prints one line of figures; exits 0 if every check holds, 1 if one
 * failed, 2 if it could not run, 3 if no add lost a race (nothing shown:
 * the two CPUs' runs hardly overlapped).
 * The two CPUs are the first two this process may run on.
 * Usage: hist_race [N], 1 <= N <= 10,000,000 (default 1,000,000)
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "hist_layout.h"
#include "cpu_pair.h"
#include "tests/hist_race.skel.h"

#define TOP (1ULL << 34)	/* as hist_race.bpf.c */

static int check(const char *what, int ok)
{
	if (!ok)
		fprintf(stderr, "hist_race: %s\n", what);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
	int cpus[2];
	struct hist_race_bpf *skel;
	struct hist_race_bpf__bss *b;
	int failed = 0, rounds = 0;

	/* at most 30 rounds of 2N adds: the sums stay below 2^64, the
	 * values below TOP */
	if (n < 1 || n > 10000000) {
		fprintf(stderr, "hist_race: N is 1 to 10000000\n");
		return 2;
	}
	if (!cpu_pair_find(cpus, "hist_race"))
		return 3;
	skel = hist_race_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "hist_race: cannot load: %s\n", strerror(errno));
		return 2;
	}
	b = skel->bss;
	while (rounds++ < 30 && !(b->short_max && b->short_min))
		if (cpu_pair_run(bpf_program__fd(skel->progs.add), cpus, (unsigned int)n, "hist_race"))
			return 2;

	const struct hist *up = &b->up, *down = &b->down;
	unsigned long long count = b->last_v, top = count, least = TOP - count;
	/* 1 + 2 + ... + count, and TOP - each */
	unsigned long long sum_up = count * (count + 1) / 2, sum_down = count * TOP - sum_up;
	unsigned long long ucount = 0, dcount = 0;

	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		ucount += up->buckets[i];
		dcount += down->buckets[i];
	}
	printf("CPUs %d and %d, rounds %d, adds %llu; up: max %llu of %llu, races %llu, short %llu; "
	       "down: min %llu of %llu, races %llu, short %llu\n", cpus[0], cpus[1],
	       rounds - 1, count, (unsigned long long)up->max, top,
	       (unsigned long long)up->races, (unsigned long long)b->short_max,
	       (unsigned long long)~down->min_inv, least, (unsigned long long)down->races,
	       (unsigned long long)b->short_min);

	failed |= check("not every run added", count == 2ULL * n * (unsigned int)(rounds - 1));
	failed |= check("count not exact", ucount == count && dcount == count);
	failed |= check("sum not exact", up->sum == sum_up && down->sum == sum_down);
	failed |= check("max above the largest value", up->max <= top);
	failed |= check("min below the least value", ~down->min_inv >= least);
	failed |= check("a short max not counted", b->short_max <= up->races);
	failed |= check("a short min not counted", b->short_min <= down->races);
	failed |= check("no race, yet max not exact", up->races || up->max == top);
	failed |= check("no race, yet min not exact", down->races || ~down->min_inv == least);
	failed |= check("more races than adds", up->races <= count && down->races <= count);
	failed |= check("raise_to said true of a word below the value", b->lied == 0);

	int shown = b->short_max && b->short_min;

	hist_race_bpf__destroy(skel);
	return failed ? 1 : shown ? 0 : 3;
}
