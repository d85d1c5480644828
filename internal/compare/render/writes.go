package render

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/chart"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// HeadWrites is the writes preset's section.
const HeadWrites = "## Reads under a write flood"

// writesSummary is the report's first paragraph under the writes preset:
// what ran.
func writesSummary(c *result.Comparison) string {
	o, w := c.Options, c.Plan.Writes
	mode := "full"
	if o.Quick {
		mode = "quick"
	}
	return fmt.Sprintf("Variants %s, each %s, interleaved (every variant's first run, then every one's second, …) so that the machine's drift falls on all alike. Mode: %s. "+
		"Every run started a fresh kvserver on a copy (on disk before the start) of one store filled with %s ids of %d B, left to compact until its server idled; "+
		"each kvserver, once idle itself, served a closed loop of GETs for %v that nobody measured, so that the run found its block cache filled.\n\n"+
		"Per run, at once:\n\n"+
		"- a read stream: %s GET/s over the filled ids (an open model: each sent on schedule, whatever the answers), for %s;\n"+
		"- a write flood from %s to %s: a closed loop of %d connections, each PUTting its next %s value as soon as its last was answered, over %s ids (half of them fresh);\n"+
		"- kvserver's `/metrics` read once %s: Pebble's write stalls, L0 sublevels and memtable, and the admission's series where kvserver serves them.",
		strings.Join(variantNames(c), ", "), timesText(w.Repeat), mode, thousands(float64(o.Keys)), o.ValueSize, c.Options.StepTiming().WarmUp,
		thousands(w.ReadRate), secs(w.Duration), secs(w.FloodAt), secs(w.FloodEnd()), w.FloodConns, bytesText(w.FloodValueSize), thousands(float64(w.FloodKeys)), perInterval(w.Interval))
}

