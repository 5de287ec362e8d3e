#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# A hostile environment, for every tool: few file descriptors, many
# instances at once, the traced process gone while the tool attaches,
# an output that cannot be written, tracefs unmounted, and a user with
# none, some or all of the README's capabilities. Each case gives what
# the README promises: a working run, or one line naming the cause and
# the right exit code.

load helpers
bats_require_minimum_version 1.5.0

TOOLS=(readlat opensnoop tcprcv biolat)

setup() { common_setup; }
teardown() { common_teardown; }

@test "RLIMIT_NOFILE 16: every tool says how many descriptors it needs, exit 1; with a higher hard limit it raises its own and runs" {
	local t
	for t in "${TOOLS[@]}"; do
		run --separate-stderr timeout 20 prlimit --nofile=16 "$BUILD/$t" --duration 0.2 -j
		echo "$t: $status: $stderr"
		[ "$status" -eq 1 ] && [ -z "$output" ] && [ "${#stderr_lines[@]}" -eq 1 ]
		[[ "$stderr" =~ ^$t:\ needs\ about\ ([0-9]+)\ file\ descriptors\ .*RLIMIT_NOFILE\ allows\ 16:\ raise\ it\ \(ulimit\ -n\ ([0-9]+)\)$ ]]
		# what it asks for is enough
		run --separate-stderr timeout 20 prlimit --nofile="${BASH_REMATCH[2]}" "$BUILD/$t" --duration 0.2 -j
		echo "$t at ${BASH_REMATCH[2]}: $status: $stderr"
		[ "$status" -eq 0 ] && jq -e -s 'length > 0' <<<"$output" >/dev/null
		run --separate-stderr timeout 20 prlimit --nofile=16:4096 "$BUILD/$t" --duration 0.2 -j
		echo "$t soft 16, hard 4096: $status: $stderr"
		[ "$status" -eq 0 ] && jq -e -s 'length > 0' <<<"$output" >/dev/null
	done
}

# many N TOOL ARGS...: N instances of TOOL at once, each attached (its
# banner) before the workload goes; outputs in $T/out.I, PIDs in MANY,
# the BPF IDs each holds in $T/ids.I. The watchdogs start once all are
# read: bpftool takes a while for 10 instances on a loaded machine.
many() {
	local n=$1 i
	shift
	MANY=()
	for ((i = 1; i <= n; i++)); do
		rm -f "$T/out.$i" "$T/err.$i"	# not an earlier many()'s banner
		"$BUILD/$1" "${@:2}" > "$T/out.$i" 2> "$T/err.$i" &
		MANY+=($!)
		JOBS+=($!)
	done
	for ((i = 1; i <= n; i++)); do
		wait_for "$T/err.$i" 'Hit Ctrl-C to end'
		bpf_ids_of "${MANY[i - 1]}" "$T/ids.$i"
	done
	for ((i = 1; i <= n; i++)); do watchdog "${MANY[i - 1]}"; done
}

# many_stop: SIGINT each, and each exits 0 with nothing of its own left.
many_stop() {
	local i pid
	# one traced with -p may have ended with its process already
	for pid in "${MANY[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
	for i in "${!MANY[@]}"; do
		wait_exit "${MANY[i]}"
		bpf_ids_gone "$T/ids.$((i + 1))"
	done
}

@test "2 and 10 instances of readlat at once: each counts the workload's reads exactly, and each leaves nothing" {
	local n i
	for n in 2 10; do
		start_load A --reads 40 --delay-us 1000
		many "$n" readlat -j -p "$A_PID"
		go
		wait_loads A
		many_stop
		for ((i = 1; i <= n; i++)); do
			echo "instance $i of $n: $(jq -s '[.[].count] | add' "$T/out.$i") reads"
			[ "$(jq -s '[.[].count] | add' "$T/out.$i")" -eq 40 ]
		done
		rm -f "$T/go" "$T/hold"
	done
}

@test "10 instances of opensnoop -C at once: each counts the workload's opens exactly" {
	local i
	mkdir -p "$T/d" && touch "$T/d/one"
	start_opens A --file "$T/d/one" --file "$T/d/missing" --opens 7
	many 10 opensnoop -C --by file -j -p "$A_PID"
	go
	wait_loads A
	many_stop
	for i in $(seq 10); do
		echo "instance $i: $(jq -s -c '[.[].rows[]]' "$T/out.$i")"
		jq -e -s --arg f "$T/d/one" --arg m "$T/d/missing" \
			'[.[].rows[]] | (map(select(.path == $f)) | map(.opens) | add) == 7 and
			 (map(select(.path == $m)) | map(.failed) | add) == 7' "$T/out.$i" >/dev/null
	done
}

