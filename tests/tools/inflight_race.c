// SPDX-License-Identifier: GPL-2.0-only
/*
 * inflight_race: bpf/inflight.bpf.h's table when two CPUs take and end
 * slots at once, for the tests (tests/runtime.bats). Runs
 * inflight_race.bpf.c's op() N times on CPU 0 and CPU 1 at once
 * (BPF_PROG_TEST_RUN), ROUNDS times, then checks that no slot was taken
 * from a program holding it, nor found not set up by the program that
 * took it, nor evicted (each CPU holds one at most), and that every run
 * ended its operation. Prints one line of figures; exits 0 if every
 * check holds, 1 if one failed, 2 if it could not run, 3 if it has fewer
 * than two CPUs.
 * Usage: inflight_race [N [ROUNDS]], N 1 to 10,000,000 (default
 * 1,000,000), ROUNDS 1 to 100 (default 5)
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "cpu_pair.h"
#include "inflight_race.h"
#include "tests/inflight_race.skel.h"

static int check(const char *what, int ok)
{
	if (!ok)
		fprintf(stderr, "inflight_race: %s\n", what);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
	unsigned long rounds = argc > 2 ? strtoul(argv[2], NULL, 0) : 5;
	struct inflight_race_bpf *skel;
	struct inflight_race_bpf__bss *b;
	int cpus[2], failed = 0;

	if (n < 1 || n > 10000000 || rounds < 1 || rounds > 100) {
		fprintf(stderr, "inflight_race: N is 1 to 10000000, ROUNDS 1 to 100\n");
		return 2;
	}
	if (!cpu_pair_find(cpus, "inflight_race"))
		return 3;
	skel = inflight_race_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "inflight_race: cannot load: %s\n", strerror(errno));
		return 2;
	}
	b = skel->bss;
	for (unsigned long r = 0; r < rounds; r++)
		if (cpu_pair_run(bpf_program__fd(skel->progs.op), cpus, (unsigned int)n, "inflight_race"))
			return 2;
	printf("CPUs %d and %d, runs %llu, taken %llu, no slot %llu, evicted %llu, stolen %llu, "
	       "end failed %llu, not set up %llu\n", cpus[0], cpus[1], (unsigned long long)b->runs,
	       (unsigned long long)b->taken, (unsigned long long)b->no_slot, (unsigned long long)b->evicted,
	       (unsigned long long)b->stolen, (unsigned long long)b->end_failed,
	       (unsigned long long)b->unclean);
	failed |= check("not every run ran", b->runs == 2ULL * n * rounds);
	failed |= check("a slot taken from the program holding it", b->stolen == 0);
	failed |= check("an end found its slot gone", b->end_failed == 0);
	failed |= check("a slot taken and not set up", b->unclean == 0);
	failed |= check("a slot evicted, with one in flight per CPU", b->evicted == 0);
	/* a lost race leaves a run without a slot: some, under load more */
	failed |= check("runs without a slot, or most runs", b->no_slot < b->runs / 10);
	inflight_race_bpf__destroy(skel);
	return failed;
}
