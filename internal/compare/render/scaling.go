package render

import (
	"slices"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// writeScaling writes wr's scaling tables: saturation and CPU per
// request by variant and CPU count, then the closed loop's.
func writeScaling(b *page, c *result.Comparison, wr *result.WorkloadResult, aw *analysis.Workload) {
	g := aw.Grid
	b.printf("%s: `%s`\n\n", HeadScaling, wr.Workload)
	b.printf("kvserver ran on the first n CPUs of its set for each count n (its GOMAXPROCS, and so its default -workers, n), the loader on CPUs of its own throughout (%s). "+
		"Saturation: median ± half the spread over %s, with its ratio to direct's on as many CPUs; server CPU/request: kvserver's CPU over the validating run ÷ its requests (median over the searches). "+
		"\"≥ X, loader-bound\" is a lower bound: the loader ran out before kvserver did.\n\n", c.Env.Placement(), count(c.Options.Repeat, "search", "searches"))
	writeCountsTable(b, g, "saturation req/s", func(v *analysis.Variant) (string, string, bool) {
		cpu := "-"
		if s := v.Sat; s != nil && s.CPUPerRequest > 0 {
			cpu = cpuMicros(s.CPUPerRequest) + ratio(s.CPURatio)
		}
		return satCell(v.Sat, true), cpu, true
	})
	if !slices.ContainsFunc(aw.Variants, func(v *analysis.Variant) bool { return v.Closed != nil }) {
		return
	}
	b.printf("%s: `%s`\n\n", HeadClosed, wr.Workload)
	b.printf("Each connection sends its next request as soon as the last is answered (%d rounds; connections by Little's law at the variant's saturation, at least %d). Req/s is the median ± half the spread over the rounds. "+
		"kvserver's CPU per request is the median over the rounds, with its ratio to direct's on as many CPUs (the target for -exec handler is to stay within %.0f %% of direct).\n\n",
		c.Options.StepTiming().ClosedRounds, plan.MinConns, 100*analysis.HandlerTolerance)
	writeCountsTable(b, g, "req/s", func(v *analysis.Variant) (string, string, bool) {
		cr := v.Closed
		if cr == nil {
			return "", "", false
		}
		rate := thousands(cr.Rate.Median) + " ± " + thousands(cr.Rate.HalfSpread())
		if cr.LoaderBound {
			rate = "≥ " + rate + ", loader-bound"
		}
		return rate, cpuMicros(cr.CPUPerRequest) + ratio(cr.CPURatio), true
	})
}

// writeCountsTable writes g's variants (rows) by CPU count, two columns
// per count: what, and kvserver's CPU per request. cell gives a variant's
// two cells at a count; a variant not measured there (absent, or cell's
// false) gets dashes.
func writeCountsTable(b *page, g *analysis.Grid, what string, cell func(v *analysis.Variant) (val, cpu string, ok bool)) {
	heads := []string{"variant"}
	for _, n := range g.Counts {
		heads = append(heads, result.Count(n, "CPU")+": "+what, result.Count(n, "CPU")+": server CPU/request")
	}
	b.table(heads...)
	for _, row := range g.Rows {
		cells := []any{row}
		for _, n := range g.Counts {
			if v := g.At(row, n); v != nil {
				if val, cpu, ok := cell(v); ok {
					cells = append(cells, val, cpu)
					continue
				}
			}
			cells = append(cells, "-", "-")
		}
		b.row(cells...)
	}
	b.WriteString("\n")
}
