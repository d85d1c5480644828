package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/cpuset"
	ratios "github.com/kvpool/kvpool/internal/ratio"
)

// floorWorkload is six pairs of stand-in rounds: the base's at cpu µs
// per request and rate, drifting down by a tenth per pair, the subject's
// at 1.5 times the base's CPU and half its rate in the same pair.
func floorWorkload(cpu, rate, loader, share float64) *result.FloorWorkload {
	w := &result.FloorWorkload{State: "fresh", Workload: "get", Failed: [2][]int64{make([]int64, 6), make([]int64, 6)}}
	bound := loader >= 0.9
	for i := range 6 {
		drift := 1 - float64(i)/10
		w.Base = append(w.Base, result.ClosedRound{ServerCPUPerRequest: time.Duration(cpu * 1e3), Rate: rate * drift, Server: cpuset.Use{Share: share}, Loader: cpuset.Use{Share: loader}, LoaderBound: bound})
		w.Variant = append(w.Variant, result.ClosedRound{ServerCPUPerRequest: time.Duration(1.5 * cpu * 1e3), Rate: rate * drift / 2, Server: cpuset.Use{Share: share}, Loader: cpuset.Use{Share: loader}, LoaderBound: bound})
	}
	return w
}

// TestFloorWorkloadOf: the pairs' drift cancels inside the ratios; a
// loader-bound round (the loader at 90 %: the runner's closedRound)
// leaves the throughput unjudged, a server under 85 %
// busy in a closed loop is named.
func TestFloorWorkloadOf(t *testing.T) {
	f := &result.Floor{}
	w := floorWorkload(10, 100_000, 0.5, 0.99)
	a := FloorWorkloadOf(f, w)
	assert.InDelta(t, 0.5, a.Throughput.Median, 1e-12)
	assert.InDelta(t, 0.5, a.Throughput.Lo, 1e-12, "every pair the same ratio: the drift cancels")
	assert.InDelta(t, 1.5, a.CPU.Median, 1e-12)
	assert.Equal(t, 6, a.CPU.N)
	assert.InDelta(t, 75_000, a.Sides[0].Rate.Median, 1e-9, "the median of 100k..50k")
	assert.Equal(t, 15*time.Microsecond, a.Sides[1].CPUPerRequest)
	assert.InDelta(t, 15e3, a.CPURange[1].Hi, 1e-9)
	assert.False(t, a.LoaderBound)
	assert.False(t, a.Idle)
	assert.Zero(t, a.Failed)

	w = floorWorkload(10, 100_000, 0.92, 0.6)
	w.Failed[1][2] = 3
	a = FloorWorkloadOf(f, w)
	assert.True(t, a.LoaderBound, "the loader at 92 %")
	assert.InDelta(t, 0.92, a.LoaderMax, 1e-12)
	assert.True(t, a.Idle)
	assert.InDelta(t, 0.6, a.LeastBusy, 1e-12)
	assert.Equal(t, int64(3), a.Failed)

	f.Options.Rate = 100_000
	a = FloorWorkloadOf(f, w)
	assert.False(t, a.Idle, "at a rate the servers idle by design")
	assert.InDelta(t, 0.25, a.Answered, 1e-12, "the subject's last round: half of half the rate")
	assert.True(t, a.Behind)
}

// TestFloorOfScales: each server's throughput over its own at the first
// count, and the subject's scaling over the base's with the two counts'
// intervals joined end to end (wider than either).
func TestFloorOfScales(t *testing.T) {
	one, eight := floorWorkload(10, 100_000, 0.5, 0.99), floorWorkload(10, 600_000, 0.95, 0.99)
	for i := range eight.Variant {
		eight.Variant[i].Rate *= 0.9 * 2 * 0.7 // 0.63 of the base's
	}
	f := &result.Floor{Counts: []*result.FloorCount{
		{CPUs: 1, Workloads: []*result.FloorWorkload{one}}, {CPUs: 8, Workloads: []*result.FloorWorkload{eight}}}}
	a := FloorOf(f)
	require.Len(t, a.Scaling, 1)
	rows := a.Scaling[0]
	require.Len(t, rows, 2)
	assert.Equal(t, 8, rows[1].CPUs)
	assert.InDelta(t, 6, rows[1].Scale[0], 1e-12)
	assert.InDelta(t, 0.63/0.5*6, rows[1].Scale[1], 1e-9)
	assert.InDelta(t, 1.26, rows[1].Ratio.Median, 1e-9)
	assert.True(t, rows[1].LoaderBound, "the loader at 95 % on 8 CPUs")
	assert.False(t, rows[0].LoaderBound)

	iv := scalingRatio(ratios.Interval{Median: 0.7, Lo: 0.68, Hi: 0.72, N: 6}, ratios.Interval{Median: 0.63, Lo: 0.612, Hi: 0.648, N: 6})
	assert.InDelta(t, 0.9, iv.Median, 1e-12)
	assert.InDelta(t, 0.612/0.72, iv.Lo, 1e-12)
	assert.InDelta(t, 0.648/0.68, iv.Hi, 1e-12)
	iv = scalingRatio(ratios.Interval{Median: 0.7, Lo: math.Inf(-1), Hi: math.Inf(1), N: 2}, ratios.Interval{Median: 0.63, Lo: 0.6, Hi: 0.7, N: 6})
	assert.False(t, iv.Finite(), "an unbounded count leaves the scaling unbounded")
	assert.Equal(t, 2, iv.N)

	f.Counts[1].Workloads = nil // the second count did not finish
	assert.Len(t, FloorOf(f).Scaling[0], 1)
}
