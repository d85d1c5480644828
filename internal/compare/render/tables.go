package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
)

func writeWorkload(b *page, c *result.Comparison, wr *result.WorkloadResult, aw *analysis.Workload) {
	b.printf("%s: `%s`\n\n", HeadResults, wr.Workload)
	if aw.OnlyBaseRate {
		// Nothing but direct's saturation was measured outside the
		// overload step (the policies and overload presets): a table of
		// dashes would say nothing.
		var bs *analysis.Searches
		if aw.Base != nil {
			bs = aw.Base.Sat
		}
		how := "median ± half the spread of its searches"
		if bs != nil && bs.Brackets {
			how = "the bracket: the highest rate that held, the lowest that failed twice"
		}
		b.printf("Direct's saturation in req/s (%s): %s. This preset measures the variants only under overload (below)", how, satCell(bs, false))
		if aw.OverloadMultiple > 0 {
			b.printf(", asking %s", askedText(aw.OverloadMultiple, wr.BaseLowerBound))
		}
		b.printf(".\n\n")
	} else {
		writeResultsTable(b, c, wr, aw)
	}
	writeClosedTable(b, wr, aw)
	writePairedTable(b, c, wr, aw)
	if s := settingsLine(wr); s != "" {
		b.printf("kvserver's settings as it reported them (`kvserver_config_info`):\n\n- %s\n\n", s)
	}
	if anyVariant(c, func(v *result.VariantResult) bool { return v.Overload != nil }) {
		writeOverloadTable(b, c, wr, aw)
	}
}

func writeClosedTable(b *page, wr *result.WorkloadResult, aw *analysis.Workload) {
	rows := slices.DeleteFunc(slices.Clone(aw.Variants), func(v *analysis.Variant) bool { return v.Closed == nil })
	if len(rows) == 0 {
		return
	}
	b.printf("%s: `%s`\n\n", HeadClosed, wr.Workload)
	b.printf("Each connection sends its next request as soon as the last is answered, over as many connections as Little's law asks for at the variant's saturation (at least %d). This is the server's throughput with no schedule to keep, the cross-check of the open-loop saturation (the findings compare the two).\n\n", plan.MinConns)
	b.table("variant", "connections", "rounds", "req/s (median ± half the spread)", "saturation req/s", "server CPU/request", "loader CPU", "kvserver CPU", "loader-bound")
	for _, v := range rows {
		cr := v.Closed
		b.row(v.Name, cr.Conns, cr.Rate.N, thousands(cr.Rate.Median)+" ± "+thousands(cr.Rate.HalfSpread()),
			satCell(v.Sat, false), cpuMicros(cr.CPUPerRequest), shareCell(cr.Loader), shareCell(cr.Server), yesNo(cr.LoaderBound, "**yes**"))
	}
	b.printf("\n")
}

// connsCell is a step's peak connections and requests in flight:
// "64 / 50", or where it had to open more than it started with,
// "64→212 opened / 180".
func connsCell(start, peak, inFlight int) string {
	if start > 0 && peak > start {
		return fmt.Sprintf("%d→%d opened / %d", start, peak, inFlight)
	}
	return fmt.Sprintf("%d / %d", peak, inFlight)
}

