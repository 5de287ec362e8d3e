#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# mkinitramfs.sh OUT OUTPUT BUSYBOX BIN...: the guest's whole root file
# system as a gzipped newc cpio: static busybox, the guest scripts of
# tests/vm/guest/ (init at /init, the rest in /vmtest/), the systemd units
# of contrib/systemd in /vmtest/units/, and each BIN at
# /build/<its path under OUTPUT> (so the guest's $BUILD mirrors the host's
# build directory). Every BIN must be static: the guest has no libraries.
set -euo pipefail

out=$1 output=${2%/} busybox=$3
shift 3
guest=$(dirname "$0")/guest

die() { echo "vm: $*" >&2; exit 1; }

command -v cpio >/dev/null || die "cpio not found (apt-get install cpio)"
[ -x "$busybox" ] || die "$busybox not found (apt-get install busybox-static)"

is_static() {
	# No program interpreter (ld.so) and no shared libraries.
	! LC_ALL=C readelf -lW "$1" 2>/dev/null | grep -q 'Requesting program interpreter'
}

is_static "$busybox" || die "$busybox is not static (apt-get install busybox-static)"

root=$out.root
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,build,vmtest}
cp "$busybox" "$root/bin/busybox"
install -m 0755 "$guest/init" "$root/init"
for f in "$guest"/*.sh; do
	install -m 0644 "$f" "$root/vmtest/"
done
mkdir -p "$root/vmtest/units"
for f in "$(dirname "$0")"/../../contrib/systemd/*.service; do
	install -m 0644 "$f" "$root/vmtest/units/"
done
for f in "$@"; do
	is_static "$f" || die "$f is dynamically linked: the guest has no libraries (build with STATIC=1)"
	case $f in
	"$output"/*) rel=${f#"$output"/} ;;
	*) rel=$(basename "$f") ;;
	esac
	mkdir -p "$root/build/$(dirname "$rel")"
	cp "$f" "$root/build/$rel"
done

(cd "$root" && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc -R 0:0 --quiet) | gzip -n -6 > "$out.tmp"
mv "$out.tmp" "$out"
rm -rf "$root"
