// Package saturate searches for the highest rate a server sustains under
// a latency SLO and an error budget: a coarse ramp, a bisection, then a
// longer validating run at the result. Each step is one loadgen run.
package saturate

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen"
)

// Config configures a search.
type Config struct {
	SLO          time.Duration // corrected p99 must stay ≤ SLO
	MaxErrorRate float64       // share of errors (incl. 503) must stay < this
	StartRate    float64       // first step of the coarse ramp
	MaxRate      float64       // the ramp stops here
	Factor       float64       // the ramp multiplies the rate by this
	Step         time.Duration // length of each ramp and bisection step
	Precision    float64       // bisection stops when (hi-lo)/lo ≤ Precision
	ValidateFor  time.Duration // length of the validating run
	Cooldown     time.Duration // pause between steps for backlogs to drain
	// Out is where the validating run streams its files ("" = none).
	Out string
}

// DefaultConfig returns the defaults cmd/loadtest documents.
func DefaultConfig() Config {
	return Config{
		SLO:          100 * time.Millisecond,
		MaxErrorRate: 0.001,
		StartRate:    1000,
		MaxRate:      1_000_000,
		Factor:       2,
		Step:         5 * time.Second,
		Precision:    0.05,
		ValidateFor:  30 * time.Second,
		Cooldown:     2 * time.Second,
	}
}

// Step is one measured rate of a search.
type Step struct {
	Phase     string        `json:"phase"` // "ramp", "bisect" or "validate"
	Asked     float64       `json:"asked_rate"`
	Sent      float64       `json:"sent_rate"`     // from the start to the last send
	Achieved  float64       `json:"achieved_rate"` // answered, from the start to the last answer
	P50       time.Duration `json:"p50_corrected_ns"`
	P99       time.Duration `json:"p99_corrected_ns"`
	P99Uncorr time.Duration `json:"p99_uncorrected_ns"`
	Errors    int64         `json:"errors"`
	ErrorRate float64       `json:"error_rate"`
	CPUPerReq time.Duration `json:"loader_cpu_per_request_ns"`
	Pass      bool          `json:"pass"`
	// Verdict is "ok" or why the step failed.
	Verdict string `json:"verdict"`
	// Left estimates the time the search still needs after this step;
	// LeftAtLeast marks it a lower bound (the ramp has not failed yet).
	Left        time.Duration `json:"-"`
	LeftAtLeast bool          `json:"-"`
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
	Validation *loadgen.Result `json:"-"`
}

// Phases of a search.
const (
	PhaseRamp     = "ramp"
	PhaseBisect   = "bisect"
	PhaseValidate = "validate"
)

// maxBisections bounds the bisection whatever Precision says.
const maxBisections = 20

// keptUp is the share of the asked rate a step must send.
const keptUp = 0.99

// judge reduces a step's Result to a Step and decides it: corrected p99 ≤
// SLO, error share (503 included) below MaxErrorRate, and every request
// sent, at the asked rate (≥ 99 %): a server that falls behind holds the
// loader's connections, and the sends wait for them. The answered rate is
// not the test: it runs to the last response, so a step of a few seconds
// whose last answers took 50 ms would "fall behind" by the latency alone,
// which the p99 already judges.
func (sc *Config) judge(phase string, res *loadgen.Result) Step {
	s := Step{
		Phase: phase, Asked: res.Config.Rate, Sent: res.SendRate(), Achieved: res.AchievedRate(),
		P50: latency.ValueAt(res.Corrected, 50), P99: latency.ValueAt(res.Corrected, 99),
		P99Uncorr: latency.ValueAt(res.Uncorrected, 99),
		Errors:    res.ErrorCount, ErrorRate: res.ErrorRate(), CPUPerReq: res.CPUPerRequest(),
	}
	switch {
	case s.P99 > sc.SLO:
		s.Verdict = fmt.Sprintf("p99 > %v", sc.SLO)
	case s.ErrorRate >= sc.MaxErrorRate:
		s.Verdict = fmt.Sprintf("errors ≥ %g%%", 100*sc.MaxErrorRate)
	case s.Sent < keptUp*s.Asked || res.Unsent() > 0:
		s.Verdict = "fell behind (sent < 99%)"
	default:
		s.Pass, s.Verdict = true, "ok"
	}
	return s
}

// bisections is how many bisection steps search takes on [lo, hi] at
// most: as many as when every one fails (with lo = 0 the search halves
// towards 0).
func (sc *Config) bisections(lo, hi float64) int {
	n := 0
	for ; n < maxBisections; n++ {
		if lo > 0 && (hi-lo)/lo <= sc.Precision {
			break
		}
		mid := math.Round((lo + hi) / 2)
		if mid <= lo || mid >= hi {
			break
		}
		hi = mid
	}
	return n
}

