#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# readlat against readload, a workload with a known number of reads of a
# known latency. Runs the real tool as root on the real kernel.

load helpers
bats_require_minimum_version 1.5.0

setup() { common_setup; }
teardown() { common_teardown; }

# 3 ms per read: the log2 bucket 2048..4095 us (or 2..3 ms) holds it
# with room for scheduling delay. A busy or slow host wakes the reader
# later (a p50 over 4 ms in one CI run), so the bound above is the rows
# up to 32 ms: it catches a wrong unit (1000x), not the host's speed.
DELAY=3000
LAT_HI=32768

@test "-p PID: exactly its reads, p50 in the bucket of the delay (JSON)" {
	start_load A --reads 50 --delay-us $DELAY
	start_tool readlat -j -p "$A_PID"
	go
	wait_loads A
	tool_wait		# ends by itself when the process exits
	[ "$TOOL_STATUS" -eq 0 ]
	[ "$(jq -s length "$T/out")" -eq 1 ]
	jout '.tool == "readlat" and .unit == "usecs" and .count == 50 and .errors == 0'
	jout '.p50 >= 2048 and .p50 < $hi' --argjson hi "$LAT_HI"
	jout '([.buckets[].count] | add) == 50'
	jout '.max >= .p999 and .p999 >= .p99 and .p99 >= .p90 and .p90 >= .p50'
	grep -q "process $A_PID exited" "$T/err"
}

@test "text output: bcc log2 table and summary line" {
	start_load A --reads 40 --delay-us $DELAY
	start_tool readlat -p "$A_PID"
	go
	wait_loads A
	tool_wait
	grep -qE '^ +usecs +: count +distribution$' "$T/out"
	row=$(grep -E '^ +2048 -> 4095 +: ' "$T/out")
	[ "$(awk '{print $5}' <<<"$row")" -ge 20 ]
	grep -qE '^\s+[0-9]+ -> [0-9]+\s+: [0-9]+\s+\|[* ]{40}\|$' "$T/out"
	[ "$(summary_field count)" -eq 40 ]
	[ "$(summary_field errors)" -eq 0 ]
}

@test "-m: milliseconds; --ns: nanoseconds" {
	# The same reads timed in the three units at once: the same figures
	# (but for what runs between the instances' programs, and the bucket
	# a percentile falls in), where a wrong unit is 1000x off; and the
	# order of magnitude of the delay, however busy the machine is.
	start_load A --reads 20 --delay-us $DELAY
	start_more readlat US -j -p "$A_PID"
	start_more readlat NS -j --ns -p "$A_PID"
	start_tool readlat -j -m -p "$A_PID"
	go
	wait_loads A
	tool_wait
	wait_exit "$US_TOOL"
	wait_exit "$NS_TOOL"
	cat "$T/out" "$T/US.out" "$T/NS.out"
	jout '.unit == "msecs" and .count == 20 and .p50 >= 2 and .p50 < 200'
	jq -e '.unit == "usecs" and .count == 20' "$T/US.out"
	jq -e '.unit == "nsecs" and .count == 20' "$T/NS.out"
	for f in p50 p90 avg max; do
		ms=$(jq ".$f" "$T/out") us=$(jq ".$f" "$T/US.out") ns=$(jq ".$f" "$T/NS.out")
		awk -v ms="$ms" -v us="$us" -v ns="$ns" 'BEGIN { a = ms * 1e6; b = us * 1e3
			exit !(ns > 0 && a >= ns / 1.5 && a <= ns * 1.5 && b >= ns / 1.5 && b <= ns * 1.5) }'
	done
}

@test "-p excludes a second concurrent reader" {
	start_load A --reads 30 --delay-us 2000
	start_load B --reads 70 --delay-us 1000
	start_tool readlat -j -p "$A_PID"
	go
	wait_loads A B
	tool_wait
	jout '.count == 30'
}

@test "-t TID: exactly that thread's reads, ends when the thread exits" {
	start_load A --threads 2 --reads 25 --delay-us 2000
	start_tool readlat -j -t "${A_TIDS[0]}"
	go
	tool_wait		# the thread exits before the process (held)
	jout '.count == 25'
	grep -q "thread ${A_TIDS[0]} exited" "$T/err"
	wait_loads A
}

# C was named longer first (a kernel that does not pad leaves the old bytes
# after the NUL); D's name begins with the filter's.
@test "-n COMM: only threads with that name" {
	start_load A --reads 25 --delay-us 2000 --comm rl_alpha
	start_load B --reads 35 --delay-us 1000 --comm rl_beta
	start_load C --reads 10 --delay-us 1000 --comm rl_alphabetical --comm rl_alpha
	start_load D --reads 7 --delay-us 1000 --comm rl_alphabetical
	start_tool readlat -j -n rl_alpha
	go
	wait_loads A B C D
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	jout '.count == 35'
}

@test "-n COMM: a thread's own name or its process's, the name -P shows (bpftrace by thread name)" {
	start_load A --threads 2 --reads 30 --delay-us 1000 --comm rl_thr --thread-comm rl_w0,rl_w1
	bpftrace_start "tracepoint:syscalls:sys_exit_read /pid == $A_PID/ { @[comm] = count(); }"
	start_tool readlat -j -n rl_thr
	mv "$T/out" "$T/by_process"
	PROCESS_JOB=$TOOL_JOB
	start_tool readlat -j -P -n rl_thr
	mv "$T/out" "$T/per_process"
	PER_PROCESS_JOB=$TOOL_JOB
	start_tool readlat -j -n rl_w0
	go
	wait_loads A
	for TOOL_JOB in "$TOOL_JOB" "$PROCESS_JOB" "$PER_PROCESS_JOB"; do
		stop_tool INT
		[ "$TOOL_STATUS" -eq 0 ]
	done
	bpftrace_stop > "$T/truth"
	cat "$T/truth"
	grep -qx "rl_w0 30" "$T/truth"
	grep -qx "rl_w1 30" "$T/truth"
	jout '.count == 30'
	jq -e '.count == 60' "$T/by_process"
	jq -e -s 'map(select(.key.pid == $p)) | length == 1 and .[0].key.comm == "rl_thr" and .[0].count == 60' --argjson p "$A_PID" "$T/per_process"
}

