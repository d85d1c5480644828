#!/usr/bin/env bash
# bench-http.sh: kvserver CPU per request under wrk -t1 -c64, per pool.
#
# Fills KEYS ids once (kept in $DATA for later runs), then for REPS rounds,
# pools interleaved so drift hits all of them alike: start kvserver, warm
# the block cache with WARMUP seconds of GETs, then DURATION seconds of GET
# and of PUT with random ids. Server CPU is utime+stime from /proc/PID/stat
# before and after, divided by the requests wrk completed. Prints each run
# and a table of median and spread (min..max).
#
# Settings (environment): POOLS="direct fifo" KEYS=2000000 VALUE_SIZE=500
# DURATION=15 WARMUP=10 REPS=3 CONNS=64 CACHE_MB=2048 ADDR=127.0.0.1:19299
# DATA=results/bench-http/data KVSERVER_ARGS="" OUT=results/bench-http
set -euo pipefail
cd "$(dirname "$0")/.."

POOLS=${POOLS:-"direct fifo"}
KEYS=${KEYS:-2000000}
VALUE_SIZE=${VALUE_SIZE:-500}
DURATION=${DURATION:-15}
WARMUP=${WARMUP:-10}
REPS=${REPS:-3}
CONNS=${CONNS:-64}
CACHE_MB=${CACHE_MB:-2048}
ADDR=${ADDR:-127.0.0.1:19299}
OUT=${OUT:-results/bench-http}
DATA=${DATA:-$OUT/data}
KVSERVER_ARGS=${KVSERVER_ARGS:-}
TICKS=$(getconf CLK_TCK)

mkdir -p "$OUT"
go build -o bin/kvserver ./cmd/kvserver
export KEYS VALUE_SIZE

SERVER_PID=
start_server() { # pool
  ./bin/kvserver -addr "$ADDR" -data "$DATA" -pool "$1" -cache-mb "$CACHE_MB" $KVSERVER_ARGS \
    >"$OUT/kvserver-$1.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do
    curl -sf "http://$ADDR/v0/status" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "kvserver did not start; see $OUT/kvserver-$1.log" >&2
  exit 1
}
stop_server() {
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}
trap 'stop_server' EXIT

# puts_acknowledged: the server's own count of PUTs answered 201.
puts_acknowledged() {
  curl -sf "http://$ADDR/metrics" | awk '/^kvserver_http_requests_total\{code="201",method="PUT"\}/ {print $2 + 0}'
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }

marker="$DATA/.filled-random-$KEYS-$VALUE_SIZE"
if [[ ! -e $marker ]]; then
  rm -rf "$DATA"
  echo "filling $KEYS keys x $VALUE_SIZE B into $DATA ..."
  start_server direct
  wrk -t1 -c"$CONNS" -d3600s -s loadtest/wrk/fill.lua "http://$ADDR" >"$OUT/fill.txt" &
  wrk_pid=$!
  began=$SECONDS
  while :; do
    stored=$(puts_acknowledged)
    (( (SECONDS - began) % 10 == 0 )) && printf '  %d / %d keys stored, %d s\n' "$stored" "$KEYS" $((SECONDS - began))
    ((stored >= KEYS)) && break
    kill -0 "$wrk_pid" 2>/dev/null || { echo; echo "wrk exited before the fill finished; see $OUT/fill.txt" >&2; exit 1; }
    sleep 1
  done
  kill -INT "$wrk_pid"; wait "$wrk_pid" 2>/dev/null || true
  for id in 1 "$KEYS"; do
    [[ $(curl -s -o /dev/null -w '%{http_code}' "http://$ADDR/v0/entity?id=$id") == 200 ]] ||
      { echo "fill incomplete: id $id is missing" >&2; exit 1; }
  done
  stop_server
  touch "$marker"
fi

results="$OUT/runs.tsv"
printf 'rep\tpool\tmethod\trequests\tnon2xx\trps\tcpu_us_per_req\n' >"$results"
for rep in $(seq "$REPS"); do
  for pool in $POOLS; do
    start_server "$pool"
    METHOD=GET wrk -t1 -c"$CONNS" -d"${WARMUP}s" -s loadtest/wrk/random.lua "http://$ADDR" >/dev/null
    for method in GET PUT; do
      before=$(cpu_ticks)
      report=$(METHOD=$method wrk -t1 -c"$CONNS" -d"${DURATION}s" -s loadtest/wrk/random.lua "http://$ADDR")
      after=$(cpu_ticks)
      requests=$(awk '/requests in/ {print $1}' <<<"$report")
      rps=$(awk '/Requests\/sec/ {print $2}' <<<"$report")
      non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$report")
      us=$(awk -v d=$((after - before)) -v t="$TICKS" -v n="$requests" 'BEGIN {printf "%.2f", d / t * 1e6 / n}')
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$pool" "$method" "$requests" "${non2xx:-0}" "$rps" "$us" | tee -a "$results"
    done
    stop_server
  done
done

echo
echo "server CPU per request, wrk -t1 -c$CONNS, $KEYS keys x $VALUE_SIZE B, ${DURATION}s x $REPS (median, min..max)"
awk -F'\t' 'NR > 1 {
    k = $2 "\t" $3; us[k] = us[k] " " $7; rps[k] = rps[k] " " $6; bad[k] += $5; keys[k] = 1
  }
  function stats(list,   a, n, i, j, t) {
    n = split(substr(list, 2), a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return sprintf("%s (%s..%s)", a[int((n + 1) / 2)], a[1], a[n])
  }
  END {
    for (k in keys) { split(k, p, "\t"); printf "%-8s %-6s %-26s %-32s %d\n", p[1], p[2], stats(us[k]), stats(rps[k]), bad[k] }
  }' "$results" | sort >"$OUT/summary.body"
{
  printf '%-8s %-6s %-26s %-32s %s\n' pool method "cpu us/request" "requests/s" non-2xx
  cat "$OUT/summary.body"
} | tee "$OUT/summary.txt"
rm -f "$OUT/summary.body"
