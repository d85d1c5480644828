package pool

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/kvpool/kvpool/internal/mono"
)

// Pacer is a Pool whose writes (see Writer) can be held to a byte rate:
// the auto variant's write class. Whoever watches the store (kvserver
// reads Pebble's state a few times a second: package ioload) sets the
// rate its flushes and compactions absorb; the pool then admits a write
// only once its bytes fit in that rate, waiting for them in order (in
// rounds: see paceRound), and refuses one that would wait longer than its
// bound (ReasonIO), so that a write flood meets a paced queue and
// refusals with a Retry-After from the store's own drain rate, not a
// stall of every write inside the store.
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
// The limit is a token bucket of bytes (golang.org/x/time/rate): each
// write reserves its bytes, in arrival order, and sleeps until they are
// due; one that would sleep past the bound gives its reservation back and
// is refused. While no rate is set the limiter is nil, and a write pays
// one atomic load.
type pacer struct {
	lim atomic.Pointer[rate.Limiter] // nil: not paced

	mu sync.Mutex // serializes SetWriteRate

	delayed, delayNanos atomic.Int64
}

// paceBurst is the bucket's depth in time at the rate (a write admitted
// at once may take this much of the rate ahead), and paceMinBurst its
// least in bytes: a write larger than the bucket is charged the bucket
// (rate.Limiter grants nothing larger), so the depth must hold a large
// PUT (kvserver's -max-body is 1 MiB by default).
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
// they do with rounds. A round is half the bucket's depth, so it lets in
// at once no more than the bucket already may, and a write waits at most
// that much longer; rounds as deep as the bucket kept the reads shorter
// still but cost the writes a few percent more of their goodput.
const paceRound = paceBurst / 2

// roundEnd is the end of the pacing round that ns falls in (ns itself if
// it ends one).
func roundEnd(ns int64) int64 {
	r := int64(paceRound)
	return (ns + r - 1) / r * r
}

// timeOf places a mono clock reading on rate.Limiter's time axis: only
// differences matter to it.
func timeOf(ns int64) time.Time { return time.Unix(0, ns) }

// set makes r the rate from at on (see Pacer.SetWriteRate).
func (pc *pacer) set(r float64, at int64) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if math.IsInf(r, 1) || !(r > 0) {
		pc.lim.Store(nil)
		return
	}
	burst := max(int(r*paceBurst.Seconds()), paceMinBurst)
	if lim := pc.lim.Load(); lim != nil {
		// The reservations made stay due when they were; what is owed is
		// paid back at the new rate.
		lim.SetLimitAt(timeOf(at), rate.Limit(r))
		lim.SetBurstAt(timeOf(at), burst)
		return
	}
	// A fresh bucket starts full: writes go on at once, at the rate.
	pc.lim.Store(rate.NewLimiter(rate.Limit(r), burst))
}

// rate is the limit now, +Inf when there is none.
func (pc *pacer) rate() float64 {
	if lim := pc.lim.Load(); lim != nil {
		return float64(lim.Limit())
	}
	return math.Inf(1)
}

// admit waits, for a paced write t, until the end of the round its bytes
// fall due in (see paceRound), and reports whether it slept for them, or
// whether t must be refused instead, and why: its wait would pass bound
// (ReasonIO; a retry past half of it, ReasonRetry as shedRetry decides),
// its deadline would pass first (ReasonDeadline), the pool closed while
// it waited (ReasonClosed), or it waited at least cfg.AbandonAfter and
// its client has gone (ReasonAbandoned). A read, or any task while no
// rate is set, passes at once.
func (pc *pacer) admit(t Task, cfg *Config, bound time.Duration, closed <-chan struct{}) (r Reason, refuse, slept bool) {
	lim := pc.lim.Load()
	if lim == nil {
		return 0, false, false
	}
	bytes, ok := isWrite(t)
	if !ok {
		return 0, false, false
	}
	at := cfg.now()
	now := timeOf(at)
	res := lim.ReserveN(now, min(max(bytes, 1), lim.Burst()))
	if !res.OK() { // its delay is InfDuration: no round ends after it
		return ReasonIO, true, false
	}
	delay := res.DelayFrom(now)
	if delay == 0 {
		return 0, false, false
	}
	delay = time.Duration(roundEnd(at+int64(delay)) - at)
	cancel := func(r Reason) (Reason, bool, bool) {
		res.CancelAt(now)
		return r, true, false
	}
	switch deadline := t.Deadline(); {
	case deadline != 0 && at+int64(delay) > deadline:
		return cancel(ReasonDeadline)
	case isRetry(t) && cfg.shedRetry(delay, bound):
		return cancel(ReasonRetry)
	case delay > bound:
		return cancel(ReasonIO)
	}
	clk := cfg.clock
	if clk == nil {
		clk = mono.System
	}
	due, stop := clk.Timer(delay)
	defer stop()
	select {
	case <-due:
	case <-closed:
		return cancel(ReasonClosed)
	}
	pc.delayed.Add(1)
	pc.delayNanos.Add(int64(delay))
	if cfg.AbandonAfter > 0 && delay >= cfg.AbandonAfter {
		if a, ok := t.(Abandonable); ok && a.Abandoned() {
			return ReasonAbandoned, true, true // its bytes are spent: the store may as well have them
		}
	}
	return 0, false, true
}

// backlog is how long the writes admitted so far keep the store busy
// beyond now at the rate: how long a write arriving now would wait for its
// bytes, 0 when none would (or no rate is set).
func (pc *pacer) backlog(at int64) time.Duration {
	lim := pc.lim.Load()
	if lim == nil {
		return 0
	}
	tokens := lim.TokensAt(timeOf(at))
	if tokens >= 0 {
		return 0
	}
	return time.Duration(-tokens / float64(lim.Limit()) * float64(time.Second))
}

func (pc *pacer) stats() PaceStats {
	return PaceStats{Rate: pc.rate(), Delayed: uint64(pc.delayed.Load()), DelayTotal: time.Duration(pc.delayNanos.Load())}
}
