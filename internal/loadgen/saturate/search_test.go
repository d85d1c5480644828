package saturate

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simSearch runs a search of sc against m.
func simSearch(t *testing.T, sc Config, m *simServer) *Saturation {
	t.Helper()
	m.Interval = sc.Interval()
	if m.Base == 0 {
		m.Base = 500 * time.Microsecond
	}
	sat, err := sc.search(m.measure, nil)
	require.NoError(t, err)
	return sat
}

// bracketOf is what a search answered, for comparing two searches.
type answerOf struct {
	Rate      float64
	Validated bool
	Bracket   Bracket
}

func answer(sat *Saturation) answerOf { return answerOf{sat.Rate, sat.Validated, sat.Bracket} }

// The knee of a server of known capacity is found within 2.5 %: the
// bracket holds the capacity (a rate a little above it holds until its
// backlog grows past the tolerance: 0.2 % over), is at most 2.5 % wide,
// and its lower end is validated. With and without a closed-loop anchor.
func TestSearchFindsTheKneeWithin2_5Percent(t *testing.T) {
	f := func(capacity, anchor float64) {
		t.Helper()
		sc := DefaultConfig()
		sc.Anchor = anchor
		sat := simSearch(t, sc, &simServer{Capacity: capacity})
		name := fmt.Sprintf("capacity %.0f, anchor %.0f", capacity, anchor)
		require.True(t, sat.Validated, "%s: %+v", name, sat.Bracket)
		assert.Equal(t, sat.Rate, sat.Bracket.Lo, name)
		assert.LessOrEqual(t, sat.Bracket.Width(), sc.Precision, name)
		assert.LessOrEqual(t, sat.Rate, capacity*1.002, name)
		assert.GreaterOrEqual(t, sat.Bracket.Hi, capacity, name)
		assert.LessOrEqual(t, (capacity-sat.Rate)/capacity, 0.025, "%s: the knee within 2.5 %%", name)
		for _, s := range sat.Steps {
			if anchor > 0 && !sat.AnchorExceeded {
				assert.LessOrEqual(t, s.Asked, anchor, "%s: no step asks above the anchor", name)
			}
		}
		assert.False(t, sat.LoaderBound, name)
	}
	f(1500, 0)
	f(3000, 0)
	f(47_000, 0)
	f(85_123, 0)
	f(30_000, 35_000) // the closed loop served 1.17× the open model's knee
	f(62_500, 64_000)
	f(20_000, 60_000) // a closed loop far above: the ramp starts above the knee and comes down
}

// A closed-loop throughput below the knee bounds nothing: the step at it
// holds, and the search climbs on, by AboveAnchorFactor rather than
// Factor: a limit just above the anchor is found without a step at twice
// it.
func TestSearchClimbsPastAnAnchorThatHeld(t *testing.T) {
	for _, capacity := range []float64{50_000, 22_000} {
		sc := DefaultConfig()
		sc.Anchor = 20_000
		m := &simServer{Capacity: capacity}
		sat := simSearch(t, sc, m)
		assert.True(t, sat.AnchorExceeded)
		assert.True(t, sat.Validated)
		assert.LessOrEqual(t, (capacity-sat.Rate)/capacity, 0.025, "capacity %.0f", capacity)
		var above []float64
		for _, c := range m.calls {
			if c.Phase == PhaseRamp && c.Rate > sc.Anchor {
				above = append(above, c.Rate)
			}
		}
		require.NotEmpty(t, above, "capacity %.0f", capacity)
		assert.Equal(t, sc.Anchor*AboveAnchorFactor, above[0], "the first step past the anchor")
		for _, c := range m.calls {
			assert.Less(t, c.Rate, 1.25*capacity*AboveAnchorFactor, "capacity %.0f: no step far above the limit", capacity)
		}
	}
}

// What an anchored search costs with the defaults: its steps, re-tests
// and validations, and the time they take with their cooldowns. This is
// the figure DefaultConfig's comment gives (about 2.5 minutes); a change
// that makes searches dearer shows here.
func TestAnchoredSearchCost(t *testing.T) {
	for _, c := range []struct {
		sc      Config
		maxTime time.Duration
	}{{DefaultConfig(), 160 * time.Second}, {QuickConfig(), 75 * time.Second}} {
		for _, knee := range []float64{0.70, 0.85, 0.95} { // the open model's knee as a share of the closed loop
			sc := c.sc
			sc.Anchor = 40_000
			m := &simServer{Capacity: knee * sc.Anchor}
			sat := simSearch(t, sc, m)
			require.True(t, sat.Validated)
			var total time.Duration
			for _, call := range m.calls {
				total += call.Length + sc.Cooldown
			}
			t.Logf("step %v, knee %.2f of the anchor: %d runs (%d re-tests), %v", sc.Step, knee, len(m.calls), len(sat.Retests), total)
			assert.LessOrEqual(t, total, c.maxTime, "step %v, knee %.2f", sc.Step, knee)
		}
	}
}

