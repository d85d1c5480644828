#!/usr/bin/env bash
# overload.sh (issue 5): offer FACTOR x the saturation rate for DURATION
# seconds to each pool x overflow policy, and check that kvserver degrades
# instead of dying:
#   - it never crashes: alive and answering /v0/status after the overload,
#     no panic in its log, exit 0 on SIGTERM;
#   - its RSS stays bounded: VmRSS and VmHWM sampled every second from
#     /proc/PID/status; reported as steady (median VmRSS over the second half
#     of the overload), peak (VmHWM) and growth over that second half;
#   - every request is answered 2xx, 404 or 503, or times out at the
#     loader's -timeout (TIMEOUT); anything else is a failure;
#   - p99 is back to normal within RECOVER seconds after the load stops:
#     RECOVER one-second runs at PROBE_RATE follow the overload; the first
#     whose corrected p99 is at most max(2 x baseline, baseline + 5 ms) is the
#     recovery time (baseline: a 5 s run at PROBE_RATE before the overload).
# A loader that cannot send FACTOR x RATE (on a small machine it shares the
# cores) says so: the table shows what was sent of what was planned, and the
# overload's p99 both corrected (from the intended send time, which then
# includes the loader's own lag) and uncorrected (from the actual send).
# The unbounded variant (UNBOUNDED_POOLS with -cap -1) is the named
# exception: its queue may grow without limit; its growth is measured and
# reported, not judged.
#
# Settings (environment), with defaults:
#   POOLS="direct fifo lifo msqueue multiqueue adaptive"
#   POLICIES="reject drop-oldest caller-runs block"   (direct has none)
#   UNBOUNDED_POOLS="msqueue"  FACTOR=10  DURATION=60  RECOVER=5
#   PROBE_RATE=RATE/2 (baseline and recovery probes: below saturation, so
#          that "normal" is stable)
#   RATE=  (saturation rate, req/s; when empty, `loadtest saturate` finds it
#          once, on fifo, and the result is used for every pool)
#   WORKLOAD=mixed:0.5 KEYS=100000 VALUE_SIZE=500 TIMEOUT=2s
#   LOADER_CONNS=4096 (the loader's -max-conns: each connection holds one
#          request, so it must exceed the pool's queue bound, 1024 by default,
#          for the queue to fill and shed; needs ulimit -n above it)
#   ADDR=127.0.0.1:19298 CACHE_MB=64 OUT=results/overload
#   KVSERVER_ARGS="" LOADTEST_ARGS=""  KEEP_DATA= (1: keep each run's store)
# Needs jq. Runs about (DURATION + RECOVER + 15) s per combination: the
# full matrix (22 combinations) is about 30 minutes at the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."

POOLS=${POOLS:-"direct fifo lifo msqueue multiqueue adaptive"}
POLICIES=${POLICIES:-"reject drop-oldest caller-runs block"}
UNBOUNDED_POOLS=${UNBOUNDED_POOLS-"msqueue"}
FACTOR=${FACTOR:-10}
DURATION=${DURATION:-60}
RECOVER=${RECOVER:-5}
RATE=${RATE:-}
WORKLOAD=${WORKLOAD:-mixed:0.5}
KEYS=${KEYS:-100000}
VALUE_SIZE=${VALUE_SIZE:-500}
TIMEOUT=${TIMEOUT:-2s}
ADDR=${ADDR:-127.0.0.1:19298}
CACHE_MB=${CACHE_MB:-64}
OUT=${OUT:-results/overload}
KVSERVER_ARGS=${KVSERVER_ARGS:-}
LOADTEST_ARGS=${LOADTEST_ARGS:-}
LOADER_CONNS=${LOADER_CONNS:-4096}

command -v jq >/dev/null || { echo "overload.sh needs jq (apt-get install jq)" >&2; exit 2; }
mkdir -p "$OUT"
go build -o bin/kvserver ./cmd/kvserver
go build -o bin/loadtest ./cmd/loadtest

SERVER_PID= SAMPLER_PID=
cleanup() {
  [ -n "$SAMPLER_PID" ] && kill "$SAMPLER_PID" 2>/dev/null || true
  [ -n "$SERVER_PID" ] && kill -KILL "$SERVER_PID" 2>/dev/null || true
}
trap cleanup EXIT

# start_server DIR ARGS...: kvserver on a fresh data directory in DIR.
start_server() {
  local dir=$1; shift
  rm -rf "$dir/data"
  ./bin/kvserver -addr "$ADDR" -data "$dir/data" -cache-mb "$CACHE_MB" "$@" $KVSERVER_ARGS >"$dir/kvserver.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do
    curl -sf "http://$ADDR/v0/status" >/dev/null 2>&1 && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  SERVER_PID=
  return 1
}

