package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/latency"
)

// The number formats that more than one part of the report shares; a
// cell that only one file's tables print stays beside them.

// thousands formats x rounded with thousands separators: 41,200.
func thousands(x float64) string {
	return message.NewPrinter(language.English).Sprintf("%d", int64(math.Round(x)))
}

// ratio formats " (1.05×)", or "" where there is none (NaN).
func ratio(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return fmt.Sprintf(" (%.2f×)", x)
}

func two(x float64) string { return fmt.Sprintf("%.2f", x) }

// duration formats a latency as the loader's tables do: "2.46ms".
func duration(d time.Duration) string { return latency.FormatDuration(d) }

func nanos(x float64) string { return duration(time.Duration(x)) }

// cpuMicros formats a CPU time per request to a tenth of a µs: such
// costs are a few µs, where whole µs would hide the differences.
func cpuMicros(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 1, 64) + "us"
}

// durRatio is a latency with its ratio: "2.46ms (1.20×)".
func durRatio(d time.Duration, x float64) string { return duration(d) + ratio(x) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// pctCell is a share as a percentage to two decimals, "0" where it is 0:
// a fixed step's failed requests (503s, time-outs, transport errors), the
// reads a write flood's read stream had refused.
func pctCell(share float64) string {
	if share == 0 {
		return "0"
	}
	return fmt.Sprintf("%.2f %%", 100*share)
}

// shareCell is a CPU use: "93 % of 8", "unknown" where its share is,
// "-" where its CPUs are.
func shareCell(u cpuset.Use) string {
	switch {
	case u.CPUs == 0:
		return "-"
	case !u.Known():
		return "unknown"
	}
	return fmt.Sprintf("%.0f %% of %d", 100*u.Share, u.CPUs)
}

// waitText is a p50 wait, or "-" where no request was of that kind.
func waitText(d time.Duration, n int64) string {
	if n == 0 {
		return "-"
	}
	return duration(d)
}

// count is "1 search", "3 searches".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// countsText is "1, 2, 4 and 8 CPUs".
func countsText(counts []int) string {
	parts := each(counts, strconv.Itoa)
	if len(parts) == 1 {
		return result.Count(counts[0], "CPU")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1] + " CPUs"
}

// orDash formats x, "-" where it is NaN (unknown).
func orDash(format string, x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf(format, x)
}

// secs formats a step length: "10 s", "0.5 s".
func secs(d time.Duration) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", d.Seconds()), "0"), ".") + " s"
}

func secsOf(x float64) string { return secs(time.Duration(x * float64(time.Second))) }

// bracketCell is a search's bracket: "62,000–64,000", "≥ 62,000" where
// nothing failed, "< 4,000" where nothing held.
func bracketCell(b analysis.Interval) string {
	switch {
	case b.Lo > 0 && b.Hi > 0:
		return thousands(b.Lo) + "–" + thousands(b.Hi)
	case b.Lo > 0:
		return "≥ " + thousands(b.Lo)
	case b.Hi > 0:
		return "< " + thousands(b.Hi)
	}
	return "none"
}

// askedText is "2× that", or where that (direct's saturation) is only a
// lower bound, "2× a lower bound: at most 2× direct's saturation".
func askedText(factor float64, lowerBound bool) string {
	if lowerBound {
		return fmt.Sprintf("%g× a lower bound: at most %g× direct's saturation", factor, factor)
	}
	return fmt.Sprintf("%g× that", factor)
}

// satCell is a variant's saturation, "-" if it ran none: its bracket
// where the searches recorded them ("62,000–64,000, validated"), else
// the median ± half the spread of the validated rates. A figure no
// validation held is marked, never shown as a saturation; a loader-bound
// one is a lower bound ("≥ 104,000, loader-bound with 1 loader CPU");
// neither has a ratio.
func satCell(s *analysis.Searches, withRatio bool) string {
	if s == nil {
		return "-"
	}
	var sat string
	switch {
	case s.Brackets:
		sat = bracketCell(s.Bracket)
		if s.LowerBound && s.Measured() { // a lower bound of a rate that held
			sat = "≥ " + thousands(s.Bracket.Lo)
		}
	case !s.Measured():
		sat = "none"
	case s.LowerBound:
		sat = "≥ " + thousands(s.Rate.Median)
		if s.Rate.N > 1 {
			sat += " ± " + thousands(s.Rate.HalfSpread())
		}
	default:
		sat = thousands(s.Rate.Median) + " ± " + thousands(s.Rate.HalfSpread())
	}
	switch {
	case !s.Measured():
		sat += fmt.Sprintf(", **not validated** (%s failed its validation)", thousands(s.Candidate))
		if s.Runs > 1 {
			sat += fmt.Sprintf(" in %d of %d searches", s.Runs, s.Runs)
		}
		if s.LowerBound {
			sat += ", loader-bound"
		}
	case s.LowerBound:
		sat += ", loader-bound"
		if s.LoaderCPUs > 0 {
			sat += " with " + result.Count(s.LoaderCPUs, "loader CPU")
		}
		if s.LoaderBoundRuns < s.Runs {
			sat += fmt.Sprintf(" (%d of %d searches)", s.LoaderBoundRuns, s.Runs)
		}
	case s.Brackets:
		sat += ", validated"
		if withRatio {
			sat += ratio(s.Ratio)
		}
	case withRatio:
		sat += ratio(s.Ratio)
	}
	if s.HitMax {
		sat += ", at the search's maximum rate"
	}
	if s.Measured() && s.Validated < s.Runs {
		sat += fmt.Sprintf(", %d of %d held in validation", s.Validated, s.Runs)
	}
	return sat
}

// span is "lo–hi", or one value where they print the same.
func span(lo, hi float64, format func(float64) string) string {
	if format(lo) == format(hi) {
		return format(lo)
	}
	return format(lo) + "–" + format(hi)
}

func each[T any](xs []T, word func(T) string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, word(x))
	}
	return out
}

// nested is parts as a list nested in a finding's item, one a line.
func nested(parts []string) string { return "\n  - " + strings.Join(parts, "\n  - ") }

func yesNo(b bool, yes string) string {
	if b {
		return yes
	}
	return "no"
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
