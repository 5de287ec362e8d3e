#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# run.sh KERNEL INITRD LOG: boot the test VM under qemu (TCG, no KVM needed)
# with a hard timeout, the serial console captured in LOG; then print the
# guest's result lines and, last, "vm: N passed, M failed". Exit 0 only if
# every test passed and the guest reported "VMTEST done".
#
# The guest gets a disk of its own for the block I/O tests: a fresh,
# empty raw file of VM_DISK_MB (default 64) MiB on a virtio-blk PCI device
# (/dev/vda), made next to LOG and removed after the run. Its driver is a
# module: the kernel's modules.cpio.gz (modules.sh), if any, is appended
# to INITRD for this run.
#
# Environment: VM_ARCH (the guest's, as make's ARCH: x86, default, or
# arm64), VM_TIMEOUT (seconds, default 300), VM_TESTS (guest test files
# or tests to run, e.g. "readlat runtime.verifier_log"; default all),
# QEMU, VM_CPU, VM_ACCEL, VM_MEM, VM_SMP, VM_APPEND (more kernel command
# line), VM_DISK_MB.
set -uo pipefail

kernel=$1 initrd=$2 log=$3
timeout_s=${VM_TIMEOUT:-300}
# Each arch's machine: x86_64 a q35 PC, its console the first 8250 UART;
# arm64 qemu's virt board (PCIe, a PL011 UART), its CPU a Neoverse N1
# (the cores of Graviton2 and Ampere Altra: ARMv8.2 with LSE atomics).
case ${VM_ARCH:-x86} in
x86) qemu=${QEMU:-qemu-system-x86_64} qemu_pkg=qemu-system-x86 machine=q35 console=ttyS0
	cpu=${VM_CPU:-} ;;
arm64) qemu=${QEMU:-qemu-system-aarch64} qemu_pkg=qemu-system-arm machine=virt console=ttyAMA0
	cpu=${VM_CPU:-neoverse-n1} ;;
*) echo "vm: VM_ARCH=$VM_ARCH: x86 or arm64" >&2; exit 1 ;;
esac
# A hung or oopsed guest kernel powers off at once (softlockup_panic,
# oops=panic, panic=-1 with -no-reboot) rather than waiting for the
# timeout: a task that oopses holding a lock can hang the rest for good.
append="console=$console panic=-1 softlockup_panic=1 oops=panic quiet ${VM_APPEND:-}"
# shellcheck disable=SC2086 # split and rejoin: any spacing, commas between
tests=$(echo ${VM_TESTS:-} | tr ' ' ,)
[ -n "$tests" ] && append="$append vmtest.only=$tests"

command -v "$qemu" >/dev/null || { echo "vm: $qemu not found (apt-get install $qemu_pkg)" >&2; exit 1; }

pkg=$(cat "$(dirname "$kernel")/package" 2>/dev/null || echo "?")

