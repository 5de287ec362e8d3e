#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# The common runtime's failure paths, through test-only tools.

load helpers

setup() { common_setup; }
teardown() { common_teardown; }

@test "verifier rejection: one line naming program and reason, exit 1" {
	run timeout 20 "$BUILD/tests/badprog"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "$output" = "badprog: the kernel's verifier rejected program 'bad_prog': R1 invalid mem access 'scalar' (run with -v for the verifier log)" ]
}

@test "verifier rejection with -v: the verifier log itself" {
	run timeout 20 "$BUILD/tests/badprog" -v
	[ "$status" -eq 1 ]
	[[ "$output" == *"BEGIN PROG LOAD LOG"* ]]
	[[ "$output" == *"R1 invalid mem access 'scalar'"* ]]
	[[ "${lines[-1]}" == "badprog: the kernel's verifier rejected program 'bad_prog': R1 invalid mem access 'scalar'" ]]
}

# cpu_pair_run PROG SECS [REASON]: a tests/tools race program on CPUs 0
# and 1 (tests/tools/cpu_pair.h), within SECS; skips where it cannot run
# there (exit 3: REASON), else its status and output in bats's run.
cpu_pair_run() {
	[ "$(nproc)" -ge 2 ] || skip "needs two CPUs"
	run timeout "$2" "$BUILD/tests/$1"
	echo "$output"
	[ "$status" -ne 3 ] || skip "${3:-fewer than two CPUs to run on}"
}

# It needs both CPUs at once, and fills them.
# bats test_tags=serial
@test "keyed histograms' max and min, raised by two CPUs at once: every add that lost its race is counted" {
	# hist_race: 1 compare-and-swap try, values from one counter on CPUs 0
	# and 1; checks count, sum and max/min against what was added
	cpu_pair_run hist_race 60 \
		"fewer than two CPUs to run on, or their runs never overlapped enough to lose a race"
	[ "$status" -eq 0 ]
	[[ "$output" =~ up:\ max\ [0-9]+\ of\ [0-9]+,\ races\ [1-9] ]]
}

# It needs both CPUs at once, and fills them.
# bats test_tags=serial
@test "biolat's in-flight table, taken and ended by two CPUs at once: no slot is taken from its holder" {
	# inflight_race: 2 x 5 x 1,000,000 operations of keys that share
	# every window of 16 slots, the set-up of a slot made longer so that
	# scans land in it; none stolen, evicted or found not set up
	cpu_pair_run inflight_race 120
	[ "$status" -eq 0 ]
	[[ "$output" =~ stolen\ 0,\ end\ failed\ 0,\ not\ set\ up\ 0 ]]
}

@test "TRACETOOLS_BPF_ATOMICS=0: --check names the programs without BPF atomics, and why; other values change nothing" {
	local t
	for t in readlat opensnoop biolat tcprcv; do
		run env TRACETOOLS_BPF_ATOMICS=0 timeout 10 "$BUILD/$t" --check
		[ "$status" -eq 0 ]
		grep -qE '^BPF atomics +fallback +TRACETOOLS_BPF_ATOMICS=0: the programs built without them' <<<"$output"
		run env TRACETOOLS_BPF_ATOMICS=1 timeout 10 "$BUILD/$t" --check
		[ "$status" -eq 0 ]
		grep -qE '^BPF atomics +ok +fetch-and-add, compare-and-swap$' <<<"$output"
	done
}

@test "--check lists every probe a tool may attach, those its options do not need too" {
	# readlat traces read only by default; biolat inserts and merges with -Q
	run timeout 10 "$BUILD/readlat" --check
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qE '^probe sys_enter_read +ok +tracepoint syscalls/sys_enter_read$' <<<"$output"
	grep -qE '^probe sys_enter_preadv2 +ok +tracepoint syscalls/sys_enter_preadv2 \(used with other options\)$' <<<"$output"
	grep -qE '^probe sched_process_exit +ok +tracepoint sched/sched_process_exit \(used without task storage, or with options that need it\)$' <<<"$output"
	run timeout 10 "$BUILD/biolat" --check
	[ "$status" -eq 0 ]
	grep -qE '^probe block_rq_insert +ok +raw tracepoint block/block_rq_insert \(used with other options\)$' <<<"$output"
	# listed, not needed: their absence fails nothing
	run timeout 20 unshare -m sh -c "mount -t tmpfs none /sys/kernel/tracing/events/block/block_rq_insert && '$BUILD/biolat' --check"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qE '^probe block_rq_insert +fallback +tracepoint block/block_rq_insert does not exist.*; used only with other options$' <<<"$output"
	run timeout 20 unshare -m sh -c "mount -t tmpfs none /sys/kernel/tracing/events/block/block_rq_insert && '$BUILD/biolat' --check -Q"
	[ "$status" -eq 1 ]
}

