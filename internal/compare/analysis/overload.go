package analysis

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/compare/verdict"
)

// The targets for kvserver's default configurations under overload
// (docs/load-lab.md, "Reading a report"): none serves below DefaultsFloor
// × direct's saturation, and the best serves at least DefaultsBest × it
// with the served p99 from the send at most DefaultsP99 and below
// direct's.
const (
	DefaultsFloor = 0.6
	DefaultsBest  = 0.9
	DefaultsP99   = 50 * time.Millisecond
)

// overloadFindings: which variants kept the served p99 within the SLO,
// goodput by whether they shed, the defaults against their targets, what
// a 503 cost, which requests were shed, and the degradation checks.
func overloadFindings(c *result.Comparison, wr *result.WorkloadResult, w *Workload) []Finding {
	wl, slo := wr.Workload, c.Options.SLO
	sloFig := Figure{Name: SLO, Value: float64(slo)}
	within := func(d time.Duration) Verdict {
		if d <= slo {
			return Within
		}
		return Over
	}
	sloF := Finding{Kind: OverloadSLO, Workload: wl, Verdict: NoneWithin, Figures: []Figure{sloFig}}
	behind := Finding{Kind: OverloadLoaderBehind, Workload: wl, Verdict: Behind, Figures: []Figure{sloFig}}
	failed := Finding{Kind: OverloadFailed, Workload: wl, Verdict: Failed}
	excepted := Finding{Kind: OverloadException, Workload: wl, Verdict: Exception}
	for _, v := range wr.Variants {
		o := v.Overload
		if o == nil || o.Served == 0 {
			continue
		}
		p99 := Figure{Of: v.Name, Name: ServedP99, Value: float64(o.ServedP99), Verdict: within(o.ServedP99)}
		sloF.add(v.Name, p99)
		if p99.Verdict == Within {
			sloF.Verdict = SomeWithin
		}
		behind.Figures = append(behind.Figures, Figure{Of: v.Name, Name: ServedP99FromSend, Value: float64(o.ServedP99Uncorrected), Verdict: within(o.ServedP99Uncorrected)})
		if !o.LoaderKeptUp && o.Asked > 0 && o.Planned > 0 {
			behind.add(v.Name, Figure{Of: v.Name, Name: SentShare, Value: 100 * float64(o.Sent) / float64(o.Planned)})
		}
		if why, ok := strings.CutPrefix(o.Verdict, verdict.FailPrefix); ok {
			failed.add(v.Name, Figure{Of: v.Name, Name: Reasons, Text: why})
		} else if why, ok := strings.CutPrefix(o.Verdict, verdict.ExceptionPrefix); ok {
			excepted.add(v.Name, Figure{Of: v.Name, Name: Reasons, Text: why})
		}
	}
	if len(sloF.Variants) == 0 { // no variant's overload step served a request
		return nil
	}
	var out []Finding
	if wr.BaseLowerBound && wr.BaseRate > 0 {
		out = append(out, Finding{Kind: OverloadLowerBound, Workload: wl, Verdict: LowerBound,
			Figures: []Figure{{Name: Factor, Value: c.Plan.OverloadFactor}}})
	}
	// A loader that fell behind makes the corrected p99 measure its
	// backlog as much as the server: say so, and give the p99 from the
	// send beside it.
	out = append(out, named(behind)...)
	out = append(out, sloF)
	out = append(out, goodputFindings(wr)...)
	out = append(out, defaultsFindings(wr)...)
	out = append(out, shedCostFindings(w)...)
	out = append(out, shedWaitFindings(wr)...)
	if checks := named(failed, excepted); len(checks) > 0 {
		return append(out, checks...)
	}
	return append(out, Finding{Kind: OverloadPassed, Workload: wl, Verdict: Passed})
}

