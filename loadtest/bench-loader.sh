#!/usr/bin/env bash
# bench-loader.sh — what our loader costs against wrk2 and oha at fixed
# rates, against one kvserver, in one run: loader CPU per request, as
# ratios to wrk2's, and our precision (corrected p50, send lag p99).
#
# Usage: loadtest/bench-loader.sh     (ROUNDS=3 DURATION=10s, ~8 minutes)
#
# It builds kvserver and loadtest from this tree, starts kvserver -pool
# direct on SERVER_CPU (taskset), stores KEYS ids of VALUE_SIZE bytes, and
# then, ROUNDS times, for each rate R of RATES, runs each loader once on
# LOADER_CPU (taskset), in an order that rotates from round to round so
# that a drift of the machine favours none:
#   wrk2    wrk2 -t1 -cCONNS -R R (GET of one id; its corrected latencies)
#   oha     oha -c CONNS -q R (GET of one id)
#   ours    loadtest attack -rate R -conns CONNS (GETs of random ids, its
#           defaults otherwise: -loops 0, -quantum, results.bin written)
#   before  the same, by loadtest built from git rev BEFORE (if set: the
#           tree before a change, measured in the same run)
# Loader CPU is user + sys of the whole process from /usr/bin/time (start-
# up and the files each writes included), divided by the requests it sent.
# Ratios to wrk2 are taken round by round (same minute, same noise), then
# the median and the spread over the rounds (min..max; with ROUNDS >= 6
# also the median's 95 % interval, internal/ratio: `loadtest ratio`).
#
# Targets: ours <= 1.0 x wrk2's CPU per request at 5,000 req/s, <= 0.8 x
# at 20,000 and 40,000; corrected p50 <= 0.25 ms at 5,000 and 20,000;
# send lag p99 < 1 ms.
#
# Measure on a quiet machine: run it under `flock -x` of whatever lock the
# machine's other jobs take, with nothing else busy on either CPU.
#
# Environment: ROUNDS=3 DURATION=10s RATES="5000 20000 40000" CONNS=64
#   KEYS=100000 VALUE_SIZE=100 SERVER_CPU=0 LOADER_CPU=1 PORT=19296
#   WRK2=bin/wrk2 OHA=bin/oha/bin/oha BEFORE= (a git rev) OUT=<tmp>
# Needs wrk2 (not packaged: build it from github.com/giltene/wrk2 and set
# WRK2), oha (make tools-oha), jq, GNU time, taskset, go.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
RATES=${RATES:-5000 20000 40000}
CONNS=${CONNS:-64}
KEYS=${KEYS:-100000}
VALUE_SIZE=${VALUE_SIZE:-100}
SERVER_CPU=${SERVER_CPU:-0}
LOADER_CPU=${LOADER_CPU:-1}
PORT=${PORT:-19296}
BEFORE=${BEFORE:-}
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/loadtest/lib.sh"
WRK2=${WRK2:-$root/bin/wrk2}
OHA=${OHA:-$root/bin/oha/bin/oha}
OUT=${OUT:-$(mktemp -d -t bench-loader.XXXXXX)}
target=http://127.0.0.1:$PORT

for tool in jq /usr/bin/time taskset go "$OHA"; do
	command -v "$tool" >/dev/null || { echo "bench-loader: $tool is missing (jq: apt-get install -y jq; time: apt-get install -y time; taskset: apt-get install -y util-linux; oha: make tools-oha)" >&2; exit 1; }
done
[[ $("$WRK2" -v 2>&1 || true) == *wrk* ]] || {
	echo "bench-loader: no wrk2 at $WRK2: it is not packaged; build it from github.com/giltene/wrk2 (make; needs libssl-dev) and set WRK2=<its wrk binary>" >&2
	exit 1
}

