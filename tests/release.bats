#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# Releases: one commit built in two directories (a git clone, and the
# make dist tarball unpacked outside git) gives the same bytes; --version
# says where its version came from and how the binary is linked; the
# make release tarball runs its tools with nothing else on the host.
#
# setup_file makes four builds, -j2, of the commit checked out (HEAD;
# uncommitted changes are not in it): a git clone, the make dist tarball,
# a plain git archive (no VERSION, no git) and a dynamic one.

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
TOOLS=(readlat opensnoop biolat tcprcv)

# make, without the variables of a make test around it (OUTPUT=, STATIC=).
make() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make "$@"
}

# mk -C DIR ARGS...: quiet, its output kept in $R/make.log for a failure.
mk() {
	make -j2 --no-print-directory "$@" >> "$R/make.log" 2>&1 || {
		echo "make $* failed:" >&2
		tail -n 30 "$R/make.log" >&2
		return 1
	}
}

setup_file() {
	export R=$BATS_FILE_TMPDIR
	if ! git -C "$ROOT" rev-parse --git-dir > /dev/null 2>&1; then
		export NO_GIT=1	# bats 1.8 cannot skip from setup_file
		return 0
	fi
	export GIT=$R/from-git
	git clone -q --shared --no-checkout "$ROOT" "$GIT"
	git -C "$GIT" checkout -q --detach "$(git -C "$ROOT" rev-parse HEAD)"
	export DESCRIBE
	DESCRIBE=$(git -C "$GIT" describe --tags --match 'v[0-9]*' --always --abbrev=12)
	export SOURCE_DATE_EPOCH
	SOURCE_DATE_EPOCH=$(git -C "$GIT" log -1 --format=%ct)
	mk -C "$GIT" release dist

	# The dist tarball, in a directory of another name and depth, no git.
	mkdir -p "$R/from-dist/x"
	tar -xzf "$GIT/build/tracetools-$DESCRIBE.tar.gz" -C "$R/from-dist/x"
	export DIST=$R/from-dist/x/tracetools-$DESCRIBE
	# another umask, and completions of another name left in its build
	# (as make install APP_PREFIX= leaves): neither may reach the tarball
	mk -C "$DIST" APP_PREFIX=tt- completions
	(umask 077 && mk -C "$DIST" release)
	mk -C "$DIST" STATIC=0 OUTPUT=build-dynamic all
	export ARCH_TAR=tracetools-$DESCRIBE-$(uname -m)

	# A plain git archive of the commit (as a forge's tarball is), no
	# prefix, unpacked outside git: make release names it all the same.
	export EXPORTED=$R/exported
	mkdir -p "$EXPORTED"
	git -C "$GIT" archive HEAD | tar -xf - -C "$EXPORTED"
	(unset SOURCE_DATE_EPOCH && mk -C "$EXPORTED" release)
}

setup() {
	[ -z "${NO_GIT:-}" ] || skip "$ROOT is not a git checkout: no commit to clone and make dist"
}

# sums DIR: "sha256 name" of every regular file directly in DIR/build
# but what make dist left there.
sums() {
	(cd "$1/build" && find . -maxdepth 1 -type f ! -name "tracetools-$DESCRIBE.tar.gz" \
		-printf '%f\n' | LC_ALL=C sort | xargs sha256sum)
}

@test "one commit built in two directories: the same bytes, no build path inside" {
	local t
	sums "$GIT" > "$R/git.sums"
	sums "$DIST" > "$R/dist.sums"
	for t in "${TOOLS[@]}"; do
		grep -q " $t\$" "$R/git.sums"
		grep -q " $t.bpf.o\$" "$R/git.sums"
	done
	grep -q " $ARCH_TAR.tar.gz\$" "$R/git.sums"
	diff "$R/git.sums" "$R/dist.sums" || {
		echo "differ between $GIT and $DIST (above)"
		return 1
	}
	run ! grep -rlF -e "$GIT" -e "$R/from-dist" "$GIT/build" "$DIST/build"
}

