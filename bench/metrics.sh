# SPDX-License-Identifier: GPL-2.0-only
# The fleet-metrics rows of make bench, sourced by bench/run.sh (its TMP,
# B, BUILD, REPS, WORK_CPU, CG2 and helpers: median, start_tracer,
# stop_tracer, prog_counters, verdict). Three questions:
#  - does Prometheus output cost more per event than JSON at the same
#    interval? (It must not: the BPF side is the same.)
#  - what does one report cost in user space with 1,000 series live?
#  - how long from an event to a Prometheus query that shows it?

METRICS_READS=${METRICS_READS:-400000}
METRICS_SERIES=${METRICS_SERIES:-1000}
METRICS_IVL=0.1		# report interval of the per-report CPU rows
METRICS_WINDOW=10	# seconds of reports measured per mode
FRESH_RUNS=${FRESH_RUNS:-5}

# key | name | attach pattern | command. Every row reports every 0.1 s,
# so that the workload spans several reports; stdout goes to a file, as
# it would.
METRICS_MODES=(
	"json|readlat -j 0.1|Hit Ctrl-C|$BUILD/readlat -j 0.1"
	"om|readlat -o openmetrics 0.1|Hit Ctrl-C|$BUILD/readlat -o openmetrics 0.1"
	"textfile|readlat --textfile PATH 0.1|Hit Ctrl-C|$BUILD/readlat --textfile $TMP/tf/readlat.prom 0.1"
)

