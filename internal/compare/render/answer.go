package render

import (
	"fmt"
	"strings"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/result"
	ratios "github.com/kvpool/kvpool/internal/ratio"
)

var questions = map[string]string{
	"queues":       "Does a queueing pool serve more requests, or spend less CPU on each, than running every request in its handler (`direct`)?",
	"capacity":     "How does a queue's capacity (`-cap`) move each pool's saturation and its latency at a fixed rate?",
	"policies":     "Under overload, which overflow policy, queue time-out and limit keep the goodput up and the served p99 low?",
	"slow-backend": "Behind a slow store, how many workers does each pool need, and what does its queue do to the latency?",
	"overload":     "Asked several times direct's saturation, which pools keep serving, which shed, and which fail?",
	"scaling":      "As kvserver gets more CPUs, does each pool keep up with `direct`, and what does a request cost it?",
	"metastable":   "After a spike, with clients that time out and retry, which admission recovers and which collapses?",
	"writes":       "While a flood of writes outruns Pebble's flushes and compactions, does kvserver's admission still serve the reads the store could answer?",
}

// ratioMeasures are the findings whose figures are ratios to direct with
// an interval: what the opening table shows.
var ratioMeasures = []struct {
	kind analysis.Kind
	name analysis.Measure
	what string
}{
	{analysis.SaturationVsDirect, analysis.SatRatio, "saturation"},
	{analysis.ScalingVsDirect, analysis.SatRatio, "saturation"},
	{analysis.PairedThroughput, analysis.ThroughputRatio, "closed-loop throughput, paired"},
	{analysis.PairedCPU, analysis.CPURatio, "CPU per request, paired"},
}

// writeAnswer is the report's opening: the question, a table of every
// ratio to direct with its 95 % interval and verdict, and the variants
// those intervals could not tell from direct.
func writeAnswer(b *page, preset string, a *analysis.Analysis) {
	b.printf("%s\n\n", HeadAnswer)
	if q, ok := questions[preset]; ok {
		b.printf("**The question.** %s\n\n", q)
	}
	var rows, apart []string
	for _, f := range a.Findings {
		if f.Kind == analysis.SaturationLead && f.Verdict == analysis.Tie {
			apart = append(apart, fmt.Sprintf("`%s` saturation: no pool leads clearly (%s)", f.Workload, strings.Join(f.Variants, ", ")))
		}
		for _, m := range ratioMeasures {
			if f.Kind != m.kind {
				continue
			}
			var same []string
			for _, x := range f.All(m.name) {
				what := m.what
				if x.CPUs > 0 {
					what += " on " + result.Count(x.CPUs, "CPU")
				}
				rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s |", f.Workload, what, x.Of, figureRatio(x), ratioVerdict(x.Verdict, f.Verdict == analysis.NotRanked)))
				if x.Verdict == analysis.NoDifference || x.Verdict == analysis.Unbounded {
					same = append(same, x.Of)
				}
			}
			if len(same) > 0 {
				apart = append(apart, fmt.Sprintf("`%s` %s: %s", f.Workload, m.what, strings.Join(same, ", ")))
			}
		}
	}
	if len(rows) == 0 {
		b.printf("This preset measures no ratio to direct with an interval: its findings, below, are the answer.\n\n")
	} else {
		b.printf("Each variant against `direct` in this run: the median ratio with its 95 %% interval (\"~\": the interval includes 1).\n\n")
		b.table("workload", "measure", "variant", "÷ direct (95 % interval)", "verdict")
		b.printf("%s\n\n", strings.Join(rows, "\n"))
	}
	if len(apart) > 0 {
		b.printf("Not told apart from direct (or from each other) by this run:\n\n- %s\n\n", strings.Join(apart, "\n- "))
	}
}

// ratioVerdict words a ratio figure's verdict in the answer's table.
func ratioVerdict(v analysis.Verdict, loaderBound bool) string {
	switch {
	case loaderBound:
		return "not ranked: loader-bound"
	case v == analysis.NoPairs:
		return "no repeat held on both sides"
	case v == analysis.Unbounded:
		return fmt.Sprintf("no interval: fewer than %d pairs", ratios.MinPairs)
	case v == analysis.NoDifference:
		return "no difference measurable"
	case v == analysis.Above:
		return "**higher**"
	}
	return "**lower**"
}
