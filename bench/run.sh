#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmarks, side by side with the peers in one run, interleaved, repeated;
# medians and ratios go to bench/RESULTS.md. Run as root: make bench.
#   REPS (default 5), READS (default 400000), OPENS (default 150000),
#   LAT_RUNS (default 5), BIO_RUNS (default 5), TCP_RUNS (default 5) and
#   TCP_BYTES (default 1G) tune the run time.
#   BIO_ONLY=1 runs only biolat's part and prints its tables, RESULTS.md
#   untouched; TCP_ONLY=1 the same for tcprcv's, READLAT_ONLY=1 for readlat's
#   per-read rows, METRICS_ONLY=1 for the fleet-metrics rows
#   (bench/metrics.sh).
set -euo pipefail
START=$SECONDS
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
B=$BUILD/bench
REPS=${REPS:-5}
READS=${READS:-400000}
OPENS=${OPENS:-150000}
LAT_RUNS=${LAT_RUNS:-5}
BT_LAT_RUNS=3	# bpftrace's latency runs: its start-up is long
OUT=bench/RESULTS.md
TMP=$(mktemp -d)
WORK_CPU=1	# the workload runs here; tracers take the other core
OTHER_CG='' CG2_MOUNTED=''
BIO_LOOP='' BIO_WL='' BIO_TRACEFS='' BPF_STATS_WAS=''
cleanup() {
	# shellcheck disable=SC2046
	kill $(jobs -p) 2>/dev/null || true
	[ -z "$BPF_STATS_WAS" ] || sysctl -q kernel.bpf_stats_enabled="$BPF_STATS_WAS" || true
	[ -z "$BIO_TRACEFS" ] || { echo 0 >"$BIO_TRACEFS/events/enable"; rmdir "$BIO_TRACEFS"; } 2>/dev/null || true
	if [ -n "$BIO_LOOP" ]; then
		[ -z "$BIO_WL" ] || wait "$BIO_WL" 2>/dev/null || true	# bioload holds the loop open
		losetup -d "$BIO_LOOP" 2>/dev/null || true
	fi
	[ -z "$OTHER_CG" ] || rmdir "$OTHER_CG" 2>/dev/null || true
	[ -z "$CG2_MOUNTED" ] || umount -l "$TMP/cg2" 2>/dev/null || true
	rm -rf --one-file-system "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT	# Ctrl-C ends the bench, not the condition at hand
trap 'exit 143' TERM

need() { command -v "$1" >/dev/null || { apt-get install -y -q "$2" >/dev/null || true; }; }
need bpftrace bpftrace
need syscount libbpf-tools
need stdbuf coreutils
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing

BPFTRACE_HIST='BEGIN { printf("attached\n"); }
tracepoint:syscalls:sys_enter_read { @s[tid] = nsecs; }
tracepoint:syscalls:sys_exit_read /@s[tid]/ { @us = hist((nsecs - @s[tid]) / 1000); delete(@s[tid]); }'

# The filtered-out conditions ask for what the workload is not: a process
# that never reads (-p), a name no process has (-n), and an empty cgroup v2
# directory made for the run under the cgroup2 mount, removed at the end (-c).
sleep 100000 &
OTHER=$!
OTHER_NAME=bench-nobody
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -z "$CG2" ] && mkdir "$TMP/cg2" && mount -t cgroup2 cgroup2 "$TMP/cg2"; then
	CG2=$TMP/cg2 CG2_MOUNTED=1
fi
if [ -n "$CG2" ] && mkdir "$CG2/readlat-bench-other.$$"; then
	OTHER_CG=$CG2/readlat-bench-other.$$
else
	echo "bench: no cgroup v2 directory could be made: no 'readlat -c OTHER' row" >&2
fi

# key | name | attach pattern | command (empty: untraced). The rows from
# clock to limit are readlat's unavoidable parts, one at a time, in programs
# on the same two tracepoints (bench/*.bpf.c, loaded by bench/loader).
CONDITIONS=(
	"untraced|untraced||"
	"floor|floor (2 empty programs)|attached|$B/loader $B/floor.bpf.o"
	"clock|clock only (bpf_ktime_get_ns at entry and exit)|attached|$B/loader $B/clock.bpf.o"
	"store|store only (task storage get/create, get)|attached|$B/loader $B/store.bpf.o"
	"limit|limit (clock + store, no histogram)|attached|$B/loader $B/limit.bpf.o"
	"readlat|readlat|Hit Ctrl-C|$BUILD/readlat"
	"pid|readlat -p OTHER (filtered out)|Hit Ctrl-C|$BUILD/readlat -p $OTHER"
	"name|readlat -n OTHER (filtered out)|Hit Ctrl-C|$BUILD/readlat -n $OTHER_NAME"
)
[ -z "$OTHER_CG" ] ||
	CONDITIONS+=("cgroup|readlat -c OTHER (filtered out)|Hit Ctrl-C|$BUILD/readlat -c $OTHER_CG")
CONDITIONS+=(
	"naive|naive libbpf (hash + log2)|attached|$B/loader $B/naive.bpf.o"
	"bpftrace|bpftrace one-liner|attached|bpftrace -e BPFTRACE_HIST"
	"syscount|libbpf-tools syscount -L|Ctrl+C|stdbuf -oL syscount -L"
)
READLAT_ROWS="readlat pid name cgroup"
FILTER_ROWS="pid name cgroup"
PEER_ROWS="naive bpftrace syscount"

# start_tracer CMD PATTERN: background it, wait until it says it attached.
start_tracer() {
	local cmd=$1 pat=$2 i
	: >"$TMP/tr.out"	# not the last tracer's output: its pattern would match at once
	if [ "$cmd" = "bpftrace -e BPFTRACE_HIST" ]; then
		bpftrace -e "$BPFTRACE_HIST" >"$TMP/tr.out" 2>&1 &
	else
		$cmd >"$TMP/tr.out" 2>&1 &
	fi
	TRACER=$!
	for ((i = 0; i < 2000; i++)); do
		grep -q -- "$pat" "$TMP/tr.out" && return 0
		sleep 0.005
	done
	echo "bench: '$cmd' did not attach" >&2
	cat "$TMP/tr.out" >&2
	return 1
}

# stop_tracer: SIGINT, like a user; again after 5 s, SIGKILL after 10 s
# (bpftrace 0.17 sometimes takes SIGINT and goes on waiting).
stop_tracer() {
	local i
	kill -INT "$TRACER" 2>/dev/null || true
	for ((i = 0; i < 1000; i++)); do
		kill -0 "$TRACER" 2>/dev/null || break
		[ $i -eq 500 ] && kill -INT "$TRACER" 2>/dev/null
		sleep 0.01
	done
	kill -KILL "$TRACER" 2>/dev/null || true
	wait "$TRACER" 2>/dev/null || true
}

