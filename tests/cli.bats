#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# The options the tools share are spelled alike and mean the same in each.

load helpers
bats_require_minimum_version 1.5.0

setup() { common_setup; }
teardown() { common_teardown; }

TOOLS='readlat opensnoop biolat tcprcv'

# hist_args TOOL: what makes TOOL print a histogram (its units apply).
hist_args() {
	case $1 in
	opensnoop|tcprcv) echo -L ;;
	esac
}

# help_line TOOL OPTION: TOOL's --help entry for OPTION, on one line
# (argp wraps it at a column that depends on the tool's longest option).
help_line() {
	"$BUILD/$1" --help | awk -v re="^ +(-[a-zA-Z], )?$2[ =]" '
		on && /^ +-/ { exit } on && !/^ +[^ -]/ { exit }
		$0 ~ re { on = 1 } on { printf "%s ", $0 }' | tr -s ' '
}

@test "shared options: the same --help line in every tool, --duration with no short form" {
	local opt t want
	for opt in --duration --json --timestamp --milliseconds --ns --pid --tid --name --cgroup \
		--check --verbose; do
		want=$(help_line readlat "$opt")
		[ -n "$want" ]
		for t in $TOOLS; do
			echo "$t $opt: $(help_line "$t" "$opt")"
			[ "$(help_line "$t" "$opt")" = "$want" ]
		done
	done
	for t in $TOOLS; do
		refute grep -qE -- '-d, --duration' <("$BUILD/$t" --help)
	done
}

@test "shared options given twice or against each other: one rule, exit 2" {
	local t h
	for t in $TOOLS; do
		h=$(hist_args "$t")
		usage_errors "$t" <<-EOF_CASES
		$h -m --ns|-m and --ns cannot be combined
		$h --ns -m|-m and --ns cannot be combined
		$h --ns --milliseconds|-m and --ns cannot be combined
		--duration 1 --duration 2|option '--duration' given twice
		-p 1 -p 2|option '-p' given twice
		--duration 1 1|an interval and --duration cannot be combined
		EOF_CASES
		# the same unit twice is that unit once
		for u in "-m -m" "-m --milliseconds" "--ns --ns" "-mm"; do
			# shellcheck disable=SC2086	# words
			run --separate-stderr timeout 10 "$BUILD/$t" $h $u --check
			echo "$t $h $u: $status $stderr"
			[ "$status" -eq 0 ]
		done
	done
}

@test "--help, --version and --check into /dev/full: one line and exit 1, in every tool" {
	for t in $TOOLS; do
		for opt in --help --version --check; do
			run --separate-stderr timeout 10 "$BUILD/$t" "$opt"
			[ "$status" -eq 0 ]	# written: exit 0
			run --separate-stderr timeout 10 bash -c "'$BUILD/$t' $opt > /dev/full"
			echo "$t $opt: exit $status, stderr: $stderr"
			[ "$status" -eq 1 ]
			[[ "$stderr" == "$t: cannot write the output"* ]]
			[ "${#stderr_lines[@]}" -eq 1 ]
		done
	done
}

@test "-d is nowhere a duration: refused, or biolat's disk" {
	usage_errors opensnoop <<<"-d 5|no -d: a duration is --duration SECONDS"
	usage_errors readlat <<<"-d 5|unknown option '-d'"
	usage_errors tcprcv <<<"-d 5|unknown option '-d'"
	usage_errors biolat <<<"-d 5|unknown disk '5' for -d"
}

@test "-m and --ns where no histogram is printed: a usage error" {
	usage_errors opensnoop <<-'EOF_CASES'
	-m|-m and --ns go with -L
	-C --ns|-m and --ns go with -L
	EOF_CASES
	usage_errors tcprcv <<<"-m|-m and --ns go with -L and --rcv-time"
}

@test "an error naming hostile input is one write(2) of one line, in every tool (strace)" {
	command -v strace >/dev/null || skip "no strace"
	for tool in readlat opensnoop tcprcv biolat; do
		run under_ptrace timeout 30 strace -qq -s 256 -o "$T/strace" -e trace=write \
			"$BUILD/$tool" -p $'1\nx\x01'
		[ "$status" -eq 2 ]
		run grep -c '^write(2,' "$T/strace"
		echo "$tool: $(cat "$T/strace")"
		[ "$output" -eq 1 ]
		grep -qF "write(2, \"$tool: invalid PID '1\\\\nx\\\\x01': expected a positive integer\\n\"" "$T/strace"
	done
}
