package render

import (
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/cpuset"
)

// comparisonOf builds a comparison of preset with one workload, "get",
// whose variants (named pools) have the given saturation runs.
func comparisonOf(t *testing.T, preset string, sat map[string][]float64, order ...string) *result.Comparison {
	t.Helper()
	wr := &result.WorkloadResult{Workload: "get"}
	for _, name := range order {
		v := &result.VariantResult{Variant: plan.Variant{Pool: name}, Name: name}
		for i, r := range sat[name] {
			v.Sat = append(v.Sat, result.SatRun{Repeat: i + 1, Rate: r, Validated: true})
		}
		wr.Variants = append(wr.Variants, v)
	}
	o := plan.DefaultOptions()
	o.Preset = preset
	p, err := plan.New(&o, 2)
	require.NoError(t, err)
	return &result.Comparison{Preset: preset, Options: o, Plan: p, Workloads: []*result.WorkloadResult{wr},
		Criteria: result.Criteria{MaxErrorRate: 0.001, LoaderBusy: 0.9}}
}

// workloadText is what writeWorkload writes of c's first workload.
func workloadText(c *result.Comparison) string {
	var b page
	writeWorkload(&b, c, c.Workloads[0], analysis.Analyze(c).Workloads[0])
	return b.String()
}

func TestNumbers(t *testing.T) {
	assert.Equal(t, "41,200", thousands(41200))
	assert.Equal(t, "999", thousands(999.4))
	assert.Equal(t, "1,000,000", thousands(1e6))
	assert.Equal(t, "-1,500", thousands(-1500))
	assert.Equal(t, " (0.50×)", ratio(0.5))
	assert.Equal(t, "", ratio(math.NaN()), "no ratio without a baseline")
	assert.Equal(t, "12.3us", cpuMicros(12340*time.Nanosecond))
	assert.Equal(t, "2.46ms (1.20×)", durRatio(2460*time.Microsecond, 1.2))
	assert.Equal(t, "0", pctCell(0))
	assert.Equal(t, "0.65 %", pctCell(0.0065))
	assert.Equal(t, "93 % of 8", shareCell(cpuset.Use{Share: 0.93, CPUs: 8}))
	assert.Equal(t, "unknown", shareCell(cpuset.Use{Share: -1, CPUs: 8}))
	assert.Equal(t, "-", shareCell(cpuset.Use{Share: 0.5}))
	assert.Equal(t, "1, 2 and 4 CPUs", countsText([]int{1, 2, 4}))
	assert.Equal(t, "1 CPU", countsText([]int{1}))
	assert.Equal(t, "0.50–0.75", span(0.5, 0.75, two))
	assert.Equal(t, "0.50", span(0.5, 0.501, two), "one value where both print the same")
}

