# SPDX-License-Identifier: GPL-2.0-only
# For tests/fleet.bats: node_exporter and Prometheus as a test's own
# processes, on free loopback ports, and queries of Prometheus' HTTP API.
# Every wait is bounded (WAIT_SECS, tests/helpers.bash) and polls.

SCRAPE_SECS=1

# free_port: a loopback TCP port no socket uses now (another may take it
# before the service binds it: start_service tries again then).
free_port() {
	local i p
	for ((i = 0; i < 100; i++)); do
		p=$((20000 + RANDOM % 40000))
		[ -z "$(ss -Htan "sport = :$p")" ] && { echo "$p"; return 0; }
	done
	return 1
}

# listening PID PORT: process PID itself listens on PORT.
listening() { ss -Htlnp "sport = :$2" | grep -q "pid=$1,"; }

# start_service NAME CMD [ARGS]: CMD with @PORT@ in its arguments replaced
# by a free port, until it listens there itself (a port taken meanwhile:
# another port, 5 tries); sets and exports NAME_PORT, its PID in
# $FLEET/NAME.pid, its output in $FLEET/NAME.log. Its stdio is not bats's
# (fd 3 closed), so that bats does not wait for it.
start_service() {
	local name=$1 try port pid i
	shift
	for ((try = 0; try < 5; try++)); do
		port=$(free_port) || return 1
		"${@//@PORT@/$port}" > "$FLEET/$name.log" 2>&1 3>&- &
		pid=$!
		echo "$pid" > "$FLEET/$name.pid"
		for ((i = SECONDS + WAIT_SECS + 1; SECONDS < i; )); do	# at least WAIT_SECS, whatever the load
			kill -0 "$pid" 2>/dev/null || break
			if listening "$pid" "$port"; then
				printf -v "${name}_PORT" %s "$port"
				export "${name}_PORT"
				return 0
			fi
			nap 0.01
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	echo "$name did not start listening; its log:" >&2
	cat "$FLEET/$name.log" >&2
	return 1
}

stop_service() {
	local pid
	pid=$(cat "$FLEET/$1.pid" 2>/dev/null) || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	WAIT_SECS=10 wait_exit "$pid" >/dev/null 2>&1 || kill -KILL "$pid" 2>/dev/null || true
}

# get URL: its body, or fails (each request bounded).
get() { curl -sf --max-time 5 "$1"; }

# ready URL: until it answers 200, at most WAIT_SECS.
ready() { retry get "$1" >/dev/null; }

prom_config() {
	cat <<EOF
global:
  scrape_interval: ${SCRAPE_SECS}s
  scrape_timeout: ${SCRAPE_SECS}s
  evaluation_interval: ${SCRAPE_SECS}s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$NODE_PORT']
  - job_name: hosts
    static_configs:
      - targets: ['127.0.0.1:$HOSTA_PORT', '127.0.0.1:$HOSTB_PORT']
EOF
}

# start_node NAME DIR: a node_exporter serving DIR's textfiles only.
start_node() {
	local port=${1}_PORT
	mkdir "$2"
	chmod 755 "$2"
	start_service "$1" prometheus-node-exporter --collector.disable-defaults \
		--collector.textfile --collector.textfile.directory "$2" \
		--web.listen-address "127.0.0.1:@PORT@"
	ready "http://127.0.0.1:${!port}/metrics"
}

# promql QUERY: the value of the instant query's one result; "" if it has
# none, or more than one.
promql() {
	curl -sf --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
		jq -r '.data.result | if length == 1 then .[0].value[1] else "" end'
}

# until_value QUERY VALUE: poll until QUERY's value is VALUE (exactly, as
# Prometheus prints it), at most WAIT_SECS; else fail, showing the last.
until_value() {
	local v end=$((SECONDS + WAIT_SECS))
	while ((SECONDS <= end)); do
		v=$(promql "$1") || v=
		[ "$v" = "$2" ] && return 0
		sleep 0.1
	done
	echo "$1 is '$v' after ${WAIT_SECS}s, expected $2" >&2
	return 1
}


# fleet_start: in a new temporary directory FLEET, node_exporter reading
# the textfile directory TEXTDIR (job "node"), two more standing for two
# other hosts, reading HOSTA_DIR and HOSTB_DIR (job "hosts"), and
# Prometheus scraping them every SCRAPE_SECS, until it has scraped them
# once; exports FLEET, TEXTDIR, HOSTA_DIR, HOSTB_DIR and the services'
# ports (NODE_PORT, HOSTA_PORT, HOSTB_PORT, PROM_PORT).
fleet_start() {
	FLEET=$(mktemp -d /tmp/tracetools-fleet.XXXXXX)
	TEXTDIR=$FLEET/textfile
	HOSTA_DIR=$FLEET/hostA
	HOSTB_DIR=$FLEET/hostB
	export FLEET TEXTDIR HOSTA_DIR HOSTB_DIR
	mkdir "$FLEET/tsdb"
	chmod 755 "$FLEET"
	start_node NODE "$TEXTDIR"
	start_node HOSTA "$HOSTA_DIR"
	start_node HOSTB "$HOSTB_DIR"
	prom_config > "$FLEET/prometheus.yml"
	start_service PROM prometheus --config.file "$FLEET/prometheus.yml" \
		--storage.tsdb.path "$FLEET/tsdb" --web.listen-address "127.0.0.1:@PORT@"
	ready "http://127.0.0.1:$PROM_PORT/-/ready"
	# Prometheus' first scrape comes up to one interval after it is ready.
	until_value 'up{job="node"}' 1
	until_value 'sum(up{job="hosts"})' 2
}

# fleet_stop: both stopped (SIGTERM, then SIGKILL), FLEET removed.
fleet_stop() {
	[ -n "${FLEET:-}" ] || return 0
	stop_service PROM
	stop_service NODE
	stop_service HOSTA
	stop_service HOSTB
	rm -rf "$FLEET"
}
