package render

import (
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
)

// metaSeries is a synthetic run at base req/s: useful goodput at the
// base rate but from the spike's start until back seconds after its end
// (back < 0: never), when it is 30 % of it and each first try is sent
// three times.
func metaSeries(t plan.MetaTiming, base, back float64) []result.MetaPoint {
	var out []result.MetaPoint
	step := t.Interval.Seconds()
	end := t.SpikeEnd().Seconds()
	for x := 0.0; x < t.Duration().Seconds()-1e-9; x += step {
		first := base * step
		if x >= t.Base.Seconds() && x < end {
			first *= t.Factor
		}
		p := result.MetaPoint{T: x, Length: step, FirstTries: int64(first), Useful: int64(base * step), UsefulP99: 10 * time.Millisecond}
		if x >= t.Base.Seconds() && (back < 0 || x < end+back) {
			p.Useful, p.Retries, p.UsefulP99 = int64(0.3*base*step), int64(2*first), 900*time.Millisecond
			p.Timeouts = int64(first) - p.Useful
		}
		out = append(out, p)
	}
	return out
}

// metaComparison is a metastable comparison whose variants recover back
// seconds after the spike (1 where not given; < 0: collapse).
func metaComparison(t *testing.T, back map[string]map[string]float64) *result.Comparison {
	t.Helper()
	c := comparisonOf(t, "metastable", map[string][]float64{"direct": {10000}}, "direct")
	c.Options.ApplyDefaults(false, false)
	c.Workloads[0].BaseRate = 10000
	p := c.Plan.Metastable
	m := &result.Metastable{Workload: "get", BaseRate: p.Share * 10000, SpikeRate: p.Timing.Factor * p.Share * 10000}
	for _, cm := range p.Models {
		for _, v := range p.Variants {
			if !p.Applies(cm, v) {
				continue
			}
			b, ok := back[cm][v.Name()]
			if !ok {
				b = 1
			}
			r := &result.MetaRun{LoaderCPUs: 1, Model: cm, Variant: v.Name(), Repeat: 1, Series: metaSeries(p.Timing, m.BaseRate, b)}
			for i := range r.Series {
				r.Series[i].LoaderShare = 0.4
			}
			if cm == "retry" && v.Name() == "fifo" {
				r.Series[3].LoaderShare = 0.93 // its client side ran out
			}
			for _, pt := range r.Series {
				r.Totals.Useful += pt.Useful
				r.Totals.Timeouts += pt.Timeouts
			}
			r.Server = &result.ServerCounts{Ran: r.Totals.Useful + 1000, Wasted: 500}
			if v.Deadlines {
				r.Server.DeadlineRequests = r.Server.Ran
				r.Server.Shed = map[string]int64{"deadline": 1200, "deadline (store)": 30}
			}
			m.Runs = append(m.Runs, r)
		}
	}
	m.Sizes = []result.MetaSize{{Slots: p.Slots(), Models: p.Models, Saturation: 10000, BaseRate: m.BaseRate, SpikeRate: m.SpikeRate}}
	c.Metastable = m
	return c
}

