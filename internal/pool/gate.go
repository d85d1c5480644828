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
// It keeps two monotonic counters rather than one count of submitters
// inside: entered counts every Submit, so it doubles as Stats.Submitted and
// a submitter pays two shared atomic adds, not three.
//
// What must hold: enter increments entered before it loads closed, and
// close stores closed before it loads the counters. Go's atomics are
// sequentially consistent, so either the submitter sees closed (and
// rejects its task) or close counts it in entered and waits for its leave.
// close reads left before entered: every leave follows its enter, so if the
// two are equal then, every submitter that entered before that read of
// left had left by it, and none entered in between (a later one sees
// closed). Read the other way round, a late submitter's quick enter and
// leave could balance an early one still inside.
//
// entered and left are padded apart: every submitter writes both, and
// closed, read by every submitter and worker, stays off their lines.
type gate struct {
	entered paddedInt64 // every enter
	left    paddedInt64 // every leave, and every enter that found the gate closed
	closed  atomic.Bool
	done    chan struct{} // closed by close; wakes submitters blocked for room
}

func newGate() gate { return gate{done: make(chan struct{})} }

// enter counts a submission and reports whether the pool is open; if so
// the caller must call leave once its task is queued, run or rejected.
func (g *gate) enter() bool {
	g.entered.Add(1)
	if g.closed.Load() {
		g.left.Add(1)
		return false
	}
	return true
}

func (g *gate) leave() { g.left.Add(1) }

func (g *gate) isClosed() bool { return g.closed.Load() }

// inside reports whether an admitted submitter has not left yet (see gate
// for why left is read first).
func (g *gate) inside() bool {
	left := g.left.Load()
	return g.entered.Load() != left
}

// submitted is the number of enters so far.
func (g *gate) submitted() uint64 { return uint64(g.entered.Load()) }

// close shuts the gate and waits until every admitted submitter has left.
// It reports false if the gate was already closed.
func (g *gate) close() bool {
	if !g.shut() {
		return false
	}
	g.wait()
	return true
}

// shut closes the gate to later submitters and wakes those blocked for
// room. It reports false if the gate was already shut.
func (g *gate) shut() bool {
	if !g.closed.CompareAndSwap(false, true) {
		return false
	}
	close(g.done)
	return true
}

// wait returns once every admitted submitter has left. Under ExecHandler a
// submitter stays inside until its task has run or been rejected, so the
// caller must first reject what is queued (see slotPool.Close).
func (g *gate) wait() {
	for spins := 0; g.inside(); spins++ {
		if spins < 100 {
			runtime.Gosched()
		} else {
			time.Sleep(100 * time.Microsecond)
		}
	}
}

// admit is how a queueing variant's Submit starts: it enters the gate,
// which counts t. If the pool is closed it rejects t and reports false;
// otherwise it returns t as an item, not yet stamped, and the caller must
// c.gate.leave() once t is queued, run or rejected.
func (c *counters) admit(t Task) (item, bool) {
	if !c.gate.enter() {
		c.reject(t, ReasonClosed)
		return item{}, false
	}
	return item{task: t}, true
}
