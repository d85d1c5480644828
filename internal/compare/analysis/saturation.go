package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/pprofdiff"
	ratios "github.com/kvpool/kvpool/internal/ratio"
)

// findings states what c's own numbers support, in the report's order;
// where they are missing or do not decide, nothing is claimed.
func findings(c *result.Comparison, a *Analysis) []Finding {
	var out []Finding
	for i, w := range a.Workloads {
		if w.Grid != nil {
			out = append(out, unvalidatedFindings(w)...)
			out = append(out, scalingFindings(w)...)
		} else {
			out = append(out, saturationFindings(w)...)
		}
		out = append(out, crossCheckFindings(w)...)
		out = append(out, pairedFindings(w)...)
		out = append(out, fixedBehindFindings(w)...)
		out = append(out, fixedErrorFindings(c, w)...)
		out = append(out, overloadFindings(c, c.Workloads[i], w)...)
	}
	for _, w := range a.Workloads {
		out = append(out, concurrencyFindings(w)...)
	}
	return append(out, profileFindings(c, a)...)
}

// named are those of fs that name a variant: a finding of none is not
// made.
func named(fs ...Finding) []Finding {
	return slices.DeleteFunc(fs, func(f Finding) bool { return len(f.Variants) == 0 })
}

// pairedSat is b's saturation over a's, paired by repeat (ratio.Paired):
// the searches run interleaved, so what drifts between repeats cancels
// inside each pair's ratio. A search that did not hold its validation
// drops its pair.
func pairedSat(a, b *Variant) ratios.Interval {
	n := min(len(a.r.Sat), len(b.r.Sat))
	as, bs := make([]float64, n), make([]float64, n)
	for i := range n {
		as[i], bs[i] = a.r.Sat[i].Rate, b.r.Sat[i].Rate
	}
	iv, _ := ratios.Paired(as, bs) // of one length: cannot fail
	return iv
}

func saturationVerdict(iv ratios.Interval) Verdict {
	if v := pairedVerdict(iv); v != NoDifference {
		return v
	}
	return Tied
}

// leadNote says in words what the paired ratio of the runner-up's
// saturation to the best's (iv) supports.
func leadNote(best, second string, iv ratios.Interval) string {
	if iv.N == 0 {
		return fmt.Sprintf("%s's and %s's searches held in no repeat together, so no pair compares them", second, best)
	}
	s := fmt.Sprintf("%s's saturation against %s's, paired by repeat: %s", second, best, iv)
	if iv.Differs() && iv.Lo > 1 {
		s += ": higher in its pairs, though its median is not"
	}
	return s
}

// saturationFindings ranks the variants' saturations, and each against
// direct's, by their ratios paired by repeat, naming a difference only
// where the 95 % interval excludes 1; a loader-bound saturation, only a
// lower bound, is never ranked.
func saturationFindings(w *Workload) []Finding {
	var ranked []*Variant // those with a saturation to rank
	capped := Finding{Kind: SearchCapped, Workload: w.Name, Verdict: NotRanked}
	lower := Finding{Kind: SaturationLowerBound, Workload: w.Name, Verdict: NotRanked}
	for _, x := range w.Variants {
		s := x.Sat
		switch {
		case s == nil:
			continue
		case s.HitMax:
			capped.Variants = append(capped.Variants, x.Name)
		}
		switch {
		case !s.Measured():
			continue // unvalidatedFindings names it
		case s.LowerBound:
			lower.add(x.Name, x.satFigure())
			if s.LoaderCPUs > 0 {
				lower.Figures = append(lower.Figures, Figure{Of: x.Name, Name: LoaderCPUs, Value: float64(s.LoaderCPUs)})
			}
		default:
			ranked = append(ranked, x)
		}
	}
	if len(capped.Variants) > 0 {
		// A search that passed its highest rate measured a floor, not a
		// saturation: no order can be claimed.
		return []Finding{capped}
	}
	out := append(unvalidatedFindings(w), named(lower)...)
	if len(ranked) < 2 {
		return out
	}
	// The medians pick the best and the runner-up (equal medians by
	// name); only their paired ratio can make the lead clear.
	byMedian := slices.SortedFunc(slices.Values(ranked), func(a, b *Variant) int {
		return cmp.Or(cmp.Compare(b.Sat.Rate.Median, a.Sat.Rate.Median), strings.Compare(a.Name, b.Name))
	})
	best, second := byMedian[0], byMedian[1]
	iv := pairedSat(best, second)
	lead := Finding{Kind: SaturationLead, Workload: w.Name, Verdict: Tie, Variants: []string{best.Name, second.Name}, Note: leadNote(best.Name, second.Name, iv),
		Figures: []Figure{best.satFigure(), second.satFigure(), intervalFigure(second.Name, SatRatio, iv)}}
	if iv.Differs() && iv.Hi < 1 {
		lead.Verdict = Clear
	}
	out = append(out, lead)
	// Against direct: is any pool above or below the baseline beyond its
	// paired ratio's interval?
	base := w.Base
	if !slices.Contains(ranked, base) {
		return out
	}
	vs := byVerdict(SaturationVsDirect, w.Name, Above, Below, Tied)
	for _, x := range ranked {
		if x != base {
			iv := pairedSat(base, x)
			vs.add(saturationVerdict(iv), x.Name, x.satFigure(), intervalFigure(x.Name, SatRatio, iv))
		}
	}
	return append(out, named(vs...)...)
}