// A stall of 150 ms in any one second of any step moves no result: the
// per-second rule lets one bad second of ten pass, and a stall that
// fails a step anyway (near the knee its backlog takes seconds to drain;
// or it straddles two intervals) is re-tested, and the re-test holds.
// Every step of the search, every second of it (the warm-up too), the
// stall within a second and across its end.
func TestAStallMovesNoResult(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		sc   Config
	}{{"full", DefaultConfig()}, {"quick", QuickConfig()}} {
		sc := c.sc
		sc.Anchor = 48_000
		const capacity = 40_000
		base := &simServer{Capacity: capacity}
		want := answer(simSearch(t, sc, base))
		require.True(t, want.Validated)
		iv := sc.Interval()
		absorbed, retested := 0, 0
		for call, step := range base.calls {
			for k := range int(step.Length / iv) {
				for _, at := range []time.Duration{iv * 3 / 10, iv - 75*time.Millisecond} {
					stall := time.Duration(k)*iv + at
					m := &simServer{Capacity: capacity, Stalls: map[int][]simStall{call: {{At: stall, For: 150 * time.Millisecond}}}}
					sat := simSearch(t, sc, m)
					require.Equal(t, want, answer(sat), "%s: a stall at %v in run %d (%s at %.0f)", c.name, stall, call, step.Phase, step.Rate)
					if len(m.calls) == len(base.calls) {
						absorbed++
					} else {
						retested++
					}
				}
			}
		}
		t.Logf("%s: %d stalls cost nothing, %d a re-test", c.name, absorbed, retested)
		assert.Positive(t, absorbed)
	}
}

// Below the knee a stall inside one second costs that second only: the
// step holds without a re-test.
func TestAStallCostsItsSecondNotTheStep(t *testing.T) {
	sc := DefaultConfig()
	iv := sc.Interval()
	for _, share := range []float64{0.3, 0.5, 0.8} {
		for k := 1; k < 11; k++ {
			m := &simServer{Capacity: 40_000, Interval: iv, Base: 500 * time.Microsecond,
				Stalls: map[int][]simStall{0: {{At: time.Duration(k)*iv + 300*time.Millisecond, For: 150 * time.Millisecond}}}}
			s, err := m.measure(PhaseRamp, share*40_000, sc.Step)
			require.NoError(t, err)
			sc.judge(&s)
			assert.True(t, s.Pass, "%.0f %% of capacity, stall in second %d: %s", 100*share, k, s.Verdict)
			assert.Equal(t, 9, s.OK, "%.0f %% of capacity, stall in second %d", 100*share, k)
		}
	}
}

// A rate that fails once and then holds is not an upper bound: a stall
// of a whole second fails a step below the knee; its re-test holds, the
// rate counts as held, and the search ends where it ends without it.
func TestARateThatFailsOnceThenHoldsIsNotAnUpperBound(t *testing.T) {
	sc := DefaultConfig()
	sc.Anchor = 48_000
	const capacity = 40_000
	base := &simServer{Capacity: capacity}
	want := answer(simSearch(t, sc, base))
	for call, step := range base.calls {
		if step.Rate > capacity*0.97 || step.Phase == PhaseValidate {
			continue
		}
		m := &simServer{Capacity: capacity, Stalls: map[int][]simStall{call: {{At: 3 * time.Second, For: 2 * time.Second}}}}
		sat := simSearch(t, sc, m)
		assert.Equal(t, want, answer(sat), "run %d at %.0f", call, step.Rate)
		require.NotEmpty(t, sat.Retests)
		r := sat.Retests[0]
		assert.Equal(t, step.Rate, r.Rate)
		assert.Equal(t, "held", r.Outcome)
		assert.Contains(t, r.First, "p99 > 100ms in")
		assert.Equal(t, "ok", r.Again)
		assert.NotEqual(t, step.Rate, sat.Bracket.Hi, "it did not bound the search")
		first, again := sat.Steps[call], sat.Steps[call+1]
		assert.False(t, first.Pass)
		assert.True(t, again.Retry && again.Pass && again.Asked == first.Asked)
	}
}

// searchShortOver searches, with the defaults and a closed loop of
// 48,000, a server that serves 40,000 req/s for 12 s and sustained after
// (what a short step sees, and what a validation does), and requires a
// validated result.
func searchShortOver(t *testing.T, sustained float64) (Config, *Saturation) {
	t.Helper()
	sc := DefaultConfig()
	sc.Anchor = 48_000
	sat := simSearch(t, sc, &simServer{Capacity: 40_000, DegradeAfter: 12 * time.Second, Degraded: sustained})
	require.True(t, sat.Validated, "%+v", sat.Bracket)
	return sc, sat
}