@test "--version from git: git describe, static, the libbpf of the headers" {
	local major minor t
	major=$(sed -n 's/^#define LIBBPF_MAJOR_VERSION //p' /usr/include/bpf/libbpf_version.h)
	minor=$(sed -n 's/^#define LIBBPF_MINOR_VERSION //p' /usr/include/bpf/libbpf_version.h)
	[ -n "$major" ] && [ -n "$minor" ]
	for t in "${TOOLS[@]}"; do
		run -0 "$GIT/build/$t" --version
		[ "${lines[0]}" = "$t $DESCRIBE" ]
		[ "${lines[1]}" = "static, libbpf $major.$minor" ]
		[ "${#lines[@]}" -eq 2 ]
	done
	run -0 file "$GIT/build/readlat"
	[[ "$output" == *"statically linked"* ]]
	run ldd "$GIT/build/readlat"
	[[ "$output" == *"not a dynamic executable"* ]]
}

@test "--version from the dist tarball: what git archive wrote; make dist wants a clean tree" {
	[ ! -e "$DIST/.git" ] && [ ! -e "$DIST/VERSION" ]
	run git -C "$DIST" rev-parse --show-toplevel
	[ "$status" -ne 0 ] || [ "$output" != "$DIST" ]
	run -0 "$DIST/build/biolat" -V
	[ "${lines[0]}" = "biolat $DESCRIBE" ]
	# in a packager's own git repository, around it or of it (as
	# git-buildpackage keeps it): still the commit git archive wrote
	git init -q "$R/from-dist"
	run -0 "$DIST/packaging/version.sh" "$DIST"
	rm -rf "$R/from-dist/.git"
	[ "$output" = "$DESCRIBE" ]
	git init -q "$DIST"
	git -C "$DIST" add packaging Makefile
	git -C "$DIST" -c user.name=t -c user.email=t@t commit -qm packaged
	run -0 "$DIST/packaging/version.sh" "$DIST"
	[ "$output" = "$DESCRIBE" ]
	run -0 "$DIST/packaging/version.sh" --date "$DIST"
	rm -rf "$DIST/.git"
	[ "$output" = "$SOURCE_DATE_EPOCH" ]
	# a packager's VERSION file wins
	echo 9.9.9 > "$DIST/VERSION"
	run -0 "$DIST/packaging/version.sh" "$DIST"
	rm "$DIST/VERSION"
	[ "$output" = 9.9.9 ]

	echo "# changed" >> "$GIT/README.md"
	run make -C "$GIT" dist
	git -C "$GIT" checkout -q README.md
	[ "$status" -ne 0 ]
	[[ "$output" == *"uncommitted changes"* ]]
	# the unpacked tarball is no checkout: an error, not an empty tarball
	run make -C "$DIST" dist
	[ "$status" -ne 0 ]
	[[ "$output" == *"not the top of a git checkout"* ]]
}

@test "make release from a plain git archive: the commit's version and time, not unknown" {
	[ ! -e "$EXPORTED/.git" ]
	[ -f "$EXPORTED/build/$ARCH_TAR.tar.gz" ]
	run ! compgen -G "$EXPORTED/build/tracetools-unknown*"
	run -0 "$EXPORTED/build/readlat" --version
	[ "${lines[0]}" = "readlat $DESCRIBE" ]
	# without SOURCE_DATE_EPOCH, the commit's time: the same bytes as
	# the release made from git with it set to that time
	cmp "$EXPORTED/build/$ARCH_TAR.tar.gz" "$GIT/build/$ARCH_TAR.tar.gz"
	# a checkout's own copy is not filled in, and is not taken for one
	run -0 "$ROOT/packaging/version.sh" "$ROOT"
	[ "$output" = "$(git -C "$ROOT" describe --tags --match 'v[0-9]*' --always --dirty --abbrev=12)" ]
}

@test "STATIC=0: --version says dynamic, as file(1) and ldd do; make release refuses it" {
	local t
	for t in "${TOOLS[@]}"; do
		run -0 "$DIST/build-dynamic/$t" -V
		[ "${lines[0]}" = "$t $DESCRIBE" ]
		[[ "${lines[1]}" == "dynamic, libbpf "* ]]
	done
	run -0 file -L "$DIST/build-dynamic/readlat"
	[[ "$output" == *"dynamically linked"* ]]
	run -0 ldd "$DIST/build-dynamic/readlat"
	[[ "$output" == *"libbpf.so"* ]]
	run make -C "$DIST" STATIC=0 release
	[ "$status" -eq 2 ]
	[[ "$output" == *"make release ships static binaries"* ]]
}

