#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# opensnoop against openload, a workload with a known set of opens.

load helpers
bats_require_minimum_version 1.5.0

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

# A bound in time: alone, not beside three other tests on two CPUs.
# bats test_tags=serial
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
-b 18014398509483008M|invalid buffer size
-b 18446744073709551616|invalid buffer size
1|no interval
-d 5|no -d: a duration is --duration SECONDS
--duration 0|invalid duration '0'
-m|-m and --ns go with -L
-C --ns|-m and --ns go with -L
-p 0|invalid PID '0'
--bogus|unknown option '--bogus'
EOF_CASES
}

@test "nothing of opensnoop stays loaded after exit" {
	start_tool opensnoop -n rl_nobody
	bpf_ids_of "$TOOL_JOB" "$T/ids"
	stop_tool TERM
	bpf_ids_gone "$T/ids"
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
	grep -q '^6 opens by 2 results; 1 more row not shown (-r N)$' "$T/out"
}

@test "-C with an interval: each interval's counts, summing exactly" {
	local k n
	start_tool opensnoop -C -j -n os_ivl 0.05
	go
	finish
	# three bursts, each waited for until a report after its end is out:
	# they land in different intervals however fast this machine is
	for k in 1 2 3; do
		start_opens A --file "$T/d/one" --opens 5000 --comm os_ivl
		wait_loads A
		n=$(wc -l < "$T/out")
		wait_lines "$T/out" $((n + 2))
	done
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	jq -c 'del(.rows)' "$T/out" | grep -v '"total":0,'
	[ "$(jq -s 'map(select(.total > 0)) | length' "$T/out")" -ge 3 ]
	[ "$(jq -s 'map(.total) | add' "$T/out")" -eq 15000 ]
	jout '.total == ([.rows[].opens] | add // 0)'
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

	# a directory name over 63 bytes: cut and marked, as readlat -F
	long=$(printf 'q%098d1' 0)
	mkdir -p "$T/d/$long"
	echo x > "$T/d/$long/f"
	rm -f "$T/go" "$T/hold"
	start_opens L --dir "$T/d/$long" --file f --opens 2
	start_tool opensnoop -F -p "$L_PID"
	go
	wait_loads L
	tool_wait
	[ "$(grep -cF " $T/d/${long:0:63}.../f" "$T/out")" -eq 2 ]

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

# opens_by_name ST: "PID NAME COUNT" for each process of a strace -f log
# of open, openat, openat2 and execve, NAME being what it was called at
# the open: its last exec before it, else its parent's shell (every
# process here is forked by the shell that strace ran).
opens_by_name() {
	awk -v sh="$2" '
		$2 ~ /^execve\(/ { split($2, a, "\""); n = a[2]; sub(/.*\//, "", n); name[$1] = n; next }
		$2 ~ /^(open|openat|openat2)\(/ { c[$1 " " (($1 in name) ? name[$1] : sh)]++ }
		END { for (k in c) print k, c[k] }' "$1" | sort
}

@test "-C, -C --by comm and -L -P name a process by what it is called at each open: a shell loop's children count under what they exec (strace -f)" {
	cp /bin/bash "$T/os5sh"
	cp /bin/cat "$T/os5cat"
	cp /bin/true "$T/os5true"
	printf 'for i in $(seq 100); do "%s" "%s" > /dev/null; "%s"; done\n' \
		"$T/os5cat" "$T/d/one" "$T/os5true" > "$T/loop"
	own_cgroup
	start_tool opensnoop -L -P -j -c "$CG"
	mv "$T/out" "$T/latency"
	LATENCY_JOB=$TOOL_JOB
	start_tool opensnoop -C -j -c "$CG"
	mv "$T/out" "$T/by_process"
	BY_PROCESS_JOB=$TOOL_JOB
	start_tool opensnoop -C --by comm -j -c "$CG"
	in_cg strace -f -qq -o "$T/st" -e trace=open,openat,openat2,execve "$T/os5sh" "$T/loop"
	for job in "$TOOL_JOB" "$BY_PROCESS_JOB" "$LATENCY_JOB"; do
		TOOL_JOB=$job
		stop_tool INT
		[ "$TOOL_STATUS" -eq 0 ]
	done
	rmdir "$CG"

	# (the loop's $(seq 100) is left out: other tests may run seq too)
	opens_by_name "$T/st" os5sh | grep -E '^[0-9]+ os5(sh|cat|true) ' > "$T/truth"
	# Each of the 200 children of the loop is a row under what it exec'd.
	[ "$(grep -c ' os5cat ' "$T/truth")" -eq 100 ]
	[ "$(grep -c ' os5true ' "$T/truth")" -eq 100 ]
	jq -r '.rows[] | select(.comm | test("^os5(sh|cat|true)$")) | "\(.pid) \(.comm) \(.opens)"' \
		"$T/by_process" | sort > "$T/seen"
	diff "$T/truth" "$T/seen"
	# -L -P: a histogram per process and name, each open in it once
	jq -r 'select(.key.comm // "" | test("^os5(sh|cat|true)$")) | "\(.key.pid) \(.key.comm) \(.count)"' \
		"$T/latency" | sort > "$T/seen_latency"
	diff "$T/truth" "$T/seen_latency"
	# --by comm: the same opens, summed in the kernel by name.
	awk '{ c[$2] += $3 } END { for (k in c) print k, c[k] }' "$T/truth" | sort > "$T/truth_comm"
	jq -r '.rows[] | select(.comm | test("^os5(sh|cat|true)$")) | "\(.comm) \(.opens)"' \
		"$T/out" | sort > "$T/seen_comm"
	cat "$T/truth_comm"
	diff "$T/truth_comm" "$T/seen_comm"
	jout '.by == "comm" and (.rows | map(.opens) | add) == .total and all(.rows[]; has("pid") | not)'
}

@test "-C --by file: two paths longer than 255 bytes with the same prefix stay two rows, marked truncated" {
	long="$T/d/$(printf 'x%.0s' $(seq 200))/$(printf 'y%.0s' $(seq 100))"
	mkdir -p "$long"
	echo a > "$long/one"
	echo b > "$long/two"
	start_opens A --file "$long/one" --opens 3 --comm os_long
	start_opens B --file "$long/two" --opens 5 --comm os_long
	start_tool opensnoop -C --by file -j -n os_long
	go
	wait_loads A B
	stop_tool INT
	jq -e -s --arg p "${long:0:255}" --argjson n ${#long} 'map(select(.total > 0)) | length == 1 and
		(.[0] | .total == 8 and (.rows | length) == 2 and
		 (.rows | map(.opens) | sort) == [3, 5] and
		 all(.rows[]; .path == $p and .truncated == true and .path_bytes == $n + 4))' "$T/out"

	rm -f "$T/go" "$T/hold"
	start_opens C --file "$long/one" --opens 2 --file "$T/d/one" --comm os_long
	start_tool opensnoop -C --by file -n os_long
	go
	wait_loads C
	stop_tool INT
	grep -qE "^2 +0 +${long:0:255}\.\.\. \[truncated\]\$" "$T/out"
	grep -qE "^2 +0 +$T/d/one\$" "$T/out"
}

@test "-C -j: every row unless -r; text says how many rows it does not show" {
	for i in $(seq 26); do echo "$i" > "$T/d/f$i"; done
	args=()
	for i in $(seq 13); do args+=(--file "$T/d/f$i"); done
	start_opens A "${args[@]}" --opens 2 --comm os_rows
	args=()
	for i in $(seq 14 26); do args+=(--file "$T/d/f$i"); done
	start_opens B "${args[@]}" --opens 1 --comm os_rows
	start_tool opensnoop -C --by file -j -n os_rows
	go
	wait_loads A B
	stop_tool INT
	jout 'select(.total > 0) | .total == 39 and .keys == 26 and (.rows | length) == 26 and
		(.rows | map(.opens) | add) == .total and .rows[0].opens == 2 and .rows[25].opens == 1'

	for rows in "-r 5" ""; do
		rm -f "$T/go" "$T/hold"
		start_opens C "${args[@]}" --opens 1 --comm os_rows
		# shellcheck disable=SC2086	# -r N are words
		start_tool opensnoop -C --by file -n os_rows $rows
		go
		wait_loads C
		stop_tool INT
		if [ -n "$rows" ]; then
			[ "$(grep -cE "^1 +0 +$T/d/f" "$T/out")" -eq 5 ]
			grep -q '^13 opens by 13 files; 8 more rows not shown (-r N)$' "$T/out"
		else
			[ "$(grep -cE "^1 +0 +$T/d/f" "$T/out")" -eq 13 ]
			grep -q '^13 opens by 13 files$' "$T/out"
		fi
	done

	rm -f "$T/go" "$T/hold"
	start_opens D "${args[@]}" --opens 1 --comm os_rows
	start_tool opensnoop -C --by file -j -r 4 -n os_rows
	go
	wait_loads D
	stop_tool INT
	jout 'select(.total > 0) | .total == 13 and .keys == 13 and (.rows | length) == 4'
}

@test "events: | head -1 on a quiet system ends opensnoop within 1 s of head exiting" {
	start_opens A --file "$T/d/one" --opens 1 --comm os_head
	mkfifo "$T/pipe"
	head -n1 < "$T/pipe" > "$T/head" &
	HEAD_JOB=$!
	JOBS+=("$HEAD_JOB")
	"$BUILD/opensnoop" -j -n os_head > "$T/pipe" 2> "$T/err" &
	TOOL_JOB=$!
	watchdog "$TOOL_JOB"
	wait_for "$T/err" 'Hit Ctrl-C to end'
	go
	wait_exit "$HEAD_JOB"
	t0=$(date +%s%N)
	tool_wait
	t1=$(date +%s%N)
	echo "opensnoop ended $(((t1 - t0) / 1000000)) ms after head, status $TOOL_STATUS"
	[ $(((t1 - t0) / 1000000)) -lt 1000 ]
	[ "$TOOL_STATUS" -eq 0 ]
	jq -e --arg p "$T/d/one" '.path == $p and .comm == "os_head"' "$T/head"
	wait_loads A
}
