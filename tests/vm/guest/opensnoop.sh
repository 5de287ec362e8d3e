# SPDX-License-Identifier: GPL-2.0-only
# opensnoop in the test VM, against openload (a known set of opens): the
# kernel-facing tests of tests/opensnoop.bats, in busybox sh, on 6.1, which
# has open(2), openat(2) and openat2(2). JSON is read with grep: an event
# is one line {"tool","time","pid","tid","uid","comm","fd","err","flags",
# "mode","latency_ns","path"[,"path_hex"][,"truncated"]}, in that order;
# the run ends with {"tool","time","events","lost","unreadable","truncated"}.
#
# Each run of opensnoop attaches 7 tracepoints, and detaching them is slow
# under TCG: ~0.5 s per run on the cloud kernel, ~6 s on PREEMPT_RT (the
# same per tracepoint as readlat's). So the tests share runs: several
# workloads, told apart by PID, comm or file, under one tool run.

# A directory with two files, in every test.
mkfiles() {
	mkdir -p "$T/d"
	echo a > "$T/d/one"
	echo b > "$T/d/two"
}

# count_path PATH [FILE]: JSON events with exactly this path.
count_path() { grep -cF "\"path\":\"$1\"" "$T/${2:-out}"; }

# count_events [FILE]: JSON events (each has a path, or null).
count_events() { grep -c '^{.*"path":' "$T/${1:-out}"; }

# path_matching PATH REGEX [FILE]: events with exactly this path whose
# line matches REGEX too.
path_matching() { grep -F "\"path\":\"$1\"" "$T/${3:-out}" | grep -cE -- "$2"; }

# total NAME: a field of the closing JSON object.
total() { jfield "$1" '"events":'; }

# expect_totals EVENTS LOST UNREADABLE TRUNCATED: the closing object, exactly.
expect_totals() {
	expect_lines out '^\{.*"events":' 1
	expect_eq "closing events" "$(total events)" "$1"
	expect_eq "closing lost" "$(total lost)" "$2"
	expect_eq "closing unreadable" "$(total unreadable)" "$3"
	expect_eq "closing truncated" "$(total truncated)" "$4"
}

# An fd openload can get: 3 and up (0-2 are its stdio).
FD='([3-9]|[1-9][0-9]+)'

test_pid_json() {
	mkfiles
	start_opens A --file "$T/d/one" --file "$T/d/two" --file "$T/d/missing" --opens 5
	start_tool opensnoop -j -p "$A_PID"
	go
	wait_loads A
	tool_wait		# ends by itself when the process exits
	expect_status 0
	expect_line err "process $A_PID exited"
	expect_eq "events of one" "$(count_path "$T/d/one")" 5
	expect_eq "events of two" "$(count_path "$T/d/two")" 5
	expect_eq "events of missing" "$(count_path "$T/d/missing")" 5
	ok="^\\{\"tool\":\"opensnoop\",\"time\":\"[^\"]+\",\"pid\":$A_PID,\"tid\":$A_PID,\"uid\":0,\"comm\":\"openload\",\"fd\":$FD,\"err\":0,\"flags\":0,\"mode\":0,\"latency_ns\":[0-9]+,\"path\":\"[^\"]+\"\\}\$"
	expect_eq "one: fd >= 3, err 0, pid, comm" "$(path_matching "$T/d/one" "$ok")" 5
	expect_eq "two: fd >= 3, err 0, pid, comm" "$(path_matching "$T/d/two" "$ok")" 5
	expect_eq "missing: fd -1, err 2 (ENOENT)" \
		"$(path_matching "$T/d/missing" "\"pid\":$A_PID,.*\"fd\":-1,\"err\":2,")" 5
	expect_eq "every event" "$(count_events)" 15
	expect_totals 15 0 0 0
}

test_pid_text() {
	mkfiles
	start_opens A --file "$T/d/one" --file "$T/d/missing" --opens 3
	start_tool opensnoop -p "$A_PID"
	go
	wait_loads A
	tool_wait
	expect_status 0
	expect_eq header "$(head -n1 "$T/out" | grep -cE '^PID +COMM +FD +ERR +PATH$')" 1
	expect_lines out "^$A_PID +openload +$FD +0 +$T/d/one\$" 3
	expect_lines out "^$A_PID +openload +-1 +2 +$T/d/missing\$" 3
	expect_lines out . 7
	expect_line err '^6 opens traced; 0 lost \(ring buffer full: try a larger -b\); 0 paths unreadable; 0 truncated$'
	expect_line err "process $A_PID exited"
}

