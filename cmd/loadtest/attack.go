package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/loadgen/engine"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/report"
)

// defaultMaxErrors is -max-errors: a run with more failures than this
// exits 1, since its latencies describe a server that was not answering.
const defaultMaxErrors = 0.01

func attackFlags(o *options, maxErrors *float64, stderr io.Writer) *flag.FlagSet {
	fs := newFlagSet("attack", o, stderr)
	o.cfg.AddTarget(fs)
	o.addWorkload(fs)
	o.addEngine(fs)
	fs.Float64Var(&o.cfg.Rate, "rate", o.cfg.Rate, "requests per second (open model); 0 = closed loop, as fast as -conns go")
	fs.DurationVar(&o.cfg.Duration, "duration", o.cfg.Duration, "length of the run")
	o.addSpike(fs)
	o.cfg.AddShard(fs)
	o.addRun(fs)
	o.addOutput(fs, "summary.json, the .hgrm and .hlog files and results.bin")
	fs.Float64Var(maxErrors, "max-errors", defaultMaxErrors, "share of failed requests above which attack exits 1, after writing its results")
	return fs
}

func runAttack(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o options
	var maxErrors float64
	fs := attackFlags(&o, &maxErrors, stderr)
	if err := o.parse(fs, args); err != nil {
		return err
	}
	if err := o.cfg.Validate(); err != nil {
		return usageError(err)
	}
	if maxErrors < 0 || maxErrors > 1 {
		return usageError(fmt.Errorf("-max-errors %v is not a share in 0..1 (0.01 = 1%%)", maxErrors))
	}
	server := harness.ServerConfig(ctx, o.cfg.Target)
	var err error
	if o.out, err = report.NewDir(o.out, server, o.cfg.Workload.String(), report.RateName(o.cfg.Rate)+o.cfg.Shard.FolderName()); err != nil {
		return err
	}
	o.cfg.Out = o.out
	fmt.Fprintf(stderr, "loadtest attack: %s, %v, target %s%s\n", report.Describe(&o.cfg), o.cfg.Duration, o.cfg.Target, report.ServerText(server))
	if line := report.ShardText(&o.cfg); line != "" {
		fmt.Fprintf(stderr, "  %s: this loader asks %.0f req/s; waiting %v to start\n", line, o.cfg.AskedRate(), max(time.Until(o.cfg.StartAt), 0).Round(time.Millisecond))
	}
	res, err := record.WithCPUProfile(o.cpuProfile, func() (*record.Result, error) { return engine.Run(ctx, o.cfg, report.Progress(stderr)) })
	if err != nil {
		_ = os.Remove(o.out) // only if the run left it empty
		return err
	}
	report.Print(stdout, res)
	if err := report.WriteRun(stderr, o.out, res, server); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted after %s; partial results in %s", report.ElapsedText(res.Elapsed), o.out)
	}
	if res.ErrorRate() > maxErrors {
		return fmt.Errorf("%.2f%% of requests failed (%d of %d), above -max-errors %g%%: the latencies describe a server that was not answering; results in %s",
			100*res.ErrorRate(), res.ErrorCount, res.Sent, 100*maxErrors, o.out)
	}
	return nil
}
