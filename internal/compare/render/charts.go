package render

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
	xy := func(name string, spec chart.Spec, lines []analysis.Line, draw func(chart.Spec, []chart.XYLine) (chart.Chart, error)) {
		if len(lines) > 0 {
			save(name, spec.Title)(draw(spec, lines))
		}
	}
	p, t := c.Plan, c.Options.StepTiming()
	for i, wr := range c.Workloads {
		aw := a.Workloads[i]
		wl := plan.Slug(wr.Workload)
		if lines := aw.Percentiles; len(lines) > 0 {
			title := fmt.Sprintf("Latency by percentile at %s req/s (70 %% of direct's saturation), %s", thousands(aw.FixedRate), wr.Workload)
			if p.OwnRates {
				title = fmt.Sprintf("Latency by percentile at 70 %% of each pool's own saturation, %s", wr.Workload)
			}
			save(wl+"-latency.svg", title)(chart.LatencyByPercentile(chart.Spec{Title: title}, lines))
		}
		if lines := aw.Curves; len(lines) > 0 {
			title := "Saturation search, " + wr.Workload
			if aw.Grid != nil {
				title += fmt.Sprintf(", kvserver on %s", result.Count(aw.Grid.Largest(), "CPU"))
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
			xy(wl+"-scaling.svg", chart.Spec{Title: fmt.Sprintf("Saturation against kvserver's CPUs, %s", wr.Workload), XLabel: "kvserver's CPUs", YLabel: "saturation, median (req/s)",
				Caption: "Each pool's median saturation against the CPUs kvserver ran on; its dashed line is linear scaling from its figure at the fewest CPUs. Loader-bound saturations (lower bounds) are left out."}, aw.Grid.Saturation, chart.Scaling)
			xy(wl+"-scaling-cpu.svg", chart.Spec{Title: fmt.Sprintf("Server CPU per request against kvserver's CPUs, %s", wr.Workload), XLabel: "kvserver's CPUs", YLabel: "kvserver CPU per request (µs)",
				Caption: "kvserver's CPU time per request in the closed loop (where it ran; else the saturation's validating run), one line per pool: what each pool costs beyond direct at each count, and how that grows with CPUs."}, aw.Grid.CPU, chart.Sweep)
		}
		if bars := aw.OverloadBars; bars != nil {
			title := fmt.Sprintf("Goodput under overload, %s", wr.Workload)
			save(wl+"-goodput.svg", title)(chart.GroupedBars(chart.Spec{Title: title, YLabel: "goodput: served answers (req/s)"}, bars.Groups, bars.Series, bars.Goodput))
			title = fmt.Sprintf("p99 of served requests under overload, %s", wr.Workload)
			save(wl+"-overload-p99.svg", title)(chart.GroupedBars(chart.Spec{Title: title, YLabel: "corrected p99 of served (ms)"}, bars.Groups, bars.Series, bars.P99))
		}
		if lines := aw.OverloadTimeline; len(lines) > 0 {
			mark := chart.Mark{From: 0, To: t.Overload.Seconds(), Label: fmt.Sprintf("overload %g×", p.OverloadFactor)}
			if wr.BaseLowerBound {
				mark.Label = fmt.Sprintf("overload, at most %g×", p.OverloadFactor)
			}
			title := fmt.Sprintf("Corrected p99 per second through the overload and after, %s", wr.Workload)
			save(wl+"-overload-timeline.svg", title)(chart.TimeSeries(chart.Spec{Title: title, YLabel: "corrected p99 (ms)"}, lines, []chart.Mark{mark}))
		}
		if p.Sweep != "" {
			xl := map[string]string{"cap": "queue capacity (-cap)", "workers": "workers (-workers)"}[p.Sweep]
			xy(wl+"-sweep-saturation.svg", chart.Spec{Title: fmt.Sprintf("Saturation against %s, %s", p.Sweep, wr.Workload), XLabel: xl, YLabel: "saturation, median (req/s)"}, aw.SweepSaturation, chart.Sweep)
			xy(wl+"-sweep-p99.svg", chart.Spec{Title: fmt.Sprintf("p99 at 70 %% of %s against %s, %s", refName(p), p.Sweep, wr.Workload), XLabel: xl, YLabel: "corrected p99 (ms)"}, aw.SweepP99, chart.Sweep)
		}
	}
	metastableCharts(c, a.Metastable, save)
	writesCharts(c, a, save)
}

func anyStep(lines []chart.CurveLine, is func(result.CurvePoint) bool) bool {
	return slices.ContainsFunc(lines, func(l chart.CurveLine) bool { return slices.ContainsFunc(l.Search.Curve, is) })
}