// A failed validation lowers the result. The server sustains its
// capacity for 12 s and 4 % less after: every short step sees the
// capacity, a 30 s validation the lower one. The first candidate fails
// its validation twice and bounds the search; the search goes down and
// validates again, and ends with a validated rate the long run sustains.
func TestAFailedValidationLowersTheResult(t *testing.T) {
	const sustained = 38_400
	sc, sat := searchShortOver(t, sustained)
	var validations []Step
	for _, s := range sat.Steps {
		if s.Phase == PhaseValidate {
			validations = append(validations, s)
		}
	}
	require.Greater(t, len(validations), 2)
	first := validations[0]
	assert.False(t, first.Pass)
	assert.Less(t, sat.Rate, first.Asked, "the result is below the first candidate")
	assert.LessOrEqual(t, sat.Rate, sustained*1.002)
	assert.GreaterOrEqual(t, sat.Rate, sustained*0.95)
	assert.Equal(t, sat.Rate, sat.Bracket.Lo)
	last := validations[len(validations)-1]
	assert.True(t, last.Pass)
	assert.Equal(t, sat.Rate, last.Asked)
	// Each failed validation sent the search back by a widening step (2.5 %,
	// then 5 %), and the bracket reports the gap between the validated
	// rate and the last validation that failed: as wide as that step, not
	// narrowed by short steps that over-read.
	require.Len(t, sat.Retreats, len(validations)/2)
	assert.Equal(t, sat.Rate, sat.Retreats[len(sat.Retreats)-1], "the last retreat's rate is the one validated")
	lastFailed := validations[len(validations)-2]
	assert.False(t, lastFailed.Pass)
	assert.Equal(t, lastFailed.Asked, sat.Bracket.Hi)
	assert.Equal(t, sc.Retreat(lastFailed.Asked, len(sat.Retreats)-1), sat.Rate)
	seen := 0
	for _, s := range sat.Steps {
		if s.Phase == PhaseValidate {
			seen++
		} else if seen >= 2 {
			assert.LessOrEqual(t, s.Asked, sat.Retreats[0], "no short step after a retreat asks more than its rate")
		}
	}
}

// A server whose long runs sustain 7 % less than its short steps show is
// validated within its three validations: the search goes back 2.5 %, then
// 5 % more, where one bisection at a time (about 1.25 % each near the
// knee) spent all three and ended with no saturation.
func TestRetreatsReachALongRunSevenPercentLower(t *testing.T) {
	const sustained = 37_200
	_, sat := searchShortOver(t, sustained)
	assert.LessOrEqual(t, sat.Rate, sustained*1.002)
	assert.GreaterOrEqual(t, sat.Rate, sustained*0.95)
	assert.Len(t, sat.Retreats, 2)
}

// Validations are bounded: a server that sustains far less over a long
// run than over a step never holds over one, and after MaxValidations the
// search ends without a saturation: Rate 0, the bracket from the short
// steps, the last candidate named.
func TestValidationsAreBounded(t *testing.T) {
	sc := DefaultConfig()
	sc.Anchor = 48_000
	m := &simServer{Capacity: 40_000, DegradeAfter: 12 * time.Second, Degraded: 20_000}
	sat := simSearch(t, sc, m)
	assert.False(t, sat.Validated)
	assert.Zero(t, sat.Rate)
	assert.Positive(t, sat.Candidate)
	assert.Positive(t, sat.Bracket.Lo)
	n := 0
	for _, c := range m.calls {
		if c.Phase == PhaseValidate {
			n++
		}
	}
	assert.Equal(t, 2*sc.MaxValidations, n, "each validation with its re-test")
}

// Nothing holds: the search goes down by Factor, re-testing each, and
// ends with no rate, nothing validated.
func TestSearchWhenNothingHolds(t *testing.T) {
	sc := DefaultConfig()
	sc.StartRate = 1000
	sat := simSearch(t, sc, &simServer{Capacity: 0.3})
	assert.Zero(t, sat.Rate)
	assert.Zero(t, sat.Bracket.Lo)
	assert.Equal(t, 1.0, sat.Bracket.Hi)
	for _, s := range sat.Steps {
		assert.NotEqual(t, PhaseValidate, s.Phase, "nothing to validate")
	}
}

func TestSearchStopsAtMaxRate(t *testing.T) {
	sc := DefaultConfig()
	sc.MaxRate = 5000
	m := &simServer{Capacity: 1e9}
	sat := simSearch(t, sc, m)
	assert.Equal(t, 5000.0, sat.Rate)
	assert.True(t, sat.HitMax)
	assert.Equal(t, Bracket{Lo: 5000}, sat.Bracket)
	var asked []float64
	for _, c := range m.calls {
		asked = append(asked, c.Rate)
	}
	assert.Equal(t, []float64{1000, 2000, 4000, 5000, 5000}, asked)
}

// The bracket is printed as a bracket, never as one figure.
func TestBracketText(t *testing.T) {
	assert.Equal(t, "62000–64000 req/s (3.2 %)", Bracket{Lo: 62_000, Hi: 64_000}.String())
	assert.Equal(t, "≥ 5000 req/s (nothing failed)", Bracket{Lo: 5000}.String())
	assert.Equal(t, "< 1 req/s (nothing held below it)", Bracket{Hi: 1}.String())
}
