#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# bats.sh [-j JOBS] [-f REGEX] FILE...: the bats suites FILE..., their
# tests JOBS at a time (bats --jobs, GNU parallel), then those tagged
# "serial" (# bats test_tags=serial: they hold something global, such as
# a system-wide switch or a bound that another test's load would break)
# one after the other, alone. TAP as it comes, each test's time
# (--timing); then the slowest tests, one closing line, "bats: N passed,
# N failed, N skipped", and the time it all took. Fails if a test failed,
# or if bats ran fewer tests than it planned (a bats that gave up).
#
# Environment: BATS (the bats command), BATS_JOBS (default for -j: 4).
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

start=$SECONDS
st=0
{
	$bats --tap --timing "${parallel[@]}" --filter-tags '!serial' "${filter[@]}" "$@" || st=1
	echo "# the tests tagged serial, alone"
	$bats --tap --timing --filter-tags serial "${filter[@]}" "$@" || st=1
	echo "# bats exit: $st"
} 2>&1 | awk -v secs_start="$start" '
	{ print; fflush() }
	/^1\.\.[0-9]+$/ { planned += substr($0, 4) }
	/^ok .*# skip/ { s++; next }
	/^ok / { p++ }
	/^not ok / { f++ }
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
		if (ran < planned) {
			printf "bats.sh: %d of %d planned tests ran\n", ran, planned
			f += planned - ran
		}
		printf "bats: %d passed, %d failed, %d skipped\n", p, f, s
		exit (f > 0 || bats_st != 0)
	}'
rc=$?
echo "bats.sh: $((SECONDS - start)) s, $jobs at a time"
exit $rc
