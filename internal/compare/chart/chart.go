// Package chart draws the comparison report's charts as SVG with
// gonum.org/v1/plot: latency by percentile on wrk2's axis, saturation curves
// (loader-bound steps marked, the intervals of the steps that decided each
// search beside them), grouped bars for overload, per-second p99
// through an overload step, a parameter sweep, and throughput against CPUs
// with linear scaling beside it.
//
// Every chart carries a title, axis labels with units, a legend and a
// caption line drawn under the plot; the caption is also returned in
// Chart.Caption so that a report can print it under the image. A series'
// colour depends only on its name (the pools and policies have fixed
// colours), so "lifo" has the same colour in every chart of a report.
//
// The functions take plain values (the saturation curve: a search as
// compare.json keeps it) and never read files or the network; bad
// input (no series, mismatched lengths, NaN where a value is required) is an
// error that says which series and what to fix, never a panic.
package chart

import (
	"fmt"
	"os"

	"github.com/kvpool/kvpool/internal/compare/result"
)

// Spec is what every chart carries besides its data.
type Spec struct {
	// Title is drawn above the plot. Required.
	Title string
	// Caption is one sentence saying what to read from the chart, drawn
	// under the plot (wrapped to its width) and returned in Chart.Caption.
	// Empty: a default caption for the kind of chart.
	Caption string
	// XLabel and YLabel name the axes with their units, e.g.
	// "offered rate (req/s)". Empty: the default of the kind of chart.
	XLabel, YLabel string
}

// Chart is one rendered chart.
type Chart struct {
	// SVG is a complete, standalone SVG document.
	SVG []byte
	// Caption is the caption drawn under the plot, for the report to
	// print under the image.
	Caption string
}

// Save writes the SVG to path (created or truncated, mode 0644).
func (c Chart) Save(path string) error {
	if err := os.WriteFile(path, c.SVG, 0o644); err != nil {
		return fmt.Errorf("cannot save chart: %w", err)
	}
	return nil
}

// PercentileLine is one pool's latency distribution.
type PercentileLine struct {
	// Name labels the line in the legend and picks its colour.
	Name string
	// Percentiles in percent, each in (0, 100), e.g. 50, 90, 99.9.
	// 100 (the maximum) has no place on the 1/(1-p) axis: such points are
	// left out rather than refused, so latency.Percentiles can be passed
	// as is.
	Percentiles []float64
	// CorrectedMs[i] is the corrected latency at Percentiles[i], in
	// milliseconds (from the intended send time), UncorrectedMs[i] the
	// latency from the actual send (drawn dashed).
	CorrectedMs, UncorrectedMs []float64
}

// CurveLine is one pool's saturation search, as compare.json keeps it:
// its steps but the validating runs (each repeats a rate already on the
// curve) as the line, a loader-bound step as a large cross; its bracket
// (Lo held, Hi failed twice; nil or an end 0: none drawn) as a band of
// the offered axis at the foot of the upper panel, solid where Validated
// (a validating run held at Lo), hatched with dashes where not; and the
// judged intervals its deciding steps kept (CurvePoint.Seconds, the
// validating runs' included), each by its step's offered rate, its
// answered rate above and its p99 below, as a small mark under the line,
// a ring where it held and a filled triangle where it failed, so that a
// failure shows as one stall or as the whole step. A step's marks are
// spread in time order over a narrow band of the offered axis centred on
// its rate (3 % of the axis), so that they do not hide one another; one
// with nothing answered (P99 0) is drawn in the upper panel only.
type CurveLine struct {
	// Name labels the line in the legend and picks its colour.
	Name   string
	Search result.SatRun
}

// XYLine is one named series of points. Y may hold NaN for "no value" (a
// second with no answers): the line is broken there.
type XYLine struct {
	Name string
	X, Y []float64
}

// Mark is a span of the x axis of a time series.
type Mark struct {
	// From and To in x units (seconds): the span shaded.
	From, To float64
	// Label is written at the top of the mark, e.g. "overload 2×".
	Label string
}
