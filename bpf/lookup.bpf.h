/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A preallocated map's value for a key, made from a zeroed one the first
 * time: the one pattern of the per-key histograms (keyed.bpf.h), tcprcv's
 * arrival rings and the in-flight table on kernels without BPF atomics
 * (inflight.bpf.h).
 */
#ifndef LOOKUP_BPF_H
#define LOOKUP_BPF_H

/* @map's value for *@key, made from *@zero if it has none (*@created
 * then); another CPU's, if it made it meanwhile (-EEXIST); NULL when the
 * map is full. */
static __always_inline void *lookup_or_create(void *map, const void *key, const void *zero,
					      bool *created)
{
	void *v = bpf_map_lookup_elem(map, key);

	*created = false;
	if (v)
		return v;
	*created = !bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

#endif /* LOOKUP_BPF_H */
