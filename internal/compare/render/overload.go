package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/analysis"
)

func overloadSentence(f analysis.Finding) (string, bool) {
	wl := f.Workload
	slo := time.Duration(f.Value("", analysis.SLO))
	switch f.Kind {
	case analysis.OverloadLowerBound:
		return fmt.Sprintf("`%s` under overload: direct's saturation, which set the asked rate, is only a lower bound (its search was loader-bound): each step asked %s, so it may have overloaded kvserver less than that, or not at all.",
			wl, askedText(f.Value("", analysis.Factor), true)), true
	case analysis.OverloadLoaderBehind:
		behind := each(f.All(analysis.SentShare), func(x analysis.Figure) string { return fmt.Sprintf("%s %.0f %%", x.Of, x.Value) })
		var under []string
		for _, x := range f.All(analysis.ServedP99FromSend) {
			if x.Verdict == analysis.Within {
				under = append(under, fmt.Sprintf("%s (%s)", x.Of, nanos(x.Value)))
			}
		}
		return fmt.Sprintf("`%s` under overload: the loader sent only part of what was planned, so the corrected p99 includes requests waiting in the loader. From the actual send, served p99 within the SLO (%v): %s. Sent of planned:%s",
			wl, slo, orNone(under), nested(behind)), true
	case analysis.OverloadSLO:
		var under, over []string
		for _, x := range f.All(analysis.ServedP99) {
			cell := fmt.Sprintf("%s (%s)", x.Of, nanos(x.Value))
			if x.Verdict == analysis.Within {
				under = append(under, cell)
			} else {
				over = append(over, cell)
			}
		}
		if f.Verdict == analysis.NoneWithin {
			return fmt.Sprintf("`%s` under overload: **no variant kept the corrected p99 of served requests under the SLO** (%v):%s", wl, slo, nested(over)), true
		}
		return fmt.Sprintf("`%s` under overload: **corrected p99 of served within the SLO (%v)**: %s; above it: %s.", wl, slo, strings.Join(under, ", "), orNone(over)), true
	case analysis.OverloadGoodput:
		return goodputSentence(f), true
	case analysis.DefaultsTargets:
		return defaultsSentence(f), true
	case analysis.ShedCost:
		iv := f.All(analysis.ShedCostRatio)
		whole := iv[len(iv)-1].Interval
		out := fmt.Sprintf("`%s` under overload, what a 503 cost kvserver against a served request (derived: the step's CPU less its served requests at a served request's cost, see the table; %d variants that shed): %s× (%s).",
			wl, whole.N, span(whole.Lo, whole.Hi, two), strings.Join(f.Variants, " to "))
		if f.Verdict == analysis.NotDerivable {
			out += " A figure at or below 0 means the overload step's CPU did not even cover its served requests at that cost each: they cost less there (more requests per wake-up), or kvserver got less CPU than its share (CPUs shared with the loader), and no 503 cost can be derived from it; `make bench-http POOLS=\"direct shed\"` measures one directly."
		}
		return out, true
	case analysis.ShedWait:
		parts := each(f.All(analysis.ShedWaitP50), func(x analysis.Figure) string {
			served, _ := f.Figure(x.Of, analysis.ServedWaitP50)
			return fmt.Sprintf("%s %s (served: %s)", x.Of, span(x.Interval.Lo, x.Interval.Hi, nanos), span(served.Interval.Lo, served.Interval.Hi, nanos))
		})
		return fmt.Sprintf("`%s` under overload, which requests were shed: the 503s had waited (p50, from the send, per %s) %s.", wl, f.By, strings.Join(parts, "; ")), true
	case analysis.OverloadFailed, analysis.OverloadException:
		parts := each(f.All(analysis.Reasons), func(x analysis.Figure) string { return fmt.Sprintf("%s (%s)", x.Of, x.Text) })
		what := "failed the degradation checks"
		if f.Kind == analysis.OverloadException {
			what = "the unbounded exception, measured but not judged"
		}
		return fmt.Sprintf("`%s` under overload: %s: %s.", wl, what, strings.Join(parts, "; ")), true
	case analysis.OverloadPassed:
		return fmt.Sprintf("`%s` under overload: every variant stayed alive, answered only 2xx/404/503 or timed out, and had its p99 back to normal within the recovery probes.", wl), true
	}
	return "", false
}

