#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# run-all.sh [-j JOBS] [--arch ARCH] --initrd INITRD KERNEL_DIR... [--arch
# ARCH --initrd INITRD KERNEL_DIR...]: run the guest tests on each kernel
# (run.sh), JOBS guests at a time (default VM_JOBS, else 1): each TCG
# guest runs on one host thread, so a 2-core machine boots two at once.
# Each kernel's output is printed whole, under its header, when its run
# ends; a failed kernel does not stop the others. Then one summary line
# per kernel and, last, the total. Exit 0 only if every kernel's run
# passed. A KERNEL_DIR is kernel.sh's (DIR/vmlinuz, DIR/package), named
# kernel-NAME; NAME's console is in console-NAME.log next to it. --arch
# (x86, default VM_ARCH, or arm64) and --initrd apply to the kernel
# directories after them, so that one run boots several architectures'
# guests side by side. --smp N --tests T1,T2 (up to the next --arch): the
# kernel directories after them run only those guest tests, on N vCPUs
# each on a host thread of its own (multi-threaded TCG), named NAME-smpN.
#
# Environment: as run.sh (VM_TIMEOUT applies to each kernel's run).
set -uo pipefail

here=$(dirname "$0")
jobs=${VM_JOBS:-1} arch=${VM_ARCH:-x86} initrd='' smp=- tests=-
runs=()	# "ARCH INITRD SMP TESTS DIR", - for run.sh's own
while [ $# -gt 0 ]; do
	case $1 in
	-j) jobs=$2; shift ;;
	--arch) arch=$2 smp=- tests=-; shift ;;
	--initrd) initrd=$2; shift ;;
	--smp) smp=$2; shift ;;
	--tests) tests=${2:--}; shift ;;
	*)
		[ -n "$initrd" ] || { echo "run-all.sh: --initrd before $1" >&2; exit 2; }
		case $smp in -) ;; '' | *[!0-9]* | 0 | 1)
			echo "run-all.sh: --smp $smp: 2 or more vCPUs" >&2; exit 2 ;; esac
		runs+=("$arch $initrd $smp $tests $1") ;;
	esac
	shift
done
case $jobs in
'' | *[!0-9]* | 0) echo "run-all.sh: -j $jobs: a number of guests, 1 or more" >&2; exit 2 ;;
esac
n=${#runs[@]}
[ "$n" -gt 0 ] || { echo "run-all.sh: no kernel directory" >&2; exit 2; }

work=$(mktemp -d)
# A stop (Ctrl-C, a kill) ends the runs too: run.sh ends its qemu.
trap 'kill $(cat "$work"/*.pid 2>/dev/null) $(jobs -pr) 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# run_name SMP DIR: the run's name: the kernel's, -smpN for an --smp run.
run_name() {
	local name=${2##*/kernel-}
	[ "$1" = - ] || name=$name-smp$1
	echo "$name"
}

# run_one I: kernel I's run, its output (stderr too, in order: run.sh's
# console tail follows its "not ok") in $work/I.out, its status and
# seconds in $work/I.rc, run.sh's PID in $work/I.pid while it runs.
run_one() {
	local i=$1 a init smp tests dir start rc
	read -r a init smp tests dir <<<"${runs[i]}"
	local name
	name=$(run_name "$smp" "$dir")
	start=$(date +%s)
	(
		# multi-threaded TCG: each vCPU on a host thread
		[ "$smp" = - ] || export VM_SMP=$smp VM_ACCEL=tcg,thread=multi
		[ "$tests" = - ] || export VM_TESTS=$tests
		VM_ARCH=$a exec bash "$here/run.sh" "$dir/vmlinuz" "$init" \
			"$(dirname "$dir")/console-$name.log"
	) > "$work/$i.out" 2>&1 &
	echo $! > "$work/$i.pid"
	wait $!
	rc=$?
	rm -f "$work/$i.pid"	# ended: its PID may be another's soon
	echo "$rc $(($(date +%s) - start))" > "$work/$i.rc"
}

# Start up to JOBS runs; print each one's output, in order, once it and
# those before it have ended. Polled: a run takes minutes.
next=0 shown=0 total_pass=0 total_fail=0 bad=
summary=()
while [ "$shown" -lt "$n" ]; do
	while [ "$next" -lt "$n" ] && [ "$(jobs -pr | wc -l)" -lt "$jobs" ]; do
		run_one "$next" &
		next=$((next + 1))
	done
	if [ ! -e "$work/$shown.rc" ]; then
		# a run that ended without its status (killed) failed
		[ -n "$(jobs -pr)" ] || [ -e "$work/$shown.rc" ] || echo "1 0" > "$work/$shown.rc"
		sleep 1
		continue
	fi
	read -r a init smp tests dir <<<"${runs[shown]}"
	name=$(run_name "$smp" "$dir")
	pkg=$(cat "$dir/package" 2>/dev/null || echo "?")
	read -r rc secs < "$work/$shown.rc"
	echo "======== vm-test [$((shown + 1))/$n] $name ($a): $pkg ========"
	cat "$work/$shown.out"
	# run.sh's last line: "vm: N passed, M failed".
	last=$(tail -n1 "$work/$shown.out")
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
		which=$(sed -n 's/^not ok \([^:]*\):.*/\1/p' "$work/$shown.out" | tr '\n' ' ')
		line="$line; not ok: ${which% }"
	fi
	summary+=("$line")
	echo
	shown=$((shown + 1))
done

echo "======== vm-test summary ($jobs at a time) ========"
printf '%s\n' "${summary[@]}"
if [ -n "$bad" ]; then
	echo "vm: $total_pass passed, $total_fail failed on $n kernel(s); failed on:$bad"
	exit 1
fi
echo "vm: $total_pass passed, $total_fail failed on $n kernel(s)"
