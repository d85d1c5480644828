package analysis

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/result"
)

// TestUnvalidatedSaturationIsNeverRanked: a search whose validation did
// not hold has no saturation: its bracket is named as unvalidated, it
// takes no part in the lead or in the comparison with direct, and has no
// ratio; the validated variants are still compared.
func TestUnvalidatedSaturationIsNeverRanked(t *testing.T) {
	c := comparisonOf(t, map[string][]float64{"direct": {40000, 41000, 40500}, "fifo": {30000, 31000, 30500}, "lifo": {35000, 36000, 35500}},
		"direct", "fifo", "lifo")
	for _, v := range c.Workloads[0].Variants {
		for i := range v.Sat {
			v.Sat[i].Bracket = &result.Bracket{Lo: v.Sat[i].Rate, Hi: v.Sat[i].Rate + 2000}
		}
	}
	fifo := c.Workloads[0].Variants[1]
	for i := range fifo.Sat {
		fifo.Sat[i].Candidate, fifo.Sat[i].Rate, fifo.Sat[i].Validated = fifo.Sat[i].Rate+1000, 0, false
	}
	a := Analyze(c)
	s := a.Workloads[0].Variant("fifo").Sat
	assert.False(t, s.Measured())
	assert.True(t, s.Brackets)
	assert.Equal(t, Interval{Lo: 30500, Hi: 32500, N: 3}, s.Bracket, "the median of each end")
	assert.Equal(t, 31500.0, s.Candidate)
	assert.True(t, s.Ratio != s.Ratio, "no ratio from an unvalidated rate")

	u := find(t, a, SaturationUnvalidated)
	assert.Equal(t, NotRanked, u.Verdict)
	assert.Equal(t, []string{"fifo"}, u.Variants)
	b, ok := u.Figure("fifo", Bracket)
	require.True(t, ok)
	assert.Equal(t, 30500.0, b.Interval.Lo)
	assert.Equal(t, 32500.0, b.Interval.Hi)

	lead := find(t, a, SaturationLead)
	assert.ElementsMatch(t, []string{"direct", "lifo"}, lead.Variants, "fifo is not in the running")
	for _, f := range kindsIn(a, SaturationVsDirect) {
		assert.NotContains(t, f.Variants, "fifo")
	}
}

// TestUnvalidatedRepeatDropsItsPair: a search whose validation did not
// hold has no saturation, so its repeat's pair with direct is left out:
// six repeats with one dropped are five pairs, too few for an interval.
// A dropped repeat of direct's drops that pair for every pool.
func TestUnvalidatedRepeatDropsItsPair(t *testing.T) {
	sat := map[string][]float64{
		"direct": {40000, 42000, 41000, 39000, 40500, 41500, 40200},
		"fifo":   {32000, 33500, 32900, 31300, 32300, 33100, 32200},
	}
	below := func(c *result.Comparison) Finding {
		t.Helper()
		vs := find(t, Analyze(c), SaturationVsDirect)
		require.Equal(t, []string{"fifo"}, vs.Variants)
		return vs
	}
	c := comparisonOf(t, sat, "direct", "fifo")
	vs := below(c)
	assert.Equal(t, Below, vs.Verdict)
	r, _ := vs.Figure("fifo", SatRatio)
	assert.Equal(t, 7, r.Interval.N)

	fifo := c.Workloads[0].Variants[1]
	fifo.Sat[1].Rate, fifo.Sat[1].Validated = 0, false
	vs = below(c)
	assert.Equal(t, Below, vs.Verdict, "six pairs left")
	r, _ = vs.Figure("fifo", SatRatio)
	assert.Equal(t, 6, r.Interval.N, "fifo's second repeat dropped its pair")

	c.Workloads[0].Variants[0].Sat[4].Rate, c.Workloads[0].Variants[0].Sat[4].Validated = 0, false
	vs = below(c)
	assert.Equal(t, Tied, vs.Verdict, "five pairs bound no interval")
	r, _ = vs.Figure("fifo", SatRatio)
	assert.Equal(t, 5, r.Interval.N, "direct's fifth repeat dropped its pair too")

	// Repeats are paired by their place: a pool with fewer repeats than
	// direct pairs only those it has.
	c = comparisonOf(t, sat, "direct", "fifo")
	fifo = c.Workloads[0].Variants[1]
	fifo.Sat = fifo.Sat[:5]
	r, _ = below(c).Figure("fifo", SatRatio)
	assert.Equal(t, 5, r.Interval.N)
	assert.Equal(t, Unbounded, r.Verdict)

	// No repeat held on both sides: no pair, so no ratio.
	c = comparisonOf(t, map[string][]float64{"direct": {40000, 0}, "fifo": {0, 32000}}, "direct", "fifo")
	c.Workloads[0].Variants[0].Sat[1].Validated, c.Workloads[0].Variants[1].Sat[0].Validated = false, false
	r, _ = below(c).Figure("fifo", SatRatio)
	assert.True(t, math.IsNaN(r.Value))
	assert.Equal(t, NoPairs, r.Verdict)
}