bin=$OUT/loadtest
(cd "$root" && go build -o "$bin" ./cmd/loadtest && go build -o "$OUT/kvserver" ./cmd/kvserver)
loaders=(wrk2 oha ours)
if [[ -n $BEFORE ]]; then
	mkdir -p "$OUT/before-src"
	git -C "$root" archive "$BEFORE" | tar -x -C "$OUT/before-src"
	(cd "$OUT/before-src" && go build -o "$OUT/loadtest-before" ./cmd/loadtest)
	loaders+=(before)
fi

taskset -c "$SERVER_CPU" "$OUT/kvserver" -addr "127.0.0.1:$PORT" -data "$OUT/kvdata" -pool direct >"$OUT/kvserver.log" 2>&1 &
kv_pid=$!
trap 'kill $kv_pid 2>/dev/null || true' EXIT
wait_ready "$bin" "$target" "$kv_pid" "$OUT/kvserver.log"
echo "filling $KEYS ids x $VALUE_SIZE B into kvserver -pool direct ..." >&2
taskset -c "$LOADER_CPU" "$bin" fill -target "$target" -keys "$KEYS" -value-size "$VALUE_SIZE" -q -out "$OUT/fill" >"$OUT/fill.txt" 2>&1

# run_wrk2 ROUND RATE
run_wrk2() {
	local name=wrk2_$2 log=$OUT/wrk2-$2-$1.txt
	/usr/bin/time -f "cpu %U %S" -o "$log.time" taskset -c "$LOADER_CPU" \
		"$WRK2" -t1 -c"$CONNS" -d"$DURATION" -R"$2" --latency "$target/v0/entity?id=1" >"$log"
	local reqs
	reqs=$(awk '/requests in/ {print $1}' "$log")
	record "${name}_rps" "$(awk '/^Requests\/sec:/ {print $2}' "$log")"
	record "${name}_cpu_us" "$(cpu_us "$log.time" "$reqs")"
	record "${name}_p50_us" "$(to_us "$(awk '$1 == "50.000%" {print $2; exit}' "$log")")"
}

# run_oha ROUND RATE
run_oha() {
	local name=oha_$2 json=$OUT/oha-$2-$1.json
	/usr/bin/time -f "cpu %U %S" -o "$json.time" taskset -c "$LOADER_CPU" \
		"$OHA" --no-tui --output-format json -z "$DURATION" -c "$CONNS" -q "$2" "$target/v0/entity?id=1" >"$json"
	local reqs
	reqs=$(jq '[.statusCodeDistribution[]] | add' "$json")
	record "${name}_rps" "$(jq .summary.requestsPerSec "$json")"
	record "${name}_cpu_us" "$(cpu_us "$json.time" "$reqs")"
	record "${name}_p50_us" "$(jq '.latencyPercentiles.p50 * 1e6' "$json")"
}

# run_ours NAME BINARY ROUND RATE: one loadtest attack at its defaults.
run_ours() {
	local name=$1_$4 dir=$OUT/$1-$4-$3
	/usr/bin/time -f "cpu %U %S" -o "$dir.time" taskset -c "$LOADER_CPU" \
		"$2" attack -target "$target" -rate "$4" -duration "$DURATION" -conns "$CONNS" -max-conns "$CONNS" \
		-keys "$KEYS" -value-size "$VALUE_SIZE" -q -out "$dir" >"$dir.txt" 2>&1
	local s=$dir/summary.json
	record "${name}_rps" "$(jq .achieved_rate "$s")"
	record "${name}_cpu_us" "$(cpu_us "$dir.time" "$(jq .sent "$s")")"
	record "${name}_own_cpu_us" "$(jq .loader_cpu_per_request_us "$s")"
	record "${name}_p50_us" "$(jq '.latency_corrected.percentiles_ms.p50 * 1000' "$s")"
	record "${name}_lag_p99_us" "$(jq '.send_lag.percentiles_ms.p99 * 1000' "$s")"
	record "${name}_loops" "$(jq .loops "$s")"
	record "${name}_quantum_us" "$(jq '.quantum_us // 0' "$s")"
}

