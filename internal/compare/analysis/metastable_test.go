package analysis

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// metaSeries is a synthetic run's series at base req/s under timing t:
// useful goodput at the base rate before the spike, low (30 %) from the
// spike's start until back seconds after its end (back < 0: never),
// retries making amp attempts per first try while low; p99 10 ms when
// useful goodput is at the base rate, 900 ms otherwise.
func metaSeries(t plan.MetaTiming, base, back, amp float64) []result.MetaPoint {
	var out []result.MetaPoint
	step := t.Interval.Seconds()
	end := t.SpikeEnd().Seconds()
	for x := 0.0; x < t.Duration().Seconds()-1e-9; x += step {
		first := base * step
		if x >= t.Base.Seconds() && x < end {
			first *= t.Factor
		}
		p := result.MetaPoint{T: x, Length: step, FirstTries: int64(first), Useful: int64(base * step), UsefulP99: 10 * time.Millisecond}
		low := x >= t.Base.Seconds() && (back < 0 || x < end+back)
		if low {
			p.Useful = int64(0.3 * base * step)
			p.Retries = int64((amp - 1) * first)
			p.Timeouts = int64(first) - p.Useful
			p.UsefulP99 = 900 * time.Millisecond
		}
		out = append(out, p)
	}
	return out
}

func metaComparison(t *testing.T, back map[string]map[string]float64) *result.Comparison {
	t.Helper()
	o := plan.DefaultOptions()
	o.Preset = "metastable"
	o.ApplyDefaults(false, false)
	p, err := plan.New(&o, 1)
	require.NoError(t, err)
	m := &result.Metastable{Workload: "get", BaseRate: 6000, SpikeRate: 12000}
	for _, cm := range p.Metastable.Models {
		for _, v := range p.Metastable.Variants {
			if !p.Metastable.Applies(cm, v) {
				continue
			}
			b, ok := back[cm][v.Name()]
			if !ok {
				b = 1
			}
			r := &result.MetaRun{LoaderCPUs: 1, Model: cm, Variant: v.Name(), Repeat: 1, Series: metaSeries(p.Metastable.Timing, m.BaseRate, b, 3)}
			r.Server = &result.ServerCounts{Ran: 1000, Wasted: 100}
			if v.Deadlines {
				r.Server.DeadlineRequests = 900
			}
			m.Runs = append(m.Runs, r)
		}
	}
	return &result.Comparison{Preset: "metastable", Options: o, Plan: p, Metastable: m}
}

func TestJudgeMetaRun(t *testing.T) {
	tm := plan.MetaFullTiming()
	f := func(back float64, recovered bool, in time.Duration, collapsed bool) {
		t.Helper()
		j := JudgeMetaRun(&result.MetaRun{LoaderCPUs: 1, Series: metaSeries(tm, 1000, back, 2.5)}, 1000, tm)
		assert.Equal(t, recovered, j.Recovered, "back %v: recovered", back)
		assert.Equal(t, in, j.RecoveryTime, "back %v: recovery time", back)
		assert.Equal(t, collapsed, j.Collapsed, "back %v: collapsed", back)
		assert.Equal(t, recovered, j.P99Back, "back %v: p99 back", back)
		assert.InDelta(t, 2.5, j.PeakAmplification, 1e-9)
		assert.True(t, math.IsNaN(j.WastedShare), "no server counters: unknown")
	}
	f(0, true, 0, false)
	f(3, true, 3*time.Second, false)
	f(-1, false, 0, true)
	// Back 24 s after a 28 s tail: 4 s left, under the 5 s hold: not
	// recovered, and not collapsed either (its last 5 s average 82 %).
	f(24, false, 0, false)
}

// calmSeries is a run the spike did not overload: every first try
// answered in its interval, p99 10 ms throughout.
func calmSeries(t plan.MetaTiming, base float64) []result.MetaPoint {
	s := metaSeries(t, base, 0, 1)
	for i := range s {
		s[i].Useful, s[i].Retries, s[i].Timeouts, s[i].UsefulP99 = s[i].FirstTries, 0, 0, 10*time.Millisecond
	}
	return s
}

