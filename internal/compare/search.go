package compare

import (
	"context"
	"math"
	"time"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/loadgen/report"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
)

// saturation is the step of wr's saturation searches: every variant's
// (or only direct's), -repeat times, direct first in each round, each
// with its closed loop where wantsClosed; none under -rate unless every
// variant is searched.
func (r *runner) saturation(ctx context.Context, wr *result.WorkloadResult, seed string) outcome {
	s := r.step(wr)
	if r.o.Rate > 0 && !r.p.SaturateAll {
		return s.out
	}
	base := (&result.WorkloadResult{Variants: s.out.variants}).Baseline()
	// hint is direct's first saturation per CPU count: later searches
	// ramp from half of it, saving the steps far below any pool's limit
	// (one below the start is found by bisection down from it).
	hint := map[int]float64{}
	for rep := 1; rep <= r.o.Repeat; rep++ {
		for _, v := range s.out.variants {
			if !r.p.SaturateAll && v != base {
				continue
			}
			if ctx.Err() != nil {
				return s.out
			}
			n := v.Variant.CPUs
			s.saturateOne(ctx, wr.Workload, v, rep, seed, hint[n])
			if v.Variant.IsBaseline() && hint[n] == 0 && len(v.Sat) > 0 {
				hint[n] = searchHint(v.Sat[0])
			}
		}
	}
	return s.out
}

// searchHint is where s found its server's limit, for the next ramp: the
// validated rate, else the highest that held in the short steps.
func searchHint(s result.SatRun) float64 {
	if s.Rate > 0 {
		return s.Rate
	}
	return s.Bracket.Lo
}

// saturateOne is one search of v, and v's closed loop on the same
// server after the last.
func (r *step) saturateOne(ctx context.Context, wl string, v *result.VariantResult, rep int, seed string, hint float64) {
	step := result.SearchStep(rep)
	dir, rel := r.runDir(wl, v, step)
	r.quiet(ctx, "saturation search "+v.Name)
	srv := r.start(ctx, wl, v, step, seed, dir)
	if srv == nil {
		return
	}
	defer r.stop(ctx, srv, step)
	r.logf("%s %s: saturation search %d/%d", wl, v.Name, rep, r.o.Repeat)
	sat := r.search(ctx, srv, step, dir, hint)
	if sat == nil {
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
		v.Closed = r.closed(ctx, v, srv)
	}
}

// saturateConfig is the search's criteria and step lengths.
func (r *runner) saturateConfig(dir string) saturate.Config {
	sc := saturate.DefaultConfig()
	sc.SLO = r.o.SLO
	sc.Step, sc.ValidateFor, sc.Cooldown = r.t.SatStep, r.t.SatValidate, r.t.SatCooldown
	sc.StartRate, sc.MaxRate, sc.Precision = r.t.SatStartRate, r.t.SatMaxRate, r.t.SatPrecision
	sc.Out = dir
	sc.Shared = r.pl.Shared()
	return sc
}

// search runs a saturation search of srv, its files in dir: nil where
// ctx ended, srv died or the search failed (recorded as step's). With
// Timing.AnchorRounds a closed loop on srv comes first and bounds it
// (saturate's Anchor); without, the ramp starts at half of hint where
// that is above the configured start. Each step reads srv's CPU, so that
// saturate.Bound can tell a loader's shortfall from the server's limit.
func (r *step) search(ctx context.Context, srv *instance, step, dir string, hint float64) *saturate.Saturation {
	cfg, sc := r.loadConfig(srv), r.saturateConfig(dir)
	sc.StartRate = max(sc.StartRate, math.Round(hint/2))
	sc.MaxRate = max(sc.MaxRate, sc.StartRate)
	cpus := r.serverCPUs(srv.Server)
	sc.ServerCPU = func(context.Context) (time.Duration, int, error) {
		p, err := srv.Sample()
		return p.CPU, cpus, err
	}
	var closed *saturate.ClosedLoop
	var sat *saturate.Saturation
	var err error
	if n := r.t.AnchorRounds; n > 0 {
		load := cfg
		load.Conns, load.MaxConns = plan.MinConns, plan.MinConns
		closed, err = saturate.MeasureClosedLoop(ctx, load, saturate.ClosedConfig{Rounds: n, For: r.t.SatStep, Cooldown: r.t.SatCooldown}, &sc)
		if err == nil {
			sc.Anchor, sc.AnchorShare = closed.Throughput, plan.AnchorShare
		}
	}
	if err == nil {
		sat, err = saturate.Run(ctx, cfg, sc, nil, nil)
	}
	switch {
	case ctx.Err() != nil, r.died(ctx, srv, step):
		return nil
	case err != nil:
		r.fail(srv.wl, srv.v.Name, step, err.Error(), srv.LogTail(10))
		return nil
	}
	sat.ClosedLoop = closed
	if sat.Validation != nil {
		report.WriteFiles(dir, sat.Validation, srv.v.Config)
	}
	report.WriteJSON(dir, saturate.File, sat)
	return sat
}

// satRunOf is sat as compare.json keeps it (result does not import the
// loader).
func satRunOf(sat *saturate.Saturation) result.SatRun {
	b := result.Bracket(sat.Bracket)
	run := result.SatRun{Rate: sat.Rate, Validated: sat.Validated, Bracket: &b, Candidate: sat.Candidate, HitMax: sat.HitMax,
		LoaderBound: sat.LoaderBound, LoaderCeiling: sat.LoaderCeiling, LoaderCPUs: sat.LoaderCPUs, Why: sat.Why,
		Anchor: sat.Anchor, AnchorExceeded: sat.AnchorExceeded, Curve: curveOf(sat)}
	if v := lastValidation(sat); v != nil {
		run.ServerCPUPerRequest = v.ServerCPUPerReq
	}
	return run
}

// lastValidation is sat's last validating step, the run sat.Validation
// holds (nil: none ran).
func lastValidation(sat *saturate.Saturation) *saturate.Step {
	for i := len(sat.Steps) - 1; i >= 0; i-- {
		if sat.Steps[i].Phase == saturate.PhaseValidate {
			return &sat.Steps[i]
		}
	}
	return nil
}

// curveOf is sat's steps as compare.json keeps them (CurvePoint.Seconds
// says why only the deciding steps keep their intervals).
func curveOf(sat *saturate.Saturation) []result.CurvePoint {
	var out []result.CurvePoint
	for i := range sat.Steps {
		s := &sat.Steps[i]
		p := result.CurvePoint{Phase: s.Phase, Asked: s.Asked, Achieved: s.Achieved, P50: s.P50, P99: s.P99, P99FromSend: s.P99Uncorr,
			Pass: s.Pass, Verdict: s.Verdict, Loader: s.Loader(), Server: s.Server(), LoaderBound: s.LoaderBound, Retry: s.Retry}
		if sat.Bracket.Decided(s) {
			for _, sec := range s.JudgedSeconds() {
				p.Seconds = append(p.Seconds, result.StepSecond{T: sec.T, Rate: sec.Rate, P99: sec.P99, OK: sec.Held()})
			}
		}
		out = append(out, p)
	}
	return out
}