# The shortest interval the tools take (SECONDS_MIN in common/tool.h).
MIN_INTERVAL=0.001
# Ending takes the final report (ms) and then detaching the probes: each
# tracepoint's detach waits for an RCU grace period (~100 ms here).
STOP_SECS=${STOP_SECS:-2}

# exits_within SECS PID: true if PID ends within SECS; its status in STATUS.
exits_within() {
	local i
	for ((i = 0; i < ${1%.*} * 100; i++)); do
		kill -0 "$2" 2>/dev/null || break
		nap 0.01
	done
	kill -0 "$2" 2>/dev/null && return 1
	STATUS=0
	wait "$2" || STATUS=$?
}

# lines_at_least N: the tool's stdout has N lines.
lines_at_least() { [ "$(wc -l < "$T/out")" -ge "$1" ]; }

@test "a 1 ms interval: SIGINT ends every tool within one report, with its final report" {
	local cmd
	for cmd in "readlat -j" "biolat -j" "tcprcv -j" "opensnoop -C -j"; do
		echo "# $cmd $MIN_INTERVAL"
		# shellcheck disable=SC2086	# CMD is words
		start_tool $cmd $MIN_INTERVAL
		retry lines_at_least 20
		kill -INT "$TOOL_JOB"
		exits_within "$STOP_SECS" "$TOOL_JOB"
		[ "$STATUS" -eq 0 ]
		# Every report whole, the final one last.
		jq -e -s 'length >= 20' "$T/out"
		tail -n1 "$T/out" | jq -e '.tool'
	done
}

@test "a 1 ms interval, 500 reports: the reports and the skipped count add up to the time they span" {
	# Counted from what the tool printed: from the first report to the
	# last, each tick has a report or is counted skipped (in the next).
	run timeout 60 "$BUILD/readlat" -j $MIN_INTERVAL 500
	[ "$status" -eq 0 ]
	grep '^{' <<<"$output" > "$T/out"
	[ "$(jq -s length "$T/out")" -eq 500 ]
	ticks=$(jq -s '(length - 1) + (.[1:] | map(.skipped // 0) | add)' "$T/out")
	span_ms=$(jq -s 'map(.time | sub("\\.(?<ms>[0-9]+).*"; "") + "Z" | fromdateiso8601) as $s |
		map(.time | capture("\\.(?<ms>[0-9]+)").ms | tonumber) as $ms |
		(($s[-1] - $s[0]) * 1000 + $ms[-1] - $ms[0])' "$T/out")
	echo "ticks $ticks, span $span_ms ms"
	# The time of a report is taken when it runs: late by the wake-up.
	[ "$ticks" -ge $((span_ms * 95 / 100 - 5)) ] && [ "$ticks" -le $((span_ms * 105 / 100 + 5)) ]
}

@test "an interval that cannot be kept says so: the report after a stall counts the intervals skipped" {
	# Stopped for 0.3 s, a 10 ms interval cannot report 30 times in it.
	start_tool readlat 0.01
	retry grep -q '^count ' "$T/out"
	kill -STOP "$TOOL_JOB"
	sleep 0.3
	kill -CONT "$TOOL_JOB"
	wait_for "$T/out" '^\([0-9]+ intervals skipped: '
	n=$(grep -oE '^\([0-9]+ intervals skipped' "$T/out" | grep -oE '[0-9]+' | sort -n | tail -n1)
	[ "$n" -ge 20 ]
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]

	start_tool readlat -j 0.01
	retry lines_at_least 1
	kill -STOP "$TOOL_JOB"
	sleep 0.3
	kill -CONT "$TOOL_JOB"
	retry jq -e -s 'map(.skipped // 0) | max >= 20' "$T/out"
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
}

# blocked_in_write PID: PID is in a write to a pipe that is full.
blocked_in_write() { [[ "$(cat "/proc/$1/wchan" 2>/dev/null)" == *pipe_write* ]]; }