// TestOverloadedBySpike: a run whose spike was served in full, at low
// latency, was not overloaded (and "recovered" at once, proving
// nothing); one whose spike was served short or slow was.
func TestOverloadedBySpike(t *testing.T) {
	tm := plan.MetaFullTiming()
	calm := JudgeMetaRun(&result.MetaRun{LoaderCPUs: 1, Series: calmSeries(tm, 1000)}, 1000, tm)
	assert.False(t, calm.Overloaded)
	assert.True(t, calm.Recovered)
	assert.True(t, JudgeMetaRun(&result.MetaRun{LoaderCPUs: 1, Series: metaSeries(tm, 1000, 0, 1)}, 1000, tm).Overloaded, "served 30 %")
	slow := calmSeries(tm, 1000)
	slow[int(tm.Base.Seconds())+2].UsefulP99 = 60 * time.Millisecond
	assert.True(t, JudgeMetaRun(&result.MetaRun{LoaderCPUs: 1, Series: slow}, 1000, tm).Overloaded, "served in full, one second's p99 over 50 ms")
}

// TestJudgedWithinTheSchedule: the seconds the loader's series goes on
// after the schedule (the last attempts ending) are not the run's last.
func TestJudgedWithinTheSchedule(t *testing.T) {
	tm := plan.MetaQuickTiming()
	s := metaSeries(tm, 1000, 0, 1)
	for x := tm.Duration().Seconds(); x < tm.Duration().Seconds()+3; x += tm.Interval.Seconds() {
		s = append(s, result.MetaPoint{T: x, Length: tm.Interval.Seconds(), Retries: 100, Timeouts: 100})
	}
	j := JudgeMetaRun(&result.MetaRun{LoaderCPUs: 1, Series: s}, 1000, tm)
	assert.False(t, j.Collapsed)
	assert.True(t, j.Recovered)
}

// TestPeakAmplificationOfSentIntervals: an interval whose first tries
// fell under half of those due does not set the peak.
func TestPeakAmplificationOfSentIntervals(t *testing.T) {
	tm := plan.MetaQuickTiming()
	s := metaSeries(tm, 1000, 0, 1)
	s[len(s)-1].FirstTries, s[len(s)-1].Retries = 10, 990
	s[1].Retries = s[1].FirstTries
	j := JudgeMetaRun(&result.MetaRun{LoaderCPUs: 1, Series: s}, 1000, tm)
	assert.Equal(t, 2.0, j.PeakAmplification)
}

func TestJudgeMetaRunServerShares(t *testing.T) {
	tm := plan.MetaQuickTiming()
	r := &result.MetaRun{LoaderCPUs: 1, Series: metaSeries(tm, 1000, 0, 1), Server: &result.ServerCounts{Ran: 10000, Wasted: 1000, DeadlineRequests: 10000}}
	r.Totals.Useful = 8000
	j := JudgeMetaRun(r, 1000, tm)
	assert.InDelta(t, 0.1, j.WastedShare, 1e-9)
	assert.InDelta(t, 0.2, j.UnusedShare, 1e-9)
	assert.Equal(t, 1.0, j.PeakAmplification, "no retries: 1")
	r.Server.DeadlineRequests = 0
	assert.True(t, math.IsNaN(JudgeMetaRun(r, 1000, tm).WastedShare), "no deadline sent: kvserver cannot tell waste")
}

