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

// writesTestPlan is the full preset's shape: 40 s of reads, the flood
// from 10 s to 30 s, one-second intervals; direct and the default.
func writesTestPlan() *plan.Writes {
	return &plan.Writes{Variants: []plan.Variant{{Pool: plan.Baseline}, {Pool: plan.Default}}, Repeat: 2,
		ReadRate: 3000, Duration: 40 * time.Second, FloodAt: 10 * time.Second, FloodFor: 20 * time.Second,
		FloodConns: 256, FloodValueSize: 16 << 10, FloodKeys: 200_000, Interval: time.Second}
}

// writesRun is a run that went as planned: every second 3,000 reads
// answered at p99 10 ms, the loader at 30 % of its CPU and on time; 4,000
// writes a second answered over the flood; kvserver serving Pebble's
// metrics, no stall. edit changes it.
func writesRun(variant string, rep int, edit func(r *result.WritesRun)) *result.WritesRun {
	r := &result.WritesRun{Variant: variant, Repeat: rep, FloodStart: 10.004, FloodEnd: 30.1,
		ReadsAsked: 3000, ReadsSendRate: 3000, LoaderCPUs: 1}
	for i := range 40 {
		r.ReadSeries = append(r.ReadSeries, result.WritesPoint{T: float64(i), Length: 1, Responses: 3000, OK: 3000, Sent: 3000,
			P99: 10 * time.Millisecond, OwnLagP99: 200 * time.Microsecond, LoaderShare: 0.3})
		r.Server = append(r.Server, result.ServerSample{T: float64(i) + 0.002, Values: map[string]float64{
			result.MetricWriteStalls: 0, result.MetricWriteStallSeconds: 0, result.MetricL0Sublevels: float64(min(i, 5)), result.MetricMemtableBytes: 64 << 20}})
	}
	for j := range 20 {
		r.WriteSeries = append(r.WriteSeries, result.WritesPoint{T: 10.004 + float64(j), Length: 1, Responses: 4000, OK: 4000, P99: 150 * time.Millisecond})
	}
	r.Reads = result.WritesTotals{Responses: 120_000, OK: 120_000, P99: 10 * time.Millisecond, Elapsed: 40 * time.Second}
	r.Writes = result.WritesTotals{Responses: 80_000, OK: 80_000, P99: 150 * time.Millisecond, Elapsed: 20 * time.Second}
	if edit != nil {
		edit(r)
	}
	return r
}

// judge analyses direct's and the default's runs (two repetitions each)
// and returns the default's judgement.
func judge(t *testing.T, direct, def func(r *result.WritesRun)) (*Writes, *WritesJudgement) {
	t.Helper()
	p := writesTestPlan()
	c := &result.Comparison{Preset: "writes", Plan: &plan.Plan{Writes: p}, Criteria: result.Criteria{LoaderBusy: 0.9},
		Writes: &result.Writes{LagTolerance: 10 * time.Millisecond}}
	for rep := 1; rep <= 2; rep++ {
		c.Writes.Runs = append(c.Writes.Runs, writesRun("direct", rep, direct), writesRun("default", rep, def))
	}
	w := writesOf(c)
	require.NotNil(t, w)
	require.Len(t, w.Judgements, 1)
	return w, w.Judgements[0]
}

// A default that behaves as direct meets every target.
func TestWritesTargetsMet(t *testing.T) {
	w, j := judge(t, nil, nil)
	assert.Equal(t, 20, w.FloodSeconds, "10 s to 30 s")
	assert.Equal(t, 2, j.Judged)
	for name, x := range map[string]WritesTarget{"refused": j.Refused, "p99": j.P99, "stalls": j.Stalls, "goodput": j.Goodput} {
		assert.Equal(t, TargetMet, x.Verdict, name)
		assert.Equal(t, 2, x.Of, name)
	}
	assert.Equal(t, 40, j.P99.Seconds, "20 flood seconds × 2 pairs")
	d := w.Variant("default")
	assert.Equal(t, 3000.0, d.WorstReadRate.Median)
	assert.InDelta(t, 4000*20/20.096, d.WriteGoodput.Median, 1, "201s over the flood's span")
	assert.Equal(t, 5.0, d.L0Max.Median)
	assert.Zero(t, d.Stalls.Median)
	assert.Zero(t, d.PacedSeconds.N, "no admission metric served: no figure")
}

