#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# The Debian package (make deb): lintian, hardening, its maintainer
# scripts (run with their commands logged, and in a container booted by
# systemd: systemd-nspawn, of systemd-container), installed with apt-get
# and run from /usr/sbin, beside Debian's libbpf-tools, purged without a
# trace (that two builds give the same bytes is make repro-test's). It
# installs packages on this machine and puts it back as it was: it purges
# what it installed, leaves a libbpf-tools that was there before, and
# does not run where a tracetools package is already installed. The
# package is the one in DEBS (make test's, made once by make deb), else
# one it makes.

load helpers
bats_require_minimum_version 1.5.0

PKG=tracetools
TOOLS=(readlat opensnoop biolat tcprcv)
PKG_PREFIX=tt-	# packaging/debian/rules' APP_PREFIX

setup_file() {
	if installed "$PKG"; then
		skip "a $PKG package is installed here already: this test would replace it"
	fi
	export STATE=$BATS_FILE_TMPDIR/state
	mkdir -p "$STATE"
	if [ -z "${DEBS:-}" ] || ! compgen -G "$DEBS/${PKG}_*_amd64.deb" > /dev/null; then
		export DEBS=$BATS_FILE_TMPDIR/a
		make -C "$BATS_TEST_DIRNAME/.." --no-print-directory deb DEB_BUILDDIR="$DEBS" \
			> "$STATE/build.log" 2>&1 || { tail -n 40 "$STATE/build.log" >&3; return 1; }
	fi
	export DEB
	DEB=$(echo "$DEBS/${PKG}_"*_amd64.deb)
	dpkg-deb -c "$DEB" > "$STATE/contents"
	unit_state > "$STATE/units-before"
}

# What systemd and deb-systemd-helper have of the package's units.
unit_state() {
	find /etc/systemd /var/lib/systemd/deb-systemd-helper-* \
		-name '*-metrics.service*' 2>/dev/null | sort
}

# Only what this file installed (a mark each, by apt_install) is purged.
teardown_file() {
	local m
	for m in "$BATS_FILE_TMPDIR"/installed-by-test.*; do
		[ -e "$m" ] || continue
		installed "${m##*.}" && apt-get purge -y "${m##*.}" > /dev/null 2>&1
	done
	return 0
}

# apt_install NAME [WHAT]: apt-get install WHAT (default NAME: a package,
# or a .deb's path), marked for teardown_file unless it was there before.
apt_install() {
	installed "$1" || touch "$BATS_FILE_TMPDIR/installed-by-test.$1"
	apt-get install -y "${2:-$1}" > "$T/apt" 2>&1 || { cat "$T/apt"; false; }
}

setup() { common_setup; }
teardown() {
	[ -z "${CT_MOUNTS+x}" ] || ct_stop
	common_teardown
}

installed() { dpkg-query -W -f '${Status}' "$1" 2>/dev/null | grep -q ' installed$'; }

# wait_polling PID: until PID waits in epoll_wait(2) or epoll_pwait(2)
# (x86_64's 232 and 281, as /proc/PID/syscall shows it), WAIT_SECS at most.
wait_polling() {
	local nr end=$((SECONDS + WAIT_SECS))
	while ((SECONDS <= end)); do
		read -r nr _ < "/proc/$1/syscall" || return 1
		[ "$nr" = 232 ] || [ "$nr" = 281 ] && return 0
		nap 0.01
	done
	echo "process $1 is not polling after ${WAIT_SECS}s" >&2
	return 1
}

# in_package PATH: the package has PATH (as dpkg-deb -c lists it, ./PATH).
in_package() { awk '{ print $6 }' "$STATE/contents" | grep -qxF ".$1"; }

