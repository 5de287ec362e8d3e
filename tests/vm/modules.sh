#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# modules.sh DIR MODULE...: the kernel modules the guest must load for this
# kernel (Debian builds virtio-blk, the test disk's driver, as a module),
# each MODULE with what it depends on, from the kernel package's .deb in
# DIR (kernel.sh's). Leaves DIR/modules.cpio.gz, a gzipped newc cpio of
# /lib/modules/VERSION/NAME.ko, /lib/modules/VERSION/load (the names,
# one a line, in load order) and the kernel's config at
# /boot/config-VERSION, where Debian keeps it (guest tests read what the
# kernel was built with there). run.sh appends it to the initramfs: the
# kernel unpacks concatenated archives in turn. A MODULE built into the
# kernel (modules.builtin) needs nothing; an empty archive is fine.
set -euo pipefail

dir=$1
shift

die() { echo "vm: $*" >&2; exit 1; }

command -v cpio >/dev/null || die "cpio not found (apt-get install cpio)"
deb=$(ls -1 "$dir"/linux-image-*.deb 2>/dev/null | head -n1 || true)
[ -n "$deb" ] || die "no linux-image-*.deb in $dir (run kernel.sh first)"

tmp=$(mktemp -d "$dir/modules.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" --wildcards './lib/modules/*'
moddir=$(ls -1d "$tmp"/lib/modules/* 2>/dev/null | head -n1 || true)
[ -d "$moddir" ] || die "$deb has no lib/modules/"
version=${moddir##*/}

# Every module of the package, "NAME PATH" ('-' in a file name is '_' in
# the module's name); and those built in, by name.
find "$moddir/kernel" -name '*.ko' |
	awk '{ n = $0; sub(/.*\//, "", n); sub(/\.ko$/, "", n); gsub(/-/, "_", n); print n, $0 }' > "$tmp/index"
sed 's,.*/,,; s,\.ko$,,; s,-,_,g' "$moddir/modules.builtin" > "$tmp/builtin" 2>/dev/null || : > "$tmp/builtin"
norm() { echo "$1" | tr - _; }
ko_of() { awk -v n="$1" '$1 == n { print $2; exit }' "$tmp/index"; }
builtin() { grep -qx -- "$1" "$tmp/builtin"; }
# The modules a .ko needs loaded first (its .modinfo "depends=").
depends() { tr '\0' '\n' < "$1" | sed -n '/^depends=/ { s///; s/,/ /g; p; q; }'; }

out=$tmp/root/lib/modules/$version
mkdir -p "$out"
: > "$out/load"
# add NAME: its dependencies first (depth first), then itself, once.
add() {
	local name f dep
	name=$(norm "$1")
	grep -qx "$name" "$out/load" && return 0
	builtin "$name" && return 0
	f=$(ko_of "$name")
	[ -n "$f" ] || die "module $name: not in $deb"
	for dep in $(depends "$f"); do
		add "$dep"
	done
	cp "$f" "$out/$name.ko"
	echo "$name" >> "$out/load"
}
for m in "$@"; do
	add "$m"
done
mkdir -p "$tmp/root/boot"
cp "$dir/config" "$tmp/root/boot/config-$version"

(cd "$tmp/root" && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc -R 0:0 --quiet) | gzip -n -6 > "$dir/modules.cpio.gz.tmp"
mv "$dir/modules.cpio.gz.tmp" "$dir/modules.cpio.gz"
echo "vm: modules for $version: $(tr '\n' ' ' < "$out/load")" >&2