# attack NAME RATE SECONDS DIR: one loadtest run; summary in DIR/NAME.
attack() {
  ./bin/loadtest attack -q -target "http://$ADDR" -workload "$WORKLOAD" -keys "$KEYS" -value-size "$VALUE_SIZE" \
    -rate "$2" -duration "${3}s" -timeout "$TIMEOUT" -max-conns "$LOADER_CONNS" -out "$4/$1" $LOADTEST_ARGS >"$4/$1.txt" 2>&1
}

p99() { jq -r '.latency_corrected.percentiles_ms.p99' "$1/summary.json"; }

# sample_rss DIR: every second, "seconds phase VmRSS_kB VmHWM_kB" into DIR/rss.tsv;
# the phase is whatever DIR/phase holds.
sample_rss() {
  local dir=$1 t=0
  while kill -0 "$SERVER_PID" 2>/dev/null; do
    awk -v t="$t" -v phase="$(cat "$dir/phase")" \
      '/^VmRSS/ {rss=$2} /^VmHWM/ {hwm=$2} END {print t "\t" phase "\t" rss "\t" hwm}' "/proc/$SERVER_PID/status" >>"$dir/rss.tsv" 2>/dev/null || true
    sleep 1
    t=$((t + 1))
  done
}

if [ -z "$RATE" ]; then
  echo "finding the saturation rate (fifo, $WORKLOAD)..."
  mkdir -p "$OUT/saturate"
  start_server "$OUT/saturate" -pool fifo || { echo "kvserver did not start; see $OUT/saturate/kvserver.log" >&2; exit 1; }
  ./bin/loadtest saturate -q -target "http://$ADDR" -workload "$WORKLOAD" -keys "$KEYS" -value-size "$VALUE_SIZE" \
    -step 3s -validate 10s -out "$OUT/saturate" $LOADTEST_ARGS | tee "$OUT/saturate/saturate.txt"
  RATE=$(jq -r '.rate | floor' "$OUT/saturate/saturate.json")
  kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || true; SERVER_PID=
  [ -n "${KEEP_DATA:-}" ] || rm -rf "$OUT/saturate/data"
  [ "$RATE" -gt 0 ] || { echo "no saturation rate found" >&2; exit 1; }
fi
OVER=$((RATE * FACTOR))
PROBE_RATE=${PROBE_RATE:-$((RATE / 2))}

combos=()
for pool in $POOLS; do
  if [ "$pool" = direct ]; then combos+=("direct -"); continue; fi
  for policy in $POLICIES; do combos+=("$pool $policy"); done
done
for pool in $UNBOUNDED_POOLS; do combos+=("$pool unbounded"); done

