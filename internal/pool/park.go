package pool

import "math/bits"

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
// Who is idle is a bitmap, one bit per worker in 64-bit words: the bit is
// the worker's whole state. A worker going to sleep announces itself by
// setting its bit, re-checks the queue and only then blocks on its channel.
// A submitter claims a sleeper by clearing a set bit (an atomic AND that
// returns the old word, so of two claimers one gets the bit), and then owes
// it exactly one message: the task itself (handOff, before queueing) or the
// zero item, meaning "look at the queue" (wake, after a push). A worker
// whose re-check finds work withdraws by clearing its own bit; if the bit
// was already clear it has been claimed, and it takes the message at once
// (it is on its way: the claimer sends right after its AND, on a channel
// with room), so it goes back to work with at most two tasks in hand and
// never owes anything later.
//
// Why a channel per sleeper: with one shared channel a message may be
// received by another sleeper than the one claimed, and a task handed over
// could then wait in the channel, outside the queue and its bound, until
// the claimed worker next ran the queue dry. Here a message reaches the
// worker whose claim it pays, which is asleep or about to be.
//
// What must hold:
//   - A worker's bit is set only by that worker (announce) and cleared by
//     exactly one AND that found it set: its claimer's or its own
//     (withdraw). So a set bit is an idle worker nobody owes a message
//     yet, and a pusher that finds every word zero after its push knows
//     every later sleeper announces after the push and re-checks.
//   - A sleeper's channel holds at most one message: it is claimed only
//     while its bit is set, and it sets its bit only after taking the last
//     message.
//
// Claimers take the lowest set bit, so under light load the same few
// workers (warm caches) do the work and the rest stay asleep.
//
// Cost. No timers and no polling: an idle pool is asleep in channel
// receives, and every wake-up is paid for by a push or a hand-off. A
// hand-off costs the submitter a load and an atomic AND on the bitmap's
// first word (a scan of ceil(workers/64) words when all are busy) and one
// channel send, and skips the queue's push and pop and both clock reads; a
// worker going to sleep pays one atomic OR. An earlier version kept a
// count, a per-sleeper state word and a mutex-guarded stack of sleepers:
// four shared atomics and a lock round trip more per task (docs/pools.md
// has the before and after).
type idlers struct {
	words []paddedInt64 // bit i%64 of words[i/64]: worker i is idle (signed, but only bits matter)
	all   []*sleeper    // by worker index
}

// sleeper is one worker's place in idlers.
type sleeper struct {
	word *paddedInt64 // the word holding my bit
	bit  int64
	ch   chan item // one slot: the message a claimer owes
}

// newIdlers makes room for workers sleepers; add each with add.
func newIdlers(workers int) idlers {
	return idlers{words: make([]paddedInt64, (workers+63)/64), all: make([]*sleeper, 0, workers)}
}

// add makes the next worker's sleeper. Call it workers times before any
// worker runs.
func (l *idlers) add() *sleeper {
	i := len(l.all)
	s := &sleeper{word: &l.words[i/64], bit: int64(1) << (i % 64), ch: make(chan item, 1)}
	l.all = append(l.all, s)
	return s
}

// announce makes s idle and findable; the caller re-checks the queue next.
func (l *idlers) announce(s *sleeper) { s.word.Or(s.bit) }

// withdraw ends s's announcement, unless a submitter has claimed s: then it
// reports false, and the caller must take the message the claimer sends.
func (l *idlers) withdraw(s *sleeper) bool { return s.word.And(^s.bit)&s.bit != 0 }

// claim clears the lowest idle worker's bit and returns its sleeper, or nil
// if no worker is idle.
func (l *idlers) claim() *sleeper {
	for i := range l.words {
		w := &l.words[i]
		for m := w.Load(); m != 0; m = w.Load() {
			b := m & -m
			if w.And(^b)&b != 0 {
				return l.all[i*64+bits.TrailingZeros64(uint64(b))]
			}
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
