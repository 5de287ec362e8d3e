#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# busybox.sh DEBARCH OUT: the guest's busybox for a cross build: Debian's
# busybox-static of architecture DEBARCH (arm64), downloaded with apt-get
# and unpacked, never installed (it cannot stand beside this machine's
# own busybox-static), its bin/busybox copied to OUT.
set -euo pipefail

arch=$1 out=$2
die() { echo "vm: $*" >&2; exit 1; }

command -v dpkg-deb >/dev/null || die "dpkg-deb not found (a Debian host is needed to fetch busybox)"
dpkg --print-foreign-architectures | grep -qx "$arch" || [ "$(dpkg --print-architecture)" = "$arch" ] ||
	die "dpkg does not know $arch packages: dpkg --add-architecture $arch && apt-get update"
tmp=$(mktemp -d "$(dirname "$out")/busybox.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
deb=$(bash "$(dirname "$0")/apt-download.sh" "busybox-static:$arch" "$tmp")
dpkg-deb -x "$deb" "$tmp/x"
[ -x "$tmp/x/bin/busybox" ] || die "busybox-static:$arch has no bin/busybox"
install -m 0755 "$tmp/x/bin/busybox" "$out.tmp"
mv "$out.tmp" "$out"
echo "vm: busybox $(dpkg-deb -f "$deb" Version) ($arch): $out" >&2
