package chart

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kvpool/kvpool/internal/compare/result"
)

// Curves draws saturation curves in two panels sharing the x axis
// (offered rate, req/s): above, the achieved rate with the ideal
// achieved = offered dotted; below, the corrected p99 (ms, log scale) with
// the SLO as a red dashed horizontal line. sloMs <= 0 draws no SLO line.
// Points are drawn in order of offered rate, whatever order they come in.
// Loader-bound steps are marked with a cross and a legend entry, the
// deciding steps' intervals (CurveLine.Seconds) with small marks and
// entries of their own.
func Curves(spec Spec, lines []CurveLine, sloMs float64) (Chart, error) {
	f, err := newFigure(spec, "Above: answered rate against offered rate; a pool keeps up while its line follows the dotted diagonal. "+
		"Below: corrected p99; a pool's saturation point is about the highest offered rate whose p99 stays under the red SLO line.",
		namesOf(lines, func(l CurveLine) string { return l.Name }), "no lines to draw; pass at least one pool")
	if err != nil {
		return Chart{}, err
	}
	if math.IsNaN(sloMs) || math.IsInf(sloMs, 0) {
		return Chart{}, fmt.Errorf("chart %q: SLO %v ms; give a finite value, or 0 for none", spec.Title, sloMs)
	}

	// steps[i] are line i's steps but the validating runs, by offered rate.
	steps := make([][]result.CurvePoint, len(lines))
	x, p99 := empty(), empty()
	rmax := 0.0
	for i, l := range lines {
		for j, p := range l.Search.Curve {
			if p.Validating() {
				continue
			}
			if !finite(p.Asked) || !finite(p.Achieved) || p.Asked < 0 || p.Achieved < 0 || p.P99 < 0 {
				return Chart{}, fmt.Errorf("chart %q: series %q step %d is (offered %v, achieved %v, p99 %v ms); give finite, non-negative values",
					spec.Title, l.Name, j, p.Asked, p.Achieved, ms(p.P99))
			}
			steps[i] = append(steps[i], p)
			x.add(p.Asked)
			rmax = math.Max(rmax, math.Max(p.Achieved, p.Asked))
			p99.add(p99Ms(p.P99))
		}
		if len(steps[i]) == 0 {
			return Chart{}, fmt.Errorf("chart %q: series %q has no steps; pass at least one", spec.Title, l.Name)
		}
		sort.SliceStable(steps[i], func(a, b int) bool { return steps[i][a].Asked < steps[i][b].Asked })
		for _, p := range l.Search.Curve {
			for _, sec := range p.Seconds {
				if !finite(sec.Rate) || sec.Rate < 0 || sec.P99 < 0 {
					return Chart{}, fmt.Errorf("chart %q: series %q has an interval at %v req/s answered %v with p99 %v; give finite, non-negative values", spec.Title, l.Name, p.Asked, sec.Rate, sec.P99)
				}
				x.add(p.Asked)
				rmax = math.Max(rmax, sec.Rate)
				if sec.P99 > 0 {
					p99.add(p99Ms(sec.P99))
				}
			}
		}
	}
	if sloMs > 0 {
		p99.add(sloMs)
	}
	xlo, xhi := x.pad(false)
	xlo = math.Max(xlo, 0)
	xlabel := labelOr(spec.XLabel, "offered rate (req/s)")

	rate := f.panel(true, xlabel, "answered rate (req/s)")
	rate.X.Min, rate.X.Max = xlo, xhi
	rate.Y.Min, rate.Y.Max = 0, rmax*1.05
	if rmax == 0 {
		rate.Y.Max = 1
	}
	idealStyle := draw.LineStyle{Color: rgb(0x999999), Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(3)}}
	if err := addLine(rate, idealStyle, plotter.XY{X: xlo, Y: xlo}, plotter.XY{X: xhi, Y: xhi}); err != nil {
		return Chart{}, fmt.Errorf("chart %q: %w", spec.Title, err)
	}

	lat := f.panel(true, xlabel, logLabel(labelOr(spec.YLabel, "corrected p99 (ms)")))
	lat.X.Min, lat.X.Max = xlo, xhi
	lat.Y.Scale = plot.LogScale{}
	lat.Y.Tick.Marker = logTicks{}
	lat.Y.Min, lat.Y.Max = p99.pad(true)

	var anyBound, anyBracket, anyUnvalidated, anyHeld, anyFailed bool
	// line draws l, whose steps are these, and adds it to the legend.
	line := func(l CurveLine, steps []result.CurvePoint) error {
		col := f.col[l.Name]
		// The intervals first, so that the steps' line is drawn over them.
		held, failed, err := marksOf(l.Search.Curve, xhi-xlo).add(rate, lat, col)
		if err != nil {
			return err
		}
		anyHeld, anyFailed = anyHeld || held, anyFailed || failed
		var xs, ach, p99 []float64
		var boundAch, boundP99 plotter.XYs
		for _, s := range steps {
			xs, ach, p99 = append(xs, s.Asked), append(ach, s.Achieved), append(p99, p99Ms(s.P99))
			if s.LoaderBound {
				boundAch = append(boundAch, plotter.XY{X: s.Asked, Y: s.Achieved})
				boundP99 = append(boundP99, plotter.XY{X: s.Asked, Y: p99Ms(s.P99)})
			}
		}
		style := lineStyle(col, false)
		th, err := addSeries(rate, xs, ach, style, true)
		if err != nil {
			return err
		}
		if _, err := addSeries(lat, xs, p99, style, true); err != nil {
			return err
		}
		for _, pts := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{rate, boundAch}, {lat, boundP99}} {
			drew, err := scatter(pts.p, pts.xys, loaderBoundGlyph(col))
			if err != nil {
				return err
			}
			anyBound = anyBound || drew
		}
		if ok, err := bracket(rate, l, col); err != nil {
			return err
		} else if ok {
			anyBracket, anyUnvalidated = true, anyUnvalidated || !l.Search.Validated
		}
		f.addLegend(l.Name, th)
		return nil
	}
	for i, l := range lines {
		if err := line(l, steps[i]); err != nil {
			return Chart{}, fmt.Errorf("chart %q: series %q: %w", spec.Title, l.Name, err)
		}
	}
	f.addLegend("")
	f.addLegend("offered = answered", thumb{style: idealStyle})
	if anyBracket {
		f.addLegend("bracket: held–failed twice", thumb{style: bracketStyle(rgb(0x333333), true)})
	}
	if anyUnvalidated {
		f.addLegend("bracket, not validated", thumb{style: bracketStyle(rgb(0x333333), false)})
	}
	if anyBound {
		f.addLegend("loader-bound step", thumb{glyph: loaderBoundGlyph(rgb(0x333333))})
	}
	if anyHeld {
		f.addLegend("deciding steps: second held", thumb{glyph: secondGlyph(rgb(0x333333), true)})
	}
	if anyFailed {
		f.addLegend("deciding steps: second failed", thumb{glyph: secondGlyph(rgb(0x333333), false)})
	}
	if sloMs > 0 {
		slo := draw.LineStyle{Color: sloColour, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(8), vg.Points(4)}}
		if err := addLine(lat, slo, plotter.XY{X: xlo, Y: sloMs}, plotter.XY{X: xhi, Y: sloMs}); err != nil {
			return Chart{}, fmt.Errorf("chart %q: %w", spec.Title, err)
		}
		f.addLegend(fmt.Sprintf("SLO p99 %s ms", formatTick(sloMs)), thumb{style: slo})
	}
	return f.render(width)
}

