#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# tcprcv against programs nobody here wrote, from the side the user is on:
# curl and python's urllib against `python3 -m http.server`, socat both
# ways, `nc -N` (request, half-close, read). Each on the loopback of a
# network namespace of the test's own; tcprcv runs in the root namespace,
# so a test picks its rows by the program's PID.
#
# Ground truth from outside tcprcv: the programs' own byte counts (curl's
# -w, the files socat and nc wrote), strace's sums of the bytes each
# read(2)/recvfrom(2) returned on a TCP socket, and the kernel's own
# per-socket counters as `ss -ti` shows them, and bpftrace's sums of the
# kernel's own sock_recv_length tracepoint.

load helpers
bats_require_minimum_version 1.5.0

ALL_ROWS=8192	# -r: the largest, so that no other traffic pushes ours out
FILE_BYTES=200000
# the calls that read a socket; strace -yy names each fd ("3<TCP:[...]>")
READS=read,readv,recvfrom,recvmsg

setup() {
	common_setup
	NS=tcprcvt-$BATS_TEST_NUMBER-$$
	ip netns add "$NS"
	ip -n "$NS" link set lo up
}

teardown() {
	common_teardown
	ip netns del "$NS" 2>/dev/null || true
}

# in_ns CMD...: CMD in the test's namespace. A background job is started
# with ip netns exec itself, which execs CMD: its $! is CMD's own PID.
in_ns() { ip netns exec "$NS" "$@"; }

# tcp_reads PREFIX: the bytes that strace -ff -o PREFIX saw read from TCP
# sockets, every thread.
tcp_reads() {
	cat "$1".* | awk '/^(read|readv|recvfrom|recvmsg)\([0-9]+<TCP(v6)?:\[/ &&
		match($0, /= [0-9]+$/) { n += substr($0, RSTART + 2) } END { print n + 0 }'
}

# http_serve: python3 -m http.server on 127.0.0.1 (a port of the kernel's
# choosing), serving $T/www/file of FILE_BYTES, under strace; sets
# HTTP_PID (python's own PID) and HTTP_PORT.
http_serve() {
	mkdir -p "$T/www"
	head -c "$FILE_BYTES" /dev/urandom > "$T/www/file"
	ip netns exec "$NS" strace -ff -yy -e trace=$READS -o "$T/srv.trace" python3 -u -c '
import os, runpy, sys
print("pid", os.getpid(), flush=True)
sys.argv = ["http.server", "--bind", "127.0.0.1", "--directory", sys.argv[1], "0"]
runpy.run_module("http.server", run_name="__main__")' "$T/www" > "$T/http.out" 2>&1 &
	JOBS+=($!)
	wait_for "$T/http.out" '^Serving HTTP on 127\.0\.0\.1 port [0-9]+'
	HTTP_PID=$(sed -nE 's/^pid ([0-9]+)$/\1/p' "$T/http.out")
	HTTP_PORT=$(sed -nE 's/^Serving HTTP on 127\.0\.0\.1 port ([0-9]+).*/\1/p' "$T/http.out")
}

# settled: no connection in the namespace but listeners and TIME-WAIT
# (every connection's socket has been destroyed: its counts are final).
settled() {
	retry quiet_ns || { in_ns ss -tan >&2; return 1; }
}

quiet_ns() { [ -z "$(in_ns ss -tanH | awk '$1 != "LISTEN" && $1 != "TIME-WAIT"')" ]; }

# listening PORT: until something listens on PORT in the namespace.
listening() { retry has_listener "$1"; }
has_listener() { [ -n "$(in_ns ss -ltnH "( sport = :$1 )")" ]; }

size_is() { [ "$(stat -c %s "$1")" -eq "$2" ]; }

# next_report [FILE]: until FILE (default $T/out) has one more line.
next_report() { wait_lines "${1:-$T/out}" $(($(wc -l < "${1:-$T/out}") + 1)); }

# rsum PID FIELD [FILE]: FIELD of PID's rows, added over every report.
rsum() {
	jq -s --argjson p "$1" "map(.rows[] | select(.pid == \$p) | .$2) | add // 0" "${3:-$T/out}"
}

