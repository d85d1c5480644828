package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/kvpool/kvpool/internal/loadgen"
)

// FillFile is where -out gets the fill's summary and resume point.
const FillFile = "fill.json"

func runFill(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o options
	fs := newFlagSet("fill", &o, stderr)
	o.cfg.Fill.From = 1
	fs.Uint64Var(&o.cfg.Fill.From, "from", o.cfg.Fill.From, "first id to store (resume point of an interrupted fill)")
	fs.Uint64Var(&o.cfg.Fill.To, "to", 0, "last id to store (default -keys)")
	if err := o.parse(fs, args); err != nil {
		return err
	}
	o.cfg.Rate = 0 // fill is closed loop; -rate and -duration do not apply
	o.cfg.Duration = 0
	o.cfg.Requests = 1 // validated by Fill; keeps Config.Validate's closed-loop check quiet
	if err := o.cfg.Validate(); err != nil {
		return usageError(err)
	}
	to := o.cfg.Fill.To
	if to == 0 {
		to = o.cfg.Workload.Keys
	}
	fmt.Fprintf(stderr, "loadtest fill: ids %d..%d × %d B to %s over %d connections\n",
		o.cfg.Fill.From, to, o.cfg.Workload.ValueSize, o.cfg.Target, o.cfg.Conns)
	var total uint64
	if to >= o.cfg.Fill.From {
		total = to - o.cfg.Fill.From + 1
	}
	var fr *loadgen.FillResult
	err := withProfile(o.cpuProfile, func() error {
		var err error
		fr, err = loadgen.Fill(ctx, o.cfg, loadgen.PrintFillProgress(stderr, total, isTerminal(os.Stderr)))
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(stderr)
	fr.Print(stdout)
	if o.out != "" {
		err := writeJSON(o.out, FillFile, struct {
			loadgen.Summary
			From       uint64 `json:"from"`
			To         uint64 `json:"to"`
			Complete   bool   `json:"complete"`
			ResumeFrom uint64 `json:"resume_from"`
		}{fr.Summary(), fr.From, fr.To, fr.Complete, fr.ResumeFrom})
		if err != nil {
			return err
		}
	}
	if !fr.Complete {
		return fmt.Errorf("fill incomplete; resume with -from %d", fr.ResumeFrom)
	}
	return nil
}

// isTerminal reports whether f is a character device (a terminal), where a
// progress bar may redraw its line.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
