package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvpool/kvpool/internal/loadgen"
)

// errUsage marks errors in the command line (exit code 2).
var errUsage = errors.New("usage")

// usageErr is a command-line error: errors.Is(err, errUsage) holds and
// Unwrap yields what was wrong.
type usageErr struct{ err error }

func (u usageErr) Error() string        { return u.err.Error() }
func (u usageErr) Unwrap() error        { return u.err }
func (u usageErr) Is(target error) bool { return target == errUsage }

func usageError(err error) error { return usageErr{err} }

// options is the whole configuration of one invocation: the engine's
// Config plus what only the command line needs.
type options struct {
	cfg        loadgen.Config
	workload   string // -workload, parsed into cfg.Workload.ReadShare
	out        string
	cpuProfile string
	quiet      bool
}

// newFlagSet binds the flags every load-generating subcommand shares to o,
// starting from loadgen.DefaultConfig.
func newFlagSet(name string, o *options, stderr io.Writer) *flag.FlagSet {
	o.cfg = loadgen.DefaultConfig()
	o.workload = "get"
	c := &o.cfg
	fs := flag.NewFlagSet("loadtest "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Target, "target", c.Target, "server base URL (loopback only unless -allow-remote)")
	fs.BoolVar(&c.AllowRemote, "allow-remote", false, "permit a -target that is not a loopback address")
	fs.StringVar(&o.workload, "workload", o.workload, "get | put | mixed:R (R = read share, e.g. mixed:0.9)")
	fs.Uint64Var(&c.Workload.Keys, "keys", c.Workload.Keys, "requests use ids 1..keys")
	fs.StringVar(&c.Workload.Dist, "dist", c.Workload.Dist, "key distribution: uniform | zipf (id 1 hottest)")
	fs.Float64Var(&c.Workload.ZipfS, "zipf-s", c.Workload.ZipfS, "Zipf exponent s > 1 for -dist zipf")
	fs.IntVar(&c.Workload.ValueSize, "value-size", c.Workload.ValueSize, "PUT body size in bytes")
	fs.IntVar(&c.Conns, "conns", c.Conns, "connections opened at the start")
	fs.IntVar(&c.MaxConns, "max-conns", c.MaxConns, "cap on connections opened when all are busy (open model)")
	fs.Float64Var(&c.Rate, "rate", c.Rate, "requests per second (open model); 0 = closed loop, as fast as -conns go")
	fs.DurationVar(&c.Duration, "duration", c.Duration, "length of the run")
	fs.DurationVar(&c.Timeout, "timeout", c.Timeout, "per-request timeout; also the most a run waits past -duration for late sends")
	fs.StringVar(&c.Engine, "engine", c.Engine, "fast (own pacer over fasthttp-parsed raw connections) | vegeta (vegeta's attacker)")
	fs.StringVar(&c.Transport, "transport", c.Transport, "fast engine connections: raw | hostclient (fasthttp.HostClient)")
	fs.DurationVar(&c.Progress, "progress", c.Progress, "interval of progress lines on stderr (0 = none)")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the key choice")
	fs.DurationVar(&c.PacerMinSleep, "pacer-min-sleep", c.PacerMinSleep, "shortest pacer wait: lower follows the schedule closer, at more loader CPU")
	fs.DurationVar(&c.GrowAfter, "grow-after", c.GrowAfter, "open another connection when a due request waited this long with all busy")
	fs.StringVar(&o.out, "out", "", "directory for summary.json, .hgrm files and results.bin")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write the loader's CPU profile to this file")
	fs.BoolVar(&o.quiet, "q", false, "no progress lines")
	return fs
}

// parse applies LOADTEST_<FLAG> environment defaults, then the arguments,
// then derived settings.
func (o *options) parse(fs *flag.FlagSet, args []string) error {
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		env := "LOADTEST_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok && envErr == nil {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("%s=%q: %w", env, v, err)
			}
		}
	})
	if envErr != nil {
		return usageError(envErr)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError(err)
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	share, err := loadgen.ParseMix(o.workload)
	if err != nil {
		return usageError(err)
	}
	o.cfg.Workload.ReadShare = share
	if o.quiet {
		o.cfg.Progress = 0
	}
	o.cfg.KeepResults = o.out != ""
	return nil
}

// writeJSON writes v, indented, as dir/name, creating dir if needed.
func writeJSON(dir, name string, v any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create output directory: %w", err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("cannot encode %s: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("cannot write %s: %w", name, err)
	}
	return nil
}
