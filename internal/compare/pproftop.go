package compare

// The -diff_base table computed in-process (pprofTop), so that a report
// needs no Go toolchain: what `go tool pprof -top -diff_base` does, read
// from github.com/google/pprof's internal/report and internal/graph, on
// the public profile package.

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/pprof/profile"
)

func readProfile(path string) (*profile.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("cannot read profile %s: %w", path, err)
	}
	return p, nil
}

// diffProfile is what pprof's -diff_base makes of two profiles
// (internal/driver's fetchProfiles): base's samples are marked as the
// base, scaled by -1 and merged with p's, so that each function's value
// is p's less base's while the report's total stays base's. With
// normalize p is first scaled so that its total is base's. base and p
// are modified.
func diffProfile(base, p *profile.Profile, normalize bool) (*profile.Profile, error) {
	base.SetLabel(diffBaseLabel, []string{"true"})
	if normalize {
		if err := p.Normalize(base); err != nil {
			return nil, err
		}
	}
	base.Scale(-1)
	ps := []*profile.Profile{p, base}
	if err := profile.CompatibilizeSampleTypes(ps); err != nil {
		return nil, err
	}
	d, err := profile.Merge(ps)
	if err != nil {
		return nil, err
	}
	if err := d.RemoveUninteresting(); err != nil {
		return nil, err
	}
	return d, nil
}

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

// topFunc identifies a row: pprof's graph.NodeInfo at function
// granularity, where addresses, files and lines are gone.
type topFunc struct {
	name      string
	startLine int64  // of a nameless function
	objfile   string // for a nameless function or a location without one
}

func funcOf(l *profile.Location, line profile.Line) topFunc {
	var objfile string
	if l.Mapping != nil {
		objfile = l.Mapping.File
	}
	if line.Function == nil {
		return topFunc{objfile: objfile}
	}
	if line.Function.Name == "" {
		return topFunc{startLine: line.Function.StartLine, objfile: objfile}
	}
	return topFunc{name: line.Function.Name}
}

func (f topFunc) printable() string {
	switch {
	case f.name != "":
		return f.name
	case f.objfile != "":
		return "[" + filepath.Base(f.objfile) + "]"
	default:
		return "<unknown>"
	}
}

// topNode is a function's flat and cumulative value, and its callers.
type topNode struct {
	fn        topFunc
	flat, cum int64
	in        map[*topNode]*topEdge
}

// topEdge is a call's summed value; inline while every sample across it
// had the callee inlined into the caller.
type topEdge struct {
	weight int64
	inline bool
}

// inlineLabel is the row's suffix: " (inline)" where every call that
// remains into the function was inlined, " (partial-inline)" where some
// were.
func (n *topNode) inlineLabel() string {
	var inline, called bool
	for _, e := range n.in {
		if e.inline {
			inline = true
		} else {
			called = true
		}
	}
	switch {
	case inline && called:
		return " (partial-inline)"
	case inline:
		return " (inline)"
	}
	return ""
}

// topGraph is pprof's call graph of p (internal/graph's newGraph), one
// node per function with a nonzero value. With kept non-nil only those
// functions get nodes: a stack's frames outside it are skipped, and a
// sample whose leaf is one of them adds no flat value.
func topGraph(p *profile.Profile, idx int, kept map[topFunc]bool) []*topNode {
	nodes := map[topFunc]*topNode{}
	locNodes := make(map[uint64][]*topNode, len(p.Location))
	for _, l := range p.Location {
		lines := l.Line
		if len(lines) == 0 {
			lines = []profile.Line{{}}
		}
		ns := make([]*topNode, len(lines))
		for i, line := range lines {
			f := funcOf(l, line)
			if kept != nil && !kept[f] {
				continue
			}
			if nodes[f] == nil {
				nodes[f] = &topNode{fn: f, in: map[*topNode]*topEdge{}}
			}
			ns[i] = nodes[f]
		}
		locNodes[l.ID] = ns
	}
	type call struct{ from, to *topNode }
	seenNode := map[*topNode]bool{}
	seenCall := map[call]bool{}
	for _, s := range p.Sample {
		w := s.Value[idx]
		if w == 0 {
			continue
		}
		clear(seenNode)
		clear(seenCall)
		var parent *topNode
		skipped := false
		// From the root down; a location's lines run from the inlined
		// leaf to the function it was inlined into.
		for i := len(s.Location) - 1; i >= 0; i-- {
			ns := locNodes[s.Location[i].ID]
			for j := len(ns) - 1; j >= 0; j-- {
				n := ns[j]
				if n == nil {
					skipped = true
					continue
				}
				if !seenNode[n] {
					seenNode[n] = true
					n.cum += w
				}
				if c := (call{parent, n}); parent != nil && n != parent && !seenCall[c] {
					seenCall[c] = true
					e := n.in[parent]
					if e == nil {
						e = &topEdge{inline: true}
						n.in[parent] = e
					}
					e.weight += w
					e.inline = e.inline && j != len(ns)-1
				}
				parent = n
				skipped = false
			}
		}
		if parent != nil && !skipped {
			parent.flat += w
		}
	}
	g := make([]*topNode, 0, len(nodes))
	for _, n := range nodes {
		if n.flat != 0 || n.cum != 0 {
			g = append(g, n)
		}
	}
	return g
}

