package loadgen

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/kvpool/kvpool/internal/latency"
)

// Step is one measured rate of a saturation search.
type Step struct {
	Phase     string        `json:"phase"` // "ramp", "bisect" or "validate"
	Asked     float64       `json:"asked_rate"`
	Achieved  float64       `json:"achieved_rate"`
	P50       time.Duration `json:"p50_corrected_ns"`
	P99       time.Duration `json:"p99_corrected_ns"`
	P99Uncorr time.Duration `json:"p99_uncorrected_ns"`
	Errors    int64         `json:"errors"`
	ErrorRate float64       `json:"error_rate"`
	CPUPerReq time.Duration `json:"loader_cpu_per_request_ns"`
	Pass      bool          `json:"pass"`
	// Verdict is "ok" or why the step failed.
	Verdict string `json:"verdict"`
}

// Saturation is the outcome of a search.
type Saturation struct {
	// Rate is the highest rate that passed (0: none did).
	Rate float64 `json:"rate"`
	// Validated tells whether the longer validating run at Rate passed too.
	Validated bool `json:"validated"`
	// HitMax is set when even MaxRate passed: the true limit is higher.
	HitMax bool   `json:"hit_max_rate"`
	Steps  []Step `json:"steps"`
	// Validation is the full result of the validating run (nil if none).
	Validation *Result `json:"-"`
}

// phases of a search.
const (
	PhaseRamp     = "ramp"
	PhaseBisect   = "bisect"
	PhaseValidate = "validate"
)

// maxBisections bounds the bisection whatever Precision says.
const maxBisections = 20

// judge reduces a step's Result to a Step and decides it: corrected p99 ≤
// SLO, error share (503 included) below MaxErrorRate, and the asked rate
// actually achieved (≥ 99 %), since a server that falls behind has not
// sustained the rate even when the p99 of what it answered looks fine.
func (sc *SaturateConfig) judge(phase string, res *Result) Step {
	s := Step{
		Phase: phase, Asked: res.Config.Rate, Achieved: res.AchievedRate(),
		P50: latency.ValueAt(res.Corrected, 50), P99: latency.ValueAt(res.Corrected, 99),
		P99Uncorr: latency.ValueAt(res.Uncorrected, 99),
		Errors:    res.ErrorCount, ErrorRate: res.ErrorRate(), CPUPerReq: res.CPUPerRequest(),
	}
	switch {
	case s.P99 > sc.SLO:
		s.Verdict = fmt.Sprintf("p99 > %v", sc.SLO)
	case s.ErrorRate >= sc.MaxErrorRate:
		s.Verdict = fmt.Sprintf("errors ≥ %g%%", 100*sc.MaxErrorRate)
	case s.Achieved < keptUp*s.Asked || res.Unsent() > 0:
		s.Verdict = "fell behind (achieved < 99%)"
	default:
		s.Pass, s.Verdict = true, "ok"
	}
	return s
}

