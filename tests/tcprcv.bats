#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# tcprcv against tcpload, which moves a known number of bytes over TCP,
# between network namespaces of the test's own: a veth pair (CLI, the
# senders, and SRV, the receivers) or lo. tcprcv runs in the root
# namespace and sees every namespace: a test picks its rows by the
# workload's PID or port, since other processes use TCP on this machine.
#
# Byte counts are exact: what the receiver printed it read, and over veth
# (nothing lost) what it received. Retransmits are checked against the
# kernel's own count for the sender's namespace (TcpRetransSegs), where
# the sender's is the only connection.

load helpers
bats_require_minimum_version 1.5.0

TCPRCV_PROGS='tcp_probe|rcv_space|set_state|exit_accept4|exit_accept|retransmit|destroy'
KIB=1024
ALL_ROWS=8192		# -r: the largest, so that no other traffic pushes ours out

setup() {
	common_setup
	NETNS=()
}

teardown() {
	local ns
	common_teardown
	for ns in "${NETNS[@]}"; do
		ip netns del "$ns" 2>/dev/null || true
	done
}

# net_pair: two namespaces joined by a veth pair, CLI (10.77.N.1,
# fd77:N::1) and SRV (10.77.N.2, fd77:N::2), N the test's number; sets
# CLI, SRV and the addresses CLI4, SRV4, CLI6, SRV6. No DAD: the IPv6
# addresses work at once.
net_pair() {
	local n=$BATS_TEST_NUMBER ns
	CLI=tcprcv-$n-$$-c SRV=tcprcv-$n-$$-s
	CLI4=10.77.$n.1 SRV4=10.77.$n.2 CLI6=fd77:$n::1 SRV6=fd77:$n::2
	for ns in "$CLI" "$SRV"; do
		ip netns add "$ns"
		NETNS+=("$ns")
		ip -n "$ns" link set lo up
	done
	ip link add veth0 netns "$CLI" type veth peer name veth0 netns "$SRV"
	ip -n "$CLI" addr add "$CLI4/24" dev veth0
	ip -n "$SRV" addr add "$SRV4/24" dev veth0
	ip -n "$CLI" addr add "$CLI6/64" dev veth0 nodad
	ip -n "$SRV" addr add "$SRV6/64" dev veth0 nodad
	ip -n "$CLI" link set veth0 up
	ip -n "$SRV" link set veth0 up
	link_up "$CLI"
	link_up "$SRV"
}

# link_up NS: until veth0 in NS has its carrier (a SYN sent before is
# retransmitted a second later), at most WAIT_SECS.
link_up() {
	retry has_carrier "$1" || { echo "veth0 in $1 has no carrier" >&2; return 1; }
}

has_carrier() { ip -n "$1" link show veth0 | grep -q LOWER_UP; }

# net_lo: one namespace with lo only, SRV (CLI is the same).
net_lo() {
	SRV=tcprcv-$BATS_TEST_NUMBER-$$-s CLI=$SRV
	ip netns add "$SRV"
	NETNS+=("$SRV")
	ip -n "$SRV" link set lo up
}

# served NAME BYTES: the server has read exactly BYTES (it is then held).
served() {
	wait_for "$T/$1.out" '^read '
	grep -qx "read $2" "$T/$1.out" || { cat "$T/$1.out" >&2; return 1; }
}

# sent NAME...: each sender has exited 0 (its peer having read it all),
# having sent what it said, as the PID send gave.
sent() {
	local n job
	for n in "$@"; do
		job=${n}_JOB
		wait_exit "${!job}"
		grep -qE "^sent [0-9]+ pid=${!job}\$" "$T/$n.out"
	done
}

# closed NS PORT: until no TCP socket in NS has local port PORT (every
# connection the server had has gone through tcp_destroy_sock).
closed() {
	retry no_sockets "$@" && return 0
	echo "sockets on port $2 in $1 remain:" >&2
	ip netns exec "$1" ss -tan "( sport = :$2 )" >&2
	return 1
}

# queued NS PORT: until the established connection with local port PORT
# in NS has data waiting in its receive queue (Recv-Q), accepted or not.
queued() {
	retry has_queued "$@" || { echo "nothing queued on port $2 in $1" >&2; return 1; }
}

has_queued() {
	ip netns exec "$1" ss -tnH state established "( sport = :$2 )" |
		awk '$1 > 0 { found = 1 } END { exit !found }'
}

no_sockets() { [ -z "$(ip netns exec "$1" ss -tanH "( sport = :$2 )")" ]; }

# next_report: until $T/out has one more line (one more JSON report).
next_report() { wait_lines "$T/out" $(($(wc -l < "$T/out") + 1)); }

# retrans_segs NS: the segments TCP retransmitted in NS (TcpRetransSegs).
retrans_segs() {
	ip netns exec "$1" awk '$1 == "Tcp:" && $13 ~ /^[0-9]+$/ { print $13 }' /proc/net/snmp
}

# win_probes NS: the zero-window probes TCP sent in NS (TcpExt
# TCPWinProbe): each is an old sequence number, dropped where it arrives.
win_probes() {
	ip netns exec "$1" awk '$1 == "TcpExt:" { if (!n) { for (i = 2; i <= NF; i++) if ($i == "TCPWinProbe") n = i; next }
		print $n }' /proc/net/netstat
}

# rsum PID FIELD [FILE]: FIELD of PID's rows, added over every report.
rsum() {
	jq -s --argjson p "$1" "map(.rows[] | select(.pid == \$p) | .$2) | add // 0" "${3:-$T/out}"
}

# rows_of PID [FILE]: how many rows PID has, over every report.
rows_of() {
	jq -s --argjson p "$1" 'map(.rows[] | select(.pid == $p)) | length' "${2:-$T/out}"
}