// TestMetastableFindings: per model the variants judged, and only the
// variants that came back within 5 s under every retrying model are
// recommended.
func TestMetastableFindings(t *testing.T) {
	c := metaComparison(t, map[string]map[string]float64{
		"retry":    {"direct": -1, "fifo": -1, "lifo+deadlines": 2, "adaptive": 8},
		"backoff":  {"direct": -1, "lifo+deadlines": 1},
		"budget":   {"lifo+deadlines": 0},
		"throttle": {"lifo+deadlines": 4, "fifo limit=gradient2": 6, "fifo cap=256": 6},
	})
	a := Analyze(c)
	m := a.Metastable
	require.NotNil(t, m)
	require.Len(t, m.Models, 6)
	assert.Len(t, m.Models[0].Variants, 9, "none: no +deadlines variants")
	retry := m.Models[2]
	require.Equal(t, "retry", retry.Name)
	by := map[string]*MetaVariant{}
	for _, v := range retry.Variants {
		by[v.Name] = v
	}
	assert.Equal(t, 1, by["direct"].Collapsed)
	assert.Equal(t, 0, by["direct"].Recovered)
	assert.Equal(t, SpikeCollapsed, by["direct"].Outcome)
	assert.Equal(t, 1, by["lifo+deadlines"].Recovered)
	assert.Equal(t, SpikeRecovered, by["lifo+deadlines"].Outcome)
	assert.Equal(t, 2.0, by["lifo+deadlines"].Recovery.Median)
	assert.Equal(t, 8.0, by["adaptive"].Recovery.Median)
	assert.Equal(t, 8.0, by["adaptive"].P99.Median)
	assert.Equal(t, 1, by["adaptive"].P99Back)
	assert.Equal(t, 0, by["direct"].P99Back)
	assert.InDelta(t, 0.1, by["lifo+deadlines"].WastedShare, 1e-9)
	assert.True(t, math.IsNaN(by["fifo"].WastedShare))
	assert.Equal(t, 3.0, by["fifo"].PeakAmplification)
	// fifo+deadlines (1 s everywhere) and lifo+deadlines (at most 4 s);
	// adaptive took 8 s under retry, fifo limit=gradient2 and fifo
	// cap=256 6 s under throttle; the default, the peers and lifo (1 s
	// everywhere) too.
	assert.Equal(t, []string{"default", "failsafe", "failsafe-priority", "lifo", "fifo+deadlines", "lifo+deadlines"}, m.Recommended)

	// A variant the spike did not overload under one retrying model is
	// not recommended: its recovery there proved nothing.
	// A variant whose only run's client side saturated is not judged.
	for _, r := range c.Metastable.Runs {
		if r.Model == "budget" && r.Variant == "lifo" {
			r.Series = calmSeries(c.Plan.Metastable.Timing, c.Metastable.BaseRate)
		}
		if r.Model == "budget" && r.Variant == "fifo" {
			r.Series[0].LoaderShare = 0.95
		}
	}
	m = Analyze(c).Metastable
	assert.Equal(t, []string{"default", "failsafe", "failsafe-priority", "fifo+deadlines", "lifo+deadlines"}, m.Recommended)
	budget := m.Models[4]
	require.Equal(t, "budget", budget.Name)
	assert.Zero(t, budget.Variant("lifo").Overloaded)
	assert.Equal(t, SpikeCalm, budget.Variant("lifo").Outcome)
	assert.Equal(t, SpikeNotJudged, budget.Variant("fifo").Outcome)
	assert.Equal(t, 0, budget.Variant("fifo").JudgedRuns)
}

func TestNoMetastableElsewhere(t *testing.T) {
	c := comparisonOf(t, map[string][]float64{"direct": {1000}}, "direct")
	assert.Nil(t, Analyze(c).Metastable)
}

// TestRecommendedByTheTarget: a variant whose useful goodput is back at
// 92 % of the base at once, and at the base only 6 s after the spike,
// recovered (95 %) in 6 s but met the target (90 %) at once, and the
// target is what recommends it; at 85 % it is not on target.
func TestRecommendedByTheTarget(t *testing.T) {
	c := metaComparison(t, map[string]map[string]float64{
		"retry": {"direct": -1, "default": 9, "failsafe": 9, "failsafe-priority": 9, "fifo": -1, "lifo": 9, "fifo limit=gradient2": 9,
			"fifo+deadlines": 9, "lifo+deadlines": 9, "adaptive": 9},
	})
	tm := c.Plan.Metastable.Timing
	shape := func(share float64) []result.MetaPoint {
		s := metaSeries(tm, c.Metastable.BaseRate, 6, 1)
		for i := range s {
			if end := tm.SpikeEnd().Seconds(); s[i].T >= end-1e-9 && s[i].T < end+6-1e-9 {
				s[i].Useful = int64(share * c.Metastable.BaseRate * s[i].Length)
				s[i].UsefulP99 = 10 * time.Millisecond
			}
		}
		return s
	}
	for _, r := range c.Metastable.Runs {
		if r.Variant == "fifo cap=256" {
			r.Series = shape(0.92)
		}
	}
	j := JudgeMetaRun(&result.MetaRun{LoaderCPUs: 1, Series: shape(0.92)}, c.Metastable.BaseRate, tm)
	assert.True(t, j.OnTarget)
	assert.Zero(t, j.TargetTime)
	assert.True(t, j.Recovered)
	assert.Equal(t, 6*time.Second, j.RecoveryTime)
	assert.Equal(t, []string{"fifo cap=256"}, Analyze(c).Metastable.Recommended)

	for _, r := range c.Metastable.Runs {
		if r.Variant == "fifo cap=256" && r.Model == "throttle" {
			r.Series = shape(0.85)
		}
	}
	j = JudgeMetaRun(&result.MetaRun{LoaderCPUs: 1, Series: shape(0.85)}, c.Metastable.BaseRate, tm)
	assert.Equal(t, 6*time.Second, j.TargetTime, "on target only once at the base")
	assert.Empty(t, Analyze(c).Metastable.Recommended)
}

