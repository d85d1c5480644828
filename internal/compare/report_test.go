package compare

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoaderBoundSaturationIsALowerBound: a saturation whose search was
// loader-bound reads "≥ X" with the loader's CPUs and no ratio, and the
// findings never rank it; they say how to measure further.
func TestLoaderBoundSaturationIsALowerBound(t *testing.T) {
	c := comparisonOf(map[string][]float64{
		"direct": {40000, 41000, 40500},
		"fifo":   {30000, 31000, 30500},
		"lifo":   {104000},
	}, "direct", "fifo", "lifo")
	wr := c.Workloads[0]
	lifo := wr.Variants[2]
	lifo.Sat[0].LoaderBound, lifo.Sat[0].LoaderCPUs, lifo.Sat[0].Why = true, 1, "at 120000 req/s the loader used 97% of its 1 CPU"
	lifo.Fixed = &FixedRun{}
	wr.BaseRate = 40500
	var b bytes.Buffer
	writeWorkload(&b, c, wr)
	assert.Contains(t, b.String(), "| lifo | default | ≥ 104,000, loader-bound with 1 loader CPU, 0 of 1 held in validation |")
	assert.Contains(t, b.String(), "| fifo | default | 30,500 ± 500 (0.75×)")

	text := strings.Join(findings(c), "\n")
	assert.Contains(t, text, "**direct saturates highest**, 40,500 req/s (median) against fifo's 30,500")
	assert.NotContains(t, text, "lifo saturates highest")
	assert.Contains(t, text, "**loader-bound, so only lower bounds, not ranked**: lifo (≥ 104,000 req/s with 1 loader CPU)")
	assert.Contains(t, text, "`-loader-cpus`")
	assert.Contains(t, text, "`loadtest attack -shard K/N -start-at`, then `loadtest merge`")
	assert.NotContains(t, text, "not distinguishable from direct's saturation (ranges overlap, or one run): lifo", "a lower bound is not compared with direct")

	// Direct itself loader-bound: nothing is compared with it, and no
	// cell has a ratio to it.
	c = comparisonOf(map[string][]float64{"direct": {60000, 61000}, "fifo": {30000, 31000}}, "direct", "fifo")
	wr = c.Workloads[0]
	for i := range wr.Variants[0].Sat {
		wr.Variants[0].Sat[i].LoaderBound, wr.Variants[0].Sat[i].LoaderCPUs = true, 2
	}
	wr.Variants[1].Fixed = &FixedRun{}
	text = strings.Join(findings(c), "\n")
	assert.NotContains(t, text, "saturates lower than direct")
	assert.NotContains(t, text, "saturates highest")
	assert.Contains(t, text, "direct (≥ 60,500 req/s with 2 loader CPUs)")
	b.Reset()
	writeWorkload(&b, c, wr)
	assert.Contains(t, b.String(), "| direct | - | ≥ 60,500 ± 500, loader-bound with 2 loader CPUs, 0 of 2 held in validation |")
	assert.Contains(t, b.String(), "| fifo | default | 30,500 ± 500, 0 of 2 held", "no ratio to a lower bound")
}

// TestOverloadAgainstALowerBound: where direct's saturation, which sets
// the overload rate, is loader-bound, the report and the findings say
// the step asked at most its factor.
func TestOverloadAgainstALowerBound(t *testing.T) {
	c := comparisonOf(map[string][]float64{"direct": {40000}}, "direct", "fifo")
	wr := c.Workloads[0]
	wr.Variants[0].Sat[0].LoaderBound = true
	wr.BaseRate, wr.BaseLowerBound = 40000, true
	wr.Variants[0].Overload = &OverloadRun{Asked: 80000, Served: 10, Goodput: 38000}
	wr.Variants[1].Overload = &OverloadRun{Asked: 80000, Served: 10, Goodput: 30000}
	var b bytes.Buffer
	writeWorkload(&b, c, wr)
	assert.Contains(t, b.String(), "This preset measures the variants only under overload (below), asking 2× a lower bound: at most 2× direct's saturation.")
	assert.Contains(t, b.String(), "**Direct's saturation, which set the asked rate, is only a lower bound** (its search was loader-bound): each step asked 2× a lower bound: at most 2× direct's saturation")
	text := strings.Join(findings(c), "\n")
	assert.Contains(t, text, "each step asked 2× a lower bound: at most 2× direct's saturation")
	assert.Contains(t, text, "fifo ≤ 0.75×", "a ratio to a lower bound is an upper bound")

	wr.BaseLowerBound = false
	b.Reset()
	writeWorkload(&b, c, wr)
	assert.NotContains(t, b.String(), "lower bound")
	assert.NotContains(t, strings.Join(findings(c), "\n"), "a lower bound")
}

