# SPDX-License-Identifier: GPL-2.0-only
# The systemd units of contrib/systemd on this kernel: each tool run with
# its unit's command line and the unit's settings that decide whether BPF
# loads (LimitMEMLOCK=, CapabilityBoundingSet=, NoNewPrivileges=), applied
# by unitexec as systemd applies them to a root service (the guest has no
# systemd; the unit's sandboxing is not applied).

UNITEXEC=$BUILD/vm/unitexec

# unit_cmd UNIT: its ExecStart=, with this guest's tool and a textfile in $T.
unit_cmd() {
	sed -n 's/^ExecStart=//p' "$1" |
		sed -e "s|^/usr/local/sbin/|$BUILD/|" -e "s|/var/lib/prometheus/node-exporter/|$T/|g"
}

# upstream_paranoid: kernel.perf_event_paranoid at the kernel's own
# default, 2, until the test's shell exits. Debian's kernels default to 3,
# at which Debian 11's 5.10 lets only CAP_SYS_ADMIN open a perf event (a
# tracepoint's too), CAP_PERFMON not: the units need 2 there (README.md,
# Fleet). What 3 gives is measured, not asserted.
upstream_paranoid() {
	local f=/proc/sys/kernel/perf_event_paranoid
	PARANOID=$(cat "$f")
	trap "echo $PARANOID > $f" EXIT
	echo 2 > "$f"
}

# The shipped units: every tool loads and attaches, writes its textfile
# at the final report of a stop and removes it (its --textfile default),
# exit 0. Before LimitMEMLOCK= in the units, 5.10 refused the load.
test_unit_settings_load() {
	local t u=/vmtest/units/readlat-metrics.service
	run "$UNITEXEC" "$u" $(unit_cmd "$u") 1 1
	measured "readlat's unit at perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid):" \
		"exit $STATUS $(grep -v 'Hit Ctrl-C' "$T/run.stderr" | tail -n 1)"
	upstream_paranoid
	for t in readlat opensnoop biolat tcprcv; do
		u=/vmtest/units/$t-metrics.service
		start_tool vm/unitexec "$u" $(unit_cmd "$u")
		stop_tool TERM
		expect_status 0
		expect_eq "$t: stderr" "$(grep -v 'Hit Ctrl-C to end' "$T/err")" ""
	done
}

# The units without LimitMEMLOCK= (as they were): where the kernel charges
# BPF memory to RLIMIT_MEMLOCK (before 5.11) the tool cannot load, since
# without CAP_SYS_RESOURCE neither it nor libbpf can raise the limit, and
# says so; from 5.11 on (memory cgroup accounting) it loads all the same.
test_unit_without_memlock() {
	local t u=$T/old.service
	measured "RLIMIT_MEMLOCK $(ulimit -l) KiB, the unit's without LimitMEMLOCK="
	upstream_paranoid
	for t in readlat opensnoop biolat tcprcv; do
		sed '/^LimitMEMLOCK=/d' "/vmtest/units/$t-metrics.service" > "$u"
		if kernel_below 5.11; then
			run "$UNITEXEC" "$u" $(unit_cmd "/vmtest/units/$t-metrics.service")
			expect_status 1 "$STATUS"
			expect_line run.stderr "refused to load the BPF programs \\(Operation not permitted\\): it counts them against RLIMIT_MEMLOCK \\(before Linux 5\\.11\\), here $(ulimit -l) KiB"
		else
			start_tool vm/unitexec "$u" $(unit_cmd "/vmtest/units/$t-metrics.service")
			stop_tool TERM
			expect_status 0
		fi
	done
}

