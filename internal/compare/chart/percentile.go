package chart

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// latencyFloorMs is where a non-positive latency is drawn on the log axis.
const latencyFloorMs = 0.001

// percentileTicks are wrk2's (HdrHistogram plotter's) labelled positions.
var percentileTicks = []struct {
	p     float64
	label string
}{
	{0, "0%"}, {50, "50%"}, {90, "90%"}, {99, "99%"}, {99.9, "99.9%"},
	{99.99, "99.99%"}, {99.999, "99.999%"}, {99.9999, "99.9999%"},
}

// inverseTail maps a percentile to wrk2's x: 1/(1-p).
func inverseTail(pct float64) float64 { return 1 / (1 - pct/100) }

// LatencyByPercentile draws one line per pool on wrk2's axis: x is
// 1/(1-p) on a log scale, ticks labelled 50%, 90%, 99%, 99.9%, 99.99%,
// 99.999%; y is latency in ms on a log scale (the tail spans decades).
// Corrected latency is solid, uncorrected dashed in the same colour.
// Non-positive latencies (a bucket at 0 ms) are drawn at the axis floor,
// 0.001 ms, rather than refused.
func LatencyByPercentile(spec Spec, lines []PercentileLine) (Chart, error) {
	f, err := newFigure(spec, "Latency at each percentile, one colour per pool: lower is better; "+
		"the right-hand end is the tail. Solid: corrected for coordinated omission (from the intended send time); "+
		"dashed: from the actual send.", namesOf(lines, func(l PercentileLine) string { return l.Name }), "no lines to draw; pass at least one pool")
	if err != nil {
		return Chart{}, err
	}

	type series struct {
		name       string
		x, cor, un []float64
	}
	var all []series
	x, y := empty(), empty()
	for _, l := range lines {
		s := series{name: l.Name}
		lat := []struct {
			what string
			in   []float64
			out  *[]float64
		}{{"corrected", l.CorrectedMs, &s.cor}, {"uncorrected", l.UncorrectedMs, &s.un}}
		for _, ys := range lat {
			if err := checkLengths(spec.Title, l.Name, "percentiles", len(l.Percentiles), ys.what+" latencies", len(ys.in)); err != nil {
				return Chart{}, err
			}
		}
		for i, p := range l.Percentiles {
			if math.IsNaN(p) || p < 0 {
				return Chart{}, fmt.Errorf("chart %q: series %q has percentile %v; percentiles are in [0, 100)", spec.Title, l.Name, p)
			}
			if p >= 100 {
				continue // the maximum: infinitely far right on this axis
			}
			for _, ys := range lat {
				if !finite(ys.in[i]) {
					return Chart{}, fmt.Errorf("chart %q: series %q has %s latency %v at p%v; give a finite value in ms", spec.Title, l.Name, ys.what, ys.in[i], p)
				}
				v := math.Max(ys.in[i], latencyFloorMs)
				*ys.out = append(*ys.out, v)
				y.add(v)
			}
			s.x = append(s.x, inverseTail(p))
			x.add(inverseTail(p))
		}
		if len(s.x) == 0 {
			return Chart{}, fmt.Errorf("chart %q: series %q has no percentile below 100; the 1/(1-p) axis cannot place p100", spec.Title, l.Name)
		}
		all = append(all, s)
	}

	p := f.panel(true, labelOr(spec.XLabel, "percentile (log scale of 1/(1−p))"), logLabel(labelOr(spec.YLabel, "latency (ms)")))
	p.X.Scale = plot.LogScale{}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	// The axis always reaches 99% so that one short line still reads as a
	// distribution, and ends at the next labelled percentile past the data.
	x.add(inverseTail(50), inverseTail(99))
	var ticks []plot.Tick
	for _, t := range percentileTicks {
		at := inverseTail(t.p)
		if at < x.lo/1.0001 {
			continue
		}
		ticks = append(ticks, plot.Tick{Value: at, Label: t.label})
		if at >= x.hi/1.0001 {
			x.hi = math.Max(x.hi, at)
			break
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = x.lo, x.hi
	p.Y.Min, p.Y.Max = y.pad(true)

	for _, s := range all {
		th, err := addSeries(p, s.x, s.cor, lineStyle(f.col[s.name], false), len(s.x) < 2)
		if err == nil {
			_, err = addSeries(p, s.x, s.un, lineStyle(f.col[s.name], true), len(s.x) < 2)
		}
		if err != nil {
			return Chart{}, fmt.Errorf("chart %q: series %q: %w", spec.Title, s.name, err)
		}
		f.addLegend(s.name, th)
	}
	f.addLegend("")
	f.addLegend("corrected", thumb{style: lineStyle(plotter.DefaultLineStyle.Color, false)})
	f.addLegend("uncorrected", thumb{style: lineStyle(plotter.DefaultLineStyle.Color, true)})
	return f.render(height)
}
