package saturate

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outcome is how a lab's step goes: its kind and both sides' CPU shares
// (of 16 CPUs each, as a 16-CPU loader against a 16-CPU server).
type outcome struct {
	// "held", "p99" (over the SLO every second), "behind" (requests
	// never sent, the loader's own sends late every second: the loader
	// did not send), "waited" (requests never sent, every connection
	// busy at the cap, the loader's own sends on time: the server held
	// them) or "slow" (requests never sent, connections to spare and the
	// loader's own sends on time: the server answered too slowly).
	kind           string
	loader, server float64
}

func held(loader, server float64) outcome           { return outcome{"held", loader, server} }
func overSLO(loader, server float64) outcome        { return outcome{"p99", loader, server} }
func fellBehind(loader, server float64) outcome     { return outcome{"behind", loader, server} }
func connsExhausted(loader, server float64) outcome { return outcome{"waited", loader, server} }
func serverSlow(loader, server float64) outcome     { return outcome{"slow", loader, server} }

// lab is a measure function built from a world: how the attempt-th run
// (0, then 1 for the re-test) of a phase at a rate goes. The step it
// returns is a series that the rule judges as the outcome says.
type lab struct {
	sc      Config
	outcome func(phase string, rate float64, attempt int) outcome
	tries   map[string]int
}

func (l *lab) measure(phase string, rate float64, length time.Duration) (Step, error) {
	if l.tries == nil {
		l.tries = map[string]int{}
	}
	key := fmt.Sprintf("%s@%v", phase, rate)
	o := l.outcome(phase, rate, l.tries[key])
	l.tries[key]++
	iv := l.sc.Interval()
	s := Step{Asked: rate, Length: length, Seconds: series(int(length/iv)+1, iv, rate, time.Millisecond),
		LoaderCPUShare: o.loader, LoaderCPUs: 16, ServerCPUShare: o.server, ServerCPUs: 16,
		OwnLagKnown: true, ConnsPeak: 64, MaxConns: 256}
	switch o.kind {
	case "p99":
		for k := range s.Seconds {
			s.Seconds[k].P99 = 2 * l.sc.SLO
		}
	case "behind":
		s.Unsent = int64(rate / 10)
		for k := range s.Seconds {
			s.Seconds[k].OwnLagP99 = 10 * l.sc.BacklogTolerance()
		}
	case "waited":
		s.Unsent = int64(rate / 10)
		s.ConnsPeak, s.ConnWaits = s.MaxConns, int64(rate)
	case "slow":
		s.Unsent = int64(rate / 10)
	}
	return s, nil
}

func (l *lab) search(t *testing.T) *Saturation {
	t.Helper()
	sat, err := l.sc.search(l.measure, nil)
	require.NoError(t, err)
	return sat
}

// retests lists the rates re-tested, checking that each re-test follows
// the run that failed, at the same rate and phase.
func retests(t *testing.T, steps []Step) []float64 {
	t.Helper()
	var out []float64
	for i, s := range steps {
		if s.Retry {
			out = append(out, s.Asked)
			require.Positive(t, i)
			prev := steps[i-1]
			assert.True(t, prev.Asked == s.Asked && prev.Phase == s.Phase && !prev.Pass && !prev.Retry,
				"a re-test follows the run that failed: %+v then %+v", prev, s)
		}
	}
	return out
}

func failures(steps []Step) []float64 {
	var out []float64
	for _, s := range steps {
		if !s.Pass && !s.Retry {
			out = append(out, s.Asked)
		}
	}
	return out
}

