package main

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/harness/harnesstest"
	"github.com/kvpool/kvpool/internal/ratio"
)

// asMainEnv makes this test binary run as loadtest itself (see TestMain),
// so that floor can start it as bare-server.
const asMainEnv = "LOADTEST_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}

func TestParseFloorRefusesWhatCannotWork(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		_, err := parseFloor(args, io.Discard)
		require.Error(t, err, args)
		assert.ErrorIs(t, err, errUsage, args)
		assert.Contains(t, err.Error(), want, args)
	}
	f("overlap", "-server-cpus", "0-1", "-loader-cpus", "1")
	f("no CPUs named", "-server-cpus", "")
	f(`"delete" is not one of get, put`, "-workloads", "get,delete")
	f(`"stale" is not one of fresh, compacted`, "-states", "stale")
	f("-rounds 0", "-rounds", "0")
	f("-keys 0", "-keys", "0")
	f("-server-cpus has 2 CPUs", "-server-cpus", "0-1", "-loader-cpus", "2", "-cpu-counts", "1,4")
	f(`-cpu-counts "one"`, "-cpu-counts", "one")
	f(`-cpu-counts "0"`, "-cpu-counts", "0")
	f("-rate -1", "-rate", "-1")
	f("scaling is each server's closed-loop throughput", "-server-cpus", "0-1", "-loader-cpus", "2", "-cpu-counts", "1,2", "-rate", "1000")
}

func TestParseFloorCPUCounts(t *testing.T) {
	o, err := parseFloor([]string{"-server-cpus", "0-7", "-loader-cpus", "8-15", "-cpu-counts", "8,1, 2,4,2"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 4, 8}, o.cpuCounts, "in increasing order, each once")
}

// TestPrintScaling: each server's throughput as a multiple of its own at
// the first count, and kvserver's scaling over the bare handler's with the
// two counts' intervals joined end to end.
func TestPrintScaling(t *testing.T) {
	sum := func(bare, kv float64, iv ratio.Interval, loaderBound bool) []floorSummary {
		return []floorSummary{{key: "store fresh, GET", names: [2]string{"bare", "kvserver"}, rates: [2]float64{bare, kv}, throughput: iv, loaderBound: loaderBound}}
	}
	var out bytes.Buffer
	printScaling(&out, []int{1, 8}, [][]floorSummary{
		sum(100_000, 70_000, ratio.Interval{Median: 0.7, Lo: 0.68, Hi: 0.72, N: 6}, false),
		sum(600_000, 378_000, ratio.Interval{Median: 0.63, Lo: 0.612, Hi: 0.648, N: 6}, false),
	})
	assert.Equal(t, `
scaling: throughput on n server CPUs as a multiple of its own on 1
store fresh, GET:
  n=1: bare 100,000 req/s (1.00×), kvserver 70,000 req/s (1.00×); kvserver's scaling over bare's 1.000 [0.944, 1.059] (6 pairs) ~
  n=8: bare 600,000 req/s (6.00×), kvserver 378,000 req/s (5.40×); kvserver's scaling over bare's 0.900 [0.850, 0.953] (6 pairs)
`, out.String())

	out.Reset()
	printScaling(&out, []int{1, 2}, [][]floorSummary{
		sum(100_000, 70_000, ratio.Interval{Median: 0.7, Lo: math.Inf(-1), Hi: math.Inf(1), N: 2}, false),
		sum(190_000, 130_000, ratio.Interval{Median: 0.68, Lo: 0.6, Hi: 0.7, N: 6}, true),
	})
	assert.Contains(t, out.String(), "0.971 [unbounded] (2 pairs) (NOT judged: the loader reached 90 % of its CPUs)")
}