# median: of the numbers on stdin; nothing if there are none.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else if (NR) print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure SOURCE: REPS rounds; each round runs every condition once, in a
# rotated order, and records ns/read; the added cost of a condition is its
# median over rounds of (its time - the same round's untraced time).
measure() {
	local src=$1 r c n=${#CONDITIONS[@]} k key name pat cmd t
	for ((r = 0; r < REPS; r++)); do
		for ((k = 0; k < n; k++)); do
			c=$(((k + r) % n))
			IFS='|' read -r key name pat cmd <<<"${CONDITIONS[$c]}"
			[ -z "$cmd" ] || start_tracer "$cmd" "$pat"
			t=$(taskset -c $WORK_CPU "$B/readbench" "$src" "$READS")
			[ -z "$cmd" ] || stop_tracer
			echo "$r $key $t" >>"$TMP/$src.raw"
		done
	done
}

# The same conditions' BPF run time per read, measured by the kernel
# (kernel.bpf_stats_enabled=1, in a pass of its own: the stats add their
# own cost to every run). A tracer's programs' run_time_ns and run_cnt
# before and after the workload: per program that ran at least once per
# read, its ns per run; their sum is the row's BPF ns per read. Programs
# on the same tracepoints differ in nothing else, so a difference of two
# rows is what one's code costs over the other's, free of what the wall
# clock sees vary from one load of the same programs to the next.
PROG_ROWS="floor clock store limit readlat $FILTER_ROWS"

# prog_counters PID: "id run_time_ns run_cnt recursion_misses" of each BPF
# program PID holds.
prog_counters() {
	local f
	for f in /proc/"$1"/fdinfo/*; do
		awk '/^prog_id:/ { p = $2 } /^run_time_ns:/ { t = $2 } /^run_cnt:/ { c = $2 }
			/^recursion_misses:/ { m = $2 } END { if (p != "" && c != "") print p, t, c, m + 0 }' "$f" 2>/dev/null || true
	done | sort -u
}

measure_progs() {
	local src=$1 r k key name pat cmd keys n c
	read -ra keys <<<"$PROG_ROWS"
	n=${#keys[@]}
	for ((r = 0; r < REPS; r++)); do
		for ((k = 0; k < n; k++)); do
			key=${keys[$(((k + r) % n))]}
			[ -n "$(row_name "$key")" ] || continue	# no cgroup row
			for c in "${CONDITIONS[@]}"; do
				IFS='|' read -r name _ pat cmd <<<"$c"
				[ "$name" = "$key" ] && break
			done
			start_tracer "$cmd" "$pat"
			prog_counters "$TRACER" >"$TMP/pc.before"
			taskset -c $WORK_CPU "$B/readbench" "$src" "$READS" >/dev/null
			prog_counters "$TRACER" >"$TMP/pc.after"
			stop_tracer
			awk -v r="$r" -v k="$key" -v n="$READS" 'NR == FNR { t[$1] = $2; c[$1] = $3; next }
				($3 - c[$1]) >= n { s += ($2 - t[$1]) / ($3 - c[$1]) } END { printf "%s %s %.2f\n", r, k, s }' \
				"$TMP/pc.before" "$TMP/pc.after" >>"$TMP/$src.prog"
		done
	done
}

# prog_ns SOURCE KEY: the median over rounds of the row's BPF ns per read.
prog_ns() { awk -v c="$2" '$2 == c { print $3 }' "$TMP/$1.prog" 2>/dev/null | median; }
# prog_over SOURCE KEY BASE: KEY's BPF ns per read over BASE's, per round; the median.
prog_over() {
	awk -v c="$2" -v b="$3" '$2 == c { v[$1] = $3 } $2 == b { w[$1] = $3 } END { for (r in v) if (r in w) print v[r] - w[r] }' \
		"$TMP/$1.prog" 2>/dev/null | median
}
# kernel_ratio SOURCE KEY BASE: KEY's added cost over BASE's, with the wall
# clock's median for BASE and the kernel's BPF run time for the difference.
kernel_ratio() {
	local d b
	d=$(prog_over "$1" "$2" "$3") b=$(added "$1" "$3")
	if [ -n "$d" ] && [ -n "$b" ]; then awk -v d="$d" -v b="$b" 'BEGIN { printf "%.2f", (b + d) / b }'; else echo n/a; fi
}

# added SOURCE KEY: median over rounds of the condition's ns/read minus the
# same round's untraced ns/read; nothing if the condition did not run.
added() {
	awk -v c="$2" '$2 == "untraced" { base[$1] = $3 } $2 == c { v[$1] = $3 }
		END { for (r in v) print v[r] - base[r] }' "$TMP/$1.raw" | median
}
absolute() { awk -v c="$2" '$2 == c { print $3 }' "$TMP/$1.raw" | median; }

# ns VALUE, ratio A B: formatted, "n/a" where a value is missing.
ns() { if [ -n "$1" ]; then printf '%.0f' "$1"; else echo n/a; fi; }
ratio() {
	if [ -n "$1" ] && [ -n "$2" ]; then
		awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'
	else
		echo n/a
	fi
}

# cond_name ARRAY KEY: the name of the condition KEY in ARRAY (entries
# "key|name|...").
cond_name() {
	local -n conds=$1
	local c key name
	for c in "${conds[@]}"; do
		IFS='|' read -r key name _ <<<"$c"
		[ "$key" = "$2" ] && { echo "$name"; return; }
	done
}

# The row's name, from its key.
row_name() { cond_name CONDITIONS "$1"; }

overhead_table() {
	local src=$1 c key name floor limit a l
	floor=$(added "$src" floor)
	limit=$(added "$src" limit)
	echo "| condition | ns per read (median) | added ns | × floor | × limit |"
	echo "|---|---:|---:|---:|---:|"
	for c in "${CONDITIONS[@]}"; do
		IFS='|' read -r key name _ <<<"$c"
		if [ "$key" = untraced ]; then
			printf '| %s | %.0f | - | - | - |\n' "$name" "$(absolute "$src" untraced)"
			continue
		fi
		a=$(added "$src" "$key")
		l=-
		[[ " $READLAT_ROWS limit " != *" $key "* ]] || l=$(ratio "$a" "$limit")
		printf '| %s | %.0f | %s | %s | %s |\n' "$name" "$(absolute "$src" "$key")" "$(ns "$a")" \
			"$(ratio "$a" "$floor")" "$l"
	done
}

# Where readlat's added ns go: the floor by the wall clock (the kernel's
# tracepoint work around two empty programs), then the BPF run time the
# kernel measured for each part beyond the floor's programs: the clock,
# the store, what they cost together beyond their sum (making up the
# limit), readlat's histogram and the rest of its code (readlat − limit),
# and each filter for a read it leaves out.
where_table() {
	local src k cells
	# part LABEL HOW KEY BASE: BPF ns of KEY over BASE, per source
	part() {
		cells=
		for src in zero pipe; do cells+=" $(ns "$(prog_over "$src" "$3" "$4")") |"; done
		echo "| $1 | $2 |$cells"
	}
	echo "| part | measured as | /dev/zero ns | pipe ns |"
	echo "|---|---|---:|---:|"
	echo "| floor: the two tracepoints, with empty programs | wall clock: floor − untraced | $(ns "$(added zero floor)") | $(ns "$(added pipe floor)") |"
	echo "| of it, the empty programs' own run time | BPF: floor | $(ns "$(prog_ns zero floor)") | $(ns "$(prog_ns pipe floor)") |"
	part "+ clock: bpf_ktime_get_ns() at entry and at exit" "BPF: clock only − floor" clock floor
	part "+ store: task storage get/create at entry, get at exit" "BPF: store only − floor" store floor
	cells=
	for src in zero pipe; do
		cells+=" $(ns "$(awk -v l="$(prog_over "$src" limit floor)" -v c="$(prog_over "$src" clock floor)" \
			-v s="$(prog_over "$src" store floor)" 'BEGIN { if (l != "" && c != "" && s != "") print l - c - s }')") |"
	done
	echo "| + clock and store together, beyond their sum | BPF: limit − clock − store + floor |$cells"
	part "= the limit over the floor: what readlat cannot avoid" "BPF: limit − floor" limit floor
	part "+ histogram and all else readlat does" "BPF: readlat − limit" readlat limit
	part "= readlat over the floor" "BPF: readlat − floor" readlat floor
	for k in $FILTER_ROWS; do
		[ -n "$(row_name "$k")" ] || continue
		part "filter: readlat $(filter_flag "$k"), for a read it leaves out" "BPF: readlat $(filter_flag "$k") − floor" "$k" floor
	done
}

# floor_spread SOURCE: the lowest and highest added ns of the floor over
# the rounds, "LOW to HIGH".
floor_spread() {
	awk '$2 == "untraced" { u[$1] = $3 } $2 == "floor" { f[$1] = $3 }
		END { for (r in f) { v = f[r] - u[r]; if (lo == "" || v < lo) lo = v; if (v > hi) hi = v }
			printf "%.0f to %.0f", lo, hi }' "$TMP/$1.raw"
}

# prog_table: each row's BPF run time per read, both sources.
prog_table() {
	local k
	echo "| condition | /dev/zero: BPF ns per read | pipe: BPF ns per read |"
	echo "|---|---:|---:|"
	for k in $PROG_ROWS; do
		[ -n "$(row_name "$k")" ] || continue
		echo "| $(row_name "$k") | $(ns "$(prog_ns zero "$k")") | $(ns "$(prog_ns pipe "$k")") |"
	done
}

# Start-up: exec -> attached, SIGINT -> final output, SIGINT -> exit, peak RSS.
STARTUP=(
	"readlat|Hit Ctrl-C|$BUILD/readlat"
	"libbpf-tools syscount -L|Ctrl+C|stdbuf -oL syscount -L"
	"libbpf-tools biolatency|Hit Ctrl-C|stdbuf -oL biolatency"
	"bpftrace one-liner|attached|bpftrace -e BPFTRACE_HIST"
	"CO-RE probe, libbpf skeleton|attached|$B/loader $B/core.bpf.o"
	"CO-RE probe, light skeleton (kernel CO-RE)|attached|$B/corelight"
)
STARTUP_RUNS=${STARTUP_RUNS:-7}

startup_table() {
	local s i name pat cmd f prog
	echo "| tool | exec → attached ms | SIGINT → final output ms | SIGINT → exit ms | peak RSS MiB | runs needing a 2nd signal |"
	echo "|---|---:|---:|---:|---:|---:|"
	for s in "${STARTUP[@]}"; do
		IFS='|' read -r name pat cmd <<<"$s"
		: >"$TMP/st"
		for ((i = 0; i < STARTUP_RUNS; i++)); do
			if [[ $cmd == "bpftrace -e BPFTRACE_"* ]]; then
				prog=${cmd#bpftrace -e }
				"$B/startup" "$pat" bpftrace -e "${!prog}" >>"$TMP/st"
			else
				# shellcheck disable=SC2086
				"$B/startup" "$pat" $cmd >>"$TMP/st"
			fi
		done
		f() { grep -oE "$1=[-0-9.]+" "$TMP/st" | cut -d= -f2 | median; }
		case $name in readlat | opensnoop* | biolat | tcprcv) cp "$TMP/st" "$TMP/st.${name%% *}" ;; esac
		printf '| %s | %.1f | %s | %.1f | %.1f | %d of %d |\n' "$name" "$(f attach_ms)" \
			"$(awk -v v="$(f final_ms)" 'BEGIN { print (v < 0 ? "n/a (prints nothing)" : sprintf("%.1f", v)) }')" \
			"$(f exit_ms)" "$(awk -v k="$(f rss_kb)" 'BEGIN { print k / 1024 }')" \
			"$(grep -c 'resent=[12]' "$TMP/st")" "$STARTUP_RUNS"
	done
}

size_table() {
	local t
	echo "| binary | size (stripped, static) |"
	echo "|---|---:|"
	for t in "$BUILD"/readlat "$BUILD"/opensnoop "$BUILD"/biolat "$BUILD"/tcprcv; do
		strip -o "$TMP/stripped" "$t"
		printf '| %s | %.2f MiB |\n' "${t##*/}" "$(stat -c %s "$TMP/stripped" | awk '{ print $1 / 1048576 }')"
	done
}

# Growth: readlat -P with K processes' keys live in the map, and readlat
# printing every 0.1 s. added_under CMD K: median over 3 rounds of the
# workload's ns/read under CMD, after K-1 other processes have read (one
# key each), minus the same round's untraced ns/read.
added_under() {
	local r i t base
	: >"$TMP/g"
	for ((r = 0; r < 3; r++)); do
		base=$(taskset -c $WORK_CPU "$B/readbench" zero "$READS")
		start_tracer "$1" "Hit Ctrl-C"
		for ((i = 1; i < $2; i++)); do "$B/readbench" zero 10 >/dev/null; done
		t=$(taskset -c $WORK_CPU "$B/readbench" zero "$READS")
		stop_tracer
		echo "$t - $base" | bc -l >>"$TMP/g"
	done
	median <"$TMP/g"
}

growth_table() {
	local k iv
	echo "| condition | added ns per read (median) |"
	echo "|---|---:|"
	for k in 1 64 512; do
		printf '| readlat -P, %d keys in the map | %.0f |\n' "$k" "$(added_under "$BUILD/readlat -P 3600" "$k")"
	done
	for iv in 0.1 3600; do
		printf '| readlat, interval %s s | %.0f |\n' "$iv" "$(added_under "$BUILD/readlat $iv" 1)"
	done
}

# Exactness: the workload makes exactly 1000 (warm-up) + READS reads; the
# tracer prints and clears every 50 ms while it runs; the sum of its
# interval counts must be that number, in every repetition.
BPFTRACE_INTERVAL='BEGIN { printf("attached\n"); }
tracepoint:syscalls:sys_enter_read /comm == "readbench"/ { @s[tid] = nsecs; }
tracepoint:syscalls:sys_exit_read /@s[tid]/ { @us = hist((nsecs - @s[tid]) / 1000); delete(@s[tid]); }
interval:ms:50 { print(@us); clear(@us); }'

exact_table() {
	local r truth=$((1000 + READS)) ours peer
	echo "| repetition | reads made | readlat 0.05 (sum of intervals) | bpftrace print+clear every 50 ms |"
	echo "|---:|---:|---:|---:|"
	for ((r = 1; r <= 3; r++)); do
		start_tracer "$BUILD/readlat -j -n readbench 0.05" "Hit Ctrl-C"
		taskset -c $WORK_CPU "$B/readbench" zero "$READS" >/dev/null
		sleep 0.1
		stop_tracer
		ours=$(grep '^{' "$TMP/tr.out" | jq -s 'map(.count) | add')
		bpftrace -f json -e "$BPFTRACE_INTERVAL" >"$TMP/tr.out" 2>&1 &
		TRACER=$!
		for ((i = 0; i < 2000; i++)); do grep -q '"data": "attached' "$TMP/tr.out" && break; sleep 0.005; done
		taskset -c $WORK_CPU "$B/readbench" zero "$READS" >/dev/null
		sleep 0.1
		stop_tracer
		peer=$(grep '"type": *"hist"' "$TMP/tr.out" | jq -s '[.[].data[][]? | .count] | add // 0')
		echo "| $r | $truth | $ours | $peer |"
	done
}

