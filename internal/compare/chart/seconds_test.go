package chart

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/compare/result"
)

// curveLine is a search named name whose steps asked offered, answered
// achieved and had p99s of p99Ms milliseconds.
func curveLine(name string, offered, achieved, p99Ms []float64) CurveLine {
	l := CurveLine{Name: name}
	for i := range offered {
		l.Search.Curve = append(l.Search.Curve, result.CurvePoint{Phase: "ramp", Asked: offered[i], Achieved: achieved[i], P99: msDuration(p99Ms[i])})
	}
	return l
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// TestCurvesDrawDecidingSeconds: the deciding steps' intervals are drawn
// as marks of their own, a legend entry for each kind present (held,
// failed); a line without them draws exactly what it drew before; bad
// intervals are refused, one with nothing answered (no p99) is not.
func TestCurvesDrawDecidingSeconds(t *testing.T) {
	line := curveLine("direct", []float64{10000, 20000, 40000}, []float64{10000, 20000, 30000}, []float64{1, 2, 900})
	line.Search.Bracket, line.Search.Validated = &result.Bracket{Lo: 20000, Hi: 40000}, true
	plain, err := Curves(Spec{Title: "saturation, GET"}, []CurveLine{line}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if text := checkSVG(t, plain.SVG); strings.Contains(text, "deciding steps") {
		t.Error("a chart without intervals has no legend entry for them")
	}
	line.Search.Curve[1].Seconds = []result.StepSecond{}
	empty, err := Curves(Spec{Title: "saturation, GET"}, []CurveLine{line}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(empty.SVG, plain.SVG) {
		t.Error("no intervals: the chart as without them, byte for byte")
	}

	line.Search.Curve[1].Seconds = []result.StepSecond{{T: 1, Rate: 19900, P99: 2 * time.Millisecond, OK: true}, {T: 2, Rate: 20100, P99: 3 * time.Millisecond, OK: true}}
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
	line.Search.Curve[2].Seconds = []result.StepSecond{{T: 1}, {T: 2, Rate: 41000, P99: 200 * time.Second}}
	c, err = Curves(Spec{Title: "saturation, GET"}, []CurveLine{line}, 100)
	if err != nil {
		t.Fatal(err)
	}
	checkChart(t, c, "saturation, GET", "deciding steps: second held", "deciding steps: second failed", "100000")

	for _, bad := range []result.StepSecond{{Rate: -1, P99: time.Millisecond}, {Rate: math.NaN()}, {Rate: 1, P99: -2 * time.Millisecond}} {
		line.Search.Curve[2].Seconds = []result.StepSecond{bad}
		if _, err := Curves(Spec{Title: "bad"}, []CurveLine{line}, 100); err == nil || !strings.Contains(err.Error(), "an interval at 40000 req/s") {
			t.Errorf("%+v: error %v, want one naming the interval's step", bad, err)
		}
	}
}

// TestMarksOfSpreadAStepInTimeOrder: a step's intervals are spread over
// the band around its offered rate from its first start to its last, a
// lone one in the middle; one with nothing answered gets no p99 mark.
func TestMarksOfSpreadAStepInTimeOrder(t *testing.T) {
	var secs []result.StepSecond
	for k := 1; k <= 10; k++ {
		secs = append(secs, result.StepSecond{T: float64(k), Rate: 100, P99: time.Millisecond, OK: true})
	}
	secs[2] = result.StepSecond{T: 3} // stalled
	m := marksOf([]result.CurvePoint{{Asked: 1000, Seconds: secs}, {Asked: 2000, Seconds: secs[:1]}}, 1/secondsBand)
	if len(m.rateFailed) != 1 || len(m.latFailed) != 0 {
		t.Fatalf("the stall: %d rate marks failed, %d p99 marks; want 1 and 0", len(m.rateFailed), len(m.latFailed))
	}
	if got, want := m.rateFailed[0].X, 1000+2.0/9-0.5; math.Abs(got-want) > 1e-9 {
		t.Errorf("the third of ten at %v, want %v", got, want)
	}
	if got := m.rateHeld[len(m.rateHeld)-1].X; got != 2000 {
		t.Errorf("a lone interval at %v, want its step's rate", got)
	}
	if len(m.rateHeld) != 10 || len(m.latHeld) != 10 {
		t.Errorf("%d and %d held marks, want 10 each", len(m.rateHeld), len(m.latHeld))
	}
}