// A default that refuses reads direct serves fails the reads target: of
// 120,000 reads, 200 (0.17 %) is more than 0.1 %, where direct refused
// none; 100 (0.08 %) is within it. Where direct refuses some too, no
// more than direct's.
func TestWritesRefusedReadsFail(t *testing.T) {
	refuse := func(n int64) func(r *result.WritesRun) {
		return func(r *result.WritesRun) {
			r.Reads.Shed, r.Reads.OK = n, r.Reads.Responses-n
			r.ReadSeries[15].Shed, r.ReadSeries[15].OK = n, 3000-n
		}
	}
	w, j := judge(t, nil, refuse(200))
	assert.Equal(t, TargetNotMet, j.Refused.Verdict)
	assert.Equal(t, 0, j.Refused.Met)
	d := w.Variant("default")
	assert.Equal(t, 200.0, d.ReadsRefused.Median)
	assert.Equal(t, 2800.0, d.WorstReadRate.Median, "the second that refused them")
	assert.Equal(t, 15.0, d.Runs[0].WorstReadAt)

	_, j = judge(t, nil, refuse(100))
	assert.Equal(t, TargetMet, j.Refused.Verdict, "0.08 %: within 0.1 % of none")
	_, j = judge(t, refuse(300), refuse(200))
	assert.Equal(t, TargetMet, j.Refused.Verdict, "fewer than direct's")
}

// A default whose Pebble stalled fails the stalls target; one whose
// kvserver serves no stall counter is not judged on it.
func TestWritesStallsFail(t *testing.T) {
	w, j := judge(t, nil, func(r *result.WritesRun) {
		for i := 20; i < 40; i++ {
			r.Server[i].Values[result.MetricWriteStalls] = 3
			r.Server[i].Values[result.MetricWriteStallSeconds] = 1.5
		}
	})
	assert.Equal(t, TargetNotMet, j.Stalls.Verdict)
	d := w.Variant("default")
	assert.Equal(t, 3.0, d.Stalls.Median)
	assert.Equal(t, 1.5, d.StallSeconds.Median)

	w, j = judge(t, nil, func(r *result.WritesRun) {
		for i := range r.Server {
			delete(r.Server[i].Values, result.MetricWriteStalls)
		}
	})
	assert.Equal(t, TargetNotJudged, j.Stalls.Verdict)
	assert.Equal(t, UnjudgedNotServed, j.Stalls.NotJudged)
	assert.Zero(t, w.Variant("default").Stalls.N)
	assert.True(t, math.IsNaN(w.Variant("default").Runs[0].Stalls))
}

// The p99 is judged second by second against direct's: 2 of 20 flood
// seconds over 1.2× pass, 3 fail; a second outside the flood counts for
// nothing.
func TestWritesP99PerSecond(t *testing.T) {
	slow := func(seconds ...int) func(r *result.WritesRun) {
		return func(r *result.WritesRun) {
			for _, i := range seconds {
				r.ReadSeries[i].P99 = 13 * time.Millisecond // 1.3× direct's
			}
		}
	}
	_, j := judge(t, nil, slow(10, 20))
	assert.Equal(t, TargetMet, j.P99.Verdict)
	assert.Equal(t, 4, j.P99.Exceeded, "2 a pair")
	_, j = judge(t, nil, slow(10, 20, 29))
	assert.Equal(t, TargetNotMet, j.P99.Verdict)
	assert.Equal(t, 3, j.P99.WorstExceeded)
	_, j = judge(t, nil, slow(5, 6, 7, 35, 36))
	assert.Equal(t, TargetMet, j.P99.Verdict, "outside the flood")
	assert.Zero(t, j.P99.Exceeded)
}

// A second over the p99 rule in which Pebble held direct's writes back
// for 90 % of it or more is counted apart (direct's reads then had
// kvserver to themselves), as are all such flood seconds; a shorter
// stall is not.
func TestWritesP99OverWhileDirectStalled(t *testing.T) {
	stallIn := func(seconds map[int]float64) func(r *result.WritesRun) {
		return func(r *result.WritesRun) {
			var total float64
			for i := range r.Server {
				r.Server[i].Values[result.MetricWriteStallSeconds] = total
				total += seconds[i] // stalled over [i, i+1)
			}
		}
	}
	slow := func(r *result.WritesRun) {
		for _, i := range []int{12, 15, 18} {
			r.ReadSeries[i].P99 = 13 * time.Millisecond
		}
	}
	_, j := judge(t, stallIn(map[int]float64{12: 0.95, 15: 1, 18: 0.75, 20: 1, 35: 1}), slow)
	assert.Equal(t, 6, j.P99.Exceeded, "3 a pair")
	assert.Equal(t, 4, j.P99.ExceededStalled, "seconds 12 and 15 of each pair, not 18")
	assert.Equal(t, 6, j.P99.SecondsStalled, "12, 15 and 20 of each pair's flood seconds")
}

