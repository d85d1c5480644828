package render

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/cpuset"
	ratios "github.com/kvpool/kvpool/internal/ratio"
)

// TestGoldenFloor writes the report of the committed floor.json and
// wants the committed REPORT.md byte for byte, as TestGoldenReports does
// for the comparisons.
func TestGoldenFloor(t *testing.T) {
	golden := filepath.Join("testdata", "floor")
	dir := t.TempDir()
	copyFile(t, filepath.Join(golden, result.FloorFile), filepath.Join(dir, result.FloorFile))
	f, err := result.LoadFloor(dir)
	require.NoError(t, err)
	r, err := WriteFloor(f, analysis.FloorOf(f), dir)
	require.NoError(t, err)
	if *update {
		require.NoError(t, os.WriteFile(filepath.Join(golden, ReportFile), mustRead(t, r.Path), 0o644))
		return
	}
	assert.Equal(t, string(mustRead(t, filepath.Join(golden, ReportFile))), string(mustRead(t, r.Path)), "%s/REPORT.md (go test ./internal/compare/... -update rewrites it)", golden)
}

// floorOf is a floor of one count whose workloads are ws.
func floorOf(rate float64, ws ...*result.FloorWorkload) *result.Floor {
	return &result.Floor{Options: plan.Floor{Base: plan.FloorBare, Rate: rate}, LoaderCPUN: 1, LoaderBusy: 0.9,
		Counts: []*result.FloorCount{{ServerCPUs: "0", CPUs: 1, Workloads: ws}}}
}

// floorRounds are six pairs: the base at cpu+i µs and rate, the subject
// at cpu2+i and rate2, the loader at loader (both).
func floorRounds(cpu, rate, cpu2, rate2, loader float64) *result.FloorWorkload {
	w := &result.FloorWorkload{State: "fresh", Workload: "get", Failed: [2][]int64{make([]int64, 6), make([]int64, 6)}}
	round := func(cpu, rate float64) result.ClosedRound {
		return result.ClosedRound{ServerCPUPerRequest: micro(cpu), Rate: rate, Server: cpuset.Use{Share: 0.5}, Loader: cpuset.Use{Share: loader}, LoaderBound: loader >= 0.9}
	}
	for i := range 6 {
		w.Base = append(w.Base, round(cpu+float64(i), rate))
		w.Variant = append(w.Variant, round(cpu2+float64(i), rate2))
	}
	return w
}

func micro(us float64) time.Duration { return time.Duration(us * 1e3) }

// TestFloorSummaryAtARate: at a rate both servers answer the same load,
// so there is no throughput ratio to give; a round that fell behind the
// rate is named, and the loader's headroom is judged by its CPU.
func TestFloorSummaryAtARate(t *testing.T) {
	w := floorRounds(20, 20_000, 30, 19_990, 0.3)
	f := floorOf(20_000, w)
	var out bytes.Buffer
	FloorSummary(&out, f, analysis.FloorWorkloadOf(f, w))
	text := out.String()
	assert.Contains(t, text, "kvserver/bare CPU per request: ")
	assert.NotContains(t, text, "throughput", "both answered the rate")
	assert.Contains(t, text, "both answered at least 99.9% of the 20,000 req/s sent")
	assert.Contains(t, text, "headroom: the loader sent on time")
	assert.NotContains(t, text, "NOT")
	assert.NotContains(t, text, "busy only", "at a rate the servers idle by design")

	w.Variant[3] = result.ClosedRound{ServerCPUPerRequest: micro(33), Rate: 15_000, Server: cpuset.Use{Share: 0.5}, Loader: cpuset.Use{Share: 0.95}, LoaderBound: true}
	w.Failed[1][3] = 7
	out.Reset()
	FloorSummary(&out, f, analysis.FloorWorkloadOf(f, w))
	text = out.String()
	assert.Contains(t, text, "both answered at least 75.0% of the 20,000 req/s sent")
	assert.Contains(t, text, "NOT at the same load")
	assert.Contains(t, text, "the loader reached 95% of its CPUs: it may have sent late")
	assert.Contains(t, text, "WARNING: 7 requests failed")
	out.Reset()
	FloorRound(&out, f, w, 3)
	assert.Equal(t, "  round 4 (kvserver first): bare 23.00 µs/req 20,000 req/s server 50% loader 30% | kvserver 33.00 µs/req 15,000 req/s server 50% loader 95% FAILED 7\n", out.String())
}

