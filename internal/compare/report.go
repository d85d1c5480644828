package compare

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
)

// Files in the report's folder.
const (
	ReportFile     = "REPORT.md"
	ComparisonFile = "compare.json"
	// ProfilesDir holds profiles/<variant>/<kind>.pb.gz, the layout
	// `make pprof-diff` reads.
	ProfilesDir = "profiles"
)

// Headings of REPORT.md, in order; the test checks them.
const (
	headPools       = "## What a pool does in Go"
	headEnvironment = "## Environment"
	headLoader      = "### Did the loader keep up?"
	headFailures    = "## Failed steps"
	headResults     = "## Results"
	headClosed      = "### Closed loop"
	headScaling     = "## Scaling"
	headOverload    = "## Overload"
	headCharts      = "## Charts"
	headProfiles    = "## Profiles"
	headFindings    = "## Findings"
)

// poolsInGo is the opening section: how to read the numbers coming from
// the seeds' Java servers.
const poolsInGo = `fasthttp already runs each connection on its own goroutine, and kvserver's
handler waits for its job's result. So here a pool does not free a selector
thread, as ` + "`ExecutorService`" + ` did behind one-nio's selectors in the course's Java
servers: it bounds how many requests touch the store at once and decides the
order in which waiting work is served (FIFO, LIFO, relaxed, adaptive) and what
is shed when the queue is full. A goroutine per job is cheaper than any pool
hand-off (` + "`make bench-pools`" + ` measures both), so ` + "`direct`" + ` (the store call in
the handler) is the baseline every ratio below refers to: a pool earns its
place by what it does under load (bounds, order, shedding), not by raw speed.`

// writeReport writes REPORT.md and compare.json into c.Dir.
func writeReport(c *Comparison) error {
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Compare: preset `%s`\n\n", c.Preset)
	w("%s\n\n", runSummary(c))
	if c.Interrupted {
		w("**Interrupted (Ctrl-C) before the end: this report holds the steps that finished.**\n\n")
	}
	w("%s\n\n%s\n\n", headPools, poolsInGo)
	writeEnvironment(&b, c)
	if len(c.Failures) > 0 {
		w("%s\n\n", headFailures)
		for _, f := range c.Failures {
			w("- **%s** %s %s: %s\n", f.Workload, f.Variant, f.Step, f.Reason)
			if f.LogTail != "" {
				w("\n  ```\n%s\n  ```\n", indent(strings.TrimRight(f.LogTail, "\n"), "  "))
			}
		}
		w("\n")
	}
	for _, wr := range c.Workloads {
		if isScaling(wr) {
			writeScaling(&b, c, wr)
			continue
		}
		writeWorkload(&b, c, wr)
	}
	writeCharts(&b, c)
	writeProfiles(&b, c)
	w("%s\n\n", headFindings)
	fs := findings(c)
	c.Findings = fs
	if len(fs) == 0 {
		w("None: the numbers of this run support no finding (see the failures and notes above).\n")
	}
	for _, f := range fs {
		w("- %s\n", f)
	}
	if err := os.WriteFile(filepath.Join(c.Dir, ReportFile), b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("cannot write the report: %w", err)
	}
	if err := writeJSON(c.Dir, ComparisonFile, c); err != nil {
		return fmt.Errorf("cannot write %s: %w", ComparisonFile, err)
	}
	return nil
}