# start_tools: tcprcv with 0.2 s reports, and a second (END) with one
# report, at its end. A server's bytes that come before its accept(2)
# returns are an unknown owner's in a report in between (tcprcv names a
# socket's owner at accept): END's one report has them all the server's.
start_tools() {
	start_tool tcprcv -j -r $ALL_ROWS 0.2
	start_more tcprcv END -j -r $ALL_ROWS
}

# finish_tool: one report after everything closed, then SIGINT (END too,
# if it runs).
finish_tool() {
	settled
	next_report
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	[ -z "${END_TOOL:-}" ] || stop_more END
}

# rx_read_are PID BYTES [FILE]: PID's rows received and read BYTES,
# exactly.
rx_read_are() {
	local f=${3:-$T/out}
	echo "pid $1 in ${f##*/}: bytes $(rsum "$1" bytes "$f"), read $(rsum "$1" read "$f"), segs $(rsum "$1" segs "$f"); expected $2"
	[ "$(rsum "$1" read "$f")" -eq "$2" ]
	[ "$(rsum "$1" bytes "$f")" -eq "$2" ]
}

# accepted_rx_read_are PID BYTES: an accepting server's rows (start_tools)
# received and read BYTES: exactly in END's report; in the reports at
# intervals it read them all and received at most them (those before its
# accept may be the unknown owner's).
accepted_rx_read_are() {
	rx_read_are "$1" "$2" "$T/END.out"
	echo "pid $1 in out: bytes $(rsum "$1" bytes), read $(rsum "$1" read); expected $2"
	[ "$(rsum "$1" read)" -eq "$2" ]
	[ "$(rsum "$1" bytes)" -le "$2" ]
}

@test "curl GET from python3 -m http.server: both ends' rows as curl and strace count them" {
	http_serve
	start_tools
	ip netns exec "$NS" curl -s -o "$T/got" -w '%{size_download} %{size_header} %{size_request}\n' \
		"http://127.0.0.1:$HTTP_PORT/file" > "$T/curl.out" &
	CURL_PID=$!
	wait "$CURL_PID"
	read -r body header request < "$T/curl.out"
	echo "curl: body $body, header $header, request $request; server read $(tcp_reads "$T/srv.trace")"
	[ "$body" -eq "$FILE_BYTES" ]
	finish_tool
	# the client: the response, header and body, as curl counted it
	rx_read_are "$CURL_PID" $((body + header))
	[ "$(rsum "$CURL_PID" segs)" -gt 0 ]
	# the server: the request, as curl sent it and as strace saw it read
	[ "$(tcp_reads "$T/srv.trace")" -eq "$request" ]
	accepted_rx_read_are "$HTTP_PID" "$request"
}

@test "python3 urllib GET from python3 -m http.server: both ends' rows as strace counts their reads" {
	http_serve
	start_tools
	ip netns exec "$NS" strace -ff -yy -e trace=$READS -o "$T/cli.trace" python3 -u -c '
import os, sys, urllib.request
print("pid", os.getpid(), flush=True)
print("body", len(urllib.request.urlopen(sys.argv[1]).read()), flush=True)' \
		"http://127.0.0.1:$HTTP_PORT/file" > "$T/py.out" 2>&1 &
	wait $!
	cat "$T/py.out"
	PY_PID=$(sed -nE 's/^pid ([0-9]+)$/\1/p' "$T/py.out")
	grep -qx "body $FILE_BYTES" "$T/py.out"
	finish_tool
	got=$(tcp_reads "$T/cli.trace")
	echo "strace: the client read $got, the server $(tcp_reads "$T/srv.trace")"
	[ "$got" -gt "$FILE_BYTES" ]	# the body and the header
	rx_read_are "$PY_PID" "$got"
	accepted_rx_read_are "$HTTP_PID" "$(tcp_reads "$T/srv.trace")"
	[ "$(tcp_reads "$T/srv.trace")" -gt 0 ]
}

