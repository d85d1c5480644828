// Package compare is the measuring room of `loadtest compare`: the
// runner, which starts kvserver per variant on a fresh copy of a filled
// store, runs a preset's steps (plan), each returning what it measured,
// and assembles a result.Comparison from them, kept in compare.json;
// analysis derives from it, render writes the report. It drives kvserver
// as a user would, through internal/harness and internal/loadgen, and
// never imports the server's packages.
package compare

import (
	"cmp"
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
	env := readEnvironment(pl)
	dir := filepath.Join(o.Out, fmt.Sprintf("compare-%s-%s", env.Started.Format("20060102T150405Z"), o.Preset))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("cannot create the report's folder: %w", err)
	}
	r := &runner{o: o, t: o.StepTiming(), p: p, dir: dir, log: log, onStart: onStart, stores: map[string]string{}, pl: pl, online: onlineCPUs(),
		quietness: quietCheck{wait: o.QuietWait}}
	r.tmp, err = os.MkdirTemp("", "kvpool-compare-")
	if err != nil {
		return nil, nil, fmt.Errorf("cannot create a folder for the filled store: %w", err)
	}
	defer os.RemoveAll(r.tmp)

	r.logf("compare %s: %d variants × %d workloads; %s; report in %s", o.Preset, len(p.Variants), len(p.Workloads), env.Placement(), dir)
	comparison := r.runAll(ctx, env)
	// Whatever happened, the report gets written.
	if err := result.Save(dir, comparison); err != nil {
		return comparison, nil, err
	}
	rep, err := writeReport(comparison, dir)
	if err != nil {
		return comparison, rep, err
	}
	r.logf("report: %s", rep.Path)
	return comparison, rep, nil
}

// runAll runs every workload's steps until done or ctx is cancelled, and
// assembles the comparison from what they return (with add): the one
// place that writes it. The step plan made from direct's search is the
// workload's (WorkloadResult.Steps): the plan itself is not changed.
func (r *runner) runAll(ctx context.Context, env result.Environment) *result.Comparison {
	c := &result.Comparison{Preset: r.o.Preset, Options: r.o, Plan: r.p, Env: env, Dir: r.dir,
		Criteria: result.Criteria{MaxErrorRate: saturate.DefaultConfig().MaxErrorRate, LoaderBusy: cpuset.Busy}}
	// compare.json keeps the step lengths as run, so that a report written
	// again later says what ran, whatever the defaults have become.
	c.Options.Timing = &r.t
	for i, w := range r.p.Workloads {
		wr := &result.WorkloadResult{Workload: w}
		for _, v := range r.p.Variants {
			wr.Variants = append(wr.Variants, &result.VariantResult{Variant: v, Name: v.Name()})
		}
		c.Workloads = append(c.Workloads, wr)
		seed, out, err := r.fill(ctx)
		r.add(c, wr, out)
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			c.Failures = append(c.Failures, result.Failure{Workload: w, Step: "fill", Reason: err.Error()})
			break
		}
		if r.p.Writes != nil {
			c.Writes, out = r.writes(ctx, wr, seed) // its rates are its own: no search
			r.add(c, wr, out)
			continue
		}
		r.add(c, wr, r.saturation(ctx, wr, seed))
		if ctx.Err() != nil {
			break
		}
		wr.BaseRate, wr.BaseLowerBound = baseRate(wr, r.o.Rate)
		if r.wantsPaired() {
			r.add(c, wr, r.paired(ctx, wr, seed))
			if ctx.Err() != nil {
				break
			}
		}
		if r.p.Metastable == nil && !r.p.Fixed && !r.p.Overload {
			continue
		}
		if wr.BaseRate <= 0 {
			step := "fixed, overload and profiles"
			if r.p.Metastable != nil {
				step = "metastable runs"
			}
			c.Failures = append(c.Failures, result.Failure{Workload: w, Step: step, Reason: noBaseRate(wr)})
			continue
		}
		if r.p.Metastable != nil {
			c.Metastable, out = r.metastable(ctx, wr, seed)
			r.add(c, wr, out)
			continue
		}
		wr.Steps = r.planner().steps(wr)
		r.logf("%s: every variant's steps over the same connections: %s", w, stepsText(wr.Steps))
		failed, out := r.steps(ctx, wr, seed)
		c.OverloadFailed = append(c.OverloadFailed, failed...)
		r.add(c, wr, out)
		if ctx.Err() != nil {
			break
		}
		if r.p.Profiles && i == 0 {
			c.ProfileWorkload = w
			c.Profiles, out = r.profiles(ctx, wr, seed)
			r.add(c, wr, out)
			if ctx.Err() != nil {
				break
			}
		}
	}
	c.Interrupted = ctx.Err() != nil
	c.Env.LoadEnd = loadAvgText()
	c.Env.Finished = time.Now().UTC()
	return c
}

// add adds to c, and to wr's variants, what a step returned (out): its
// records of the variants, failures, notes and loader checks, and what it
// saw of the loader and of kvserver.
func (r *runner) add(c *result.Comparison, wr *result.WorkloadResult, out outcome) {
	for i, got := range out.variants {
		v := wr.Variants[i]
		v.Sat = append(v.Sat, got.Sat...)
		v.Closed = cmp.Or(got.Closed, v.Closed)
		v.Paired = cmp.Or(got.Paired, v.Paired)
		v.Fixed = cmp.Or(got.Fixed, v.Fixed)
		v.Overload = cmp.Or(got.Overload, v.Overload)
		if v.Config == nil {
			v.Config = got.Config
		}
	}
	c.Failures = append(c.Failures, out.failures...)
	c.Notes = append(c.Notes, out.notes...)
	c.Loader = append(c.Loader, out.loader...)
	c.Env.LoaderLoops = max(c.Env.LoaderLoops, out.loops)
	c.Env.KvserverVersion = cmp.Or(c.Env.KvserverVersion, out.version)
	if out.unpinned != "" && c.Env.LoaderUnpinned == "" {
		c.Env.LoaderUnpinned = out.unpinned
		n := fmt.Sprintf("the loader could not pin itself to CPUs %s and ran unpinned: %s", out.unpinnedCPUs, out.unpinned)
		c.Notes = append(c.Notes, n)
		r.logf("note: %s", n)
	}
}

// baseRate is the rate wr's later steps take their shares of: -rate where
// given, else direct's median saturation, of validated rates only (0
// where none held: the steps that need it are skipped, runAll says why),
// with whether that is only a lower bound.
func baseRate(wr *result.WorkloadResult, rate float64) (float64, bool) {
	base := wr.Baseline()
	if rate > 0 || base == nil {
		return rate, false
	}
	return analysis.MedianSaturation(base), base.LoaderBound()
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
