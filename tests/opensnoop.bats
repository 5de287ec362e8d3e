#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# opensnoop against openload, a workload with a known set of opens.

load helpers
bats_require_minimum_version 1.5.0

OPENSNOOP_PROGS='enter_open|exit_open|enter_openat|exit_openat|enter_openat2|exit_openat2|signal_deliver'

setup() {
	common_setup
	mkdir -p "$T/d"
	echo a > "$T/d/one"
	echo b > "$T/d/two"
}
teardown() { common_teardown; }

# count_path PATH [FILE]: JSON events with exactly this path.
count_path() { jq -s --arg p "$1" 'map(select(.path == $p)) | length' "${2:-$T/out}"; }

@test "-p PID: exact events per file, fd and errno, then exit with the process" {
	start_opens A --file "$T/d/one" --file "$T/d/two" --file "$T/d/missing" --opens 5
	start_tool opensnoop -j -p "$A_PID"
	go
	wait_loads A
	tool_wait
	[ "$TOOL_STATUS" -eq 0 ]
	[ "$(count_path "$T/d/one")" -eq 5 ]
	[ "$(count_path "$T/d/two")" -eq 5 ]
	[ "$(count_path "$T/d/missing")" -eq 5 ]
	jout 'select(.path == $p) | .fd == -1 and .err == 2' --arg p "$T/d/missing"
	jout 'select(.path == $p) | .fd >= 3 and .err == 0 and .pid == $pid and .comm == "openload"' \
		--arg p "$T/d/one" --argjson pid "$A_PID"
	[ "$(jq -s 'map(select(.path)) | length' "$T/out")" -eq 15 ]
	jout 'select(.events) | .events == 15 and .lost == 0 and .unreadable == 0'
}

@test "text: bcc columns, one line per open" {
	start_opens A --file "$T/d/one" --file "$T/d/missing" --opens 3
	start_tool opensnoop -p "$A_PID"
	go
	wait_loads A
	tool_wait
	head -n1 "$T/out" | grep -qE '^PID +COMM +FD +ERR +PATH$'
	[ "$(grep -cE "^$A_PID +openload +[0-9]+ +0 +$T/d/one\$" "$T/out")" -eq 3 ]
	[ "$(grep -cE "^$A_PID +openload +-1 +2 +$T/d/missing\$" "$T/out")" -eq 3 ]
	grep -q '^6 opens traced; 0 lost' "$T/err"
}

@test "open, openat and openat2 are each traced" {
	for call in open openat openat2; do
		rm -f "$T/go" "$T/hold"
		start_opens A --file "$T/d/one" --opens 4 --call "$call"
		start_tool opensnoop -j -p "$A_PID"
		go
		wait_loads A
		tool_wait
		[ "$(count_path "$T/d/one")" -eq 4 ]
		jout 'select(.path) | .fd >= 3 and .err == 0'
	done
}

@test "the path is read even from a page not present at syscall entry" {
	start_opens A --file "$T/d/one" --opens 20 --cold
	start_tool opensnoop -j -p "$A_PID"
	go
	wait_loads A
	tool_wait
	[ "$(count_path "$T/d/one")" -eq 20 ]
	jout 'select(.events) | .unreadable == 0'

	rm -f "$T/go" "$T/hold"
	start_opens B --file "$T/d/two" --opens 20 --edge
	start_tool opensnoop -j -p "$B_PID"
	go
	wait_loads B
	tool_wait
	[ "$(count_path "$T/d/two")" -eq 20 ]
}

@test "-x: failed opens only; --errno: that error only" {
	start_opens A --file "$T/d/one" --file "$T/d/missing" --opens 4
	start_tool opensnoop -j -x -p "$A_PID"
	go
	wait_loads A
	tool_wait
	[ "$(jq -s 'map(select(.path)) | length' "$T/out")" -eq 4 ]
	jout 'select(.path) | .path == $p and .err == 2' --arg p "$T/d/missing"

	rm -f "$T/go" "$T/hold"
	chmod 000 "$T/d/two"
	start_opens B --file "$T/d/two" --file "$T/d/missing" --opens 3 --comm rl_errno
	start_tool opensnoop -j --errno ENOENT -n rl_errno
	go
	wait_loads B
	stop_tool INT
	[ "$(jq -s 'map(select(.path)) | length' "$T/out")" -eq 3 ]
	jout 'select(.path) | .err == 2'
}

