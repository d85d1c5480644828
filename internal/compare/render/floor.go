package render

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/result"
	ratios "github.com/kvpool/kvpool/internal/ratio"
)

// A floor's tables are what `loadtest floor` prints while it runs, each
// piece once measured; REPORT.md holds the same text, written by the
// same functions from floor.json.

// FloorHeader opens the run on one set of server CPUs.
func FloorHeader(w io.Writer, f *result.Floor, c *result.FloorCount) {
	o, loop := &f.Options, "closed loop"
	if o.Rate > 0 {
		loop = "at " + thousands(o.Rate) + " req/s open loop"
	}
	fmt.Fprintf(w, "floor: %s against %s; servers on CPUs %s, loader on CPUs %s; %d conns %s; %d rounds of %v each; %d ids x %d B\n",
		floorServer(f, 1), floorServer(f, 0), c.ServerCPUs, f.LoaderCPUs, o.Conns, loop, o.Rounds, o.Round, o.Keys, o.ValueSize)
}

func floorServer(f *result.Floor, side int) string {
	bin, args := f.Options.Server(side)
	if bin == "" {
		return "the bare fasthttp handler"
	}
	return strings.TrimSpace(fmt.Sprintf("%s -pool direct %s", bin, strings.Join(args, " ")))
}

// FloorWorkloadHead names a store state and workload before its rounds.
func FloorWorkloadHead(w io.Writer, wl *result.FloorWorkload) {
	fmt.Fprintf(w, "\n%s:\n", floorKey(wl))
}

func floorKey(wl *result.FloorWorkload) string {
	return fmt.Sprintf("store %s, %s", wl.State, strings.ToUpper(wl.Workload))
}

// FloorRound is round i's line (from 0): which server went first and
// what each measured.
func FloorRound(w io.Writer, f *result.Floor, wl *result.FloorWorkload, i int) {
	names := f.Options.Names()
	side := func(s int) string {
		r := [2][]result.ClosedRound{wl.Base, wl.Variant}[s][i]
		text := fmt.Sprintf("%s %.2f µs/req %s req/s server %.0f%% loader %.0f%%", names[s], float64(r.ServerCPUPerRequest)/1e3, thousands(r.Rate), 100*r.Server.Share, 100*r.Loader.Share)
		if n := wl.Failed[s][i]; n > 0 {
			text += fmt.Sprintf(" FAILED %d", n)
		}
		return text
	}
	fmt.Fprintf(w, "  round %d (%s first): %s | %s\n", i+1, names[result.PairOrder(i + 1)[0]], side(0), side(1))
}

// FloorSummary is a workload's medians per server, kvserver over the
// base for CPU per request and throughput with their 95 % intervals, and
// how busy the loader and the servers were.
func FloorSummary(w io.Writer, f *result.Floor, a *analysis.FloorWorkload) {
	names := f.Options.Names()
	base, kv := names[0], names[1]
	for i, name := range names {
		s, cpu := a.Sides[i], a.CPURange[i]
		fmt.Fprintf(w, "  %-8s median %.2f µs CPU/req (%.2f..%.2f), %s req/s, server busy %.0f%% of its CPUs\n", name,
			float64(s.CPUPerRequest)/1e3, cpu.Lo/1e3, cpu.Hi/1e3, thousands(s.Rate.Median), 100*s.Server.Share)
	}
	fmt.Fprintf(w, "  %s/%s CPU per request: %s%s\n", kv, base, a.CPU.Text(), same(a.CPU))
	note := "headroom: the servers, not the loader, set the pace"
	if rate := f.Options.Rate; rate == 0 {
		fmt.Fprintf(w, "  %s/%s throughput:      %s%s\n", kv, base, a.Throughput.Text(), same(a.Throughput))
		if a.LoaderBound {
			note = fmt.Sprintf("NOT judged for throughput: the loader reached %.0f%% of its CPUs, so it may have set the pace; -rate compares CPU per request at one load", 100*a.LoaderMax)
		}
	} else {
		// Rounded down: "at least 100.0%" only where every round answered all.
		fmt.Fprintf(w, "  both answered at least %.1f%% of the %s req/s sent\n", math.Floor(1000*a.Answered)/10, thousands(rate))
		if a.Behind {
			fmt.Fprintf(w, "  NOT at the same load: a round answered under %.0f%% of -rate (a server, or the loader, fell behind); lower -rate\n", 100*analysis.FloorSustained)
		}
		note = "headroom: the loader sent on time"
		if a.LoaderBound {
			note = fmt.Sprintf("the loader reached %.0f%% of its CPUs: it may have sent late; lower -rate", 100*a.LoaderMax)
		}
	}
	fmt.Fprintf(w, "  loader CPU share: median %.0f%% / %.0f%%, max %.0f%% of %d CPUs (%s)\n",
		100*a.Sides[0].Loader.Share, 100*a.Sides[1].Loader.Share, 100*a.LoaderMax, f.LoaderCPUN, note)
	if a.Idle {
		fmt.Fprintf(w, "  NOTE: a server was busy only %.0f%% of its CPUs: it waited (on fsync with -sync), or another process took its CPU; a server that waits pays more per request\n", 100*a.LeastBusy)
	}
	if a.Failed > 0 {
		fmt.Fprintf(w, "  WARNING: %d requests failed or were answered other than 200/201/404\n", a.Failed)
	}
}

