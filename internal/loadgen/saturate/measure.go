package saturate

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/report"
)

// File is where a run's folder gets the curve and the verdict.
const File = "saturate.json"

// Measure is `loadtest saturate` once its settings hold: into sc.Out, a
// new folder (report.NewDir), it runs cc.Rounds closed-loop rounds first
// (none for 0), whose median throughput anchors the search, then the
// search. It prints the closed loop, each step, the last validating run
// and the bracket on stdout, what it is doing on stderr, and writes the
// validating run's files and File. The verdict is the caller's to print
// (PrintVerdict), with what it means for the exit status. Interrupted, it
// keeps the curve so far, if a step finished; a folder left empty is
// removed.
func Measure(ctx context.Context, load config.Config, sc Config, cc ClosedConfig, server map[string]string, stdout, stderr io.Writer) (*Saturation, error) {
	fmt.Fprintf(stderr, "loadtest saturate: %s, target %s%s\n", report.DescribeLoad(&load), load.Target, report.ServerText(server))
	fmt.Fprintf(stderr, "  %s\n", sc.WatchServerCPU(ctx, load.Target, load.CPUs))
	start := time.Now()
	var closed *ClosedLoop
	if cc.Rounds > 0 {
		fmt.Fprintf(stderr, "  closed loop: %d rounds of %v over %d connections ...\n", cc.Rounds, cc.For, load.Conns)
		var err error
		if closed, err = MeasureClosedLoop(ctx, load, cc, &sc); err != nil {
			_ = os.Remove(sc.Out)
			if ctx.Err() != nil {
				return nil, fmt.Errorf("interrupted after %s, in the closed loop", report.ElapsedText(time.Since(start)))
			}
			return nil, err
		}
		PrintClosedLoop(stdout, closed)
		if closed.Throughput > 0 {
			sc.Anchor = closed.Throughput
		}
	}
	PrintSearchHeader(stderr, &sc)
	PrintStepHeader(stdout)
	sat, err := Run(ctx, load, sc, func(s Step) { PrintStep(stdout, s) }, report.Progress(stderr))
	if sat != nil {
		sat.ClosedLoop = closed
	}
	if ctx.Err() != nil {
		if sat != nil && len(sat.Steps) > 0 {
			_ = report.WriteJSON(sc.Out, File, sat)
			return nil, fmt.Errorf("interrupted after %s; the curve so far is in %s", report.ElapsedText(time.Since(start)), sc.Out)
		}
		_ = os.Remove(sc.Out)
		return nil, fmt.Errorf("interrupted after %s, before any step finished", report.ElapsedText(time.Since(start)))
	}
	if err != nil {
		_ = os.Remove(sc.Out) // only if nothing was written
		return nil, err
	}
	if sat.HitMax {
		fmt.Fprintf(stdout, "*** WARNING: even -max-rate %.0f held; the limit is higher ***\n", sc.MaxRate)
	}
	if sat.Validation != nil {
		fmt.Fprintln(stdout, "\nlast validating run:")
		report.Print(stdout, sat.Validation)
		if err := report.WriteRun(stderr, sc.Out, sat.Validation, server); err != nil {
			return nil, err
		}
	}
	PrintBracket(stdout, &sc, sat)
	if sat.AnchorExceeded {
		fmt.Fprintf(stdout, "note: a step at the closed loop's %.0f req/s held, so it bounded nothing; the search climbed past it\n", sat.Anchor)
	}
	PrintOpenVsClosed(stdout, sat, closed)
	fmt.Fprintf(stderr, "search took %s\n", time.Since(start).Round(time.Second))
	return sat, report.WriteJSON(sc.Out, File, sat)
}