@test "curl and urllib against python3 -m http.server: each process's bytes read as bpftrace sums sock_recv_length" {
	command -v bpftrace >/dev/null || skip "no bpftrace"
	bpftrace -l 'tracepoint:sock:sock_recv_length' | grep -q . || skip "no sock:sock_recv_length tracepoint"
	http_serve
	# every TCP recvmsg's length, per process, MSG_PEEK (2) aside
	bpftrace_start 'tracepoint:sock:sock_recv_length /args->protocol == 6 && args->ret > 0 && (args->flags & 2) == 0/ { @[pid] = sum(args->ret); }'
	start_tool tcprcv -j -r $ALL_ROWS 0.2
	ip netns exec "$NS" curl -s -o "$T/got" "http://127.0.0.1:$HTTP_PORT/file" &
	CURL_PID=$!
	wait "$CURL_PID"
	ip netns exec "$NS" python3 -u -c '
import os, sys, urllib.request
print("pid", os.getpid(), flush=True)
print("body", len(urllib.request.urlopen(sys.argv[1]).read()), flush=True)' \
		"http://127.0.0.1:$HTTP_PORT/file" > "$T/py.out" 2>&1 &
	wait $!
	PY_PID=$(sed -nE 's/^pid ([0-9]+)$/\1/p' "$T/py.out")
	grep -qx "body $FILE_BYTES" "$T/py.out"
	finish_tool
	bpftrace_stop > "$T/bt.sum"
	cat "$T/bt.sum"
	for pid in "$CURL_PID" "$PY_PID" "$HTTP_PID"; do
		bt=$(awk -v p="$pid" '$1 == p { print $2 }' "$T/bt.sum")
		echo "pid $pid: tcprcv read $(rsum "$pid" read), bpftrace ${bt:-none}"
		[ "${bt:-0}" -gt 0 ]
		[ "$(rsum "$pid" read)" -eq "$bt" ]
	done
	# the clients read the body and a header each; the server, two requests
	[ "$(rsum "$CURL_PID" read)" -gt "$FILE_BYTES" ] && [ "$(rsum "$PY_PID" read)" -gt "$FILE_BYTES" ]
}

@test "socat, 1,000,000 bytes each way: the receiver's rows, client or server, as its file says" {
	B=1000000
	head -c $B /dev/urandom > "$T/src"
	start_tools
	# the client sends, the server receives
	ip netns exec "$NS" socat -u TCP-LISTEN:9000,bind=127.0.0.1 CREATE:"$T/rx1" &
	SRV1=$!
	JOBS+=($SRV1)
	listening 9000
	ip netns exec "$NS" socat -u OPEN:"$T/src" TCP:127.0.0.1:9000 &
	CLI1=$!
	wait "$CLI1"
	wait "$SRV1"
	# the server sends, the client receives
	ip netns exec "$NS" socat -u OPEN:"$T/src" TCP-LISTEN:9001,bind=127.0.0.1 &
	SRV2=$!
	JOBS+=($SRV2)
	listening 9001
	ip netns exec "$NS" socat -u TCP:127.0.0.1:9001 CREATE:"$T/rx2" &
	CLI2=$!
	wait "$CLI2"
	wait "$SRV2"
	finish_tool
	[ "$(stat -c %s "$T/rx1")" -eq $B ] && [ "$(stat -c %s "$T/rx2")" -eq $B ]
	cmp "$T/src" "$T/rx2"
	accepted_rx_read_are "$SRV1" $B
	rx_read_are "$CLI2" $B
	rx_read_are "$CLI1" 0
	rx_read_are "$SRV2" 0
}

@test "nc -N: a request, a half-close, then 1 MiB read in FIN_WAIT2: bytes, segments and -L see it" {
	B=1048576
	printf 'GET /big\r\n' > "$T/req"
	start_tools
	start_more tcprcv LAT -j -L --rport 9002
	# socat's child reads the request to its end (the client's FIN),
	# answers, and holds the connection open until $T/hold
	ip netns exec "$NS" socat TCP-LISTEN:9002,bind=127.0.0.1 \
		SYSTEM:"cat > '$T/srv.req'; head -c $B /dev/zero; while [ ! -e '$T/hold' ]; do sleep 0.01; done" &
	SRV=$!
	JOBS+=($SRV)
	listening 9002
	ip netns exec "$NS" nc -N 127.0.0.1 9002 < "$T/req" > "$T/nc.out" &
	NC=$!
	JOBS+=($NC)
	retry size_is "$T/nc.out" $B
	# all read, the connection held: the kernel's count of the data
	# segments nc's socket received
	line=$(in_ns ss -tinH state fin-wait-2 "( dport = :9002 )")
	echo "ss: $line"
	segs=$(grep -oE 'data_segs_in:[0-9]+' <<<"$line" | cut -d: -f2)
	[ "$segs" -gt 0 ]
	next_report
	echo "tcprcv: segs $(rsum "$NC" segs), bytes $(rsum "$NC" bytes), read $(rsum "$NC" read)"
	[ "$(rsum "$NC" segs)" -eq "$segs" ]
	rx_read_are "$NC" $B
	finish
	wait "$NC"
	wait "$SRV"
	finish_tool
	stop_more LAT
	# the server's FIN is no byte
	rx_read_are "$NC" $B
	[ "$(rsum "$NC" segs)" -eq "$segs" ]
	# the server's socat read the request
	[ "$(stat -c %s "$T/srv.req")" -eq "$(stat -c %s "$T/req")" ]
	accepted_rx_read_are "$SRV" "$(stat -c %s "$T/req")"
	# -L: a sample for the data that arrived after the half-close
	jq -c '{count, p50, max}' "$T/LAT.out"
	[ "$(jq -s 'map(.count) | add' "$T/LAT.out")" -gt 0 ]
}

