// Command lincheck checks that kvserver keeps each key linearizable, row
// cache and all, against the real binary: many concurrent clients GET,
// PUT (each PUT a value of its own) and DELETE a few hot keys over HTTP,
// every operation's call and return are recorded on one monotonic clock,
// and each key's history is checked against a register with porcupine
// (internal/lincheck says how writes in doubt and failed reads count).
//
//	lincheck -kvserver bin/kvserver                              # every configuration, 30 s each
//	lincheck -kvserver bin/kvserver -config one-hot-key -duration 60s
//
// Configurations (-config, comma-separated; -list prints them), each of
// 32 readers and 32 writers:
//   - hot, hot-sync: 4 keys, 4 KiB values, kvserver's defaults (-pool
//     auto, the row cache on), without and with -sync.
//   - large, large-sync: the same with 64 KiB values.
//   - one-hot-key: one key, 4 KiB values, -sync, -pool direct: the shape
//     in which a row cache that let a read return a value older than
//     another read had returned was caught.
//   - deletes: 16 keys, one write in 4 a DELETE. The others write none:
//     porcupine cannot tell apart the reads of a key that 32 writers keep
//     deleting (a 404 does not say which DELETE it saw), and could not
//     decide such histories in time.
//   - restart: as hot-sync, and kill -9 in the middle of the run, then a
//     restart on the same data: the history spans the crash (operations
//     in flight at the kill count as writes in doubt or dropped reads),
//     so every acknowledged write must still be there and nothing older
//     than a value already read may come back.
//
// A run is cut into epochs of -epoch-ops operations, each ended by a read
// of every key with nothing else in flight, so that each epoch's history
// is checked on its own in seconds (a whole run's would not finish); -epochs
// runs exactly that many instead of -duration's worth.
//
// Per configuration it prints the operations checked, the keys and the
// result: ok, ILLEGAL with the file of porcupine's view of the first
// illegal histories (-out), or UNKNOWN where porcupine could not decide
// within -check-timeout.
//
// Exit status: 0 every configuration ok, 1 one was ILLEGAL or UNKNOWN or
// could not run (its data directory and kvserver's log are kept and
// named), 2 bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

type options struct {
	kvserver     string
	setups       []setup
	duration     time.Duration
	epochs       int
	epochOps     int
	checkTimeout time.Duration
	clients      int // 0: each configuration's own
	out          string
	dir          string
	seed         uint64
	keep         bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "lincheck:", err)
		return 2
	}
	began := time.Now()
	type row struct {
		s   setup
		sum summary
		err error
	}
	var rows []row
	failed := false
	for _, s := range o.setups {
		sum, err := runSetup(ctx, o, s, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "lincheck %s: %v\n", s.name, err)
		}
		failed = failed || err != nil || !sum.passed()
		rows = append(rows, row{s, sum, err})
		fmt.Fprintln(stdout)
		if ctx.Err() != nil {
			break
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "configuration\toperations\tkeys\tepochs\tran\tchecked in\tresult")
	for _, r := range rows {
		result := string(r.sum.result.Verdict)
		switch {
		case r.err != nil:
			result = "did not run: " + r.err.Error()
		case len(r.sum.result.Views) > 0:
			result += " " + r.sum.result.Views[0]
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%v\t%v\t%s\n", r.s.name, r.sum.result.Ops, r.sum.result.Keys, r.sum.epochs,
			r.sum.ran.Round(100*time.Millisecond), r.sum.result.Took.Round(10*time.Millisecond), result)
	}
	tw.Flush()
	verdict := "PASS"
	if failed {
		verdict = "FAIL"
	}
	fmt.Fprintf(stdout, "lincheck: %s in %v\n", verdict, time.Since(began).Round(100*time.Millisecond))
	if failed {
		return 1
	}
	return 0
}

func parseFlags(args []string, stdout, stderr io.Writer) (options, error) {
	var o options
	var configs string
	var list bool
	fs := flag.NewFlagSet("lincheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.kvserver, "kvserver", "bin/kvserver", "the kvserver binary (make build)")
	fs.StringVar(&configs, "config", "all", "configurations to run, comma-separated, or all (-list prints them)")
	fs.BoolVar(&list, "list", false, "print the configurations and exit")
	fs.DurationVar(&o.duration, "duration", 30*time.Second, "how long each configuration's clients run (whole epochs: the last one ends after it)")
	fs.IntVar(&o.epochs, "epochs", 0, "run exactly this many epochs per configuration instead of -duration (0: -duration)")
	fs.IntVar(&o.epochOps, "epoch-ops", 4000, "operations per epoch, all clients together: the length of each history checked")
	fs.DurationVar(&o.checkTimeout, "check-timeout", time.Minute, "how long porcupine may search one key's history of one epoch before the verdict is UNKNOWN")
	fs.IntVar(&o.clients, "clients", 0, "clients per configuration, half of them readers (0: each configuration's own, 64)")
	fs.StringVar(&o.out, "out", os.TempDir(), "folder for porcupine's views of illegal histories (HTML)")
	fs.StringVar(&o.dir, "dir", "", "parent of the temporary data directories (default: the system's)")
	fs.Uint64Var(&o.seed, "seed", 0, "random seed for the clients' choices (0: from the clock; printed)")
	fs.BoolVar(&o.keep, "keep", false, "keep data directories and kvserver logs even when a configuration passes")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if list {
		for _, s := range setups {
			fmt.Fprintf(stdout, "%-12s %s\n", s.name, s.describe())
		}
		return o, flag.ErrHelp
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.duration <= 0 && o.epochs <= 0:
		return o, errors.New("-duration or -epochs must be positive")
	case o.epochs < 0 || o.epochOps < 2 || o.clients < 0 || o.checkTimeout < 0:
		return o, errors.New("-epochs, -clients and -check-timeout must not be negative, -epoch-ops at least 2")
	case o.clients == 1:
		return o, errors.New("-clients must be at least 2: a reader and a writer")
	}
	var err error
	if o.setups, err = pick(configs); err != nil {
		return o, err
	}
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano())
	}
	return o, nil
}

// pick returns the configurations a -config value names.
func pick(configs string) ([]setup, error) {
	if configs == "all" {
		return setups, nil
	}
	var out []setup
	for _, name := range strings.Split(configs, ",") {
		s, ok := setupNamed(strings.TrimSpace(name))
		if !ok {
			return nil, fmt.Errorf("-config: no configuration %q (-list prints them)", name)
		}
		out = append(out, s)
	}
	return out, nil
}
