package chart

import (
	"image/color"
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kvpool/kvpool/internal/compare/result"
)

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// p99Ms is a latency in milliseconds where the log axis draws it: no
// lower than its floor.
func p99Ms(d time.Duration) float64 { return math.Max(ms(d), latencyFloorMs) }

// This file draws a saturation curve's per-interval points: the judged
// intervals of the steps that decided each search (CurvePoint.Seconds).

// secondsBand is the share of the offered axis a step's intervals are
// spread over, in the order of their start.
const secondsBand = 0.03

// secondMarks are intervals as the points each panel draws, held and
// failed apart; a p99 is drawn no lower than the axis floor, a NaN one
// not at all.
type secondMarks struct {
	rateHeld, rateFailed, latHeld, latFailed plotter.XYs
}

// marksOf places the kept intervals of curve's steps on an offered axis
// of width span: each step's from its first judged interval's start to
// its last's (one alone in the middle).
func marksOf(curve []result.CurvePoint, span float64) secondMarks {
	var m secondMarks
	for _, s := range curve {
		if len(s.Seconds) == 0 {
			continue
		}
		first, last := s.Seconds[0].T, s.Seconds[0].T
		for _, p := range s.Seconds {
			first, last = min(first, p.T), max(last, p.T)
		}
		for _, p := range s.Seconds {
			place := 0.5
			if last > first {
				place = (p.T - first) / (last - first)
			}
			rate, lat := &m.rateFailed, &m.latFailed
			if p.OK {
				rate, lat = &m.rateHeld, &m.latHeld
			}
			x := s.Asked + (place-0.5)*secondsBand*span
			*rate = append(*rate, plotter.XY{X: x, Y: p.Rate})
			if p.P99 > 0 {
				*lat = append(*lat, plotter.XY{X: x, Y: p99Ms(p.P99)})
			}
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
		drew, err := scatter(pts.p, pts.xys, secondGlyph(c, pts.held))
		if err != nil {
			return false, false, err
		}
		held, failed = held || drew && pts.held, failed || drew && !pts.held
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