# opensnoop: the workload (bench/openbench) opens and closes one file of its
# own, OPENS times pinned to CPU $WORK_CPU, and prints its rate and how many
# opens of the file it made (1000 warm-up + OPENS); every one must come out
# as a line of the tracer's output file. All three tracers ask for the
# workload's name: opensnoop and bpftrace filter in the kernel; libbpf-tools'
# -n is a substring match in user space, after each event has been sent.
OPEN_FILE=$TMP/openbench.file
: >"$OPEN_FILE"
LT_OPENSNOOP=$(dpkg -L libbpf-tools 2>/dev/null | grep -m1 '/opensnoop$' || command -v opensnoop || true)
# shellcheck disable=SC2034	# start_open_tracer takes it by name
BPFTRACE_OPENS='BEGIN { printf("attached\n"); }
tracepoint:syscalls:sys_enter_openat /comm == "openbench"/ { @f[tid] = args->filename; }
tracepoint:syscalls:sys_exit_openat /@f[tid]/ { printf("%d %s %d %s\n", pid, comm, args->ret, str(@f[tid])); delete(@f[tid]); }'

# key | name | how to tell it attached | command (empty: untraced).
# err:TEXT, out:TEXT: TEXT on its stderr, stdout; epoll: it waits in its
# event loop (libbpf-tools' opensnoop prints its header to a block-buffered
# stdout, which a file does not see until 4 KiB have gathered; it enters
# its perf buffer loop right after attaching).
OPEN_CONDITIONS=(
	"untraced|untraced||"
	"opensnoop|opensnoop -n openbench|err:Hit Ctrl-C|$BUILD/opensnoop -n openbench"
)
if [ -n "$LT_OPENSNOOP" ]; then
	OPEN_CONDITIONS+=("lt|libbpf-tools opensnoop -n openbench|epoll|$LT_OPENSNOOP -n openbench")
else
	echo "bench: libbpf-tools has no opensnoop: no row for it" >&2
fi
OPEN_CONDITIONS+=("bt|bpftrace one-liner (openat, printf per open)|out:attached|bpftrace -e BPFTRACE_OPENS")
OPEN_PEER_ROWS="lt bt"
# Rows that print no event per open: their cost against two empty programs
# on the same tracepoints (the issue's target: within 1.5x of them).
OPEN_CONDITIONS+=(
	"ofloor|floor (2 empty programs on openat)|err:attached|$B/loader $B/openfloor.bpf.o"
	"count|opensnoop -C -n openbench|err:Hit Ctrl-C|$BUILD/opensnoop -C -n openbench"
	"latency|opensnoop -L -n openbench|err:Hit Ctrl-C|$BUILD/opensnoop -L -n openbench"
)
OPEN_AGGREGATES="count latency"
# Start-up rows next to readlat's: the name filter keeps their output quiet.
STARTUP=("${STARTUP[0]}" "opensnoop -n openbench|Hit Ctrl-C|$BUILD/opensnoop -n openbench"
	${LT_OPENSNOOP:+"libbpf-tools opensnoop -n openbench|PATH|stdbuf -oL $LT_OPENSNOOP -n openbench"}
	"${STARTUP[@]:1}")

case $(uname -m) in
x86_64) EPOLL_NRS="232 281 441" ;;
aarch64) EPOLL_NRS="22 441" ;;
*) EPOLL_NRS="" ;;
esac
# in_epoll PID: it waits in epoll_wait/epoll_pwait/epoll_pwait2.
in_epoll() {
	local nr
	[ "$(cat "/proc/$1/wchan" 2>/dev/null)" = do_epoll_wait ] && return 0
	read -r nr _ <"/proc/$1/syscall" 2>/dev/null || return 1
	[[ " $EPOLL_NRS " == *" $nr "* ]]
}

# start_open_tracer CMD HOW: background it, stdout to os.out and stderr to
# os.err (files), wait until it attached (HOW: as OPEN_CONDITIONS say, or
# sleep: it waits in nanosleep, between reports).
start_open_tracer() {
	local cmd=$1 how=$2 i prog
	: >"$TMP/os.out"
	: >"$TMP/os.err"
	if [[ $cmd == "bpftrace -e BPFTRACE_"* ]]; then
		prog=${cmd#bpftrace -e }
		bpftrace -e "${!prog}" >"$TMP/os.out" 2>"$TMP/os.err" &
	else
		$cmd >"$TMP/os.out" 2>"$TMP/os.err" &
	fi
	TRACER=$!
	for ((i = 0; i < 2000; i++)); do
		case $how in
		err:*) grep -q -- "${how#err:}" "$TMP/os.err" && return 0 ;;
		out:*) grep -q -- "${how#out:}" "$TMP/os.out" && return 0 ;;
		epoll) in_epoll "$TRACER" && return 0 ;;
		sleep) in_nanosleep "$TRACER" && return 0 ;;
		esac
		kill -0 "$TRACER" 2>/dev/null || break
		sleep 0.005
	done
	echo "bench: '$cmd' did not attach" >&2
	cat "$TMP/os.err" >&2
	return 1
}

# wait_quiet FILE: until FILE has not grown for 200 ms (10 s at most): the
# tracer has written what it had, and SIGINT loses nothing still queued.
wait_quiet() {
	local last=-1 size same=0 i
	for ((i = 0; i < 200 && same < 4; i++)); do
		size=$(stat -c %s "$1")
		if [ "$size" = "$last" ]; then same=$((same + 1)); else same=0 last=$size; fi
		sleep 0.05
	done
}

# own_lost: the losses the tracer reported itself (opensnoop's closing
# "N lost", libbpf-tools' "Lost N events on CPU #c", bpftrace's "Lost N
# events"), summed; "-" if it reported none.
own_lost() {
	{ grep -h -v -F -- "$OPEN_FILE" "$TMP/os.out" "$TMP/os.err" |
		grep -oE '[0-9]+ lost|Lost [0-9]+ events' | grep -oE '[0-9]+' || true; } |
		awk '{ s += $1 } END { print (NR ? s : "-") }'
}

