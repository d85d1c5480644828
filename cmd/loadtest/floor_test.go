package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/render"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/harness/harnesstest"
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
	assert.Equal(t, []int{1, 2, 4, 8}, o.CPUCounts, "in increasing order, each once")
}

func TestParseFloorDefaults(t *testing.T) {
	o, err := parseFloor([]string{"-server-cpus", "0", "-loader-cpus", "1", "-args", "-cache-mb 128", "-workloads", "put,get,put"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, cpuset.Of(0), o.ServerCPUs)
	assert.Equal(t, cpuset.Of(1), o.LoaderCPUs)
	assert.Equal(t, []string{"put", "get"}, o.Workloads, "in the order given, each once")
	assert.Equal(t, []string{plan.FloorFresh, plan.FloorCompacted}, o.States)
	assert.Equal(t, []string{"-cache-mb", "128"}, o.BaseArgs, "a kvserver -base takes -args unless given its own")
	assert.Equal(t, plan.FloorBare, o.Base)
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
	o := plan.Floor{Kvserver: bin, Base: plan.FloorBare, ServerCPUs: server, LoaderCPUs: loader,
		Rounds: 2, Round: 200 * time.Millisecond, Conns: 4, Keys: 200, ValueSize: 100, IdleWithin: 10 * time.Second,
		Workloads: []string{"get", "put"}, States: []string{plan.FloorFresh, plan.FloorCompacted},
		Self: self, SelfEnv: []string{asMainEnv + "=1"}, ProfileDir: t.TempDir(), Out: t.TempDir()}
	var out bytes.Buffer
	_, err = compare.Floor(context.Background(), o, &out, io.Discard)
	require.NoError(t, err)
	text := out.String()
	for _, want := range []string{"store fresh, GET:", "store fresh, PUT:", "store compacted, GET:", "store compacted, PUT:"} {
		assert.Contains(t, text, want)
	}
	assert.Equal(t, 4, strings.Count(text, "kvserver/bare CPU per request:"), text)
	assert.Equal(t, 4, strings.Count(text, "round 2 (kvserver first)"), "which server goes first alternates")
	assert.Equal(t, 4, strings.Count(text, "kvserver's CPU profile"), text)
	assert.NotContains(t, text, "FAILED", "every GET of a filled id is found, every PUT stored")

	// -out: floor.json, and REPORT.md with the tables as printed, which
	// compare -render writes again byte for byte.
	assert.FileExists(t, filepath.Join(o.Out, result.FloorFile))
	report, err := os.ReadFile(filepath.Join(o.Out, render.ReportFile))
	require.NoError(t, err)
	assert.Contains(t, string(report), "```\n"+text+"```\n")
	require.NoError(t, os.Remove(filepath.Join(o.Out, render.ReportFile)))
	code, _, errs := invoke(t, "compare", "-render", o.Out)
	require.Equal(t, 0, code, errs)
	again, err := os.ReadFile(filepath.Join(o.Out, render.ReportFile))
	require.NoError(t, err)
	assert.Equal(t, string(report), string(again))

	o.Base, o.BaseArgs, o.States, o.Workloads, o.ProfileDir, o.Out = bin, nil, []string{plan.FloorCompacted}, []string{"get"}, "", ""
	o.CPUCounts = []int{1} // the first CPU of the servers' set
	o.Rate = 1000          // and at one load: an open loop
	out.Reset()
	_, err = compare.Floor(context.Background(), o, &out, io.Discard)
	require.NoError(t, err)
	assert.Contains(t, out.String(), "4 conns at 1,000 req/s open loop")
	assert.Contains(t, out.String(), "kvserver/base CPU per request:")
	assert.Contains(t, out.String(), "of the 1,000 req/s sent")
	assert.NotContains(t, out.String(), "FAILED")
}
