#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# tcprcv names a socket's owner by what it is called at its latest read:
# a wrapper that connects and then execs the reader is shown as the reader.
# (Apart from tcprcv.bats only to keep this change apart from another's.)

load helpers
bats_require_minimum_version 1.5.0

setup() { common_setup; }
teardown() { common_teardown; }

listening() { ss -Hltn "sport = :$1" | grep -q .; }

@test "tcprcv: a wrapper that connects, then execs the reader, is named by the reader (loopback, socat)" {
	command -v socat >/dev/null || skip "no socat"
	head -c 300000 /dev/urandom > "$T/data"
	port=$((20000 + ($$ + BATS_TEST_NUMBER * 7) % 20000))
	socat -u "OPEN:$T/data" "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr" &
	JOBS+=($!)
	retry listening "$port"
	cp /bin/bash "$T/tr5wrap"
	cp /bin/cat "$T/tr5cat"
	printf 'exec 3<>/dev/tcp/127.0.0.1/%s\nexec "%s" <&3 > "%s"\n' "$port" "$T/tr5cat" "$T/got" > "$T/wrap"
	start_tool tcprcv -j -r 8192 --rport "$port"
	"$T/tr5wrap" "$T/wrap" &
	W=$!
	wait_exit "$W"
	cmp "$T/data" "$T/got"
	stop_tool INT
	[ "$TOOL_STATUS" -eq 0 ]
	jq -c ".rows[]?" "$T/out"	# (read is item 1 of issue 17, not judged here)
	jq -e -s --argjson p "$W" '[.[].rows[]? | select(.pid == $p)] | length > 0 and
		all(.comm == "tr5cat") and (map(.bytes) | add) == 300000' "$T/out"
}
