// Command crashtest checks kvserver's durability promises against the real
// binary: it kills the server with SIGKILL under concurrent PUTs, restarts
// it on the same data directory and reads every acknowledged write back;
// and it stops the server with SIGTERM under load and checks the drain.
//
//	crashtest -kvserver bin/kvserver                  # all three runs
//	crashtest -kvserver bin/kvserver -mode crash -sync=false -cycles 20
//
// Modes:
//   - crash: kill -9 at a random moment while -writers PUT unique keys,
//     -cycles times; every key answered 201 must read back exactly. With
//     -sync any loss fails the run; without it the loss is measured and
//     printed (a value read back wrong fails either way).
//   - drain: SIGTERM under load with a request in flight: the request is
//     answered 201, new connections are refused, the server exits 0 after
//     "stopped cleanly", and a restart finds every acknowledged write.
//   - all: crash with -sync, crash without, then drain.
//
// Exit status: 0 all promises held, 1 one did not (the data directory and
// the server's log are kept and named), 2 bad usage.
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
	"time"
)

type config struct {
	kvserver string
	mode     string
	sync     bool
	cycles   int
	writers  int
	minRun   time.Duration // the kill comes at a uniformly random moment
	maxRun   time.Duration // in [minRun, maxRun) after the writers start
	pool     string
	dir      string
	seed     uint64
	keep     bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "crashtest:", err)
		return 2
	}
	type step struct {
		name string
		run  func(context.Context, config, io.Writer) (bool, error)
	}
	var steps []step
	switch cfg.mode {
	case "crash":
		steps = []step{{"crash", runCrash}}
	case "drain":
		steps = []step{{"drain", runDrain}}
	case "all":
		synced, unsynced := cfg, cfg
		synced.sync, unsynced.sync = true, false
		steps = []step{
			{"crash", func(ctx context.Context, _ config, w io.Writer) (bool, error) { return runCrash(ctx, synced, w) }},
			{"crash", func(ctx context.Context, _ config, w io.Writer) (bool, error) { return runCrash(ctx, unsynced, w) }},
			{"drain", runDrain},
		}
	}
	began, failed := time.Now(), false
	for _, s := range steps {
		ok, err := s.run(ctx, cfg, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "crashtest %s: %v\n", s.name, err)
			return 1
		}
		failed = failed || !ok
		fmt.Fprintln(stdout)
	}
	verdict := "PASS"
	if failed {
		verdict = "FAIL"
	}
	fmt.Fprintf(stdout, "crashtest %s: %s in %v\n", cfg.mode, verdict, time.Since(began).Round(100*time.Millisecond))
	if failed {
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("crashtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.kvserver, "kvserver", "bin/kvserver", "the kvserver binary (make build)")
	fs.StringVar(&c.mode, "mode", "all", "crash | drain | all (crash with -sync, crash without, drain)")
	fs.BoolVar(&c.sync, "sync", true, "run kvserver with -sync (crash and drain modes)")
	fs.IntVar(&c.cycles, "cycles", 10, "crash mode: kill/restart cycles")
	fs.IntVar(&c.writers, "writers", 16, "concurrent writers")
	fs.DurationVar(&c.minRun, "min-run", 200*time.Millisecond, "earliest kill (or SIGTERM) after the writers start")
	fs.DurationVar(&c.maxRun, "max-run", time.Second, "latest kill (or SIGTERM) after the writers start")
	fs.StringVar(&c.pool, "pool", "fifo", "kvserver -pool")
	fs.StringVar(&c.dir, "dir", "", "parent of the temporary data directories (default: the system's)")
	fs.Uint64Var(&c.seed, "seed", 0, "random seed for the kill moments (0: from the clock; printed)")
	fs.BoolVar(&c.keep, "keep", false, "keep data directories and server logs even when the run passes")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	case c.mode != "crash" && c.mode != "drain" && c.mode != "all":
		return c, fmt.Errorf("-mode %q: want crash, drain or all", c.mode)
	case c.cycles <= 0 || c.writers <= 0:
		return c, fmt.Errorf("-cycles and -writers must be positive")
	case c.minRun <= 0 || c.maxRun < c.minRun:
		return c, fmt.Errorf("want 0 < -min-run <= -max-run, got %v and %v", c.minRun, c.maxRun)
	}
	if c.seed == 0 {
		c.seed = uint64(time.Now().UnixNano())
	}
	return c, nil
}