// goodputSentence sets the variants that shed beside those that did not.
func goodputSentence(f analysis.Finding) string {
	names := map[analysis.Verdict][]string{}
	for _, x := range f.All(analysis.Goodput) {
		if x.Of == analysis.GroupKept || x.Of == analysis.GroupShed {
			continue
		}
		names[x.Verdict] = append(names[x.Verdict], x.Of)
	}
	served := func(group string, v analysis.Verdict) string {
		good, _ := f.Figure(group, analysis.Goodput)
		s := fmt.Sprintf("served %s req/s", span(good.Interval.Lo, good.Interval.Hi, thousands))
		if x, ok := f.Figure(group, analysis.GoodputVsDirect); ok {
			s += fmt.Sprintf(" (%s× direct)", span(x.Interval.Lo, x.Interval.Hi, two))
		}
		return s + ": " + strings.Join(names[v], ", ")
	}
	var parts []string
	if len(names[analysis.Kept]) > 0 {
		parts = append(parts, "The variants that shed nothing "+served(analysis.GroupKept, analysis.Kept))
	}
	if len(names[analysis.Shed]) > 0 {
		pct, _ := f.Figure(analysis.GroupShed, analysis.ShedPct)
		parts = append(parts, fmt.Sprintf("Those that shed 503s (%s %% of what they were sent) %s", span(pct.Interval.Lo, pct.Interval.Hi, oneDecimal), served(analysis.GroupShed, analysis.Shed)))
	}
	return fmt.Sprintf("`%s` under overload, goodput (one run each: read differences of a few per cent as noise). %s.", f.Workload, strings.Join(parts, ". "))
}

// defaultsSentence states the pools at kvserver's defaults against their
// targets.
func defaultsSentence(f analysis.Finding) string {
	sat, _ := f.Figure("", analysis.DirectSaturation)
	le := ""
	if sat.Verdict == analysis.LowerBound {
		le = "≤ " // against a lower bound, a ratio is an upper bound
	}
	var parts, under, best []string
	for _, x := range f.All(analysis.GoodputVsSat) { // one a variant, in order
		v, ratio := x.Of, fmt.Sprintf("%s%.2f×", le, x.Value)
		part := v + " " + ratio
		if d, ok := f.Figure(v, analysis.GoodputVsDirect); ok {
			part += fmt.Sprintf(" (%.2f× direct's goodput)", d.Value)
		}
		parts = append(parts, part)
		if x.Verdict == analysis.Missed {
			under = append(under, v+" "+ratio)
		}
		if p, _ := f.Figure(v, analysis.ServedP99FromSend); p.Verdict == analysis.Met {
			best = append(best, fmt.Sprintf("%s (%s, p99 from the send %s)", v, ratio, nanos(p.Value)))
		}
	}
	floorFig, _ := f.Figure("", analysis.Floor)
	lowest := f.All(analysis.Lowest)[0]
	floor := fmt.Sprintf("none below %.1f×: **met** (lowest %s at %s%.2f×)", floorFig.Value, lowest.Of, le, lowest.Value)
	if floorFig.Verdict == analysis.Missed {
		floor = fmt.Sprintf("none below %.1f×: **missed** by %s", floorFig.Value, strings.Join(under, ", "))
	}
	bestFig, _ := f.Figure("", analysis.Best)
	bestText := fmt.Sprintf("**met** by %s", strings.Join(best, ", "))
	if bestFig.Verdict != analysis.Met {
		top := f.All(analysis.Highest)[0]
		topP99, _ := f.Figure(top.Of, analysis.ServedP99FromSend)
		bestText = fmt.Sprintf("**not met** (the highest goodput, %s's %s%.2f×, with p99 from the send %s)", top.Of, le, top.Value, nanos(topP99.Value))
	}
	if d := f.Value("", analysis.DirectServedP99FromSend); d > 0 {
		bestText += fmt.Sprintf("; direct's p99 from the send %s", nanos(d))
	}
	baseText := thousands(sat.Value) + " req/s"
	if sat.Verdict == analysis.LowerBound {
		baseText += ", a lower bound"
	}
	return fmt.Sprintf("`%s` under overload, the pools at kvserver's defaults. Goodput against direct's saturation (%s): %s. The defaults' targets: %s. The best at ≥ %.1f× with served p99 from the send ≤ %s and below direct's: %s.",
		f.Workload, baseText, strings.Join(parts, ", "), floor, bestFig.Value, nanos(f.Value("", analysis.BestP99)), bestText)
}
