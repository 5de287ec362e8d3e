// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
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

int drain_init(struct drain *d, struct hist_interval *bufs, __u32 *cur, struct keyed_hist *keyed)
{
	d->bufs = bufs;
	d->cur = cur;
	d->keyed = keyed;
	d->sync_outer = d->sync_inner = -1;
	return keyed ? 0 : sync_map_create(d);
}

int drain_interval(struct drain *d, struct hist_interval *out, struct keyed_snapshot *snap)
{
	__u32 old = __atomic_load_n(d->cur, __ATOMIC_RELAXED) & 1;
	int err;

	if (snap)
		memset(snap, 0, sizeof(*snap));
	__atomic_store_n(d->cur, old ^ 1, __ATOMIC_SEQ_CST);
	err = d->keyed ? keyed_hist_swap(d->keyed) : wait_for_programs(d);
	if (err) {
		__atomic_store_n(d->cur, old, __ATOMIC_SEQ_CST);
		return err;
	}
	memcpy(out, &d->bufs[old], sizeof(*out));
	memset(&d->bufs[old], 0, sizeof(d->bufs[old]));
	return d->keyed && snap ? keyed_hist_read(d->keyed, snap) : 0;
}

void drain_close(struct drain *d)
{
	if (d->sync_outer >= 0)
		close(d->sync_outer);
	if (d->sync_inner >= 0)
		close(d->sync_inner);
	d->sync_outer = d->sync_inner = -1;
}
