# SPDX-License-Identifier: GPL-2.0-only
# biolat in the test VM, against bioload (a known number of O_DIRECT
# requests of a known size) on the guest's own virtio-blk disk (run.sh's,
# empty, nothing else doing I/O on it): the kernel-facing tests of
# tests/biolat.bats, in busybox sh, on 6.1's struct request (its disk is
# rq->q->disk) and raw tracepoints. Every count is exact, and checked
# against the disk's own /sys/block/DISK/stat where it can be. Init leaves
# the disk without I/O scheduler; the tests that want mq-deadline (where
# requests are inserted into a queue before they are issued) set it, and
# those marked "each scheduler" run under both.
#
# With -j, biolat prints one JSON histogram per interval and key (with a
# "count"), then, at exit, one object with "unfinished" (requests issued
# and not seen completing) and "evicted" (dropped from its table).
#
# Under TCG an 8 KiB request takes ~100-500 us; the whole file ~20 s on the
# cloud kernel, ~25 s on PREEMPT_RT, up to 2-3 times that on a busy host
# (test_queued, the longest: 12 s and 21 s with a load of 4 on 2 CPUs).
# Not tested here: fsync. Its empty PREFLUSH write is completed without
# ever being issued (the driver sees the flush request instead): the disk's
# stat counts both, and so does biolat (tests/biolat_truth.bats, on the
# host, with fio).

KIB=1024
MIB=$((1024 * 1024))

# bio NAME [bioload options]: O_DIRECT requests on the test disk, parked.
bio() {
	local name=$1
	shift
	start_bio "$name" --dev "/dev/$DISK" --direct "$@"
}

# done_loads NAME...: until each workload has made all its calls (then
# held, alive: every request it made has completed).
done_loads() {
	local n
	for n in "$@"; do
		wait_for "$T/$n.out" '^done'
	done
}

HIST='^\{.*"count":'	# a JSON histogram (the closing object has no count)

# expect_clean [FILE]: nothing lost, unmatched or failed in the (first)
# JSON histogram; nothing unfinished or evicted in the closing object.
expect_clean() {
	expect_eq "lost" "$(jfield lost '' "${1:-out}")" 0
	expect_eq "unmatched" "$(jfield unmatched '' "${1:-out}")" 0
	expect_eq "errors" "$(jfield errors '' "${1:-out}")" 0
	expect_lines "${1:-out}" '^\{.*"unfinished":' 1
	expect_eq "unfinished" "$(jfield unfinished '"unfinished":' "${1:-out}")" 0
	expect_eq "evicted" "$(jfield evicted '"evicted":' "${1:-out}")" 0
}

# sum_counts KEY_REGEX: the counts of the JSON histograms whose key matches
# ("key":{KEY_REGEX}), summed over every report.
sum_counts() {
	grep -E "^\{.*\"key\":\{$1\}," "$T/out" | sed -E 's/.*\},"count":([0-9]+),.*/\1/' |
		awk '{ n += $1 } END { print n + 0 }'
}

# start_second NAME [biolat args]: a second biolat beside start_tool's (its
# output in $T/NAME.out, NAME.err); sets NAME_TOOL. Stop it with stop_second.
start_second() {
	local name=$1
	shift
	rm -f "$T/$name.out" "$T/$name.err"
	timeout -s KILL "$TOOL_SECS" "$BUILD/biolat" "$@" > "$T/$name.out" 2> "$T/$name.err" &
	eval "${name}_TOOL=$!"
	job "$!"
	wait_for "$T/$name.err" 'Hit Ctrl-C to end'
}
stop_second() {
	local pid
	eval "pid=\$${1}_TOOL"
	kill -INT "$pid"
	wait_exit "$pid" || fail "second biolat $1 exited with status $?"
}

# -d DISK: every request, as many as the disk itself counted (each scheduler).
test_disk_count() {
	find_disk
	for sched in $(schedulers "$DISK"); do
		rearm
		use_scheduler "$DISK" "$sched"
		bio A --reads 200 --writes 100 --size $((8 * KIB))
		start_tool biolat -j -d "$DISK"
		before=$(disk_ios "$DISK")
		go
		done_loads A
		stop_tool INT
		after=$(disk_ios "$DISK")	# after the tool's exit: every completion accounted
		wait_loads A
		expect_status 0
		expect_lines out "$HIST" 1
		expect_eq "$sched: requests /sys/block/$DISK/stat counted" $((after - before)) 300
		expect_eq "$sched: count" "$(jfield count)" 300
		expect_clean
		expect_eq "$sched: unit" "$(jfield unit)" usecs
		expect_no_line out '"key":'
	done
}

# -D: one histogram per disk; the test disk's exact.
test_per_disk() {
	find_disk
	bio A --reads 120 --writes 80 --size $((8 * KIB)) --interleave
	start_tool biolat -j -D
	go
	done_loads A
	stop_tool INT
	expect_status 0
	expect_lines out "\"key\":\\{\"disk\":\"$DISK\"\\}" 1
	expect_eq "$DISK count" "$(jfield count "\"disk\":\"$DISK\"")" 200
	expect_eq "$DISK lost" "$(jfield lost "\"disk\":\"$DISK\"")" 0
	expect_eq "unfinished" "$(jfield unfinished '"unfinished":')" 0
	expect_no_line out '"disk":""'
}