# Each syscall alone: an openload makes only that one (it is static: no
# loader opens), so the exact count of each workload proves each probe
# pair. openload gives openat2 a mode (0600) whatever the flags, which the
# kernel refuses (EINVAL) without O_CREAT: openat2 (and the others too) is
# tested with --flags creat, on an existing file and on one in a missing
# directory (ENOENT). O_CREAT|O_WRONLY = 0101 = 65, mode 0600 = 384: from
# the syscall's arguments, or (openat2) from its struct open_how.
# open(2) only where the kernel has it (x86_64; arm64 has only openat(2)
# and openat2(2)): 8 + 6 events fewer without.
test_calls() {
	mkfiles
	plain=P2 creat="C2 C3" events=20
	if has_open; then
		start_opens P1 --file "$T/d/one" --file "$T/d/missing" --opens 4 --call open --comm os_call
		start_opens C1 --file "$T/d/two" --file "$T/nodir/new" --opens 3 --call open --flags creat --comm os_call
		plain="P1 P2" creat="C1 C2 C3" events=34
	fi
	start_opens P2 --file "$T/d/one" --file "$T/d/missing" --opens 4 --call openat --comm os_call
	start_opens C2 --file "$T/d/two" --file "$T/nodir/new" --opens 3 --call openat --flags creat --comm os_call
	start_opens C3 --file "$T/d/two" --file "$T/nodir/new" --opens 3 --call openat2 --flags creat --comm os_call
	start_tool opensnoop -j -n os_call
	go
	# shellcheck disable=SC2086 # the workloads' names
	wait_loads $plain $creat
	stop_tool INT
	expect_status 0
	for w in $plain; do
		eval "pid=\$${w}_PID"
		expect_eq "$w: events of one" \
			"$(path_matching "$T/d/one" "\"pid\":$pid,.*\"fd\":$FD,\"err\":0,\"flags\":0,")" 4
		expect_eq "$w: events of missing" \
			"$(path_matching "$T/d/missing" "\"pid\":$pid,.*\"fd\":-1,\"err\":2,\"flags\":0,")" 4
	done
	for w in $creat; do
		eval "pid=\$${w}_PID"
		expect_eq "$w O_CREAT: events of two" \
			"$(path_matching "$T/d/two" "\"pid\":$pid,.*\"fd\":$FD,\"err\":0,\"flags\":65,\"mode\":384,")" 3
		expect_eq "$w O_CREAT: events of nodir/new" \
			"$(path_matching "$T/nodir/new" "\"pid\":$pid,.*\"fd\":-1,\"err\":2,\"flags\":65,\"mode\":384,")" 3
	done
	expect_eq "every event" "$(count_events)" "$events"
	expect_totals "$events" 0 0 0
}

# --probe tracepoint pins every event to its tracepoint: where the
# architecture has no open(2) (arm64), its probes are skipped, as without
# --probe, and the others count exactly (it refused, naming sys_enter_open).
test_probe_tracepoint() {
	mkfiles
	run "$BUILD/opensnoop" --probe tracepoint --check
	expect_status 0 "$STATUS"
	if has_open; then
		expect_line run.out '^probe sys_enter_open +ok +tracepoint syscalls/sys_enter_open$'
	else
		expect_line run.out '^probe sys_enter_open +fallback +skipped: '
	fi
	expect_line run.out '^probe sys_enter_openat +ok +tracepoint syscalls/sys_enter_openat$'
	start_opens A --file "$T/d/one" --opens 6 --call openat --comm os_tp
	start_tool opensnoop --probe tracepoint -j -n os_tp
	go
	wait_loads A
	stop_tool INT
	expect_status 0
	expect_eq "events" "$(count_events)" 6
}

# The path is read at the exit: from a page dropped before each open (not
# present at the syscall's entry), and from the last bytes of a page with
# nothing mapped after it. Never empty, never unreadable.
test_cold_edge() {
	mkfiles
	start_opens A --file "$T/d/one" --opens 20 --cold --comm os_cold
	start_opens B --file "$T/d/two" --opens 20 --edge --comm os_cold
	start_tool opensnoop -j -n os_cold
	go
	wait_loads A B
	stop_tool INT
	expect_status 0
	expect_eq "cold: events of one" "$(path_matching "$T/d/one" "\"pid\":$A_PID,.*\"err\":0,")" 20
	expect_eq "edge: events of two" "$(path_matching "$T/d/two" "\"pid\":$B_PID,.*\"err\":0,")" 20
	expect_no_line out '"path":(""|null)'
	# And one open more: openload's mkstemp of the file behind the cold page.
	expect_eq "cold: A's mkstemp" "$(grep -cE "\"pid\":$A_PID,.*\"path\":\"/tmp/openload-" "$T/out")" 1
	expect_eq "every event" "$(count_events)" 41
	expect_totals 41 0 0 0
}