: >"$OUT/measures"
for r in $(seq "$ROUNDS"); do
	for rate in $RATES; do
		echo "round $r/$ROUNDS, $rate req/s ..." >&2
		# Rotate the order: round r starts with loader r-1 (mod the count).
		for i in $(seq 0 $((${#loaders[@]} - 1))); do
			who=${loaders[$(((i + r - 1) % ${#loaders[@]}))]}
			case $who in
			wrk2) run_wrk2 "$r" "$rate" ;;
			oha) run_oha "$r" "$rate" ;;
			ours) run_ours ours "$bin" "$r" "$rate" ;;
			before) run_ours before "$OUT/loadtest-before" "$r" "$rate" ;;
			esac
		done
	done
done

# The 95 % interval of each ratio's median, where the rounds allow one.
intervals=
if ((ROUNDS >= 6)); then
	for rate in $RATES; do
		for who in "${loaders[@]:1}"; do
			iv=$(paste -d' ' <(awk -v k="wrk2_${rate}_cpu_us" '$1 == k {print $2}' "$OUT/measures") \
				<(awk -v k="${who}_${rate}_cpu_us" '$1 == k {print $2}' "$OUT/measures") | "$bin" ratio)
			intervals+="$who $rate $iv"$'\n'
		done
	done
fi

{
	echo "loader CPU per request against wrk2 -t1: kvserver -pool direct on CPU $SERVER_CPU, every loader on CPU $LOADER_CPU (taskset);"
	echo "$KEYS ids x $VALUE_SIZE B, GET, $CONNS connections, $DURATION x $ROUNDS rounds; $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%Y-%m-%dT%H:%MZ)"
	[[ -n $BEFORE ]] && echo "before: loadtest built from $BEFORE ($(git -C "$root" rev-parse --short "$BEFORE"))"
	stats_awk -v rates="$RATES" -v who="${loaders[*]:1}" -v label_width=50 '
	{ add($1, $2) }
	END {
		print "measure                                             median   (min .. max)"
		nr = split(rates, rs, " "); nw = split(who, ws, " ")
		for (i = 1; i <= nr; i++) {
			R = rs[i]
			print "-- fixed rate " R " req/s"
			stat("wrk2_" R "_rps", "wrk2: achieved req/s", "%10.0f")
			stat("wrk2_" R "_cpu_us", "wrk2: loader CPU us/request", "%10.2f")
			stat("wrk2_" R "_p50_us", "wrk2: corrected p50 us", "%10.1f")
			for (j = 1; j <= nw; j++) {
				W = ws[j]; k = W "_" R
				target = W == "ours" ? (R <= 5000 ? " (target <= 1.0)" : " (target <= 0.8)") : ""
				ratio("r_" k, k "_cpu_us", "wrk2_" R "_cpu_us")
				stat(k "_rps", W ": achieved req/s", "%10.0f")
				stat(k "_cpu_us", W ": loader CPU us/request", "%10.2f")
				stat("r_" k, "  ratio " W "/wrk2" target, "%10.3f")
				if (W != "oha") stat(k "_own_cpu_us", "  of which the run itself (its getrusage)", "%10.2f")
				if (W == "oha") {
					stat(k "_p50_us", W ": p50 us (from the send)", "%10.1f")
				} else {
					stat(k "_p50_us", W ": corrected p50 us" (R <= 20000 ? " (target <= 250)" : ""), "%10.1f")
					stat(k "_lag_p99_us", W ": send lag p99 us (target < 1000)", "%10.1f")
					stat(k "_loops", W ": loops", "%10.0f")
					if (W == "ours") stat(k "_quantum_us", W ": quantum us at the end", "%10.0f")
				}
			}
		}
	}' "$OUT/measures"
	if [[ -n $intervals ]]; then
		echo "-- CPU per request, ratio to wrk2: median [95 % interval] over $ROUNDS paired rounds"
		printf '%s' "$intervals" | awk '{printf "  %-8s %6s req/s  %s\n", $1, $2, substr($0, index($0, $3))}'
	fi
} | tee "$OUT/table.txt"
echo "raw outputs in $OUT" >&2