func TestParseFloorDefaults(t *testing.T) {
	o, err := parseFloor([]string{"-server-cpus", "0", "-loader-cpus", "1", "-args", "-cache-mb 128", "-workloads", "put,get,put"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, cpuset.Of(0), o.serverCPUs)
	assert.Equal(t, cpuset.Of(1), o.loaderCPUs)
	assert.Equal(t, []string{"put", "get"}, o.workloads, "in the order given, each once")
	assert.Equal(t, []string{stateFresh, stateCompacted}, o.states)
	assert.Equal(t, []string{"-cache-mb", "128"}, o.baseArgs, "a kvserver -base takes -args unless given its own")
	assert.Equal(t, baseBare, o.base)
}

func TestThousands(t *testing.T) {
	f := func(x float64, want string) {
		t.Helper()
		assert.Equal(t, want, thousands(x))
	}
	f(0, "0")
	f(999.4, "999")
	f(74074, "74,074")
	f(1234567, "1,234,567")
}

// TestFloorBenchRunsBothServersInEveryState runs the whole bench cut
// short, the bare handler (this binary as loadtest bare-server) against a
// real kvserver, and a kvserver against another: every state, workload
// and round is reported with its ratio.
func TestFloorBenchRunsBothServersInEveryState(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts kvserver")
	}
	aff, err := cpuset.Affinity()
	if err != nil || aff.Len() < 2 {
		t.Skip("needs 2 CPUs: one for the servers, one for the loader")
	}
	server, loader := aff.Halves()
	bin, err := harnesstest.BuildKVServer(t.TempDir(), harnesstest.RaceEnabled)
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	o := floorOptions{kvserver: bin, base: baseBare, serverCPUs: server, loaderCPUs: loader,
		rounds: 2, round: 200 * time.Millisecond, conns: 4, keys: 200, valueSize: 100, idleWithin: 10 * time.Second,
		workloads: []string{"get", "put"}, states: []string{stateFresh, stateCompacted},
		self: self, selfEnv: []string{asMainEnv + "=1"}, profileDir: t.TempDir()}
	var out bytes.Buffer
	require.NoError(t, floorBench(context.Background(), o, &out, io.Discard))
	text := out.String()
	for _, want := range []string{"store fresh, GET:", "store fresh, PUT:", "store compacted, GET:", "store compacted, PUT:"} {
		assert.Contains(t, text, want)
	}
	assert.Equal(t, 4, strings.Count(text, "kvserver/bare CPU per request:"), text)
	assert.Equal(t, 4, strings.Count(text, "round 2 (kvserver first)"), "which server goes first alternates")
	assert.Equal(t, 4, strings.Count(text, "kvserver's CPU profile"), text)
	assert.NotContains(t, text, "FAILED", "every GET of a filled id is found, every PUT stored")

	o.base, o.baseArgs, o.states, o.workloads, o.profileDir = bin, nil, []string{stateCompacted}, []string{"get"}, ""
	o.cpuCounts = []int{1} // the first CPU of the servers' set
	o.rate = 1000          // and at one load: an open loop
	out.Reset()
	require.NoError(t, floorBench(context.Background(), o, &out, io.Discard))
	assert.Contains(t, out.String(), "4 conns at 1,000 req/s open loop")
	assert.Contains(t, out.String(), "kvserver/base CPU per request:")
	assert.Contains(t, out.String(), "of the 1,000 req/s sent")
	assert.NotContains(t, out.String(), "FAILED")
}

// TestPrintFloorSummaryAtARate: at -rate both servers answer the same
// load, so there is no throughput ratio to give; a round that fell behind
// the rate is named, and the loader's headroom is judged by its CPU.
func TestPrintFloorSummaryAtARate(t *testing.T) {
	o := floorOptions{rate: 20_000, loaderCPUs: cpuset.Of(1)}
	pair := [2]*floorServer{{name: "bare"}, {name: "kvserver", binary: "kvserver"}}
	round := func(cpu, rate, loader float64) floorRun {
		return floorRun{cpuPerReq: cpu, rate: rate, serverShare: 0.5, loaderShare: loader}
	}
	var runs [2][]floorRun
	for i := range 6 {
		runs[0] = append(runs[0], round(20+float64(i), 20_000, 0.3))
		runs[1] = append(runs[1], round(30+float64(i), 19_990, 0.4))
	}
	var out bytes.Buffer
	printFloorSummary(&out, o, pair, runs)
	text := out.String()
	assert.Contains(t, text, "kvserver/bare CPU per request: ")
	assert.NotContains(t, text, "throughput", "both answered the rate")
	assert.Contains(t, text, "both answered at least 99.9% of the 20,000 req/s sent")
	assert.Contains(t, text, "headroom: the loader sent on time")
	assert.NotContains(t, text, "NOT")
	assert.NotContains(t, text, "busy only", "at a rate the servers idle by design")

	runs[1][3] = round(33, 15_000, 0.95)
	out.Reset()
	printFloorSummary(&out, o, pair, runs)
	text = out.String()
	assert.Contains(t, text, "both answered at least 75.0% of the 20,000 req/s sent")
	assert.Contains(t, text, "NOT at the same load")
	assert.Contains(t, text, "the loader reached 95% of its CPUs: it may have sent late")
}