// TestCPUPerShed: the 503's CPU is what the overload step cost beyond
// its served requests at the probe's cost each, per 503.
func TestCPUPerShed(t *testing.T) {
	o := &OverloadRun{ServerCPU: 10 * time.Second, ProbeCPUPerRequest: 20 * time.Microsecond, Served: 400_000, Shed: 200_000}
	d, ok := o.CPUPerShed()
	require.True(t, ok)
	assert.Equal(t, 10*time.Microsecond, d, "(10 s − 400,000 × 20 µs) ÷ 200,000")
	x, ok := o.ShedCostRatio()
	require.True(t, ok)
	assert.InDelta(t, 0.5, x, 1e-9)

	o.ServerCPU = 7 * time.Second // serving grew cheaper under load
	d, _ = o.CPUPerShed()
	assert.Equal(t, -5*time.Microsecond, d, "derived, so it can come out negative; not hidden")

	for _, none := range []*OverloadRun{
		{ServerCPU: time.Second, ProbeCPUPerRequest: time.Microsecond, Served: 10},             // nothing shed
		{ServerCPU: time.Second, Served: 10, Shed: 5},                                          // no probe figure
		{ProbeCPUPerRequest: time.Microsecond, Served: 10, Shed: 5},                            // no step figure
		{ServerCPUPerRequest: time.Microsecond, ProbeCPUPerRequest: time.Microsecond, Shed: 5}, // an older comparison
		{ServerCPU: time.Second, ProbeCPUPerRequest: time.Microsecond, Served: 990, Shed: 10},  // 1 % shed: the error would swamp it
	} {
		_, ok := none.CPUPerShed()
		assert.False(t, ok, "%+v", none)
	}

	c := comparisonOf(nil, "direct", "fifo", "lifo")
	wr := c.Workloads[0]
	wr.Variants[0].Overload = &OverloadRun{Served: 10, ServerCPU: time.Second, ProbeCPUPerRequest: 12 * time.Microsecond}
	wr.Variants[1].Overload = &OverloadRun{ServerCPU: 10 * time.Second, ProbeCPUPerRequest: 20 * time.Microsecond, Served: 400_000, Shed: 200_000}
	wr.Variants[2].Overload = &OverloadRun{ServerCPU: 10 * time.Second, ProbeCPUPerRequest: 20 * time.Microsecond, Served: 450_000, Shed: 100_000}
	var b bytes.Buffer
	writeOverloadTable(&b, c, wr)
	assert.Contains(t, b.String(), "| server CPU per served request | per 503 (derived) | 503 ÷ served | verdict |")
	assert.Contains(t, b.String(), "| 12.0us | - | - |", "direct shed nothing")
	assert.Contains(t, b.String(), "| 20.0us | 10.0us | 0.50 |")
	assert.Equal(t, "`get` under overload, what a 503 cost kvserver against a served request (derived: the step's CPU less its served requests at a served request's cost, see the table; 2 variants that shed): 0.50× (fifo to lifo).",
		shedCostFinding(wr))

	// With the variant's closed-loop round at full load (it shed
	// nothing), its CPU per request there is the reference, not the
	// half-load probe's: 10 s − 400,000 × 16 µs over 200,000 503s.
	o = &OverloadRun{ServerCPU: 10 * time.Second, ProbeCPUPerRequest: 20 * time.Microsecond, FullLoadCPUPerRequest: 16 * time.Microsecond,
		Served: 400_000, Shed: 200_000}
	d, _ = o.CPUPerShed()
	assert.Equal(t, 18*time.Microsecond, d)
	x, _ = o.ShedCostRatio()
	assert.InDelta(t, 18.0/16, x, 1e-9)
	_, from := o.ServedCPU()
	assert.Equal(t, "its closed loop", from)
}