func writeResultsTable(b *page, c *result.Comparison, wr *result.WorkloadResult, aw *analysis.Workload) {
	own := c.Plan.OwnRates
	bracketed := slices.ContainsFunc(aw.Variants, func(v *analysis.Variant) bool { return v.Sat != nil && v.Sat.Brackets })
	switch {
	case wr.BaseRate <= 0:
		b.printf("Direct's saturation: **no search of direct held over its validation**, so there is no rate to set the fixed-rate step by: it did not run (see the failures).\n\n")
	case own:
		b.printf("Direct's saturation: %s req/s. Each variant's fixed-rate step ran at %.0f %% of its own saturation (the fixed rate column), so the latencies compare the variants each at the same share of what it can serve, not at the same load. Each cell's ratio is to `direct` in this run.\n\n",
			thousands(wr.BaseRate), 100*plan.FixedShare)
	default:
		validated := "" // where brackets are recorded, only a validated saturation sets the steps
		if bracketed {
			validated = ", validated"
		}
		b.printf("Direct's saturation: %s req/s%s; fixed-rate step at %s req/s. Each cell's ratio is to `direct` in this run.\n\n",
			thousands(wr.BaseRate), validated, thousands(aw.FixedRate))
	}
	heads := []string{"pool", "policy", fmt.Sprintf("saturation req/s (median, spread over %d)", c.Options.Repeat)}
	if bracketed {
		heads[2] = fmt.Sprintf("saturation req/s: held–failed (median of %d)", c.Options.Repeat)
	}
	if own {
		heads = append(heads, "fixed rate req/s")
	}
	b.table(append(heads, "p50", "p90", "p99", "p99.9", "max", "errors", "server CPU/request", "peak conns / in flight")...)
	opened := false
	for i, v := range wr.Variants {
		f, x := v.Fixed, aw.Variants[i].Fixed
		cells := []any{v.Variant.PoolLabel(), v.Variant.PolicyLabel(), satCell(aw.Variants[i].Sat, true)}
		if own && f != nil {
			cells = append(cells, thousands(f.Asked))
		} else if own {
			cells = append(cells, "-")
		}
		if f == nil {
			b.row(append(cells, "-", "-", "-", "-", "-", "-", "-", "-")...)
			continue
		}
		opened = opened || f.ConnsStart > 0 && f.ConnsPeak > f.ConnsStart
		b.row(append(cells, durRatio(f.Corrected.P50, x.P50), durRatio(f.Corrected.P90, x.P90), durRatio(f.Corrected.P99, x.P99),
			durRatio(f.Corrected.P999, x.P999), durRatio(f.Corrected.Max, x.Max), pctCell(f.ErrorRate),
			cpuMicros(f.ServerCPUPerRequest)+ratio(x.CPU), connsCell(f.ConnsStart, f.ConnsPeak, f.InFlightPeak))...)
	}
	if bracketed {
		b.printf("\nA saturation is a bracket: the highest rate that held (its short step, then the longer validating run at that rate) and the lowest that failed twice; \"validated\" says the validating run held, and only a validated rate sets the later steps or is compared. A search whose validation never held is marked **not validated** and nothing is ranked from it.\n")
	} else if slices.ContainsFunc(aw.Variants, func(v *analysis.Variant) bool { return v.Sat != nil }) {
		b.printf("\nThis comparison did not record its searches' brackets: each saturation is the rate the search validated, without the rate that failed above it.\n")
	}
	writeFixedBehind(b, wr, aw)
	b.printf("\nLatencies are corrected for coordinated omission (from each request's intended send time) at the fixed rate, over every answer as wrk2's are, errors included: a pool that answered some requests 503 at once (a small -cap) shows a lower tail for it, so read the errors column beside them. Spread is ± half the range. A saturation is the highest rate whose short step kept the SLO. \"k of n held in validation\" says how many of the searches also kept it over the longer validating run at that rate. \"≥ X, loader-bound\" is a lower bound: the loader, not kvserver, ran out first (see the loader's table above), and no ratio is given for it.\n\n")
	if opened {
		b.printf("\"a→b opened\": the step started with a connections (Little's law at the fixed rate) and every one was busy at times, so the loader opened more, up to b; requests that waited for a connection were sent late, and their corrected latencies include that wait in the loader.\n\n")
	}
}

// settingKeys are the config_info labels that tell the variants apart.
var settingKeys = []string{"exec", "workers", "limit", "cap", "overflow", "queue_timeout", "io_delay", "io_delay_dist"}

func settingsLine(wr *result.WorkloadResult) string {
	var parts []string
	for _, v := range wr.Variants {
		if v.Config == nil {
			continue
		}
		var kv []string
		for _, k := range settingKeys {
			if val, ok := v.Config[k]; ok {
				kv = append(kv, k+"="+val)
			}
		}
		parts = append(parts, fmt.Sprintf("`%s` %s", v.Name, strings.Join(kv, " ")))
	}
	return strings.Join(parts, "\n- ")
}