// search runs the saturation search over measure, which runs one step at
// the given rate. A coarse ramp (StartRate, ×Factor, … up to MaxRate) finds
// a passing rate lo and a failing rate hi; bisection narrows them until
// (hi-lo)/lo ≤ Precision; one validating run at lo confirms it.
func (sc *SaturateConfig) search(measure func(phase string, rate float64) (Step, error)) (*Saturation, error) {
	out := &Saturation{}
	step := func(phase string, rate float64) (bool, error) {
		s, err := measure(phase, rate)
		if err != nil {
			return false, err
		}
		out.Steps = append(out.Steps, s)
		return s.Pass, nil
	}
	lo, hi := 0.0, 0.0
	for r := sc.StartRate; ; r = math.Min(math.Round(r*sc.Factor), sc.MaxRate) {
		ok, err := step(PhaseRamp, r)
		if err != nil {
			return out, err
		}
		if !ok {
			hi = r
			break
		}
		lo = r
		if r >= sc.MaxRate {
			out.HitMax = true
			break
		}
	}
	for i := 0; hi > 0 && i < maxBisections; i++ {
		if lo > 0 && (hi-lo)/lo <= sc.Precision {
			break
		}
		mid := math.Round((lo + hi) / 2)
		if mid <= lo || mid >= hi {
			break
		}
		ok, err := step(PhaseBisect, mid)
		if err != nil {
			return out, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	out.Rate = lo
	if lo == 0 {
		return out, nil
	}
	ok, err := step(PhaseValidate, lo)
	out.Validated = ok
	return out, err
}

// Saturate searches for the highest rate cfg's workload sustains under
// cfg.Saturate's criteria, calling onStep after every step (the curve) and
// progress during the validating run. Each step is a fresh run of
// cfg.Saturate.Step (the validation: .Validate), after a Cooldown pause.
func Saturate(ctx context.Context, cfg Config, onStep func(Step), progress func(Progress)) (*Saturation, error) {
	sc := cfg.Saturate
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	var validation *Result
	first := true
	measure := func(phase string, rate float64) (Step, error) {
		if !first {
			if err := sleepCtx(ctx, sc.Cooldown); err != nil {
				return Step{}, err
			}
		}
		first = false
		c := cfg
		c.Rate, c.Duration, c.Requests = rate, sc.Step, 0
		var p func(Progress)
		if phase == PhaseValidate {
			c.Duration, p = sc.ValidateFor, progress
		} else {
			c.KeepResults = false
		}
		res, err := Run(ctx, c, p)
		if err != nil {
			return Step{}, err
		}
		if err := ctx.Err(); err != nil {
			return Step{}, err // an interrupted step proves nothing
		}
		if phase == PhaseValidate {
			validation = res
		}
		s := sc.judge(phase, res)
		if onStep != nil {
			onStep(s)
		}
		return s, nil
	}
	out, err := sc.search(measure)
	out.Validation = validation
	return out, err
}

// Validate reports the first setting of sc that cannot work.
func (sc *SaturateConfig) Validate() error {
	switch {
	case sc.SLO <= 0:
		return fmt.Errorf("-slo must be positive")
	case sc.MaxErrorRate <= 0 || sc.MaxErrorRate > 1:
		return fmt.Errorf("-max-error-rate %v must be in (0,1]", sc.MaxErrorRate)
	case sc.StartRate <= 0 || sc.MaxRate < sc.StartRate:
		return fmt.Errorf("need 0 < -start-rate (%v) ≤ -max-rate (%v)", sc.StartRate, sc.MaxRate)
	case sc.Factor <= 1:
		return fmt.Errorf("-factor %v must be > 1", sc.Factor)
	case sc.Step <= 0 || sc.ValidateFor <= 0:
		return fmt.Errorf("-step and -validate must be positive")
	case sc.Precision <= 0:
		return fmt.Errorf("-precision %v must be positive", sc.Precision)
	case sc.Cooldown < 0:
		return fmt.Errorf("-cooldown must not be negative")
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// PrintStepHeader and PrintStep write the saturation curve as a table.
func PrintStepHeader(w io.Writer) {
	fmt.Fprintf(w, "%-9s %10s %10s %10s %10s %10s %8s %8s  %s\n",
		"phase", "asked/s", "achieved/s", "p50", "p99", "p99 uncorr", "errors", "cpu/req", "verdict")
}

// PrintStep writes one row of the saturation curve.
func PrintStep(w io.Writer, s Step) {
	fmt.Fprintf(w, "%-9s %10.0f %10.0f %10s %10s %10s %7.3f%% %6.1fus  %s\n",
		s.Phase, s.Asked, s.Achieved, latency.FormatDuration(s.P50), latency.FormatDuration(s.P99),
		latency.FormatDuration(s.P99Uncorr), 100*s.ErrorRate, micros(s.CPUPerReq), s.Verdict)
}
