package render

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/chart"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// drawCharts draws every chart the comparison's numbers allow into
// dir/charts (replaced), listing them in r; a chart that cannot be drawn
// becomes a note of r.
func drawCharts(c *result.Comparison, a *analysis.Analysis, dir string, r *Report) {
	err := os.RemoveAll(filepath.Join(dir, ChartsDir))
	if err == nil {
		err = os.MkdirAll(filepath.Join(dir, ChartsDir), 0o755)
	}
	if err != nil {
		r.Notes = append(r.Notes, fmt.Sprintf("no charts: %v", err))
		return
	}
	// save(name, title) saves a chart as charts/name, or notes why not.
	save := func(name, title string) func(chart.Chart, error) {
		return func(ch chart.Chart, err error) {
			if err != nil {
				r.Notes = append(r.Notes, fmt.Sprintf("chart %q not drawn: %v", title, err))
				return
			}
			rel := filepath.Join(ChartsDir, name)
			if err := ch.Save(filepath.Join(dir, rel)); err != nil {
				r.Notes = append(r.Notes, fmt.Sprintf("chart %q not saved: %v", title, err))
				return
			}
			r.Charts = append(r.Charts, Chart{Title: title, Path: rel, Caption: ch.Caption})
		}
	}
	// xy draws lines with draw where there are any.
	xy := func(name string, spec chart.Spec, lines []chart.XYLine, draw func(chart.Spec, []chart.XYLine) (chart.Chart, error)) {
		if len(lines) > 0 {
			save(name, spec.Title)(draw(spec, lines))
		}
	}
	p, t := c.Plan, c.Options.StepTiming()
	for i, wr := range c.Workloads {
		aw := a.Workloads[i]
		wl := plan.Slug(wr.Workload)
		if lines := percentileLines(wr); len(lines) > 0 {
			title := fmt.Sprintf("Latency by percentile at %s req/s (70 %% of direct's saturation), %s", thousands(aw.FixedRate), wr.Workload)
			if p.OwnRates {
				title = fmt.Sprintf("Latency by percentile at 70 %% of each pool's own saturation, %s", wr.Workload)
			}
			save(wl+"-latency.svg", title)(chart.LatencyByPercentile(chart.Spec{Title: title}, lines))
		}
		if lines := curveLines(wr, aw.Grid); len(lines) > 0 {
			title := "Saturation search, " + wr.Workload
			if aw.Grid != nil {
				title += fmt.Sprintf(", kvserver on %s", cpusText(aw.Grid.Largest(), "CPU"))
			}
			var caption []string
			if anyStep(lines, func(p result.CurvePoint) bool { return p.LoaderBound && !p.Validating() }) {
				caption = append(caption, " A cross marks a loader-bound step: it failed because the loader ran out, so it says nothing of the server, and the saturation found below it is only a lower bound.")
			}
			if slices.ContainsFunc(lines, func(l chart.CurveLine) bool { return l.Search.Bracket != nil && l.Search.Bracket.Hi > 0 }) {
				caption = append(caption, " The thick band on a line is its search's bracket: from the highest offered rate that held to the lowest that failed twice; dashed where no validating run held, so that no saturation was found.")
			}
			if anyStep(lines, func(p result.CurvePoint) bool { return len(p.Seconds) > 0 }) {
				caption = append(caption, " Small marks are the judged seconds (shorter intervals in a quick run) of the steps that decided each bracket, spread in time order, left to right, over a narrow band around their step's offered rate. At its lower end are the search step and the validating run that held, at its upper end the runs that failed; a ring held, a triangle failed. One triangle among rings was a stall; a row of them, the whole step.")
			}
			spec := chart.Spec{Title: title}
			if len(caption) > 0 {
				spec.Caption = "Above: answered rate against offered rate; below: corrected p99 against the red SLO line." + strings.Join(caption, "")
			}
			save(wl+"-saturation.svg", title)(chart.Curves(spec, lines, ms(c.Options.SLO)))
		}
		if aw.Grid != nil {
			sat, cpu := scalingLines(aw.Grid)
			xy(wl+"-scaling.svg", chart.Spec{Title: fmt.Sprintf("Saturation against kvserver's CPUs, %s", wr.Workload), XLabel: "kvserver's CPUs", YLabel: "saturation, median (req/s)",
				Caption: "Each pool's median saturation against the CPUs kvserver ran on; its dashed line is linear scaling from its figure at the fewest CPUs. Loader-bound saturations (lower bounds) are left out."}, sat, chart.Scaling)
			xy(wl+"-scaling-cpu.svg", chart.Spec{Title: fmt.Sprintf("Server CPU per request against kvserver's CPUs, %s", wr.Workload), XLabel: "kvserver's CPUs", YLabel: "kvserver CPU per request (µs)",
				Caption: "kvserver's CPU time per request in the closed loop (where it ran; else the saturation's validating run), one line per pool: what each pool costs beyond direct at each count, and how that grows with CPUs."}, cpu, chart.Sweep)
		}
		if groups, series, good, p99 := overloadBars(wr); len(groups) > 0 {
			title := fmt.Sprintf("Goodput under overload, %s", wr.Workload)
			save(wl+"-goodput.svg", title)(chart.GroupedBars(chart.Spec{Title: title, YLabel: "goodput: served answers (req/s)"}, groups, series, good))
			title = fmt.Sprintf("p99 of served requests under overload, %s", wr.Workload)
			save(wl+"-overload-p99.svg", title)(chart.GroupedBars(chart.Spec{Title: title, YLabel: "corrected p99 of served (ms)"}, groups, series, p99))
		}
		if lines, marks := perSecondLines(wr, t, p.OverloadFactor); len(lines) > 0 {
			if wr.BaseLowerBound {
				marks[0].Label = fmt.Sprintf("overload, at most %g×", p.OverloadFactor)
			}
			title := fmt.Sprintf("Corrected p99 per second through the overload and after, %s", wr.Workload)
			save(wl+"-overload-timeline.svg", title)(chart.TimeSeries(chart.Spec{Title: title, YLabel: "corrected p99 (ms)"}, lines, marks))
		}
		if p.Sweep != "" {
			sat, p99 := sweepLines(wr, aw, p.Sweep)
			xl := map[string]string{"cap": "queue capacity (-cap)", "workers": "workers (-workers)"}[p.Sweep]
			xy(wl+"-sweep-saturation.svg", chart.Spec{Title: fmt.Sprintf("Saturation against %s, %s", p.Sweep, wr.Workload), XLabel: xl, YLabel: "saturation, median (req/s)"}, sat, chart.Sweep)
			xy(wl+"-sweep-p99.svg", chart.Spec{Title: fmt.Sprintf("p99 at 70 %% of %s against %s, %s", refName(p), p.Sweep, wr.Workload), XLabel: xl, YLabel: "corrected p99 (ms)"}, p99, chart.Sweep)
		}
	}
	metastableCharts(c, save)
	writesCharts(c, a, save)
}