// timeLeft estimates the rest of a search with lo passing and hi failing
// (0: not found yet), and whether the estimate is only a lower bound.
func (sc *Config) timeLeft(phase string, lo, hi float64) (time.Duration, bool) {
	step := sc.Step + sc.Cooldown
	validate := sc.ValidateFor + sc.Cooldown
	switch {
	case phase == PhaseValidate:
		return 0, false
	case hi == 0 && lo >= sc.MaxRate:
		return validate, false // the ramp ended at MaxRate
	case hi == 0:
		// At least one more ramp step, which fails at best, then bisecting.
		next := math.Min(math.Round(lo*sc.Factor), sc.MaxRate)
		return step*time.Duration(1+sc.bisections(lo, next)) + validate, true
	case lo == 0:
		// Nothing passed yet: halving towards 0, validating if one passes.
		if n := sc.bisections(0, hi); n > 0 {
			return step*time.Duration(n) + validate, false
		}
		return 0, false
	}
	return step*time.Duration(sc.bisections(lo, hi)) + validate, false
}

// search runs the search over measure, which runs one step at the given
// rate. A coarse ramp (StartRate, ×Factor, … up to MaxRate) finds a passing
// rate lo and a failing rate hi; bisection narrows them until
// (hi-lo)/lo ≤ Precision; one validating run at lo confirms it. onStep,
// if not nil, sees every step with its estimate of the time left.
func (sc *Config) search(measure func(phase string, rate float64) (Step, error), onStep func(Step)) (*Saturation, error) {
	out := &Saturation{}
	lo, hi := 0.0, 0.0
	step := func(phase string, rate float64) (bool, error) {
		s, err := measure(phase, rate)
		if err != nil {
			return false, err
		}
		switch {
		case phase == PhaseValidate:
		case s.Pass:
			lo = max(lo, rate)
		case hi == 0 || rate < hi:
			hi = rate
		}
		s.Left, s.LeftAtLeast = sc.timeLeft(phase, lo, hi)
		out.Steps = append(out.Steps, s)
		if onStep != nil {
			onStep(s)
		}
		return s.Pass, nil
	}
	for r := sc.StartRate; ; r = math.Min(math.Round(r*sc.Factor), sc.MaxRate) {
		ok, err := step(PhaseRamp, r)
		if err != nil {
			return out, err
		}
		if !ok {
			break
		}
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
		if _, err := step(PhaseBisect, mid); err != nil {
			return out, err
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

// Run searches for the highest rate load's workload sustains under sc's
// criteria, calling onStep after every step (the curve) and progress
// during the validating run. Each step is a fresh run of sc.Step (the
// validation: sc.ValidateFor) after a Cooldown pause; load's rate and
// duration are the search's own.
func Run(ctx context.Context, load loadgen.Config, sc Config, onStep func(Step), progress func(loadgen.Progress)) (*Saturation, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	var validation *loadgen.Result
	first := true
	measure := func(phase string, rate float64) (Step, error) {
		if !first {
			if err := sleepCtx(ctx, sc.Cooldown); err != nil {
				return Step{}, err
			}
		}
		first = false
		c := load
		c.Rate, c.Duration, c.Requests = rate, sc.Step, 0
		c.Out, c.KeepResults = "", false
		var p func(loadgen.Progress)
		if phase == PhaseValidate {
			c.Duration, p = sc.ValidateFor, progress
			c.Out, c.KeepResults = sc.Out, load.KeepResults && sc.Out != ""
		}
		res, err := loadgen.Run(ctx, c, p)
		if err != nil {
			return Step{}, err
		}
		if err := ctx.Err(); err != nil {
			return Step{}, err // an interrupted step proves nothing
		}
		if phase == PhaseValidate {
			validation = res
		}
		return sc.judge(phase, res), nil
	}
	out, err := sc.search(measure, onStep)
	out.Validation = validation
	return out, err
}

// Validate reports the first setting of sc that cannot work.
func (sc *Config) Validate() error {
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

// PrintStepHeader writes the header of the curve's table.
func PrintStepHeader(w io.Writer) {
	fmt.Fprintf(w, "%-9s %10s %10s %10s %10s %10s %10s %8s %8s  %-28s %s\n",
		"phase", "asked/s", "sent/s", "achieved/s", "p50", "p99", "p99 uncorr", "errors", "cpu/req", "verdict", "left")
}

// PrintStep writes one row of the curve.
func PrintStep(w io.Writer, s Step) {
	left := "done"
	if s.Left > 0 {
		left = "~" + s.Left.Round(time.Second).String()
		if s.LeftAtLeast {
			left = "≥" + s.Left.Round(time.Second).String()
		}
	}
	fmt.Fprintf(w, "%-9s %10.0f %10.0f %10.0f %10s %10s %10s %7.3f%% %6.1fus  %-28s %s\n",
		s.Phase, s.Asked, s.Sent, s.Achieved, latency.FormatDuration(s.P50), latency.FormatDuration(s.P99),
		latency.FormatDuration(s.P99Uncorr), 100*s.ErrorRate, float64(s.CPUPerReq)/1e3, s.Verdict, left)
}
