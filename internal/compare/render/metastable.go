package render

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/chart"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// HeadMetastable is the metastable preset's section.
const HeadMetastable = "## After a spike: recovery with retrying clients"

// modelText says what each client model does, for the section's list.
var modelText = map[string]string{
	"none":     "the classic client: one attempt, no timeout of its own (the run's 2 s), no retry",
	"untuned":  "the retry loop of a hand-written client: gives up after 0.5 s and retries a 503 or a timeout at once, five times at most, no jitter, no budget, its retries unmarked",
	"retry":    "gives up after 1 s and retries a 503 or a timeout at once, twice at most, marking its retries (X-Envoy-Attempt-Count)",
	"backoff":  "as retry, each retry after an exponential backoff with full jitter (10 ms doubling up to 1 s), and at least the server's Retry-After",
	"budget":   "as backoff, its retries capped at 20 % of its first tries",
	"throttle": "as backoff, and refuses attempts itself as the server refuses (Google SRE's adaptive throttling, K = 2)",
}

// writeMetastable writes the metastable section: what ran, a table per
// client model, and where the charts are.
func writeMetastable(b *page, c *result.Comparison, a *analysis.Analysis) {
	am, p := a.Metastable, c.Plan.Metastable
	if am == nil || p == nil {
		return
	}
	t := p.Timing
	b.printf("%s\n\n", HeadMetastable)
	sizes := c.Metastable.Sizes
	switch {
	case p.FastStore:
		b.printf("Each run starts a fresh kvserver on plain Pebble (no store stand-in: kvserver's CPU is its limit, every pool at its own defaults), ")
	case len(sizes) > 1:
		b.printf("Each of the lab's pools runs `-workers` as many as its store has slots, one per slot, so that requests wait in the pool's queue and the store bounds every variant; "+
			"`default` (kvserver given no pool flag) and the peers find their own limits. "+
			"Each run starts a fresh kvserver whose store stand-in sleeps %v per operation, as many at a time as its client model's store has slots (`-io-concurrency`: below). ", plan.MetaIODelay)
	default:
		b.printf("Each of the lab's pools runs `-workers %d`, one per store slot, so that requests wait in the pool's queue and the store bounds every variant; "+
			"`default` (kvserver given no pool flag) and the peers find their own limits. "+
			"Each run starts a fresh kvserver whose store stand-in sleeps %v per operation, %d at a time (`-io-delay %v -io-concurrency %d`: about %s op/s), ",
			p.Slots(), plan.MetaIODelay, p.Slots(), plan.MetaIODelay, p.Slots(), thousands(float64(p.Slots())/plan.MetaIODelay.Seconds()))
	}
	if len(sizes) > 1 {
		b.printf("A run asks it %.0f %% of direct's validated saturation in front of that store for %s, %g× that from %s to %s, then the base rate again for %s. ",
			100*p.Share, secs(t.Base), t.Factor, secs(t.Base), secs(t.SpikeEnd()), secs(t.After))
	} else {
		b.printf("and asks it %s GET/s (%.0f %% of direct's validated saturation) for %s, %s/s (%g×) from %s to %s, then the base rate again for %s. ",
			thousands(am.BaseRate), 100*p.Share, secs(t.Base), thousands(c.Metastable.SpikeRate), t.Factor, secs(t.Base), secs(t.SpikeEnd()), secs(t.After))
	}
	b.printf("The spike **overloaded** a variant when, over the spike, its useful goodput averaged under %.0f %% of the spike's rate or its useful answers' p99 passed %v: "+
		"one it did not overload had nothing to recover from. ", 100*plan.MetaRecovered, plan.MetaP99)
	b.printf("A variant **recovered** once its useful goodput (answers to clients still waiting) stayed at %.0f %% of the base rate or more for %s; "+
		"it **collapsed** if, over the run's last %s, it averaged under %.0f %% of it. Recovery times are from the spike's end, as is when the useful answers' p99 got back under %v for as long. "+
		"Peak amplification is the most attempts sent per first try in any %s. "+
		"\"Wasted\" is kvserver's operations that finished past the deadline their clients sent, of those it ran (known only where they send one: +deadlines). "+
		"\"Unused\" is the answers kvserver gave that no waiting client used, of those it gave. Timeouts and 503s are the loader's counts per run, with kvserver's 503s by reason in brackets. "+
		"Useful goodput over the run is its useful answers over the schedule's length, with their share of the first tries it asked; the useful p99 over the run is of every useful answer, from its send.\n\n",
		100*plan.MetaRecovered, secs(t.Hold), secs(t.Hold), 100*plan.MetaCollapsed, plan.MetaP99, secs(t.Interval))
	b.printf("Client models:\n\n")
	for _, m := range p.Models {
		text := modelText[m]
		if m == plan.CustomModel {
			text = "the population the client flags `" + strings.Join(p.ClientArgs, " ") + "` describe"
		}
		b.printf("- `%s`: %s\n", m, orUnknown(text))
	}
	b.printf("\n")
	writeClientSide(b, c, am)
	if len(c.Metastable.Runs) == 0 {
		if !am.Sendable {
			b.printf("No run was made: the loader cannot send the spike's first tries on its CPUs (the table above).\n\n")
			return
		}
		b.printf("No run finished (see the failed steps).\n\n")
		return
	}
	for _, mm := range am.Models {
		b.printf("### Client `%s`\n\n", mm.Name)
		if len(sizes) > 1 {
			b.printf("In front of %s: %s GET/s, %s/s in the spike.\n\n", slotsText(mm.Slots), thousands(mm.BaseRate), thousands(mm.SpikeRate))
		}
		b.table("variant", "client side", "overloaded?", "recovered in", "collapsed?", fmt.Sprintf("p99 < %v in", plan.MetaP99), "useful goodput (run)", "useful p99 (run)",
			"peak amplification", "wasted", "unused", "timeouts", "503s")
		for _, v := range mm.Variants {
			judged := []any{"not judged", "not judged", "not judged", "not judged", "not judged", "not judged"}
			if v.NotJudged < len(v.Runs) {
				judged = []any{countCell(v.Overloaded, v.JudgedRuns), recoveredCell(v), collapsedCell(v), timesCell(v.P99Back, v.JudgedRuns, v.P99), usefulCell(v), p99Cell(v.UsefulP99)}
			}
			b.row(append(append([]any{v.Name, clientCell(v.Client)}, judged...), orDash("%.2f×", v.PeakAmplification),
				orDash("%.1f %%", 100*v.WastedShare), orDash("%.1f %%", 100*v.UnusedShare), thousands(float64(v.Timeouts)), shedCell(v))...)
		}
		b.printf("\n")
	}
	writeVersus(b, am)
}