// TestClientSideDecidesWhetherARunIsJudged: a run whose loader used
// plan.MetaClientShare of its CPU in any interval, or sent attempts on
// free connections late in more than plan.MetaOwnLateIntervals intervals,
// gets no verdict, nor one whose client side was not recorded; one with
// room, waits for connections and all, is judged; a variant with an
// unjudged run is never recommended.
func TestClientSideDecidesWhetherARunIsJudged(t *testing.T) {
	tm := plan.MetaQuickTiming()
	judge := func(cpus int, edit func([]result.MetaPoint)) MetaJudged {
		s := metaSeries(tm, 1000, 0, 1)
		for i := range s {
			s[i].LoaderShare = 0.3
		}
		edit(s)
		return JudgeMetaRun(&result.MetaRun{LoaderCPUs: cpus, Series: s}, 1000, tm)
	}
	room := judge(1, func(s []result.MetaPoint) { s[3].ConnWaits, s[4].OwnLagP99 = 500, time.Second })
	assert.True(t, room.Judged(), "connection waits and one late interval: the client side kept up")
	assert.True(t, room.Recovered)
	assert.EqualValues(t, 500, room.Client.ConnWaits)

	busy := judge(1, func(s []result.MetaPoint) { s[5].LoaderShare = plan.MetaClientShare })
	assert.False(t, busy.Judged())
	assert.True(t, busy.Client.CPUBound)
	assert.Equal(t, s5(tm), busy.Client.PeakAt)
	assert.False(t, busy.Recovered || busy.Collapsed || busy.Overloaded || busy.OnTarget, "no verdict")

	late := judge(2, func(s []result.MetaPoint) { s[3].OwnLagP99, s[6].OwnLagP99 = 20*time.Millisecond, 20*time.Millisecond })
	assert.True(t, late.Client.Saturated)
	assert.False(t, late.Client.CPUBound)
	assert.Equal(t, 2, late.Client.OwnLate)

	unknown := judge(0, func([]result.MetaPoint) {})
	assert.False(t, unknown.Client.Known)
	assert.False(t, unknown.Judged())

	c := metaComparison(t, nil)
	for _, r := range c.Metastable.Runs {
		if r.Variant == "default" && r.Model == "retry" {
			r.Series[5].LoaderShare = 0.95
		}
	}
	m := Analyze(c).Metastable
	assert.NotContains(t, m.Recommended, "default", "a run not judged recommends nothing")
	for _, v := range m.Models[2].Variants {
		if v.Name == "default" {
			assert.Equal(t, 1, v.NotJudged)
			assert.True(t, v.Client.CPUBound)
			assert.Zero(t, v.Recovered)
		}
	}
}

// s5 is the start of the sixth interval of t's series.
func s5(t plan.MetaTiming) float64 { return 5 * t.Interval.Seconds() }

// TestUsefulOverTheRun: a run's useful goodput is its useful answers
// over its schedule's length, and over the first tries the schedule
// asked; its useful p99 is the loader's over the whole run.
func TestUsefulOverTheRun(t *testing.T) {
	tm := plan.MetaQuickTiming()
	r := &result.MetaRun{LoaderCPUs: 1, Series: calmSeries(tm, 1000), Totals: result.MetaTotals{UsefulP99: 7 * time.Millisecond}}
	j := JudgeMetaRun(r, 1000, tm)
	var useful, asked int64
	for _, p := range r.Series {
		useful, asked = useful+p.Useful, asked+p.FirstTries
	}
	assert.InDelta(t, float64(useful)/tm.Duration().Seconds(), j.Useful, 1e-9)
	assert.InDelta(t, float64(useful)/float64(asked), j.UsefulShare, 1e-9, "every first try answered")
	assert.Equal(t, 7*time.Millisecond, j.UsefulP99)
}

