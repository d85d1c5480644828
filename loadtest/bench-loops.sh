#!/usr/bin/env bash
# bench-loops.sh — one loader process of L event loops against L one-loop
# processes merged (one schedule split with -shard K/L -start-at, then
# `loadtest merge`) and, where installed, wrk2 -tL, side by side in one
# run against the bare handler: what -loops costs and whether it offers
# what separate processes would.
#
# ROUNDS times, per rate R in RATES (a fixed rate, open model), in an order
# that alternates between rounds:
#   loops   loadtest attack -loops L -rate R
#   procs   L x loadtest attack -loops 1 -shard K/L -rate R -start-at T,
#           merged: the same schedule from L processes
#   wrk2    wrk2 -tL -cCONNS -R R (if $WRK2 runs; wrk2 is not packaged
#           in Debian: build it from github.com/giltene/wrk2 and set WRK2)
# and once per round at OVER req/s (more than the server answers), loops
# and procs only: what each offers under backlog.
# It records each loader's achieved rate and its CPU per request (loadtest:
# getrusage over the run, summed over the processes; wrk2: /usr/bin/time),
# and prints the median and spread over the rounds of each, and the ratios
# the issue's targets name, taken round by round: loops/procs offered
# (>= 0.9 at OVER), loops/procs CPU per request (<= 1.1), loops/wrk2 CPU
# per request (<= 0.8).
#
# CPU sets: LOADER_CPUS (a list, e.g. 8-15) pins every loader (loadtest
# -cpus, wrk2 under taskset); SERVER_CPUS pins the bare handler (taskset).
# Unset: they share the machine's CPUs, and the table says so.
#
# Environment: L=2 RATES="20000 40000" OVER=400000 CONNS=64 DURATION=10s
#   ROUNDS=3 PORT=19297 WRK2=wrk2 LOADER_CPUS= SERVER_CPUS= OUT=<tmp>
# Needs jq, GNU time (/usr/bin/time), go, taskset where CPU sets are given.
set -euo pipefail

L=${L:-2}
RATES=${RATES:-20000 40000}
OVER=${OVER:-400000}
CONNS=${CONNS:-64}
DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-19297}
WRK2=${WRK2:-wrk2}
LOADER_CPUS=${LOADER_CPUS:-}
SERVER_CPUS=${SERVER_CPUS:-}
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/loadtest/lib.sh"
OUT=${OUT:-$(mktemp -d -t bench-loops.XXXXXX)}
target=http://127.0.0.1:$PORT

for tool in jq /usr/bin/time go; do
	command -v "$tool" >/dev/null || { echo "bench-loops: $tool is missing (jq: apt-get install -y jq; time: apt-get install -y time)" >&2; exit 1; }
done
have_wrk2=0
[[ $("$WRK2" -v 2>&1 || true) == *wrk* ]] && have_wrk2=1
((have_wrk2)) || echo "bench-loops: no wrk2 ($WRK2): its columns stay empty" >&2

bin=$OUT/loadtest
(cd "$root" && go build -o "$bin" ./cmd/loadtest)

taskset_for() { [[ -n $1 ]] && echo "taskset -c $1"; }
# shellcheck disable=SC2046 # taskset_for is a command prefix or nothing
$(taskset_for "$SERVER_CPUS") "$bin" bare-server -addr "127.0.0.1:$PORT" >"$OUT/bare.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
wait_ready "$bin" "$target" "$server" "$OUT/bare.log"

common=(-target "$target" -duration "$DURATION" -conns "$CONNS" -max-conns "$CONNS" -results=false -q)

# run_loops NAME ROUND RATE: one process of L loops.
run_loops() {
	local dir=$OUT/$1-$2 pin=()
	[[ -n $LOADER_CPUS ]] && pin=(-cpus "$LOADER_CPUS")
	"$bin" attack "${common[@]}" "${pin[@]}" -loops "$L" -rate "$3" -out "$dir" >"$dir.txt" 2>&1
	record "$1_rps" "$(jq .achieved_rate "$dir/summary.json")"
	record "$1_cpu_us" "$(jq .loader_cpu_per_request_us "$dir/summary.json")"
}

# nth_cpu LIST K: the K-th CPU (1-based, wrapping) of a cpu list.
nth_cpu() {
	awk -v list="$1" -v k="$2" 'BEGIN {
		n = split(list, items, ",")
		for (i = 1; i <= n; i++) {
			if (split(items[i], r, "-") == 2) { for (c = r[1]; c <= r[2]; c++) cpus[++m] = c }
			else cpus[++m] = items[i]
		}
		print cpus[(k - 1) % m + 1]
	}'
}

