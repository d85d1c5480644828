// Package ratio turns paired measurements into a ratio with a 95 %
// interval, the way benchstat summarises a benchmark: the median of the
// pairs' ratios and an order-statistics interval around it, which assumes
// nothing about their distribution (golang.org/x/perf/benchmath,
// AssumeNothing).
//
// Pairs are what make a ratio hold on a machine that drifts: each pair is
// two measurements taken one right after the other (A, B, A, B …), so the
// drift between pairs cancels inside each ratio.
package ratio

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"
)

// Confidence is the level of every interval here.
const Confidence = 0.95

// MinPairs is the fewest pairs whose median has a finite 95 % interval
// (benchmath: with fewer, an order-statistics interval is unbounded).
const MinPairs = 6

// Interval is a ratio's median and its 95 % interval. Lo and Hi are ±Inf
// where the pairs were too few for a finite interval (N < MinPairs).
type Interval struct {
	Median float64 `json:"median"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	N      int     `json:"n"`
}

// Paired is the interval of b/a over the pairs (a[i], b[i]). Pairs with a
// value that is not positive are left out (an unknown measurement); a and
// b must be of one length.
func Paired(a, b []float64) (Interval, error) {
	if len(a) != len(b) {
		return Interval{}, fmt.Errorf("ratio: %d values against %d: pairs need one of each", len(a), len(b))
	}
	var rs []float64
	for i := range a {
		if a[i] > 0 && b[i] > 0 {
			rs = append(rs, b[i]/a[i])
		}
	}
	return Of(rs), nil
}

// Median of xs, the mean of the middle two for an even count (0 for
// none); xs is left as it is.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Of is the interval of ratios already taken, one per pair.
func Of(ratios []float64) Interval {
	if len(ratios) == 0 {
		return Interval{Median: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1)}
	}
	s := benchmath.NewSample(slices.Clone(ratios), &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(s, Confidence)
	return Interval{Median: sum.Center, Lo: sum.Lo, Hi: sum.Hi, N: len(ratios)}
}

// Finite tells whether the interval is bounded: enough pairs.
func (iv Interval) Finite() bool {
	return !math.IsInf(iv.Lo, 0) && !math.IsInf(iv.Hi, 0) && !math.IsNaN(iv.Median)
}

// Differs tells whether the interval excludes 1: the difference is
// measurable here. An unbounded interval never differs.
func (iv Interval) Differs() bool {
	return iv.Finite() && (iv.Hi < 1 || iv.Lo > 1)
}

// HalfWidth is the interval's larger distance from the median, as a share
// of it: benchstat's "± x %".
func (iv Interval) HalfWidth() float64 {
	if !iv.Finite() || iv.Median == 0 {
		return math.Inf(1)
	}
	return max(iv.Median-iv.Lo, iv.Hi-iv.Median) / iv.Median
}

// String is the ratio as the report prints it: "0.93× (0.90–0.96)" where
// the interval excludes 1, "~ 1.02× (0.97–1.06)" where it includes 1 (no
// difference measurable here: benchstat's "~"), and "1.02× (n=3: too few
// pairs for an interval)" where it is unbounded.
func (iv Interval) String() string {
	switch {
	case math.IsNaN(iv.Median):
		return "-"
	case !iv.Finite():
		return fmt.Sprintf("%.2f× (n=%d: too few pairs for an interval)", iv.Median, iv.N)
	case !iv.Differs():
		return fmt.Sprintf("~ %.2f× (%.2f–%.2f)", iv.Median, iv.Lo, iv.Hi)
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f)", iv.Median, iv.Lo, iv.Hi)
}

// Text is the ratio as `loadtest ratio` and `loadtest floor` print it:
// "0.912 [0.850, 0.970] (6 pairs)", or with fewer than MinPairs pairs
// "0.912 [unbounded] (3 pairs)".
func (iv Interval) Text() string {
	if math.IsInf(iv.Lo, 0) || math.IsInf(iv.Hi, 0) {
		return fmt.Sprintf("%.3f [unbounded] (%d pairs)", iv.Median, iv.N)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f] (%d pairs)", iv.Median, iv.Lo, iv.Hi, iv.N)
}

// ReadPairs reads lines "A B" of two numbers, one pair of measurements
// each (loadtest ratio's input); blank lines are skipped.
func ReadPairs(r io.Reader) (a, b []float64, err error) {
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, nil, fmt.Errorf("line %d: %q is not a pair \"A B\"", line, sc.Text())
		}
		x, errA := strconv.ParseFloat(f[0], 64)
		y, errB := strconv.ParseFloat(f[1], 64)
		if errA != nil || errB != nil {
			return nil, nil, fmt.Errorf("line %d: %q: both values must be numbers", line, sc.Text())
		}
		a, b = append(a, x), append(b, y)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	if len(a) == 0 {
		return nil, nil, fmt.Errorf("no pairs on standard input")
	}
	return a, b, nil
}
