# lib.sh: helpers that the load-lab scripts source (bench-loader.sh,
# wire-check.sh).

# start_bare_server BIN LOG ARGS...: runs `BIN bare-server ARGS...` in the
# background with its output in LOG, waits until it says it is listening,
# and sets BARE_PID. If it never does, prints LOG, stops it and exits 1.
start_bare_server() {
	local bin=$1 log=$2
	shift 2
	"$bin" bare-server "$@" >"$log" 2>&1 &
	BARE_PID=$!
	for _ in $(seq 50); do
		grep -q listening "$log" && return 0
		sleep 0.1
	done
	cat "$log" >&2
	kill "$BARE_PID" 2>/dev/null || true
	exit 1
}

# record NAME VALUE appends one measurement of the current round to
# $OUT/measures, which the scripts' summaries read.
record() { echo "$1 $2" >>"$OUT/measures"; }