// percentileLines: one line per variant with a fixed-rate step whose
// distribution is known.
func percentileLines(wr *result.WorkloadResult) []chart.PercentileLine {
	var lines []chart.PercentileLine
	for _, v := range wr.Variants {
		if v.Fixed == nil || v.Fixed.Distribution == nil || len(v.Fixed.Distribution.Percentiles) == 0 {
			continue
		}
		d := v.Fixed.Distribution
		l := chart.PercentileLine{Name: v.Name, Percentiles: d.Percentiles}
		for i := range d.Percentiles {
			l.CorrectedMs = append(l.CorrectedMs, ms(d.Corrected[i]))
			l.UncorrectedMs = append(l.UncorrectedMs, ms(d.Uncorrected[i]))
		}
		lines = append(lines, l)
	}
	return lines
}

// curveLines: each variant's first saturation search, as chart.Curves
// draws it (its deciding steps' seconds where they were recorded). Of a
// scaling comparison, the variants at the most CPUs only (one line per
// pool).
func curveLines(wr *result.WorkloadResult, g *analysis.Grid) []chart.CurveLine {
	var lines []chart.CurveLine
	for _, v := range wr.Variants {
		if len(v.Sat) == 0 || g != nil && v.Variant.CPUs != g.Largest() ||
			!slices.ContainsFunc(v.Sat[0].Curve, func(p result.CurvePoint) bool { return !p.Validating() }) {
			continue
		}
		lines = append(lines, chart.CurveLine{Name: v.Name, Search: v.Sat[0]})
	}
	return lines
}

