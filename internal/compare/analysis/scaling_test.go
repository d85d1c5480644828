package analysis

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// scalingComparison is a synthetic scaling comparison: direct, fifo and
// lifo (lifo under -exec worker) on 1 and 2 CPUs, six searches each and
// a closed loop. Direct's and lifo's searches drift alike from repeat to
// repeat (lifo 0.75× direct's in every pair); fifo's drift the other
// way, so its pairs with direct straddle 1.
func scalingComparison(t *testing.T) *result.Comparison {
	t.Helper()
	o := plan.DefaultOptions()
	o.Preset, o.Repeat = "scaling", 6
	p, err := plan.New(&o, 2)
	require.NoError(t, err)
	wr := &result.WorkloadResult{Workload: "get"}
	add := func(pool, exec string, n int, sat float64, satCPU, closedCPU time.Duration) {
		v := plan.Variant{Pool: pool, Exec: exec, CPUs: n}
		vr := &result.VariantResult{Variant: v, Name: v.Name(), Config: map[string]string{"exec": "handler"}}
		if exec == "worker" {
			vr.Config["exec"] = "worker"
		}
		drift := []float64{1, 1.02, 0.99, 1.01, 0.98, 1.03}
		if pool == "fifo" {
			slices.Reverse(drift)
		}
		for i, d := range drift {
			vr.Sat = append(vr.Sat, result.SatRun{Repeat: i + 1, Rate: sat * d, Validated: true, ServerCPUPerRequest: satCPU})
		}
		vr.Closed = &result.ClosedRun{Conns: 64, Rounds: []result.ClosedRound{
			{Rate: sat * 1.1, ServerCPUPerRequest: closedCPU}, {Rate: sat * 1.12, ServerCPUPerRequest: closedCPU},
		}}
		wr.Variants = append(wr.Variants, vr)
	}
	for _, n := range []int{1, 2} {
		f := float64(n)
		add("direct", "", n, 40000*f, 20*time.Microsecond, 20*time.Microsecond)
		add("fifo", "", n, 39600*f, 21*time.Microsecond, 20*time.Microsecond+time.Duration(n)*500*time.Nanosecond)
		add("lifo", "worker", n, 20000*f*(1+f)/2, 30*time.Microsecond, 30*time.Microsecond)
	}
	return &result.Comparison{Preset: "scaling", Options: o, Plan: p, Workloads: []*result.WorkloadResult{wr},
		Criteria: result.Criteria{MaxErrorRate: 0.001, LoaderBusy: 0.9}}
}