// TestDefaultsFinding: the pools at kvserver's defaults against direct's
// saturation and goodput, with issue 20's targets decided from them.
func TestDefaultsFinding(t *testing.T) {
	c := comparisonOf(nil, "direct", "fifo", "lifo")
	wr := c.Workloads[0]
	wr.BaseRate = 40000
	wr.Variants = append(wr.Variants, &VariantResult{Name: "lifo/reject cap=1024", Variant: Variant{Pool: "lifo", Policy: "reject", Cap: 1024, CapSet: true, QueueTimeoutSet: true},
		Overload: &OverloadRun{Served: 10, Goodput: 1000}})
	wr.Variants[0].Overload = &OverloadRun{Served: 10, Goodput: 32000, ServedP99Uncorrected: 120 * time.Millisecond}
	wr.Variants[1].Overload = &OverloadRun{Served: 10, Goodput: 22000, ServedP99Uncorrected: 40 * time.Millisecond}
	wr.Variants[2].Overload = &OverloadRun{Served: 10, Goodput: 37000, ServedP99Uncorrected: 42 * time.Millisecond}
	f := defaultsFinding(wr)
	assert.Contains(t, f, "goodput against direct's saturation (40,000 req/s): fifo 0.55× (0.69× direct's goodput), lifo 0.93× (1.16× direct's goodput).")
	assert.Contains(t, f, "none below 0.6×: **missed** by fifo 0.55×")
	assert.Contains(t, f, "**met** by lifo (0.93×, p99 from the send 42.00ms); direct's p99 from the send 120.00ms")
	assert.NotContains(t, f, "reject", "only the defaults")

	wr.Variants[1].Overload.Goodput = 30000
	wr.Variants[2].Overload.ServedP99Uncorrected = 130 * time.Millisecond
	f = defaultsFinding(wr)
	assert.Contains(t, f, "none below 0.6×: **met** (lowest fifo at 0.75×)")
	assert.Contains(t, f, "**not met** (the highest goodput, lifo's 0.93×, with p99 from the send 130.00ms)")
}

// TestCrossCheckFinding: direct's saturation against its closed loop.
func TestCrossCheckFinding(t *testing.T) {
	c := comparisonOf(map[string][]float64{"direct": {40000}}, "direct")
	v := c.Workloads[0].Variants[0]
	v.Closed = &ClosedRun{Conns: 64, Rounds: []ClosedRound{{Rate: 39000}, {Rate: 41000}, {Rate: 42000}}}
	f := func(want string) {
		t.Helper()
		got := crossCheckFindings(c.Workloads[0])
		require.Len(t, got, 1)
		assert.Contains(t, got[0], want)
	}
	f("`get` cross-check, direct's saturation 40,000 req/s against the closed loop's 41,000 req/s (3 rounds, 39,000–42,000, 64 connections): **within the closed loop's spread**.")
	v.Sat[0].Rate = 30000
	f("**27 % below** the closed loop's median")
	v.Sat[0].Rate = 50000
	f("**22 % above**")
	v.Closed.Rounds[1].LoaderBound, v.Closed.Rounds[1].Why = true, "the loader used 95% of its 1 CPU"
	f("the closed loop was loader-bound (the loader used 95% of its 1 CPU)")
	v.Sat[0].LoaderBound = true
	f("**loader-bound: the saturation is a lower bound**")
	c.Workloads[0].Variants[0].Closed = nil
	assert.Empty(t, crossCheckFindings(c.Workloads[0]))
}

