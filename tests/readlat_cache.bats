#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# readlat -B against bioload --cached: N reads of a loop device (or of a
# file on it) that must come from the disk, then the same N reads served
# from the page cache; each must land in its own histogram, exactly.

load helpers
bats_require_minimum_version 1.5.0

BIOLOAD=$BUILD/tests/bioload
READS=30

setup() { common_setup; }

# A mounted filesystem keeps its loop device busy: kill the workload that
# holds a file open on it, then unmount, before common_teardown detaches it.
teardown() {
	if [ -n "${MNT:-}" ]; then
		[ -z "${BIO_JOB:-}" ] || { kill -KILL "$BIO_JOB" 2>/dev/null; wait "$BIO_JOB" 2>/dev/null; } || true
		umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null || true
	fi
	common_teardown
}

# A 64 MiB loop device full of data (cold reads must reach it).
data_loop() {
	loop_setup 64
	dd if=/dev/urandom of="$LOOP" bs=1M count=64 oflag=direct status=none
}

# start_bio [bioload options]: bioload --cached parked before its reads;
# sets BIO_PID and BIO_JOB.
start_bio() {
	"$BIOLOAD" --cached --go "$T/go" --hold "$T/hold" "$@" > "$T/bio.out" 2>&1 &
	BIO_JOB=$!
	JOBS+=($!)
	wait_for "$T/bio.out" '^pid='
	BIO_PID=$(sed -nE 's/^pid=([0-9]+).*/\1/p' "$T/bio.out")
}

# run_bio: release bioload, let it finish both passes and exit cleanly.
run_bio() {
	go
	wait_for "$T/bio.out" '^done'
	finish
	wait_exit "$BIO_JOB"
}

# The count and avg of the histogram of one source, from the JSON output.
src() { jq -s --arg s "$1" "map(select(.key.source == \$s) | .$2) | add" "$T/out"; }

# Both sources, exactly N reads each, and the disk reads slower on average
# (a single disk read may well be faster than a single cache read: only the
# averages are compared).
exact_split() {
	local n=$1
	echo "cache count $(src cache count) avg $(src cache avg); disk count $(src disk count) avg $(src disk avg)"
	[ "$(src cache count)" -eq "$n" ]
	[ "$(src disk count)" -eq "$n" ]
	awk -v d="$(src disk avg)" -v c="$(src cache avg)" 'BEGIN { exit !(d > c) }'
}

