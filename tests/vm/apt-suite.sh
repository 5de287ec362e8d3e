#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# apt-suite.sh SUITE DIR: a private apt configuration, DIR/apt.conf, for
# the packages of another Debian release (bullseye), from the mirror this
# machine's own apt uses for its release, with that release's keyring.
# Its lists, cache and status live in DIR: the machine's sources, lists
# and installed packages are not touched. Give it to apt as
# APT_CONFIG=DIR/apt.conf (apt-download.sh, kernel.sh). apt.conf is
# written last, after a good apt-get update (the make target).
set -euo pipefail

suite=$1 dir=$2
die() { echo "vm: $*" >&2; exit 1; }

. /etc/os-release
# The machine's own mirror of Debian: the one serving its release's main.
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' 2>/dev/null |
	awk -v r="${VERSION_CODENAME:-}" '$2 == r && $3 == "main" { print $1; exit }')
[ -n "$mirror" ] || die "no Debian mirror for ${VERSION_CODENAME:-this release}'s main among apt's sources"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || die "$keyring not found (apt-get install debian-archive-keyring)"

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
rm -rf "$dir/state" "$dir/cache" "$dir/etc"
mkdir -p "$dir/state/lists/partial" "$dir/cache/archives/partial" "$dir/etc/sources.list.d" \
	"$dir/etc/preferences.d" "$dir/etc/apt.conf.d"
: > "$dir/state/status"
echo "deb [signed-by=$keyring] $mirror $suite main" > "$dir/etc/sources.list"
cat > "$dir/apt.conf.tmp" <<CONF
Dir::State "$dir/state";
Dir::State::status "$dir/state/status";
Dir::Cache "$dir/cache";
Dir::Etc "$dir/etc";
Dir::Etc::SourceList "$dir/etc/sources.list";
Dir::Etc::SourceParts "$dir/etc/sources.list.d";
Dir::Etc::Parts "$dir/etc/apt.conf.d";
Dir::Etc::PreferencesParts "$dir/etc/preferences.d";
Dir::Etc::Trusted "$keyring";
APT::Architectures { "$(dpkg --print-architecture)"; };
APT::Sandbox::User "root";
CONF
APT_CONFIG=$dir/apt.conf.tmp apt-get -q update >&2 ||
	die "apt-get update of $suite from $mirror failed"
mv "$dir/apt.conf.tmp" "$dir/apt.conf"
echo "vm: apt for Debian $suite from $mirror: APT_CONFIG=$dir/apt.conf" >&2
