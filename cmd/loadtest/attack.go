package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/kvpool/kvpool/internal/loadgen"
)

func runAttack(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o options
	fs := newFlagSet("attack", &o, stderr)
	if err := o.parse(fs, args); err != nil {
		return err
	}
	if err := o.cfg.Validate(); err != nil {
		return usageError(err)
	}
	fmt.Fprintf(stderr, "loadtest attack: %s, %v, target %s\n", o.cfg.Describe(), o.cfg.Duration, o.cfg.Target)
	var res *loadgen.Result
	err := withProfile(o.cpuProfile, func() error {
		var err error
		res, err = loadgen.Run(ctx, o.cfg, loadgen.PrintProgress(stderr))
		return err
	})
	if err != nil {
		return err
	}
	res.Print(stdout)
	if o.out != "" {
		if err := res.WriteFiles(o.out); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s/{%s,%s,%s,%s}\n", o.out, loadgen.SummaryFile, loadgen.CorrectedFile, loadgen.UncorrectedFile, loadgen.ResultsFile)
	}
	return ctx.Err()
}

// withProfile runs f under a CPU profile written to path ("" = none).
func withProfile(path string, f func() error) error {
	if path == "" {
		return f()
	}
	pf, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cannot create CPU profile: %w", err)
	}
	defer pf.Close()
	if err := pprof.StartCPUProfile(pf); err != nil {
		return fmt.Errorf("cannot start CPU profile: %w", err)
	}
	defer pprof.StopCPUProfile()
	return f()
}
