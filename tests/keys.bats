#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# Every per-key mode of every tool, with more keys than a report's first
# read buffer holds and beyond the tool's key limit: every key up to the
# limit is a row, the rest is counted as lost, and rows plus lost are
# what strace or bpftrace counted.

load helpers
bats_require_minimum_version 1.5.0

KEYS_LOAD=$BUILD/tests/keysload
MAX_KEYS=4096		# readlat's and opensnoop's (tools/*.h)
TCP_KEYS=2048		# tcprcv's closed sockets per interval
OVER=100

setup() {
	common_setup
	mkdir -p "$T/d"
	CG=
}
teardown() {
	common_teardown
	[ -z "$CG" ] || rmdir "$CG" 2>/dev/null || true
}

# start_keys NAME KEYSLOAD-ARGS...: keysload in the test's cgroup, parked
# until go; with STRACE=1 under strace -f (its openat and read calls into
# $T/st).
start_keys() {
	local name=$1 trace=()
	shift
	[ -z "${STRACE:-}" ] || trace=(strace -f -qq -o "$T/st" -e trace=openat,read)
	rm -f "$T/$name.out"
	in_cg "${trace[@]}" "$KEYS_LOAD" "$@" --go "$T/go" --hold "$T/hold" > "$T/$name.out" 2>&1 &
	JOBS+=($!)
	printf -v "${name}_JOB" %s $!
	wait_for "$T/$name.out" '^pid='
}

# stop_tools JOB...: SIGINT each tool, each must end with status 0.
stop_tools() {
	for TOOL_JOB in "$@"; do
		stop_tool INT
		[ "$TOOL_STATUS" -eq 0 ]
	done
}

@test "opensnoop -C --by file: $MAX_KEYS files then $OVER more, each opened once: every key a row, the rest lost (strace)" {
	own_cgroup
	STRACE=1 start_keys K files $((MAX_KEYS + OVER)) --dir "$T/d"
	start_tool opensnoop -C --by file -j -c "$CG"
	go
	wait_loads K
	stop_tools "$TOOL_JOB"
	opens=$(grep -cE "openat\(AT_FDCWD, \"$T/d/k[0-9]+\", O_RDONLY\) = [0-9]+$" "$T/st")
	[ "$opens" -eq $((MAX_KEYS + OVER)) ]
	jout '.keys == $max and .lost == $over and (.rows | length) == $max and
		all(.rows[]; .opens == 1) and (.rows | map(.opens) | add) + .lost == $opens' \
		--argjson max $MAX_KEYS --argjson over $OVER --argjson opens "$opens"
}

@test "readlat -F: $MAX_KEYS fds then $OVER more, each read once: every key a histogram, the rest lost (strace)" {
	own_cgroup
	STRACE=1 start_keys K fds $((MAX_KEYS + OVER)) --comm ks_fds
	start_tool readlat -F -j -n ks_fds
	go
	wait_loads K
	stop_tools "$TOOL_JOB"
	reads=$(grep -cE '^[0-9]+ +read\([0-9]+, "\\0", 1\) += 1$' "$T/st")
	[ "$reads" -eq $((MAX_KEYS + OVER)) ]
	jq -s --argjson max $MAX_KEYS --argjson reads "$reads" -e '
		map(select(.key)) as $h |
		($h | length) == $max and all($h[]; .count == 1) and
		($h | map(.count) | add) + ($h[0].lost) == $reads' "$T/out"
}

# 4,196 processes or 4,296 closed sockets would fill the keys of
# another test's tool that counts without a filter: alone.
# bats test_tags=serial
@test "opensnoop -C by process and --by comm, -L -P, readlat -P: $MAX_KEYS processes then $OVER more (bpftrace)" {
	TOOL_SECS=$((TOOL_SECS * 3)) WAIT_SECS=$((WAIT_SECS * 4))	# 4196 forks on a busy machine
	own_cgroup
	n=$((MAX_KEYS + OVER))
	start_keys K comms $n --dir "$T/d" --comm ks_c
	bpftrace_start "tracepoint:syscalls:sys_exit_openat /cgroup == cgroupid(\"$CG\") && args->ret >= 0/ { @[\"opens\"] = count(); }
		tracepoint:syscalls:sys_exit_read /cgroup == cgroupid(\"$CG\") && args->ret == 1/ { @[\"reads\"] = count(); }"
	tools=()
	for args in "opensnoop -C" "opensnoop -C --by comm" "opensnoop -L -P" "readlat -P"; do
		# shellcheck disable=SC2086	# ARGS are words
		start_tool $args -j -c "$CG"
		mv "$T/out" "$T/out.${#tools[@]}"
		tools+=("$TOOL_JOB")
	done
	go
	wait_loads K
	stop_tools "${tools[@]}"
	bpftrace_stop > "$T/truth"
	cat "$T/truth"
	grep -qx "opens $n" "$T/truth"
	grep -qx "reads $n" "$T/truth"
	for i in 0 1; do
		jq -e --argjson max $MAX_KEYS --argjson n $n '
			.keys == $max and (.rows | length) == $max and all(.rows[]; .opens == 1) and
			(.rows | map(.opens) | add) + .lost == $n' "$T/out.$i"
	done
	jq -e '.rows | map(.comm) | unique | length == 4096' "$T/out.1"
	for i in 2 3; do
		jq -s -e --argjson max $MAX_KEYS --argjson n $n '
			map(select(.key)) as $h | ($h | length) == $max and all($h[]; .count == 1) and
			($h | map(.key.pid) | unique | length) == $max and
			($h | map(.count) | add) + $h[0].lost == $n' "$T/out.$i"
	done
}

# bats test_tags=serial
@test "tcprcv --by flow: $TCP_KEYS closed sockets, then $OVER more, then $((TCP_KEYS + OVER)) open connections: every byte in a row" {
	own_cgroup
	# A connection closes two sockets (keys): n = TCP_KEYS / 2 fills the
	# closed-socket map. One report, at the stop (interval 99 s).
	for run in "$((TCP_KEYS / 2)) --close" "$(((TCP_KEYS + OVER) / 2)) --close" "$((TCP_KEYS + OVER))"; do
		n=${run%% *}
		rm -f "$T/go" "$T/hold"
		# shellcheck disable=SC2086	# --close is a word or none
		start_keys K conns $run --comm ks_tcp
		start_tool tcprcv --by flow -j -r 8192 -c "$CG" 99
		go
		# the report before keysload exits, closing what it holds
		wait_for "$T/K.out" '^done$'
		stop_tools "$TOOL_JOB"
		wait_loads K
		lost=0
		[[ "$run" != *--close ]] || lost=$((2 * n - TCP_KEYS))
		((lost >= 0)) || lost=0
		# connection i carries i % 100 + 1 bytes
		bytes=$(((n / 100) * 5050 + (n % 100) * (n % 100 + 1) / 2))
		cat "$T/out"
		[ "$lost" -gt 0 ] || jq -e --argjson n "$n" --argjson bytes "$bytes" '
			(.rows | length) == $n and (.rows | map(.bytes) | add) == $bytes and .bytes == $bytes' "$T/out"
		jq -e --argjson lost "$lost" '.lost == $lost and (.rows | map(.bytes) | add) == .bytes and
			all(.rows[]; .comm == "ks_tcp" and .bytes >= 1 and .bytes <= 100)' "$T/out"
	done
}
