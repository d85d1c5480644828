package compare

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/loadgen/engine"
	"github.com/kvpool/kvpool/internal/pprofdiff"
)

// store returns a store filled with o.Keys values of o.ValueSize, filling
// it on first use: kvserver (direct) on an empty folder, loadgen's fill,
// stop. Every run then starts on its own copy.
func (r *runner) store(ctx context.Context) (string, error) {
	key := fmt.Sprintf("%d-%d", r.o.Keys, r.o.ValueSize)
	if dir, ok := r.stores[key]; ok {
		return dir, nil
	}
	dir := filepath.Join(r.tmp, "store-"+key)
	r.logf("filling a store: %d ids × %d B", r.o.Keys, r.o.ValueSize)
	o := harness.Options{Binary: r.o.Kvserver, Args: []string{"-pool", plan.Baseline}, DataDir: dir, CPUs: r.pl.Server}
	srv, err := harness.Start(ctx, o)
	if err != nil {
		return "", fmt.Errorf("cannot start kvserver to fill the store: %w", err)
	}
	elapsed, rate, err := fillStore(ctx, srv.URL, r.o.Keys, r.o.ValueSize, r.pl.Loader)
	if err == nil {
		r.settle(ctx, srv, "the filled store", settleFill)
	}
	stopErr := srv.Stop(stopTimeout)
	switch {
	case err != nil:
		return "", fmt.Errorf("fill: %w; kvserver's log:\n%s", err, srv.LogTail(10))
	case stopErr != nil:
		return "", fmt.Errorf("kvserver did not stop cleanly after the fill: %w", stopErr)
	}
	r.logf("filled in %.1fs (%.0f PUT/s)", elapsed.Seconds(), rate)
	// Once more, so that what the first server left in its log (the last
	// memtable, which Pebble does not flush at close) is flushed and
	// compacted here rather than by every server started on a copy.
	if srv, err = harness.Start(ctx, o); err != nil {
		return "", fmt.Errorf("cannot restart kvserver on the filled store: %w", err)
	}
	r.settle(ctx, srv, "the filled store, reopened", settleFill)
	if err := srv.Stop(stopTimeout); err != nil {
		return "", fmt.Errorf("kvserver did not stop cleanly on the filled store: %w", err)
	}
	r.stores[key] = dir
	return dir, nil
}

// saturation runs the saturation searches of wl: every variant (or only
// direct), -repeat times, direct first in each round; then sets BaseRate.
func (r *runner) saturation(ctx context.Context, wr *result.WorkloadResult, seed string) {
	base := wr.Baseline()
	if r.o.Rate > 0 {
		wr.BaseRate = r.o.Rate
		if !r.p.SaturateAll {
			return
		}
	}
	// hint is direct's first saturation per CPU count: later searches
	// ramp from half of it, saving the steps far below any pool's limit
	// (one below the start is found by bisection down from it).
	hint := map[int]float64{}
	for rep := 1; rep <= r.o.Repeat; rep++ {
		for _, v := range wr.Variants {
			if !r.p.SaturateAll && v != base {
				continue
			}
			if ctx.Err() != nil {
				return
			}
			n := v.Variant.CPUs
			r.saturateOne(ctx, wr.Workload, v, rep, seed, hint[n])
			if v.Variant.IsBaseline() && hint[n] == 0 && len(v.Sat) > 0 {
				hint[n] = searchHint(v.Sat[0])
			}
		}
	}
	if wr.BaseRate == 0 && base != nil {
		// Validated rates only: where none held, BaseRate stays 0 and the
		// steps that need it are skipped (runAll says why).
		wr.BaseRate = analysis.MedianSaturation(base)
		wr.BaseLowerBound = base.LoaderBound()
	}
}

// searchHint is where s found its server's limit, for the next ramp: the
// validated rate, else the highest that held in the short steps.
func searchHint(s result.SatRun) float64 {
	if s.Rate > 0 {
		return s.Rate
	}
	return s.Bracket.Lo
}

