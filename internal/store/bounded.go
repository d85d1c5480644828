package store

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvpool/kvpool/internal/mono"
)

// Bounded gives the store it wraps a finite capacity: at most n of its
// operations are in progress at once, and the rest wait their turn in a
// FIFO, as requests wait for a connection from a database client's pool
// of n. Behind WithDelay it is a backend of finite throughput: -io-delay
// 1ms with -io-concurrency 16 serves at most 16,000 operations a second,
// however many requests the server lets through to it.
//
// A waiter whose deadline passes gives up at once with ErrDeadline,
// without touching the store, as a pool honours a context's deadline; one
// whose deadline has already passed when it would have to wait gives up
// without queueing. A caller with no deadline waits until its turn.
//
// What must hold: inUse counts the slots held, at most n; a slot freed
// while someone waits goes to the oldest waiter directly (inUse does not
// change), so a newcomer never overtakes the queue; every waiter leaves
// the queue exactly once, granted by a release or by its own give-up,
// both under mu, and a waiter granted while giving up takes the slot and
// passes it on.
type Bounded struct {
	inner  Store
	n      int
	clock  mono.Clock
	onWait func(time.Duration)

	mu         sync.Mutex
	inUse      int     // guarded by mu
	waiting    int     // guarded by mu
	head, tail *waiter // the FIFO, oldest first; guarded by mu

	gaveUp  atomic.Uint64
	waiters sync.Pool
}

// BoundedOptions are what Bounded may be given besides its store and n.
type BoundedOptions struct {
	// OnWait, if set, is called with each operation's wait for a slot (0
	// for one that found a slot free), also for one that gave up. It must
	// be cheap and safe for concurrent use (a Prometheus histogram's
	// Observe is).
	OnWait func(time.Duration)

	clock mono.Clock // tests only: replaces the mono clock and the runtime's timers
}

// WithConcurrency returns s with at most n operations in progress at once
// (see Bounded). n must be at least 1; Close is not bounded.
func WithConcurrency(s Store, n int, o BoundedOptions) *Bounded {
	b := &Bounded{inner: s, n: n, clock: o.clock, onWait: o.OnWait}
	if b.clock == nil {
		b.clock = mono.System
	}
	b.waiters.New = func() any { return &waiter{ready: make(chan struct{}, 1)} }
	return b
}

// BoundedStats is a snapshot of a Bounded store's state.
type BoundedStats struct {
	InProgress int    // operations holding a slot now
	Waiting    int    // operations waiting for a slot now
	Capacity   int    // n
	GaveUp     uint64 // operations that gave up at their deadline, unrun
}

// Stats returns a snapshot; the metrics package reads it at scrape time.
func (b *Bounded) Stats() BoundedStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BoundedStats{InProgress: b.inUse, Waiting: b.waiting, Capacity: b.n, GaveUp: b.gaveUp.Load()}
}

// Get implements Store.
func (b *Bounded) Get(deadline int64, dst, key []byte) ([]byte, error) {
	if err := b.acquire(deadline); err != nil {
		return dst, err
	}
	defer b.release()
	return b.inner.Get(deadline, dst, key)
}

// Put implements Store.
func (b *Bounded) Put(deadline int64, key, value []byte) error {
	if err := b.acquire(deadline); err != nil {
		return err
	}
	defer b.release()
	return b.inner.Put(deadline, key, value)
}

// Delete implements Store.
func (b *Bounded) Delete(deadline int64, key []byte) error {
	if err := b.acquire(deadline); err != nil {
		return err
	}
	defer b.release()
	return b.inner.Delete(deadline, key)
}

// Close implements Store: it closes the store it wraps.
func (b *Bounded) Close() error { return b.inner.Close() }

// waiter is one operation waiting for a slot, linked into the FIFO.
type waiter struct {
	prev, next *waiter
	queued     bool          // in the FIFO; guarded by Bounded.mu
	ready      chan struct{} // one slot: the grant
}

// acquire takes a slot, waiting for one in turn, or gives up with
// ErrDeadline once deadline (mono; 0: none) passes.
func (b *Bounded) acquire(deadline int64) error {
	b.mu.Lock()
	if b.inUse < b.n && b.head == nil {
		b.inUse++
		b.mu.Unlock()
		b.observe(0)
		return nil
	}
	since := b.clock.Now() // the slow path: reading the clock under mu is fine
	if mono.Passed(deadline, since) {
		b.mu.Unlock()
		b.gaveUp.Add(1)
		b.observe(0)
		return ErrDeadline
	}
	w := b.waiters.Get().(*waiter)
	b.push(w)
	b.mu.Unlock()
	if deadline == 0 {
		<-w.ready
		b.granted(w, since)
		return nil
	}
	timeout, stop := b.clock.Timer(time.Duration(deadline - since))
	defer stop()
	select {
	case <-w.ready:
		if !mono.Passed(deadline, b.clock.Now()) {
			b.granted(w, since)
			return nil
		}
		b.release() // granted late: pass the slot on
	case <-timeout:
		b.mu.Lock()
		left := w.queued
		if left {
			b.remove(w)
		}
		b.mu.Unlock()
		if !left { // granted as the timer fired: the slot is ours to pass on
			<-w.ready
			b.release()
		}
	}
	b.observe(time.Duration(b.clock.Now() - since))
	b.waiters.Put(w)
	b.gaveUp.Add(1)
	return ErrDeadline
}

// granted records the wait of w, queued at time since, which holds a slot
// now.
func (b *Bounded) granted(w *waiter, since int64) {
	b.observe(time.Duration(b.clock.Now() - since))
	b.waiters.Put(w)
}

// release gives a slot back: to the oldest waiter, if there is one.
func (b *Bounded) release() {
	b.mu.Lock()
	w := b.head
	if w == nil {
		b.inUse--
		b.mu.Unlock()
		return
	}
	b.remove(w)
	b.mu.Unlock()
	w.ready <- struct{}{} // the slot passes to w: inUse stays
}

func (b *Bounded) observe(d time.Duration) {
	if b.onWait != nil {
		b.onWait(max(d, 0))
	}
}

// push appends w to the FIFO; mu is held.
func (b *Bounded) push(w *waiter) {
	w.prev, w.next, w.queued = b.tail, nil, true
	if b.tail == nil {
		b.head = w
	} else {
		b.tail.next = w
	}
	b.tail = w
	b.waiting++
}

// remove unlinks w from the FIFO; mu is held and w is queued.
func (b *Bounded) remove(w *waiter) {
	if w.prev == nil {
		b.head = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		b.tail = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
	b.waiting--
}
