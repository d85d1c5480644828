// Command loadtest is the load lab's driver: constant-rate load against the
// kvserver with exact, coordinated-omission-corrected latency percentiles,
// the search for the saturation point, and bulk loading.
//
//	loadtest attack   -rate 10000 -duration 30s -workload get -out results/get
//	loadtest saturate -workload put -slo 100ms
//	loadtest fill     -keys 2000000 -value-size 500
//	loadtest bare-server -addr 127.0.0.1:19235
//
// Run `loadtest SUBCOMMAND -h` for the flags. Every flag can also be set
// through the environment as LOADTEST_<FLAG>, dashes as underscores
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
)

// subcommands, in the order usage lists them.
var subcommands = []struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}{
	{"attack", "constant-rate (open model) or closed-loop load; wrk2-style report", runAttack},
	{"saturate", "find the highest rate with corrected p99 ≤ -slo and < 0.1% errors", runSaturate},
	{"fill", "PUT -keys deterministic values as fast as the server takes them", runFill},
	{"bare-server", "serve the API shape with no work, to measure loaders against", runBareServer},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and returns the exit code: 0, 1 for a
// failed run, 2 for bad usage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "help" {
		usage(stderr)
		return 2
	}
	for _, sc := range subcommands {
		if sc.name == args[0] {
			err := sc.run(ctx, args[1:], stdout, stderr)
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