// usefulCell is a variant's useful goodput over the run: "1,020/s (96 %)".
func usefulCell(v *analysis.MetaVariant) string {
	if math.IsNaN(v.Useful) {
		return "-"
	}
	return fmt.Sprintf("%s/s (%.0f %%)", thousands(v.Useful), 100*v.UsefulShare)
}

// p99Cell is a latency, "-" where not recorded.
func p99Cell(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return duration(d)
}

// slotsText is "16 slots" (`-io-concurrency 16`), "1 slot".
func slotsText(n int) string {
	return result.Count(n, "slot") + fmt.Sprintf(" (`-io-concurrency %d`)", n)
}

// writeVersus is the default against each peer, per client model where
// both ran: recovery, useful goodput and useful p99 over the run, side
// by side, with whether the default did no worse.
func writeVersus(b *page, am *analysis.Metastable) {
	if len(am.Versus) == 0 {
		return
	}
	b.printf("### The default against the peer\n\n")
	b.printf("Each cell: the default's, then the peer's (the medians of their judged runs), and the default's over the peer's. "+
		"\"No later\", \"no less\" and \"no higher\" say whether the default did no worse in these runs; "+
		"less and higher count only beyond the noise of repeated runs: useful goodput %.0f %% below the peer's, useful p99 %.0f %% above it (results.md). "+
		"A variant the spike did not overload had nothing to recover from (counted as 0 s), one that never recovered is the later.\n\n",
		100*analysis.MetaUsefulMargin, 100*analysis.MetaP99Margin)
	b.table("client", "peer", "recovered in", "useful goodput (run)", "useful p99 (run)", "the default")
	for _, vs := range am.Versus {
		recovered := recoveryText(vs.Default) + " / " + recoveryText(vs.Other)
		if !vs.Judged {
			b.printf("| %s | %s | %s | | | not compared: %s |\n", vs.Model, vs.Peer, recovered, notComparedWhy(vs))
			continue
		}
		b.row(vs.Model, vs.Peer, recovered, usefulCell(vs.Default)+" / "+usefulCell(vs.Other)+ratio(vs.UsefulRatio),
			p99Cell(vs.Default.UsefulP99)+" / "+p99Cell(vs.Other.UsefulP99)+ratio(vs.P99Ratio), versusVerdict(vs))
	}
	b.printf("\n")
}