# measure_modes: REPS rounds, the modes rotated; per run the workload's
# wall-clock ns per read, the tracer's BPF ns per read (the kernel's
# run_time_ns / run_cnt of each program that ran once per read, summed)
# and the tracer's own CPU time over the run (its threads' schedstat) per
# read. metrics.raw gets "round key wall_ns bpf_ns tracer_ns".
measure_modes() {
	local r k n key name pat cmd wall c0 c1
	mkdir -p "$TMP/tf"
	n=${#METRICS_MODES[@]}
	BPF_STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -q kernel.bpf_stats_enabled=1
	for ((r = 0; r < REPS; r++)); do
		for ((k = 0; k < n; k++)); do
			IFS='|' read -r key name pat cmd <<<"${METRICS_MODES[$(((k + r) % n))]}"
			start_tracer "$cmd" "$pat"
			prog_counters "$TRACER" >"$TMP/pc.before"
			c0=$(cpu_ns "$TRACER")
			wall=$(taskset -c "$WORK_CPU" "$B/readbench" zero "$METRICS_READS")
			c1=$(cpu_ns "$TRACER")
			prog_counters "$TRACER" >"$TMP/pc.after"
			stop_tracer
			awk -v r="$r" -v k="$key" -v n="$METRICS_READS" -v w="$wall" -v cpu=$((c1 - c0)) \
				'NR == FNR { t[$1] = $2; c[$1] = $3; next }
				($3 - c[$1]) >= n { s += ($2 - t[$1]) / ($3 - c[$1]) }
				END { printf "%s %s %s %.2f %.2f\n", r, k, w, s, cpu / n }' \
				"$TMP/pc.before" "$TMP/pc.after" >>"$TMP/metrics.raw"
		done
	done
	sysctl -q kernel.bpf_stats_enabled="$BPF_STATS_WAS"
	BPF_STATS_WAS=''
}

# mode_col KEY FIELD: FIELD (3 wall, 4 bpf) of KEY's runs; mode_over KEY
# FIELD: per round, KEY's FIELD over the same round's json; the median.
mode_col() { awk -v c="$1" -v f="$2" '$2 == c { print $f }' "$TMP/metrics.raw" 2>/dev/null; }
mode_over() {
	awk -v c="$1" -v f="$2" '$2 == c { v[$1] = $f } $2 == "json" { w[$1] = $f }
		END { for (r in v) if ((r in w) && w[r] > 0) print v[r] / w[r] }' "$TMP/metrics.raw" 2>/dev/null |
		median | awk '{ printf "%.2f", $1 }'
}

modes_table() {
	local m key name
	echo "| output | ns per read (wall) | BPF ns per read | tracer CPU ns per read | BPF × json | wall × json |"
	echo "|---|---:|---:|---:|---:|---:|"
	for m in "${METRICS_MODES[@]}"; do
		IFS='|' read -r key name _ <<<"$m"
		printf '| %s | %.0f | %.1f | %.1f | %s | %s |\n' "$name" \
			"$(mode_col "$key" 3 | median)" "$(mode_col "$key" 4 | median)" "$(mode_col "$key" 5 | median)" \
			"$(if [ "$key" = json ]; then echo 1.00; else mode_over "$key" 4; fi)" \
			"$(if [ "$key" = json ]; then echo 1.00; else mode_over "$key" 3; fi)"
	done
}

# cpu_ns PID: the CPU time its threads have had, in ns (schedstat: exact,
# not the 10 ms ticks of /proc/PID/stat).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }

# series_procs CG: METRICS_SERIES processes, each with a name of its own,
# each making 3 reads, one after another in cgroup CG; returns when all
# have exited.
series_procs() {
	(
		echo "$BASHPID" >"$1/cgroup.procs"
		for ((i = 1; i <= METRICS_SERIES; i++)); do
			"$BUILD/tests/readload" --source zero --reads 3 --comm "series$i" >/dev/null
		done
	)
}

# report_cpu KEY: readlat -P -c CG, reporting every METRICS_IVL s, after
# METRICS_SERIES processes (one series each) have read in CG; the CPU its
# threads use over METRICS_WINDOW s of reports, once every series is
# there, per report. om (stdout to a file): reports counted by their
# "# EOF"; textfile: by the interval (the window over it, ±1); json: the
# same, for scale (JSON and text print only an interval's activity: with
# nothing new, a report is one line). Prints "ms_per_report reports
# series" (series: the label sets of the last exposition; - for json).
report_cpu() {
	local key=$1 cg args out c0 c1 n0 n1 t0 t1 i series
	cg=$CG2/readlat-bench-series.$$
	mkdir "$cg" || return 1
	out=$TMP/rc.out
	case $key in
	om) args="-o openmetrics" ;;
	textfile) args="--textfile $TMP/tf/series.prom" ;;
	json) args="-j" ;;
	esac
	mkdir -p "$TMP/tf"
	: >"$TMP/rc.err"	# not the last run's banner: the grep below would see it at once
	# shellcheck disable=SC2086
	"$BUILD/readlat" -P -c "$cg" --max-series $((METRICS_SERIES + 10)) $args "$METRICS_IVL" >"$out" 2>"$TMP/rc.err" &
	TRACER=$!
	wait_for "$TMP/rc.err" "Hit Ctrl-C" "$TRACER" || { echo "bench: readlat -P $key did not attach" >&2; return 1; }
	series_procs "$cg"
	sleep 1	# the last process's reads are in a report
	c0=$(cpu_ns "$TRACER") t0=$(date +%s.%N) n0=$(grep -c '^# EOF' "$out")
	sleep "$METRICS_WINDOW"
	c1=$(cpu_ns "$TRACER") t1=$(date +%s.%N) n1=$(grep -c '^# EOF' "$out")
	case $key in
	om) series=$(awk '/^# EOF/ { last = n; n = 0 } /^readlat_read_duration_seconds_count\{/ { n++ } END { print last }' "$out") ;;
	textfile) series=$(grep -c '^readlat_read_duration_seconds_count{' "$TMP/tf/series.prom") ;;
	*) series=- ;;
	esac
	[ "$key" = om ] || n1=$(awk -v a="$t0" -v b="$t1" -v i="$METRICS_IVL" 'BEGIN { printf "%d", (b - a) / i }') n0=0
	# a report that fell behind says so: then the count above is too high
	! grep -q "skipped" "$out" "$TMP/rc.err" || echo "bench: readlat $key fell behind its interval" >&2
	stop_tracer
	rmdir "$cg" 2>/dev/null || true
	awk -v c=$((c1 - c0)) -v n=$((n1 - n0)) -v s="$series" 'BEGIN { if (n > 0) printf "%.3f %d %s\n", c / n / 1e6, n, s }'
}