// TestMetastableReport: the section, a table per client model naming the
// collapsed and the recovered variants, the findings, and one goodput
// chart per model.
func TestMetastableReport(t *testing.T) {
	c := metaComparison(t, map[string]map[string]float64{
		"retry":   {"direct": -1, "fifo": -1, "lifo+deadlines": 2, "adaptive": 8},
		"backoff": {"direct": -1},
	})
	dir := t.TempDir()
	rep, err := Write(c, analysis.Analyze(c), dir)
	require.NoError(t, err)
	text := string(mustRead(t, rep.Path))
	assert.Contains(t, text, HeadMetastable)
	assert.Contains(t, text, "Variants `direct`, `default`, `failsafe`, `failsafe-priority`, `fifo`, `lifo`, ", "the header names the variants of the runs, not only the searched one")
	assert.Contains(t, text, "then every variant under every client model through a spike from ")
	for _, m := range []string{"none", "untuned", "retry", "backoff", "budget", "throttle"} {
		assert.Contains(t, text, "### Client `"+m+"`")
	}
	retry := text[strings.Index(text, "### Client `retry`"):strings.Index(text, "### Client `backoff`")]
	assert.Contains(t, retry, "| direct | kept up (loader ≤ 40 %) | yes | never | **yes** | never | 2,021/s (26 %) | - | 3.00× | - | ")
	assert.Contains(t, retry, "| lifo+deadlines | kept up (loader ≤ 40 %) | yes | 2 s | no | 2 s | 4,895/s (62 %) | - | 3.00× | ")
	assert.Contains(t, retry, " | 0 (deadline 1,200, deadline (store) 30) |", "kvserver's 503s by reason")
	assert.Contains(t, retry, "| adaptive | kept up (loader ≤ 40 %) | yes | 8 s | no | 8 s |")
	assert.Contains(t, retry, "| fifo | **saturated**: the loader at 93 % of its CPU at 3 s (limit 70 %): not judged | not judged | not judged | not judged | not judged | not judged | not judged | 3.00× |",
		"a run whose client side saturated gets no verdict, and says why")
	assert.NotContains(t, text[strings.Index(text, "### Client `none`"):strings.Index(text, "### Client `untuned`")], "+deadlines |", "none sends no deadline")

	var findings string
	for _, f := range rep.Findings {
		findings += f + "\n"
	}
	assert.Contains(t, findings, "With `retry` clients after a 2.5× spike: recovered: default (in 1 s), failsafe (in 1 s), failsafe-priority (in 1 s), lifo (in 1 s), adaptive (in 8 s), fifo cap=256 (in 1 s), fifo limit=gradient2 (in 1 s), fifo+deadlines (in 1 s), lifo+deadlines (in 2 s); collapsed (useful goodput under half the base rate to the end): direct; not judged, the client side saturated or unrecorded: fifo.")
	assert.Contains(t, findings, "A candidate was overloaded by the spike and had its useful goodput back to 90 % of the base rate, held for 5 s, within 5 s of its end")
	assert.Contains(t, findings, "**default**, **failsafe**, **failsafe-priority**, **lifo**, **fifo cap=256**, **fifo limit=gradient2**, **fifo+deadlines**, **lifo+deadlines**")
	assert.Contains(t, findings, "The default against `failsafe`, both judged under `none`, `untuned`, `retry`, `backoff`, `budget`, `throttle`: recovered no later, with no less useful goodput and no higher useful p99 over the run (where recorded), under every one.")
	assert.Contains(t, text, "| retry | failsafe | 1 s / 1 s | 5,005/s (63 %) / 5,005/s (63 %) (1.00×) | - / - | no later, no less, p99 not recorded |")
	assert.Contains(t, text, "### The default against the peer")
	assert.Contains(t, text, "| retry | failsafe | 1 s / 1 s | ")

	for _, m := range []string{"none", "untuned", "retry", "backoff", "budget", "throttle"} {
		path := filepath.Join(dir, ChartsDir, "get-metastable-"+m+".svg")
		assertSVG(t, path)
		assert.Contains(t, text, "charts/get-metastable-"+m+".svg")
	}
	assert.Empty(t, rep.Notes)
}

// TestMetastableReportRendersAgain: compare.json keeps everything the
// section is written from.
func TestMetastableReportRendersAgain(t *testing.T) {
	c := metaComparison(t, map[string]map[string]float64{"retry": {"direct": -1}})
	dir := t.TempDir()
	require.NoError(t, result.Save(dir, c))
	first, err := Write(c, analysis.Analyze(c), dir)
	require.NoError(t, err)
	want := mustRead(t, first.Path)
	require.NoError(t, os.Remove(first.Path))
	_, again, err := Render(dir)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(mustRead(t, again.Path)))
}

// reportText is c's report as Write writes it.
func reportText(t *testing.T, c *result.Comparison) string {
	t.Helper()
	rep, err := Write(c, analysis.Analyze(c), t.TempDir())
	require.NoError(t, err)
	return string(mustRead(t, rep.Path))
}

// clientSide is a loader that spent 20 µs of its one CPU on an attempt
// answered at once and 60 µs on one that timed out, kvserver 15 and 25,
// at 5,000 attempts a second, with the six models' most attempts.
func clientSide() *result.ClientSide {
	return &result.ClientSide{Rate: 5000, LoaderCPUs: 1, Answered: 20 * time.Microsecond, TimedOut: 60 * time.Microsecond,
		ServerAnswered: 15 * time.Microsecond, ServerTimedOut: 25 * time.Microsecond,
		MostAttempts: map[string]float64{"none": 1, "untuned": 6, "retry": 3, "backoff": 3, "budget": 1.2, "throttle": 3}}
}