@test "lintian: no error and no warning on the .deb and .buildinfo" {
	run lintian --allow-root "$DEBS"/*.deb "$DEBS"/*.buildinfo
	echo "$output"
	[ "$status" -eq 0 ]
	refute grep -qE '^[EW]: ' <<< "$output"
}

@test "the tools are in /usr/sbin with the prefix, dynamic, PIE, BIND_NOW, fortified" {
	local t f x=$BATS_TEST_TMPDIR/x
	dpkg-deb -x "$DEB" "$x"
	for t in "${TOOLS[@]}"; do
		f=$x/usr/sbin/$PKG_PREFIX$t
		echo "$f"
		[ -x "$f" ]
		readelf -h "$f" | grep -qE 'Type: +DYN'
		readelf -d "$f" | grep -qE '\(FLAGS_1\).*NOW.*PIE'
		readelf -d "$f" | grep -qF 'Shared library: [libbpf.so.1]'
		readelf -lW "$f" | grep -q 'GNU_RELRO'
		nm -D "$f" | grep -qE ' U __[a-z_]+_chk(@|$)'
		in_package "/usr/share/man/man8/$PKG_PREFIX$t.8.gz"
		in_package "/lib/systemd/system/$t-metrics.service"
	done
	dpkg-deb -f "$DEB" Depends | grep -q 'libbpf1'
}

# maint_run SCRIPT ARGS...: the package's maintainer script run as dpkg
# runs it, as if systemd were running (the scripts ask whether
# /run/systemd/system exists: here a directory of the test's), the
# commands it would run on the units logged, not run: "deb-systemd-invoke
# ACTION UNITS" and the like, in $T/calls. No unit was enabled before
# (deb-systemd-helper was-enabled fails).
maint_run() {
	local s=$T/maint
	if [ ! -d "$s" ]; then
		mkdir -p "$s/bin" "$s/run-systemd-system"
		dpkg-deb -e "$DEB" "$s/ctrl"
		for c in deb-systemd-invoke deb-systemd-helper systemctl; do
			printf '#!/bin/sh\necho "${0##*/} $*" >> "%s"\n%s\n' "$T/calls" \
				'case " $* " in *" was-enabled "*) exit 1 ;; esac' > "$s/bin/$c"
			chmod +x "$s/bin/$c"
		done
	fi
	[ -f "$s/ctrl/$1" ] || return 0
	sed "s|/run/systemd/system|$s/run-systemd-system|g" "$s/ctrl/$1" > "$s/$1"
	env -u DPKG_ROOT PATH="$s/bin:$PATH" sh -e "$s/$@"
}

# What each script does with the units: after an upgrade the enabled ones
# (deb-systemd-invoke restarts only those, and any running) run again,
# none is stopped before it, a removal stops them, and a first install
# enables none (and its start, of no enabled unit, starts none: what a
# booted systemd does with it is the next test's).
@test "maintainer scripts: restart after an upgrade, stop on removal, enable nothing" {
	local units old=0.1-1 new
	new=$(dpkg-deb -f "$DEB" Version)
	units=$(printf '%s-metrics.service\n' "${TOOLS[@]}" | LC_ALL=C sort | paste -sd' ')
	# an upgrade, in dpkg's order: nothing stopped, then a restart
	: > "$T/calls"
	maint_run preinst upgrade "$old"
	maint_run prerm upgrade "$new"
	maint_run postinst configure "$old"
	cat "$T/calls"
	refute grep -E '^(deb-systemd-invoke|systemctl) .*\<stop\>' "$T/calls"
	[ "$(grep -c '^deb-systemd-invoke ' "$T/calls")" -eq 1 ]
	grep -qx "deb-systemd-invoke restart $units" "$T/calls"
	# a removal stops them all
	: > "$T/calls"
	maint_run prerm remove
	cat "$T/calls"
	grep -qx "deb-systemd-invoke stop $units" "$T/calls"
	# a first install enables none
	: > "$T/calls"
	maint_run postinst configure ""
	cat "$T/calls"
	refute grep -E '^(deb-systemd-helper|systemctl) (--[a-z]+ )*enable ' "$T/calls"
	refute grep -E '^deb-systemd-invoke (restart|try-restart)' "$T/calls"
}