// One ramp step at 32,000 fell behind, the loader's own sends late, with
// both sides far under 90 % (a hiccup). It is re-tested, the re-test
// holds, the rate counts as held, and the ramp climbs on to the server's
// real limit, 60,000, where p99 fails with the server busy.
func TestSearchRetestsAHiccupAndClimbsOn(t *testing.T) {
	l := &lab{sc: DefaultConfig(), outcome: func(phase string, rate float64, attempt int) outcome {
		switch {
		case rate == 32_000 && attempt == 0:
			return fellBehind(0.10, 0.40)
		case rate > 60_000:
			return overSLO(0.20, 0.97)
		}
		return held(0.10, 0.50)
	}}
	sat := l.search(t)
	assert.False(t, sat.LoaderBound, sat.Why)
	assert.True(t, sat.Validated)
	assert.LessOrEqual(t, sat.Rate, 60_000.0)
	assert.LessOrEqual(t, (60_000-sat.Rate)/sat.Rate, l.sc.Precision, "the server's limit, not the hiccup's")
	assert.Equal(t, failures(sat.Steps), retests(t, sat.Steps), "every failure is re-tested")
	assert.Equal(t, 32_000.0, sat.Retests[0].Rate)
	assert.Equal(t, "held", sat.Retests[0].Outcome)

	i := indexOf(sat.Steps, PhaseRamp, 32_000)
	first, again := sat.Steps[i], sat.Steps[i+1]
	assert.True(t, first.LoaderBound, "the hiccup reads as the loader's")
	assert.Contains(t, first.BoundWhy, "fell behind while it had connections free: the loader's own sends were late")
	assert.True(t, again.Retry && again.Pass)
	assert.Equal(t, 64_000.0, sat.Steps[i+2].Asked, "the ramp climbs on after a re-test that holds")
}

// A loader that cannot send above 30,000 (one event loop on 16 CPUs: its
// share of its set stays low, its own sends late) while the server idles:
// every step above it falls behind twice. The search sharpens the lower bound below the
// loader's ceiling and ends as "≥", never as the server's limit.
func TestSearchFellBehindTwiceEndsAsALowerBound(t *testing.T) {
	l := &lab{sc: DefaultConfig(), outcome: func(phase string, rate float64, attempt int) outcome {
		if rate > 30_000 {
			return fellBehind(0.07, 0.30)
		}
		return held(0.06, 0.30)
	}}
	sat := l.search(t)
	assert.True(t, sat.LoaderBound)
	assert.True(t, sat.Validated)
	assert.LessOrEqual(t, sat.Rate, 30_000.0)
	assert.Greater(t, sat.Rate, 16_000.0, "bisected up towards the loader's ceiling")
	assert.LessOrEqual(t, (sat.LoaderCeiling-sat.Rate)/sat.Rate, l.sc.Precision, "the lower bound sharpened to the precision")
	assert.Greater(t, sat.LoaderCeiling, 30_000.0)
	assert.Equal(t, sat.LoaderCeiling, sat.Bracket.Hi)
	assert.Equal(t, 16, sat.LoaderCPUs)
	assert.Contains(t, sat.Why, "the loader's own sends were late (p99 over 10ms) in 10 of 10 intervals")
	for _, s := range sat.Steps {
		if !s.Pass {
			assert.True(t, s.LoaderBound, "%v: every failure here is the loader's", s.Asked)
		}
	}
	ramp := stepsOf(sat.Steps, PhaseRamp)
	assert.Equal(t, []float64{1000, 2000, 4000, 8000, 16_000, 32_000, 32_000}, asked(ramp), "the ramp stops at the loader's ceiling, after one re-test")
	assert.Equal(t, sat.Rate, sat.Steps[len(sat.Steps)-1].Asked)
	assert.Equal(t, PhaseValidate, sat.Steps[len(sat.Steps)-1].Phase)
}

