package saturate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Decided: at the bracket's lower end the runs that held, at its upper
// end the runs that failed; nothing else, and no step at an end not found.
func TestBracketDecided(t *testing.T) {
	f := func(b Bracket, asked float64, pass, want bool) {
		t.Helper()
		assert.Equal(t, want, b.Decided(&Step{Asked: asked, Pass: pass}), "%v, step at %.0f pass %v", b, asked, pass)
	}
	b := Bracket{Lo: 40_000, Hi: 41_000}
	f(b, 40_000, true, true)
	f(b, 40_000, false, false) // its first run failed, its re-test held
	f(b, 41_000, false, true)
	f(b, 41_000, true, false) // the short step held where the validation failed
	f(b, 39_000, true, false)
	f(b, 80_000, false, false)
	f(Bracket{Hi: 1}, 0, true, false)
	f(Bracket{Hi: 1}, 1, false, true)
	f(Bracket{Lo: 5000}, 5000, true, true)
}

// The steps that decide a search whose first validation failed twice:
// at the lower end the short step and the validating run that held; at
// the upper end the failed validation and its re-test, not the short
// step that held there first.
func TestDecidingStepsOfAFailedValidation(t *testing.T) {
	sc := DefaultConfig()
	sc.Anchor = 48_000
	sat := simSearch(t, sc, &simServer{Capacity: 40_000, DegradeAfter: 12 * time.Second, Degraded: 38_400})
	require.True(t, sat.Validated)
	var lo, hi []Step
	for i := range sat.Steps {
		s := &sat.Steps[i]
		if !sat.Bracket.Decided(s) {
			continue
		}
		switch s.Asked {
		case sat.Bracket.Lo:
			lo = append(lo, *s)
		case sat.Bracket.Hi:
			hi = append(hi, *s)
		default:
			t.Fatalf("step at %.0f decided a bracket %v", s.Asked, sat.Bracket)
		}
	}
	require.NotEmpty(t, lo)
	assert.Equal(t, PhaseValidate, lo[len(lo)-1].Phase, "the validating run is among them")
	assert.True(t, lo[len(lo)-1].Pass)
	assert.Greater(t, len(lo), 1, "and the short step before it")
	for _, s := range lo {
		assert.True(t, s.Pass)
	}
	require.NotEmpty(t, hi, "the failures at the upper end")
	for _, s := range hi {
		assert.False(t, s.Pass)
	}
	require.Len(t, hi, 2, "the failed validation and its re-test")
	assert.Equal(t, PhaseValidate, hi[0].Phase)
	assert.True(t, hi[1].Retry)
	heldAtHi := false
	for i := range sat.Steps {
		s := &sat.Steps[i]
		heldAtHi = heldAtHi || s.Asked == sat.Bracket.Hi && s.Pass
	}
	assert.True(t, heldAtHi, "the short step that held at the upper end is there, and was left out")
}

// JudgedSeconds leaves out the warm-up and the drain, and the last
// judged interval's p99 takes in the drain's, as judge did: a step that
// failed by its drain shows a failed last point, not a held one.
func TestJudgedSeconds(t *testing.T) {
	sc := DefaultConfig()
	s := Step{Asked: 1000, Length: 11 * time.Second, Seconds: series(12, time.Second, 1000, 2*time.Millisecond)}
	s.Seconds[11].Answered, s.Seconds[11].P99 = 3, 300*time.Millisecond // the drain: three late answers
	s.Seconds[5].P99 = 150 * time.Millisecond
	assert.Nil(t, s.JudgedSeconds(), "not judged yet")
	sc.judge(&s)
	got := s.JudgedSeconds()
	require.Len(t, got, 10)
	assert.Equal(t, 1.0, got[0].T, "the warm-up left out")
	assert.Equal(t, 150*time.Millisecond, got[4].P99)
	assert.False(t, got[4].Held())
	assert.True(t, got[3].Held())
	assert.Equal(t, 300*time.Millisecond, got[9].P99, "the drain's p99 judged with the last")
	assert.False(t, got[9].Held())
	assert.Equal(t, 1000.0, got[9].Rate, "its rate its own")
	assert.Equal(t, 2*time.Millisecond, s.Seconds[10].P99, "the step's own series unchanged")
	assert.False(t, s.Pass, "two of ten failed")
}
