#!/usr/bin/env bash
# vegeta-put.sh RATE DURATION — PUT VALUE_SIZE-byte bodies under random ids
# at RATE req/s for DURATION with the vegeta CLI. Same environment as
# vegeta-attack.sh. Example: VALUE_SIZE=500 loadtest/vegeta-put.sh 5000 30s
exec "$(dirname "$0")/vegeta-attack.sh" put "$@"