# run_procs NAME ROUND RATE: L one-loop processes on one schedule, merged,
# process K pinned to the K-th CPU of LOADER_CPUS (as loop K of one
# process would be). Each process's CPU is its own getrusage; summed over
# the processes and divided by the requests they sent together.
run_procs() {
	local name=$1 round=$2 rate=$3 at dirs=() pids=()
	at=$(date -u -d '+2 seconds' +%Y-%m-%dT%H:%M:%S.%NZ)
	for k in $(seq "$L"); do
		local dir=$OUT/$name-$round-shard$k pin=()
		dirs+=("$dir")
		[[ -n $LOADER_CPUS ]] && pin=(-cpus "$(nth_cpu "$LOADER_CPUS" "$k")")
		"$bin" attack "${common[@]}" "${pin[@]}" -loops 1 -shard "$k/$L" -start-at "$at" -rate "$rate" -out "$dir" >"$dir.txt" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	"$bin" merge "${dirs[@]}" -out "$OUT/$name-$round" >"$OUT/$name-$round.txt" 2>&1
	record "${name}_rps" "$(jq .achieved_rate "$OUT/$name-$round/summary.json")"
	record "${name}_cpu_us" "$(for d in "${dirs[@]}"; do jq -r '"\(.loader_cpu_user_s + .loader_cpu_sys_s) \(.sent)"' "$d/summary.json"; done |
		awk '{c += $1; n += $2} END {print c * 1e6 / n}')"
}

# run_wrk2 NAME ROUND RATE: wrk2 -tL at the same rate; CPU from /usr/bin/time.
run_wrk2 () {
	local log=$OUT/$1-$2.txt
	# shellcheck disable=SC2046
	/usr/bin/time -f "cpu %U %S" -o "$OUT/$1-$2.time" $(taskset_for "$LOADER_CPUS") \
		"$WRK2" -t"$L" -c"$CONNS" -d"$DURATION" -R"$3" "$target/v0/entity?id=1" >"$log"
	local reqs
	reqs=$(awk '/requests in/ {print $1}' "$log")
	record "$1_rps" "$(awk '/^Requests\/sec:/ {print $2}' "$log")"
	record "$1_cpu_us" "$(cpu_us "$OUT/$1-$2.time" "$reqs")"
}

: >"$OUT/measures"
for r in $(seq "$ROUNDS"); do
	for rate in $RATES; do
		echo "round $r/$ROUNDS, $rate req/s ..." >&2
		order=(loops procs wrk2)
		((r % 2)) || order=(wrk2 procs loops)
		for who in "${order[@]}"; do
			case $who in
			loops) run_loops "loops_$rate" "$r" "$rate" ;;
			procs) run_procs "procs_$rate" "$r" "$rate" ;;
			wrk2) ((have_wrk2)) && run_wrk2 "wrk2_$rate" "$r" "$rate" ;;
			esac
		done
	done
	echo "round $r/$ROUNDS, $OVER req/s (backlog) ..." >&2
	if ((r % 2)); then
		run_loops loops_over "$r" "$OVER"
		run_procs procs_over "$r" "$OVER"
	else
		run_procs procs_over "$r" "$OVER"
		run_loops loops_over "$r" "$OVER"
	fi
done

where="loader and bare handler share the machine's $(nproc) CPUs"
[[ -n $LOADER_CPUS ]] && where="loader on CPUs $LOADER_CPUS"
[[ -n $SERVER_CPUS ]] && where="$where, bare handler on CPUs $SERVER_CPUS"
{
	echo "-loops $L against $L one-loop processes merged and wrk2 -t$L; $CONNS connections; $DURATION x $ROUNDS rounds; $where"
	echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%Y-%m-%d)"
	stats_awk -v rates="$RATES" -v over="$OVER" -v label_width=52 '
	{ add($1, $2) }
	END {
		print "measure                                              median   (min .. max)"
		nr = split(rates, rs, " ")
		for (i = 1; i <= nr; i++) {
			R = rs[i]
			ratio("c_lp_" R, "loops_" R "_cpu_us", "procs_" R "_cpu_us")
			print "-- fixed rate " R " req/s"
			stat("loops_" R "_rps", "loops: achieved req/s", "%10.0f"); stat("procs_" R "_rps", "procs merged: achieved req/s", "%10.0f")
			stat("loops_" R "_cpu_us", "loops: loader CPU us/request", "%10.2f"); stat("procs_" R "_cpu_us", "procs: loader CPU us/request", "%10.2f")
			stat("c_lp_" R, "  ratio loops/procs (target <= 1.1)", "%10.3f")
			if (n["wrk2_" R "_cpu_us"]) {
				ratio("c_lw_" R, "loops_" R "_cpu_us", "wrk2_" R "_cpu_us")
				stat("wrk2_" R "_rps", "wrk2: achieved req/s", "%10.0f"); stat("wrk2_" R "_cpu_us", "wrk2: loader CPU us/request", "%10.2f")
				stat("c_lw_" R, "  ratio loops/wrk2 (target <= 0.8)", "%10.3f")
			}
		}
		ratio("o_lp", "loops_over_rps", "procs_over_rps"); ratio("oc_lp", "loops_over_cpu_us", "procs_over_cpu_us")
		print "-- asked " over " req/s: what each offers under backlog"
		stat("loops_over_rps", "loops: achieved req/s", "%10.0f"); stat("procs_over_rps", "procs merged: achieved req/s", "%10.0f")
		stat("o_lp", "  ratio loops/procs (target >= 0.9)", "%10.3f")
		stat("loops_over_cpu_us", "loops: loader CPU us/request", "%10.2f"); stat("procs_over_cpu_us", "procs: loader CPU us/request", "%10.2f")
		stat("oc_lp", "  ratio loops/procs (target <= 1.1)", "%10.3f")
	}' "$OUT/measures"
} | tee "$OUT/table.txt"
echo "raw outputs in $OUT" >&2
