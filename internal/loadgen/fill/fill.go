// Package fill loads a kvserver with the deterministic value of every id
// in a range, closed loop, as fast as the server takes them, and says
// where to resume when it could not finish.
package fill

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/engine"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/report"
)

// retries is how often fill retries a failed PUT before it gives up on
// that connection (and reports where to resume).
const retries = 3

// Range is the ids to store, From..To inclusive.
type Range struct {
	From, To uint64
}

// Len is the number of ids in r (0 if r is empty).
func (r Range) Len() uint64 {
	if r.To < r.From {
		return 0
	}
	return r.To - r.From + 1
}

// Result is the outcome of Run.
type Result struct {
	*record.Result
	Range
	// Complete is set when every id From..To was stored (acknowledged).
	Complete bool
	// ResumeFrom is the lowest id not known to be stored; rerun with
	// -from ResumeFrom to finish. Every id below it was acknowledged.
	ResumeFrom uint64
}

// Run stores the deterministic value (workload.Value) of every id in ids,
// of size load.Workload.ValueSize, with PUT over load.Conns connections,
// closed loop. Of load only the target, connections, value size, timeout
// and progress interval matter: the rate, duration and mix are fill's own.
// A failed PUT is retried; if it still fails, its connection stops and the
// result says where to resume. PUT is an upsert, so resuming from
// ResumeFrom (and rewriting some ids above it) is safe.
func Run(ctx context.Context, load config.Config, ids Range, progress func(record.Progress)) (*Result, error) {
	c, err := plan(load, ids)
	if err != nil {
		return nil, err
	}
	res, err := engine.Run(ctx, c, progress)
	if err != nil {
		return nil, err
	}
	return &Result{
		Result: res, Range: ids,
		Complete:   res.Resume >= c.Requests,
		ResumeFrom: ids.From + res.Resume,
	}, nil
}

// Validate reports the first setting of load or ids that Run would
// refuse, naming the flag.
func Validate(load config.Config, ids Range) error {
	_, err := plan(load, ids)
	return err
}

// plan is the run that stores ids: closed loop, one request per id.
func plan(load config.Config, ids Range) (config.Config, error) {
	if ids.From < 1 || ids.To < ids.From {
		return load, fmt.Errorf("need 1 ≤ -from (%d) ≤ -to (%d)", ids.From, ids.To)
	}
	c := load
	c.Rate, c.Duration, c.Requests = 0, 0, ids.Len()
	c.MaxConns = c.Conns
	c.Retries = retries
	c.KeepResults = false
	c.Out = ""
	c.Engine = config.EngineFast
	c.Workload.Sequential, c.Workload.First = true, ids.From
	c.Name = "fill"
	return c, c.Validate()
}

// Print writes the fill's outcome and, if it is incomplete, how to resume.
func (fr *Result) Print(w io.Writer) {
	r := fr.Result
	fmt.Fprintf(w, "fill: %d PUTs of %d B (ids %d..%d) in %.1fs: %.0f/s, %s written, %d errors\n",
		r.Sent, r.Config.Workload.ValueSize, fr.From, fr.To, r.Elapsed.Seconds(), r.AchievedRate(), report.BytesText(r.BytesOut), r.ErrorCount)
	fmt.Fprintf(w, "status codes: %s\n", report.CodesText(r.Codes))
	if line := report.LoaderText(r); line != "" {
		fmt.Fprintf(w, "%s\n", line)
	}
	report.PrintErrors(w, r.Errors)
	if fr.Complete {
		fmt.Fprintf(w, "all ids %d..%d stored\n", fr.From, fr.To)
		return
	}
	fmt.Fprintf(w, "*** INCOMPLETE: ids below %d are stored; resume with: loadtest fill -from %d -to %d -value-size %d ***\n",
		fr.ResumeFrom, fr.ResumeFrom, fr.To, r.Config.Workload.ValueSize)
}

// Summary is fill.json: the run's summary plus the range and where to
// resume.
type Summary struct {
	report.Summary
	From       uint64 `json:"from"`
	To         uint64 `json:"to"`
	Complete   bool   `json:"complete"`
	ResumeFrom uint64 `json:"resume_from"`
}

// Summarize reduces fr to fill.json; server is the target's
// kvserver_config_info (nil if it is not a kvserver).
func (fr *Result) Summarize(server map[string]string) Summary {
	return Summary{report.Summarize(fr.Result, server), fr.From, fr.To, fr.Complete, fr.ResumeFrom}
}

// IsTerminal reports whether f is a character device (a terminal), where a
// progress bar may redraw its line.
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// ProgressBar returns a progress callback drawing a bar for total PUTs. On
// a terminal it redraws one line (\r); elsewhere it writes a line each time.
func ProgressBar(w io.Writer, total uint64, terminal bool) func(record.Progress) {
	const width = 30
	return func(p record.Progress) {
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