# -x: failed opens only; --errno: those that failed with that error only.
# A directory opened for writing fails with EISDIR, a missing file with
# ENOENT; a file of mode 000 with EACCES, for a user other than root.
test_failed_errno() {
	mkfiles
	start_opens A --file "$T/d" --file "$T/d/missing" --file "$T/d/one" --flags write --opens 3
	start_tool opensnoop -j -x -p "$A_PID"
	go
	wait_loads A
	tool_wait
	expect_status 0
	expect_eq "-x: EISDIR" "$(path_matching "$T/d" "\"pid\":$A_PID,.*\"fd\":-1,\"err\":21,\"flags\":1,")" 3
	expect_eq "-x: ENOENT" "$(path_matching "$T/d/missing" "\"pid\":$A_PID,.*\"fd\":-1,\"err\":2,\"flags\":1,")" 3
	expect_eq "-x: every event" "$(count_events)" 6
	expect_totals 6 0 0 0

	rearm
	chmod 000 "$T/d/two"
	start_opens_as 12345 B --file "$T/d/two" --file "$T/d/one" --file "$T/d/missing" --opens 3 --comm os_errno
	start_opens C --file "$T/d/two" --file "$T/d" --file "$T/d/missing" --flags write --opens 3 --comm os_errno
	start_tool opensnoop -j --errno EACCES -n os_errno
	go
	wait_loads B C
	stop_tool INT
	expect_status 0
	expect_eq "--errno EACCES: uid 12345's opens of two" \
		"$(path_matching "$T/d/two" "\"pid\":$B_PID,\"tid\":$B_PID,\"uid\":12345,\"comm\":\"os_errno\",\"fd\":-1,\"err\":13,")" 3
	expect_eq "--errno EACCES: every event" "$(count_events)" 3
	expect_totals 3 0 0 0
}

# -f FLAG: all the flags given must be set; an access mode matches exactly.
test_flags() {
	mkfiles
	start_opens A --file "$T/d/new" --opens 3 --flags creat --comm os_flag	# O_CREAT|O_WRONLY
	start_opens B --file "$T/d/one" --opens 5 --comm os_flag			# O_RDONLY
	start_opens C --file "$T/d/two" --opens 4 --flags write --comm os_flag	# O_WRONLY
	start_tool opensnoop -j -f O_CREAT -n os_flag
	go
	wait_loads A B C
	stop_tool INT
	expect_status 0
	expect_eq "-f O_CREAT: A's creates" \
		"$(path_matching "$T/d/new" "\"pid\":$A_PID,.*\"fd\":$FD,\"err\":0,\"flags\":65,\"mode\":384,")" 3
	expect_eq "-f O_CREAT: every event" "$(count_events)" 3
	expect_totals 3 0 0 0

	rearm
	start_opens A --file "$T/d/new" --opens 3 --flags creat --comm os_flag
	start_opens B --file "$T/d/one" --opens 5 --comm os_flag
	start_opens C --file "$T/d/two" --opens 4 --flags write --comm os_flag
	start_tool opensnoop -j -f O_WRONLY -n os_flag
	go
	wait_loads A B C
	stop_tool INT
	expect_eq "-f O_WRONLY: A's" "$(path_matching "$T/d/new" "\"pid\":$A_PID,.*\"flags\":65,")" 3
	expect_eq "-f O_WRONLY: C's" "$(path_matching "$T/d/two" "\"pid\":$C_PID,.*\"flags\":1,")" 4
	expect_eq "-f O_WRONLY: every event" "$(count_events)" 7
	expect_totals 7 0 0 0
}

