# SPDX-License-Identifier: GPL-2.0-only
# tcprcv in the test VM, against tcpload (a known number of bytes over
# TCP) on the guest's loopback, where nothing else talks TCP: the
# kernel-facing tests of tests/tcprcv.bats on 6.1's tracepoints (no
# sock_recv_length, a tcp_probe whose record has no socket address: the
# raw tracepoint's arguments have it) and struct layouts; and what only
# this kernel has: fentry and kprobes, for --rcv-time. Every byte count
# is exact.
#
# With -j, each interval is one line: {...,"rows":[{"pid":P,"comm":...,
# "segs":S,"bytes":B,"read":R,"retrans":N,"drops":D},...]}.

TCPLOAD=$BUILD/tests/tcpload
KIB=1024

net_up() {
	ip link set lo up || fail "cannot bring lo up"
}

# serve NAME ADDR [tcpload serve options]: a receiver listening on ADDR,
# parked before accept(); sets NAME_PID and NAME_PORT. go waits for its
# accept(2) before its senders write, unless it accepts later (its own
# --go) or on data (--defer-accept).
serve() {
	local name=$1 addr=$2 line port s kept=
	shift 2
	rm -f "$T/$name.out"
	timeout -s KILL "$TOOL_SECS" "$TCPLOAD" serve "$addr" 0 --go "$T/go" --hold "$T/hold" "$@" \
		> "$T/$name.out" 2>&1 &
	job $!
	wait_for "$T/$name.out" '^listening '
	line=$(head -n1 "$T/$name.out")
	port=$(echo "$line" | sed -E 's/^listening ([0-9]+).*/\1/')
	eval "${name}_PID=$(echo "$line" | sed -E 's/.*pid=([0-9]+).*/\1/')"
	eval "${name}_PORT=$port"
	for s in $SERVERS; do	# an earlier server's of this port
		[ "${s%%:*}" = "$port" ] || kept="$kept $s"
	done
	SERVERS=$kept
	case " $* " in
	*" --go "* | *" --defer-accept "*) ;;
	*) SERVERS="$SERVERS $port:$name" ;;
	esac
}

# send NAME ADDR PORT BYTES [tcpload send options]: a sender, parked
# before connect() on the same go file, and before it writes until go
# says (write.NAME).
send() {
	local name=$1
	shift
	rm -f "$T/$name.out" "$T/write.$name"
	timeout -s KILL "$TOOL_SECS" "$TCPLOAD" send "$@" --go "$T/go" --write-go "$T/write.$name" \
		> "$T/$name.out" 2>&1 &
	job $!
	SENT_TO="$SENT_TO $name:$2"
}

# go: lib.sh's, then each sender writes once the server it connects to
# has said "accepted": a byte that arrived before would be counted as an
# unknown owner's by a report in between (tcprcv names a socket's owner
# at accept(2)).
go() {
	local to s
	touch "$T/go"
	for to in $SENT_TO; do
		for s in $SERVERS; do
			[ "${s%%:*}" != "${to#*:}" ] || wait_for "$T/${s#*:}.out" '^accepted$'
		done
		touch "$T/write.${to%%:*}"
	done
	SENT_TO=
}

# closed PORT...: until no TCP socket on these local ports is open (a
# TIME_WAIT one is: its socket was destroyed), at most WAIT_SECS: the
# closes have reached the kernel's destroy. /proc/net/tcp: busybox has no ss.
closed() {
	local i=0 hex="" p
	for p in "$@"; do hex="$hex|$(printf '%04X' "$p")"; done
	while [ "$i" -lt $((WAIT_SECS * 10)) ]; do
		awk -v re=":(${hex#|})\$" '$2 ~ re && $4 != "06" { found = 1 } END { exit !found }' \
			/proc/net/tcp /proc/net/tcp6 2>/dev/null || return 0
		nap 0.1
		i=$((i + 1))
	done
	fail "sockets on ports $* still open after ${WAIT_SECS}s"
}

