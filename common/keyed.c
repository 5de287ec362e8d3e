// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "filter.h"
#include "keyed.h"
#include "memcheck.h"

void keyed_unused(struct bpf_map *a, struct bpf_map *b)
{
	bpf_map__set_max_entries(a, 1);
	bpf_map__set_max_entries(b, 1);
}

struct slot_fill {
	int slot_fd;
	__u32 idx;
	int inner_fd;
	int err;
};

static void *slot_fill(void *arg)
{
	struct slot_fill *f = arg;

	if (bpf_map_update_elem(f->slot_fd, &f->idx, &f->inner_fd, BPF_ANY))
		f->err = -errno;
	return NULL;
}

int keyed_hist_init(struct keyed_hist *k, struct bpf_map *slot,
		    struct bpf_map *a, struct bpf_map *b)
{
	struct slot_fill first, second;
	bool threaded;
	pthread_t t;

	k->slot_fd = bpf_map__fd(slot);
	k->inner_fd[0] = bpf_map__fd(a);
	k->inner_fd[1] = bpf_map__fd(b);
	k->key_size = bpf_map__key_size(a);
	k->value_size = bpf_map__value_size(a);
	k->active = 0;
	/* Filled once, before any program runs: no report's update waits.
	 * Each update of a map of maps returns only after an RCU grace
	 * period (8-16 ms here), the kernel's promise that no program still
	 * sees the old value; the two are made at once, from two threads,
	 * so that start-up waits for one grace period, not two. */
	first = (struct slot_fill){ k->slot_fd, 0, k->inner_fd[0], 0 };
	second = (struct slot_fill){ k->slot_fd, 1, k->inner_fd[1], 0 };
	threaded = pthread_create(&t, NULL, slot_fill, &second) == 0;
	slot_fill(&first);
	if (threaded)
		pthread_join(t, NULL);
	else
		slot_fill(&second);
	return first.err ? first.err : second.err;
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

void keyed_hist_swap(struct keyed_hist *k)
{
	k->active = !k->active;
}

int keyed_lookup_batch(int fd, void *in_batch, void *out_batch, void *keys, size_t key_size,
		       void *values, size_t value_size, __u32 *count)
{
	int err = bpf_map_lookup_batch(fd, in_batch, out_batch, keys, values, count, NULL);

	/* ENOENT ends the walk with its last entries; an error before the
	 * walk (EINVAL) leaves *count as it was, not written. */
	if (err && errno != ENOENT)
		*count = 0;
	MEMCHECK_DEFINED(keys, *count * key_size);
	MEMCHECK_DEFINED(values, *count * value_size);
	return err;
}

int keyed_hist_read(struct keyed_hist *k, struct keyed_snapshot *s)
{
	int old = k->inner_fd[!k->active];
	unsigned char *prev;
	size_t cap = 0;
	int err = 0;

	memset(s, 0, sizeof(*s));
	s->key_size = k->key_size;
	s->value_size = k->value_size;
	/* The walk's previous key lives apart from s->keys: grow() may move
	 * those, and a pointer into them would then hand the kernel freed
	 * memory (EFAULT, the walk ends, the rest of the keys wait for a
	 * later report). */
	prev = malloc(s->key_size);
	if (!prev)
		return -ENOMEM;
	/* The retired map is quiescent: read it, then empty it. */
	for (bool first = true;; first = false) {
		unsigned char *key;

		if (s->n == cap && (err = grow(s, &cap)))
			break;
		key = s->keys + s->n * s->key_size;
		if (bpf_map_get_next_key(old, first ? NULL : prev, key)) {
			err = errno == ENOENT ? 0 : -errno;
			break;
		}
		memcpy(prev, key, s->key_size);
		if (bpf_map_lookup_elem(old, key, s->values + s->n * s->value_size) == 0)
			s->n++;
	}
	free(prev);
	if (err)
		return err;
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
	if (s->n)	/* order is NULL in a snapshot never read, or whose read failed */
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

int process_key_cmp(const struct process_key *a, const struct process_key *b)
{
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return memcmp(a->comm, b->comm, sizeof(a->comm));
}

void process_key_name(const struct process_key *k, char *comm, size_t len)
{
	snprintf(comm, len, "%.*s", FILTER_COMM_LEN, k->comm[0] ? k->comm : "?");
}