// A loader at 90 % of its CPUs: p99 fails above 50,000 because the
// loader queues, not the server. Each failure is re-tested, fails again,
// and the result is "≥".
func TestSearchLoaderOutOfCPUEndsAsALowerBound(t *testing.T) {
	l := &lab{sc: DefaultConfig(), outcome: func(phase string, rate float64, attempt int) outcome {
		if rate > 50_000 {
			return overSLO(0.95, 0.60)
		}
		return held(0.80, 0.45)
	}}
	sat := l.search(t)
	assert.True(t, sat.LoaderBound)
	assert.Greater(t, sat.LoaderCeiling, 50_000.0)
	assert.Less(t, sat.LoaderCeiling, 64_000.0, "the lowest loader-bound failure, from the bisection")
	assert.LessOrEqual(t, sat.Rate, 50_000.0)
	assert.LessOrEqual(t, (sat.LoaderCeiling-sat.Rate)/sat.Rate, l.sc.Precision)
	assert.Equal(t, failures(sat.Steps), retests(t, sat.Steps))
	for _, r := range sat.Retests {
		assert.Equal(t, "failed twice", r.Outcome)
		assert.True(t, r.LoaderBound)
	}
	assert.Equal(t, fmt.Sprintf("at %.0f req/s the loader used 95%% of its 16 CPUs (the server at 60%% of its 16 CPUs): it ran out of CPU", sat.LoaderCeiling), sat.Why)
}

// The server's limit stays a saturation, whatever its CPU share: falling
// behind with every connection busy at the cap, or with connections free
// and the loader's own sends on time (a server stalled on its store, its
// CPU idle), p99 over the SLO with the loader under 90 %, or falling
// behind with the server's CPU unknown. Every failure is re-tested.
func TestSearchServerBoundFailureIsTheSaturation(t *testing.T) {
	f := func(name string, fail outcome) {
		t.Helper()
		l := &lab{sc: DefaultConfig(), outcome: func(phase string, rate float64, attempt int) outcome {
			if rate > 45_000 {
				return fail
			}
			return held(0.30, 0.70)
		}}
		sat := l.search(t)
		assert.False(t, sat.LoaderBound, "%s: %s", name, sat.Why)
		assert.Zero(t, sat.LoaderCeiling, name)
		assert.True(t, sat.Validated, name)
		assert.LessOrEqual(t, sat.Rate, 45_000.0, name)
		assert.LessOrEqual(t, (45_000-sat.Rate)/sat.Rate, l.sc.Precision, name)
		assert.Equal(t, failures(sat.Steps), retests(t, sat.Steps), name)
		assert.Greater(t, sat.Bracket.Hi, 45_000.0, name)
	}
	f("fell behind, server busy", serverSlow(0.40, 0.95))
	f("fell behind, server idle, sends on time", serverSlow(0.38, 0.35))
	f("fell behind, connections exhausted", connsExhausted(0.30, 0.20))
	f("p99, loader under 90%", overSLO(0.40, 0.20))
	f("fell behind, server unknown", serverSlow(0.40, -1))
}

// A server-bound failure above a loader-bound one: the bracket is closed
// by the loader, so the result is still a lower bound, and Why names the
// server's failure too.
func TestSearchLoaderCeilingBelowTheServersFailure(t *testing.T) {
	l := &lab{sc: DefaultConfig(), outcome: func(phase string, rate float64, attempt int) outcome {
		switch {
		case rate >= 64_000:
			return overSLO(0.85, 0.97)
		case rate > 40_000:
			return overSLO(0.93, 0.80)
		}
		return held(0.70, 0.60)
	}}
	sat := l.search(t)
	assert.True(t, sat.LoaderBound)
	assert.Less(t, sat.LoaderCeiling, 64_000.0)
	assert.LessOrEqual(t, sat.Rate, 40_000.0)
	assert.LessOrEqual(t, (sat.LoaderCeiling-sat.Rate)/sat.Rate, l.sc.Precision)
	assert.Contains(t, sat.Why, "the loader used 93%")
	assert.Contains(t, sat.Why, "the server's own first failure came at 64000 req/s")
}

