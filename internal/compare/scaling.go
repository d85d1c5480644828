package compare

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/chart"
	"github.com/kvpool/kvpool/internal/compare/verdict"
)

// This file is the scaling preset's report: each variant's saturation,
// closed-loop throughput and CPU per request against how many CPUs
// kvserver had.

// isScaling tells whether wr's variants ran at CPU counts (the scaling
// preset).
func isScaling(wr *WorkloadResult) bool {
	return slices.ContainsFunc(wr.Variants, func(v *VariantResult) bool { return v.Variant.CPUs > 0 })
}

// scalingGrid is wr's variants by row (the variant on its whole set,
// in order of first appearance) and CPU count (ascending).
type scalingGrid struct {
	rows   []string
	counts []int
	at     map[string]map[int]*VariantResult
}

func gridOf(wr *WorkloadResult) scalingGrid {
	g := scalingGrid{at: map[string]map[int]*VariantResult{}}
	for _, v := range wr.Variants {
		if v.Variant.CPUs <= 0 {
			continue
		}
		row := v.Variant.withoutCPUs().Name()
		if g.at[row] == nil {
			g.rows = append(g.rows, row)
			g.at[row] = map[int]*VariantResult{}
		}
		g.at[row][v.Variant.CPUs] = v
		if !slices.Contains(g.counts, v.Variant.CPUs) {
			g.counts = append(g.counts, v.Variant.CPUs)
		}
	}
	slices.Sort(g.counts)
	return g
}

// base is direct at n CPUs.
func (g scalingGrid) base(n int) *VariantResult { return g.at[baselinePool][n] }

// satCPUPerRequest is the median over v's searches of kvserver's CPU per
// request in the validating run (0: unknown).
func satCPUPerRequest(v *VariantResult) time.Duration {
	var xs []float64
	for _, s := range v.Sat {
		if s.ServerCPUPerRequest > 0 {
			xs = append(xs, float64(s.ServerCPUPerRequest))
		}
	}
	return time.Duration(median(xs))
}

// closedCPUPerRequest is v's closed-loop CPU per request (0: none ran).
func closedCPUPerRequest(v *VariantResult) time.Duration {
	if v == nil || v.Closed == nil {
		return 0
	}
	return v.Closed.CPUPerRequest()
}

// searchesText is "1 search", "3 searches".
func searchesText(n int) string {
	if n == 1 {
		return "1 search"
	}
	return fmt.Sprintf("%d searches", n)
}

// writeScaling writes wr's scaling tables: saturation and CPU per
// request by variant and CPU count, then the closed loop's.
func writeScaling(b *bytes.Buffer, c *Comparison, wr *WorkloadResult) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	g := gridOf(wr)
	w("%s: `%s`\n\n", headScaling, wr.Workload)
	w("kvserver ran on the first n CPUs of its set for each count n (its GOMAXPROCS, and so its default -workers, n), the loader on CPUs of its own throughout (%s). "+
		"Saturation: median ± half the spread over %s, with its ratio to direct's on as many CPUs; server CPU/request: kvserver's CPU over the validating run ÷ its requests (median over the searches). "+
		"\"≥ X, loader-bound\" is a lower bound: the loader ran out before kvserver did.\n\n", placementText(c.Env), searchesText(c.Options.Repeat))
	writeCountsTable(b, g, "saturation req/s", func(v, base *VariantResult) (string, string, bool) {
		cpu := "-"
		if d := satCPUPerRequest(v); d > 0 {
			cpu = cpuMicros(d)
			if bd := satCPUPerRequest(base); bd > 0 {
				cpu += ratio(float64(d), float64(bd))
			}
		}
		return satCell(v, baseSatOf(base)), cpu, true
	})
	if !slices.ContainsFunc(wr.Variants, func(v *VariantResult) bool { return v.Closed != nil }) {
		return
	}
	w("%s: `%s`\n\n", headClosed, wr.Workload)
	w("Each connection sends its next request as soon as the last is answered (%d rounds; connections by Little's law at the variant's saturation, at least %d): req/s median ± half the spread over the rounds; kvserver's CPU per request, median over the rounds, with its ratio to direct's on as many CPUs (issue 20 asks -exec handler to stay within 5 %% of direct).\n\n",
		c.Options.StepTiming().ClosedRounds, minConns)
	writeCountsTable(b, g, "req/s", func(v, base *VariantResult) (string, string, bool) {
		if v.Closed == nil || len(v.Closed.Rounds) == 0 {
			return "", "", false
		}
		rates := v.Closed.Rates()
		rate := thousands(median(rates)) + " ± " + thousands(spread(rates)/2)
		if v.Closed.LoaderBound() {
			rate = "≥ " + rate + ", loader-bound"
		}
		d := v.Closed.CPUPerRequest()
		return rate, cpuMicros(d) + ratio(float64(d), float64(closedCPUPerRequest(base))), true
	})
}

