#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# bats.sh [-j JOBS] [-f REGEX] FILE...: the bats suites FILE..., their
# tests JOBS at a time (bats --jobs, GNU parallel), then those tagged
# "serial" (# bats test_tags=serial: they hold something global, such as
# a system-wide switch or a bound that another test's load would break)
# one after the other, alone. TAP as it comes, each test's time
# (--timing); then the slowest tests, one closing line, "bats: N passed,
# N failed, N skipped", and the time it all took. Fails if a test failed,
# or if bats ran fewer tests than it planned (a bats that gave up), or
# none (a filter that matched nothing). Stopped (Ctrl-C), it still says
# what ran, and detaches the loop devices of the tests it stopped.
#
# Environment: BATS (the bats command), BATS_JOBS (default for -j: 4).
# No BATS_TEST_TIMEOUT: bats 1.8 then holds every test until its
# timeout's sleep ends; a test's waits and tools are bounded in time
# (tests/helpers.bash).
set -uo pipefail

jobs=${BATS_JOBS:-4} filter=()
while getopts j:f: opt; do
	case $opt in
	j) jobs=$OPTARG ;;
	f) filter=(-f "$OPTARG") ;;
	*) echo "usage: $0 [-j JOBS] [-f REGEX] FILE..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-j JOBS] [-f REGEX] FILE..." >&2; exit 2; }
case $jobs in
'' | *[!0-9]*) jobs=0 ;;
esac
[ "$((10#$jobs))" -ge 1 ] || { echo "$0: -j: a number of jobs, 1 or more" >&2; exit 2; }
jobs=$((10#$jobs))
bats=${BATS:-bats}
parallel=()
if [ "$jobs" -gt 1 ]; then
	command -v parallel >/dev/null ||
		{ echo "$0: -j $jobs needs GNU parallel (apt-get install parallel), or -j 1" >&2; exit 1; }
	parallel=(--jobs "$jobs")
fi

stopped=
trap 'stopped=130' INT
trap 'stopped=143' TERM
start=$SECONDS
st=0
{
	# this group's own: it runs apart from the script (a pipeline)
	trap 'stopped=130' INT
	trap 'stopped=143' TERM
	$bats --tap --timing "${parallel[@]}" --filter-tags '!serial' "${filter[@]}" "$@" || st=1
	if [ -z "$stopped" ]; then
		echo "# the tests tagged serial, alone"
		$bats --tap --timing --filter-tags serial "${filter[@]}" "$@" || st=1
	fi
	echo "# bats exit: $st"
} 2>&1 | (trap '' INT TERM; exec awk -v secs_start="$start" '
	{ print; fflush() }
	/^1\.\.[0-9]+$/ { planned += substr($0, 4) }
	/^ok .*# skip/ { s++; next }
	/^ok / { p++ }
	/^not ok / { f++; failed[f] = $0; sub(/ in [0-9]+ms$/, "", failed[f]) }
	/^(ok|not ok) .* in [0-9]+ms$/ {
		name = $0; sub(/^(ok|not ok) [0-9]+ /, "", name); sub(/ in [0-9]+ms$/, "", name)
		ms = $NF; sub(/ms$/, "", ms); times[name] = ms + 0
	}
	/^# bats exit: / { bats_st = $NF }
	END {
		n = 0
		for (t in times) order[++n] = t
		for (i = 1; i <= n; i++)	# the five slowest, by insertion
			for (j = i + 1; j <= n; j++)
				if (times[order[j]] > times[order[i]]) { x = order[i]; order[i] = order[j]; order[j] = x }
		if (n > 0) print "# slowest:"
		for (i = 1; i <= n && i <= 5; i++) printf "#   %5.1f s  %s\n", times[order[i]] / 1000, order[i]
		ran = p + f + s
		if (f > 0) print "# failed:"
		for (i = 1; i <= f; i++) print "#   " failed[i]
		if (planned == 0) {
			print "bats.sh: no test matched"
			f++
		}
		if (ran < planned) {
			printf "bats.sh: %d of %d planned tests ran\n", ran, planned
			f += planned - ran
		}
		printf "bats: %d passed, %d failed, %d skipped\n", p, f, s
		exit (f > 0 || bats_st != 0)
	}')
rc=$?
# A test stopped mid-way leaves its loop device (tests/helpers.bash's
# loop_setup) attached over the image bats has since deleted.
losetup -nO NAME,BACK-FILE 2>/dev/null |
	awk '$2 ~ /\/bats-run-[^ ]*\/loop\.img$/ && $3 == "(deleted)" { print $1 }' |
	xargs -r -n1 losetup -d 2>/dev/null
echo "bats.sh: $((SECONDS - start)) s, $jobs at a time${stopped:+, stopped}"
exit "${stopped:-$rc}"