// TestScalingFindings: which variants saturate below direct at which
// counts, how each scales, and the closed loop's CPU per request against
// direct's with the target for -exec handler; counts are never ranked
// against each other.
func TestScalingFindings(t *testing.T) {
	c := scalingComparison(t)
	a := Analyze(c)
	g := a.Workloads[0].Grid
	require.NotNil(t, g)
	assert.Equal(t, []string{"direct", "fifo", "lifo exec=worker"}, g.Rows)
	assert.Equal(t, []int{1, 2}, g.Counts)
	assert.InDelta(t, 0.75, g.At("lifo exec=worker", 2).Sat.Ratio, 1e-9, "to direct on as many CPUs")
	assert.InDelta(t, 1.5, g.At("lifo exec=worker", 2).Sat.CPURatio, 1e-9)

	vs := find(t, a, ScalingVsDirect)
	assert.Equal(t, Below, vs.Verdict)
	assert.Equal(t, []string{"fifo", "lifo exec=worker"}, vs.Variants, "in the order of the rows")
	below, _ := vs.Figure("lifo exec=worker", VsDirect)
	tied, _ := vs.Figure("fifo", VsDirect)
	assert.Equal(t, [2]Verdict{Below, Tied}, [2]Verdict{below.Verdict, tied.Verdict})
	var at []int
	for _, x := range vs.All(BelowAt) {
		at = append(at, x.CPUs)
	}
	assert.Equal(t, []int{1, 2}, at)
	for _, x := range vs.All(SatRatio) {
		assert.Equal(t, "lifo exec=worker", x.Of, "a ratio for each count it is below at")
		assert.InDelta(t, map[int]float64{1: 0.5, 2: 0.75}[x.CPUs], x.Value, 1e-9, "at %d CPUs", x.CPUs)
		assert.Equal(t, 6, x.Interval.N)
	}
	assert.Len(t, vs.All(SatRatio), 2)
	assert.InDelta(t, 0.75, vs.Value("lifo exec=worker", RatioAtLargest), 1e-9)

	// Two repeats bound no interval: nothing is below direct.
	two := scalingComparison(t)
	for _, v := range two.Workloads[0].Variants {
		v.Sat = v.Sat[:2]
	}
	vs2 := find(t, Analyze(two), ScalingVsDirect)
	assert.Equal(t, Tied, vs2.Verdict, "lifo 0.5× and 0.75× in every pair, but two pairs are too few")
	assert.Empty(t, vs2.All(BelowAt))

	eff := find(t, a, ScalingEfficiency)
	assert.InDelta(t, 1.5, eff.Value("lifo exec=worker", Efficiency), 1e-9)
	assert.InDelta(t, 1.0, eff.Value("direct", Efficiency), 1e-9)

	cpu := find(t, a, ScalingCPU)
	for _, x := range cpu.All(CPURatio) {
		if x.Of == "fifo" {
			assert.InDelta(t, 1+0.025*float64(x.CPUs), x.Value, 1e-9, "fifo at %d CPUs", x.CPUs)
		}
	}
	target := find(t, a, HandlerTarget)
	assert.Equal(t, Met, target.Verdict)
	assert.Equal(t, []string{"fifo"}, target.Variants, "lifo runs under -exec worker: not judged by the handler target")
	worst, _ := target.Figure("fifo", WorstCPURatio)
	assert.Equal(t, 2, worst.CPUs)
	assert.InDelta(t, 1.05, worst.Value, 1e-9)
	assert.Len(t, kindsIn(a, CrossCheck), 2, "direct on each count against its closed loop")
	assert.NotContains(t, kinds(a), SaturationLead, "counts are not ranked against each other")

	// One count: the preset on a 2-CPU machine (kvserver on CPU 0).
	wr := c.Workloads[0]
	var keep []*result.VariantResult
	for _, v := range wr.Variants {
		if v.Variant.CPUs == 1 {
			keep = append(keep, v)
		}
	}
	wr.Variants = keep
	for i := range wr.Variants[1].Closed.Rounds {
		wr.Variants[1].Closed.Rounds[i].ServerCPUPerRequest = 22 * time.Microsecond
	}
	a = Analyze(c)
	target = find(t, a, HandlerTarget)
	assert.Equal(t, Missed, target.Verdict)
	worst, _ = target.Figure("fifo", WorstCPURatio)
	assert.Equal(t, Figure{Of: "fifo", Name: WorstCPURatio, CPUs: 1, Value: 1.1, Verdict: Missed}, worst)
	assert.NotContains(t, kinds(a), ScalingEfficiency, "one count: nothing to scale from")
}

// TestScalingLines: the scaling charts' lines, one a row: the median
// saturation at each count where it is no lower bound, and the closed
// loop's CPU per request (µs), else the validating runs'.
func TestScalingLines(t *testing.T) {
	c := scalingComparison(t)
	fifo1 := c.Workloads[0].Variants[1]
	require.Equal(t, "fifo cpus=1", fifo1.Name)
	fifo1.Sat[0].LoaderBound = true // a lower bound on 1 CPU: no point there
	fifo1.Closed = nil              // its CPU from the validating runs
	g := Analyze(c).Workloads[0].Grid
	require.Len(t, g.Saturation, 3)
	assert.Equal(t, Line{Name: "direct", X: []float64{1, 2}, Y: []float64{40200, 80400}}, g.Saturation[0], "the medians of six searches")
	assert.Equal(t, []float64{2}, g.Saturation[1].X, "fifo's lower bound left out")
	require.Len(t, g.CPU, 3)
	assert.Equal(t, Line{Name: "fifo", X: []float64{1, 2}, Y: []float64{21, 21}}, g.CPU[1], "on 1 CPU the searches', on 2 the closed loop's")
}