# stop_blocked MAX_MS ACTIVITY CMD...: each CMD (a tool and its options)
# writes into a pipe whose reader never reads; once it blocks in that
# write (ACTIVITY, a command, makes what it traces meanwhile), SIGINT must
# end it within MAX_MS with exit 1 and the line that says the last report
# was not written.
stop_blocked() {
	local max_ms=$1 activity=$2 cmd pid i t0 ms status
	shift 2
	mkfifo "$T/fifo"
	exec 8<>"$T/fifo"	# a reader that never reads: the pipe fills up
	for cmd in "$@"; do
		# shellcheck disable=SC2086
		"$BUILD/"$cmd > "$T/fifo" 2> "$T/err" &
		pid=$!
		watchdog "$pid"
		for ((i = SECONDS + WAIT_SECS + 1; SECONDS < i; )); do	# at least WAIT_SECS, whatever the load
			blocked_in_write "$pid" && break
			$activity; sleep 0.1
		done
		blocked_in_write "$pid"
		kill -INT "$pid"
		t0=${EPOCHREALTIME/./}
		status=0
		WAIT_SECS=2 wait_exit "$pid" || status=$?
		ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
		echo "$cmd: exit $status after $ms ms: $(tail -n1 "$T/err")"
		[ "$status" -eq 1 ]
		[ "$ms" -lt "$max_ms" ]
		grep -qx "${cmd%% *}: stopped while the output was blocked (nothing read it): the last report was not written" "$T/err"
		# empty the pipe for the next tool
		timeout 2 dd if="$T/fifo" of=/dev/null bs=64k iflag=nonblock 2>/dev/null || true
	done
	exec 8>&-
}

# opensnoop -C prints a table only of opens: make some
some_opens() { cat /dev/null; }
# events are printed as they come: opens and reads
opens_and_reads() { local j; for j in {1..20}; do cat /etc/hostname > /dev/null; done; }

# The bounds: a tool gives a blocked write up after 300 ms without
# progress; a sanitized build beside three other tests took 1.05 s to
# give up and detach. Hung, it would be killed.
@test "a stop while a report is blocked on a pipe nobody reads ends every tool within 2 s, saying so" {
	stop_blocked 2000 some_opens "readlat -F 0.001" "opensnoop -C 0.001" "biolat 0.001" "tcprcv 0.001"
}

@test "a stop while streamed events are blocked on a pipe nobody reads ends the tool within 2 s, saying so" {
	# Events are written as they come, outside any report: a stop must
	# end a write of them blocked on a full pipe all the same.
	stop_blocked 2000 opens_and_reads "opensnoop" "readlat --slower 0" "opensnoop -j"
}

# slow_reader FIFO OUT BYTES: read FIFO into OUT, BYTES every 10 ms (a
# reader ~6x slower than the tool writes a report), until its end.
slow_reader() {
	python3 -c 'import sys, time
out = open(sys.argv[2], "wb")
with open(sys.argv[1], "rb", buffering=0) as f:
    while True:
        b = f.read(int(sys.argv[3]))
        if not b:
            break
        out.write(b)
        time.sleep(0.01)' "$@"
}

@test "a stop with a slow reader still reading: the whole final report, exit 0" {
	# readlat -P's final report of ~300 processes is ~120 KB, twice
	# what the pipe holds: its writes block on and off for a second.
	mkfifo "$T/fifo"
	slow_reader "$T/fifo" "$T/out" 1024 &
	local reader=$! i
	"$BUILD/readlat" -P -j > "$T/fifo" 2> "$T/err" &
	TOOL_JOB=$!
	watchdog "$TOOL_JOB"
	wait_for "$T/err" 'Hit Ctrl-C to end'
	for i in {1..300}; do cat /etc/hostname > /dev/null; done
	stop_tool INT
	wait_exit "$reader"
	cat "$T/err"
	[ "$TOOL_STATUS" -eq 0 ]
	refute grep -q "nothing read it" "$T/err"
	# every line whole (a report given up ends in a cut one), >= 300 processes
	jq -e -s 'length >= 300' "$T/out"
	[ "$(stat -c %s "$T/out")" -gt 100000 ]
}

