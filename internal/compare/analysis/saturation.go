package analysis

import (
	"fmt"
	"slices"

	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/compare/verdict"
	"github.com/kvpool/kvpool/internal/pprofdiff"
	ratios "github.com/kvpool/kvpool/internal/ratio"
)

// findings states what c's own numbers support, in the report's order;
// where they are missing or do not decide, nothing is claimed.
func findings(c *result.Comparison, a *Analysis) []Finding {
	var out []Finding
	for i, wr := range c.Workloads {
		if w := a.Workloads[i]; w.Grid != nil {
			out = append(out, unvalidatedFindings(wr, w)...)
			out = append(out, scalingFindings(wr, w)...)
		} else {
			out = append(out, saturationFindings(wr, w)...)
		}
		out = append(out, crossCheckFindings(wr, a.Workloads[i])...)
		out = append(out, pairedFindings(wr, a.Workloads[i])...)
		out = append(out, fixedBehindFindings(wr)...)
		out = append(out, fixedErrorFindings(c, wr)...)
		out = append(out, overloadFindings(c, wr, a.Workloads[i])...)
	}
	for i, wr := range c.Workloads {
		out = append(out, concurrencyFindings(wr, a.Workloads[i])...)
	}
	return append(out, profileFindings(c, a)...)
}

// satFigure is v's saturation as a figure: its median and the range of
// its searches.
func satFigure(name string, s *Searches) Figure {
	iv := s.Rate.Interval
	return Figure{Of: name, Name: Saturation, Value: s.Rate.Median, Interval: &iv}
}

