// Command loadtest is the load lab's driver: constant-rate load against the
// kvserver with exact, coordinated-omission-corrected latency percentiles,
// the search for the saturation point, bulk loading, and the merge of runs
// made from several loader machines at once.
//
//	loadtest attack   -rate 10000 -duration 30s -workload get
//	loadtest attack   -rate 200000 -loops 8 -cpus 8-15
//	loadtest attack   -rate 400000 -shard 2/4 -start-at 2026-11-24T12:00:00Z
//	loadtest saturate -workload put -slo 100ms
//	loadtest fill     -keys 2000000 -value-size 500
//	loadtest merge    results/host1 results/host2 -out results/merged
//	loadtest bare-server -addr 127.0.0.1:19235
//	loadtest floor    -server-cpus 0 -loader-cpus 1
//
// Each run gets its own folder (default results/<UTC time>-<pool or
// server>-<workload>-<rate>/). Each subcommand takes only its own flags
// (`loadtest SUBCOMMAND -h`); every one of them can also be set through the
// environment as LOADTEST_<FLAG>, dashes as underscores
// (LOADTEST_MAX_CONNS=512); a flag on the command line wins.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/kvpool/kvpool/internal/loadgen/report"
	_ "github.com/kvpool/kvpool/internal/loadgen/vegeta" // -engine vegeta
)

// subcommands, in the order usage lists them.
var subcommands = []struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}{
	{"attack", "constant-rate (open model) or closed-loop load; wrk2-style report", runAttack},
	{"saturate", "find the highest rate with corrected p99 ≤ -slo and < 0.1% errors", runSaturate},
	{"fill", "PUT -keys deterministic values as fast as the server takes them", runFill},
	{"merge", "combine runs made at the same time from several loader machines", runMerge},
	{"compare", "start kvserver per pool, compare them (presets), write REPORT.md with charts and profiles", runCompare},
	{"bare-server", "serve the API shape with no work, to measure loaders against", runBareServer},
	{"floor", "the bare handler and kvserver direct side by side in paired closed-loop rounds: CPU per request, throughput, ratios", runFloor},
	{"ratio", "the median of B/A over paired measurements \"A B\" on stdin, with its 95% interval", runRatio},
	{"wait", "wait until a server answers GET /v0/status with 200 (scripts start servers with it)", runWait},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and returns the exit code: 0, 1 for a
// failed run, 2 for bad usage, or a subcommand's own (saturate's 3 and 4).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "help" {
		usage(stderr)
		return 2
	}
	for _, sc := range subcommands {
		if sc.name == args[0] {
			err := sc.run(ctx, args[1:], stdout, stderr)
			if errors.Is(err, report.ErrNotEmpty) { // an -out that holds files
				err = usageError(err)
			}
			switch {
			case err == nil:
				return 0
			case errors.Is(err, flag.ErrHelp):
				return 2
			case errors.Is(err, errUsage):
				fmt.Fprintf(stderr, "loadtest %s: %v\n", sc.name, errors.Unwrap(err))
				return 2
			}
			fmt.Fprintf(stderr, "loadtest %s: %v\n", sc.name, err)
			var ee exitError
			if errors.As(err, &ee) {
				return ee.code
			}
			return 1
		}
	}
	fmt.Fprintf(stderr, "loadtest: unknown subcommand %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: loadtest SUBCOMMAND [flags]")
	fmt.Fprintln(w)
	for _, sc := range subcommands {
		fmt.Fprintf(w, "  %-12s %s\n", sc.name, sc.summary)
	}
	fmt.Fprintln(w, "\nloadtest SUBCOMMAND -h lists its flags; LOADTEST_<FLAG> environment variables set defaults.")
}
