package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/report"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
)

// Saturate's own exit statuses.
const (
	// exitNotValidated: rates held over the search's steps, but none held
	// over its validating runs (each failed twice): no saturation.
	exitNotValidated = 3
	// exitLoaderBound: the result is a lower bound: the loader, not the
	// server, could not offer more (saturate.Saturation.LoaderBound).
	exitLoaderBound = 4
)

// saturateOptions are saturate's own settings beside the search's.
type saturateOptions struct {
	quick  bool
	closed saturate.ClosedConfig
}

func saturateFlags(o *options, sc *saturate.Config, so *saturateOptions, stderr io.Writer) *flag.FlagSet {
	fs := newFlagSet("saturate", o, stderr)
	*sc = saturate.DefaultConfig()
	so.closed = sc.ClosedLoopConfig()
	so.closed.For = 0 // half of -step, once it is known
	o.cfg.AddTarget(fs)
	o.addWorkload(fs)
	o.addEngine(fs)
	o.addRun(fs)
	o.addOutput(fs, "saturate.json and the last validating run's files")
	sc.AddFlags(fs, &so.closed)
	q := saturate.QuickConfig()
	fs.BoolVar(&so.quick, "quick", false, fmt.Sprintf("the quick search's lengths for every one not given: -step %v -validate %v -cooldown %v -precision %g",
		q.Step, q.ValidateFor, q.Cooldown, q.Precision))
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: loadtest saturate [flags]\n\n"+
			"Runs a closed loop first (-closed-rounds, median), then searches the open model\n"+
			"from half its throughput. Each step is judged interval by interval: the first\n"+
			"is its warm-up; it holds when 90%% of the others keep corrected p99 <= -slo\n"+
			"and errors < -max-error-rate, and its backlog does not grow. A failed step is\n"+
			"re-tested at once; a rate bounds the search only when it fails twice. The\n"+
			"answer is a bracket (highest held - lowest failed twice), its lower end\n"+
			"validated by a -validate run (which can send the search lower). The\n"+
			"intervals are the search's own: -interval does not apply.\n\n"+
			"Exit status: 0 a validated saturation; 1 no rate held, or the run failed;\n"+
			"2 bad usage; %d no rate held over a validating run (-max-validations tried);\n"+
			"%d a lower bound: the loader could not offer more (a loader-bound failure:\n"+
			"the loader at 90%% or more of its CPUs, or falling behind while it had\n"+
			"connections free and its own sends were late in more than 1 of 10 intervals).\n\nFlags:\n", exitNotValidated, exitLoaderBound)
		fs.PrintDefaults()
	}
	return fs
}

// settle applies -quick (the quick search's lengths for every one fs was
// not given) and the closed loop's defaults that follow from the step:
// rounds of half a step, the search's cooldown after each.
func (so *saturateOptions) settle(fs *flag.FlagSet, sc *saturate.Config) {
	defer func() {
		if so.closed.For == 0 {
			so.closed.For = sc.ClosedLoopConfig().For
		}
		so.closed.Cooldown = sc.Cooldown
	}()
	if !so.quick {
		return
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	q := saturate.QuickConfig()
	if !set["step"] {
		sc.Step = q.Step
	}
	if !set["validate"] {
		sc.ValidateFor = q.ValidateFor
	}
	if !set["cooldown"] {
		sc.Cooldown = q.Cooldown
	}
	if !set["precision"] {
		sc.Precision = q.Precision
	}
}

func runSaturate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o options
	var sc saturate.Config
	var so saturateOptions
	fs := saturateFlags(&o, &sc, &so, stderr)
	if err := o.parse(fs, args); err != nil {
		return err
	}
	so.settle(fs, &sc)
	if err := o.cfg.Validate(); err != nil {
		return usageError(err)
	}
	if err := sc.Validate(); err != nil {
		return usageError(err)
	}
	if so.closed.Rounds < 0 || so.closed.For < 0 {
		return usageError(fmt.Errorf("-closed-rounds %d -closed-for %v: give 0 rounds (no closed loop) or rounds of a positive length (0: half of -step)", so.closed.Rounds, so.closed.For))
	}
	server := harness.ServerConfig(ctx, o.cfg.Target)
	var err error
	if sc.Out, err = report.NewDir(o.out, server, o.cfg.Workload.String(), "saturate"); err != nil {
		return err
	}
	sat, err := record.WithCPUProfile(o.cpuProfile, func() (*saturate.Saturation, error) {
		return saturate.Measure(ctx, o.cfg, sc, so.closed, server, stdout, stderr)
	})
	if err != nil {
		return err
	}
	return saturateOutcome(stdout, &sc, sat)
}

// saturateOutcome prints the verdict line of a finished search and
// returns what decides the exit status: nil (0), an error (1), or an
// exitError with exitNotValidated or exitLoaderBound.
func saturateOutcome(stdout io.Writer, sc *saturate.Config, sat *saturate.Saturation) error {
	switch outcome, err := saturate.PrintVerdict(stdout, sc, sat); outcome {
	case saturate.NoneValidated:
		return exitError{exitNotValidated, err}
	case saturate.LowerBound:
		return exitError{exitLoaderBound, err}
	default:
		return err
	}
}
