package main

import (
	"context"
	"fmt"
	"io"

	"github.com/kvpool/kvpool/internal/loadgen"
)

// SaturateFile is where -out gets the curve and the verdict.
const SaturateFile = "saturate.json"

func runSaturate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o options
	fs := newFlagSet("saturate", &o, stderr)
	sc := &o.cfg.Saturate
	fs.DurationVar(&sc.SLO, "slo", sc.SLO, "corrected p99 must stay at or below this")
	fs.Float64Var(&sc.MaxErrorRate, "max-error-rate", sc.MaxErrorRate, "share of errors (503 included) must stay below this")
	fs.Float64Var(&sc.StartRate, "start-rate", sc.StartRate, "first rate of the coarse ramp")
	fs.Float64Var(&sc.MaxRate, "max-rate", sc.MaxRate, "the ramp stops here")
	fs.Float64Var(&sc.Factor, "factor", sc.Factor, "the ramp multiplies the rate by this")
	fs.DurationVar(&sc.Step, "step", sc.Step, "length of each ramp and bisection step")
	fs.Float64Var(&sc.Precision, "precision", sc.Precision, "bisection stops when (hi-lo)/lo is at most this")
	fs.DurationVar(&sc.ValidateFor, "validate", sc.ValidateFor, "length of the validating run at the result")
	fs.DurationVar(&sc.Cooldown, "cooldown", sc.Cooldown, "pause between steps so backlogs drain")
	if err := o.parse(fs, args); err != nil {
		return err
	}
	if err := o.cfg.Validate(); err != nil {
		return usageError(err)
	}
	if err := sc.Validate(); err != nil {
		return usageError(err)
	}
	fmt.Fprintf(stderr, "loadtest saturate: %s; criteria: corrected p99 ≤ %v, errors < %g%%, achieved ≥ 99%% of asked\n",
		o.cfg.Describe(), sc.SLO, 100*sc.MaxErrorRate)
	loadgen.PrintStepHeader(stdout)
	var sat *loadgen.Saturation
	err := withProfile(o.cpuProfile, func() error {
		var err error
		sat, err = loadgen.Saturate(ctx, o.cfg, func(s loadgen.Step) { loadgen.PrintStep(stdout, s) }, loadgen.PrintProgress(stderr))
		return err
	})
	if err != nil {
		return err
	}
	switch {
	case sat.Rate == 0:
		fmt.Fprintf(stdout, "\nno rate passed, not even -start-rate %.0f: lower it\n", sc.StartRate)
	case sat.Validated:
		fmt.Fprintf(stdout, "\nsaturation: %.0f req/s (validated over %v)\n", sat.Rate, sc.ValidateFor)
	default:
		fmt.Fprintf(stdout, "\n*** WARNING: the validating run at %.0f req/s failed; capacity is noisy here, rerun with a longer -step ***\nsaturation: %.0f req/s (not validated)\n", sat.Rate, sat.Rate)
	}
	if sat.HitMax {
		fmt.Fprintf(stdout, "*** WARNING: even -max-rate %.0f passed; the limit is higher ***\n", sc.MaxRate)
	}
	if sat.Validation != nil {
		fmt.Fprintln(stdout, "\nvalidating run:")
		sat.Validation.Print(stdout)
	}
	if o.out == "" {
		return nil
	}
	if sat.Validation != nil {
		if err := sat.Validation.WriteFiles(o.out); err != nil {
			return err
		}
	}
	return writeJSON(o.out, SaturateFile, sat)
}