# flood SECS: two processes opening and reading a file in a loop for SECS
# (or until killed): events far faster than a slow reader takes them.
flood() {
	local i
	for i in 1 2; do
		python3 -c 'import os, sys, time
end = time.time() + float(sys.argv[1])
while time.time() < end:
    fd = os.open("/etc/hostname", os.O_RDONLY)
    os.read(fd, 64)
    os.close(fd)' "$1" &
		JOBS+=($!)
		FLOOD+=($!)
	done
}

# bigger_than FILE BYTES
bigger_than() { [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -gt "$2" ]; }

@test "events coming faster than a slow reader takes them: a stop still ends opensnoop and readlat --slower" {
	# ring_buffer__consume() returns only when the ring is empty: with
	# the floods it never was, and the stop waited for them to end (30 s).
	local tool reader t0 ms
	for tool in opensnoop "opensnoop -b 64M" "readlat --slower=0"; do
		rm -f "$T/fifo" "$T/out" "$T/err"; mkfifo "$T/fifo"
		slow_reader "$T/fifo" "$T/out" 4096 &
		reader=$!
		$BUILD/$tool > "$T/fifo" 2> "$T/err" &
		TOOL_JOB=$!
		watchdog "$TOOL_JOB"
		wait_for "$T/err" 'Hit Ctrl-C to end'
		FLOOD=()
		flood 30
		retry bigger_than "$T/out" 200000
		t0=$(date +%s%N)
		stop_tool INT
		ms=$((($(date +%s%N) - t0) / 1000000))
		kill "${FLOOD[@]}" 2>/dev/null || true
		wait_exit "$reader"
		echo "$tool: exit $TOOL_STATUS after $ms ms"; tail -n 2 "$T/err"
		[ "$TOOL_STATUS" -eq 0 ]
		[ "$ms" -lt 5000 ]
		grep -q 'lost' "$T/err"
	done
}

@test "what the output could not take by the end is counted: events = printed + lost + unprinted" {
	# A stop prints a step more of the ring; the rest (here most of a
	# 64 MiB ring) was freed unread and said nowhere: "lost 0".
	local reader printed events lost unprinted
	rm -f "$T/fifo" "$T/out" "$T/err" "$T/go"; mkfifo "$T/fifo"; : > "$T/file"
	slow_reader "$T/fifo" "$T/out" 4096 &
	reader=$!
	$BUILD/opensnoop -j -b 64M -n openload > "$T/fifo" 2> "$T/err" &
	TOOL_JOB=$!
	watchdog "$TOOL_JOB"
	wait_for "$T/err" 'Hit Ctrl-C to end'
	touch "$T/go"
	timeout 60 "$BUILD/tests/openload" --file "$T/file" --opens 20000 --go "$T/go" > /dev/null
	stop_tool INT
	wait_exit "$reader"
	[ "$TOOL_STATUS" -eq 0 ]
	printed=$(jq -c 'select(.comm == "openload")' "$T/out" | wc -l)
	read -r events lost unprinted < <(jq -r 'select(has("events")) | "\(.events) \(.lost) \(.unprinted)"' "$T/out")
	echo "printed $printed, events $events, lost $lost, unprinted $unprinted"
	[ "$events" -ge 20000 ]
	[ "$unprinted" -gt 0 ]
	[ "$events" -eq $((printed + lost + unprinted)) ]
}

@test "stderr into the same slow reader: the summary line whole, however the ticks fall" {
	# stdio drops a line whose write(2) a watchdog tick interrupts.
	local reader i
	for i in 1 2 3; do
		rm -f "$T/fifo" "$T/out"; mkfifo "$T/fifo"
		slow_reader "$T/fifo" "$T/out" 4096 &
		reader=$!
		"$BUILD/opensnoop" > "$T/fifo" 2>&1 &
		TOOL_JOB=$!
		watchdog "$TOOL_JOB"
		retry grep -q 'Hit Ctrl-C to end' "$T/out"
		FLOOD=()
		flood 30
		retry bigger_than "$T/out" 200000
		stop_tool INT
		kill "${FLOOD[@]}" 2>/dev/null || true
		wait_exit "$reader"
		echo "run $i: exit $TOOL_STATUS"; grep "opens traced" "$T/out" || true
		[ "$TOOL_STATUS" -eq 0 ]
		grep -qE '[0-9]+ opens traced; [0-9]+ lost \(ring buffer full: try a larger -b\); [0-9]+ paths unreadable; [0-9]+ truncated(; [0-9]+ not printed \(the run ended before the output took them\))?$' "$T/out"
	done
}

