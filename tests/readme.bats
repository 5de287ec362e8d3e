#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# The README's commands work as written: as root on a machine without
# sudo (a container, a cloud image logged in as root) and for a user with
# sudo. apt-get, dpkg, make, sudo and the tool are stubs that log their
# calls.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	common_setup
	# a user other than root must reach it: not under bats's own tmpdir
	NONROOT_DIR=$(mktemp -d /tmp/tracetools-readme.XXXXXX)
	T=$NONROOT_DIR
	mkdir -p "$T/bin" "$T/cwd/build"
	for c in apt-get dpkg make; do stub "$T/bin/$c" "$c"; done
	stub "$T/cwd/build/readlat" readlat
	ln -s "$(command -v id)" "$T/bin/id"
	chmod -R a+rX "$T"
}
teardown() { common_teardown; }

# stub PATH NAME: a command that appends "NAME ARGS (uid U)" to $T/calls.
stub() {
	printf '#!/bin/sh\necho "%s $* (uid $(id -u))" >> %s/calls\n' "$2" "$T" > "$1"
	chmod 755 "$1"
}

# block REGEX: the sh block that follows the first line matching REGEX.
block() {
	sed -n "/$1/,\$p" "$BATS_TEST_DIRNAME/../README.md" |
		sed -n '/^```sh$/,/^```$/p' | sed '1d;/^```$/,$d'
}

# run_block REGEX UID: run it in sh as UID with only the stubs on PATH.
run_block() {
	local cmd
	cmd=$(block "$1")
	[ -n "$cmd" ]
	touch "$T/calls" && chmod 666 "$T/calls"
	run setpriv --reuid="$2" --regid="$2" --clear-groups \
		env -i PATH="$T/bin" HOME=/ /bin/sh -c "cd '$T/cwd' || exit 1
$cmd"
	echo "status $status: $output"
	cat "$T/calls"
}

@test "README: the test command and the quick start run as root without sudo" {
	for re in '<!-- test-command -->' '^## Quick start'; do
		: > "$T/calls"
		run_block "$re" 0
		[ "$status" -eq 0 ]
		grep -q '^apt-get install .* (uid 0)$' "$T/calls"
		refute grep -v '(uid 0)$' "$T/calls"
	done
	grep -q '^readlat  (uid 0)$' "$T/calls"
	: > "$T/calls"
	run_block '<!-- test-command -->' 0
	grep -q '^make test (uid 0)$' "$T/calls"
	# the arm64 libraries of the cross build: multiarch, before the update
	grep -q '^dpkg --add-architecture arm64 (uid 0)$' "$T/calls"
	[ "$(grep -n -m1 '^dpkg ' "$T/calls" | cut -d: -f1)" -lt "$(grep -n -m1 '^apt-get update' "$T/calls" | cut -d: -f1)" ]
}

@test "README: a user runs them through sudo" {
	stub "$T/bin/sudo" sudo
	run_block '<!-- test-command -->' "$NOBODY"
	[ "$status" -eq 0 ]
	grep -q "^sudo dpkg --add-architecture arm64 (uid $NOBODY)$" "$T/calls"
	grep -q "^sudo apt-get update (uid $NOBODY)$" "$T/calls"
	grep -q "^sudo make test (uid $NOBODY)$" "$T/calls"
	refute grep -q '^apt-get' "$T/calls"
}