# The run's own files: the disk image and the initramfs with the modules.
work=$(mktemp -d "$(dirname "$log")/run.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
disk=$work/disk.img
truncate -s "${VM_DISK_MB:-64}M" "$disk" || exit 1
# cache=none (O_DIRECT on the host: the guest's I/O really waits for a
# disk) where the host's file system allows it.
cache=none
dd if=/dev/zero of="$disk" bs=4096 count=1 oflag=direct conv=notrunc status=none 2>/dev/null ||
	cache=writeback
modules=$(dirname "$kernel")/modules.cpio.gz
if [ -f "$modules" ]; then
	cat "$initrd" "$modules" > "$work/initrd" || exit 1
	initrd=$work/initrd
fi
echo "vm: booting $pkg under $qemu (TCG), timeout ${timeout_s}s, console in $log" >&2
start=$(date +%s)
# -nodefaults: no NIC (no iPXE ROM to wait for), no VGA; the console is
# the first serial port, on stdout. Nothing is read from stdin.
# thread=single: both vCPUs on one host thread. Multi-threaded TCG (the
# default) hangs the guest now and then when the kernel patches its own
# code while the other vCPU runs it, as it does each time a tracepoint is
# enabled or disabled: both vCPUs loop on the int3 of text_poke_bp in
# syscall_trace_enter (soft lockup, see tests/vm/README.md). arm64's
# interval tests run once more with VM_ACCEL=tcg,thread=multi and more
# vCPUs (run-all.sh --smp): there patching is one instruction write.
# timeout runs qemu in a process group of its own, which a Ctrl-C at
# the terminal does not reach: a stop of this script stops it.
timeout_pid=
trap '[ -z "$timeout_pid" ] || kill -TERM $timeout_pid 2>/dev/null; rm -rf "$work"; exit 130' INT TERM HUP
timeout -k 10 "$timeout_s" "$qemu" \
	-machine "$machine" ${cpu:+-cpu "$cpu"} -accel "${VM_ACCEL:-tcg,thread=single}" \
	-m "${VM_MEM:-1024}" -smp "${VM_SMP:-2}" \
	-nographic -nodefaults -no-user-config -serial stdio -monitor none -no-reboot \
	-kernel "$kernel" -initrd "$initrd" -append "$append" \
	-drive "file=$disk,format=raw,if=none,id=disk,cache=$cache" -device virtio-blk-pci,drive=disk \
	< /dev/null > "$log" 2>&1 &
timeout_pid=$!
wait $timeout_pid
rc=$?
trap - INT TERM HUP
secs=$(($(date +%s) - start))

# The console has CRLF line ends and may start lines with terminal escapes.
results=$(tr -d '\r' < "$log" | sed -n 's/^.*\(VMTEST .*\)$/\1/p')
extra=
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	extra="not ok vm.boot: timed out after ${timeout_s}s (VM_TIMEOUT); console in $log"
elif ! grep -qE '^VMTEST done [0-9]+ passed, [0-9]+ failed$' <<<"$results"; then
	extra="not ok vm.boot: the guest never said 'VMTEST done' (qemu exit status $rc); console in $log"
fi

sed -n 's/^VMTEST \(ok .*\|not ok .*\|# .*\|info .*\)$/\1/p' <<<"$results"
passed=$(grep -c '^VMTEST ok ' <<<"$results")
failed=$(grep -c '^VMTEST not ok ' <<<"$results")
done_line=$(grep -E '^VMTEST done ' <<<"$results" | tail -n1)
if [ -z "$extra" ] && [ "$done_line" != "VMTEST done $passed passed, $failed failed" ]; then
	extra="not ok vm.results: the guest said '${done_line#VMTEST }' but the console shows $passed ok, $failed not ok"
fi
# vm.* (the kernel log's checks) always run: some other test must have.
if [ -z "$extra" ] && ! grep -E '^VMTEST (ok|not ok) ' <<<"$results" | grep -qvE '^VMTEST (ok|not ok) vm\.'; then
	extra="not ok vm.results: no test ran"
fi
if [ -n "$extra" ]; then
	echo "$extra"
	failed=$((failed + 1))
	console=$(tr -d '\r' < "$log" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' | grep -v '^kmsg: ')
	# The first kernel splat is the cause; what follows it is often only
	# its consequences (stalls, hung tasks), which the tail shows.
	splat='(BUG:|Oops|WARNING:|general protection|Kernel panic|rcu: INFO|blocked for more than)'
	first=$(grep -nE "$splat" <<<"$console" | head -n1 | cut -d: -f1)
	if [ -n "$first" ]; then
		echo "vm: the console's first kernel splat (line $first):" >&2
		tail -n +"$first" <<<"$console" | head -n 60 | sed 's/^/    /' >&2
	fi
	echo "vm: last lines of the console:" >&2
	tail -n 25 <<<"$console" | sed 's/^/    /' >&2
fi
echo "vm: ${secs}s in the VM" >&2
echo "vm: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
