package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/loadgen/report"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
	"github.com/kvpool/kvpool/internal/loadgen/serverstat"
)

// SaturateFile is where the run's folder gets the curve and the verdict.
const SaturateFile = "saturate.json"

// Saturate's own exit statuses.
const (
	// exitNotValidated: the search found the server's limit, but the
	// validating run at it failed (server-bound).
	exitNotValidated = 3
	// exitLoaderBound: the result is a lower bound: the loader, not the
	// server, could not offer more (saturate.Saturation.LoaderBound).
	exitLoaderBound = 4
)

func saturateFlags(o *options, sc *saturate.Config, stderr io.Writer) *flag.FlagSet {
	fs := newFlagSet("saturate", o, stderr)
	*sc = saturate.DefaultConfig()
	o.addTarget(fs)
	o.addWorkload(fs)
	o.addEngine(fs)
	o.addRun(fs)
	o.addOutput(fs, "saturate.json and the validating run's files")
	fs.DurationVar(&sc.SLO, "slo", sc.SLO, "corrected p99 must stay at or below this")
	fs.Float64Var(&sc.MaxErrorRate, "max-error-rate", sc.MaxErrorRate, "share of errors (503 included) must stay below this")
	fs.Float64Var(&sc.StartRate, "start-rate", sc.StartRate, "first rate of the coarse ramp")
	fs.Float64Var(&sc.MaxRate, "max-rate", sc.MaxRate, "the ramp stops here")
	fs.Float64Var(&sc.Factor, "factor", sc.Factor, "the ramp multiplies the rate by this")
	fs.DurationVar(&sc.Step, "step", sc.Step, "length of each ramp and bisection step")
	fs.Float64Var(&sc.Precision, "precision", sc.Precision, "bisection stops when (hi-lo)/lo is at most this")
	fs.DurationVar(&sc.ValidateFor, "validate", sc.ValidateFor, "length of the validating run at the result")
	fs.DurationVar(&sc.Cooldown, "cooldown", sc.Cooldown, "pause between steps so backlogs drain")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: loadtest saturate [flags]\n\n"+
			"Exit status: 0 a validated result; 1 no rate passed, or the run failed;\n"+
			"2 bad usage; %d a rate was found but the validating run at it failed;\n"+
			"%d a lower bound: the loader could not offer more (a loader-bound step:\n"+
			"the loader at 90%% or more of its CPUs, or falling behind while the server\n"+
			"stayed under 90%% of its own, as read from its /metrics).\n\nFlags:\n", exitNotValidated, exitLoaderBound)
		fs.PrintDefaults()
	}
	return fs
}

func runSaturate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o options
	var sc saturate.Config
	fs := saturateFlags(&o, &sc, stderr)
	if err := o.parse(fs, args); err != nil {
		return err
	}
	if err := o.cfg.Validate(); err != nil {
		return usageError(err)
	}
	if err := sc.Validate(); err != nil {
		return usageError(err)
	}
	server := serverConfig(ctx, o.cfg.Target)
	if o.out == "" {
		o.out = defaultOutDir(time.Now(), server, o.cfg.Workload.String(), "saturate")
	}
	if err := prepareOutDir(o.out); err != nil {
		return err
	}
	sc.Out = o.out
	fmt.Fprintf(stderr, "loadtest saturate: %s, target %s%s\n", report.DescribeLoad(&o.cfg), o.cfg.Target, serverText(server))
	fmt.Fprintf(stderr, "  search: ramp from %.0f req/s ×%g up to %.0f, steps of %v (+%v cooldown), bisect to %g%%, validate %v\n",
		sc.StartRate, sc.Factor, sc.MaxRate, sc.Step, sc.Cooldown, 100*sc.Precision, sc.ValidateFor)
	fmt.Fprintf(stderr, "  criteria: corrected p99 ≤ %v, errors < %g%%, every request sent at ≥ 99%% of the asked rate\n", sc.SLO, 100*sc.MaxErrorRate)
	fmt.Fprintf(stderr, "  %s\n", installServerCPU(ctx, &sc, o.cfg.Target, o.cfg.CPUs))
	saturate.PrintStepHeader(stdout)
	start := time.Now()
	var sat *saturate.Saturation
	err := withProfile(o.cpuProfile, func() error {
		var err error
		sat, err = saturate.Run(ctx, o.cfg, sc, func(s saturate.Step) { saturate.PrintStep(stdout, s) }, report.Progress(stderr))
		return err
	})
	if ctx.Err() != nil {
		if sat != nil && len(sat.Steps) > 0 {
			_ = report.WriteJSON(o.out, SaturateFile, sat)
			return fmt.Errorf("interrupted after %s; the curve so far is in %s", elapsedText(time.Since(start)), o.out)
		}
		_ = os.Remove(o.out)
		return fmt.Errorf("interrupted after %s, before any step finished", elapsedText(time.Since(start)))
	}
	if err != nil {
		_ = os.Remove(o.out) // only if nothing was written
		return err
	}
	if sat.HitMax {
		fmt.Fprintf(stdout, "*** WARNING: even -max-rate %.0f passed; the limit is higher ***\n", sc.MaxRate)
	}
	if sat.Validation != nil {
		fmt.Fprintln(stdout, "\nvalidating run:")
		report.Print(stdout, sat.Validation)
		if err := writeRun(o.out, sat.Validation, server, stderr); err != nil {
			return err
		}
	}
	if err := report.WriteJSON(o.out, SaturateFile, sat); err != nil {
		return err
	}
	return saturateOutcome(stdout, &sc, sat)
}

