package render

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/result"
	ratios "github.com/kvpool/kvpool/internal/ratio"
)

// HeadPaired heads a workload's table of paired closed-loop rounds.
const HeadPaired = "### Paired with direct"

// writePairedTable is wr's variants' closed-loop ratios to direct from
// paired rounds; where the preset compares the variants and none ran, a
// line says so.
func writePairedTable(b *page, c *result.Comparison, wr *result.WorkloadResult, aw *analysis.Workload) {
	rows := slices.DeleteFunc(slices.Clone(aw.Variants), func(v *analysis.Variant) bool { return v.Paired == nil })
	if len(rows) == 0 {
		if c.Plan.Paired && len(wr.Variants) > 1 {
			b.printf("No closed-loop rounds paired with direct's ran (`-closed-pairs 0`, or none recorded): the ratios to direct above are of single measurements, with no interval.\n\n")
		}
		return
	}
	b.printf("%s: `%s`\n\n", HeadPaired, wr.Workload)
	b.printf("Each variant's kvserver and direct's ran side by side, each on a fresh copy of the store and on the same CPUs, and closed-loop rounds of %v alternated between them (direct, the variant, direct, the variant, …), over the same connections, the server not under load idle meanwhile. Each pair of rounds, taken one right after the other, gives one ratio, and whatever drifts on the machine between pairs cancels inside it. A ratio is the median of the pairs' ratios with its 95 %% interval (order statistics, as benchstat's: nothing assumed of their distribution; %d pairs are the fewest that bound one). \"~\" marks an interval that includes 1: **no difference measurable here**, whatever the median. Throughput counts answers without error.\n\n",
		c.Options.StepTiming().PairRoundLength(), ratios.MinPairs)
	b.table("variant", "pairs", "connections", "direct req/s", "variant req/s", "throughput ÷ direct", "server CPU/request", "÷ direct", "loader-bound")
	for _, v := range rows {
		p := v.Paired
		b.row(v.Name, p.Pairs, p.Conns, thousands(p.BaseRate), thousands(p.Rate), p.Throughput, cpuMicros(p.CPUPerRequest), p.CPU, yesNo(p.LoaderBound, "**yes**: throughput not ranked"))
	}
	if w := aw.PairedWidths; w.N > 0 {
		b.printf("\nThe intervals came out ±%s to ±%s of their medians (half their width, the larger side): a difference smaller than that is not measurable with these pairs on this machine; more pairs (`-closed-pairs`) narrow them, short ones (`-pair-round`) at no more load.\n", pct(w.Lo), pct(w.Hi))
	} else {
		b.printf("\nNo interval is bounded: fewer than %d pairs ran (`-closed-pairs`), so no difference is measurable.\n", ratios.MinPairs)
	}
	b.printf("\n")
}

// pct is a share as a percentage to two significant digits: "3.4 %".
func pct(x float64) string {
	if x*100 >= 10 {
		return fmt.Sprintf("%.0f %%", 100*x)
	}
	return fmt.Sprintf("%.1f %%", 100*x)
}

func pairedSentence(f analysis.Finding) (string, bool) {
	var what string
	var name analysis.Measure
	switch f.Kind {
	case analysis.PairedThroughput:
		what, name = "closed-loop throughput", analysis.ThroughputRatio
	case analysis.PairedCPU:
		what, name = "kvserver CPU per request", analysis.CPURatio
	default:
		return "", false
	}
	list := ratioList(f, name, "")
	switch f.Verdict {
	case analysis.Above, analysis.Below:
		return fmt.Sprintf("`%s`, paired with direct: **%s %s** beyond the 95 %% interval: %s.", f.Workload, what, beyondDirect(f.Verdict), list), true
	case analysis.NotRanked:
		return fmt.Sprintf("`%s`, paired with direct: %s not ranked, a round was loader-bound: %s.", f.Workload, what, list), true
	}
	return fmt.Sprintf("`%s`, paired with direct: %s, **no difference measurable here** (the 95 %% interval includes 1): %s.", f.Workload, what, list), true
}

func figureRatio(x analysis.Figure) ratios.Interval {
	if x.Interval == nil {
		return ratios.Interval{Median: x.Value, Lo: math.Inf(-1), Hi: math.Inf(1)}
	}
	return ratios.Interval{Median: x.Value, N: x.Interval.N, Lo: x.Interval.Lo, Hi: x.Interval.Hi}
}

// ratioList is f's variants each with its ratio figure name: "fifo
// 0.93× (0.90–0.96), lifo ~ 1.01× (0.97–1.04)"; a variant with no pair
// (no ratio) is followed by none where it is not "".
func ratioList(f analysis.Finding, name analysis.Measure, none string) string {
	return strings.Join(each(f.Variants, func(v string) string {
		if x, _ := f.Figure(v, name); none == "" || x.Verdict != analysis.NoPairs {
			return fmt.Sprintf("%s %s", v, figureRatio(x))
		}
		return v + " " + none
	}), ", ")
}

// satVsDirectSentence words a SaturationVsDirect finding: each variant's
// saturation over direct's, paired by repeat, with its 95 % interval.
func satVsDirectSentence(f analysis.Finding) string {
	list := ratioList(f, analysis.SatRatio, "(no repeat held on both sides)")
	head := fmt.Sprintf("`%s`, saturation paired with direct's by repeat", f.Workload)
	if f.Verdict == analysis.Above || f.Verdict == analysis.Below {
		return fmt.Sprintf("%s: **%s** beyond the 95 %% interval: %s.", head, beyondDirect(f.Verdict), list)
	}
	finite, unbounded := false, false
	for _, x := range f.All(analysis.SatRatio) {
		if x.Verdict == analysis.NoPairs || x.Verdict == analysis.Unbounded {
			unbounded = true
		} else {
			finite = true
		}
	}
	why := "the 95 % interval includes 1"
	switch {
	case finite && unbounded:
		why = fmt.Sprintf("the 95 %% interval includes 1, or fewer than %d paired repeats give none", ratios.MinPairs)
	case unbounded:
		why = fmt.Sprintf("fewer than %d paired repeats give no 95 %% interval", ratios.MinPairs)
	}
	return fmt.Sprintf("%s: **no difference measurable here** (%s). The ratios: %s.", head, why, list)
}

// beyondDirect words a ratio's verdict against direct: "higher than
// direct's" (Above) or "lower than direct's".
func beyondDirect(v analysis.Verdict) string {
	if v == analysis.Above {
		return "higher than direct's"
	}
	return "lower than direct's"
}
