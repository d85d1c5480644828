package chart

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// This file draws a saturation curve's per-interval points: the judged
// intervals of the steps that decided each search (CurveLine.Seconds).

// checkSeconds refuses an interval whose rates are not finite and
// non-negative, or whose p99 is negative or infinite (NaN is "nothing
// answered").
func checkSeconds(l CurveLine) error {
	for j, p := range l.Seconds {
		if !finite(p.Offered) || !finite(p.Answered) || p.Offered < 0 || p.Answered < 0 || math.IsInf(p.P99Ms, 0) || p.P99Ms < 0 {
			return fmt.Errorf("series %q interval %d is (offered %v, answered %v, p99 %v ms); give finite, non-negative values (NaN p99: nothing answered)",
				l.Name, j, p.Offered, p.Answered, p.P99Ms)
		}
		if !(p.Place >= 0 && p.Place <= 1) {
			return fmt.Errorf("series %q interval %d is at place %v of its step; give 0 (first) to 1 (last)", l.Name, j, p.Place)
		}
	}
	return nil
}

// secondsBand is the share of the offered axis a step's intervals are
// spread over (StepSecond.Place).
const secondsBand = 0.03

// secondMarks are intervals as the points each panel draws, held and
// failed apart; a p99 is drawn no lower than the axis floor, a NaN one
// not at all.
type secondMarks struct {
	rateHeld, rateFailed, latHeld, latFailed plotter.XYs
}

// marksOf places secs on an offered axis of width span.
func marksOf(secs []StepSecond, span float64) secondMarks {
	var m secondMarks
	for _, p := range secs {
		rate, lat := &m.rateFailed, &m.latFailed
		if p.Held {
			rate, lat = &m.rateHeld, &m.latHeld
		}
		x := p.Offered + (p.Place-0.5)*secondsBand*span
		*rate = append(*rate, plotter.XY{X: x, Y: p.Answered})
		if !math.IsNaN(p.P99Ms) {
			*lat = append(*lat, plotter.XY{X: x, Y: math.Max(p.P99Ms, latencyFloorMs)})
		}
	}
	return m
}

// add draws m on rate and lat in c and says which kinds it drew.
func (m secondMarks) add(rate, lat *plot.Plot, c color.Color) (held, failed bool, err error) {
	for _, pts := range []struct {
		p    *plot.Plot
		xys  plotter.XYs
		held bool
	}{{rate, m.rateHeld, true}, {rate, m.rateFailed, false}, {lat, m.latHeld, true}, {lat, m.latFailed, false}} {
		if len(pts.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts.xys)
		if err != nil {
			return false, false, err
		}
		sc.GlyphStyle = secondGlyph(c, pts.held)
		pts.p.Add(sc)
		held, failed = held || pts.held, failed || !pts.held
	}
	return held, failed, nil
}

// secondGlyph marks an interval: smaller than a step's dot, a ring where
// it held, a filled triangle where it failed.
func secondGlyph(c color.Color, held bool) draw.GlyphStyle {
	if held {
		return draw.GlyphStyle{Color: c, Radius: vg.Points(2), Shape: draw.RingGlyph{}}
	}
	return draw.GlyphStyle{Color: c, Radius: vg.Points(2.5), Shape: draw.PyramidGlyph{}}
}
