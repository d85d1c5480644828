package chart

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// GroupedBars draws one group of bars per entry of groups (along x), one
// bar per entry of series within each group (coloured by series name, with
// a legend). values[s][g] is series s in group g; NaN means "not measured"
// (e.g. direct has no overflow policy) and leaves a gap, not a zero bar.
// The y axis is linear from 0; YLabel should carry the unit, e.g.
// "goodput (req/s)". The default caption reads groups as pools and series
// as policies.
func GroupedBars(spec Spec, groups, series []string, values [][]float64) (Chart, error) {
	none, names := fmt.Sprintf("%d groups and %d series; pass at least one of each", len(groups), len(series)), series
	if len(groups) == 0 {
		names = nil // refused as no series is: a bar needs both
	}
	f, err := newFigure(spec, "One group per pool, one bar per policy; a missing bar was not measured (the combination does not exist).", names, none)
	if err != nil {
		return Chart{}, err
	}
	if len(values) != len(series) {
		return Chart{}, fmt.Errorf("chart %q: %d series but %d rows of values; give values[series][group]", spec.Title, len(series), len(values))
	}
	vmax := 0.0
	for s, row := range values {
		if len(row) != len(groups) {
			return Chart{}, fmt.Errorf("chart %q: series %q has %d values for %d groups; use NaN for a missing one", spec.Title, series[s], len(row), len(groups))
		}
		for g, v := range row {
			if math.IsNaN(v) {
				continue
			}
			if math.IsInf(v, 0) || v < 0 {
				return Chart{}, fmt.Errorf("chart %q: series %q group %q has %v; bars need finite, non-negative values (NaN: not measured)", spec.Title, series[s], groups[g], v)
			}
			vmax = math.Max(vmax, v)
		}
	}

	p := f.panel(false, labelOr(spec.XLabel, ""), labelOr(spec.YLabel, "value"))
	p.NominalX(groups...)
	p.Y.Min, p.Y.Max = extent{0, vmax}.fromZero()
	p.X.Min, p.X.Max = -0.5, float64(len(groups))-0.5

	bp := &barPlotter{values: values, colours: make([]color.Color, len(series))}
	p.Add(bp)
	for s, name := range series {
		bp.colours[s] = f.col[name]
		f.addLegend(name, swatch{c: f.col[name]})
	}
	return f.render(height)
}

// barPlotter draws values[s][g] as bar s of group g, group g centred on
// x = g. Widths are in data units (the bars of a group share 80 % of the
// distance between groups), which gonum's BarChart, sized in points before
// the canvas is known, cannot do. NaN values draw nothing.
type barPlotter struct {
	values  [][]float64
	colours []color.Color
}

func (b *barPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := float64(len(b.values))
	w := 0.8 / n
	for s, row := range b.values {
		for g, v := range row {
			if math.IsNaN(v) {
				continue
			}
			x0 := float64(g) - 0.4 + float64(s)*w
			left, right := trX(x0+w*0.05), trX(x0+w*0.95)
			bottom, top := trY(0), trY(v)
			pts := c.ClipPolygonY([]vg.Point{{X: left, Y: bottom}, {X: right, Y: bottom}, {X: right, Y: top}, {X: left, Y: top}})
			c.FillPolygon(b.colours[s], pts)
		}
	}
}