// TestSaturationCells: a saturation reads as its bracket and whether it
// was validated, with its ratio to direct's; an unvalidated one is
// marked, with no ratio; a loader-bound one reads "≥ X" with the
// loader's CPUs and no ratio; a comparison that did not record brackets
// reads as it did.
func TestSaturationCells(t *testing.T) {
	c := comparisonOf(t, "queues", map[string][]float64{"direct": {40000, 41000, 40500}, "fifo": {30000, 31000, 30500}, "lifo": {104000}},
		"direct", "fifo", "lifo")
	wr := c.Workloads[0]
	for _, v := range wr.Variants {
		for i := range v.Sat {
			v.Sat[i].Bracket = &result.Bracket{Lo: v.Sat[i].Rate, Hi: v.Sat[i].Rate + 2000}
		}
	}
	wr.Variants[2].Sat[0].LoaderBound, wr.Variants[2].Sat[0].LoaderCPUs = true, 1
	wr.Variants[2].Fixed = &result.FixedRun{}
	wr.BaseRate = 40500
	text := workloadText(c)
	assert.Contains(t, text, "| pool | policy | saturation req/s: held–failed (median of 3) |")
	assert.Contains(t, text, "| direct | - | 40,500–42,500, validated (1.00×) |")
	assert.Contains(t, text, "| fifo | default | 30,500–32,500, validated (0.75×) |")
	assert.Contains(t, text, "| lifo | default | ≥ 104,000, loader-bound with 1 loader CPU |")
	assert.Contains(t, text, "Direct's saturation: 40,500 req/s, validated;")

	fifo := wr.Variants[1]
	for i := range fifo.Sat {
		fifo.Sat[i].Candidate, fifo.Sat[i].Rate, fifo.Sat[i].Validated = fifo.Sat[i].Rate+1000, 0, false
	}
	text = workloadText(c)
	assert.Contains(t, text, "| fifo | default | 30,500–32,500, **not validated** (31,500 failed its validation) in 3 of 3 searches |", "no ratio from an unvalidated rate")

	// One search of three held; the two that did not (one loader-bound)
	// held nothing below where they failed. The cell is the search that
	// held, not "≥ 0": a search that held nothing bounds nothing.
	fifo.Sat[0].Bracket, fifo.Sat[0].LoaderBound, fifo.Sat[0].LoaderCPUs = &result.Bracket{Hi: 29000}, true, 1
	fifo.Sat[1].Bracket = &result.Bracket{Hi: 29500}
	fifo.Sat[2].Rate, fifo.Sat[2].Validated = 30500, true
	text = workloadText(c)
	assert.Contains(t, text, "| fifo | default | 30,500–32,500, validated (0.75×), 1 of 3 held in validation |")
	fifo.Sat[2].Rate, fifo.Sat[2].Validated = 0, false
	text = workloadText(c)
	assert.Contains(t, text, "| fifo | default | < 29,500, **not validated** (31,500 failed its validation) in 3 of 3 searches, loader-bound |", "with none held, where they failed")
	for i, r := range []float64{30000, 31000, 30500} {
		fifo.Sat[i] = result.SatRun{Repeat: i + 1, Rate: 0, Candidate: r + 1000, Bracket: &result.Bracket{Lo: r, Hi: r + 2000}}
	}

	for i := range wr.Variants[0].Sat {
		wr.Variants[0].Sat[i].LoaderBound, wr.Variants[0].Sat[i].LoaderCPUs = true, 2
	}
	assert.Contains(t, workloadText(c), "| direct | - | ≥ 40,500, loader-bound with 2 loader CPUs |")

	for _, v := range wr.Variants {
		for i := range v.Sat {
			v.Sat[i].Bracket = nil
		}
	}
	fifo.Sat[1].Rate, fifo.Sat[1].Validated = 31000, true
	text = workloadText(c)
	assert.Contains(t, text, "| fifo | default | 31,000 ± 0, 1 of 3 held in validation |", "no brackets: the validated rate alone, no ratio to a lower bound")
	assert.Contains(t, text, "did not record its searches' brackets")
	wr.BaseRate = 0
	assert.Contains(t, workloadText(c), "**no search of direct held over its validation**")
}

// TestResultsTableOnlyWhereMeasured: a preset that measures the variants
// only under overload gets direct's saturation in a sentence, not a table
// of dashes; one with fixed steps keeps its table.
func TestResultsTableOnlyWhereMeasured(t *testing.T) {
	c := comparisonOf(t, "policies", map[string][]float64{"direct": {26000, 27000, 38000}}, "direct", "fifo")
	wr := c.Workloads[0]
	wr.BaseRate = 27000
	for i := range 2 {
		wr.Variants[0].Sat[i].Candidate, wr.Variants[0].Sat[i].Rate, wr.Variants[0].Sat[i].Validated = wr.Variants[0].Sat[i].Rate, 0, false
	}
	wr.Variants[1].Overload = &result.OverloadRun{Asked: 54000}
	text := workloadText(c)
	assert.Contains(t, text, "Direct's saturation in req/s (median ± half the spread of its searches): 38,000 ± 0, 1 of 3 held in validation. This preset measures the variants only under overload (below).",
		"the validated search alone")
	assert.NotContains(t, text, "| pool | policy | saturation")

	wr.Variants[0].Overload = &result.OverloadRun{Asked: 54000}
	assert.Contains(t, workloadText(c), "only under overload (below), asking 2× that.")
	wr.BaseLowerBound = true
	assert.Contains(t, workloadText(c), "asking 2× a lower bound: at most 2× direct's saturation.")
	assert.Contains(t, workloadText(c), "**Direct's saturation, which set the asked rate, is only a lower bound**")
	wr.BaseLowerBound = false

	wr.Variants[1].Fixed = &result.FixedRun{ErrorRate: 0.0065}
	text = workloadText(c)
	assert.Contains(t, text, "| pool | policy | saturation")
	assert.Contains(t, text, "| max | errors | server CPU/request |")
	assert.Contains(t, text, "| 0.65 % | ", "a fixed step's 503s are beside its latencies, which include them")
	assert.NotContains(t, text, "This preset measures the variants only under overload")
}

