// SPDX-License-Identifier: GPL-2.0-only
/*
 * blkcount MAJ:MIN: count one disk's requests issued and completed with
 * raw tracepoint programs (bench/blkcount.bpf.c), the control next to
 * biolat in the bench. Prints "attached" on stderr, then on SIGINT or
 * SIGTERM one line on stdout:
 *   issued=N completed=N misses=N
 * misses: the kernel's count of runs it skipped (a program already
 * running on that CPU).
 */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "control.h"
#include "blkcount.skel.h"

int main(int argc, char **argv)
{
	struct blkcount_bpf *skel;
	unsigned int major, minor;

	if (argc != 2 || sscanf(argv[1], "%u:%u", &major, &minor) != 2) {
		fprintf(stderr, "usage: blkcount MAJ:MIN\n");
		return 2;
	}
	libbpf_set_print(quiet);
	skel = blkcount_bpf__open();
	if (!skel)
		return 1;
	skel->rodata->dev = major << 20 | minor;
	if (blkcount_bpf__load(skel) || blkcount_bpf__attach(skel)) {
		fprintf(stderr, "blkcount: cannot load or attach\n");
		blkcount_bpf__destroy(skel);
		return 1;
	}
	signal(SIGINT, nothing);
	signal(SIGTERM, nothing);
	fprintf(stderr, "attached\n");
	pause();
	printf("issued=%llu completed=%llu misses=%llu\n",
	       (unsigned long long)__atomic_load_n(&skel->bss->issued, __ATOMIC_RELAXED),
	       (unsigned long long)__atomic_load_n(&skel->bss->completed, __ATOMIC_RELAXED),
	       misses(skel->progs.count_issue) + misses(skel->progs.count_complete));
	blkcount_bpf__destroy(skel);
	return 0;
}
