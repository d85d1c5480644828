package chart

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Every chart is width points (1/72 inch) wide, and height high but for
// Curves, whose two panels make it square.
const (
	width  = vg.Length(720)
	height = vg.Length(450)
	// minPanel is the least width and height of one panel's area,
	// axes included.
	minPanel = vg.Length(80)
	pad      = vg.Length(8)
)

// figure is the layout every chart shares: panels stacked vertically on
// the left, the legend in a column on the right (outside the data, so it
// never hides a line), and the caption wrapped under everything.
type figure struct {
	spec    Spec
	caption string
	panels  []*plot.Plot // top to bottom, each taking an equal share
	legend  plot.Legend
	col     map[string]color.Color // the series' colours (colours)
	// legendNames are the legend's entries, kept to size its column.
	legendNames []string
}

// addLegend adds an entry to the legend column.
func (f *figure) addLegend(name string, thumbs ...plot.Thumbnailer) {
	f.legend.Add(name, thumbs...)
	f.legendNames = append(f.legendNames, name)
}

// newFigure checks spec and the series' names: at least one (none says
// what to pass where there is none), each with a name of its own (an
// empty or repeated one would leave the legend unreadable).
func newFigure(spec Spec, defaultCaption string, names []string, none string) (*figure, error) {
	if strings.TrimSpace(spec.Title) == "" {
		return nil, errors.New("chart: Spec.Title is empty; every chart needs a title")
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("chart %q: %s", spec.Title, none)
	}
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		if n == "" {
			return nil, fmt.Errorf("chart %q: series %d has no name; the legend needs one", spec.Title, i)
		}
		if seen[n] {
			return nil, fmt.Errorf("chart %q: two series are named %q; give each a distinct name", spec.Title, n)
		}
		seen[n] = true
	}
	caption := spec.Caption
	if strings.TrimSpace(caption) == "" {
		caption = defaultCaption
	}
	l := plot.NewLegend()
	l.TextStyle.Font = sans(12)
	l.Top = true
	l.Left = true
	l.ThumbnailWidth = 28
	return &figure{spec: spec, caption: caption, legend: l, col: colours(names)}, nil
}

// panel adds a plot below the existing ones, styled alike, its axes
// labelled x and y, with light grid lines behind the data (vertical ones
// too where verticalGrid).
func (f *figure) panel(verticalGrid bool, x, y string) *plot.Plot {
	p := plot.New()
	line := draw.LineStyle{Color: color.Gray{Y: 0xe0}, Width: vg.Points(0.5)}
	g := &plotter.Grid{Vertical: line, Horizontal: line}
	if !verticalGrid {
		g.Vertical.Color = nil
	}
	p.Add(g)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(12)
		a.Tick.Label.Font = sans(10)
		a.Tick.Marker = linearTicks{}
	}
	p.X.Label.Text, p.Y.Label.Text = x, y
	f.panels = append(f.panels, p)
	return p
}

// legendWidth is the width of the right-hand column: the longest entry plus
// its thumbnail, never less than a fifth of the image so panels stay
// aligned from chart to chart.
func (f *figure) legendWidth(width vg.Length) vg.Length {
	w := vg.Length(0)
	sty := f.legend.TextStyle
	for _, name := range f.legendNames {
		if tw := sty.Width(name); tw > w {
			w = tw
		}
	}
	return min(max(w+f.legend.ThumbnailWidth+3*pad, width/5), width/2)
}

// render draws the figure to SVG. gonum/plot panics on some inputs (a log
// axis over non-positive values, for one); the callers validate first, and
// the recover turns whatever slipped through into an error.
func (f *figure) render(height vg.Length) (ch Chart, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("chart %q: cannot draw: %v", f.spec.Title, r)
		}
	}()
	svg := vgsvg.New(width, height)
	dc := draw.New(svg)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	textStyle := func(c color.Color, size vg.Length, x draw.XAlignment) text.Style {
		return text.Style{Color: c, Font: sans(size), XAlign: x, YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
	}
	titleStyle, captionStyle := textStyle(color.Black, 14, draw.XCenter), textStyle(color.Gray{Y: 0x30}, 11, draw.XLeft)

	// Title on top, wrapped like the caption.
	top := dc.Max.Y - pad
	for _, line := range wrap(titleStyle, f.spec.Title, width-2*pad) {
		dc.FillText(titleStyle, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: top}, line)
		top -= titleStyle.Height(line) * 1.15
	}
	top -= pad

	// Caption at the bottom, wrapped to the width.
	lines := wrap(captionStyle, f.caption, width-2*pad)
	lineH := captionStyle.Height("Mg") * 1.2
	captionH := vg.Length(len(lines))*lineH + 2*pad
	for i, line := range lines {
		dc.FillText(captionStyle, vg.Point{X: dc.Min.X + pad, Y: dc.Min.Y + captionH - pad - vg.Length(i)*lineH}, line)
	}

	// Legend column on the right.
	lw := f.legendWidth(width)
	area := draw.Crop(dc, 0, 0, captionH, top-dc.Max.Y)
	plots := draw.Crop(area, 0, -lw, 0, 0)
	legendArea := draw.Crop(area, width-lw+pad, 0, 0, 0)
	f.legend.Draw(legendArea)

	if plots.Max.X-plots.Min.X < minPanel || (plots.Max.Y-plots.Min.Y)/vg.Length(len(f.panels)) < minPanel {
		return Chart{}, fmt.Errorf("chart %q: the title, caption and legend leave no room for the plot at %v×%v points; shorten them", f.spec.Title, width, height)
	}
	// Align gives stacked panels the same data width, so that their x
	// axes line up whatever the width of their y tick labels.
	rows := make([][]*plot.Plot, len(f.panels))
	for i, p := range f.panels {
		rows[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(f.panels), Cols: 1, PadY: 2 * pad}
	for i, cs := range plot.Align(rows, tiles, plots) {
		f.panels[i].Draw(cs[0])
	}

	var buf bytes.Buffer
	if _, err := svg.WriteTo(&buf); err != nil {
		return Chart{}, fmt.Errorf("chart %q: cannot write SVG: %w", f.spec.Title, err)
	}
	return Chart{SVG: buf.Bytes(), Caption: f.caption}, nil
}

// wrap breaks s into lines no wider than max, at spaces.
func wrap(sty text.Style, s string, max vg.Length) []string {
	var lines []string
	var cur string
	for _, word := range strings.Fields(s) {
		next := word
		if cur != "" {
			next = cur + " " + word
		}
		if cur != "" && sty.Width(next) > max {
			lines = append(lines, cur)
			next = word
		}
		cur = next
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// sans is the charts' typeface at size points: gonum's bundled Liberation
// Sans, so rendering needs no system fonts. Set per style rather than
// through plot.DefaultFont, a package variable shared with any other user
// of gonum/plot in the process.
func sans(size vg.Length) font.Font {
	return font.From(font.Font{Typeface: "Liberation", Variant: "Sans"}, size)
}

// labelOr returns label, or def where label is empty.
func labelOr(label, def string) string {
	if strings.TrimSpace(label) == "" {
		return def
	}
	return label
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
