#!/usr/bin/env bash
# wire-check.sh — do our fixed-rate loader and an independent one (oha)
# report the latency the server actually gave? The referee is the wire:
# tcpdump on loopback sees when each request's first byte went out and its
# answer's first byte came back (loadtest/wire.py), whichever loader sent it.
#
# Usage: loadtest/wire-check.sh      (make wire-check; ROUNDS=3 DURATION=10s)
#
# Two servers, `loadtest bare-server` on 127.0.0.1:PORT (answers at once)
# and one with -service-time $SERVICE_TIME on PORT+1 (an exponential sleep
# per request: p50 0.69×, p99 4.6× the mean). Against each, ROUNDS times,
# in rotating order, three loaders: `oha -q RATE -c 64`, `loadtest attack
# -rate RATE -conns 64` at its default -quantum ("fast") and the same at
# -quantum $FINE_QUANTUM ("fine": a wake-up per request), each under its
# own tcpdump. Per run it records what the loader reported (uncorrected:
# from its actual send, as oha without --latency-correction; for ours also
# corrected, from the intended send time, and the send lag between the
# two) and what the wire showed for that same traffic, and how evenly the
# loader spaced its sends (gap_cv: 0 even, 1 Poisson, >1 bursts;
# burst_pct: sent within 10 us of the previous request).
#
# Reading it: "reported - wire" is the loader's own overhead on a request;
# "corrected - wire" adds the wait between a request's intended time and
# its send: the quantum's batching, and the machine's timer wake-up
# latency, which the fine loader's send lag shows on its own (a wake-up
# per request, so every µs of it is the sleeper's lateness). "wire under
# oha / wire under fast" is how differently the server behaved under the
# two loaders' traffic. Two loaders can only agree on p50/p99 if both are
# small.
#
# Environment: PORT=19296 RATE=10000 DURATION=10s ROUNDS=3 SERVICE_TIME=1ms
#   FINE_QUANTUM=1us OHA=bin/oha/bin/oha OUT=<tmp>
# Needs tcpdump (root, for the capture), python3, jq, go, oha (make tools-oha).
set -euo pipefail

PORT=${PORT:-19296}
RATE=${RATE:-10000}
DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-3}
SERVICE_TIME=${SERVICE_TIME:-1ms}
FINE_QUANTUM=${FINE_QUANTUM:-1us}
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/loadtest/lib.sh"
OHA=${OHA:-$root/bin/oha/bin/oha}
OUT=${OUT:-$(mktemp -d -t wire-check.XXXXXX)}

for tool in tcpdump python3 jq go "$OHA"; do
	command -v "$tool" >/dev/null || { echo "wire-check: $tool is missing (tcpdump, jq: apt-get install -y tcpdump jq; oha: make tools-oha)" >&2; exit 1; }
done

bin=$OUT/loadtest
(cd "$root" && go build -o "$bin" ./cmd/loadtest)
bare= slow= capture=
trap 'kill $bare $slow $capture 2>/dev/null || true' EXIT
start_bare_server "$bin" "$OUT/bare.log" "127.0.0.1:$PORT"
bare=$BARE_PID
start_bare_server "$bin" "$OUT/slow.log" "127.0.0.1:$((PORT + 1))" -service-time "$SERVICE_TIME"
slow=$BARE_PID

# wait_capture ERRLOG: tcpdump captures (its filter set) once it has said
# "listening on" on stderr; waits for that, at most 10 s, else exits 1.
wait_capture() {
	for _ in $(seq 200); do
		grep -q 'listening on' "$1" && return 0
		kill -0 "$capture" 2>/dev/null || break
		sleep 0.05
	done
	echo "wire-check: tcpdump is not capturing; its output:" >&2
	cat "$1" >&2
	exit 1
}