# measure_opens: REPS rounds, every condition once per round in a rotated
# order; opens.raw gets "round key opens/s made delivered own_lost".
measure_opens() {
	local r c n=${#OPEN_CONDITIONS[@]} k key name how cmd res got own
	for ((r = 0; r < REPS; r++)); do
		for ((k = 0; k < n; k++)); do
			c=$(((k + r) % n))
			IFS='|' read -r key name how cmd <<<"${OPEN_CONDITIONS[$c]}"
			[ -z "$cmd" ] || start_open_tracer "$cmd" "$how"
			res=$(taskset -c $WORK_CPU "$B/openbench" "$OPEN_FILE" "$OPENS")
			got=- own=-
			if [ -n "$cmd" ] && [[ " ofloor $OPEN_AGGREGATES " == *" $key "* ]]; then
				stop_tracer
			elif [ -n "$cmd" ]; then
				wait_quiet "$TMP/os.out"
				stop_tracer
				got=$(grep -c -F -- "$OPEN_FILE" "$TMP/os.out" || true)
				own=$(own_lost)
			fi
			echo "$r $key $res $got $own" >>"$TMP/opens.raw"
		done
	done
}

# opens_col KEY FIELD: FIELD (3 rate, 4 made, 5 delivered, 6 own) of
# KEY's runs; opens_x KEY: per round, KEY's rate over the round's untraced.
opens_col() { awk -v c="$1" -v f="$2" '$1 != "" && $2 == c { print $f }' "$TMP/opens.raw" 2>/dev/null; }
opens_x() {
	awk -v c="$1" '$2 == "untraced" { b[$1] = $3 } $2 == c { v[$1] = $3 }
		END { for (r in v) if (b[r] > 0) print v[r] / b[r] }' "$TMP/opens.raw" 2>/dev/null | median
}
# opens_lost KEY: per run, opens made - lines delivered.
opens_lost() { awk -v c="$1" '$2 == c && $5 != "-" { print $4 - $5 }' "$TMP/opens.raw" 2>/dev/null; }

# opens_added KEY: per round, ns per open over the round's untraced.
opens_added() {
	awk -v c="$1" '$2 == "untraced" { b[$1] = $3 } $2 == c { v[$1] = $3 }
		END { for (r in v) if (b[r] > 0 && v[r] > 0) print 1e9 / v[r] - 1e9 / b[r] }' "$TMP/opens.raw" 2>/dev/null | median
}

# The modes that aggregate in the kernel, against the open floor.
opens_aggregate_table() {
	local f key a x
	f=$(opens_added ofloor)
	echo "| condition | added ns per open (median) | × floor |"
	echo "|---|---:|---:|"
	echo "| floor (2 empty programs on openat) | $(printf '%.0f' "${f:-0}") | 1.00 |"
	for key in $OPEN_AGGREGATES; do
		a=$(opens_added "$key")
		x=$(awk -v a="$a" -v f="$f" 'BEGIN { if (f > 0 && a != "") printf "%.2f", a / f }')
		echo "| $(open_row_name "$key") | $(printf '%.0f' "${a:-0}") | ${x:-n/a} |"
	done
}

opens_table() {
	local c key name x l own
	echo "| condition | opens/s (median) | × untraced | opens per run | lines delivered (median) | runs with lost events | lost, worst run | own lost count, worst run |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	for c in "${OPEN_CONDITIONS[@]}"; do
		IFS='|' read -r key name _ <<<"$c"
		[[ " ofloor $OPEN_AGGREGATES " == *" $key "* ]] && continue
		if [ "$key" = untraced ]; then
			printf '| %s | %s | - | %s | - | - | - | - |\n' "$name" "$(ns "$(opens_col untraced 3 | median)")" \
				"$(opens_col untraced 4 | head -1)"
			continue
		fi
		x=$(opens_x "$key")
		l=$(opens_lost "$key")
		own=$(opens_col "$key" 6 | awk '$1 != "-"' | sort -g | tail -1)
		printf '| %s | %s | %s | %s | %s | %s of %s | %s | %s |\n' "$name" "$(ns "$(opens_col "$key" 3 | median)")" \
			"$(if [ -n "$x" ]; then printf '%.2f' "$x"; else echo n/a; fi)" "$(opens_col "$key" 4 | head -1)" \
			"$(ns "$(opens_col "$key" 5 | median)")" "$(awk '$1 > 0' <<<"$l" | grep -c . || true)" \
			"$(grep -c . <<<"$l" || true)" "$(sort -g <<<"$l" | tail -1)" "${own:-none reported}"
	done
}

# Low rate: one open, then the time until its line is in the output file
# (openbench -w reads the file every 1 ms). lat.<key> gets one ms per run,
# -1 when none came within 5 s.
measure_latency() {
	local key=$1 cmd=$2 how=$3 runs=$4 i
	for ((i = 0; i < runs; i++)); do
		start_open_tracer "$cmd" "$how"
		taskset -c $WORK_CPU "$B/openbench" -w "$TMP/os.out" "$OPEN_FILE" >>"$TMP/lat.$key" || true
		stop_tracer
	done
}
# lat KEY median|max: over the runs, a run without the line counting as
# the longest; "none within 5 s" if that is the answer.
lat() {
	{ cat "$TMP/lat.$1" 2>/dev/null || true; } | awk '{ print ($1 < 0 ? 1e9 : $1) }' | { if [ "$2" = max ]; then sort -g | tail -1; else median; fi; } |
		awk '{ if ($1 >= 1e9) print "none within 5 s"; else printf "%.1f\n", $1 }'
}

latency_table() {
	echo "| tracer, output to a file | runs | open → line in the file, ms (median) | worst run, ms |"
	echo "|---|---:|---:|---:|"
	echo "| opensnoop -n openbench | $LAT_RUNS | $(lat opensnoop median) | $(lat opensnoop max) |"
	echo "| bpftrace one-liner | $BT_LAT_RUNS | $(lat bt median) | $(lat bt max) |"
}

opens_targets() {
	local x l own best name k p a
	x=$(opens_x opensnoop)
	x=${x:+$(printf '%.2f' "$x")}
	echo "| opensnoop -n openbench, open rate × untraced ($OPENS opens, output to a file) | ≥ 0.75 | ${x:-n/a} | $(verdict_ge "${x:-n/a}" 0.75) |"
	l=$(opens_lost opensnoop | awk '{ s += $1 } END { if (NR) print s }')
	echo "| opensnoop lost events at the default buffer, all $REPS runs (opens made − lines delivered) | 0 | ${l:-n/a} | $(verdict "${l:-n/a}" 0) |"
	own=$(opens_col opensnoop 6 | awk '$1 != "-" { s += $1; n++ } END { if (n) print s }')
	echo "| opensnoop's own lost count, all $REPS runs | 0 | ${own:-n/a} | $(verdict "${own:-n/a}" 0) |"
	best='' name=''
	for k in $OPEN_PEER_ROWS; do
		p=$(opens_x "$k")
		[ -n "$p" ] || continue
		if [ -z "$best" ] || awk -v p="$p" -v b="$best" 'BEGIN { exit !(p > b) }'; then
			best=$p name=$(open_row_name "$k")
		fi
	done
	echo "| opensnoop ahead of both peers: × untraced, above the best peer's | > $(if [ -n "$best" ]; then printf '%.2f' "$best"; else echo n/a; fi) ($name) | ${x:-n/a} |" \
		"$(if [ -z "$x" ] || [ -z "$best" ]; then echo n/a; else awk -v a="$x" -v b="$best" 'BEGIN { print (a > b ? "met" : "**missed**") }'; fi) |"
	for key in $OPEN_AGGREGATES; do
		x=$(awk -v a="$(opens_added "$key")" -v f="$(opens_added ofloor)" \
			'BEGIN { if (f > 0 && a != "") printf "%.2f", a / f }')
		echo "| $(open_row_name "$key"): added cost per open, × the open floor | 1.5 | ${x:-n/a} | $(verdict "${x:-n/a}" 1.5) |"
	done
	a=$(lat opensnoop median)
	[[ $a != none* ]] || a=5000
	echo "| opensnoop, one open at a low rate → its line in the output file, ms (median of $LAT_RUNS) | 100 | ${a:-n/a} | $(verdict "${a:-n/a}" 100) |"
	budget_rows opensnoop
}

open_row_name() { cond_name OPEN_CONDITIONS "$1"; }

# budget_rows TOOL [binary]: TOOL's start-up and peak RSS targets (from
# the start-up table's $TMP/st.TOOL), and with "binary" its size.
budget_rows() {
	local a
	st_f() { grep -oE "$1=[-0-9.]+" "$TMP/st.$2" 2>/dev/null | cut -d= -f2 | median; }
	a=$(st_f attach_ms "$1")
	echo "| $1 start-up to attached, ms | 40 | ${a:-n/a} | $(verdict "${a:-n/a}" 40) |"
	a=$(st_f rss_kb "$1")
	a=${a:+$(awk -v k="$a" 'BEGIN { printf "%.1f", k / 1024 }')}
	echo "| $1 peak RSS, MiB | 8 | ${a:-n/a} | $(verdict "${a:-n/a}" 8) |"
	[ "${2:-}" = binary ] || return 0
	strip -o "$TMP/stripped" "$BUILD/$1"
	a=$(stat -c %s "$TMP/stripped" | awk '{ printf "%.2f", $1 / 1048576 }')
	echo "| $1 static binary, stripped, MiB | 2 | $a | $(verdict "$a" 2) |"
}

# verdict VALUE LIMIT: "met" if VALUE <= LIMIT (no value: n/a)
verdict() {
	case $1 in
	'' | n/a) echo n/a ;;
	*) awk -v v="$1" -v l="$2" 'BEGIN { print (v <= l ? "met" : "**missed**") }' ;;
	esac
}
# verdict_ge VALUE LIMIT: "met" if VALUE >= LIMIT
verdict_ge() {
	case $1 in
	'' | n/a) echo n/a ;;
	*) awk -v v="$1" -v l="$2" 'BEGIN { print (v >= l ? "met" : "**missed**") }' ;;
	esac
}

# The filter a filtered-out row asks for, from its key.
filter_flag() { case $1 in pid) echo "-p OTHER" ;; name) echo "-n OTHER" ;; cgroup) echo "-c OTHER" ;; esac; }

# readlat_targets: readlat's per-read rows of the targets table.
readlat_targets() {
	local src r f a k p best name
	for src in zero pipe; do
		f=$(added "$src" floor)
		a=$(added "$src" readlat)
		r=$(kernel_ratio "$src" readlat limit)
		echo "| readlat added cost per traced read ($src), × limit | 1.05 | $r (wall clock: $(ratio "$a" "$(added "$src" limit)")) | $(verdict "$r" 1.05) |"
		for k in $FILTER_ROWS; do
			[ -n "$(row_name "$k")" ] || continue
			r=$(kernel_ratio "$src" "$k" floor)
			echo "| filtered-out event, readlat $(filter_flag "$k") ($src), × floor | 1.1 | $r (wall clock: $(ratio "$(added "$src" "$k")" "$f")) | $(verdict "$r" 1.1) |"
		done
		# ahead of every peer: fewer added ns than the cheapest of them
		best='' name=''
		for k in $PEER_ROWS; do
			p=$(added "$src" "$k")
			[ -n "$p" ] || continue
			if [ -z "$best" ] || awk -v p="$p" -v b="$best" 'BEGIN { exit !(p < b) }'; then
				best=$p name=$(row_name "$k")
			fi
		done
		echo "| readlat ahead of every peer ($src): added ns, below the cheapest peer's | < $(ns "$best") ($name) | $(ns "$a") |" \
			"$(if [ -z "$a" ] || [ -z "$best" ]; then echo n/a; else awk -v a="$a" -v b="$best" 'BEGIN { print (a < b ? "met" : "**missed**") }'; fi) |"
	done
}

targets_table() {
	local a
	echo "| target (benchmark issue) | limit | measured | verdict |"
	echo "|---|---:|---:|---|"
	readlat_targets
	st() { grep -oE "$1=[-0-9.]+" "$TMP/st.readlat" | cut -d= -f2 | median; }
	a=$(st attach_ms)
	echo "| readlat start-up to attached, ms | 40 | $a | $(verdict "$a" 40) |"
	a=$(awk -v k="$(st rss_kb)" 'BEGIN { printf "%.1f", k / 1024 }')
	echo "| readlat peak RSS, MiB | 8 | $a | $(verdict "$a" 8) |"
	a=$(st final_ms)
	echo "| final output after SIGINT, ms | 20 | $a | $(verdict "$a" 20) |"
	strip -o "$TMP/stripped" "$BUILD/readlat"
	a=$(stat -c %s "$TMP/stripped" | awk '{ printf "%.2f", $1 / 1048576 }')
	echo "| static binary, stripped, MiB | 2 | $a | $(verdict "$a" 2) |"
	opens_targets
	bio_targets
	tcp_targets
}

# biolat: on a loop device in direct-I/O mode over a file on $TMP, no I/O
# scheduler, bioload makes exactly BIO_READS O_DIRECT 4 KiB reads, BIO_RUNS
# times. In each run biolat -d, libbpf-tools' biolatency -d and a bpftrace
# one-liner trace the same I/O at once, with two controls: the tracepoint's
# own count (a tracefs instance with the event on, filtered to the disk: no
# BPF involved) and bench/blkcount (raw tracepoint programs that only count:
# what the kernel runs BPF programs for). The truth is the disk's
# /sys/block/NAME/stat reads completed. With kernel.bpf_stats_enabled on,
# every tracer's programs' run_time_ns/run_cnt give its cost per I/O.
BIO_RUNS=${BIO_RUNS:-5}
BIO_READS=20000
BIO_MB=96	# BIO_READS 4 KiB reads fit once: distinct offsets
BIOLOAD=$BUILD/tests/bioload
LT_BIOLATENCY=$(dpkg -L libbpf-tools 2>/dev/null | grep -m1 '/biolatency$' || command -v biolatency || true)
BIO_NAME='' BIO_MAJMIN='' BIO_DEV=0 BIO_WHY=''
BIO_TOOLS="bl lt bt"	# biolat, libbpf-tools, bpftrace: columns and rows in this order

