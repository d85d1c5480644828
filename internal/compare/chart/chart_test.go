package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvpool/kvpool/internal/compare/result"
)

// checkSVG fails unless b is a well-formed XML document whose root is
// <svg> and which draws something, and returns its text content (the
// labels, title, legend and caption, as gonum writes text as <text>).
func checkSVG(t *testing.T, b []byte) string {
	t.Helper()
	if len(b) == 0 {
		t.Fatal("empty SVG")
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	var root string
	var text strings.Builder
	paths := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			if tok.Name.Local == "path" {
				paths++
			}
		case xml.CharData:
			text.Write(tok)
			text.WriteByte('\n')
		}
	}
	if root != "svg" {
		t.Fatalf("root element is <%s>, want <svg>", root)
	}
	if paths == 0 {
		t.Fatal("SVG draws no path")
	}
	return text.String()
}

// checkChart checks the SVG and that the title, caption and every wanted
// text (axis labels, legend entries, tick labels) appear in it.
func checkChart(t *testing.T, c Chart, title string, want ...string) {
	t.Helper()
	text := checkSVG(t, c.SVG)
	if c.Caption == "" {
		t.Fatal("no caption returned")
	}
	// The caption is wrapped over lines; its first word is on the first.
	first := strings.Fields(c.Caption)[0]
	for _, w := range append([]string{title, first}, want...) {
		if !strings.Contains(text, w) {
			t.Errorf("SVG text lacks %q; it has:\n%s", w, text)
		}
	}
}