// TestClientSideTable: the loader's measured cost per attempt, and for
// each model whether its worst second fits, with what would let it.
func TestClientSideTable(t *testing.T) {
	c := metaComparison(t, nil)
	c.Plan.Metastable.SizeStorms = false // -store-slots given: one store
	c.Metastable.ClientSide = clientSide()
	text := reportText(t, c)
	assert.Contains(t, text, "at 5,000 attempts/s, one attempt cost the loader 20.0us of CPU where kvserver answered at once, and 60.0us where it never answered")
	assert.Contains(t, text, "kvserver's side of them: 15.0us and 25.0us.")
	// The spike: 2.5 × 6,000 = 15,000 req/s; none's worst second 15,000 × 60 µs = 0.9 CPU.
	assert.Contains(t, text, "| none | 15,000 | 0.90 (90 %) | no: give the loader 2 CPUs (-loader-cpus), or a slower store stand-in (-store-slots 12), or clients on more hosts than one |")
	assert.Contains(t, text, "| budget | 18,000 | 1.08 (108 %) | no: give the loader 2 CPUs")
	assert.Contains(t, text, "| untuned | 90,000 | 5.40 (540 %) | no: give the loader 8 CPUs (-loader-cpus), or a slower store stand-in (-store-slots 2), ")

	c.Metastable.ClientSide.LoaderCPUs = 8
	assert.Contains(t, reportText(t, c), "| none | 15,000 | 0.90 (11 %) | yes |")

	// 15,000 first tries/s at 60 µs each: 0.9 of 1 CPU, over 70 %: the
	// spike cannot even be sent, no run is made.
	c.Metastable.ClientSide.LoaderCPUs, c.Metastable.ClientSide.Answered = 1, 60*time.Microsecond
	c.Metastable.Runs = nil
	text = reportText(t, c)
	assert.Contains(t, text, "| none | 15,000 | 0.90 (90 %) | no, nor the spike's first tries: not run; give the loader 2 CPUs")
	assert.Contains(t, text, "No run was made: the loader cannot send the spike's first tries on its CPUs")
}

// TestStormSizesTable: where the preset sized the storms, the client-side
// table says which store each model ran in front of and what its worst
// second took there, a table of the stores gives direct's saturation
// and the rates asked of each, and each model's table names its store.
func TestStormSizesTable(t *testing.T) {
	c := metaComparison(t, nil)
	p, m := c.Plan.Metastable, c.Metastable
	require.True(t, p.SizeStorms)
	m.ClientSide = clientSide()
	m.Sizes = []result.MetaSize{{Slots: 16, Models: []string{"none", "budget"}, Saturation: 10000, BaseRate: 6000, SpikeRate: 15000},
		{Slots: 2, Models: []string{"retry", "backoff", "throttle"}, Saturation: 1600, BaseRate: 960, SpikeRate: 2400},
		{Slots: 1, Models: []string{"untuned"}, Saturation: 800, BaseRate: 480, SpikeRate: 1200}}
	text := reportText(t, c)
	assert.Contains(t, text, "The storms were sized to the loader (no `-store-slots`)")
	// untuned in front of 16 slots: 90,000 attempts/s, 5.4 CPUs; in front of 1: 7,200, 0.43.
	assert.Contains(t, text, "| untuned | 90,000 | 5.40 (540 %) | no | 1 slot (`-io-concurrency 1`) | 7,200 attempts/s, 0.43 loader CPUs (43 %) |")
	assert.Contains(t, text, "| none | 15,000 | 0.90 (90 %) | no | 16 slots (`-io-concurrency 16`) | - |")
	assert.Contains(t, text, "| 2 slots (`-io-concurrency 2`) | retry, backoff, throttle | 1,600 | 960 | 2,400 |")
	assert.Contains(t, text, "### Client `untuned`\n\nIn front of 1 slot (`-io-concurrency 1`): 480 GET/s, 1,200/s in the spike.")
}

// TestVersusSentences: where the default did worse, the sentence names
// the clients under each of the three it missed, and those not compared.
func TestVersusSentences(t *testing.T) {
	judged := func(model string, later, less, higher bool) analysis.MetaVersus {
		return analysis.MetaVersus{Model: model, Peer: "failsafe", Judged: true, P99Known: true,
			RecoveryNoLater: !later, UsefulNoLess: !less, P99NoHigher: !higher}
	}
	am := &analysis.Metastable{Versus: []analysis.MetaVersus{
		judged("none", false, false, true),
		judged("retry", false, true, true),
		judged("backoff", true, false, false),
		{Model: "untuned", Peer: "failsafe"},
	}}
	assert.Equal(t, []string{"The default against `failsafe`, both judged under `none`, `retry`, `backoff`: " +
		"**recovered later** under `backoff`; **kept less useful goodput** under `retry`; **had a higher useful p99** under `none`, `retry`, " +
		"no worse otherwise; not compared under `untuned`."}, versusSentences(am))
}