@test "-c CGROUP: only processes in that cgroup v2" {
	root=$(cgroup2_root) || skip "no cgroup2 mount"
	cg="$root/readlat-test-$$"
	mkdir "$cg"
	start_load A --reads 15 --delay-us 2000
	start_load B --reads 33 --delay-us 1000
	echo "$A_PID" > "$cg/cgroup.procs"
	start_tool readlat -j -c "$cg"
	go
	wait_loads A B
	stop_tool INT
	rmdir "$cg"
	jout '.count == 15'
}

# -n and -c answers are kept per thread (bpf/filter.bpf.h): the reads
# before a rename or a cgroup move must not decide those after it.
# two_phases NAME SETUP BETWEEN COUNT READLAT_ARGS... -- READLOAD_ARGS...:
# the reader starts and SETUP runs (a command, or :); pinned to CPU 0
# (where its answer is kept), it makes 40 reads, BETWEEN runs, it makes
# 60 more in the same thread; readlat's count must be COUNT. This shell
# and what it starts keep off CPU 0 meanwhile: a read of theirs there
# would take the reader's place in the cache, and a stale answer would go
# unseen: the tests that use it run alone (serial), as no other test's
# reads and forks may either.
two_phases() {
	local name=$1 setup=$2 between=$3 count=$4 tool=() pid mask
	shift 4
	mask=$(taskset -p $$ | awk '{ print $NF }')
	[ "$(getconf _NPROCESSORS_ONLN)" -lt 2 ] || taskset -p -c 1 $$ >/dev/null
	while [ "$1" != -- ]; do tool+=("$1"); shift; done
	shift
	rm -f "$T/go" "$T/hold" "$T/then"
	start_load "$name" --source zero --first 40 --then "$T/then" --reads 60 "$@"
	pid=${name}_PID
	taskset -a -p -c 0 "${!pid}" >/dev/null
	eval "$setup"
	start_tool readlat -j "${tool[@]}"
	go
	wait_for "$T/$name.out" '^first-done'
	eval "$between"
	touch "$T/then"
	wait_loads "$name"
	stop_tool INT
	taskset -p "$mask" $$ >/dev/null
	jout ".count == $count"
}

# bats test_tags=serial
@test "-n COMM: a thread renamed, by another thread or by itself, is judged by its new name from then on" {
	two_phases A : : 60 -n rl_after -- --comm rl_before --rename rl_after
	# the process keeps the name: its threads still match, renamed or not
	two_phases B : : 100 -n rl_after -- --comm rl_after --rename rl_other
	two_phases C : : 60 -n rl_after -- --comm rl_before --rename-self rl_after
	# with -c, whose answers (the name's with them) are kept
	root=$(cgroup2_root) || skip "no cgroup2 mount"
	two_phases D : : 60 -n rl_after -c "$root" -- --comm rl_before --rename rl_after
	two_phases E : : 60 -n rl_after -c "$root" -- --comm rl_before --rename-self rl_after
}

# bats test_tags=serial
@test "-c CGROUP: a process moved in or out is judged by its new cgroup from then on" {
	root=$(cgroup2_root) || skip "no cgroup2 mount"
	cg="$root/readlat-test-$$"
	mkdir "$cg"
	two_phases A : 'echo "$A_PID" > "$cg/cgroup.procs"' 60 -c "$cg" --
	two_phases B 'echo "$B_PID" > "$cg/cgroup.procs"' 'echo "$B_PID" > "$root/cgroup.procs"' 40 -c "$cg" --
	rmdir "$cg"
}

@test "-P: one histogram per process, keyed by pid and comm" {
	start_load A --reads 20 --delay-us 2000 --comm rl_p1
	start_load B --reads 30 --delay-us 1000 --comm rl_p2
	start_tool readlat -j -P
	go
	wait_loads A B
	stop_tool INT
	jout 'select(.key.pid == $p) | .key.comm == "rl_p1" and .count == 20' --argjson p "$A_PID"
	jout 'select(.key.pid == $p) | .key.comm == "rl_p2" and .count == 30' --argjson p "$B_PID"
	[ "$(jq -s "map(select(.key.pid == $A_PID)) | length" "$T/out")" -eq 1 ]
}

@test "-F: one histogram per file descriptor, with its path" {
	start_load A --threads 2 --reads 15 --delay-us 2000
	start_tool readlat -j -F -p "$A_PID"
	go
	wait_for "$T/A.out" '^done'	# reads over, process held: paths resolve
	stop_tool INT
	for fd in "${A_FDS[@]}"; do
		jout 'select(.key.pid == $p and .key.fd == $fd) | .count == 15 and (.key.path | startswith("pipe:"))' \
			--argjson p "$A_PID" --argjson fd "$fd"
	done
	[ "$(jq -s length "$T/out")" -eq 2 ]
}

@test "--slower: one line per slow read, none under the threshold" {
	start_load A --reads 10 --delay-us $DELAY
	start_tool readlat --slower 1500 -p "$A_PID"
	go
	wait_loads A
	tool_wait
	grep -qE '^TIME +PID +TID +COMM +FD +BYTES +LAT\(us\)$' "$T/out"
	[ "$(grep -cE "^[0-9:]{8} +$A_PID +${A_TIDS[0]} +readload +${A_FDS[0]} +1 +[0-9.]+$" "$T/out")" -eq 10 ]
	awk 'NR > 1 && $7 < 1500 { exit 1 }' "$T/out"
	grep -q "10 of 10 reads took 1500 usecs or longer; 0 failed; 0 lost" "$T/err"

	rm -f "$T/go" "$T/hold"
	start_load B --reads 10 --delay-us 1000
	start_tool readlat -j --slower 100000 -p "$B_PID"
	go
	wait_loads B
	tool_wait
	jout 'select(.reads) | .reads == 10 and .slower == 0 and .lost == 0'
	[ "$(jq -s 'map(select(.latency)) | length' "$T/out")" -eq 0 ]
}

