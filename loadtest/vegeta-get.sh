#!/usr/bin/env bash
# vegeta-get.sh RATE DURATION — GET random ids at RATE req/s for DURATION
# with the vegeta CLI. Same environment as vegeta-attack.sh (TARGET, KEYS,
# CONNS, OUT, VEGETA). Example: loadtest/vegeta-get.sh 5000 30s
exec "$(dirname "$0")/vegeta-attack.sh" get "$@"