# run LOADER SERVER ROUND: one loader run against one server, under tcpdump.
run() {
	local loader=$1 server=$2 round=$3 port=$PORT
	[ "$server" = slow ] && port=$((PORT + 1))
	local name=$loader-$server tag=$loader-$server-$round
	tcpdump -i lo -s 96 -B 65536 -w "$OUT/$tag.pcap" "tcp port $port" 2>"$OUT/$tag.tcpdump" &
	capture=$!
	wait_capture "$OUT/$tag.tcpdump"
	local p50 p99
	if [ "$loader" = oha ]; then
		"$OHA" --no-tui --output-format json -z "$DURATION" -c 64 -q "$RATE" "http://127.0.0.1:$port/v0/entity?id=1" >"$OUT/$tag.json"
		p50=$(jq '.latencyPercentiles.p50 * 1e6' "$OUT/$tag.json")
		p99=$(jq '.latencyPercentiles.p99 * 1e6' "$OUT/$tag.json")
	else
		local quantum=()
		[ "$loader" = fine ] && quantum=(-quantum "$FINE_QUANTUM")
		"$bin" attack -target "http://127.0.0.1:$port" -rate "$RATE" -duration "$DURATION" -conns 64 -max-conns 64 -loops 1 "${quantum[@]}" -q -out "$OUT/$tag" >"$OUT/$tag.txt" 2>&1
		local summary=$OUT/$tag/summary.json
		p50=$(jq '.latency_uncorrected.percentiles_ms.p50 * 1000' "$summary")
		p99=$(jq '.latency_uncorrected.percentiles_ms.p99 * 1000' "$summary")
		record "${name}_corr_p50" "$(jq '.latency_corrected.percentiles_ms.p50 * 1000' "$summary")"
		record "${name}_corr_p99" "$(jq '.latency_corrected.percentiles_ms.p99 * 1000' "$summary")"
		record "${name}_lag_p50" "$(jq '.send_lag.percentiles_ms.p50 * 1000' "$summary")"
		record "${name}_lag_p99" "$(jq '.send_lag.percentiles_ms.p99 * 1000' "$summary")"
		record "${name}_cpu_us" "$(jq '.loader_cpu_per_request_us' "$summary")"
	fi
	sleep 0.5
	kill -INT "$capture"; wait "$capture" || true; capture=
	record "${name}_p50" "$p50"; record "${name}_p99" "$p99"
	local k v
	for kv in $(python3 "$root/loadtest/wire.py" "$OUT/$tag.pcap" "$port"); do
		k=${kv%%=*} v=${kv#*=}
		record "${name}_$k" "$v"
	done
	rm -f "$OUT/$tag.pcap"
}

: >"$OUT/measures"
for r in $(seq "$ROUNDS"); do
	echo "round $r/$ROUNDS ..." >&2
	for server in bare slow; do
		case $((r % 3)) in # each loader first, second and last in turn
		1) order="oha fast fine" ;;
		2) order="fast fine oha" ;;
		0) order="fine oha fast" ;;
		esac
		for loader in $order; do run "$loader" "$server" "$r"; done
	done
done

# Median and spread of everything (lib.sh's stats_awk).
stats_awk -v rounds="$ROUNDS" -v rate="$RATE" -v service="$SERVICE_TIME" -v label_width=46 '
	{ add($1, $2) }
	END {
		print "measure                                        median   (min .. max) over " rounds " rounds, " rate " req/s, 64 connections"
		split("bare slow", servers, " ")
		for (s = 1; s <= 2; s++) {
			sv = servers[s]
			print "-- " (sv == "bare" ? "bare handler (answers at once)" : "service time: exponential, mean " service)
			split("fast fine oha", loaders, " ")
			for (l = 1; l <= 3; l++) {
				ld = loaders[l]; k = ld "-" sv
				stat(k "_gap_cv", ld ": send gaps, coefficient of variation", "%10.2f")
				stat(k "_burst_pct", ld ": % sent within 10 us of the previous", "%10.1f")
				for (p = 1; p <= 2; p++) {
					q = (p == 1 ? "p50" : "p99")
					diff(k "_over_" q, k "_" q, k "_wire_" q "_us")
					stat(k "_" q, ld ": " q " reported us", "%10.1f")
					stat(k "_wire_" q "_us", ld ": " q " on the wire us", "%10.1f")
					stat(k "_over_" q, ld ":   reported - wire us", "%10.1f")
					if (ld == "oha") continue
					diff(k "_corr_over_" q, k "_corr_" q, k "_wire_" q "_us")
					stat(k "_corr_" q, ld ": " q " corrected us", "%10.1f")
					stat(k "_corr_over_" q, ld ":   corrected - wire us", "%10.1f")
					stat(k "_lag_" q, ld ": " q " send lag us", "%10.1f")
				}
				if (ld != "oha") stat(k "_cpu_us", ld ": loader CPU us/request", "%10.1f")
			}
			for (p = 1; p <= 2; p++) {
				q = (p == 1 ? "p50" : "p99")
				ratio("r_" sv q, "fast-" sv "_" q, "oha-" sv "_" q)
				ratio("w_" sv q, "oha-" sv "_wire_" q "_us", "fast-" sv "_wire_" q "_us")
				stat("r_" sv q, q ": fast / oha, as reported", "%10.3f")
				stat("w_" sv q, q ": wire under oha / wire under fast", "%10.3f")
			}
		}
	}' "$OUT/measures" | tee "$OUT/table.txt"
echo "raw outputs in $OUT" >&2
