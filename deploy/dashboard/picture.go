package dashboard

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// The picture's scale: Grafana's grid is 24 columns wide and counts
// heights in units of 30 px; a column is drawn colWidth px wide.
const (
	colWidth   = 60
	unitHeight = 30
	gridWidth  = 24 * colWidth
	margin     = 4
	fontSize   = 11
	lineHeight = 14
	// charWidth is a monospace character's advance at fontSize, for
	// wrapping a query to its panel's width.
	charWidth = 6.6
)

// SVG draws the dashboard's panel grid as Build lays it out: each row's
// title, and each panel's box at its grid position with its title, unit
// and queries. It reads everything from the built dashboard, so the
// picture shows what Grafana would be given, without Grafana.
func SVG() ([]byte, error) {
	d, err := Build()
	if err != nil {
		return nil, fmt.Errorf("cannot build the dashboard: %w", err)
	}
	var height uint32
	for _, p := range d.Panels {
		if g := gridPos(p); g != nil {
			height = max(height, g.Y+g.H)
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="%d">`+"\n",
		gridWidth, height*unitHeight, gridWidth, height*unitHeight, fontSize)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#111217"/>`+"\n")
	for _, p := range d.Panels {
		switch {
		case p.RowPanel != nil:
			g := p.RowPanel.GridPos
			x, y := g.X*colWidth, g.Y*unitHeight
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#ccccdc" font-size="15" font-weight="bold">%s</text>`+"\n",
				x+margin, y+unitHeight-9, escape(deref(p.RowPanel.Title)))
		case p.Panel != nil:
			drawPanel(&b, p.Panel)
		}
	}
	b.WriteString("</svg>\n")
	return b.Bytes(), nil
}

func gridPos(p dashboard.PanelOrRowPanel) *dashboard.GridPos {
	switch {
	case p.RowPanel != nil:
		return p.RowPanel.GridPos
	case p.Panel != nil:
		return p.Panel.GridPos
	}
	return nil
}

func drawPanel(b *bytes.Buffer, p *dashboard.Panel) {
	g := p.GridPos
	x, y := g.X*colWidth+margin/2, g.Y*unitHeight+margin/2
	w, h := g.W*colWidth-margin, g.H*unitHeight-margin
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" rx="3" fill="#181b1f" stroke="#2f3237"/>`+"\n", x, y, w, h)
	title := deref(p.Title)
	if p.FieldConfig != nil && p.FieldConfig.Defaults.Unit != nil {
		title += "  [" + *p.FieldConfig.Defaults.Unit + "]"
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" fill="#ccccdc" font-weight="bold">%s</text>`+"\n", x+8, y+18, escape(title))
	perLine := int(float64(w-16) / charWidth)
	ty := y + 18 + lineHeight + 4
	for _, t := range p.Targets {
		q, ok := t.(prometheus.Dataquery)
		if !ok {
			continue
		}
		legend := ""
		if q.LegendFormat != nil {
			legend = *q.LegendFormat
		}
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="#73bf69">%s</text>`+"\n", x+8, ty, escape(legend))
		ty += lineHeight
		for _, line := range wrap(q.Expr, perLine) {
			fmt.Fprintf(b, `<text x="%d" y="%d" fill="#9fa7b3" font-family="monospace">%s</text>`+"\n", x+8, ty, escape(line))
			ty += lineHeight
		}
		ty += 3
	}
}

// wrap breaks s into lines of at most width characters, after a space or
// a comma where it can, anywhere where it must.
func wrap(s string, width int) []string {
	var lines []string
	for len(s) > width {
		cut := strings.LastIndexAny(s[:width], " ,")
		if cut <= 0 {
			cut = width - 1
		}
		lines = append(lines, s[:cut+1])
		s = strings.TrimLeft(s[cut+1:], " ")
	}
	return append(lines, s)
}

func escape(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
