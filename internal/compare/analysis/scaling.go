package analysis

import (
	"slices"
	"time"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// Grid is a scaling workload's variants by row (the variant on its whole
// set, in order of first appearance) and kvserver's CPU count
// (ascending). A grid is made only of a workload with a CPU count, so
// Counts is never empty.
type Grid struct {
	Rows   []string
	Counts []int
	at     map[string]map[int]*Variant
	// Saturation and CPU are the scaling charts' lines, one a row: its
	// median saturation (req/s) against kvserver's CPUs, loader-bound
	// points left out (they are lower bounds, not the curve), and its
	// CPU per request (µs) against them: the closed loop's, else the
	// validating runs'. A row with no point has no line.
	Saturation, CPU []Line
}

func gridOf(w *Workload) *Grid {
	g := &Grid{at: map[string]map[int]*Variant{}}
	for _, x := range w.Variants {
		v := x.r.Variant
		if v.CPUs <= 0 {
			continue
		}
		row := v.WithoutCPUs().Name()
		if g.at[row] == nil {
			g.Rows = append(g.Rows, row)
			g.at[row] = map[int]*Variant{}
		}
		g.at[row][v.CPUs] = x
		indexOf(&g.Counts, v.CPUs)
	}
	slices.Sort(g.Counts)
	for _, row := range g.Rows {
		sat, cpu := Line{Name: row}, Line{Name: row}
		for _, n := range g.Counts {
			v := g.At(row, n)
			if v == nil {
				continue
			}
			if r := v.ranked(); r > 0 {
				sat.X, sat.Y = append(sat.X, float64(n)), append(sat.Y, r)
			}
			var d time.Duration
			if v.Closed != nil {
				d = v.Closed.CPUPerRequest
			}
			if d <= 0 && v.Sat != nil {
				d = v.Sat.CPUPerRequest
			}
			if d > 0 {
				cpu.X, cpu.Y = append(cpu.X, float64(n)), append(cpu.Y, float64(d)/float64(time.Microsecond))
			}
		}
		g.Saturation, g.CPU = append(g.Saturation, sat), append(g.CPU, cpu)
	}
	g.Saturation, g.CPU = slices.DeleteFunc(g.Saturation, noPoint), slices.DeleteFunc(g.CPU, noPoint)
	return g
}

// At is row's variant on n CPUs (nil: not measured there).
func (g *Grid) At(row string, n int) *Variant { return g.at[row][n] }

// Largest is the most CPUs kvserver ran on.
func (g *Grid) Largest() int { return g.Counts[len(g.Counts)-1] }

// runsInHandler tells whether v's jobs run in their handlers (-exec
// handler): as its server reported, else as its flags say.
func runsInHandler(v *result.VariantResult) bool {
	if e, ok := v.Config["exec"]; ok {
		return e == "handler"
	}
	return v.Variant.Exec == "" || v.Variant.Exec == "handler"
}

// HandlerTolerance is the target for -exec handler's CPU per request:
// within 5 % of direct's at every CPU count (docs/load-lab.md, "Reading
// a report").
const HandlerTolerance = 0.05

func countFigures(g *Grid) []Figure {
	var out []Figure
	for _, n := range g.Counts {
		out = append(out, Figure{Name: CPUCount, Value: float64(n)})
	}
	return out
}

// scalingFindings: which variants saturate below direct on as many CPUs
// at some count, and by how much at the largest; how far each scales
// from its fewest CPUs; and the closed loop's CPU per request against
// direct's at each count, with the target for -exec handler.
func scalingFindings(w *Workload) []Finding {
	g := w.Grid
	largest := g.Largest()
	vs := Finding{Kind: ScalingVsDirect, Workload: w.Name, Verdict: Tied, Figures: countFigures(g)}
	lower := Finding{Kind: ScalingLowerBound, Workload: w.Name, Verdict: NotRanked}
	for _, row := range g.Rows {
		if row == plan.Baseline {
			continue
		}
		var at []Figure
		compared := false
		for _, n := range g.Counts {
			v, base := g.At(row, n), g.At(plan.Baseline, n)
			if v == nil || base == nil || !v.Sat.Measured() || !base.Sat.Measured() {
				continue // no validated rate on one side: nothing to compare
			}
			if v.Sat.LowerBound || base.Sat.LowerBound {
				if v.Sat.LowerBound {
					lower.add(row, Figure{Of: row, Name: LowerBoundRate, CPUs: n, Value: v.Sat.Rate.Median})
				}
				continue
			}
			compared = true
			iv := pairedSat(base, v)
			if saturationVerdict(iv) == Below {
				r := intervalFigure(row, SatRatio, iv)
				r.CPUs = n
				at = append(at, Figure{Of: row, Name: BelowAt, CPUs: n, Value: float64(n)}, r)
			}
		}
		switch {
		case len(at) > 0:
			vs.Verdict = Below
			vs.add(row, Figure{Of: row, Name: VsDirect, Verdict: Below})
			vs.Figures = append(vs.Figures, at...)
			if v, base := g.At(row, largest).ranked(), g.At(plan.Baseline, largest).ranked(); v > 0 && base > 0 {
				vs.Figures = append(vs.Figures, Figure{Of: row, Name: RatioAtLargest, CPUs: largest, Value: v / base},
					Figure{Of: plan.Baseline, Name: DirectAtLargest, CPUs: largest, Value: base})
			}
		case compared:
			vs.add(row, Figure{Of: row, Name: VsDirect, Verdict: Tied})
		}
	}
	out := append(named(vs, lower), efficiencyFindings(w.Name, g)...)
	return append(out, closedCPUFindings(w.Name, g)...)
}

// efficiencyFindings: each variant's saturation at the largest count as a
// share of linear scaling from its smallest.
func efficiencyFindings(wl string, g *Grid) []Finding {
	if len(g.Counts) < 2 {
		return nil
	}
	lo, hi := g.Counts[0], g.Largest()
	f := Finding{Kind: ScalingEfficiency, Workload: wl, Verdict: Ranged,
		Figures: []Figure{{Name: FromCPUs, Value: float64(lo)}, {Name: ToCPUs, Value: float64(hi)}}}
	for _, row := range g.Rows {
		if a, z := g.At(row, lo).ranked(), g.At(row, hi).ranked(); a > 0 && z > 0 {
			f.add(row, Figure{Of: row, Name: Efficiency, Value: z / (a * float64(hi) / float64(lo))})
		}
	}
	return named(f)
}

// closedCPUFindings: per count, each variant's closed-loop CPU per
// request as a ratio to direct's, and whether every -exec handler
// variant stayed within HandlerTolerance of direct at every count: at
// most 1.05× (costing less than direct is no miss).
func closedCPUFindings(wl string, g *Grid) []Finding {
	perCount := Finding{Kind: ScalingCPU, Workload: wl, Verdict: Ranged}
	worst := map[string]Figure{}
	var handlers []string
	for _, n := range g.Counts {
		base := g.At(plan.Baseline, n)
		if base == nil || base.Closed == nil || base.Closed.CPUPerRequest <= 0 {
			continue
		}
		var figs []Figure
		for _, row := range g.Rows {
			c := g.At(row, n)
			if row == plan.Baseline || c == nil || c.Closed == nil || c.Closed.CPUPerRequest <= 0 {
				continue
			}
			x := c.Closed.CPURatio
			figs = append(figs, Figure{Of: row, Name: CPURatio, CPUs: n, Value: x})
			if runsInHandler(c.r) {
				indexOf(&handlers, row)
				if m, ok := worst[row]; !ok || x > m.Value {
					worst[row] = Figure{Of: row, Name: WorstCPURatio, CPUs: n, Value: x}
				}
			}
		}
		if len(figs) > 0 {
			perCount.Figures = append(perCount.Figures, Figure{Of: plan.Baseline, Name: CPUPerRequest, CPUs: n, Value: float64(base.Closed.CPUPerRequest)})
			perCount.Figures = append(perCount.Figures, figs...)
		}
	}
	if len(perCount.Figures) == 0 {
		return nil
	}
	out := []Finding{perCount}
	if len(handlers) == 0 {
		return out
	}
	target := Finding{Kind: HandlerTarget, Workload: wl, Verdict: Met, Variants: handlers,
		Figures: append(countFigures(g), Figure{Name: Tolerance, Value: HandlerTolerance})}
	for _, row := range handlers {
		m := worst[row]
		m.Verdict = Met
		if m.Value > 1+HandlerTolerance {
			m.Verdict, target.Verdict = Missed, Missed
		}
		target.Figures = append(target.Figures, m)
	}
	return []Finding{perCount, target}
}
