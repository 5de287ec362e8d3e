# SPDX-License-Identifier: GPL-2.0-only
# Shared by the bats suites: start workloads and tools in the background,
# wait for them by what they print (never blind sleeps), bound every wait.

BUILD=${BUILD:-$BATS_TEST_DIRNAME/../build}
LOAD=$BUILD/tests/readload
TCPLOAD=$BUILD/tests/tcpload
WAIT_SECS=${WAIT_SECS:-30}	# bound on any wait for a line or an exit, in time
TOOL_SECS=${TOOL_SECS:-40}	# hard bound on one tool run

# Debian's python3, not a version manager's shim found first in PATH:
# pyenv's runs a dozen shell scripts a call (2 s of CPU here, loaded).
[[ ! -x /usr/bin/python3 || $(type -P python3) != */shims/* ]] || PATH=/usr/bin:$PATH

common_setup() {
	T=$BATS_TEST_TMPDIR
	JOBS=()
	declare -gA SERVERS=()	# serve's, by "ADDR PORT": its name, for go
	SENT_TO=()		# send's "NAME ADDR PORT"s, for go
	[ -e /sys/kernel/tracing/events ] || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
}

common_teardown() {
	local j
	stop_watchdogs
	for j in "${JOBS[@]}"; do
		own_child "$j" && kill -KILL "$j" 2>/dev/null
	done
	touch "$T/go" "$T/hold"
	wait 2>/dev/null || true
	[ -z "${NONROOT_DIR:-}" ] || rm -rf "$NONROOT_DIR"
	[ -z "${LOOP:-}" ] || loop_teardown
}

# nap SECS: sleep in this shell: a read that times out on a FIFO only it
# holds (fd 10 or above: a workload's own files keep their numbers; made
# in the foreground: a process substitution would change $!). A poll's
# fork and exec of sleep(1), or of grep, costs about as much CPU as its
# 10 ms wait here, and the suites poll four at a time.
nap() {
	if [ -z "${NAP_FD:-}" ]; then
		local fifo=${BATS_TEST_TMPDIR:-${TMPDIR:-/tmp}}/.nap.$BASHPID
		rm -f "$fifo"
		{ mkfifo "$fifo" && exec {NAP_FD}<> "$fifo"; } || NAP_FD=none	# then sleep(1)
		rm -f "$fifo"
	fi
	[ "$NAP_FD" != none ] || { sleep "$1"; return 0; }
	read -rt "$1" -u "$NAP_FD" _ || :
}

# untraced CMD [ARGS]: CMD without bats's DEBUG trap, which records a
# stack trace before every command: a millisecond of CPU each on a busy
# machine here, more than the 10 ms a poll of a dozen commands waits.
# The trap is back for what follows (a failure's line is still named).
# CMD runs as a condition (errexit off): the polls return their status.
untraced() {
	local st=0 outer=${UNTRACED:-}
	UNTRACED=1
	trap - DEBUG
	"$@" || st=$?
	UNTRACED=$outer
	[ -n "$outer" ] || ! declare -F bats_debug_trap >/dev/null ||
		trap 'bats_debug_trap "$BASH_SOURCE"' DEBUG
	return "$st"
}

# grew FILE: whether FILE has more bytes than at the last call, read past
# in this shell through the caller's local WATCH_FD (opened once FILE
# exists; the caller closes it); every 20th call (the caller's local
# WATCH_CALLS) true all the same, for a FILE truncated or replaced
# meanwhile. Line by line, bash (with bats's DEBUG trap on each command)
# falls behind a tool that writes a report every 10 ms.
grew() {
	local chunk more= LC_ALL=C
	((++WATCH_CALLS % 20)) || more=1
	if [ -z "$WATCH_FD" ]; then
		[ -e "$1" ] || return 1
		exec {WATCH_FD}< "$1" || { WATCH_FD=; return 1; }
	fi
	while read -r -N 65536 -u "$WATCH_FD" chunk; do more=1; done
	[ -n "$chunk$more" ]
}

# wait_for FILE REGEX: until a line of FILE matches, at most WAIT_SECS;
# grep looks again only when FILE grew.
wait_for() { untraced _wait_for "$@"; }
_wait_for() {
	local i WATCH_FD= WATCH_CALLS=0
	for ((i = SECONDS + WAIT_SECS + 1; SECONDS < i; )); do	# at least WAIT_SECS, whatever the load
		if grew "$1" && grep -qE -- "$2" "$1" 2>/dev/null; then
			exec {WATCH_FD}<&-
			return 0
		fi
		nap 0.01
	done
	[ -z "$WATCH_FD" ] || exec {WATCH_FD}<&-
	echo "timed out waiting for /$2/ in $1:" >&2
	cat "$1" >&2 || true
	return 1
}

# wait_lines FILE N: until FILE has at least N lines, at most WAIT_SECS
# (N reports of a tool printing one JSON object per report).
wait_lines() { untraced _wait_lines "$@"; }
_wait_lines() {
	local i n=0 WATCH_FD= WATCH_CALLS=0
	for ((i = SECONDS + WAIT_SECS + 1; SECONDS < i; )); do	# at least WAIT_SECS, whatever the load
		if grew "$1"; then
			n=$(wc -l < "$1" 2>/dev/null) || n=0
			if ((n >= $2)); then
				exec {WATCH_FD}<&-
				return 0
			fi
		fi
		nap 0.01
	done
	[ -z "$WATCH_FD" ] || exec {WATCH_FD}<&-
	echo "timed out waiting for $2 lines in $1 ($n there)" >&2
	return 1
}

# in_read PID TID: thread TID of process PID is inside read(2) now
# (x86_64's number 0, as /proc/PID/task/TID/syscall shows it).
in_read() {
	local nr
	read -r nr _ < "/proc/$1/task/$2/syscall" 2>/dev/null && [ "$nr" = 0 ]
}

# wait_caught PID SIG PROG: until PID runs PROG (its /proc exe ends in
# /PROG) and has a handler for SIG (SigCgt), polled without sleeping, at
# most WAIT_SECS. A signal sent before that meets the default action: the
# forked shell still has the shell's handlers until exec, and the new
# program has none until its main() sets them.
wait_caught() { untraced _wait_caught "$@"; }
_wait_caught() {
	local bit line end=$((SECONDS + WAIT_SECS))
	bit=$(kill -l "$2")
	while ((SECONDS <= end)); do
		if [[ "$(readlink "/proc/$1/exe" 2>/dev/null)" == */"$3" ]]; then
			line=$(grep '^SigCgt:' "/proc/$1/status" 2>/dev/null) || return 1
			(((16#${line##*[[:space:]]} >> (bit - 1)) & 1)) && return 0
		fi
		kill -0 "$1" 2>/dev/null || return 1
	done
	echo "process $1 has no handler for SIG$2 in $3 after ${WAIT_SECS}s" >&2
	return 1
}

# refute CMD [ARGS]: fails when CMD succeeds. A bare "! CMD" fails a
# bats test only as its last line (bash's errexit ignores a negated
# command); inside a function, the function's status does not.
refute() { ! "$@"; }

# retry CMD [ARGS]: until CMD succeeds, at most WAIT_SECS; tried again
# after 10 ms, then half as long again each time, up to 100 ms (a CMD of
# a few processes, tried every 10 ms, would keep a CPU busy).
retry() { untraced _retry "$@"; }
_retry() {
	local i ms=10 secs
	for ((i = SECONDS + WAIT_SECS + 1; SECONDS < i; )); do	# at least WAIT_SECS, whatever the load
		"$@" && return 0
		printf -v secs '0.%03d' "$ms"
		nap "$secs"
		((ms = ms * 3 / 2 > 100 ? 100 : ms * 3 / 2))
	done
	return 1
}

# under_ptrace CMD...: CMD (strace of a tool) with LeakSanitizer off, for
# a sanitized build (make SANITIZE=1): it cannot run under ptrace.
under_ptrace() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$@"; }

# bpftrace_end PID [SECS]: end a bpftrace run (it prints its maps), SIGINT
# again every 5 s (bpftrace 0.17 now and then takes one and goes on
# waiting), at most SECS (default 6 x WAIT_SECS: its exit takes 0.3 s
# here, over 15 s on a host loaded with other suites); then its status.
bpftrace_end() { untraced _bpftrace_end "$@"; }
_bpftrace_end() {
	local pid=$1 end=$((SECONDS + ${2:-$((WAIT_SECS * 6))})) i
	while kill -INT "$pid" 2>/dev/null; do
		for ((i = 0; i < 500; i++)); do
			kill -0 "$pid" 2>/dev/null || break 2
			nap 0.01
		done
		((SECONDS < end)) || { echo "bpftrace $pid did not end after SIGINTs" >&2; return 124; }
	done
	wait "$pid"
}

# A last probe for a bpftrace program: "bpftrace-ready" once it fires.
# bpftrace prints "Attaching N probes..." before it attaches them (0.3 s
# here, seconds on a loaded host: a short workload run at that line went
# unseen), and attaches in the program's order.
BT_READY=' tracepoint:syscalls:sys_enter_getppid /comm == "bt-ready"/ { printf("bpftrace-ready\n"); }'

# bpftrace_ready OUT: until bpftrace, writing OUT, has seen a thread named
# bt-ready call getppid (its BT_READY probe attached, so the others are).
bpftrace_ready() {
	WAIT_SECS=$((WAIT_SECS * 4)) wait_for "$1" '^Attaching'
	timeout $((WAIT_SECS * 4)) python3 -c 'import ctypes, os, sys, time
ctypes.CDLL(None).prctl(15, b"bt-ready", 0, 0, 0)	# PR_SET_NAME
while b"bpftrace-ready" not in open(sys.argv[1], "rb").read():
    os.getppid()
    time.sleep(0.02)' "$1"
}

# bpftrace_start ONE_LINER: bpftrace in the background, attached
# (stdout in $T/bt, the job in BT_JOB); the test skips without bpftrace.
bpftrace_start() {
	command -v bpftrace >/dev/null || skip "no bpftrace"
	rm -f "$T/bt" "$T/bt.err"	# an earlier run's ready line is not this one's
	bpftrace -e "$1$BT_READY" > "$T/bt" 2> "$T/bt.err" &
	BT_JOB=$!
	TOOL_SECS=$((TOOL_SECS * 3)) watchdog "$BT_JOB"	# see bpftrace_stop
	bpftrace_ready "$T/bt"
}

# bpftrace_stop: its map printed at SIGINT, as "KEY COUNT" lines, sorted.
bpftrace_stop() {
	bpftrace_end "$BT_JOB"
	sed -nE 's/^@\[(.*)\]: ([0-9]+)$/\1 \2/p' "$T/bt" | sort
}

# wait_exit PID: until it has exited, at most WAIT_SECS; then its status.
wait_exit() { untraced _wait_exit "$@"; }
_wait_exit() {
	local i
	for ((i = SECONDS + WAIT_SECS + 1; SECONDS < i; )); do	# at least WAIT_SECS, whatever the load
		kill -0 "$1" 2>/dev/null || break
		nap 0.01
	done
	if kill -0 "$1" 2>/dev/null; then
		echo "process $1 did not exit within ${WAIT_SECS}s" >&2
		return 124
	fi
	wait "$1"
}

# start_load NAME [readload options]: a workload parked before its reads;
# sets NAME_PID, NAME_TIDS (array), NAME_FDS (array), NAME_JOB.
start_load() {
	local name=$1 line
	shift
	rm -f "$T/$name.out"
	"$LOAD" --go "$T/go" --hold "$T/hold" "$@" > "$T/$name.out" 2>&1 &
	JOBS+=($!)
	printf -v "${name}_JOB" %s $!
	wait_for "$T/$name.out" '^pid='
	line=$(head -n1 "$T/$name.out")
	printf -v "${name}_PID" %s "$(sed -E 's/.*pid=([0-9]+).*/\1/' <<<"$line")"
	IFS=, read -r -a "${name}_TIDS" <<<"$(sed -E 's/.*tids=([0-9,]+).*/\1/' <<<"$line")"
	IFS=, read -r -a "${name}_FDS" <<<"$(sed -E 's/.*fds=([-0-9,]+).*/\1/' <<<"$line")"
}

# start_parked NAME PROGRAM [options]: a workload that prints "pid=P",
# waits for $T/go, does its work and waits for $T/hold (openload,
# bioload); sets NAME_PID and NAME_JOB.
start_parked() {
	local name=$1 prog=$2
	shift 2
	rm -f "$T/$name.out"	# a line of an earlier run is no sign
	"$prog" --go "$T/go" --hold "$T/hold" "$@" > "$T/$name.out" 2>&1 &
	JOBS+=($!)
	printf -v "${name}_JOB" %s $!
	wait_for "$T/$name.out" '^pid='
	printf -v "${name}_PID" %s "$(sed -nE 's/^pid=([0-9]+)$/\1/p' "$T/$name.out")"
}

# start_opens NAME [openload options]: like start_load, for openload (a
# known set of opens); sets NAME_PID and NAME_JOB.
start_opens() { start_parked "$1" "$BUILD/tests/openload" "${@:2}"; }

# go: release every parked workload; finish: let them exit after their
# reads. A tcpload sender (send) writes once the server (serve) it
# connects to has said "accepted" (its first accept, with --conns N): a
# byte that arrived before would be
# counted as an unknown owner's by a report in between (tcprcv names a
# socket's owner at accept(2)).
go() {
	local name to
	touch "$T/go"
	for to in "${SENT_TO[@]}"; do
		name=${to%% *} to=${to#* }
		[ -z "${SERVERS[$to]:-}" ] || wait_for "$T/${SERVERS[$to]}.out" '^accepted$' || return 1
		touch "$T/write.$name"
	done
	SENT_TO=()
}
finish() { touch "$T/hold"; }

# serve NAME NS ADDR [tcpload serve options]: a tcpload server listening
# on ADDR in network namespace NS ("": this one), waiting for $T/go
# (unless --go is given) before it accepts, for $T/hold after its reads;
# sets NAME_PID, NAME_PORT and NAME_JOB. go waits for its accept(2),
# unless it accepts later (its own --go) or on data (--defer-accept).
serve() {
	local name=$1 ns=$2 addr=$3 line port in_ns=()
	shift 3
	[ -z "$ns" ] || in_ns=(ip netns exec "$ns")
	rm -f "$T/$name.out"
	"${in_ns[@]}" "$TCPLOAD" serve "$addr" 0 --go "$T/go" --hold "$T/hold" "$@" > "$T/$name.out" 2>&1 &
	JOBS+=($!)
	printf -v "${name}_JOB" %s $!
	wait_for "$T/$name.out" '^listening '
	line=$(head -n1 "$T/$name.out")
	port=$(sed -E 's/^listening ([0-9]+) .*/\1/' <<<"$line")
	printf -v "${name}_PORT" %s "$port"
	printf -v "${name}_PID" %s "$(sed -E 's/.*pid=([0-9]+)$/\1/' <<<"$line")"
	unset "SERVERS[$addr $port]"	# an earlier server's
	[[ " $* " == *" --go "* || " $* " == *" --defer-accept "* ]] || SERVERS[$addr $port]=$name
	# ip netns exec execs the command: the job is tcpload itself (send
	# counts on that for the sender's PID, known before it connects).
	[[ "$line" == *" pid=$!" ]]
}

# send NAME NS ADDR PORT BYTES [tcpload send options]: a tcpload sender
# in NS ("": this one), connecting at $T/go, writing when go says
# (write.NAME); sets NAME_PID and NAME_JOB.
send() {
	local name=$1 ns=$2 in_ns=()
	shift 2
	[ -z "$ns" ] || in_ns=(ip netns exec "$ns")
	rm -f "$T/$name.out" "$T/write.$name"
	"${in_ns[@]}" "$TCPLOAD" send "$@" --go "$T/go" --write-go "$T/write.$name" > "$T/$name.out" 2>&1 &
	JOBS+=($!)
	SENT_TO+=("$name $1 $2")
	printf -v "${name}_JOB" %s $!
	printf -v "${name}_PID" %s $!
}

# accepted NS PORT PID: until PID holds the established connection with
# local port PORT in network namespace NS ("": this one): it has accepted
# it.
accepted() {
	retry holds "$@" || { echo "process $3 has not accepted on port $2${1:+ in $1}" >&2; return 1; }
}

holds() {
	local in_ns=()
	[ -z "$1" ] || in_ns=(ip netns exec "$1")
	"${in_ns[@]}" ss -tnpH state established "( sport = :$2 )" | grep -q "pid=$3,"
}

# wait_loads NAME...: until each workload has done its reads and exited.
wait_loads() {
	local n job
	finish
	for n in "$@"; do
		job=${n}_JOB
		wait_exit "${!job}"
	done
}

# start_tool TOOL [args]: run it in the background (stdout to $T/out,
# stderr to $T/err) and wait until it has attached.
start_tool() {
	local tool=$1
	shift
	# A second run in one test must not find the first one's banner.
	rm -f "$T/out" "$T/err"
	"$BUILD/$tool" "$@" > "$T/out" 2> "$T/err" &
	TOOL_JOB=$!
	watchdog "$TOOL_JOB"
	wait_for "$T/err" 'Hit Ctrl-C to end'
}

# watchdog PID: kill it after TOOL_SECS whatever happens (signals sent by
# the tests go to the tool itself, not to a wrapper). Not on bats's fd 3,
# which bats waits to see closed at the end of the file.
watchdog() {
	(sleep "$TOOL_SECS"; kill -KILL "$1") >/dev/null 2>&1 3>&- &
	JOBS+=("$1" $!)
}

# stop_tool [SIGNAL]: end it like a user would and collect its status.
stop_tool() {
	kill "-${1:-INT}" "$TOOL_JOB" 2>/dev/null || true
	tool_wait
}

tool_wait() {
	TOOL_STATUS=0
	wait_exit "$TOOL_JOB" || TOOL_STATUS=$?
}

# usage_errors TOOL: for each "ARGS|MESSAGE" line on stdin, TOOL ARGS must
# exit 2 with nothing on stdout and one line on stderr, "TOOL: ...MESSAGE...".
usage_errors() {
	local tool=$1 args msg
	while IFS='|' read -r args msg; do
		# shellcheck disable=SC2086	# ARGS are words
		run --separate-stderr timeout 10 "$BUILD/$tool" $args </dev/null
		echo "args: $args -> $status: $stderr"
		[ "$status" -eq 2 ]
		[ -z "$output" ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ "${stderr_lines[0]}" == "$tool: "*"$msg"* ]]
	done
}

# jq over the tool's JSON output: true if the filter holds for every object
# it yields, and it yields at least one (jq -e alone judges only the last).
jout() { jq -e -s "[.[] | $1] | length > 0 and all" "${@:2}" "$T/out"; }

# The numbers of a text summary line ("count 50, avg ..., p50 ...").
summary_field() {
	grep -E '^count ' "$T/out" | tail -n1 | grep -oE "(^|, )$1 [0-9.]+" | grep -oE '[0-9.]+$'
}

cgroup2_root() {
	local m
	m=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$m" ] && echo "$m"
}

# own_cgroup: a new cgroup v2 directory in CG, so that the tools can be
# given -c CG: only the test's processes then make keys, however busy the
# machine (skips without cgroup2). in_cg CMD...: CMD run in it.
own_cgroup() {
	local root
	root=$(cgroup2_root) || skip "no cgroup2 mount"
	CG=$root/$(basename "$BATS_TEST_FILENAME" .bats)-test-$BATS_TEST_NUMBER-$$
	mkdir "$CG"
}
in_cg() { bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' in_cg "$CG" "$@"; }

# What README.md documents for running a tool as a user other than root.
NONROOT_CAPS=bpf,perfmon,dac_read_search
NOBODY=65534

# nonroot_setup TOOL CAPS: a copy of TOOL that uid NOBODY may execute (BUILD
# may sit under a directory closed to it) in EXE, and in NONROOT the setpriv
# command that runs as uid/gid NOBODY, no groups, with exactly CAPS ("a,b",
# no "cap_" prefix) inheritable, ambient and bounding; with CAPS "" none is
# inherited and the bounding set is left alone (file capabilities decide).
# Skips the test if setpriv cannot do that here.
nonroot_setup() {
	local tool=$1 caps=$2 sets=-all out
	command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
	[ -n "${NONROOT_DIR:-}" ] || NONROOT_DIR=$(mktemp -d /tmp/tracetools-nonroot.XXXXXX)
	chmod 755 "$NONROOT_DIR"
	cp "$BUILD/$tool" "$NONROOT_DIR/"
	EXE=$NONROOT_DIR/$tool
	NONROOT=(setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups)
	if [ -z "$caps" ]; then
		NONROOT+=(--inh-caps=-all)
		return 0
	fi
	sets="-all,+${caps//,/,+}"
	NONROOT+=(--inh-caps="$sets" --ambient-caps="$sets" --bounding-set="$sets")
	out=$("${NONROOT[@]}" grep '^CapAmb:' /proc/self/status 2>&1) ||
		skip "setpriv cannot give uid $NOBODY ambient capabilities $caps here: $out"
	[[ "$out" =~ CapAmb:[[:space:]]+0*[1-9a-f] ]] ||
		skip "setpriv set no ambient capabilities ($out): needs util-linux 2.31+ and Linux 4.3+"
}

# start_tool_nonroot [args]: start_tool for "${NONROOT[@]}" "$EXE" (setpriv
# execs the tool: TOOL_JOB is the tool itself).
start_tool_nonroot() {
	rm -f "$T/out" "$T/err"	# as start_tool: no earlier run's banner
	"${NONROOT[@]}" "$EXE" "$@" > "$T/out" 2> "$T/err" &
	TOOL_JOB=$!
	watchdog "$TOOL_JOB"
	wait_for "$T/err" 'Hit Ctrl-C to end'
}

# The effective capabilities of a running process, as a capability mask.
cap_eff() { awk '$1 == "CapEff:" { print $2 }' "/proc/$1/status"; }
cap_mask() {
	local c m=0
	for c in "$@"; do m=$((m | 1 << c)); done
	printf '%016x\n' "$m"
}

# json_strict FILE: every line of FILE is one JSON object, in strict UTF-8
# (decoded as bytes: an invalid byte fails), with no NaN or Infinity.
json_strict() {
	python3 -c '
import json, sys
def bad(c):
    raise ValueError("not JSON: " + c)
for n, line in enumerate(sys.stdin.buffer, 1):
    try:
        o = json.loads(line.decode("utf-8"), parse_constant=bad)
        assert isinstance(o, dict), "not an object"
    except Exception as e:
        sys.exit("line %d: %s: %r" % (n, e, line))
' < "$1"
}

# json_key_field FILE PID FIELD BYTES TEXT: the objects of FILE with
# key.pid PID (at least one) have key.FIELD == TEXT (a JSON string literal,
# as the reader must see it); when BYTES (the name the process really has)
# is not valid UTF-8 they also have key.FIELD_hex, which decodes back to
# exactly BYTES, and when it is valid they have no FIELD_hex.
json_key_field() {
	python3 -c '
import json, os, sys
path, pid, field, raw, text = sys.argv[1], int(sys.argv[2]), sys.argv[3], os.fsencode(sys.argv[4]), json.loads(sys.argv[5])
objs = [json.loads(l.decode("utf-8")) for l in open(path, "rb")]
objs = [o for o in objs if o.get("key", {}).get("pid") == pid]
if not objs:
    sys.exit("no object with key.pid %d" % pid)
try:
    raw.decode("utf-8")
    valid = True
except UnicodeDecodeError:
    valid = False
for o in objs:
    k = o["key"]
    if k.get(field) != text:
        sys.exit("key.%s is %r, expected %r" % (field, k.get(field), text))
    hexv = k.get(field + "_hex")
    if valid and hexv is not None:
        sys.exit("key.%s is valid UTF-8 but has %s_hex %r" % (field, field, hexv))
    if not valid and (hexv is None or hexv != hexv.lower() or bytes.fromhex(hexv) != raw):
        sys.exit("key.%s_hex is %r, expected %r" % (field, hexv, raw.hex()))
' "$@"
}

# loop_setup [SIZE_MB]: a loop device over a file in $T (default 64 MiB,
# allocated so direct I/O reaches the backing disk), in direct-I/O mode with
# no I/O scheduler (every request goes straight to the driver: no merging,
# no reordering); sets LOOP (/dev/loopN) and LOOPNAME (loopN). Skips the
# test where loop devices cannot be made. common_teardown detaches it.
loop_setup() {
	local mb=${1:-64} file=$T/loop.img out
	command -v losetup >/dev/null || skip "no losetup (util-linux)"
	fallocate -l "${mb}M" "$file" 2>/dev/null || truncate -s "${mb}M" "$file"
	out=$(losetup --direct-io=on --find --show "$file" 2>&1) ||
		skip "losetup cannot attach a loop device here: $out"
	LOOP=$out
	LOOPNAME=${LOOP#/dev/}
	export LOOP LOOPNAME
	# udev probes a new device (blkid reads it): let that finish first.
	! command -v udevadm >/dev/null || udevadm settle --timeout="$WAIT_SECS" || true
	[ ! -w "/sys/block/$LOOPNAME/queue/scheduler" ] ||
		echo none > "/sys/block/$LOOPNAME/queue/scheduler"
}

# loop_teardown: detach the loop_setup device, if any (safe to call again).
loop_teardown() {
	[ -n "${LOOP:-}" ] || return 0
	losetup -d "$LOOP" 2>/dev/null || true
	LOOP= LOOPNAME=
}

# disk_ios NAME: the I/O requests /sys/block/NAME/stat counts as completed:
# reads + writes + discards (4.18+) + flushes (5.5+), fields 1, 5, 12, 16.
disk_ios() {
	awk '{ n = $1 + $5; if (NF >= 12) n += $12; if (NF >= 16) n += $16; print n }' \
		"/sys/block/$1/stat"
}

# stop_watchdogs: end the sleeps of the running watchdogs, before
# common_teardown kills the watchdogs themselves: a sleep outlives its
# killed watchdog, whose kill would otherwise follow TOOL_SECS later, at
# a PID that another test's process may have by then. A watchdog is
# stopped first, so that its kill cannot follow.
stop_watchdogs() {
	local j
	for j in "${JOBS[@]}"; do
		own_child "$j" && kill -STOP "$j" 2>/dev/null || continue
		pkill -KILL -P "$j" 2>/dev/null || true
	done
}

# own_child PID: PID is still a child of this shell, not a reaped job's
# PID that another process (another test's, in a parallel run) has now.
own_child() {
	local st ppid
	{ read -r st < "/proc/$1/stat"; } 2>/dev/null || return 1
	read -r _ ppid _ <<<"${st##*) }"
	[ "$ppid" = "$BASHPID" ]
}

# start_more TOOL NAME [args]: a second TOOL beside start_tool's, its
# output in $T/NAME.out and $T/NAME.err; sets NAME_TOOL.
start_more() {
	local tool=$1 name=$2
	shift 2
	rm -f "$T/$name.out" "$T/$name.err"
	"$BUILD/$tool" "$@" > "$T/$name.out" 2> "$T/$name.err" &
	printf -v "${name}_TOOL" %s $!
	watchdog $!
	wait_for "$T/$name.err" 'Hit Ctrl-C to end'
}

# stop_more NAME: SIGINT to start_more's tool; fails unless it exits 0.
stop_more() {
	local job=${1}_TOOL
	kill -INT "${!job}"
	wait_exit "${!job}"
}

# Leaks are looked for by ID, never by name: another instance of the tool
# (a helper's, a stuck one, one still exiting) has the same names. An ID
# is not handed out again soon (the kernel allocates them upward,
# cyclically), so one a stopped tool held is still its own.

# bpf_ids_of PID FILE: the IDs of the BPF programs, maps and links process
# PID holds (its fds, the maps its programs use, the maps its maps of maps
# hold), one "prog_id N", "map_id N" or "link_id N" a line, into FILE. Call
# it while the tool runs (after start_tool); fails if PID holds nothing.
bpf_ids_of() {
	local ids m
	cat /proc/"$1"/fdinfo/* 2>/dev/null |
		sed -nE 's/^(prog_id|map_id|link_id):[[:space:]]+([0-9]+)$/\1 \2/p' | sort -u > "$2"
	# one listing of all programs, one of all maps: a bpftool and a jq a
	# program or map would take a second for a tool, 10 for 10 of them
	ids=$(bpf_id_list prog_id "$2")
	[ "$ids" = "[]" ] || bpftool -j prog show 2>/dev/null |
		jq -r --argjson ids "$ids" '.[] | select(.id | IN($ids[])) | .map_ids[]? | "map_id \(.)"' >> "$2"
	ids=$(bpf_id_list map_id "$2")
	for m in $([ "$ids" = "[]" ] || bpftool -j map show 2>/dev/null |
		jq -r --argjson ids "$ids" '.[] | select((.id | IN($ids[])) and (.type | test("_of_maps$"))) | .id'); do
		bpf_inner_maps "$m"
	done >> "$2"
	sort -u -o "$2" "$2"
	grep -q . "$2"
}

# bpf_id_list KIND FILE: bpf_ids_of's IDs of KIND (prog_id, map_id) in FILE,
# as a JSON array.
bpf_id_list() {
	awk -v k="$1" 'BEGIN { printf "[" } $1 == k { printf "%s%s", sep, $2; sep = "," } END { print "]" }' "$2"
}

# bpf_inner_maps ID: "map_id N" for each map the map of maps ID holds (a
# lookup from user space gives the inner map's ID, as bytes).
bpf_inner_maps() {
	local v
	bpftool -j map dump id "$1" 2>/dev/null |
		jq -r '.[].value | map(ltrimstr("0x")) | reverse | join("")' |
		while read -r v; do echo "map_id $((16#$v))"; done
}

# bpf_ids_alive FILE: those of bpf_ids_of's IDs that are still loaded;
# a listing that fails is a line too ("none left" would be a false pass).
bpf_ids_alive() {
	local kind list ids=
	for kind in prog map link; do
		if ! list=$(bpftool -j "$kind" show 2>&1) || [ "${list:0:1}" != "[" ]; then
			echo "bpftool $kind show failed: $list"
			continue
		fi
		ids+=$(jq -r --arg k "$kind" '.[] | "\($k)_id \(.id)"' <<<"$list")$'\n'
	done
	sort -u <<<"$ids" | comm -12 - <(sort -u "$1") | sed 's/_id / /'
}

# bpf_ids_gone FILE: none of bpf_ids_of's IDs is loaded, within 2 s (the
# kernel frees a program or map after an RCU grace period, not at once,
# and a link with its last fd); else fails, naming those left.
bpf_ids_gone() { untraced _bpf_ids_gone "$@"; }
_bpf_ids_gone() {
	local left end=$((${EPOCHREALTIME/./} + 2000000))	# in us
	grep -q . "$1" || { echo "bpf_ids_gone: no IDs in $1" >&2; return 1; }
	while :; do
		left=$(bpf_ids_alive "$1")
		[ -n "$left" ] || return 0
		[ "${EPOCHREALTIME/./}" -lt "$end" ] || break
		nap 0.05
	done
	echo "still loaded 2 s after exit: $(tr '\n' ' ' <<<"$left")" >&2
	return 1
}