# exact_rx PID BYTES [FILE] [DROPS]: the receiver's counts are exact: it
# read and received BYTES, in plausible segments (1 byte to 64 KiB each).
# It dropped at most DROPS (default: what CLI retransmitted, and its
# zero-window probes): a segment that arrives twice, its retransmission
# (a tail loss probe, even on lo), is dropped, and so is a probe of a
# full receive buffer (a connection not accepted yet, on a slow
# machine). It sent no data: it retransmitted nothing, but what SRV did
# (a FIN, if ever).
exact_rx() {
	local pid=$1 bytes=$2 file=${3:-$T/out} drops=${4:-} segs
	[ -n "$drops" ] || drops=$(($(retrans_segs "$CLI") + $(win_probes "$CLI")))
	segs=$(rsum "$pid" segs "$file")
	echo "pid $pid: segs $segs, bytes $(rsum "$pid" bytes "$file"), read $(rsum "$pid" read "$file"), drops $(rsum "$pid" drops "$file") (at most $drops), retrans $(rsum "$pid" retrans "$file"); expected $bytes"
	[ "$(rsum "$pid" read "$file")" -eq "$bytes" ]
	[ "$(rsum "$pid" bytes "$file")" -eq "$bytes" ]
	[ "$segs" -gt 0 ] && [ "$segs" -le "$bytes" ] && [ "$segs" -ge $((bytes / 65536)) ]
	[ "$(rsum "$pid" drops "$file")" -le "$drops" ]
	[ "$(rsum "$pid" retrans "$file")" -le "$(retrans_segs "$SRV")" ]
}



