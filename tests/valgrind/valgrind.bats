#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# make valgrind-test: each tool under valgrind's memcheck, on the dynamic
# -DTOOLS_MEMCHECK build (tests/valgrind/valgrind.mk): one real run (a
# workload of programs nobody here wrote, reports every second, stopped
# by SIGINT after two) that must end as it would without valgrind, status
# 0 and its final report; and its error paths (a bad option, --check).
# Every run: no memcheck error, no block definitely or indirectly lost.
# What libbpf does that valgrind misreads is in libbpf.supp, each entry
# said why; the last test fails on an entry that no run used.
#
# Under valgrind 3.19 pidfd_open(2) fails ENOSYS, so -p PID refuses to
# start ("cannot watch process"): the runs filter by command name, a name
# of the test's own (a copy of the program), or by port.

load ../helpers
bats_require_minimum_version 1.5.0

VG_WAIT=${VG_WAIT:-120}	# bound on a wait for a tool under valgrind (s)
SUPP=$BATS_TEST_DIRNAME/libbpf.supp
REPORTS=2		# reports a run waits for before its SIGINT

setup_file() {
	export USED=$BATS_FILE_TMPDIR/used	# suppressions used, by name
	: > "$USED"
}

setup() {
	common_setup
	TOOL_SECS=$((VG_WAIT * 3))
	mkdir -p "$T/d"
	echo a > "$T/d/one"
}

teardown() { common_teardown; }

# vg_cmd TOOL [args]: the command line of TOOL under memcheck, its log in
# $T/vg.
vg_cmd() {
	VG=(valgrind --log-file="$T/vg" --show-error-list=yes --leak-check=full
		--errors-for-leak-kinds=definite,indirect --error-exitcode=1
		--suppressions="$SUPP" "$BUILD/$1" "${@:2}")
}

# vg_clean: valgrind's log says no error and nothing lost; the
# suppressions it used are added to $USED. Else the log, without its
# notes on the bpf(2) commands it does not model, and fails.
vg_clean() {
	sed -nE 's/^[-=]{2}[0-9]+[-=]{2} +used_suppression: +[0-9]+ (.*) [^ ]+:[0-9]+$/\1/p' "$T/vg" >> "$USED"
	grep -q 'ERROR SUMMARY: 0 errors' "$T/vg" && return 0
	echo "valgrind's log:" >&2
	grep -v 'WARNING: unhandled eBPF command' "$T/vg" >&2
	return 1
}

# vg_start TOOL [args]: TOOL under memcheck in the background (stdout in
# $T/out, stderr in $T/err) until its banner.
vg_start() {
	vg_cmd "$@"
	"${VG[@]}" > "$T/out" 2> "$T/err" &
	TOOL_JOB=$!
	watchdog "$TOOL_JOB"
	WAIT_SECS=$VG_WAIT wait_for "$T/err" 'Hit Ctrl-C to end'
}

# vg_reports MARKER CONTENT: until $T/out has REPORTS lines matching
# MARKER (a line each report prints once) and one matching CONTENT (the
# workload seen), at most VG_WAIT seconds. The marker is kept for vg_stop.
vg_reports() {
	local end=$((SECONDS + VG_WAIT))
	MARKER=$1
	until (($(grep -cE -- "$1" "$T/out") >= REPORTS)) && grep -qE -- "$2" "$T/out"; do
		((SECONDS < end)) || { echo "no $REPORTS reports /$1/ with /$2/ in ${VG_WAIT}s:" >&2; cat "$T/out" "$T/err" >&2; return 1; }
		sleep 0.1
	done
}

# vg_stop: SIGINT, then its exit within VG_WAIT seconds: status 0, one
# more report (the final one), valgrind's log clean.
vg_stop() {
	local before
	before=$(grep -cE -- "$MARKER" "$T/out")
	kill -INT "$TOOL_JOB"
	TOOL_STATUS=0
	WAIT_SECS=$VG_WAIT wait_exit "$TOOL_JOB" || TOOL_STATUS=$?
	if [ "$TOOL_STATUS" -ne 0 ]; then
		echo "status $TOOL_STATUS; stderr:" >&2
		cat "$T/err" >&2
	fi
	vg_clean
	[ "$TOOL_STATUS" -eq 0 ]
	(($(grep -cE -- "$MARKER" "$T/out") > before)) || { echo "no final report" >&2; return 1; }
}