// The write goodput until absorbed counts the flood's 201s from its
// start to the first sample after it with L0 and the memtables back to
// their most before it; the pairs' ratios follow the repetitions.
func TestWritesGoodputUntilAbsorbed(t *testing.T) {
	debt := func(until int) func(r *result.WritesRun) {
		return func(r *result.WritesRun) {
			for i := range r.Server {
				if i >= 11 && i < until {
					r.Server[i].Values[result.MetricL0Sublevels] = 12
				}
			}
		}
	}
	w, j := judge(t, debt(38), debt(34))
	d, base := w.Variant("default"), w.Variant("direct")
	assert.InDelta(t, 34.002, d.Runs[0].AbsorbedAt, 1e-9, "the first sample at L0 5, as before the flood")
	assert.InDelta(t, 80_000/(34.002-10.004), d.AbsorbedGoodput.Median, 1e-6)
	assert.InDelta(t, 80_000/(38.002-10.004), base.AbsorbedGoodput.Median, 1e-6)
	require.Len(t, j.Absorbed, 2)
	assert.InDelta(t, (38.002-10.004)/(34.002-10.004), j.Absorbed[0], 1e-9)

	w, j = judge(t, debt(41), nil)
	assert.True(t, math.IsNaN(w.Variant("direct").Runs[0].AbsorbedGoodput), "its samples ended first")
	assert.Zero(t, w.Variant("direct").AbsorbedGoodput.N)
	assert.Empty(t, j.Absorbed)
}

// Direct's runs against each other by the p99 rule: each ordered pair
// counts, so a second one run spends at 1.3× the other's is counted
// once (the other way round it is under), and a loader-bound run is left
// out.
func TestWritesDirectNoise(t *testing.T) {
	w, _ := judge(t, func(r *result.WritesRun) {
		if r.Repeat == 2 {
			r.ReadSeries[12].P99 = 13 * time.Millisecond
			r.ReadSeries[35].P99 = 13 * time.Millisecond // outside the flood
		}
	}, nil)
	assert.Equal(t, 1, w.DirectNoise.Exceeded)
	assert.Equal(t, 40, w.DirectNoise.Seconds, "20 flood seconds, each run against the other")

	w, _ = judge(t, func(r *result.WritesRun) {
		if r.Repeat == 2 {
			r.ReadSeries[12].P99 = 13 * time.Millisecond
			r.LoaderCPUs, r.ReadSeries[20].LoaderShare, r.ReadSeries[21].LoaderShare, r.ReadSeries[22].LoaderShare, r.ReadSeries[23].LoaderShare = 1, 0.95, 0.95, 0.95, 0.95
		}
	}, nil)
	assert.Zero(t, w.DirectNoise.Seconds, "one run left: nothing to compare it with")
}

// Write goodput under 0.9× direct's fails.
func TestWritesGoodputFails(t *testing.T) {
	_, j := judge(t, nil, func(r *result.WritesRun) { r.Writes.OK = 70_000 })
	assert.Equal(t, TargetNotMet, j.Goodput.Verdict)
	_, j = judge(t, nil, func(r *result.WritesRun) { r.Writes.OK = 73_000 })
	assert.Equal(t, TargetMet, j.Goodput.Verdict)
}

// A run whose read stream the loader could not keep is not judged, its
// pair left out: its own sends late in 4 of its 39 judged seconds (3
// are forgiven), or its CPU at 90 % in 4, or its reads behind with
// connections free. Where one
// pair is left, the verdict rests on it; where none is, nothing is
// judged, whatever the figures (here, refused reads).
func TestWritesLoaderBoundNotJudged(t *testing.T) {
	lateIn := func(reps ...int) func(r *result.WritesRun) {
		return func(r *result.WritesRun) {
			for _, rep := range reps {
				if r.Repeat == rep {
					for _, i := range []int{12, 13, 14, 15} {
						r.ReadSeries[i].OwnLagP99 = 30 * time.Millisecond
					}
				}
			}
			r.Reads.Shed = 500
		}
	}
	w, j := judge(t, nil, lateIn(1, 2))
	assert.Equal(t, 2, j.Pairs)
	assert.Zero(t, j.Judged)
	for _, x := range []WritesTarget{j.Refused, j.P99, j.Stalls, j.Goodput} {
		assert.Equal(t, TargetNotJudged, x.Verdict)
		assert.Equal(t, UnjudgedLoader, x.NotJudged)
	}
	d := w.Variant("default")
	assert.Equal(t, 2, d.NotJudged)
	assert.Equal(t, 4, d.Runs[0].Why.OwnLate)
	assert.Equal(t, 39, d.Runs[0].Why.Judged, "every interval but the first")

	_, j = judge(t, nil, lateIn(2))
	assert.Equal(t, 1, j.Judged)
	assert.Equal(t, TargetNotMet, j.Refused.Verdict, "judged on the pair left")
	assert.Equal(t, 1, j.Refused.Of)

	_, j = judge(t, func(r *result.WritesRun) {
		for _, i := range []int{11, 12, 13, 14} {
			r.ReadSeries[i].LoaderShare = 0.95
		}
	}, nil)
	assert.Equal(t, TargetNotJudged, j.P99.Verdict, "direct's loader was busy")

	w, j = judge(t, nil, func(r *result.WritesRun) { r.ReadsSendRate = 2500 })
	assert.Equal(t, TargetNotJudged, j.Refused.Verdict, "behind with connections free")
	assert.True(t, w.Variant("default").Runs[0].Why.FellBehind)
	_, j = judge(t, nil, func(r *result.WritesRun) { r.ReadsSendRate, r.ReadConnWaits = 2500, 900 })
	assert.Equal(t, TargetMet, j.Goodput.Verdict, "behind because kvserver held every connection: its own doing, judged")
}