# -n and -u include and exclude exactly (and -U shows the UID column).
test_comm_uid() {
	mkfiles
	start_opens A --file "$T/d/one" --opens 6 --comm os_alpha
	start_opens B --file "$T/d/one" --opens 9 --comm os_beta
	start_opens_as 12345 D --file "$T/d/one" --opens 7 --comm os_alpha
	start_tool opensnoop -U -u 0 -n os_alpha
	go
	wait_loads A B D
	stop_tool INT
	expect_status 0
	expect_eq header "$(head -n1 "$T/out" | grep -cE '^UID +PID +COMM +FD +ERR +PATH$')" 1
	expect_lines out "^0 +$A_PID +os_alpha +$FD +0 +$T/d/one\$" 6
	expect_lines out . 7
	expect_line err '^6 opens traced; 0 lost '

	# -u alone, on the whole system: only that user's opens.
	rearm
	start_opens C --file "$T/d/one" --opens 4 --comm os_uid
	start_opens_as 12345 D --file "$T/d/one" --opens 7 --comm os_uid
	start_tool opensnoop -j -u 12345
	go
	wait_loads C D
	stop_tool INT
	expect_eq "-u 12345: D's" \
		"$(path_matching "$T/d/one" "\"pid\":$D_PID,\"tid\":$D_PID,\"uid\":12345,\"comm\":\"os_uid\",\"fd\":$FD,\"err\":0,")" 7
	expect_eq "-u 12345: every event" "$(count_events)" 7
	expect_totals 7 0 0 0
}

# A file name with a newline, an escape sequence and a byte that is not
# UTF-8: escaped in text (never a raw control byte), exact in JSON.
test_hostile_name() {
	mkfiles
	name=$(printf 'bad\nname\033[31m\377')
	echo x > "$T/d/$name" || fail "cannot create the file"
	esc=$(printf '\033')
	start_opens A --file "$T/d/$name" --opens 2
	start_tool opensnoop -p "$A_PID"
	go
	wait_loads A
	tool_wait
	expect_status 0
	! grep -qF "$esc" "$T/out" || fail "a raw ESC byte in the text output"
	expect_lines out . 3	# the header and one line per open: no line split
	expect_lines out "^$A_PID +openload +$FD +0 +" 2
	expect_eq "escaped path lines" "$(grep -cF " $T/d/bad\\nname\\x1b[31m\\xff" "$T/out")" 2

	rearm
	start_opens B --file "$T/d/$name" --opens 2
	start_tool opensnoop -j -p "$B_PID"
	go
	wait_loads B
	tool_wait
	! grep -qF "$esc" "$T/out" || fail "a raw ESC byte in the JSON output"
	# Nothing but printable ASCII on any line (U+FFFD and controls escaped).
	[ "$(tr -d '\n' < "$T/out" | tr -d ' -~' | wc -c)" -eq 0 ] ||
		fail "a byte outside printable ASCII in the JSON output"
	want=$(printf '%s' "$T/d/$name" | od -An -tx1 | tr -d ' \n')
	expect_eq "path and path_hex" \
		"$(grep -cF "\"path\":\"$T/d/bad\\nname\\u001b[31m\\ufffd\",\"path_hex\":\"$want\"}" "$T/out")" 2
	expect_totals 2 0 0 0
}

# Paths are kept up to 255 bytes: a longer one is cut there and marked;
# one of 255 bytes exactly is whole.
test_truncated() {
	mkfiles
	long="$T/d/$(head -c 240 /dev/zero | tr '\0' x)"
	cut=$(echo "$long" | cut -c1-255)
	[ ${#long} -gt 255 ] && [ ${#cut} = 255 ] || fail "path of ${#long} bytes: not long enough"
	echo x > "$long" || fail "cannot create $long"
	echo x > "$cut" || fail "cannot create $cut"
	start_opens A --file "$long" --file "$cut" --opens 2
	start_tool opensnoop -j -p "$A_PID"
	go
	wait_loads A
	tool_wait
	expect_status 0
	expect_eq "successful opens" "$(grep -cF "\"err\":0,\"flags\":0,\"mode\":0,\"latency_ns\":" "$T/out")" 4
	expect_eq "truncated events" "$(grep -cF "\"path\":\"$cut\",\"truncated\":true}" "$T/out")" 2
	expect_eq "255-byte path events" "$(grep -cF "\"path\":\"$cut\"}" "$T/out")" 2
	expect_eq "every event" "$(count_events)" 4
	expect_totals 4 0 0 2

	rearm
	start_opens B --file "$long" --file "$cut" --opens 2
	start_tool opensnoop -p "$B_PID"
	go
	wait_loads B
	tool_wait
	expect_lines out "^$B_PID +openload +$FD +0 +$cut\\.\\.\\. \\[truncated\\]\$" 2
	expect_lines out "^$B_PID +openload +$FD +0 +$cut\$" 2
	expect_line err '^4 opens traced; 0 lost .*; 0 paths unreadable; 2 truncated$'
}

