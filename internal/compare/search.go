package compare

import (
	"context"
	"math"
	"time"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/report"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
)

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

// search runs a saturation search of srv, its files in dir. With
// Timing.AnchorRounds a closed loop on srv comes first and bounds it
// (saturate's Anchor); without, the ramp starts at half of hint where
// that is above the configured start. Each step reads srv's CPU, so that
// saturate.Bound can tell a loader's shortfall from the server's limit.
func (r *runner) search(ctx context.Context, cfg config.Config, dir string, srv *harness.Server, settings map[string]string, hint float64) (*saturate.Saturation, error) {
	sc := r.saturateConfig(dir)
	sc.StartRate = max(sc.StartRate, math.Round(hint/2))
	sc.MaxRate = max(sc.MaxRate, sc.StartRate)
	cpus := r.serverCPUs(srv)
	sc.ServerCPU = func(context.Context) (time.Duration, int, error) {
		p, err := srv.Sample()
		return p.CPU, cpus, err
	}
	var closed *saturate.ClosedLoop
	if n := r.t.AnchorRounds; n > 0 {
		load := cfg
		load.Conns, load.MaxConns = plan.MinConns, plan.MinConns
		var err error
		closed, err = saturate.MeasureClosedLoop(ctx, load, saturate.ClosedConfig{Rounds: n, For: r.t.SatStep, Cooldown: r.t.SatCooldown}, &sc)
		if err != nil {
			return nil, err
		}
		sc.Anchor, sc.AnchorShare = closed.Throughput, plan.AnchorShare
	}
	sat, err := saturate.Run(ctx, cfg, sc, nil, nil)
	if err != nil {
		return nil, err
	}
	sat.ClosedLoop = closed
	if sat.Validation != nil {
		report.WriteFiles(dir, sat.Validation, settings)
	}
	report.WriteJSON(dir, "saturate.json", sat)
	return sat, nil
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
