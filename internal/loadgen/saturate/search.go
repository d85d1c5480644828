package saturate

import (
	"fmt"
	"math"
	"time"
)

// measureFunc runs one step at rate for length and returns what it
// measured (Seconds and the whole-step figures), not yet judged.
type measureFunc func(phase string, rate float64, length time.Duration) (Step, error)

// maxTrials bounds the rates one refinement tries, whatever Precision
// says (from 1,000,000 down to 1 by halves is 20).
const maxTrials = 24

// searcher is one search's state. Rates that held are kept (held); the
// bracket's upper end is the lowest rate that failed twice, the server's
// (hi) or the loader's (ceil); its lower end is the highest rate that held
// below that.
type searcher struct {
	sc      *Config
	measure measureFunc
	onStep  func(Step)
	out     *Saturation

	held     []float64
	hi, ceil float64
	ceilStep Step
	// anchor is the closed loop's throughput while it still bounds the
	// search: an upper end that was never measured (0: none, or measured).
	anchor float64
	// below is the rate the last failed validation sent the search back
	// to (retreatFrom): rates that held above it are no candidates, and
	// no step asks more (0: none). retreat is set until it is measured.
	below   float64
	retreat bool
}

// search runs the search over measure (the package comment's search),
// calling onStep, if not nil, with every step as it is decided.
func (sc *Config) search(measure measureFunc, onStep func(Step)) (*Saturation, error) {
	x := &searcher{sc: sc, measure: measure, onStep: onStep,
		out: &Saturation{Anchor: sc.Anchor, Rule: sc.rule(), Retests: []Retest{}}}
	err := x.run()
	x.finish()
	return x.out, err
}

func (x *searcher) run() error {
	sc := x.sc
	first := sc.StartRate
	if sc.Anchor > 0 {
		first = math.Max(1, math.Min(math.Round(sc.AnchorShare*sc.Anchor), sc.MaxRate))
		if a := math.Min(math.Round(sc.Anchor), sc.MaxRate); a > first {
			x.anchor = a
		}
	}
	if err := x.refine(first); err != nil {
		return err
	}
	for v := range sc.MaxValidations {
		lo := x.lo()
		if lo == 0 {
			return nil
		}
		x.out.Candidate = lo
		held, err := x.trial(PhaseValidate, lo, sc.ValidateFor)
		if err != nil || held {
			if held {
				x.out.Rate, x.out.Validated = lo, true
			}
			return err
		}
		// lo failed twice over its validation: it is an upper bound now;
		// go down below it and validate again, if another validation may
		// follow.
		if v == sc.MaxValidations-1 {
			return nil
		}
		x.retreatFrom(lo, v)
		if err := x.refine(0); err != nil {
			return err
		}
	}
	return nil
}

// retreatFrom sends the search back below failed, the candidate whose
// validation (the v-th, from 0) failed twice: the short steps held there
// and the long run did not, so the short steps over-read near it, and the
// next-highest rate that held tends to fail its validation too
// (docs/load-lab.md). So the search distrusts every rate that held
// above Retreat(failed, v), and measures that rate before it validates
// again.
// The bracket's upper end stays the lowest rate that failed, so a
// retreat widens the bracket it reports, never hides it.
func (x *searcher) retreatFrom(failed float64, v int) {
	to := x.sc.Retreat(failed, v)
	x.out.Retreats = append(x.out.Retreats, to)
	x.below = to
	x.retreat = x.lo() < to
}

// Retreat is the rate below which the search looks for its next candidate
// after the v-th validation (from 0) failed twice at failed: Precision
// below it, then twice that, and so on (a full search's 2.5 %: 2.5 %,
// then 5 % below the second candidate). It is the next rate measured.
func (sc *Config) Retreat(failed float64, v int) float64 {
	return math.Round(failed * (1 - sc.Precision*math.Pow(2, float64(v))))
}

// refine tries rates, starting at first if above 0, until the bracket is
// within Precision, or nothing holds, or MaxRate held.
func (x *searcher) refine(first float64) error {
	for range maxTrials {
		rate, phase := first, PhaseRamp
		if first == 0 {
			rate, phase = x.next()
		}
		first = 0
		if rate == 0 {
			return nil
		}
		if _, err := x.trial(phase, rate, x.sc.Step); err != nil {
			return err
		}
	}
	return nil
}

// next is the rate to try next and its phase, or 0 when the search is
// done: a retreat's rate first, then climb by Factor with no upper end
// yet, go down by Factor with nothing held below it, bisect between them,
// and measure the anchor itself once the bracket below it is narrow (it
// is no measured failure).
func (x *searcher) next() (float64, string) {
	sc := x.sc
	if x.retreat {
		x.retreat = false
		return x.below, PhaseBisect
	}
	lo, up := x.lo(), x.up()
	unmeasured, distrusted := false, false
	if a := lower(up, x.anchor); a != up {
		up, unmeasured = a, true
	}
	if b := lower(up, x.below); b != up {
		up, unmeasured, distrusted = b, false, true
	}
	switch {
	case up == 0:
		if lo >= sc.MaxRate {
			x.out.HitMax = true
			return 0, ""
		}
		return math.Min(math.Round(lo*x.factor()), sc.MaxRate), PhaseRamp
	case lo == 0:
		r := math.Round(up / sc.Factor)
		if r < 1 || r >= up {
			return 0, ""
		}
		return r, PhaseRamp
	case distrusted && lo >= up:
		return 0, "" // the retreat's rate held: the next candidate
	}
	mid := math.Round((lo + up) / 2)
	if (up-lo)/lo <= sc.Precision || mid <= lo || mid >= up {
		if unmeasured {
			x.anchor = 0 // measured from now on: a failure or a rate that held
			return up, PhaseRamp
		}
		return 0, ""
	}
	return mid, PhaseBisect
}