# What -F must call bioload's direct reads, as the kernel's own
# block_rq_issue tracepoint marks one (its rwbs): on 6.1 an O_DIRECT read
# of a block device is REQ_SYNC ("RS": Sync-Read), on 5.10 not ("R":
# Read). Its writes are REQ_SYNC on both (and REQ_IDLE, which -F does not
# name): Sync-Write.
direct_read_flags() {
	local ev=/sys/kernel/tracing/events/block/block_rq_issue rwbs dev
	echo > /sys/kernel/tracing/trace
	echo 1 > "$ev/enable"
	bio RF --reads 1 --size $((4 * KIB))
	go
	done_loads RF
	echo 0 > "$ev/enable"
	# the disk's first read (issued by bioload, or by a kworker where a
	# scheduler queues it)
	dev=$(tr : , < "/sys/block/$DISK/dev")
	rwbs=$(sed -n "s/.*block_rq_issue: $dev \(R[A-Z]*\) .*/\1/p" /sys/kernel/tracing/trace | head -n1)
	finish
	wait_loads RF
	rearm
	case $rwbs in
	RS) READ_FLAGS=Sync-Read ;;
	R) READ_FLAGS=Read ;;
	*) fail "bioload's read: rwbs '$rwbs' in the kernel's block_rq_issue: $(grep block_rq_issue /sys/kernel/tracing/trace | tr '\n' '|')" ;;
	esac
}

# -F: reads and writes apart, exactly, named bcc's way; and in text, per
# disk and flag set, the reads named as the kernel marks them.
test_per_flags() {
	find_disk
	direct_read_flags
	bio A --reads 120 --writes 80 --size $((8 * KIB)) --interleave
	start_tool biolat -j -F -d "$DISK"
	go
	done_loads A
	stop_tool INT
	expect_status 0
	expect_lines out "$HIST" 2
	expect_eq "$READ_FLAGS count" "$(jfield count "\"key\":\\{\"flags\":\"$READ_FLAGS\"\\}")" 120
	expect_eq "Sync-Write count" "$(jfield count '"key":\{"flags":"Sync-Write"\}')" 80

	rearm
	bio B --reads 30 --writes 20 --size $((4 * KIB))
	start_tool biolat -D -F
	go
	done_loads B
	stop_tool INT
	expect_lines out "^disk = $DISK, flags = $READ_FLAGS\$" 1
	expect_lines out "^disk = $DISK, flags = Sync-Write\$" 1
	expect_eq "text counts" "$(awk -v d="$DISK," '/^disk = / { cur = $3 } /^count / && cur == d { n += $2 } END { print n + 0 }' "$T/out")" 50
}

# --size: request sizes in bytes, min and max exact.
test_size() {
	find_disk
	bio A --reads 40 --size $((4 * KIB))
	bio B --reads 0 --writes 25 --size $((64 * KIB)) --offset $((32 * MIB))
	start_tool biolat -j --size -d "$DISK"
	go
	done_loads A B
	stop_tool INT
	expect_status 0
	expect_eq unit "$(jfield unit)" bytes
	expect_eq count "$(jfield count)" 65
	expect_eq min "$(jfield min)" 4096
	expect_eq max "$(jfield max)" 65536
	# (40 * 4096 + 25 * 65536) / 65 = 27726.769...
	expect_range avg "$(jfield avg)" 27726.7 27726.8
	expect_clean

	rearm
	bio C --reads 12 --size $((16 * KIB))
	start_tool biolat --size -d "$DISK"
	go
	done_loads C
	stop_tool INT
	expect_line out '^ +bytes +: count +distribution$'
	expect_line out '^ +16384 -> 32767 +: 12 +\|\*{40}\|$'
	expect_line out '^count 12, avg 16384, .*, max 16384 bytes, errors 0$'
}

# -Q: the same requests, timed from their insertion into the OS queue, so
# never shorter on average, run beside a biolat without -Q (each scheduler;
# the averages compared with mq-deadline: without a scheduler nothing is
# inserted, -Q starts at the issue too). The plain biolat attaches first,
# so its programs run first at each event: its completion time is never
# later than the -Q one's.
test_queued() {
	find_disk
	schedulers "$DISK" | grep -qx mq-deadline ||
		fail "no mq-deadline scheduler on $DISK: -Q averages cannot be compared"
	for sched in $(schedulers "$DISK"); do
		rearm
		use_scheduler "$DISK" "$sched"
		bio A --reads 200 --writes 100 --size $((8 * KIB))
		start_tool biolat -j -d "$DISK"
		start_second Q -j -Q -d "$DISK"
		go
		done_loads A
		stop_tool INT
		stop_second Q
		expect_status 0
		expect_eq "$sched: count" "$(jfield count)" 300
		expect_clean
		expect_eq "$sched: -Q count" "$(jfield count '' Q.out)" 300
		expect_clean Q.out
		[ "$sched" = mq-deadline ] || continue
		plain=$(jfield avg) queued=$(jfield avg '' Q.out)
		echo "mq-deadline: avg $plain us from issue, $queued us from insertion"
		awk -v q="$queued" -v p="$plain" 'BEGIN { exit !(q + 0 >= p + 0 && p + 0 > 0) }' ||
			fail "mq-deadline: -Q avg $queued us < avg $plain us without -Q"
	done
}