func anyStep(lines []chart.CurveLine, is func(result.CurvePoint) bool) bool {
	return slices.ContainsFunc(lines, func(l chart.CurveLine) bool { return slices.ContainsFunc(l.Search.Curve, is) })
}

// scalingLines are the scaling charts' lines: per variant, the median
// saturation against kvserver's CPUs (loader-bound points left out: they
// are lower bounds, not the curve), and CPU per request (the closed
// loop's, else the validating runs').
func scalingLines(g *analysis.Grid) (sat, cpu []chart.XYLine) {
	for _, row := range g.Rows {
		s, c := chart.XYLine{Name: row}, chart.XYLine{Name: row}
		for _, n := range g.Counts {
			v := g.At(row, n)
			if v == nil {
				continue
			}
			if v.Sat != nil && !v.Sat.LowerBound && v.Sat.Rate.Median > 0 {
				s.X, s.Y = append(s.X, float64(n)), append(s.Y, v.Sat.Rate.Median)
			}
			var d time.Duration
			if v.Closed != nil {
				d = v.Closed.CPUPerRequest
			}
			if d <= 0 && v.Sat != nil {
				d = v.Sat.CPUPerRequest
			}
			if d > 0 {
				c.X, c.Y = append(c.X, float64(n)), append(c.Y, float64(d)/float64(time.Microsecond))
			}
		}
		if len(s.X) > 0 {
			sat = append(sat, s)
		}
		if len(c.X) > 0 {
			cpu = append(cpu, c)
		}
	}
	return sat, cpu
}

// overloadBars: groups are pools (with their workers or exec mode),
// series their configurations: the policy (of the policy variants, at
// -cap 1024), kvserver's defaults, an adaptive limit, unbounded; NaN
// where a pool has no such series (direct).
func overloadBars(wr *result.WorkloadResult) (groups, series []string, goodput, p99 [][]float64) {
	kinds := map[string]bool{}
	for _, v := range wr.Variants {
		if v.Overload != nil && !v.Variant.IsBaseline() {
			kinds[barSeries(v.Variant)] = true
		}
	}
	// One configuration (or none besides direct): one series, no legend
	// of configurations.
	seriesOf := func(v plan.Variant) string {
		switch {
		case len(kinds) <= 1:
			return "at each pool's default policy"
		case v.IsBaseline():
			return "direct (no queue)"
		}
		return barSeries(v)
	}
	groupOf := func(v plan.Variant) string {
		return plan.Variant{Pool: v.Pool, Workers: v.Workers, Exec: v.Exec, CPUs: v.CPUs}.Name()
	}
	for _, v := range wr.Variants {
		if v.Overload == nil {
			continue
		}
		if g := groupOf(v.Variant); !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
		if s := seriesOf(v.Variant); !slices.Contains(series, s) {
			series = append(series, s)
		}
	}
	if len(groups) == 0 {
		return nil, nil, nil, nil
	}
	goodput, p99 = nanGrid(len(series), len(groups)), nanGrid(len(series), len(groups))
	for _, v := range wr.Variants {
		if o := v.Overload; o != nil {
			s, g := slices.Index(series, seriesOf(v.Variant)), slices.Index(groups, groupOf(v.Variant))
			goodput[s][g], p99[s][g] = o.Goodput, ms(o.ServedP99)
		}
	}
	return groups, series, goodput, p99
}

