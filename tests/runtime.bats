#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# The common runtime's failure paths, through test-only tools.

load helpers

setup() { common_setup; }
teardown() { common_teardown; }

@test "verifier rejection: one line naming program and reason, exit 1" {
	run timeout 20 "$BUILD/tests/badprog"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "$output" = "badprog: the kernel's verifier rejected program 'bad_prog': R1 invalid mem access 'scalar' (run with -v for the verifier log)" ]
}

@test "verifier rejection with -v: the verifier log itself" {
	run timeout 20 "$BUILD/tests/badprog" -v
	[ "$status" -eq 1 ]
	[[ "$output" == *"BEGIN PROG LOAD LOG"* ]]
	[[ "$output" == *"R1 invalid mem access 'scalar'"* ]]
	[[ "${lines[-1]}" == "badprog: the kernel's verifier rejected program 'bad_prog': R1 invalid mem access 'scalar'" ]]
}