// recoveryText is a variant's recovery for the comparison: "0 s", "not
// overloaded", "never", "collapsed", "not judged".
func recoveryText(v *analysis.MetaVariant) string {
	switch {
	case v.JudgedRuns == 0:
		return "not judged"
	case v.Overloaded == 0:
		return "not overloaded"
	case v.Collapsed > 0:
		return "collapsed"
	}
	return recoveredCell(v)
}

func notComparedWhy(vs analysis.MetaVersus) string {
	switch {
	case vs.Default.JudgedRuns == 0 && vs.Other.JudgedRuns == 0:
		return "neither was judged"
	case vs.Default.JudgedRuns == 0:
		return "the default was not judged"
	}
	return "the peer was not judged"
}

// versusVerdict is "no later, no less, no higher" with a missed one in
// bold ("**later**").
func versusVerdict(vs analysis.MetaVersus) string {
	word := func(ok bool, yes, no string) string {
		if ok {
			return yes
		}
		return "**" + no + "**"
	}
	p99 := "p99 not recorded"
	if vs.P99Known {
		p99 = word(vs.P99NoHigher, "no higher", "higher")
	}
	return strings.Join([]string{word(vs.RecoveryNoLater, "no later", "later"), word(vs.UsefulNoLess, "no less", "less"), p99}, ", ")
}

// clientCell is a run's client side: "kept up (loader ≤ 41 %, 1,200
// conn waits)", or "**saturated**: the loader at 93 % of its CPU at 5 s"
// (then its run is not judged), or "not recorded".
func clientCell(c analysis.MetaClient) string {
	waits := ""
	if c.ConnWaits > 0 {
		waits = ", " + thousands(float64(c.ConnWaits)) + " waits for a connection"
	}
	switch {
	case !c.Known:
		return "not recorded: not judged"
	case c.CPUBound:
		cpus := "CPU"
		if c.CPUs != 1 {
			cpus = fmt.Sprintf("%d CPUs", c.CPUs)
		}
		return fmt.Sprintf("**saturated**: the loader at %.0f %% of its %s at %g s (limit %.0f %%): not judged",
			100*c.PeakShare, cpus, c.PeakAt, 100*plan.MetaClientShare)
	case c.Saturated:
		return fmt.Sprintf("**saturated**: attempts on free connections over %v late (p99) in %d intervals: not judged", plan.MetaOwnLag, c.OwnLate)
	}
	return fmt.Sprintf("kept up (loader ≤ %.0f %%%s)", 100*c.PeakShare, waits)
}

// writeClientSide is the table of what the loader was measured to hold
// before the storms, one row per client model.
func writeClientSide(b *page, c *result.Comparison, am *analysis.Metastable) {
	cs, p := c.Metastable.ClientSide, c.Plan.Metastable
	if len(am.Fits) == 0 {
		return
	}
	server := ""
	if cs.ServerAnswered > 0 && cs.ServerTimedOut > 0 {
		server = fmt.Sprintf("; kvserver's side of them: %s and %s", cpuMicros(cs.ServerAnswered), cpuMicros(cs.ServerTimedOut))
	}
	b.printf("Before the runs, at %s attempts/s, one attempt cost the loader %s of CPU where kvserver answered at once, and %s where it never answered "+
		"(the attempt timed out, closed its connection and the retry opened another)%s. "+
		"A model's worst second is the spike's rate times the most attempts it makes per first try, each at the dearer cost; "+
		"a model whose worst second takes over %.0f %% of the loader's %d CPUs may still be judged, run by run, where its storm stayed smaller.\n\n",
		thousands(cs.Rate), cpuMicros(cs.Answered), cpuMicros(cs.TimedOut), server, 100*plan.MetaClientShare, cs.LoaderCPUs)
	if !p.SizeStorms {
		b.table("client", "worst second (attempts/s)", "loader CPUs it takes", "fits?")
		for _, f := range am.Fits {
			b.row(f.Model, thousands(f.Attempts), fmt.Sprintf("%.2f (%.0f %%)", f.CPUs, 100*f.Share), f.Text())
		}
		b.printf("\n")
		return
	}
	b.printf("The storms were sized to the loader (no `-store-slots`): a model whose worst second in front of the store of %d slots fits keeps it. "+
		"One whose worst second does not runs in front of a store of fewer slots, whose spike is as many times smaller: "+
		"the most slots with which it would fit, rounded down to a power of two so that models share stores (1 at the least), "+
		"with direct's saturation searched in front of it. One that still does not fit there goes down again.\n\n", p.Slots())
	b.table("client", fmt.Sprintf("worst second in front of %d slots (attempts/s)", p.Slots()), "loader CPUs it takes", "fits?", "ran in front of", "its worst second there")
	for _, f := range am.Fits {
		store, there := "not run", "not run"
		if f.Slots > 0 {
			store, there = slotsText(f.Slots), "-"
		}
		if g := f.There; g != nil {
			there = fmt.Sprintf("%s attempts/s, %.2f loader CPUs (%.0f %%)", thousands(g.Attempts), g.CPUs, 100*g.Share)
		}
		b.row(f.Model, thousands(f.Attempts), fmt.Sprintf("%.2f (%.0f %%)", f.CPUs, 100*f.Share), yesNo(f.Fits, "yes"), store, there)
	}
	b.printf("\n")
	writeStores(b, c.Metastable)
}