@test "IPv4 over veth: the receiver's bytes received and read, exactly, over intervals" {
	net_pair
	B=3000000
	serve R "$SRV" "$SRV4" --comm tr_rx
	# 1 KiB writes, paced to span several intervals
	send S "$CLI" "$SRV4" "$R_PORT" "$B" --sleep-us 200
	start_tool tcprcv -j -p "$R_PID" 0.2
	go
	served R "$B"
	sent S
	# its socket closed, then reported: what was reported live is not
	# counted again
	closed "$SRV" "$R_PORT"
	next_report
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	echo "$(jq -s length "$T/out") reports"
	[ "$(jq -s 'map(select(.rows != [])) | length' "$T/out")" -ge 2 ]
	exact_rx "$R_PID" "$B"
	jout '.tool == "tcprcv" and .by == "process" and .lost == 0'
	# -p: its rows only, not the sender's nor an unknown owner's
	jout 'all(.rows[]; .pid == $p and .comm == "tr_rx" and (keys | length) == 7)' --argjson p "$R_PID"
	jout '.keys == (.rows | length) and .bytes == ([.rows[].bytes] | add // 0) and
		.read == ([.rows[].read] | add // 0) and .segs == ([.rows[].segs] | add // 0)'
	json_strict "$T/out"
}

@test "IPv6 over veth, exactly; -6 leaves out an IPv4 transfer beside it, -4 the IPv6 one" {
	net_pair
	B6=2500000 B4=1500000
	serve R6 "$SRV" "$SRV6" --comm tr_rx6
	serve R4 "$SRV" "$SRV4" --comm tr_rx4
	send S6 "$CLI" "$SRV6" "$R6_PORT" "$B6" --sleep-us 200
	send S4 "$CLI" "$SRV4" "$R4_PORT" "$B4" --sleep-us 200
	start_tool tcprcv -j -6 -r $ALL_ROWS 0.2
	start_more tcprcv V4 -j -4 -r $ALL_ROWS 0.2
	start_more tcprcv P6 -j -6 -p "$R6_PID" 0.2
	go
	served R6 "$B6"
	served R4 "$B4"
	sent S6 S4
	stop_tool INT
	stop_more V4
	stop_more P6
	[ "$TOOL_STATUS" -eq 0 ]
	exact_rx "$R6_PID" "$B6"
	exact_rx "$R6_PID" "$B6" "$T/P6.out"
	exact_rx "$R4_PID" "$B4" "$T/V4.out"
	[ "$(rows_of "$R4_PID")" -eq 0 ]
	[ "$(rows_of "$R6_PID" "$T/V4.out")" -eq 0 ]
	jq -e -s --argjson p "$R6_PID" 'map(.rows[] | select(.pid == $p) | .comm == "tr_rx6") | all' "$T/out"
}

@test "-p: one receiver's rows, exactly, beside another served by the same softirqs" {
	net_pair
	BA=2000000 BB=3000000
	serve A "$SRV" "$SRV4" --comm tr_alpha
	serve B "$SRV" "$SRV4" --comm tr_beta
	# both at once over the one veth: their segments reach TCP in the
	# same softirq runs, in whichever process context that happens
	send SA "$CLI" "$SRV4" "$A_PORT" "$BA" --sleep-us 200
	send SB "$CLI" "$SRV4" "$B_PORT" "$BB" --sleep-us 200
	start_tool tcprcv -j -p "$A_PID" 0.2
	start_more tcprcv ALL -j -r $ALL_ROWS 0.2
	go
	served A "$BA"
	served B "$BB"
	sent SA SB
	stop_tool INT
	stop_more ALL
	exact_rx "$A_PID" "$BA"
	jout 'all(.rows[]; .pid == $p and .comm == "tr_alpha")' --argjson p "$A_PID"

	# without -p: each with its own bytes, PID and name; the senders
	# received nothing
	exact_rx "$A_PID" "$BA" "$T/ALL.out"
	exact_rx "$B_PID" "$BB" "$T/ALL.out"
	jq -e -s --argjson a "$A_PID" --argjson b "$B_PID" '
		map(.rows[] | select(.pid == $a or .pid == $b) |
		    .comm == (if .pid == $a then "tr_alpha" else "tr_beta" end)) | length > 0 and all' "$T/ALL.out"
	[ "$(rsum "$SA_PID" bytes "$T/ALL.out")" -eq 0 ]
	[ "$(rsum "$SB_PID" bytes "$T/ALL.out")" -eq 0 ]
}

@test "-L -P: a slow reader's data waits in the queue far longer than a fast one's" {
	net_pair
	B=$((128 * KIB))
	serve F "$SRV" "$SRV4" --comm tr_fast
	serve L "$SRV" "$SRV4" --comm tr_slow --read-size 4096 --sleep-us 20000
	# the fast reader's data arrives 1 KiB at a time, each read at once
	send SF "$CLI" "$SRV4" "$F_PORT" "$B" --sleep-us 1000
	send SL "$CLI" "$SRV4" "$L_PORT" "$B"
	start_tool tcprcv -j -L -P
	start_more tcprcv SEGS -j -p "$L_PID" 0.2
	go
	served F "$B"
	served L "$B"
	sent SF SL
	stop_tool INT
	stop_more SEGS
	[ "$TOOL_STATUS" -eq 0 ]
	jq -c --argjson f "$F_PID" --argjson l "$L_PID" \
		'select(.key.pid == $f or .key.pid == $l) | {key, unit, count, p50, max}' "$T/out"
	[ "$(jq -s --argjson p "$L_PID" 'map(select(.key.pid == $p)) | length' "$T/out")" -eq 1 ]
	jout 'select(.key.pid == $p) | .key.comm == "tr_slow" and .unit == "usecs" and
		.p50 >= 10000 and .max >= .p50' --argjson p "$L_PID"
	jout 'select(.key.pid == $p) | .key.comm == "tr_fast" and .p50 < 5000 and .count > 0' \
		--argjson p "$F_PID"
	# one sample per arrival with new data (a GRO packet is one), once its
	# last byte was read: SEGS counts the data segments as the kernel does
	# (data_segs_in: a GRO packet is its segments, duplicates included),
	# so at least as many
	segs=$(rsum "$L_PID" segs "$T/SEGS.out")
	drops=$(rsum "$L_PID" drops "$T/SEGS.out")
	echo "slow reader: $segs segments, $drops dropped"
	jout 'select(.key.pid == $p) | .count <= $n and .count > 0' --argjson p "$L_PID" --argjson n "$segs"
	[ "$(rsum "$L_PID" read "$T/SEGS.out")" -eq "$B" ]
	[ "$(rsum "$L_PID" bytes "$T/SEGS.out")" -eq "$B" ]
}

@test "--by port: the server's port; --by flow: the connection's addresses and ports" {
	net_pair
	B4=1200000 B6=800000
	serve R4 "$SRV" "$SRV4" --comm tr_port
	serve R6 "$SRV" "$SRV6" --comm tr_flow6
	send S4 "$CLI" "$SRV4" "$R4_PORT" "$B4" --sleep-us 300
	send S6 "$CLI" "$SRV6" "$R6_PORT" "$B6" --sleep-us 300
	start_tool tcprcv -j --by port -p "$R4_PID" 0.2
	start_more tcprcv FLOW -j --by flow -r $ALL_ROWS 0.2
	go
	# the clients' ports, as they print them (the connections may be
	# gone before ss could be asked, on a slow machine)
	wait_for "$T/S4.out" '^connected port='
	wait_for "$T/S6.out" '^connected port='
	peer4=$(sed -n 's/^connected port=//p' "$T/S4.out")
	peer6=$(sed -n 's/^connected port=//p' "$T/S6.out")
	served R4 "$B4"
	served R6 "$B6"
	sent S4 S6
	stop_tool INT
	stop_more FLOW
	echo "ports: $R4_PORT <- $peer4, $R6_PORT <- $peer6"
	jout '.by == "port" and all(.rows[]; .pid == $p and .lport == $port and .comm == "tr_port")' \
		--argjson p "$R4_PID" --argjson port "$R4_PORT"
	exact_rx "$R4_PID" "$B4"

	jq -e -s --argjson p "$R4_PID" --argjson l "$R4_PORT" --argjson r "$peer4" \
		--arg la "$SRV4" --arg ra "$CLI4" '
		map(.rows[] | select(.pid == $p)) | length > 0 and all(
		    . as $x | ($x | keys | sort) == (["bytes", "comm", "drops", "family", "laddr",
			"lport", "pid", "raddr", "read", "retrans", "rport", "segs"]) and
		    $x.family == "ipv4" and $x.laddr == $la and $x.raddr == $ra and
		    $x.lport == $l and $x.rport == $r)' "$T/FLOW.out"
	exact_rx "$R4_PID" "$B4" "$T/FLOW.out"
	jq -e -s --argjson p "$R6_PID" --argjson l "$R6_PORT" --argjson r "$peer6" \
		--arg la "$SRV6" --arg ra "$CLI6" '
		map(.rows[] | select(.pid == $p)) | length > 0 and
		all(.family == "ipv6" and .laddr == $la and .raddr == $ra and .lport == $l and .rport == $r)' \
		"$T/FLOW.out"
	exact_rx "$R6_PID" "$B6" "$T/FLOW.out"
	jq -e -s 'all(.[]; .by == "flow")' "$T/FLOW.out"
}

# The bytes a process read from a shared socket are its own, whichever
# process read first (tcprcv keeps the first reader's count apart) and
# whichever last (the owner when the socket closes). Who reads last varies
# from run to run: the transfer is repeated until the socket has closed
# owned by each of the two, 8 times at most.
@test "a socket two processes read (--share): each reader's bytes read, exactly" {
	net_pair
	B=1000000
	ways=""
	for run in 1 2 3 4 5 6 7 8; do
		rm -f "$T/go" "$T/hold"
		serve R "$SRV" "$SRV4" --comm tr_share --share --read-size 4096
		send S "$CLI" "$SRV4" "$R_PORT" "$B" --sleep-us 100
		# one report, after the shared socket has closed
		start_tool tcprcv -j --lport "$R_PORT" 30
		go
		served R "$B"
		sent S
		closed "$SRV" "$R_PORT"
		stop_tool INT
		finish
		wait_exit "$R_JOB"
		cat "$T/R.out"
		cat "$T/out"
		[ "$(grep -cE '^pid=[0-9]+ read [0-9]+$' "$T/R.out")" -eq 2 ]
		while read -r pid n; do
			echo "run $run: pid $pid read $n; tcprcv: $(rsum "$pid" read)"
			[ "$(rsum "$pid" read)" -eq "$n" ]
		done < <(sed -nE 's/^pid=([0-9]+) read ([0-9]+)$/\1 \2/p' "$T/R.out")
		jout '.read == $b and .bytes == $b and all(.rows[]; .comm == "tr_share")' --argjson b "$B"
		# the received bytes went to one of them, the owner at the close
		owner=$(jq -s 'map(.rows[] | select(.bytes > 0) | .pid) | unique | .[0]' "$T/out")
		[ "$(rsum "$owner" bytes)" -eq "$B" ]
		[ "$owner" = "$R_PID" ] && ways+=parent, || ways+=child,
		[[ "$ways" == *parent* && "$ways" == *child* ]] && break
	done
	echo "owners at the close: $ways"
}

# lossy [BYTES [tcpload send options]]: a paced transfer over IPv4 of
# BYTES (default 256 KiB; 1 KiB writes 2 ms apart: each segment its own
# skb, below the MSS) to R in SRV, sent by S in CLI; "outage" runs once R
# has received data. tcprcv: $T/out the sender's socket (--rport),
# $T/RX.out R's. Sets B, and RETRANS: the segments the kernel counted as
# retransmitted in CLI (TcpRetransSegs).
lossy() {
	local before
	B=${1:-$((256 * KIB))}
	serve R "$SRV" "$SRV4" --comm tr_lossy
	send S "$CLI" "$SRV4" "$R_PORT" "$B" --sleep-us 2000 --comm tr_sender "${@:2}"
	start_tool tcprcv -j --rport "$R_PORT" 0.2
	start_more tcprcv RX -j -p "$R_PID" 0.2
	before=$(retrans_segs "$CLI")
	go
	wait_for "$T/RX.out" '"bytes":[1-9]'
	outage
	served R "$B"
	sent S
	RETRANS=$(($(retrans_segs "$CLI") - before))
	stop_tool INT
	stop_more RX
	echo "the kernel retransmitted $RETRANS; tcprcv: $(rsum "$S_PID" retrans)"
}

# The sender's row has the retransmits, every one (as the kernel counted
# them); the receiver read and received every byte once (a retransmitted
# segment that had arrived is dropped as a duplicate).
lossy_counted() {
	[ "$(rsum "$S_PID" retrans)" -eq "$RETRANS" ]
	jout 'all(.rows[]; .pid == $p and .comm == "tr_sender" and .bytes == 0)' --argjson p "$S_PID"
	exact_rx "$R_PID" "$B" "$T/RX.out" "$RETRANS"
	[ "$(retrans_segs "$SRV")" -eq 0 ]
}

@test "retransmits under netem loss: the sender's row" {
	net_pair
	out=$(ip netns exec "$CLI" tc qdisc add dev veth0 root netem loss 20% 2>&1) ||
		skip "no netem here: $out"
	outage() { :; }
	lossy
	[ "$RETRANS" -gt 0 ]
	lossy_counted
}

# addr_outage: the receiver's address is gone 300 ms. Segments to an
# address the receiver no longer has are dropped on arrival (no forwarding
# in a new namespace): lost in flight, so the sender retransmits them,
# every time. (Taking the veth down instead rarely makes the kernel
# retransmit: the segments stay queued, and its attempts fail with
# -EBUSY, which since 6.17 the tracepoint reports too: no retransmits.)
addr_outage() {
	ip -n "$SRV" addr del "$SRV4/24" dev veth0
	sleep 0.3
	ip -n "$SRV" addr add "$SRV4/24" dev veth0
}

@test "retransmits after the receiver's address was gone 300 ms: the sender's row, exactly" {
	net_pair
	outage() { addr_outage; }
	lossy
	[ "$RETRANS" -gt 0 ]
	lossy_counted
}

@test "retransmits of 16 KiB writes: every segment counted, as the kernel counts them" {
	net_pair
	outage() { addr_outage; }
	# Writes of several MSS make skbs of several segments (GSO): one
	# tcp_retransmit_skb can resend many segments (tcp_skb_pcount).
	lossy $((4096 * KIB)) --chunk 16K
	[ "$RETRANS" -gt 0 ]
	lossy_counted
}

@test "retransmit attempts while the segment is still in the host's queue are no retransmits" {
	net_pair
	# The sender's qdisc stalls for 1 s (tbf at 8 kbit/s): its segments
	# wait in the host's queue, the retransmission timer fires, and each
	# attempt fails with EBUSY (the original still queued): the kernel
	# counts none of them. Since 6.17 the tracepoint reports the failed
	# attempts too, with their error.
	out=$(ip netns exec "$CLI" tc qdisc add dev veth0 root tbf rate 1gbit burst 64k latency 10s 2>&1) ||
		skip "no tbf here: $out"
	outage() {
		ip netns exec "$CLI" tc qdisc change dev veth0 root tbf rate 8kbit burst 4k latency 10s
		sleep 1
		ip netns exec "$CLI" tc qdisc change dev veth0 root tbf rate 1gbit burst 64k latency 10s
	}
	lossy
	[ "$(rsum "$S_PID" retrans)" -le "$RETRANS" ]
	lossy_counted
}

# owner_rows PORT PID: the rows of $T/out (tcprcv --lport PORT) are all
# PID's or an unknown owner's, at least one of each; the unknown owner's
# read nothing and are named [unknown]; once PID has a row, no unknown
# owner has one. Sets UNKNOWN (bytes the unknown owner received) and
# OWNED (bytes PID received).
owner_rows() {
	jq -c '.rows' "$T/out"
	jout 'all(.rows[]; .pid == $p or .pid == 0)' --argjson p "$2"
	jout 'all(.rows[]; .pid != 0 or (.comm == "[unknown]" and .read == 0))'
	UNKNOWN=$(rsum 0 bytes)
	OWNED=$(rsum "$2" bytes)
	echo "unknown owner: $UNKNOWN bytes, PID $2: $OWNED"
	[ "$UNKNOWN" -gt 0 ] && [ "$OWNED" -gt 0 ]
	jq -e -s --argjson p "$2" '
		(map(any(.rows[]; .pid == $p)) | index(true)) as $first |
		$first != null and (.[$first:] | all(all(.rows[]; .pid != 0)))' "$T/out"
}

# unread NS PORT: until the established socket on PORT has nothing queued.
unread() {
	retry refute has_queued "$@" || { echo "data still queued on port $2 in $1" >&2; return 1; }
}

@test "a socket whose owner is not known yet: [unknown] until then, never another PID" {
	net_pair
	B=$((96 * KIB))
	# 1: connected and sending before tcprcv starts, accepted after. The
	# sender writes a third before tcprcv starts, a third before the
	# accept, a third after.
	serve R "$SRV" "$SRV4" --comm tr_late --go "$T/accept"
	send S "$CLI" "$SRV4" "$R_PORT" "$B" --comm tr_early --pause "$T/more" --pause "$T/rest"
	go
	queued "$SRV" "$R_PORT"
	start_tool tcprcv -j --lport "$R_PORT" 0.1
	touch "$T/more"
	wait_for "$T/out" '"pid":0,'
	touch "$T/accept"
	wait_for "$T/R.out" '^accepted$'
	touch "$T/rest"
	served R "$B"
	sent S
	closed "$SRV" "$R_PORT"
	stop_tool INT
	# (the sender, current in the softirq on veth, is never the owner)
	owner_rows "$R_PORT" "$R_PID"
	# every byte read after tcprcv started: all of them
	[ "$(rsum "$R_PID" read)" -eq "$B" ]
	[ $((UNKNOWN + OWNED)) -le "$B" ] && [ "$OWNED" -ge $((B / 3)) ]

	# 2: accepted before tcprcv starts, then stopped before it reads; a
	# third arrives while it is stopped, a third once it has read again
	rm -f "$T/go" "$T/hold" "$T/more" "$T/rest"
	serve R2 "$SRV" "$SRV4" --comm tr_stopped
	send S2 "$CLI" "$SRV4" "$R2_PORT" "$B" --comm tr_early --pause "$T/more" --pause "$T/rest"
	go
	accepted "$SRV" "$R2_PORT" "$R2_PID"
	kill -STOP "$R2_PID"
	start_tool tcprcv -j --lport "$R2_PORT" 0.1
	touch "$T/more"
	wait_for "$T/out" '"pid":0,'
	kill -CONT "$R2_PID"
	unread "$SRV" "$R2_PORT"
	touch "$T/rest"
	served R2 "$B"
	sent S2
	closed "$SRV" "$R2_PORT"
	stop_tool INT
	owner_rows "$R2_PORT" "$R2_PID"
	# it read what arrived while it was stopped, and the rest
	read2=$(rsum "$R2_PID" read)
	[ "$read2" -ge $((UNKNOWN + OWNED)) ] && [ "$read2" -le "$B" ] && [ "$OWNED" -ge $((B / 3)) ]
}

@test "sockets opened and closed within one interval are counted exactly" {
	net_pair
	N=4 EACH=$((200 * KIB))
	serve R "$SRV" "$SRV4" --comm tr_short --conns $N
	for i in $(seq $N); do
		send "S$i" "$CLI" "$SRV4" "$R_PORT" "$EACH"
	done
	start_tool tcprcv -j --lport "$R_PORT" 30
	go
	served R $((N * EACH))
	sent S1 S2 S3 S4
	closed "$SRV" "$R_PORT"
	stop_tool INT
	cat "$T/out"
	[ "$(jq -s length "$T/out")" -eq 1 ]
	exact_rx "$R_PID" $((N * EACH))
	jout '.keys == 1 and .lost == 0 and .rows[0].pid == $p' --argjson p "$R_PID"
}

# tcpload's sender half-closes once it has written (as nc -N, or an RPC
# client) and reads until the server closes: what the server writes back
# arrives in FIN_WAIT2, where tcp_probe does not fire.
@test "a half-closed client: what it receives and reads in FIN_WAIT2, exactly; -L samples it" {
	net_pair
	B=$((1024 * KIB))
	serve R "$SRV" "$SRV4" --comm tr_reply --reply "$B"
	send S "$CLI" "$SRV4" "$R_PORT" 1000 --comm tr_halfclose
	start_tool tcprcv -j -p "$S_PID" 0.2
	start_more tcprcv LAT -j -L --rport "$R_PORT"
	go
	served R 1000
	sent S
	grep -qx "received $B" "$T/S.out"
	stop_tool INT
	stop_more LAT
	echo "sender: segs $(rsum "$S_PID" segs), bytes $(rsum "$S_PID" bytes), read $(rsum "$S_PID" read)"
	[ "$(rsum "$S_PID" bytes)" -eq "$B" ]
	[ "$(rsum "$S_PID" read)" -eq "$B" ]
	[ "$(rsum "$S_PID" segs)" -ge $((B / 65536)) ] && [ "$(rsum "$S_PID" segs)" -le $((B / 100)) ]
	jq -c '{count, p50, max}' "$T/LAT.out"
	[ "$(jq -s 'map(.count) | add' "$T/LAT.out")" -gt 0 ]
}

# A client made by hand (tests/workloads/tcpinject.py, from an address no
# kernel here has) sends what no kernel sender would: out-of-order data
# twice and a segment far past the window, then fills the gap. TCP takes
# in 2000 bytes of its 4 data segments and drops 2 of them, after
# tcp_probe saw them all.
@test "out-of-order duplicates, a segment past the window: bytes as TCP took them in, segs and drops as it counts" {
	net_pair
	FAKE=10.77.$BATS_TEST_NUMBER.3
	cli_mac=$(ip -n "$CLI" -j link show veth0 | jq -r '.[0].address')
	srv_mac=$(ip -n "$SRV" -j link show veth0 | jq -r '.[0].address')
	ip -n "$SRV" neigh add "$FAKE" lladdr "$cli_mac" dev veth0 nud permanent
	serve R "$SRV" "$SRV4" --comm tr_inject
	start_tool tcprcv -j -p "$R_PID" 0.2
	go
	ip netns exec "$CLI" timeout 20 python3 "$BATS_TEST_DIRNAME/workloads/tcpinject.py" \
		veth0 "$FAKE" "$SRV4" "$R_PORT" "$srv_mac"
	served R 2000
	# the kernel's own counts for the socket (held open, in CLOSE-WAIT)
	line=$(ip netns exec "$SRV" ss -tinmH "( sport = :$R_PORT )")
	echo "ss: $line"
	segs=$(grep -oE 'data_segs_in:[0-9]+' <<<"$line" | cut -d: -f2)
	drops=$(grep -oE ',d[0-9]+\)' <<<"$line" | tr -dc 0-9)
	[ "$segs" -eq 4 ] && [ "$drops" -eq 2 ]
	grep -q 'bytes_received:2001 ' <<<"$line"	# ss counts the FIN as a byte
	next_report
	stop_tool INT
	cat "$T/out"
	echo "tcprcv: segs $(rsum "$R_PID" segs), bytes $(rsum "$R_PID" bytes), drops $(rsum "$R_PID" drops)"
	[ "$(rsum "$R_PID" bytes)" -eq 2000 ]
	[ "$(rsum "$R_PID" read)" -eq 2000 ]
	[ "$(rsum "$R_PID" segs)" -eq "$segs" ]
	[ "$(rsum "$R_PID" drops)" -eq "$drops" ]
}

# With TCP_DEFER_ACCEPT the handshake's last ACK is dropped and the first
# data segment makes the connection: TCP takes it in outside tcp_probe.
@test "TCP_DEFER_ACCEPT: the data segment that makes the connection is counted, exactly" {
	net_pair
	serve A "$SRV" "$SRV4" --comm tr_one --defer-accept
	serve B "$SRV" "$SRV4" --comm tr_many --defer-accept
	send SA "$CLI" "$SRV4" "$A_PORT" 1000
	send SB "$CLI" "$SRV4" "$B_PORT" $((300 * KIB))
	start_tool tcprcv -j -r $ALL_ROWS 30
	go
	served A 1000
	served B $((300 * KIB))
	sent SA SB
	closed "$SRV" "$A_PORT"
	closed "$SRV" "$B_PORT"
	stop_tool INT
	cat "$T/out"
	exact_rx "$A_PID" 1000
	exact_rx "$B_PID" $((300 * KIB))
}

@test "text: the table, the receiver's row, hostile names escaped; JSON strict" {
	net_lo
	B=1000000
	serve R "$SRV" 127.0.0.1 --comm tr_text
	send S "$SRV" 127.0.0.1 "$R_PORT" "$B" --sleep-us 200
	start_tool tcprcv -p "$R_PID" 0.2
	go
	served R "$B"
	sent S
	wait_for "$T/out" '^PID +COMM'	# an interval's table, then the last
	stop_tool INT
	cat "$T/out"
	[ "$TOOL_STATUS" -eq 0 ]
	grep -qx "Tracing TCP receive of PID $R_PID... Hit Ctrl-C to end." "$T/err"
	tables=$(grep -cE '^PID +COMM +SEGS +RX_BYTES +READ_BYTES +RETRANS +DROPS$' "$T/out")
	[ "$tables" -ge 2 ]
	[ "$(grep -cE '^[0-9]+ bytes received, [0-9]+ read, in [01] processes$' "$T/out")" -eq "$tables" ]
	# each table says its counts are of its interval, not totals
	[ "$(grep -cE '^Counts in the last [0-9]+\.[0-9]{2} s \(per interval, not totals\):$' "$T/out")" -eq "$tables" ]
	# every line is a header, a row of the receiver, a summary or blank
	[ "$(grep -cvE "^(Counts in the last .*|PID +COMM .*|$R_PID +tr_text( +[0-9]+){5}|[0-9]+ bytes received, .*|)\$" "$T/out")" -eq 0 ]
	[ "$(awk -v p="$R_PID" '$1 == p { n += $4 } END { print n }' "$T/out")" -eq "$B" ]
	[ "$(awk -v p="$R_PID" '$1 == p { n += $5 } END { print n }' "$T/out")" -eq "$B" ]
	[ "$(awk '/bytes received/ { n += $1 } END { print n }' "$T/out")" -eq "$B" ]
	[ "$(awk -v p="$R_PID" '$1 == p { n += $6 } END { print n }' "$T/out")" -le "$(retrans_segs "$SRV")" ]
	awk 'length > 79 { exit 1 }' "$T/out"

	rm -f "$T/go" "$T/hold"
	name=$'bad\nname\e[31m\xff'
	serve H "$SRV" 127.0.0.1 --comm "$name"
	send S "$SRV" 127.0.0.1 "$H_PORT" $((64 * KIB))
	start_tool tcprcv -p "$H_PID" 0.2
	start_more tcprcv J -j -p "$H_PID" 0.2
	go
	served H $((64 * KIB))
	sent S
	stop_tool INT
	stop_more J
	cat "$T/out"
	[ "$(LC_ALL=C grep -c $'[\x01-\x09\x0b-\x1f\x7f]' "$T/out")" -eq 0 ]
	grep -qE "^$H_PID +bad\\\\nname\\\\x1b\\[31m\\\\xff +[0-9]+ +65536 +65536 +[0-9]+ +[0-9]+\$" "$T/out"
	json_strict "$T/J.out"
	[ "$(rsum "$H_PID" read "$T/J.out")" -eq $((64 * KIB)) ]
	# JSON: the name with U+FFFD for the byte that is not UTF-8, and the
	# bytes exactly in comm_hex
	[ "$(LC_ALL=C grep -c $'[\x01-\x1f\x7f]' "$T/J.out")" -eq 0 ]
	hex=$(printf '%s' "$name" | od -An -tx1 | tr -d ' \n')
	jq -e -s --argjson p "$H_PID" --arg h "$hex" 'map(.rows[] | select(.pid == $p) |
		.comm == "bad\nname\u001b[31m\ufffd" and .comm_hex == $h) | length > 0 and all' \
		"$T/J.out"
}