# -p: exactly the I/O that process submitted, none of another's (each
# scheduler: with mq-deadline the submitter is seen at the insertion, and
# the issue may run in another process or a kworker).
test_pid() {
	find_disk
	for sched in $(schedulers "$DISK"); do
		rearm
		use_scheduler "$DISK" "$sched"
		bio A --reads 100 --writes 50 --size $((8 * KIB))
		bio B --reads 80 --writes 40 --size $((8 * KIB)) --offset $((32 * MIB))
		start_tool biolat -j -p "$A_PID" -d "$DISK"
		go
		wait_loads A B
		tool_wait		# ends by itself when the process exits
		expect_status 0
		expect_line err "process $A_PID exited"
		expect_eq "$sched: count of A's" "$(jfield count)" 150
		expect_clean
	done
}

# Short intervals lose nothing: the reports add up to every request,
# whose completions on 6.1 run in the virtio interrupt (a thread of its own
# on PREEMPT_RT) while user space swaps the histograms.
test_intervals() {
	find_disk
	direct_read_flags
	bio A --reads 400 --writes 200 --size $((4 * KIB)) --interleave
	start_tool biolat -j -D -F 0.05
	go
	done_loads A
	stop_tool INT
	expect_status 0
	reports=$(grep -cE "$HIST" "$T/out")
	expect_ge reports "$reports" 3
	expect_eq "$READ_FLAGS, all reports" "$(sum_counts "\"disk\":\"$DISK\",\"flags\":\"$READ_FLAGS\"")" 400
	expect_eq "Sync-Write, all reports" "$(sum_counts "\"disk\":\"$DISK\",\"flags\":\"Sync-Write\"")" 200
	expect_no_line out '"lost":[1-9]'
	expect_no_line out '"unmatched":[1-9]'
	expect_eq "unfinished" "$(jfield unfinished '"unfinished":')" 0
}

test_check() {
	run "$BUILD/biolat" --check -Q
	expect_status 0 "$STATUS"
	# block_rq_merge: since 5.10, 6.1's too
	for ev in insert issue requeue merge complete; do
		expect_line run.out "^probe block_rq_$ev +ok +raw tracepoint block/block_rq_$ev\$"
	done
	# 6.1: no rq->rq_disk (gone in 5.17, f3fa33acca9f), block_rq_issue(rq)
	# (since 5.11; (q, rq) before).
	# struct request lost rq_disk in 5.17
	if kernel_below 5.17; then
		expect_line run.out '^request layout +ok +from kernel BTF: disk via rq->rq_disk, request argument 0$'
	else
		expect_line run.out '^request layout +ok +from kernel BTF: disk via rq->q->disk, request argument 0$'
	fi
	# a raw tracepoint's program can nest in itself before 6.1
	# (05b24ff9b2cf): the per-CPU histogram then takes atomic adds
	if kernel_below 6.1; then
		expect_line run.out '^program nesting +fallback +before Linux 6.1, .*atomic adds$'
	else
		expect_line run.out '^program nesting +ok +raw tracepoint programs do not nest'
	fi
	expect_eq "last line" "$(tail -n1 "$T/run.out")" "biolat can run on this system"

	# every probe biolat may attach, those these options do not need too
	run "$BUILD/biolat" --check
	expect_status 0 "$STATUS"
	for ev in insert merge; do
		expect_line run.out "^probe block_rq_$ev +ok +raw tracepoint block/block_rq_$ev \\(used with other options\\)\$"
	done
}

# Nothing of biolat stays loaded after it exits, whatever ended it.
test_no_leak() {
	find_disk
	bpf_snapshot bpf.before
	start_tool biolat -Q -D -F -d "$DISK"
	bpf_new bpf.before > "$T/bpf.running"
	for p in rq_insert rq_issue rq_requeue rq_merge rq_complete; do
		expect_line bpf.running "^prog [0-9]+ $p\$"
	done
	expect_line bpf.running '^map [0-9]+ '
	stop_tool TERM
	expect_status 0
	expect_no_leak bpf.before

	run "$BUILD/biolat" -j --duration 0.2
	expect_status 0 "$STATUS"
	expect_lines run.stdout "$HIST" 1
	expect_no_leak bpf.before

	start_tool biolat --size
	kill -KILL "$TOOL_JOB"
	tool_wait
	expect_no_leak bpf.before
}
