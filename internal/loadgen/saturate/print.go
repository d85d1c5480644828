package saturate

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/latency"
)

// PrintStepHeader writes the header of the curve's table.
func PrintStepHeader(w io.Writer) {
	fmt.Fprintf(w, "%-9s %10s %10s %10s %10s %10s %10s %8s %7s %8s %7s %8s %12s  %-50s %s\n",
		"phase", "asked/s", "sent/s", "achieved/s", "p50", "p99", "p99 uncorr", "errors",
		"ldr cpu", "ldr/req", "srv cpu", "srv/req", "seconds", "verdict", "left")
}

// PrintStep writes one row of the curve: the whole step's figures, CPU
// shares of each side's own CPUs ("-": unknown), CPU per request, the
// per-interval verdict ("9/10 s ok"), and the step's verdict, marked
// "re-test: " on a re-test and ", loader-bound" on a loader-bound
// failure; then the least time the search still needs.
func PrintStep(w io.Writer, s Step) {
	left := "done"
	if s.Left > 0 {
		left = "≥" + s.Left.Round(time.Second).String()
	}
	verdict := s.Verdict
	if s.Retry {
		verdict = "re-test: " + verdict
	}
	if s.LoaderBound {
		verdict += ", loader-bound"
	}
	fmt.Fprintf(w, "%-9s %10.0f %10.0f %10.0f %10s %10s %10s %7.3f%% %7s %8s %7s %8s %12s  %-50s %s\n",
		s.Phase, s.Asked, s.Sent, s.Achieved, latency.FormatDuration(s.P50), latency.FormatDuration(s.P99),
		latency.FormatDuration(s.P99Uncorr), 100*s.ErrorRate,
		pctCell(s.LoaderCPUShare), perReqCell(s.CPUPerReq), pctCell(s.ServerCPUShare), perReqCell(s.ServerCPUPerReq),
		s.SecondsText(), verdict, left)
}

// PrintBracket writes the search's answer as a bracket, with what each
// end is: "bracket: 28000–28700 req/s (2.5 %): 28000 held over a 30s
// validation; 28700 failed twice".
func PrintBracket(w io.Writer, sc *Config, sat *Saturation) {
	b := sat.Bracket
	fmt.Fprintf(w, "\nbracket: %s", b)
	var ends []string
	switch {
	case b.Lo > 0 && sat.Validated:
		ends = append(ends, fmt.Sprintf("%.0f held over its steps and a %v validation", b.Lo, sc.ValidateFor))
	case b.Lo > 0:
		ends = append(ends, fmt.Sprintf("%.0f held over %v steps, never over a validation", b.Lo, sc.Step))
	}
	switch {
	case b.Hi > 0 && sat.LoaderBound:
		ends = append(ends, fmt.Sprintf("%.0f failed twice, loader-bound", b.Hi))
	case b.Hi > 0:
		ends = append(ends, fmt.Sprintf("%.0f failed twice", b.Hi))
	}
	if len(ends) > 0 {
		fmt.Fprint(w, ": "+strings.Join(ends, "; "))
	}
	fmt.Fprintln(w)
	if n := len(sat.Retests); n > 0 {
		held := 0
		for _, r := range sat.Retests {
			if r.Outcome == "held" {
				held++
			}
		}
		fmt.Fprintf(w, "re-tests: %d, of which %d held (a rate that fails once and then holds counts as held)\n", n, held)
	}
}

// pctCell is a CPU share in the table: "42%", or "-" when unknown.
func pctCell(share float64) string {
	if share < 0 {
		return "-"
	}
	return cpuset.ShareText(share)
}

// perReqCell is CPU per request in µs, or "-" when unknown (0).
func perReqCell(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fus", float64(d)/1e3)
}

// PrintSearchHeader says how the search will go.
func PrintSearchHeader(w io.Writer, sc *Config) {
	if sc.Anchor > 0 {
		fmt.Fprintf(w, "  search: from %.0f req/s (%g of the closed loop's %.0f), no higher than it until a step there holds; ",
			math.Min(math.Round(sc.AnchorShare*sc.Anchor), sc.MaxRate), sc.AnchorShare, sc.Anchor)
	} else {
		fmt.Fprintf(w, "  search: ramp from %.0f req/s ×%g up to %.0f; ", sc.StartRate, sc.Factor, sc.MaxRate)
	}
	fmt.Fprintf(w, "steps of %v (+%v cooldown), bracket to %g%%, validate %v (at most %d)\n",
		sc.Step, sc.Cooldown, 100*sc.Precision, sc.ValidateFor, sc.MaxValidations)
	fmt.Fprintf(w, "  rule: %v intervals, the first a warm-up; a step holds when %.0f%% of the others keep corrected p99 ≤ %v and errors < %g%%, "+
		"its backlog (in flight, send lag) grows by at most %v, and every request is sent; a failure is re-tested, a rate bounds the search when it fails twice\n",
		sc.Interval(), 100*HoldShare, sc.SLO, 100*sc.MaxErrorRate, sc.BacklogTolerance())
}

// PrintClosedLoop writes the closed loop's rounds and their median.
func PrintClosedLoop(w io.Writer, cl *ClosedLoop) {
	lo, hi := cl.Range()
	fmt.Fprintf(w, "closed loop: %.0f req/s (median of %d rounds, %.0f–%.0f) over %d connections; CPU per request: loader %s, server %s; busy: loader %s of %s, server %s of %s\n\n",
		cl.Throughput, len(cl.Rounds), lo, hi, cl.Conns, perReq(cl.LoaderCPUPerReq), perReq(cl.ServerCPUPerReq),
		cpuset.ShareText(cl.LoaderCPUShare), cpuset.CPUsText(cl.LoaderCPUs), cpuset.ShareText(cl.ServerCPUShare), cpuset.CPUsText(cl.ServerCPUs))
}