# bio_setup: the loop device and the tracefs instance; BIO_WHY says why not.
bio_setup() {
	local out maj min
	command -v losetup >/dev/null || { BIO_WHY="no losetup (util-linux)"; return 1; }
	[ -x "$BIOLOAD" ] || { BIO_WHY="no $BIOLOAD (make workloads)"; return 1; }
	# Written, not fallocated: ext4 answers direct reads of unwritten
	# extents with zeros and sends nothing to the disk below.
	dd if=/dev/zero of="$TMP/bio.img" bs=1M count=$BIO_MB conv=fsync status=none ||
		{ BIO_WHY="cannot write $TMP/bio.img"; return 1; }
	out=$(losetup --direct-io=on --find --show "$TMP/bio.img" 2>&1) ||
		{ BIO_WHY="losetup: $out"; return 1; }
	BIO_LOOP=$out BIO_NAME=${out#/dev/}
	# udev probes a new device (blkid reads it): let that finish first.
	! command -v udevadm >/dev/null || udevadm settle --timeout=10 || true
	[ ! -w "/sys/block/$BIO_NAME/queue/scheduler" ] || echo none >"/sys/block/$BIO_NAME/queue/scheduler"
	IFS=: read -r maj min <"/sys/block/$BIO_NAME/dev"
	BIO_MAJMIN=$maj:$min BIO_DEV=$((maj << 20 | min))
	out=/sys/kernel/tracing/instances/bench-biolat.$$
	if mkdir "$out" 2>/dev/null; then
		BIO_TRACEFS=$out
		echo 0 >"$out/tracing_on"
		echo 8192 >"$out/buffer_size_kb"
		echo "dev == $BIO_DEV" >"$out/events/block/block_rq_complete/filter"
		echo 1 >"$out/events/block/block_rq_complete/enable"
	fi
}

# reads_done: the loop device's reads completed, from its stat.
reads_done() { awk '{ print $1 }' "/sys/block/$BIO_NAME/stat"; }

# wait_for FILE PATTERN PID [SECONDS]: until FILE has PATTERN (0), PID has
# exited or SECONDS (default 10) have passed (1).
wait_for() {
	local i
	for ((i = 0; i < ${4:-10} * 200; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.005
	done
	return 1
}

# await_exit PID: after SIGINT, as stop_tracer: again at 5 s, SIGKILL at 10 s.
await_exit() {
	local i
	for ((i = 0; i < 1000; i++)); do
		kill -0 "$1" 2>/dev/null || break
		[ $i -eq 500 ] && kill -INT "$1" 2>/dev/null
		sleep 0.01
	done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# prog_stats PID: "name/id run_time_ns run_cnt recursion_misses" of each
# BPF program PID holds.
prog_stats() {
	local id t c m
	prog_counters "$1" | while read -r id t c m; do
		echo "$(bpftool prog show id "$id" -j 2>/dev/null | jq -r '.name // empty' || true)/$id $t $c $m"
	done
}

# The counts each tracer ends with: biolat's count (JSON), the sum of
# libbpf-tools' buckets, the sum of bpftrace's hist buckets (JSON).
count_bl() { { grep '^{' "$1" || true; } | jq -s '[.[] | select(.count != null) | .count] | add // empty' 2>/dev/null || true; }
# What biolat accounts for: counted + lost (completions the kernel ran no
# program for, found when their request is issued again) + unfinished.
accounted_bl() {
	{ grep '^{' "$1" || true; } |
		jq -s '([.[] | select(.count != null) | .count + .lost] | add // 0) +
			([.[] | select(.unfinished != null) | .unfinished] | add // 0)' 2>/dev/null || echo -
}
count_lt() { awk -F: '/ -> / { split($2, a, " "); s += a[1]; n++ } END { if (n) print s }' "$1"; }
count_bt() { { grep '^{' "$1" || true; } | jq -s '[.[] | select(.type == "hist") | .data[][] | .count] | add // 0' 2>/dev/null || true; }

# bio_run R: one run; bio.counts gets "R stat tracefs control misses bl lt
# bt" ("-" where a tracer did not run), bio.progs "R tool name/id ns runs
# misses" per program.
bio_run() {
	local r=$1 t wl s0 s1 tf=- ctl=- miss=-
	local -A pids=() got=()
	# attached KEY FILE PATTERN: wait for it; one that did not attach is
	# ended and left out of the run
	attached() {
		[ -n "${pids[$1]:-}" ] || return 0
		wait_for "$2" "$3" "${pids[$1]}" && return 0
		kill -KILL "${pids[$1]}" 2>/dev/null || true
		wait "${pids[$1]}" 2>/dev/null || true
		pids[$1]=''
	}
	rm -f "$TMP/bio.go" "$TMP/bio.hold"
	"$B/blkcount" "$BIO_MAJMIN" >"$TMP/bio.ctl" 2>"$TMP/bio.ctl.err" &
	pids[ctl]=$!
	"$BUILD/biolat" -d "$BIO_NAME" -j >"$TMP/bio.bl" 2>&1 &
	pids[bl]=$!
	if [ -n "$LT_BIOLATENCY" ]; then
		stdbuf -oL "$LT_BIOLATENCY" -d "$BIO_NAME" >"$TMP/bio.lt" 2>&1 &
		pids[lt]=$!
	fi
	bpftrace -f json -e "$BPFTRACE_BIO" >"$TMP/bio.bt" 2>&1 &
	pids[bt]=$!
	attached ctl "$TMP/bio.ctl.err" attached
	attached bl "$TMP/bio.bl" "Hit Ctrl-C"
	attached lt "$TMP/bio.lt" "Hit Ctrl-C"
	attached bt "$TMP/bio.bt" '"data": "attached'
	"$BIOLOAD" --dev "$BIO_LOOP" --direct --reads $BIO_READS --size 4096 \
		--go "$TMP/bio.go" --hold "$TMP/bio.hold" >"$TMP/bio.wl" 2>&1 &
	wl=$! BIO_WL=$!
	wait_for "$TMP/bio.wl" pid= "$wl" || true
	s0=$(reads_done)
	if [ -n "$BIO_TRACEFS" ]; then echo >"$BIO_TRACEFS/trace"; echo 1 >"$BIO_TRACEFS/tracing_on"; fi
	touch "$TMP/bio.go"
	wait_for "$TMP/bio.wl" '^done' "$wl" 120 || echo "bench: bioload: $(cat "$TMP/bio.wl")" >&2
	s1=$(reads_done)
	if [ -n "$BIO_TRACEFS" ]; then
		echo 0 >"$BIO_TRACEFS/tracing_on"
		# a full buffer drops events: then the count says nothing
		grep -q '^overrun: [1-9]' "$BIO_TRACEFS"/per_cpu/cpu*/stats ||
			tf=$(grep -c 'block_rq_complete:' "$BIO_TRACEFS/trace" || true)
	fi
	for t in $BIO_TOOLS ctl; do
		[ -z "${pids[$t]:-}" ] || prog_stats "${pids[$t]}" | sed "s/^/$r $t /" >>"$TMP/bio.progs"
	done
	touch "$TMP/bio.hold"
	wait "$wl" 2>/dev/null || true
	BIO_WL=''
	for t in ctl $BIO_TOOLS; do [ -z "${pids[$t]:-}" ] || kill -INT "${pids[$t]}" 2>/dev/null || true; done
	for t in ctl $BIO_TOOLS; do [ -z "${pids[$t]:-}" ] || await_exit "${pids[$t]}"; done
	if [ -n "${pids[ctl]}" ]; then
		ctl=$(sed -n 's/.*completed=\([0-9]*\).*/\1/p' "$TMP/bio.ctl")
		miss=$(sed -n 's/.*misses=\([0-9]*\).*/\1/p' "$TMP/bio.ctl")
	fi
	for t in $BIO_TOOLS; do
		got[$t]=-
		[ -z "${pids[$t]:-}" ] || got[$t]=$("count_$t" "$TMP/bio.$t")
		[ -n "${got[$t]}" ] || got[$t]=-
		# a tracer that did not run: its first error line, verbatim
		[ -n "${pids[$t]:-}" ] || [ -s "$TMP/bio.$t.why" ] || [ ! -s "$TMP/bio.$t" ] ||
			grep -m1 -iE 'error|fail|denied|not supported|invalid' "$TMP/bio.$t" >"$TMP/bio.$t.why" ||
			head -1 "$TMP/bio.$t" >"$TMP/bio.$t.why"
	done
	# biolat's own word on what it did not count
	grep -hE 'not counted|dropped' "$TMP/bio.bl" >>"$TMP/bio.bl.said" || true
	echo "$r $((s1 - s0)) $tf ${ctl:--} ${miss:--} ${got[bl]} ${got[lt]} ${got[bt]} $(accounted_bl "$TMP/bio.bl")" >>"$TMP/bio.counts"
}

bio_measure() {
	local r
	: >"$TMP/bio.counts"
	: >"$TMP/bio.progs"
	BPF_STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -q kernel.bpf_stats_enabled=1
	for ((r = 1; r <= BIO_RUNS; r++)); do bio_run "$r"; done
	sysctl -q kernel.bpf_stats_enabled="$BPF_STATS_WAS"
	BPF_STATS_WAS=''
}

bio_tool_name() {
	case $1 in
	bl) echo "biolat -d $BIO_NAME" ;;
	lt) echo "libbpf-tools biolatency -d $BIO_NAME" ;;
	bt) echo "bpftrace one-liner" ;;
	ctl) echo "control: raw_tp count programs (bench/blkcount)" ;;
	esac
}

bio_counts_table() {
	local r st tf ctl miss bl lt bt acc
	echo "| run | reads completed (stat) | biolat | biolat + lost + unfinished | libbpf-tools | bpftrace | tracepoint fired (tracefs) | raw_tp count program | its misses |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	while read -r r st tf ctl miss bl lt bt acc; do
		echo "| $r | $st | $bl | $acc | $lt | $bt | $tf | $ctl | $miss |"
	done <"$TMP/bio.counts"
	# runs short of stat, per column
	awk '{ for (i = 3; i <= 9; i++) if (i != 5) { if ($i == "-") na[i]++; else if ($i < $2) s[i]++; else if ($i > $2) o[i]++ } }
		END { printf "| short of stat / over / n/a | runs | %d / %d / %d | %d / %d / %d | %d / %d / %d | %d / %d / %d | %d / %d / %d | %d / %d / %d | |\n",
			s[6], o[6], na[6], s[9], o[9], na[9], s[7], o[7], na[7], s[8], o[8], na[8], s[3], o[3], na[3], s[4], o[4], na[4] }' "$TMP/bio.counts"
}

# bio_cost TOOL: per run, the sum over the tool's programs that ran at
# least once per I/O of run_time_ns/run_cnt; the median over runs.
bio_cost() {
	awk -v t="$1" 'NR == FNR { io[$1] = $2; next }
		$2 == t && $5 > 0 && $5 >= io[$1] { s[$1] += $4 / $5 } END { for (r in s) print s[r] }' \
		"$TMP/bio.counts" "$TMP/bio.progs" | median
}

bio_cost_table() {
	local t progs
	echo "| tracer | its programs: ns per run (median over runs), runs in run 1 | ns per I/O (sum) | runs the kernel skipped (misses), all runs |"
	echo "|---|---|---:|---:|"
	for t in $BIO_TOOLS ctl; do
		progs=$(awk -v t="$t" 'NR == FNR { io[$1] = $2; next } $2 == t && $5 > 0 && $5 >= io[$1] {
				split($3, n, "/"); print n[1], $4 / $5, ($1 == 1 ? $5 : "") }' "$TMP/bio.counts" "$TMP/bio.progs" |
			sort -k1,1 -s | awk '{ v[$1] = v[$1] " " $2; if ($3 != "") c[$1] = $3 } END { for (k in v) print k, c[k], v[k] }' | sort |
			while read -r name cnt vals; do
				printf '%s %.0f ns (%s), ' "$name" "$(tr ' ' '\n' <<<"$vals" | median)" "${cnt:-?}"
			done)
		printf '| %s | %s | %s | %s |\n' "$(bio_tool_name "$t")" "${progs%, }" "$(ns "$(bio_cost "$t")")" \
			"$(awk -v t="$t" '$2 == t { m += $6; n++ } END { print (n ? m : "n/a") }' "$TMP/bio.progs")"
	done
}