// runSummary is the report's first paragraph: what was run.
func runSummary(c *Comparison) string {
	o := c.Options
	t := o.StepTiming()
	var variants, wls, steps []string
	if len(c.Workloads) > 0 {
		for _, v := range c.Workloads[0].Variants {
			variants = append(variants, "`"+v.Name+"`")
		}
	}
	for _, wr := range c.Workloads {
		wls = append(wls, "`"+wr.Workload+"`")
	}
	p := c.plan
	if p == nil {
		p = &plan{}
	}
	who := "direct's"
	if p.SaturateAll {
		who = "every variant's"
	}
	if o.Rate > 0 {
		steps = append(steps, fmt.Sprintf("direct's saturation taken as %s req/s (-rate)", thousands(o.Rate)))
	}
	if p.SaturateAll || o.Rate <= 0 {
		steps = append(steps, fmt.Sprintf("a search for %s saturation, %d× (steps of %v; sustained: corrected p99 ≤ %v, < 0.1 %% errors, every request sent, ≥ 99 %% of the asked rate)",
			who, o.Repeat, t.SatStep, o.SLO))
	}
	if closedRan(c) {
		who := "direct's"
		if p.ClosedAll {
			who = "every variant's"
		}
		steps = append(steps, fmt.Sprintf("%s closed loop (each connection sends its next request when the last is answered; %d × %v on the server of its last search, once idle), the cross-check of the saturation", who, t.ClosedRounds, t.Closed))
	}
	if p.Fixed {
		steps = append(steps, fmt.Sprintf("a fixed-rate step of %v at %.0f %% of %s", t.Fixed, 100*fixedShare, refName(p)))
	}
	if p.Overload {
		steps = append(steps, fmt.Sprintf("an overload step of %v at %g× direct's saturation over up to %d connections, between probes at %.0f %% of %s (%v before, %d × %v after)",
			t.Overload, p.OverloadFactor, o.MaxConns, 100*probeShare, refName(p), t.ProbeBaseline, t.RecoverProbes, t.ProbeLength))
	}
	if sizedConns(c) {
		steps = append(steps, fmt.Sprintf("the fixed-rate, overload and closed-loop steps start with the connections Little's law asks for (%d × the rate × the answer time of the search's passing step nearest that rate: its p99 from the send, for the closed loop its median; at least %d, at most %d)",
			littleHeadroom, minConns, o.MaxConns))
	}
	if len(p.Counts) > 0 {
		steps = append(steps, fmt.Sprintf("each variant with kvserver on %s of its set in turn (the lowest-numbered)", countsText(p.Counts)))
	}
	if p.Profiles {
		steps = append(steps, fmt.Sprintf("a separate profile run per variant (%d s captures)", t.ProfileSeconds))
	}
	mode := "full"
	if o.Quick {
		mode = "quick (short steps, one repeat: the numbers are indicative)"
	}
	return fmt.Sprintf("Variants %s; workloads %s over %s ids with %d B values. Per workload: %s. Mode: %s. Every kvserver started on a fresh copy (on disk before the start) of one filled store, which was left to compact until its server idled, and was measured only once idle itself.",
		strings.Join(variants, ", "), strings.Join(wls, ", "), thousands(float64(o.Keys)), o.ValueSize, strings.Join(steps, "; "), mode)
}