@test "the same stop twice within a few ms (timeout(1): the tool, then its group): the final report all the same" {
	# It counted as a second stop: output given up, "nothing read it",
	# exit 1 and an empty file, though nothing was blocked.
	local i
	for i in 1 2 3; do
		rm -f "$T/out" "$T/err"
		start_tool readlat -j
		kill -INT "$TOOL_JOB"; sleep 0.005; kill -INT "$TOOL_JOB" 2>/dev/null || true
		tool_wait
		echo "run $i: exit $TOOL_STATUS"; cat "$T/err"
		[ "$TOOL_STATUS" -eq 0 ]
		jq -e 'select(has("buckets"))' "$T/out" > /dev/null
		refute grep -q "nothing read it" "$T/err"
	done
}

@test "a second stop while the final report goes to a slow reader gives the output up at once" {
	mkfifo "$T/fifo"
	slow_reader "$T/fifo" "$T/out" 256 &
	local reader=$! i t0 ms
	"$BUILD/readlat" -P -j > "$T/fifo" 2> "$T/err" &
	TOOL_JOB=$!
	watchdog "$TOOL_JOB"
	wait_for "$T/err" 'Hit Ctrl-C to end'
	for i in {1..300}; do cat /etc/hostname > /dev/null; done
	kill -INT "$TOOL_JOB"
	retry blocked_in_write "$TOOL_JOB"	# in its final report, ~5 s of it
	sleep 0.15	# a stop sooner after the first is its twin (next test)
	t0=$(date +%s%N)
	stop_tool INT
	ms=$((($(date +%s%N) - t0) / 1000000))
	wait_exit "$reader"
	echo "exit $TOOL_STATUS after $ms ms"; cat "$T/err"
	[ "$TOOL_STATUS" -eq 1 ]
	[ "$ms" -lt 1000 ]
	grep -q "nothing read it" "$T/err"
}

# full_pipe stdout|stderr ERR TOOL ARGS...: TOOL (PID in ARGS: a sleep's)
# with stdout a 4 KiB pipe left 46 bytes of room (stderr to ERR), or with
# stderr a full one (blocked in the banner), never read; SIGINT after the
# banner; prints "STATUS MS", or "hung" past 10 s.
full_pipe() {
	python3 -c 'import fcntl, os, signal, subprocess, sys, time
which, err, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
r, w = os.pipe()
fcntl.fcntl(w, 1031, 4096)	# F_SETPIPE_SZ
sleeper = subprocess.Popen(["sleep", "60"])
argv = [a.replace("PID", str(sleeper.pid)) for a in argv]
deadline = time.time() + 30
if which == "stdout":
    os.write(w, b"x" * 4050)
    p = subprocess.Popen(argv, stdout=w, stderr=open(err, "w"))
    os.close(w)
    while "Hit Ctrl-C" not in open(err).read() and time.time() < deadline:
        time.sleep(0.05)
else:
    os.write(w, b"x" * 4096)
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=w, stdin=subprocess.DEVNULL)
    os.close(w)
    while "pipe_write" not in open(f"/proc/{p.pid}/wchan").read() and time.time() < deadline:
        time.sleep(0.05)
t0 = time.time()
p.send_signal(signal.SIGINT)
try:
    rc = p.wait(timeout=10)
except subprocess.TimeoutExpired:
    p.kill()
    p.wait()
    rc = "hung"
sleeper.kill()
print(rc, int((time.time() - t0) * 1000))' "$@"
}

@test "a stop whose last words (a summary, a JSON line) meet a pipe nobody reads ends within 1.5 s, saying so" {
	# What finish() writes is buffered, and went out after the watchdog
	# was off with the stops blocked: opensnoop -j hung for good.
	local args out
	for args in "opensnoop -j -p PID" "readlat --slower=0 -j -p PID" "biolat -j 1"; do
		out=$(full_pipe stdout "$T/err" $BUILD/$args)
		echo "$args: $out"; cat "$T/err"
		[ "${out% *}" = 1 ]
		[ "${out#* }" -lt 1500 ]
		grep -q "nothing read it" "$T/err"
	done
}

