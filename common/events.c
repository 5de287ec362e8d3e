// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <linux/bpf.h>
#include "events.h"

/* Returned by sample() when the step is over; never the callback's. */
#define STEP_OVER (-EALREADY)
/* A step's most, whatever the ring's size (opensnoop -b up to 1 GiB):
 * what a stop may still print is two steps, the report's and finish()'s. */
#define STEP_BYTES_MAX (256 * 1024)

static struct {
	struct ring_buffer *rb;
	ring_buffer_sample_fn cb;
	size_t size;		/* bytes of the ring */
	size_t step_max;	/* this step's most bytes */
	bool discarding;	/* records counted, not called back */
	size_t taken;		/* this step's, record headers included */
	long count;
	int cb_err;
} ring;

/* libbpf consumes a record before its callback is called: stopping the
 * step after this one loses nothing. */
static int sample(void *ctx, void *data, size_t size)
{
	int err = ring.discarding ? 0 : ring.cb(ctx, data, size);

	if (err < 0) {
		ring.cb_err = err;
		return err;
	}
	ring.count++;
	ring.taken += BPF_RINGBUF_HDR_SZ + size;
	return ring.taken >= ring.step_max ? STEP_OVER : 0;
}

struct ring_buffer *events_open(const struct bpf_map *map, ring_buffer_sample_fn cb)
{
	if (ring.rb) {
		errno = EBUSY;
		return NULL;
	}
	ring.cb = cb;
	ring.size = bpf_map__max_entries(map);
	ring.rb = ring_buffer__new(bpf_map__fd(map), sample, NULL, NULL);
	return ring.rb;
}

/* One step of at most @max bytes: the records taken, or a negative error. */
static long step(struct ring_buffer *rb, size_t max, bool discarding)
{
	int err;

	if (!rb || rb != ring.rb)
		return -EINVAL;
	ring.step_max = max;
	ring.discarding = discarding;
	ring.taken = 0;
	ring.count = 0;
	ring.cb_err = 0;
	err = ring_buffer__consume(rb);
	if (err < 0 && err != STEP_OVER)
		return ring.cb_err ? ring.cb_err : err;
	return ring.count;
}

int events_consume(struct ring_buffer *rb)
{
	return (int)step(rb, ring.size < STEP_BYTES_MAX ? ring.size : STEP_BYTES_MAX, false);
}

long events_finish(struct ring_buffer *rb)
{
	long left;

	events_consume(rb);
	left = step(rb, 2 * ring.size, true);
	return left < 0 ? 0 : left;
}

void events_close(struct ring_buffer *rb)
{
	if (!rb || rb != ring.rb)
		return;
	ring_buffer__free(rb);
	ring.rb = NULL;
}
