# SPDX-License-Identifier: GPL-2.0-only
# The common runtime's failure paths in the test VM, through test-only
# tools (tests/tools/): the verifier's words differ between kernels.

# The verifier's word for a number that is no pointer: 'inv' before 5.18.
scalar_word() { if kernel_below 5.18; then echo inv; else echo scalar; fi; }

test_verifier_rejection() {
	local w=$(scalar_word)
	run "$BUILD/tests/badprog"
	expect_status 1 "$STATUS"
	expect_lines run.out . 1
	expect_eq output "$(cat "$T/run.out")" "badprog: the kernel's verifier rejected program 'bad_prog': R1 invalid mem access '$w' (run with -v for the verifier log)"
}

test_verifier_log() {
	local w=$(scalar_word)
	run "$BUILD/tests/badprog" -v
	expect_status 1 "$STATUS"
	expect_line run.out 'BEGIN PROG LOAD LOG'
	expect_line run.out "R1 invalid mem access '$w'"
	expect_eq "last line" "$(tail -n1 "$T/run.out")" "badprog: the kernel's verifier rejected program 'bad_prog': R1 invalid mem access '$w'"
}

# What the kernel's BPF can do, probed (the code names no kernel version;
# the test takes the version as its oracle): fetch-and-add and
# compare-and-swap (BPF atomics, 5.12). Where they are missing, --check
# says so in its row and each tool runs the programs built without them;
# so does opensnoop from 5.12 to 5.16, where there is no bpf_loop (5.17),
# saying so in a row of its own.
test_bpf_features() {
	local t
	for t in readlat opensnoop biolat tcprcv; do
		run "$BUILD/$t" --check
		expect_status 0 "$STATUS"
		if kernel_below 5.12; then
			expect_line run.out '^BPF atomics +fallback +only add \(Linux 5\.12\+ has more\): the programs built without them'
		else
			expect_line run.out '^BPF atomics +ok +fetch-and-add, compare-and-swap$'
		fi
	done
	run "$BUILD/opensnoop" --check -C --by file
	expect_status 0 "$STATUS"
	if ! kernel_below 5.12 && kernel_below 5.17; then
		expect_line run.out '^bpf_loop +fallback +no such BPF helper \(Linux 5\.17\+\): the programs built without BPF atomics'
	else
		expect_no_line run.out '^bpf_loop'
	fi
}
