package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// TestOverloadBarsSeries: one configuration besides direct makes one
// series; several make one each, direct's its own, with no bar where a
// pool has no such series.
func TestOverloadBarsSeries(t *testing.T) {
	assert.Nil(t, overloadBars(&result.WorkloadResult{Variants: []*result.VariantResult{{Variant: plan.Variant{Pool: "direct"}}}}), "no overload step: no bars")
	b := overloadBars(&result.WorkloadResult{Variants: []*result.VariantResult{
		{Variant: plan.Variant{Pool: "direct"}, Overload: &result.OverloadRun{Goodput: 100, ServedP99: 3 * time.Millisecond}},
		{Variant: plan.Variant{Pool: "fifo"}, Overload: &result.OverloadRun{Goodput: 90}},
	}})
	assert.Equal(t, []string{"direct", "fifo"}, b.Groups)
	assert.Equal(t, []string{"at each pool's default policy"}, b.Series, "one policy: one series")
	assert.Equal(t, [][]float64{{100, 90}}, b.Goodput)
	assert.Equal(t, [][]float64{{3, 0}}, b.P99, "in ms")

	b = overloadBars(&result.WorkloadResult{Variants: []*result.VariantResult{
		{Variant: plan.Variant{Pool: "direct"}, Overload: &result.OverloadRun{Goodput: 100}},
		{Variant: plan.Variant{Pool: "fifo", Policy: "reject"}, Overload: &result.OverloadRun{Goodput: 80}},
		{Variant: plan.Variant{Pool: "fifo", Policy: "block"}, Overload: &result.OverloadRun{Goodput: 70}},
	}})
	assert.Equal(t, []string{"direct", "fifo"}, b.Groups)
	assert.Equal(t, []string{"direct (no queue)", "reject", "block"}, b.Series)
	assert.Equal(t, 100.0, b.Goodput[0][0])
	assert.True(t, math.IsNaN(b.Goodput[0][1]), "direct's series has no fifo bar")
	assert.Equal(t, 80.0, b.Goodput[1][1])
	assert.Equal(t, 70.0, b.Goodput[2][1])
}

// TestOverloadTimelineHasGapsForUnsentSeconds: a second of the overload
// step in which no request was sent is a gap (NaN); the recovery probes
// follow the step, one point each.
func TestOverloadTimelineHasGapsForUnsentSeconds(t *testing.T) {
	wr := &result.WorkloadResult{Variants: []*result.VariantResult{{Name: "lifo", Variant: plan.Variant{Pool: "lifo"}, Overload: &result.OverloadRun{
		PerSecond:   []result.SecondPoint{{Second: 0, P99: time.Millisecond}, {Second: 1, P99: 2 * time.Millisecond}},
		RecoveryP99: []time.Duration{time.Millisecond},
	}}}}
	tm := plan.QuickTiming()
	tm.Overload = 3 * time.Second
	lines := overloadTimeline(wr, tm)
	require.Len(t, lines, 1)
	assert.Equal(t, []float64{0.5, 1.5, 2.5, 3 + 0.5*tm.ProbeLength.Seconds()}, lines[0].X)
	assert.Equal(t, []float64{1, 2}, lines[0].Y[:2])
	assert.True(t, math.IsNaN(lines[0].Y[2]), "second 2 had no request sent: a gap")
	assert.Equal(t, 1.0, lines[0].Y[3], "the recovery probe after the overload")
}
