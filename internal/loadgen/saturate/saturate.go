// Package saturate searches for the highest rate a server sustains under
// a latency SLO and an error budget, judged second by second, every
// failure re-tested before it bounds the search, and validated by a
// longer run that can lower the result. The answer is a bracket: the
// highest rate that held and the lowest that failed twice, refined to
// Config.Precision.
//
// The rule, for each step (one loadgen run at a constant rate):
//
//   - The step is cut into intervals (Config.Interval: 1 s, or Step/11
//     for steps under 11 s, so that every step has at least ten judged
//     intervals). The first interval is the warm-up and is not judged.
//   - An interval meets the SLO when the corrected p99 of the responses
//     that ended in it is at most Config.SLO and their share of errors
//     (503 included) is below Config.MaxErrorRate. Responses that end
//     after the schedule (the drain) are judged with its last interval.
//   - The step holds when at least HoldShare (90 %) of its judged
//     intervals meet the SLO (of ten, one may fail: a stall costs its
//     second, not the step), its backlog did not grow (BacklogGrew), and
//     every scheduled request was sent.
//
// The search:
//
//   - A failed step is run again at once (a re-test). A rate becomes an
//     upper bound only when it fails twice; a rate that fails once and
//     holds on its re-test counts as held. A failure the loader caused
//     (Bound) bounds the search as the loader's ceiling, not the server's
//     limit.
//   - With a closed-loop throughput given (Config.Anchor), the ramp starts
//     at Config.AnchorShare of it and the search asks no more than it
//     until a rate there has held: an open model's sustainable rate under
//     an SLO is below what a closed loop serves. Without one, the ramp
//     climbs from StartRate by Factor. Then the bracket [highest held,
//     lowest failed] is bisected until (hi−lo)/lo ≤ Precision.
//   - The highest rate that held is validated by a run of ValidateFor
//     under the same rule. A validation that fails twice makes that rate
//     an upper bound, and the short steps that held within Precision
//     below it are not trusted (twice that after a second failure, and
//     so on: Config.Retreat): the search measures that lower rate,
//     bisects below it where it fails, and validates again, at most
//     MaxValidations times. A figure that never held over its
//     validation is not a saturation (Saturation.Rate is 0).
package saturate

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/kvpool/kvpool/internal/loadgen/record"
)

// Config configures a search.
type Config struct {
	SLO          time.Duration // an interval's corrected p99 must stay ≤ SLO
	MaxErrorRate float64       // an interval's share of errors (incl. 503) must stay < this
	StartRate    float64       // first step of the ramp without an Anchor
	MaxRate      float64       // no step asks more
	Factor       float64       // the ramp multiplies the rate by this
	// Step is the length of each ramp and bisection step, its warm-up
	// interval included: 11 s is a 1 s warm-up and ten judged seconds.
	Step        time.Duration
	Precision   float64       // the bracket is refined until (hi−lo)/lo ≤ Precision
	ValidateFor time.Duration // the length of each validating run, warm-up included
	// MaxValidations bounds the validating runs (each with its re-test):
	// after that many failed, the search ends without a saturation.
	MaxValidations int
	Cooldown       time.Duration // pause between steps for backlogs to drain
	// Anchor, if above 0, is the server's closed-loop throughput, measured
	// before the search (MeasureClosedLoop): the ramp starts at
	// AnchorShare × Anchor, and no step asks more than Anchor until a
	// step at Anchor has held (then the ramp climbs by Factor as without
	// an anchor, and Saturation.Why says the anchor did not bound it).
	Anchor      float64
	AnchorShare float64
	Out         string `json:"-"` // where the validating run streams its files ("" = none)
	// ServerCPU, if not nil, reads the server's cumulative CPU time and
	// how many CPUs it may use; Run calls it just before and just after
	// each step, and once an interval during it (never two at once). Nil,
	// or an error, leaves the server's share unknown. The share is shown
	// beside each step and decides nothing (Bound).
	ServerCPU func(ctx context.Context) (cpu time.Duration, cpus int, err error) `json:"-"`
	// Shared: the loader and the server run on the same CPUs.
	Shared bool `json:"-"`
}

// Judging constants (see the package comment).
const (
	// HoldShare is the share of a step's judged intervals that must meet
	// the SLO and the error limit.
	HoldShare = 0.9
	// JudgedIntervals is how many judged intervals a step under 11 s has
	// (its intervals are Step/11); a longer step has 1 s intervals.
	JudgedIntervals = 10
	// MaxInterval is the longest judging interval.
	MaxInterval = time.Second
)