@test "failed reads are counted apart, or in the histogram with --errors" {
	start_load A --source badfd --reads 7
	start_tool readlat -j -p "$A_PID"
	go
	wait_loads A
	tool_wait
	jout '.count == 0 and .errors == 7'

	rm -f "$T/go" "$T/hold"
	start_load B --source badfd --reads 7
	start_tool readlat -j --errors -p "$B_PID"
	go
	wait_loads B
	tool_wait
	jout '.count == 7 and .errors == 7'
}

@test "-s: each read-family syscall, and only those asked for" {
	for sc in pread64 readv preadv; do
		rm -f "$T/go" "$T/hold"
		start_load A --source zero --syscall "$sc" --reads 40
		start_tool readlat -j -s "read,$sc" -p "$A_PID"
		go
		wait_loads A
		tool_wait
		jout '.count == 40'

		rm -f "$T/go" "$T/hold"
		start_load B --source zero --syscall "$sc" --reads 40
		start_tool readlat -j -p "$B_PID"
		go
		wait_loads B
		tool_wait
		jout '.count == 0'
	done
}

@test "interval and count: exactly count reports, then exit 0" {
	run timeout 10 "$BUILD/readlat" -j 0.2 3
	[ "$status" -eq 0 ]
	[ "$(grep -c '^{' <<<"$output")" -eq 3 ]
}

@test "intervals lose nothing: 20 ms reports sum to every read made" {
	# back-to-back reads, drained while they run (as often as this
	# machine's speed makes it), in two bursts at least a report apart
	# (the second report printed after the first burst was drained after
	# it): the global histogram and -P's keyed maps, flipped and waited
	# for at the per-CPU gates (intervals under 0.1 s).
	local n
	start_load A --source zero --first 500000 --then "$T/then" --reads 500000
	start_tool readlat -j -p "$A_PID" 0.02
	go
	wait_for "$T/A.out" '^first-done'
	n=$(wc -l < "$T/out")
	wait_lines "$T/out" $((n + 2))
	touch "$T/then"
	wait_loads A
	tool_wait
	[ "$(jq -s 'map(select(.count > 0)) | length' "$T/out")" -ge 2 ]
	[ "$(jq -s 'map(.count) | add' "$T/out")" -eq 1000000 ]

	rm -f "$T/go" "$T/hold" "$T/then"
	start_load B --source zero --first 500000 --then "$T/then" --reads 500000
	start_tool readlat -j -P -p "$B_PID" 0.02	# one line a report
	go
	wait_for "$T/B.out" '^first-done'
	n=$(wc -l < "$T/out")
	wait_lines "$T/out" $((n + 2))
	touch "$T/then"
	wait_loads B
	tool_wait
	[ "$(jq -s --argjson p "$B_PID" 'map(select(.key.pid == $p and .count > 0)) | length' "$T/out")" -ge 2 ]
	[ "$(jq -s --argjson p "$B_PID" 'map(select(.key.pid == $p) | .count) | add' "$T/out")" -eq 1000000 ]
}

@test "intervals lose nothing at 0.1 s too, where reports wait for RCU, not at the gates" {
	# From 0.1 s up the programs carry no gate (common/drain.h): each
	# report waits for a grace period instead. The sums must still hold.
	start_load A --source zero --reads 1000000
	start_tool readlat -j -p "$A_PID" 0.1
	go
	wait_loads A
	tool_wait
	[ "$(jq -s length "$T/out")" -ge 2 ]
	[ "$(jq -s 'map(.count) | add' "$T/out")" -eq 1000000 ]

	rm -f "$T/go" "$T/hold"
	start_load B --source zero --reads 1000000
	start_tool readlat -j -P -n readload 0.1
	go
	wait_loads B
	stop_tool INT
	[ "$(jq -s --argjson p "$B_PID" 'map(select(.key.pid == $p) | .count) | add' "$T/out")" -eq 1000000 ]
}

@test "--duration ends the run with one report" {
	run timeout 10 "$BUILD/readlat" -j --duration 0.5
	[ "$status" -eq 0 ]
	[ "$(grep -c '^{' <<<"$output")" -eq 1 ]
}

@test "SIGTERM and SIGINT print the final histogram, also mid-interval" {
	start_load A --reads 12 --delay-us 1000 --comm rl_term
	start_tool readlat -j -n rl_term 3600
	go
	wait_loads A
	stop_tool TERM
	[ "$TOOL_STATUS" -eq 0 ]
	jout '.count == 12'

	start_tool readlat -n rl_none 3600
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	grep -q '^count 0' "$T/out"
}

@test "-T timestamps each report" {
	run timeout 10 "$BUILD/readlat" -T 0.2 1
	[ "$status" -eq 0 ]
	grep -qE '^[0-9]{2}:[0-9]{2}:[0-9]{2}$' <<<"$output"
}

@test "output into a closed pipe ends quietly" {
	run timeout 10 bash -c "'$BUILD/readlat' -T 0.1 2>'$T/err' | head -n 1"
	[ "$status" -eq 0 ]
	! grep -vE 'Hit Ctrl-C' "$T/err"
}

