package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/kvpool/kvpool/internal/latency"
)

// Every number the report prints is formatted here.

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

// two formats x to two decimals.
func two(x float64) string { return fmt.Sprintf("%.2f", x) }

// duration formats a latency as the loader's tables do: "2.46ms".
func duration(d time.Duration) string { return latency.FormatDuration(d) }

// nanos formats a figure that holds nanoseconds as a latency.
func nanos(x float64) string { return duration(time.Duration(x)) }

// cpuMicros formats a CPU time per request to a tenth of a µs: such
// costs are a few µs, where whole µs would hide the differences.
func cpuMicros(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 1, 64) + "us"
}

// durRatio is a latency with its ratio: "2.46ms (1.20×)".
func durRatio(d time.Duration, x float64) string { return duration(d) + ratio(x) }

// ms is d in milliseconds, as the charts draw it.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// mib formats bytes as whole MiB.
func mib(b int64) string { return fmt.Sprintf("%.0f", float64(b)/(1<<20)) }

// errorShare is a fixed step's share of failed requests (503s, time-outs,
// transport errors), "0" when none failed.
func errorShare(rate float64) string {
	if rate == 0 {
		return "0"
	}
	return fmt.Sprintf("%.2f %%", 100*rate)
}

// shareCell is a CPU share of n CPUs: "93 % of 8", "unknown" where it
// is, "-" where n is.
func shareCell(share float64, n int) string {
	switch {
	case n == 0:
		return "-"
	case share < 0:
		return "unknown"
	}
	return fmt.Sprintf("%.0f %% of %d", 100*share, n)
}

// waitText is a p50 wait, or "-" where no request was of that kind.
func waitText(d time.Duration, n int64) string {
	if n == 0 {
		return "-"
	}
	return duration(d)
}

// cpusText is "1 loader CPU", "8 loader CPUs".
func cpusText(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// countsText is "1, 2, 4 and 8 CPUs".
func countsText(counts []int) string {
	parts := each(counts, strconv.Itoa)
	if len(parts) == 1 {
		return cpusText(counts[0], "CPU")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1] + " CPUs"
}

// searchesText is "1 search", "3 searches".
func searchesText(n int) string {
	if n == 1 {
		return "1 search"
	}
	return fmt.Sprintf("%d searches", n)
}

// span is "lo–hi", or one value where they print the same.
func span(lo, hi float64, format func(float64) string) string {
	if format(lo) == format(hi) {
		return format(lo)
	}
	return format(lo) + "–" + format(hi)
}

// each is word of every x of xs, in order.
func each[T any](xs []T, word func(T) string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, word(x))
	}
	return out
}

// nested is parts as a list nested in a finding's item, one a line.
func nested(parts []string) string { return "\n  - " + strings.Join(parts, "\n  - ") }

// yesNo is yes where b holds, else "no".
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

func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n")
}
