#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# What a tool keeps per thread goes when the thread goes, also a thread
# killed in the middle of a syscall (SIGKILL: its exit saw a restart code,
# no signal_deliver follows). Without kernel BTF, start times wait in an
# LRU hash by thread id (bpf/start.bpf.h), which would otherwise keep
# such a record until evicted, crowding out live starts (issue #20).

load helpers

KILLED=200	# threads killed in their call, per run

setup() { common_setup; }
teardown() { common_teardown; }

# start_nobtf TOOL [args]: start_tool, with /sys/kernel/btf hidden (a
# mount namespace of its own): the tool falls back to the LRU hash.
start_nobtf() {
	local tool=$1
	shift
	rm -f "$T/out" "$T/err"
	unshare -m sh -c "mount -t tmpfs none /sys/kernel/btf && exec '$BUILD/$tool' $*" \
		> "$T/out" 2> "$T/err" &
	TOOL_JOB=$!	# unshare and sh exec: the tool itself
	watchdog "$TOOL_JOB"
	wait_for "$T/err" 'Hit Ctrl-C to end'
}

# kill_blocked CALL [MAP]: $KILLED threads of one process blocked in CALL
# (read of a pipe, openat of a FIFO), then SIGKILLed and reaped; their
# thread ids in $T/tids, one a line. With MAP, each has a start record in
# it while blocked (else what follows would pass with nothing to reclaim).
kill_blocked() {
	"$BUILD/tests/killload" --threads "$KILLED" --call "$1" --dir "$T" > "$T/kill.out" 2>&1 &
	local job=$!
	JOBS+=("$job")
	wait_for "$T/kill.out" '^pid='
	sed -nE 's/^pid=[0-9]+ tids=//p' "$T/kill.out" | tr , '\n' > "$T/tids"
	[ "$(wc -l < "$T/tids")" -eq "$KILLED" ]
	[ -z "${2:-}" ] || retry tids_all "$2"
	kill -KILL "$job"
	wait "$job" || true
}

# tool_map NAME: the id of the tool's map NAME, among the ids it holds
# (bpf_ids_of: never a name looked up across the system).
tool_map() {
	local id
	bpf_ids_of "$TOOL_JOB" "$T/ids"
	for id in $(awk '$1 == "map_id" { print $2 }' "$T/ids"); do
		[ "$(bpftool -j map show id "$id" | jq -r .name)" != "$1" ] || { echo "$id"; return 0; }
	done
	echo "the tool holds no map $1" >&2
	return 1
}

# tids_left MAP: how many of $T/tids are keys of hash MAP (by id).
tids_left() {
	bpftool -j map dump id "$1" |
		jq -r '.[] | .formatted.key // (.key | reverse | map(ltrimstr("0x")) | join("") | "0x" + .)' |
		while read -r k; do echo $((k)); done | grep -cxFf "$T/tids" || true
}

# zero_within WHAT CMD...: CMD prints 0 within 2 s (a thread's exit,
# after its killer's waitpid, is its own: polled); else says WHAT, with
# the last number.
zero_within() {
	local n what=$1 end=$((${EPOCHREALTIME/./} + 2000000))
	shift
	while :; do
		n=$("$@") || return 1
		[ "$n" -ne 0 ] || return 0
		[ "${EPOCHREALTIME/./}" -lt "$end" ] || break
		nap 0.05
	done
	echo "$what: $n, 2 s after the killed threads exited" >&2
	return 1
}

# tids_all MAP: every one of $T/tids is a key of MAP.
tids_all() { [ "$(tids_left "$1")" -eq "$KILLED" ]; }

# no_tids_left MAP: none of $T/tids is a key of MAP.
no_tids_left() { zero_within "killed threads (of $KILLED) with a start record" tids_left "$1"; }

# restarts_pending: opensnoop's start_restarts_pending (its .bss: the
# kernel's name is libbpf's, the object's first 8 bytes and the section), now.
restarts_pending() {
	local id
	id=$(tool_map opensnoo.bss) || return 1
	bpftool -j map dump id "$id" |
		jq -e '.[0].formatted.value[".bss"][] | select(has("start_restarts_pending")) |
			.start_restarts_pending'
}

# pending_zero: start_restarts_pending back to 0.
pending_zero() { zero_within start_restarts_pending restarts_pending; }

@test "readlat without BTF: the start records of threads killed in read go with them" {
	start_nobtf readlat -v 1
	grep -q 'start-time store: fallback (LRU hash by thread id' "$T/err"
	grep -q 'probe sched_process_exit: ok' "$T/err"
	map=$(tool_map start_tid)
	kill_blocked read "$map"
	no_tids_left "$map"
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
}

@test "opensnoop without BTF: the start records of threads killed in openat go with them" {
	start_nobtf opensnoop -v -L 1
	grep -q 'start-time store: fallback (LRU hash by thread id' "$T/err"
	map=$(tool_map start_tid)
	kill_blocked openat "$map"
	no_tids_left "$map"
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
}

@test "opensnoop -C without BTF: the restart marks of threads killed in openat go, and their count" {
	start_nobtf opensnoop -C 1
	map=$(tool_map start_tid)
	kill_blocked openat
	no_tids_left "$map"
	pending_zero
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
}

@test "opensnoop -C with task storage: the count of restart marks drops what killed threads left" {
	start_tool opensnoop -v -C 1
	grep -q 'start-time store: ok (task storage)' "$T/err"
	grep -q 'probe sched_process_exit: ok' "$T/err"
	kill_blocked openat
	pending_zero
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
}

@test "with task storage the exit program is left out where nothing needs it" {
	start_tool readlat -v 1
	grep -q 'start-time store: ok (task storage)' "$T/err"
	refute grep -q 'probe sched_process_exit: ok' "$T/err"
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
}