// kvserver's samples make counters over the run, gauges at their most,
// the seconds paced, and the admission's refusals by class; an absent
// metric stays unknown.
func TestWritesServerFigures(t *testing.T) {
	f := &WritesFigures{}
	key := func(class, reason string) string {
		return result.SeriesKey(result.MetricAdmissionRejected, map[string]string{"class": class, "reason": reason})
	}
	assert.Equal(t, `kvserver_admission_rejected_total{class="read",reason="queue"}`, key("read", "queue"))
	samples := []result.ServerSample{
		{T: 0, Values: map[string]float64{result.MetricWriteStalls: 2, result.MetricL0Sublevels: 1, result.MetricWritePaced: 0, key("write", "io"): 10}},
		{T: 1, Values: map[string]float64{result.MetricWriteStalls: 4, result.MetricL0Sublevels: 9, result.MetricWritePaced: 1, key("write", "io"): 50, key("read", "queue"): 3}},
		{T: 2, Values: map[string]float64{result.MetricWriteStalls: 5, result.MetricL0Sublevels: 3, result.MetricWritePaced: 1, key("write", "io"): 90, key("read", "queue"): 3, key("write", "queue"): 5}},
	}
	f.serverFigures(samples, time.Second)
	assert.Equal(t, 3.0, f.Stalls, "the counter's growth over the run")
	assert.True(t, math.IsNaN(f.StallSeconds), "not served")
	assert.Equal(t, 9.0, f.L0Max)
	assert.Equal(t, 2.0, f.PacedSeconds)
	assert.Equal(t, map[string]float64{"read": 3, "write": 85}, f.AdmissionRejected)

	g := &WritesFigures{}
	g.serverFigures(nil, time.Second)
	assert.True(t, math.IsNaN(g.Stalls) && math.IsNaN(g.L0Max) && math.IsNaN(g.PacedSeconds))
	assert.Nil(t, g.AdmissionRejected)
}

// The charted lines are the median over a variant's runs, interval by
// interval, the flood's points and kvserver's samples placed by their
// start; a variant that measured none of a figure has no line of it.
func TestWritesSeriesMedian(t *testing.T) {
	w, _ := judge(t, func(r *result.WritesRun) { r.Server = nil }, func(r *result.WritesRun) {
		r.ReadSeries[12].P99 = time.Duration(r.Repeat) * 100 * time.Millisecond
		r.ReadSeries[3] = result.WritesPoint{T: 3, Length: 1} // nothing answered
	})
	line := func(ls []Line) Line {
		t.Helper()
		i := slices.IndexFunc(ls, func(l Line) bool { return l.Name == "default" })
		require.GreaterOrEqual(t, i, 0, "default has a line")
		return ls[i]
	}
	p99, reads, writes, l0 := line(w.ReadP99), line(w.ReadOK), line(w.WriteOK), line(w.L0Sublevels)
	require.Len(t, p99.X, 40)
	assert.Equal(t, 12.5, p99.X[12])
	assert.Equal(t, 150.0, p99.Y[12], "the median of 100 and 200 ms")
	assert.True(t, math.IsNaN(p99.Y[3]), "a second without answers has no p99")
	assert.Equal(t, 0.0, reads.Y[3])
	assert.True(t, math.IsNaN(writes.Y[5]), "no flood yet")
	assert.Equal(t, 4000.0, writes.Y[10])
	assert.Equal(t, 5.0, l0.Y[30])
	assert.Len(t, w.ReadP99, 2, "direct's and default's")
	assert.Equal(t, []string{"default"}, []string{w.L0Sublevels[0].Name}, "direct's kvserver served no L0 figure")
	assert.Len(t, w.L0Sublevels, 1)
}