# row_sum FIELD PID: FIELD of PID's rows, summed over every interval of out.
row_sum() {
	grep -oE "\{\"pid\":$2,[^}]*\}" "$T/out" | grep -oE "\"$1\":[0-9]+" | cut -d: -f2 |
		awk '{ n += $1 } END { print n + 0 }'
}

# transfer ADDR BYTES [tcprcv options]: one receiver, one sender, tcprcv
# -j with the options; leaves R_PID, S_PID (from "sent ... pid=")
# and the tool's output in out.
transfer() {
	local addr=$1 bytes=$2
	shift 2
	net_up
	serve R "$addr" --comm tr_recv
	start_tool tcprcv -j "$@"
	send S "$addr" "$R_PORT" "$bytes" --comm tr_send
	go
	wait_for "$T/R.out" '^read '
	wait_for "$T/S.out" '^sent '
	S_PID=$(sed -nE 's/^sent [0-9]+ pid=([0-9]+)$/\1/p' "$T/S.out")
	expect_line R.out "^read $bytes\$"
	finish
	closed "$R_PORT"
	stop_tool
	expect_status 0
}

test_ipv4_exact() {
	transfer 127.0.0.1 $((300 * KIB)) 0.2
	expect_eq "bytes read by the receiver" "$(row_sum read "$R_PID")" $((300 * KIB))
	expect_eq "bytes received by the receiver" "$(row_sum bytes "$R_PID")" $((300 * KIB))
	expect_range "segments of the receiver" "$(row_sum segs "$R_PID")" 5 $((300 + 1))
	expect_line out '"comm":"tr_recv"'
	# The sender's socket received no data: its rows carry none.
	expect_eq "bytes received by the sender" "$(row_sum bytes "$S_PID")" 0
}

test_ipv6_exact() {
	transfer ::1 $((200 * KIB)) -6 0.2
	expect_eq "bytes read by the receiver" "$(row_sum read "$R_PID")" $((200 * KIB))
	expect_eq "bytes received by the receiver" "$(row_sum bytes "$R_PID")" $((200 * KIB))
}

# TCP_DEFER_ACCEPT: the first data segment makes the connection, and TCP
# takes it in outside tcp_probe (as when the handshake's last ACK is lost).
test_defer_accept() {
	net_up
	serve A 127.0.0.1 --comm tr_one --defer-accept
	serve B ::1 --comm tr_many --defer-accept
	# one report, at the end: with --defer-accept the data comes before
	# accept(2), and a report in between would name its owner unknown
	start_tool tcprcv -j
	send SA 127.0.0.1 "$A_PORT" 1000
	send SB ::1 "$B_PORT" $((200 * KIB))
	go
	wait_for "$T/A.out" '^read '
	wait_for "$T/B.out" '^read '
	wait_for "$T/SA.out" '^sent '
	wait_for "$T/SB.out" '^sent '
	finish
	closed "$A_PORT" "$B_PORT"
	stop_tool
	expect_status 0
	expect_eq "bytes received by A" "$(row_sum bytes "$A_PID")" 1000
	expect_eq "bytes read by A" "$(row_sum read "$A_PID")" 1000
	expect_eq "bytes received by B" "$(row_sum bytes "$B_PID")" $((200 * KIB))
	expect_eq "bytes read by B" "$(row_sum read "$B_PID")" $((200 * KIB))
}