// installServerCPU sets sc.ServerCPU to read target's /metrics if a first
// reading works, and says what the steps will know of the server's CPU.
func installServerCPU(ctx context.Context, sc *saturate.Config, target string, loaderCPUs cpuset.Set) string {
	_, cpus, err := serverstat.CPU(ctx, target)
	if err != nil {
		return fmt.Sprintf("server CPU: unknown (%v); only the loader's own CPU can show a step loader-bound", err)
	}
	sc.ServerCPU = func(ctx context.Context) (time.Duration, int, error) { return serverstat.CPU(ctx, target) }
	if sc.Shared = sharesCPUs(target, loaderCPUs, cpus); sc.Shared {
		return fmt.Sprintf("server CPU: read from its /metrics around each step (%d CPUs, which this loader shares: it runs on the same machine, neither pinned apart); a step is loader-bound when the loader used ≥ 90%% of its CPUs, or fell behind with the CPUs the two share under 90%% busy",
			cpus)
	}
	return fmt.Sprintf("server CPU: read from its /metrics around each step (%d CPUs); a step is loader-bound when the loader used ≥ 90%% of its CPUs, or fell behind with the server under 90%% of its own",
		cpus)
}

// sharesCPUs guesses whether a server on target shares the loader's
// CPUs: it is on this machine (a loopback target), the loader is not
// pinned (-cpus) and may use every CPU, and the server's GOMAXPROCS is
// the machine's count, as a server not pinned to a subset has it. A server
// pinned apart (taskset, or -cpus for the loader) reads as not sharing.
func sharesCPUs(target string, loaderCPUs cpuset.Set, serverCPUs int) bool {
	u, err := url.Parse(target)
	if err != nil || !loaderCPUs.IsEmpty() {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	if !(u.Hostname() == "localhost" || ip != nil && ip.IsLoopback()) {
		return false
	}
	online, err := cpuset.Online()
	affinity, aerr := cpuset.Affinity()
	return err == nil && aerr == nil && affinity == online && serverCPUs == online.Len()
}

// saturateOutcome prints the verdict line of a finished search and
// returns what decides the exit status: nil (0), an error (1), or an
// exitError with exitNotValidated or exitLoaderBound.
func saturateOutcome(stdout io.Writer, sc *saturate.Config, sat *saturate.Saturation) error {
	var last saturate.Step
	if len(sat.Steps) > 0 {
		last = sat.Steps[len(sat.Steps)-1]
	}
	const more = "give it more CPUs (-cpus) or more hosts (-shard, merge)"
	switch {
	case sat.Rate == 0 && sat.LoaderBound:
		fmt.Fprintf(stdout, "\nno rate passed, not even -start-rate %.0f, and the loader was the limit: %s\n", sc.StartRate, sat.Why)
		return fmt.Errorf("no rate passed, not even -start-rate %.0f, and the loader was the limit (%s): %s, or lower -start-rate", sc.StartRate, sat.Why, more)
	case sat.Rate == 0:
		fmt.Fprintf(stdout, "\nno rate passed, not even -start-rate %.0f\n", sc.StartRate)
		return fmt.Errorf("no rate passed, not even -start-rate %.0f: lower -start-rate, or raise -slo if the server is slow by design", sc.StartRate)
	case !sat.Validated && !last.LoaderBound:
		fmt.Fprintf(stdout, "\nsaturation: %.0f req/s NOT VALIDATED: the %v validating run at it failed (%s)\n", sat.Rate, sc.ValidateFor, last.Verdict)
		return exitError{exitNotValidated, fmt.Errorf("the validating run at %.0f req/s failed: capacity is noisy here; rerun with a longer -step (e.g. %v) so the steps see what the validation sees, on a quieter machine, or with the loader and server pinned to separate cores",
			sat.Rate, 2*sc.Step)}
	case sat.LoaderBound:
		validated := "not validated"
		if sat.Validated {
			validated = fmt.Sprintf("validated over %v", sc.ValidateFor)
		}
		fmt.Fprintf(stdout, "\nsaturation: ≥ %.0f req/s (%s), loader-bound with %d loader CPUs: %s\n  %s\n",
			sat.Rate, validated, sat.LoaderCPUs, more, sat.Why)
		return exitError{exitLoaderBound, fmt.Errorf("%.0f req/s is only a lower bound: the loader could not offer more (%s); %s", sat.Rate, sat.Why, more)}
	}
	fmt.Fprintf(stdout, "\nsaturation: %.0f req/s (validated over %v)\n", sat.Rate, sc.ValidateFor)
	return nil
}
