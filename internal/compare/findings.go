package compare

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/verdict"
	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
	"github.com/kvpool/kvpool/internal/pprofdiff"
)

// findings states what c's own numbers support, one sentence each: which
// variant saturates highest and whether its lead exceeds the spread (a
// tie otherwise), which failed requests at the fixed rate (their tail
// then includes 503s answered at once), which keep the served p99 under
// the SLO under overload, which were held back by their workers waiting
// on a slow store, and what the CPU profile diff attributes the other
// pools' losses to.
// Where the numbers are missing or do not decide, nothing is claimed.
func findings(c *Comparison) []string {
	var out []string
	for _, wr := range c.Workloads {
		if isScaling(wr) {
			out = append(out, scalingFindings(wr)...)
		} else {
			out = append(out, saturationFindings(c, wr)...)
		}
		out = append(out, crossCheckFindings(wr)...)
		out = append(out, fixedErrorFindings(wr)...)
		out = append(out, overloadFindings(c, wr)...)
	}
	for _, wr := range c.Workloads {
		out = append(out, concurrencyFindings(wr)...)
	}
	out = append(out, profileFindings(c)...)
	return out
}

// fixedErrorShare is the share of failed requests above which a fixed
// step's latencies are not comparable with an error-free one's: the
// saturation search's own limit, which compare runs at its default.
var fixedErrorShare = saturate.DefaultConfig().MaxErrorRate

