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