@test "-f FLAG: only opens with those flags" {
	start_opens A --file "$T/d/new" --opens 3 --flags creat --comm rl_creat
	start_opens B --file "$T/d/one" --opens 5 --comm rl_creat
	start_tool opensnoop -j -f O_CREAT -n rl_creat
	go
	wait_loads A B
	stop_tool INT
	[ "$(jq -s 'map(select(.path)) | length' "$T/out")" -eq 3 ]
	jout 'select(.path) | .pid == $p and (.flags % 128) >= 64' --argjson p "$A_PID"

	start_tool opensnoop -j -f O_WRONLY -f creat -n rl_nobody
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
}

@test "-n and -u include and exclude exactly" {
	start_opens A --file "$T/d/one" --opens 6 --comm os_alpha
	start_opens B --file "$T/d/one" --opens 9 --comm os_beta
	start_tool opensnoop -j -n os_alpha
	go
	wait_loads A B
	stop_tool INT
	[ "$(count_path "$T/d/one")" -eq 6 ]

	rm -f "$T/go" "$T/hold"
	start_opens C --file "$T/d/one" --opens 4 --comm os_uid
	start_tool opensnoop -j -u 12345 -n os_uid
	go
	wait_loads C
	stop_tool INT
	[ "$(count_path "$T/d/one")" -eq 0 ]
	rm -f "$T/go" "$T/hold"
	start_opens D --file "$T/d/one" --opens 4 --comm os_uid
	start_tool opensnoop -j -u 0 -U -n os_uid
	go
	wait_loads D
	stop_tool INT
	[ "$(count_path "$T/d/one")" -eq 4 ]
	jout 'select(.path) | .uid == 0'
}