// AboveAnchorFactor is how the ramp climbs once a step at the closed
// loop's throughput held (at most Factor): that server's limit is seldom
// far above what a closed loop served.
const AboveAnchorFactor = 1.25

// factor is the ramp's factor: Factor, or AboveAnchorFactor past an
// anchor that held.
func (x *searcher) factor() float64 {
	if x.out.AnchorExceeded {
		return math.Min(x.sc.Factor, AboveAnchorFactor)
	}
	return x.sc.Factor
}

// lo is the highest rate that held below the bracket's upper end, and
// not above a retreat's rate (0: none).
func (x *searcher) lo() float64 {
	up, lo := x.up(), 0.0
	for _, r := range x.held {
		if x.below > 0 && r > x.below {
			continue
		}
		if (up == 0 || r < up) && r > lo {
			lo = r
		}
	}
	return lo
}

// up is the lowest rate that failed twice, the server's or the loader's
// (0: none).
func (x *searcher) up() float64 { return lower(x.ceil, x.hi) }

// lower is the lower of two upper ends, 0 standing for none.
func lower(a, b float64) float64 {
	if a <= 0 || b > 0 && b < a {
		return b
	}
	return a
}

// trial runs rate, and once more at once if it failed, and returns
// whether it held. A rate that fails twice becomes an upper end: the
// server's, or the loader's ceiling where the re-test was loader-bound.
func (x *searcher) trial(phase string, rate float64, length time.Duration) (bool, error) {
	s, err := x.try(phase, rate, length, false)
	if err != nil {
		return false, err
	}
	if !s.Pass {
		s.Left = length + x.sc.Cooldown + x.left(phase, rate)
		x.record(s)
		first := s.Verdict
		if s, err = x.try(phase, rate, length, true); err != nil {
			return false, err
		}
		r := Retest{Phase: phase, Rate: rate, First: first, Again: s.Verdict, Outcome: "held"}
		if !s.Pass {
			r.Outcome, r.LoaderBound = "failed twice", s.LoaderBound
		}
		x.out.Retests = append(x.out.Retests, r)
	}
	switch {
	case s.Pass:
		x.held = append(x.held, rate)
		if x.anchor == 0 && x.sc.Anchor > 0 && rate >= math.Round(x.sc.Anchor) {
			x.out.AnchorExceeded = true
		}
	case s.LoaderBound:
		if x.ceil == 0 || rate < x.ceil {
			x.ceil, x.ceilStep = rate, s
		}
	default:
		x.hi = lower(x.hi, rate)
	}
	s.Left = x.left(phase, 0)
	if phase == PhaseValidate && s.Pass {
		s.Left = 0
	}
	x.record(s)
	return s.Pass, nil
}

func (x *searcher) try(phase string, rate float64, length time.Duration, retry bool) (Step, error) {
	s, err := x.measure(phase, rate, length)
	if err != nil {
		return s, err
	}
	s.Phase, s.Asked, s.Length, s.Retry = phase, rate, length, retry
	x.sc.judge(&s)
	s.LoaderBound, s.BoundWhy = Bound(&s)
	return s, nil
}

func (x *searcher) record(s Step) {
	x.out.Steps = append(x.out.Steps, s)
	if x.onStep != nil {
		x.onStep(s)
	}
}

// left is the least time the search needs after a step of phase: the
// steps the bracket still needs if each holds at once, and a validation.
// Re-tests, and validations that fail, add to it. failing, if above 0,
// is a rate about to be re-tested, counted as if it fails again.
func (x *searcher) left(phase string, failing float64) time.Duration {
	sc := x.sc
	step, validate := sc.Step+sc.Cooldown, sc.ValidateFor+sc.Cooldown
	if phase == PhaseValidate {
		if failing > 0 {
			return 0 // the re-test is counted by the caller
		}
		return validate
	}
	lo, up := x.lo(), lower(lower(x.up(), failing), x.anchor)
	n := 0
	switch {
	case up == 0 && lo >= sc.MaxRate:
	case up == 0:
		n = 1 + bisections(lo, math.Min(lo*x.factor(), sc.MaxRate), sc.Precision)
	case lo == 0:
		n = 1
	default:
		n = bisections(lo, up, sc.Precision)
	}
	if lo == 0 && up > 0 && n == 0 {
		return 0
	}
	return step*time.Duration(n) + validate
}

// bisections is how many bisection steps narrow [lo, hi] to precision,
// each holding.
func bisections(lo, hi, precision float64) int {
	n := 0
	for ; n < maxTrials && lo > 0 && (hi-lo)/lo > precision; n++ {
		mid := math.Round((lo + hi) / 2)
		if mid <= lo || mid >= hi {
			break
		}
		lo = mid
	}
	return n
}

// finish fills in the bracket and who bounded it.
func (x *searcher) finish() {
	out := x.out
	out.Bracket = Bracket{Lo: x.lo(), Hi: x.up()}
	if out.Validated {
		out.Bracket.Lo = out.Rate
	}
	if x.ceil > 0 && x.up() == x.ceil {
		out.LoaderBound, out.LoaderCeiling, out.LoaderCPUs = true, x.ceil, x.ceilStep.LoaderCPUs
		out.Why = fmt.Sprintf("at %.0f req/s %s", x.ceil, x.ceilStep.BoundWhy)
		if x.ceilStep.Phase == PhaseValidate {
			out.Why = fmt.Sprintf("the validating run at %.0f req/s: %s", x.ceil, x.ceilStep.BoundWhy)
		}
		if x.hi > 0 {
			out.Why += fmt.Sprintf("; the server's own first failure came at %.0f req/s", x.hi)
		}
	}
}