func unvalidatedFindings(w *Workload) []Finding {
	f := Finding{Kind: SaturationUnvalidated, Workload: w.Name, Verdict: NotRanked}
	for _, x := range w.Variants {
		if s := x.Sat; s != nil && !s.Measured() {
			iv := s.Bracket
			f.add(x.Name, Figure{Of: x.Name, Name: Bracket, Value: iv.Lo, Interval: &iv})
		}
	}
	return named(f)
}

// crossCheckFindings compares direct's open-loop saturation with its
// closed loop on the same CPUs: within the closed loop's spread, or how
// far off; a loader-bound side is named as a lower bound instead.
func crossCheckFindings(w *Workload) []Finding {
	var out []Finding
	for _, av := range w.Variants {
		v := av.r
		if !v.Variant.IsBaseline() || av.Closed == nil || !av.Sat.Measured() {
			continue
		}
		sat, cr := av.Sat.Rate.Median, av.Closed
		iv := cr.Rate.Interval
		f := Finding{Kind: CrossCheck, Workload: w.Name, Variants: []string{v.Name}, Figures: []Figure{
			{Of: v.Name, Name: Saturation, Value: sat},
			{Of: v.Name, Name: ClosedRate, Value: cr.Rate.Median, Interval: &iv},
			{Of: v.Name, Name: Conns, Value: float64(cr.Conns)},
		}}
		if av.Sat.CPUPerRequest > 0 && cr.CPUPerRequest > 0 && av.Sat.ServerShare > 0 && cr.Server.Share > 0 {
			busy, cost := av.Sat.ServerShare/cr.Server.Share, float64(cr.CPUPerRequest)/float64(av.Sat.CPUPerRequest)
			open := Figure{Of: v.Name, Name: OpenOverClosed, Value: sat / cr.Rate.Median, Verdict: CostMost}
			if busy <= cost {
				open.Verdict = IdleMost
			}
			f.Figures = append(f.Figures,
				Figure{Of: v.Name, Name: CPUPerRequest, Value: float64(av.Sat.CPUPerRequest)},
				Figure{Of: v.Name, Name: ClosedCPUPerRequest, Value: float64(cr.CPUPerRequest)},
				Figure{Of: v.Name, Name: ServerBusy, Value: 100 * av.Sat.ServerShare},
				Figure{Of: v.Name, Name: ClosedServerBusy, Value: 100 * cr.Server.Share},
				Figure{Of: v.Name, Name: UtilisationRatio, Value: busy},
				Figure{Of: v.Name, Name: CostRatio, Value: cost},
				open, Figure{Of: v.Name, Name: Unexplained, Value: open.Value / (busy * cost)})
		}
		switch {
		case av.Sat.LowerBound:
			f.Verdict = SatLowerBound
		case cr.LoaderBound:
			f.Verdict, f.Note = ClosedLowerBound, cr.Why
		case sat >= iv.Lo && sat <= iv.Hi:
			f.Verdict = Within
		case sat < iv.Lo:
			f.Verdict = Below
			f.Figures = append(f.Figures, Figure{Of: v.Name, Name: Difference, Value: 100 * (1 - sat/cr.Rate.Median)})
		default:
			f.Verdict = Above
			f.Figures = append(f.Figures, Figure{Of: v.Name, Name: Difference, Value: 100 * (sat/cr.Rate.Median - 1)})
		}
		out = append(out, f)
	}
	return out
}

func fixedBehindFindings(w *Workload) []Finding {
	f := Finding{Kind: FixedBehind, Workload: w.Name, Verdict: NotComparable}
	for _, x := range w.Variants {
		if fx := x.r.Fixed; x.Fixed != nil && !x.Fixed.KeptUp {
			f.add(x.Name, Figure{Of: x.Name, Name: AchievedShare, Value: 100 * ratio(fx.Achieved, fx.Asked), Text: x.Fixed.Behind})
		}
	}
	return named(f)
}

