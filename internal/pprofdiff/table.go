package pprofdiff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// diffBaseLabel marks a diff's samples that come from its base; pprof's
// report takes its total from them.
const diffBaseLabel = "pprof::base"

// pprof's defaults for a -top report: functions whose |cum| is below
// topNodeFraction of all functions' summed flat are dropped, and calls
// below topEdgeFraction of it (which decide a row's "(inline)").
const (
	topNodeFraction = 0.005
	topEdgeFraction = 0.001
)

// topTable prints p as `pprof -top -nodecount=nodeCount` does
// (internal/report's printText), at pprof's default granularity,
// functions, and with the default sample type (a mutex profile's is
// delay, not contentions). It leaves out the legend's File, Build ID and
// Time lines and the final newline. p is modified.
func topTable(p *profile.Profile, nodeCount int) (string, error) {
	if len(p.SampleType) == 0 {
		return "", fmt.Errorf("profile has no samples")
	}
	idx, err := p.SampleIndexByName("")
	if err != nil {
		return "", err
	}
	st := p.SampleType[idx]
	total := diffTotal(p, idx)
	if err := p.Aggregate(true, true, false, false, false, false); err != nil {
		return "", err
	}
	g, origCount, dropped := trimmedTopGraph(p, idx, nodeCount)

	unit := topOutputUnit(g, total, st.Unit)
	value := func(v int64) string { return scaledLabel(v, st.Unit, unit) }
	var lines []string
	for _, c := range p.Comments {
		if !strings.HasPrefix(c, "#") {
			lines = append(lines, c)
		}
	}
	lines = append(lines, "Type: "+st.Type)
	if p.DocURL != "" {
		lines = append(lines, "Doc: "+p.DocURL)
	}
	if p.DurationNanos != 0 {
		var ratio string
		if v, u := scaleValue(total, st.Unit, "nanoseconds"); u == "ns" && v != 0 {
			ratio = "(" + percentage(int64(v), p.DurationNanos) + ")"
		}
		lines = append(lines, fmt.Sprintf("Duration: %s, Total samples = %s %s", scaledLabel(p.DurationNanos, "nanoseconds", "auto"), value(total), ratio))
	}
	var shown int64
	for _, n := range g {
		shown += n.flat
	}
	lines = append(lines, fmt.Sprintf("Showing nodes accounting for %s, %s of %s total", value(shown), strings.TrimSpace(percentage(shown, total)), value(total)))
	if total != 0 {
		if dropped > 0 {
			noun := "node"
			if dropped > 1 {
				noun = "nodes"
			}
			lines = append(lines, fmt.Sprintf("Dropped %d %s (cum <= %s)", dropped, noun, value(abs64(int64(float64(total)*topNodeFraction)))))
		}
		if len(g) > 0 && len(g) < origCount {
			lines = append(lines, fmt.Sprintf("Showing top %d nodes out of %d", len(g), origCount))
		}
	}
	lines = append(lines, fmt.Sprintf("%10s %5s%% %5s%% %10s %5s%%", "flat", "flat", "sum", "cum", "cum"))
	var sum int64
	for _, n := range g {
		sum += n.flat
		lines = append(lines, fmt.Sprintf("%10s %s %s %10s %s  %s%s", value(n.flat), percentage(n.flat, total),
			percentage(sum, total), value(n.cum), percentage(n.cum, total), n.fn.printable(), n.inlineLabel()))
	}
	return strings.Join(lines, "\n"), nil
}

// trimmedTopGraph is the graph a -top table shows, in its order
// (internal/report's newTrimmedGraph): without the functions whose |cum|
// is under the node fraction (dropped counts them), then the first
// nodeCount of the origCount left. Each trim rebuilds the graph from the
// samples, so that a dropped leaf's value is nobody's flat, and calls
// under the edge fraction are forgotten.
func trimmedTopGraph(p *profile.Profile, idx, nodeCount int) (g []*topNode, origCount, dropped int) {
	g = topGraph(p, idx, nil)
	var flat int64
	for _, n := range g {
		flat += n.flat
	}
	nodeCutoff := abs64(int64(float64(flat) * topNodeFraction))
	edgeCutoff := abs64(int64(float64(flat) * topEdgeFraction))
	if nodeCutoff > 0 {
		kept := map[topFunc]bool{}
		for _, n := range g {
			if abs64(n.cum) >= nodeCutoff {
				kept[n.fn] = true
			}
		}
		if len(kept) != len(g) {
			dropped = len(g) - len(kept)
			g = topGraph(p, idx, kept)
		}
	}
	origCount = len(g)
	slices.SortFunc(g, compareTopNodes)
	if nodeCount > 0 && len(g) > nodeCount {
		kept := map[topFunc]bool{}
		for _, n := range g[:nodeCount] {
			kept[n.fn] = true
		}
		g = topGraph(p, idx, kept)
		slices.SortFunc(g, compareTopNodes)
	}
	for _, n := range g {
		for from, e := range n.in {
			if abs64(e.weight) < edgeCutoff {
				delete(n.in, from)
			}
		}
	}
	return g, origCount, dropped
}

// diffTotal is a report's total (internal/report's computeTotal): the
// summed |value| of a diff's base samples, or of all samples where there
// are none, so that a diff's shares are of what the base spent.
func diffTotal(p *profile.Profile, idx int) int64 {
	var total, base int64
	for _, s := range p.Sample {
		v := abs64(s.Value[idx])
		total += v
		if s.DiffBaseSample() {
			base += v
		}
	}
	if base > 0 {
		return base
	}
	return total
}