// goodputFindings sets the variants that shed 503s under overload beside
// those that shed nothing: each group's goodput range, with its ratio to
// direct's. Each overload step ran once, so no finer order is claimed.
func goodputFindings(wr *result.WorkloadResult) []Finding {
	f := Finding{Kind: OverloadGoodput, Workload: wr.Workload, Verdict: Ranged}
	good, shed := map[string][]float64{}, map[string][]float64{}
	for _, v := range wr.Variants {
		o := v.Overload
		if o == nil || o.Served == 0 {
			continue
		}
		g, verdictOf := GroupKept, Kept
		if o.Shed > 0 {
			g, verdictOf = GroupShed, Shed
		}
		f.add(v.Name, Figure{Of: v.Name, Name: Goodput, Value: o.Goodput, Verdict: verdictOf})
		good[g], shed[g] = append(good[g], o.Goodput), append(shed[g], o.ShedPct)
	}
	if len(f.Variants) < 2 {
		return nil
	}
	var base float64
	if b := wr.Baseline(); b != nil && b.Overload != nil && b.Overload.Served > 0 {
		base = b.Overload.Goodput
	}
	for _, g := range []string{GroupKept, GroupShed} {
		if good[g] == nil {
			continue
		}
		iv := spanOf(good[g])
		f.Figures = append(f.Figures, Figure{Of: g, Name: Goodput, Interval: iv})
		if base > 0 {
			f.Figures = append(f.Figures, Figure{Of: g, Name: GoodputVsDirect, Interval: &Interval{Lo: iv.Lo / base, Hi: iv.Hi / base, N: iv.N}})
		}
		f.Figures = append(f.Figures, Figure{Of: g, Name: ShedPct, Interval: spanOf(shed[g])})
	}
	return []Finding{f}
}

