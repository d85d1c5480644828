package chart

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// addSeries draws xs/ys as a line in style, broken where y is NaN; a run
// of a single point is drawn as a dot so that it does not vanish. It
// returns a thumbnail for the legend.
func addSeries(p *plot.Plot, xs, ys []float64, style draw.LineStyle, dots bool) (plot.Thumbnailer, error) {
	dot := draw.GlyphStyle{Color: style.Color, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
	var seg plotter.XYs
	flush := func() error {
		defer func() { seg = nil }()
		if len(seg) == 0 {
			return nil
		}
		if len(seg) > 1 {
			if err := addLine(p, style, seg...); err != nil {
				return err
			}
		}
		if len(seg) == 1 || dots {
			_, err := scatter(p, seg, dot)
			return err
		}
		return nil
	}
	for i := range xs {
		if math.IsNaN(ys[i]) {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		seg = append(seg, plotter.XY{X: xs[i], Y: ys[i]})
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if !dots {
		dot.Shape = nil
	}
	return thumb{style: style, glyph: dot}, nil
}

// addLine draws a line through xys on p in style.
func addLine(p *plot.Plot, style draw.LineStyle, xys ...plotter.XY) error {
	l, err := plotter.NewLine(plotter.XYs(xys))
	if err != nil {
		return err
	}
	l.LineStyle = style
	p.Add(l)
	return nil
}

// scatter draws xys on p as glyphs g, where there are any, and tells
// whether it drew them.
func scatter(p *plot.Plot, xys plotter.XYs, g draw.GlyphStyle) (bool, error) {
	if len(xys) == 0 {
		return false, nil
	}
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return false, err
	}
	s.GlyphStyle = g
	p.Add(s)
	return true, nil
}

// thumb is a legend thumbnail: a short line (none where style has no
// width) with glyph at its centre (none where glyph has no shape).
type thumb struct {
	style draw.LineStyle
	glyph draw.GlyphStyle
}

func (t thumb) Thumbnail(c *draw.Canvas) {
	if y := c.Center().Y; t.style.Width > 0 {
		c.StrokeLine2(t.style, c.Min.X, y, c.Max.X, y)
	}
	if t.glyph.Shape != nil {
		c.DrawGlyph(t.glyph, c.Center())
	}
}

// swatch is a legend thumbnail for a bar series: a filled square.
type swatch struct{ c color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	side := c.Max.Y - c.Min.Y
	x := (c.Min.X + c.Max.X - side) / 2
	c.FillPolygon(s.c, []vg.Point{{X: x, Y: c.Min.Y}, {X: x + side, Y: c.Min.Y}, {X: x + side, Y: c.Max.Y}, {X: x, Y: c.Max.Y}})
}

// logTicks labels a log axis so that at least two labels show whatever the
// range: powers of ten (with unlabelled minor ticks) across wide ranges,
// 1-2-5 or every first digit within narrow ones, the ends within the
// narrowest. gonum's LogTicks labels only powers of
// ten, which leaves a range such as 1.2…8 ms without a single label.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > min) {
		return []plot.Tick{{Value: min, Label: formatTick(min)}}
	}
	var mantissas [][]float64
	if math.Log10(max/min) > 3 {
		mantissas = append(mantissas, []float64{1})
	}
	mantissas = append(mantissas, []float64{1, 2, 5}, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9})
	var ticks []plot.Tick
	for _, labelled := range mantissas {
		ticks = ticks[:0]
		n := 0
		for e := math.Floor(math.Log10(min)); math.Pow(10, e) <= max; e++ {
			base := math.Pow(10, e)
			for m := 1.0; m < 10; m++ {
				v := m * base
				if v < min || v > max {
					continue
				}
				t := plot.Tick{Value: v}
				for _, lm := range labelled {
					if m == lm {
						t.Label = formatTick(v)
						n++
					}
				}
				ticks = append(ticks, t)
			}
		}
		if n >= 2 {
			return ticks
		}
	}
	// A range narrower than one step of the first digit: label its ends.
	return append(ticks,
		plot.Tick{Value: min, Label: strconv.FormatFloat(min, 'g', 3, 64)},
		plot.Tick{Value: max, Label: strconv.FormatFloat(max, 'g', 3, 64)})
}

// linearTicks are gonum's default ticks with labels written without
// trailing zeros: 7500, not 7500.00.
type linearTicks struct{}

func (linearTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = formatTick(ticks[i].Value)
		}
	}
	return ticks
}

// formatTick writes a tick value without float noise: 0.001, 2.5, 1000.
func formatTick(v float64) string {
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// checkLengths says which series has which mismatched lengths.
func checkLengths(title, name, what string, n int, otherWhat string, other int) error {
	if other != n {
		return fmt.Errorf("chart %q: series %q has %d %s but %d %s; give one value per point", title, name, n, what, other, otherWhat)
	}
	return nil
}

// extent is the range of the values added to it; lo > hi (both
// infinite) until one is.
type extent struct{ lo, hi float64 }

func empty() extent { return extent{math.Inf(1), math.Inf(-1)} }

func (e *extent) add(vs ...float64) {
	for _, v := range vs {
		e.lo, e.hi = math.Min(e.lo, v), math.Max(e.hi, v)
	}
}

// pad widens e a little so lines do not touch the frame, and makes a
// degenerate range (one point, all equal) a visible one.
func (e extent) pad(log bool) (float64, float64) {
	min, max := e.lo, e.hi
	if log {
		if min == max {
			return min / 2, max * 2
		}
		return min / 1.15, max * 1.15
	}
	if min == max {
		d := math.Abs(min) / 2
		if d == 0 {
			d = 1
		}
		return min - d, max + d
	}
	d := (max - min) * 0.05
	return min - d, max + d
}

// fromZero is a linear axis range that starts at 0 (so that bar-like
// comparisons of heights are honest) unless a value is negative.
func (e extent) fromZero() (float64, float64) {
	if e.lo < 0 {
		return e.pad(false)
	}
	if e.hi == 0 {
		return 0, 1
	}
	return 0, e.hi * 1.08
}