// barSeries is v's configuration as an overload chart's series: its
// policy, "unbounded", "limit=vegas", or "defaults".
func barSeries(v plan.Variant) string {
	switch {
	case v.CapSet && v.Cap < 0:
		return "unbounded"
	case v.Limit != "":
		return "limit=" + v.Limit
	case v.Policy != "":
		return v.Policy
	}
	return "defaults"
}

func nanGrid(rows, cols int) [][]float64 {
	g := make([][]float64, rows)
	for i := range g {
		g[i] = slices.Repeat([]float64{math.NaN()}, cols)
	}
	return g
}

// perSecondLines: corrected p99 per second of the overload step (by the
// second each request was due in), then one point per recovery probe.
func perSecondLines(wr *result.WorkloadResult, t plan.Timing, factor float64) ([]chart.XYLine, []chart.Mark) {
	var lines []chart.XYLine
	for _, v := range wr.Variants {
		o := v.Overload
		if o == nil || len(o.PerSecond) == 0 {
			continue
		}
		// A second of the step whose requests were never sent (the loader
		// fell behind) is a gap in the line, not a slope to the next point.
		n := int(math.Ceil(t.Overload.Seconds()))
		l := chart.XYLine{Name: v.Name, Y: slices.Repeat([]float64{math.NaN()}, n)}
		for sec := range n {
			l.X = append(l.X, float64(sec)+0.5)
		}
		for _, p := range o.PerSecond {
			if p.Second >= 0 && p.Second < n {
				l.Y[p.Second] = ms(p.P99)
			}
		}
		end := t.Overload.Seconds()
		for i, p := range o.RecoveryP99 {
			l.X = append(l.X, end+(float64(i)+0.5)*t.ProbeLength.Seconds())
			l.Y = append(l.Y, ms(p))
		}
		lines = append(lines, l)
	}
	marks := []chart.Mark{{From: 0, To: t.Overload.Seconds(), Label: fmt.Sprintf("overload %g×", factor)}}
	return lines, marks
}

// sweepLines: per pool, the median saturation and the fixed step's p99
// against the swept parameter.
func sweepLines(wr *result.WorkloadResult, aw *analysis.Workload, sweep string) (sat, p99 []chart.XYLine) {
	satBy, p99By := map[string]*chart.XYLine{}, map[string]*chart.XYLine{}
	var order []string
	for i, v := range wr.Variants {
		x := float64(v.Variant.Cap)
		if sweep == "workers" {
			x = float64(v.Variant.Workers)
		}
		if v.Variant.IsBaseline() || x <= 0 {
			continue
		}
		name := v.Variant.Pool
		if v.Variant.Policy != "" {
			name += "/" + v.Variant.Policy
		}
		if _, ok := satBy[name]; !ok {
			order = append(order, name)
			satBy[name], p99By[name] = &chart.XYLine{Name: name}, &chart.XYLine{Name: name}
		}
		if s := aw.Variants[i].Sat; s != nil {
			satBy[name].X = append(satBy[name].X, x)
			satBy[name].Y = append(satBy[name].Y, s.Rate.Median)
		}
		if v.Fixed != nil {
			p99By[name].X = append(p99By[name].X, x)
			p99By[name].Y = append(p99By[name].Y, ms(v.Fixed.Corrected.P99))
		}
	}
	for _, n := range order {
		if len(satBy[n].X) > 0 {
			sat = append(sat, *satBy[n])
		}
		if len(p99By[n].X) > 0 {
			p99 = append(p99, *p99By[n])
		}
	}
	return sat, p99
}
