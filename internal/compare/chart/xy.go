package chart

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// logAxis puts a on a log scale over e (padded), its label saying so,
// where e.lo > 0 and e.hi reaches from × e.lo (the data spans decades),
// and tells whether it did; otherwise a is left as it was.
func logAxis(a *plot.Axis, e extent, from float64) bool {
	if e.lo <= 0 || e.hi/e.lo < from {
		return false
	}
	a.Label.Text = logLabel(a.Label.Text)
	a.Scale = plot.LogScale{}
	a.Min, a.Max = e.pad(true)
	return true
}

// newXYFigure is a figure of lines with the ranges of their finite
// points, once it has checked them (names, lengths, values): NaN y is
// allowed ("no value"); NaN x and infinities are not.
func newXYFigure(spec Spec, caption string, lines []XYLine) (f *figure, x, y extent, err error) {
	if f, err = newFigure(spec, caption, namesOf(lines, func(l XYLine) string { return l.Name }), "no lines to draw; pass at least one"); err != nil {
		return nil, x, y, err
	}
	title := spec.Title
	x, y = empty(), empty()
	for _, l := range lines {
		if err := checkLengths(title, l.Name, "x values", len(l.X), "y values", len(l.Y)); err != nil {
			return nil, x, y, err
		}
		for i := range l.X {
			if !finite(l.X[i]) || math.IsInf(l.Y[i], 0) {
				return nil, x, y, fmt.Errorf("chart %q: series %q point %d is (%v, %v); give finite values (NaN y: no value)", title, l.Name, i, l.X[i], l.Y[i])
			}
			x.add(l.X[i])
			if !math.IsNaN(l.Y[i]) {
				y.add(l.Y[i])
			}
		}
	}
	if math.IsInf(x.lo, 1) || math.IsInf(y.lo, 1) {
		return nil, x, y, fmt.Errorf("chart %q: no line has a value to draw; pass at least one point with a y value", title)
	}
	return f, x, y, nil
}

// sortedXY returns the line's points ordered by x, so that a line is drawn
// left to right whatever order the caller collected them in.
func sortedXY(l XYLine) (xs, ys []float64) {
	idx := make([]int, len(l.X))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return l.X[idx[a]] < l.X[idx[b]] })
	xs = make([]float64, len(idx))
	ys = make([]float64, len(idx))
	for i, j := range idx {
		xs[i], ys[i] = l.X[j], l.Y[j]
	}
	return xs, ys
}

// drawLines draws each line on p left to right in its colour, with a
// dot at each point when dots, and adds it to the legend.
func (f *figure) drawLines(p *plot.Plot, lines []XYLine, dots bool) error {
	for _, l := range lines {
		xs, ys := sortedXY(l)
		th, err := addSeries(p, xs, ys, lineStyle(f.col[l.Name], false), dots)
		if err != nil {
			return fmt.Errorf("chart %q: series %q: %w", f.spec.Title, l.Name, err)
		}
		f.addLegend(l.Name, th)
	}
	return nil
}

// drawAll draws lines as drawLines does and renders f.
func (f *figure) drawAll(p *plot.Plot, lines []XYLine, dots bool) (Chart, error) {
	if err := f.drawLines(p, lines, dots); err != nil {
		return Chart{}, err
	}
	return f.render(height)
}

// namesOf are lines' names, in order.
func namesOf[L any](lines []L, name func(L) string) []string {
	names := make([]string, len(lines))
	for i, l := range lines {
		names[i] = name(l)
	}
	return names
}

// TimeSeries draws one line per pool against time (x: seconds since the
// start of the step), e.g. corrected p99 per second through an overload
// and the recovery after it, with marks (the overload window) shaded
// behind the lines. The y axis is logarithmic when every value is positive
// and they span a factor of 10 or more, linear from 0 otherwise (so a
// second reported as 0 ms switches to linear; pass NaN for a second
// without answers instead). Points are drawn in order of x.
func TimeSeries(spec Spec, lines []XYLine, marks []Mark) (Chart, error) {
	f, x, y, err := newXYFigure(spec, "Corrected p99 of each second, one line per pool; the shaded span is the overload. "+
		"Read how high each pool's p99 climbs under overload and how fast it comes back after it; a gap is a second without answers.", lines)
	if err != nil {
		return Chart{}, err
	}
	for _, m := range marks {
		if !finite(m.From) || !finite(m.To) || m.To < m.From {
			return Chart{}, fmt.Errorf("chart %q: mark %q spans %v…%v; give finite From <= To", spec.Title, m.Label, m.From, m.To)
		}
		x.add(m.From, m.To)
	}
	p := f.panel(true, labelOr(spec.XLabel, "time since the step started (s)"), labelOr(spec.YLabel, "corrected p99 (ms)"))
	if logAxis(&p.Y, y, 10) {
		p.Y.Tick.Marker = logTicks{}
	} else {
		p.Y.Min, p.Y.Max = y.fromZero()
	}
	p.X.Min, p.X.Max = x.pad(false)
	if len(marks) > 0 {
		p.Add(&markPlotter{marks: marks})
	}
	return f.drawAll(p, lines, false)
}

