package chart

import (
	"hash/fnv"
	"image/color"
	"sort"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func rgb(hex uint32) color.Color {
	return color.RGBA{R: uint8(hex >> 16), G: uint8(hex >> 8), B: uint8(hex), A: 0xff}
}

// knownColours fixes the colour of every pool and overflow policy, so that
// a name reads the same in every chart of a report. direct, the baseline,
// is near-black. Red is kept for the SLO line.
var knownColours = map[string]color.Color{
	"direct":     rgb(0x333333),
	"fifo":       rgb(0x1f77b4),
	"lifo":       rgb(0xff7f0e),
	"msqueue":    rgb(0x2ca02c),
	"multiqueue": rgb(0x9467bd),
	"adaptive":   rgb(0x8c564b),
	// The peers: failsafe-go's limiter, and with its prioritizer.
	"failsafe":          rgb(0x17becf),
	"failsafe-priority": rgb(0xe377c2),
	"reject":            rgb(0x1f77b4),
	"drop-oldest":       rgb(0xff7f0e),
	"caller-runs":       rgb(0x2ca02c),
	"block":             rgb(0x9467bd),
	"unbounded":         rgb(0x8c564b),
}

// palette is where other names take their colour from.
var palette = []color.Color{
	rgb(0x17becf), rgb(0xe377c2), rgb(0xbcbd22), rgb(0x7f7f7f),
	rgb(0x1f77b4), rgb(0xff7f0e), rgb(0x2ca02c), rgb(0x9467bd),
	rgb(0x8c564b), rgb(0x393b79), rgb(0x637939), rgb(0x8c6d31),
}

var sloColour = rgb(0xd62728)

// colours gives each name its colour: a known name its fixed colour, any
// other name a palette slot picked by a hash of the name (stable from chart
// to chart), moved to the next free slot where that colour is already
// taken in this chart, so that the lines of one chart are always distinct
// while the palette lasts.
func colours(names []string) map[string]color.Color {
	out := make(map[string]color.Color, len(names))
	used := make(map[color.Color]bool)
	var other []string
	for _, n := range names {
		if c, ok := knownColours[n]; ok {
			out[n] = c
			used[c] = true
		} else {
			other = append(other, n)
		}
	}
	sort.Strings(other)
	for _, n := range other { // no name twice: newFigure refuses that
		h := fnv.New32a()
		h.Write([]byte(n))
		start := int(h.Sum32() % uint32(len(palette)))
		c := palette[start]
		for i := 0; i < len(palette); i++ {
			if cand := palette[(start+i)%len(palette)]; !used[cand] {
				c = cand
				break
			}
		}
		out[n] = c
		used[c] = true
	}
	return out
}

// lineStyle is the style of a data line; dashed for uncorrected latency
// and similar secondary series.
func lineStyle(c color.Color, dashed bool) draw.LineStyle {
	s := draw.LineStyle{Color: c, Width: vg.Points(2)}
	if dashed {
		s.Width = vg.Points(1.5)
		s.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
	}
	return s
}
