// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpf/inflight.bpf.h's table when two CPUs take and end slots at once,
 * for the tests: each run of op() starts an operation under the next of
 * its CPU's KEYS keys, marks its slot as its own, and ends it (so each
 * CPU has one in flight at most: nothing is evicted). Its slot must stay
 * its own from inflight_get() to inflight_end(): a scan on the other CPU
 * must never take it meanwhile, even while it is being set up. More keys
 * than slots: the two CPUs' keys share every window, and ended slots are
 * taken over by other keys all the time.
 * tests/tools/inflight_race.c checks the counts.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
/* A slot's set-up made longer (a few helper calls), for the other CPU's
 * scans to land in it often. */
#define INFLIGHT_TAKE_PAUSE()					\
	do {								\
		for (int i_ = 0; i_ < 4; i_++)				\
			bpf_ktime_get_ns();				\
	} while (0)
#include "inflight.bpf.h"
#include "inflight_race.h"

char LICENSE[] SEC("license") = "GPL";

#define SLOTS 16
#define KEYS 64		/* each CPU's, in turn: more than the slots */

_Static_assert(__builtin_offsetof(struct race_entry, op) == sizeof(struct inflight_head),
	       "race_entry must begin with an inflight_head");
INFLIGHT_MAP(table, struct race_entry, SLOTS);

__u64 runs SEC(".bss");
__u64 taken SEC(".bss");	/* slots taken (created) */
__u64 evicted SEC(".bss");
__u64 no_slot SEC(".bss");	/* every claim lost a race */
__u64 stolen SEC(".bss");	/* the slot was another's before its owner ended it */
__u64 end_failed SEC(".bss");	/* inflight_end() found the slot gone */
__u64 unclean SEC(".bss");	/* a slot taken, found not set up */

SEC("tc")
int op(struct __sk_buff *skb)
{
	__u64 n = __sync_fetch_and_add(&runs, 1) + 1;
	__u64 cpu = bpf_get_smp_processor_id();
	/* shaped as struct addresses in the kernel's direct map are (the
	 * table's hash spreads those; bit 0 is the table's) */
	__u64 key = 0xffff888000000000ULL | cpu << 30 | (n % KEYS + 1) << 12;
	struct race_entry *e;
	bool created;

	e = (struct race_entry *)inflight_get(&table, SLOTS, key, n, &table_zero, sizeof(*e), &evicted,
					 &created);
	if (!e) {
		__sync_fetch_and_add(&no_slot, 1);
		return 0;
	}
	if (created) {
		__sync_fetch_and_add(&taken, 1);
		if (e->op || e->unset || e->born != n)
			__sync_fetch_and_add(&unclean, 1);
	}
	e->op = n;
	e->unset = 1;
	if (*(volatile __u64 *)&e->key != key || *(volatile __u64 *)&e->op != n)
		__sync_fetch_and_add(&stolen, 1);
	e->unset = 0;
	if (!inflight_end((struct inflight_head *)e, key))
		__sync_fetch_and_add(&end_failed, 1);
	return 0;
}