// TestDefaultAgainstThePeer: under each model where both ran, the
// default is set against each peer: recovery (a variant that never
// recovered is the later one), useful goodput and useful p99 over the
// run; where either has no judged run nothing is compared.
func TestDefaultAgainstThePeer(t *testing.T) {
	c := metaComparison(t, map[string]map[string]float64{
		"retry":   {"default": 0, "failsafe": 3, "failsafe-priority": -1},
		"backoff": {"default": 4, "failsafe": 1},
	})
	for _, r := range c.Metastable.Runs {
		r.Totals.UsefulP99 = 20 * time.Millisecond
		if r.Variant == "failsafe" && r.Model == "retry" {
			r.Totals.UsefulP99 = 400 * time.Millisecond
		}
		if r.Variant == "failsafe-priority" && r.Model == "budget" {
			r.Series[0].LoaderShare = 0.95 // its client side saturated
		}
		if r.Variant == "default" && r.Model == "none" {
			r.Totals.UsefulP99 = 25 * time.Millisecond // 1.25×: inside the noise
		}
		if r.Variant == "default" && r.Model == "untuned" {
			r.Totals.UsefulP99 = 27 * time.Millisecond // 1.35×: beyond it
		}
	}
	got := map[string]MetaVersus{}
	for _, v := range Analyze(c).Metastable.Versus {
		got[v.Model+"/"+v.Peer] = v
	}
	require.Len(t, got, 12, "6 models × 2 peers")
	retry := got["retry/failsafe"]
	assert.True(t, retry.Judged && retry.RecoveryNoLater && retry.UsefulNoLess && retry.P99NoHigher)
	assert.True(t, got["retry/failsafe-priority"].RecoveryNoLater, "the peer never recovered")
	backoff := got["backoff/failsafe"]
	assert.False(t, backoff.RecoveryNoLater, "4 s against 1 s")
	assert.False(t, backoff.UsefulNoLess)
	assert.True(t, backoff.P99NoHigher, "equal is no higher")
	assert.True(t, got["none/failsafe"].P99NoHigher, "1.25× the peer's p99 is inside the noise")
	assert.InDelta(t, 1.25, got["none/failsafe"].P99Ratio, 1e-9, "the default's useful p99 over the peer's")
	assert.InDelta(t, 0.05, retry.P99Ratio, 1e-9)
	assert.Less(t, backoff.UsefulRatio, 1.0, "recovered later: less useful goodput over the run")
	assert.InDelta(t, 1, got["none/failsafe"].UsefulRatio, 1e-9)
	assert.False(t, got["untuned/failsafe"].P99NoHigher, "1.35× is beyond it")
	budget := got["budget/failsafe-priority"]
	assert.False(t, budget.Judged)
	assert.Equal(t, 0, budget.Other.JudgedRuns)
	assert.Equal(t, 1, budget.Default.JudgedRuns)
	assert.False(t, budget.RecoveryNoLater || budget.UsefulNoLess || budget.P99NoHigher)
}

// TestRunsJudgedAtTheirStoresRate: a model whose storm ran in front of
// a smaller store is judged against that store's base rate.
func TestRunsJudgedAtTheirStoresRate(t *testing.T) {
	c := metaComparison(t, nil)
	m := c.Metastable
	m.Sizes = []result.MetaSize{{Slots: 16, Models: []string{"none", "retry", "backoff", "budget", "throttle"}, BaseRate: 6000, SpikeRate: 15000},
		{Slots: 1, Models: []string{"untuned"}, BaseRate: 600, SpikeRate: 1500}}
	for _, r := range m.Runs {
		if r.Model == "untuned" {
			r.Series = metaSeries(c.Plan.Metastable.Timing, 600, 1, 3)
		}
	}
	a := Analyze(c).Metastable
	untuned := a.Models[1]
	require.Equal(t, "untuned", untuned.Name)
	assert.Equal(t, 1, untuned.Slots)
	assert.Equal(t, 600.0, untuned.BaseRate)
	assert.Equal(t, 1, untuned.Variant("default").Recovered, "back at 600/s: recovered")
	assert.Equal(t, 16, a.Models[2].Slots)
}

