package render

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// runSummary is the report's first paragraph: what was run.
func runSummary(c *result.Comparison, a *analysis.Analysis) string {
	if c.Plan.Writes != nil {
		return writesSummary(c)
	}
	o, p := c.Options, c.Plan
	t := o.StepTiming()
	var steps []string
	variants := variantNames(c)
	wls := each(c.Workloads, func(wr *result.WorkloadResult) string { return "`" + wr.Workload + "`" })
	if o.Rate > 0 {
		steps = append(steps, fmt.Sprintf("direct's saturation taken as %s req/s (-rate)", thousands(o.Rate)))
	}
	if p.SaturateAll || o.Rate <= 0 {
		anchor := ""
		if t.AnchorRounds > 0 {
			anchor = fmt.Sprintf(", each after a closed loop of %d × %v on its own server (%d connections), which bounded it. The ramp started at %.0f %% of that loop's throughput and asked no more until a step there held",
				t.AnchorRounds, t.SatStep, plan.MinConns, 100*plan.AnchorShare)
		}
		steps = append(steps, fmt.Sprintf("a search for %s saturation, %d× (steps of %v; sustained: corrected p99 ≤ %v, < 0.1 %% errors, every request sent, ≥ 99 %% of the asked rate)%s",
			whose(p.SaturateAll), o.Repeat, t.SatStep, o.SLO, anchor))
	}
	if anyVariant(c, func(v *result.VariantResult) bool { return v.Closed != nil }) {
		steps = append(steps, fmt.Sprintf("%s closed loop (each connection sends its next request when the last is answered; %d × %v on the server of its last search, once idle), the cross-check of the saturation", whose(p.ClosedAll), t.ClosedRounds, t.Closed))
	}
	if p.Fixed {
		steps = append(steps, fmt.Sprintf("a fixed-rate step of %v at %.0f %% of %s", t.Fixed, 100*plan.FixedShare, refName(p)))
	}
	if p.Overload {
		stopped := "" // where a variant's recovery probes stopped at the first normal one
		if a.ProbesStopped {
			stopped = ", stopping at the first normal one"
		}
		steps = append(steps, fmt.Sprintf("an overload step of %v at %g× direct's saturation over up to %d connections, between probes at %.0f %% of %s (%v before, %d × %v after%s)",
			t.Overload, p.OverloadFactor, o.MaxConns, 100*plan.ProbeShare, refName(p), t.ProbeBaseline, t.RecoverProbes, t.ProbeLength, stopped))
	}
	switch {
	case slices.ContainsFunc(c.Workloads, func(wr *result.WorkloadResult) bool { return wr.Steps != nil }):
		steps = append(steps, connsPlanText(c))
	case sizedConns(c):
		steps = append(steps, fmt.Sprintf("the fixed-rate, overload and closed-loop steps start with the connections Little's law asks for: %d × the rate × the answer time of the search's passing step nearest that rate (its p99 from the send; for the closed loop, its median), at least %d, at most %d",
			plan.LittleHeadroom, plan.MinConns, o.MaxConns))
	}
	if len(p.Counts) > 0 {
		steps = append(steps, fmt.Sprintf("each variant with kvserver on %s of its set in turn (the lowest-numbered)", countsText(p.Counts)))
	}
	if p.Profiles {
		steps = append(steps, fmt.Sprintf("a separate profile run per variant (%d s captures)", t.ProfileSeconds))
	}
	if m := c.Metastable; m != nil && len(m.Runs) > 0 {
		steps = append(steps, fmt.Sprintf("then every variant under every client model through a spike from %s to %s req/s (below)",
			thousands(m.BaseRate), thousands(m.SpikeRate)))
	}
	mode := "full"
	if o.Quick {
		mode = "quick (short steps, one repeat: the numbers are indicative)"
	}
	warm := ""
	if t.WarmUp > 0 {
		warm = fmt.Sprintf(" Once idle, each then served a closed loop of GETs for %v over %d connections, measured by nobody, so that its first measured step found its block cache filled (a fresh server's first reads come from a cold cache)", t.WarmUp, plan.MinConns)
		if m := c.Metastable; m != nil && len(m.Runs) > 0 {
			warm += "; the metastable runs start cold"
		}
		warm += "."
	}
	return fmt.Sprintf("Variants %s; workloads %s over %s ids with %d B values. Mode: %s. Every kvserver started on a fresh copy (on disk before the start) of one filled store. That store was left to compact until its server idled, and each server was measured only once idle itself.%s\n\nPer workload:\n\n- %s.",
		strings.Join(variants, ", "), strings.Join(wls, ", "), thousands(float64(o.Keys)), o.ValueSize, mode, warm, strings.Join(steps, ";\n- "))
}

