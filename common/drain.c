// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "diag.h"
#include "drain.h"

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

static int wait_for_programs(struct drain *d)
{
	__u32 zero = 0;

	return bpf_map_update_elem(d->sync_outer, &zero, &d->sync_inner, BPF_ANY) ? -errno : 0;
}

int drain_init(struct drain *d, int intervals_fd, __u32 *cur, struct keyed_hist *keyed)
{
	d->intervals_fd = intervals_fd;
	d->cur = cur;
	d->keyed = keyed;
	d->sync_outer = d->sync_inner = -1;
	d->ncpus = libbpf_num_possible_cpus();
	if (d->ncpus <= 0) {
		d->ncpus = 0;
		return -EINVAL;
	}
	d->percpu = calloc((size_t)d->ncpus, sizeof(*d->percpu));
	if (!d->percpu)
		return -ENOMEM;
	return keyed ? 0 : sync_map_create(d);
}

/* Add one CPU's share of an interval into @out. */
static void interval_merge(struct hist_interval *out, const struct hist_interval *cpu)
{
	hist_merge(&out->hist, &cpu->hist);
	out->lost_keys += cpu->lost_keys;
	out->unmatched += cpu->unmatched;
	out->missed_ends += cpu->missed_ends;
}

int drain_setup(struct drain *d, int intervals_fd, __u32 *cur, struct keyed_hist *keyed,
		struct bpf_map *slot, struct bpf_map *a, struct bpf_map *b)
{
	int err = slot ? keyed_hist_init(keyed, slot, a, b) : 0;

	if (!err)
		err = drain_init(d, intervals_fd, cur, slot ? keyed : NULL);
	if (err)
		diag_error("cannot set up the interval maps: %s", strerror(-err));
	return err;
}

int drain_interval(struct drain *d, struct hist_interval *out, struct keyed_snapshot *snap)
{
	__u32 old = __atomic_load_n(d->cur, __ATOMIC_RELAXED) & 1;
	int err;

	if (snap)
		memset(snap, 0, sizeof(*snap));
	memset(out, 0, sizeof(*out));
	__atomic_store_n(d->cur, old ^ 1, __ATOMIC_SEQ_CST);
	err = d->keyed ? keyed_hist_swap(d->keyed) : wait_for_programs(d);
	if (err) {
		__atomic_store_n(d->cur, old, __ATOMIC_SEQ_CST);
		return err;
	}
	if (bpf_map_lookup_elem(d->intervals_fd, &old, d->percpu))
		return -errno;
	for (int i = 0; i < d->ncpus; i++)
		interval_merge(out, &d->percpu[i]);
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
	if (d->sync_outer >= 0)
		close(d->sync_outer);
	if (d->sync_inner >= 0)
		close(d->sync_inner);
	d->sync_outer = d->sync_inner = -1;
}