// pairedSat is b's saturation over a's, paired by repeat (ratio.Paired):
// the searches run interleaved, so what drifts between repeats cancels
// inside each pair's ratio. A search that did not hold its validation
// drops its pair.
func pairedSat(a, b *result.VariantResult) ratios.Interval {
	n := min(len(a.Sat), len(b.Sat))
	as, bs := make([]float64, n), make([]float64, n)
	for i := range n {
		as[i], bs[i] = a.Sat[i].Rate, b.Sat[i].Rate
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
func saturationFindings(wr *result.WorkloadResult, w *Workload) []Finding {
	wl := wr.Workload
	samples := map[string][]float64{}
	byName := map[string]*result.VariantResult{}
	capped := Finding{Kind: SearchCapped, Workload: wl, Verdict: NotRanked}
	lower := Finding{Kind: SaturationLowerBound, Workload: wl, Verdict: NotRanked}
	for i, v := range wr.Variants {
		s := w.Variants[i].Sat
		switch {
		case s == nil:
			continue
		case s.HitMax:
			capped.Variants = append(capped.Variants, v.Name)
		}
		switch {
		case !s.Measured():
			continue // unvalidatedFindings names it
		case s.LowerBound:
			lower.add(v.Name, satFigure(v.Name, s))
			if s.LoaderCPUs > 0 {
				lower.Figures = append(lower.Figures, Figure{Of: v.Name, Name: LoaderCPUs, Value: float64(s.LoaderCPUs)})
			}
		default:
			samples[v.Name], byName[v.Name] = v.SatRates(), v
		}
	}
	if len(capped.Variants) > 0 {
		// A search that passed its highest rate measured a floor, not a
		// saturation: no order can be claimed.
		return []Finding{capped}
	}
	out := unvalidatedFindings(wr, w)
	if len(lower.Variants) > 0 {
		out = append(out, lower)
	}
	if len(samples) < 2 {
		return out
	}
	// The medians pick the best and the runner-up; only their paired
	// ratio can make the lead clear.
	l, err := verdict.FindLead(samples, true)
	if err != nil {
		return out
	}
	iv := pairedSat(byName[l.Best], byName[l.RunnerUp])
	lead := Finding{Kind: SaturationLead, Workload: wl, Verdict: Tie, Variants: []string{l.Best, l.RunnerUp}, Note: leadNote(l.Best, l.RunnerUp, iv),
		Figures: []Figure{satFigure(l.Best, w.Variant(l.Best).Sat), satFigure(l.RunnerUp, w.Variant(l.RunnerUp).Sat), intervalFigure(l.RunnerUp, SatRatio, iv)}}
	if iv.Differs() && iv.Hi < 1 {
		lead.Verdict = Clear
	}
	out = append(out, lead)
	// Against direct: is any pool above or below the baseline beyond its
	// paired ratio's interval?
	base := wr.Baseline()
	if base == nil || samples[base.Name] == nil {
		return out
	}
	vs := map[Verdict]*Finding{}
	for _, verdictOf := range []Verdict{Above, Below, Tied} {
		vs[verdictOf] = &Finding{Kind: SaturationVsDirect, Workload: wl, Verdict: verdictOf}
	}
	for i, v := range wr.Variants {
		if v == base || samples[v.Name] == nil {
			continue
		}
		iv := pairedSat(base, v)
		f := vs[saturationVerdict(iv)]
		f.add(v.Name, satFigure(v.Name, w.Variants[i].Sat), intervalFigure(v.Name, SatRatio, iv))
	}
	for _, verdictOf := range []Verdict{Above, Below, Tied} {
		if f := vs[verdictOf]; len(f.Variants) > 0 {
			out = append(out, *f)
		}
	}
	return out
}

func unvalidatedFindings(wr *result.WorkloadResult, w *Workload) []Finding {
	f := Finding{Kind: SaturationUnvalidated, Workload: wr.Workload, Verdict: NotRanked}
	for i, v := range wr.Variants {
		if s := w.Variants[i].Sat; s != nil && !s.Measured() {
			iv := s.Bracket
			f.add(v.Name, Figure{Of: v.Name, Name: Bracket, Value: iv.Lo, Interval: &iv})
		}
	}
	if len(f.Variants) == 0 {
		return nil
	}
	return []Finding{f}
}

// crossCheckFindings compares direct's open-loop saturation with its
// closed loop on the same CPUs: within the closed loop's spread, or how
// far off; a loader-bound side is named as a lower bound instead.
func crossCheckFindings(wr *result.WorkloadResult, w *Workload) []Finding {
	var out []Finding
	for i, v := range wr.Variants {
		av := w.Variants[i]
		if !v.Variant.IsBaseline() || av.Closed == nil || !av.Sat.Measured() {
			continue
		}
		sat, cr := av.Sat.Rate.Median, av.Closed
		iv := cr.Rate.Interval
		f := Finding{Kind: CrossCheck, Workload: wr.Workload, Variants: []string{v.Name}, Figures: []Figure{
			{Of: v.Name, Name: Saturation, Value: sat},
			{Of: v.Name, Name: ClosedRate, Value: cr.Rate.Median, Interval: &iv},
			{Of: v.Name, Name: Conns, Value: float64(cr.Conns)},
		}}
		if av.Sat.CPUPerRequest > 0 && cr.CPUPerRequest > 0 && av.Sat.ServerShare > 0 && cr.ServerShare > 0 {
			f.Figures = append(f.Figures,
				Figure{Of: v.Name, Name: CPUPerRequest, Value: float64(av.Sat.CPUPerRequest)},
				Figure{Of: v.Name, Name: ClosedCPUPerRequest, Value: float64(cr.CPUPerRequest)},
				Figure{Of: v.Name, Name: ServerBusy, Value: 100 * av.Sat.ServerShare},
				Figure{Of: v.Name, Name: ClosedServerBusy, Value: 100 * cr.ServerShare},
				Figure{Of: v.Name, Name: UtilisationRatio, Value: av.Sat.ServerShare / cr.ServerShare},
				Figure{Of: v.Name, Name: CostRatio, Value: float64(cr.CPUPerRequest) / float64(av.Sat.CPUPerRequest)})
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

func fixedBehindFindings(wr *result.WorkloadResult) []Finding {
	f := Finding{Kind: FixedBehind, Workload: wr.Workload, Verdict: NotComparable}
	for _, v := range wr.Variants {
		fx := v.Fixed
		if fx == nil {
			continue
		}
		if ok, why := keptUp(fx); !ok {
			f.add(v.Name, Figure{Of: v.Name, Name: AchievedShare, Value: 100 * ratio(fx.Achieved, fx.Asked), Text: why})
		}
	}
	if len(f.Variants) == 0 {
		return nil
	}
	return []Finding{f}
}

// fixedErrorFindings names the variants whose fixed-rate step failed
// more than the searches' error limit (a small -cap answering 503 below
// saturation): their percentiles include those quick answers, so a lower
// p99 there is not a better-served request.
func fixedErrorFindings(c *result.Comparison, wr *result.WorkloadResult) []Finding {
	f := Finding{Kind: FixedErrors, Workload: wr.Workload, Verdict: NotComparable}
	for _, v := range wr.Variants {
		if fx := v.Fixed; fx != nil && fx.ErrorRate > c.Criteria.MaxErrorRate {
			f.add(v.Name, Figure{Of: v.Name, Name: ErrorRate, Value: fx.ErrorRate})
		}
	}
	if len(f.Variants) == 0 {
		return nil
	}
	return []Finding{f}
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

// boundByWorkers tells whether v's saturation is explained by its
// concurrency bound rather than by CPU: the bound lies well below
// baseSat, what direct reached (so CPU did not stop v first), and v got
// at least half of it.
func boundByWorkers(v *result.VariantResult, s *Searches, baseSat float64) bool {
	bound := concurrencyBound(v)
	if bound == 0 || baseSat == 0 || s == nil || s.LowerBound {
		return false
	}
	return bound < 0.9*baseSat && s.Rate.Median >= 0.5*bound
}

func concurrencyFindings(wr *result.WorkloadResult, w *Workload) []Finding {
	base := wr.Baseline()
	if base == nil || !w.Variant(base.Name).Sat.Measured() {
		return nil
	}
	direct := w.Variant(base.Name).Sat.ratioBase() // a lower bound says nothing of where CPU would stop
	var out []Finding
	for i, v := range wr.Variants {
		s := w.Variants[i].Sat
		if v == base || !boundByWorkers(v, s, direct) {
			continue
		}
		bound, sat := concurrencyBound(v), s.Rate.Median
		out = append(out, Finding{Kind: ConcurrencyBound, Workload: wr.Workload, Verdict: Bound, Variants: []string{v.Name}, Figures: []Figure{
			{Of: v.Name, Name: Saturation, Value: sat},
			{Of: v.Name, Name: ConcurrencyLimit, Value: bound},
			{Of: v.Name, Name: Workers, Value: float64(v.Variant.Workers)},
			{Of: v.Name, Name: IODelay, Value: float64(v.Variant.IODelay)},
			{Of: v.Name, Name: ShareOfBound, Value: 100 * sat / bound},
			{Of: v.Name, Name: BelowDirect, Value: 100 * (1 - sat/direct)},
			{Of: base.Name, Name: Saturation, Value: direct},
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
	i := slices.IndexFunc(c.Workloads, func(w *result.WorkloadResult) bool { return w.Workload == c.ProfileWorkload })
	if i < 0 || c.Workloads[i].Baseline() == nil {
		return nil
	}
	wr, w := c.Workloads[i], a.Workloads[i]
	base := wr.Baseline()
	bs := w.Variant(base.Name).Sat
	var out []Finding
	for j, v := range wr.Variants {
		s := w.Variants[j].Sat
		if v == base || !s.Measured() || !bs.Measured() || s.LowerBound || bs.LowerBound || boundByWorkers(v, s, bs.Rate.Median) {
			continue // a pool bound by its workers lost nothing to CPU: its profile explains nothing
		}
		iv := pairedSat(base, v)
		if saturationVerdict(iv) != Below {
			continue
		}
		k := slices.IndexFunc(c.Profiles, func(p *result.ProfileSet) bool { return p.Variant == v.Name })
		if k < 0 {
			continue
		}
		row, ok := pprofdiff.LargestIncrease(pprofdiff.ParseTop(c.Profiles[k].Diffs["cpu"]))
		if !ok {
			continue
		}
		out = append(out, Finding{Kind: ProfileGrowth, Workload: wr.Workload, Verdict: Below, Variants: []string{v.Name}, Figures: []Figure{
			{Of: v.Name, Name: Loss, Value: 100 * (1 - iv.Median)},
			{Of: v.Name, Name: TopFunction, Value: row.FlatPct, Text: row.Function},
			{Of: v.Name, Name: TopFlat, Text: row.Flat},
		}})
	}
	return out
}
