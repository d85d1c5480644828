package pool

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvpool/kvpool/internal/mono"
)

// Pacer is a Pool whose writes (see Writer) can be held to a byte rate:
// the auto variant's write class. Whoever watches the store (kvserver
// reads Pebble's state a few times a second: package ioload) sets the
// rate its flushes and compactions absorb; the pool then admits a write
// only once its bytes fit in that rate, waiting for them in line (in
// rounds: see paceRound; when the rate falls, what waits is slowed too),
// and refuses one that would wait longer than its bound (ReasonIO), so
// that a write flood meets a paced queue and refusals with a Retry-After
// from the store's own drain rate, not a stall of every write inside the
// store.
type Pacer interface {
	// SetWriteRate sets the bytes a second writes may enter at from now
	// on; math.Inf(1) (or any rate not above 0) lifts the limit.
	// Safe for concurrent use; meant to be called a few times a second.
	SetWriteRate(bytesPerSecond float64)
	// Pace is a snapshot of the pacing.
	Pace() PaceStats
}

// PaceStats is a snapshot of a pacer.
type PaceStats struct {
	// Rate is the byte rate writes are held to now; +Inf when they are not.
	Rate float64
	// Delayed counts the writes that waited for their bytes; DelayTotal
	// is how long they waited together. Writes refused for the rate are
	// in the pool's Rejected[ReasonIO].
	Delayed    uint64
	DelayTotal time.Duration
}

// Paced reports whether writes are held to a rate now.
func (s PaceStats) Paced() bool { return !math.IsInf(s.Rate, 1) }

// pacer holds the writes of one slotPool to a byte rate, ahead of its
// slots: a write waits for its bytes before it queues for a slot, so
// its wait never inflates the hold times the slots are measured by.
//
// The limit is a line of bytes: each write takes its place at the end
// of the line (the bytes before it and its own) and goes once the rate
// has let in that many bytes; one whose place the rate would reach past
// the bound is refused and takes none. A token bucket of due times
// (golang.org/x/time/rate's) keeps the time each write was given when
// the rate then falls; a place in line does not: what still waits is let
// in at the new rate. That is the point: the rate falls because a
// memtable fills faster than its flush drains (see package ioload), and
// a thousand 64 KiB writes timed at the rate of a moment before are a
// whole memtable, which then entered the store on time and stalled it.
type pacer struct {
	paced atomic.Bool // false: no limit, and a write pays this one load

	mu sync.Mutex
	// rate is the limit in bytes a second; burst how far the rate may let
	// in ahead of the line (what an idle pacer has in hand, so that a
	// write after a pause goes at once).
	rate, burst float64
	// let is how many bytes the rate has let in by at (a mono reading);
	// line how many bytes writes have taken places for. let is at most
	// line + burst. Both only grow while paced, and go on from where they
	// were when pacing starts again.
	let, line float64
	at        int64
	// wake is closed when the rate is lifted, or rises to riseToWake
	// times the slowest rate a waiting write may have been timed at
	// (timedAt) since it was last closed: the writes waiting then look
	// at their places again rather than sleep out a wait timed at the
	// slower rate.
	wake    chan struct{}
	timedAt float64

	delayed, delayNanos atomic.Int64
}

// lineWaits is how many bounds a write slowed in line may wait in all:
// each fall of the rate may push its place back, and what it was told on
// arrival (at most one bound) must still say about how long it waits.
const lineWaits = 2

// riseToWake: see pacer.wake. A write timed at a slower rate than the
// rate now merely goes late; waking every waiting write costs a wake-up
// each, so not for every small rise.
const riseToWake = 2

// paceBurst is how far, in time at the rate, the rate may let bytes in
// ahead of the line (a write admitted at once may take this much of the
// rate ahead), and paceMinBurst the least of it in bytes: a write larger
// than the burst is charged the burst (no wait could ever let it in
// otherwise), so it must hold a large PUT (kvserver's -max-body is 1 MiB
// by default).
const (
	paceBurst    = 50 * time.Millisecond
	paceMinBurst = 1 << 20
)

