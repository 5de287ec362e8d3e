/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Log-linear histogram layout, shared by the BPF programs and user space.
 *
 * Values below HIST_SUB are counted exactly. Above, every power of two
 * [2^k, 2^(k+1)) is split into HIST_SUB equal sub-buckets, so a bucket is
 * at most 1/HIST_SUB of its lower bound wide: percentiles read from it are
 * off by less than 25% (HIST_SUB_BITS = 2) of the true value, usually far
 * less after interpolation. Buckets count raw values: nanoseconds for
 * latencies, whatever the display unit (so the 25% holds below one
 * microsecond too), bytes for sizes. Every bucket nests inside one
 * power-of-two row, so the classic log2 table is rendered exactly (in
 * microseconds and milliseconds, see log2_row() in common/hist.c).
 */
#ifndef HIST_LAYOUT_H
#define HIST_LAYOUT_H

#define HIST_SUB_BITS 2
#define HIST_SUB (1U << HIST_SUB_BITS)
#define HIST_BUCKETS (HIST_SUB * (64 - HIST_SUB_BITS + 1))

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* The unit values are shown in; the kernel buckets raw values whatever it is. */
enum hist_unit {
	UNIT_NSECS,
	UNIT_USECS,
	UNIT_MSECS,
	UNIT_BYTES,	/* sizes, not latencies (biolat --size) */
};

/* One histogram as the kernel fills it and user space reads it. Buckets,
 * sum, max and min all keep the raw value (nanoseconds for latencies), so
 * that no percentile, average or maximum is truncated to the unit. */
struct hist {
	__u64 buckets[HIST_BUCKETS];
	__u64 sum;	/* of all raw values, for the average */
	__u64 max;	/* exact largest raw value */
	__u64 min_inv;	/* ~(exact smallest raw value): 0 while empty, updated like max */
	__u64 errors;	/* failed operations, counted apart from the latencies */
	__u64 races;	/* keyed: adds whose max or min lost RAISE_TRIES compare-and-
			 * swaps in a row to other CPUs (bpf/hist.bpf.h), so max or
			 * min may be short of that add's value; almost always 0 */
};

/* One interval of a tool's aggregates, double-buffered in .bss: programs
 * add to intervals[interval_cur & 1]; user space flips interval_cur, waits
 * until no program can still hold the old buffer, then reads and zeroes
 * it. So a count, its sum, its maximum and the counters below always
 * belong to the same interval. */
struct hist_interval {
	struct hist hist;	/* the tool's single histogram, if it has one */
	__u64 lost_keys;	/* keyed histograms: adds that found the per-key map full */
	__u64 unmatched;	/* ends with no recorded start (in flight at attach, or evicted) */
	__u64 missed_ends;	/* operations whose end no program saw (found when
				 * the same object starts again): not counted */
};

/* One CPU's passes into the interval buffers (bpf/interval.bpf.h): a
 * program counts entering and leaving buffer i; user space, after
 * flipping to the other buffer, waits on each CPU until the retired
 * buffer's two counts agree. Counters, not a flag: programs on one CPU
 * can nest or (PREEMPT_RT) interleave. One cache line per CPU. */
struct interval_gate {
	__u64 leave[2];
	__u64 enter[2];
	__u64 missed;		/* adds given up: the buffer flipped twice under them */
	__u64 pad[3];
};

/* floor(log2(v)) for v > 0, without a branch: the top bit smeared down,
 * then the bits set counted. Latencies sit at the edges of powers of two
 * (a read of /dev/zero takes 250-350 ns), where a compare at each halving
 * is a branch mispredicted every other read. */
static __always_inline __u32 hist_log2(__u64 v)
{
	v |= v >> 1;
	v |= v >> 2;
	v |= v >> 4;
	v |= v >> 8;
	v |= v >> 16;
	v |= v >> 32;
	v -= (v >> 1) & 0x5555555555555555ULL;
	v = (v & 0x3333333333333333ULL) + ((v >> 2) & 0x3333333333333333ULL);
	v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (__u32)((v * 0x0101010101010101ULL) >> 56) - 1;
}

static __always_inline __u32 hist_bucket(__u64 v)
{
	__u32 msb;

	if (v < HIST_SUB)
		return (__u32)v;
	msb = hist_log2(v);
	return HIST_SUB + (msb - HIST_SUB_BITS) * HIST_SUB +
	       (__u32)((v >> (msb - HIST_SUB_BITS)) & (HIST_SUB - 1));
}

#endif /* HIST_LAYOUT_H */
