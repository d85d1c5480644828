#!/usr/bin/env bash
# bench-http.sh: kvserver CPU per request under wrk -t1 -c64, per pool.
#
# Fills KEYS ids once (kept in $DATA for later runs). Then per pool: start
# kvserver, warm the block cache with random GETs in WARMUP-second chunks
# until fewer than 1 % of block reads miss (at most WARMUP_MAX chunks: the
# target is a store whose cache holds it), then REPS runs of DURATION
# seconds of GET with random ids. Then per pool, on a new kvserver, REPS
# runs of PUT: PUTs flush and compact, and new files start uncached, so
# every GET runs before any PUT. Server CPU is
# utime+stime from /proc/PID/stat before and after, divided by the
# requests wrk completed; the block-cache miss rate of each run is shown.
# Prints each run and a table of median and spread (min..max).
#
# The pseudo-pool "bare" is the load lab's bare fasthttp handler (no store,
# no pool): the floor this machine puts under every request, measured in
# the same run. The pseudo-pool "shed" is kvserver refusing every request:
# fifo with no queue (-cap 0) and one slot, held by a GET that sleeps in
# the store (-io-delay 1m) through each run, so every other request is
# answered 503 at once: its CPU per request is what a refusal costs, to
# set beside a served request's in the same run. A pool written NAME@EXEC
# (lifo@worker) runs with -exec EXEC.
#
# Settings (environment): POOLS="bare direct fifo" KEYS=2000000 VALUE_SIZE=500
# DURATION=15 WARMUP=10 WARMUP_MAX=15 REPS=3 CONNS=64 CACHE_MB=2048
# ADDR=127.0.0.1:19299 DATA=results/bench-http/data KVSERVER_ARGS=""
# OUT=results/bench-http
set -euo pipefail
cd "$(dirname "$0")/.."
source loadtest/lib.sh

POOLS=${POOLS:-"bare direct fifo"}
KEYS=${KEYS:-2000000}
VALUE_SIZE=${VALUE_SIZE:-500}
DURATION=${DURATION:-15}
WARMUP=${WARMUP:-10}
WARMUP_MAX=${WARMUP_MAX:-15}
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
go build -o bin/loadtest ./cmd/loadtest
export KEYS VALUE_SIZE

SERVER_PID=
# pool_args POOL: kvserver's flags for a POOL of $POOLS.
pool_args() {
  case $1 in
  shed) echo "-pool fifo -cap 0 -workers 1 -io-delay 1m" ;;
  *@*) echo "-pool ${1%@*} -exec ${1#*@}" ;;
  *) echo "-pool $1" ;;
  esac
}
start_server() { # pool
  local log=$OUT/kvserver-$1.log
  if [[ $1 == bare ]]; then
    log=$OUT/bare.log
    ./bin/loadtest bare-server -addr "$ADDR" >"$log" 2>&1 &
  else
    # shellcheck disable=SC2046 # pool_args is a list of flags
    ./bin/kvserver -addr "$ADDR" -data "$DATA" $(pool_args "$1") -cache-mb "$CACHE_MB" $KVSERVER_ARGS \
      >"$log" 2>&1 &
  fi
  SERVER_PID=$!
  wait_ready ./bin/loadtest "http://$ADDR" "$SERVER_PID" "$log"
}
stop_server() {
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}
trap 'release_slot; stop_server' EXIT

# puts_acknowledged: the server's own count of PUTs answered 201.
puts_acknowledged() {
  curl -sf "http://$ADDR/metrics" | awk '/^kvserver_http_requests_total\{code="201",method="PUT"\}/ {print $2 + 0}'
}

# cache_counts: "hits misses" of Pebble's block cache.
cache_counts() {
  curl -sf "http://$ADDR/metrics" | awk '
    /^kvserver_pebble_block_cache_hits_total/ {h = $2 + 0}
    /^kvserver_pebble_block_cache_misses_total/ {m = $2 + 0}
    END {printf "%d %d\n", h, m}'
}

# miss_pct BEFORE AFTER: the percentage of block reads that missed between two cache_counts.
miss_pct() {
  awk -v b="$1" -v a="$2" 'BEGIN {split(b, x, " "); split(a, y, " "); h = y[1] - x[1]; m = y[2] - x[2];
    printf "%.2f", (h + m > 0) ? 100 * m / (h + m) : 0}'
}

