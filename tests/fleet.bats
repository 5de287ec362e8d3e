#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# --textfile with the real fleet components: each tool writes its metrics
# for node_exporter's textfile collector, node_exporter serves them and
# Prometheus scrapes it every second; Prometheus' answers (HTTP API) must
# be the workload's counts exactly, and its histogram_quantile() must lie
# in the bucket of the tool's own p99.
#
# node_exporter and Prometheus (Debian's packages, installed by the
# README's test command, not here) run once for the file, as this test's
# own processes, on free loopback ports, in a temporary directory, and
# are stopped in teardown_file whatever happened.

load helpers
load fleet
bats_require_minimum_version 1.5.0

KIB=1024

# Its tests share TEXTDIR (Prometheus sums every file there) and clear it
# after each: one at a time, beside other files' tests.
setup_file() {
	export BATS_NO_PARALLELIZE_WITHIN_FILE=true
	fleet_start
}
teardown_file() { fleet_stop; }

setup() { common_setup; }

teardown() {
	common_teardown
	# A tool killed here leaves its file: the next test must not see it.
	rm -f "$TEXTDIR"/*.prom "$HOSTA_DIR"/*.prom "$HOSTB_DIR"/*.prom
	[ -z "${FAULT:-}" ] || { umount "$FAULT" 2>/dev/null || true; rmdir "$FAULT"; }
}

# in_bucket FILE FAMILY VALUE Q: Q lies in the bucket of FAMILY (as FILE's
# le edges cut it) that VALUE lies in: lo < both <= hi.
in_bucket() {
	grep -oE "^$2_bucket\{.*le=\"[^\"]+\"" "$1" | sed -E 's/.*le="([^"]+)"/\1/' | sort -gu |
		awk -v v="$3" -v q="$4" '
			{ le[n++] = $1 == "+Inf" ? 1e308 : $1 }
			END {
				lo = 0
				for (i = 0; i < n && le[i] < v; i++) lo = le[i]
				if (i == n) { print "no bucket holds " v; exit 1 }
				hi = le[i]
				printf "%s in (%s, %s]: %s\n", v, lo, hi, q
				exit !(q > lo && q <= hi * (1 + 1e-9))
			}'
}

# types_kept FILE: node_exporter serves each family of FILE with the type
# FILE gives it (none "untyped"), and read the directory without error.
types_kept() {
	local served
	served=$(get "http://127.0.0.1:$NODE_PORT/metrics")
	grep -q '^node_textfile_scrape_error 0$' <<<"$served"
	grep '^# TYPE ' "$1" | sort > "$T/types.want"
	[ -s "$T/types.want" ]
	grep -Ff <(awk '{ print "# TYPE " $3 " " }' "$T/types.want") <<<"$served" | sort > "$T/types.got"
	diff "$T/types.want" "$T/types.got"
	refute grep -q ' untyped$' "$T/types.got"
}

# checked FILE: promtool's lint has nothing to say about it.
checked() {
	run promtool check metrics < "$1"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

# start_fleet TOOL [args]: TOOL with --textfile $TEXTDIR/TOOL.prom, JSON
# on stdout, a report every second; until its first file is there. Sets
# PROMFILE and IDS (the BPF objects it holds).
start_fleet() {
	local tool=$1
	shift
	PROMFILE=$TEXTDIR/$tool.prom
	start_tool "$tool" -j --textfile "$PROMFILE" "$@" 1
	retry test -s "$PROMFILE"
	IDS=$T/ids
	bpf_ids_of "$TOOL_JOB" "$IDS"
}

# stop_fleet: SIGINT; it exits 0, removes its file, frees what it loaded.
stop_fleet() {
	stop_tool
	[ "$TOOL_STATUS" -eq 0 ]
	[ ! -e "$PROMFILE" ]
	bpf_ids_gone "$IDS"
}

# run_p99 SCALE [FILE...]: the middle, in seconds, of the bucket that
# holds the p99 of all the tool's reports so far ($T/out, or the FILEs:
# JSON in a unit of SCALE per second) taken together: their buckets
# summed, the rank ceil(0.99 n), as common/hist.c takes it. The tool's
# p99 of the whole run lies in that bucket.
run_p99() {
	local s=$1
	shift
	jq -s -r --argjson s "$s" '
		[.[] | select(has("buckets")) | .buckets[]] | group_by(.min)
		| map({ min: .[0].min, max: .[0].max, count: (map(.count) | add) })
		| (map(.count) | add) as $n | (0.99 * $n | ceil) as $rank
		| reduce .[] as $b ({ seen: 0 };
			if .hit == null and .seen + $b.count >= $rank then .hit = $b else . end
			| .seen += $b.count)
		| (.hit.min + .hit.max) / 2 / $s' "${@:-$T/out}"
}

# run_sum FIELD [FILE]: FIELD summed over the histograms of all the
# tool's reports ($T/out, or FILE).
run_sum() { jq -s "map(select(has(\"buckets\")) | .$1) | add // 0" "${2:-$T/out}"; }

# out_has N [FIELD...]: the tool's reports on stdout add up to N (count,
# or the FIELDs): a report's line is flushed just after its file is
# written, so what Prometheus has seen may be a moment ahead of $T/out.
out_has() {
	local n=$1 f sum=0
	shift
	for f in "${@:-count}"; do sum=$((sum + $(run_sum "$f"))); done
	[ "$sum" -eq "$n" ]
}

# p99_agrees FAMILY: Prometheus' p99 of FAMILY (all series) lies in the
# bucket of the tool's own p99 (its JSON, in usecs), the textfile keeps
# every family's type, and promtool finds nothing in it.
p99_agrees() {
	local p99 q
	p99=$(run_p99 1e6)
	q=$(promql "histogram_quantile(0.99, sum by (le) ($1_bucket))")
	in_bucket "$PROMFILE" "$1" "$p99" "$q"
	types_kept "$PROMFILE"
	checked "$PROMFILE"
}

@test "fleet: readlat's reads counted by Prometheus exactly, its p99 in readlat's bucket" {
	local n=200
	start_load R --reads $n --delay-us 1000 --comm fl_reader
	start_fleet readlat -p "$R_PID"
	go
	wait_for "$T/R.out" '^done'
	until_value 'sum(readlat_read_duration_seconds_count)' $n
	until_value 'sum(readlat_read_errors_total)' 0
	retry out_has $n
	p99_agrees readlat_read_duration_seconds
	jout '.tool == "readlat"'	# stdout stays JSON, as asked
	stop_fleet
}

# Two hosts, one timing sub-microsecond reads of /dev/zero, the other
# reads of a pipe ~3 ms apart: each series has the same le set, so their
# sum by (le) is the histogram of all their reads, and its p99 lies in
# the bucket of the p99 of both runs' reads taken together.
@test "fleet: two hosts' histograms sum by le, their p99 in the bucket of both runs' p99" {
	local fast=2000 slow=100 p99 q
	start_load F --reads $fast --source zero --comm fl_fast
	start_load S --reads $slow --delay-us 3000 --comm fl_slow
	start_more readlat HA -p "$F_PID" -j --textfile "$HOSTA_DIR/readlat.prom" 1
	start_more readlat HB -p "$S_PID" -j --textfile "$HOSTB_DIR/readlat.prom" 1
	go
	wait_for "$T/F.out" '^done'
	wait_for "$T/S.out" '^done'
	until_value 'sum(readlat_read_duration_seconds_count{job="hosts"})' $((fast + slow))
	retry test "$(run_sum count "$T/HA.out")" -eq $fast
	retry test "$(run_sum count "$T/HB.out")" -eq $slow
	p99=$(run_p99 1e6 "$T/HA.out" "$T/HB.out")
	q=$(promql 'histogram_quantile(0.99, sum by (le) (readlat_read_duration_seconds_bucket{job="hosts"}))')
	echo "p99 of both: $p99 s; Prometheus: $q s"
	cat "$HOSTA_DIR/readlat.prom" "$HOSTB_DIR/readlat.prom" > "$T/hosts.prom"
	in_bucket "$T/hosts.prom" readlat_read_duration_seconds "$p99" "$q"
	stop_more HA
	stop_more HB
}

# In two halves: the README's rate() query needs the disk's series before
# the second half (a series' first sample is no increase).
@test "fleet: biolat's I/Os on a loop device counted exactly, p99 by disk in biolat's bucket" {
	local half=150 p99 q c
	loop_setup 16
	dd if=/dev/zero of="$LOOP" bs=1M count=16 oflag=direct status=none
	start_parked B1 "$BUILD/tests/bioload" --dev "$LOOP" --direct --reads $half
	start_fleet biolat -D -d "$LOOPNAME"
	go
	wait_for "$T/B1.out" '^done'
	until_value "count(biolat_io_duration_seconds_count{disk=\"$LOOPNAME\"})" 1
	start_parked B2 "$BUILD/tests/bioload" --dev "$LOOP" --direct --reads $half
	wait_for "$T/B2.out" '^done'
	# The kernel may skip a completion's program: biolat counts it lost
	# (see biolat.bats). count + lost is every I/O, and count is exact.
	until_value "sum(biolat_io_duration_seconds_count{disk=\"$LOOPNAME\"}) +
		sum(biolat_lost_events_total)" $((2 * half))
	retry out_has $((2 * half)) count lost
	c=$(run_sum count)
	until_value "sum(biolat_io_duration_seconds_count{disk=\"$LOOPNAME\"})" "$c"
	p99=$(run_p99 1e6)
	q=$(promql "histogram_quantile(0.99, sum by (le, disk) (biolat_io_duration_seconds_bucket{disk=\"$LOOPNAME\"}))")
	in_bucket "$PROMFILE" biolat_io_duration_seconds "$p99" "$q"
	# The README's query: the p99 of the I/Os within its window.
	q=$(promql 'histogram_quantile(0.99, sum by (le, disk) (rate(biolat_io_duration_seconds_bucket[5m])))')
	echo "README's query: $q"
	awk -v q="$q" 'BEGIN { exit !(q > 0) }'
	types_kept "$PROMFILE"
	checked "$PROMFILE"
	stop_fleet
}

@test "fleet: opensnoop's opens and failures by command, counted exactly" {
	local n=40
	start_opens O --file /etc/hostname --file /nonexistent-fleet --opens $n --comm fl_opener
	start_fleet opensnoop -C --by comm -p "$O_PID"
	go
	wait_for "$T/O.out" '^done'
	until_value 'sum(opensnoop_opens_total{comm="fl_opener"})' $((2 * n))
	until_value 'sum(opensnoop_open_failures_total{comm="fl_opener"})' $n
	types_kept "$PROMFILE"
	checked "$PROMFILE"
	stop_fleet
}

@test "fleet: opensnoop -L's open latency, p99 in opensnoop's bucket" {
	local n=100
	start_opens O --file /etc/hostname --opens $n --comm fl_opener
	start_fleet opensnoop -L -p "$O_PID"
	go
	wait_for "$T/O.out" '^done'
	until_value 'sum(opensnoop_open_duration_seconds_count)' $n
	retry out_has $n
	p99_agrees opensnoop_open_duration_seconds
	stop_fleet
}

@test "fleet: tcprcv's bytes received and read over loopback, to the byte" {
	local b=$((1024 * KIB))
	serve SRV "" 127.0.0.1 --comm fl_server
	start_fleet tcprcv -p "$SRV_PID"
	send SEND "" 127.0.0.1 "$SRV_PORT" $b
	go
	wait_for "$T/SRV.out" "^read $b\$"
	until_value 'sum(tcprcv_read_bytes_total{comm="fl_server"})' $b
	until_value 'sum(tcprcv_received_bytes_total{comm="fl_server"})' $b
	types_kept "$PROMFILE"
	checked "$PROMFILE"
	stop_fleet
}

# two_files TOOL A B: node_exporter serves TOOL's series of both files
# TEXTDIR/A.prom and TEXTDIR/B.prom, each of them (every family, the
# counters too) labelled textfile="A" or "B" (by default, the file's
# name) or as --label set it, with no error reading the directory.
two_files() {
	local served
	served=$(get "http://127.0.0.1:$NODE_PORT/metrics")
	grep -q '^node_textfile_scrape_error 0$' <<<"$served"
	grep "^$1_" <<<"$served" > "$T/served"
	refute grep -v 'textfile="' "$T/served"
	grep -q "textfile=\"$2\"" "$T/served"
	grep -q "textfile=\"$3\"" "$T/served"
	# every sample of each file is served
	[ "$(grep -c "^$1_" "$TEXTDIR/$2.prom")" -eq "$(grep -c "textfile=\"$2\"" "$T/served")" ]
}

# Two runs of one tool beside each other, each with its own file for one
# node_exporter: their series differ by the label naming the file, so
# node_exporter serves both (identical series it would drop silently).
@test "fleet: two readlat on one node_exporter, both files' series served apart" {
	start_load A --reads 30 --delay-us 1000 --comm fl_two
	start_load B --reads 50 --delay-us 1000 --comm fl_two
	start_more readlat RA -p "$A_PID" -j --textfile "$TEXTDIR/rdA.prom" 1
	start_more readlat RB -p "$B_PID" -j --textfile "$TEXTDIR/rdB.prom" 1
	go
	wait_for "$T/A.out" '^done'
	wait_for "$T/B.out" '^done'
	until_value 'sum(readlat_read_duration_seconds_count)' 80	# both files served
	until_value 'readlat_read_duration_seconds_count{textfile="rdA"}' 30
	until_value 'readlat_read_duration_seconds_count{textfile="rdB"}' 50
	until_value 'count(readlat_read_errors_total)' 2
	two_files readlat rdA rdB
	stop_more RA
	stop_more RB
	# set by --label, the file's name aside
	rm -f "$T/go" "$T/hold"
	start_load A --reads 20 --delay-us 1000 --comm fl_two
	start_more readlat RA -p "$A_PID" --label textfile=web --label team=db \
		-j --textfile "$TEXTDIR/rdA.prom" 1
	go
	wait_for "$T/A.out" '^done'
	until_value 'readlat_read_duration_seconds_count{textfile="web",team="db"}' 20
	until_value 'count(readlat_read_duration_seconds_count)' 1
	stop_more RA
}

@test "fleet: two opensnoop -C on one node_exporter, both files' series served apart" {
	local n=40
	start_opens A --file /etc/hostname --opens $n --comm fl_opener
	start_opens B --file /etc/hostname --opens $((2 * n)) --comm fl_opener
	start_more opensnoop OA -C --by comm -p "$A_PID" -j --textfile "$TEXTDIR/osA.prom" 1
	start_more opensnoop OB -C --by comm -p "$B_PID" -j --textfile "$TEXTDIR/osB.prom" 1
	go
	wait_for "$T/A.out" '^done'
	wait_for "$T/B.out" '^done'
	until_value 'sum(opensnoop_opens_total{comm="fl_opener"})' $((3 * n))	# both files served
	until_value 'opensnoop_opens_total{textfile="osA",comm="fl_opener"}' $n
	until_value 'opensnoop_opens_total{textfile="osB",comm="fl_opener"}' $((2 * n))
	until_value 'count(opensnoop_series_dropped_total)' 2
	two_files opensnoop osA osB
	stop_more OA
	stop_more OB
}

@test "fleet: two biolat on one node_exporter, both files' series served apart" {
	local n=100 q
	loop_setup 16
	dd if=/dev/zero of="$LOOP" bs=1M count=16 oflag=direct status=none
	start_parked B "$BUILD/tests/bioload" --dev "$LOOP" --direct --reads $n
	start_more biolat BA -D -d "$LOOPNAME" -j --textfile "$TEXTDIR/bioA.prom" 1
	start_more biolat BB -D -d "$LOOPNAME" -j --textfile "$TEXTDIR/bioB.prom" 1
	go
	wait_for "$T/B.out" '^done'
	# each run counts every I/O, or counts it lost (see biolat.bats)
	until_value "sum(biolat_io_duration_seconds_count) + sum(biolat_lost_events_total)" $((2 * n))
	for q in bioA bioB; do
		until_value "sum(biolat_io_duration_seconds_count{textfile=\"$q\"}) +
			sum(biolat_lost_events_total{textfile=\"$q\"})" $n
	done
	two_files biolat bioA bioB
	stop_more BA
	stop_more BB
}

@test "fleet: two tcprcv on one node_exporter, both files' series served apart" {
	local b=$((256 * KIB))
	serve SRV "" 127.0.0.1 --comm fl_server
	start_more tcprcv TA -p "$SRV_PID" -j --textfile "$TEXTDIR/tcpA.prom" 1
	start_more tcprcv TB -p "$SRV_PID" -j --textfile "$TEXTDIR/tcpB.prom" 1
	send SEND "" 127.0.0.1 "$SRV_PORT" $b
	go
	wait_for "$T/SRV.out" "^read $b\$"
	until_value 'sum(tcprcv_read_bytes_total{comm="fl_server"})' $((2 * b))	# both files served
	until_value 'tcprcv_read_bytes_total{textfile="tcpA",comm="fl_server"}' $b
	until_value 'tcprcv_read_bytes_total{textfile="tcpB",comm="fl_server"}' $b
	two_files tcprcv tcpA tcpB
	stop_more TA
	stop_more TB
}

# A full file system: each write fails, the file written before stays as
# it was (no temporary left), the tool traces on and says so once, not
# once a report; space again, and the failures are in the next file.
@test "fleet: --textfile on a full tmpfs keeps the old file and the tool, counts the failures" {
	local failed reports n=10
	FAULT=$(mktemp -d /tmp/tracetools-fault.XXXXXX)
	mount -t tmpfs -o size=64k,mode=0755 tracetools-fault "$FAULT"
	start_load R --reads $n --delay-us 100 --comm fl_faulty
	start_tool readlat -j -p "$R_PID" --textfile "$FAULT/readlat.prom" 0.2
	retry test -s "$FAULT/readlat.prom"
	IDS=$T/ids
	bpf_ids_of "$TOOL_JOB" "$IDS"
	dd if=/dev/zero of="$FAULT/fill" bs=4k status=none 2>/dev/null || true
	cp "$FAULT/readlat.prom" "$T/old.prom"
	wait_for "$T/err" 'cannot write .*readlat.prom: No space left on device'
	go	# traced while no file can be written
	# Ten more reports (the one that failed first may be among them: its
	# line is flushed after its file is tried), so ten failed writes at
	# least, all within the minute.
	reports=$(wc -l < "$T/out")
	wait_lines "$T/out" $((reports + 10))
	kill -0 "$TOOL_JOB"
	cmp "$FAULT/readlat.prom" "$T/old.prom"
	[ "$(ls -A "$FAULT" | tr '\n' ' ')" = "fill readlat.prom " ]
	[ "$(grep -c 'cannot write' "$T/err")" -eq 1 ]
	rm "$FAULT/fill"
	retry refute cmp -s "$FAULT/readlat.prom" "$T/old.prom"
	failed=$(awk '$1 == "readlat_textfile_write_errors_total{textfile=\"readlat\"}" { print $2 }' \
		"$FAULT/readlat.prom")
	echo "failed writes counted: $failed"
	[ "$failed" -ge 10 ]
	retry grep -q "^readlat_read_duration_seconds_count{textfile=\"readlat\"} $n\$" "$FAULT/readlat.prom"
	checked "$FAULT/readlat.prom"
	stop_tool
	[ "$TOOL_STATUS" -eq 0 ]
	[ ! -e "$FAULT/readlat.prom" ]
	bpf_ids_gone "$IDS"
}

@test "fleet: --textfile-keep leaves the last file; a missing directory, a tool of events refused" {
	start_load R --reads 10 --delay-us 100 --comm fl_keep
	start_tool readlat -p "$R_PID" --textfile "$TEXTDIR/keep.prom" --textfile-keep 0.2
	go
	wait_for "$T/R.out" '^done'
	stop_tool
	[ "$TOOL_STATUS" -eq 0 ]
	grep -q '^readlat_read_duration_seconds_count{textfile="keep"} 10$' "$TEXTDIR/keep.prom"
	rm "$TEXTDIR/keep.prom"
	run --separate-stderr timeout 10 "$BUILD/readlat" --textfile /nonexistent-fleet/r.prom
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "readlat: --textfile /nonexistent-fleet/r.prom: there is no directory /nonexistent-fleet"* ]]
	usage_errors opensnoop <<-EOF
	--textfile $TEXTDIR/o.prom|--textfile exports histograms and counts, not one line per event
	EOF
	[ -z "$(ls -A "$TEXTDIR")" ]
}

# With the README's capabilities, a user may write only where the user
# may: root's directory is refused, with one line, before anything loads.
@test "fleet: --textfile in a directory the user may not write is refused as the user" {
	nonroot_setup readlat "$NONROOT_CAPS"
	mkdir "$NONROOT_DIR/closed"
	chmod 755 "$NONROOT_DIR/closed"
	run --separate-stderr timeout 10 "${NONROOT[@]}" "$EXE" --textfile "$NONROOT_DIR/closed/r.prom"
	[ "$status" -eq 1 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == *"uid $NOBODY may not create files in $NONROOT_DIR/closed"* ]]
	[ -z "$(ls -A "$NONROOT_DIR/closed")" ]
}

# The units as make install writes them: ExecStart= in PREFIX, under
# DESTDIR in PREFIX's lib/systemd/system (systemd looks in
# /usr/local/lib/systemd/system), or for PREFIX=/usr in the system's
# (pkg-config's), each accepted by systemd-analyze verify where the tools
# really are.
@test "fleet: make install puts a unit per tool where systemd looks, verified" {
	local top=$BATS_TEST_DIRNAME/.. dest=$T/dest unitdir t
	unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null) ||
		skip "no systemd.pc (pkg-config systemd): make install installs no unit"
	make -s -C "$top" OUTPUT="$BUILD" DESTDIR="$dest" PREFIX=/opt/tt install
	for t in readlat opensnoop biolat tcprcv; do
		grep -Eqx "ExecStart=/opt/tt/sbin/$t( .*)? --textfile /var/lib/prometheus/node-exporter/$t.prom" \
			"$dest/opt/tt/lib/systemd/system/$t-metrics.service"
		[ "$(stat -c %a "$dest/opt/tt/lib/systemd/system/$t-metrics.service")" = 644 ]
	done
	# never over a package's (the .deb's are in $unitdir)
	[ ! -e "$dest$unitdir" ]
	make -s -C "$top" OUTPUT="$BUILD" DESTDIR="$dest/usr" PREFIX=/usr install
	[ -f "$dest/usr$unitdir/readlat-metrics.service" ]
	command -v systemd-analyze >/dev/null || skip "no systemd-analyze"
	make -s -C "$top" OUTPUT="$BUILD" PREFIX="$T/p" SYSTEMD_UNITDIR="$T/p/units" install
	MANPATH=$T/p/share/man: run systemd-analyze verify "$T"/p/units/*.service
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

# What the units did under a live systemd (252, Debian 12's), kept true
# here. StandardOutput=null alone sent stderr, the tools' one-line errors,
# to /dev/null as well (StandardError= defaults to inherit). The sandbox
# lets no tool mount tracefs itself, so systemd's mount unit comes first.
# And the hardening stays: systemd-analyze security rates each unit 2.1;
# dropping any one of CapabilityBoundingSet=, SystemCallFilter=,
# ProtectSystem=, PrivateDevices=, RestrictAddressFamilies=,
# NoNewPrivileges= or ProtectKernelTunables= rates it 2.3 or worse
# (--threshold is that rating times 10).
@test "fleet: the units log errors, wait for tracefs, keep their hardening" {
	local units=$BATS_TEST_DIRNAME/../contrib/systemd u
	for u in readlat opensnoop biolat tcprcv; do
		u=$units/$u-metrics.service
		grep -qx 'StandardError=journal' "$u"
		grep -qx 'Wants=sys-kernel-tracing.mount' "$u"
		grep -qx 'After=sys-kernel-tracing.mount' "$u"
	done
	command -v systemd-analyze >/dev/null || skip "no systemd-analyze"
	run systemd-analyze security --offline=yes --threshold=21 "$units"/*-metrics.service
	echo "$output"
	[ "$status" -eq 0 ]
}