// TestFloorSummaryClosedLoop: the medians per server, both ratios, and
// the loader's and the servers' business judged.
func TestFloorSummaryClosedLoop(t *testing.T) {
	w := floorRounds(10, 100_000, 20, 50_000, 0.5)
	f := floorOf(0, w)
	var out bytes.Buffer
	FloorSummary(&out, f, analysis.FloorWorkloadOf(f, w))
	assert.Equal(t, `  bare     median 12.50 µs CPU/req (10.00..15.00), 100,000 req/s, server busy 50% of its CPUs
  kvserver median 22.50 µs CPU/req (20.00..25.00), 50,000 req/s, server busy 50% of its CPUs
  kvserver/bare CPU per request: 1.801 [1.667, 2.000] (6 pairs)
  kvserver/bare throughput:      0.500 [0.500, 0.500] (6 pairs)
  loader CPU share: median 50% / 50%, max 50% of 1 CPUs (headroom: the servers, not the loader, set the pace)
  NOTE: a server was busy only 50% of its CPUs: it waited (on fsync with -sync), or another process took its CPU; a server that waits pays more per request
`, out.String())
}

// TestFloorScaling: each server's throughput as a multiple of its own at
// the first count, and kvserver's scaling over the bare handler's with
// the two counts' intervals joined end to end.
func TestFloorScaling(t *testing.T) {
	w := &result.FloorWorkload{State: "fresh", Workload: "get"}
	f := &result.Floor{Options: plan.Floor{Base: plan.FloorBare}, LoaderBusy: 0.9, Counts: []*result.FloorCount{{CPUs: 1, Workloads: []*result.FloorWorkload{w}}}}
	row := func(n int, bare, kv, scale0, scale1 float64, iv ratios.Interval, bound bool) analysis.FloorScale {
		return analysis.FloorScale{CPUs: n, Rates: [2]float64{bare, kv}, Scale: [2]float64{scale0, scale1}, Ratio: iv, LoaderBound: bound}
	}
	var out bytes.Buffer
	FloorScaling(&out, f, &analysis.FloorFigures{Scaling: [][]analysis.FloorScale{{
		row(1, 100_000, 70_000, 1, 1, ratios.Interval{Median: 1, Lo: 0.68 / 0.72, Hi: 0.72 / 0.68, N: 6}, false),
		row(8, 600_000, 378_000, 6, 5.4, ratios.Interval{Median: 0.9, Lo: 0.612 / 0.72, Hi: 0.648 / 0.68, N: 6}, false),
		row(2, 190_000, 130_000, 1.9, 130.0/70, ratios.Interval{Median: 0.971, Lo: math.Inf(-1), Hi: math.Inf(1), N: 2}, true),
	}}})
	assert.Equal(t, `
scaling: throughput on n server CPUs as a multiple of its own on 1
store fresh, GET:
  n=1: bare 100,000 req/s (1.00×), kvserver 70,000 req/s (1.00×); kvserver's scaling over bare's 1.000 [0.944, 1.059] (6 pairs) ~
  n=8: bare 600,000 req/s (6.00×), kvserver 378,000 req/s (5.40×); kvserver's scaling over bare's 0.900 [0.850, 0.953] (6 pairs)
  n=2: bare 190,000 req/s (1.90×), kvserver 130,000 req/s (1.86×); kvserver's scaling over bare's 0.971 [unbounded] (2 pairs) (NOT judged: the loader reached 90 % of its CPUs)
`, out.String())
}
