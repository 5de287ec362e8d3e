#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# --output openmetrics: every tool's reports as cumulative metrics, one
# whole exposition per report and nothing else on stdout, against the
# workloads' known counts; the exposition checked by tests/om_check.py
# (its invariants) and by promtool (a lint, on the 0.0.4 dialect).

load helpers
bats_require_minimum_version 1.5.0

OM=$BATS_TEST_DIRNAME/om_check.py

setup() {
	common_setup
	mkdir -p "$T/d"
	echo a > "$T/d/one"
}
teardown() { common_teardown; }

# om_ok [FILE] [--text004]: FILE (default $T/out) is nothing but whole
# expositions, each one keeping the invariants.
om_ok() { python3 "$OM" check "${1:-$T/out}" "${@:2}"; }

# om SAMPLE [LABEL=VALUE...]: its value in the last exposition of $T/out.
om() { python3 "$OM" value "$T/out" "$@"; }

# om_series SAMPLE: how many label sets it has in the last exposition.
om_series() { python3 "$OM" series "$T/out" "$1"; }

# expositions [FILE]: how many reports are out (each ends "# EOF").
expositions() { grep -c '^# EOF$' "${1:-$T/out}" || true; }

# next_exposition: until one more exposition than now is out.
next_exposition() {
	local n
	n=$(expositions)
	retry more_than "$n" || { echo "no new exposition in $T/out" >&2; return 1; }
}
more_than() { [ "$(expositions)" -gt "$1" ]; }

# traced NAME "READLOAD ARGS" [READLAT ARGS]: readload NAME's reads, all
# of them, under readlat -o openmetrics -p its PID; the output checked.
traced() {
	local name=$1 pid
	rm -f "$T/go" "$T/hold"
	# shellcheck disable=SC2086	# words
	start_load "$name" $2
	pid=${name}_PID
	start_tool readlat -o openmetrics "${@:3}" -p "${!pid}"
	go
	wait_loads "$name"
	tool_wait
	[ "$TOOL_STATUS" -eq 0 ]
	om_ok
}

# transfer BYTES COMM: tcpload moves BYTES over loopback to a server
# named COMM (helpers.bash: serve, send), both waiting for go; sets port,
# R_PID (the server) and S_JOB (the sender).
transfer() {
	serve R "" 127.0.0.1 --comm "$2"
	port=$R_PORT
	send S "" 127.0.0.1 "$port" "$1"
}

# port_closed PORT: no TCP socket has local port PORT.
port_closed() { [ -z "$(ss -tanH "( sport = :$1 )")" ]; }

# promtool_clean FILE: promtool check metrics says nothing of FILE's last
# exposition (0.0.4, as node_exporter's textfile collector reads it).
promtool_clean() {
	local out
	command -v promtool >/dev/null || skip "no promtool (apt-get install prometheus)"
	out=$(awk -v last="$(expositions "$1")" '$0 == "# EOF" { n++; next } n == last - 1' "$1" |
		promtool check metrics 2>&1) || { echo "promtool: $out" >&2; return 1; }
	[ -z "$out" ] || { echo "promtool: $out" >&2; return 1; }
}

@test "readlat: _count is the workload's reads, the exposition whole and alone on stdout" {
	traced A "--reads 50 --delay-us 1000 --comm om_reads" -T
	[ "$(expositions)" -eq 1 ]
	[ "$(tail -n1 "$T/out")" = "# EOF" ]
	[ "$(om readlat_read_duration_seconds_count)" -eq 50 ]
	[ "$(om readlat_read_duration_seconds_bucket le=+Inf)" -eq 50 ]
	[ "$(om readlat_read_errors_total)" -eq 0 ]
	[ "$(om readlat_missed_total)" -eq 0 ]
	[ "$(om readlat_series_dropped_total)" -eq 0 ]
	grep -qx '# TYPE readlat_read_duration_seconds histogram' "$T/out"
	grep -qx '# UNIT readlat_read_duration_seconds seconds' "$T/out"
	grep -qx '# TYPE readlat_read_errors counter' "$T/out"
	# each read waits 1 ms: the sum in seconds, about 50 ms
	python3 -c 'import sys; s = float(sys.argv[1]); assert 0.05 <= s < 5, s' \
		"$(om readlat_read_duration_seconds_sum)"
	# -T adds no time line: the banner and the rest are on stderr
	refute grep -qE '^[0-9]{2}:[0-9]{2}:[0-9]{2}$' "$T/out"
	grep -q 'Hit Ctrl-C to end' "$T/err"
}