// timesText is "once", "twice", "3 times".
func timesText(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// bytesText is a value size: "16 KiB", "500 B".
func bytesText(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

// writeWrites writes the writes section: how to read it, the figures of
// each variant, the targets judged against direct, and every run.
func writeWrites(b *page, c *result.Comparison, a *analysis.Analysis) {
	aw, p := a.Writes, c.Plan.Writes
	if aw == nil || p == nil {
		return
	}
	b.printf("%s\n\n", HeadWrites)
	if len(aw.Variants) == 0 {
		b.printf("No run finished (see the failed steps).\n\n")
		return
	}
	b.printf("Each figure is the median over a variant's runs, with their range in brackets. "+
		"Reads refused are the read stream's 503s, and their share of its answers. "+
		"The flood's seconds are the read stream's %d intervals from %s to %s. "+
		"Of them, the worst for reads answered is the one with the fewest (2xx, or 404), and the worst for the p99 the one with the highest corrected read p99. "+
		"Write goodput is the flood's 201s a second, from its start to its last answer. "+
		"Until absorbed, the same 201s count to the first second after the flood with L0 back under the point at which compactions out of it start (as kvserver says; %d sublevels or fewer where it does not), or as low as before the flood. "+
		"A store that took writes faster than it compacts them pays for them there; kvserver's metrics are read up to %s after the read stream for it. "+
		"Stalls and L0 sublevels are Pebble's, as kvserver serves them; seconds paced are those in which its admission held writes to the store's pace. "+
		"\"-\" marks a figure kvserver does not serve.\n\n",
		aw.FloodSeconds, secs(p.FloodAt), secs(p.FloodEnd()), result.L0Quiet, secs(plan.WritesAbsorbWithin))
	b.table("variant", "reads refused (503)", "share", "reads answered/s, worst flood second", "read p99, worst flood second", "read p99, whole run", "write goodput (201/s)",
		"write goodput until absorbed", "writes refused", "write p99", "Pebble write stalls", "stall seconds", "L0 sublevels, most", "seconds paced", "runs")
	for _, v := range aw.Variants {
		runs := fmt.Sprint(len(v.Runs))
		if v.NotJudged > 0 {
			runs += fmt.Sprintf(", %d loader-bound", v.NotJudged)
		}
		b.row(v.Name,
			estCell(v.ReadsRefused, thousands), estCell(v.RefusedShare, pctCell), estCell(v.WorstReadRate, thousands),
			estCell(v.WorstReadP99, msCell), estCell(v.ReadP99, msCell), estCell(v.WriteGoodput, thousands),
			absorbedCell(v), estCell(v.WritesRefused, thousands), estCell(v.WriteP99, msCell), estCell(v.Stalls, thousands),
			estCell(v.StallSeconds, oneDecimal), estCell(v.L0Max, thousands), estCell(v.PacedSeconds, thousands), runs)
	}
	b.printf("\n")
	writeWritesTargets(b, c, aw)
	writeWritesRuns(b, c, aw)
}

// writeWritesTargets is the table of each variant against direct by the
// writes targets.
func writeWritesTargets(b *page, c *result.Comparison, aw *analysis.Writes) {
	b.printf("### Against direct\n\n")
	if len(aw.Judgements) == 0 {
		b.printf("No variant but direct ran.\n\n")
		return
	}
	b.printf("Each variant's run is judged against direct's run of the same repetition, by the targets kvserver's default is held to. "+
		"It refuses no more reads than direct, and no more than %.1f %% of them where direct refuses none. "+
		"Its read p99 stays within %.1f× direct's in every flood second but %.0f %% of them (of 20, 2 may pass). "+
		"Pebble never stalls its writes, and its write goodput is at least %.1f× direct's. "+
		"A target is met where every judged pair met it. "+
		"A pair in which either read stream was the loader's limit (its own sends late, its CPU at %.0f %% or more, or behind with connections free) is not judged.\n\n",
		100*plan.WritesRefusedShare, plan.WritesP99Factor, 100*(1-plan.WritesP99Seconds), plan.WritesGoodputShare, 100*c.Criteria.LoaderBusy)
	b.table("variant", "reads refused ≤ direct's", fmt.Sprintf("read p99 ≤ %.1f× direct's, second by second", plan.WritesP99Factor), "no Pebble write stall",
		fmt.Sprintf("write goodput ≥ %.1f× direct's", plan.WritesGoodputShare))
	for _, j := range aw.Judgements {
		p99 := targetCell(j.P99)
		if j.P99.Seconds > 0 {
			p99 += fmt.Sprintf("; %d of %d flood seconds over", j.P99.Exceeded, j.P99.Seconds) + stalledOver(j.P99)
		}
		b.row(j.Variant, targetCell(j.Refused), p99, targetCell(j.Stalls), targetCell(j.Goodput))
	}
	b.printf("\n")
	if n := aw.DirectNoise; n.Seconds > 0 {
		b.printf("By the same rule, `direct`'s runs against each other: %d of %d flood seconds over%s.\n\n", n.Exceeded, n.Seconds, stalledOver(n))
	}
}

// targetCell is a target's verdict: "met (2 of 2)", "**not met** (1 of
// 2)", "not judged: loader-bound".
func targetCell(t analysis.WritesTarget) string {
	if t.Verdict == analysis.TargetNotJudged {
		return "not judged: " + string(t.NotJudged)
	}
	return fmt.Sprintf("%s (%d of %d)", verdictWord(t), t.Met, t.Of)
}

// writeWritesRuns is the table of every run, in the order they ran.
func writeWritesRuns(b *page, c *result.Comparison, aw *analysis.Writes) {
	b.printf("### Runs\n\n")
	b.printf("In the order they ran; \"at\" is the interval's start, in seconds since the read stream's. Admission refusals are kvserver's own count by class, where it serves one. " +
		"The loader's CPU is its whole process's, the read stream's and the flood's together. Each run's files are under its folder (the flood's in `flood/`).\n\n")
	b.table("variant", "run", "reads refused", "reads answered/s, worst flood second", "read p99, worst flood second", "read p99", "write goodput", "until absorbed", "writes refused", "stalls",
		"L0 most", "admission refused: reads / writes", "loader", "folder")
	figures := map[*result.WritesRun]*analysis.WritesFigures{}
	for _, v := range aw.Variants {
		for _, f := range v.Runs {
			figures[f.Run] = f
		}
	}
	for _, r := range c.Writes.Runs {
		f := figures[r]
		if f == nil {
			continue
		}
		stalls := "-"
		if !math.IsNaN(f.Stalls) {
			stalls = fmt.Sprintf("%s (%.1f s)", thousands(f.Stalls), f.StallSeconds)
		}
		admission := "-"
		if f.AdmissionRejected != nil {
			admission = thousands(f.AdmissionRejected["read"]) + " / " + thousands(f.AdmissionRejected["write"])
		}
		b.row(r.Variant, r.Repeat, thousands(float64(f.ReadsRefused))+" ("+pctCell(f.RefusedShare)+")", thousandsOrDash(f.WorstReadRate)+" (at "+orDash("%g s", f.WorstReadAt)+")",
			duration(f.WorstReadP99)+" (at "+orDash("%g s", f.WorstP99At)+")", duration(f.ReadP99), thousands(f.WriteGoodput), absorbedRunCell(f), thousands(float64(f.WritesRefused)),
			stalls, thousandsOrDash(f.L0Max), admission, loaderCell(f, c.Criteria.LoaderBusy), "`"+r.Dir+"`")
	}
	b.printf("\n")
}

// absorbedCell is a variant's write goodput until its store absorbed the
// flood, with how many of its runs saw that where not all did.
func absorbedCell(v *analysis.WritesVariant) string {
	s := estCell(v.AbsorbedGoodput, thousands)
	if n := v.AbsorbedGoodput.N; n > 0 && n < len(v.Runs) {
		s += fmt.Sprintf(" in %d of %d runs", n, len(v.Runs))
	}
	return s
}

// absorbedRunCell is a run's write goodput until its store absorbed the
// flood, and when: "1,702 (at 34 s)"; "-" where its samples do not say.
func absorbedRunCell(f *analysis.WritesFigures) string {
	if math.IsNaN(f.AbsorbedGoodput) {
		return "-"
	}
	return fmt.Sprintf("%s (at %.0f s)", thousands(f.AbsorbedGoodput), f.AbsorbedAt)
}

// stalledOver is how many of a p99 target's seconds over fell in seconds
// in which Pebble held direct's writes back for nearly all of the second,
// and how many of the judged seconds were such: ", 6 of them while
// Pebble held direct's writes back for 90 % of the second or more (14 of
// the 40 were such)"; "" where none was.
func stalledOver(t analysis.WritesTarget) string {
	if t.SecondsStalled == 0 {
		return ""
	}
	return fmt.Sprintf(", %d of them while Pebble held direct's writes back for %.0f %% of the second or more (%d of the %d were such)",
		t.ExceededStalled, 100*analysis.StalledShare, t.SecondsStalled, t.Seconds)
}

// loaderCell is a run's loader: "kept up (loader ≤ 41 %)", or why it was
// the limit, and so not judged.
func loaderCell(f *analysis.WritesFigures, busy float64) string {
	w := f.Why
	switch {
	case !f.LoaderBound:
		return fmt.Sprintf("kept up (loader ≤ %.0f %%)", 100*w.PeakShare)
	case w.FellBehind:
		return fmt.Sprintf("**loader-bound**: sent %s of %s GET/s with connections free: not judged", thousands(w.SendRate), thousands(w.Asked))
	case w.Busy > 0:
		return fmt.Sprintf("**loader-bound**: its CPU at %.0f %% or more in %d of %d seconds (at most %.0f %%): not judged", 100*busy, w.Busy, w.Judged, 100*w.PeakShare)
	}
	return fmt.Sprintf("**loader-bound**: its own sends late in %d of %d seconds: not judged", w.OwnLate, w.Judged)
}

// estCell is an estimate: "12 (9–15)", its median alone where its runs
// agree or one ran, "-" where none gave it.
func estCell(e analysis.Estimate, format func(float64) string) string {
	if e.N == 0 {
		return "-"
	}
	s := format(e.Median)
	if r := span(e.Lo, e.Hi, format); r != s {
		s += " (" + r + ")"
	}
	return s
}

func msCell(x float64) string { return duration(time.Duration(x * float64(time.Millisecond))) }

func oneDecimal(x float64) string { return fmt.Sprintf("%.1f", x) }

func thousandsOrDash(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return thousands(x)
}

// writesSentences are the findings of a writes comparison: direct's
// figures, then for each variant but direct the targets met and missed
// against it, for its reads and for its writes.
func writesSentences(aw *analysis.Writes) []string {
	if aw == nil {
		return nil
	}
	base := aw.Variant(plan.Baseline)
	var out []string
	if base != nil {
		out = append(out, fmt.Sprintf("Under the write flood, `direct` (the baseline) refused %s reads and answered %s a second in its worst flood second, with a read p99 of %s in its worst; Pebble stalled its writes %s times.",
			estCell(base.ReadsRefused, thousands), estCell(base.WorstReadRate, thousands), estCell(base.WorstReadP99, msCell), estCell(base.Stalls, thousands)))
		if n := aw.DirectNoise; n.Seconds > 0 {
			out = append(out, fmt.Sprintf("`direct` against itself, each run's read p99 against its other runs', second by second: %d of %d flood seconds over %.1f×. Nothing differs there but the run: a variant's count near it is this machine's noise.",
				n.Exceeded, n.Seconds, plan.WritesP99Factor))
		}
	}
	for _, j := range aw.Judgements {
		v := aw.Variant(j.Variant)
		who := "`" + j.Variant + "`"
		if j.Variant == plan.Default {
			who = "kvserver's default"
		}
		judged := ""
		if j.Judged < j.Pairs {
			judged = fmt.Sprintf(" Judged on %d of %d repetitions: in the others a loader was the limit.", j.Judged, j.Pairs)
		}
		out = append(out,
			fmt.Sprintf("%s against direct, reads: refused %s, %s of them, %s; p99 within %.1f× direct's second by second, %s.%s",
				who, estCell(v.ReadsRefused, thousands), pctCell(v.RefusedShare.Median), verdictWord(j.Refused), plan.WritesP99Factor, verdictWord(j.P99)+p99Over(j.P99), judged),
			fmt.Sprintf("%s against direct, writes: Pebble stalled them %s times, %s; goodput %s a second against direct's %s, %s.%s",
				who, estCell(v.Stalls, thousands), verdictWord(j.Stalls), estCell(v.WriteGoodput, thousands), baseGoodput(base), verdictWord(j.Goodput), absorbedSentence(v, base, j)))
	}
	return out
}

// absorbedSentence compares v's write goodput until its store absorbed
// the flood with direct's, pair by pair: " Until each store had absorbed
// its writes: 1,750 a second against direct's 1,700 (paired 1.02, 0.97)."
// "" where no pair saw both stores absorb it.
func absorbedSentence(v, base *analysis.WritesVariant, j *analysis.WritesJudgement) string {
	if base == nil || len(j.Absorbed) == 0 {
		return ""
	}
	paired := each(j.Absorbed, func(r float64) string { return fmt.Sprintf("%.2f", r) })
	return fmt.Sprintf(" Until each store had absorbed its writes: %s a second against direct's %s (paired %s).",
		estCell(v.AbsorbedGoodput, thousands), estCell(base.AbsorbedGoodput, thousands), strings.Join(paired, ", "))
}

// baseGoodput is direct's median write goodput, "-" where it has none.
func baseGoodput(base *analysis.WritesVariant) string {
	if base == nil {
		return "-"
	}
	return estCell(base.WriteGoodput, thousands)
}

// verdictWord is a target's verdict in a sentence: "met", "**not
// met**", "not judged (loader-bound)".
func verdictWord(t analysis.WritesTarget) string {
	switch t.Verdict {
	case analysis.TargetMet:
		return "met"
	case analysis.TargetNotMet:
		return "**not met**"
	}
	return "not judged (" + string(t.NotJudged) + ")"
}

// p99Over is how many flood seconds passed the p99 target: " (3 of 40
// flood seconds over)"; "" where none was judged.
func p99Over(t analysis.WritesTarget) string {
	if t.Seconds == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of %d flood seconds over)", t.Exceeded, t.Seconds)
}

// writesCharts draws, one line per variant (the median of its runs,
// second by second), the read p99, the reads and the writes answered a
// second, and Pebble's L0 sublevels, the flood shaded.
func writesCharts(c *result.Comparison, a *analysis.Analysis, save func(name, title string) func(chart.Chart, error)) {
	aw, p := a.Writes, c.Plan.Writes
	if aw == nil || p == nil {
		return
	}
	flood := []chart.Mark{{From: p.FloodAt.Seconds(), To: p.FloodEnd().Seconds(), Label: fmt.Sprintf("flood: %d writers × %s", p.FloodConns, bytesText(p.FloodValueSize))}}
	per := perInterval(p.Interval) + ", one line per variant (the median of its runs, interval by interval); the shaded span is the flood"
	for _, ch := range []struct {
		name, title, ylabel, caption string
		lines                        []analysis.Line
	}{
		{"writes-read-p99.svg", "Read p99 through the write flood", "corrected read p99 (ms)",
			"The read stream's corrected p99 " + per + ". A line that climbs with the flood is reads waiting behind writes.", aw.ReadP99},
		{"writes-reads.svg", "Reads answered through the write flood", "reads answered (GET/s)",
			fmt.Sprintf("Reads answered (2xx, 404) %s. The read stream asks %s GET/s; a line below it is reads refused or still waiting.", per, thousands(p.ReadRate)), aw.ReadOK},
		{"writes-writes.svg", "Writes answered during the write flood", "writes answered (PUT/s)",
			"The flood's PUTs answered 201 " + per + ". Pebble's write stalls show as seconds near 0.", aw.WriteOK},
		{"writes-l0.svg", "Pebble's L0 sublevels through the write flood", "L0 sublevels",
			"kvserver's kvserver_pebble_l0_sublevels, read once " + per + ". L0 grows while flushes outrun compactions, and Pebble stalls writes past its threshold.", aw.L0Sublevels},
	} {
		if len(ch.lines) == 0 {
			continue
		}
		spec := chart.Spec{Title: ch.title, XLabel: "time since the read stream started (s)", YLabel: ch.ylabel, Caption: ch.caption}
		save(ch.name, ch.title)(chart.TimeSeries(spec, ch.lines, flood))
	}
}

// perInterval is "per second", or "per 500 ms" for another interval.
func perInterval(d time.Duration) string {
	if d == time.Second {
		return "per second"
	}
	return "per " + duration(d)
}