@test "10 instances of biolat -d at once: each counts the disk's writes exactly" {
	local i before done_
	loop_setup
	many 10 biolat -j -d "$LOOPNAME"
	before=$(awk '{ print $5 }' "/sys/block/$LOOPNAME/stat")
	dd if=/dev/zero of="$LOOP" bs=64K count=300 oflag=direct 2>/dev/null
	done_=$(($(awk '{ print $5 }' "/sys/block/$LOOPNAME/stat") - before))
	many_stop
	[ "$done_" -eq 300 ]
	for i in $(seq 10); do
		echo "instance $i: $(jq -s -c '[.[] | select(has("buckets")) | .count, .lost]' "$T/out.$i")"
		jq -e -s '[.[] | select(has("buckets")) | .count + .lost] | add == 300' "$T/out.$i" >/dev/null
	done
}

@test "the traced process gone while the tool starts: every tool ends by itself, with 'exited' and its report, or 'no process'" {
	local t d p rc
	for t in "${TOOLS[@]}"; do
		for d in 0 0.01 0.02 0.04 0.08 0.15 0.3; do
			sleep "$d" &
			p=$!
			rc=0
			timeout 20 "$BUILD/$t" -j -p "$p" > "$T/out" 2> "$T/err" || rc=$?
			wait "$p" || true
			echo "$t, process of ${d}s: $rc: $(tr '\n' '|' < "$T/err")"
			if [ "$rc" -eq 0 ]; then
				grep -qx "$t: process $p exited" "$T/err"
				json_strict "$T/out" && [ -s "$T/out" ]
			else
				[ "$rc" -eq 1 ] && [ ! -s "$T/out" ]
				[ "$(cat "$T/err")" = "$t: no process with PID $p" ]
			fi
		done
	done
}

@test "stdout read-only or full: every tool's report fails with one line, exit 1" {
	local t
	for t in "${TOOLS[@]}"; do
		run --separate-stderr timeout 20 sh -c "exec '$BUILD/$t' --duration 0.2 1</dev/null"
		echo "$t, read-only: $status: $stderr"
		[ "$status" -eq 1 ]
		[ "$(grep -v 'Hit Ctrl-C' <<<"$stderr")" = "$t: cannot write the output: Bad file descriptor" ]
		run --separate-stderr timeout 20 sh -c "exec '$BUILD/$t' --duration 0.2 -j >/dev/full"
		echo "$t, full: $status: $stderr"
		[ "$status" -eq 1 ]
		[ "$(grep -v 'Hit Ctrl-C' <<<"$stderr")" = "$t: cannot write the output: No space left on device" ]
	done
}

@test "tracefs unmounted in a private mount namespace: every tool mounts it and runs; without CAP_SYS_ADMIN, one line, exit 1" {
	local t unmount="umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/debug/tracing 2>/dev/null"
	for t in "${TOOLS[@]}"; do
		run --separate-stderr timeout 20 unshare -m sh -c "$unmount; exec '$BUILD/$t' --duration 0.2 -j"
		echo "$t: $status: $stderr"
		[ "$status" -eq 0 ] && jq -e -s 'length > 0' <<<"$output" >/dev/null
		run --separate-stderr timeout 20 unshare -m sh -c "$unmount; exec setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin '$BUILD/$t' --duration 0.2"
		echo "$t without CAP_SYS_ADMIN: $status: $stderr"
		[ "$status" -eq 1 ] && [ "${#stderr_lines[@]}" -eq 1 ]
		[[ "$stderr" == "$t: tracefs is not mounted at /sys/kernel/tracing"*"could not be mounted (Operation not permitted)"*"mount -t tracefs tracefs /sys/kernel/tracing" ]]
	done
}

@test "a user with all, some and none of the README's capabilities: every tool runs, or names what it lacks, exit 1" {
	local t
	for t in "${TOOLS[@]}"; do
		nonroot_setup "$t" "$NONROOT_CAPS"
		run --separate-stderr timeout 20 "${NONROOT[@]}" "$EXE" --duration 0.2 -j
		echo "$t, all: $status: $stderr"
		[ "$status" -eq 0 ] && jq -e -s 'length > 0' <<<"$output" >/dev/null
		nonroot_setup "$t" bpf
		run --separate-stderr timeout 20 "${NONROOT[@]}" "$EXE" --duration 0.2
		echo "$t, CAP_BPF only: $status: $stderr"
		[ "$status" -eq 1 ] && [ "${#stderr_lines[@]}" -eq 1 ]
		[ "$stderr" = "$t: has CAP_BPF but lacks CAP_PERFMON and CAP_DAC_READ_SEARCH: needs root (or CAP_BPF, CAP_PERFMON and CAP_DAC_READ_SEARCH); try: sudo $t" ]
		nonroot_setup "$t" ""
		run --separate-stderr timeout 20 "${NONROOT[@]}" "$EXE" --duration 0.2
		echo "$t, none: $status: $stderr"
		[ "$status" -eq 1 ] && [ "${#stderr_lines[@]}" -eq 1 ]
		[[ "$stderr" == "$t: "*"needs root (or CAP_BPF, CAP_PERFMON and CAP_DAC_READ_SEARCH); try: sudo $t" ]]
	done
}