# A tracer that never ran, and why (its first error line, verbatim).
bio_notes() {
	local t
	for t in $BIO_TOOLS; do
		[ ! -s "$TMP/bio.$t.why" ] || echo "- $(bio_tool_name "$t") did not run: \`$(head -1 "$TMP/bio.$t.why")\`"
	done
	[ ! -s "$TMP/bio.bl.said" ] || echo "- biolat said: $(sort -u "$TMP/bio.bl.said" | paste -sd ';' -)"
	awk -v runs="$BIO_RUNS" '$3 != "-" && $4 != "-" && $4 < $3 { n++; d += $3 - $4; m += $5 }
		END { if (n) printf "- In %d of %d runs the tracepoint fired for %d completions in all that the raw_tp count program did not see, with %d recursion misses: the kernel ran no BPF program for them. No tracer on BPF can count those; the fair bar is the count program'"'"'s number.\n", n, runs, d, m }' \
		"$TMP/bio.counts"
}

bio_targets() {
	local a short
	short=$(awk '$6 == "-" || $6 != $2' "$TMP/bio.counts" 2>/dev/null | grep -c . || true)
	echo "| biolat -d: count = reads completed (stat), every one of $BIO_RUNS runs of $BIO_READS reads | $BIO_RUNS of $BIO_RUNS | $((BIO_RUNS - short)) of $BIO_RUNS |" \
		"$(if [ "$short" = 0 ]; then echo met; else echo '**missed**'; fi) |"
	short=$(awk '$9 == "-" || $9 != $2' "$TMP/bio.counts" 2>/dev/null | grep -c . || true)
	echo "| biolat -d: count + lost + unfinished = reads completed (stat): nothing silent, every run | $BIO_RUNS of $BIO_RUNS | $((BIO_RUNS - short)) of $BIO_RUNS |" \
		"$(if [ "$short" = 0 ]; then echo met; else echo '**missed**'; fi) |"
	short=$(awk '$6 == "-" || $4 == "-" || $6 != $4' "$TMP/bio.counts" 2>/dev/null | grep -c . || true)
	echo "| biolat -d: count = the raw_tp count program's, every run (all BPF was given) | $BIO_RUNS of $BIO_RUNS | $((BIO_RUNS - short)) of $BIO_RUNS |" \
		"$(if [ "$short" = 0 ]; then echo met; else echo '**missed**'; fi) |"
	budget_rows biolat binary
}

# tcprcv: tcpload pair moves TCP_BYTES over 127.0.0.1 in TCP_CHUNK-byte
# writes from a parent to its forked child, both pinned to CPU $WORK_CPU,
# TCP_RUNS rounds; each round runs every condition once, in a rotated
# order, and × untraced is the median over rounds of the rate over the same
# round's untraced rate. kernel.bpf_stats_enabled is on: each tracer's
# programs' run time and runs, read just before and just after the
# transfer, give what the transfer cost in BPF. tcprcv -j's per-interval
# rows, summed per process, must give the reader exactly the bytes sent.
TCP_RUNS=${TCP_RUNS:-5}
TCP_BYTES=${TCP_BYTES:-1G}
TCP_CHUNK=1024
TCPLOAD=$BUILD/tests/tcpload
LT_TCPTOP=$(dpkg -L libbpf-tools 2>/dev/null | grep -m1 '/tcptop$' || command -v tcptop || true)
# What a user writes (bpftrace 0.17: args->): segments and bytes per comm.
# shellcheck disable=SC2034	# start_open_tracer and startup_table take it by name
BPFTRACE_TCP='BEGIN { printf("attached\n"); }
tracepoint:tcp:tcp_probe { @segs[comm] = count(); @bytes[comm] = sum(args->data_len); }'
# key | name | how to tell it attached (as start_open_tracer) | command
TCP_CONDITIONS=(
	"untraced|untraced||"
	"ctl|control: tracepoint counters alone (bench/tcpcount)|err:attached|$B/tcpcount"
	"tr|tcprcv -j (table mode, a report every 1 s)|err:Hit Ctrl-C|$BUILD/tcprcv -j"
	"trl|tcprcv -L|err:Hit Ctrl-C|$BUILD/tcprcv -L"
	"bt|bpftrace one-liner (tcp_probe: count, sum(data_len) per comm)|out:attached|bpftrace -e BPFTRACE_TCP"
)
TCP_LT_WHY=''	# why libbpf-tools' tcptop has no row

# tcp_setup: libbpf-tools' tcptop joins the rounds if it starts here (it
# attaches, then sleeps an interval between reports); else TCP_LT_WHY
# gets its own last line, its exit status and libbpf's first word on it.
tcp_setup() {
	local pid i rc=0
	[ -n "$LT_TCPTOP" ] || { TCP_LT_WHY="libbpf-tools has no tcptop"; return; }
	"$LT_TCPTOP" -C 3600 >"$TMP/tcptop.out" 2>&1 &
	pid=$!
	for ((i = 0; i < 400; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		in_nanosleep "$pid" && break
		sleep 0.005
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -INT "$pid" 2>/dev/null || true
		await_exit "$pid"
		TCP_CONDITIONS+=("lt|libbpf-tools tcptop -C 3600|sleep|$LT_TCPTOP -C 3600")
		return
	fi
	wait "$pid" || rc=$?
	TCP_LT_WHY="fails to start (exit $rc): \`$(grep -v '^libbpf:' "$TMP/tcptop.out" | tail -1)\`"
	! grep -q '^libbpf:' "$TMP/tcptop.out" ||
		TCP_LT_WHY+=", after \`$(grep -m1 '^libbpf:' "$TMP/tcptop.out")\`"
}

# in_nanosleep PID: it waits in nanosleep/clock_nanosleep.
in_nanosleep() {
	local nr
	[[ "$(cat "/proc/$1/wchan" 2>/dev/null)" == *nanosleep* ]] && return 0
	{ read -r nr _ <"/proc/$1/syscall"; } 2>/dev/null || return 1
	case $(uname -m) in
	x86_64) [ "$nr" = 35 ] || [ "$nr" = 230 ] ;;
	aarch64) [ "$nr" = 101 ] || [ "$nr" = 115 ] ;;
	*) return 1 ;;
	esac
}

# tcp_run R KEY HOW CMD: one transfer under one condition; tcp.raw gets
# "R key mbps seconds", tcp.progs "R key name/id ns runs misses" per
# program, for the transfer alone.
tcp_run() {
	local r=$1 key=$2 how=$3 cmd=$4 res
	if [ -n "$cmd" ]; then
		if ! start_open_tracer "$cmd" "$how"; then
			stop_tracer
			return
		fi
		prog_stats "$TRACER" >"$TMP/tcp.before"
	fi
	res=$(taskset -c $WORK_CPU "$TCPLOAD" pair "$TCP_BYTES" --chunk $TCP_CHUNK 2>&1) ||
		{ echo "bench: tcpload pair: $res" >&2; res=''; }
	if [ -n "$cmd" ]; then
		prog_stats "$TRACER" >"$TMP/tcp.after"
		stop_tracer
		awk -v p="$r $key" 'NR == FNR { t[$1] = $2; c[$1] = $3; m[$1] = $4; next }
			{ print p, $1, $2 - t[$1], $3 - c[$1], $4 - m[$1] }' "$TMP/tcp.before" "$TMP/tcp.after" >>"$TMP/tcp.progs"
	fi
	[ -n "$res" ] || return 0
	[ "$key" != tr ] || tcp_exact "$r" "$(sed -n 's/.*bytes=\([0-9]*\).*/\1/p' <<<"$res")"
	echo "$r $key $(sed -n 's/.*mbps=\([0-9.]*\).*/\1/p' <<<"$res")" \
		"$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$res")" >>"$TMP/tcp.raw"
}