@test "--check: runs here, --rcv-time unavailable and why; --rcv-time: exit 1, one line" {
	run --separate-stderr timeout 10 "$BUILD/tcprcv" --check
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "tcprcv can run on this system" ]
	for ev in tcp_probe tcp_rcv_space_adjust inet_sock_set_state tcp_retransmit_skb tcp_destroy_sock; do
		[[ "$output" =~ probe\ $ev\ +ok\ +raw\ tracepoint ]]
	done
	[[ "$output" =~ socket\ layout\ +ok\ +from\ kernel\ BTF ]]
	row=$(grep -E '^--rcv-time ' <<<"$output")
	echo "$row"
	[[ "$row" =~ ^--rcv-time\ +fallback\ +unavailable ]]
	[[ "$row" == *fentry*refused* ]]
	[[ "$row" == *"no kprobes"* ]]

	run --separate-stderr timeout 10 "$BUILD/tcprcv" --rcv-time
	echo "$stderr"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "${stderr_lines[0]}" == "tcprcv: "*fentry*kprobes* ]]
}

@test "usage errors: one line on stderr, nothing on stdout, exit 2" {
	usage_errors tcprcv <<'EOF_CASES'
-L --by port|--by, -s and -r go with the table
-L -s read|--by, -s and -r go with the table
-P|-P goes with -L
-4 -6|-4 and -6 exclude each other
--lport 0|invalid port '0' for --lport
--lport 70000|invalid port '70000' for --lport
--rport 0|invalid port '0' for --rport
--by foo|invalid --by key 'foo'
-s foo|invalid sort field 'foo'
-r 0|invalid row count '0'
--rcv-time -p 1|no filter applies
--rcv-time -4|no filter applies
-m|-m and --ns go with -L and --rcv-time
--ns|-m and --ns go with -L and --rcv-time
-L --rcv-time|different reports
--bogus|unknown option '--bogus'
EOF_CASES
}

