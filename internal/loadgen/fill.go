package loadgen

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// fillRetries is how often fill retries a failed PUT before it gives up on
// that connection (and reports where to resume).
const fillRetries = 3

// FillResult is the outcome of Fill.
type FillResult struct {
	*Result
	From, To uint64
	// Complete is set when every id From..To was stored (acknowledged).
	Complete bool
	// ResumeFrom is the lowest id not known to be stored; rerun with
	// -from ResumeFrom to finish. Every id below it was acknowledged.
	ResumeFrom uint64
}

// Fill stores the deterministic Value of every id cfg.Fill.From..To (size
// cfg.Workload.ValueSize) with PUT, closed loop over cfg.Conns connections,
// as fast as the server takes them. A failed PUT is retried; if it still
// fails, its connection stops and the result says where to resume. PUT is
// an upsert, so resuming from ResumeFrom (and rewriting some ids above it)
// is safe.
func Fill(ctx context.Context, cfg Config, progress func(Progress)) (*FillResult, error) {
	f := cfg.Fill
	if f.To == 0 {
		f.To = cfg.Workload.Keys
	}
	if f.From < 1 || f.To < f.From {
		return nil, fmt.Errorf("need 1 ≤ -from (%d) ≤ -to (%d)", f.From, f.To)
	}
	c := cfg
	c.Rate, c.Duration, c.Requests = 0, 0, f.To-f.From+1
	c.MaxConns = c.Conns
	c.Retries = fillRetries
	c.KeepResults = false
	c.Engine = EngineFast
	c.Workload.Sequential, c.Workload.First = true, f.From
	c.Name = "fill"
	res, err := Run(ctx, c, progress)
	if err != nil {
		return nil, err
	}
	return &FillResult{
		Result: res, From: f.From, To: f.To,
		Complete:   res.Resume >= c.Requests,
		ResumeFrom: f.From + res.Resume,
	}, nil
}

// Print writes the fill's outcome and, if it is incomplete, how to resume.
func (fr *FillResult) Print(w io.Writer) {
	r := fr.Result
	fmt.Fprintf(w, "fill: %d PUTs of %d B (ids %d..%d) in %.1fs: %.0f/s, %s written, %d errors\n",
		r.Sent, r.Config.Workload.ValueSize, fr.From, fr.To, r.Elapsed.Seconds(), r.AchievedRate(), bytesText(r.BytesOut), r.ErrorCount)
	fmt.Fprintf(w, "status codes: %s\n", codesText(r.Codes))
	for _, e := range sortedErrors(r.Errors) {
		fmt.Fprintf(w, "  %8d  %s\n", e.n, e.msg)
	}
	if fr.Complete {
		fmt.Fprintf(w, "all ids %d..%d stored\n", fr.From, fr.To)
		return
	}
	fmt.Fprintf(w, "*** INCOMPLETE: ids below %d are stored; resume with: loadtest fill -from %d -to %d -value-size %d ***\n",
		fr.ResumeFrom, fr.ResumeFrom, fr.To, r.Config.Workload.ValueSize)
}

// PrintFillProgress returns a progress callback drawing a progress bar
// for total PUTs. On a terminal it redraws one line (\r); elsewhere it
// writes a line per update.
func PrintFillProgress(w io.Writer, total uint64, terminal bool) func(Progress) {
	const width = 30
	return func(p Progress) {
		frac := float64(p.Completed) / float64(max(total, 1))
		frac = min(frac, 1)
		n := int(frac * width)
		eta := "?"
		if p.Rate > 0 {
			eta = (time.Duration(float64(int64(total)-p.Completed)/p.Rate) * time.Second).Round(time.Second).String()
		}
		line := fmt.Sprintf("[%s%s] %5.1f%%  %d/%d  %.0f PUT/s  ETA %s  errors %d",
			strings.Repeat("#", n), strings.Repeat(".", width-n), 100*frac, p.Completed, total, p.Rate, eta, p.Errors)
		if terminal {
			fmt.Fprintf(w, "\r%s\x1b[K", line)
		} else {
			fmt.Fprintln(w, line)
		}
	}
}