// TestOwnRatesTable: in the slow-backend preset each variant's fixed
// step runs at 70 % of its own saturation, and the table says at which
// rate.
func TestOwnRatesTable(t *testing.T) {
	c := comparisonOf(t, "slow-backend", map[string][]float64{"direct": {60000, 64000, 62000}, "fifo": {1700, 1750, 1800}}, "direct", "fifo")
	wr := c.Workloads[0]
	wr.BaseRate = 62000
	wr.Variants[0].Fixed = &result.FixedRun{Asked: plan.FixedShare * 62000}
	wr.Variants[1].Fixed = &result.FixedRun{Asked: plan.FixedShare * 1750}
	text := workloadText(c)
	assert.Contains(t, text, "at 70 % of its own saturation (the fixed rate column)")
	assert.Contains(t, text, "| fixed rate req/s | p50 |")
	assert.Contains(t, text, "|---|---|---|---|---|---|---|---|---|---|---|---|\n", "one rule cell per column")
	assert.Contains(t, text, "| 1,225 | ", "fifo's own rate")
	assert.Contains(t, text, "| 43,400 | ", "direct's")
	assert.Contains(t, runSummary(c, analysis.Analyze(c)), "a fixed-rate step of 20s at 70 % of each variant's own saturation")
}

// TestChartsOfACapacitySweep draws the charts of a synthetic capacity
// comparison: every chart the numbers allow is drawn, valid SVG, linked
// with its caption, and none becomes a note.
func TestChartsOfACapacitySweep(t *testing.T) {
	c := comparisonOf(t, "capacity", nil)
	wr := c.Workloads[0]
	wr.BaseRate = 40000
	ps := []float64{50, 90, 99, 99.9}
	add := func(v plan.Variant, rate float64, p99 time.Duration) {
		vr := &result.VariantResult{Variant: v, Name: v.Name()}
		for i, r := range []float64{rate, rate * 1.02} {
			vr.Sat = append(vr.Sat, result.SatRun{Repeat: i + 1, Rate: r, Validated: true, Curve: []result.CurvePoint{
				{Phase: "ramp", Asked: rate / 2, Achieved: rate / 2, P99: p99 / 4, Pass: true},
				{Phase: "ramp", Asked: rate, Achieved: rate, P99: p99, Pass: true},
				{Phase: "ramp", Asked: 2 * rate, Achieved: 1.1 * rate, P99: 40 * p99},
				{Phase: "validate", Asked: rate, Achieved: rate, P99: p99, Pass: true},
			}})
		}
		d := &result.Distribution{Percentiles: ps}
		for _, p := range ps {
			d.Corrected = append(d.Corrected, time.Duration(p/99*float64(p99)))
			d.Uncorrected = append(d.Uncorrected, time.Duration(p/110*float64(p99)))
		}
		vr.Fixed = &result.FixedRun{Distribution: d, Corrected: result.Latencies{P99: p99}}
		wr.Variants = append(wr.Variants, vr)
	}
	add(plan.Variant{Pool: "direct"}, 40000, time.Millisecond)
	for _, pool := range []string{"fifo", "lifo"} {
		for _, n := range []int{32, 256, 1024} {
			add(plan.Variant{Pool: pool, Cap: n, CapSet: true}, 38000+float64(n), 2*time.Millisecond)
		}
	}
	dir := t.TempDir()
	a := analysis.Analyze(c)
	r, err := Write(c, a, dir)
	require.NoError(t, err)
	assert.Empty(t, r.Notes, "every chart drawn")
	var names []string
	report := string(mustRead(t, r.Path))
	for _, ch := range r.Charts {
		names = append(names, filepath.Base(ch.Path))
		assert.NotEmpty(t, ch.Caption, "%s has a caption", ch.Path)
		assert.Contains(t, report, "]("+ch.Path+")", "chart %s not linked", ch.Path)
		assertSVG(t, filepath.Join(dir, ch.Path))
	}
	assert.Equal(t, []string{"get-latency.svg", "get-saturation.svg", "get-sweep-saturation.svg", "get-sweep-p99.svg"}, names)

	sat, p99 := a.Workloads[0].SweepSaturation, a.Workloads[0].SweepP99
	require.Len(t, sat, 2, "one line per pool, direct left out")
	assert.Equal(t, "fifo", sat[0].Name)
	assert.Equal(t, []float64{32, 256, 1024}, sat[0].X)
	assert.InDelta(t, 1.01*(38000+32), sat[0].Y[0], 1, "the median of the repeats")
	require.Len(t, p99, 2)
	assert.Equal(t, []float64{2, 2, 2}, p99[1].Y, "lifo's fixed-rate p99s, in ms")
}