func TestLatencyByPercentile(t *testing.T) {
	pcts := []float64{50, 75, 90, 99, 99.9, 99.99, 99.999, 100}
	c, err := LatencyByPercentile(Spec{Title: "GET at 70 %"}, []PercentileLine{
		{Name: "direct", Percentiles: pcts, CorrectedMs: []float64{0.5, 0.7, 1, 2, 5, 9, 12, 13}, UncorrectedMs: []float64{0.4, 0.6, 0.9, 1.5, 3, 6, 8, 9}},
		{Name: "lifo", Percentiles: pcts, CorrectedMs: []float64{0.6, 0.8, 1.2, 3, 8, 20, 40, 41}, UncorrectedMs: []float64{0.5, 0.7, 1.1, 2.5, 6, 15, 30, 31}},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkChart(t, c, "GET at 70 %", "direct", "lifo", "50%", "99.999%", "latency (ms", "percentile", "corrected", "uncorrected")
}

func TestLatencyByPercentileDegenerate(t *testing.T) {
	f := func(name string, lines []PercentileLine, wantErr string) {
		t.Helper()
		c, err := LatencyByPercentile(Spec{Title: name}, lines)
		if wantErr == "" {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkSVG(t, c.SVG)
			return
		}
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("%s: error %v, want one containing %q", name, err, wantErr)
		}
	}
	f("no lines", nil, "no lines")
	f("one point", []PercentileLine{{Name: "fifo", Percentiles: []float64{99}, CorrectedMs: []float64{3}, UncorrectedMs: []float64{3}}}, "")
	f("zeros on the log axis", []PercentileLine{{Name: "fifo", Percentiles: []float64{50, 99}, CorrectedMs: []float64{0, 0}, UncorrectedMs: []float64{0, 0}}}, "")
	f("only p100", []PercentileLine{{Name: "fifo", Percentiles: []float64{100}, CorrectedMs: []float64{3}, UncorrectedMs: []float64{3}}}, "no percentile below 100")
	f("length mismatch", []PercentileLine{{Name: "fifo", Percentiles: []float64{50, 99}, CorrectedMs: []float64{3}, UncorrectedMs: []float64{3}}}, "has 2 percentiles but 1 corrected")
	f("no uncorrected", []PercentileLine{{Name: "fifo", Percentiles: []float64{50}, CorrectedMs: []float64{1}}}, "has 1 percentiles but 0 uncorrected")
	f("NaN latency", []PercentileLine{{Name: "fifo", Percentiles: []float64{50}, CorrectedMs: []float64{math.NaN()}, UncorrectedMs: []float64{math.NaN()}}}, "finite")
	f("negative percentile", []PercentileLine{{Name: "fifo", Percentiles: []float64{-1}, CorrectedMs: []float64{1}, UncorrectedMs: []float64{1}}}, "percentile -1")
	f("duplicate names", []PercentileLine{
		{Name: "fifo", Percentiles: []float64{50}, CorrectedMs: []float64{1}, UncorrectedMs: []float64{1}},
		{Name: "fifo", Percentiles: []float64{50}, CorrectedMs: []float64{1}, UncorrectedMs: []float64{1}},
	}, "two series are named")
	f("unnamed", []PercentileLine{{Percentiles: []float64{50}, CorrectedMs: []float64{1}, UncorrectedMs: []float64{1}}}, "no name")
}

func TestCurves(t *testing.T) {
	c, err := Curves(Spec{Title: "saturation, GET"}, []CurveLine{
		curveLine("direct", []float64{30000, 10000, 20000}, []float64{24000, 10000, 20000}, []float64{900, 1, 2}),
		curveLine("fifo", []float64{10000, 20000, 30000}, []float64{10000, 19000, 21000}, []float64{1.5, 40, 2000}),
	}, 100)
	if err != nil {
		t.Fatal(err)
	}
	checkChart(t, c, "saturation, GET", "direct", "fifo", "offered rate (req/s)", "answered rate (req/s)", "p99 (ms", "SLO p99 100 ms")
}

// TestCurvesMarkLoaderBound: a loader-bound step gets a cross of its
// own and a legend entry; a chart without one has neither.
func TestCurvesMarkLoaderBound(t *testing.T) {
	line := curveLine("direct", []float64{10000, 20000, 40000}, []float64{10000, 20000, 30000}, []float64{1, 2, 900})
	line.Search.Curve[2].LoaderBound = true
	c, err := Curves(Spec{Title: "saturation, GET"}, []CurveLine{line}, 100)
	if err != nil {
		t.Fatal(err)
	}
	checkChart(t, c, "saturation, GET", "loader-bound step")
	line.Search.Curve[2].LoaderBound = false
	plain, err := Curves(Spec{Title: "saturation, GET"}, []CurveLine{line}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if text := checkSVG(t, plain.SVG); strings.Contains(text, "loader-bound") {
		t.Error("a chart without loader-bound steps has no legend entry for them")
	}
	if paths(t, c, nil) <= paths(t, plain, nil) {
		t.Error("the loader-bound step's cross draws nothing")
	}
}

// TestScaling: each pool's line, and its ideal (linear from its first
// point) dashed; one point each still draws.
func TestScaling(t *testing.T) {
	c, err := Scaling(Spec{Title: "saturation against CPUs", XLabel: "kvserver's CPUs", YLabel: "saturation (req/s)"}, []XYLine{
		{Name: "direct", X: []float64{1, 2, 4, 8}, Y: []float64{40000, 78000, 150000, 280000}},
		{Name: "lifo", X: []float64{8, 1, 2, 4}, Y: []float64{200000, 39000, 70000, 120000}},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkChart(t, c, "saturation against CPUs", "kvserver's CPUs", "saturation (req/s)", "direct", "lifo", "linear from the fewest CPUs", "1", "2", "4", "8")
	if !strings.Contains(string(c.SVG), "stroke-dasharray") {
		t.Error("no dashed ideal line")
	}
	one, err := Scaling(Spec{Title: "one count"}, []XYLine{{Name: "direct", X: []float64{1}, Y: []float64{40000}}})
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, one.SVG)
	if _, err := Scaling(Spec{Title: "none"}, nil); err == nil {
		t.Error("no lines: want an error")
	}
}

func TestCurvesDegenerate(t *testing.T) {
	f := func(name string, lines []CurveLine, slo float64, wantErr string) {
		t.Helper()
		c, err := Curves(Spec{Title: name}, lines, slo)
		if wantErr == "" {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkSVG(t, c.SVG)
			return
		}
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("%s: error %v, want one containing %q", name, err, wantErr)
		}
	}
	f("no lines", nil, 100, "no lines")
	f("no steps", []CurveLine{{Name: "fifo"}}, 100, "no steps")
	f("one step", []CurveLine{curveLine("fifo", []float64{1000}, []float64{1000}, []float64{2})}, 100, "")
	f("all zero, no SLO", []CurveLine{curveLine("fifo", []float64{0}, []float64{0}, []float64{0})}, 0, "")
	validating := curveLine("fifo", []float64{1000}, []float64{1000}, []float64{2})
	validating.Search.Curve[0].Phase = result.PhaseValidate
	f("only a validating run", []CurveLine{validating}, 100, "no steps")
	f("negative", []CurveLine{curveLine("fifo", []float64{1}, []float64{-1}, []float64{1})}, 100, "non-negative")
	f("NaN SLO", []CurveLine{curveLine("fifo", []float64{1}, []float64{1}, []float64{1})}, math.NaN(), "SLO")
}

func TestGroupedBars(t *testing.T) {
	nan := math.NaN()
	c, err := GroupedBars(Spec{Title: "goodput under overload", YLabel: "goodput (req/s)"},
		[]string{"direct", "fifo", "lifo"},
		[]string{"reject", "drop-oldest"},
		[][]float64{{5000, 7000, 7100}, {nan, 6500, 6900}})
	if err != nil {
		t.Fatal(err)
	}
	checkChart(t, c, "goodput under overload", "goodput (req/s)", "direct", "fifo", "lifo", "reject", "drop-oldest")
}

func TestGroupedBarsDegenerate(t *testing.T) {
	f := func(name string, groups, series []string, values [][]float64, wantErr string) {
		t.Helper()
		c, err := GroupedBars(Spec{Title: name}, groups, series, values)
		if wantErr == "" {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkSVG(t, c.SVG)
			return
		}
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("%s: error %v, want one containing %q", name, err, wantErr)
		}
	}
	f("nothing", nil, nil, nil, "pass at least one of each")
	f("one bar", []string{"fifo"}, []string{"reject"}, [][]float64{{1}}, "")
	f("all zero", []string{"fifo", "lifo"}, []string{"reject"}, [][]float64{{0, 0}}, "")
	f("all missing", []string{"fifo"}, []string{"reject"}, [][]float64{{math.NaN()}}, "")
	f("rows", []string{"fifo"}, []string{"reject", "block"}, [][]float64{{1}}, "2 series but 1 rows")
	f("columns", []string{"fifo", "lifo"}, []string{"reject"}, [][]float64{{1}}, "has 1 values for 2 groups")
	f("infinite", []string{"fifo"}, []string{"reject"}, [][]float64{{math.Inf(1)}}, "finite")
}

func TestTimeSeries(t *testing.T) {
	nan := math.NaN()
	xs := []float64{0, 1, 2, 3, 4, 5, 6, 7}
	c, err := TimeSeries(Spec{Title: "p99 per second, overload 2×"}, []XYLine{
		{Name: "fifo", X: xs, Y: []float64{2, 2, 300, 900, 1200, 40, 3, 2}},
		{Name: "lifo", X: xs, Y: []float64{2, 3, 50, nan, 80, 4, 2, 2}},
	}, []Mark{{From: 2, To: 5, Label: "overload"}})
	if err != nil {
		t.Fatal(err)
	}
	checkChart(t, c, "p99 per second, overload 2×", "fifo", "lifo", "overload", "time since the step started (s)", "log scale")
}

func TestTimeSeriesDegenerate(t *testing.T) {
	f := func(name string, lines []XYLine, marks []Mark, wantErr string) {
		t.Helper()
		c, err := TimeSeries(Spec{Title: name}, lines, marks)
		if wantErr == "" {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkSVG(t, c.SVG)
			return
		}
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("%s: error %v, want one containing %q", name, err, wantErr)
		}
	}
	f("no lines", nil, nil, "no lines")
	f("one point", []XYLine{{Name: "fifo", X: []float64{0}, Y: []float64{5}}}, nil, "")
	f("zeros", []XYLine{{Name: "fifo", X: []float64{0, 1}, Y: []float64{0, 0}}}, []Mark{{From: 1, To: 1}}, "")
	f("only NaN", []XYLine{{Name: "fifo", X: []float64{0}, Y: []float64{math.NaN()}}}, nil, "no line has a value")
	f("NaN x", []XYLine{{Name: "fifo", X: []float64{math.NaN()}, Y: []float64{1}}}, nil, "finite")
	f("mismatch", []XYLine{{Name: "fifo", X: []float64{0, 1}, Y: []float64{1}}}, nil, "2 x values but 1 y values")
	f("backward mark", []XYLine{{Name: "fifo", X: []float64{0}, Y: []float64{1}}}, []Mark{{From: 2, To: 1}}, "From <= To")
}

