// Package latency records request latencies exactly (HdrHistogram) and
// writes them the way wrk2 and the HdrHistogram tools do: the wrk2 percentile
// table for people, the .hgrm percentile-distribution text for plotters.
//
// Every histogram in this package holds microseconds.
package latency

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds shared by every recorder, so that any two histograms of a
// run can be merged without loss: 1 µs to 60 s at 3 significant digits
// (a value is kept within 0.1 % of what was recorded).
const (
	MinMicros         = 1
	MaxMicros         = 60_000_000
	SignificantDigits = 3
)

// New returns an empty histogram with the shared bounds.
func New() *hdrhistogram.Histogram {
	return hdrhistogram.New(MinMicros, MaxMicros, SignificantDigits)
}

// Micros converts a duration to the histogram's unit, clamped into its
// range: a latency under 1 µs counts as 1 µs and one over 60 s as 60 s, so
// that no sample is ever dropped (a dropped sample would flatter the tail).
func Micros(d time.Duration) int64 {
	us := int64(d / time.Microsecond)
	switch {
	case us < MinMicros:
		return MinMicros
	case us > MaxMicros:
		return MaxMicros
	}
	return us
}

// Record adds d to h, clamped as Micros says. It cannot fail: the value is
// always in range.
func Record(h *hdrhistogram.Histogram, d time.Duration) {
	_ = h.RecordValue(Micros(d))
}

// Percentiles are the rows of wrk2's "Latency Distribution" table.
var Percentiles = []float64{50, 75, 90, 99, 99.9, 99.99, 99.999, 100}

// Summary is a histogram reduced to the numbers a report needs, in
// milliseconds. It is what summary.json holds for each distribution.
type Summary struct {
	Count  int64              `json:"count"`
	MeanMs float64            `json:"mean_ms"`
	StdMs  float64            `json:"stddev_ms"`
	MaxMs  float64            `json:"max_ms"`
	Pct    map[string]float64 `json:"percentiles_ms"` // "p50", "p99.9", ... "p100"
}

// Summarize reduces h to a Summary.
func Summarize(h *hdrhistogram.Histogram) Summary {
	s := Summary{
		Count:  h.TotalCount(),
		MeanMs: h.Mean() / 1000,
		StdMs:  h.StdDev() / 1000,
		MaxMs:  float64(h.Max()) / 1000,
		Pct:    make(map[string]float64, len(Percentiles)),
	}
	for _, p := range Percentiles {
		s.Pct[PercentileKey(p)] = float64(h.ValueAtPercentile(p)) / 1000
	}
	return s
}

// PercentileKey names percentile p in JSON: 50 → "p50", 99.9 → "p99.9".
func PercentileKey(p float64) string {
	return "p" + trimFloat(p)
}

// ValueAt returns the value at percentile p of h as a duration.
func ValueAt(h *hdrhistogram.Histogram, p float64) time.Duration {
	return time.Duration(h.ValueAtPercentile(p)) * time.Microsecond
}
