package compare

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
)

// TestCurveKeepsSecondsOfDecidingStepsOnly: compare.json keeps the
// judged intervals of the steps that decided the bracket (at its lower
// end the runs that held, at its upper end the runs that failed) and of
// no other, each as judged: the warm-up and the drain left out, a
// stalled interval not OK.
func TestCurveKeepsSecondsOfDecidingStepsOnly(t *testing.T) {
	judged := []saturate.Second{
		{T: 0, Rate: 90, P99: time.Millisecond, Verdict: "warm-up"},
		{T: 1, Rate: 100, P99: 2 * time.Millisecond, Verdict: "ok"},
		{T: 2, Verdict: "stalled"},
		{T: 3, Rate: 2, P99: 5 * time.Millisecond, Verdict: "drain"},
	}
	step := func(phase string, asked float64, pass, retry bool) saturate.Step {
		return saturate.Step{Phase: phase, Asked: asked, Pass: pass, Retry: retry, Seconds: judged}
	}
	sat := &saturate.Saturation{Bracket: saturate.Bracket{Lo: 100, Hi: 200}, Steps: []saturate.Step{
		step(saturate.PhaseRamp, 50, true, false),
		step(saturate.PhaseRamp, 100, false, false), // failed, then held on its re-test
		step(saturate.PhaseRamp, 100, true, true),
		step(saturate.PhaseRamp, 200, false, false),
		step(saturate.PhaseRamp, 200, false, true),
		step(saturate.PhaseValidate, 100, true, false),
	}}
	c := curveOf(sat)
	require.Len(t, c, len(sat.Steps))
	var kept []int
	for i, p := range c {
		assert.Equal(t, sat.Steps[i].Asked, p.Asked)
		if p.Seconds != nil {
			kept = append(kept, i)
		}
	}
	assert.Equal(t, []int{2, 3, 4, 5}, kept, "the held runs at 100 and the failed ones at 200")
	assert.Equal(t, []result.StepSecond{
		{T: 1, Rate: 100, P99: 2 * time.Millisecond, OK: true},
		{T: 2, P99: 5 * time.Millisecond},
	}, c[5].Seconds, "judged: no warm-up, the drain's p99 with the last, the stall not OK")
}