// defaultsFindings states the goodput under overload of the queueing
// pools at kvserver's defaults against direct's saturation and direct's
// own goodput there, and the defaults' targets from the numbers.
func defaultsFindings(wr *result.WorkloadResult) []Finding {
	base := wr.Baseline()
	if base == nil || wr.BaseRate <= 0 {
		return nil
	}
	bo := base.Overload
	var vs []*result.VariantResult
	for _, v := range wr.Variants {
		if v.Variant.AtDefaults() && v.Overload != nil && v.Overload.Served > 0 {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return nil
	}
	f := Finding{Kind: DefaultsTargets, Workload: wr.Workload}
	satFig := Figure{Name: DirectSaturation, Value: wr.BaseRate}
	if wr.BaseLowerBound {
		satFig.Verdict = LowerBound // against a lower bound, a ratio is an upper bound
	}
	f.Figures = append(f.Figures, satFig)
	x := func(v *result.VariantResult) float64 { return v.Overload.Goodput / wr.BaseRate }
	baseP99 := time.Duration(0)
	if bo != nil && bo.Served > 0 {
		baseP99 = bo.ServedP99Uncorrected
		f.Figures = append(f.Figures, Figure{Name: DirectServedP99FromSend, Value: float64(baseP99)})
	}
	floor, best := Met, Missed
	for _, v := range vs {
		o := v.Overload
		f.Variants = append(f.Variants, v.Name)
		ratioFig := Figure{Of: v.Name, Name: GoodputVsSat, Value: x(v), Verdict: Met}
		if x(v) < DefaultsFloor {
			ratioFig.Verdict, floor = Missed, Missed
		}
		f.Figures = append(f.Figures, ratioFig)
		if bo != nil && bo.Served > 0 && bo.Goodput > 0 {
			f.Figures = append(f.Figures, Figure{Of: v.Name, Name: GoodputVsDirect, Value: o.Goodput / bo.Goodput})
		}
		p99 := Figure{Of: v.Name, Name: ServedP99FromSend, Value: float64(o.ServedP99Uncorrected)}
		if x(v) >= DefaultsBest && o.ServedP99Uncorrected <= DefaultsP99 && (baseP99 == 0 || o.ServedP99Uncorrected < baseP99) {
			p99.Verdict, best = Met, Met
		}
		f.Figures = append(f.Figures, p99)
	}
	lowest := slices.MinFunc(vs, func(a, b *result.VariantResult) int { return cmp.Compare(x(a), x(b)) })
	top := slices.MaxFunc(vs, func(a, b *result.VariantResult) int { return cmp.Compare(x(a), x(b)) })
	f.Figures = append(f.Figures,
		Figure{Of: lowest.Name, Name: Lowest, Value: x(lowest)}, Figure{Of: top.Name, Name: Highest, Value: x(top)},
		Figure{Name: Floor, Value: DefaultsFloor, Verdict: floor}, Figure{Name: Best, Value: DefaultsBest, Verdict: best},
		Figure{Name: BestP99, Value: float64(DefaultsP99)})
	f.Verdict = Missed
	if floor == Met && best == Met {
		f.Verdict = Met
	}
	return []Finding{f}
}

func shedCostFindings(w *Workload) []Finding {
	f := Finding{Kind: ShedCost, Workload: w.Name, Verdict: Derived}
	for _, x := range w.Variants {
		if o := x.Overload; o != nil && o.ShedCost {
			f.Figures = append(f.Figures, Figure{Of: x.Name, Name: ShedCostRatio, Value: o.ShedCostRatio})
		}
	}
	n := len(f.Figures)
	if n == 0 {
		return nil
	}
	lo, hi := f.Figures[0], f.Figures[0] // the first of equal lowest, the last of equal highest
	for _, fig := range f.Figures[1:] {
		if fig.Value < lo.Value {
			lo = fig
		}
		if fig.Value >= hi.Value {
			hi = fig
		}
	}
	f.Variants = []string{lo.Of}
	if n > 1 {
		f.Variants = append(f.Variants, hi.Of)
	}
	f.Figures = append(f.Figures, Figure{Name: ShedCostRatio, Interval: &Interval{Lo: lo.Value, Hi: hi.Value, N: n}})
	if lo.Value <= 0 {
		f.Verdict = NotDerivable
	}
	return []Finding{f}
}

// shedWaitFindings says which requests each policy shed under overload:
// how long the shed ones had waited for their 503 (p50, from the send),
// per policy, beside how long the served ones waited. A policy that
// refuses newcomers (reject) sheds requests that waited least; one that
// drops the oldest sheds requests that waited longest.
func shedWaitFindings(wr *result.WorkloadResult) []Finding {
	// Per policy where the policies differ; per variant where they do not
	// (the queues preset: each pool at its default).
	policies := map[string]bool{}
	for _, v := range wr.Variants {
		if o := v.Overload; o != nil && o.Shed > 0 {
			policies[v.Variant.PolicyLabel()] = true
		}
	}
	key, by := func(v *result.VariantResult) string { return v.Variant.PolicyLabel() }, "policy"
	if len(policies) == 1 {
		key, by = func(v *result.VariantResult) string { return v.Name }, "variant"
	}
	shed, served := map[string][]float64{}, map[string][]float64{}
	var order []string
	for _, v := range wr.Variants {
		o := v.Overload
		if o == nil || o.Shed == 0 {
			continue
		}
		k := key(v)
		indexOf(&order, k)
		shed[k], served[k] = append(shed[k], float64(o.ShedWaitP50)), append(served[k], float64(o.ServedWaitP50))
	}
	if len(order) == 0 {
		return nil
	}
	f := Finding{Kind: ShedWait, Workload: wr.Workload, Verdict: Ranged, By: by}
	for _, k := range order {
		f.Figures = append(f.Figures, Figure{Of: k, Name: ShedWaitP50, Interval: spanOf(shed[k])}, Figure{Of: k, Name: ServedWaitP50, Interval: spanOf(served[k])})
	}
	return []Finding{f}
}

// probesStopped tells whether a variant of c took fewer recovery probes
// than the plan's and its last was normal (verdict.Normal): it stopped
// there, as the runner does at the first normal one. A variant that
// took fewer and ended on a slow probe failed one instead.
func probesStopped(c *result.Comparison) bool {
	n := c.Options.StepTiming().RecoverProbes
	for _, wr := range c.Workloads {
		for _, v := range wr.Variants {
			o := v.Overload
			if o == nil || len(o.RecoveryP99) == 0 || len(o.RecoveryP99) >= n {
				continue
			}
			if verdict.Normal(ms(o.BaselineP99), ms(o.RecoveryP99[len(o.RecoveryP99)-1])) {
				return true
			}
		}
	}
	return false
}