func writeOverloadTable(b *page, c *result.Comparison, wr *result.WorkloadResult, aw *analysis.Workload) {
	b.printf("%s: `%s`\n\n", HeadOverload, wr.Workload)
	if wr.BaseLowerBound && wr.BaseRate > 0 {
		b.printf("**Direct's saturation, which set the asked rate, is only a lower bound** (its search was loader-bound): each step asked %s, and may have overloaded kvserver less than that, or not at all.\n\n",
			askedText(c.Plan.OverloadFactor, true))
	}
	b.printf("The loader could open connections as requests fell due, up to %d, so that an excess over what the server serves waits in, and is shed by, the server's queue rather than the loader's; the peak columns say how many it needed.\n\n", c.Options.MaxConns)
	b.table("pool", "policy", "asked req/s", "sent", "goodput req/s", "p99 of served: corrected / from the send", "shed %", "shed after (p50 wait)", "served after (p50 wait)", "timeouts",
		"peak conns / in flight", "p99 before → after", "RSS steady / peak MiB (growth MiB/s)", "server CPU per served request", "per 503 (derived)", "503 ÷ served", "verdict")
	for i, v := range wr.Variants {
		o, x := v.Overload, aw.Variants[i].Overload
		if o == nil {
			b.printf("| %s | %s | not run (%s) ||||||||||||||\n", v.Variant.PoolLabel(), v.Variant.PolicyLabel(), notRunReason(c))
			continue
		}
		rec := each(o.RecoveryP99, duration)
		served, per503, shedRatio := "-", "-", "-"
		if x.ServedCPU > 0 {
			served = cpuMicros(x.ServedCPU)
		}
		if x.ShedCost {
			per503, shedRatio = cpuMicros(x.CPUPerShed), two(x.ShedCostRatio)
		}
		b.row(v.Variant.PoolLabel(), v.Variant.PolicyLabel(), thousands(o.Asked), thousands(float64(o.Sent))+" of "+thousands(float64(o.Planned)),
			thousands(o.Goodput)+ratio(x.Goodput), durRatio(o.ServedP99, x.ServedP99)+" / "+durRatio(o.ServedP99Uncorrected, x.ServedP99FromSend), oneDecimal(o.ShedPct),
			waitText(o.ShedWaitP50, o.Shed), waitText(o.ServedWaitP50, o.Served), o.Timeouts, connsCell(o.ConnsStart, o.ConnsPeak, o.InFlightPeak),
			duration(o.BaselineP99)+" → "+strings.Join(rec, ", "), fmt.Sprintf("%.0f / %.0f (%+.1f)", o.RSSSteadyMiB, float64(x.PeakRSS)/(1<<20), o.RSSGrowthMiBPerS),
			served, per503, shedRatio, o.Verdict)
	}
	b.printf("\nGoodput counts served answers (2xx, 404) per second; shed are 503s. p99 of served leaves the 503s out; corrected, it runs from the intended send and so includes any wait in the loader (all connections busy), from the send it does not. Probes before and after run at %.0f %% of %s. "+
		"Server CPU per served request is the variant's over a closed-loop round on the same server just before the overload step (%v, as many connections as direct's saturation needs). "+
		"That round served at full load, queueing and hand-offs included, and shed nothing; where it shed or failed, the cost is taken over its baseline probe, where nothing was shed but the load was half (a served request costs more there). "+
		"Per 503 is derived from it: (kvserver's CPU over the overload step − served × that) ÷ 503s, so it is only as good as that assumption, and a figure at or below 0 says the assumption failed. "+
		"It is given only where 503s were at least %.0f %% of the answers, since the error in a served request's cost is multiplied by served ÷ 503s in it. \"503 ÷ served\" is the ratio of the two. `make bench-http POOLS=\"direct shed\"` measures a 503's cost directly.\n\n",
		100*plan.ProbeShare, refName(c.Plan), c.Options.StepTiming().Closed, 100*analysis.MinShedForCost)
}

// writeFixedBehind names the variants whose fixed-rate step did not keep
// up with its asked rate, and says what that means for the ratios.
func writeFixedBehind(b *page, wr *result.WorkloadResult, aw *analysis.Workload) {
	var parts []string
	baseBehind := false
	for i, v := range wr.Variants {
		x := aw.Variants[i].Fixed
		if x == nil || x.KeptUp {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", v.Name, x.Behind))
		baseBehind = baseBehind || v.Variant.IsBaseline()
	}
	if len(parts) == 0 {
		return
	}
	b.printf("\n**The fixed-rate step did not keep up** (at least %.0f %% of the asked rate served, on schedule, without a growing backlog) for:\n\n- %s\n\nIts latencies there are those of a queue that grew for as long as the step ran, and nothing is ranked from them.", 100*analysis.MinAchieved, strings.Join(parts, "\n- "))
	if baseBehind {
		b.printf(" Since direct's is among them, no latency or CPU ratio to direct is given.")
	}
	b.printf("\n")
}

// notRunReason says why a step has no result: the run ended before it, or
// it failed (the report's failed steps say how).
func notRunReason(c *result.Comparison) string {
	if c.Interrupted && len(c.Failures) == 0 {
		return "the run was interrupted before it"
	}
	return "see the failed steps"
}