// FloorProfile says where kvserver's CPU profile of wl went.
func FloorProfile(w io.Writer, wl *result.FloorWorkload) {
	fmt.Fprintf(w, "  kvserver's CPU profile over one more round: %s\n", wl.Profile)
}

// FloorScaling is, per state and workload, each server's throughput at
// every CPU count as a multiple of its own at the first, and kvserver's
// scaling over the base's.
func FloorScaling(w io.Writer, f *result.Floor, a *analysis.FloorFigures) {
	base, kv := f.Options.Names()[0], f.Options.Names()[1]
	fmt.Fprintf(w, "\nscaling: throughput on n server CPUs as a multiple of its own on %d\n", f.Counts[0].CPUs)
	for k, rows := range a.Scaling {
		fmt.Fprintf(w, "%s:\n", floorKey(f.Counts[0].Workloads[k]))
		for _, s := range rows {
			note := ""
			if s.LoaderBound {
				note = fmt.Sprintf(" (NOT judged: the loader reached %.0f %% of its CPUs)", 100*f.LoaderBusy)
			}
			fmt.Fprintf(w, "  n=%d: %s %s req/s (%.2f×), %s %s req/s (%.2f×); %s's scaling over %s's %s%s%s\n", s.CPUs,
				base, thousands(s.Rates[0]), s.Scale[0], kv, thousands(s.Rates[1]), s.Scale[1], kv, base, s.Ratio.Text(), same(s.Ratio), note)
		}
	}
}

// same is " ~" where iv cannot tell the two apart, as benchstat marks it.
func same(iv ratios.Interval) string {
	if iv.Finite() && !iv.Differs() {
		return " ~"
	}
	return ""
}

// WriteFloor writes f's REPORT.md into dir: a word on the method, then
// the tables `loadtest floor` printed, from f and a, its analysis.
func WriteFloor(f *result.Floor, a *analysis.FloorFigures, dir string) (*Report, error) {
	var text bytes.Buffer
	for c, count := range f.Counts {
		FloorHeader(&text, f, count)
		for k, wl := range count.Workloads {
			FloorWorkloadHead(&text, wl)
			for i := range len(wl.Base) {
				FloorRound(&text, f, wl, i)
			}
			FloorSummary(&text, f, a.Counts[c][k])
			if wl.Profile != "" {
				FloorProfile(&text, wl)
			}
		}
	}
	if len(a.Scaling) > 0 {
		FloorScaling(&text, f, a)
	}
	base, kv := f.Options.Names()[0], f.Options.Names()[1]
	var b page
	b.printf("# Floor: %s against %s\n\n", kv, floorServer(f, 0))
	if f.Interrupted {
		b.printf("**Interrupted (Ctrl-C or a TERM signal) before the end: this report holds the workloads that finished.**\n\n")
	}
	b.printf("Both servers ran on the same CPUs, each kvserver `-pool direct` on a store of its own, in paired rounds (which goes first alternates), so that whatever drifts on the machine between pairs cancels inside each pair's ratio. A ratio is %s's over %s's: the median of the pairs' ratios with its 95 %% interval (order statistics, as benchstat's; %d pairs are the fewest that bound one), \"~\" where it includes 1. CPU per request is each server's own from /proc over its round (after PUTs, until kvserver idles again).\n\n```\n%s```\n",
		kv, base, ratios.MinPairs, text.String())
	return (&Report{Path: filepath.Join(dir, ReportFile)}).save(&b)
}