// TestRenderAVersion0Comparison: a version-0 compare.json without the
// CPU sets, the loader's shares, the closed loop, Little's connections
// and the step plan renders: absent fields read as "not recorded", never
// as measured zeros or a loader-bound verdict.
func TestRenderAVersion0Comparison(t *testing.T) {
	dir := t.TempDir()
	old := `{
  "Preset": "policies",
  "Options": {"Preset": "policies", "Kvserver": "bin/kvserver", "Keys": 100000, "ValueSize": 500, "Repeat": 1,
    "SLO": 100000000, "Quick": true, "Pin": true, "MaxConns": 4096, "Out": "results"},
  "Env": {"CPUModel": "AMD EPYC", "Cores": 2, "GoVersion": "go1.26", "KvserverVersion": "devel", "Pinned": true,
    "LoadStart": "0.1 0.1 0.1", "LoadEnd": "1 1 1", "Started": "2026-11-24T10:00:00Z", "Finished": "2026-11-24T10:16:00Z"},
  "Workloads": [{"Workload": "mixed:0.5", "BaseRate": 46000, "Variants": [
    {"Variant": {"Pool": "direct", "Policy": "", "Cap": 0, "CapSet": false, "Workers": 0, "IODelay": 0, "IODelayDist": ""}, "Name": "direct",
     "Sat": [{"Repeat": 1, "Rate": 46000, "Validated": true, "HitMax": false, "Curve": [
       {"Phase": "ramp", "Asked": 23000, "Achieved": 23000, "P99": 2000000, "Pass": true, "Verdict": "ok"},
       {"Phase": "ramp", "Asked": 46000, "Achieved": 46000, "P99": 9000000, "Pass": true, "Verdict": "ok"},
       {"Phase": "ramp", "Asked": 92000, "Achieved": 50000, "P99": 900000000, "Pass": false, "Verdict": "p99 > 100ms"}], "Dir": "x"}],
     "Overload": {"Asked": 92000, "Planned": 1840000, "Sent": 1000000, "Achieved": 46000, "Goodput": 41578, "Served": 831560, "ServedP99": 900000000,
       "ServedP99Uncorrected": 150000000, "ConnsPeak": 4096, "InFlightPeak": 4000, "ServerCPUPerRequest": 20000, "Alive": true, "Verdict": "PASS"}},
    {"Variant": {"Pool": "lifo", "Policy": "reject", "Cap": 0, "CapSet": false, "Workers": 0, "IODelay": 0, "IODelayDist": ""}, "Name": "lifo/reject",
     "Overload": {"Asked": 92000, "Planned": 1840000, "Sent": 1000000, "Achieved": 46000, "Goodput": 30846, "Served": 616920, "Shed": 300000, "ShedPct": 30,
       "ServedP99": 900000000, "ServedP99Uncorrected": 450000000, "ConnsPeak": 4096, "InFlightPeak": 4000, "ServerCPUPerRequest": 18000, "Alive": true, "Verdict": "PASS"}}]}],
  "Loader": [{"Workload": "mixed:0.5", "Variant": "direct", "Step": "overload", "Asked": 92000, "SendRate": 50000, "LagP99": 0, "CPUPerRequest": 12000, "CPUShare": 0.61, "KeptUp": false}],
  "Findings": ["a version-0 file kept its findings' words; they are derived again"],
  "Charts": [{"Title": "a version-0 chart list", "Path": "charts/x.svg"}]
}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, result.File), []byte(old), 0o644))
	c, r, err := Render(dir)
	require.NoError(t, err)
	assert.Equal(t, result.Criteria{MaxErrorRate: 0.001, LoaderBusy: 0.9}, c.Criteria, "the rules of then")
	assert.Nil(t, c.Workloads[0].Steps, "no step plan: each variant sized its own")
	report := string(mustRead(t, r.Path))
	assert.Contains(t, report, "| CPUs | kvserver on CPUs 0 (1), loader on 1 (1 CPU) |", "-pin's CPUs")
	assert.Contains(t, report, "| mixed:0.5 | direct | overload | 92,000 | 50,000 | 0.00us | 12.0us | 0.61 cores | - | **no** | - |", "no shares, no verdict recorded")
	assert.NotContains(t, report, "CPU shares are of each side's own CPUs")
	assert.NotContains(t, report, "loader-bound with", "nothing was loader-bound")
	assert.NotContains(t, report, "Little's law")
	assert.NotContains(t, report, HeadClosed)
	assert.NotContains(t, report, "version-0 chart list")
	assert.Contains(t, report, "Direct's saturation in req/s (median ± half the spread of its searches): 46,000 ± 0. This preset measures the variants only under overload (below), asking 2× that.")
	assert.Contains(t, report, "| 4096 / 4000 | ", "peak connections without a recorded start")
	assert.Contains(t, report, "| - | - | - | PASS |", "no probe CPU recorded: no derived 503 cost")
	assert.Contains(t, report, "probes at 50 % of direct's saturation (1s before", "the quick timing of then")
	assert.NotContains(t, r.Findings, "a version-0 file kept its findings' words; they are derived again")
	for _, ch := range r.Charts {
		assertSVG(t, filepath.Join(dir, ch.Path))
	}
	assert.Equal(t, old, string(mustRead(t, filepath.Join(dir, result.File))), "rendering changes no data")
}

// TestRenderRefusesAFolderWithoutAComparison: a clear error, nothing
// written.
func TestRenderRefusesAFolderWithoutAComparison(t *testing.T) {
	dir := t.TempDir()
	_, _, err := Render(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), result.File)
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries)
}

// assertSVG checks that path is a well-formed XML document whose root is
// an <svg> element.
func assertSVG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	dec := xml.NewDecoder(f)
	dec.Strict = false
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "%s is not well-formed XML", path)
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	assert.Equal(t, "svg", root, "%s: root element", path)
}

// TestPairedTable: the paired rounds' ratios print as the ratio package
// writes them, "~" where the interval includes 1, with how wide the
// intervals came out; a comparison of variants without pairs says so.
func TestPairedTable(t *testing.T) {
	c := comparisonOf(t, "queues", map[string][]float64{"direct": {40000}, "fifo": {30000}, "lifo": {35000}}, "direct", "fifo", "lifo")
	wr := c.Workloads[0]
	wr.BaseRate = 40000
	assert.Contains(t, workloadText(c), "No closed-loop rounds paired with direct's ran")

	pr := func(ratios ...float64) *result.PairedRun {
		p := &result.PairedRun{Against: "direct", Conns: 64}
		for i, r := range ratios {
			b := 30000 + 2000*float64(i)
			p.Base = append(p.Base, result.ClosedRound{Rate: b, ServerCPUPerRequest: 20 * time.Microsecond})
			p.Variant = append(p.Variant, result.ClosedRound{Rate: b * r, ServerCPUPerRequest: 20 * time.Microsecond})
		}
		return p
	}
	wr.Variants[1].Paired = pr(0.90, 0.91, 0.89, 0.90, 0.92, 0.88)
	wr.Variants[2].Paired = pr(0.97, 1.03, 1.00, 0.99, 1.02, 0.98)
	text := workloadText(c)
	assert.Contains(t, text, HeadPaired+": `get`")
	assert.Regexp(t, `\| fifo \| 6 \| 64 \| [0-9,]+ \| [0-9,]+ \| 0\.90× \(0\.88–0\.92\) \| 20\.0us \| ~ 1\.00× \(1\.00–1\.00\) \| no \|`, text)
	assert.Regexp(t, `\| lifo \| 6 \| 64 \| .* \| ~ 0\.99× \(0\.97–1\.03\) \|`, text)
	assert.Regexp(t, `The intervals came out ±[0-9.]+ % to ±[0-9.]+ % of their medians`, text)
	assert.NotContains(t, text, "No closed-loop rounds paired")

	a := analysis.Analyze(c)
	s := strings.Join(sentences(a), "\n")
	assert.Contains(t, s, "**closed-loop throughput lower than direct's** beyond the 95 % interval: fifo 0.90× (0.88–0.92)")
	assert.Contains(t, s, "closed-loop throughput, **no difference measurable here** (the 95 % interval includes 1): lifo ~ 0.99× (0.97–1.03)")
}

// TestWhyAStepDidNotRun: a variant without an overload step is said to be
// cut off by an interrupted run, or pointed at the failed steps.
func TestWhyAStepDidNotRun(t *testing.T) {
	c := comparisonOf(t, "queues", map[string][]float64{"direct": {60000}, "fifo": {60000}}, "direct", "fifo")
	wr := c.Workloads[0]
	wr.BaseRate = 60000
	wr.Variants[0].Overload = &result.OverloadRun{Asked: 120000}
	c.Interrupted = true
	assert.Contains(t, workloadText(c), "| fifo | default | not run (the run was interrupted before it) |")

	c.Failures = []result.Failure{{Workload: "get", Variant: "fifo", Step: "overload", Reason: "kvserver exited"}}
	assert.Contains(t, workloadText(c), "| fifo | default | not run (see the failed steps) |")
}

// TestSaturationSentences: the saturations against direct's and the lead
// are worded from their ratios paired by repeat: a difference only
// beyond the 95 % interval, otherwise no difference measurable here.
func TestSaturationSentences(t *testing.T) {
	say := func(sat map[string][]float64, order ...string) string {
		t.Helper()
		c := comparisonOf(t, "queues", sat, order...)
		return strings.Join(sentences(analysis.Analyze(c)), "\n")
	}
	// Three repeats apart by their ranges: nothing measurable.
	s := say(map[string][]float64{"direct": {40000, 41000, 40500}, "fifo": {30000, 31000, 30500}}, "direct", "fifo")
	assert.Contains(t, s, "`get`, saturation paired with direct's by repeat: **no difference measurable here** (fewer than 6 paired repeats give no 95 % interval). The ratios: fifo 0.75× (n=3: too few pairs for an interval).")
	assert.Contains(t, s, "`get`: **no pool saturates clearly highest**: direct 40,500 req/s (median), then fifo 30,500; fifo's saturation against direct's, paired by repeat: 0.75× (n=3: too few pairs for an interval), and a lead is named only where its 95 % interval excludes 1.")

	// Six repeats, fifo about 0.8× in every pair; lifo's pairs straddle 1.
	s = say(map[string][]float64{
		"direct": {40000, 42000, 41000, 39000, 40500, 41500},
		"fifo":   {32000, 33500, 32900, 31300, 32300, 33100},
		"lifo":   {41000, 41000, 41500, 38500, 40000, 43000},
	}, "direct", "fifo", "lifo")
	assert.Regexp(t, "`get`, saturation paired with direct's by repeat: \\*\\*lower than direct's\\*\\* beyond the 95 % interval: fifo 0\\.80× \\(0\\.[78][0-9]–0\\.8[0-9]\\)\\.", s)
	assert.Regexp(t, "`get`, saturation paired with direct's by repeat: \\*\\*no difference measurable here\\*\\* \\(the 95 % interval includes 1\\)\\. The ratios: lifo ~ 1\\.00× \\(0\\.9[0-9]–1\\.0[0-9]\\)\\.", s)
	assert.Contains(t, s, "**no pool saturates clearly highest**: lifo 41,000 req/s (median), then direct 40,750; direct's saturation against lifo's, paired by repeat: ~ 1.00× (0.97–1.02)",
		"a higher median is no lead where the pairs' interval includes 1")

	s = say(map[string][]float64{
		"direct": {40000, 42000, 41000, 39000, 40500, 41500},
		"fifo":   {32000, 33500, 32900, 31300, 32300, 33100},
	}, "direct", "fifo")
	assert.Regexp(t, "`get`: \\*\\*direct saturates highest\\*\\*, 40,750 req/s \\(median\\) against fifo's 32,600, the runner-up: fifo's saturation against direct's, paired by repeat: 0\\.80× \\(0\\.[78][0-9]–0\\.8[0-9]\\), the 95 % interval below 1\\.", s)
}

// TestScalingSaturationSentence: at each CPU count, a row saturates
// below direct only where its ratio paired by repeat has its 95 %
// interval below 1, and the sentence gives that ratio.
func TestScalingSaturationSentence(t *testing.T) {
	say := func(repeats int) string {
		t.Helper()
		o := plan.DefaultOptions()
		o.Preset, o.Repeat = "scaling", repeats
		p, err := plan.New(&o, 2)
		require.NoError(t, err)
		wr := &result.WorkloadResult{Workload: "get"}
		drift := []float64{1, 1.02, 0.99, 1.01, 0.98, 1.03}
		for _, pool := range []struct {
			name string
			sat  float64
		}{{"direct", 40000}, {"fifo", 30000}} {
			v := plan.Variant{Pool: pool.name, CPUs: 1}
			vr := &result.VariantResult{Variant: v, Name: v.Name()}
			for i, d := range drift[:repeats] {
				vr.Sat = append(vr.Sat, result.SatRun{Repeat: i + 1, Rate: pool.sat * d, Validated: true})
			}
			wr.Variants = append(wr.Variants, vr)
		}
		c := &result.Comparison{Preset: "scaling", Options: o, Plan: p, Workloads: []*result.WorkloadResult{wr},
			Criteria: result.Criteria{MaxErrorRate: 0.001, LoaderBusy: 0.9}}
		return strings.Join(sentences(analysis.Analyze(c)), "\n")
	}
	assert.Contains(t, say(6), "`get` scaling, saturation paired with direct's by repeat on as many CPUs: **lower than direct's** beyond the 95 % interval: fifo (at 1 CPU 0.75× (0.75–0.75); medians at 1 CPU 0.75× direct's 40,200 req/s); no difference measurable at any count (the 95 % interval includes 1, or fewer than 6 paired repeats give none): none.")
	assert.Contains(t, say(3), "`get` scaling, saturation paired with direct's by repeat on as many CPUs: **no difference measurable here** at any count of 1 CPU (the 95 % interval includes 1, or fewer than 6 paired repeats give none; -repeat 6 gives one): fifo.")
}

// TestLoaderTableNamesGrowingBacklogs: a fixed-rate step whose loader
// sent on schedule while its backlog grew reads "no" in the loader's
// table, as the findings say of it, with how the backlog grew below the
// table; the count of steps kept up leaves it out.
func TestLoaderTableNamesGrowingBacklogs(t *testing.T) {
	grew := "backlog grew: send lag p99 2.62ms → 72.2ms (median of the last 9 intervals against the 9 before)"
	c := comparisonOf(t, "queues", map[string][]float64{"direct": {40000}, "fifo": {40000}}, "direct", "fifo")
	c.Loader = []result.LoaderCheck{
		{Workload: "get", Variant: "direct", Step: "fixed", Asked: 28000, SendRate: 28000, KeptUp: true},
		{Workload: "get", Variant: "fifo", Step: "fixed", Asked: 28000, SendRate: 28000, Backlog: grew},
		{Workload: "get", Variant: "fifo", Step: "overload", Asked: 80000, SendRate: 40000},
	}
	var b page
	writeLoader(&b, c, analysis.Analyze(c).LoaderKept)
	text := b.String()
	assert.Contains(t, text, "1 of 3 steps kept up.")
	assert.Regexp(t, `\| get \| direct \| fixed \| 28,000 \| 28,000 \| .* \| yes \| [^|]+ \|`, text)
	assert.Regexp(t, `\| get \| fifo \| fixed \| 28,000 \| 28,000 \| .* \| \*\*no\*\*: backlog grew \| [^|]+ \|`, text)
	assert.Regexp(t, `\| get \| fifo \| overload \| 80,000 \| 40,000 \| .* \| \*\*no\*\* \| [^|]+ \|`, text)
	assert.Contains(t, text, "- get fifo fixed: "+grew+"\n")
}

// TestCrossCheckAccountsForTheGap: with both sides' CPU measured, the
// cross-check multiplies out open ÷ closed (CPUs busy × cost per request)
// and names the larger share of a shortfall; without it, it says what it
// can.
func TestCrossCheckAccountsForTheGap(t *testing.T) {
	f := analysis.Finding{Kind: analysis.CrossCheck, Workload: "get", Verdict: analysis.Below, Variants: []string{"direct"},
		Figures: []analysis.Figure{
			{Of: "direct", Name: analysis.Saturation, Value: 42000},
			{Of: "direct", Name: analysis.ClosedRate, Value: 52000, Interval: &analysis.Interval{Lo: 46000, Hi: 54000, N: 3}},
			{Of: "direct", Name: analysis.Conns, Value: 64},
			{Of: "direct", Name: analysis.Difference, Value: 19},
		}}
	assert.Contains(t, crossCheckSentence(f), "the search stopped short", "no CPU figures: the causes it may have")

	// accounted is f with the split's figures as the analysis gives them.
	accounted := func(openCPU time.Duration, openBusy float64, most analysis.Verdict) analysis.Finding {
		a := f
		busy, cost := openBusy/99.7, float64(19200*time.Nanosecond)/float64(openCPU)
		a.Figures = append(append([]analysis.Figure{}, f.Figures...),
			analysis.Figure{Of: "direct", Name: analysis.CPUPerRequest, Value: float64(openCPU)},
			analysis.Figure{Of: "direct", Name: analysis.ClosedCPUPerRequest, Value: float64(19200 * time.Nanosecond)},
			analysis.Figure{Of: "direct", Name: analysis.ServerBusy, Value: openBusy},
			analysis.Figure{Of: "direct", Name: analysis.ClosedServerBusy, Value: 99.7},
			analysis.Figure{Of: "direct", Name: analysis.UtilisationRatio, Value: busy},
			analysis.Figure{Of: "direct", Name: analysis.CostRatio, Value: cost},
			analysis.Figure{Of: "direct", Name: analysis.OpenOverClosed, Value: 42000.0 / 52000, Verdict: most},
			analysis.Figure{Of: "direct", Name: analysis.Unexplained, Value: 42000.0 / 52000 / (busy * cost)})
		return a
	}
	idle := accounted(20600*time.Nanosecond, 86, analysis.IdleMost)
	s := crossCheckSentence(idle)
	assert.Contains(t, s, "Open ÷ closed 0.81 = utilisation 0.86 × cost 0.93 × 1.00 unexplained: kvserver's CPUs were 86 % busy over the validating runs against 100 % in the closed loop, and a request took 20.6us of CPU against 19.2us.")
	assert.Contains(t, s, "Most of the gap is CPU left idle")

	costly := accounted(23*time.Microsecond, 97, analysis.CostMost)
	assert.Contains(t, crossCheckSentence(costly), "Most of the gap is cost")

	within := idle
	within.Verdict = analysis.Within
	assert.Contains(t, crossCheckSentence(within), "**within the closed loop's spread**. Open ÷ closed 0.81 = utilisation")
}

// TestProbesStopped: the overload's description says the recovery probes
// stopped early where the analysis found that one did.
func TestProbesStopped(t *testing.T) {
	c := comparisonOf(t, "queues", map[string][]float64{"direct": {1000}}, "direct")
	c.Plan.Overload = true
	assert.NotContains(t, runSummary(c, &analysis.Analysis{}), "stopping at the first normal one")
	assert.Contains(t, runSummary(c, &analysis.Analysis{ProbesStopped: true}), ", stopping at the first normal one")
}

// TestFailedSteps: a failure's reason of several lines (an error quoting
// kvserver's last output) keeps its first line in the bullet and shows
// the output once, in a block, so that no line of a log reads as prose.
func TestFailedSteps(t *testing.T) {
	tail := "  time=1 level=INFO msg=serving\n  time=2 level=ERROR msg=\"unclean stop\"\n"
	var b page
	writeFailures(&b, []result.Failure{
		{Workload: "get", Variant: "direct", Step: "metastable untuned", Reason: "kvserver did not stop cleanly; its last output:\n" + tail, LogTail: tail},
		{Workload: "get", Variant: "fifo", Step: "overload", Reason: "kvserver exited"},
	})
	assert.Equal(t, HeadFailures+"\n\n"+
		"- **get** direct metastable untuned: kvserver did not stop cleanly; its last output:\n"+
		"\n  ```\n    time=1 level=INFO msg=serving\n    time=2 level=ERROR msg=\"unclean stop\"\n  ```\n"+
		"- **get** fifo overload: kvserver exited\n\n", b.String())
	assert.Empty(t, longSentences(b.String()))
}