# -C --by file: two paths longer than 255 bytes with the same prefix stay
# two rows (the whole path hashed in the kernel, with bpf_loop), marked;
# --by comm: one row per name, counted in the kernel.
test_count_long_paths() {
	mkfiles
	long="$T/d/$(head -c 200 /dev/zero | tr '\0' x)/$(head -c 100 /dev/zero | tr '\0' y)"
	cut=$(echo "$long" | cut -c1-255)
	mkdir -p "$long" || fail "cannot create $long"
	echo a > "$long/one"
	echo b > "$long/two"
	start_opens A --file "$long/one" --opens 3 --comm os_long
	start_opens B --file "$long/two" --opens 5 --comm os_long
	start_tool opensnoop -C --by file -j -n os_long
	go
	wait_loads A B
	stop_tool INT
	expect_status 0
	expect_line out '"total":8,'
	expect_eq "row of 3" "$(grep -oF "{\"path\":\"$cut\",\"truncated\":true,\"path_bytes\":$((${#long} + 4)),\"opens\":3,\"failed\":0}" "$T/out" | wc -l)" 1
	expect_eq "row of 5" "$(grep -oF "{\"path\":\"$cut\",\"truncated\":true,\"path_bytes\":$((${#long} + 4)),\"opens\":5,\"failed\":0}" "$T/out" | wc -l)" 1

	rearm
	start_opens C --file "$T/d/one" --file "$T/d/missing" --opens 4 --comm os_comm
	start_tool opensnoop -C --by comm -j -n os_comm
	go
	wait_loads C
	stop_tool INT
	expect_status 0
	expect_line out '"by":"comm","total":8,.*"rows":\[\{"comm":"os_comm","opens":8,"failed":4\}\]'
}

# A burst into the smallest ring buffer (a page: 12 events): what does not
# fit is counted, and delivered + lost is every open, exactly.
test_lost() {
	mkfiles
	OPENS=20000
	WAIT_SECS=35	# the burst takes 4-8 s under TCG
	start_opens A --file "$T/d/one" --opens $OPENS
	start_tool opensnoop -j -b 4K -p "$A_PID"
	go
	wait_loads A
	tool_wait
	expect_status 0
	delivered=$(count_path "$T/d/one")
	lost=$(total lost)
	expect_eq "every event" "$(count_events)" "$delivered"
	expect_eq "closing events" "$(total events)" $OPENS
	expect_ge "lost" "$lost" 1
	expect_eq "delivered ($delivered) + lost ($lost)" $((delivered + lost)) $OPENS
	expect_eq "closing unreadable" "$(total unreadable)" 0
}

test_check() {
	run "$BUILD/opensnoop" --check
	expect_status 0 "$STATUS"
	expect_line run.out '^privileges +ok '
	expect_line run.out '^kernel BTF +ok +/sys/kernel/btf/vmlinux$'
	expect_line run.out '^tracefs +ok +/sys/kernel/tracing$'
	for sc in open openat openat2; do
		if [ "$sc" = open ] && ! has_open; then
			for e in enter exit; do
				expect_line run.out "^probe sys_${e}_open +fallback +skipped: tracepoint syscalls/sys_${e}_open does not exist on this kernel\$"
			done
			continue
		fi
		expect_line run.out "^probe sys_enter_$sc +ok +tracepoint syscalls/sys_enter_$sc\$"
		expect_line run.out "^probe sys_exit_$sc +ok +tracepoint syscalls/sys_exit_$sc\$"
	done
	expect_line run.out '^probe signal_deliver +ok +tracepoint signal/signal_deliver$'
	# task storage: 5.11
	if kernel_below 5.11; then
		expect_line run.out '^start-time store +fallback +LRU hash by thread id '
	else
		expect_line run.out '^start-time store +ok +task storage$'
	fi
	expect_eq "last line" "$(tail -n1 "$T/run.out")" "opensnoop can run on this system"
}

# Nothing of opensnoop stays loaded after it exits, whatever ended it; and
# it never shows its own opens (tracefs, while it attaches).
test_no_leak() {
	bpf_snapshot bpf.before
	start_tool opensnoop -j
	bpf_new bpf.before > "$T/bpf.running"
	progs="enter_openat exit_openat enter_openat2 exit_openat2 signal_deliver"
	has_open && progs="enter_open exit_open $progs"
	for p in $progs; do
		expect_line bpf.running "^prog [0-9]+ $p\$"
	done
	expect_line bpf.running '^map [0-9]+ events$'
	stop_tool TERM
	expect_status 0
	expect_no_leak bpf.before
	expect_lines out "\"pid\":$TOOL_JOB," 0
	expect_lines out '^\{.*"events":' 1

	start_tool opensnoop -x
	kill -KILL "$TOOL_JOB"
	tool_wait
	expect_no_leak bpf.before
}
