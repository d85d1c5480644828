// Package compare is the measuring room of `loadtest compare`: the
// runner, which starts kvserver per variant on a fresh copy of a filled
// store, runs a preset's steps (plan) and fills a result.Comparison,
// kept in compare.json; analysis derives from it, render writes the
// report. It drives kvserver as a user would, through internal/harness
// and internal/loadgen, and never imports the server's packages.
package compare

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/render"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
)

// Run runs the preset of options Validate accepted, writes compare.json
// and the report, and returns both: also when ctx was cancelled part way
// (then Interrupted is set and the report holds what finished) and when
// steps failed (listed in Failures). Progress lines go to log (nil:
// discarded). An error means the comparison could not begin (no kvserver
// binary, no folder for the report) or its files could not be written.
func Run(ctx context.Context, c Checked, log io.Writer) (*result.Comparison, *render.Report, error) {
	return runComparison(ctx, c, log, nil)
}

// runComparison is Run with a test's look at every kvserver started.
func runComparison(ctx context.Context, c Checked, log io.Writer, onStart func(string, plan.Variant, *harness.Server)) (*result.Comparison, *render.Report, error) {
	o, pl := c.o, c.pl
	p, err := plan.New(&o, pl.serverSize())
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(o.Kvserver); err != nil {
		return nil, nil, fmt.Errorf("-kvserver %s: %w; build it with `make build`", o.Kvserver, err)
	}
	if log == nil {
		log = io.Discard
	}
	r := &runner{o: o, t: o.StepTiming(), p: p, log: log, onStart: onStart, stores: map[string]string{}, pl: pl, online: onlineCPUs(),
		quietness: quietCheck{wait: o.QuietWait}}
	env := readEnvironment(pl)
	dir := filepath.Join(o.Out, fmt.Sprintf("compare-%s-%s", env.Started.Format("20060102T150405Z"), o.Preset))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("cannot create the report's folder: %w", err)
	}
	r.c = &result.Comparison{Preset: o.Preset, Options: o, Plan: p, Env: env, Dir: dir,
		Criteria: result.Criteria{MaxErrorRate: saturate.DefaultConfig().MaxErrorRate, LoaderBusy: cpuset.Busy}}
	// compare.json keeps the step lengths as run, so that a report written
	// again later says what ran, whatever the defaults have become.
	r.c.Options.Timing = &r.t
	r.tmp, err = os.MkdirTemp("", "kvpool-compare-")
	if err != nil {
		return nil, nil, fmt.Errorf("cannot create a folder for the filled store: %w", err)
	}
	defer os.RemoveAll(r.tmp)

	r.logf("compare %s: %d variants × %d workloads; %s; report in %s", o.Preset, len(p.Variants), len(p.Workloads), render.PlacementText(env), dir)
	r.runAll(ctx)
	if ctx.Err() != nil {
		r.c.Interrupted = true
	}
	// Whatever happened, the report gets written, with a context that
	// Ctrl-C no longer cancels.
	r.c.Env.LoadEnd = loadAvgText()
	r.c.Env.Finished = time.Now().UTC()
	r.diffProfiles(context.WithoutCancel(ctx))
	if err := result.Save(dir, r.c); err != nil {
		return r.c, nil, err
	}
	rep, err := render.Write(r.c, analysis.Analyze(r.c), dir)
	if err != nil {
		return r.c, rep, err
	}
	r.logf("report: %s", rep.Path)
	return r.c, rep, nil
}

// runAll runs every workload's steps until done or ctx is cancelled.
func (r *runner) runAll(ctx context.Context) {
	for i, w := range r.p.Workloads {
		wr := &result.WorkloadResult{Workload: w}
		for _, v := range r.p.Variants {
			wr.Variants = append(wr.Variants, &result.VariantResult{Variant: v, Name: v.Name()})
		}
		r.c.Workloads = append(r.c.Workloads, wr)
		seed, err := r.store(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			r.c.Failures = append(r.c.Failures, result.Failure{Workload: w, Step: "fill", Reason: err.Error()})
			return
		}
		if r.p.Writes != nil {
			r.writes(ctx, wr, seed) // its rates are its own: no search
			continue
		}
		r.saturation(ctx, wr, seed)
		if ctx.Err() != nil {
			return
		}
		if r.wantsPaired() {
			r.paired(ctx, wr, seed)
			if ctx.Err() != nil {
				return
			}
		}
		if r.p.Metastable != nil {
			r.metastable(ctx, wr, seed)
			continue
		}
		if !r.p.Fixed && !r.p.Overload {
			continue
		}
		if wr.BaseRate <= 0 {
			r.c.Failures = append(r.c.Failures, result.Failure{Workload: w, Step: "fixed, overload and profiles",
				Reason: noBaseRate(wr)})
			continue
		}
		steps := r.planner().steps(wr)
		r.logf("%s: every variant's steps over the same connections: %s", w, stepsText(steps))
		r.p.Steps = append(r.p.Steps, steps)
		r.steps(ctx, wr, seed, steps)
		if ctx.Err() != nil {
			return
		}
		if r.p.Profiles && i == 0 {
			r.profiles(ctx, wr, seed)
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// noBaseRate is why wr's later steps did not run: no search of direct
// validated a saturation to take their shares of (a rate that held only
// in the short steps was not shown sustainable, so is not taken).
func noBaseRate(wr *result.WorkloadResult) string {
	why := "direct's saturation search found no rate that held over its validation"
	if base := wr.Baseline(); base != nil && len(base.Sat) > 0 {
		s := base.Sat[len(base.Sat)-1]
		why += fmt.Sprintf(" (it ended at %s; the validation of %.0f req/s failed)", saturate.Bracket(*s.Bracket), s.Candidate)
	}
	return why + ", so there is no rate to set these steps by (see the failures above, or give -rate)"
}
