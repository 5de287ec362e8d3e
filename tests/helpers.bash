# SPDX-License-Identifier: GPL-2.0-only
# Shared by the bats suites: start workloads and tools in the background,
# wait for them by what they print (never blind sleeps), bound every wait.

BUILD=${BUILD:-$BATS_TEST_DIRNAME/../build}
LOAD=$BUILD/tests/readload
WAIT_SECS=${WAIT_SECS:-15}	# bound on any wait for a line or an exit
TOOL_SECS=${TOOL_SECS:-40}	# hard bound on one tool run

common_setup() {
	T=$BATS_TEST_TMPDIR
	JOBS=()
	[ -e /sys/kernel/tracing/events ] || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
}

common_teardown() {
	local j
	for j in "${JOBS[@]}"; do
		kill -KILL "$j" 2>/dev/null || true
	done
	touch "$T/go" "$T/hold"
	wait 2>/dev/null || true
}

# wait_for FILE REGEX: until a line of FILE matches, at most WAIT_SECS.
wait_for() {
	local i
	for ((i = 0; i < WAIT_SECS * 100; i++)); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	echo "timed out waiting for /$2/ in $1:" >&2
	cat "$1" >&2 || true
	return 1
}

# wait_exit PID: until it has exited, at most WAIT_SECS; then its status.
wait_exit() {
	local i
	for ((i = 0; i < WAIT_SECS * 100; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.01
	done
	if kill -0 "$1" 2>/dev/null; then
		echo "process $1 did not exit within ${WAIT_SECS}s" >&2
		return 124
	fi
	wait "$1"
}

# start_load NAME [readload options]: a workload parked before its reads;
# sets NAME_PID, NAME_TIDS (array), NAME_FDS (array), NAME_JOB.
start_load() {
	local name=$1 line
	shift
	"$LOAD" --go "$T/go" --hold "$T/hold" "$@" > "$T/$name.out" 2>&1 &
	JOBS+=($!)
	printf -v "${name}_JOB" %s $!
	wait_for "$T/$name.out" '^pid='
	line=$(head -n1 "$T/$name.out")
	printf -v "${name}_PID" %s "$(sed -E 's/.*pid=([0-9]+).*/\1/' <<<"$line")"
	IFS=, read -r -a "${name}_TIDS" <<<"$(sed -E 's/.*tids=([0-9,]+).*/\1/' <<<"$line")"
	IFS=, read -r -a "${name}_FDS" <<<"$(sed -E 's/.*fds=([-0-9,]+).*/\1/' <<<"$line")"
}

# go: release every parked workload; finish: let them exit after their reads.
go() { touch "$T/go"; }
finish() { touch "$T/hold"; }

# wait_loads NAME...: until each workload has done its reads and exited.
wait_loads() {
	local n job
	finish
	for n in "$@"; do
		job=${n}_JOB
		wait_exit "${!job}"
	done
}

# start_tool TOOL [args]: run it in the background (stdout to $T/out,
# stderr to $T/err) and wait until it has attached.
start_tool() {
	local tool=$1
	shift
	"$BUILD/$tool" "$@" > "$T/out" 2> "$T/err" &
	TOOL_JOB=$!
	watchdog "$TOOL_JOB"
	wait_for "$T/err" 'Hit Ctrl-C to end'
}

# watchdog PID: kill it after TOOL_SECS whatever happens (signals sent by
# the tests go to the tool itself, not to a wrapper).
watchdog() {
	(sleep "$TOOL_SECS"; kill -KILL "$1") >/dev/null 2>&1 &
	JOBS+=("$1" $!)
}

# stop_tool [SIGNAL]: end it like a user would and collect its status.
stop_tool() {
	kill "-${1:-INT}" "$TOOL_JOB" 2>/dev/null || true
	tool_wait
}

tool_wait() {
	TOOL_STATUS=0
	wait_exit "$TOOL_JOB" || TOOL_STATUS=$?
}

# jq over the tool's JSON output: true if the filter holds for every object
# it yields, and it yields at least one (jq -e alone judges only the last).
jout() { jq -e -s "[.[] | $1] | length > 0 and all" "${@:2}" "$T/out"; }

# The numbers of a text summary line ("count 50, avg ..., p50 ...").
summary_field() {
	grep -E '^count ' "$T/out" | tail -n1 | grep -oE "(^|, )$1 [0-9.]+" | grep -oE '[0-9.]+$'
}

# BPF programs or maps named as one of the tool's own are still loaded.
leaked() {
	local progs=$1 maps=$2
	bpftool prog show 2>/dev/null | grep -wE "name ($progs)" && return 0
	bpftool map show 2>/dev/null | grep -wE "name ($maps)" && return 0
	return 1
}

cgroup2_root() {
	local m
	m=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$m" ] && echo "$m"
}
