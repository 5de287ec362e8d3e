#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# readlat -B against bioload --cached: N reads of a loop device (or of a
# file on it) that must come from the disk, then the same N reads served
# from the page cache; each must land in its own histogram, exactly.

load helpers
bats_require_minimum_version 1.5.0

# Only names that no other tool's object uses (biolat and opensnoop have
# hists_a, hists_b, start_task, signal_deliver...). Other readlat runs may
# go on meanwhile: orphaned() ignores what a live process holds, and what
# this suite's own readlat held is checked exactly, by id.
READLAT_PROGS='enter_read|exit_read|enter_pread64|exit_pread64|enter_readv|exit_readv|enter_preadv|exit_preadv|enter_preadv2|exit_preadv2|bio_queue|sched_switch'
READLAT_MAPS='readlat_.rodata|readlat_.bss'
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

# The ids of the BPF programs and maps PID holds open, and the names of
# those programs (from /proc: bpftool here may not show which process
# holds what).
tool_prog_ids() {
	local f
	for f in /proc/"$1"/fdinfo/*; do
		sed -nE 's/^prog_id:[[:space:]]+([0-9]+)$/\1/p' "$f" 2>/dev/null
	done | sort -un
}
tool_map_ids() {
	local f
	for f in /proc/"$1"/fdinfo/*; do
		sed -nE 's/^map_id:[[:space:]]+([0-9]+)$/\1/p' "$f" 2>/dev/null
	done | sort -un
}
tool_progs() {
	local id
	for id in $(tool_prog_ids "$1"); do
		bpftool -j prog show id "$id" | jq -r .name
	done | sort -u
}

# orphaned PROGS MAPS: like leaked (helpers.bash), but only programs and
# maps that no process holds open (another readlat running is no leak),
# and still there half a second later (one exiting is being freed). Who
# holds what is read after the listing: a new object has its fd by then.
orphans_now() {
	local found held
	found=$( {
		bpftool -j prog show | jq -r --arg re "^($1)$" '.[] | select(.name | test($re)) | "prog \(.id) \(.name)"'
		bpftool -j map show | jq -r --arg re "^($2)$" '.[] | select(.name | test($re)) | "map \(.id) \(.name)"'
	} | sort)
	held=$(grep -hsE '^(prog|map)_id:' /proc/[0-9]*/fdinfo/* | awk '{ print $2 }' | sort -u | paste -sd,)
	awk -v held="$held" 'BEGIN { n = split(held, h, ","); for (i = 1; i <= n; i++) ok[h[i]] = 1 }
		NF && !ok[$2]' <<<"$found"
}
orphaned() {
	local first found
	first=$(orphans_now "$@")
	[ -n "$first" ] || return 1
	sleep 0.5
	found=$(comm -12 <(echo "$first") <(orphans_now "$@"))
	[ -n "$found" ] && echo "$found"
}

# ids_gone KIND ID...: none of these programs or maps exists any more.
ids_gone() {
	local kind=$1 id
	shift
	for id in "$@"; do
		if bpftool "$kind" show id "$id" >/dev/null 2>&1; then
			echo "$kind $id still loaded:" >&2
			bpftool "$kind" show id "$id" >&2
			return 1
		fi
	done
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
	local sig progs maps
	for sig in INT TERM KILL; do
		start_tool readlat -B -P -n rlb_nobody
		mapfile -t progs < <(tool_prog_ids "$TOOL_JOB")
		mapfile -t maps < <(tool_map_ids "$TOOL_JOB")
		[ "${#progs[@]}" -gt 0 ]
		[ "${#maps[@]}" -gt 0 ]
		kill "-$sig" "$TOOL_JOB"
		wait "$TOOL_JOB" || true
		# programs and maps are freed after the last reference: not at once
		for _ in $(seq 1 100); do
			ids_gone prog "${progs[@]}" 2>/dev/null && ids_gone map "${maps[@]}" 2>/dev/null && break
			sleep 0.05
		done
		ids_gone prog "${progs[@]}"
		ids_gone map "${maps[@]}"
		run orphaned "$READLAT_PROGS" "$READLAT_MAPS"
		echo "$output"
		[ "$status" -ne 0 ]
	done

	run timeout 10 "$BUILD/readlat" -B --duration 0.2
	[ "$status" -eq 0 ]
	run orphaned "$READLAT_PROGS" "$READLAT_MAPS"
	echo "$output"
	[ "$status" -ne 0 ]
}