// The validating run's failure is judged like any step's and re-tested.
// Failing twice, its rate bounds the search (loader-bound: the loader's
// ceiling) and the search validates lower; after MaxValidations it ends
// with no saturation. A validation that fails once and then holds stands.
func TestSearchJudgesTheValidation(t *testing.T) {
	f := func(name string, validation func(rate float64, attempt int) outcome, wantLoaderBound, wantValidated bool, wantValidations int, whyHas string) *Saturation {
		t.Helper()
		l := &lab{sc: DefaultConfig(), outcome: func(phase string, rate float64, attempt int) outcome {
			switch {
			case phase == PhaseValidate:
				return validation(rate, attempt)
			case rate > 10_000:
				return overSLO(0.20, 0.99)
			}
			return held(0.20, 0.50)
		}}
		sat := l.search(t)
		assert.Equal(t, wantLoaderBound, sat.LoaderBound, "%s: %s", name, sat.Why)
		assert.Equal(t, wantValidated, sat.Validated, name)
		assert.Len(t, stepsOf(sat.Steps, PhaseValidate), wantValidations, name)
		if whyHas == "" {
			assert.Empty(t, sat.Why, name)
		}
		assert.Contains(t, sat.Why, whyHas, name)
		last := sat.Steps[len(sat.Steps)-1]
		if sat.Validated {
			assert.Zero(t, last.Left, "%s: nothing is left after the validation", name)
		}
		return sat
	}
	always := func(o outcome) func(float64, int) outcome { return func(float64, int) outcome { return o } }
	sat := f("loader out of CPU", always(overSLO(0.95, 0.40)), true, false, 6, "the validating run at")
	assert.Contains(t, sat.Why, "the loader used 95%")
	assert.Zero(t, sat.Rate)
	f("loader fell behind", always(fellBehind(0.30, 0.40)), true, false, 6, "fell behind while it had connections free")
	sat = f("server-bound", always(overSLO(0.30, 0.99)), false, false, 6, "")
	assert.Positive(t, sat.Candidate)
	assert.Less(t, sat.Candidate, 10_000.0, "each failed validation took the search lower")
	f("fails once, then holds", func(_ float64, attempt int) outcome {
		if attempt == 0 {
			return fellBehind(0.30, 0.40)
		}
		return held(0.30, 0.40)
	}, false, true, 2, "")
	// Long runs hold only up to 9,800: the first candidate (10,000) fails
	// twice, and the search goes back to 2.5 % below it (9,750, which
	// held in the short steps), not to the rate that held one bisection
	// below it (9,875), whose validation would fail too; 9,750 holds.
	sat = f("long runs hold less", func(rate float64, _ int) outcome {
		if rate > 9800 {
			return overSLO(0.30, 0.99)
		}
		return held(0.30, 0.40)
	}, false, true, 3, "")
	assert.Equal(t, 9750.0, sat.Rate)
	assert.Equal(t, Bracket{Lo: 9750, Hi: 10_000}, sat.Bracket)
	assert.Equal(t, []float64{10_000, 10_000, 9750}, asked(stepsOf(sat.Steps, PhaseValidate)))
	assert.Equal(t, []float64{9750}, sat.Retreats)
}

// The time left after each step is a lower bound of what the search
// actually took after it, and 0 after the validation that held.
func TestLeftIsALowerBound(t *testing.T) {
	for _, anchor := range []float64{0, 48_000} {
		sc := DefaultConfig()
		sc.Anchor = anchor
		sat := simSearch(t, sc, &simServer{Capacity: 40_000})
		require.True(t, sat.Validated)
		for i, s := range sat.Steps {
			var rest time.Duration
			for _, r := range sat.Steps[i+1:] {
				rest += r.Length + sc.Cooldown
			}
			assert.LessOrEqual(t, s.Left, rest, "anchor %.0f: after step %d (%s %.0f)", anchor, i, s.Phase, s.Asked)
			if i < len(sat.Steps)-1 {
				assert.Positive(t, s.Left, "step %d", i)
			}
		}
		assert.Zero(t, sat.Steps[len(sat.Steps)-1].Left)
	}
}

func indexOf(steps []Step, phase string, rate float64) int {
	for i, s := range steps {
		if s.Phase == phase && s.Asked == rate {
			return i
		}
	}
	return -1
}

func stepsOf(steps []Step, phase string) []Step {
	var out []Step
	for _, s := range steps {
		if s.Phase == phase {
			out = append(out, s)
		}
	}
	return out
}

func asked(steps []Step) []float64 {
	out := make([]float64, len(steps))
	for i, s := range steps {
		out[i] = s.Asked
	}
	return out
}