# The ids of the BPF programs PID holds open, and their names (from
# /proc: bpftool here may not show which process holds what).
tool_prog_ids() {
	local f
	for f in /proc/"$1"/fdinfo/*; do
		sed -nE 's/^prog_id:[[:space:]]+([0-9]+)$/\1/p' "$f" 2>/dev/null
	done | sort -un
}
tool_progs() {
	local id
	for id in $(tool_prog_ids "$1"); do
		bpftool -j prog show id "$id" | jq -r .name
	done | sort -u
}

@test "-B: the cold reads are disk, the same reads again are cache, exactly" {
	data_loop
	start_bio --dev "$LOOP" --reads $READS --comm rlb_dev
	start_tool readlat -B -j -n rlb_dev
	run_bio
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	cat "$T/out"
	# one object per source, cache first, keyed by the source alone
	[ "$(jq -c -s 'map(.key)' "$T/out")" = '[{"source":"cache"},{"source":"disk"}]' ]
	exact_split $READS
	jout '([.buckets[].count] | add) == .count'
}

@test "-P -B: one process, its disk and cache reads apart" {
	data_loop
	start_bio --dev "$LOOP" --reads $READS --comm rlb_per
	start_tool readlat -P -B -j -n rlb_per
	run_bio
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	cat "$T/out"
	jq -e -s 'map(.key | keys) | length == 2 and all(. == ["comm","pid","source"])' "$T/out"
	jq -e -s --argjson p "$BIO_PID" 'all(.key.pid == $p and .key.comm == "rlb_per")' "$T/out"
	exact_split $READS
}

# It mounts a file system where every test's mount namespace sees it.
# bats test_tags=serial
@test "-B on a file of an ext4 filesystem: exact counts again" {
	command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4 (e2fsprogs)"
	loop_setup 128
	mkfs.ext4 -q -F "$LOOP"
	MNT=$T/mnt
	mkdir -p "$MNT"
	mount -t ext4 "$LOOP" "$MNT" || { MNT=; skip "cannot mount ext4 here"; }
	# 40 reads 1 MiB apart: a 40 MiB file, written and on the disk
	dd if=/dev/urandom of="$MNT/data" bs=1M count=40 status=none
	sync "$MNT/data"
	start_bio --dev "$MNT/data" --reads 40 --comm rlb_ext4
	start_tool readlat -B -j -n rlb_ext4
	run_bio
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	cat "$T/out"
	exact_split 40
}

@test "-B: reads of /dev/zero and of a pipe are all cache" {
	start_load A --source zero --reads 500 --comm rlb_zero
	start_tool readlat -B -j -n rlb_zero
	go
	wait_loads A
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	[ "$(src cache count)" -eq 500 ]
	[ "$(src disk count)" -eq 0 ]

	# a pipe read sleeps for its data, but not waiting for I/O
	rm -f "$T/go" "$T/hold"
	start_load B --reads 50 --delay-us 2000 --comm rlb_pipe
	start_tool readlat -B -j -n rlb_pipe
	go
	wait_loads B
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	cat "$T/out"
	[ "$(src cache count)" -eq 50 ]
	[ "$(src disk count)" -eq 0 ]
	jout 'select(.key.source == "cache") | .min >= 2000'
}

@test "-B: both sources every interval, even idle, cache first (JSON and text)" {
	run --separate-stderr timeout 10 "$BUILD/readlat" -B -j -n rlb_nobody 0.2 3
	[ "$status" -eq 0 ]
	[ "$(jq -c -s 'map([.key.source, .count])' <<<"$output")" = \
		'[["cache",0],["disk",0],["cache",0],["disk",0],["cache",0],["disk",0]]' ]
	run --separate-stderr timeout 10 "$BUILD/readlat" -B -n rlb_nobody 0.2 2
	[ "$status" -eq 0 ]
	[ "$(grep -c '^count 0, errors 0$' <<<"$output")" -eq 4 ]
	[ "$(grep -E '^source' <<<"$output" | tr '\n' ,)" = 'source = cache,source = disk,source = cache,source = disk,' ]
}

# As -P alone does (readlat_truth.bats): an idle interval is not silent.
@test "-P -B: an idle interval still prints, in text and JSON" {
	run --separate-stderr timeout 10 "$BUILD/readlat" -P -B -j -n rlb_nobody 0.2 2
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -s 'map(.time) | unique | length' <<<"$output")" -eq 2 ]
	jq -e -s 'all(.count == 0)' <<<"$output"
	run --separate-stderr timeout 10 "$BUILD/readlat" -P -B -n rlb_nobody 0.2 2
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^count 0, errors 0$' <<<"$output")" -ge 2 ]
}

@test "-B with -F or --slower: exit 2, one line" {
	local args stderr
	for args in "-B -F" "-F -B" "--by-cache --per-fd" "-B --slower 10" "--slower 10 -B"; do
		# shellcheck disable=SC2086 # the options, one word each
		run --separate-stderr timeout 10 "$BUILD/readlat" $args -n rlb_nobody
		echo "readlat $args: status $status, stderr: $stderr"
		[ "$status" -eq 2 ]
		[ -z "$output" ]
		[ "$(wc -l <<<"$stderr")" -eq 1 ]
		[[ "$stderr" == *"-B cannot be combined with -F or --slower"* ]]
	done
}

@test "the -B programs are loaded with -B only" {
	start_tool readlat -n rlb_nobody
	run tool_progs "$TOOL_JOB"
	echo "without -B: $(tr '\n' ' ' <<<"$output")"
	grep -qx exit_read <<<"$output"
	run ! grep -xE 'bio_queue|sched_switch' <<<"$output"
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]

	start_tool readlat -B -n rlb_nobody
	run tool_progs "$TOOL_JOB"
	echo "with -B: $(tr '\n' ' ' <<<"$output")"
	grep -qx exit_read <<<"$output"
	grep -qx bio_queue <<<"$output"
	grep -qx sched_switch <<<"$output"
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
}

@test "nothing of readlat -B stays loaded after exit, whatever ended it" {
	local sig
	for sig in INT TERM KILL; do
		start_tool readlat -B -P -n rlb_nobody
		bpf_ids_of "$TOOL_JOB" "$T/ids"
		grep -q '^prog_id' "$T/ids"
		grep -q '^map_id' "$T/ids"
		stop_tool "$sig"
		[ "$sig" = KILL ] || [ "$TOOL_STATUS" -eq 0 ]
		bpf_ids_gone "$T/ids"
	done

	# long enough to list what it holds before it ends by itself
	start_tool readlat -B --duration 2
	bpf_ids_of "$TOOL_JOB" "$T/ids"
	tool_wait
	[ "$TOOL_STATUS" -eq 0 ]
	bpf_ids_gone "$T/ids"
}