// paceRound is how paced writes are let go: in rounds. A write whose
// bytes fall due sleeps on to the end of the round they fall due in (the
// rounds are the clock's multiples of paceRound, the same for every
// write), so that the writes due in one round wake together and enter the
// store together, and the CPUs go back to the rest for the rest of the
// round. Let go one by one as their bytes fall due (every half
// millisecond at 2,000 writes a second), each write is a wake-up and a
// store commit of its own, all the time: with a thousand writers waiting
// for their bytes, reads waited for a CPU two to four times as long as
// they do with rounds. A round is half the burst, so it lets in at once
// no more than the burst already may, and a write waits at most that
// much longer; rounds as long as the burst kept the reads shorter still
// but cost the writes a few percent more of their goodput.
const paceRound = paceBurst / 2

// roundEnd is the end of the pacing round that ns falls in (ns itself if
// it ends one).
func roundEnd(ns int64) int64 {
	r := int64(paceRound)
	return (ns + r - 1) / r * r
}

// set makes r the rate from at on (see Pacer.SetWriteRate).
func (pc *pacer) set(r float64, at int64) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if math.IsInf(r, 1) || !(r > 0) {
		if pc.paced.Load() {
			pc.paced.Store(false)
			pc.wakeWaiting()
		}
		return
	}
	burst := max(r*paceBurst.Seconds(), paceMinBurst)
	if !pc.paced.Load() {
		// Starting afresh with the burst in hand: writes go on at once,
		// at the rate.
		pc.rate, pc.burst, pc.timedAt = r, burst, r
		pc.let, pc.at = pc.line+burst, at
		pc.paced.Store(true)
		return
	}
	pc.advance(at) // what was let in so far, at the old rate
	pc.rate, pc.burst = r, burst
	pc.let = min(pc.let, pc.line+burst)
	if r >= riseToWake*pc.timedAt {
		pc.wakeWaiting()
		pc.timedAt = r
	} else {
		pc.timedAt = min(pc.timedAt, r)
	}
}

// advance moves the line's clock to at, letting in what the rate has
// let in since; a reading older than the clock's changes nothing.
// Called with mu held.
func (pc *pacer) advance(at int64) {
	if at <= pc.at {
		return
	}
	pc.let = min(pc.let+pc.rate*float64(at-pc.at)/float64(time.Second), pc.line+pc.burst)
	pc.at = at
}

// reached reports whether the rate has let in place; a byte's slack
// absorbs the rounding of the float arithmetic. Called with mu held.
func (pc *pacer) reached(place float64) bool { return pc.let+1 >= place }

// waitAt is how long a write looking at time at waits for place, not yet
// reached: to the end of the round in which the rate reaches it (see
// paceRound). Called with mu held, the line's clock advanced to at.
func (pc *pacer) waitAt(place float64, at int64) time.Duration {
	due := pc.at + max(int64(math.Ceil((place-pc.let)/pc.rate*float64(time.Second))), 1)
	return time.Duration(roundEnd(due) - at)
}

// wakeWaiting wakes every write waiting for its place (see pacer.wake).
// Called with mu held.
func (pc *pacer) wakeWaiting() {
	if pc.wake != nil {
		close(pc.wake)
		pc.wake = nil
	}
}

// waitingWake is the channel that wakeWaiting will close next. Called
// with mu held.
func (pc *pacer) waitingWake() <-chan struct{} {
	if pc.wake == nil {
		pc.wake = make(chan struct{})
	}
	return pc.wake
}

// giveBack returns the bytes of a write that leaves the line before its
// place is reached: the writes behind it move up by as much.
func (pc *pacer) giveBack(bytes float64, at int64) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.paced.Load() {
		pc.advance(at)
		pc.let = min(pc.let+bytes, pc.line+pc.burst)
	}
}

// rateNow is the limit now, +Inf when there is none.
func (pc *pacer) rateNow() float64 {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if !pc.paced.Load() {
		return math.Inf(1)
	}
	return pc.rate
}

