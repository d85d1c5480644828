package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	out.Reset()
	require.NoError(t, floorBench(context.Background(), o, &out, io.Discard))
	assert.Contains(t, out.String(), "kvserver/base CPU per request:")
	assert.NotContains(t, out.String(), "FAILED")
}
