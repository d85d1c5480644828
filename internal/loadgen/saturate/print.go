package saturate

import (
	"fmt"
	"io"
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
