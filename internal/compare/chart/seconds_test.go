package chart

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// TestCurvesDrawDecidingSeconds: the deciding steps' intervals are drawn
// as marks of their own, a legend entry for each kind present (held,
// failed); a line without them draws exactly what it drew before; bad
// intervals are refused, a NaN p99 (nothing answered) is not.
func TestCurvesDrawDecidingSeconds(t *testing.T) {
	line := CurveLine{Name: "direct", OfferedRate: []float64{10000, 20000, 40000}, AchievedRate: []float64{10000, 20000, 30000},
		P99Ms: []float64{1, 2, 900}, BracketLo: 20000, BracketHi: 40000, Validated: true}
	plain, err := Curves(Spec{Title: "saturation, GET"}, []CurveLine{line}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if text := checkSVG(t, plain.SVG); strings.Contains(text, "deciding steps") {
		t.Error("a chart without intervals has no legend entry for them")
	}
	line.Seconds = []StepSecond{}
	empty, err := Curves(Spec{Title: "saturation, GET"}, []CurveLine{line}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(empty.SVG, plain.SVG) {
		t.Error("no intervals: the chart as without them, byte for byte")
	}

	held := []StepSecond{{Offered: 20000, Answered: 19900, P99Ms: 2, Held: true}, {Offered: 20000, Place: 1, Answered: 20100, P99Ms: 3, Held: true}}
	line.Seconds = held
	c, err := Curves(Spec{Title: "saturation, GET"}, []CurveLine{line}, 100)
	if err != nil {
		t.Fatal(err)
	}
	checkChart(t, c, "saturation, GET", "deciding steps: second held")
	if strings.Contains(checkSVG(t, c.SVG), "second failed") {
		t.Error("no failed interval: no legend entry for one")
	}
	if paths(t, c, nil) <= paths(t, plain, nil) {
		t.Error("the held intervals draw nothing")
	}

	// At the upper end: one stalled second (nothing answered, no p99) and
	// one far over the SLO, beyond every step's p99: the axis reaches it.
	line.Seconds = append(held, StepSecond{Offered: 40000, Answered: 0, P99Ms: math.NaN()}, StepSecond{Offered: 40000, Answered: 41000, P99Ms: 200_000})
	c, err = Curves(Spec{Title: "saturation, GET"}, []CurveLine{line}, 100)
	if err != nil {
		t.Fatal(err)
	}
	checkChart(t, c, "saturation, GET", "deciding steps: second held", "deciding steps: second failed", "100000")

	for _, bad := range []StepSecond{
		{Offered: 40000, Answered: -1, P99Ms: 1},
		{Offered: math.NaN(), Answered: 1, P99Ms: 1},
		{Offered: 40000, Answered: 1, P99Ms: math.Inf(1)},
		{Offered: 40000, Answered: 1, P99Ms: -2},
		{Offered: 40000, Answered: 1, P99Ms: 1, Place: 1.5},
		{Offered: 40000, Answered: 1, P99Ms: 1, Place: math.NaN()},
	} {
		line.Seconds = []StepSecond{bad}
		if _, err := Curves(Spec{Title: "bad"}, []CurveLine{line}, 100); err == nil || !strings.Contains(err.Error(), "interval 0") {
			t.Errorf("%+v: error %v, want one naming the interval", bad, err)
		}
	}
}