@test "nothing of tcprcv stays loaded after SIGINT, idle or in the middle of a transfer" {
	net_lo
	start_tool tcprcv -j 0.2
	bpf_ids_of "$TOOL_JOB" "$T/ids"
	cat "$T/ids"
	# its own programs, every one of them
	progs=$(for p in $(awk '$1 == "prog_id" { print $2 }' "$T/ids"); do
		bpftool -j prog show id "$p" | jq -r .name; done | sort | tr '\n' ' ')
	echo "programs: $progs"
	[ "$progs" = "$(tr '|' '\n' <<<"$TCPRCV_PROGS" | sort | tr '\n' ' ')" ]
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	bpf_ids_gone "$T/ids"

	# the receiver's row, or -L's samples: the transfer is under way
	for mode in "" -L; do
		rm -f "$T/go" "$T/hold"
		serve R "$SRV" 127.0.0.1
		send S "$SRV" 127.0.0.1 "$R_PORT" $((64 * 1024 * KIB)) --sleep-us 100
		start_tool tcprcv -j -p "$R_PID" $mode 0.2
		bpf_ids_of "$TOOL_JOB" "$T/ids"
		[ "$(grep -c '^prog_id' "$T/ids")" -ge 6 ]
		go
		wait_for "$T/out" "\"pid\":$R_PID,|\"count\":[1-9]"
		stop_tool INT
		kill -0 "$S_JOB"		# still sending
		[ "$TOOL_STATUS" -eq 0 ]
		bpf_ids_gone "$T/ids"
		kill -KILL "$S_JOB" "$R_JOB"
	done
}