// PrintOpenVsClosed puts the saturation beside the closed loop's
// throughput, each with its CPU per request, and explains the ratio.
func PrintOpenVsClosed(w io.Writer, sat *Saturation, cl *ClosedLoop) {
	if cl == nil || cl.Throughput <= 0 || !sat.Validated || sat.HitMax {
		return
	}
	var open Step
	for _, s := range sat.Steps {
		if s.Phase == PhaseValidate && s.Pass && s.Asked == sat.Rate {
			open = s
		}
	}
	e := Explain(sat.Rate, open, cl)
	fmt.Fprintf(w, "open vs closed: %.0f / %.0f req/s = %.2f\n", sat.Rate, cl.Throughput, e.Ratio)
	fmt.Fprintf(w, "  CPU per request, open (the validating run) vs closed: server %s vs %s, loader %s vs %s\n",
		perReq(open.ServerCPUPerReq), perReq(cl.ServerCPUPerReq), perReq(open.CPUPerReq), perReq(cl.LoaderCPUPerReq))
	fmt.Fprintf(w, "  busy, open vs closed: server %s vs %s, loader %s vs %s\n",
		cpuset.ShareText(open.ServerCPUShare), cpuset.ShareText(cl.ServerCPUShare), cpuset.ShareText(open.LoaderCPUShare), cpuset.ShareText(cl.LoaderCPUShare))
	if e.Utilisation > 0 && e.Cost > 0 {
		fmt.Fprintf(w, "  %.2f = utilisation %.2f × cost %.2f × %.2f unexplained: throughput is the share of its CPUs a server keeps busy over its CPU per request;\n"+
			"  a closed loop keeps the server busy by construction, an open model under a p99 SLO must leave it idle part of the time\n"+
			"  (Schroeder, Wierman, Harchol-Balter, NSDI '06, \"Open versus closed\")\n", e.Ratio, e.Utilisation, e.Cost, e.Rest)
	} else {
		fmt.Fprintln(w, "  (the server's CPU is unknown: the ratio cannot be split into utilisation and cost per request)")
	}
}

// perReq is CPU per request in µs, or "unknown" (0).
func perReq(d time.Duration) string {
	if d <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f µs", float64(d)/1e3)
}

// validated lists the rates of the validating runs, in order, each once.
func validated(sat *Saturation) []string {
	var rates []string
	for _, s := range sat.Steps {
		if s.Phase == PhaseValidate && !s.Retry {
			rates = append(rates, fmt.Sprintf("%.0f", s.Asked))
		}
	}
	return rates
}

// Outcome is how a finished search ended, for the caller's exit status.
type Outcome int

const (
	Held          Outcome = iota // a validated saturation
	NoneHeld                     // no rate held: nothing to validate
	NoneValidated                // rates held over the steps, none over a validating run
	LowerBound                   // the loader could not offer more: the rate is a lower bound
)

// PrintVerdict prints the verdict line of a finished search and returns
// how it ended and, but where it Held, what to tell the user: the remedy,
// by saturate's flags. A search in which nothing held validates nothing
// (Candidate 0): NoneHeld.
func PrintVerdict(stdout io.Writer, sc *Config, sat *Saturation) (Outcome, error) {
	const more = "give it more CPUs (-cpus) or more hosts (-shard, merge)"
	b := sat.Bracket
	switch {
	case sat.Candidate == 0 && sat.LoaderBound:
		fmt.Fprintf(stdout, "\nno rate held, and the loader was the limit: %s\n", sat.Why)
		return NoneHeld, fmt.Errorf("no rate held, and the loader was the limit (%s): %s, or lower -start-rate", sat.Why, more)
	case sat.Candidate == 0:
		fmt.Fprintf(stdout, "\nno rate held, down to %.0f req/s\n", b.Hi)
		return NoneHeld, fmt.Errorf("no rate held, down to %.0f req/s: raise -slo if the server is slow by design, or check that it answers", b.Hi)
	case sat.LoaderBound:
		what, rate := fmt.Sprintf("validated over %v", sc.ValidateFor), sat.Rate
		if !sat.Validated {
			what, rate = fmt.Sprintf("held over %v steps, not over a validation", sc.Step), sat.Candidate
		}
		fmt.Fprintf(stdout, "\nsaturation: ≥ %.0f req/s (%s), loader-bound with %d loader CPUs: %s\n  %s\n",
			rate, what, sat.LoaderCPUs, more, sat.Why)
		return LowerBound, fmt.Errorf("%.0f req/s is only a lower bound: the loader could not offer more (%s); %s", rate, sat.Why, more)
	case !sat.Validated:
		rates := strings.Join(validated(sat), ", ")
		fmt.Fprintf(stdout, "\nsaturation: none validated: rates held over %v steps, but none over a %v validating run (tried at %s req/s, each twice)\n",
			sc.Step, sc.ValidateFor, rates)
		return NoneValidated, fmt.Errorf("no rate held over its validating run (at %s req/s): the server sustains less over %v than over %v; rerun with a longer -step so the steps see what the validation sees, on a quieter machine, or with the loader and server pinned to separate cores",
			rates, sc.ValidateFor, sc.Step)
	}
	fmt.Fprintf(stdout, "\nsaturation: %.0f req/s (validated over %v; bracket %s)\n", sat.Rate, sc.ValidateFor, b)
	return Held, nil
}