report_table() {
	local key r ms n series
	echo "| readlat -P, $METRICS_SERIES processes | series in the exposition | reports | CPU ms per report | limit | verdict |"
	echo "|---|---:|---:|---:|---:|---|"
	for key in om textfile json; do
		r=$(report_cpu "$key") || r=
		read -r ms n series <<<"$r"
		case $key in
		json) echo "| -j (for scale: only the interval's activity) | - | $n | $ms | | |" ;;
		om) echo "| -o openmetrics | $series | $n | $ms | 2 | $(verdict "$ms" 2) |" ;;
		*) echo "| --textfile PATH | $series | $n | $ms | 2 | $(verdict "$ms" 2) |" ;;
		esac
	done
}

# fresh_runs: node_exporter and Prometheus as in tests/fleet.bats
# (scraping every second), readlat --textfile every second; FRESH_RUNS
# times a process of a new name makes 5 reads, and Prometheus is asked
# every 20 ms until its count says 5: the seconds from the process's
# exit to then, one line each.
fresh_runs() {
	local i t0 t1 end
	# The suites' helpers (retry, wait_exit, wait_for: this runs in a
	# subshell, $(fresh_runs), so they replace run.sh's only here).
	# shellcheck source=tests/helpers.bash
	. tests/helpers.bash
	# shellcheck source=tests/fleet.bash
	. tests/fleet.bash
	fleet_start >&2 || return 1
	: >"$TMP/fr.err"
	"$BUILD/readlat" -P --textfile "$TEXTDIR/readlat.prom" 1 >/dev/null 2>"$TMP/fr.err" &
	TRACER=$!
	wait_for "$TMP/fr.err" "Hit Ctrl-C" >&2 || return 1
	for ((i = 1; i <= FRESH_RUNS; i++)); do
		"$BUILD/tests/readload" --source zero --reads 5 --comm "fresh$i" >/dev/null
		t0=$(date +%s.%N) end=$((SECONDS + 10))
		until [ "$(promql "readlat_read_duration_seconds_count{comm=\"fresh$i\"}")" = 5 ]; do
			((SECONDS < end)) || { echo "bench: fresh$i never reached Prometheus" >&2; break; }
			sleep 0.02
		done
		t1=$(date +%s.%N)
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }'
	done
	stop_tracer
	fleet_stop
}

fresh_table() {
	local secs
	secs=$(fresh_runs) || secs=
	echo "| from a process's last read to a query showing it, s | runs | median | max | limit (report + scrape interval) | verdict |"
	echo "|---|---:|---:|---:|---:|---|"
	echo "| readlat --textfile PATH 1, scraped every 1 s | $(grep -c . <<<"$secs") | $(median <<<"$secs") | $(sort -g <<<"$secs" | tail -n1) | 2 | $(verdict "$(sort -g <<<"$secs" | tail -n1)" 2) |"
}

# metrics_section: the three tables, with what they measure.
metrics_section() {
	echo "## Fleet metrics: cost by output mode"
	echo
	echo "readlat reporting every 0.1 s to a file, as JSON, as OpenMetrics and"
	echo "into a node_exporter textfile, $REPS rounds, rotated; the workload makes"
	echo "$METRICS_READS 1-byte reads of /dev/zero pinned to CPU $WORK_CPU. BPF ns"
	echo "per read: the kernel's run time of the tool's programs"
	echo "(kernel.bpf_stats_enabled=1 in every run); × json: the median over rounds"
	echo "of the row over the same round's JSON run. The BPF programs are the same"
	echo "in every mode: only the user-space side differs, which the tracer's CPU"
	echo "column shows (its threads' run time over the run, per read; it runs on"
	echo "the other CPU)."
	echo
	modes_table
	echo
	echo "## Fleet metrics: user-space CPU per report"
	echo
	echo "readlat -P -c CG reporting every $METRICS_IVL s, after $METRICS_SERIES processes"
	echo "with a name each have read in the cgroup CG (made for the run): the"
	echo "CPU time of the tool's threads (/proc/PID/task/*/schedstat) over"
	echo "$METRICS_WINDOW s of reports, once every series is in, over the reports"
	echo "made. Each OpenMetrics report restates every series since the start."
	echo
	report_table
	echo
	echo "## Fleet metrics: freshness"
	echo
	echo "Prometheus and node_exporter from Debian as tests/fleet.bats runs them,"
	echo "scraping every second; readlat -P --textfile reporting every second. A"
	echo "process with a new name makes 5 reads and exits; Prometheus' HTTP API is"
	echo "asked every 20 ms until the name's count is 5."
	echo
	fresh_table
}