@test "an idle interval: the header and a zero summary; JSON: no rows" {
	# port 1 (tcpmux): nothing here uses it
	run --separate-stderr timeout 10 "$BUILD/tcprcv" --lport 1 0.1 3
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -cE '^PID +COMM +SEGS +RX_BYTES +READ_BYTES +RETRANS +DROPS$' <<<"$output")" -eq 3 ]
	[ "$(grep -cx '0 bytes received, 0 read, in 0 processes' <<<"$output")" -eq 3 ]
	[ "$(grep -cvE '^(Counts in the last 0\.[0-9]{2} s .*|PID .*|0 bytes received, 0 read, in 0 processes|)$' <<<"$output")" -eq 0 ]

	run --separate-stderr timeout 10 "$BUILD/tcprcv" -j --lport 1 0.1 3
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	jq -e -s 'length == 3 and all(.rows == [] and .keys == 0 and .bytes == 0 and .read == 0 and
		.segs == 0 and .lost == 0 and .seconds > 0.05 and .seconds < 5)' <<<"$output"

	# --by port and --by flow name their rows in the summary
	run --separate-stderr timeout 10 "$BUILD/tcprcv" --by port --lport 1 --duration 0.1
	[ "$status" -eq 0 ]
	grep -qE '^PID +COMM +LPORT +SEGS ' <<<"$output"
	grep -qx '0 bytes received, 0 read, in 0 ports' <<<"$output"
	run --separate-stderr timeout 10 "$BUILD/tcprcv" --by flow --lport 1 --duration 0.1
	[ "$status" -eq 0 ]
	grep -qE ' DROPS LADDR:LPORT RADDR:RPORT$' <<<"$output"
	grep -qx '0 bytes received, 0 read, in 0 flows' <<<"$output"
}