func (r *runner) saturateOne(ctx context.Context, wl string, v *result.VariantResult, rep int, seed string, hint float64) {
	step := result.SearchStep(rep)
	dir, rel := r.runDir(wl, v, step)
	r.quiet(ctx, "saturation search "+v.Name)
	srv := r.start(ctx, wl, v, step, seed, dir)
	if srv == nil {
		return
	}
	defer r.stop(ctx, srv, step)
	r.logf("%s %s: saturation search %d/%d", wl, v.Name, rep, r.o.Repeat)
	sat, err := r.search(ctx, r.loadConfig(srv), dir, srv.Server, v.Config, hint)
	switch {
	case ctx.Err() != nil, r.died(ctx, srv, step):
		return
	case err != nil:
		r.fail(wl, v.Name, step, err.Error(), srv.LogTail(10))
		return
	}
	run := satRunOf(sat)
	run.Repeat, run.Dir = rep, rel
	v.Sat = append(v.Sat, run)
	if sat.Anchor > 0 {
		r.logf("%s %s: closed loop first, %.0f req/s (median of %d × %v over %d connections): the search started at %.0f %% of it", wl, v.Name, sat.Anchor, r.t.AnchorRounds, r.t.SatStep, plan.MinConns, 100*plan.AnchorShare)
	}
	if sat.Validation != nil {
		r.checkValidation(wl, v.Name, result.ValidationStep(rep), sat.Validation, lastValidation(sat))
	}
	switch {
	case !sat.Validated:
		r.logf("%s %s: no validated saturation: the search ended at %s, the validation of %.0f req/s failed", wl, v.Name, sat.Bracket, sat.Candidate)
	case sat.LoaderBound:
		r.logf("%s %s: saturation ≥ %.0f req/s (validated), loader-bound: %s", wl, v.Name, sat.Rate, sat.Why)
	default:
		r.logf("%s %s: saturation %.0f req/s (validated), bracket %s", wl, v.Name, sat.Rate, sat.Bracket)
	}
	if rep == r.o.Repeat && r.wantsClosed(v) && ctx.Err() == nil {
		r.closed(ctx, v, srv)
	}
}

// steps runs, per variant on one server, the fixed-rate step and then the
// overload step, each over the connections s planned for every variant.
func (r *runner) steps(ctx context.Context, wr *result.WorkloadResult, seed string, s *plan.Steps) {
	for _, v := range wr.Variants {
		if ctx.Err() != nil {
			return
		}
		dir, _ := r.runDir(wr.Workload, v, "server")
		r.quiet(ctx, "steps of "+v.Name)
		srv := r.start(ctx, wr.Workload, v, "fixed/overload", seed, dir)
		if srv == nil {
			continue
		}
		ok := true
		if r.p.Fixed {
			ok = r.fixed(ctx, wr, srv, s)
		}
		if ok && r.p.Overload && ctx.Err() == nil {
			r.overload(ctx, wr, srv, s)
			continue // overload stops the server itself: its exit code is a verdict
		}
		r.stop(ctx, srv, result.FixedStep)
	}
}