// TestMetaFits: the analysis gives each client model's fit in front of
// the plan's store and, where the storms were sized to the loader, its
// fit in front of the store it ran in front of, and whether the loader
// could send some model's spike at all.
func TestMetaFits(t *testing.T) {
	c := metaComparison(t, nil)
	p, m := c.Plan.Metastable, c.Metastable
	require.True(t, p.SizeStorms)
	assert.Nil(t, Analyze(c).Metastable.Fits, "nothing measured")
	assert.True(t, Analyze(c).Metastable.Sendable, "nothing measured: nothing stopped")

	// 20 µs an attempt answered at once, 60 µs one that timed out, on 1 CPU.
	m.ClientSide = &result.ClientSide{Rate: 5000, LoaderCPUs: 1, Answered: 20 * time.Microsecond, TimedOut: 60 * time.Microsecond,
		MostAttempts: map[string]float64{"none": 1, "untuned": 6, "retry": 3, "backoff": 3, "budget": 1.2, "throttle": 3}}
	m.SpikeRate = 15000
	m.Sizes = []result.MetaSize{{Slots: 16, Models: []string{"none", "budget"}, BaseRate: 6000, SpikeRate: 15000},
		{Slots: 1, Models: []string{"untuned"}, BaseRate: 480, SpikeRate: 1200}}
	a := Analyze(c).Metastable
	fits := map[string]MetaFit{}
	for _, f := range a.Fits {
		fits[f.Model] = f
	}
	require.Len(t, fits, 6)
	untuned := fits["untuned"]
	assert.InDelta(t, 90000, untuned.Attempts, 1e-6, "in front of the plan's store: 15,000 × 6")
	assert.Equal(t, 1, untuned.Slots)
	require.NotNil(t, untuned.There)
	assert.InDelta(t, 7200, untuned.There.Attempts, 1e-6, "in front of 1 slot: 1,200 × 6")
	assert.InDelta(t, 0.432, untuned.There.CPUs, 1e-9)
	assert.Equal(t, 16, fits["none"].Slots)
	assert.Nil(t, fits["none"].There, "ran in front of the plan's store")
	assert.Equal(t, 0, fits["retry"].Slots, "no store: not run")
	assert.True(t, a.Sendable, "untuned's first tries fit in front of 1 slot")

	// 15,000 first tries at 60 µs: 0.9 of 1 CPU, over the limit, and
	// untuned sent its storm nowhere smaller.
	m.ClientSide.Answered = 60 * time.Microsecond
	m.Sizes = m.Sizes[:1]
	assert.False(t, Analyze(c).Metastable.Sendable)
}

// TestFirstRunLine: each variant's chart line is its first run's useful
// goodput per interval of the schedule, at the interval's middle; the
// series' seconds past the schedule are left out.
func TestFirstRunLine(t *testing.T) {
	c := metaComparison(t, nil)
	tm := c.Plan.Metastable.Timing
	var first *result.MetaRun
	for _, r := range c.Metastable.Runs {
		if r.Model == "retry" && r.Variant == "default" {
			first = r
		}
	}
	require.NotNil(t, first)
	scheduled := len(first.Series)
	step := tm.Interval.Seconds()
	first.Series = append(first.Series, result.MetaPoint{T: tm.Duration().Seconds(), Length: step, Useful: 1})
	first.Series[1].Length = 0
	second := *first
	second.Repeat, second.Series = 2, nil
	c.Metastable.Runs = append(c.Metastable.Runs, &second)
	var l *Line
	for _, mm := range Analyze(c).Metastable.Models {
		if i := slices.IndexFunc(mm.Lines, func(l Line) bool { return l.Name == "default" }); mm.Name == "retry" && i >= 0 {
			l = &mm.Lines[i]
		}
	}
	require.NotNil(t, l)
	assert.Equal(t, "default", l.Name)
	require.Len(t, l.X, scheduled, "the interval past the schedule is left out")
	assert.InDelta(t, step/2, l.X[0], 1e-9)
	assert.InDelta(t, 6000, l.Y[0], 1e-6, "useful answers over the interval's length")
	assert.True(t, math.IsNaN(l.Y[1]), "an interval of no length")
}