@test "bad input: one line on stderr, exit 2" {
	usage_errors readlat <<'EOF_CASES'
-p abc|invalid PID 'abc'
-p 0|invalid PID '0'
-p -5|invalid PID '-5'
-p 12x|invalid PID '12x'
-t abc|invalid TID 'abc'
-p|option '-p' needs an argument
--pid|option '--pid' needs an argument
0|invalid interval '0'
-1|invalid interval or count '-1'
abc|invalid interval 'abc'
1 0|invalid count '0'
1 -2|invalid interval or count '-2'
1 2 3|unexpected argument '3'
--bogus|unknown option '--bogus'
-x|unknown option '-x'
--json=1|option '--json' takes no argument
--duration 0|invalid duration '0'
--duration x|invalid duration 'x'
-n aaaaaaaaaaaaaaaaaaaa|invalid name
-s write|unknown syscall 'write'
--slower abc|invalid threshold 'abc'
-P -F|cannot be combined
-p 1 -t 1|cannot be combined
--probe foo|invalid probe kind 'foo'
--btf /nonexistent/btf|cannot read BTF file '/nonexistent/btf'
--btf /etc/passwd|/etc/passwd is not a BTF file (
--duration 1e300|invalid duration '1e300': expected seconds from 0.001 to 31536000
0.0000001|invalid interval '0.0000001': expected seconds from 0.001 to 31536000
--duration 0x10|invalid duration '0x10'
-m --ns|-m and --ns cannot be combined
-n a -n b|option '-n' given twice
-p 1 -p 2|option '-p' given twice
-s read -s readv|option '-s' given twice
EOF_CASES
}

# Cases the word splitting above cannot express: a space or nothing in a value.
@test "bad input with a space or an empty value: one line on stderr, exit 2" {
	run timeout 10 "$BUILD/readlat" --slower ' 5'
	[ "$status" -eq 2 ]
	[ "$output" = "readlat: invalid threshold ' 5' for --slower: expected microseconds from 0 to 1000000000000" ]
	run timeout 10 "$BUILD/readlat" -c ''
	[ "$status" -eq 2 ]
	[ "$output" = "readlat: invalid cgroup '': expected a cgroup v2 directory" ]
}

@test "-h and -V exit 0 on stdout" {
	run "$BUILD/readlat" -h
	[ "$status" -eq 0 ]
	[[ "$output" == *"Usage: readlat"* ]]
	[[ "$output" == *"--pid"* ]]
	run "$BUILD/readlat" -V
	[ "$status" -eq 0 ]
	[[ "$output" == "readlat "* ]]
}

@test "-p of a process that does not exist: one line, exit 1" {
	pid=$(( $(cat /proc/sys/kernel/pid_max) + 1 ))
	run timeout 10 "$BUILD/readlat" -p "$pid"
	[ "$status" -eq 1 ]
	[ "$output" = "readlat: no process with PID $pid" ]
	run timeout 10 "$BUILD/readlat" -t "$pid"
	[ "$status" -eq 1 ]
	[ "$output" = "readlat: no thread with TID $pid" ]
}

@test "-c of something that is not a cgroup v2 directory: one line, exit 1" {
	run timeout 10 "$BUILD/readlat" -c /tmp
	[ "$status" -eq 1 ]
	[[ "$output" == "readlat: /tmp is not a cgroup v2 directory"* ]]
	run timeout 10 "$BUILD/readlat" -c /nonexistent/cg
	[ "$status" -eq 1 ]
	[ "$output" = "readlat: cannot open cgroup /nonexistent/cg: No such file or directory" ]
}

@test "-p of a thread id names the process: one line, exit 2" {
	start_load A --threads 2 --reads 1
	run timeout 10 "$BUILD/readlat" -p "${A_TIDS[1]}"
	[ "$status" -eq 2 ]
	[ "$output" = "readlat: ${A_TIDS[1]} is a thread of process $A_PID: use -t ${A_TIDS[1]} for that thread, or -p $A_PID" ]
}

@test "-s LIST leaves argv as given: ps shows the commas" {
	start_tool readlat -s read,pread64 -n rl_none
	[ "$(ps -o args= -p "$TOOL_JOB")" = "$BUILD/readlat -s read,pread64 -n rl_none" ]
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
}

@test "--check: a row per check and probe, exit 0" {
	run timeout 10 "$BUILD/readlat" --check -s read,preadv
	[ "$status" -eq 0 ]
	[[ "$output" == *"privileges"*"ok"* ]]
	grep -qE '^probe sys_enter_preadv +ok +tracepoint syscalls/sys_enter_preadv$' <<<"$output"
	grep -qE '^start-time store +ok +task storage$' <<<"$output"
	[[ "${lines[-1]}" == "readlat can run on this system" ]]
}

@test "not privileged: one line naming what is needed, exit 1" {
	run timeout 10 setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all "$BUILD/readlat"
	[ "$status" -eq 1 ]
	[ "$output" = "readlat: needs root (or CAP_BPF, CAP_PERFMON and CAP_DAC_READ_SEARCH); try: sudo readlat" ]
	run timeout 10 setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all "$BUILD/readlat" --check
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot run"* ]]
}

@test "tracefs not mounted: mounted by the tool, or explained" {
	run timeout 20 unshare -m sh -c "umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/debug/tracing 2>/dev/null; '$BUILD/readlat' --duration 0.2 -j"
	[ "$status" -eq 0 ]
	[[ "$output" == *'"count":'* ]]
	run timeout 20 unshare -m sh -c "umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/debug/tracing 2>/dev/null; exec setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin '$BUILD/readlat' --duration 0.2"
	[ "$status" -eq 1 ]
	[[ "$output" == "readlat: tracefs is not mounted at /sys/kernel/tracing"*"mount -t tracefs tracefs /sys/kernel/tracing" ]]
	# not tried without CAP_SYS_ADMIN: that is the reason, not a stale errno
	[[ "$output" == *"could not be mounted (Operation not permitted)"* ]]
}

@test "a tracepoint missing from the kernel is named" {
	run timeout 20 unshare -m sh -c "mount -t tmpfs none /sys/kernel/tracing/events/syscalls/sys_enter_preadv && '$BUILD/readlat' -s read,preadv"
	[ "$status" -eq 1 ]
	[ "$output" = "readlat: tracepoint syscalls/sys_enter_preadv does not exist on this kernel; no other probe for 'sys_enter_preadv' works here (see --check)" ]
	run timeout 20 unshare -m sh -c "mount -t tmpfs none /sys/kernel/tracing/events/syscalls/sys_enter_preadv && '$BUILD/readlat' --check -s read,preadv"
	[ "$status" -eq 1 ]
	grep -qE '^probe sys_enter_preadv +missing +tracepoint syscalls/sys_enter_preadv does not exist' <<<"$output"
}

@test "without kernel BTF: falls back to a hash by thread id, same counts" {
	start_load A --reads 30 --delay-us 2000
	unshare -m sh -c "mount -t tmpfs none /sys/kernel/btf && exec '$BUILD/readlat' -j -v -p $A_PID" > "$T/out" 2> "$T/err" &
	TOOL_JOB=$!
	watchdog "$TOOL_JOB"
	wait_for "$T/err" 'Hit Ctrl-C to end'
	grep -q 'start-time store: fallback (LRU hash by thread id' "$T/err"
	go
	wait_loads A
	tool_wait
	jout '.count == 30 and .p50 >= 1024 and .p50 < $hi' --argjson hi "$LAT_HI"
}

# Without kernel BTF (or with the kernel's name of a file lost) -F asks
# /proc what the fd is. A stat(2) then a readlink(2) of /proc/PID/fd/N
# could check one file and name another (the fd closed and reused in
# between): the link is opened once, and what was opened is checked (when
# the file is known: with BTF) and named. Nothing looks the link up again.
@test "without kernel BTF: -F names each fd from /proc, its link opened once (strace)" {
	command -v strace >/dev/null || skip "no strace"
	start_load A --threads 2 --reads 15 --delay-us 1000
	under_ptrace unshare -m sh -c "mount -t tmpfs none /sys/kernel/btf && exec strace -f -qq -o '$T/strace' \
		-e trace=openat,stat,newfstatat,statx,readlink,readlinkat '$BUILD/readlat' -j -F -p $A_PID" \
		> "$T/out" 2> "$T/err" &
	TOOL_JOB=$!
	watchdog "$TOOL_JOB"
	wait_for "$T/err" 'Hit Ctrl-C to end'
	go
	wait_for "$T/A.out" '^done'	# reads over, process held: paths resolve
	# -f: each line begins with the PID, the tool's
	kill -INT "$(awk '{ print $1; exit }' "$T/strace")"
	tool_wait
	grep -F "/proc/$A_PID/fd/" "$T/strace"
	for fd in "${A_FDS[@]}"; do
		jout 'select(.key.fd == $fd) | .count == 15 and (.key.path | startswith("pipe:["))' \
			--argjson fd "$fd"
		[ "$(grep -cF "\"/proc/$A_PID/fd/$fd\"" "$T/strace")" -eq 1 ]
		grep -qE "openat\(AT_FDCWD, \"/proc/$A_PID/fd/$fd\", .*O_PATH" "$T/strace"
	done
}

# (names of its own: -n rl_alpha beside it would count these reads too)
@test "without kernel BTF: -n copies the name out to compare it, same counts" {
	start_load A --reads 25 --delay-us 2000 --comm rl_nb_alpha
	start_load C --reads 10 --delay-us 1000 --comm rl_nb_alphabet --comm rl_nb_alpha
	start_load D --reads 7 --delay-us 1000 --comm rl_nb_alphabet
	unshare -m sh -c "mount -t tmpfs none /sys/kernel/btf && exec '$BUILD/readlat' -j -n rl_nb_alpha" > "$T/out" 2> "$T/err" &
	TOOL_JOB=$!
	watchdog "$TOOL_JOB"
	wait_for "$T/err" 'Hit Ctrl-C to end'
	go
	wait_loads A C D
	stop_tool INT
	jout '.count == 35'
}

# It turns the kernel's BPF run-time stats on, for every program.
# bats test_tags=serial
@test "--self-cost: run count and ns per event of each program" {
	start_load A --reads 20 --delay-us 1000
	start_tool readlat --self-cost -p "$A_PID"
	go
	wait_loads A
	tool_wait
	grep -q '^self-cost' "$T/err"
	grep -qE '^enter_read +[0-9]+ +[0-9.]+$' "$T/err"
	runs=$(awk '$1 == "exit_read" { print $2 }' "$T/err")
	[ "$runs" -ge 20 ]
}

@test "nothing of readlat stays loaded after exit, whatever ended it" {
	# long enough to list what it holds before it ends by itself
	start_tool readlat --duration 2
	bpf_ids_of "$TOOL_JOB" "$T/ids"
	tool_wait
	[ "$TOOL_STATUS" -eq 0 ]
	bpf_ids_gone "$T/ids"

	start_tool readlat -P -s read,readv
	bpf_ids_of "$TOOL_JOB" "$T/ids"
	stop_tool TERM
	bpf_ids_gone "$T/ids"

	start_tool readlat --slower 1
	bpf_ids_of "$TOOL_JOB" "$T/ids"
	stop_tool KILL
	bpf_ids_gone "$T/ids"
}

@test "the binary is static, does not parse kernel BTF, and stays small" {
	"$BUILD/readlat" --version | grep -q static || skip "a dynamic build (make STATIC=0 or SANITIZE=1)"
	run ldd "$BUILD/readlat"
	[[ "$output" == *"not a dynamic executable"* ]]
	run under_ptrace timeout 10 strace -f -e trace=openat -o "$T/strace" "$BUILD/readlat" --duration 0.1
	[ "$status" -eq 0 ]
	refute grep -q '/sys/kernel/btf/vmlinux' "$T/strace"
	rss=$(/usr/bin/time -f %M timeout 10 "$BUILD/readlat" --duration 0.1 2>&1 >/dev/null | tail -n1)
	[ "$rss" -le 8192 ]
}

# A workload's 30 reads, counted exactly by readlat running as uid $NOBODY
# with exactly CAP_DAC_READ_SEARCH, CAP_PERFMON and CAP_BPF, nothing else.
nonroot_counts_exactly() {
	start_load A --reads 30 --delay-us $DELAY
	start_tool_nonroot -j -p "$A_PID"
	[ "$(awk '$1 == "Uid:" { print $3 }' "/proc/$TOOL_JOB/status")" -eq "$NOBODY" ]
	[ "$(cap_eff "$TOOL_JOB")" = "$(cap_mask 2 38 39)" ]
	go
	wait_loads A
	tool_wait
	[ "$TOOL_STATUS" -eq 0 ]
	jout '.count == 30 and .errors == 0 and .p50 >= 2048 and .p50 < $hi' --argjson hi "$LAT_HI"
}

# The documented way for a user other than root: exactly these capabilities.
@test "non-root with CAP_BPF, CAP_PERFMON and CAP_DAC_READ_SEARCH (ambient): counts exactly" {
	nonroot_setup readlat "$NONROOT_CAPS"
	run timeout 10 "${NONROOT[@]}" "$EXE" --check
	[ "$status" -eq 0 ]
	grep -qE '^privileges +ok +CAP_BPF, CAP_PERFMON and CAP_DAC_READ_SEARCH$' <<<"$output"
	nonroot_counts_exactly
}

@test "non-root with a file capability (setcap cap_bpf,cap_perfmon,cap_dac_read_search+ep): counts exactly" {
	command -v setcap >/dev/null || skip "no setcap (libcap2-bin)"
	nonroot_setup readlat ""
	setcap cap_bpf,cap_perfmon,cap_dac_read_search+ep "$EXE" 2>"$T/setcap" ||
		skip "setcap failed here: $(cat "$T/setcap")"
	nonroot_counts_exactly
}

@test "non-root with only CAP_BPF and CAP_PERFMON: tracefs permission named, not 'does not exist', exit 1" {
	nonroot_setup readlat bpf,perfmon
	! "${NONROOT[@]}" test -x /sys/kernel/tracing ||
		skip "tracefs is open to uid $NOBODY on this host (mounted with gid=/mode=)"
	run timeout 10 "${NONROOT[@]}" "$EXE" --duration 0.2
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "readlat: cannot read /sys/kernel/tracing/events (permission denied: /sys/kernel/tracing is mode 0"*"): run as root, or grant cap_dac_read_search as well (setcap cap_bpf,cap_perfmon,cap_dac_read_search+ep $EXE)" ]]
	run timeout 10 "${NONROOT[@]}" "$EXE" --check
	[ "$status" -eq 1 ]
	grep -qE '^privileges +ok +CAP_BPF and CAP_PERFMON; without CAP_DAC_READ_SEARCH tracefs must be readable by uid 65534$' <<<"$output"
	grep -qE '^tracefs +missing +cannot read /sys/kernel/tracing/events \(permission denied: /sys/kernel/tracing is mode' <<<"$output"
	grep -qE '^probe sys_enter_read +missing +cannot read /sys/kernel/tracing/events/syscalls/sys_enter_read/id \(permission denied' <<<"$output"
	refute grep -q 'does not exist' <<<"$output"
	[ "${lines[-1]}" = "readlat cannot run on this system" ]
}