@test "stderr a pipe nobody reads, full before the banner: a stop still ends every tool within 1.5 s" {
	# The banner (and the end's lines on stderr) were written with the
	# stops blocked and no watchdog: only SIGKILL ended the tool.
	local tool out
	for tool in readlat opensnoop tcprcv biolat; do
		out=$(full_pipe stderr /dev/null "$BUILD/$tool")
		echo "$tool: $out"
		[ "${out% *}" != hung ]
		[ "${out#* }" -lt 1500 ]
	done
}

@test "a stop with the output on a terminal nobody reads ends the tool within 2 s, saying so" {
	# A pty's writer blocks with room left for less than what it writes;
	# the final report (a stop taken in the loop's wait) is given up
	# after 300 ms without progress. (Hung, it would be killed at 5 s; a
	# sanitized build beside three other tests took 1.1 s to give up and
	# detach.)
	python3 -c 'import os, pty, signal, subprocess, sys, time
m, s = pty.openpty()
p = subprocess.Popen(sys.argv[2:], stdout=s, stderr=open(sys.argv[1], "w"))
os.close(s)
deadline = time.time() + 15
while "Hit Ctrl-C" not in open(sys.argv[1]).read() and time.time() < deadline:
    time.sleep(0.05)
for i in range(300):
    subprocess.run(["cat", "/etc/hostname"], stdout=subprocess.DEVNULL)
t0 = time.time()
p.send_signal(signal.SIGINT)
try:
    st = p.wait(timeout=5)
except subprocess.TimeoutExpired:
    p.kill(); st = "stuck"
print("exit", st, "after", int((time.time() - t0) * 1000), "ms")' "$T/err" "$BUILD/readlat" -P > "$T/result"
	cat "$T/result" "$T/err"
	read -r _ status _ ms _ < "$T/result"
	[ "$status" = 1 ]
	[ "$ms" -lt 2000 ]
	grep -qx "readlat: stopped while the output was blocked (nothing read it): the last report was not written" "$T/err"
}

@test "a stop that comes in a report, not blocked, at an interval over 1 s: the final report at once, exit 0" {
	# Caught by SIGSTOP where its stop signals are let in and it is not
	# waiting (tests/lifecycle.py's inreport moment); the handler takes
	# the signal there, so no wait ends for it: the loop must look first.
	run env LIFECYCLE_VERBOSE=1 timeout 120 python3 "$BATS_TEST_DIRNAME/lifecycle.py" --seed 1 --cycles 3 --kind inreport \
		--interval 1.2 --only readlat:-P --only tcprcv:default "$BUILD"
	echo "$output"
	[ "$status" -eq 0 ]
	# each stop by SIGINT or SIGTERM was sent in a report (SIGKILL aside)
	[ "$(grep -E ": SIG(INT|TERM) inreport .*caught in a report" <<<"$output" | grep -c " ms, ")" -ge 2 ]
}

@test "SIGTERM during start-up ends the tool, and every BPF object it had goes with it" {
	# Each tool is held in a write of its libbpf log, maps made (readlat:
	# programs loaded too), where the stop signals used to be blocked.
	local cmd
	for cmd in "readlat|prog 'enter_pread64': skipped loading" "readlat|created successfully" \
		   "biolat|created successfully" "tcprcv|created successfully" \
		   "opensnoop|created successfully"; do
		echo "# ${cmd%%|*}, held after '${cmd#*|}'"
		run timeout 60 python3 "$BATS_TEST_DIRNAME/startup_stop.py" "${cmd#*|}" SIGTERM \
			"$BUILD/${cmd%%|*}" -v
		echo "$output"
		[ "$status" -eq 0 ]
		# Its final report at the next step (0), or, stuck in the
		# write, ended by the start-up's SIGALRM (-14): never the stop
		# signal's default, which leaves no report.
		[[ "$output" == *"status 0"* || "$output" == *"status -14"* ]]
	done
}