// bracket draws l's bracket on rate as a thick segment of the offered
// axis from Lo to Hi, at the answered rate Lo (where the line left the
// diagonal), in l's colour; ok false where l has none whole (nil, or
// either end 0) or it lies above the panel's top.
func bracket(rate *plot.Plot, l CurveLine, c color.Color) (ok bool, err error) {
	b := l.Search.Bracket
	if b == nil || b.Lo <= 0 || b.Hi <= 0 || b.Lo > rate.Y.Max {
		return false, nil
	}
	if !finite(b.Lo) || !finite(b.Hi) || b.Hi < b.Lo {
		return false, fmt.Errorf("bracket %v–%v: give finite ends, the lower first", b.Lo, b.Hi)
	}
	return true, addLine(rate, bracketStyle(c, l.Search.Validated), plotter.XY{X: b.Lo, Y: b.Lo}, plotter.XY{X: b.Hi, Y: b.Lo})
}

// bracketStyle draws a bracket thick and half transparent, dashed where
// it was not validated.
func bracketStyle(c color.Color, validated bool) draw.LineStyle {
	r, g, b, _ := c.RGBA()
	st := draw.LineStyle{Color: color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x90}, Width: vg.Points(6)}
	if !validated {
		st.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	return st
}

// loaderBoundGlyph marks a loader-bound step: a large cross, unlike the
// dots of the other steps, in the series' colour.
func loaderBoundGlyph(c color.Color) draw.GlyphStyle {
	return draw.GlyphStyle{Color: c, Radius: vg.Points(6), Shape: draw.CrossGlyph{}}
}