// scalingComparison is a synthetic scaling comparison: direct, fifo and
// lifo (lifo under -exec worker) on 1 and 2 CPUs, two searches each and
// a closed loop.
func scalingComparison(t *testing.T) *Comparison {
	t.Helper()
	o := DefaultOptions()
	o.Preset, o.Repeat = "scaling", 2
	p, err := newPlan(&o, 2)
	require.NoError(t, err)
	wr := &WorkloadResult{Workload: "get"}
	add := func(pool, exec string, n int, sat float64, satCPU, closedCPU time.Duration) {
		v := Variant{Pool: pool, Exec: exec, CPUs: n}
		vr := &VariantResult{Variant: v, Name: v.Name(), Config: map[string]string{"exec": "handler"}}
		if exec == "worker" {
			vr.Config["exec"] = "worker"
		}
		for i, r := range []float64{sat, sat * 1.02} {
			vr.Sat = append(vr.Sat, SatRun{Repeat: i + 1, Rate: r, Validated: true, ServerCPUPerRequest: satCPU, Curve: []CurvePoint{
				{Phase: "ramp", Asked: r / 2, Achieved: r / 2, P99: time.Millisecond, Pass: true},
				{Phase: "ramp", Asked: r, Achieved: r, P99: 2 * time.Millisecond, Pass: true},
				{Phase: "ramp", Asked: 2 * r, Achieved: r, P99: time.Second, LoaderBound: pool == "fifo"},
			}})
		}
		vr.Closed = &ClosedRun{Conns: 64, Rounds: []ClosedRound{
			{Rate: sat * 1.1, ServerCPUPerRequest: closedCPU, LoaderShare: 0.4, LoaderCPUs: 1, ServerShare: 0.98, ServerCPUs: n},
			{Rate: sat * 1.12, ServerCPUPerRequest: closedCPU, LoaderShare: 0.4, LoaderCPUs: 1, ServerShare: 0.98, ServerCPUs: n},
		}}
		wr.Variants = append(wr.Variants, vr)
	}
	for _, n := range []int{1, 2} {
		f := float64(n)
		add("direct", "", n, 40000*f, 20*time.Microsecond, 20*time.Microsecond)
		add("fifo", "", n, 39600*f, 21*time.Microsecond, 20*time.Microsecond+time.Duration(n)*500*time.Nanosecond)
		add("lifo", "worker", n, 20000*f*(1+f)/2, 30*time.Microsecond, 30*time.Microsecond)
	}
	return &Comparison{Preset: "scaling", Options: o, plan: p, Dir: t.TempDir(), Workloads: []*WorkloadResult{wr},
		Env: Environment{Pinned: true, ServerCPUs: "0-1", LoaderCPUs: "2-3", LoaderLoops: 2}}
}

// TestScalingReport: the scaling preset's report has a table per
// workload with two columns per CPU count, the closed loop's table, both
// charts, and findings stated from the numbers.
func TestScalingReport(t *testing.T) {
	c := scalingComparison(t)
	r := &runner{o: c.Options, t: c.Options.StepTiming(), p: c.plan, c: c, log: io.Discard}
	r.drawCharts()
	assert.Empty(t, c.Notes, "every chart drawn")
	var names []string
	for _, ch := range c.Charts {
		names = append(names, filepath.Base(ch.Path))
		assertSVG(t, filepath.Join(c.Dir, ch.Path))
	}
	assert.Equal(t, []string{"get-saturation.svg", "get-scaling.svg", "get-scaling-cpu.svg"}, names)
	require.NoError(t, writeReport(c))
	b, err := os.ReadFile(filepath.Join(c.Dir, ReportFile))
	require.NoError(t, err)
	report := string(b)
	last := -1
	for _, h := range []string{headEnvironment, headLoader, headScaling + ": `get`", headClosed + ": `get`", headCharts, headFindings} {
		i := strings.Index(report, "\n"+h)
		require.GreaterOrEqual(t, i, 0, "heading %q missing", h)
		assert.Greater(t, i, last, "heading %q out of order", h)
		last = i
	}
	assert.NotContains(t, report, headResults+":", "the scaling tables replace the results table")
	assert.Contains(t, report, "| CPUs | kvserver on CPUs 0-1 (2), loader on 2-3 (2 loops)")
	assert.Contains(t, report, "| variant | 1 CPU: saturation req/s | 1 CPU: server CPU/request | 2 CPUs: saturation req/s | 2 CPUs: server CPU/request |\n|---|---|---|---|---|\n")
	assert.Contains(t, report, "| direct | 40,400 ± 400 (1.00×) | 20.0us (1.00×) | 80,800 ± 800 (1.00×) | 20.0us (1.00×) |")
	assert.Contains(t, report, "| lifo exec=worker | 20,200 ± 200 (0.50×) | 30.0us (1.50×) | 60,600 ± 600 (0.75×) | 30.0us (1.50×) |")
	assert.Contains(t, report, "| variant | 1 CPU: req/s | 1 CPU: server CPU/request | 2 CPUs: req/s | 2 CPUs: server CPU/request |")
	assert.Contains(t, report, "| fifo | 43,956 ± 396 | 20.5us (1.02×) | 87,912 ± 792 | 21.0us (1.05×) |")
	for _, ch := range []string{"charts/get-scaling.svg", "charts/get-scaling-cpu.svg"} {
		assert.Contains(t, report, "]("+ch+")")
	}
	assert.Contains(t, report, "each variant with kvserver on 1 and 2 CPUs of its set in turn")
	assert.Contains(t, report, "median ± half the spread over 2 searches")

	text := strings.Join(c.Findings, "\n")
	assert.Contains(t, text, "`get` scaling: **saturates below direct beyond the spread**: lifo exec=worker (at 1, 2 CPUs; at 2 CPUs 0.75× direct's 80,800 req/s); not distinguishable from direct at any count (ranges overlap, or one run): fifo.")
	assert.Contains(t, text, "`get` scaling from 1 CPU to 2 CPUs, saturation as a share of linear scaling from the 1 CPU figure (1.00: linear): direct 1.00, fifo 1.00, lifo exec=worker 1.50.")
	assert.Contains(t, text, "`get` closed loop, kvserver's CPU per request against direct's on as many CPUs: 1 CPU (direct 20.0us): fifo 1.02×, lifo exec=worker 1.50×; 2 CPUs (direct 20.0us): fifo 1.05×, lifo exec=worker 1.50×.")
	assert.Contains(t, text, "`get` issue 20's target, -exec handler within 5 % of direct's CPU per request at every count (1 and 2 CPUs): **met** by every one: fifo (at most 1.05×).",
		"lifo runs under -exec worker: not judged by the handler target")
	assert.Contains(t, text, "`get` cross-check, direct cpus=1's saturation 40,400 req/s against the closed loop's 44,400 req/s")
	assert.NotContains(t, text, "saturates highest", "counts are not ranked against each other")

	// One count: the preset on a 2-CPU machine (kvserver on CPU 0).
	one := scalingComparison(t)
	wr := one.Workloads[0]
	var keep []*VariantResult
	for _, v := range wr.Variants {
		if v.Variant.CPUs == 1 {
			keep = append(keep, v)
		}
	}
	wr.Variants = keep
	one.Workloads[0].Variants[1].Closed.Rounds[0].ServerCPUPerRequest = 22 * time.Microsecond
	one.Workloads[0].Variants[1].Closed.Rounds[1].ServerCPUPerRequest = 22 * time.Microsecond
	r = &runner{o: one.Options, t: one.Options.StepTiming(), p: one.plan, c: one, log: io.Discard}
	r.drawCharts()
	assert.Empty(t, one.Notes, "charts of one count drawn")
	require.NoError(t, writeReport(one))
	text = strings.Join(one.Findings, "\n")
	assert.Contains(t, text, "**missed** by fifo (1.10× at 1 CPU)")
	assert.NotContains(t, text, "share of linear scaling", "one count: nothing to scale from")
}