warm_cache() {
  for chunk in $(seq "$WARMUP_MAX"); do
    before=$(cache_counts)
    METHOD=GET wrk -t1 -c"$CONNS" -d"${WARMUP}s" -s loadtest/wrk/random.lua "http://$ADDR" >/dev/null
    pct=$(miss_pct "$before" "$(cache_counts)")
    echo "  warm-up $chunk: $pct % block-cache misses"
    awk -v p="$pct" 'BEGIN {exit !(p < 1)}' && return 0
  done
  echo "  cache still missing after $WARMUP_MAX chunks; is -cache-mb ($CACHE_MB) large enough?" >&2
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }

# hold_slot: for "shed", a GET that holds the only slot (it sleeps in the
# store for -io-delay), started before a run; returns once it holds it.
HOLDER_PID=
hold_slot() {
  curl -s -o /dev/null --max-time 70 "http://$ADDR/v0/entity?id=1" &
  HOLDER_PID=$!
  for _ in $(seq 500); do
    [[ $(curl -sf "http://$ADDR/metrics" | awk '/^kvserver_pool_busy_workers/ {print $2 + 0}') == 1 ]] && return 0
    sleep 0.01
  done
  echo "the slot was never taken; see $OUT/kvserver-shed.log" >&2
  exit 1
}
release_slot() {
  [[ -n $HOLDER_PID ]] || return 0
  kill "$HOLDER_PID" 2>/dev/null || true
  wait "$HOLDER_PID" 2>/dev/null || true
  HOLDER_PID=
}

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
printf 'rep\tpool\tmethod\trequests\tnon2xx\trps\tcpu_us_per_req\tcache_miss_pct\n' >"$results"
# measure POOL METHOD: REPS runs of METHOD against a fresh kvserver.
measure() {
  local pool=$1 method=$2
  start_server "$pool"
  if [[ $pool == shed ]] && ((DURATION >= 55)); then
    echo "shed: DURATION must stay under the 1m -io-delay that holds the slot" >&2
    exit 2
  fi
  if [[ $pool != bare && $pool != shed && $method == GET ]]; then
    echo "$pool: warming the block cache"
    warm_cache
  fi
  for rep in $(seq "$REPS"); do
    [[ $pool == shed ]] && hold_slot
    cache_before=$(cache_counts || true)
    before=$(cpu_ticks)
    report=$(METHOD=$method wrk -t1 -c"$CONNS" -d"${DURATION}s" -s loadtest/wrk/random.lua "http://$ADDR")
    after=$(cpu_ticks)
    release_slot
    miss=$(miss_pct "$cache_before" "$(cache_counts)")
    [[ $method == PUT || $pool == bare || $pool == shed ]] && miss=n/a # PUTs read no blocks; bare has no store; shed reads nothing
    requests=$(awk '/requests in/ {print $1}' <<<"$report")
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$report")
    non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$report")
    us=$(awk -v d=$((after - before)) -v t="$TICKS" -v n="$requests" 'BEGIN {printf "%.2f", d / t * 1e6 / n}')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$pool" "$method" "$requests" "${non2xx:-0}" "$rps" "$us" "$miss" | tee -a "$results"
  done
  stop_server
}

# Every pool's GETs before any pool's PUTs: PUTs leave flushes and
# compactions running behind them, which cost the next server's GETs CPU
# (measured: a pool's GETs right after another's PUTs cost clearly more
# than alone).
for method in GET PUT; do
  for pool in $POOLS; do
    measure "$pool" "$method"
  done
done

echo
echo "server CPU per request, wrk -t1 -c$CONNS, $KEYS keys x $VALUE_SIZE B, ${DURATION}s x $REPS (median, min..max); block-cache misses in %"
stats_awk -F'\t' 'NR > 1 {
    k = $2 "\t" $3; us[k] = us[k] " " $7; rps[k] = rps[k] " " $6; miss[k] = miss[k] " " $8; bad[k] += $5; keys[k] = 1
  }
  END {
    for (k in keys) {
      split(k, p, "\t")
      printf "%-8s %-6s %-26s %-32s %-22s %d\n", p[1], p[2], spread(us[k], "%.2f"), spread(rps[k], "%.2f"),
        (p[2] == "PUT" || p[1] == "bare" || p[1] == "shed" ? "n/a" : spread(miss[k], "%.2f")), bad[k]
    }
  }' "$results" | sort >"$OUT/summary.body"
{
  printf '%-8s %-6s %-26s %-32s %-22s %s\n' pool method "cpu us/request" "requests/s" "cache miss %" non-2xx
  cat "$OUT/summary.body"
} | tee "$OUT/summary.txt"
rm -f "$OUT/summary.body"
