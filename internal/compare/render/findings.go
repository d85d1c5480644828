package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/result"
	ratios "github.com/kvpool/kvpool/internal/ratio"
)

// sentences words a's findings, in order, as the report's list does.
func sentences(a *analysis.Analysis) []string {
	var out []string
	for _, f := range a.Findings {
		if s := sentence(f); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// sentence words one finding ("" for a kind it does not know).
func sentence(f analysis.Finding) string {
	for _, word := range []func(analysis.Finding) (string, bool){overloadSentence, scalingSentence, pairedSentence} {
		if s, ok := word(f); ok {
			return s
		}
	}
	wl := f.Workload
	switch f.Kind {
	case analysis.SearchCapped:
		return fmt.Sprintf("`%s`: %s passed the search's highest rate, so their saturation was not found and no pool is ranked.", wl, strings.Join(f.Variants, ", "))
	case analysis.SaturationLowerBound:
		parts := each(f.Variants, func(v string) string {
			with := ""
			if n := f.Value(v, analysis.LoaderCPUs); n > 0 {
				with = " with " + result.Count(int(n), "loader CPU")
			}
			return fmt.Sprintf("%s (≥ %s req/s%s)", v, thousands(f.Value(v, analysis.Saturation)), with)
		})
		return fmt.Sprintf("`%s`: **loader-bound, so only lower bounds, not ranked**: %s. The loader ran out of CPU (90 %% or more of its own) or its own sends fell behind (requests that found a connection free were still sent late) before kvserver reached its limit. To measure further, give the loader more CPUs (`-loader-cpus`), or load from more hosts (`loadtest attack -shard K/N -start-at`, then `loadtest merge`).",
			wl, strings.Join(parts, ", "))
	case analysis.SaturationLead:
		best, second := f.Variants[0], f.Variants[1]
		if f.Verdict == analysis.Clear {
			return fmt.Sprintf("`%s`: **%s saturates highest**, %s req/s (median) against %s's %s, the runner-up: %s, the 95 %% interval below 1.",
				wl, best, thousands(f.Value(best, analysis.Saturation)), second, thousands(f.Value(second, analysis.Saturation)), f.Note)
		}
		return fmt.Sprintf("`%s`: **no pool saturates clearly highest**: %s %s req/s (median), then %s %s; %s, and a lead is named only where its 95 %% interval excludes 1.",
			wl, best, thousands(f.Value(best, analysis.Saturation)), second, thousands(f.Value(second, analysis.Saturation)), f.Note)
	case analysis.SaturationVsDirect:
		return satVsDirectSentence(f)
	case analysis.CrossCheck:
		return crossCheckSentence(f)
	case analysis.SaturationUnvalidated:
		parts := each(f.All(analysis.Bracket), func(b analysis.Figure) string {
			if b.Interval.N > 0 {
				return fmt.Sprintf("%s (%s req/s)", b.Of, bracketCell(*b.Interval))
			}
			return b.Of + " (its bracket not recorded)"
		})
		return fmt.Sprintf("`%s`: **not validated, so not ranked**: %s: no rate held over the validating run, so a search's bracket is where its short steps held and failed, not a saturation.", wl, strings.Join(parts, ", "))
	case analysis.FixedBehind:
		parts := each(f.All(analysis.AchievedShare), func(x analysis.Figure) string { return fmt.Sprintf("%s (%s)", x.Of, x.Text) })
		return fmt.Sprintf("`%s` at the fixed rate, **did not keep up**, and nothing is ranked from those steps:%s", wl, nested(parts))
	case analysis.FixedErrors:
		parts := each(f.Variants, func(v string) string { return v + " " + pctCell(f.Value(v, analysis.ErrorRate)) })
		return fmt.Sprintf("`%s` at the fixed rate, failed requests (503s or time-outs) of what was sent: %s; their percentiles include those answers, so read a lower p99 there as shed load, not as faster service.",
			wl, strings.Join(parts, ", "))
	case analysis.ConcurrencyBound:
		v := f.Variants[0]
		return fmt.Sprintf("`%s`: %s saturates at %s req/s, %.0f %% of its concurrency bound (%d workers, each holding a request for at least the store's %v: %s req/s) and %.0f %% below direct's %s. "+
			"Its workers waiting on the store set the limit, not the CPU; direct runs every request on its connection's own goroutine, as many at once as there are connections.",
			wl, v, thousands(f.Value(v, analysis.Saturation)), f.Value(v, analysis.ShareOfBound), int(f.Value(v, analysis.Workers)),
			time.Duration(f.Value(v, analysis.IODelay)), thousands(f.Value(v, analysis.ConcurrencyLimit)), f.Value(v, analysis.BelowDirect), thousands(f.Value("", analysis.DirectSaturation)))
	case analysis.ProfileGrowth:
		v := f.Variants[0]
		top, _ := f.Figure(v, analysis.TopFunction)
		flat, _ := f.Figure(v, analysis.TopFlat)
		return fmt.Sprintf("%s saturates %.0f %% below direct (`%s`); its CPU profile beyond direct's grows most in `%s` (%s, %+.1f %% of direct's samples).",
			v, f.Value(v, analysis.Loss), wl, top.Text, flat.Text, top.Value)
	}
	return ""
}

// crossCheckSentence words direct's saturation against its closed loop,
// and, where both sides' CPU was measured, what accounts for their ratio.
func crossCheckSentence(f analysis.Finding) string {
	v := f.Variants[0]
	cl, _ := f.Figure(v, analysis.ClosedRate)
	closed := fmt.Sprintf("the closed loop's %s req/s (%d rounds, %s–%s, %d connections)", thousands(cl.Value), cl.Interval.N,
		thousands(cl.Interval.Lo), thousands(cl.Interval.Hi), int(f.Value(v, analysis.Conns)))
	head := fmt.Sprintf("`%s` cross-check, %s's saturation %s req/s against %s", f.Workload, v, thousands(f.Value(v, analysis.Saturation)), closed)
	account, idleMost, known := crossCheckAccount(f, v)
	switch f.Verdict {
	case analysis.SatLowerBound:
		return fmt.Sprintf("%s: **loader-bound: the saturation is a lower bound**, so the cross-check cannot confirm it.", head)
	case analysis.ClosedLowerBound:
		return fmt.Sprintf("%s: the closed loop was loader-bound (%s), so its rate is only what the loader could send: a lower bound of kvserver's.", head, f.Note)
	case analysis.Within:
		return fmt.Sprintf("%s: **within the closed loop's spread**.%s", head, account)
	case analysis.Below:
		below := fmt.Sprintf("%s: **%.0f %% below** the closed loop's median", head, f.Value(v, analysis.Difference))
		switch {
		case !known:
			return below + ": the search stopped short of what kvserver serves with no schedule to keep (its short steps, or the SLO, which a closed loop does not keep; the loader table says whether the loader kept up)."
		case idleMost:
			return below + "." + account + " Most of the gap is CPU left idle: on a schedule, kvserver keeps its p99 within the SLO only while its CPUs have time to spare (requests that arrive together wait for each other), where a closed loop keeps them busy by letting its answers wait as long as they must."
		}
		return below + "." + account + " Most of the gap is cost: a request took more CPU at the saturation than in the closed loop (the profiles say where)."
	}
	return fmt.Sprintf("%s: **%.0f %% above** the closed loop's median: its connections, not kvserver, may have limited the closed loop.%s",
		head, f.Value(v, analysis.Difference), account)
}

// crossCheckAccount words the analysis's split of open ÷ closed on one
// server, as saturate.Explain prints it: utilisation × cost × what the
// medians, being of different runs, leave unexplained. idleMost: idle
// CPU, not cost, accounts for more of a shortfall. known is false (and
// the text empty) where either side's CPU was not measured.
func crossCheckAccount(f analysis.Finding, v string) (text string, idleMost, known bool) {
	open, ok := f.Figure(v, analysis.OpenOverClosed)
	if !ok {
		return "", false, false
	}
	text = fmt.Sprintf(" Open ÷ closed %.2f = utilisation %.2f × cost %.2f × %.2f unexplained: kvserver's CPUs were %.0f %% busy over the validating runs against %.0f %% in the closed loop, and a request took %s of CPU against %s.",
		open.Value, f.Value(v, analysis.UtilisationRatio), f.Value(v, analysis.CostRatio), f.Value(v, analysis.Unexplained), f.Value(v, analysis.ServerBusy), f.Value(v, analysis.ClosedServerBusy),
		cpuMicros(time.Duration(f.Value(v, analysis.CPUPerRequest))), cpuMicros(time.Duration(f.Value(v, analysis.ClosedCPUPerRequest))))
	return text, open.Verdict == analysis.IdleMost, true
}

func scalingSentence(f analysis.Finding) (string, bool) {
	wl := f.Workload
	var counts []int
	for _, x := range f.All(analysis.CPUCount) {
		counts = append(counts, int(x.Value))
	}
	switch f.Kind {
	case analysis.ScalingVsDirect:
		var below, tied []string
		for _, x := range f.All(analysis.VsDirect) {
			if x.Verdict == analysis.Tied {
				tied = append(tied, x.Of)
				continue
			}
			var at []string
			for _, r := range f.All(analysis.SatRatio) {
				if r.Of == x.Of {
					at = append(at, fmt.Sprintf("at %s %s", result.Count(r.CPUs, "CPU"), figureRatio(r)))
				}
			}
			text := fmt.Sprintf("%s (%s", x.Of, strings.Join(at, "; "))
			if r, ok := f.Figure(x.Of, analysis.RatioAtLargest); ok {
				d := f.All(analysis.DirectAtLargest)[0]
				text += fmt.Sprintf("; medians at %s %.2f× direct's %s req/s", result.Count(r.CPUs, "CPU"), r.Value, thousands(d.Value))
			}
			below = append(below, text+")")
		}
		why := fmt.Sprintf("the 95 %% interval includes 1, or fewer than %d paired repeats give none", ratios.MinPairs)
		if f.Verdict == analysis.Below {
			return fmt.Sprintf("`%s` scaling, saturation paired with direct's by repeat on as many CPUs: **lower than direct's** beyond the 95 %% interval: %s; no difference measurable at any count (%s): %s.",
				wl, strings.Join(below, "; "), why, orNone(tied)), true
		}
		return fmt.Sprintf("`%s` scaling, saturation paired with direct's by repeat on as many CPUs: **no difference measurable here** at any count of %s (%s; -repeat %d gives one): %s.",
			wl, countsText(counts), why, ratios.MinPairs, strings.Join(tied, ", ")), true
	case analysis.ScalingLowerBound:
		parts := each(f.All(analysis.LowerBoundRate), func(x analysis.Figure) string {
			return fmt.Sprintf("%s at %s (≥ %s)", x.Of, result.Count(x.CPUs, "CPU"), thousands(x.Value))
		})
		return fmt.Sprintf("`%s` scaling: only lower bounds, not ranked (loader-bound searches): %s; give the loader more CPUs (-loader-cpus) or more hosts (`loadtest attack -shard K/N -start-at`, then `loadtest merge`).",
			wl, strings.Join(parts, ", ")), true
	case analysis.ScalingEfficiency:
		parts := each(f.All(analysis.Efficiency), func(x analysis.Figure) string { return fmt.Sprintf("%s %.2f", x.Of, x.Value) })
		lo, hi := int(f.Value("", analysis.FromCPUs)), int(f.Value("", analysis.ToCPUs))
		return fmt.Sprintf("`%s` scaling from %s to %s, saturation as a share of linear scaling from the %s figure (1.00: linear): %s.",
			wl, result.Count(lo, "CPU"), result.Count(hi, "CPU"), result.Count(lo, "CPU"), strings.Join(parts, ", ")), true
	case analysis.ScalingCPU:
		var perCount []string
		for _, d := range f.All(analysis.CPUPerRequest) {
			var parts []string
			for _, x := range f.All(analysis.CPURatio) {
				if x.CPUs == d.CPUs {
					parts = append(parts, fmt.Sprintf("%s %.2f×", x.Of, x.Value))
				}
			}
			perCount = append(perCount, fmt.Sprintf("%s (direct %s): %s", result.Count(d.CPUs, "CPU"), cpuMicros(time.Duration(d.Value)), strings.Join(parts, ", ")))
		}
		return fmt.Sprintf("`%s` closed loop, kvserver's CPU per request against direct's on as many CPUs: %s.", wl, strings.Join(perCount, "; ")), true
	case analysis.HandlerTarget:
		var met, missed []string
		for _, x := range f.All(analysis.WorstCPURatio) {
			if x.Verdict == analysis.Met {
				met = append(met, fmt.Sprintf("%s (at most %.2f×)", x.Of, x.Value))
			} else {
				missed = append(missed, fmt.Sprintf("%s (%.2f× at %s)", x.Of, x.Value, result.Count(x.CPUs, "CPU")))
			}
		}
		text := "**met** by every one: " + strings.Join(met, ", ")
		if len(missed) > 0 {
			text = fmt.Sprintf("**missed** by %s; met by %s", strings.Join(missed, ", "), orNone(met))
		}
		return fmt.Sprintf("`%s` the target for -exec handler, within %.0f %% of direct's CPU per request at every count (%s): %s.",
			wl, 100*f.Value("", analysis.Tolerance), countsText(counts), text), true
	}
	return "", false
}
