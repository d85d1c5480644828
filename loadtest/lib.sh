# lib.sh: helpers that the load-lab scripts source (bench-http.sh,
# bench-loader.sh, bench-loader-bare.sh, bench-loops.sh, wire-check.sh).

# wait_ready LOADTEST URL PID LOG: waits until the server at URL, started
# as process PID with its output in LOG, answers GET /v0/status with 200
# (`LOADTEST wait`, through the Go harness; at most $WAIT_TIMEOUT, default
# 30s: a large store's WAL replay takes a while). If it does not, or PID
# exits first, prints the end of LOG, stops PID and exits 1.
wait_ready() {
	local bin=$1 url=$2 pid=$3 log=$4
	"$bin" wait -url "$url" -pid "$pid" -timeout "${WAIT_TIMEOUT:-30s}" && return 0
	echo "the server did not start; the end of $log:" >&2
	tail -n 20 "$log" >&2
	kill "$pid" 2>/dev/null || true
	exit 1
}

# start_bare_server BIN LOG ADDR [ARGS...]: runs `BIN bare-server -addr
# ADDR ARGS...` in the background with its output in LOG, waits until it
# answers, and sets BARE_PID. If it never does, prints LOG, stops it and
# exits 1.
start_bare_server() {
	local bin=$1 log=$2 addr=$3
	shift 3
	"$bin" bare-server -addr "$addr" "$@" >"$log" 2>&1 &
	BARE_PID=$!
	wait_ready "$bin" "http://$addr" "$BARE_PID" "$log"
}

# record NAME VALUE appends one measurement of the current round to
# $OUT/measures, which the scripts' summaries read.
record() { echo "$1 $2" >>"$OUT/measures"; }

# The one median-and-spread program of the scripts' summaries: awk
# functions that stats_awk puts in front of a script's own program.
#   spread(list, fmt)     "median (min..max)" of a space-separated list of
#                         numbers, each printed with fmt
#   add(name, value)      appends one round's value to measure name (the
#                         usual main rule over $OUT/measures:
#                         { add($1, $2) })
#   ratio(name, a, b)     measure name := a / b, round by round (same
#   diff(name, a, b)      minute, same noise), before any median
#   stat(name, label, fmt)
#                         prints label, the median of measure name and its
#                         spread "(min .. max)"; labels are padded to
#                         label_width (-v label_width=N, default 44)
# The median of an even number of values is the mean of the middle two.
STATS_AWK='
function sort_numbers(a, m,   i, j, t) {
	for (i = 2; i <= m; i++) {
		t = a[i]
		for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]
		a[j + 1] = t
	}
}
function median_of(a, m) { return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
function spread(list, fmt,   a, m) {
	m = split(list, a, " ")
	sort_numbers(a, m)
	return sprintf(fmt " (" fmt ".." fmt ")", median_of(a, m), a[1], a[m])
}
function add(name, value) { v[name, ++n[name]] = value }
function ratio(name, a, b,   i) { for (i = 1; i <= n[a]; i++) v[name, i] = v[a, i] / v[b, i]; n[name] = n[a] }
function diff(name, a, b,   i) { for (i = 1; i <= n[a]; i++) v[name, i] = v[a, i] - v[b, i]; n[name] = n[a] }
function stat(name, label, fmt,   i, m, a) {
	m = n[name]
	for (i = 1; i <= m; i++) a[i] = v[name, i]
	sort_numbers(a, m)
	printf "%-" (label_width ? label_width : 44) "s " fmt "   (" fmt " .. " fmt ")\n", label, median_of(a, m), a[1], a[m]
}
'

# stats_awk [AWK_OPTIONS...] PROGRAM [FILE...]: awk with STATS_AWK's
# functions available to PROGRAM. Options are -v NAME=VALUE, -F SEP and
# other single-word ones, as awk takes them.
stats_awk() {
	local opts=()
	while (($#)) && [[ $1 == -* ]]; do
		case $1 in
		-v | -F) opts+=("$1" "$2"); shift 2 ;;
		*) opts+=("$1"); shift ;;
		esac
	done
	local prog=$1
	shift
	awk "${opts[@]}" "$STATS_AWK$prog" "$@"
}

# cpu_us TIMEFILE REQUESTS: the CPU per request, in microseconds, of a
# process timed by `/usr/bin/time -f "cpu %U %S" -o TIMEFILE` (user +
# system) that sent REQUESTS.
cpu_us() { awk -v n="$2" '/^cpu/ {print ($2 + $3) * 1e6 / n}' "$1"; }

# to_us VALUE: wrk's and wrk2's "493.00us" / "5.43ms" / "1.2s" →
# microseconds.
to_us() {
	awk -v v="$1" 'BEGIN {
		n = v + 0
		if (v ~ /us$/) print n; else if (v ~ /ms$/) print n * 1000; else if (v ~ /s$/) print n * 1e6; else print n
	}'
}
