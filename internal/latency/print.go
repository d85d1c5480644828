package latency

import (
	"fmt"
	"io"
	"strconv"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Table titles as wrk2 prints them: its default table is the corrected one
// ("Recorded Latency"), its -U table the uncorrected one.
const (
	TitleCorrected   = "Latency Distribution (HdrHistogram - Recorded Latency)"
	TitleUncorrected = "Latency Distribution (HdrHistogram - Uncorrected Latency (measured without taking delayed starts into account))"
)

// PrintTable writes the wrk2 percentile table of h under title, one line per
// entry of Percentiles, such as " 99.900%    4.87ms".
func PrintTable(w io.Writer, title string, h *hdrhistogram.Histogram) {
	fmt.Fprintf(w, "  %s\n", title)
	for _, p := range Percentiles {
		fmt.Fprintf(w, "%7.3f%% %9s\n", p, FormatMicros(h.ValueAtPercentile(p)))
	}
}

// FormatMicros formats a value in microseconds the way wrk prints latencies:
// two decimals and the largest unit that keeps the number at least 1
// ("812.00us", "4.87ms", "1.20s", "2.50m").
func FormatMicros(us int64) string {
	v := float64(us)
	switch {
	case us < 1000:
		return strconv.FormatFloat(v, 'f', 2, 64) + "us"
	case us < 1_000_000:
		return strconv.FormatFloat(v/1e3, 'f', 2, 64) + "ms"
	case us < 60_000_000:
		return strconv.FormatFloat(v/1e6, 'f', 2, 64) + "s"
	}
	return strconv.FormatFloat(v/6e7, 'f', 2, 64) + "m"
}

// FormatDuration is FormatMicros for a time.Duration.
func FormatDuration(d time.Duration) string {
	return FormatMicros(int64(d / time.Microsecond))
}

// trimFloat prints p without trailing zeros: 99.900 → "99.9", 50 → "50".
func trimFloat(p float64) string {
	return strconv.FormatFloat(p, 'f', -1, 64)
}