var markFill = color.NRGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0x26}

// markPlotter shades each mark's span (or draws a line at an instant)
// across the whole height, with its label at the top.
type markPlotter struct{ marks []Mark }

func (m *markPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	sty := p.X.Tick.Label
	sty.XAlign = draw.XCenter
	sty.YAlign = draw.YTop
	for _, mk := range m.marks {
		left, right := trX(mk.From), trX(mk.To)
		c.FillPolygon(markFill, c.ClipPolygonX([]vg.Point{{X: left, Y: c.Min.Y}, {X: right, Y: c.Min.Y}, {X: right, Y: c.Max.Y}, {X: left, Y: c.Max.Y}}))
		if mk.Label != "" {
			c.FillText(sty, vg.Point{X: (left + right) / 2, Y: c.Max.Y - vg.Points(3)}, mk.Label)
		}
	}
}

// Sweep draws one line with point markers per pool against a swept
// parameter (queue capacity, workers) on x. When every x is positive and
// they span a factor of 8 or more (32…1024, 2…64) the x axis is
// logarithmic with a tick at each swept value; otherwise it is linear. The
// y axis is linear from 0 (from below 0 when a value is negative). Points
// are drawn in order of x.
func Sweep(spec Spec, lines []XYLine) (Chart, error) {
	f, x, y, err := newXYFigure(spec, "One line per pool against the swept parameter; compare the lines at each value, and read where a line bends.", lines)
	if err != nil {
		return Chart{}, err
	}
	p := f.panel(true, labelOr(spec.XLabel, "swept parameter"), labelOr(spec.YLabel, "value"))
	if logAxis(&p.X, x, 8) {
		p.X.Tick.Marker = xTicks(lines)
	} else {
		p.X.Min, p.X.Max = x.pad(false)
	}
	p.Y.Min, p.Y.Max = y.fromZero()
	return f.drawAll(p, lines, true)
}

// xTicks marks the x axis at every x the lines were measured at, and
// nowhere else: a swept parameter or a CPU count has no values between.
func xTicks(lines []XYLine) plot.Ticker {
	var xs []float64
	for _, l := range lines {
		xs = append(xs, l.X...)
	}
	slices.Sort(xs)
	var ticks []plot.Tick
	for _, x := range slices.Compact(xs) {
		ticks = append(ticks, plot.Tick{Value: x, Label: formatTick(x)})
	}
	return plot.ConstantTicks(ticks)
}

// logLabel says "log scale" in an axis label that does not yet:
// "p99 (ms)" becomes "p99 (ms, log scale)", "workers" "workers (log scale)".
func logLabel(label string) string {
	if strings.Contains(label, "log") {
		return label
	}
	if strings.HasSuffix(label, ")") {
		return strings.TrimSuffix(label, ")") + ", log scale)"
	}
	return label + " (log scale)"
}

// Scaling draws one line with point markers per pool against how many
// CPUs the server had (x, log scale when they span 8× or more), and for
// each pool its ideal, linear scaling from its point at the fewest CPUs
// (y × x / x0), dashed in the same colour. The y axis is linear from 0.
func Scaling(spec Spec, lines []XYLine) (Chart, error) {
	f, x, y, err := newXYFigure(spec, "One line per pool against the server's CPUs; each pool's dashed line is linear scaling from its figure at the fewest CPUs. "+
		"A pool scales as far as its solid line follows its dashed one.", lines)
	if err != nil {
		return Chart{}, err
	}
	p := f.panel(true, labelOr(spec.XLabel, "server CPUs"), labelOr(spec.YLabel, "value"))
	if !logAxis(&p.X, x, 8) {
		p.X.Min, p.X.Max = x.pad(false)
	}
	p.X.Tick.Marker = xTicks(lines)
	// Each line's ideal, dashed: y0 × x / x0 from its first point with a
	// value.
	for _, l := range lines {
		xs, ys := sortedXY(l)
		j := 0
		for j < len(xs) && (math.IsNaN(ys[j]) || xs[j] <= 0) {
			j++
		}
		if len(xs)-j < 2 {
			continue
		}
		ideal := make([]float64, 0, len(xs)-j)
		for _, xi := range xs[j:] {
			ideal = append(ideal, ys[j]*xi/xs[j])
			y.hi = math.Max(y.hi, ideal[len(ideal)-1])
		}
		if _, err := addSeries(p, xs[j:], ideal, lineStyle(f.col[l.Name], true), false); err != nil {
			return Chart{}, fmt.Errorf("chart %q: series %q: %w", spec.Title, l.Name, err)
		}
	}
	p.Y.Min, p.Y.Max = y.fromZero()
	if err := f.drawLines(p, lines, true); err != nil {
		return Chart{}, err
	}
	f.addLegend("")
	f.addLegend("linear from the fewest CPUs", thumb{style: lineStyle(rgb(0x999999), true)})
	return f.render(height)
}
