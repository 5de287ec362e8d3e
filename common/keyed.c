// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "filter.h"
#include "keyed.h"

void keyed_unused(struct bpf_map *a, struct bpf_map *b)
{
	bpf_map__set_max_entries(a, 1);
	bpf_map__set_max_entries(b, 1);
}

int keyed_hist_init(struct keyed_hist *k, struct bpf_map *slot,
		    struct bpf_map *a, struct bpf_map *b)
{
	__u32 zero = 0;

	k->slot_fd = bpf_map__fd(slot);
	k->inner_fd[0] = bpf_map__fd(a);
	k->inner_fd[1] = bpf_map__fd(b);
	k->key_size = bpf_map__key_size(a);
	k->value_size = bpf_map__value_size(a);
	k->active = 0;
	return bpf_map_update_elem(k->slot_fd, &zero, &k->inner_fd[0], BPF_ANY) ? -errno : 0;
}

static int grow(struct keyed_snapshot *s, size_t *cap)
{
	size_t ncap = *cap ? *cap * 2 : 64;
	unsigned char *keys = realloc(s->keys, ncap * s->key_size);
	unsigned char *values;

	if (!keys)
		return -ENOMEM;
	s->keys = keys;
	values = realloc(s->values, ncap * s->value_size);
	if (!values)
		return -ENOMEM;
	s->values = values;
	*cap = ncap;
	return 0;
}

int keyed_hist_swap(struct keyed_hist *k)
{
	int next = k->inner_fd[!k->active];
	__u32 zero = 0;

	if (bpf_map_update_elem(k->slot_fd, &zero, &next, BPF_ANY))
		return -errno;
	k->active = !k->active;
	return 0;
}

int keyed_hist_read(struct keyed_hist *k, struct keyed_snapshot *s)
{
	int old = k->inner_fd[!k->active];
	size_t cap = 0;
	void *key;
	int err;

	memset(s, 0, sizeof(*s));
	s->key_size = k->key_size;
	s->value_size = k->value_size;
	/* The retired map is quiescent: read it, then empty it. */
	key = NULL;
	for (;;) {
		if (s->n == cap && (err = grow(s, &cap)))
			return err;
		if (bpf_map_get_next_key(old, key, s->keys + s->n * s->key_size))
			break;
		key = s->keys + s->n * s->key_size;
		if (bpf_map_lookup_elem(old, key, s->values + s->n * s->value_size) == 0)
			s->n++;
	}
	for (size_t i = 0; i < s->n; i++)
		bpf_map_delete_elem(old, s->keys + i * s->key_size);
	s->order = calloc(s->n ? s->n : 1, sizeof(*s->order));
	if (!s->order)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		s->order[i] = i;
	return 0;
}

static const struct keyed_snapshot *sorting;
static int (*sorting_cmp)(const void *a, const void *b);

static int by_key(const void *a, const void *b)
{
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;

	return sorting_cmp(sorting->keys + ia * sorting->key_size,
			   sorting->keys + ib * sorting->key_size);
}

void keyed_sort(struct keyed_snapshot *s, int (*cmp)(const void *a, const void *b))
{
	sorting = s;
	sorting_cmp = cmp;
	qsort(s->order, s->n, sizeof(*s->order), by_key);
}

const void *keyed_key(const struct keyed_snapshot *s, size_t i)
{
	return s->keys + s->order[i] * s->key_size;
}

const void *keyed_value(const struct keyed_snapshot *s, size_t i)
{
	return s->values + s->order[i] * s->value_size;
}

void keyed_snapshot_free(struct keyed_snapshot *s)
{
	free(s->keys);
	free(s->values);
	free(s->order);
	memset(s, 0, sizeof(*s));
}

void keyed_process_name(int names_fd, __u32 pid, char *comm, size_t len)
{
	char name[FILTER_COMM_LEN] = {};

	if (bpf_map_lookup_elem(names_fd, &pid, name))
		snprintf(comm, len, "?");
	else
		snprintf(comm, len, "%.*s", FILTER_COMM_LEN, name);
}
