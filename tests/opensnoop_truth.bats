#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# opensnoop against programs nobody here wrote (bash, cat, sqlite3,
# python3), each checked against an independent ground truth: a bpftrace
# one-liner, or strace of the same run.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	common_setup
	CG=
	STRACE_JOB=
}

teardown() {
	[ -z "$STRACE_JOB" ] || kill "$STRACE_JOB" 2>/dev/null || true
	common_teardown
	[ -z "$CG" ] || rmdir "$CG" 2>/dev/null || true
}

# make_cgroup: a cgroup v2 of the test's own in CG (skips without one).
make_cgroup() {
	local root
	root=$(cgroup2_root) || skip "no cgroup2 mount"
	CG=$root/opensnoop-truth-$BATS_TEST_NUMBER-$$
	mkdir "$CG"
}

# in_cgroup CMD [ARGS]: CMD run in CG from its first instruction (the
# shell that moves itself there opens cgroup.procs before it is in it).
in_cgroup() { bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' in_cgroup "$CG" "$@"; }

# gated CMD [ARGS]: CMD started stopped (SIGSTOP before it execs), so
# that tracers can attach to its pid first; sets GATED. release: go on.
gated() {
	bash -c 'kill -STOP $$; exec "$@"' gated "$@" > "$T/gated.out" 2>&1 &
	GATED=$!
	JOBS+=("$GATED")
	retry stopped "$GATED"
}
stopped() { [ "$(awk '{ print $3 }' "/proc/$1/stat")" = T ]; }
traced_by_strace() { [ "$(awk '$1 == "TracerPid:" { print $2 }' "/proc/$1/status")" != 0 ]; }
release() { kill -CONT "$GATED"; }

# strace_attach PID: strace -f of its opens into $T/st, attached.
strace_attach() {
	strace -f -qq -s 4096 -o "$T/st" -e trace=open,openat,openat2 -p "$1" &
	STRACE_JOB=$!
	retry traced_by_strace "$1"
}

# strace_opens PID: "PATH ok|fail" for each open of PID in $T/st, sorted
# (-f follows its threads, and its children: opensnoop -p, not those).
strace_opens() {
	sed -nE "s/^$1 +(open|openat|openat2)\\((AT_FDCWD, |[0-9]+, )?\"([^\"]*)\".*\\) += (-?[0-9]+).*\$/\\3 \\4/p" \
		"$T/st" | awk '{ print $1, ($2 < 0 ? "fail" : "ok") }' | sort
}

# opensnoop_opens FILE: the same from opensnoop's JSON events.
opensnoop_opens() { jq -r 'select(.path) | "\(.path) \(if .err == 0 then "ok" else "fail" end)"' "$1" | sort; }

@test "a shell loop of cat: -C --by comm and -C per process give what bpftrace's @[comm] = count() gives" {
	make_cgroup
	printf 'for i in $(seq 100); do cat /etc/hostname > /dev/null; done\n' > "$T/loop"
	# opensnoop counts opens that returned: the exits of the three calls
	# (sys_enter_open* also matches open_by_handle_at and open_tree).
	bpftrace_start "tracepoint:syscalls:sys_exit_open,tracepoint:syscalls:sys_exit_openat,
		tracepoint:syscalls:sys_exit_openat2 /cgroup == cgroupid(\"$CG\")/ { @[comm] = count(); }"
	start_tool opensnoop -C -j -c "$CG"
	mv "$T/out" "$T/by_process"
	BY_PROCESS_JOB=$TOOL_JOB
	start_tool opensnoop -C --by comm -j -c "$CG"
	in_cgroup bash "$T/loop"
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	TOOL_JOB=$BY_PROCESS_JOB
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	bpftrace_stop > "$T/truth"
	cat "$T/truth"
	grep -qE '^cat [0-9]+$' "$T/truth"
	jq -r '.rows[] | "\(.comm) \(.opens)"' "$T/out" | sort > "$T/seen"
	diff "$T/truth" "$T/seen"
	# per process: 100 rows named cat (one per child), adding up to the same
	[ "$(jq '[.rows[] | select(.comm == "cat")] | length' "$T/by_process")" -eq 100 ]
	jq -r '[.rows[] | select(.comm == "cat") | .opens] | add | "cat \(.)"' "$T/by_process" > "$T/cat"
	grep -qxF -f "$T/cat" "$T/truth"
}

# opens_truth NAME CMD [ARGS]: CMD's opens under opensnoop -p (events,
# and -C) and strace -f of the same run: the same paths, each as often and
# with the same success, and one -C row with all of them.
opens_truth() {
	local name=$1
	shift
	command -v "$1" >/dev/null || skip "no $1"
	command -v strace >/dev/null || skip "no strace"
	gated "$@"
	start_tool opensnoop -C -j -p "$GATED"
	mv "$T/out" "$T/count"
	COUNT_JOB=$TOOL_JOB
	start_tool opensnoop -j -p "$GATED"
	strace_attach "$GATED"
	release
	tool_wait	# -p: it ends with the process
	[ "$TOOL_STATUS" -eq 0 ]
	TOOL_JOB=$COUNT_JOB
	tool_wait
	[ "$TOOL_STATUS" -eq 0 ]
	wait_exit "$STRACE_JOB" || true
	STRACE_JOB=
	strace_opens "$GATED" > "$T/truth"
	opensnoop_opens "$T/out" > "$T/seen"
	echo "$(wc -l < "$T/truth") opens by strace, $(wc -l < "$T/seen") by opensnoop"
	[ "$(wc -l < "$T/truth")" -ge 5 ]
	diff "$T/truth" "$T/seen"
	jq -e --argjson p "$GATED" --arg c "$name" --argjson n "$(wc -l < "$T/truth")" \
		--argjson f "$(grep -c ' fail$' "$T/truth")" \
		'.rows == [{"pid": $p, "comm": $c, "opens": $n, "failed": $f}]' "$T/count"
}

@test "sqlite3: every open as strace -f sees it, path and success, under -p (events and -C)" {
	opens_truth sqlite3 sqlite3 "$T/db" \
		"create table t(a); insert into t values (1), (2); select count(*) from t;"
}

@test "python3: every open as strace -f sees it, path and success, under -p (events and -C)" {
	echo hello > "$T/hello"
	# Debian's, not a version manager's shim (a shell script that forks)
	[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
	opens_truth python3 /usr/bin/python3 -c "import json, sqlite3; open('$T/hello').read(); json.dumps({})"
}

@test "cat of two paths longer than 255 bytes, 7 and 4 times: -C --by file two rows, as strace counts them; events marked" {
	make_cgroup
	long="$T/$(printf 'x%.0s' $(seq 200))/$(printf 'y%.0s' $(seq 100))"
	mkdir -p "$long"
	echo a > "$long/one"
	echo b > "$long/the-other"
	printf 'for i in 1 2 3 4 5 6 7; do cat "%s" > /dev/null; done\nfor i in 1 2 3 4; do cat "%s" > /dev/null; done\n' \
		"$long/one" "$long/the-other" > "$T/loop"
	start_tool opensnoop -j -c "$CG"
	mv "$T/out" "$T/events"
	EVENTS_JOB=$TOOL_JOB
	start_tool opensnoop -C --by file -j -c "$CG"
	in_cgroup strace -f -qq -s 4096 -o "$T/st" -e trace=open,openat,openat2 bash "$T/loop"
	stop_tool INT
	TOOL_JOB=$EVENTS_JOB
	stop_tool INT
	one=$(grep -cF "\"$long/one\"" "$T/st")
	other=$(grep -cF "\"$long/the-other\"" "$T/st")
	echo "strace: $one and $other opens"
	[ "$one" -eq 7 ] && [ "$other" -eq 4 ]
	jq -e --arg p "${long:0:255}" --argjson a "$((${#long} + 4))" --argjson b "$((${#long} + 10))" \
		--argjson one "$one" --argjson other "$other" '[.rows[] | select(.truncated)] |
		length == 2 and all(.path == $p) and
		(map(select(.path_bytes == $a) | .opens) == [$one]) and
		(map(select(.path_bytes == $b) | .opens) == [$other])' "$T/out"
	[ "$(jq -s --arg p "${long:0:255}" 'map(select(.path == $p and .truncated == true)) | length' \
		"$T/events")" -eq $((one + other)) ]
}