# tcp_exact R SENT: tcprcv -j prints one object per interval; per process,
# its "read" summed over them. tcp.exact gets "R sent reader total lost":
# the tcpload process whose sum is nearest the bytes sent (the reader:
# exactly those), every process's read, and what tcprcv reported lost.
tcp_exact() {
	{ grep '^{' "$TMP/os.out" || true; } | jq -rs --argjson s "$2" --arg r "$1" '
		([.[].rows[] | select(.comm == "tcpload")] | group_by(.pid) | map(map(.read) | add)
			| min_by(. - $s | if . < 0 then -. else . end) // 0) as $reader
		| "\($r) \($s) \($reader) \(map(.read) | add // 0) \(map(.lost) | add // 0)"' >>"$TMP/tcp.exact"
}

tcp_measure() {
	local r k c key name how cmd
	: >"$TMP/tcp.raw"
	: >"$TMP/tcp.progs"
	: >"$TMP/tcp.exact"
	BPF_STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -q kernel.bpf_stats_enabled=1
	for ((r = 1; r <= TCP_RUNS; r++)); do
		for ((k = 0; k < ${#TCP_CONDITIONS[@]}; k++)); do
			c=$(((k + r) % ${#TCP_CONDITIONS[@]}))
			IFS='|' read -r key name how cmd <<<"${TCP_CONDITIONS[$c]}"
			tcp_run "$r" "$key" "$how" "$cmd"
		done
	done
	sysctl -q kernel.bpf_stats_enabled="$BPF_STATS_WAS"
	BPF_STATS_WAS=''
}

tcp_row_name() { cond_name TCP_CONDITIONS "$1"; }

# tcp_col KEY FIELD: FIELD (3 MB/s, 4 seconds) of KEY's runs;
# tcp_ratios KEY: per round, KEY's rate over the round's untraced, in
# round order; tcp_x KEY: their median, to 2 places ("" if none).
tcp_col() { awk -v c="$1" -v f="$2" '$2 == c { print $f }' "$TMP/tcp.raw" 2>/dev/null; }
tcp_ratios() {
	awk -v c="$1" '$2 == "untraced" { b[$1] = $3 } $2 == c { v[$1] = $3 }
		END { for (r in v) if (b[r] > 0) printf "%d %.3f\n", r, v[r] / b[r] }' "$TMP/tcp.raw" 2>/dev/null |
		sort -n | cut -d' ' -f2
}
tcp_x() { tcp_ratios "$1" | median | awk '{ printf "%.2f", $1 }'; }

tcp_table() {
	local c key name x
	echo "| condition | MB/s (median) | × untraced (median) | × untraced, round by round |"
	echo "|---|---:|---:|---|"
	for c in "${TCP_CONDITIONS[@]}"; do
		IFS='|' read -r key name _ <<<"$c"
		if [ "$key" = untraced ]; then
			echo "| $name | $(tcp_col untraced 3 | median) | 1.00 | - |"
			continue
		fi
		x=$(tcp_x "$key")
		echo "| $name | $(tcp_col "$key" 3 | median) | ${x:-n/a} | $(tcp_ratios "$key" | awk '{ printf "%.2f\n", $1 }' | paste -sd ' ') |"
	done
	[ -z "$TCP_LT_WHY" ] || echo "| libbpf-tools tcptop | $TCP_LT_WHY | - | - |"
}

tcp_exact_table() {
	local r s rd t l
	echo "| round | bytes sent | tcprcv: the reader's read, summed over intervals | all processes' read | tcprcv's lost count |"
	echo "|---:|---:|---:|---:|---:|"
	while read -r r s rd t l; do
		echo "| $r | $s | $rd$([ "$rd" = "$s" ] || echo ' **≠**') | $t | $l |"
	done <"$TMP/tcp.exact"
}

# tcp_prog_ns KEY PATTERN: "NS (RUNS)" of KEY's program whose name
# matches PATTERN: the median over rounds of its ns per run, its runs in
# round 1; "-" if it never ran.
tcp_prog_ns() {
	local ns runs
	ns=$(awk -v k="$1" -v p="$2" '$2 == k && $5 > 0 && $3 ~ p { print $4 / $5 }' "$TMP/tcp.progs" | median)
	runs=$(awk -v k="$1" -v p="$2" '$1 == 1 && $2 == k && $3 ~ p { print $5 }' "$TMP/tcp.progs" | head -1)
	if [ -n "$ns" ]; then printf '%.0f (%s)' "$ns" "${runs:-?}"; else echo -; fi
}

# What the transfer cost in BPF: per round, the tracer's programs' run
# time in all over the transfer's time; the median over rounds.
tcp_bpf_share() {
	awk -v k="$1" 'NR == FNR { if ($2 == k) s[$1] = $4; next } $2 == k { t[$1] += $4 }
		END { for (r in t) if (s[r] > 0) print 100 * t[r] / (s[r] * 1e9) }' "$TMP/tcp.raw" "$TMP/tcp.progs" |
		median | awk '{ printf "%.2f%%", $1 } END { if (!NR) print "n/a" }'
}

tcp_cost_table() {
	local c key others
	echo "| tracer | tcp_probe program: ns per run (runs in round 1) | tcp_rcv_space_adjust program: ns per run (runs) | its other programs that ran: ns per run (runs) | BPF run time, % of the transfer's time | misses, all rounds |"
	echo "|---|---:|---:|---|---:|---:|"
	for c in "${TCP_CONDITIONS[@]}"; do
		IFS='|' read -r key _ <<<"$c"
		[ "$key" != untraced ] || continue
		others=$(awk -v k="$key" '$2 == k && $5 > 0 && $3 !~ /probe|rcv_space/ { split($3, n, "/"); t[n[1]] += $4; c[n[1]] += $5 }
			END { for (p in t) printf "%s %.0f ns (%d), ", p, t[p] / c[p], c[p] }' "$TMP/tcp.progs")
		others=${others%, }
		echo "| $(tcp_row_name "$key") | $(tcp_prog_ns "$key" probe) | $(tcp_prog_ns "$key" rcv_space) | ${others:--} |" \
			"$(tcp_bpf_share "$key") | $(awk -v k="$key" '$2 == k { m += $6; n++ } END { print (n ? m : "n/a") }' "$TMP/tcp.progs") |"
	done
}

tcp_targets() {
	local k x a short
	for k in tr trl; do
		x=$(tcp_x "$k")
		echo "| $(tcp_row_name "$k"): $TCP_BYTES over loopback in $TCP_CHUNK-byte writes, × untraced (median of $TCP_RUNS rounds) | ≥ 0.95 | ${x:-n/a} | $(verdict_ge "${x:-n/a}" 0.95) |"
	done
	short=$(awk '$3 != $2' "$TMP/tcp.exact" 2>/dev/null | grep -c . || true)
	a=$(grep -c . "$TMP/tcp.exact" 2>/dev/null || true)
	echo "| tcprcv -j: the reader's bytes read = bytes sent, summed over 1 s intervals, every round | $TCP_RUNS of $TCP_RUNS | $((a - short)) of $TCP_RUNS |" \
		"$(if [ "$short" = 0 ] && [ "$a" = "$TCP_RUNS" ]; then echo met; else echo '**missed**'; fi) |"
	budget_rows tcprcv binary
}

if [ "${TCP_ONLY:-}" != 1 ]; then
	bio_setup || echo "bench: no loop device for biolat's counts: $BIO_WHY" >&2
	[ -n "$LT_BIOLATENCY" ] || echo "bench: libbpf-tools has no biolatency: no column for it" >&2
fi
# The one-liner as users write it (bpftrace 0.17: args->), on the same disk.
BPFTRACE_BIO="BEGIN { printf(\"attached\\n\"); }
tracepoint:block:block_rq_issue /args->dev == $BIO_DEV/ { @start[args->dev, args->sector] = nsecs; }
tracepoint:block:block_rq_complete /@start[args->dev, args->sector]/ { @usecs = hist((nsecs - @start[args->dev, args->sector]) / 1000); delete(@start[args->dev, args->sector]); }"
# bpftrace's start-up is its row above: a block one-liner's is of its order.
STARTUP+=("biolat|Hit Ctrl-C|$BUILD/biolat")

if [ "${BIO_ONLY:-}" = 1 ]; then
	need jq jq
	STARTUP=("libbpf-tools biolatency|Hit Ctrl-C|stdbuf -oL biolatency" "${STARTUP[@]: -1}")
	echo "bench: [$((SECONDS - START)) s] biolat: counts and cost per I/O ($BIO_RUNS runs)..." >&2
	[ -z "$BIO_NAME" ] || bio_measure
	echo "bench: [$((SECONDS - START)) s] biolat: start-up..." >&2
	startup_table
	[ -z "$BIO_NAME" ] || { bio_counts_table; echo; bio_cost_table; echo; bio_notes; }
	bio_targets
	echo "bench: [$((SECONDS - START)) s] done" >&2
	exit 0
fi

# phase WHAT: say on stderr what runs now, and since when the bench runs.
phase() { echo "bench: [$((SECONDS - START)) s] $*" >&2; }
# tcprcv's start-up rows: its banner is on stderr, its first table at 1 s;
# a bpftrace one-liner on tcp_probe next to it.
STARTUP+=("tcprcv|Hit Ctrl-C|$BUILD/tcprcv" "bpftrace tcp_probe one-liner|attached|bpftrace -e BPFTRACE_TCP")

if [ "${TCP_ONLY:-}" = 1 ]; then
	need jq jq
	STARTUP=("${STARTUP[@]: -2}")
	tcp_setup
	phase "tcprcv: loopback throughput and cost per event ($TCP_RUNS rounds of $TCP_BYTES)..."
	tcp_measure
	phase "tcprcv: start-up..."
	startup_table
	echo
	tcp_table
	echo
	tcp_exact_table
	echo
	tcp_cost_table
	echo
	echo "| target (benchmark issue) | limit | measured | verdict |"
	echo "|---|---:|---:|---|"
	tcp_targets
	phase "done"
	exit 0
fi

# measure_stats: measure_progs on both sources, bpf_stats on for it alone.
measure_stats() {
	phase "BPF run time per read, with kernel.bpf_stats_enabled=1 (${PROG_ROWS// /, }; $REPS rounds)..."
	BPF_STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -q kernel.bpf_stats_enabled=1
	measure_progs zero
	measure_progs pipe
	sysctl -q kernel.bpf_stats_enabled="$BPF_STATS_WAS"
	BPF_STATS_WAS=''
}

# shellcheck source=bench/metrics.sh
. bench/metrics.sh
if [ "${METRICS_ONLY:-}" = 1 ]; then
	need jq jq
	phase "fleet metrics: cost by output mode ($REPS rounds)..."
	measure_modes
	phase "fleet metrics: CPU per report, freshness..."
	metrics_section
	phase "done"
	exit 0
fi

if [ "${READLAT_ONLY:-}" = 1 ]; then
	phase "overhead on /dev/zero reads (${#CONDITIONS[@]} conditions, $REPS rounds)..."
	measure zero
	phase "overhead on pipe reads (${#CONDITIONS[@]} conditions, $REPS rounds)..."
	measure pipe
	measure_stats
	echo "| target (benchmark issue) | limit | measured | verdict |"
	echo "|---|---:|---:|---|"
	readlat_targets
	echo
	where_table
	echo
	prog_table
	echo
	overhead_table zero
	echo
	overhead_table pipe
	phase "done"
	exit 0
fi

need bc bc
need jq jq
phase "overhead on /dev/zero reads (${#CONDITIONS[@]} conditions, $REPS rounds)..."
measure zero
phase "overhead on pipe reads (${#CONDITIONS[@]} conditions, $REPS rounds)..."
measure pipe
measure_stats
phase "opensnoop: open rate and loss (${#OPEN_CONDITIONS[@]} conditions, $REPS rounds)..."
measure_opens
phase "opensnoop: low-rate latency..."
measure_latency opensnoop "$BUILD/opensnoop -n openbench" "err:Hit Ctrl-C" "$LAT_RUNS"
measure_latency bt "bpftrace -e BPFTRACE_OPENS" out:attached "$BT_LAT_RUNS"
if [ -n "$BIO_NAME" ]; then
	phase "biolat: counts and cost per I/O on $BIO_NAME ($BIO_RUNS runs of $BIO_READS reads)..."
	bio_measure
fi
tcp_setup
phase "tcprcv: loopback throughput and cost per event ($TCP_RUNS rounds of $TCP_BYTES)..."
tcp_measure
phase "start-up and exit..."
startup=$(startup_table)
phase "growth..."
growth=$(growth_table)
phase "exactness..."
exact=$(exact_table)
phase "fleet metrics: cost by output mode ($REPS rounds), CPU per report, freshness..."
measure_modes
metrics=$(metrics_section)
phase "done"

{
	echo "# Benchmark results"
	echo
	echo "Generated by \`make bench\` (bench/run.sh) on $(date -u +%Y-%m-%d), kernel $(uname -r),"
	echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')). Peers from Debian:"
	echo "bpftrace $(dpkg-query -W -f '${Version}' bpftrace), libbpf-tools $(dpkg-query -W -f '${Version}' libbpf-tools)."
	echo "Every condition runs once per round, rounds interleave the conditions in a"
	echo "rotated order; each figure is the median over $REPS rounds of the"
	echo "condition's time minus the same round's untraced time. The workload makes"
	echo "$READS 1-byte \`read()\`s pinned to CPU $WORK_CPU; tracers are system-wide."
	echo
	echo "## Targets"
	echo
	echo "readlat's added cost is held to the limit's, not to a multiple of the floor:"
	echo "what the clock and the store cost next to two empty programs differs from"
	echo "host to host, the limit measures it on the host at hand."
	echo
	echo "The per-read ratios against the limit and the floor are (base + d) / base:"
	echo "base is the limit's (or the floor's) added ns by the wall clock, d how much"
	echo "more the row's programs run per read than the base's, as the kernel"
	echo "measures them (BPF run time below). The wall clock's own ratio is shown"
	echo "beside it and is not the verdict: the same two empty programs, loaded"
	echo "again, add $(floor_spread zero) ns per read of /dev/zero in this run's"
	echo "rounds ($(floor_spread pipe) on the pipe), a spread"
	echo "far wider than the 5-10% being judged; programs on the same tracepoints"
	echo "differ in nothing but their own run time, which the kernel times per run."
	echo
	targets_table
	echo
	echo "## Where readlat's added ns go"
	echo
	echo "The floor by the wall clock (the kernel's work for the two tracepoints,"
	echo "around two empty programs), then, by the kernel's BPF run time (each a"
	echo "median over rounds of the per-round difference): each part readlat"
	echo "cannot avoid, alone in the floor's two programs (bench/clock.bpf.c,"
	echo "bench/store.bpf.c); what they cost together beyond their sum, which makes"
	echo "up the limit (bench/limit.bpf.c: the clock at entry kept in readlat's task"
	echo "storage, the clock at exit, the start taken, the delta computed; no"
	echo "filter, no histogram); readlat − limit, what readlat's histogram and the"
	echo "rest of its code cost; and each filter, for a read it leaves out. The"
	echo "next step towards the floor is in the largest of these."
	echo
	where_table
	echo
	echo "## BPF run time per read"
	echo
	echo "A pass of its own with kernel.bpf_stats_enabled=1 (the stats add their"
	echo "own cost to every run), $REPS rounds, rotated: per condition, its"
	echo "programs' run_time_ns / run_cnt over the workload's reads, summed over"
	echo "the programs that ran at least once per read; the median over rounds."
	echo
	prog_table
	echo
	echo "## Per-event overhead: 1-byte read() of /dev/zero"
	echo
	echo "Clock only, store only and limit are readlat's unavoidable parts, in"
	echo "programs on the same two tracepoints. × limit: a readlat row's added ns"
	echo "over the limit's. OTHER is what the workload is not: a process that never"
	echo "reads (-p), a name no process has (-n), an empty cgroup v2 directory"
	echo "made for the run (-c)."
	echo
	overhead_table zero
	echo
	echo "## Per-event overhead: 1-byte read() of a pipe kept full"
	echo
	overhead_table pipe
	echo
	echo "## Start-up and exit (median of $STARTUP_RUNS runs)"
	echo
	echo "$startup"
	echo
	size_table
	echo
	echo "## Growth"
	echo
	echo "$growth"
	echo
	echo "## Exact counts while printing every 50 ms"
	echo
	echo "$exact"
	echo
	echo "## opensnoop: open rate and lost events"
	echo
	echo "The workload (bench/openbench) opens and closes one file, 1000 times and"
	echo "then $OPENS times as fast as it can, pinned to CPU $WORK_CPU; opens/s is the"
	echo "timed loop's. Every condition runs once per round, $REPS rounds, rotated;"
	echo "× untraced is the median over rounds of the rate over the same round's"
	echo "untraced rate. Each tracer writes to a file and asks for the workload's"
	echo "name: opensnoop and bpftrace filter in the kernel, libbpf-tools' \`-n\` in"
	echo "user space (every open on the system is still sent to it). Lost events:"
	echo "opens made − lines with the workload's file in the output, per run; the"
	echo "own count is what the tool itself reported lost. Buffers are the"
	echo "defaults (opensnoop: a 1 MiB ring buffer woken at a quarter full, drained"
	echo "every 50 ms; libbpf-tools: a 64-page perf buffer per CPU; bpftrace: its"
	echo "perf buffers). The tracers wait for their output to stop growing before"
	echo "SIGINT, so nothing still queued is counted lost."
	echo
	opens_table
	echo
	echo "## opensnoop -C and -L: cost per open"
	echo
	echo "The same rounds: ns per open added over the round's untraced run, for"
	echo "the modes that count or time each open in the kernel and print only"
	echo "per interval, against two empty programs on the openat tracepoints."
	echo
	opens_aggregate_table
	echo
	echo "## opensnoop: one open at a low rate"
	echo
	echo "The tracer runs idle; the workload opens its file once and reads the"
	echo "tracer's output file every 1 ms until the line is there (bench/openbench"
	echo "-w). libbpf-tools' opensnoop has no row: its stdout to a file is block-"
	echo "buffered, a line shows when 4 KiB have gathered or at exit."
	echo
	latency_table
	echo
	echo "## biolat: exact counts"
	echo
	if [ -z "$BIO_NAME" ]; then
		echo "Not measured: $BIO_WHY."
	else
		echo "On $BIO_NAME, a loop device in direct-I/O mode over a file in ${TMP%/*}"
		echo "($(findmnt -n -o FSTYPE -T "$TMP" 2>/dev/null || stat -f -c %T "$TMP"), written first so every read reaches the disk below), with no I/O"
		echo "scheduler, bioload makes exactly $BIO_READS O_DIRECT 4 KiB reads, $BIO_RUNS"
		echo "times. The tracers run at once on each run's I/O: every one sees the same"
		echo "requests, and two controls say what the kernel delivered in that very run."
		echo "Running together does not make one skip another's events: biolat's and"
		echo "libbpf-tools' programs (raw_tp, tp_btf) are guarded per program;"
		echo "bpftrace's (perf tracepoint programs) skip while a kprobe or tracepoint"
		echo "program already runs on the CPU, and the only such programs here are its"
		echo "own. Truth: the disk's reads completed (/sys/block/$BIO_NAME/stat)."
		echo "Controls: the tracepoint's own count (a tracefs instance with"
		echo "block_rq_complete on, filtered to the disk: no BPF involved) and"
		echo "bench/blkcount (raw tracepoint programs that only count the disk's"
		echo "completions: what the kernel ran BPF programs for), with the kernel's"
		echo "count of runs it skipped for them (recursion misses). The bpftrace"
		echo "one-liner keys @start by (args->dev, args->sector) and filters the disk"
		echo "at issue; libbpf-tools runs as \`biolatency -d $BIO_NAME\`."
		echo
		bio_counts_table
		bio_notes | sed '1s/^/\n/'
		echo
		echo "## biolat: cost per I/O"
		echo
		echo "The same runs, with kernel.bpf_stats_enabled=1: for each program the"
		echo "tracer holds, run_time_ns / run_cnt, the median over runs; ns per I/O is"
		echo "their sum over the programs that ran at least once per read. A tracer of"
		echo "one disk still runs on every disk's requests and filters them out: each"
		echo "read of the loop device is also a read of the disk below it, and the"
		echo "host's other I/O adds more, so run_cnt is over twice the reads and ns per"
		echo "run is the mean over the disk's requests and the filtered-out others."
		echo
		bio_cost_table
	fi
	echo
	echo "## tcprcv: loopback throughput"
	echo
	echo "bench/tcpload's pair mode moves $TCP_BYTES over 127.0.0.1: the parent writes"
	echo "it in $TCP_CHUNK-byte writes, its forked child reads it (64 KiB reads); both"
	echo "pinned to CPU $WORK_CPU, MB/s from connect() to the child's exit. Every"
	echo "condition runs once per round, $TCP_RUNS rounds, rotated; × untraced is the"
	echo "median over rounds of the rate over the same round's untraced rate (the"
	echo "next column lists them: the round-to-round spread is the host's noise)."
	echo "The control (bench/tcpcount) holds raw tracepoint programs on tcp_probe"
	echo "and tcp_rcv_space_adjust, tcprcv's two per-event tracepoints, that only"
	echo "add one to a per-CPU counter: the cost of the tracepoints themselves."
	echo "tcprcv runs as a user runs it, its reports going to a file; the bpftrace"
	echo "one-liner is \`$(sed -n 2p <<<"$BPFTRACE_TCP")\`."
	echo "kernel.bpf_stats_enabled is on in every traced run (for the cost table)."
	echo
	tcp_table
	echo
	echo "## tcprcv: exact bytes"
	echo
	echo "The same rounds: tcprcv -j prints a report every second; summed over"
	echo "them, per process, the reader's bytes read must be the bytes sent, to the"
	echo "byte. All processes' read includes the host's other TCP traffic."
	echo
	tcp_exact_table
	echo
	echo "## tcprcv: cost per event"
	echo
	echo "The same runs, with kernel.bpf_stats_enabled=1: each program's"
	echo "run_time_ns and run_cnt, read just before and just after the transfer;"
	echo "ns per run is the median over rounds of their differences' ratio. runs:"
	echo "round 1's. tcp_probe runs for every segment TCP processes, the data"
	echo "(GSO-sized over loopback) and the sender's ACKs; tcp_rcv_space_adjust"
	echo "for every chunk a reader copies out. BPF run time: all the tracer's"
	echo "programs' ns during the transfer, over its time (median over rounds);"
	echo "the host's other TCP traffic runs them too."
	echo
	tcp_cost_table
	echo
	echo "$metrics"
	echo
	echo "## CO-RE at start-up (for biolat and tcprcv)"
	echo
	echo "The start-up table's two CO-RE probe rows load one tracepoint program with"
	echo "a single CO-RE relocation (task->tgid, bench/core.bpf.c). Through libbpf,"
	echo "any relocation makes it parse the whole kernel BTF (~11 MiB of RSS)."
	echo "Through a light skeleton the kernel relocates (BPF_PROG_LOAD with CO-RE"
	echo "records, Linux 5.17+) and user space never reads the BTF. What that"
	echo "costs: light skeletons load every program of the object (no autoload"
	echo "switch), so a probe chain needs one object per probe flavour, tried in"
	echo "order; they do not attach classic tracepoints (the runtime must:"
	echo "perf_event_open + PERF_EVENT_IOC_SET_BPF); and kernels before 5.17 need"
	echo "the libbpf path as a fallback. That was the plan for biolat and tcprcv;"
	echo "readlat needs no CO-RE."
	echo "biolat and tcprcv took another way: they read struct offsets from the"
	echo "kernel BTF with a streaming reader (common/btf_fields.c) and hand them to"
	echo "their programs as read-only data; their rows in the start-up table show"
	echo "what that costs."
} >"$OUT"
cat "$OUT"