@test "non-root with some of the capabilities: the missing ones are named, exit 1" {
	nonroot_setup readlat bpf
	run timeout 10 "${NONROOT[@]}" "$EXE"
	[ "$status" -eq 1 ]
	[ "$output" = "readlat: has CAP_BPF but lacks CAP_PERFMON and CAP_DAC_READ_SEARCH: needs root (or CAP_BPF, CAP_PERFMON and CAP_DAC_READ_SEARCH); try: sudo readlat" ]
	nonroot_setup readlat perfmon,dac_read_search
	run timeout 10 "${NONROOT[@]}" "$EXE" --check
	[ "$status" -eq 1 ]
	grep -qE '^privileges +FAILED +has CAP_PERFMON and CAP_DAC_READ_SEARCH but lacks CAP_BPF: ' <<<"$output"
}

# Signals during reads: SIGUSR1 every 20 ms to a thread whose reads take
# 100 ms each (about 5 signals per read). 100 ms = 100000 usecs: log2 row
# 65536 -> 131071, log-linear bucket 98304..114687; a read cut at each
# signal would be timed in pieces of ~20 ms (row 16384 -> 32767).
@test "a read interrupted by signals with SA_RESTART is one read" {
	start_load A --reads 5 --delay-us 100000 --signal-us 20000 --sa-restart 1
	start_tool readlat -j -p "$A_PID"
	go
	wait_loads A
	tool_wait
	[ "$TOOL_STATUS" -eq 0 ]
	grep -qx 'eintr=0' "$T/A.out"	# the kernel restarted every read unseen
	jout '.count == 5 and .errors == 0'
	jout '.p50 >= 65536 and .min >= 65536'

	rm -f "$T/go" "$T/hold"
	start_load B --reads 5 --delay-us 100000 --signal-us 20000 --sa-restart 1
	start_tool readlat --slower 0 --errors -j -p "$B_PID"
	go
	wait_loads B
	tool_wait
	[ "$TOOL_STATUS" -eq 0 ]
	[ "$(jq -s 'map(select(has("latency"))) | length' "$T/out")" -eq 5 ]
	jout 'select(has("latency")) | .ret == 1 and .pid == $p and .latency >= 65536' --argjson p "$B_PID"
	jout 'select(has("reads")) | .reads == 5 and .slower == 5 and .errors == 0'
}

