//go:build linux

package engine

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
)

// threadCPUs is the calling thread's affinity.
func threadCPUs(t *testing.T) cpuset.Set {
	t.Helper()
	var m unix.CPUSet
	assert.NoError(t, unix.SchedGetaffinity(0, &m)) // on a loop's goroutine: no FailNow
	var cpus []int
	for c := range cpuset.MaxCPU + 1 {
		if m.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpuset.Of(cpus...)
}

// loopView is what each loop saw from its own thread as it started.
type loopView struct {
	mu      sync.Mutex
	thread  map[int]cpuset.Set
	process map[int]cpuset.Set
	procs   map[int]int
}

func watchLoops(t *testing.T, cfg *config.Config) *loopView {
	v := &loopView{thread: map[int]cpuset.Set{}, process: map[int]cpuset.Set{}, procs: map[int]int{}}
	cfg.OnLoop = func(l int) {
		thread := threadCPUs(t)
		process, err := cpuset.Affinity()
		assert.NoError(t, err)
		v.mu.Lock()
		defer v.mu.Unlock()
		v.thread[l], v.process[l], v.procs[l] = thread, process, runtime.GOMAXPROCS(0)
	}
	return v
}

// -cpus with one CPU: the process runs on it for the run, and each loop's
// thread too (two loops wrap onto the one CPU); GOMAXPROCS leaves the
// loops' Ps a spare; afterwards the process has its CPUs and GOMAXPROCS
// back, and the Result says where it ran.
func TestPinnedLoopsRunOnTheirCPU(t *testing.T) {
	before, err := cpuset.Affinity()
	require.NoError(t, err)
	procs := runtime.GOMAXPROCS(0)
	cpus := before.CPUs()
	cpu := cpus[len(cpus)-1]

	cfg := testConfig(loadgentest.ServeHandler(t, bareserver.Handler), 1000, 100*time.Millisecond)
	cfg.CPUs, cfg.Loops = cpuset.Of(cpu), 2
	v := watchLoops(t, &cfg)
	res := run(t, cfg)

	assert.True(t, res.Pinned, res.Unpinned)
	assert.Empty(t, res.Unpinned)
	assert.Equal(t, 2, res.Loops)
	assert.Equal(t, 1, res.LoaderCPUs)
	assert.Equal(t, cpuset.Of(cpu), res.LoaderCPUSet)
	assert.Equal(t, int64(100), res.Sent)
	for l := range 2 {
		assert.Equal(t, cpuset.Of(cpu), v.thread[l], "loop %d's thread", l)
		assert.Equal(t, cpuset.Of(cpu), v.process[l], "the process, while loop %d ran", l)
		assert.Equal(t, 3, v.procs[l], "GOMAXPROCS: the set's one CPU, raised to the loops and one")
	}
	after, err := cpuset.Affinity()
	require.NoError(t, err)
	assert.Equal(t, before, after, "the process has its CPUs back")
	assert.Equal(t, procs, runtime.GOMAXPROCS(0), "and its GOMAXPROCS")
}

// A loader that cannot pin itself runs unpinned, on the CPUs it has, and
// says why.
func TestUnpinnableLoaderRunsUnpinnedAndSaysWhy(t *testing.T) {
	pin := pinProcess
	t.Cleanup(func() { pinProcess = pin })
	pinProcess = func(cpuset.Set) error { return errors.New("cannot bind thread 1 to CPUs 0: operation not permitted") }
	before, err := cpuset.Affinity()
	require.NoError(t, err)

	cfg := testConfig(loadgentest.ServeHandler(t, bareserver.Handler), 1000, 100*time.Millisecond)
	cfg.CPUs, cfg.Loops = cpuset.Of(before.CPUs()[0]), 1
	v := watchLoops(t, &cfg)
	res := run(t, cfg)
	assert.False(t, res.Pinned)
	assert.Contains(t, res.Unpinned, "operation not permitted")
	assert.Equal(t, before, res.LoaderCPUSet, "it ran on the CPUs it had")
	assert.Equal(t, before.Len(), res.LoaderCPUs)
	assert.Equal(t, before, v.thread[0], "nothing was bound")
	assert.Equal(t, int64(100), res.Sent)
}

// Without -cpus the loops run unpinned on what the process may use: by
// default as few as the rate needs (one here), and for a saturation
// search one per CPU of it (at most one per connection), with a P each
// and one to spare while they run.
func TestLoopsDefaultToWhatTheRateNeeds(t *testing.T) {
	allowed, err := cpuset.Affinity()
	require.NoError(t, err)
	procs := runtime.GOMAXPROCS(0)

	cfg := testConfig(loadgentest.ServeHandler(t, bareserver.Handler), 1000, 100*time.Millisecond)
	cfg.Conns, cfg.MaxConns = 64, 64
	res := run(t, cfg)
	assert.Equal(t, 1, res.Loops)
	assert.Contains(t, res.LoopsWhy, "1 loop: 1,000 req/s is within one loop's")

	cfg.Search = true
	v := watchLoops(t, &cfg)
	res = run(t, cfg)
	assert.Equal(t, min(allowed.Len(), 64), res.Loops)
	assert.Contains(t, res.LoopsWhy, "a saturation search")
	assert.False(t, res.Pinned)
	assert.Equal(t, "no -cpus", res.Unpinned)
	assert.Equal(t, allowed, res.LoaderCPUSet)
	if res.Loops > 1 {
		assert.GreaterOrEqual(t, v.procs[0], res.Loops+1)
	}
	assert.Equal(t, procs, runtime.GOMAXPROCS(0), "GOMAXPROCS is back")

	cfg.Conns, cfg.MaxConns = 1, 1
	res = run(t, cfg)
	assert.Equal(t, 1, res.Loops, "at most one loop per connection")
}
