// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcpcount: count every tcp_probe and tcp_rcv_space_adjust with raw
 * tracepoint programs that do nothing else (bench/tcpcount.bpf.c), the
 * floor next to tcprcv in the bench. Prints "attached" on stderr, then on
 * SIGINT or SIGTERM one line on stdout:
 *   probe=N rcv_space=N misses=N
 * misses: the kernel's count of runs it skipped (a program already
 * running on that CPU).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "control.h"
#include "tcpcount.h"
#include "tcpcount.skel.h"

/* The counter KEY summed over the CPUs. */
static unsigned long long total(const struct bpf_map *map, enum tcpcount_key k)
{
	int ncpu = libbpf_num_possible_cpus();
	unsigned long long sum = 0;
	__u32 key = k;
	__u64 *v;

	if (ncpu <= 0 || !(v = calloc(ncpu, sizeof(*v))))
		return 0;
	if (!bpf_map__lookup_elem(map, &key, sizeof(key), v, ncpu * sizeof(*v), 0))
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

int main(int argc, char **argv)
{
	struct tcpcount_bpf *skel;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: tcpcount\n");
		return 2;
	}
	libbpf_set_print(quiet);
	skel = tcpcount_bpf__open_and_load();
	if (!skel || tcpcount_bpf__attach(skel)) {
		fprintf(stderr, "tcpcount: cannot load or attach\n");
		tcpcount_bpf__destroy(skel);
		return 1;
	}
	signal(SIGINT, nothing);
	signal(SIGTERM, nothing);
	fprintf(stderr, "attached\n");
	pause();
	printf("probe=%llu rcv_space=%llu misses=%llu\n", total(skel->maps.counts, TCPCOUNT_PROBE),
	       total(skel->maps.counts, TCPCOUNT_RCV_SPACE),
	       misses(skel->progs.count_probe) + misses(skel->progs.count_rcv_space));
	tcpcount_bpf__destroy(skel);
	return 0;
}
