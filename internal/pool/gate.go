package pool

import (
	"runtime"
	"sync/atomic"
	"time"
)

// gate admits submitters until the pool closes and lets Close wait until no
// submitter is between "the pool is open" and "my task is queued". Without
// it a task enqueued concurrently with Close's drain could be stranded.
//
// What must hold: enter increments active before it loads closed, and close
// stores closed before it loads active. Go's atomics are sequentially
// consistent, so either the submitter sees closed (and rejects its task) or
// close sees the submitter active (and waits for it to finish enqueueing).
type gate struct {
	closed atomic.Bool
	active paddedInt64
	done   chan struct{} // closed by close; wakes submitters blocked for room
}

func newGate() gate { return gate{done: make(chan struct{})} }

// enter reports whether the pool is open; if so the caller must call leave
// once its task is queued, run or rejected.
func (g *gate) enter() bool {
	g.active.Add(1)
	if g.closed.Load() {
		g.active.Add(-1)
		return false
	}
	return true
}

func (g *gate) leave() { g.active.Add(-1) }

func (g *gate) isClosed() bool { return g.closed.Load() }

// close shuts the gate and waits until every admitted submitter has left.
// It reports false if the gate was already closed.
func (g *gate) close() bool {
	if !g.closed.CompareAndSwap(false, true) {
		return false
	}
	close(g.done)
	for spins := 0; g.active.Load() != 0; spins++ {
		if spins < 100 {
			runtime.Gosched()
		} else {
			time.Sleep(100 * time.Microsecond)
		}
	}
	return true
}