func whose(all bool) string {
	if all {
		return "every variant's"
	}
	return "direct's"
}

// connsPlanText says, once, over how many connections every variant of
// each step ran: the plan made before the first of them.
func connsPlanText(c *result.Comparison) string {
	load := func(what string, l *plan.Load) string {
		if l == nil {
			return ""
		}
		s := fmt.Sprintf("%s %d", what, l.Conns)
		if l.MaxConns > l.Conns {
			s += fmt.Sprintf(" (up to %d where every one is busy)", l.MaxConns)
		}
		return s
	}
	var per []string
	for _, wr := range c.Workloads {
		if s := wr.Steps; s != nil {
			parts := []string{load("the fixed-rate step", s.Fixed), load("the full-load round", s.FullLoad), load("the overload step", s.Overload)}
			per = append(per, fmt.Sprintf("`%s`: %s", wr.Workload, strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), ", ")))
		}
	}
	return fmt.Sprintf("every variant of a step over the same connections, planned once direct's search was done and before the first variant's step. Little's law sized them: %d × the step's rate × direct's answer time at the passing search step nearest that rate (its p99 from the send; for the full-load round, its median at the lowest rate), at least %d. %s",
		plan.LittleHeadroom, plan.MinConns, strings.Join(per, "; "))
}

// refName names the rate the fixed-rate step, the profile run and the
// probes take their share of, for the report.
func refName(p *plan.Plan) string {
	if p.OwnRates {
		return "each variant's own saturation"
	}
	return "direct's saturation"
}

// sizedConns tells whether c's steps recorded the connections they
// started with, which Little's law sized (where they were recorded).
func sizedConns(c *result.Comparison) bool {
	return anyVariant(c, func(v *result.VariantResult) bool {
		return v.Fixed != nil && v.Fixed.ConnsStart > 0 || v.Overload != nil && v.Overload.ConnsStart > 0 || v.Closed != nil
	})
}

func anyVariant(c *result.Comparison, is func(*result.VariantResult) bool) bool {
	return slices.ContainsFunc(c.Workloads, func(wr *result.WorkloadResult) bool { return slices.ContainsFunc(wr.Variants, is) })
}

func writeEnvironment(b *page, c *result.Comparison, a *analysis.Analysis, renderNotes []string) {
	e := c.Env
	b.printf("%s\n\n| | |\n|---|---|\n", HeadEnvironment)
	b.printf("| CPU | %s, %d cores |\n", e.CPUModel, e.Cores)
	b.printf("| Go | %s |\n", e.GoVersion)
	b.printf("| kvserver | version %s (from `kvserver_config_info`) |\n", orUnknown(e.KvserverVersion))
	b.printf("| CPUs | %s |\n", cpusRow(e))
	b.printf("| load average | %s at the start, %s at the end |\n", e.LoadStart, orUnknown(e.LoadEnd))
	b.printf("| started, finished | %s, %s (%v) |\n", e.Started.Format(time.RFC3339), e.Finished.Format(time.RFC3339), e.Finished.Sub(e.Started).Round(time.Second))
	if c.Options.QuietWait > 0 {
		b.printf("| quiet check | before each step, up to %v of waiting while other processes kept more than %.1f cores busy (measured from /proc/stat, since the load average still counts this comparison's previous step); notes below |\n", c.Options.QuietWait, plan.BusyCores)
	} else {
		b.printf("| quiet check | off (-quiet-wait 0) |\n")
	}
	b.printf("| profiling | mutex and block sampling (`%s`) only in the separate profile runs; timing runs without |\n", strings.Join(plan.ProfileArgs, " "))
	b.printf("\n")
	notes := append(slices.Clone(c.Notes), renderNotes...)
	for _, n := range notes {
		b.printf("- %s\n", n)
	}
	if len(notes) > 0 {
		b.printf("\n")
	}
	writeLoader(b, c, a.LoaderKept)
}