// scalingLines are the scaling charts' lines: per variant, the median
// saturation against kvserver's CPUs (loader-bound points left out: they
// are lower bounds, not the curve), and CPU per request (the closed
// loop's, else the validating runs').
func scalingLines(wr *WorkloadResult) (sat, cpu []chart.XYLine) {
	g := gridOf(wr)
	for _, row := range g.rows {
		s, c := chart.XYLine{Name: row}, chart.XYLine{Name: row}
		for _, n := range g.counts {
			v := g.at[row][n]
			if v == nil {
				continue
			}
			if rates := v.SatRates(); len(rates) > 0 && !v.LoaderBound() && median(rates) > 0 {
				s.X, s.Y = append(s.X, float64(n)), append(s.Y, median(rates))
			}
			d := closedCPUPerRequest(v)
			if d <= 0 {
				d = satCPUPerRequest(v)
			}
			if d > 0 {
				c.X, c.Y = append(c.X, float64(n)), append(c.Y, float64(d)/float64(time.Microsecond))
			}
		}
		if len(s.X) > 0 {
			sat = append(sat, s)
		}
		if len(c.X) > 0 {
			cpu = append(cpu, c)
		}
	}
	return sat, cpu
}

// scalingFindings: which variants saturate below direct beyond the
// spread at some count and by how much at the largest; how far each
// scales from 1 CPU; and the closed loop's CPU per request against
// direct's at each count, with issue 20's target for -exec handler.
func scalingFindings(wr *WorkloadResult) []string {
	g := gridOf(wr)
	if len(g.counts) == 0 {
		return nil
	}
	var out []string
	largest := g.counts[len(g.counts)-1]
	var below, tied, lower []string
	for _, row := range g.rows {
		if row == baselinePool {
			continue
		}
		var at []string
		compared := false
		for _, n := range g.counts {
			v, base := g.at[row][n], g.base(n)
			if v == nil || base == nil || len(v.SatRates()) == 0 || len(base.SatRates()) == 0 {
				continue
			}
			if v.LoaderBound() || base.LoaderBound() {
				if v.LoaderBound() {
					lower = append(lower, fmt.Sprintf("%s at %s (≥ %s)", row, cpusText(n, "CPU"), thousands(median(v.SatRates()))))
				}
				continue
			}
			compared = true
			pair, err := verdict.FindLead(map[string][]float64{row: v.SatRates(), baselinePool: base.SatRates()}, true)
			if err == nil && pair.Clear && pair.Best == baselinePool {
				at = append(at, fmt.Sprint(n))
			}
		}
		switch {
		case len(at) > 0:
			text := fmt.Sprintf("%s (at %s CPUs", row, strings.Join(at, ", "))
			if v, base := g.at[row][largest], g.base(largest); v != nil && base != nil && !v.LoaderBound() && !base.LoaderBound() && median(base.SatRates()) > 0 {
				text += fmt.Sprintf("; at %s %.2f× direct's %s req/s", cpusText(largest, "CPU"), median(v.SatRates())/median(base.SatRates()), thousands(median(base.SatRates())))
			}
			below = append(below, text+")")
		case compared:
			tied = append(tied, row)
		}
	}
	switch {
	case len(below) > 0:
		out = append(out, fmt.Sprintf("`%s` scaling: **saturates below direct beyond the spread**: %s; not distinguishable from direct at any count (ranges overlap, or one run): %s.",
			wr.Workload, strings.Join(below, "; "), orNone(tied)))
	case len(tied) > 0:
		out = append(out, fmt.Sprintf("`%s` scaling: no variant saturated below direct beyond the spread at any count of %s (ranges overlap, or one run each: -repeat 3 gives a spread): %s.",
			wr.Workload, countsText(g.counts), strings.Join(tied, ", ")))
	}
	if len(lower) > 0 {
		out = append(out, fmt.Sprintf("`%s` scaling: only lower bounds, not ranked (loader-bound searches): %s; give the loader more CPUs (-loader-cpus) or more hosts (`loadtest attack -shard K/N -start-at`, then `loadtest merge`).",
			wr.Workload, strings.Join(lower, ", ")))
	}
	if f := efficiencyFinding(wr.Workload, g); f != "" {
		out = append(out, f)
	}
	out = append(out, closedCPUFindings(wr.Workload, g)...)
	return out
}

