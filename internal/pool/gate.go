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
//
// active comes first: it is written by every submitter, and its padding
// keeps closed, read by every submitter and worker, off its cache line.
type gate struct {
	active paddedInt64
	closed atomic.Bool
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

// admit is how a queueing variant's Submit starts: it counts t and enters
// g. If the pool is closed it rejects t and reports false; otherwise it
// returns t as an item, not yet stamped, and the caller must g.leave()
// once t is queued, run or rejected.
func (c *counters) admit(g *gate, t Task) (item, bool) {
	c.submitted.Add(1)
	if !g.enter() {
		c.reject(t, ReasonClosed)
		return item{}, false
	}
	return item{task: t}, true
}