// writeLoader is the loader's table: whether it kept up with each step
// (kept of them did).
func writeLoader(b *page, c *result.Comparison, kept int) {
	b.printf("%s\n\n", HeadLoader)
	if len(c.Loader) == 0 {
		b.printf("No step finished.\n\n")
		return
	}
	b.printf("A step counts as kept up when the loader sent at least 99 %% of the asked rate on schedule and, at the fixed rate, the backlog did not grow. "+
		"The backlog grew when requests in flight or the send lag's p99 rose by more than a tenth of the SLO from the step's earlier half to its later half (the rule of the searches). "+
		"A validation counts as its search judged it (nothing left unsent, the backlog level). %d of %d steps kept up.", kept, len(c.Loader))
	if slices.ContainsFunc(c.Loader, func(l result.LoaderCheck) bool { return l.Scheduled }) {
		b.printf(" A run with a spike asks its schedule's mean rate; under clients that time out and retry, the schedule is of first tries, and those count (sent, or refused by the client's own throttle), not the clients' retries on top of them.")
	}
	if slices.ContainsFunc(c.Loader, func(l result.LoaderCheck) bool { return l.Loader.CPUs > 0 }) {
		b.printf(" CPU shares are of each side's own CPUs (kvserver's: all online CPUs where it shared them). "+
			"A step that fell short is loader-bound, and measured the loader rather than kvserver, only when the loader used %.0f %% or more of its CPUs or its own sends fell behind (requests that found a connection free were still sent late). "+
			"One that fell behind with every connection busy, or with kvserver's CPU idle, is kvserver's limit, at the -max-conns cap where the connections reached it (the rule of the saturation searches).",
			100*c.Criteria.LoaderBusy)
	}
	b.printf("\n\n")
	b.table("workload", "variant", "step", "asked req/s", "sent req/s", "send lag p99", "loader CPU/request", "loader CPU", "kvserver CPU", "kept up", "loader-bound")
	var bound, backlog []result.LoaderCheck
	for _, l := range c.Loader {
		kept := "yes"
		switch {
		case l.Backlog != "":
			kept = "**no**: backlog grew"
			backlog = append(backlog, l)
		case !l.KeptUp:
			kept = "**no**"
		}
		lb := "no"
		switch {
		case l.Loader.CPUs == 0 && l.Server.CPUs == 0:
			lb = "-" // no CPU counts: not judged
		case l.LoaderBound:
			lb = "**yes**"
			bound = append(bound, l)
		}
		loader := fmt.Sprintf("%.2f cores", l.CPUShare)
		if l.Loader.CPUs > 0 {
			loader = shareCell(l.Loader)
		}
		b.row(l.Workload, l.Variant, l.Step, thousands(l.Asked), thousands(l.SendRate), duration(l.LagP99), cpuMicros(l.CPUPerRequest), loader, shareCell(l.Server), kept, lb)
	}
	b.printf("\n")
	for _, l := range backlog {
		b.printf("- %s %s %s: %s\n", l.Workload, l.Variant, l.Step, l.Backlog)
	}
	for _, l := range bound {
		b.printf("- loader-bound: %s %s %s: %s\n", l.Workload, l.Variant, l.Step, l.Why)
	}
	if len(bound)+len(backlog) > 0 {
		b.printf("\n")
	}
}

// cpusRow is the environment table's CPUs row: where each side ran, how
// that was chosen, and why the loader could not pin itself if it could
// not.
func cpusRow(e result.Environment) string {
	s := e.Placement()
	if e.CPUsHow != "" {
		s += "; chosen by " + e.CPUsHow
	}
	if e.LoaderUnpinned != "" {
		s += "; **the loader could not pin itself and ran unpinned**: " + e.LoaderUnpinned
	}
	return s
}

// variantNames are the variants c compared, in order: the first
// workload's, and the metastable runs' where only direct was searched
// before them.
func variantNames(c *result.Comparison) []string {
	var names []string
	add := func(name string) {
		if n := "`" + name + "`"; !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(c.Workloads) > 0 {
		for _, v := range c.Workloads[0].Variants {
			add(v.Name)
		}
	}
	if c.Metastable != nil {
		for _, r := range c.Metastable.Runs {
			add(r.Variant)
		}
	}
	return names
}
