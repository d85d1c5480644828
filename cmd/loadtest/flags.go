package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/flagenv"
	"github.com/kvpool/kvpool/internal/loadgen/client"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// errUsage marks errors in the command line (exit code 2).
var errUsage = errors.New("usage")

// usageErr is a command-line error: errors.Is(err, errUsage) holds and
// Unwrap yields what was wrong, so that -h's flag.ErrHelp, which run
// checks first, is still seen through it.
type usageErr struct{ err error }

func (u usageErr) Error() string        { return u.err.Error() }
func (u usageErr) Unwrap() error        { return u.err }
func (u usageErr) Is(target error) bool { return target == errUsage }

func usageError(err error) error { return usageErr{err} }

// exitError carries an exit code other than 1 for a failed run.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// options is what a load-generating subcommand's flags fill: the run's
// config.Config plus what only the command line needs. Each subcommand
// binds only the flags it takes (the add* helpers), so a flag given to a
// subcommand that does not take it is refused by the flag package.
type options struct {
	cfg        config.Config
	workload   string // -workload, parsed into cfg.Workload.Mix
	out        string
	cpuProfile string
	quiet      bool
	clients    client.Flags // parsed into cfg.Client
	// spikeAt is -spike-at, the start of a -spike without "@START";
	// spikeHasAt says -spike had one.
	spikeAt    time.Duration
	spikeHasAt bool
}

// newFlagSet starts a subcommand's flag set from config.Default.
func newFlagSet(name string, o *options, stderr io.Writer) *flag.FlagSet {
	o.cfg = config.Default()
	o.workload = o.cfg.Workload.Mix.String()
	fs := flag.NewFlagSet("loadtest "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// addWorkload: which requests (attack, saturate), and on which keys.
func (o *options) addWorkload(fs *flag.FlagSet) {
	fs.StringVar(&o.workload, "workload", o.workload, workload.Syntax())
	o.cfg.AddKeyChoice(fs)
}

// addEngine: how the load is sent (attack, saturate: the open model's
// engines), and how its clients behave. fill's closed loop retries in its
// own way (Config.Retries) and takes none of these.
func (o *options) addEngine(fs *flag.FlagSet) {
	o.cfg.AddEngine(fs)
	o.clients.Add(fs)
}

// addRun: per-request timeout and what is printed while the run goes.
func (o *options) addRun(fs *flag.FlagSet) {
	o.cfg.AddRun(fs)
	fs.BoolVar(&o.quiet, "q", false, "no progress lines")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write the loader's CPU profile to this file")
}

// defaultSpikeAt is -spike-at: late enough that the run has settled at
// -rate before the spike, so that its effect shows against a baseline.
const defaultSpikeAt = 20 * time.Second

// addSpike: a spike in the open model's rate (attack), beside -rate and
// -duration.
func (o *options) addSpike(fs *flag.FlagSet) {
	fs.Var(spikeFlag{o}, "spike", "raise the rate for a while: `SPEC` FACTORx:LENGTH (2x:10s: twice -rate for 10s) or RATE:LENGTH (30000:10s: 30,000 req/s), "+
		"starting -spike-at after the start or at @START (2x:10s@20s); -rate before and after; must end within -duration; open model and -engine fast only; "+
		"loops, shards and -loops 0 follow the whole schedule, so every loop and shard spikes at once")
	fs.DurationVar(&o.spikeAt, "spike-at", defaultSpikeAt, "when a -spike without @START starts, after the run's start")
}

// spikeFlag is -spike SPEC, read into the options' Config.Spike.
type spikeFlag struct{ o *options }

func (f spikeFlag) String() string {
	if f.o == nil {
		return ""
	}
	return f.o.cfg.Spike.String()
}

func (f spikeFlag) Set(s string) error {
	sp, err := schedule.ParseSpike(s)
	if err != nil {
		return err
	}
	f.o.cfg.Spike, f.o.spikeHasAt = sp, strings.Contains(s, "@")
	return nil
}

// addOutput: the run's folder and what is streamed into it.
func (o *options) addOutput(fs *flag.FlagSet, what string) {
	fs.StringVar(&o.out, "out", "", "new or empty directory for "+what+" (default results/<UTC time>-<pool or server>-<workload>-<rate>/)")
	o.cfg.AddOutput(fs)
}

// parse applies the arguments, then LOADTEST_<FLAG> environment defaults
// for the flags fs has that they did not give, then derived settings.
func (o *options) parse(fs *flag.FlagSet, args []string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	if fs.Lookup("workload") != nil {
		mix, err := workload.ParseMix(o.workload)
		if err != nil {
			return usageError(err)
		}
		o.cfg.Workload.Mix = mix
	}
	if o.quiet {
		o.cfg.Progress = 0
	}
	if fs.Lookup("clients") != nil {
		m, err := o.clients.Model(fs)
		if err == nil {
			err = config.ClientFits(m, o.cfg.Engine, o.cfg.Rate)
		}
		if err != nil {
			return usageError(err)
		}
		o.cfg.Client = m
	}
	if !o.cfg.Spike.IsZero() && !o.spikeHasAt {
		o.cfg.Spike.At = o.spikeAt
	}
	return nil
}

// parseFlags is fs.Parse, then the LOADTEST_<FLAG> environment defaults
// of the flags not given (flagenv), with usage errors marked.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if strings.HasPrefix(err.Error(), "flag provided but not defined") {
			err = fmt.Errorf("%w; %s does not take it (see %s -h)", err, fs.Name(), fs.Name())
		}
		return usageError(err)
	}
	if _, err := flagenv.Apply(fs, envPrefix, os.Getenv); err != nil {
		return usageError(err)
	}
	return nil
}

// envPrefix: each flag -some-name falls back to $LOADTEST_SOME_NAME.
const envPrefix = "LOADTEST_"