// writeStores is each store the runs ran in front of: its slots, direct's
// saturation there and the rates asked of it.
func writeStores(b *page, m *result.Metastable) {
	b.table("store", "client models", "direct's saturation (GET/s)", "base (GET/s)", "spike (GET/s)")
	for _, size := range m.Sizes {
		b.row(slotsText(size.Slots), orNone(size.Models), thousands(size.Saturation), thousands(size.BaseRate), thousands(size.SpikeRate))
	}
	b.printf("\n")
}

func recoveredCell(v *analysis.MetaVariant) string {
	return timesCell(v.Recovered, v.JudgedRuns, v.Recovery)
}

// timesCell is "2 s", "2 s (1 s–3 s)" over repeats, "never", or "2 s (2
// of 3 runs)" where only n of runs did.
func timesCell(n, runs int, e analysis.Estimate) string {
	if n == 0 {
		return "never"
	}
	s := estCell(e, secsOf)
	if n < runs {
		s += fmt.Sprintf(" (%d of %d runs)", n, runs)
	}
	return s
}

// countCell is "yes", "no" or "2 of 3 runs".
func countCell(n, runs int) string {
	switch {
	case n == runs:
		return "yes"
	case n == 0:
		return "no"
	}
	return fmt.Sprintf("%d of %d runs", n, runs)
}

func collapsedCell(v *analysis.MetaVariant) string {
	switch {
	case v.Collapsed == 0:
		return "no"
	case v.JudgedRuns == 1:
		return "**yes**"
	}
	return fmt.Sprintf("**yes** (%d of %d runs)", v.Collapsed, v.JudgedRuns)
}