@test "cumulative: every report restates the totals, the last one all reads" {
	start_load A --source zero --first 20 --then "$T/then" --reads 30 --comm om_cum
	start_tool readlat -o openmetrics -p "$A_PID" 0.05
	go
	wait_for "$T/A.out" '^first-done'
	retry grep -qx 'readlat_read_duration_seconds_count 20' "$T/out"
	next_exposition
	touch "$T/then"
	wait_loads A
	tool_wait
	[ "$TOOL_STATUS" -eq 0 ]
	om_ok
	[ "$(expositions)" -ge 3 ]
	[ "$(om readlat_read_duration_seconds_count)" -eq 50 ]
	# never less than before, and 20 (the first reads) for a while
	python3 "$OM" values "$T/out" readlat_read_duration_seconds_count |
		awk '$1 == "none" { $1 = 0 } $1 < last { bad = 1 } { last = $1 } $1 == 20 { twenty++ }
		     END { exit bad || !twenty || last != 50 }'
	python3 "$OM" values "$T/out" readlat_read_duration_seconds_bucket le=+Inf | tail -n1 | grep -qx 50
}

# The le set of a series, in the last exposition of $T/out.
les_of() {
	awk -v last="$(expositions)" '$0 == "# EOF" { n++; next } n == last - 1' "$T/out" |
		grep -F "readlat_read_duration_seconds_bucket{$1," | sed -E 's/.*le="([^"]+)".*/\1/'
}

@test "histograms: every series has the one le set, 2^k - 1 ns from 127 ns to 137 s" {
	start_load A --reads 200 --source zero --comm om_fast
	start_load B --reads 20 --delay-us 3000 --comm om_slow
	start_tool readlat -o openmetrics -P
	go
	wait_loads A B
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	om_ok	# every series of a family with the same le set
	[ "$(om readlat_read_duration_seconds_count comm=om_fast)" -eq 200 ]
	[ "$(om readlat_read_duration_seconds_count comm=om_slow)" -eq 20 ]
	python3 -c 'for k in range(7, 38): print(format((2**k - 1) / 1e9, ".9f").rstrip("0"))
print("+Inf")' > "$T/les.want"
	[ "$(wc -l < "$T/les.want")" -eq 32 ]
	les_of 'comm="om_fast"' | diff "$T/les.want" -
	les_of 'comm="om_slow"' | diff "$T/les.want" -
}

@test "--label pid: a series per process; without it the processes of one name are one" {
	start_load A --reads 5 --delay-us 1000 --comm om_same
	start_load B --reads 7 --delay-us 1000 --comm om_same
	start_tool readlat -o openmetrics -P -n om_same
	go
	wait_loads A B
	stop_tool INT
	om_ok
	[ "$(om readlat_read_duration_seconds_count comm=om_same)" -eq 12 ]
	refute grep -q 'pid="' "$T/out"

	rm -f "$T/go" "$T/hold"
	start_load A --reads 5 --delay-us 1000 --comm om_same
	start_load B --reads 7 --delay-us 1000 --comm om_same
	start_tool readlat -o openmetrics -P -n om_same --label pid
	go
	wait_loads A B
	stop_tool INT
	om_ok
	[ "$(om readlat_read_duration_seconds_count pid="$A_PID" comm=om_same)" -eq 5 ]
	[ "$(om readlat_read_duration_seconds_count pid="$B_PID" comm=om_same)" -eq 7 ]
	[ "$(om readlat_read_duration_seconds_count comm=om_same)" = none ]
}