# One rule for every table: JSON carries every row unless -r is given (a
# script's sum of the rows is the table's total); text shows the top 20.
# Serial: other tests' closed sockets share the per-interval bound
# (TCPRCV_MAX_KEYS) and would be counted lost out of this table.
# bats test_tags=serial
@test "50 connections: JSON has every row and they add up to the totals; -r cuts; text the top 20" {
	net_lo
	N=50 EACH=$((16 * KIB))
	serve R "$SRV" 127.0.0.1 --comm tr_rows --conns $N
	for i in $(seq $N); do
		send "S$i" "$CLI" 127.0.0.1 "$R_PORT" "$EACH"
	done
	start_tool tcprcv -j --by flow --lport "$R_PORT" 60
	start_more tcprcv CUT -j --by flow --lport "$R_PORT" -r 5 60
	start_more tcprcv TEXT --by flow --lport "$R_PORT" 60
	go
	served R $((N * EACH))
	for i in $(seq $N); do sent "S$i"; done
	closed "$SRV" "$R_PORT"
	stop_tool INT
	stop_more CUT
	stop_more TEXT
	# a flow is a row per owner: one whose bytes came before its accept
	# (the server accepts one connection after another) has a row of
	# an owner not known yet too, so N rows or more
	jq -c '.rows |= length' "$T/out"
	[ "$(jq -s length "$T/out")" -eq 1 ]
	jout '.keys >= $n and (.rows | length) == .keys and .bytes == $b and .read == $b and
		(.rows | map(.bytes) | add) == .bytes and (.rows | map(.read) | add) == .read and
		(.rows | map(.segs) | add) == .segs' --argjson n $N --argjson b $((N * EACH))
	jq -e -s --argjson n $N --argjson b $((N * EACH)) \
		'length == 1 and all(.keys >= $n and .bytes == $b and (.rows | length) == 5)' "$T/CUT.out"
	cat "$T/TEXT.out"
	[ "$(grep -cE ' 127\.0\.0\.1:[0-9]+ 127\.0\.0\.1:[0-9]+$' "$T/TEXT.out")" -eq 20 ]
	grep -qE "^$((N * EACH)) bytes received, $((N * EACH)) read, in [0-9]+ flows \(top rows shown\)\$" "$T/TEXT.out"
}