// TestRenderAnOlderComparison: a compare.json written before the CPU
// sets, the loader's shares, the closed loop and Little's connections
// renders: absent fields read as "not recorded", never as measured zeros
// or a loader-bound verdict.
func TestRenderAnOlderComparison(t *testing.T) {
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
  "Loader": [{"Workload": "mixed:0.5", "Variant": "direct", "Step": "overload", "Asked": 92000, "SendRate": 50000, "LagP99": 0, "CPUPerRequest": 12000, "CPUShare": 0.61, "KeptUp": false}]
}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, ComparisonFile), []byte(old), 0o644))
	c, err := Render(dir, nil)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, ReportFile))
	require.NoError(t, err)
	report := string(b)
	assert.Contains(t, report, "| CPUs | kvserver on CPU 0, the loader on CPU 1 (-pin) |")
	assert.Contains(t, report, "| mixed:0.5 | direct | overload | 92,000 | 50,000 | 0.00us | 12.0us | 0.61 cores | - | **no** | - |", "no shares, no verdict recorded")
	assert.NotContains(t, report, "CPU shares are of each side's own CPUs")
	assert.NotContains(t, report, "loader-bound with", "nothing was loader-bound")
	assert.NotContains(t, report, "Little's law")
	assert.NotContains(t, report, headClosed)
	assert.Contains(t, report, "Direct's saturation in req/s (median ± half the spread of its searches): 46,000 ± 0. This preset measures the variants only under overload (below), asking 2× that.")
	assert.Contains(t, report, "| 4096 / 4000 | ", "peak connections without a recorded start")
	assert.Contains(t, report, "| - | - | - | PASS |", "no probe CPU recorded: no derived 503 cost")
	assert.Contains(t, report, "probes at 50 % of direct's saturation (1s before", "the quick timing of then")
	for _, ch := range c.Charts {
		assertSVG(t, filepath.Join(dir, ch.Path))
	}
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(dir, ComparisonFile)), &Comparison{}), "the rewritten compare.json reads back")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
