package compare

import (
	"context"
	"fmt"
	"time"

	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
)

// steps is the step of wr's step plan (wr.Steps): per variant on one
// server, the fixed-rate step and then the overload step, each over the
// connections planned for every variant. Beside its outcome it returns
// the variants (workload and name) whose overload step failed the
// degradation checks.
func (r *runner) steps(ctx context.Context, wr *result.WorkloadResult, seed string) ([]string, outcome) {
	s := r.step(wr)
	var failed []string
	for i, v := range wr.Variants {
		if ctx.Err() != nil {
			break
		}
		got := s.out.variants[i]
		dir, _ := r.runDir(wr.Workload, v, "server")
		s.quiet(ctx, "steps of "+v.Name)
		srv := s.start(ctx, wr.Workload, got, "fixed/overload", seed, dir)
		if srv == nil {
			continue
		}
		ok := true
		if r.p.Fixed {
			got.Fixed = s.fixed(ctx, wr, v, srv)
			ok = got.Fixed != nil
		}
		if ok && r.p.Overload && ctx.Err() == nil {
			var judgedFailed bool
			got.Overload, judgedFailed = s.overload(ctx, wr, v, srv)
			if judgedFailed {
				failed = append(failed, wr.Workload+" "+v.Name)
			}
			continue // overload stops the server itself: its exit code is a verdict
		}
		s.stop(ctx, srv, result.FixedStep)
	}
	return failed, s.out
}

// fixed is v's fixed-rate step on srv; nil where the server died or the
// step could not run.
func (r *step) fixed(ctx context.Context, wr *result.WorkloadResult, v *result.VariantResult, srv *instance) *result.FixedRun {
	dir, rel := r.runDir(wr.Workload, v, result.FixedStep)
	cfg := r.planner().fixed(r.loadConfig(srv), wr, v, wr.Steps)
	r.logf("%s %s: fixed rate %.0f req/s for %v over %d connections (up to %d)", wr.Workload, v.Name, cfg.Rate, cfg.Duration, cfg.Conns, cfg.MaxConns)
	m, ok := r.measure(ctx, srv, result.FixedStep, cfg, dir)
	if !ok {
		return nil
	}
	res := m.res
	lc := r.checkLoader(srv, result.FixedStep, m, fixedBacklog(res, r.o.SLO))
	return &result.FixedRun{Behind: fixedBehind(res, lc),
		Asked: cfg.Rate, Achieved: res.AchievedRate(),
		Corrected: latenciesOf(res.Corrected), Uncorrected: latenciesOf(res.Uncorrected),
		Distribution:        distributionOf(res.Corrected, res.Uncorrected, chartPercentiles),
		ServerCPUPerRequest: m.perRequest(),
		ErrorRate:           res.ErrorRate(), ConnsStart: res.ConnsStart, ConnsPeak: res.ConnsPeak, InFlightPeak: res.InFlightPeak, Dir: rel,
	}
}

// fixedInterval is the fixed-rate step's interval: the saturation
// search's rule (a tenth of the step after a warm-up, at most a second),
// so that even a short step has intervals enough to show a backlog grow.
func fixedInterval(d time.Duration) time.Duration {
	sc := saturate.Config{Step: d}
	return sc.Interval()
}

// fixedBacklog says how a fixed-rate step's backlog grew by the
// searches' rule (saturate.Config.BacklogGrew), "" where it did not: its
// latencies are then a growing queue's, and depend on the step's length.
func fixedBacklog(res *record.Result, slo time.Duration) string {
	sc := saturate.Config{SLO: slo}
	// The intervals of the schedule but the first (the warm-up), as the
	// searches judge them; the drain after it is not the step's.
	judged := saturate.SecondsOf(res)
	if iv := res.Config.Interval; iv > 0 {
		judged = judged[:min(len(judged), int(res.Config.Duration/iv))]
	}
	if len(judged) > 0 {
		judged = judged[1:]
	}
	return sc.BacklogGrew(judged, res.Config.Rate)
}

// fixedBehind says how a fixed-rate step fell behind its schedule by lc,
// checkLoader's record of it ("" where it kept to it).
func fixedBehind(res *record.Result, lc result.LoaderCheck) string {
	switch {
	case lc.Backlog != "":
		return lc.Backlog
	case !lc.KeptUp:
		return fmt.Sprintf("sent %.0f of %.0f req/s asked on schedule, %d never sent", lc.SendRate, lc.Asked, res.Unsent())
	}
	return ""
}
