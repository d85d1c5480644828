package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/loadgen/fill"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/report"
)

// FillFile is where the run's folder gets the fill's summary and resume
// point.
const FillFile = "fill.json"

func fillFlags(o *options, ids *fill.Range, stderr io.Writer) *flag.FlagSet {
	fs := newFlagSet("fill", o, stderr)
	o.cfg.AddTarget(fs)
	o.cfg.AddKeys(fs)
	fs.IntVar(&o.cfg.Conns, "conns", o.cfg.Conns, "connections the PUTs go over, each as fast as the server answers")
	o.cfg.AddLoader(fs)
	o.addRun(fs)
	fs.StringVar(&o.out, "out", "", "new or empty directory for fill.json (default results/<UTC time>-<pool or server>-fill-<keys>/)")
	ids.From = 1
	fs.Uint64Var(&ids.From, "from", ids.From, "first id to store (resume point of an interrupted fill)")
	fs.Uint64Var(&ids.To, "to", 0, "last id to store (default -keys)")
	return fs
}

func runFill(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o options
	var ids fill.Range
	fs := fillFlags(&o, &ids, stderr)
	if err := o.parse(fs, args); err != nil {
		return err
	}
	if ids.To == 0 {
		ids.To = o.cfg.Workload.Keys
	}
	if err := fill.Validate(o.cfg, ids); err != nil {
		return usageError(err)
	}
	server := harness.ServerConfig(ctx, o.cfg.Target)
	var err error
	if o.out, err = report.NewDir(o.out, server, "fill", fmt.Sprint(ids.Len())); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "loadtest fill: ids %d..%d × %d B to %s over %d connections%s\n",
		ids.From, ids.To, o.cfg.Workload.ValueSize, o.cfg.Target, o.cfg.Conns, report.ServerText(server))
	fr, err := record.WithCPUProfile(o.cpuProfile, func() (*fill.Result, error) {
		return fill.Run(ctx, o.cfg, ids, fill.ProgressBar(stderr, ids.Len(), fill.IsTerminal(os.Stderr)))
	})
	if err != nil {
		_ = os.Remove(o.out) // only if the run left it empty
		return err
	}
	fmt.Fprintln(stderr)
	fr.Print(stdout)
	if err := report.WriteJSON(o.out, FillFile, fr.Summarize(server)); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted after %s; ids below %d are stored, resume with -from %d; summary in %s",
			report.ElapsedText(fr.Elapsed), fr.ResumeFrom, fr.ResumeFrom, o.out)
	}
	if !fr.Complete {
		return fmt.Errorf("fill incomplete; resume with -from %d (summary in %s)", fr.ResumeFrom, o.out)
	}
	return nil
}