# A container booted by systemd (systemd-nspawn) on this machine's own
# tree under a tmpfs overlay: what dpkg and systemd do there never reaches
# this machine, and nothing is downloaded. ct_start DIR: booted (to
# basic.target: no service of this machine's starts), DIR at /debs;
# ct CMD...: run in it, bounded; ct_stop (teardown): shut down, unmounted.
CT_BOOT_SECS=60
ct_start() {
	local c=$BATS_TEST_TMPDIR/ct i p ns st=
	command -v systemd-nspawn > /dev/null || { echo "no systemd-nspawn (apt-get install systemd-container)"; return 1; }
	mkdir -p "$c/t" "$c/m"
	mount -t tmpfs tmpfs "$c/t"
	CT_MOUNTS=("$c/t")
	mkdir "$c/t/upper" "$c/t/work"
	mount -t overlay overlay -o "lowerdir=/,upperdir=$c/t/upper,workdir=$c/t/work" "$c/m"
	CT_MOUNTS=("$c/m" "$c/t")
	[ "$(findmnt -n -o FSTYPE "$c/m")" = overlay ]
	# A policy-rc.d that lets no service start (a container image's) is
	# this machine's, not the container's.
	rm -f "$c/m/usr/sbin/policy-rc.d"
	systemd-nspawn --quiet --register=no --keep-unit --private-network -M tracetools-test -D "$c/m" \
		--capability=all --system-call-filter='bpf perf_event_open' --bind-ro="$1:/debs" \
		--console=passive -b systemd.unit=basic.target > "$T/nspawn" 2>&1 &
	CT_NSPAWN=$!
	# Its init: the child of nspawn in a PID namespace of its own (the
	# first child, which makes it, is not).
	CT_INIT=
	for ((i = 0; i < CT_BOOT_SECS * 100 && ${#CT_INIT} == 0; i++)); do
		for p in $(cat "/proc/$CT_NSPAWN/task/$CT_NSPAWN/children"); do
			# (the first child gone meanwhile has no namespace to read)
			ns=$(readlink "/proc/$p/ns/pid") || continue
			[ "$ns" = "$(readlink /proc/self/ns/pid)" ] || CT_INIT=$p
		done
		nap 0.01
	done 2>/dev/null
	[ -n "$CT_INIT" ] || { cat "$T/nspawn"; return 1; }
	# Until its boot is done (systemctl answers once its socket is up),
	# CT_BOOT_SECS at most.
	for ((i = 0; i < CT_BOOT_SECS * 10; i++)); do
		case ${st:=$(ct systemctl is-system-running 2>/dev/null)} in
		running) return 0 ;;
		degraded) ct systemctl --failed --no-pager; return 0 ;;
		esac
		st=
		sleep 0.1
	done
	echo "the container did not boot within ${CT_BOOT_SECS}s: $(ct systemctl is-system-running)"
	ct systemctl list-jobs --no-pager
	cat "$T/nspawn"
	return 1
}

# A dpkg run (its triggers: man-db's) takes longer than a wait for a line.
CT_DPKG_SECS=120
ct() { timeout "${CT_SECS:-$WAIT_SECS}" nsenter -t "$CT_INIT" -a "$@"; }

ct_stop() {
	local m st=0
	if [ -n "${CT_NSPAWN:-}" ]; then
		kill "$CT_NSPAWN" 2>/dev/null || true	# nspawn shuts the container down
		wait_exit "$CT_NSPAWN" > /dev/null 2>&1 || st=$?
		[ "$st" -ne 124 ] || { kill -KILL "$CT_NSPAWN"; wait "$CT_NSPAWN" || true; }
	fi
	for m in "${CT_MOUNTS[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m"
	done
	CT_MOUNTS=() CT_NSPAWN=
}

# ct_unit UNIT: its state in the container, "ENABLED ACTIVE".
ct_unit() {
	echo "$(ct systemctl is-enabled "$1" 2>/dev/null || true) $(ct systemctl is-active "$1" || true)"
}

# ct_said UNIT N: the unit's tool has said at least N times that it traces.
ct_said() {
	[ "$(ct journalctl -q -u "$1" -o cat | grep -c 'Hit Ctrl-C to end')" -ge "$2" ]
}

@test "under systemd: an upgrade restarts the enabled unit, a removal stops it, an install starts none" {
	local d=$BATS_TEST_TMPDIR/debs v pid
	CT_MOUNTS=()
	# the package, and itself again as an upgrade
	mkdir -p "$d/r"
	cp "$DEB" "$d/first.deb"
	v=$(dpkg-deb -f "$DEB" Version)
	dpkg-deb -R "$DEB" "$d/r/x"
	sed -i "s/^Version: .*/Version: $v+upgrade1/" "$d/r/x/DEBIAN/control"
	dpkg-deb -b "$d/r/x" "$d/upgrade.deb" > /dev/null
	ct_start "$d"
	CT_SECS=$CT_DPKG_SECS ct sh -c 'dpkg --purge tracetools > /dev/null 2>&1; mkdir -p /var/lib/prometheus/node-exporter'

	CT_SECS=$CT_DPKG_SECS ct dpkg -i /debs/first.deb > "$T/dpkg" 2>&1 || { cat "$T/dpkg"; false; }
	[ "$(ct_unit readlat-metrics)" = "disabled inactive" ]
	[ "$(ct_unit opensnoop-metrics)" = "disabled inactive" ]
	ct systemctl enable --now readlat-metrics
	retry ct_said readlat-metrics 1
	pid=$(ct systemctl show -p MainPID --value readlat-metrics)

	CT_SECS=$CT_DPKG_SECS ct dpkg -i /debs/upgrade.deb > "$T/dpkg" 2>&1 || { cat "$T/dpkg"; false; }
	[ "$(ct dpkg-query -W -f '${Version}' tracetools)" = "$v+upgrade1" ]
	[ "$(ct_unit readlat-metrics)" = "enabled active" ]
	retry ct_said readlat-metrics 2
	[ "$(ct systemctl show -p MainPID --value readlat-metrics)" != "$pid" ]
	[ "$(ct_unit opensnoop-metrics)" = "disabled inactive" ]
	pid=$(ct systemctl show -p MainPID --value readlat-metrics)

	CT_SECS=$CT_DPKG_SECS ct dpkg -r tracetools > "$T/dpkg" 2>&1 || { cat "$T/dpkg"; false; }
	[ "$(ct systemctl is-active readlat-metrics)" = inactive ]
	refute ct test -e "/proc/$pid"
}

@test "apt-get install: every tool's --check, and an exact opensnoop run from /usr/sbin" {
	apt_install "$PKG" "$DEB"
	for t in "${TOOLS[@]}"; do
		run --separate-stderr "/usr/sbin/$PKG_PREFIX$t" --check
		echo "$t: $output"
		[ "$status" -eq 0 ]
		[ "${lines[-1]}" = "$t can run on this system" ]
	done
	mkdir -p "$T/d" && echo a > "$T/d/one"
	start_opens A --file "$T/d/one" --file "$T/d/missing" --opens 4
	BUILD=/usr/sbin start_tool "${PKG_PREFIX}opensnoop" -j -p "$A_PID"
	go
	wait_loads A
	tool_wait
	[ "$TOOL_STATUS" -eq 0 ]
	jout 'select(.path == $p) | .fd >= 3 and .err == 0 and .pid == $pid' \
		--arg p "$T/d/one" --argjson pid "$A_PID"
	[ "$(jq -s --arg p "$T/d/one" 'map(select(.path == $p)) | length' "$T/out")" -eq 4 ]
	[ "$(jq -s --arg p "$T/d/missing" 'map(select(.path == $p and .err == 2)) | length' "$T/out")" -eq 4 ]
	jout 'select(.events) | .events == 8 and .lost == 0'
}

@test "installed: man -w finds each page, the units start the installed binaries" {
	installed "$PKG"
	local t exe
	for t in "${TOOLS[@]}"; do
		[ "$(man -w "$PKG_PREFIX$t")" = "/usr/share/man/man8/$PKG_PREFIX$t.8.gz" ]
		man "$PKG_PREFIX$t" 2>/dev/null | grep -qE "^NAME"
		whatis "$PKG_PREFIX$t" | grep -qE "^$PKG_PREFIX$t \(8\) +- "
		exe=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "/lib/systemd/system/$t-metrics.service")
		[ "$exe" = "/usr/sbin/$PKG_PREFIX$t" ]
		grep -qx "Documentation=man:$PKG_PREFIX$t(8)" "/lib/systemd/system/$t-metrics.service"
		# Installed, not enabled: the admin opts in (packaging/debian/rules).
		refute compgen -G "/etc/systemd/system/*/$t-metrics.service" > /dev/null
	done
}

