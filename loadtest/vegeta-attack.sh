#!/usr/bin/env bash
# vegeta-attack.sh — constant-rate load on the kvserver with the vegeta CLI,
# for people who prefer vegeta to `loadtest attack`.
#
# Usage: loadtest/vegeta-attack.sh get|put RATE DURATION
#   RATE      requests per second, e.g. 5000
#   DURATION  vegeta duration, e.g. 30s
#
# Keys are random ids 1..KEYS (uniform), drawn by awk; PUT bodies are one
# fixed block of VALUE_SIZE bytes (for verifiable per-key values use
# `loadtest fill`). Results land in OUT/results.bin (vegeta's gob format);
# the script prints `vegeta report`, then the latency percentile spectrum
# (`vegeta report -type=hdrplot`, also kept as OUT/latency.hgrm).
#
# Environment (defaults):
#   TARGET=http://127.0.0.1:19234  KEYS=2000000  VALUE_SIZE=500
#   CONNS=64 (vegeta -connections and initial -workers)  MAX_WORKERS=256
#   OUT=results/vegeta-METHOD-RATE-TIMESTAMP (under the repository root)
#   VEGETA= a vegeta binary to use instead of `go tool vegeta`, the CLI
#   pinned as a tool in go.mod (the version the library parts use; the
#   first call builds it into Go's cache, about 40 s).
#
# vegeta's net/http client costs several times the CPU per request of
# `loadtest attack` (figures in the README's Load lab), so at high rates
# `loadtest attack` is the loader to use. vegeta reports latency from the
# actual send only (no coordinated-omission correction).
set -euo pipefail

method=${1:-}
rate=${2:-}
duration=${3:-}
if [[ ! $method =~ ^(get|put)$ || -z $rate || -z $duration ]]; then
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
fi

TARGET=${TARGET:-http://127.0.0.1:19234}
KEYS=${KEYS:-2000000}
VALUE_SIZE=${VALUE_SIZE:-500}
CONNS=${CONNS:-64}
MAX_WORKERS=${MAX_WORKERS:-256}
root=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$root/results/vegeta-$method-$rate-$(date -u +%Y%m%dT%H%M%SZ)}
# Absolute, because `go -C` below runs vegeta from the repository root.
OUT=$(realpath -m "$OUT")

case $TARGET in
http://127.0.0.1:* | http://localhost:* | http://\[::1\]:*) ;;
*)
	echo "TARGET=$TARGET is not a loopback address; this lab only loads this machine" >&2
	exit 2
	;;
esac

if [[ -n ${VEGETA:-} ]]; then
	vegeta=("$VEGETA")
else
	vegeta=(go -C "$root" tool vegeta)
	# Built (once, into Go's cache) before the attack, not inside its timing.
	"${vegeta[@]}" -version >/dev/null
fi

mkdir -p "$OUT"
body=$OUT/body.bin
head -c "$VALUE_SIZE" /dev/zero | tr '\0' 'v' >"$body"

# One HTTP-format target per request, keys drawn lazily (vegeta -lazy reads
# only as many as it sends; awk ends on SIGPIPE when vegeta exits).
targets() {
	awk -v m="${method^^}" -v url="$TARGET/v0/entity?id=" -v keys="$KEYS" -v body="$body" 'BEGIN {
		srand()
		while (1) {
			printf "%s %s%d\n", m, url, int(rand() * keys) + 1
			if (m == "PUT") printf "@%s\n", body
			printf "\n"
		}
	}'
}

echo "vegeta: ${method^^} $TARGET/v0/entity, $rate req/s for $duration, keys 1..$KEYS -> $OUT/results.bin" >&2
targets | "${vegeta[@]}" attack -lazy -format=http -rate="$rate" -duration="$duration" \
	-connections="$CONNS" -workers="$CONNS" -max-workers="$MAX_WORKERS" -keepalive=true \
	-name="vegeta-$method-$rate" -output="$OUT/results.bin" || true
"${vegeta[@]}" report "$OUT/results.bin"
echo
echo "Latency percentile spectrum (from the actual send):"
"${vegeta[@]}" report -type=hdrplot "$OUT/results.bin" | tee "$OUT/latency.hgrm"
echo "wrote $OUT/results.bin and $OUT/latency.hgrm (go tool vegeta plot $OUT/results.bin > $OUT/plot.html)" >&2