func writeEnvironment(b *bytes.Buffer, c *Comparison) {
	e := c.Env
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("%s\n\n| | |\n|---|---|\n", headEnvironment)
	w("| CPU | %s, %d cores |\n", e.CPUModel, e.Cores)
	w("| Go | %s |\n", e.GoVersion)
	w("| kvserver | version %s (from `kvserver_config_info`) |\n", orUnknown(e.KvserverVersion))
	w("| CPUs | %s |\n", cpusRow(e))
	w("| load average | %s at the start, %s at the end |\n", e.LoadStart, orUnknown(e.LoadEnd))
	w("| started, finished | %s, %s (%v) |\n", e.Started.Format(time.RFC3339), e.Finished.Format(time.RFC3339), e.Finished.Sub(e.Started).Round(time.Second))
	if c.Options.QuietWait > 0 {
		w("| quiet check | before each step, up to %v of waiting while other processes kept more than %.1f cores busy (measured from /proc/stat, since the load average still counts this comparison's previous step); notes below |\n", c.Options.QuietWait, busyThreshold)
	} else {
		w("| quiet check | off (-quiet-wait 0) |\n")
	}
	w("| profiling | mutex and block sampling (`%s`) only in the separate profile runs; timing runs without |\n", strings.Join(profileArgs, " "))
	w("\n")
	for _, n := range c.Notes {
		w("- %s\n", n)
	}
	if len(c.Notes) > 0 {
		w("\n")
	}
	w("%s\n\n", headLoader)
	if len(c.Loader) == 0 {
		w("No step finished.\n\n")
		return
	}
	fell := 0
	for _, l := range c.Loader {
		if !l.KeptUp {
			fell++
		}
	}
	w("A step counts as kept up when the loader sent at least 99 %% of the asked rate on schedule. %d of %d steps kept up.", len(c.Loader)-fell, len(c.Loader))
	if slices.ContainsFunc(c.Loader, func(l LoaderCheck) bool { return l.LoaderCPUs > 0 }) {
		w(" CPU shares are of each side's own CPUs (kvserver's: all online CPUs where it shared them); a step that fell short is loader-bound, and measured the loader rather than kvserver, "+
			"when the loader used %.0f %% or more of its CPUs, or fell behind with connections to spare while kvserver stayed under %.0f %% of its own (the rule of the saturation searches).",
			100*saturate.Busy, 100*saturate.Busy)
	}
	w("\n\n")
	w("| workload | variant | step | asked req/s | sent req/s | send lag p99 | loader CPU/request | loader CPU | kvserver CPU | kept up | loader-bound |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	var bound []LoaderCheck
	for _, l := range c.Loader {
		kept := "yes"
		if !l.KeptUp {
			kept = "**no**"
		}
		lb := "no"
		switch {
		case l.LoaderCPUs == 0 && l.ServerCPUs == 0:
			lb = "-" // an older comparison: not judged
		case l.LoaderBound:
			lb = "**yes**"
			bound = append(bound, l)
		}
		loader := fmt.Sprintf("%.2f cores", l.CPUShare)
		if l.LoaderCPUs > 0 {
			loader = shareCell(l.LoaderShare, l.LoaderCPUs)
		}
		w("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", l.Workload, l.Variant, l.Step, thousands(l.Asked), thousands(l.SendRate),
			latency.FormatDuration(l.LagP99), cpuMicros(l.CPUPerRequest), loader, shareCell(l.ServerShare, l.ServerCPUs), kept, lb)
	}
	w("\n")
	for _, l := range bound {
		w("- loader-bound: %s %s %s: %s\n", l.Workload, l.Variant, l.Step, l.Why)
	}
	if len(bound) > 0 {
		w("\n")
	}
}

// shareCell is a CPU share of n CPUs: "93 % of 8", "unknown" where it
// is, "-" where n is (an older comparison).
func shareCell(share float64, n int) string {
	switch {
	case n == 0:
		return "-"
	case share < 0:
		return "unknown"
	}
	return fmt.Sprintf("%.0f %% of %d", 100*share, n)
}

// cpusRow is the environment table's CPUs row: where each side ran, how
// that was chosen, and why the loader could not pin itself if it could
// not.
func cpusRow(e Environment) string {
	s := placementText(e)
	if e.CPUsHow != "" {
		s += "; chosen by " + e.CPUsHow
	}
	if e.LoaderUnpinned != "" {
		s += "; **the loader could not pin itself and ran unpinned**: " + e.LoaderUnpinned
	}
	return s
}

// placementText says where kvserver and the loader ran: "kvserver on
// CPUs 0-7 (8), loader on 8-15 (8 loops)", or that they shared.
func placementText(e Environment) string {
	loops := ""
	if e.LoaderLoops > 0 {
		loops = " (" + cpusText(e.LoaderLoops, "loop") + ")"
	}
	switch {
	case e.Pinned && e.ServerCPUs != "":
		n := 0
		if s, err := cpuset.Parse(e.ServerCPUs); err == nil {
			n = s.Len()
		}
		if loops == "" {
			if s, err := cpuset.Parse(e.LoaderCPUs); err == nil {
				loops = " (" + cpusText(s.Len(), "CPU") + ")"
			}
		}
		return fmt.Sprintf("kvserver on CPUs %s (%d), loader on %s%s", e.ServerCPUs, n, e.LoaderCPUs, loops)
	case e.Pinned:
		return "kvserver on CPU 0, the loader on CPU 1 (-pin)"
	case e.SharedCPUs != "":
		return fmt.Sprintf("kvserver and the loader share CPUs %s%s", e.SharedCPUs, loops)
	}
	return "none: kvserver and the loader share the cores"
}

// validated counts the searches whose rate held in the longer validating
// run as well.
func validated(sat []SatRun) int {
	n := 0
	for _, s := range sat {
		if s.Validated {
			n++
		}
	}
	return n
}

func writeWorkload(b *bytes.Buffer, c *Comparison, wr *WorkloadResult) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	base := wr.baseline()
	w("%s: `%s`\n\n", headResults, wr.Workload)
	if onlyBaseRate(wr) {
		// Nothing but direct's saturation was measured outside the
		// overload step (the policies and overload presets): a table of
		// dashes would say nothing.
		w("Direct's saturation in req/s (median ± half the spread of its searches): %s. This preset measures the variants only under overload (below)", satCell(base, 0))
		if base != nil && base.Overload != nil && wr.BaseRate > 0 {
			w(", asking %s", askedText(base.Overload.Asked/wr.BaseRate, wr.BaseLowerBound))
		}
		w(".\n\n")
	} else {
		writeResultsTable(b, c, wr)
	}
	writeClosedTable(b, wr)
	if s := settingsLine(wr); s != "" {
		w("kvserver's settings as it reported them (`kvserver_config_info`): %s.\n\n", s)
	}
	if !hasOverload(c) {
		return
	}
	writeOverloadTable(b, c, wr)
}

