package chart

import (
	"strings"
	"testing"

	"github.com/kvpool/kvpool/internal/compare/result"
)

// TestCurvesDrawBrackets: a line's bracket is drawn on the offered axis
// with a legend entry, one not validated with one of its own; a line
// without one draws none; a bracket whose ends are the wrong way round
// is refused.
func TestCurvesDrawBrackets(t *testing.T) {
	line := curveLine("direct", []float64{10000, 20000, 40000}, []float64{10000, 20000, 30000}, []float64{1, 2, 900})
	line.Search.Bracket, line.Search.Validated = &result.Bracket{Lo: 20000, Hi: 24000}, true
	c, err := Curves(Spec{Title: "saturation, GET"}, []CurveLine{line}, 100)
	if err != nil {
		t.Fatal(err)
	}
	checkChart(t, c, "saturation, GET", "bracket: held–failed twice")
	if strings.Contains(checkSVG(t, c.SVG), "not validated") {
		t.Error("a validated bracket has no legend entry for an unvalidated one")
	}
	line.Search.Validated = false
	c, err = Curves(Spec{Title: "saturation, GET"}, []CurveLine{line}, 100)
	if err != nil {
		t.Fatal(err)
	}
	checkChart(t, c, "saturation, GET", "bracket, not validated")
	line.Search.Bracket = nil
	plain, err := Curves(Spec{Title: "saturation, GET"}, []CurveLine{line}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if text := checkSVG(t, plain.SVG); strings.Contains(text, "bracket") {
		t.Error("a chart without brackets has no legend entry for them")
	}
	if paths(t, c, nil) <= paths(t, plain, nil) {
		t.Error("the bracket draws nothing")
	}
	line.Search.Bracket = &result.Bracket{Lo: 24000, Hi: 20000}
	if _, err := Curves(Spec{Title: "reversed"}, []CurveLine{line}, 100); err == nil || !strings.Contains(err.Error(), "the lower first") {
		t.Fatalf("error %v, want one about the bracket's ends", err)
	}
}