@test "--label NAME=VALUE: on every series of every family, counters too" {
	traced A "--reads 5 --delay-us 1000 --comm om_lab" -P --label team=db --label 'site=a"b'
	[ "$(om readlat_read_duration_seconds_count team=db 'site=a"b' comm=om_lab)" -eq 5 ]
	[ "$(om readlat_series_dropped_total team=db 'site=a"b')" -eq 0 ]
	# every sample
	refute grep -vE '^#|\{team="db",site="a\\"b"[,}]' "$T/out"
}

@test "--max-series 1: the others fold into [other], counted as dropped, none lost" {
	start_load A --reads 5 --delay-us 1000 --comm om_fold1
	start_load B --reads 6 --delay-us 1000 --comm om_fold2
	start_load C --reads 7 --delay-us 1000 --comm om_fold3
	start_tool readlat -o openmetrics -P --max-series 1 -s read
	go
	wait_loads A B C
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	om_ok
	# one series of its own and [other]
	[ "$(om_series readlat_read_duration_seconds_count)" -eq 2 ]
	other=$(om readlat_read_duration_seconds_count comm='[other]')
	[ "$other" -ge 1 ]
	# of three names of ours at least two were folded, each counted once
	[ "$(om readlat_series_dropped_total)" -ge 2 ]
	# what the store had is all there: own + [other] is every read counted
	[ "$(om readlat_read_duration_seconds_count comm=om_fold1)" = none ] ||
		[ "$(om readlat_read_duration_seconds_count comm=om_fold1)" -eq 5 ]
}

@test "a hostile process name: quote, backslash, newline and invalid bytes escaped, valid UTF-8" {
	c1=$'q"b\\s\nn'
	c2=$'a\xffb\e[0m'
	start_load A --reads 3 --delay-us 1000 --comm "$c1"
	start_load B --reads 4 --delay-us 1000 --comm "$c2"
	[ "$(cat "/proc/$A_PID/comm")" = "$c1" ]
	start_tool readlat -o openmetrics -P --label pid
	go
	wait_loads A B
	stop_tool INT
	om_ok
	python3 -c 'import sys; sys.stdin.buffer.read().decode("utf-8")' < "$T/out"
	refute grep -q $'\e' "$T/out"
	grep -qF "{pid=\"$A_PID\",comm=\"q\\\"b\\\\s\\nn\"} 3" "$T/out"
	# the label's value, as Prometheus reads it, is the name itself
	[ "$(om readlat_read_duration_seconds_count pid="$A_PID" comm="$c1")" -eq 3 ]
	# invalid UTF-8 and the escape byte: as the text output shows them
	grep -qF "{pid=\"$B_PID\",comm=\"a\\\\xffb\\\\x1b[0m\"} 4" "$T/out"
	[ "$(om readlat_read_duration_seconds_count pid="$B_PID" comm='a\xffb\x1b[0m')" -eq 4 ]
	# 0.0.4 (what --textfile writes): promtool reads it
	rm -f "$T/go" "$T/hold"
	start_load D --reads 3 --delay-us 1000 --comm "$c1"
	start_tool readlat -o openmetrics -P -p "$D_PID" --textfile "$T/d.prom" --textfile-keep
	go
	wait_loads D
	tool_wait
	om_ok "$T/d.prom" --text004
	# every series labelled with the file's name (two runs, two files)
	grep -qF "{textfile=\"d\",comm=\"q\\\"b\\\\s\\nn\"} 3" "$T/d.prom"
	promtool_clean "$T/d.prom"
}

@test "readlat -P, -F and -B: errors per key; labels fd, path and source" {
	traced A "--reads 10 --delay-us 1000 --bad 4 --comm om_err" -P
	[ "$(om readlat_read_duration_seconds_count comm=om_err)" -eq 10 ]
	[ "$(om readlat_read_errors_total comm=om_err)" -eq 4 ]

	traced B "--reads 6 --delay-us 1000 --comm om_fd" -F
	grep -qE "^readlat_read_duration_seconds_count\{comm=\"om_fd\",fd=\"${B_FDS[0]}\",path=\"[^\"]+\"\} 6\$" "$T/out"

	traced C "--reads 8 --delay-us 1000 --comm om_src" -B
	[ "$(om readlat_read_duration_seconds_count source=cache)" -eq 8 ]
	[ "$(om readlat_read_duration_seconds_count source=disk)" -eq 0 ]
}

@test "opensnoop -C: opens and failures by comm, and by errno as its name, exact" {
	start_opens A --file "$T/d/one" --file "$T/d/missing" --opens 40 --comm os_om
	start_opens B --file "$T/d/one" --opens 7 --comm os_om
	start_tool opensnoop -C -o openmetrics -n os_om
	go
	wait_loads A B
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	om_ok
	[ "$(om opensnoop_opens_total comm=os_om)" -eq 87 ]
	[ "$(om opensnoop_open_failures_total comm=os_om)" -eq 40 ]
	[ "$(om opensnoop_lost_events_total)" -eq 0 ]
	grep -qx '# TYPE opensnoop_opens counter' "$T/out"
	# the text table is not on stdout
	refute grep -q '^OPENS' "$T/out"

	rm -f "$T/go" "$T/hold"
	start_opens C --file "$T/d/one" --file "$T/d/missing" --opens 9 --comm os_om
	start_tool opensnoop -C --by errno -o openmetrics -n os_om
	go
	wait_loads C
	stop_tool INT
	om_ok
	[ "$(om opensnoop_opens_total errno=ENOENT)" -eq 9 ]
	[ "$(om opensnoop_open_failures_total errno=ENOENT)" -eq 9 ]
	[ "$(om opensnoop_opens_total errno=0)" -eq 9 ]
	[ "$(om opensnoop_open_failures_total errno=0)" -eq 0 ]
}

@test "opensnoop -C with an interval: the counters add up every interval's opens" {
	local k
	start_tool opensnoop -C -o openmetrics -n os_omivl 0.05
	go
	finish
	for k in 1 2 3; do
		start_opens A --file "$T/d/one" --opens 500 --comm os_omivl
		wait_loads A
		next_exposition
		next_exposition
	done
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	om_ok
	[ "$(expositions)" -ge 6 ]
	[ "$(om opensnoop_opens_total comm=os_omivl)" -eq 1500 ]
	python3 "$OM" values "$T/out" opensnoop_opens_total comm=os_omivl | grep -qx 500
	python3 "$OM" values "$T/out" opensnoop_opens_total comm=os_omivl | grep -qx 1000
}

@test "opensnoop -L: the histogram counts every open, its failures apart" {
	start_opens A --file "$T/d/one" --file "$T/d/missing" --opens 25 --comm os_omlat
	start_tool opensnoop -L -o openmetrics -n os_omlat
	go
	wait_loads A
	stop_tool INT
	om_ok
	[ "$(om opensnoop_open_duration_seconds_count)" -eq 50 ]
	[ "$(om opensnoop_open_failures_total)" -eq 25 ]

	rm -f "$T/go" "$T/hold"
	start_opens B --file "$T/d/one" --opens 11 --comm os_omlat
	start_tool opensnoop -L -P -o openmetrics -n os_omlat
	go
	wait_loads B
	stop_tool INT
	om_ok
	[ "$(om opensnoop_open_duration_seconds_count comm=os_omlat)" -eq 11 ]
	[ "$(om_series opensnoop_open_duration_seconds_count)" -eq 1 ]
}

@test "opensnoop without -C or -L: a stream of events has no OpenMetrics form, exit 2" {
	usage_errors opensnoop <<-'EOF_CASES'
	-o openmetrics|--output openmetrics exports histograms and counts, not one line per event
	EOF_CASES
	usage_errors readlat <<-'EOF_CASES'
	-o openmetrics --slower 10|--output openmetrics exports histograms and counts
	EOF_CASES
}

@test "usage: the format, -j against another, --label, --max-series" {
	local t
	for t in readlat opensnoop biolat tcprcv; do
		usage_errors "$t" <<-'EOF_CASES'
		-o xml|invalid output format 'xml': expected text, json or openmetrics
		--output=|invalid output format '': expected text, json or openmetrics
		-j -o text|-j is --output json: it cannot be combined with --output text
		-o openmetrics -j|-j is --output json: it cannot be combined with --output openmetrics
		-o json -o text|option '-o' given twice
		--label comm|invalid label 'comm': expected pid or NAME=VALUE
		--label le=1|invalid label name 'le'
		--label a=1 --label a=2|label 'a' given twice
		--max-series 0|invalid series count '0' for --max-series
		--max-series -1|invalid series count '-1' for --max-series
		--max-series 1x|invalid series count '1x' for --max-series
		EOF_CASES
	done
	# -j -o json, and --output json alone, are -j
	run --separate-stderr "$BUILD/readlat" -j -o json --check
	[ "$status" -eq 0 ]
	"$BUILD/readlat" --help | grep -qE -- '-o, --output=FORMAT'
	"$BUILD/readlat" --help | grep -qE -- '--max-series=N'
	"$BUILD/readlat" --help | grep -qE -- '--label=pid'
}

# bats test_tags=serial
@test "--self-cost: each program's run time and runs, as counters" {
	traced A "--reads 20 --delay-us 1000" --self-cost
	[ "$(om readlat_bpf_runs_total program=exit_read)" -ge 20 ]
	[ "$(om readlat_bpf_runs_total program=enter_read)" -ge 20 ]
	python3 -c 'import sys; assert float(sys.argv[1]) > 0' "$(om readlat_bpf_run_seconds_total program=exit_read)"
	grep -qx '# UNIT readlat_bpf_run_seconds seconds' "$T/out"
	# the table at exit is on stderr
	grep -q '^self-cost' "$T/err"
}

@test "tcprcv --by port: bytes received and read by comm and port, exact, cumulative" {
	local B=300000 port
	transfer "$B" om_rx
	start_tool tcprcv -o openmetrics -p "$R_PID" --by port 0.1
	go
	wait_for "$T/R.out" "^read $B\$"
	wait_exit "$S_JOB"
	retry port_closed "$port"
	next_exposition
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	om_ok
	[ "$(om tcprcv_received_bytes_total comm=om_rx lport="$port")" -eq "$B" ]
	[ "$(om tcprcv_read_bytes_total comm=om_rx lport="$port")" -eq "$B" ]
	[ "$(om tcprcv_segments_total comm=om_rx lport="$port")" -ge 1 ]
	[ "$(om tcprcv_retransmits_total comm=om_rx lport="$port")" -ge 0 ]
	[ "$(om tcprcv_drops_total comm=om_rx lport="$port")" -ge 0 ]
	grep -qx '# UNIT tcprcv_received_bytes bytes' "$T/out"
	refute grep -q '^Counts in the last' "$T/out"
	# cumulative, where the table counts each interval
	python3 "$OM" values "$T/out" tcprcv_read_bytes_total comm=om_rx lport="$port" |
		awk '$1 == "none" { $1 = 0 } $1 < last { exit 1 } { last = $1 }'
}

@test "tcprcv -L: the receive-queue histogram in seconds" {
	local B=100000 port
	transfer "$B" om_lrx
	start_tool tcprcv -L -P -o openmetrics -p "$R_PID"
	go
	wait_for "$T/R.out" "^read $B\$"
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	om_ok
	[ "$(om tcprcv_receive_queue_seconds_count comm=om_lrx)" -ge 1 ]
	grep -qx '# TYPE tcprcv_receive_queue_seconds histogram' "$T/out"
}

@test "biolat: every I/O in _count or lost; -D by disk; --size in bytes" {
	local n=200 c l u
	loop_setup 8
	dd if=/dev/zero of="$LOOP" bs=1M count=8 oflag=direct status=none
	"$BUILD/tests/bioload" --dev "$LOOP" --direct --go "$T/go" --hold "$T/hold" --reads "$n" \
		> "$T/B.out" 2>&1 &
	JOBS+=($!)
	wait_for "$T/B.out" '^pid='
	start_tool biolat -o openmetrics -D -d "$LOOPNAME"
	go
	wait_for "$T/B.out" '^done'
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	om_ok
	c=$(om biolat_io_duration_seconds_count disk="$LOOPNAME")
	l=$(om biolat_lost_events_total disk="$LOOPNAME")
	[ "$l" != none ] || l=0
	u=$(sed -nE 's/^([0-9]+) requests issued and not seen completing.*/\1/p' "$T/err")
	echo "expected $n: count $c, lost $l, unfinished ${u:-0}"
	[ "$c" -le "$n" ] && [ $((c + l + ${u:-0})) -ge "$n" ]
	[ "$(om biolat_errors_total disk="$LOOPNAME")" -eq 0 ]
	[ "$(om biolat_evicted_total)" -ge 0 ]

	rm -f "$T/go" "$T/hold"
	"$BUILD/tests/bioload" --dev "$LOOP" --direct --go "$T/go" --hold "$T/hold" --reads 50 --size 4096 \
		> "$T/B.out" 2>&1 &
	JOBS+=($!)
	wait_for "$T/B.out" '^pid='
	start_tool biolat -o openmetrics --size -d "$LOOPNAME"
	go
	wait_for "$T/B.out" '^done'
	stop_tool INT
	om_ok
	grep -qx '# UNIT biolat_io_size_bytes bytes' "$T/out"
	c=$(om biolat_io_size_bytes_count)
	[ "$c" -le 50 ] && [ "$c" -ge 40 ]
	# 4096-byte requests: in the bucket of 4096 to 8191 bytes
	[ "$(om biolat_io_size_bytes_bucket le=8191)" -eq "$c" ]
	[ "$(om biolat_io_size_bytes_bucket le=4095)" -eq 0 ]
	refute grep -q _seconds "$T/out"
}

# exposition_modes: for each line of stdin, a tool and its arguments: 0.3 s
# of it, one whole exposition, the invariants kept, promtool clean on 0.0.4.
exposition_modes() {
	local args
	while IFS= read -r args; do
		# shellcheck disable=SC2086	# words
		run --separate-stderr timeout 20 "$BUILD"/$args -o openmetrics --duration 0.3
		echo "$args: $status $stderr"
		[ "$status" -eq 0 ]
		printf '%s\n' "$output" > "$T/out"
		om_ok
		[ "$(expositions)" -eq 1 ]
		# shellcheck disable=SC2086
		run --separate-stderr timeout 20 "$BUILD"/$args \
			--textfile "$T/out004.prom" --textfile-keep --duration 0.3
		[ "$status" -eq 0 ]
		mv "$T/out004.prom" "$T/out004"
		om_ok "$T/out004" --text004
		promtool_clean "$T/out004"
	done
}

@test "every tool and mode: whole expositions only, the invariants kept, promtool clean on 0.0.4" {
	exposition_modes <<-'EOF_CASES'
	readlat
	readlat -P
	readlat -F
	readlat -B
	readlat -P -B --label pid
	opensnoop -C
	opensnoop -C --by file
	opensnoop -C --by errno
	opensnoop -C --by comm
	opensnoop -L -P
	tcprcv
	tcprcv --by flow
	tcprcv -L -P
	biolat -D -F
	biolat --size
	EOF_CASES
}

# It turns the kernel's BPF run-time stats on, for every program.
# bats test_tags=serial
@test "--self-cost: a whole exposition, the invariants kept, promtool clean on 0.0.4" {
	exposition_modes <<< 'readlat --self-cost'
}