# Out of memory in a report (the rows of many live sockets, with no room
# left to grow): the run ends with one line and exit 1, and the runtime
# cleans up as after any failure: no stale --textfile, nothing loaded.
# Serial: its 2,000 sockets would fill other tests' per-interval bounds.
# bats test_tags=serial
@test "out of memory in a report: one line, exit 1, the --textfile removed, nothing left loaded" {
	"$BUILD/tcprcv" --version | grep -q static || skip "a dynamic build (make STATIC=0 or SANITIZE=1)"
	net_lo
	start_tool tcprcv -j --textfile "$T/t.prom" 0.1
	retry test -s "$T/t.prom"
	bpf_ids_of "$TOOL_JOB" "$T/ids"
	# No more memory than it has now: brk and private mappings both count.
	prlimit --pid "$TOOL_JOB" --data="$(awk '$1 == "VmData:" { print $2 * 1024 }' "/proc/$TOOL_JOB/status")"
	touch "$T/go"	# 1,000 live connections at once (tests/workloads/keysload.c)
	ip netns exec "$SRV" "$BUILD/tests/keysload" conns 1000 --go "$T/go" --hold "$T/hold" \
		> "$T/socks.out" 2>&1 &
	JOBS+=($!)
	tool_wait
	finish
	cat "$T/err"
	[ "$TOOL_STATUS" -eq 1 ]
	grep -qx 'tcprcv: cannot read the sockets: Cannot allocate memory' "$T/err"
	[ ! -e "$T/t.prom" ]
	bpf_ids_gone "$T/ids"
}