# A client that half-closes once it has written (tcpload send, as nc -N)
# and reads the reply in FIN_WAIT2, where tcp_probe does not fire; it
# connected while tcprcv ran, so its read position starts at the peer's
# ISN, not where the socket was in SYN_SENT. 6.1 has no sock:sk_data_ready:
# -L misses that data there (the table does not).
test_half_close_client() {
	net_up
	serve R 127.0.0.1 --comm tr_reply --reply $((512 * KIB))
	start_tool tcprcv -j 0.2
	send S 127.0.0.1 "$R_PORT" 1000 --comm tr_halfclose
	go
	wait_for "$T/R.out" '^read '
	wait_for "$T/S.out" '^sent '
	S_PID=$(sed -nE 's/^sent [0-9]+ pid=([0-9]+)$/\1/p' "$T/S.out")
	expect_line S.out "^received $((512 * KIB))\$"
	finish
	closed "$R_PORT"
	stop_tool
	expect_status 0
	expect_eq "bytes received by the client" "$(row_sum bytes "$S_PID")" $((512 * KIB))
	expect_eq "bytes read by the client" "$(row_sum read "$S_PID")" $((512 * KIB))
	expect_range "segments of the client" "$(row_sum segs "$S_PID")" 8 $((512 * 10))
	expect_eq "bytes received by the server" "$(row_sum bytes "$R_PID")" 1000
	expect_eq "bytes read by the server" "$(row_sum read "$R_PID")" 1000
}

test_by_flow() {
	transfer 127.0.0.1 $((100 * KIB)) --by flow --duration 30
	expect_line out "\{\"pid\":$R_PID,\"comm\":\"tr_recv\",\"lport\":$R_PORT,\"family\":\"ipv4\",\"laddr\":\"127.0.0.1\",\"raddr\":\"127.0.0.1\",\"rport\":[0-9]+,\"segs\":[0-9]+,\"bytes\":$((100 * KIB)),\"read\":$((100 * KIB)),"
}

# -p of one receiver: a second one, served by the same softirq on the
# same loopback at the same time, is not in the output at all.
test_pid_excludes() {
	net_up
	serve A 127.0.0.1 --comm tr_a
	serve B 127.0.0.1 --comm tr_b
	start_tool tcprcv -j -p "$A_PID" 0.2
	send SA 127.0.0.1 "$A_PORT" $((150 * KIB))
	send SB 127.0.0.1 "$B_PORT" $((250 * KIB))
	go
	wait_for "$T/A.out" '^read '
	wait_for "$T/B.out" '^read '
	finish
	closed "$A_PORT" "$B_PORT"
	stop_tool
	expect_eq "bytes read by A" "$(row_sum read "$A_PID")" $((150 * KIB))
	expect_no_line out "\"pid\":$B_PID,"
	expect_no_line out '"comm":"tr_b"'
	expect_no_line out '"pid":0,'
}

# A slow reader (50 ms between 4 KiB reads) leaves data in the queue far
# longer than a fast one: -L -P shows it per reader.
test_latency_slow_fast() {
	net_up
	serve F 127.0.0.1 --comm tr_fast --read-size 4096
	# 16 reads 50 ms apart: its data waits far longer than any
	# guest's scheduling (TCG, PREEMPT_RT's threaded softirqs) delays
	# the fast reader, whose data comes 1 KiB at a time
	serve L 127.0.0.1 --comm tr_slow --read-size 4096 --sleep-us 50000
	start_tool tcprcv -j -L -P
	send SF 127.0.0.1 "$F_PORT" $((64 * KIB)) --sleep-us 1000
	send SL 127.0.0.1 "$L_PORT" $((64 * KIB))
	go
	wait_for "$T/F.out" '^read '
	wait_for "$T/L.out" '^read '
	finish
	stop_tool
	expect_status 0
	fast=$(jfield p50 "\"pid\":$F_PID,")
	slow=$(jfield p50 "\"pid\":$L_PID,")
	measured "-L p50: fast reader $fast us, slow reader $slow us"
	expect_range "slow reader's p50 (us)" "$slow" 10000 10000000
	expect_range "fast reader's p50 (us)" "$fast" 0 "$(awk -v s="$slow" 'BEGIN { print s / 4 }')"
}

