package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/result"
)

// pairs is a PairedRun whose pair i has direct at base[i] req/s and the
// variant at ratios[i] × that, each at cpu per request (the variant's
// times cpuRatio).
func pairs(base, ratios []float64, cpu time.Duration, cpuRatio float64) *result.PairedRun {
	pr := &result.PairedRun{Against: "direct", Conns: 64}
	for i := range base {
		pr.Base = append(pr.Base, result.ClosedRound{Rate: base[i], ServerCPUPerRequest: cpu})
		pr.Variant = append(pr.Variant, result.ClosedRound{Rate: base[i] * ratios[i], ServerCPUPerRequest: time.Duration(float64(cpu) * cpuRatio)})
	}
	return pr
}

// TestPairedFindings: a ratio is named above or below direct only where
// its 95 % interval excludes 1; one that includes it, or too few pairs
// to bound one, is "no difference measurable here"; a loader-bound round
// ranks no throughput.
func TestPairedFindings(t *testing.T) {
	c := comparisonOf(t, map[string][]float64{"direct": {40000}, "fifo": {30000}, "lifo": {35000}, "msqueue": {36000}}, "direct", "fifo", "lifo", "msqueue")
	wr := c.Workloads[0]
	// The machine drifts by a third between pairs; inside each pair fifo
	// serves 10 % less, lifo within ±3 % of direct.
	base := []float64{30000, 40000, 35000, 45000, 32000, 41000}
	wr.Variants[1].Paired = pairs(base, []float64{0.90, 0.91, 0.89, 0.90, 0.92, 0.88}, 20*time.Microsecond, 1.2)
	wr.Variants[2].Paired = pairs(base, []float64{0.97, 1.03, 1.00, 0.99, 1.02, 0.98}, 20*time.Microsecond, 1)
	wr.Variants[3].Paired = pairs(base[:3], []float64{0.5, 0.5, 0.5}, 20*time.Microsecond, 1)
	a := Analyze(c)

	fifo := a.Workloads[0].Variant("fifo").Paired
	require.NotNil(t, fifo)
	assert.Equal(t, 6, fifo.Pairs)
	assert.InDelta(t, 0.90, fifo.Throughput.Median, 0.01)
	assert.True(t, fifo.Throughput.Differs())
	assert.InDelta(t, 1.2, fifo.CPU.Median, 0.001)
	assert.Nil(t, a.Workloads[0].Variant("direct").Paired)

	below := findVerdict(t, a, PairedThroughput, Below)
	assert.Equal(t, []string{"fifo"}, below.Variants)
	x, _ := below.Figure("fifo", ThroughputRatio)
	assert.Equal(t, 0.95, x.Interval.Level)
	assert.Less(t, x.Interval.Hi, 1.0)
	same := findVerdict(t, a, PairedThroughput, NoDifference)
	assert.Equal(t, []string{"lifo", "msqueue"}, same.Variants, "an interval across 1, and 3 pairs: no interval at all")
	m, _ := same.Figure("msqueue", ThroughputRatio)
	assert.True(t, math.IsInf(m.Interval.Lo, -1), "3 pairs bound nothing, however far the median")
	assert.Equal(t, []string{"fifo"}, findVerdict(t, a, PairedCPU, Above).Variants)

	w := a.Workloads[0].PairedWidths
	assert.Equal(t, 4, w.N, "fifo's and lifo's six pairs bound both measures, msqueue's three neither")
	assert.Greater(t, w.Hi, w.Lo)

	wr.Variants[1].Paired.Variant[2].LoaderBound = true
	a = Analyze(c)
	assert.Equal(t, []string{"fifo"}, findVerdict(t, a, PairedThroughput, NotRanked).Variants)
	for _, f := range kindsIn(a, PairedThroughput) {
		if f.Verdict != NotRanked {
			assert.NotContains(t, f.Variants, "fifo")
		}
	}
	assert.Equal(t, []string{"fifo"}, findVerdict(t, a, PairedCPU, Above).Variants, "its CPU per request still compares")
}

// findVerdict is a's finding of kind about "get" with verdict v.
func findVerdict(t *testing.T, a *Analysis, kind Kind, v Verdict) Finding {
	t.Helper()
	for _, f := range kindsIn(a, kind) {
		if f.Verdict == v {
			return f
		}
	}
	require.Failf(t, "no finding", "no %s finding with verdict %s in %+v", kind, v, a.Findings)
	return Finding{}
}

// TestPairedByOrder: an alternating run's odd pairs (direct's round
// first) and even pairs (the variant's first) are summed up apart, so
// that an effect of the position in a pair shows as two different
// medians; a run that did not alternate ran direct's first in every pair.
func TestPairedByOrder(t *testing.T) {
	base := []float64{30000, 40000, 35000, 45000, 32000, 41000, 38000, 36000}
	// The round that runs second in its pair serves 4 % more.
	pr := pairs(base, []float64{1.04, 1 / 1.04, 1.04, 1 / 1.04, 1.04, 1 / 1.04, 1.04, 1 / 1.04}, 20*time.Microsecond, 1)
	pr.Alternating = true
	first, second := PairedByOrder(pr)
	assert.Equal(t, 4, first.Pairs)
	assert.Equal(t, 4, second.Pairs)
	assert.InDelta(t, 1.04, first.Throughput.Median, 1e-9, "direct first: the variant, second, gains")
	assert.InDelta(t, 1/1.04, second.Throughput.Median, 1e-9, "the variant first: direct gains")

	pr.Alternating = false
	first, second = PairedByOrder(pr)
	assert.Equal(t, 8, first.Pairs, "not alternating: every pair ran direct's round first")
	assert.Zero(t, second.Pairs)
	assert.True(t, math.IsNaN(second.Throughput.Median))
}