@test "without SA_RESTART, EINTR is one failed read" {
	start_load A --reads 5 --delay-us 100000 --signal-us 20000 --sa-restart 0
	start_tool readlat -j -p "$A_PID"
	go
	wait_loads A
	tool_wait
	[ "$TOOL_STATUS" -eq 0 ]
	k=$(sed -n 's/^eintr=//p' "$T/A.out")
	echo "readload: eintr=$k; readlat: $(cat "$T/out")"
	[ "$k" -gt 0 ]
	jout '.count == 5 and .errors == $k' --argjson k "$k"

	# each failed read as the application saw it: -EINTR (-4), never the
	# kernel-internal -ERESTARTSYS (-512) the syscall exit carries
	rm -f "$T/go" "$T/hold"
	start_load B --reads 5 --delay-us 100000 --signal-us 20000 --sa-restart 0
	start_tool readlat --slower 0 --errors -j -p "$B_PID"
	go
	wait_loads B
	tool_wait
	[ "$TOOL_STATUS" -eq 0 ]
	k=$(sed -n 's/^eintr=//p' "$T/B.out")
	[ "$k" -gt 0 ]
	[ "$(jq -s 'map(select(has("latency") and .ret == 1)) | length' "$T/out")" -eq 5 ]
	[ "$(jq -s 'map(select(has("latency") and .ret == -4)) | length' "$T/out")" -eq "$k" ]
	[ "$(jq -s 'map(select(has("latency"))) | length' "$T/out")" -eq $((5 + k)) ]
	jout 'select(has("reads")) | .reads == 5 + $k and .errors == $k' --argjson k "$k"
}

