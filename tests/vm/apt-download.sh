#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# apt-download.sh PACKAGE DIR: PACKAGE's .deb (NAME or NAME:ARCH) downloaded
# into DIR with apt-get, never installed; prints its path. Another
# release's packages come through APT_CONFIG (apt-suite.sh's).
set -euo pipefail

pkg=$1 dir=$2
die() { echo "vm: $*" >&2; exit 1; }
# apt takes an APT_CONFIG it cannot read for none: the machine's own sources.
[ -z "${APT_CONFIG:-}" ] || [ -r "$APT_CONFIG" ] || die "APT_CONFIG=$APT_CONFIG cannot be read"

mkdir -p "$dir"
tmp=$(mktemp -d "$dir/dl.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "vm: downloading $pkg${APT_CONFIG:+ (APT_CONFIG=$APT_CONFIG)}" >&2
# Downloaded as root into a directory _apt cannot write: say so to apt.
(cd "$tmp" && apt-get -q -o APT::Sandbox::User=root download "$pkg" >&2) ||
	die "apt-get download $pkg failed (stale package lists? try: apt-get update)"
deb=$(ls -1 "$tmp"/*.deb)
mv "$deb" "$dir/"
echo "$dir/${deb##*/}"