// fixedErrorFindings names the variants whose fixed-rate step failed
// more than fixedErrorShare of its requests (a small -cap answering 503
// below saturation): their percentiles include those quick answers, so a
// lower p99 there is not a better-served request.
func fixedErrorFindings(wr *WorkloadResult) []string {
	var parts []string
	for _, v := range wr.Variants {
		if f := v.Fixed; f != nil && f.ErrorRate > fixedErrorShare {
			parts = append(parts, v.Name+" "+errorShare(f.ErrorRate))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("`%s` at the fixed rate, failed requests (503s or time-outs) of what was sent: %s; their percentiles include those answers, so read a lower p99 there as shed load, not as faster service.",
		wr.Workload, strings.Join(parts, ", "))}
}

// concurrencyBound is what v can serve at most when every request holds
// one of its Workers for at least the store's IODelay: Workers/IODelay
// req/s. It is 0 where v has no fixed worker count or no delay, and
// under an adaptive -limit, which moves the bound.
func concurrencyBound(v Variant) float64 {
	if v.Workers <= 0 || v.IODelay <= 0 || v.Limit != "" {
		return 0
	}
	return float64(v.Workers) / v.IODelay.Seconds()
}

// boundByWorkers tells whether v's saturation is explained by its
// concurrency bound rather than by CPU: the bound lies well below baseSat,
// what direct reached (so CPU did not stop v first), and v got at least
// half of it.
func boundByWorkers(v *VariantResult, baseSat float64) bool {
	bound := concurrencyBound(v.Variant)
	if bound == 0 || baseSat == 0 || len(v.SatRates()) == 0 || v.LoaderBound() {
		return false
	}
	return bound < 0.9*baseSat && median(v.SatRates()) >= 0.5*bound
}

// concurrencyFindings: where a pool's workers each wait on a slow store
// (the slow-backend preset), its saturation is set by how many requests
// its workers can hold at once, not by CPU; direct runs each request on
// its connection's own goroutine and is bounded by the connections.
func concurrencyFindings(wr *WorkloadResult) []string {
	base := wr.baseline()
	if base == nil || len(base.SatRates()) == 0 {
		return nil
	}
	baseSat := median(base.SatRates())
	if base.LoaderBound() {
		baseSat = 0 // a lower bound says nothing of where CPU would stop
	}
	var out []string
	for _, v := range wr.Variants {
		if v == base || !boundByWorkers(v, baseSat) {
			continue
		}
		bound := concurrencyBound(v.Variant)
		sat := median(v.SatRates())
		out = append(out, fmt.Sprintf("`%s`: %s saturates at %s req/s, %.0f %% of its concurrency bound (%d workers, each holding a request for at least the store's %v: %s req/s) and %.0f %% below direct's %s: its workers waiting on the store set the limit, not the CPU; direct runs every request on its connection's own goroutine, as many at once as there are connections.",
			wr.Workload, v.Name, thousands(sat), 100*sat/bound, v.Variant.Workers, v.Variant.IODelay, thousands(bound),
			100*(1-sat/baseSat), thousands(baseSat)))
	}
	return out
}

// saturationFindings ranks the variants' saturations, and each against
// direct's, where the spread allows. A loader-bound saturation is only a
// lower bound: never ranked, and said so with how to measure more.
func saturationFindings(c *Comparison, wr *WorkloadResult) []string {
	samples := map[string][]float64{}
	var capped, lower []string
	for _, v := range wr.Variants {
		if slices.ContainsFunc(v.Sat, func(s SatRun) bool { return s.HitMax }) {
			capped = append(capped, v.Name)
		}
		rates := v.SatRates()
		switch {
		case len(rates) == 0:
		case v.LoaderBound():
			with := ""
			if n := v.loaderCPUs(); n > 0 {
				with = " with " + cpusText(n, "loader CPU")
			}
			lower = append(lower, fmt.Sprintf("%s (≥ %s req/s%s)", v.Name, thousands(median(rates)), with))
		default:
			samples[v.Name] = rates
		}
	}
	if len(capped) > 0 {
		// A search that passed its highest rate measured a floor, not a
		// saturation: no order can be claimed.
		return []string{fmt.Sprintf("`%s`: %s passed the search's highest rate, so their saturation was not found and no pool is ranked.", wr.Workload, strings.Join(capped, ", "))}
	}
	var out []string
	if len(lower) > 0 {
		out = append(out, fmt.Sprintf("`%s`: **loader-bound, so only lower bounds, not ranked**: %s: the loader ran out of CPU (or fell behind while kvserver had CPU to spare) before kvserver reached its limit. To measure further, give the loader more CPUs (`-loader-cpus`), or load from more hosts (`loadtest attack -shard K/N -start-at`, then `loadtest merge`).",
			wr.Workload, strings.Join(lower, ", ")))
	}
	if len(samples) < 2 {
		return out
	}
	l, err := verdict.FindLead(samples, true)
	if err != nil {
		return out
	}
	if l.Clear {
		out = append(out, fmt.Sprintf("`%s`: **%s saturates highest**, %s req/s (median) against %s's %s: %s.",
			wr.Workload, l.Best, thousands(l.BestMedian), l.RunnerUp, thousands(l.RunnerUpMedian), l.Reason))
	} else {
		out = append(out, fmt.Sprintf("`%s`: **no pool saturates clearly highest**: %s.", wr.Workload, l.Reason))
	}
	// Against direct: is any pool clearly above or below the baseline?
	base := wr.baseline()
	if base == nil || samples[base.Name] == nil {
		return out
	}
	var above, below, tied []string
	for _, v := range wr.Variants {
		if v == base || samples[v.Name] == nil {
			continue
		}
		pair, err := verdict.FindLead(map[string][]float64{v.Name: v.SatRates(), base.Name: base.SatRates()}, true)
		switch {
		case err != nil:
		case pair.Clear && pair.Best == v.Name:
			above = append(above, v.Name)
		case pair.Clear:
			below = append(below, v.Name)
		default:
			tied = append(tied, v.Name)
		}
	}
	if len(above) > 0 {
		out = append(out, fmt.Sprintf("`%s`: saturates higher than direct beyond the spread: %s.", wr.Workload, strings.Join(above, ", ")))
	}
	if len(below) > 0 {
		out = append(out, fmt.Sprintf("`%s`: saturates lower than direct beyond the spread: %s.", wr.Workload, strings.Join(below, ", ")))
	}
	if len(tied) > 0 {
		out = append(out, fmt.Sprintf("`%s`: not distinguishable from direct's saturation (ranges overlap, or one run): %s.", wr.Workload, strings.Join(tied, ", ")))
	}
	return out
}

// crossCheckFindings compares direct's open-loop saturation with its
// closed loop on the same CPUs: within the closed loop's spread, or how
// far off; a loader-bound side is named as a lower bound instead.
func crossCheckFindings(wr *WorkloadResult) []string {
	var out []string
	for _, v := range wr.Variants {
		cr := v.Closed
		if !v.Variant.IsBaseline() || cr == nil || len(cr.Rounds) == 0 || len(v.SatRates()) == 0 {
			continue
		}
		sat, rates := median(v.SatRates()), cr.Rates()
		lo, hi, med := slices.Min(rates), slices.Max(rates), median(rates)
		closed := fmt.Sprintf("the closed loop's %s req/s (%d rounds, %s–%s, %d connections)", thousands(med), len(rates), thousands(lo), thousands(hi), cr.Conns)
		head := fmt.Sprintf("`%s` cross-check, %s's saturation %s req/s against %s", wr.Workload, v.Name, thousands(sat), closed)
		switch {
		case v.LoaderBound():
			out = append(out, fmt.Sprintf("%s: **loader-bound: the saturation is a lower bound**, so the cross-check cannot confirm it.", head))
		case cr.LoaderBound():
			var why string
			for _, r := range cr.Rounds {
				if r.LoaderBound {
					why = r.Why
					break
				}
			}
			out = append(out, fmt.Sprintf("%s: the closed loop was loader-bound (%s), so its rate is only what the loader could send: a lower bound of kvserver's.", head, why))
		case sat >= lo && sat <= hi:
			out = append(out, fmt.Sprintf("%s: **within the closed loop's spread**.", head))
		case sat < lo:
			out = append(out, fmt.Sprintf("%s: **%.0f %% below** the closed loop's median: the search stopped short of what kvserver serves with no schedule to keep (its short steps, or the SLO, which a closed loop does not keep; the loader table says whether the loader kept up).",
				head, 100*(1-sat/med)))
		default:
			out = append(out, fmt.Sprintf("%s: **%.0f %% above** the closed loop's median: its connections, not kvserver, may have limited the closed loop.", head, 100*(sat/med-1)))
		}
	}
	return out
}

func overloadFindings(c *Comparison, wr *WorkloadResult) []string {
	slo := c.Options.SLO
	var under, over, underSend, failed, excepted, behind []string
	ran := 0
	for _, v := range wr.Variants {
		o := v.Overload
		if o == nil || o.Served == 0 {
			continue
		}
		ran++
		cell := fmt.Sprintf("%s (%s)", v.Name, latency.FormatDuration(o.ServedP99))
		if o.ServedP99 <= slo {
			under = append(under, cell)
		} else {
			over = append(over, cell)
		}
		if o.ServedP99Uncorrected <= slo {
			underSend = append(underSend, fmt.Sprintf("%s (%s)", v.Name, latency.FormatDuration(o.ServedP99Uncorrected)))
		}
		if !o.LoaderKeptUp && o.Asked > 0 && o.Planned > 0 {
			behind = append(behind, fmt.Sprintf("%s %.0f %%", v.Name, 100*float64(o.Sent)/float64(o.Planned)))
		}
		switch {
		case strings.HasPrefix(o.Verdict, "FAIL"):
			failed = append(failed, fmt.Sprintf("%s (%s)", v.Name, strings.TrimPrefix(o.Verdict, "FAIL: ")))
		case strings.HasPrefix(o.Verdict, "exception: "):
			excepted = append(excepted, fmt.Sprintf("%s (%s)", v.Name, strings.TrimPrefix(o.Verdict, "exception: ")))
		}
	}
	if ran == 0 {
		return nil
	}
	var out []string
	if wr.BaseLowerBound && wr.BaseRate > 0 {
		out = append(out, fmt.Sprintf("`%s` under overload: direct's saturation, which set the asked rate, is only a lower bound (its search was loader-bound): each step asked %s, so it may have overloaded kvserver less than that, or not at all.",
			wr.Workload, askedText(c.planOr().OverloadFactor, true)))
	}
	if len(behind) > 0 {
		// Then the corrected p99 measures the loader's backlog as much as
		// the server: say so, and give the p99 from the send beside it.
		out = append(out, fmt.Sprintf("`%s` under overload: the loader sent only part of what was planned (%s), so the corrected p99 includes requests waiting in the loader; from the actual send, served p99 within the SLO (%v): %s.",
			wr.Workload, strings.Join(behind, ", "), slo, orNone(underSend)))
	}
	switch {
	case len(under) == 0:
		out = append(out, fmt.Sprintf("`%s` under overload: **no variant kept the corrected p99 of served requests under the SLO** (%v): %s.", wr.Workload, slo, strings.Join(over, ", ")))
	default:
		out = append(out, fmt.Sprintf("`%s` under overload: **corrected p99 of served within the SLO (%v)**: %s; above it: %s.", wr.Workload, slo, strings.Join(under, ", "), orNone(over)))
	}
	if f := goodputFinding(wr); f != "" {
		out = append(out, f)
	}
	if f := defaultsFinding(wr); f != "" {
		out = append(out, f)
	}
	if f := shedCostFinding(wr); f != "" {
		out = append(out, f)
	}
	if f := shedWaitFinding(wr); f != "" {
		out = append(out, f)
	}
	if len(failed) > 0 {
		out = append(out, fmt.Sprintf("`%s` under overload: failed the degradation checks: %s.", wr.Workload, strings.Join(failed, "; ")))
	}
	if len(excepted) > 0 {
		out = append(out, fmt.Sprintf("`%s` under overload: the unbounded exception, measured but not judged: %s.", wr.Workload, strings.Join(excepted, "; ")))
	}
	if len(failed) == 0 && len(excepted) == 0 {
		out = append(out, fmt.Sprintf("`%s` under overload: every variant stayed alive, answered only 2xx/404/503 or timed out, and had its p99 back to normal within the recovery probes.", wr.Workload))
	}
	return out
}

// goodputFinding sets the variants that shed 503s under overload beside
// those that shed nothing: each group's goodput range, with its ratio to
// direct's. Each overload step ran once, so no finer order is claimed.
func goodputFinding(wr *WorkloadResult) string {
	type group struct {
		names                              []string
		minGood, maxGood, minShed, maxShed float64
	}
	var shedding, keeping group
	add := func(g *group, name string, o *OverloadRun) {
		if len(g.names) == 0 {
			g.minGood, g.maxGood, g.minShed, g.maxShed = o.Goodput, o.Goodput, o.ShedPct, o.ShedPct
		}
		g.names = append(g.names, name)
		g.minGood, g.maxGood = min(g.minGood, o.Goodput), max(g.maxGood, o.Goodput)
		g.minShed, g.maxShed = min(g.minShed, o.ShedPct), max(g.maxShed, o.ShedPct)
	}
	for _, v := range wr.Variants {
		switch o := v.Overload; {
		case o == nil || o.Served == 0:
		case o.Shed > 0:
			add(&shedding, v.Name, o)
		default:
			add(&keeping, v.Name, o)
		}
	}
	if len(shedding.names)+len(keeping.names) < 2 {
		return ""
	}
	var base float64
	if b := wr.baseline(); b != nil && b.Overload != nil && b.Overload.Served > 0 {
		base = b.Overload.Goodput
	}
	served := func(g group) string {
		s := fmt.Sprintf("served %s req/s", span(g.minGood, g.maxGood, thousands))
		if base > 0 {
			s += fmt.Sprintf(" (%s× direct)", span(g.minGood/base, g.maxGood/base, func(x float64) string { return fmt.Sprintf("%.2f", x) }))
		}
		return s + ": " + strings.Join(g.names, ", ")
	}
	var parts []string
	if len(keeping.names) > 0 {
		parts = append(parts, "the variants that shed nothing "+served(keeping))
	}
	if len(shedding.names) > 0 {
		pct := func(x float64) string { return fmt.Sprintf("%.1f", x) }
		parts = append(parts, fmt.Sprintf("those that shed 503s (%s %% of what they were sent) %s", span(shedding.minShed, shedding.maxShed, pct), served(shedding)))
	}
	return fmt.Sprintf("`%s` under overload, goodput (one run each: read differences of a few per cent as noise): %s.", wr.Workload, strings.Join(parts, "; "))
}

// Issue 20's targets for kvserver's default configurations under
// overload: none serves below defaultsFloor × direct's saturation, and
// the best serves at least defaultsBest × it with the served p99 from the
// send at most defaultsP99 and below direct's.
const (
	defaultsFloor = 0.6
	defaultsBest  = 0.9
	defaultsP99   = 50 * time.Millisecond
)

// defaultsFinding states the goodput under overload of the queueing
// pools at kvserver's defaults against direct's saturation and direct's
// own goodput there, and issue 20's targets from the numbers.
func defaultsFinding(wr *WorkloadResult) string {
	base := wr.baseline()
	if base == nil || wr.BaseRate <= 0 {
		return ""
	}
	bo := base.Overload
	var vs []*VariantResult
	for _, v := range wr.Variants {
		if v.Variant.AtDefaults() && v.Overload != nil && v.Overload.Served > 0 {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return ""
	}
	le := ""
	if wr.BaseLowerBound {
		le = "≤ " // against a lower bound, a ratio is an upper bound
	}
	x := func(v *VariantResult) float64 { return v.Overload.Goodput / wr.BaseRate }
	var parts []string
	for _, v := range vs {
		part := fmt.Sprintf("%s %s%.2f×", v.Name, le, x(v))
		if bo != nil && bo.Served > 0 && bo.Goodput > 0 {
			part += fmt.Sprintf(" (%.2f× direct's goodput)", v.Overload.Goodput/bo.Goodput)
		}
		parts = append(parts, part)
	}
	lowest := slices.MinFunc(vs, func(a, b *VariantResult) int { return cmp.Compare(x(a), x(b)) })
	floor := fmt.Sprintf("none below %.1f×: **met** (lowest %s at %s%.2f×)", defaultsFloor, lowest.Name, le, x(lowest))
	if x(lowest) < defaultsFloor {
		var under []string
		for _, v := range vs {
			if x(v) < defaultsFloor {
				under = append(under, fmt.Sprintf("%s %s%.2f×", v.Name, le, x(v)))
			}
		}
		floor = fmt.Sprintf("none below %.1f×: **missed** by %s", defaultsFloor, strings.Join(under, ", "))
	}
	baseP99 := time.Duration(0)
	if bo != nil && bo.Served > 0 {
		baseP99 = bo.ServedP99Uncorrected
	}
	var best []string
	for _, v := range vs {
		o := v.Overload
		if x(v) >= defaultsBest && o.ServedP99Uncorrected <= defaultsP99 && (baseP99 == 0 || o.ServedP99Uncorrected < baseP99) {
			best = append(best, fmt.Sprintf("%s (%s%.2f×, p99 from the send %s)", v.Name, le, x(v), latency.FormatDuration(o.ServedP99Uncorrected)))
		}
	}
	top := slices.MaxFunc(vs, func(a, b *VariantResult) int { return cmp.Compare(x(a), x(b)) })
	bestText := fmt.Sprintf("**met** by %s", strings.Join(best, ", "))
	if len(best) == 0 {
		bestText = fmt.Sprintf("**not met** (the highest goodput, %s's %s%.2f×, with p99 from the send %s)", top.Name, le, x(top), latency.FormatDuration(top.Overload.ServedP99Uncorrected))
	}
	if baseP99 > 0 {
		bestText += fmt.Sprintf("; direct's p99 from the send %s", latency.FormatDuration(baseP99))
	}
	baseText := thousands(wr.BaseRate) + " req/s"
	if wr.BaseLowerBound {
		baseText += ", a lower bound"
	}
	return fmt.Sprintf("`%s` under overload, the pools at kvserver's defaults, goodput against direct's saturation (%s): %s. Issue 20's targets: %s; the best at ≥ %.1f× with served p99 from the send ≤ %s and below direct's: %s.",
		wr.Workload, baseText, strings.Join(parts, ", "), floor, defaultsBest, latency.FormatDuration(defaultsP99), bestText)
}

// shedCostFinding gives the range of what a 503 cost against a served
// request (OverloadRun.ShedCostRatio) over the variants that shed.
func shedCostFinding(wr *WorkloadResult) string {
	type cost struct {
		name string
		x    float64
	}
	var cs []cost
	for _, v := range wr.Variants {
		if v.Overload == nil {
			continue
		}
		if x, ok := v.Overload.ShedCostRatio(); ok {
			cs = append(cs, cost{v.Name, x})
		}
	}
	if len(cs) == 0 {
		return ""
	}
	lo, hi := cs[0], cs[0]
	for _, c := range cs[1:] {
		if c.x < lo.x {
			lo = c
		}
		if c.x >= hi.x {
			hi = c
		}
	}
	f := func(x float64) string { return fmt.Sprintf("%.2f", x) }
	who := lo.name
	if len(cs) > 1 {
		who = lo.name + " to " + hi.name
	}
	out := fmt.Sprintf("`%s` under overload, what a 503 cost kvserver against a served request (derived: the step's CPU less its served requests at a served request's cost, see the table; %d variants that shed): %s× (%s).",
		wr.Workload, len(cs), span(lo.x, hi.x, f), who)
	if lo.x <= 0 {
		out += " A figure at or below 0 means the overload step's CPU did not even cover its served requests at that cost each: they cost less there (more requests per wake-up), or kvserver got less CPU than its share (CPUs shared with the loader), and no 503 cost can be derived from it; `make bench-http POOLS=\"direct shed\"` measures one directly."
	}
	return out
}

// span is "lo–hi", or one value where they are equal, each as format
// writes it.
func span(lo, hi float64, format func(float64) string) string {
	if format(lo) == format(hi) {
		return format(lo)
	}
	return format(lo) + "–" + format(hi)
}

// shedWaitFinding says which requests each policy shed under overload:
// how long the shed ones had waited for their 503 (p50, from the send),
// per policy, beside how long the served ones waited. A policy that
// refuses newcomers (reject) sheds requests that waited least; one that
// drops the oldest sheds requests that waited longest.
func shedWaitFinding(wr *WorkloadResult) string {
	type waits struct{ lo, hi time.Duration }
	widen := func(m map[string]waits, k string, d time.Duration) {
		if s, ok := m[k]; ok {
			m[k] = waits{min(s.lo, d), max(s.hi, d)}
			return
		}
		m[k] = waits{d, d}
	}
	// Per policy where the policies differ; per variant where they do not
	// (the queues preset: each pool at its default).
	policies := map[string]bool{}
	for _, v := range wr.Variants {
		if o := v.Overload; o != nil && o.Shed > 0 {
			policies[v.Variant.PolicyLabel()] = true
		}
	}
	key, per := func(v *VariantResult) string { return v.Variant.PolicyLabel() }, "policy"
	if len(policies) == 1 {
		key, per = func(v *VariantResult) string { return v.Name }, "variant"
	}
	shed, served := map[string]waits{}, map[string]waits{}
	var order []string
	for _, v := range wr.Variants {
		o := v.Overload
		if o == nil || o.Shed == 0 {
			continue
		}
		k := key(v)
		if _, ok := shed[k]; !ok {
			order = append(order, k)
		}
		widen(shed, k, o.ShedWaitP50)
		widen(served, k, o.ServedWaitP50)
	}
	if len(order) == 0 {
		return ""
	}
	text := func(s waits) string {
		if s.lo == s.hi {
			return latency.FormatDuration(s.lo)
		}
		return latency.FormatDuration(s.lo) + "–" + latency.FormatDuration(s.hi)
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%s %s (served: %s)", k, text(shed[k]), text(served[k])))
	}
	return fmt.Sprintf("`%s` under overload, which requests were shed: the 503s had waited (p50, from the send, per %s) %s.", wr.Workload, per, strings.Join(parts, "; "))
}

// profileFindings: for each pool of the profiled workload that saturates
// below direct beyond the spread, and not because its workers were all
// waiting on the store (see concurrencyFindings), the function its CPU
// diff grows most.
func profileFindings(c *Comparison) []string {
	if len(c.Profiles) == 0 || len(c.Workloads) == 0 {
		return nil
	}
	var wr *WorkloadResult
	for _, w := range c.Workloads {
		if w.Workload == c.ProfileWorkload {
			wr = w
		}
	}
	if wr == nil || wr.baseline() == nil {
		return nil
	}
	base := wr.baseline()
	var out []string
	for _, v := range wr.Variants {
		if v == base || len(v.SatRates()) == 0 || len(base.SatRates()) == 0 || v.LoaderBound() || base.LoaderBound() || boundByWorkers(v, median(base.SatRates())) {
			continue // a pool bound by its workers lost nothing to CPU: its profile explains nothing
		}
		pair, err := verdict.FindLead(map[string][]float64{v.Name: v.SatRates(), base.Name: base.SatRates()}, true)
		if err != nil || !pair.Clear || pair.Best != base.Name {
			continue
		}
		var ps *ProfileSet
		for _, p := range c.Profiles {
			if p.Variant == v.Name {
				ps = p
			}
		}
		if ps == nil {
			continue
		}
		row, ok := pprofdiff.LargestIncrease(pprofdiff.ParseTop(ps.Diffs["cpu"]))
		if !ok {
			continue
		}
		loss := 100 * (1 - median(v.SatRates())/median(base.SatRates()))
		out = append(out, fmt.Sprintf("%s saturates %.0f %% below direct (`%s`); its CPU profile beyond direct's grows most in `%s` (%s, %+.1f %% of direct's samples).",
			v.Name, loss, wr.Workload, row.Function, row.Flat, row.FlatPct))
	}
	return out
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