@test "-P names a process by its leader, one histogram for all its threads" {
	start_load A --threads 3 --comm rl_leader --thread-comm worker-1,worker-2,io-pool \
		--reads 20 --delay-us 2000
	# the readers really have their own names before the tool attaches
	[ "$(cat "/proc/$A_PID/task/${A_TIDS[2]}/comm")" = io-pool ]
	start_tool readlat -j -P
	go
	wait_loads A
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	[ "$(jq -s --argjson p "$A_PID" 'map(select(.key.pid == $p)) | length' "$T/out")" -eq 1 ]
	jout 'select(.key.pid == $p) | .key.comm == "rl_leader" and .count == 60 and .errors == 0' \
		--argjson p "$A_PID"
}

@test "-F labels each file read through a reused fd" {
	start_load A --source files --files /etc/passwd,/etc/hostname --reads 7
	start_tool readlat -j -F -p "$A_PID"
	go
	wait_loads A
	tool_wait		# ends by itself when the process exits
	[ "$TOOL_STATUS" -eq 0 ]
	fd=${A_FDS[0]}
	[ "$(jq -s --argjson p "$A_PID" --argjson fd "$fd" \
		'map(select(.key.pid == $p and .key.fd == $fd)) | length' "$T/out")" -eq 2 ]
	jout 'select(.key.path == "/etc/passwd") | .key.pid == $p and .key.fd == $fd and .count == 7' \
		--argjson p "$A_PID" --argjson fd "$fd"
	jout 'select(.key.path == "/etc/hostname") | .key.pid == $p and .key.fd == $fd and .count == 7' \
		--argjson p "$A_PID" --argjson fd "$fd"
	! jq -e -s 'any(.[]; .key.path == "?")' "$T/out"
}

# A directory name longer than the 63 bytes a path component keeps is
# shown cut, and marked: "..." after its first 63 bytes; one of exactly 63
# is whole. Two such directories alike in their first 63 bytes stay two
# rows (files are told apart by device and inode, not by label).
@test "-F: a directory name over 63 bytes is cut and marked, one of 63 is whole; files stay apart" {
	a=$(printf 'q%098d1' 0) b=$(printf 'q%098d2' 0) c=$(printf 'r%062d' 0)
	mkdir -p "$T/c/$a" "$T/c/$b" "$T/c/$c"
	for d in "$a" "$b" "$c"; do echo "$d" > "$T/c/$d/f"; done
	start_load A --source files --files "$T/c/$a/f,$T/c/$b/f,$T/c/$c/f" --reads 5
	start_tool readlat -j -F -p "$A_PID"
	go
	wait_loads A
	tool_wait
	[ "$TOOL_STATUS" -eq 0 ]
	cut="$T/c/${a:0:63}.../f"
	jq -c '.key.path' "$T/out" | sort | uniq -c
	[ "$(jq -s --arg p "$cut" 'map(select(.key.path == $p and .count == 5)) | length' "$T/out")" -eq 2 ]
	[ "$(jq -s --arg p "$T/c/$c/f" 'map(select(.key.path == $p and .count == 5)) | length' "$T/out")" -eq 1 ]
}