@test "make release: static stripped tools that --check under env -i in an empty directory" {
	local d=$BATS_TEST_TMPDIR/empty t
	mkdir "$d"
	tar -xzf "$GIT/build/$ARCH_TAR.tar.gz" -C "$d"
	[ "$(ls "$d")" = "$ARCH_TAR" ]
	cd "$d/$ARCH_TAR"
	run -0 sha256sum --strict -c SHA256SUMS
	for t in "${TOOLS[@]}"; do
		grep -qx "[0-9a-f]\{64\}  $t" SHA256SUMS
		grep -qx "[0-9a-f]\{64\}  man/man8/$t.8" SHA256SUMS
		run -0 file "$t"
		[[ "$output" == *"statically linked"*", stripped" ]]
		run -0 env -i "./$t" --check
		[[ "${lines[-1]}" == "$t can run on this system" ]]
	done
	# every file is in SHA256SUMS
	[ "$(find . -type f ! -name SHA256SUMS | wc -l)" -eq "$(wc -l < SHA256SUMS)" ]
	# the completions, under the tools' own names only
	for t in "${TOOLS[@]}"; do
		[ -s "completion/bash/$t" ] && [ -s "completion/zsh/_$t" ] && [ -s "completion/fish/$t.fish" ]
	done
	[ "$(find completion -type f | wc -l)" -eq $((3 * ${#TOOLS[@]})) ]
	# modes as made, whatever the umask: files 0644 (tools 0755)
	[ -z "$(find . -type f ! -perm 0644 ! -perm 0755)" ] && [ -z "$(find . -type d ! -perm 0755)" ]
}

@test "ARCH=arm64: a compiler for another machine, none, or an OUTPUT of another ARCH is one line, exit 2" {
	command -v aarch64-linux-gnu-gcc > /dev/null || skip "no aarch64-linux-gnu-gcc"
	# a CC given (the environment's, a parent make's) that builds for this machine
	run make -n -C "$DIST" ARCH=arm64 CC=gcc all
	[ "$status" -eq 2 ]
	[[ "$output" == *"ARCH=arm64: CC=gcc builds for x86_64, not aarch64"* ]]
	run make -n -C "$DIST" ARCH=arm64 CROSS_COMPILE=nonesuch- all
	[ "$status" -eq 2 ]
	[[ "$output" == *"ARCH=arm64: no compiler nonesuch-gcc"* ]]
	# the native build remembers its ARCH: a cross make of it would take
	# its x86 objects as up to date
	[ "$(cat "$DIST/build/.arch")" = x86 ]
	run make -n -C "$DIST" ARCH=arm64 OUTPUT=build all
	[ "$status" -eq 2 ]
	[[ "$output" == *"build holds an ARCH=x86 build, not ARCH=arm64"* ]]
	# the cross one
	run -0 make -n -C "$DIST" ARCH=arm64 all
	[[ "$output" == *"aarch64-linux-gnu-gcc"* ]]
	# an environment's CROSS_COMPILE (a kernel build's) is not a native build's
	run -0 env CROSS_COMPILE=aarch64-linux-gnu- make -n -C "$DIST" all
	[[ "$output" != *"aarch64-linux-gnu-"* ]]
}

@test "make arm64-test runs every step whatever the one before said, and fails if one did" {
	local stub=$BATS_TEST_TMPDIR/make-arm64
	printf '#!/bin/sh\necho "$*" >> %s.calls\nexit 1\n' "$stub" > "$stub"
	chmod +x "$stub"
	# arm64-build (the stub, failing) taken as made: the steps after it
	run make -C "$DIST" -o arm64-build ARM64_MAKE="$stub" ARM64_OUTPUT="$BATS_TEST_TMPDIR/none" arm64-test
	[ "$status" -ne 0 ]
	[ "$(cat "$stub.calls")" = "$(printf '%s\n' unit-test release vm-test)" ]
	[[ "$output" == *"arm64-test: the unit tests failed"* ]]
	[[ "$output" == *"arm64-test: make release failed"* ]]
}