// fixed runs the fixed-rate step; false when the server died or the step
// could not run.
func (r *runner) fixed(ctx context.Context, wr *result.WorkloadResult, srv *instance, s *plan.Steps) bool {
	v := srv.v
	dir, rel := r.runDir(wr.Workload, v, result.FixedStep)
	cfg := r.planner().fixed(r.loadConfig(srv), wr, v, s)
	r.logf("%s %s: fixed rate %.0f req/s for %v over %d connections (up to %d)", wr.Workload, v.Name, cfg.Rate, cfg.Duration, cfg.Conns, cfg.MaxConns)
	m, ok := r.measure(ctx, srv, result.FixedStep, cfg, dir)
	if !ok {
		return false
	}
	res := m.res
	lc := r.checkLoader(srv, result.FixedStep, m, fixedBacklog(res, r.o.SLO))
	v.Fixed = &result.FixedRun{Behind: fixedBehind(res, lc),
		Asked: cfg.Rate, Achieved: res.AchievedRate(),
		Corrected: latenciesOf(res.Corrected), Uncorrected: latenciesOf(res.Uncorrected),
		Distribution:        distributionOf(res.Corrected, res.Uncorrected, chartPercentiles),
		ServerCPUPerRequest: m.perRequest(),
		ErrorRate:           res.ErrorRate(), ConnsStart: res.ConnsStart, ConnsPeak: res.ConnsPeak, InFlightPeak: res.InFlightPeak, Dir: rel,
	}
	return true
}

// profiles runs, per variant, a separate kvserver with mutex and block
// sampling on at the fixed step's rate, and captures every profile kind.
func (r *runner) profiles(ctx context.Context, wr *result.WorkloadResult, seed string) {
	r.c.ProfileWorkload = wr.Workload
	secs := r.t.ProfileSeconds
	for _, v := range wr.Variants {
		if ctx.Err() != nil {
			return
		}
		rel := filepath.Join(ProfilesDir, v.Variant.Slug())
		dir := filepath.Join(r.c.Dir, rel)
		r.quiet(ctx, "profile run "+v.Name)
		srv := r.start(ctx, wr.Workload, v, "profile", seed, dir, plan.ProfileArgs...)
		if srv == nil {
			continue
		}
		cfg := r.loadConfig(srv)
		// The load starts with the captures and outlasts them by a second.
		cfg.Rate, cfg.Duration = plan.FixedShare*r.planner().refRate(wr, v), profileLoad(secs)
		r.logf("%s %s: profiles over %ds at %.0f req/s", wr.Workload, v.Name, secs, cfg.Rate)
		loadDone := make(chan error, 1)
		go func() {
			_, err := engine.Run(ctx, cfg, nil)
			loadDone <- err
		}()
		ps := captureProfiles(ctx, srv.Server, dir, rel, secs)
		ps.Variant = v.Name
		<-loadDone
		r.died(ctx, srv, "profile")
		r.stop(ctx, srv, "profile")
		if ctx.Err() != nil {
			return
		}
		r.c.Profiles = append(r.c.Profiles, ps)
	}
}

// diffProfiles diffs every pool's cpu and mutex profiles against direct's
// and draws each CPU call graph.
func (r *runner) diffProfiles(ctx context.Context) {
	var base *result.ProfileSet
	for _, ps := range r.c.Profiles {
		if ps.Variant == plan.Baseline {
			base = ps
		}
	}
	svgNoted := false
	for _, ps := range r.c.Profiles {
		if cpu, ok := ps.Files["cpu"]; ok {
			svg := strings.TrimSuffix(cpu, ".pb.gz") + ".svg"
			if err := pprofSVG(ctx, filepath.Join(r.c.Dir, cpu), filepath.Join(r.c.Dir, svg)); err != nil {
				ps.SVGNote = err.Error()
				if !svgNoted {
					r.note("%v", err)
					svgNoted = true
				}
			} else {
				ps.SVG = svg
			}
		}
		if base == nil || ps == base {
			continue
		}
		for _, kind := range []string{"cpu", "mutex"} {
			b, okb := base.Files[kind]
			p, okp := ps.Files[kind]
			if !okb || !okp {
				ps.DiffErrs[kind] = "not captured for both this pool and direct"
				continue
			}
			top, err := pprofdiff.Top(ctx, filepath.Join(r.c.Dir, b), filepath.Join(r.c.Dir, p), r.p.OwnRates)
			if err != nil {
				ps.DiffErrs[kind] = err.Error()
				continue
			}
			ps.Diffs[kind] = top
		}
	}
}