// DefaultConfig returns the full search's defaults, the ones cmd/loadtest
// documents (a validation judges 29 seconds, of which 2 may fail);
// docs/load-lab.md says what a search costs.
func DefaultConfig() Config {
	return Config{
		SLO:            100 * time.Millisecond,
		MaxErrorRate:   0.001,
		StartRate:      1000,
		MaxRate:        1_000_000,
		Factor:         2,
		Step:           11 * time.Second,
		Precision:      0.025,
		ValidateFor:    30 * time.Second,
		MaxValidations: 3,
		Cooldown:       time.Second,
		AnchorShare:    0.5,
	}
}

// QuickConfig is DefaultConfig with the quick search's lengths (500 ms
// intervals; a validation judges 21, of which 2 may fail). No shorter:
// docs/load-lab.md says why shorter steps were dropped.
func QuickConfig() Config {
	sc := DefaultConfig()
	sc.Step, sc.Cooldown, sc.ValidateFor, sc.Precision = 5500*time.Millisecond, 500*time.Millisecond, 11*time.Second, 0.05
	return sc
}

// AddFlags defines the search's flags on fs over sc's fields, and the
// closed loop's that anchors it over cc's, their values the defaults.
func (sc *Config) AddFlags(fs *flag.FlagSet, cc *ClosedConfig) {
	fs.DurationVar(&sc.SLO, "slo", sc.SLO, "an interval's corrected p99 must stay at or below this")
	fs.Float64Var(&sc.MaxErrorRate, "max-error-rate", sc.MaxErrorRate, "an interval's share of errors (503 included) must stay below this")
	fs.Float64Var(&sc.StartRate, "start-rate", sc.StartRate, "first rate of the ramp when there is no closed loop (-closed-rounds 0)")
	fs.Float64Var(&sc.MaxRate, "max-rate", sc.MaxRate, "no step asks more")
	fs.Float64Var(&sc.Factor, "factor", sc.Factor, "the ramp multiplies the rate by this (and divides it going down)")
	fs.DurationVar(&sc.Step, "step", sc.Step, "length of each ramp and bisection step, its warm-up interval included (intervals: 1s, or -step/11 below 11s)")
	fs.Float64Var(&sc.Precision, "precision", sc.Precision, "the bracket is refined until (hi-lo)/lo is at most this")
	fs.DurationVar(&sc.ValidateFor, "validate", sc.ValidateFor, "length of each validating run")
	fs.IntVar(&sc.MaxValidations, "max-validations", sc.MaxValidations, "validating runs at most (each re-tested once); then no saturation")
	fs.DurationVar(&sc.Cooldown, "cooldown", sc.Cooldown, "pause between steps so backlogs drain")
	fs.IntVar(&cc.Rounds, "closed-rounds", cc.Rounds, "closed-loop rounds run first; their median anchors the search (0: none, ramp from -start-rate)")
	fs.DurationVar(&cc.For, "closed-for", cc.For, "length of each closed-loop round (0: half of -step)")
	fs.Float64Var(&sc.AnchorShare, "anchor-share", sc.AnchorShare, "the ramp starts at this share of the closed loop's throughput")
}

// Interval is the judging interval of sc's steps: MaxInterval, or Step/11
// (to the millisecond) for steps under 11 s. The validation uses the
// same.
func (sc *Config) Interval() time.Duration {
	iv := sc.Step / (JudgedIntervals + 1)
	if iv >= MaxInterval {
		return MaxInterval
	}
	return max(iv.Truncate(time.Millisecond), time.Millisecond)
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
	case sc.Step < (JudgedIntervals+1)*time.Millisecond:
		return fmt.Errorf("-step %v is too short: it needs %d intervals of at least 1ms", sc.Step, JudgedIntervals+1)
	case sc.ValidateFor < sc.Step:
		return fmt.Errorf("-validate %v must be at least -step %v", sc.ValidateFor, sc.Step)
	case sc.Precision <= 0:
		return fmt.Errorf("-precision %v must be positive", sc.Precision)
	case sc.MaxValidations < 1:
		return fmt.Errorf("-max-validations %d must be at least 1", sc.MaxValidations)
	case sc.Cooldown < 0:
		return fmt.Errorf("-cooldown must not be negative")
	case sc.Anchor < 0:
		return fmt.Errorf("the closed-loop anchor %v must not be negative", sc.Anchor)
	case sc.AnchorShare <= 0 || sc.AnchorShare > 1:
		return fmt.Errorf("-anchor-share %v must be in (0,1]", sc.AnchorShare)
	}
	return nil
}

// Phases of a search.
const (
	PhaseRamp     = "ramp"
	PhaseBisect   = "bisect"
	PhaseValidate = "validate"
)

