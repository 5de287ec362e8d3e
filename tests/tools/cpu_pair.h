/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the race tests of tests/tools: run one BPF program N times on each
 * of two CPUs at once (BPF_PROG_TEST_RUN, a tc program on a dummy packet),
 * the first two CPUs this process may run on.
 */
#ifndef TESTS_CPU_PAIR_H
#define TESTS_CPU_PAIR_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>

struct cpu_run {
	int cpu, prog_fd, err;
	unsigned int repeat;
	pthread_t thread;
};

static void *cpu_run_one(void *arg)
{
	struct cpu_run *r = arg;
	char pkt[64] = { 0 };
	cpu_set_t set;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt, .data_size_in = sizeof(pkt));

	CPU_ZERO(&set);
	CPU_SET(r->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		r->err = errno;
		return NULL;
	}
	opts.repeat = r->repeat;
	if (bpf_prog_test_run_opts(r->prog_fd, &opts))
		r->err = errno;
	return NULL;
}

/* The first two CPUs this process may run on, into @cpus: false (said,
 * as @who) if there are fewer. */
static bool cpu_pair_find(int cpus[2], const char *who)
{
	cpu_set_t allowed;
	int n = 0;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return false;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &allowed))
			cpus[n++] = c;
	if (n < 2)
		fprintf(stderr, "%s: needs two CPUs to run on\n", who);
	return n == 2;
}

/* Run @prog_fd @repeat times on each of @cpus at once; 0, or -1 (said). */
static int cpu_pair_run(int prog_fd, const int cpus[2], unsigned int repeat, const char *who)
{
	struct cpu_run r[2];

	for (int c = 0; c < 2; c++) {
		r[c] = (struct cpu_run){ .cpu = cpus[c], .repeat = repeat, .prog_fd = prog_fd };
		if (pthread_create(&r[c].thread, NULL, cpu_run_one, &r[c])) {
			fprintf(stderr, "%s: no thread\n", who);
			return -1;
		}
	}
	for (int c = 0; c < 2; c++)
		pthread_join(r[c].thread, NULL);
	for (int c = 0; c < 2; c++)
		if (r[c].err) {
			fprintf(stderr, "%s: CPU %d: %s\n", who, r[c].cpu, strerror(r[c].err));
			return -1;
		}
	return 0;
}

#endif /* TESTS_CPU_PAIR_H */