// shedCell is the loader's 503s with kvserver's reasons: "1,200
// (deadline 1,100, full 100)".
func shedCell(v *analysis.MetaVariant) string {
	s := thousands(float64(v.Shed))
	reasons := slices.Sorted(maps.Keys(v.ServerShed))
	var parts []string
	for _, r := range reasons {
		if n := v.ServerShed[r]; n > 0 {
			parts = append(parts, r+" "+thousands(float64(n)))
		}
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// metastableSentences are the findings of the metastable runs: per
// client model, which variants recovered (and in how long) and which
// collapsed; then the recommended candidates.
func metastableSentences(c *result.Comparison, am *analysis.Metastable) []string {
	if am == nil || c.Plan.Metastable == nil {
		return nil
	}
	t := c.Plan.Metastable.Timing
	var out []string
	for _, mm := range am.Models {
		by := map[analysis.Verdict][]string{}
		for _, v := range mm.Variants {
			name := v.Name
			if v.Outcome == analysis.SpikeRecovered {
				name += fmt.Sprintf(" (in %s)", recoveredCell(v))
			}
			by[v.Outcome] = append(by[v.Outcome], name)
		}
		parts := clauses([]string{"recovered: ", "collapsed (useful goodput under half the base rate to the end): ", "neither recovered nor collapsed: ",
			"not overloaded by the spike (nothing to recover from): ", "not judged, the client side saturated or unrecorded: "},
			by[analysis.SpikeRecovered], by[analysis.SpikeCollapsed], by[analysis.SpikeNeither], by[analysis.SpikeCalm], by[analysis.SpikeNotJudged])
		out = append(out, fmt.Sprintf("With `%s` clients after a %g× spike: %s.", mm.Name, t.Factor, strings.Join(parts, "; ")))
	}
	crit := fmt.Sprintf("A candidate was overloaded by the spike and had its useful goodput back to %.0f %% of the base rate, held for %s, within %s of its end under every retrying client (%s), with the useful p99 back under %v as fast.",
		100*plan.MetaTarget, secs(t.Hold), secs(t.Recovery), strings.Join(am.RecommendModels, ", "), plan.MetaP99)
	if len(am.Recommended) == 0 {
		out = append(out, "No configuration is a recommended candidate. "+crit)
	} else {
		out = append(out, fmt.Sprintf("Recommended candidates: **%s**. %s", strings.Join(am.Recommended, "**, **"), crit))
	}
	return append(out, versusSentences(am)...)
}

// versusSentences say, per peer, under how many client models the
// default recovered no later, kept no less useful goodput and had no
// higher useful p99 over the run than the peer, of those where both
// were judged, and where it did worse.
func versusSentences(am *analysis.Metastable) []string {
	var peers []string
	byPeer := map[string][]analysis.MetaVersus{}
	for _, vs := range am.Versus {
		if byPeer[vs.Peer] == nil {
			peers = append(peers, vs.Peer)
		}
		byPeer[vs.Peer] = append(byPeer[vs.Peer], vs)
	}
	var out []string
	for _, peer := range peers {
		var judged, unjudged, later, less, higher []string
		where := ""
		for _, vs := range byPeer[peer] {
			name := "`" + vs.Model + "`"
			if !vs.Judged {
				unjudged = append(unjudged, name)
				continue
			}
			judged = append(judged, name)
			if !vs.P99Known {
				where = " (where recorded)"
			}
			if !vs.RecoveryNoLater {
				later = append(later, name)
			}
			if !vs.UsefulNoLess {
				less = append(less, name)
			}
			if vs.P99Known && !vs.P99NoHigher {
				higher = append(higher, name)
			}
		}
		s := fmt.Sprintf("The default against `%s`, both judged under %s: ", peer, orNone(judged))
		if worse := clauses([]string{"**recovered later** under ", "**kept less useful goodput** under ", "**had a higher useful p99" + where + "** under "}, later, less, higher); len(worse) > 0 {
			s += strings.Join(worse, "; ") + ", no worse otherwise"
		} else {
			s += "recovered no later, with no less useful goodput and no higher useful p99 over the run" + where + ", under every one"
		}
		if len(unjudged) > 0 {
			s += "; not compared under " + strings.Join(unjudged, ", ")
		}
		out = append(out, s+".")
	}
	return out
}

// clauses are each head followed by its names, of the heads that have
// any: "recovered: fifo, lifo".
func clauses(heads []string, names ...[]string) []string {
	var out []string
	for i, ns := range names {
		if len(ns) > 0 {
			out = append(out, heads[i]+strings.Join(ns, ", "))
		}
	}
	return out
}

// metastableCharts draws useful goodput per interval, one chart per
// client model (its Lines), the spike shaded.
func metastableCharts(c *result.Comparison, am *analysis.Metastable, save func(name, title string) func(chart.Chart, error)) {
	if am == nil {
		return
	}
	t := c.Plan.Metastable.Timing
	for _, mm := range am.Models {
		if len(mm.Lines) == 0 {
			continue
		}
		title := fmt.Sprintf("Useful goodput through a %g× spike, clients: %s", t.Factor, mm.Name)
		spec := chart.Spec{Title: title, XLabel: "time since the run started (s)", YLabel: "useful goodput (answers/s)",
			Caption: fmt.Sprintf("Answers to clients still waiting, per %s, one line per variant; the shaded span is the spike. The base rate is %s/s: a line that comes back to it recovered, one that stays low after the spike is held down by its clients' retries.",
				secs(t.Interval), thousands(mm.BaseRate))}
		save(plan.Slug(c.Metastable.Workload)+"-metastable-"+mm.Name+".svg", title)(chart.TimeSeries(spec, mm.Lines, []chart.Mark{{From: t.Base.Seconds(), To: t.SpikeEnd().Seconds(), Label: fmt.Sprintf("spike %g×", t.Factor)}}))
	}
}