// fixedErrorFindings names the variants whose fixed-rate step failed
// more than the searches' error limit (a small -cap answering 503 below
// saturation): their percentiles include those quick answers, so a lower
// p99 there is not a better-served request.
func fixedErrorFindings(c *result.Comparison, w *Workload) []Finding {
	f := Finding{Kind: FixedErrors, Workload: w.Name, Verdict: NotComparable}
	for _, x := range w.Variants {
		if fx := x.r.Fixed; fx != nil && fx.ErrorRate > c.Criteria.MaxErrorRate {
			f.add(x.Name, Figure{Of: x.Name, Name: ErrorRate, Value: fx.ErrorRate})
		}
	}
	return named(f)
}

// concurrencyBound is what v can serve at most when every request holds
// one of its Workers for at least the store's IODelay: Workers/IODelay
// req/s. It is 0 where v has no fixed worker count or no delay, and
// under an adaptive -limit, which moves the bound.
func concurrencyBound(v *result.VariantResult) float64 {
	if v.Variant.Workers <= 0 || v.Variant.IODelay <= 0 || v.Variant.Limit != "" {
		return 0
	}
	return float64(v.Variant.Workers) / v.Variant.IODelay.Seconds()
}

// boundByWorkers tells whether x's saturation is explained by its
// concurrency bound rather than by CPU: the bound lies well below
// baseSat, what direct reached (so CPU did not stop x first), and x got
// at least half of it.
func boundByWorkers(x *Variant, baseSat float64) bool {
	bound := concurrencyBound(x.r)
	if bound == 0 || baseSat == 0 || x.ranked() == 0 {
		return false
	}
	return bound < 0.9*baseSat && x.ranked() >= 0.5*bound
}

func concurrencyFindings(w *Workload) []Finding {
	base := w.Base
	direct := base.ranked() // a lower bound says nothing of where CPU would stop
	if direct == 0 {
		return nil
	}
	var out []Finding
	for _, x := range w.Variants {
		if x == base || !boundByWorkers(x, direct) {
			continue
		}
		v, bound, sat := x.r, concurrencyBound(x.r), x.ranked()
		out = append(out, Finding{Kind: ConcurrencyBound, Workload: w.Name, Verdict: Bound, Variants: []string{v.Name}, Figures: []Figure{
			{Of: v.Name, Name: Saturation, Value: sat},
			{Of: v.Name, Name: ConcurrencyLimit, Value: bound},
			{Of: v.Name, Name: Workers, Value: float64(v.Variant.Workers)},
			{Of: v.Name, Name: IODelay, Value: float64(v.Variant.IODelay)},
			{Of: v.Name, Name: ShareOfBound, Value: 100 * sat / bound},
			{Of: v.Name, Name: BelowDirect, Value: 100 * (1 - sat/direct)},
			{Name: DirectSaturation, Value: direct},
		}})
	}
	return out
}

// profileFindings: for each pool of the profiled workload that saturates
// below direct (its ratio paired by repeat has its 95 % interval below
// 1), and not because its workers were all waiting on the store (see
// concurrencyFindings), the function its CPU diff grows most.
func profileFindings(c *result.Comparison, a *Analysis) []Finding {
	if len(c.Profiles) == 0 {
		return nil
	}
	w := byName(a.Workloads, c.ProfileWorkload, func(w *Workload) string { return w.Name })
	if w == nil || w.Base.ranked() == 0 {
		return nil
	}
	base := w.Base
	var out []Finding
	for _, x := range w.Variants {
		v := x.r
		if x == base || x.ranked() == 0 || boundByWorkers(x, base.ranked()) {
			continue // a pool bound by its workers lost nothing to CPU: its profile explains nothing
		}
		iv := pairedSat(base, x)
		if saturationVerdict(iv) != Below {
			continue
		}
		ps := byName(c.Profiles, v.Name, func(p *result.ProfileSet) string { return p.Variant })
		if ps == nil {
			continue
		}
		row, ok := pprofdiff.LargestIncrease(pprofdiff.ParseTop(ps.Diffs["cpu"]))
		if !ok {
			continue
		}
		out = append(out, Finding{Kind: ProfileGrowth, Workload: w.Name, Verdict: Below, Variants: []string{v.Name}, Figures: []Figure{
			{Of: v.Name, Name: Loss, Value: 100 * (1 - iv.Median)},
			{Of: v.Name, Name: TopFunction, Value: row.FlatPct, Text: row.Function},
			{Of: v.Name, Name: TopFlat, Text: row.Flat},
		}})
	}
	return out
}
