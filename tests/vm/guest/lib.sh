# SPDX-License-Identifier: GPL-2.0-only
# Shared by the guest tests (busybox ash: no bash, no arrays, no jq).
# The guest's counterpart of tests/helpers.bash: start workloads and tools
# in the background, wait for them by what they print (never blind sleeps),
# bound every wait, and fail with a one-line reason.
#
# A test is a function test_NAME in /vmtest/<file>.sh, run by /init in its
# own shell with $T its empty working directory. It passes if it returns 0;
# it fails with `fail "why"` (or any non-zero return). Every background
# process started here is recorded in $T/.jobs and killed after the test.

BUILD=/build
LOAD=$BUILD/tests/readload
BPFLS=$BUILD/vm/bpfls
WAIT_SECS=${WAIT_SECS:-20}	# bound on any wait for a line or an exit
TOOL_SECS=${TOOL_SECS:-40}	# hard bound on one tool or workload run

# fail WHY: end the test, WHY is its one-line detail.
fail() {
	echo "$*" >> "$T/.detail"
	echo "FAIL: $*" >&2
	exit 1
}

# measured TEXT: a figure the test measured, printed after its result
# ("VMTEST info NAME: TEXT") whether it passed or not.
measured() { echo "$*" >> "$T/.measured"; }

job() { echo "$1" >> "$T/.jobs"; }