@test "hostile file names: escaped in text, exact in JSON" {
	name=$'bad\nname\e[31m\xff'
	echo x > "$T/d/$name"
	start_opens A --file "$T/d/$name" --opens 2
	start_tool opensnoop -p "$A_PID"
	go
	wait_loads A
	tool_wait
	refute grep -q $'\e' "$T/out"
	[ "$(grep -cF "$T/d/bad\\nname\\x1b[31m\\xff" "$T/out")" -eq 2 ]

	rm -f "$T/go" "$T/hold"
	start_opens B --file "$T/d/$name" --opens 2
	start_tool opensnoop -j -p "$B_PID"
	go
	wait_loads B
	tool_wait
	python3 -c 'import json,sys; [json.loads(l) for l in sys.stdin.buffer.read().decode("utf-8").splitlines()]' < "$T/out"
	want=$(printf '%s' "$T/d/$name" | od -An -tx1 | tr -d ' \n')
	[ "$(jq -s --arg h "$want" 'map(select(.path_hex == $h)) | length' "$T/out")" -eq 2 ]
}

@test "a path longer than the capture limit is marked truncated" {
	long="$T/d/$(printf 'x%.0s' $(seq 240))"
	echo x > "$long"
	start_opens A --file "$long" --opens 2
	start_tool opensnoop -j -p "$A_PID"
	go
	wait_loads A
	tool_wait
	jout 'select(.path) | .truncated == true and (.path | length) == 255'
	jout 'select(.events) | .truncated == 2'
}

@test "events lost to a tiny ring buffer are counted and reported" {
	start_opens A --file "$T/d/one" --opens 50000
	start_tool opensnoop -j -b 4K -p "$A_PID"
	go
	wait_loads A
	tool_wait
	delivered=$(jq -s 'map(select(.path)) | length' "$T/out")
	jout 'select(.events) | .events == 50000 and .lost > 0 and .lost + $d == 50000' --argjson d "$delivered"
}

@test "a quiet event is printed within 100 ms" {
	start_opens A --file "$T/d/one" --opens 1
	start_tool opensnoop -p "$A_PID"
	go
	t0=$(date +%s%N)
	wait_for "$T/out" "$T/d/one"
	t1=$(date +%s%N)
	echo "printed after $(((t1 - t0) / 1000000)) ms"
	[ $(((t1 - t0) / 1000000)) -lt 100 ]
	wait_loads A
	tool_wait
}

@test "opensnoop never shows its own opens" {
	start_tool opensnoop -j
	stop_tool INT
	[ "$(jq -s --argjson p "$TOOL_JOB" 'map(select(.pid == $p)) | length' "$T/out")" -eq 0 ]
}

@test "bad input: one line on stderr, exit 2" {
	usage_errors opensnoop <<'EOF_CASES'
-f O_BOGUS|unknown open flag 'O_BOGUS'
-f O_RDONLY -f O_WRONLY|conflicts with the access mode
--errno ENOPE|invalid errno 'ENOPE'
--errno 1 --errno 2|given twice
-u abc|invalid UID 'abc'
-b 3000|invalid buffer size '3000'
-b 1G2|invalid buffer size
1|no interval
-d 0|invalid duration '0'
-p 0|invalid PID '0'
--bogus|unknown option '--bogus'
EOF_CASES
}

@test "nothing of opensnoop stays loaded after exit" {
	start_tool opensnoop -n rl_nobody
	stop_tool TERM
	! leaked "$OPENSNOOP_PROGS" 'events|start_task|start_tid|opensnoo_.rodata|opensnoo_.bss'
}

@test "-C: the workload ranks first with its exact count, by process, file and errno" {
	start_opens A --file "$T/d/one" --file "$T/d/missing" --opens 40 --comm os_top
	start_opens B --file "$T/d/two" --opens 7 --comm os_top
	start_tool opensnoop -C -j -n os_top
	go
	wait_loads A B
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	jq -e -s --argjson a "$A_PID" --argjson b "$B_PID" 'map(select(.total > 0)) | length == 1 and
		(.[0] | .by == "process" and .total == 87 and .lost == 0 and
		 .rows[0] == {"pid": $a, "comm": "os_top", "opens": 80, "failed": 40} and
		 .rows[1] == {"pid": $b, "comm": "os_top", "opens": 7, "failed": 0})' "$T/out"

	rm -f "$T/go" "$T/hold"
	start_opens C --file "$T/d/one" --opens 9 --file "$T/d/missing" --comm os_top
	start_tool opensnoop -C --by file -j -n os_top
	go
	wait_loads C
	stop_tool INT
	jout 'select(.total > 0) | .rows == [{"path": $one, "opens": 9, "failed": 0}, {"path": $miss, "opens": 9, "failed": 9}] or .rows == [{"path": $miss, "opens": 9, "failed": 9}, {"path": $one, "opens": 9, "failed": 0}]' \
		--arg one "$T/d/one" --arg miss "$T/d/missing"

	rm -f "$T/go" "$T/hold"
	start_opens D --file "$T/d/one" --opens 3 --file "$T/d/missing" --comm os_top
	start_tool opensnoop -C --by errno -r 1 -n os_top
	go
	wait_loads D
	stop_tool INT
	grep -qE '^OPENS +FAILED +ERRNO NAME$' "$T/out"
	[ "$(grep -cE '^3 +[03] +' "$T/out")" -eq 1 ]	# -r 1: one row
	grep -q '^6 opens by 2 results (top rows shown)$' "$T/out"
}

@test "-C with an interval: each interval's counts, summing exactly" {
	start_opens A --file "$T/d/one" --opens 20000 --comm os_ivl
	start_tool opensnoop -C -j -n os_ivl 0.05
	go
	wait_loads A
	stop_tool INT
	[ "$(jq -s 'length' "$T/out")" -ge 3 ]
	[ "$(jq -s 'map(.total) | add' "$T/out")" -eq 20000 ]
}

@test "-L: exactly N opens in the histogram; -P per process, named" {
	start_opens A --file "$T/d/one" --file "$T/d/missing" --opens 25 --comm os_lat
	start_tool opensnoop -L -j -n os_lat
	go
	wait_loads A
	stop_tool INT
	jout '.count == 50 and .errors == 25 and .unit == "usecs"'

	rm -f "$T/go" "$T/hold"
	start_opens B --file "$T/d/one" --opens 11 --comm os_lat
	start_opens C --file "$T/d/one" --opens 13 --comm os_lat
	start_tool opensnoop -L -P --ns -j -n os_lat
	go
	wait_loads B C
	stop_tool INT
	jout 'select(.key.pid == $p) | .count == 11 and .key.comm == "os_lat" and .unit == "nsecs"' --argjson p "$B_PID"
	jout 'select(.key.pid == $p) | .count == 13' --argjson p "$C_PID"
}

@test "-C and -L: usage errors" {
	usage_errors opensnoop <<'EOF_CASES'
-C -L|-C and -L cannot be combined
--by file|--by and -r go with -C
-r 5|--by and -r go with -C
-C --by disk|invalid --by 'disk'
-C -r 0|invalid row count '0'
-P|-P goes with -L
-C -U|-U, -e, -F and -b go with the per-open events
-L -b 64K|-U, -e, -F and -b go with the per-open events
EOF_CASES
}

@test "-F: a relative path joined to the cwd or to the dirfd's directory" {
	mkdir -p "$T/d/sub"
	echo c > "$T/d/sub/three"
	(cd "$T/d" && start_opens A --file one --file sub/three --opens 2 && echo "$A_PID" > "$T/A.pid")
	A_PID=$(cat "$T/A.pid")
	start_tool opensnoop -j -F -p "$A_PID"
	go
	finish
	tool_wait
	[ "$(count_path "$T/d/one")" -eq 2 ]
	[ "$(count_path "$T/d/sub/three")" -eq 2 ]

	rm -f "$T/go" "$T/hold"
	start_opens B --dir "$T/d/sub" --file three --file ../one --opens 3 --call openat2
	start_tool opensnoop -F -p "$B_PID"
	go
	wait_loads B
	tool_wait
	[ "$(grep -c " $T/d/sub/three\$" "$T/out")" -eq 3 ]
	[ "$(grep -c " $T/d/sub/../one\$" "$T/out")" -eq 3 ]

	# without -F the paths are as given
	rm -f "$T/go" "$T/hold"
	start_opens C --dir "$T/d/sub" --file three --opens 1
	start_tool opensnoop -j -p "$C_PID"
	go
	wait_loads C
	tool_wait
	[ "$(count_path three)" -eq 1 ]
}

@test "-t and -c include and exclude exactly" {
	start_opens A --file "$T/d/one" --opens 5 --comm os_tc
	start_opens B --file "$T/d/one" --opens 8 --comm os_tc
	start_tool opensnoop -j -t "$A_PID"	# openload is single-threaded: tid = pid
	go
	wait_loads A B
	tool_wait			# the thread exits with its process
	[ "$(count_path "$T/d/one")" -eq 5 ]
	jout 'select(.path) | .tid == $p' --argjson p "$A_PID"

	root=$(cgroup2_root) || skip "no cgroup2 mount"
	cg="$root/opensnoop-test-$$"
	mkdir "$cg"
	rm -f "$T/go" "$T/hold"
	start_opens C --file "$T/d/one" --opens 6 --comm os_tc
	start_opens D --file "$T/d/one" --opens 9 --comm os_tc
	echo "$C_PID" > "$cg/cgroup.procs"
	start_tool opensnoop -j -c "$cg"
	go
	wait_loads C D
	stop_tool INT
	rmdir "$cg"
	[ "$(count_path "$T/d/one")" -eq 6 ]
	jout 'select(.path) | .pid == $p' --argjson p "$C_PID"
}

# fifo_trace SA_RESTART OPENS TOOL_ARGS...: openload's FIFO opens, each
# interrupted by 3 SIGUSR1 (handler with SA_RESTART 1 or 0), traced with
# opensnoop TOOL_ARGS -p PID until the process exits; the process's opens
# are OPENS reads of $FIFO (O_RDONLY), EINTR more that failed EINTR (0 with
# SA_RESTART, more than 0 without) and OPENS writes (O_WRONLY).
FIFO_OPENS=5
fifo_trace() {
	local restart=$1 opens=$2
	shift 2
	FIFO=$T/fifo
	# Each run's pid= line and banner, not an earlier run's.
	rm -f "$T/go" "$T/hold" "$T/A.out" "$T/out" "$T/err"
	start_opens A --fifo "$FIFO" --signal-us 1000 --sa-restart "$restart" --opens "$opens"
	start_tool opensnoop "$@" -p "$A_PID"
	go
	wait_loads A
	tool_wait
	[ "$TOOL_STATUS" -eq 0 ]
	EINTR=$(sed -nE 's/^eintr=([0-9]+)$/\1/p' "$T/A.out")
	echo "sa-restart $restart: eintr=$EINTR"
	if [ "$restart" = 1 ]; then
		[ "$EINTR" -eq 0 ]
	else
		[ "$EINTR" -gt 0 ]
	fi
}

@test "interrupted FIFO opens, events: one per open as the process saw it, never -512" {
	local o=$FIFO_OPENS
	for restart in 1 0; do
		fifo_trace "$restart" "$o" -j
		jq -s 'map(select(.path))' "$T/out" > "$T/events"
		jq -e 'all(.err < 512 or .err > 516)' "$T/events"
		jq -e --arg p "$FIFO" --argjson pid "$A_PID" 'all(.path == $p and .pid == $pid)' \
			"$T/events"
		jq -e --argjson o "$o" --argjson n "$EINTR" '
			(map(select(.flags % 4 == 0 and .err == 0 and .fd >= 0)) | length) == $o and
			(map(select(.flags % 4 == 1 and .err == 0 and .fd >= 0)) | length) == $o and
			(map(select(.err == 4 and .fd == -1 and .flags % 4 == 0)) | length) == $n and
			length == 2 * $o + $n' "$T/events"
		jout 'select(.events) | .events == $t and .lost == 0' --argjson t $((2 * o + EINTR))
	done
}

@test "interrupted FIFO opens, -C --by errno (counted at the exit): EINTR rows exact, no restart code" {
	local o=$FIFO_OPENS
	fifo_trace 1 "$o" -C -j --by errno
	jq -e -s --argjson o "$o" 'length == 1 and (.[0] | .by == "errno" and
		.total == 2 * $o and .lost == 0 and
		.rows == [{"errno": 0, "opens": (2 * $o), "failed": 0}])' "$T/out"

	fifo_trace 0 "$o" -C -j --by errno
	jq -e -s --argjson o "$o" --argjson n "$EINTR" 'length == 1 and (.[0] | .by == "errno" and
		.total == 2 * $o + $n and .lost == 0 and
		(.rows | sort_by(.errno)) == [{"errno": 0, "opens": (2 * $o), "failed": 0},
					      {"errno": 4, "opens": $n, "failed": $n}])' "$T/out"
}

