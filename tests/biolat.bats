#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# biolat against bioload, a workload making a known number of O_DIRECT
# requests of a known size on a loop device of the test's own (no I/O
# scheduler: one call is one request).
#
# The counts are checked against what the workload made and the disk
# completed. The kernel (6.18 here) now and then completes a request
# without running biolat's completion program (none in most runs, a
# burst of a few to a dozen in some), and biolat reports those as "lost"
# (or "unfinished" at exit). So a histogram holds at most the requests
# made, and count + lost + unfinished at least them: exactly them when
# nothing is lost.

load helpers
bats_require_minimum_version 1.5.0

BIOLAT_PROGS='rq_insert|rq_issue|rq_requeue|rq_merge|rq_complete'
KIB=1024
MIB=$((1024 * 1024))

setup() { common_setup; }
teardown() {
	[ -z "${PART_LOOP:-}" ] || losetup -d "$PART_LOOP" 2>/dev/null || true
	common_teardown
	[ -z "${CG:-}" ] || rmdir "$CG" 2>/dev/null || true
	[ -z "${CG1:-}" ] || rmdir "$CG1" 2>/dev/null || true
}

# bio_disk [MB]: loop_setup, then write the whole device once, so reads
# come from written blocks (fallocated extents read back as zeros at once).
bio_disk() {
	loop_setup "$@"
	dd if=/dev/zero of="$LOOP" bs=1M count="${1:-64}" oflag=direct status=none
}

# start_bio NAME [bioload options]: O_DIRECT I/O on $LOOP, parked before
# its first call; sets NAME_PID and NAME_JOB.
start_bio() { start_parked "$1" "$BUILD/tests/bioload" --dev "$LOOP" --direct "${@:2}"; }

# wait_done NAME...: until each workload has made all its calls (it is
# then held, alive: every request it made has completed).
wait_done() {
	local n
	for n in "$@"; do
		wait_for "$T/$n.out" '^done'
	done
}

# start_biolat [args]: start_tool biolat, once more in the same test: the
# banner of the run before, still in $T/err, must not pass for this one's.
start_biolat() {
	rm -f "$T/out" "$T/err"
	start_tool biolat "$@"
}



