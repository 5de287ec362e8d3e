#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# kernel.sh PACKAGE DIR [DEBARCH]: fetch a Debian kernel image package into
# DIR without installing it, and check that its config has what the tools
# need.
#
# PACKAGE is a meta-package (linux-image-cloud-amd64), resolved to the image
# package it depends on, or an image package itself, of architecture
# DEBARCH (default: this machine's; another, arm64, needs dpkg
# --add-architecture and apt-get update first). Leaves DIR/vmlinuz
# (a symlink into DIR/boot), DIR/config and DIR/package ("NAME VERSION").
# A .deb already in DIR is reused: nothing is downloaded twice. Another
# Debian release's package comes through APT_CONFIG (apt-suite.sh's).
set -euo pipefail

meta=$1
dir=$2
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "vm: $*" >&2; exit 1; }
# apt takes an APT_CONFIG it cannot read for none: the machine's own sources.
[ -z "${APT_CONFIG:-}" ] || [ -r "$APT_CONFIG" ] || die "APT_CONFIG=$APT_CONFIG cannot be read"

command -v dpkg-deb >/dev/null || die "dpkg-deb not found (a Debian host is needed to fetch the kernel)"
arch=${3:-$(dpkg --print-architecture)}
# What the guest needs from the kernel: BPF and its tracing probes, BTF, and
# booting from an initramfs on a serial console, run.sh's for the arch:
# x86's 8250 (q35), arm64's PL011 (virt). The test disk's driver, a
# module, is modules.sh's.
case $arch in
amd64) serial="SERIAL_8250 SERIAL_8250_CONSOLE" ;;
arm64) serial="SERIAL_AMBA_PL011 SERIAL_AMBA_PL011_CONSOLE" ;;
*) die "no guest for $arch: amd64 or arm64" ;;
esac
NEEDED="BPF_SYSCALL BPF_EVENTS DEBUG_INFO_BTF KPROBES FTRACE_SYSCALLS
	BLK_DEV_INITRD RD_GZIP DEVTMPFS $serial"
mkdir -p "$dir"
cd "$dir"

deb=$(ls -1 linux-image-*.deb 2>/dev/null | head -n1 || true)
if [ -z "$deb" ]; then
	# Qualified (NAME:ARCH): apt takes it for this machine's arch too, and
	# answers a foreign one's dependencies qualified the same way.
	case $meta in
	linux-image-[0-9]*) pkg=$meta:$arch ;;
	*)
		pkg=$(apt-cache depends "$meta:$arch" 2>/dev/null |
			awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
		[ -n "$pkg" ] || die "cannot resolve $meta:$arch to a kernel image package (try: apt-get update$(
			[ "$arch" = "$(dpkg --print-architecture)" ] || echo "; dpkg --add-architecture $arch first"))"
		case $pkg in *:*) ;; *) pkg=$pkg:$arch ;; esac
		;;
	esac
	deb=$(bash "$here/apt-download.sh" "$pkg" .)
	deb=${deb##*/}
fi

# Only boot/ is kept: modules.sh takes the few modules the guest loads
# from the .deb itself.
rm -rf boot lib usr
dpkg-deb -x "$deb" .
rm -rf lib usr
vmlinuz=$(ls -1 boot/vmlinuz-* | head -n1)
config=$(ls -1 boot/config-* | head -n1)
[ -f "$vmlinuz" ] && [ -f "$config" ] || die "$deb has no boot/vmlinuz-* or boot/config-*"

missing=
for opt in $NEEDED; do
	grep -qx "CONFIG_$opt=y" "$config" || missing="$missing CONFIG_$opt"
done
[ -z "$missing" ] || die "$config lacks (as =y):$missing"

printf '%s %s\n' "$(dpkg-deb -f "$deb" Package)" "$(dpkg-deb -f "$deb" Version)" > package
ln -sf "$config" config
ln -sf "$vmlinuz" vmlinuz	# last: the make target
echo "vm: kernel $(cat package): $dir/$vmlinuz" >&2