func TestSweep(t *testing.T) {
	caps := []float64{32, 64, 128, 256, 512, 1024}
	c, err := Sweep(Spec{Title: "saturation by capacity", XLabel: "queue capacity (jobs)", YLabel: "saturation (req/s)"}, []XYLine{
		{Name: "fifo", X: caps, Y: []float64{20000, 21000, 21500, 21400, 21000, 20500}},
		{Name: "lifo", X: caps, Y: []float64{20500, 21500, 22000, 21900, 21800, 21700}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every swept value is a tick on the log axis.
	checkChart(t, c, "saturation by capacity", "queue capacity (jobs, log scale)", "saturation (req/s)", "fifo", "lifo", "32", "128", "1024")
}

func TestSweepDegenerate(t *testing.T) {
	f := func(name string, lines []XYLine, wantErr string) {
		t.Helper()
		c, err := Sweep(Spec{Title: name}, lines)
		if wantErr == "" {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkSVG(t, c.SVG)
			return
		}
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("%s: error %v, want one containing %q", name, err, wantErr)
		}
	}
	f("no lines", nil, "no lines")
	f("one point", []XYLine{{Name: "fifo", X: []float64{8}, Y: []float64{100}}}, "")
	f("zero x and y", []XYLine{{Name: "fifo", X: []float64{0, 0}, Y: []float64{0, 0}}}, "")
	f("negative y", []XYLine{{Name: "fifo", X: []float64{1, 2}, Y: []float64{-3, 4}}}, "")
}

func TestSpecIsChecked(t *testing.T) {
	line := []XYLine{{Name: "fifo", X: []float64{1}, Y: []float64{1}}}
	if _, err := Sweep(Spec{}, line); err == nil || !strings.Contains(err.Error(), "Title") {
		t.Fatalf("empty title: error %v, want one naming Title", err)
	}
	// A long title is wrapped; a caption that leaves no room for the plot
	// is refused.
	title := "a title long enough that it has to wrap onto a second line, and then perhaps onto a third one as well"
	wrapped, err := Sweep(Spec{Title: title}, []XYLine{{Name: "a rather long series name", X: []float64{1, 2}, Y: []float64{1, 2}}})
	if err != nil {
		t.Fatalf("long title: %v", err)
	}
	checkChart(t, wrapped, "a title long enough")
	curve := []CurveLine{curveLine("fifo", []float64{1, 2}, []float64{1, 2}, []float64{1, 200})}
	long := strings.Repeat("a caption that goes on and on ", 300)
	if _, err := Curves(Spec{Title: title, Caption: long}, curve, 100); err == nil || !strings.Contains(err.Error(), "no room") {
		t.Fatalf("caption filling the chart: error %v, want one saying there is no room", err)
	}
	c, err := Sweep(Spec{Title: "t", Caption: "Read this."}, line)
	if err != nil {
		t.Fatal(err)
	}
	if c.Caption != "Read this." {
		t.Fatalf("caption %q, want the one given", c.Caption)
	}
}

func TestSave(t *testing.T) {
	c, err := Sweep(Spec{Title: "t"}, []XYLine{{Name: "fifo", X: []float64{1, 2}, Y: []float64{1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.svg")
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, c.SVG) {
		t.Fatal("saved file differs from Chart.SVG")
	}
	if err := c.Save(filepath.Join(t.TempDir(), "missing", "c.svg")); err == nil {
		t.Fatal("Save into a missing directory succeeded")
	}
}

func TestColoursStableAndDistinct(t *testing.T) {
	a := colours([]string{"fifo", "zeta", "alpha"})
	b := colours([]string{"alpha", "lifo", "zeta", "fifo"})
	for _, n := range []string{"fifo", "zeta", "alpha"} {
		if a[n] != b[n] {
			t.Errorf("colour of %q differs between charts: %v vs %v", n, a[n], b[n])
		}
	}
	var names []string
	for i := 0; i < len(palette); i++ {
		names = append(names, string(rune('a'+i))+"-series")
	}
	got := colours(names)
	seen := map[any]string{}
	for _, n := range names {
		if other, dup := seen[got[n]]; dup {
			t.Fatalf("%q and %q share a colour", n, other)
		}
		seen[got[n]] = n
	}
}

func TestLogTicksAlwaysLabelTwo(t *testing.T) {
	f := func(min, max float64) {
		t.Helper()
		labelled := 0
		for _, tk := range (logTicks{}).Ticks(min, max) {
			if tk.Value < min || tk.Value > max {
				t.Errorf("[%v, %v]: tick %v out of range", min, max, tk.Value)
			}
			if tk.Label != "" {
				labelled++
			}
		}
		if labelled < 2 {
			t.Errorf("[%v, %v]: %d labelled ticks, want at least 2", min, max, labelled)
		}
	}
	f(1.2, 8)
	f(0.3, 0.9)
	f(0.001, 5000)
	f(90, 250)
	f(4.35, 5.75)
	f(1.01, 1.02)
}

// TestOddInputNeverPanics feeds every chart random, often hostile input
// (zeros, NaN, infinities, huge and tiny values, empty and single-point
// series) and requires each call to return a valid SVG or an error from
// validation: never a panic, and never gonum failing mid-drawing (which
// render would turn into a "cannot draw" error).
func TestOddInputNeverPanics(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	odd := []float64{0, -1, math.NaN(), math.Inf(1), 1e-9, 1e12, 50, 99.9, 100, 101}
	val := func() float64 {
		if rng.IntN(4) == 0 {
			return odd[rng.IntN(len(odd))]
		}
		return rng.Float64() * 1000
	}
	vals := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = val()
		}
		return v
	}
	names := []string{"direct", "fifo", "lifo", "x", "x", ""}
	drawn := map[string]int{}
	check := func(what string, c Chart, err error) {
		t.Helper()
		if err != nil {
			if strings.Contains(err.Error(), "cannot draw") {
				t.Fatalf("%s: input passed validation but failed to draw: %v", what, err)
			}
			return
		}
		checkSVG(t, c.SVG)
		drawn[what]++
	}
	for i := 0; i < 300; i++ {
		nLines, n := rng.IntN(4), rng.IntN(5)
		spec := Spec{Title: "odd"}
		var pl []PercentileLine
		var cl []CurveLine
		var xl []XYLine
		for j := 0; j < nLines; j++ {
			name := names[rng.IntN(len(names))]
			pl = append(pl, PercentileLine{Name: name, Percentiles: vals(n), CorrectedMs: vals(n), UncorrectedMs: vals(n)})
			cl = append(cl, curveLine(name, vals(n), vals(n), vals(n)))
			xl = append(xl, XYLine{Name: name, X: vals(n), Y: vals(n)})
		}
		c, err := LatencyByPercentile(spec, pl)
		check("LatencyByPercentile", c, err)
		c, err = Curves(spec, cl, val())
		check("Curves", c, err)
		c, err = TimeSeries(spec, xl, []Mark{{From: val(), To: val()}})
		check("TimeSeries", c, err)
		c, err = Sweep(spec, xl)
		check("Sweep", c, err)
		c, err = Scaling(spec, xl)
		check("Scaling", c, err)
		groups, series := names[:rng.IntN(3)], names[1:1+rng.IntN(3)]
		rows := make([][]float64, len(series))
		for s := range rows {
			rows[s] = vals(len(groups))
		}
		c, err = GroupedBars(spec, groups, series, rows)
		check("GroupedBars", c, err)
	}
	// The input must not be so hostile that nothing is ever drawn.
	for _, what := range []string{"LatencyByPercentile", "Curves", "TimeSeries", "Sweep", "Scaling", "GroupedBars"} {
		if drawn[what] < 10 {
			t.Errorf("%s drew only %d of the random inputs; the test exercises validation only", what, drawn[what])
		}
	}
}

func TestLogLabel(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := logLabel(in); got != want {
			t.Fatalf("logLabel(%q) = %q, want %q", in, got, want)
		}
	}
	f("corrected p99 (ms)", "corrected p99 (ms, log scale)")
	f("workers", "workers (log scale)")
	f("latency (ms, log scale)", "latency (ms, log scale)")
}

// TestAxisScaleFollowsData: the time series goes logarithmic only when its
// values span a factor of 10, the sweep's x only when the swept values
// span a factor of 8, and the axis label says so.
func TestAxisScaleFollowsData(t *testing.T) {
	f := func(name string, c Chart, err error, wantLog bool) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := strings.Contains(checkSVG(t, c.SVG), "log scale"); got != wantLog {
			t.Fatalf("%s: log scale %v, want %v", name, got, wantLog)
		}
	}
	ts := func(ys ...float64) (Chart, error) {
		xs := make([]float64, len(ys))
		for i := range xs {
			xs[i] = float64(i)
		}
		return TimeSeries(Spec{Title: "t", Caption: "c"}, []XYLine{{Name: "fifo", X: xs, Y: ys}}, nil)
	}
	sw := func(xs ...float64) (Chart, error) {
		return Sweep(Spec{Title: "t", Caption: "c", XLabel: "workers"}, []XYLine{{Name: "fifo", X: xs, Y: xs}})
	}
	c, err := ts(2, 3, 19.9)
	f("time series within 10×", c, err, false)
	c, err = ts(2, 3, 20)
	f("time series over 10×", c, err, true)
	c, err = ts(0, 3, 2000)
	f("time series with a zero", c, err, false)
	c, err = sw(2, 4, 8)
	f("sweep within 8×", c, err, false)
	c, err = sw(2, 8, 64)
	f("sweep over 8×", c, err, true)
}

// paths counts the <path> elements of an SVG: each bar, line segment run
// and dot is one, so the count tells what a change of input drew.
func paths(t *testing.T, c Chart, err error) int {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(c.SVG, []byte("<path"))
}

// TestMissingValuesLeaveGaps: NaN is "not measured", drawn as nothing, not
// as zero: a missing bar is one bar fewer, a missing second breaks a line
// in two (a single point left alone is drawn as a dot).
func TestMissingValuesLeaveGaps(t *testing.T) {
	nan := math.NaN()
	bars := func(v float64) int {
		c, err := GroupedBars(Spec{Title: "t", Caption: "c"}, []string{"fifo", "lifo"}, []string{"reject"}, [][]float64{{1, v}})
		return paths(t, c, err)
	}
	if full, gap := bars(2), bars(nan); gap != full-1 {
		t.Fatalf("bars: %d paths with a NaN, %d without; want exactly one bar fewer", gap, full)
	}
	if full, zero := bars(2), bars(0); zero != full {
		t.Fatalf("bars: %d paths with a zero, %d with a value; a zero is a bar of height 0", zero, full)
	}
	series := func(ys ...float64) int {
		c, err := TimeSeries(Spec{Title: "t", Caption: "c"}, []XYLine{{Name: "fifo", X: []float64{0, 1, 2, 3, 4}, Y: ys}}, nil)
		return paths(t, c, err)
	}
	whole, broken, dot := series(1, 2, 3, 4, 5), series(1, 2, nan, 4, 5), series(1, 2, 3, nan, 5)
	if broken != whole+1 {
		t.Fatalf("time series: %d paths broken by a NaN, %d whole; want one line more", broken, whole)
	}
	if dot != whole+1 {
		t.Fatalf("time series: %d paths with a lone last point, %d whole; want the line plus a dot", dot, whole)
	}
}