// askedText is "2× that", or where that (direct's saturation) is only a
// lower bound, "2× a lower bound: at most 2× direct's saturation".
func askedText(factor float64, lowerBound bool) string {
	if lowerBound {
		return fmt.Sprintf("%g× a lower bound: at most %g× direct's saturation", factor, factor)
	}
	return fmt.Sprintf("%g× that", factor)
}

// writeClosedTable is the closed-loop steps of wr, if any ran.
func writeClosedTable(b *bytes.Buffer, wr *WorkloadResult) {
	var vs []*VariantResult
	for _, v := range wr.Variants {
		if v.Closed != nil && len(v.Closed.Rounds) > 0 {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return
	}
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("%s: `%s`\n\n", headClosed, wr.Workload)
	w("Each connection sends its next request as soon as the last is answered, over as many connections as Little's law asks for at the variant's saturation (at least %d): the server's throughput with no schedule to keep, the cross-check of the open-loop saturation (the findings compare the two).\n\n", minConns)
	w("| variant | connections | rounds | req/s (median ± half the spread) | saturation req/s | server CPU/request | loader CPU | kvserver CPU | loader-bound |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, v := range vs {
		cr := v.Closed
		rates := cr.Rates()
		var lshare, sshare []float64
		lcpus, scpus := 0, 0
		for _, rd := range cr.Rounds {
			lshare, sshare = append(lshare, rd.LoaderShare), append(sshare, rd.ServerShare)
			lcpus, scpus = rd.LoaderCPUs, rd.ServerCPUs
		}
		lb := "no"
		if cr.LoaderBound() {
			lb = "**yes**"
		}
		w("| %s | %d | %d | %s ± %s | %s | %s | %s | %s | %s |\n", v.Name, cr.Conns, len(cr.Rounds), thousands(median(rates)), thousands(spread(rates)/2),
			satCell(v, 0), cpuMicros(cr.CPUPerRequest()), shareCell(median(lshare), lcpus), shareCell(median(sshare), scpus), lb)
	}
	w("\n")
}

// onlyBaseRate: no variant ran a fixed-rate step and none but direct a
// saturation search.
func onlyBaseRate(wr *WorkloadResult) bool {
	for _, v := range wr.Variants {
		if v.Fixed != nil || (!v.Variant.IsBaseline() && len(v.Sat) > 0) {
			return false
		}
	}
	return true
}

// satCell is v's saturation: median ± half the spread of its searches,
// its ratio to baseSat (none if 0), and whether the searches hit the
// maximum or failed validation; "-" if v ran none. A loader-bound
// saturation is a lower bound, "≥ 104,000, loader-bound with 1 loader
// CPU", with no ratio.
func satCell(v *VariantResult, baseSat float64) string {
	if v == nil || len(v.Sat) == 0 {
		return "-"
	}
	rates := v.SatRates()
	m := median(rates)
	var sat string
	if v.LoaderBound() {
		sat = "≥ " + thousands(m)
		if len(rates) > 1 {
			sat += " ± " + thousands(spread(rates)/2)
		}
		sat += ", loader-bound"
		if n := v.loaderCPUs(); n > 0 {
			sat += " with " + cpusText(n, "loader CPU")
		}
		if k := loaderBoundRuns(v.Sat); k < len(v.Sat) {
			sat += fmt.Sprintf(" (%d of %d searches)", k, len(v.Sat))
		}
	} else {
		sat = fmt.Sprintf("%s ± %s%s", thousands(m), thousands(spread(rates)/2), ratio(m, baseSat))
	}
	if slices.ContainsFunc(v.Sat, func(s SatRun) bool { return s.HitMax }) {
		sat += ", at the search's maximum rate"
	}
	if n := validated(v.Sat); n < len(v.Sat) {
		sat += fmt.Sprintf(", %d of %d held in validation", n, len(v.Sat))
	}
	return sat
}

// loaderBoundRuns counts the loader-bound searches.
func loaderBoundRuns(sat []SatRun) int {
	n := 0
	for _, s := range sat {
		if s.LoaderBound {
			n++
		}
	}
	return n
}

// cpusText is "1 loader CPU", "8 loader CPUs".
func cpusText(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// baseSatOf is direct's median saturation for ratios: 0 (no ratios)
// where it ran none or it is only a lower bound.
func baseSatOf(base *VariantResult) float64 {
	if base == nil || base.LoaderBound() {
		return 0
	}
	return median(base.SatRates())
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

// writeResultsTable is the table of saturation and fixed-rate numbers.
func writeResultsTable(b *bytes.Buffer, c *Comparison, wr *WorkloadResult) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	base := wr.baseline()
	own := c.plan != nil && c.plan.OwnRates
	if own {
		w("Direct's saturation: %s req/s. Each variant's fixed-rate step ran at %.0f %% of its own saturation (the fixed rate column), so the latencies compare the variants each at the same share of what it can serve, not at the same load. Each cell's ratio is to `direct` in this run.\n\n",
			thousands(wr.BaseRate), 100*fixedShare)
	} else {
		w("Direct's saturation: %s req/s; fixed-rate step at %s req/s. Each cell's ratio is to `direct` in this run.\n\n",
			thousands(wr.BaseRate), thousands(fixedShare*wr.BaseRate))
	}
	head, rule := "| pool | policy | saturation req/s (median, spread over %d) |", "|---|---|---|"
	if own {
		head, rule = head+" fixed rate req/s |", rule+"---|"
	}
	w(head+" p50 | p90 | p99 | p99.9 | max | errors | server CPU/request | peak conns / in flight |\n", c.Options.Repeat)
	w("%s---|---|---|---|---|---|---|---|\n", rule)
	baseSat := baseSatOf(base)
	var baseFixed *FixedRun
	if base != nil {
		baseFixed = base.Fixed
	}
	opened := false
	for _, v := range wr.Variants {
		sat := satCell(v, baseSat)
		lat := []string{"-", "-", "-", "-", "-", "-", "-"}
		peak := "-"
		if f := v.Fixed; f != nil {
			bf := baseFixed
			if bf == nil {
				bf = &FixedRun{}
			}
			lat = []string{
				durRatio(f.Corrected.P50, bf.Corrected.P50), durRatio(f.Corrected.P90, bf.Corrected.P90),
				durRatio(f.Corrected.P99, bf.Corrected.P99), durRatio(f.Corrected.P999, bf.Corrected.P999),
				durRatio(f.Corrected.Max, bf.Corrected.Max), errorShare(f.ErrorRate), cpuMicros(f.ServerCPUPerRequest) + ratio(float64(f.ServerCPUPerRequest), float64(bf.ServerCPUPerRequest)),
			}
			peak = connsCell(f.ConnsStart, f.ConnsPeak, f.InFlightPeak)
			opened = opened || f.ConnsStart > 0 && f.ConnsPeak > f.ConnsStart
		}
		if own {
			rate := "-"
			if v.Fixed != nil {
				rate = thousands(v.Fixed.Asked)
			}
			sat += " | " + rate
		}
		w("| %s | %s | %s | %s | %s |\n", poolLabel(v.Variant), v.Variant.PolicyLabel(), sat, strings.Join(lat, " | "), peak)
	}
	w("\nLatencies are corrected for coordinated omission (from each request's intended send time) at the fixed rate, over every answer as wrk2's are, errors included: a pool that answered some requests 503 at once (a small -cap) shows a lower tail for it, so read the errors column beside them. Spread is ± half the range. A saturation is the highest rate whose short step kept the SLO; \"k of n held in validation\" says how many of the searches also kept it over the longer validating run at that rate; \"≥ X, loader-bound\" is a lower bound: the loader, not kvserver, ran out first (see the loader's table above), and no ratio is given for it.\n\n")
	if opened {
		w("\"a→b opened\": the step started with a connections (Little's law at the fixed rate) and every one was busy at times, so the loader opened more, up to b; requests that waited for a connection were sent late, and their corrected latencies include that wait in the loader.\n\n")
	}
}

// errorShare is a fixed step's share of failed requests (503s, time-outs,
// transport errors), "0" when none failed.
func errorShare(rate float64) string {
	if rate == 0 {
		return "0"
	}
	return fmt.Sprintf("%.2f %%", 100*rate)
}

// writeOverloadTable is the table of the overload steps.
func writeOverloadTable(b *bytes.Buffer, c *Comparison, wr *WorkloadResult) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	base := wr.baseline()
	w("%s: `%s`\n\n", headOverload, wr.Workload)
	if wr.BaseLowerBound && wr.BaseRate > 0 {
		w("**Direct's saturation, which set the asked rate, is only a lower bound** (its search was loader-bound): each step asked %s, and may have overloaded kvserver less than that, or not at all.\n\n",
			askedText(c.planOr().OverloadFactor, true))
	}
	w("The loader could open connections as requests fell due, up to %d, so that an excess over what the server serves waits in, and is shed by, the server's queue rather than the loader's; the peak columns say how many it needed.\n\n", c.Options.MaxConns)
	w("| pool | policy | asked req/s | sent | goodput req/s | p99 of served: corrected / from the send | shed %% | shed after (p50 wait) | served after (p50 wait) | timeouts | peak conns / in flight | p99 before → after | RSS steady / peak MiB (growth MiB/s) | server CPU per served request | per 503 (derived) | 503 ÷ served | verdict |\n")
	w("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var bo *OverloadRun
	if base != nil {
		bo = base.Overload
	}
	if bo == nil {
		bo = &OverloadRun{}
	}
	for _, v := range wr.Variants {
		o := v.Overload
		if o == nil {
			w("| %s | %s | not run (see failures) ||||||||||||||\n", poolLabel(v.Variant), v.Variant.PolicyLabel())
			continue
		}
		var rec []string
		for _, p := range o.RecoveryP99 {
			rec = append(rec, latency.FormatDuration(p))
		}
		served, per503, shedRatio := "-", "-", "-"
		if d, _ := o.ServedCPU(); d > 0 {
			served = cpuMicros(d)
		}
		if d, ok := o.CPUPerShed(); ok {
			per503 = cpuMicros(d)
		}
		if x, ok := o.ShedCostRatio(); ok {
			shedRatio = fmt.Sprintf("%.2f", x)
		}
		w("| %s | %s | %s | %s of %s | %s%s | %s / %s | %.1f | %s | %s | %d | %s | %s → %s | %.0f / %s (%+.1f) | %s | %s | %s | %s |\n",
			poolLabel(v.Variant), v.Variant.PolicyLabel(), thousands(o.Asked), thousands(float64(o.Sent)), thousands(float64(o.Planned)),
			thousands(o.Goodput), ratio(o.Goodput, bo.Goodput), durRatio(o.ServedP99, bo.ServedP99),
			durRatio(o.ServedP99Uncorrected, bo.ServedP99Uncorrected), o.ShedPct,
			waitText(o.ShedWaitP50, o.Shed), waitText(o.ServedWaitP50, o.Served), o.Timeouts,
			connsCell(o.ConnsStart, o.ConnsPeak, o.InFlightPeak), latency.FormatDuration(o.BaselineP99), strings.Join(rec, ", "), o.RSSSteadyMiB, mib(peakRSS(o.RSS)), o.RSSGrowthMiBPerS,
			served, per503, shedRatio, o.Verdict)
	}
	w("\nGoodput counts served answers (2xx, 404) per second; shed are 503s. p99 of served leaves the 503s out; corrected, it runs from the intended send and so includes any wait in the loader (all connections busy), from the send it does not. Probes before and after run at %.0f %% of %s. "+
		"Server CPU per served request is the variant's over a closed-loop round on the same server just before the overload step (%v, as many connections as direct's saturation needs: it served at full load, queueing and hand-offs included, and shed nothing), or, where that shed or failed, over its baseline probe, where nothing was shed but the load was half (a served request costs more there); per 503 is derived from it: (kvserver's CPU over the overload step − served × that) ÷ 503s, so it is only as good as that assumption, and a figure at or below 0 says the assumption failed; it is given only where 503s were at least %.0f %% of the answers, since the error in a served request's cost is multiplied by served ÷ 503s in it; \"503 ÷ served\" is the ratio of the two. `make bench-http POOLS=\"direct shed\"` measures a 503's cost directly.\n\n", 100*probeShare, refName(c.plan), c.Options.StepTiming().Closed, 100*minShedForCost)
}

// settingKeys are the config_info labels that tell the variants apart.
var settingKeys = []string{"exec", "workers", "limit", "cap", "overflow", "queue_timeout", "io_delay", "io_delay_dist"}

// settingsLine lists each variant's distinguishing settings.
func settingsLine(wr *WorkloadResult) string {
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
	return strings.Join(parts, "; ")
}

// hasOverload tells whether any variant of c ran an overload step.
func hasOverload(c *Comparison) bool {
	for _, wr := range c.Workloads {
		for _, v := range wr.Variants {
			if v.Overload != nil {
				return true
			}
		}
	}
	return false
}

func writeCharts(b *bytes.Buffer, c *Comparison) {
	fmt.Fprintf(b, "%s\n\n", headCharts)
	if len(c.Charts) == 0 {
		fmt.Fprintf(b, "No chart: no step produced the numbers one needs.\n\n")
		return
	}
	for _, ch := range c.Charts {
		fmt.Fprintf(b, "### %s\n\n![%s](%s)\n\n%s\n\n", ch.Title, ch.Title, ch.Path, ch.Caption)
	}
}

func writeProfiles(b *bytes.Buffer, c *Comparison) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("%s\n\n", headProfiles)
	if len(c.Profiles) == 0 {
		w("No profiles in this preset or run.\n\n")
		return
	}
	diffs := "Each pool's CPU and mutex profiles are diffed against direct's: positive rows are what the pool costs beyond running in the handler. "
	if c.plan != nil && c.plan.OwnRates {
		diffs = "Each pool's CPU and mutex profiles are diffed against direct's, scaled first to direct's total (`-normalize`, as each ran at its own rate): positive rows are where the pool spends a larger share of its time than direct does. "
	}
	w("Taken during a fixed-rate step at %.0f %% of %s (workload `%s`) of a separate profile run per pool, kvserver started with `%s`. "+
		diffs+
		"Dig further with `go tool pprof -http=: -diff_base=<direct's> <pool's>` or `make pprof-diff RUN=%s A=direct B=<pool> PROFILE=cpu`.\n\n",
		100*fixedShare, refName(c.plan), c.ProfileWorkload, strings.Join(profileArgs, " "), c.Dir)
	for _, ps := range c.Profiles {
		w("### %s\n\n", ps.Variant)
		var files []string
		for _, k := range profileKinds {
			if f, ok := ps.Files[k.Kind]; ok {
				files = append(files, fmt.Sprintf("[%s](%s)", k.Kind, f))
			} else if e, ok := ps.Errors[k.Kind]; ok {
				files = append(files, fmt.Sprintf("%s: not captured (%s)", k.Kind, e))
			}
		}
		w("Profiles: %s.\n\n", strings.Join(files, ", "))
		if ps.SVG != "" {
			w("CPU call graph: [%s](%s)\n\n", filepath.Base(ps.SVG), ps.SVG)
		} else if ps.SVGNote != "" {
			w("CPU call graph: %s.\n\n", ps.SVGNote)
		}
		for _, kind := range []string{"cpu", "mutex"} {
			if d, ok := ps.Diffs[kind]; ok {
				w("`go tool pprof -top -diff_base=direct` (%s):\n\n```\n%s\n```\n\n", kind, d)
			} else if e, ok := ps.DiffErrs[kind]; ok {
				w("%s diff against direct: %s\n\n", kind, e)
			}
		}
	}
}

// waitText is a p50 wait, or "-" where no request was of that kind.
func waitText(d time.Duration, n int64) string {
	if n == 0 {
		return "-"
	}
	return latency.FormatDuration(d)
}

// planOr is c's plan, or an empty one (a Comparison built by hand).
func (c *Comparison) planOr() *plan {
	if c.plan == nil {
		return &plan{OverloadFactor: 2}
	}
	return c.plan
}

// sizedConns tells whether c's steps recorded the connections they
// started with, which Little's law sized (not in older comparisons).
func sizedConns(c *Comparison) bool {
	for _, wr := range c.Workloads {
		for _, v := range wr.Variants {
			if v.Fixed != nil && v.Fixed.ConnsStart > 0 || v.Overload != nil && v.Overload.ConnsStart > 0 || v.Closed != nil {
				return true
			}
		}
	}
	return false
}

// closedRan tells whether any variant of c ran a closed-loop step.
func closedRan(c *Comparison) bool {
	for _, wr := range c.Workloads {
		for _, v := range wr.Variants {
			if v.Closed != nil {
				return true
			}
		}
	}
	return false
}

// countsText is "1, 2, 4 and 8 CPUs".
func countsText(counts []int) string {
	var parts []string
	for _, n := range counts {
		parts = append(parts, strconv.Itoa(n))
	}
	if len(parts) == 1 {
		return cpusText(counts[0], "CPU")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1] + " CPUs"
}

// poolLabel is the pool column: the pool with its swept parameter.
func poolLabel(v Variant) string {
	v.Policy = ""
	if v.CapSet && v.Cap < 0 {
		v.CapSet = false
	}
	return v.Name()
}

// ratio formats " (1.05×)" of x to base, or "" without a base.
func ratio(x, base float64) string {
	if base <= 0 || math.IsNaN(x) {
		return ""
	}
	return fmt.Sprintf(" (%.2f×)", x/base)
}

// cpuMicros formats a CPU time per request to a tenth of a µs: such
// costs are a few µs, where whole µs would hide the differences.
func cpuMicros(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 1, 64) + "us"
}

func durRatio(d, base time.Duration) string {
	return latency.FormatDuration(d) + ratio(float64(d), float64(base))
}

// thousands formats x rounded with thousands separators: 41,200.
func thousands(x float64) string {
	s := strconv.FormatInt(int64(math.Round(x)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

func mib(b int64) string { return fmt.Sprintf("%.0f", float64(b)/(1<<20)) }

func peakRSS(pts []RSSPoint) int64 {
	var m int64
	for _, p := range pts {
		m = max(m, p.RSS)
	}
	return m
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n")
}