# vg_errors TOOL: TOOL's error paths under memcheck, each clean: a bad
# option (exit 2, one line), --check (exit 0, its verdict).
vg_errors() {
	vg_cmd "$1" --no-such-option
	run -2 --separate-stderr timeout "$VG_WAIT" "${VG[@]}"
	[[ "${stderr_lines[0]}" == "$1: "*"no-such-option"* ]]
	vg_clean
	vg_cmd "$1" --check
	run -0 timeout "$VG_WAIT" "${VG[@]}"
	[[ "$output" == *"$1 can run on this system"* ]]
	vg_clean
}

# named PROGRAM: a copy of PROGRAM (from PATH) named for this test, in
# $T, set in NAMED; its command name (15 bytes at most) in COMM.
named() {
	COMM=vg$$-$BATS_TEST_NUMBER
	COMM=${COMM:0:15}
	NAMED=$T/$COMM
	cp "$(command -v "$1")" "$NAMED"
}

# loop CMD...: CMD every 50 ms in the background until teardown, whatever
# its status (a failed open is part of the workload).
loop() {
	(while :; do "$@" > /dev/null 2>&1 || :; sleep 0.05; done) &
	JOBS+=($!)
}

@test "readlat: cat in a loop, a histogram every second" {
	named cat
	loop "$NAMED" "$T/d/one"
	vg_start readlat -n "$COMM" 1
	vg_reports '^count ' '^count [1-9]'
	vg_stop
}

@test "opensnoop -C: a shell loop of opens, counts every second" {
	named cat
	loop "$NAMED" "$T/d/one" "$T/d/missing"
	vg_start opensnoop -C -n "$COMM" 1
	vg_reports '^OPENS ' " $COMM\$"
	vg_stop
}

@test "tcprcv: curl from python's http.server, a table every second" {
	head -c 20000000 /dev/zero > "$T/d/big"
	python3 -u -m http.server --bind 127.0.0.1 --directory "$T/d" 0 > "$T/http.out" 2>&1 &
	JOBS+=($!)
	wait_for "$T/http.out" '^Serving HTTP on 127\.0\.0\.1 port [0-9]+'
	port=$(sed -nE 's/^Serving HTTP on 127\.0\.0\.1 port ([0-9]+).*/\1/p' "$T/http.out")
	vg_start tcprcv --lport "$port" 1
	# A slow download: its socket is live across reports (the batch read).
	loop curl -s --limit-rate 200k -o /dev/null "http://127.0.0.1:$port/big"
	vg_reports '^PID ' ' python3 '
	vg_stop
}

@test "biolat -D: dd on a loop device, a histogram every second" {
	loop_setup 16
	loop dd if="$LOOP" of=/dev/null bs=4k count=64 iflag=direct status=none
	vg_start biolat -D -d "$LOOPNAME" 1
	vg_reports '^count ' '^count [1-9]'
	vg_stop
}

@test "readlat: a bad option, --check" { vg_errors readlat; }
@test "opensnoop: a bad option, --check" { vg_errors opensnoop; }
@test "tcprcv: a bad option, --check" { vg_errors tcprcv; }
@test "biolat: a bad option, --check" { vg_errors biolat; }

# A suppression no run needs is one that could hide a bug: remove it.
@test "every suppression in libbpf.supp was used" {
	local name unused=
	while read -r name; do
		grep -qxF -- "$name" "$USED" || unused+="$name"$'\n'
	done < <(awk '/^\{/ { getline; sub(/^ +/, ""); print }' "$SUPP")
	[ -z "$unused" ] || { printf 'unused: %s' "$unused" >&2; return 1; }
}
