package engine

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/record"
)

// placement is where a run's loader runs: how many loops, on which CPUs,
// and whether it is pinned to them.
type placement struct {
	loops    int
	loopsWhy string     // -loops, or what loopsFor chose
	cpus     cpuset.Set // Config.CPUs where it pinned itself to them, else its affinity
	pinned   bool
	unpinned string // why not pinned: "no -cpus", or what pinning said
	// lockLoops: each loop locks its goroutine to an OS thread (event
	// loops, when there are several or they are pinned).
	lockLoops bool
}

// The pinning calls; tests replace them to see a loader that cannot pin
// itself.
var (
	pinProcess = cpuset.PinProcess
	pinThread  = cpuset.PinThread
)

// The process-wide settings a run changes, and the runs under way that
// asked for them. Several runs may go on at once in one process (tests,
// a program running loaders side by side): GOMAXPROCS is the most any of
// them asked for, and restored when the last one ends; the process is
// pinned to one set at a time, and a run that asks for another set while
// it is pinned runs unpinned, saying so.
var loader struct {
	mu           sync.Mutex
	procs        []int // GOMAXPROCS each run under way asked for
	origProcs    int   // GOMAXPROCS before the first of them
	pinnedRuns   int
	pinnedTo     cpuset.Set
	origAffinity cpuset.Set
}

// place resolves cfg's loops and CPUs, pins the process where cfg asks
// and sizes GOMAXPROCS. The returned release undoes what it changed; call
// it once the run is over.
//
// GOMAXPROCS: an event loop holds its P through its short raw waits
// (see rawWaitMax), so L locked loops need a P more than L for the rest
// of the process (the collector, dialers, the progress line, the GC):
// it becomes at least L+1 then, and, pinned, the size of the set if
// that is more. One unpinned loop leaves it as it is (with GOMAXPROCS 1
// that loop yields its P every rawWaitMax instead).
func place(cfg *config.Config) (placement, func()) {
	loader.mu.Lock()
	defer loader.mu.Unlock()
	// Read under loader.mu: unless a run under way has pinned the process,
	// this is its own affinity, which pinLocked restores after the run.
	allowed, affErr := cpuset.Affinity() // the zero Set where it cannot be read
	p := placement{cpus: allowed, unpinned: "no -cpus"}
	avail := allowed.Len()
	if avail == 0 {
		avail = runtime.NumCPU()
	}
	if !cfg.CPUs.IsEmpty() {
		avail = cfg.CPUs.Len()
		if err := pinLocked(cfg.CPUs, allowed, affErr); err != nil {
			p.unpinned = err.Error()
		} else {
			p.pinned, p.unpinned, p.cpus = true, "", cfg.CPUs
		}
	}

	switch {
	case cfg.Engine == config.EngineVegeta:
		p.loops, p.loopsWhy = 1, "1 loop: vegeta's attacker is one"
	case cfg.Loops > 0:
		p.loops, p.loopsWhy = cfg.Loops, fmt.Sprintf("%s: -loops %d", loopsText(cfg.Loops), cfg.Loops)
	default:
		p.loops, p.loopsWhy = loopsFor(cfg.PeakRate(), cfg.Conns, avail, cfg.Search) // a spike's rate too
	}
	eventLoops := cfg.Engine == config.EngineFast && cfg.Rate > 0 && cfg.Transport == config.TransportRaw && !cfg.NoEventLoop && runtime.GOOS == "linux"
	p.lockLoops = eventLoops && (p.loops > 1 || p.pinned)

	want := 0
	if p.pinned {
		want = cfg.CPUs.Len()
	}
	if p.lockLoops {
		want = max(want, p.loops+1)
	}
	if want > 0 {
		if len(loader.procs) == 0 {
			loader.origProcs = runtime.GOMAXPROCS(0)
		}
		loader.procs = append(loader.procs, want)
		applyProcsLocked()
	}
	return p, func() {
		loader.mu.Lock()
		defer loader.mu.Unlock()
		if p.pinned {
			unpinLocked()
		}
		if want > 0 {
			loader.procs = slices.Delete(loader.procs, slices.Index(loader.procs, want), slices.Index(loader.procs, want)+1)
			applyProcsLocked()
		}
	}
}

// applyProcsLocked sets GOMAXPROCS to the most the runs under way asked
// for: while one is pinned, exactly that (the scheduler sized to its
// set), otherwise at least what the process had; and back to what it had
// once none is left. The caller holds loader.mu.
func applyProcsLocked() {
	switch {
	case len(loader.procs) == 0:
		runtime.GOMAXPROCS(loader.origProcs)
	case loader.pinnedRuns > 0:
		runtime.GOMAXPROCS(slices.Max(loader.procs))
	default:
		runtime.GOMAXPROCS(max(loader.origProcs, slices.Max(loader.procs)))
	}
}

// pinLocked pins the process to s, or finds it pinned to s by a run
// under way; orig is the process's affinity (affErr: why it could not be
// read), to restore once no run holds it pinned. The caller holds
// loader.mu.
func pinLocked(s, orig cpuset.Set, affErr error) error {
	if loader.pinnedRuns > 0 {
		if loader.pinnedTo != s {
			return fmt.Errorf("another run of this process holds it on CPUs %s", loader.pinnedTo)
		}
		loader.pinnedRuns++
		return nil
	}
	if affErr != nil {
		return affErr
	}
	if err := pinProcess(s); err != nil {
		_ = pinProcess(orig) // undo what it bound before it failed
		return err
	}
	loader.pinnedRuns, loader.pinnedTo, loader.origAffinity = 1, s, orig
	return nil
}

// unpinLocked ends a pinned run's hold, giving the process its affinity
// back after the last. The caller holds loader.mu.
func unpinLocked() {
	if loader.pinnedRuns--; loader.pinnedRuns == 0 {
		_ = pinProcess(loader.origAffinity)
		loader.pinnedTo = cpuset.Set{}
	}
}

// record writes the placement into res, and the loops' failures to pin
// their threads (pinErrs, nil entries for none).
func (p placement) record(res *record.Result, pinErrs []error) {
	res.Loops, res.LoopsWhy, res.LoaderCPUs, res.LoaderCPUSet = p.loops, p.loopsWhy, p.cpus.Len(), p.cpus
	res.Pinned, res.Unpinned = p.pinned, p.unpinned
	for _, err := range pinErrs {
		if err != nil {
			res.Pinned, res.Unpinned = false, "cannot pin the loops' threads: "+err.Error()
			break
		}
	}
}
