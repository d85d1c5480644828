package analysis

import (
	"math"
	"slices"

	"github.com/kvpool/kvpool/internal/compare/chart"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// Line is a variant's figure against x: the chart's own line, drawn as
// analysis derives it.
type Line = chart.XYLine

// noPoint: l has no point to draw (a chart leaves it out).
func noPoint(l Line) bool { return len(l.X) == 0 }

// percentileLines: one line per variant with a fixed-rate step whose
// distribution is known.
func percentileLines(wr *result.WorkloadResult) []chart.PercentileLine {
	var lines []chart.PercentileLine
	for _, v := range wr.Variants {
		if v.Fixed == nil || v.Fixed.Distribution == nil || len(v.Fixed.Distribution.Percentiles) == 0 {
			continue
		}
		d := v.Fixed.Distribution
		l := chart.PercentileLine{Name: v.Name, Percentiles: d.Percentiles}
		for i := range d.Percentiles {
			l.CorrectedMs = append(l.CorrectedMs, ms(d.Corrected[i]))
			l.UncorrectedMs = append(l.UncorrectedMs, ms(d.Uncorrected[i]))
		}
		lines = append(lines, l)
	}
	return lines
}

// curveLines: each variant's first saturation search, as chart.Curves
// draws it (its deciding steps' seconds where they were recorded). Of a
// scaling comparison, the variants at the most CPUs only (one line per
// pool).
func curveLines(wr *result.WorkloadResult, g *Grid) []chart.CurveLine {
	var lines []chart.CurveLine
	for _, v := range wr.Variants {
		if len(v.Sat) == 0 || g != nil && v.Variant.CPUs != g.Largest() ||
			!slices.ContainsFunc(v.Sat[0].Curve, func(p result.CurvePoint) bool { return !p.Validating() }) {
			continue
		}
		lines = append(lines, chart.CurveLine{Name: v.Name, Search: v.Sat[0]})
	}
	return lines
}

// Bars are the overload step's bar charts: Groups are pools (with their
// workers or exec mode), Series their configurations: the policy (of the
// policy variants, at -cap 1024), kvserver's defaults, an adaptive
// limit, unbounded. Goodput (req/s) and P99 (the served requests'
// corrected p99, ms) are by series, then group; NaN where a pool has no
// such series (direct).
type Bars struct {
	Groups, Series []string
	Goodput, P99   [][]float64
}

// overloadBars are wr's Bars (nil: no variant ran the overload step).
func overloadBars(wr *result.WorkloadResult) *Bars {
	kinds := map[string]bool{}
	for _, v := range wr.Variants {
		if v.Overload != nil && !v.Variant.IsBaseline() {
			kinds[barSeries(v.Variant)] = true
		}
	}
	// One configuration (or none besides direct): one series, no legend
	// of configurations.
	seriesOf := func(v plan.Variant) string {
		switch {
		case len(kinds) <= 1:
			return "at each pool's default policy"
		case v.IsBaseline():
			return "direct (no queue)"
		}
		return barSeries(v)
	}
	groupOf := func(v plan.Variant) string {
		return plan.Variant{Pool: v.Pool, Workers: v.Workers, Exec: v.Exec, CPUs: v.CPUs}.Name()
	}
	b := &Bars{}
	type bar struct {
		s, g int
		o    *result.OverloadRun
	}
	var bars []bar
	for _, v := range wr.Variants {
		if v.Overload != nil {
			bars = append(bars, bar{indexOf(&b.Series, seriesOf(v.Variant)), indexOf(&b.Groups, groupOf(v.Variant)), v.Overload})
		}
	}
	if len(bars) == 0 {
		return nil
	}
	b.Goodput, b.P99 = nanGrid(len(b.Series), len(b.Groups)), nanGrid(len(b.Series), len(b.Groups))
	for _, x := range bars {
		b.Goodput[x.s][x.g], b.P99[x.s][x.g] = x.o.Goodput, ms(x.o.ServedP99)
	}
	return b
}

// indexOf is x's index in *xs, where it is appended first if absent: xs
// keeps the order in which its elements first came.
func indexOf[T comparable](xs *[]T, x T) int {
	if i := slices.Index(*xs, x); i >= 0 {
		return i
	}
	*xs = append(*xs, x)
	return len(*xs) - 1
}

// barSeries is v's configuration as an overload chart's series: its
// policy, "unbounded", "limit=vegas", or "defaults".
func barSeries(v plan.Variant) string {
	switch {
	case v.CapSet && v.Cap < 0:
		return "unbounded"
	case v.Limit != "":
		return "limit=" + v.Limit
	case v.Policy != "":
		return v.Policy
	}
	return "defaults"
}

func nanGrid(rows, cols int) [][]float64 {
	g := make([][]float64, rows)
	for i := range g {
		g[i] = slices.Repeat([]float64{math.NaN()}, cols)
	}
	return g
}

// overloadTimeline is, per variant, its corrected p99 (ms) in each second
// of the overload step (by the second each request was due in, at the
// second's middle), then one point per recovery probe after the step,
// timed by t.
func overloadTimeline(wr *result.WorkloadResult, t plan.Timing) []Line {
	var lines []Line
	for _, v := range wr.Variants {
		o := v.Overload
		if o == nil || len(o.PerSecond) == 0 {
			continue
		}
		// A second of the step whose requests were never sent (the loader
		// fell behind) is a gap in the line, not a slope to the next point.
		n := int(math.Ceil(t.Overload.Seconds()))
		l := Line{Name: v.Name, Y: slices.Repeat([]float64{math.NaN()}, n)}
		for sec := range n {
			l.X = append(l.X, float64(sec)+0.5)
		}
		for _, p := range o.PerSecond {
			if p.Second >= 0 && p.Second < n {
				l.Y[p.Second] = ms(p.P99)
			}
		}
		end := t.Overload.Seconds()
		for i, p := range o.RecoveryP99 {
			l.X = append(l.X, end+(float64(i)+0.5)*t.ProbeLength.Seconds())
			l.Y = append(l.Y, ms(p))
		}
		lines = append(lines, l)
	}
	return lines
}