# curl_get PORT OUT: curl fetches the file in the namespace, writing
# "local_port body header" to OUT; sets CURL_PID.
curl_get() {
	ip netns exec "$NS" curl -s -o "$T/got" -w '%{local_port} %{size_download} %{size_header}\n' \
		"http://127.0.0.1:$1/file" > "$2" &
	CURL_PID=$!
	wait "$CURL_PID"
}

@test "a connecting client's flow: the local port the kernel chose, as curl says; --lport keeps exactly it" {
	# connect() enters SYN_SENT before it chooses the port: the namespace
	# allows one port at a time, so the test knows it before curl runs
	http_serve
	in_ns sysctl -q -w net.ipv4.ip_local_port_range="40100 40100"
	start_tool tcprcv -j --by flow -r $ALL_ROWS 0.2
	curl_get "$HTTP_PORT" "$T/curl1.out"
	read -r lport body header < "$T/curl1.out"
	echo "curl: local port $lport, body $body, header $header"
	[ "$lport" -eq 40100 ]
	finish_tool
	jq -c "select(.rows | length > 0) | .rows[] | select(.pid == $CURL_PID)" "$T/out"
	jq -e -s --argjson p "$CURL_PID" --argjson r "$HTTP_PORT" \
		'[.[].rows[] | select(.pid == $p)] | length > 0 and all(.lport == 40100 and .rport == $r)' "$T/out"
	rx_read_are "$CURL_PID" $((body + header))

	# --lport of the port the next connect will choose: that connection only
	in_ns sysctl -q -w net.ipv4.ip_local_port_range="40102 40102"
	rm -f "$T/out"
	start_tool tcprcv -j --lport 40102 -r $ALL_ROWS 0.2
	curl_get "$HTTP_PORT" "$T/curl2.out"
	read -r lport body header < "$T/curl2.out"
	[ "$lport" -eq 40102 ]
	finish_tool
	rx_read_are "$CURL_PID" $((body + header))
	rx_read_are "$HTTP_PID" 0	# the server's side of it has the server's port
}

@test "a splice(2) reader: read as many bytes as it spliced, the FIN not among them" {
	B=100000
	head -c $B /dev/urandom > "$T/src"
	start_tools
	ip netns exec "$NS" python3 -c '
import os, socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 9002)); s.listen(1)
print("pid", os.getpid(), flush=True)
c, _ = s.accept(); r, w = os.pipe(); n = 0
with open(os.devnull, "wb") as null:
    while True:
        k = os.splice(c.fileno(), w, 65536)
        if not k:
            break
        n += k
        while k:
            k -= os.splice(r, null.fileno(), k)
c.close()
print("spliced", n, flush=True)' > "$T/splice.out" 2>&1 &
	JOBS+=($!)
	wait_for "$T/splice.out" '^pid [0-9]+'
	SPL_PID=$(sed -nE 's/^pid ([0-9]+)$/\1/p' "$T/splice.out")
	listening 9002
	ip netns exec "$NS" socat -u OPEN:"$T/src" TCP:127.0.0.1:9002
	wait_for "$T/splice.out" '^spliced '
	grep -qx "spliced $B" "$T/splice.out"
	finish_tool
	accepted_rx_read_are "$SPL_PID" $B
}
