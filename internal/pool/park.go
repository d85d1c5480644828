package pool

import (
	"sync"
	"sync/atomic"
)

// Two ways to sleep without spinning and without missing the moment, both
// built on the same handshake. A sleeper announces itself, re-checks, and
// only then blocks; whoever makes the condition true does so first and
// looks for announced sleepers after:
//
//	sleeper:  announce; if check() { withdraw; done }; block
//	waker:    make check() true; if any announced { wake one }
//
// Why no wake-up is lost. The condition is published and checked through
// sequentially consistent atomics (a queue's push and pop, see queue), and
// so is the announcement, so of "publish; look for sleepers" and
// "announce; check" one sees the other: either the sleeper's re-check finds
// the work, or the waker finds the sleeper announced.

// idlers is where a queuePool's idle workers sleep, each on a channel of
// its own, and how a submitter hands a task straight to one of them,
// skipping the queue.
//
// A worker going to sleep announces itself (n++), marks its sleeper idle,
// lists it on the stack, re-checks the queue and only then blocks on its
// channel. A submitter claims a sleeper by switching its state from idle to
// claimed with a compare-and-swap, and then owes it exactly one message: the
// task itself (handOff, before queueing) or the zero item, meaning "look at
// the queue" (wake, after a push). A worker whose re-check finds work
// withdraws by switching its own state from idle back to awake; if that
// fails it has been claimed, and it takes the message at once (it is on its
// way: the claimer sends right after its CAS, on a channel with room), so
// it goes back to work with at most two tasks in hand and never owes
// anything later.
//
// Why a channel per sleeper: with one shared channel a message may be
// received by another sleeper than the one claimed, and a task handed over
// could then wait in the channel, outside the queue and its bound, until
// the claimed worker next ran the queue dry. Here a message reaches the
// worker whose claim it pays, which is asleep or about to be.
//
// What must hold:
//   - n counts sleepers announced and not yet claimed or withdrawn; it is
//     incremented before the state turns idle and decremented only after a
//     successful CAS out of idle, so it never counts below the number of
//     idle sleepers, and a pusher that reads n == 0 after its push knows
//     every later sleeper announces after the push and re-checks.
//   - A sleeper is on the stack at most once (listed, under mu). The stack
//     may hold stale entries (sleepers that withdrew); a claimer skips them.
//   - An idle sleeper that blocks is on the stack: it lists itself after
//     turning idle, and a claimer unlisting it either claims it or saw it
//     not idle, before it turned idle and listed itself again.
//   - A sleeper's channel holds at most one message: it is claimed only
//     while idle, and it turns idle only after taking the last message.
//
// Cost. No timers and no polling: an idle pool is asleep in channel
// receives, and every wake-up is paid for by a push or a hand-off. A
// hand-off costs the submitter an uncontended lock, one CAS and one channel
// send, and skips the queue's push and pop and both clock reads.
type idlers struct {
	n     paddedInt64
	mu    sync.Mutex
	stack []*sleeper // guarded by mu; LIFO, so the most recently idle (warmest) worker runs next
}

// sleeper is one worker's place in idlers.
type sleeper struct {
	state  atomic.Int32 // awake, idle or claimed
	listed bool         // guarded by idlers.mu: on the stack
	ch     chan item    // one slot: the message a claimer owes
}

const (
	awake int32 = iota
	idle
	claimed
)

func newIdlers(workers int) idlers { return idlers{stack: make([]*sleeper, 0, workers)} }

func newSleeper() *sleeper { return &sleeper{ch: make(chan item, 1)} }

// announce makes s idle and findable; the caller re-checks the queue next.
func (l *idlers) announce(s *sleeper) {
	l.n.Add(1)
	s.state.Store(idle)
	l.mu.Lock()
	if !s.listed {
		s.listed = true
		l.stack = append(l.stack, s)
	}
	l.mu.Unlock()
}

// withdraw ends s's announcement, unless a submitter has claimed s: then it
// reports false, and the caller must take the message the claimer sends.
func (l *idlers) withdraw(s *sleeper) bool {
	if !s.state.CompareAndSwap(idle, awake) {
		return false
	}
	l.n.Add(-1)
	return true
}

// claim takes an idle sleeper off the stack, or returns nil if none is.
func (l *idlers) claim() *sleeper {
	if l.n.Load() <= 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.stack) > 0 {
		s := l.stack[len(l.stack)-1]
		l.stack[len(l.stack)-1] = nil
		l.stack = l.stack[:len(l.stack)-1]
		s.listed = false
		if s.state.CompareAndSwap(idle, claimed) {
			l.n.Add(-1)
			return s
		}
	}
	return nil
}

// handOff gives it to an idle worker, if one is announced.
func (l *idlers) handOff(it item) bool {
	s := l.claim()
	if s == nil {
		return false
	}
	s.ch <- it
	return true
}

// wake sends "look at the queue" to an idle worker, if there is one; a
// pusher calls it after its push.
func (l *idlers) wake() {
	if s := l.claim(); s != nil {
		s.ch <- item{}
	}
}

// signal is where submitters under OverflowBlock, whose number has no bound,
// wait for room. Workers poke it after every pop. Unlike idlers it cannot
// count claims against a slot per sleeper, so it is the plain handshake:
// waiters counts the announced, poke leaves a token in a channel of one
// slot unless one is pending already (a goroutine cannot be blocked
// receiving from a channel that holds a token, so a pending token wakes
// the next sleeper), and wake-ups chain: a submitter that gets room pokes
// again on its way out (see queuePool.block). A token can outlive the sleep
// it was meant to end; it ends one later sleep early, for nothing.
type signal struct {
	waiters paddedInt64
	ch      chan struct{}
}

func newSignal() signal { return signal{ch: make(chan struct{}, 1)} }

// poke wakes one sleeper, if there is any.
func (s *signal) poke() {
	if s.waiters.Load() > 0 {
		select {
		case s.ch <- struct{}{}:
		default: // a token is pending already
		}
	}
}