// TestFixedBehind: a fixed-rate step that achieved less than
// MinAchieved of its asked rate, or fell behind its schedule, is named;
// where direct's did, no variant's latencies are compared with it.
func TestFixedBehind(t *testing.T) {
	c := comparisonOf(t, map[string][]float64{"direct": {40000}, "lifo": {30000}}, "direct", "lifo")
	wr := c.Workloads[0]
	fixed := func(asked, achieved float64, behind string) *result.FixedRun {
		f := &result.FixedRun{Asked: asked, Achieved: achieved, Behind: behind}
		f.Corrected.P99 = 10_000_000
		f.ServerCPUPerRequest = 50_000
		return f
	}
	wr.Variants[0].Fixed, wr.Variants[1].Fixed = fixed(28000, 27900, ""), fixed(28000, 25000, "")
	a := Analyze(c)
	f := find(t, a, FixedBehind)
	assert.Equal(t, NotComparable, f.Verdict)
	assert.Equal(t, []string{"lifo"}, f.Variants)
	x, _ := f.Figure("lifo", AchievedShare)
	assert.InDelta(t, 89.3, x.Value, 0.1)
	assert.Contains(t, x.Text, "achieved 25000 of 28000 req/s")
	lifo := a.Workloads[0].Variant("lifo").Fixed
	assert.False(t, lifo.KeptUp)
	assert.Equal(t, 1.0, lifo.P99, "direct kept up: the ratio stands")

	wr.Variants[0].Fixed = fixed(28000, 28000, "backlog grew: send lag p99 1ms → 40ms")
	a = Analyze(c)
	assert.Equal(t, []string{"direct", "lifo"}, find(t, a, FixedBehind).Variants)
	lifo = a.Workloads[0].Variant("lifo").Fixed
	assert.True(t, lifo.P99 != lifo.P99 && lifo.CPU != lifo.CPU, "no ratio to a direct that did not keep up")

	wr.Variants[0].Fixed, wr.Variants[1].Fixed = fixed(28000, 28000, ""), fixed(28000, 27500, "")
	_, ok := findIn(Analyze(c), FixedBehind, "get")
	assert.False(t, ok, "98 % of the asked rate, on schedule, is kept up")
}

// TestDerivedOnce: direct's saturation, the steps' rates and the ratios
// to direct are the analysis's, from direct's analysed figures: a
// variant's ratio is its median over direct's, direct's own is 1, and a
// loader-bound direct gives no ratio.
func TestDerivedOnce(t *testing.T) {
	c := comparisonOf(t, map[string][]float64{"direct": {40000, 42000, 41000}, "fifo": {30000, 31000, 32000}}, "direct", "fifo")
	wr := c.Workloads[0]
	wr.BaseRate = MedianSaturation(wr.Variants[0])
	wr.Variants[0].Overload = &result.OverloadRun{Asked: 2 * wr.BaseRate}
	w := Analyze(c).Workloads[0]
	assert.Equal(t, 41000.0, wr.BaseRate)
	assert.InDelta(t, 0.7*41000, w.FixedRate, 1e-9)
	assert.Equal(t, 2.0, w.OverloadMultiple)
	assert.Equal(t, 1.0, w.Variant("direct").Sat.Ratio)
	assert.InDelta(t, 31000.0/41000, w.Variant("fifo").Sat.Ratio, 1e-12)

	for i := range wr.Variants[0].Sat {
		wr.Variants[0].Sat[i].LoaderBound = true
	}
	assert.True(t, math.IsNaN(Analyze(c).Workloads[0].Variant("fifo").Sat.Ratio), "no ratio to a lower bound")
}