// compareTopNodes is pprof's flat order: by |flat| descending, then by
// name. (pprof leaves two rows of the same name, nameless functions of one
// binary, in whatever order its sort leaves them; here they go by |cum|,
// then by what tells them apart.)
func compareTopNodes(a, b *topNode) int {
	if c := cmp.Compare(abs64(b.flat), abs64(a.flat)); c != 0 {
		return c
	}
	if c := strings.Compare(a.fn.printable(), b.fn.printable()); c != 0 {
		return c
	}
	if c := cmp.Compare(abs64(b.cum), abs64(a.cum)); c != 0 {
		return c
	}
	return strings.Compare(fmt.Sprint(a.fn), fmt.Sprint(b.fn))
}

// topOutputUnit is the unit the table prints values in
// (internal/report's selectOutputUnit): the smallest row's, unless the
// total's is larger and the smallest row is under 1 % of the total, then
// the unit that prints it as at least 0.01.
func topOutputUnit(g []*topNode, total int64, sampleUnit string) string {
	if len(g) == 0 {
		return "minimum"
	}
	var least int64
	for _, n := range g {
		v := abs64(n.flat)
		if v == 0 {
			v = abs64(n.cum)
		}
		if v > 0 && (least == 0 || v < least) {
			least = v
		}
	}
	if least == 0 {
		least = total
	}
	_, unit := scaleValue(least, sampleUnit, "minimum")
	if _, most := scaleValue(total, sampleUnit, "minimum"); unit != most && least*100 < total {
		_, unit = scaleValue(100*least, sampleUnit, "minimum")
	}
	if unit == "" {
		return sampleUnit
	}
	return unit
}

// pprofUnit is one unit pprof scales values to (internal/measurement's
// Unit): its printed name, the names a profile may give it, and its size
// in its family's base unit.
type pprofUnit struct {
	name    string
	aliases []string
	factor  float64
}

// pprofUnitFamily is a measurement's units, and the one a value takes
// where none fits.
type pprofUnitFamily struct {
	units    []pprofUnit
	fallback pprofUnit
}

// pprofUnitFamilies are the byte and time units of pprof's measurement
// package. (Its GCU family is left out: no Go profile uses it.)
var pprofUnitFamilies = []pprofUnitFamily{{
	units: []pprofUnit{
		{"B", []string{"b", "byte"}, 1},
		{"kB", []string{"kb", "kbyte", "kilobyte"}, 1 << 10},
		{"MB", []string{"mb", "mbyte", "megabyte"}, 1 << 20},
		{"GB", []string{"gb", "gbyte", "gigabyte"}, 1 << 30},
		{"TB", []string{"tb", "tbyte", "terabyte"}, 1 << 40},
		{"PB", []string{"pb", "pbyte", "petabyte"}, 1 << 50},
	},
	fallback: pprofUnit{"B", nil, 1},
}, {
	units: []pprofUnit{
		{"ns", []string{"ns", "nanosecond"}, float64(time.Nanosecond)},
		{"us", []string{"μs", "us", "microsecond"}, float64(time.Microsecond)},
		{"ms", []string{"ms", "millisecond"}, float64(time.Millisecond)},
		{"s", []string{"s", "sec", "second"}, float64(time.Second)},
		{"hrs", []string{"hour", "hr"}, float64(time.Hour)},
	},
	fallback: pprofUnit{"s", nil, float64(time.Second)},
}}

// find is the unit a profile's unit name means, or nil: a plural is
// singular, in any case.
func (f *pprofUnitFamily) find(name string) *pprofUnit {
	name = strings.ToLower(name)
	if utf8.RuneCountInString(name) > 2 {
		name = strings.TrimSuffix(name, "s")
	}
	for i, u := range f.units {
		if slices.Contains(u.aliases, name) {
			return &f.units[i]
		}
	}
	return nil
}

// scaleValue converts v from one unit to another as pprof's
// measurement.Scale does: to "minimum" or "auto", the largest unit that
// keeps it at least 1. The unit returned is "" for counts, which print
// bare.
func scaleValue(v int64, from, to string) (float64, string) {
	if v < 0 && -v > 0 {
		s, u := scaleValue(-v, from, to)
		return -s, u
	}
	for i := range pprofUnitFamilies {
		family := &pprofUnitFamilies[i]
		fu := family.find(from)
		if fu == nil {
			continue
		}
		x := float64(v) * fu.factor
		tu := &family.fallback
		if to == "minimum" || to == "auto" {
			var f float64
			for j, u := range family.units {
				if u.factor >= f && x/u.factor >= 1 {
					f, tu = u.factor, &family.units[j]
				}
			}
		} else if u := family.find(to); u != nil {
			tu = u
		}
		return x / tu.factor, tu.name
	}
	switch to {
	case "count", "sample", "unit", "minimum", "auto":
		return float64(v), ""
	}
	return float64(v), to
}

// scaledLabel prints v as pprof does: in unit to, with at most two
// decimals.
func scaledLabel(v int64, from, to string) string {
	s, u := scaleValue(v, from, to)
	text := strings.TrimSuffix(fmt.Sprintf("%.2f", s), ".00")
	if text == "0" || text == "-0" {
		return "0"
	}
	return text + u
}

// percentage prints |v| as a share of total as pprof does: unsigned,
// five wide, at least two significant digits.
func percentage(v, total int64) string {
	var ratio float64
	if total != 0 {
		ratio = math.Abs(float64(v)/float64(total)) * 100
	}
	switch {
	case ratio >= 99.95 && ratio <= 100.05:
		return "  100%"
	case ratio >= 1:
		return fmt.Sprintf("%5.2f%%", ratio)
	}
	return fmt.Sprintf("%5.2g%%", ratio)
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
