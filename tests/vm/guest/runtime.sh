# SPDX-License-Identifier: GPL-2.0-only
# The common runtime's failure paths in the test VM, through test-only
# tools (tests/tools/): the verifier's words differ between kernels.

test_verifier_rejection() {
	run "$BUILD/tests/badprog"
	expect_status 1 "$STATUS"
	expect_lines run.out . 1
	expect_eq output "$(cat "$T/run.out")" "badprog: the kernel's verifier rejected program 'bad_prog': R1 invalid mem access 'scalar' (run with -v for the verifier log)"
}

test_verifier_log() {
	run "$BUILD/tests/badprog" -v
	expect_status 1 "$STATUS"
	expect_line run.out 'BEGIN PROG LOAD LOG'
	expect_line run.out "R1 invalid mem access 'scalar'"
	expect_eq "last line" "$(tail -n1 "$T/run.out")" "badprog: the kernel's verifier rejected program 'bad_prog': R1 invalid mem access 'scalar'"
}

# What the kernel's BPF can do, probed (the code names no kernel version;
# the test takes the version as its oracle): fetch-and-add and
# compare-and-swap (BPF atomics, 5.12) for every tool, bpf_loop (5.17) for
# opensnoop -C --by file. Where they are missing, --check says which in one row and a
# run refuses in one line, before any program is loaded.
test_bpf_features() {
	local v maj min n t
	v=$(uname -r) maj=${v%%.*} min=${v#*.} min=${min%%.*}
	n=$((maj * 100 + min))
	for t in readlat opensnoop biolat tcprcv; do
		run "$BUILD/$t" --check
		if [ "$n" -ge 512 ]; then
			expect_line run.out '^BPF atomics +ok +fetch-and-add, compare-and-swap$'
			continue
		fi
		expect_status 1 "$STATUS"
		expect_line run.out '^BPF atomics +missing +no fetch-and-add or compare-and-swap \(Linux 5\.12\+\)$'
		expect_eq "$t --check, last line" "$(tail -n1 "$T/run.out")" "$t cannot run on this system"
		bpf_snapshot before
		run "$BUILD/$t" --duration 1
		expect_status 1 "$STATUS"
		expect_lines run.out . 1
		expect_eq "$t" "$(cat "$T/run.out")" "$t: this kernel's BPF has no fetch-and-add or compare-and-swap (BPF atomics, Linux 5.12+), which every program of this tool holds"
		expect_no_leak before
	done
	[ "$n" -ge 512 ] || return 0
	run "$BUILD/opensnoop" --check -C --by file
	if [ "$n" -ge 517 ]; then
		expect_line run.out '^bpf_loop +ok +BPF helper$'
	else
		expect_line run.out '^bpf_loop +missing +no such BPF helper on this kernel \(Linux 5\.17\+\)$'
		expect_eq "opensnoop --check, last line" "$(tail -n1 "$T/run.out")" "opensnoop cannot run on this system"
	fi
}