@test "interrupted FIFO opens, -C by process (counted at the exit): opens and failed exact" {
	local o=$FIFO_OPENS
	for restart in 1 0; do
		fifo_trace "$restart" "$o" -C -j
		jq -e -s --argjson o "$o" --argjson n "$EINTR" --argjson pid "$A_PID" '
			length == 1 and (.[0] | .by == "process" and .total == 2 * $o + $n and
			.lost == 0 and
			.rows == [{"pid": $pid, "comm": "openload", "opens": (2 * $o + $n), "failed": $n}])' \
			"$T/out"
	done
}

@test "interrupted FIFO opens, -C -f O_RDONLY (the entry path): the reads only, EINTR exact" {
	local o=$FIFO_OPENS
	for restart in 1 0; do
		fifo_trace "$restart" "$o" -C -j -f O_RDONLY
		jq -e -s --argjson o "$o" --argjson n "$EINTR" --argjson pid "$A_PID" '
			length == 1 and (.[0] | .total == $o + $n and .lost == 0 and
			.rows == [{"pid": $pid, "comm": "openload", "opens": ($o + $n), "failed": $n}])' \
			"$T/out"

		fifo_trace "$restart" "$o" -C -j -f O_RDONLY --by errno
		jq -e -s --argjson o "$o" --argjson n "$EINTR" '
			length == 1 and (.[0] | .total == $o + $n and
			(.rows | sort_by(.errno)) == ([{"errno": 0, "opens": $o, "failed": 0}] +
				if $n > 0 then [{"errno": 4, "opens": $n, "failed": $n}] else [] end))' \
			"$T/out"
	done
}

@test "interrupted FIFO opens, -L: each open timed once, the EINTR ones as errors" {
	local o=$FIFO_OPENS
	for restart in 1 0; do
		fifo_trace "$restart" "$o" -L -j
		jout '.count == 2 * $o + $n and .errors == $n' --argjson o "$o" --argjson n "$EINTR"
		[ "$(jq -s 'length' "$T/out")" -eq 1 ]
	done
}