// Saturation is the outcome of a search.
type Saturation struct {
	// Rate is the saturation: the highest rate that held, over its search
	// step and over a validating run (0: no rate held over its
	// validation, or none held at all).
	Rate      float64 `json:"rate"`
	Validated bool    `json:"validated"` // Rate > 0: a validating run held at Rate
	// Bracket is where the search ended: the highest rate that held and
	// the lowest that failed twice. With a validation, Lo is Rate; without
	// one (every validation failed), Lo is the highest rate that held in
	// the short steps below the last failed validation, and not a
	// saturation.
	Bracket Bracket `json:"bracket"`
	// Candidate is the last rate validated or tried: Rate when validated;
	// otherwise the rate whose validation failed last (what the search
	// would have called its result before it was validated).
	Candidate float64 `json:"candidate"`
	HitMax    bool    `json:"hit_max_rate"` // even MaxRate held: the true limit is higher
	// Anchor is the closed-loop throughput the search was bounded by (0:
	// none); AnchorExceeded: a step at it held, so it bounded nothing.
	Anchor         float64 `json:"anchor,omitempty"`
	AnchorExceeded bool    `json:"anchor_exceeded,omitempty"`
	// ClosedLoop is the closed-loop measurement behind Anchor, where the
	// caller made one and filled it in.
	ClosedLoop *ClosedLoop `json:"closed_loop,omitempty"`
	// LoaderBound is set when the loader, not the server, set the
	// bracket's upper end: Bracket.Hi is the lowest loader-bound failure
	// (LoaderCeiling; no server-bound failure below it), and Rate is only
	// a lower bound of the server's saturation. Why gives the figures;
	// LoaderCPUs is how many CPUs the loader had in that step.
	LoaderBound   bool    `json:"loader_bound"`
	LoaderCeiling float64 `json:"loader_ceiling,omitempty"`
	LoaderCPUs    int     `json:"loader_cpus,omitempty"`
	Why           string  `json:"why,omitempty"`
	// Retests lists every re-test: the rate, both verdicts and what the
	// rate counted as.
	Retests []Retest `json:"retests"`
	// Retreats lists, for each validation that failed twice and was
	// followed by another, the rate the search went back below
	// (Config.Retreat): no rate that held above it was a candidate again.
	Retreats []float64 `json:"retreats,omitempty"`
	Rule     Rule      `json:"rule"` // the per-second rule the steps were judged by
	// Steps is every run, re-tests and validations included, in order,
	// each with its per-interval series.
	Steps      []Step         `json:"steps"`
	Validation *record.Result `json:"-"` // the last validating run's (nil: none ran)
}

// Bracket is a search's answer: Lo held, Hi failed twice (0: not found;
// nothing held, or nothing failed). Lo and Hi are measured rates, never
// grid points standing in for one.
type Bracket struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Width is (Hi−Lo)/Lo, or 0 where either end is missing.
func (b Bracket) Width() float64 {
	if b.Lo <= 0 || b.Hi <= 0 {
		return 0
	}
	return (b.Hi - b.Lo) / b.Lo
}

// String is "62000–64000 req/s (3.2 %)", "≥ 64000 req/s" without Hi,
// "< 1000 req/s" without Lo (rates may have held above a failed
// validation's: the search distrusts them).
func (b Bracket) String() string {
	switch {
	case b.Lo > 0 && b.Hi > 0:
		return fmt.Sprintf("%.0f–%.0f req/s (%.1f %%)", b.Lo, b.Hi, 100*b.Width())
	case b.Lo > 0:
		return fmt.Sprintf("≥ %.0f req/s (nothing failed)", b.Lo)
	case b.Hi > 0:
		return fmt.Sprintf("< %.0f req/s (nothing held below it)", b.Hi)
	}
	return "none"
}

// Retest is one re-test: a rate that failed, run again at once.
type Retest struct {
	Phase string  `json:"phase"`
	Rate  float64 `json:"rate"`
	First string  `json:"first"`  // the first run's verdict
	Again string  `json:"retest"` // the re-test's verdict
	// Outcome: "held" (the re-test held: the rate counts as held) or
	// "failed twice" (an upper bound: the server's, or the loader's
	// ceiling when the re-test was loader-bound).
	Outcome     string `json:"outcome"`
	LoaderBound bool   `json:"loader_bound,omitempty"`
}

// Rule is the per-interval rule as a search applied it.
type Rule struct {
	IntervalS          float64 `json:"interval_s"`
	WarmUpIntervals    int     `json:"warm_up_intervals"`
	HoldShare          float64 `json:"hold_share"`
	SLOMs              float64 `json:"slo_ms"`
	MaxErrorRate       float64 `json:"max_error_rate"`
	BacklogToleranceMs float64 `json:"backlog_tolerance_ms"`
	Precision          float64 `json:"precision"`
}

func (sc *Config) rule() Rule {
	return Rule{IntervalS: sc.Interval().Seconds(), WarmUpIntervals: 1, HoldShare: HoldShare,
		SLOMs: ms(sc.SLO), MaxErrorRate: sc.MaxErrorRate, BacklogToleranceMs: ms(sc.BacklogTolerance()), Precision: sc.Precision}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