# Shell completion comes from make install: bash, zsh and fish, each
# named after the installed command, which is how each shell's loader
# finds it; bash's, loaded, completes the command's options.
@test "installed: bash, zsh and fish completion of each tool, under the tt- names" {
	installed "$PKG"
	local t
	for t in "${TOOLS[@]}"; do
		[ -f "/usr/share/bash-completion/completions/$PKG_PREFIX$t" ]
		[ -f "/usr/share/zsh/vendor-completions/_$PKG_PREFIX$t" ]
		[ -f "/usr/share/fish/vendor_completions.d/$PKG_PREFIX$t.fish" ]
		bash -c "source /usr/share/bash-completion/completions/$PKG_PREFIX$t && complete -p $PKG_PREFIX$t"
		in_package "/usr/share/bash-completion/completions/$PKG_PREFIX$t"
	done
}

@test "beside Debian's libbpf-tools: each name runs its own package's tool" {
	installed "$PKG"
	apt_install libbpf-tools
	[ "$(dpkg-query -S /usr/sbin/opensnoop)" = "libbpf-tools: /usr/sbin/opensnoop" ]
	[ "$(dpkg-query -S "/usr/sbin/${PKG_PREFIX}opensnoop")" = "$PKG: /usr/sbin/${PKG_PREFIX}opensnoop" ]
	[ "$(PATH=/usr/sbin:/usr/bin command -v opensnoop)" = /usr/sbin/opensnoop ]
	# Both at once on one workload. libbpf-tools' opensnoop says nothing
	# when it is ready (its header comes before its perf buffer): it is
	# once it waits in epoll_wait. Its lines are its own (no JSON), and
	# SIGINT is how it stops.
	mkdir -p "$T/d" && echo a > "$T/d/one"
	start_opens A --file "$T/d/one" --file "$T/d/missing" --opens 3
	/usr/sbin/opensnoop -p "$A_PID" > "$T/theirs" 2> "$T/theirs.err" &
	local theirs=$!
	watchdog "$theirs"
	wait_polling "$theirs"
	BUILD=/usr/sbin start_tool "${PKG_PREFIX}opensnoop" -j -p "$A_PID"
	go
	wait_loads A
	tool_wait
	kill -INT "$theirs"
	wait_exit "$theirs"
	cat "$T/theirs" "$T/theirs.err"
	[ "$TOOL_STATUS" -eq 0 ]
	head -n1 "$T/theirs" | grep -qE '^PID +COMM +FD +ERR +PATH$'
	[ "$(jq -s --arg p "$T/d/one" 'map(select(.path == $p and .err == 0)) | length' "$T/out")" -eq 3 ]
	[ "$(jq -s --arg p "$T/d/missing" 'map(select(.path == $p and .err == 2)) | length' "$T/out")" -eq 3 ]
	[ "$(grep -cE "^$A_PID +openload +[0-9]+ +0 $T/d/one\$" "$T/theirs")" -eq 3 ]
	[ "$(grep -cE "^$A_PID +openload +-1 +2 $T/d/missing\$" "$T/theirs")" -eq 3 ]
}

@test "apt-get purge: nothing the package installed is left" {
	installed "$PKG"
	dpkg-query -L "$PKG" | grep -vx '/\.' > "$T/files"
	apt-get purge -y "$PKG" > "$T/apt" 2>&1 || { cat "$T/apt"; false; }
	refute installed "$PKG"
	local f left=0
	while read -r f; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		# A directory stays if another package has it (/usr/sbin).
		[ -d "$f" ] && dpkg-query -S "$f" > /dev/null 2>&1 && continue
		echo "left after purge: $f"
		left=$((left + 1))
	done < "$T/files"
	[ "$left" -eq 0 ]
	grep -qx /usr/share/doc/tracetools "$T/files"	# the list was the package's
	# Nor what the maintainer scripts keep of the units (enabled state).
	unit_state > "$T/units-after"
	diff "$STATE/units-before" "$T/units-after"
}