# kernel_below MAJOR.MINOR: the guest's kernel is older than that. A
# test's oracle for what its kernel has (the tools probe for features).
kernel_below() {
	local v=$(uname -r) want=$1
	local maj=${v%%.*} min=${v#*.}
	min=${min%%.*}
	[ $((maj * 1000 + min)) -lt $((${want%%.*} * 1000 + ${want#*.})) ]
}

# alive PID: it exists and is not a zombie (read in this shell: a poll's
# every fork and exec costs the guest milliseconds under TCG).
alive() {
	local st=
	[ -r "/proc/$1/stat" ] && read -r st 2>/dev/null < "/proc/$1/stat"
	st=${st##*) }
	st=${st%% *}
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# nap SECS: sleep in this shell: a read that times out on a FIFO only it
# holds (fd 9), not a sleep process.
nap() {
	if [ -z "${NAP_FD9:-}" ]; then
		rm -f "$T/.nap"
		if mkfifo "$T/.nap" && exec 9<> "$T/.nap"; then NAP_FD9=1; else NAP_FD9=none; fi
		rm -f "$T/.nap"
	fi
	if [ "$NAP_FD9" = 1 ]; then
		read -r -t "$1" _ <&9
	else
		sleep "$1"
	fi
	return 0
}

# wait_for FILE REGEX [PID]: until a line of FILE matches, at most
# WAIT_SECS; or, with PID (the process that writes FILE), until it exited
# without writing one: its last line is the reason.
wait_for() {
	local i=0
	while [ "$i" -lt $((WAIT_SECS * 10)) ]; do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		if [ -n "${3:-}" ] && ! alive "$3"; then
			grep -qE -- "$2" "$1" 2>/dev/null && return 0
			fail "exited before /$2/ in ${1##*/}: $(tail -n1 "$1" 2>/dev/null)"
		fi
		nap 0.1
		i=$((i + 1))
	done
	fail "timed out after ${WAIT_SECS}s waiting for /$2/ in ${1##*/}"
}

# wait_exit PID: until that child has exited, at most WAIT_SECS; returns
# its exit status.
wait_exit() {
	local i=0
	while alive "$1" && [ "$i" -lt $((WAIT_SECS * 10)) ]; do
		nap 0.1
		i=$((i + 1))
	done
	alive "$1" && fail "process $1 did not exit within ${WAIT_SECS}s"
	wait "$1"
}

# run CMD...: run it to completion (bounded); STATUS, output in $T/run.out
# (stdout and stderr), stdout alone in $T/run.stdout.
run() {
	timeout -s KILL "$TOOL_SECS" "$@" > "$T/run.stdout" 2> "$T/run.stderr"
	STATUS=$?
	cat "$T/run.stdout" "$T/run.stderr" > "$T/run.out"
}

# start_load NAME [readload options]: a workload parked before its reads;
# sets NAME_PID, NAME_TIDS and NAME_FDS (comma-separated), NAME_JOB.
# busybox timeout execs the program in place: NAME_JOB is its pid.
start_load() {
	local name=$1 pid line
	shift
	rm -f "$T/$name.out"	# never wait on the previous round's lines
	timeout -s KILL "$TOOL_SECS" "$LOAD" --go "$T/go" --hold "$T/hold" "$@" > "$T/$name.out" 2>&1 &
	pid=$!
	job "$pid"
	eval "${name}_JOB=$pid"
	wait_for "$T/$name.out" '^pid='
	line=$(head -n1 "$T/$name.out")
	eval "${name}_PID=$(echo "$line" | sed -E 's/.*pid=([0-9]+).*/\1/')"
	eval "${name}_TIDS=$(echo "$line" | sed -E 's/.*tids=([0-9,]+).*/\1/')"
	eval "${name}_FDS=$(echo "$line" | sed -E 's/.*fds=([-0-9,]+).*/\1/')"
	eval "[ \"\$${name}_PID\" = $pid ]" || fail "workload $name: pid= line says $(eval echo \$${name}_PID), job is $pid"
}

# start_opens NAME [openload options]: like start_load, for openload (a
# known set of opens, tests/workloads/openload.c), parked before its opens
# on the same go/hold files; sets NAME_PID and NAME_JOB (the same pid).
OPENLOAD=$BUILD/tests/openload
start_opens() { start_parked "" "$OPENLOAD" "$@"; }

# start_opens_as UID NAME [openload options]: the same, run as user UID
# (group UID; an /etc/passwd entry vmtUID is added for it: busybox can
# only change to a named user, with start-stop-daemon, which execs in place).
start_opens_as() {
	local uid=$1
	shift
	mkdir -p /etc
	grep -q "^vmt$uid:" /etc/passwd 2>/dev/null ||
		echo "vmt$uid:x:$uid:$uid:vmtest:/:/bin/false" >> /etc/passwd
	grep -q "^vmt$uid:" /etc/group 2>/dev/null ||
		echo "vmt$uid:x:$uid:" >> /etc/group
	start_parked "$uid" "$OPENLOAD" "$@"
}

# start_bio NAME [bioload options]: bioload (a known number of block I/O
# requests, tests/workloads/bioload.c; give it --dev), parked like
# start_opens; sets NAME_PID and NAME_JOB.
BIOLOAD=$BUILD/tests/bioload
start_bio() { start_parked "" "$BIOLOAD" "$@"; }

# start_parked UID|"" PROGRAM NAME [options]: a workload that prints
# "pid=P" and waits for --go and --hold (openload, bioload).
start_parked() {
	local uid=$1 prog=$2 name=$3 pid
	shift 3
	rm -f "$T/$name.out"
	if [ -n "$uid" ]; then
		# -n: match no running process, so another workload never makes it
		# refuse to start ("already running").
		timeout -s KILL "$TOOL_SECS" start-stop-daemon -S -c "vmt$uid:vmt$uid" \
			-n vmt_no_such_name -x "$prog" -- \
			--go "$T/go" --hold "$T/hold" "$@" > "$T/$name.out" 2>&1 &
	else
		timeout -s KILL "$TOOL_SECS" "$prog" --go "$T/go" --hold "$T/hold" "$@" > "$T/$name.out" 2>&1 &
	fi
	pid=$!
	job "$pid"
	eval "${name}_JOB=$pid"
	wait_for "$T/$name.out" '^pid='
	eval "${name}_PID=$(sed -nE 's/^pid=([0-9]+)$/\1/p' "$T/$name.out")"
	eval "[ \"\$${name}_PID\" = $pid ]" || fail "workload $name: pid= line says $(eval echo \$${name}_PID), job is $pid"
}

# find_disk: sets DISK to the guest's disk for block I/O (run.sh's
# virtio-blk disk, vda), found by name in /sys/block: a whole, empty disk,
# no partition, no file system, nothing else doing I/O on it.
find_disk() {
	local d
	DISK=
	for d in /sys/block/vd* /sys/block/sd* /sys/block/nvme*; do
		[ -e "$d/dev" ] && [ -b "/dev/${d##*/}" ] && { DISK=${d##*/}; return 0; }
	done
	fail "no disk in /sys/block (run.sh attaches one: was its driver loaded? see VMTEST info)"
}

# disk_ios DISK: the requests /sys/block/DISK/stat counts as completed:
# reads + writes + discards (4.18+) + flushes (5.5+), fields 1, 5, 12, 16.
disk_ios() {
	awk '{ n = $1 + $5; if (NF >= 12) n += $12; if (NF >= 16) n += $16; print n }' \
		"/sys/block/$1/stat"
}

# schedulers DISK: the I/O schedulers DISK offers, of none and mq-deadline.
schedulers() {
	local s
	for s in none mq-deadline; do
		grep -qw -- "$s" "/sys/block/$1/queue/scheduler" && echo "$s"
	done
}

# use_scheduler DISK NAME: switch DISK to that I/O scheduler (init leaves
# none; each test sets the one it needs).
use_scheduler() {
	echo "$2" > "/sys/block/$1/queue/scheduler" 2>/dev/null ||
		fail "cannot set the I/O scheduler of $1 to $2 (offered: $(cat "/sys/block/$1/queue/scheduler"))"
	grep -q "\[$2\]" "/sys/block/$1/queue/scheduler" ||
		fail "$1's scheduler is $(cat "/sys/block/$1/queue/scheduler"), not $2"
}

# nth LIST N: the Nth (from 1) item of a comma-separated list.
nth() { echo "$1" | cut -d, -f"$2"; }

# go: release every parked workload; finish: let them exit after their reads.
go() { touch "$T/go"; }
finish() { touch "$T/hold"; }

# wait_loads NAME...: until each workload has done its reads and exited 0.
wait_loads() {
	local n j
	finish
	for n in "$@"; do
		eval "j=\$${n}_JOB"
		wait_exit "$j" || fail "workload $n exited with status $?: $(tail -n1 "$T/$n.out")"
	done
}

# rearm: a second round of workloads in the same test.
rearm() { rm -f "$T/go" "$T/hold"; }

# start_tool TOOL [args]: run $BUILD/TOOL in the background (stdout to
# $T/out, stderr to $T/err), killed after TOOL_SECS whatever happens, and
# wait until it has attached. Signals sent by tests reach the tool itself.
start_tool() {
	local tool=$1
	shift
	rm -f "$T/out" "$T/err"	# never wait on the previous run's lines
	timeout -s KILL "$TOOL_SECS" "$BUILD/$tool" "$@" > "$T/out" 2> "$T/err" &
	TOOL_JOB=$!
	job "$TOOL_JOB"
	wait_for "$T/err" 'Hit Ctrl-C to end' "$TOOL_JOB"
}

# tool_wait: until the tool exits by itself; TOOL_STATUS.
tool_wait() {
	TOOL_STATUS=0
	wait_exit "$TOOL_JOB" || TOOL_STATUS=$?
}

# stop_tool [SIGNAL]: end it like a user would; TOOL_STATUS.
stop_tool() {
	kill "-${1:-INT}" "$TOOL_JOB" 2>/dev/null
	tool_wait
}

# expect_status WANT: the tool's (or run's, with a second argument) status.
expect_status() {
	local got=${2:-$TOOL_STATUS}
	[ "$got" = "$1" ] || fail "exit status $got, want $1"
}

# expect_eq WHAT GOT WANT / expect_ge WHAT GOT MIN
expect_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; }
expect_ge() { [ -n "$2" ] && [ "$2" -ge "$3" ] 2>/dev/null || fail "$1: got '$2', want >= $3"; }

# expect_line FILE REGEX / expect_no_line FILE REGEX (extended regex, FILE
# relative to $T)
expect_line() { grep -qE -- "$2" "$T/$1" || fail "no line of $1 matches /$2/"; }
expect_no_line() { ! grep -qE -- "$2" "$T/$1" || fail "a line of $1 matches /$2/: $(grep -E -- "$2" "$T/$1" | head -n1)"; }

# expect_lines FILE REGEX N: exactly N lines of FILE match.
expect_lines() { expect_eq "lines of $1 matching /$2/" "$(grep -cE -- "$2" "$T/$1")" "$3"; }

# summary_field NAME [FILE]: a number of the last text summary line
# ("count 50, avg ..., errors 0").
summary_field() {
	grep -E '^count ' "$T/${2:-out}" | tail -n1 | grep -oE "(^|, )$1 [0-9.]+" | grep -oE '[0-9.]+$'
}

# hist_row LO HI [FILE]: the count of the text histogram's row "LO -> HI".
hist_row() {
	awk -v lo="$1" -v hi="$2" '$1 == lo && $2 == "->" && $3 == hi { print $5; exit }' "$T/${3:-out}"
}

# jfield NAME [REGEX [FILE]]: a top-level number or string field of the
# first JSON line of FILE (default out) that matches REGEX (default any).
jfield() {
	grep -E -- "^\{.*${2:-}" "$T/${3:-out}" | head -n1 |
		grep -oE "\"$1\":(-?[0-9.]+|\"[^\"]*\")" | head -n1 | cut -d: -f2- | tr -d '"'
}

# expect_range WHAT VALUE LO HI: LO <= VALUE < HI (decimals allowed).
expect_range() {
	awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v != "" && v + 0 >= lo && v + 0 < hi) }' ||
		fail "$1: got '$2', want in [$3, $4)"
}

# BPF objects: bpf_snapshot FILE records every loaded program and map;
# bpf_new FILE prints those loaded now and not then (ids are never reused).
# kconfig OPTION: whether the guest's kernel was built with CONFIG_OPTION=y
# (its config, from the package, at /boot: modules.sh).
kconfig() { grep -qx "CONFIG_$1=y" "/boot/config-$(uname -r)"; }

# Whether this kernel can attach a BPF trampoline (fentry) to a kernel
# function, as its build says: x86 patches the function's __fentry__ call
# itself; other arches (arm64 before 6.4) need ftrace direct calls.
fentry_attaches() {
	[ "$(uname -m)" = x86_64 ] || kconfig DYNAMIC_FTRACE_WITH_DIRECT_CALLS
}

# Whether the kernel has open(2) (x86_64 does; arm64 has only openat(2)
# and openat2(2)): its syscall tracepoint, as tracefs lists them.
has_open() { [ -d /sys/kernel/tracing/events/syscalls/sys_enter_open ]; }

bpf_snapshot() { "$BPFLS" > "$T/$1" || fail "bpfls failed"; }
bpf_new() {
	"$BPFLS" > "$T/bpf.now" || fail "bpfls failed"
	if [ -s "$T/$1" ]; then
		grep -vxF -f "$T/$1" "$T/bpf.now"
	else
		cat "$T/bpf.now"
	fi
}

# expect_no_leak FILE: nothing loaded since bpf_snapshot FILE, within 5 s
# (the kernel frees programs and maps of a closed fd asynchronously).
expect_no_leak() {
	local i=0
	while [ "$i" -lt 50 ]; do
		[ -z "$(bpf_new "$1")" ] && return 0
		nap 0.1
		i=$((i + 1))
	done
	fail "BPF objects left loaded: $(bpf_new "$1" | tr '\n' ' ')"
}
