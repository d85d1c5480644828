package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kvpool/kvpool/internal/compare/verdict"
	"github.com/kvpool/kvpool/internal/latency"
)

// findings states what c's own numbers support, one sentence each: which
// variant saturates highest and whether its lead exceeds the spread (a
// tie otherwise), which keep the served p99 under the SLO under overload,
// and what the CPU profile diff attributes the weakest pool's loss to.
// Where the numbers are missing or do not decide, nothing is claimed.
func findings(c *Comparison) []string {
	var out []string
	for _, wr := range c.Workloads {
		out = append(out, saturationFindings(c, wr)...)
		out = append(out, overloadFindings(c, wr)...)
	}
	out = append(out, profileFindings(c)...)
	return out
}

func saturationFindings(c *Comparison, wr *WorkloadResult) []string {
	samples := map[string][]float64{}
	var capped []string
	for _, v := range wr.Variants {
		if rates := v.SatRates(); len(rates) > 0 {
			samples[v.Name] = rates
		}
		if slices.ContainsFunc(v.Sat, func(s SatRun) bool { return s.HitMax }) {
			capped = append(capped, v.Name)
		}
	}
	if len(capped) > 0 {
		// A search that passed its highest rate measured a floor, not a
		// saturation: no order can be claimed.
		return []string{fmt.Sprintf("`%s`: %s passed the search's highest rate, so their saturation was not found and no pool is ranked.", wr.Workload, strings.Join(capped, ", "))}
	}
	if len(samples) < 2 {
		return nil
	}
	l, err := verdict.FindLead(samples, true)
	if err != nil {
		return nil
	}
	var out []string
	if l.Clear {
		out = append(out, fmt.Sprintf("`%s`: **%s saturates highest**, %s req/s (median) against %s's %s: %s.",
			wr.Workload, l.Best, thousands(l.BestMedian), l.RunnerUp, thousands(l.RunnerUpMedian), l.Reason))
	} else {
		out = append(out, fmt.Sprintf("`%s`: **no pool saturates clearly highest**: %s.", wr.Workload, l.Reason))
	}
	// Against direct: is any pool clearly above or below the baseline?
	base := wr.baseline()
	if base == nil || len(base.SatRates()) == 0 {
		return out
	}
	var above, below, tied []string
	for _, v := range wr.Variants {
		if v == base || len(v.SatRates()) == 0 {
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

// profileFindings: for the pool of the first workload that saturates
// lowest against direct, beyond the spread, the function its CPU diff
// grows most.
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
		if v == base || len(v.SatRates()) == 0 || len(base.SatRates()) == 0 {
			continue
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
		row, ok := largestIncrease(parseTop(ps.Diffs["cpu"]))
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