# Loopback taken down in the middle of a paced transfer: what the sender
# sends meanwhile is lost and retransmitted; its row (the owner learned
# at connect) has the retransmits, and the receiver still reads it all.
test_retransmit() {
	net_up
	serve R 127.0.0.1 --comm tr_recv
	start_tool tcprcv -j 0.2
	send S 127.0.0.1 "$R_PORT" $((64 * KIB)) --comm tr_send --sleep-us 20000
	go
	# mid-transfer (it takes 1.3 s at least): once a report has the
	# receiver's row; then lo is down for 0.5 s, past the first RTO
	wait_for "$T/out" "\"pid\":$R_PID,"
	ip link set lo down
	sleep 0.5
	ip link set lo up
	wait_for "$T/R.out" '^read '
	wait_for "$T/S.out" '^sent '
	S_PID=$(sed -nE 's/^sent [0-9]+ pid=([0-9]+)$/\1/p' "$T/S.out")
	finish
	closed "$R_PORT"
	stop_tool
	expect_line R.out "^read $((64 * KIB))\$"
	expect_ge "retransmits of the sender" "$(row_sum retrans "$S_PID")" 1
	expect_eq "bytes read by the receiver" "$(row_sum read "$R_PID")" $((64 * KIB))
	expect_no_line out '"pid":0,"comm":"\[unknown\]".*"retrans":[1-9]'
}

# --rcv-time: the chain's first choice here is fentry.
# Where the kernel has no trampoline for a kernel function (arm64 6.1:
# fentry programs load, their attach is refused with ENOTSUPP), the
# kprobes take over, and --check says why.
test_rcv_time_fentry() {
	run "$BUILD/tcprcv" --check --rcv-time
	expect_status 0 "$STATUS"
	if ! fentry_attaches; then
		refused='fentry on tcp_v4_rcv cannot attach: no trampoline for kernel functions on this kernel \(ENOTSUPP\)'
		expect_line run.out "^probe tcp_v4_rcv +fallback +kprobe tcp_v4_rcv \\($refused\\)\$"
		expect_line run.out "^probe tcp_v4_rcv return +fallback +kprobe tcp_v4_rcv \\($refused\\)\$"
		run "$BUILD/tcprcv" --check
		expect_line run.out '^--rcv-time +ok +kprobe tcp_v4_rcv$'
		rcv_time -v
		expect_line err 'probe tcp_v4_rcv: fallback \(kprobe tcp_v4_rcv'
		return
	fi
	expect_line run.out '^probe tcp_v4_rcv +ok +fentry tcp_v4_rcv$'
	expect_line run.out '^probe tcp_v4_rcv return +ok +fentry tcp_v4_rcv$'
	run "$BUILD/tcprcv" --check
	expect_line run.out '^--rcv-time +ok +fentry tcp_v4_rcv$'
	rcv_time -v
	expect_line err 'probe tcp_v4_rcv: ok \(fentry tcp_v4_rcv\)'
}

# --probe kprobe pins the kprobes, which work as well.
test_rcv_time_kprobe() {
	run "$BUILD/tcprcv" --check --rcv-time --probe kprobe
	expect_status 0 "$STATUS"
	expect_line run.out '^probe tcp_v4_rcv +fallback +kprobe tcp_v4_rcv \(fentry tcp_v4_rcv not allowed by --probe\)$'
	rcv_time -v --probe kprobe
	expect_line err 'kprobe tcp_v4_rcv'
}

# rcv_time [tcprcv options]: --rcv-time over a 100 KiB transfer: one call
# of tcp_v4_rcv at least per segment each way, each taking some time.
rcv_time() {
	net_up
	serve R 127.0.0.1
	start_tool tcprcv -j --ns --rcv-time "$@"
	send S 127.0.0.1 "$R_PORT" $((100 * KIB))
	go
	wait_for "$T/R.out" '^read '
	finish
	stop_tool
	expect_status 0
	expect_ge "calls of tcp_v4_rcv" "$(jfield count)" 10
	expect_range "shortest call (ns)" "$(jfield min)" 1 1000000000
}

test_no_leak() {
	bpf_snapshot before
	transfer 127.0.0.1 $((50 * KIB)) 0.2
	expect_no_leak before
	bpf_snapshot before2
	net_up
	start_tool tcprcv --rcv-time
	stop_tool
	expect_no_leak before2
}
