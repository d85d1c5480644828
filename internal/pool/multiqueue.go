package pool

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// MultiQueue spreads tasks over ShardsPerWorker·Workers mutex-guarded ring
// FIFOs (a MultiQueue, after Rihani, Sanders and Dementiev, SPAA 2015): a
// push goes to a random shard, a pop takes the older head of two random
// shards. Contention is spread over many locks; the price is relaxed order:
// a task may be served a little before older ones (the expected rank error
// is O(shards)). The total is bounded exactly by an atomic counter (see
// bound). Idle workers park on channels of their own (see idlers) once a
// scan of every shard finds nothing.
//
// Lock ordering: a goroutine holds at most one shard lock at a time; pop
// compares heads through atomic stamps, without locks.
type MultiQueue struct{ queuePool }

// emptyStamp is the head stamp of an empty shard: later than any enqueue
// time, so an empty shard never looks older than a non-empty one.
const emptyStamp = math.MaxInt64

// shard is one FIFO of the multiqueue.
//
// What must hold: head == the enqueue time of r's front item, or emptyStamp
// when r is empty; it is written under mu, before mu is released, every
// time r's front changes, and read without mu. A worker about to park
// therefore sees every item pushed before its announcement (see idlers and
// multiQueue.pop).
type shard struct {
	mu   sync.Mutex
	head atomic.Int64
	r    ring // guarded by mu
	_    [72]byte
}

func (s *shard) popFront() (item, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r.len() == 0 {
		return item{}, false
	}
	it := s.r.popFront()
	if s.r.len() == 0 {
		s.head.Store(emptyStamp)
	} else {
		s.head.Store(s.r.front().enqueued)
	}
	return it, true
}

type multiQueue struct {
	shards []shard
	bound  bound
}

func newMultiQueue(cfg Config) queue {
	shards := cfg.ShardsPerWorker * cfg.Workers
	// Sized so that an even spread never grows a shard; growth (a rare
	// allocation) covers an uneven one, the bound caps the total.
	size := 64
	if cfg.Capacity != Unbounded {
		size = max(16, 2*cfg.Capacity/shards)
	}
	q := &multiQueue{shards: make([]shard, shards), bound: bound{capacity: int64(cfg.Capacity)}}
	for i := range q.shards {
		q.shards[i].r = newRing(size)
		q.shards[i].head.Store(emptyStamp)
	}
	return q
}

// pick maps 32 random bits to a shard (Lemire's multiply-shift: no division).
// The bits come from math/rand/v2's top-level functions, which read the
// runtime's per-thread generator: no lock and no shared cache line.
func (q *multiQueue) pick(r uint32) *shard {
	return &q.shards[uint64(r)*uint64(len(q.shards))>>32]
}

// push locks a random shard, trying another if the first is busy and
// waiting for the second only if that is busy too.
func (q *multiQueue) push(it item) bool {
	if !q.bound.reserve() {
		return false
	}
	r := rand.Uint64()
	s := q.pick(uint32(r))
	if !s.mu.TryLock() {
		s = q.pick(uint32(r >> 32))
		s.mu.Lock()
	}
	s.r.pushBack(it)
	if s.r.len() == 1 {
		s.head.Store(it.enqueued)
	}
	s.mu.Unlock()
	return true
}

// pop takes the older head of two random shards; when both are empty it
// scans every shard for the oldest head, and returns none only when that
// scan finds every shard empty. A shard that empties between the stamp read
// and the lock (another worker won it) means progress elsewhere: try again.
// Emptiness is read from the stamps, not from the bound's total: that
// counts pushes still in flight, and a worker waiting on it to drop to 0
// would spin until their items land.
func (q *multiQueue) pop() popped {
	for {
		r := rand.Uint64()
		a, b := q.pick(uint32(r)), q.pick(uint32(r>>32))
		ha, hb := a.head.Load(), b.head.Load()
		if hb < ha {
			a, ha = b, hb
		}
		if ha == emptyStamp {
			if a = q.oldest(); a == nil {
				return popped{}
			}
		}
		if it, ok := a.popFront(); ok {
			q.bound.release()
			return popped{it: it, v: serve}
		}
	}
}

// oldest returns the shard with the oldest head, or nil if all are empty.
func (q *multiQueue) oldest() *shard {
	var best *shard
	stamp := int64(emptyStamp)
	for i := range q.shards {
		if h := q.shards[i].head.Load(); h < stamp {
			best, stamp = &q.shards[i], h
		}
	}
	return best
}

// evictOldest takes the oldest head of all shards, which is the oldest task
// unless two producers raced into one shard out of stamp order.
func (q *multiQueue) evictOldest() (item, bool) {
	for {
		s := q.oldest()
		if s == nil {
			return item{}, false
		}
		if it, ok := s.popFront(); ok {
			q.bound.release()
			return it, true
		}
	}
}

// len counts reserved slots: items in shards plus pushes in flight.
func (q *multiQueue) len() int { return q.bound.len() }

// empty reports whether every shard's head stamp says empty. It stops at
// the first shard that is not; an idle queue's stamps are read-only, so
// the scan reads lines every core holds shared.
func (q *multiQueue) empty() bool {
	for i := range q.shards {
		if q.shards[i].head.Load() != emptyStamp {
			return false
		}
	}
	return true
}