// efficiencyFinding: each variant's saturation at the largest count as a
// share of linear scaling from its smallest (1 CPU).
func efficiencyFinding(wl string, g scalingGrid) string {
	if len(g.counts) < 2 {
		return ""
	}
	lo, hi := g.counts[0], g.counts[len(g.counts)-1]
	var parts []string
	for _, row := range g.rows {
		a, z := g.at[row][lo], g.at[row][hi]
		if a == nil || z == nil || a.LoaderBound() || z.LoaderBound() || median(a.SatRates()) <= 0 || len(z.SatRates()) == 0 {
			continue
		}
		eff := median(z.SatRates()) / (median(a.SatRates()) * float64(hi) / float64(lo))
		parts = append(parts, fmt.Sprintf("%s %.2f", row, eff))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("`%s` scaling from %s to %s, saturation as a share of linear scaling from the %s figure (1.00: linear): %s.",
		wl, cpusText(lo, "CPU"), cpusText(hi, "CPU"), cpusText(lo, "CPU"), strings.Join(parts, ", "))
}

// handlerTolerance is issue 20's bound on -exec handler's CPU per
// request: within 5 % of direct's at every CPU count.
const handlerTolerance = 0.05

// runsInHandler tells whether v's jobs run in their handlers (-exec
// handler): as its server reported, else as its flags say.
func runsInHandler(v *VariantResult) bool {
	if e, ok := v.Config["exec"]; ok {
		return e == "handler"
	}
	return v.Variant.Exec == "" || v.Variant.Exec == "handler"
}

// closedCPUFindings: per count, each variant's closed-loop CPU per
// request as a ratio to direct's, and whether every -exec handler
// variant stayed within handlerTolerance of direct at every count: at
// most 1.05× (costing less than direct is no miss).
func closedCPUFindings(wl string, g scalingGrid) []string {
	var perCount []string
	type miss struct {
		ratio float64
		n     int
	}
	worst := map[string]miss{}
	var handlers []string
	for _, n := range g.counts {
		bd := closedCPUPerRequest(g.base(n))
		if bd <= 0 {
			continue
		}
		var parts []string
		for _, row := range g.rows {
			v := g.at[row][n]
			d := closedCPUPerRequest(v)
			if row == baselinePool || d <= 0 {
				continue
			}
			x := float64(d) / float64(bd)
			parts = append(parts, fmt.Sprintf("%s %.2f×", row, x))
			if runsInHandler(v) {
				if !slices.Contains(handlers, row) {
					handlers = append(handlers, row)
				}
				if m, ok := worst[row]; !ok || x > m.ratio {
					worst[row] = miss{x, n}
				}
			}
		}
		if len(parts) > 0 {
			perCount = append(perCount, fmt.Sprintf("%s (direct %s): %s", cpusText(n, "CPU"), cpuMicros(bd), strings.Join(parts, ", ")))
		}
	}
	if len(perCount) == 0 {
		return nil
	}
	out := []string{fmt.Sprintf("`%s` closed loop, kvserver's CPU per request against direct's on as many CPUs: %s.", wl, strings.Join(perCount, "; "))}
	if len(handlers) == 0 {
		return out
	}
	var met, missed []string
	for _, row := range handlers {
		m := worst[row]
		if m.ratio <= 1+handlerTolerance {
			met = append(met, fmt.Sprintf("%s (at most %.2f×)", row, m.ratio))
		} else {
			missed = append(missed, fmt.Sprintf("%s (%.2f× at %s)", row, m.ratio, cpusText(m.n, "CPU")))
		}
	}
	verdictText := "**met** by every one"
	if len(missed) > 0 {
		verdictText = fmt.Sprintf("**missed** by %s; met by %s", strings.Join(missed, ", "), orNone(met))
	} else {
		verdictText += ": " + strings.Join(met, ", ")
	}
	out = append(out, fmt.Sprintf("`%s` issue 20's target, -exec handler within %.0f %% of direct's CPU per request at every count (%s): %s.",
		wl, 100*handlerTolerance, countsText(g.counts), verdictText))
	return out
}

// writeCountsTable writes g's variants (rows) by CPU count, two columns
// per count: what, and kvserver's CPU per request. cell gives a variant's
// two cells at a count, base being direct's there; a variant not measured
// there (absent, or cell's false) gets dashes.
func writeCountsTable(b *bytes.Buffer, g scalingGrid, what string, cell func(v, base *VariantResult) (val, cpu string, ok bool)) {
	head, rule := "| variant |", "|---|"
	for _, n := range g.counts {
		head += fmt.Sprintf(" %s: %s | %s: server CPU/request |", cpusText(n, "CPU"), what, cpusText(n, "CPU"))
		rule += "---|---|"
	}
	fmt.Fprintf(b, "%s\n%s\n", head, rule)
	for _, row := range g.rows {
		line := "| " + row + " |"
		for _, n := range g.counts {
			if v := g.at[row][n]; v != nil {
				if val, cpu, ok := cell(v, g.base(n)); ok {
					line += fmt.Sprintf(" %s | %s |", val, cpu)
					continue
				}
			}
			line += " - | - |"
		}
		fmt.Fprintf(b, "%s\n", line)
	}
	b.WriteString("\n")
}
