package pool

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// verdict is what a worker is to do with an item: what a queue's pop
// decided, or that a submitter handed the item over directly.
type verdict uint8

const (
	none   verdict = iota // the queue is empty: no item
	serve                 // run the item (QueueTimeout and its deadline still apply)
	shed                  // reject the item, unrun, for popped.why
	handed                // run the item, handed to an idle worker: never queued
)

// popped is what a pop returns: the item, the verdict on it (and, to shed
// it, why), and the now() time the queue read to decide, if it read the
// clock (else 0), so the worker need not read it again to measure the wait.
type popped struct {
	it  item
	v   verdict
	why Reason // shed: ReasonExpired or ReasonDeadline
	at  int64
}

// queue is the container a queuePool's workers serve; every method is safe
// for concurrent use.
//
// What must hold, for parking (see idlers): once push returns, a
// sequentially consistent atomic says the item is there (msqueue: the link
// CAS; the ring queues: their size counter; multiqueue: the shard's head
// stamp, written when the shard became non-empty and standing until it is
// emptied), and a pop returns none only after reading such atomics and
// finding no item that was not already taken. Then of a pusher's "push;
// look for idle workers" and a worker's "announce; pop", one sees the
// other.
type queue interface {
	// push adds it, or reports false if the queue is at its capacity.
	push(it item) bool
	// pop removes the next item in the variant's order.
	pop() popped
	// evictOldest removes the oldest item, for OverflowDropOldest.
	evictOldest() (item, bool)
	// len is the number of items queued now, for Stats (msqueue and
	// multiqueue count pushes still in flight).
	len() int
	// empty reports whether no pushed item is there to pop, reading the
	// atomics the visibility rule names: pushes still in flight do not
	// count (their pushers look for a slot once they land, see slotPool).
	empty() bool
}

// checkQueued validates cfg for a queueing variant. -cap 0 (hand-off only,
// no queue: a task that finds no idle worker or free slot overflows) is
// fifo's alone, the SynchronousQueue case; the others are defined by the
// order of their queue. An unbounded queue never overflows, so a policy
// other than the default would be silently inert.
func checkQueued(name string, cfg Config) error {
	switch {
	case cfg.Capacity == 0 && name != "fifo":
		return fmt.Errorf("%s needs a queue: -cap 0 (hand-off only, no queue) is fifo's; use -cap > 0, -cap -1 for unbounded, or -pool fifo -cap 0", name)
	case cfg.Capacity == 0 && cfg.Overflow == OverflowDropOldest:
		return fmt.Errorf("fifo with -cap 0 holds nothing to drop; drop-oldest needs -cap > 0")
	case cfg.Overflow > OverflowBlock:
		return fmt.Errorf("%s: unknown overflow policy %v; want one of %v", name, cfg.Overflow, overflowNames)
	case cfg.Capacity == Unbounded && cfg.Overflow != OverflowReject:
		return fmt.Errorf("%s with -cap -1 never overflows, so -overflow %s would never apply; set a bound or leave -overflow at reject", name, cfg.Overflow)
	}
	return nil
}

// lockedRing is a ring under a mutex with an exact bound: the shared half of
// fifo, lifo and adaptive, which differ only in what pop takes.
//
// size mirrors r.len(), written under mu: pop can see "empty" without taking
// the lock (an idle worker's re-check then only reads a shared cache line),
// and Stats reads the length without it. Being a sequentially consistent
// atomic written before the push returns, it is what satisfies queue's
// visibility rule for parking.
type lockedRing struct {
	mu       sync.Mutex
	size     atomic.Int64
	r        ring // guarded by mu
	capacity int  // Unbounded: none
}

func newLockedRing(capacity int) lockedRing {
	size := capacity
	if capacity == Unbounded {
		size = 64
	}
	return lockedRing{r: newRing(size), capacity: capacity}
}

func (q *lockedRing) push(it item) bool {
	q.mu.Lock()
	ok := q.capacity == Unbounded || q.r.len() < q.capacity
	if ok {
		q.r.pushBack(it)
		q.size.Add(1)
	}
	q.mu.Unlock()
	return ok
}

// take removes the front (oldest) or the back (newest) item; mu is held
// and the ring is not empty.
func (q *lockedRing) take(front bool) item {
	q.size.Add(-1)
	if front {
		return q.r.popFront()
	}
	return q.r.popBack()
}

func (q *lockedRing) evictOldest() (item, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.r.len() == 0 {
		return item{}, false
	}
	return q.take(true), true
}

func (q *lockedRing) len() int { return int(q.size.Load()) }

func (q *lockedRing) empty() bool { return q.size.Load() == 0 }

// bound is an exact capacity kept in an atomic counter, for the queues that
// have no single lock to count under (msqueue, multiqueue). A slot is
// reserved before the item is linked and released after it is unlinked, so
// items linked <= n <= capacity at every instant: a compare-and-swap, not an
// add-then-check, so the bound never overshoots (a load-then-add counter
// would overshoot by up to the number of concurrent producers).
type bound struct {
	n        paddedInt64
	capacity int64 // Unbounded: count, never refuse
}

func (b *bound) reserve() bool {
	if b.capacity == Unbounded {
		b.n.Add(1)
		return true
	}
	for {
		n := b.n.Load()
		if n >= b.capacity {
			return false
		}
		if b.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (b *bound) release() { b.n.Add(-1) }

func (b *bound) len() int { return int(b.n.Load()) }
