package analysis

import (
	"math"
	"slices"

	ratios "github.com/kvpool/kvpool/internal/ratio"
)

// Interval bounds a figure measured more than once.
type Interval struct {
	Lo, Hi float64
	N      int // how many values it rests on
	// Level is the interval's confidence (0.95), or 0 for the range of
	// the runs (their minimum and maximum).
	Level float64 `json:",omitempty"`
}

// Estimate is a figure measured more than once: the median of the runs
// and the interval about it.
type Estimate struct {
	Median float64
	Interval
}

// HalfSpread is half the interval's width: the report's "± x".
func (e Estimate) HalfSpread() float64 { return (e.Hi - e.Lo) / 2 }

// estimateOf is xs's median with the range of xs (zero for none).
func estimateOf(xs []float64) Estimate {
	if len(xs) == 0 {
		return Estimate{}
	}
	return Estimate{Median: Median(xs), Interval: *spanOf(xs)}
}

// spanOf is the interval of xs (at least one).
func spanOf(xs []float64) *Interval {
	return &Interval{Lo: slices.Min(xs), Hi: slices.Max(xs), N: len(xs)}
}

// Median of xs (0 for none).
func Median(xs []float64) float64 { return ratios.Median(xs) }

// ratio is x over base, NaN where there is no base (base ≤ 0) or no x.
func ratio(x, base float64) float64 {
	if base <= 0 || math.IsNaN(x) {
		return math.NaN()
	}
	return x / base
}
