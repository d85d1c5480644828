#!/usr/bin/env bash
# make observe: a real Prometheus in the foreground on 127.0.0.1:9090,
# scraping the kvserver of `make run` (127.0.0.1:19234) with
# deploy/prometheus/prometheus.yml and evaluating kvserver's alert rules.
# Its data lives in a fresh temporary directory, removed when it stops.
# Ctrl-C (or SIGTERM) stops Prometheus cleanly; the script returns only
# once it has exited, so nothing is left running.
set -euo pipefail
cd "$(dirname "$0")/../.."

listen=${PROMETHEUS_ADDR:-127.0.0.1:9090}
data=$(mktemp -d -t kvserver-prometheus-XXXXXX)
trap 'rm -rf "$data"' EXIT

echo "observe: Prometheus on http://$listen, scraping kvserver at 127.0.0.1:19234 (start it with make run)"
echo "observe:   targets http://$listen/targets, alerts http://$listen/alerts, graph http://$listen/graph"
echo "observe:   Grafana: import deploy/grafana/kvserver.json with this Prometheus as its data source"
echo "observe:   data in $data (removed on exit); Ctrl-C stops it"

prometheus --config.file=deploy/prometheus/prometheus.yml --web.listen-address="$listen" \
	--storage.tsdb.path="$data" --log.level=warn &
pid=$!
# The terminal's Ctrl-C reaches Prometheus too; forwarding it once more
# covers a SIGTERM sent to this script alone.
trap 'kill -INT "$pid" 2>/dev/null || true' INT TERM
status=0
wait "$pid" || status=$?
# A trapped signal ends the first wait early: wait for Prometheus itself.
while kill -0 "$pid" 2>/dev/null; do
	status=0
	wait "$pid" || status=$?
done
echo "observe: Prometheus stopped (exit status $status)"
exit "$status"
