#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# run-all.sh INITRD KERNEL_DIR...: run the guest tests on each kernel in
# turn (run.sh, a header before each), even after one has failed; then one
# summary line per kernel and, last, the total. Exit 0 only if every
# kernel's run passed. A KERNEL_DIR is kernel.sh's (DIR/vmlinuz,
# DIR/package), named kernel-NAME; NAME's console is in console-NAME.log
# next to it.
#
# Environment: as run.sh (VM_TIMEOUT applies to each kernel's run).
set -uo pipefail

initrd=$1
shift
here=$(dirname "$0")
n=$# i=0 total_pass=0 total_fail=0 bad=
summary=()
out=$(mktemp)
trap 'rm -f "$out"' EXIT

for dir in "$@"; do
	i=$((i + 1))
	name=$(basename "$dir")
	name=${name#kernel-}
	pkg=$(cat "$dir/package" 2>/dev/null || echo "?")
	log=$(dirname "$dir")/console-$name.log
	echo "======== vm-test [$i/$n] $name: $pkg ========"
	start=$(date +%s)
	# stderr too, in order: run.sh's console tail follows its "not ok".
	bash "$here/run.sh" "$dir/vmlinuz" "$initrd" "$log" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	secs=$(($(date +%s) - start))
	# run.sh's last line: "vm: N passed, M failed".
	last=$(tail -n1 "$out")
	passed=$(sed -n 's/^vm: \([0-9]*\) passed, [0-9]* failed$/\1/p' <<<"$last")
	failed=$(sed -n 's/^vm: [0-9]* passed, \([0-9]*\) failed$/\1/p' <<<"$last")
	if [ -z "$passed" ] || [ -z "$failed" ]; then
		passed=${passed:-0} failed=1	# run.sh itself failed (no qemu?)
	fi
	[ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1
	total_pass=$((total_pass + passed)) total_fail=$((total_fail + failed))
	line="vm: $name ($pkg): $passed passed, $failed failed, ${secs}s"
	if [ "$rc" -ne 0 ]; then
		bad="$bad $name"
		which=$(sed -n 's/^not ok \([^:]*\):.*/\1/p' "$out" | tr '\n' ' ')
		line="$line; not ok: ${which% }"
	fi
	summary+=("$line")
	echo
done

echo "======== vm-test summary ========"
printf '%s\n' "${summary[@]}"
if [ -n "$bad" ]; then
	echo "vm: $total_pass passed, $total_fail failed on $n kernel(s); failed on:$bad"
	exit 1
fi
echo "vm: $total_pass passed, $total_fail failed on $n kernel(s)"