REPORT="$OUT/overload.md"
{
  echo "# Overload: ${FACTOR}x saturation ($OVER req/s planned, saturation $RATE req/s) for ${DURATION}s, $WORKLOAD; probes at $PROBE_RATE req/s"
  echo
  echo "| pool | policy | verdict | sent / planned | answered req/s | 2xx | 404 | 503 | timeouts | other | RSS steady MiB | RSS peak MiB | RSS growth MiB/s | p99 base ms | p99 overload ms corrected / uncorrected | p99 after 1..${RECOVER}s ms | recovered after |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$REPORT"
failures=0

for combo in "${combos[@]}"; do
  read -r pool policy <<<"$combo"
  dir="$OUT/$pool-$policy"
  rm -rf "$dir"; mkdir -p "$dir"
  args=(-pool "$pool")
  case $policy in
    -) ;;
    unbounded) args+=(-cap -1) ;;
    *) args+=(-overflow "$policy") ;;
  esac
  echo "== $pool $policy"
  if ! start_server "$dir" "${args[@]}"; then
    echo "   skipped: kvserver did not start: $(tail -1 "$dir/kvserver.log")"
    echo "| $pool | $policy | skipped: $(tail -1 "$dir/kvserver.log" | tr '|' '/') |" >>"$REPORT"
    continue
  fi
  echo baseline >"$dir/phase"
  sample_rss "$dir" & SAMPLER_PID=$!

  attack baseline "$PROBE_RATE" 5 "$dir" || true
  echo overload >"$dir/phase"
  attack overload "$OVER" "$DURATION" "$dir" || true
  echo recovery >"$dir/phase"
  recovered="no"; after=()
  for i in $(seq "$RECOVER"); do
    attack "recover-$i" "$PROBE_RATE" 1 "$dir" || true
    after+=("$(p99 "$dir/recover-$i" 2>/dev/null || echo '?')")
  done
  echo stop >"$dir/phase"

  base=$(p99 "$dir/baseline" 2>/dev/null || echo 0)
  normal=$(awk -v b="$base" 'BEGIN { n = 2 * b; if (b + 5 > n) n = b + 5; print n }')
  for i in "${!after[@]}"; do
    if awk -v p="${after[$i]}" -v n="$normal" 'BEGIN { exit !(p != "?" && p <= n) }'; then
      recovered="$((i + 1))s"; break
    fi
  done

  alive=yes
  curl -sf "http://$ADDR/v0/status" >/dev/null 2>&1 || alive=no
  kill -TERM "$SERVER_PID" 2>/dev/null || alive=no
  exit_code=0; wait "$SERVER_PID" || exit_code=$?
  SERVER_PID=
  wait "$SAMPLER_PID" 2>/dev/null || true; SAMPLER_PID=
  # The store is ~400 MB after a run and nothing below reads it; 22 of
  # them would fill a small disk. KEEP_DATA=1 keeps them.
  [ -n "${KEEP_DATA:-}" ] || rm -rf "$dir/data"

  s="$dir/overload/summary.json"
  if [ -f "$s" ]; then
    achieved=$(jq -r '.achieved_rate | floor' "$s")
    read -r ok nf shed none other <<<"$(jq -r '.status_codes | to_entries |
      [ (map(select(.key | test("^2"))) | map(.value) | add // 0),
        (map(select(.key == "404")) | map(.value) | add // 0),
        (map(select(.key == "503")) | map(.value) | add // 0),
        (map(select(.key == "0")) | map(.value) | add // 0),
        (map(select(.key | test("^(2|404$|503$|0$)") | not)) | map(.value) | add // 0) ] | @tsv' "$s")"
    timeouts=$(jq -r '[.error_kinds // {} | to_entries[] | select(.key | test("timeout"; "i")) | .value] | add // 0' "$s")
    over99="$(p99 "$dir/overload") / $(jq -r '.latency_uncorrected.percentiles_ms.p99' "$s")"
    sent="$(jq -r '"\(.sent) / \(.planned)"' "$s")"
  else
    achieved=? ok=? nf=? shed=? none=? other=? timeouts=? over99=? sent=?
  fi
  # Steady: median VmRSS over the second half of the overload; growth:
  # least-squares slope of VmRSS over that half; peak: VmHWM.
  half=$(awk -F'\t' '$2 == "overload" { print $1 "\t" $3 }' "$dir/rss.tsv" |
    awk -F'\t' '{ t[NR] = $1; r[NR] = $2 } END { for (i = int(NR / 2) + 1; i <= NR; i++) print t[i] "\t" r[i] }')
  if [ -n "$half" ]; then
    steady=$(cut -f2 <<<"$half" | sort -n | awk '{ v[NR] = $1 } END { printf "%.0f", v[int((NR + 1) / 2)] / 1024 }')
    growth=$(awk -F'\t' '{ n++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2 }
      END { d = n * sxx - sx * sx; printf "%.1f", (d == 0 ? 0 : (n * sxy - sx * sy) / d) / 1024 }' <<<"$half")
  else
    steady=? growth=?
  fi
  peak=$(awk -F'\t' '$4 > m { m = $4 } END { printf "%.0f", m / 1024 }' "$dir/rss.tsv")

  verdict=PASS; why=()
  [ "$alive" = yes ] || why+=("not answering after the overload")
  [ "$exit_code" = 0 ] || why+=("exit $exit_code on SIGTERM")
  grep -q '^panic\|fatal error' "$dir/kvserver.log" && why+=("panic in its log")
  [ "$other" = 0 ] || why+=("answers other than 2xx/404/503")
  [ "$none" = "$timeouts" ] || why+=("requests without an answer that did not time out")
  [ "$recovered" != no ] || why+=("p99 not normal within ${RECOVER}s")
  if [ ${#why[@]} -gt 0 ]; then
    if [ "$policy" = unbounded ]; then verdict="exception: ${why[*]}"; else verdict="FAIL: ${why[*]}"; failures=$((failures + 1)); fi
  elif [ "$policy" = unbounded ]; then
    verdict="exception (unbounded)"
  fi
  line="| $pool | $policy | $verdict | $sent | $achieved | $ok | $nf | $shed | $timeouts | $other | $steady | $peak | $growth | $base | $over99 | ${after[*]} | $recovered |"
  echo "$line" >>"$REPORT"
  echo "   $line"
done

echo
cat "$REPORT"
echo
echo "per-second RSS, loader outputs and server logs: $OUT/<pool>-<policy>/"
[ "$failures" = 0 ]
