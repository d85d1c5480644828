package render

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// decidedComparison is a comparison whose search kept the seconds of its
// deciding steps: held at 30,000 (search step and validating run), failed
// twice at 40,000 (first by a stall of two seconds, then in every second).
func decidedComparison(t *testing.T) *result.Comparison {
	t.Helper()
	c := comparisonOf(t, "queues", map[string][]float64{"direct": {30000}}, "direct")
	seconds := func(n int, rate float64, p99 time.Duration, ok bool) []result.StepSecond {
		var out []result.StepSecond
		for k := 1; k <= n; k++ {
			out = append(out, result.StepSecond{T: float64(k), Rate: rate, P99: p99, OK: ok})
		}
		return out
	}
	stalled := seconds(10, 40000, 2*time.Millisecond, true)
	stalled[2], stalled[3] = result.StepSecond{T: 3}, result.StepSecond{T: 4} // nothing answered, requests waiting
	validating := seconds(29, 30000, 4*time.Millisecond, true)
	validating[6] = result.StepSecond{T: 7, Rate: 30000, P99: 150 * time.Millisecond}
	s := &c.Workloads[0].Variants[0].Sat[0]
	s.Bracket = &result.Bracket{Lo: 30000, Hi: 40000}
	s.Curve = []result.CurvePoint{
		{Phase: "ramp", Asked: 20000, Achieved: 20000, P99: time.Millisecond, Pass: true},
		{Phase: "ramp", Asked: 40000, Achieved: 36000, P99: 300 * time.Millisecond, Seconds: stalled},
		{Phase: "ramp", Asked: 40000, Achieved: 25000, P99: 900 * time.Millisecond, Retry: true, Seconds: seconds(10, 25000, 900*time.Millisecond, false)},
		{Phase: "bisect", Asked: 30000, Achieved: 30000, P99: 3 * time.Millisecond, Pass: true, Seconds: seconds(10, 30000, 3*time.Millisecond, true)},
		{Phase: "validate", Asked: 30000, Achieved: 30000, P99: 4 * time.Millisecond, Pass: true, Seconds: validating},
	}
	return c
}

// TestSaturationChartShowsDecidingSeconds: the saturation chart draws
// the deciding steps' seconds, the validating run's included, with
// legend entries and a caption sentence; without seconds (none
// recorded) the chart and the report say nothing of them.
func TestSaturationChartShowsDecidingSeconds(t *testing.T) {
	c := decidedComparison(t)
	lines := analysis.Analyze(c).Workloads[0].Curves
	require.Len(t, lines, 1)
	assert.Equal(t, c.Workloads[0].Variants[0].Sat[0], lines[0].Search, "the search as compare.json keeps it")

	withSeconds := saturationChart(t, c)
	assert.Contains(t, withSeconds.svg, "deciding steps: second held")
	assert.Contains(t, withSeconds.svg, "deciding steps: second failed")
	assert.Contains(t, withSeconds.caption, "Small marks are the judged seconds")
	assert.Contains(t, withSeconds.report, "Small marks are the judged seconds")

	for i := range c.Workloads[0].Variants[0].Sat[0].Curve {
		c.Workloads[0].Variants[0].Sat[0].Curve[i].Seconds = nil
	}
	without := saturationChart(t, c)
	assert.NotContains(t, without.svg, "deciding steps")
	assert.NotContains(t, without.report, "Small marks")
}

type drawnChart struct{ svg, caption, report string }

// saturationChart writes c's report and returns its saturation chart.
func saturationChart(t *testing.T, c *result.Comparison) drawnChart {
	t.Helper()
	dir := t.TempDir()
	r, err := Write(c, analysis.Analyze(c), dir)
	require.NoError(t, err)
	assert.Empty(t, r.Notes, "every chart drawn")
	for _, ch := range r.Charts {
		if filepath.Base(ch.Path) == "get-saturation.svg" {
			assertSVG(t, filepath.Join(dir, ch.Path))
			return drawnChart{string(mustRead(t, filepath.Join(dir, ch.Path))), ch.Caption, string(mustRead(t, r.Path))}
		}
	}
	t.Fatalf("no saturation chart among %+v", r.Charts)
	return drawnChart{}
}