// admit waits, for a paced write t, until the end of the round in which
// the rate reaches its place in line (see paceRound), and reports whether
// it slept for it, or whether t must be refused instead, and why: its
// wait would pass bound (ReasonIO; a retry past half of it, ReasonRetry
// as shedRetry decides), its deadline would pass first (ReasonDeadline),
// the pool closed while it waited (ReasonClosed), or it waited at least
// cfg.AbandonAfter and its client has gone (ReasonAbandoned). A read, or
// any task while no rate is set, passes at once.
//
// A write whose round ends before the rate reaches its place (the rate
// fell meanwhile) waits on for the new rate, refused as on arrival if
// that wait would pass the bound or its deadline, or its whole wait
// lineWaits bounds; one woken because the rate rose or was lifted looks
// again at once.
func (pc *pacer) admit(t Task, cfg *Config, bound time.Duration, closed <-chan struct{}) (r Reason, refuse, slept bool) {
	if !pc.paced.Load() {
		return 0, false, false
	}
	bytes, ok := isWrite(t)
	if !ok {
		return 0, false, false
	}
	arrived := cfg.now()
	pc.mu.Lock()
	if !pc.paced.Load() {
		pc.mu.Unlock()
		return 0, false, false
	}
	pc.advance(arrived)
	cost := min(float64(max(bytes, 1)), pc.burst) // a write larger than the burst is charged the burst
	place := pc.line + cost
	if pc.reached(place) {
		pc.line = place
		pc.mu.Unlock()
		return 0, false, false
	}
	delay := pc.waitAt(place, arrived)
	var wake <-chan struct{}
	switch {
	case mono.Passed(t.Deadline(), arrived+int64(delay)):
		r, refuse = ReasonDeadline, true
	case isRetry(t) && cfg.shedRetry(delay, bound):
		r, refuse = ReasonRetry, true
	case delay > bound:
		r, refuse = ReasonIO, true
	default: // it takes its place
		pc.line = place
		wake = pc.waitingWake()
	}
	pc.mu.Unlock()
	if refuse {
		return r, true, false
	}

	clk := cfg.clock
	if clk == nil {
		clk = mono.System
	}
	for {
		due, stop := clk.Timer(delay)
		select {
		case <-due:
		case <-wake:
		case <-closed:
			stop()
			pc.giveBack(cost, cfg.now())
			return ReasonClosed, true, false
		}
		stop()
		at := cfg.now()
		pc.mu.Lock()
		if !pc.paced.Load() {
			pc.mu.Unlock()
			break
		}
		pc.advance(at)
		if pc.reached(place) {
			pc.mu.Unlock()
			break
		}
		delay = pc.waitAt(place, at)
		wake = pc.waitingWake()
		pc.mu.Unlock()
		switch {
		case mono.Passed(t.Deadline(), at+int64(delay)):
			r = ReasonDeadline
		case delay > bound || time.Duration(at-arrived)+delay > lineWaits*bound:
			r = ReasonIO
		case cfg.gone(t, time.Duration(at-arrived)):
			r = ReasonAbandoned
		default:
			continue
		}
		pc.giveBack(cost, at)
		return r, true, true
	}
	waited := time.Duration(cfg.now() - arrived)
	pc.delayed.Add(1)
	pc.delayNanos.Add(int64(waited))
	if cfg.gone(t, waited) {
		return ReasonAbandoned, true, true // its bytes are spent: the store may as well have them
	}
	return 0, false, true
}

// backlog is how long the writes in line keep the store busy beyond at
// at the rate: how long a write arriving then would wait for its bytes,
// 0 when none would (or no rate is set).
func (pc *pacer) backlog(at int64) time.Duration {
	if !pc.paced.Load() {
		return 0
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if !pc.paced.Load() {
		return 0
	}
	pc.advance(at)
	if pc.let >= pc.line {
		return 0
	}
	return time.Duration((pc.line - pc.let) / pc.rate * float64(time.Second))
}

func (pc *pacer) stats() PaceStats {
	return PaceStats{Rate: pc.rateNow(), Delayed: uint64(pc.delayed.Load()), DelayTotal: time.Duration(pc.delayNanos.Load())}
}