# Nested, SIGTERM's handler in SIGINT's (timeout(1) sends both) saw the
# first stop's time not yet set and took it for a second stop: the
# output given up. No handler of a stop or of a tick may interrupt
# another: each blocks all three signals while it runs.
@test "the stop and tick handlers block SIGINT, SIGTERM and SIGALRM while they run (strace)" {
	command -v strace >/dev/null || skip "no strace"
	under_ptrace strace -f -qq -o "$T/strace" -e trace=rt_sigaction "$BUILD/readlat" -j 0.05 \
		> "$T/out" 2> "$T/err" &
	JOBS+=($!)
	job=$!
	wait_for "$T/err" 'Hit Ctrl-C to end'
	# -f: each line begins with the PID, the tool's
	kill -INT "$(awk '{ print $1; exit }' "$T/strace")"
	wait_exit "$job"
	grep -E 'rt_sigaction\(SIG(INT|TERM|ALRM), \{sa_handler=0x' "$T/strace" > "$T/handlers"
	cat "$T/handlers"
	# both stop signals at start-up and at the loop, and the stop's tick
	[ "$(grep -c '(SIGINT,' "$T/handlers")" -eq 2 ]
	[ "$(grep -c '(SIGTERM,' "$T/handlers")" -eq 2 ]
	[ "$(grep -c '(SIGALRM,' "$T/handlers")" -eq 1 ]
	refute grep -vE 'sa_mask=\[(INT ALRM TERM|INT TERM ALRM|ALRM INT TERM)\]' "$T/handlers"
}

# The kernel's BTF that the fentry checks parse (megabytes) was kept for
# the whole run. tcprcv --check checks --rcv-time's fentry on every
# kernel: the BTF it loads is freed once the checks are over (bpftrace
# on the binary's own libbpf: what btf__load_vmlinux_btf returned goes to
# btf__free).
@test "the kernel BTF parsed for the fentry checks is freed after them (bpftrace)" {
	command -v bpftrace >/dev/null || skip "no bpftrace"
	local exe=$BUILD/tcprcv
	"$exe" --version | grep -q static || skip "a dynamic build: libbpf is not in the binary"
	run timeout 60 bpftrace -q -o "$T/trace" -e "
		uretprobe:$exe:btf__load_vmlinux_btf { @k[retval] = 1; printf(\"load %lx\n\", retval); }
		uprobe:$exe:btf__free /@k[arg0]/ { printf(\"free %lx\n\", arg0); }
		END { clear(@k); }" -c "$exe --check"
	cat "$T/trace"
	grep -qx 'tcprcv can run on this system' <<<"$output"
	[ "$(grep -c '^load [0-9a-f]*[1-9a-f][0-9a-f]*$' "$T/trace")" -eq 1 ]
	[ "$(sed -n 's/^load //p' "$T/trace")" = "$(sed -n 's/^free //p' "$T/trace")" ]
}

# The last close of a tracepoint's perf event waits in the kernel for RCU
# grace periods, one close after another: the exit waited for all of them
# (opensnoop 165 ms, bench/RESULTS.md). A child holds the last references
# and is killed as the tool exits: the tool's exit comes first, the
# child's (its closes) after it, and nothing of the run is left (strace:
# the order of the two exits is the kernel's, whatever the load). biolat's
# raw tracepoints are freed without a wait: no child.
@test "a stop: the tool exits before the kernel frees its links, in a child killed at its exit; nothing left" {
	command -v strace >/dev/null || skip "no strace"
	local tool pid child
	for tool in readlat opensnoop tcprcv biolat; do
		rm -f "$T/strace" "$T/out" "$T/err" "$T/ids"
		under_ptrace strace -f -q -o "$T/strace" -e trace=execve,prctl,exit_group \
			"$BUILD/$tool" > "$T/out" 2> "$T/err" &
		job=$!
		wait_for "$T/err" 'Hit Ctrl-C to end'
		pid=$(awk '/execve\(/ { print $1; exit }' "$T/strace")
		bpf_ids_of "$pid" "$T/ids"
		kill -INT "$pid"
		wait_exit "$job"
		cat "$T/strace"
		child=$(awk '/prctl\(PR_SET_PDEATHSIG, SIGKILL/ { print $1; exit }' "$T/strace")
		if [ "$tool" = biolat ]; then
			[ -z "$child" ]
			bpf_ids_gone "$T/ids"
			continue
		fi
		[ -n "$child" ]
		[ "$child" != "$pid" ]
		grep -n -E "^($pid +\+\+\+ exited with 0|$child +\+\+\+ killed by SIGKILL) \+\+\+$" "$T/strace" > "$T/ends"
		cat "$T/ends"
		[ "$(wc -l < "$T/ends")" -eq 2 ]
		grep -qE "^[0-9]+:$pid " <(head -1 "$T/ends")
		bpf_ids_gone "$T/ids"
	done
}
