package pool

import "sync/atomic"

// MSQueue serves tasks oldest first from a lock-free Michael–Scott queue
// (Michael & Scott, PODC 1996) on atomic.Pointer, the seeds'
// ConcurrentLinkedQueue. Its length is bounded by an atomic counter (see
// bound: exact, it never overshoots); Capacity Unbounded lifts the bound.
// Every queued Submit allocates one node. Idle workers park on channels of
// their own (see idlers); drop-oldest dequeues the head and rejects it
// Dropped.
type MSQueue struct{ queuePool }

// msNode is a link of the queue. it is written before the node is published
// by the compare-and-swap that links it, and only read afterwards.
type msNode struct {
	next atomic.Pointer[msNode]
	it   item
}

// msQueue is the queue proper. head points at a dummy node whose successor
// holds the oldest item; tail points at the last node or, transiently, its
// predecessor (any goroutine that sees tail lagging swings it forward).
//
// Nodes are never recycled, and that is what makes the compare-and-swaps
// ABA-safe: a node's address cannot be reused while any goroutine still
// holds a pointer to it, because the GC will not free it, so a CAS that
// expects a node can only succeed on that very node. A sync.Pool of nodes
// would bring ABA back (a node freed, reused and relinked while a slow
// dequeuer still holds it).
//
// The dummy keeps its item (the last one dequeued) reachable until the next
// dequeue replaces it: clearing it would race with dequeuers that read it
// before losing their CAS. One task kept alive a little longer is harmless.
type msQueue struct {
	head  atomic.Pointer[msNode]
	_     [56]byte
	tail  atomic.Pointer[msNode]
	_     [56]byte
	bound bound
}

func newMSQueue(cfg Config) queue {
	q := &msQueue{bound: bound{capacity: int64(cfg.Capacity)}}
	dummy := &msNode{}
	q.head.Store(dummy)
	q.tail.Store(dummy)
	return q
}

func (q *msQueue) push(it item) bool {
	if !q.bound.reserve() {
		return false
	}
	n := &msNode{it: it}
	for {
		tail := q.tail.Load()
		next := tail.next.Load()
		if tail != q.tail.Load() {
			continue
		}
		if next != nil { // tail lags: help it along
			q.tail.CompareAndSwap(tail, next)
			continue
		}
		if tail.next.CompareAndSwap(nil, n) { // the linearization point
			q.tail.CompareAndSwap(tail, n)
			return true
		}
	}
}

func (q *msQueue) pop() popped {
	for {
		head := q.head.Load()
		tail := q.tail.Load()
		next := head.next.Load()
		if head != q.head.Load() {
			continue
		}
		if next == nil {
			return popped{}
		}
		if head == tail { // tail lags behind a linked node: help it along
			q.tail.CompareAndSwap(tail, next)
			continue
		}
		it := next.it
		if q.head.CompareAndSwap(head, next) { // next becomes the dummy
			q.bound.release()
			return popped{it: it, v: serve}
		}
	}
}

// evictOldest dequeues the head: in a FIFO the next to serve is the oldest.
func (q *msQueue) evictOldest() (item, bool) {
	p := q.pop()
	return p.it, p.v != none
}

// len counts reserved slots: items linked plus pushes in flight.
func (q *msQueue) len() int { return q.bound.len() }

// empty reports whether no node is linked after the dummy.
func (q *msQueue) empty() bool { return q.head.Load().next.Load() == nil }
