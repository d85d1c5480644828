package pool

import "sync/atomic"

// Adaptive is Facebook's adaptive LIFO with controlled delay ("Fail at
// Scale", ACM Queue 2015), its overload detector after folly's
// (folly/executors/Codel.h): a FIFO while the queue absorbs bursts; while
// CoDel sees a standing queue (see codel) it serves the newest task first,
// whose client is still likely waiting, and sheds with ReasonExpired, unrun,
// every task that has waited longer than 2×CoDelTarget, whose client has
// likely given up. The queue is a mutex-guarded ring used as a deque; idle
// workers park on channels of their own (see idlers).
//
// At each pop, with age the wait of the oldest queued task:
//
//	normal:      serve the oldest (FIFO)
//	overloaded:  age > 2×target ? shed the oldest : serve the newest (LIFO)
//
// so a standing queue is first cut back to 2×target of waiting, then served
// newest first until CoDel sees it drain, when the order turns FIFO again.
type Adaptive struct{ queuePool }

type adaptiveQueue struct {
	lockedRing
	codel codel // guarded by mu
	// drained is set by a pop that found the queue empty without the lock
	// or the clock; the next locked pop hands CoDel the 0 sample it stands
	// for. Read first, written only when it changes: idle workers polling
	// an empty queue do not bounce its cache line.
	drained atomic.Bool
	cfg     *Config // for its clock
}

func newAdaptiveQueue(cfg Config) queue {
	return &adaptiveQueue{
		lockedRing: newLockedRing(cfg.Capacity),
		codel:      codel{target: int64(cfg.CoDelTarget), interval: int64(cfg.CoDelInterval)},
		cfg:        &cfg,
	}
}

func (q *adaptiveQueue) pop() popped {
	if q.size.Load() == 0 {
		if !q.drained.Load() {
			q.drained.Store(true)
		}
		return popped{}
	}
	return q.popAt(q.cfg.now())
}

// popAt is pop at time t (clock nanoseconds), apart so tests can drive the
// queue alone at times they choose.
func (q *adaptiveQueue) popAt(t int64) popped {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.drained.Load() {
		q.drained.Store(false)
		q.codel.observe(0, t)
	}
	if q.r.len() == 0 {
		q.codel.observe(0, t)
		return popped{}
	}
	age := t - q.r.front().enqueued
	switch {
	case !q.codel.observe(age, t):
		return popped{it: q.take(true), v: serve, at: t}
	case age > q.codel.shedAfter():
		return popped{it: q.take(true), v: shed, why: ReasonExpired, at: t}
	default:
		return popped{it: q.take(false), v: serve, at: t}
	}
}
