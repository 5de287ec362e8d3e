// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "diag.h"
#include "drain.h"

static bool gated;

/* The gates need each of their adds to be a full barrier. With fetching
 * atomics they are, on every arch; the add without fetch of the programs
 * built without BPF atomics is one on x86 (a locked add) but not on arm64
 * (STADD, or an exclusive-store loop), where those wait for RCU. */
#if defined(__x86_64__) || defined(__i386__)
#define PLAIN_ADD_IS_BARRIER true
#else
#define PLAIN_ADD_IS_BARRIER false
#endif

bool drain_choose(double interval, bool fetch_atomics)
{
	gated = interval > 0 && interval < DRAIN_GATED_BELOW &&
		(fetch_atomics || PLAIN_ADD_IS_BARRIER);
	return gated;
}

/* Updating an ARRAY_OF_MAPS returns only after synchronize_rcu(): every
 * program that was running (they run under RCU) has finished. */
static int sync_map_create(struct drain *d)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);

	d->sync_inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "drain_inner", 4, 4, 1, NULL);
	if (d->sync_inner < 0)
		return -errno;
	opts.inner_map_fd = d->sync_inner;
	d->sync_outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "drain_sync", 4, 4, 1, &opts);
	return d->sync_outer < 0 ? -errno : 0;
}

static int wait_for_rcu(struct drain *d)
{
	__u32 zero = 0;

	return bpf_map_update_elem(d->sync_outer, &zero, &d->sync_inner, BPF_ANY) ? -errno : 0;
}

/* A program between its enter and leave runs a few hundred ns; one
 * preempted there (PREEMPT_RT) a time slice. Seconds is a bug: a program
 * path that entered and never left. */
#define GATE_SPINS 1000
#define GATE_TIMEOUT_NS (2 * 1000000000ULL)

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* Wait until, on every CPU, the programs that entered buffer @old have
 * left it (bpf/interval.bpf.h): no RCU grace period, only a few loads
 * when nothing runs (short intervals: the programs pay for the gates). Leave is read before enter: equal counts then mean
 * that every program counted in enter had left. */
static int wait_for_gates(struct drain *d, __u32 old)
{
	__u64 since = 0;

	for (int c = 0; c < d->ncpus; c++) {
		const struct interval_gate *g = &d->gates[c];

		for (unsigned int spins = 0;; spins++) {
			__u64 left = __atomic_load_n(&g->leave[old], __ATOMIC_SEQ_CST);

			if (__atomic_load_n(&g->enter[old], __ATOMIC_SEQ_CST) == left)
				break;
			if (spins < GATE_SPINS)
				continue;
			if (!since)
				since = mono_ns();
			else if (mono_ns() - since > GATE_TIMEOUT_NS)
				return -ETIMEDOUT;
			sched_yield();
		}
	}
	return 0;
}

/* Adds given up by programs since the last report (two flips under them). */
static __u64 gate_missed(struct drain *d)
{
	__u64 sum = 0, fresh;

	for (int c = 0; d->gates && c < d->ncpus; c++)
		sum += __atomic_load_n(&d->gates[c].missed, __ATOMIC_RELAXED);
	fresh = sum - d->missed;
	d->missed = sum;
	return fresh;
}

static int gates_map(struct drain *d, int gates_fd)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)d->ncpus * sizeof(struct interval_gate);
	void *p;

	len = (len + (size_t)page - 1) / (size_t)page * (size_t)page;
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, gates_fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	d->gates = p;
	d->gates_len = len;
	return 0;
}

int drain_init(struct drain *d, int intervals_fd, int gates_fd, __u32 *cur, struct keyed_hist *keyed)
{
	d->intervals_fd = intervals_fd;
	d->cur = cur;
	d->keyed = keyed;
	d->gates = NULL;
	d->missed = 0;
	d->sync_outer = d->sync_inner = -1;
	d->ncpus = libbpf_num_possible_cpus();
	if (d->ncpus <= 0) {
		d->ncpus = 0;
		return -EINVAL;
	}
	d->percpu = calloc((size_t)d->ncpus, sizeof(*d->percpu));
	if (!d->percpu)
		return -ENOMEM;
	return gated ? gates_map(d, gates_fd) : sync_map_create(d);
}

/* Add one CPU's share of an interval into @out. */
static void interval_merge(struct hist_interval *out, const struct hist_interval *cpu)
{
	hist_merge(&out->hist, &cpu->hist);
	out->lost_keys += cpu->lost_keys;
	out->unmatched += cpu->unmatched;
	out->missed_ends += cpu->missed_ends;
}

int drain_setup(struct drain *d, int intervals_fd, int gates_fd, __u32 *cur, struct keyed_hist *keyed,
		struct bpf_map *slot, struct bpf_map *a, struct bpf_map *b)
{
	int err = slot ? keyed_hist_init(keyed, slot, a, b) : 0;

	if (!err)
		err = drain_init(d, intervals_fd, gates_fd, cur, slot ? keyed : NULL);
	if (err)
		diag_error("cannot set up the interval maps: %s", strerror(-err));
	return err;
}

int drain_interval(struct drain *d, struct hist_interval *out, struct keyed_snapshot *snap)
{
	__u32 old = __atomic_load_n(d->cur, __ATOMIC_RELAXED) & 1;
	__u64 missed;
	int err;

	if (snap)
		memset(snap, 0, sizeof(*snap));
	memset(out, 0, sizeof(*out));
	/* seq_cst: the flip is seen by every program that enters after
	 * the gates are read below (Dekker, bpf/interval.bpf.h). */
	__atomic_store_n(d->cur, old ^ 1, __ATOMIC_SEQ_CST);
	err = d->gates ? wait_for_gates(d, old) : wait_for_rcu(d);
	if (err)
		return err;
	if (d->keyed)
		keyed_hist_swap(d->keyed);
	if (bpf_map_lookup_elem(d->intervals_fd, &old, d->percpu))
		return -errno;
	for (int i = 0; i < d->ncpus; i++)
		interval_merge(out, &d->percpu[i]);
	if (d->start_missed) {
		__u64 now = __atomic_load_n(d->start_missed, __ATOMIC_RELAXED);

		out->missed_ends += now - d->start_missed_seen;
		d->start_missed_seen = now;
	}
	if ((missed = gate_missed(d)))
		/* Not a full map: said on its own line, in every mode. */
		diag_error("%llu events not counted: a program was held up across two "
			   "reports (bpf/interval.bpf.h)", (unsigned long long)missed);
	memset(d->percpu, 0, (size_t)d->ncpus * sizeof(*d->percpu));
	if (bpf_map_update_elem(d->intervals_fd, &old, d->percpu, BPF_ANY))
		return -errno;
	return d->keyed && snap ? keyed_hist_read(d->keyed, snap) : 0;
}

void drain_close(struct drain *d)
{
	if (!d->ncpus)
		return;		/* never set up */
	free(d->percpu);
	d->percpu = NULL;
	if (d->gates)
		munmap((void *)d->gates, d->gates_len);
	d->gates = NULL;
	if (d->sync_outer >= 0)
		close(d->sync_outer);
	if (d->sync_inner >= 0)
		close(d->sync_inner);
	d->sync_outer = d->sync_inner = -1;
}