# Names are whatever bytes a process or a file was given: a comm cut
# mid-character at 15 bytes, a byte that is never UTF-8, control bytes; a
# file name with a newline, an escape sequence and 0xff.
@test "hostile process and file names: escaped text, valid JSON" {
	c1=$'\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3'
	c2=$'a\xffb'
	c3=$'x\ny\e[31m'
	f="$T/"$'bad\nname\e[0m\xff'
	printf 'hello\n' > "$f"
	[ "$(printf %s "$c1" | wc -c)" -eq 15 ]
	t1='"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\ufffd"' t2='"a\ufffdb"' t3='"x\ny\u001b[31m"'

	loads() {
		rm -f "$T/go" "$T/hold"
		start_load A --comm "$c1" --reads 3 --delay-us 1000
		start_load B --comm "$c2" --reads 3 --delay-us 1000
		start_load C --comm "$c3" --reads 3 --delay-us 1000
		start_load D --comm "$c1" --source files --files "$f" --reads 3
		[ "$(head -c 15 "/proc/$A_PID/comm")" = "$c1" ]	# the names really are these bytes
		[ "$(head -c 3 "/proc/$B_PID/comm")" = "$c2" ]
		[ "$(cat "/proc/$C_PID/comm")" = "$c3" ]
	}

	# JSON, per process
	loads
	start_tool readlat -j -P
	go
	wait_loads A B C D
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	json_strict "$T/out"
	json_key_field "$T/out" "$A_PID" comm "$c1" "$t1"
	json_key_field "$T/out" "$B_PID" comm "$c2" "$t2"
	json_key_field "$T/out" "$C_PID" comm "$c3" "$t3"
	json_key_field "$T/out" "$D_PID" comm "$c1" "$t1"
	jout 'select(.key.pid == $p) | .count == 3' --argjson p "$C_PID"

	# JSON, per file
	loads
	start_tool readlat -j -F -p "$D_PID"
	go
	wait_loads A B C D
	tool_wait
	[ "$TOOL_STATUS" -eq 0 ]
	json_strict "$T/out"
	[ "$(jq -s length "$T/out")" -eq 1 ]
	jout '.count == 3 and .key.fd == $fd' --argjson fd "${D_FDS[0]}"
	json_key_field "$T/out" "$D_PID" path "$f" "$(jq -n --arg t "$T" '$t + "/bad\nname\u001b[0m\ufffd"')"
	json_key_field "$T/out" "$D_PID" comm "$c1" "$t1"

	# text, per process: each key on one line, escaped, no raw ESC
	loads
	start_tool readlat -P
	go
	wait_loads A B C D
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	refute grep -q $'\e' "$T/out"
	python3 -c 'import sys; sys.stdin.buffer.read().decode("utf-8")' < "$T/out"
	grep -qxF "pid = $A_PID, comm = ééééééé\\xc3" "$T/out"
	grep -qxF "pid = $B_PID, comm = a\\xffb" "$T/out"
	grep -qxF "pid = $C_PID, comm = x\\ny\\x1b[31m" "$T/out"

	# text, per file
	loads
	start_tool readlat -F -p "$D_PID"
	go
	wait_loads A B C D
	tool_wait
	[ "$TOOL_STATUS" -eq 0 ]
	refute grep -q $'\e' "$T/out"
	python3 -c 'import sys; sys.stdin.buffer.read().decode("utf-8")' < "$T/out"
	grep -qxF "pid = $D_PID, comm = ééééééé\\xc3, fd = ${D_FDS[0]}, path = $T/bad\\nname\\x1b[0m\\xff" "$T/out"

	# --slower: one line per read, whatever the name
	loads
	start_tool readlat --slower 0 -p "$C_PID"
	go
	wait_loads A B C D
	tool_wait
	refute grep -q $'\e' "$T/out"
	[ "$(grep -cE "^[0-9:]{8} +$C_PID +${C_TIDS[0]} +x\\\\ny\\\\x1b\[31m +${C_FDS[0]} +1 +[0-9.]+$" "$T/out")" -eq 3 ]
	[ "$(wc -l < "$T/out")" -eq 4 ]
}

@test "an error message never echoes raw control bytes" {
	"$BUILD/readlat" -p $'12\nreadlat: fake' > "$T/out" 2> "$T/err" && status=0 || status=$?
	cat -A "$T/err"
	[ "$status" -eq 2 ]
	[ "$(wc -l < "$T/err")" -eq 1 ]
	[ ! -s "$T/out" ]
	[[ "$(cat "$T/err")" == "readlat: invalid PID '12\\nreadlat: fake'"* ]]
	# the same for every option that echoes its value
	for args in "-s|read"$'\n'"x" "-t|1"$'\e'"[2J" "--slower|5"$'\r'"x" "--duration|1"$'\t'"x" \
		"--probe|a"$'\x7f' "--btf|/nonexistent/a"$'\n'"b" "-c|/nonexistent/"$'\n'"cg" \
		"--bogus"$'\n'"x|" $'1\n2|'; do
		opt=${args%%|*} val=${args#*|}
		set -- "$opt"
		[ -z "$val" ] || set -- "$opt" "$val"
		timeout 10 "$BUILD/readlat" "$@" > "$T/out" 2> "$T/err" && status=0 || status=$?
		echo "$(printf '%q ' "$@")-> $status: $(cat -A "$T/err")"
		[ "$status" -eq 1 ] || [ "$status" -eq 2 ]
		[ "$(wc -l < "$T/err")" -eq 1 ]
		[ ! -s "$T/out" ]
		refute LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$T/err"
		grep -qE '\\(n|r|t|x1b|x7f)' "$T/err"
	done
}

@test "-P: a wrapper that execs cat is two rows, each named and with its own reads (strace)" {
	seq 1 20000 > "$T/data"
	cp /bin/cat "$T/rl5cat"
	printf '#!/bin/bash\nread -r x < "%s"\nexec "%s" "%s"\n' "$T/data" "$T/rl5cat" "$T/data" > "$T/rl5wrap"
	chmod +x "$T/rl5wrap"
	# In a cgroup of its own (-c): only the test's processes make keys.
	root=$(cgroup2_root) || skip "no cgroup2 mount"
	cg=$root/readlat-wrap-$$
	mkdir "$cg"
	start_tool readlat -j -P -c "$cg"
	bash -c 'echo $$ > "$1/cgroup.procs" && exec strace -f -qq -o "$2" -e trace=read,execve "$3"' \
		in_cg "$cg" "$T/st" "$T/rl5wrap" > /dev/null
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	rmdir "$cg"
	# The reads that succeeded (readlat counts failed ones apart), by
	# what the process was called: after its first execve rl5wrap, after
	# the second rl5cat.
	pid=$(awk '$2 ~ /^execve\(/ { print $1; exit }' "$T/st")
	read -r wrap cat < <(awk -v p="$pid" '$1 == p && $2 ~ /^execve\(/ { n++ }
		$1 == p && $2 ~ /^read\(/ && !/= -1 / { c[n]++ } END { print c[1] + 0, c[2] + 0 }' "$T/st")
	echo "strace: rl5wrap $wrap reads, rl5cat $cat"
	[ "$wrap" -gt 0 ] && [ "$cat" -gt 0 ]
	jout 'select(.key.pid == $p and .key.comm == "rl5wrap") | .count == $n' --argjson p "$pid" --argjson n "$wrap"
	jout 'select(.key.pid == $p and .key.comm == "rl5cat") | .count == $n' --argjson p "$pid" --argjson n "$cat"
	[ "$(jq -s --argjson p "$pid" 'map(select(.key.pid == $p)) | length' "$T/out")" -eq 2 ]
}

# A read whose start was traced and whose end was not (the kernel skips a
# tracepoint's program while this CPU's bpf_prog_active is held: PREEMPT_RT,
# a map syscall preempted; here a rename out of -n while it waits): the
# thread's next read finds it open, and it is counted as missed, not lost
# in silence.
@test "a read whose end no program saw is counted as missed when the thread reads again" {
	mkfifo "$T/fifo"
	python3 "$BATS_TEST_DIRNAME/workloads/endunseen.py" "$T/fifo" "$T" rl_unseen rl_elsewhere \
		> "$T/w.out" &
	JOBS+=($!)
	exec 7> "$T/fifo"
	wait_for "$T/w.out" '^pid='
	start_tool readlat -j -n rl_unseen
	start_more readlat TEXT -n rl_unseen
	touch "$T/go.1"; printf a >&7
	wait_for "$T/w.out" '^done 1'
	touch "$T/go.2"
	wait_for "$T/w.out" '^renamed'
	printf b >&7
	wait_for "$T/w.out" '^done 2'
	touch "$T/go.3"; printf c >&7
	wait_for "$T/w.out" '^done 3'
	exec 7>&-
	stop_tool INT
	stop_more TEXT
	cat "$T/out" "$T/TEXT.out"
	[ "$TOOL_STATUS" -eq 0 ]
	jout '.count == 2 and .missed == 1 and .unmatched == 0'
	# in text, on the summary line; and nothing where nothing was missed
	grep -q '^count 2, .*, errors 0, missed 1$' "$T/TEXT.out"
	run --separate-stderr timeout 10 "$BUILD/readlat" -n rl_nobody 0.01 1
	[[ "$output" != *missed* ]]
}