# counted [FILE] [JQ_SELECT]: "COUNT LOST UNFINISHED" of FILE (default
# $T/out): the counts and lost of its histograms (of those JQ_SELECT
# keeps: each histogram's lost are its own), unfinished from the object
# closing the run (all keys').
counted() {
	jq -s -r "(map(select(has(\"buckets\")) | ${2:-.} | .count) | add // 0) as \$c |
		(map(select(has(\"buckets\")) | ${2:-.} | .lost) | add // 0) as \$l |
		(map(select(has(\"unfinished\")) | .unfinished) | add // 0) as \$u |
		\"\(\$c) \(\$l) \(\$u)\"" "${1:-$T/out}"
}

# accounts N [FILE] [JQ_SELECT] [any]: the histograms hold exactly the N
# requests made, but for those the kernel did not run the program for:
# at most N counted, every one counted or lost or unfinished, and those
# at most 10% (unless "any": lost and unfinished then include other disks').
# The share the kernel skips grows with the host's load: 5.4% of 2,000
# reads at 10 ms intervals with two busy loops and a second suite running.
accounts() {
	local n=$1 c l u
	read -r c l u <<<"$(counted "${2:-$T/out}" "${3:-.}")"
	echo "expected $n: count $c, lost $l, unfinished $u"
	[ "$c" -le "$n" ] && [ $((c + l + u)) -ge "$n" ] &&
		{ [ "${4:-}" = any ] || [ $((l + u)) -le $((n / 10 + 3)) ]; }
}

# accounts_text N: accounts for the text output (tables in $T/out, the
# unfinished requests on a line of $T/err).
accounts_text() {
	local n=$1 c l u
	c=$(grep -E '^count ' "$T/out" | awk '{ n += $2 } END { print n + 0 }')
	l=$(grep -oE ', lost [0-9]+' "$T/out" | awk '{ n += $3 } END { print n + 0 }')
	u=$(sed -nE 's/^([0-9]+) requests issued and not seen completing.*/\1/p' "$T/err")
	echo "expected $n: count $c, lost $l, unfinished ${u:-0}"
	[ "$c" -le "$n" ] && [ $((c + l + ${u:-0})) -ge "$n" ] && [ $((l + ${u:-0})) -le $((n / 10 + 3)) ]
}

# hjout FILTER [jq args]: jout over the histograms only (not the object
# closing a JSON run); hjq FILE FILTER: the same over FILE.
hjout() { jout "select(has(\"buckets\")) | $1" "${@:2}"; }
hjq() { jq -e -s "[.[] | select(has(\"buckets\")) | $2] | length > 0 and all" "$1"; }

# The requests the histograms of $T/out count.
total_count() { jq -s 'map(select(has("buckets")) | .count) | add // 0' "$T/out"; }

# Every histogram's buckets add up to its count.
buckets_add_up() { hjout '(([.buckets[].count] | add) // 0) == .count'; }

@test "-d DISK: the requests made, as the disk counted them; three runs" {
	bio_disk
	for run in 1 2 3; do
		rm -f "$T/go" "$T/hold"
		start_bio A --reads 300 --writes 200 --size $((8 * KIB))
		start_biolat -j -d "$LOOPNAME"
		before=$(disk_ios "$LOOPNAME")
		go
		wait_done A
		after=$(disk_ios "$LOOPNAME")
		stop_tool INT
		wait_loads A
		echo "run $run: the disk completed $((after - before))"
		[ "$TOOL_STATUS" -eq 0 ]
		[ $((after - before)) -eq 500 ]
		[ "$(jq -s 'map(select(has("buckets"))) | length' "$T/out")" -eq 1 ]
		jq -e -s 'length == 2 and (.[1] | has("unfinished") and has("evicted") and (has("buckets") | not))' "$T/out"
		accounts 500
		hjout '.tool == "biolat" and .unit == "usecs" and .key == null'
		hjout '.unmatched == 0 and .errors == 0'
		hjout '.min > 0 and .min <= .p50 and .p50 <= .p90 and .p90 <= .p99 and .p99 <= .p999 and .p999 <= .max'
		jq -e -s '.[-1].evicted == 0' "$T/out"
		buckets_add_up
	done
	json_strict "$T/out"
}

@test "-D: one histogram per disk, the loop disk's count" {
	bio_disk
	start_bio A --reads 120 --writes 80 --size $((8 * KIB)) --interleave
	start_biolat -j -D
	go
	wait_done A
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	[ "$(jq -s --arg d "$LOOPNAME" 'map(select(.key.disk == $d)) | length' "$T/out")" -eq 1 ]
	accounts 200 "$T/out" "select(.key.disk == \"$LOOPNAME\")" any
	hjout '.key | keys == ["disk"]'
	hjout '.key.disk | type == "string" and length > 0'
	buckets_add_up

	# with -d too: that disk only, accounted exactly
	rm -f "$T/go" "$T/hold"
	start_bio B --reads 70 --writes 30 --size $((8 * KIB))
	start_biolat -j -D -d "$LOOPNAME"
	go
	wait_done B
	stop_tool INT
	hjout '.key == {"disk": $d}' --arg d "$LOOPNAME"
	accounts 100
}

# prog_id NAME: the ID of the BPF program NAME that the tool of start_tool
# holds (by its fds: another biolat's program has the same name).
prog_id() {
	local id
	bpf_ids_of "$TOOL_JOB" "$T/ids"
	for id in $(awk '$1 == "prog_id" { print $2 }' "$T/ids"); do
		bpftool prog show id "$id" | grep -qw "name $1" && { echo "$id"; return 0; }
	done
	return 1
}

# issue_unseen PROG_ID: run that rq_issue program (BPF_PROG_TEST_RUN) for
# a struct request at an address no request has (reads there fail: no
# disk), as if the kernel issued it: twice, this is an I/O whose
# completion no program saw, then the next I/O of the same request.
FAKE_RQ=0xffff800000001000
issue_unseen() {
	python3 - "$1" "$FAKE_RQ" <<'EOF_PY'
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    if libc.syscall(321, cmd, buf, 128) < 0:	# x86_64 bpf(2)
        sys.exit("bpf(%d): %s" % (cmd, os.strerror(ctypes.get_errno())))
    return buf
fd = libc.syscall(321, 13, ctypes.create_string_buffer(struct.pack("<III", int(sys.argv[1]), 0, 0), 128), 128)
if fd < 0:
    sys.exit("BPF_PROG_GET_FD_BY_ID: " + os.strerror(ctypes.get_errno()))
ctx = ctypes.create_string_buffer(struct.pack("<3Q", int(sys.argv[2], 0), 0, 0), 24)
bpf(10, struct.pack("<IIIIQQIIIIQQIII", fd, 0, 0, 0, 0, 0, 0, 0, 24, 0, ctypes.addressof(ctx), 0, 0, 0, 0))
EOF_PY
}

@test "lost: once, in the histogram of its disk; a lost I/O of no disk apart" {
	bio_disk
	start_biolat -j -D
	id=$(prog_id rq_issue)
	issue_unseen "$id"
	issue_unseen "$id"	# the first one's completion was never seen: lost
	start_bio A --reads 150 --writes 100 --size $((8 * KIB)) --interleave
	before=$(disk_ios "$LOOPNAME")
	go
	wait_done A
	after=$(disk_ios "$LOOPNAME")
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	read -r c l <<<"$(jq -s -r --arg d "$LOOPNAME" \
		'map(select(.key.disk == $d)) | "\(map(.count) | add) \(map(.lost) | add)"' "$T/out")"
	u=$(jq -s -r --arg d "$LOOPNAME" \
		'[(.[-1].unfinished_keys // [])[] | select(.key.disk == $d) | .unfinished] | add // 0' "$T/out")
	echo "$LOOPNAME: completed $((after - before)), count $c, lost $l, unfinished $u"
	tail -n1 "$T/out"
	# the disk's own: every request it completed, each once
	[ $((c + l + u)) -eq $((after - before)) ]
	[ $((l + u)) -le 5 ]
	# the injected one: lost in no disk's histogram, and said so
	jq -e -s '.[-1].lost_unattributed >= 1 and
		any(.[-1].unfinished_keys[]; .key.disk == "0:0" and .unfinished >= 1)' "$T/out"

	# one histogram: the lost one counted once
	start_biolat -j
	id=$(prog_id rq_issue)
	issue_unseen "$id"
	issue_unseen "$id"
	stop_tool INT
	cat "$T/out"
	jq -e -s '(map(select(has("buckets")) | .lost) | add) >= 1 and .[-1].unfinished >= 1' "$T/out"
}

lost_metric() { sed -nE 's/^biolat_lost_events_total(\{[^}]*\})? ([0-9]+)$/\2/p' "$T/m.prom" 2>/dev/null; }
lost_above() { [ "$(lost_metric)" -gt "$1" ] 2>/dev/null; }

@test "lost with --textfile: counted in the metrics each report, said on stderr at most once a minute and at exit" {
	start_biolat --textfile "$T/m.prom" 0.05
	id=$(prog_id rq_issue)
	lost=0
	for round in 1 2 3 4 5; do
		issue_unseen "$id"
		issue_unseen "$id"	# the one before it: lost
		retry lost_above "$lost"	# a report has counted it
		lost=$(lost_metric)
	done
	stop_tool INT
	cat "$T/err"
	# the first report's, then at exit what the minute held back
	[ "$(grep -c 'completed without being counted' "$T/err")" -eq 2 ]
	grep -q 'completed without being counted (lost) since this note.s last line' "$T/err"
}

# throttle_setup: cgroups whose writes to the disk under $T (the loop
# device's backing file) are held to 200 a second: a cgroup v2 directory
# CG (for -c) and, where blkio is a v1 controller, a blkio directory CG1
# beside it; throttled sets the command that runs in both. Skips where
# neither can be made.
throttle_setup() {
	local root disk real
	root=$(cgroup2_root) || skip "no cgroup2 mount"
	disk=$(stat -c '%Hd:%Ld' "$T/loop.img")
	real=$(readlink -f "/sys/dev/block/$disk") || skip "no block device under $T ($disk)"
	[ ! -e "$real/partition" ] || disk=$(cat "$real/../dev")
	CG="$root/biolat-test-$$"
	mkdir "$CG"
	if [ -e /sys/fs/cgroup/blkio/blkio.throttle.write_iops_device ]; then
		CG1=/sys/fs/cgroup/blkio/biolat-test-$$
		mkdir "$CG1"
		echo "$disk 200" > "$CG1/blkio.throttle.write_iops_device" ||
			skip "cannot throttle $disk (blkio v1)"
	else
		echo +io > "$root/cgroup.subtree_control" 2>/dev/null || true
		echo "$disk wiops=200" > "$CG/io.max" 2>/dev/null || skip "cannot throttle $disk (io.max)"
	fi
}

# throttled CMD...: CMD in throttle_setup's cgroups.
throttled() {
	sh -c 'echo $$ > "$1/cgroup.procs" && { [ -z "$2" ] || echo $$ > "$2/cgroup.procs"; } &&
		shift 2 && exec "$@"' sh "$CG" "${CG1:-}" "$@"
}

# merges_of DEV_T FILE: count block_rq_merge on that disk (bpftrace), the
# count into FILE at SIGINT; sets MERGES_JOB.
merges_of() {
	bpftrace -e "tracepoint:block:block_rq_merge /args->dev == $1/ { @merges = count(); }$BT_READY" \
		> "$2" 2>&1 &
	MERGES_JOB=$!
	JOBS+=($!)
	bpftrace_ready "$2"
}

@test "block_rq_merge: a request merged after insertion passes nothing to the next I/O of its struct request" {
	command -v fio >/dev/null || skip "no fio"
	command -v bpftrace >/dev/null || skip "no bpftrace"
	bio_disk
	grep -qw mq-deadline "/sys/block/$LOOPNAME/queue/scheduler" || skip "no mq-deadline"
	echo mq-deadline > "/sys/block/$LOOPNAME/queue/scheduler"
	throttle_setup
	IFS=: read -r maj min < "/sys/block/$LOOPNAME/dev"
	merges_of $((maj << 20 | min)) "$T/merges"
	start_biolat -j -c "$CG" -d "$LOOPNAME"
	start_more biolat Q -j -Q -c "$CG" -d "$LOOPNAME"
	start_more biolat ALL -j -Q -d "$LOOPNAME"
	# The cgroup's writes: 1024 of 4 KiB in 1 MiB, 512 at a time, held
	# in the scheduler by the throttle, where later ones merge bios and
	# requests (an inserted request merged into its neighbour).
	before=$(disk_ios "$LOOPNAME")
	t0=$(date +%s%N)
	throttled fio --name=w --filename="$LOOP" --rw=randwrite --bs=4k --size=1M --io_size=4M \
		--ioengine=libaio --direct=1 --iodepth=512 --output-format=json > "$T/fio1.json"
	t1=$(date +%s%N)
	mid=$(disk_ios "$LOOPNAME")
	# Then reads from outside the cgroup, as deep: their requests are the
	# struct requests the merged ones were.
	fio --name=r --filename="$LOOP" --rw=randread --bs=4k --size=60M --io_size=16M \
		--ioengine=libaio --direct=1 --iodepth=256 --output-format=json > "$T/fio2.json"
	after=$(disk_ios "$LOOPNAME")
	stop_tool INT
	stop_more Q
	stop_more ALL
	bpftrace_end "$MERGES_JOB" || true
	merged=$(sed -nE 's/^@merges: ([0-9]+)$/\1/p' "$T/merges")
	echo "cgroup: ${merged:-0} requests merged after insertion, $((mid - before)) completed; then $((after - mid)) reads"
	[ "${merged:-0}" -gt 0 ] || skip "no request was merged after insertion here"
	jq -e '.jobs[0].write.total_ios == 1024' "$T/fio1.json"
	# -c: the cgroup's requests, none of the reads after them
	accounts $((mid - before))
	accounts $((mid - before)) "$T/Q.out"
	# -Q: none is timed from before the cgroup's first I/O
	jq -e -s --argjson span $((t1 - t0)) \
		'[.[] | select(has("buckets")) | .max * 1000 <= $span] | length > 0 and all' "$T/Q.out"
	accounts $((after - before)) "$T/ALL.out"
}

@test "-F: reads and writes apart" {
	bio_disk
	start_bio A --reads 120 --writes 80 --size $((8 * KIB)) --interleave
	start_biolat -j -F -d "$LOOPNAME"
	go
	wait_done A
	stop_tool INT
	cat "$T/out"
	[ "$TOOL_STATUS" -eq 0 ]
	hjout '.key | keys == ["flags"]'
	hjout '.key.flags | test("^([A-Za-z]+-)*(Read|Write)$")'
	[ "$(jq -s 'map(select(has("buckets"))) | length' "$T/out")" -eq 2 ]
	accounts 120 "$T/out" 'select((.key.flags // "") | endswith("Read"))'
	accounts 80 "$T/out" 'select((.key.flags // "") | endswith("Write"))'
	accounts 200
	buckets_add_up
}

@test "-F and -D -F, text: a table per flag set, named bcc's way" {
	bio_disk
	start_bio A --reads 30 --writes 20 --size $((4 * KIB))
	start_biolat -F -d "$LOOPNAME"
	go
	wait_done A
	stop_tool INT
	cat "$T/out"
	[ "$(grep -cE '^flags = ([A-Za-z]+-)*Read$' "$T/out")" -eq 1 ]
	[ "$(grep -cE '^flags = ([A-Za-z]+-)*Write$' "$T/out")" -eq 1 ]
	accounts_text 50

	rm -f "$T/go" "$T/hold"
	start_bio B --reads 7 --size $((4 * KIB))
	start_biolat -D -F
	go
	wait_done B
	stop_tool INT
	grep -qE "^disk = $LOOPNAME, flags = ([A-Za-z]+-)*Read\$" "$T/out"
}

@test "--size: request sizes in bytes, per bucket, min and max" {
	bio_disk
	start_bio A --reads 40 --size $((4 * KIB))
	start_bio B --writes 25 --reads 0 --size $((64 * KIB)) --offset $((32 * MIB))
	start_biolat -j --size -d "$LOOPNAME"
	go
	wait_done A B
	stop_tool INT
	cat "$T/out"
	[ "$TOOL_STATUS" -eq 0 ]
	accounts 65
	hjout '.unit == "bytes" and .min == 4096 and .max == 65536 and .errors == 0'
	hjout '[.buckets[] | select(.count > 0)] | length == 2'
	c4=$(jq -s 'map(.buckets[]? | select(.min <= 4096 and 4096 <= .max) | .count) | add' "$T/out")
	c64=$(jq -s 'map(.buckets[]? | select(.min <= 65536 and 65536 <= .max) | .count) | add' "$T/out")
	echo "4 KiB: $c4, 64 KiB: $c64"
	[ "$c4" -le 40 ] && [ "$c64" -le 25 ] && [ $((c4 + c64)) -eq "$(total_count)" ]
	# the sum is exact: the average is that of the sizes counted
	hjout '(.avg - (($c4 * 4096 + $c64 * 65536) / ($c4 + $c64))) | fabs < 0.01' \
		--argjson c4 "$c4" --argjson c64 "$c64"
	buckets_add_up
	wait_loads A B

	# per flag set: each operation its one size
	rm -f "$T/go" "$T/hold"
	start_bio C --reads 11 --writes 9 --size $((512 * KIB)) --interleave
	start_biolat -j --size -F -d "$LOOPNAME"
	go
	wait_done C
	stop_tool INT
	hjout '.unit == "bytes" and .min == 524288 and .max == 524288'
	accounts 11 "$T/out" 'select((.key.flags // "") | endswith("Read"))'
	accounts 9 "$T/out" 'select((.key.flags // "") | endswith("Write"))'
}

@test "--size, text: a bytes table" {
	bio_disk
	start_bio A --reads 12 --size $((16 * KIB))
	start_biolat --size -d "$LOOPNAME"
	go
	wait_done A
	stop_tool INT
	cat "$T/out"
	grep -qE '^ +bytes +: count +distribution$' "$T/out"
	grep -qE '^ +16384 -> 32767 +: [0-9]+ +\|\*{40}\|$' "$T/out"
	grep -qE '^count [0-9]+, avg 16384, p50 16384, .*, max 16384 bytes, errors 0' "$T/out"
	accounts_text 12
}

@test "-Q: the same requests, timed from insertion: never shorter on average" {
	bio_disk
	start_bio A --reads 300 --writes 200 --size $((8 * KIB))
	start_biolat -j -d "$LOOPNAME"
	start_more biolat Q -j -Q -d "$LOOPNAME"
	go
	wait_done A
	stop_tool INT
	stop_more Q
	wait_loads A
	accounts 500
	accounts 500 "$T/Q.out"
	hjq "$T/Q.out" '.unmatched == 0'

	# With no I/O scheduler nothing is inserted (requests are issued
	# directly): -Q then starts at the issue too. Compare with one.
	grep -qw mq-deadline "/sys/block/$LOOPNAME/queue/scheduler" || skip "no mq-deadline: -Q averages not compared"
	echo mq-deadline > "/sys/block/$LOOPNAME/queue/scheduler"
	rm -f "$T/go" "$T/hold"
	start_bio B --reads 300 --writes 200 --size $((8 * KIB))
	start_biolat -j -d "$LOOPNAME"
	start_more biolat Q -j -Q -d "$LOOPNAME"
	go
	wait_done B
	stop_tool INT
	stop_more Q
	echo "issue: $(jq -c 'select(has("buckets")) | [.count, .avg, .min]' "$T/out")"
	echo "-Q:    $(jq -c 'select(has("buckets")) | [.count, .avg, .min]' "$T/Q.out")"
	accounts 500
	accounts 500 "$T/Q.out"
	jq -e -n --slurpfile q "$T/Q.out" --slurpfile i "$T/out" '$q[0].avg >= $i[0].avg'
}

@test "-p and -t: the I/O that process submitted, none of another's" {
	bio_disk
	start_bio A --reads 200 --writes 100 --size $((8 * KIB))
	start_bio B --reads 250 --writes 150 --size $((8 * KIB)) --offset $((32 * MIB))
	start_biolat -j -p "$A_PID" -d "$LOOPNAME"
	start_more biolat TB -j -t "$B_PID" -d "$LOOPNAME"	# single-threaded: tid = pid
	go
	wait_loads A B
	tool_wait			# ends by itself when the process exits
	[ "$TOOL_STATUS" -eq 0 ]
	wait_exit "$TB_TOOL"
	grep -q "process $A_PID exited" "$T/err"
	accounts 300
	accounts 400 "$T/TB.out"

	# requests inserted into a scheduler's queue: judged at insertion
	grep -qw mq-deadline "/sys/block/$LOOPNAME/queue/scheduler" || skip "no mq-deadline"
	echo mq-deadline > "/sys/block/$LOOPNAME/queue/scheduler"
	rm -f "$T/go" "$T/hold"
	start_bio C --reads 120 --writes 80 --size $((8 * KIB))
	start_bio D --reads 90 --size $((8 * KIB)) --offset $((32 * MIB))
	start_biolat -j -p "$C_PID" -d "$LOOPNAME"
	go
	wait_loads C D
	tool_wait
	accounts 200
}

@test "-n COMM: the I/O threads of that name submitted" {
	bio_disk
	start_bio A --reads 60 --writes 40 --size $((4 * KIB)) --comm bl_alpha
	start_bio B --reads 70 --writes 30 --size $((4 * KIB)) --comm bl_beta --offset $((32 * MIB))
	start_biolat -j -n bl_beta -d "$LOOPNAME"
	go
	wait_done A B
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	accounts 100
}

@test "-c CGROUP: only I/O submitted from that cgroup v2" {
	root=$(cgroup2_root) || skip "no cgroup2 mount"
	bio_disk
	CG="$root/biolat-test-$$"	# teardown removes it
	mkdir "$CG"
	start_bio A --reads 45 --writes 5 --size $((4 * KIB))
	start_bio B --reads 70 --size $((4 * KIB)) --offset $((32 * MIB))
	echo "$A_PID" > "$CG/cgroup.procs"
	start_biolat -j -c "$CG" -d "$LOOPNAME"
	go
	wait_done A B
	stop_tool INT
	accounts 50
}

@test "10 ms intervals lose nothing: the reports sum to every request" {
	local n
	bio_disk
	start_bio A --reads 2500 --writes 2500 --size $((4 * KIB)) --interleave
	start_biolat -j -d "$LOOPNAME" 0.01
	go
	wait_done A
	# a second burst a report later: two reports at least, at any speed
	n=$(wc -l < "$T/out")
	wait_lines "$T/out" $((n + 2))
	start_bio B --reads 500 --size $((4 * KIB))
	wait_done B
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	echo "$(jq -s length "$T/out") reports"
	[ "$(jq -s 'map(select(has("buckets") and .count > 0)) | length' "$T/out")" -ge 2 ]
	accounts 5500
	hjout '.unmatched == 0 and .key == null'
	buckets_add_up
	json_strict "$T/out"
}

@test "10 ms intervals, per disk and flag set: the reports sum to every request" {
	bio_disk
	start_bio A --reads 2000 --writes 1000 --size $((4 * KIB)) --interleave
	start_biolat -j -D -F -d "$LOOPNAME" 0.01
	go
	wait_done A
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	jq -s -c 'map(select(has("buckets"))) | group_by(.key.flags) | map({flags: .[0].key.flags, reports: length, count: (map(.count) | add)})' "$T/out"
	# an idle interval: one empty histogram, keyed by nothing
	hjout 'if .key then .key.disk == $d else .count == 0 end' --arg d "$LOOPNAME"
	accounts 2000 "$T/out" 'select((.key.flags // "") | endswith("Read"))'
	accounts 1000 "$T/out" 'select((.key.flags // "") | endswith("Write"))'
	accounts 3000
	buckets_add_up
}

@test "interval and count: exactly count reports, then exit 0; --duration: one" {
	bio_disk
	run --separate-stderr timeout 10 "$BUILD/biolat" -j -d "$LOOPNAME" 0.1 3
	[ "$status" -eq 0 ]
	[ "$(jq -s 'map(select(has("buckets"))) | length' <<<"$output")" -eq 3 ]

	run --separate-stderr timeout 10 "$BUILD/biolat" -j -d "$LOOPNAME" --duration 0.3
	[ "$status" -eq 0 ]
	[ "$(jq -s 'map(select(has("buckets"))) | length' <<<"$output")" -eq 1 ]
	hjq <(echo "$output") '.count == 0 and .buckets == []'
}

@test "text: bcc log2 table and summary line" {
	bio_disk
	start_bio A --reads 30 --writes 20 --size $((8 * KIB))
	start_biolat -d "$LOOPNAME"
	go
	wait_done A
	stop_tool INT
	cat "$T/out"
	[ "$TOOL_STATUS" -eq 0 ]
	grep -qx "Tracing block device I/O on $LOOPNAME... Hit Ctrl-C to end." "$T/err"
	[ "$(grep -cE '^ +usecs +: count +distribution$' "$T/out")" -eq 1 ]
	grep -qE '^ +[0-9]+ -> [0-9]+ +: [0-9]+ +\|[* ]{40}\|$' "$T/out"
	rows=$(grep -E '^ +[0-9]+ -> [0-9]+ +: ' "$T/out" | awk '{ n += $5 } END { print n }')
	[ "$rows" -eq "$(summary_field count)" ]
	grep -qE '^count [0-9]+, avg [0-9.]+, p50 [0-9.]+, p90 [0-9.]+, p99 [0-9.]+, p99\.9 [0-9.]+, max [0-9.]+ usecs, errors 0' "$T/out"
	accounts_text 50
	grep -E ' -> ' "$T/out" | awk 'length > 79 { exit 1 }'

	rm -f "$T/go" "$T/hold"
	start_bio B --reads 10 --size $((8 * KIB))
	start_biolat -m -T -d "$LOOPNAME"
	go
	wait_done B
	stop_tool INT
	head -n1 "$T/out" | grep -qE '^[0-9]{2}:[0-9]{2}:[0-9]{2}$'
	grep -qE '^ +msecs +: count +distribution$' "$T/out"
	grep -qE '^count [0-9]+, .* msecs, errors 0' "$T/out"
}

@test "--ns and -m: the unit in JSON" {
	bio_disk
	start_bio A --reads 20 --size $((8 * KIB))
	start_biolat -j --ns -d "$LOOPNAME"
	start_more biolat M -j -m -d "$LOOPNAME"
	go
	wait_done A
	stop_tool INT
	stop_more M
	hjout '.unit == "nsecs" and .min >= 1000'
	accounts 20
	hjq "$T/M.out" '.unit == "msecs"'
	accounts 20 "$T/M.out"
}

@test "bad input: one line on stderr, nothing on stdout, exit 2" {
	loop_setup 8
	usage_errors biolat <<'EOF_CASES'
-d nosuchdisk|unknown disk 'nosuchdisk' for -d: expected one of
-d ../x|unknown disk '../x'
-d ..|unknown disk '..'
-d .|unknown disk '.'
-d loop0/../vda|unknown disk 'loop0/../vda'
--size -m|-m and --ns do not apply
--size --ns|-m and --ns do not apply
--size -Q|-Q (time queued) does not apply
0|invalid interval '0'
abc|invalid interval 'abc'
0.0001|invalid interval '0.0001'
1 0|invalid count '0'
1 x|invalid count 'x'
-p 0|invalid PID '0'
--bogus|unknown option '--bogus'
EOF_CASES
	# the valid disks are listed, ours among them
	run --separate-stderr timeout 10 "$BUILD/biolat" -d nosuchdisk
	[[ "$stderr" =~ expected\ one\ of\ (.*, )?$LOOPNAME(,|$) ]]
	run --separate-stderr timeout 10 "$BUILD/biolat" -d ''
	[ "$status" -eq 2 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ -z "$output" ]
	run --separate-stderr timeout 10 "$BUILD/biolat" -d "$LOOPNAME" -d "$LOOPNAME"
	[ "$status" -eq 2 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
}

# A partition: the host's first, else one made on a partitioned loop device
# (an MBR with one partition, added with partx); nothing if neither.
find_partition() {
	local p n img=$T/parts.img
	for p in /sys/class/block/*/partition; do
		[ -e "$p" ] && { basename "$(dirname "$p")"; return 0; }
	done
	command -v partx >/dev/null && command -v python3 >/dev/null || return 0
	python3 -c '
import struct, sys
img = bytearray(8 << 20)
img[446:462] = struct.pack("<B3sB3sII", 0, bytes(3), 0x83, bytes(3), 2048, 8192)
img[510:512] = b"\x55\xaa"
open(sys.argv[1], "wb").write(img)' "$img" || return 0
	PART_LOOP=$(losetup --partscan --find --show "$img" 2>/dev/null) || { PART_LOOP=; return 0; }
	n=${PART_LOOP#/dev/}
	[ -e "/sys/class/block/${n}p1/partition" ] || partx -a "$PART_LOOP" 2>/dev/null || true
	[ -e "/sys/class/block/${n}p1/partition" ] && echo "${n}p1"
	return 0
}

@test "-d of a partition: one line saying so, exit 2" {
	find_partition > "$T/part"	# not in $(): it sets PART_LOOP
	part=$(cat "$T/part")
	[ -n "$part" ] || skip "no partition on this host, and none could be made"
	run --separate-stderr timeout 10 "$BUILD/biolat" -d "$part"
	echo "-d $part -> $status: $stderr"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "${stderr_lines[0]}" == "biolat: '$part' is a partition"* ]]
}

@test "--check: every raw tracepoint biolat may attach, and the request layout" {
	run timeout 10 "$BUILD/biolat" --check -Q
	echo "$output"
	[ "$status" -eq 0 ]
	for ev in insert issue complete; do
		[[ "$output" =~ probe\ block_rq_$ev\ +ok\ +raw\ tracepoint\ block/block_rq_$ev ]]
	done
	[[ "$output" =~ request\ layout\ +ok\ +from\ kernel\ BTF ]]
	[[ "${lines[-1]}" == "biolat can run on this system" ]]

	[[ "$output" =~ probe\ block_rq_merge\ +ok\ +raw\ tracepoint\ block/block_rq_merge ]]

	# every probe biolat may attach, those these options do not need too
	run timeout 10 "$BUILD/biolat" --check
	echo "$output"
	[ "$status" -eq 0 ]
	for ev in insert issue requeue merge complete; do
		[ "$(grep -cE "^probe block_rq_$ev +ok +raw tracepoint block/block_rq_$ev" <<<"$output")" -eq 1 ]
	done
	[[ "$output" =~ probe\ block_rq_insert\ +ok\ +raw\ tracepoint\ block/block_rq_insert\ \(used\ with\ other\ options\) ]]
	[[ "$output" =~ request\ layout\ +ok ]]
}



# The atomic instructions of the loaded program NAME (bpftool's
# translation: "lock ... +=", "atomic64_...").
prog_atomics() { bpftool prog dump xlated id "$(prog_id "$1")" | grep -cE 'lock |atomic'; }

# Before 6.1 a completion in hardirq can run rq_complete while the same
# CPU is in rq_complete (05b24ff9b2cf): the single per-CPU histogram then
# takes atomic adds. Forced here, where programs do not nest: the loaded
# completion program holds more atomics, --check says why, and the count
# is exact with them.
@test "TRACETOOLS_RAW_TP_NESTS=1: --check says the per-CPU histogram adds atomically; it does, exactly" {
	run timeout 10 "$BUILD/biolat" --check
	echo "$output"
	[[ "$output" =~ program\ nesting\ +ok\ +raw\ tracepoint\ programs\ do\ not\ nest ]]
	TRACETOOLS_RAW_TP_NESTS=1 run timeout 10 "$BUILD/biolat" --check
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ program\ nesting\ +fallback\ +TRACETOOLS_RAW_TP_NESTS=1:\ .*atomic\ adds ]]

	bio_disk
	start_biolat -j -d "$LOOPNAME"
	plain=$(prog_atomics rq_complete)
	stop_tool INT
	rm -f "$T/go" "$T/hold"
	start_bio A --reads 200 --writes 100 --size $((8 * KIB)) --interleave
	TRACETOOLS_RAW_TP_NESTS=1 start_biolat -j -d "$LOOPNAME"
	nesting=$(prog_atomics rq_complete)
	echo "rq_complete's atomics: $plain, $nesting with TRACETOOLS_RAW_TP_NESTS=1"
	[ "$nesting" -gt "$plain" ]
	go
	wait_done A
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	accounts 300
	hjout '.key == null and .unmatched == 0'
	buckets_add_up
}

@test "nothing of biolat stays loaded after exit, whatever ended it" {
	loop_setup 8
	for sig in INT TERM KILL; do
		start_biolat -Q -F -d "$LOOPNAME"
		bpf_ids_of "$TOOL_JOB" "$T/ids"
		cat "$T/ids"
		[ "$(grep -c '^prog_id' "$T/ids")" -ge 3 ]
		for prog in $(awk '$1 == "prog_id" { print $2 }' "$T/ids"); do
			bpftool prog show id "$prog" | grep -qwE "name ($BIOLAT_PROGS)"
		done
		[ "$(grep -c '^map_id' "$T/ids")" -ge 3 ]
		stop_tool $sig
		[ "$sig" = KILL ] || [ "$TOOL_STATUS" -eq 0 ]
		bpf_ids_gone "$T/ids"
	done
}
