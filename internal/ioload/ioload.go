// Package ioload decides how fast writes may enter an LSM store so that
// its flushes and compactions keep up: from the store's own state,
// sampled a few times a second, to a byte rate, or no limit at all while
// the store is healthy. It is the rule of the default admission's write
// pacing (pool's write class), after CockroachDB's IO load listener,
// which does the same on Pebble: writes are held to what flushes move out
// of the memtables and compactions move out of L0, so that neither queue
// reaches the point where the store holds every write back (a write
// stall), and reads, which need neither, are never behind them.
//
// CockroachDB adjusts every 15 s; here the controller is ticked every
// 100 ms or so, because a write flood can fill a memtable in under a
// second and bring L0 to its stall point in seconds: a controller that
// waited 15 s would act after the stall.
//
// The package knows nothing of Pebble's types, of pools or of HTTP: a
// Sample is numbers, a Decision is numbers, and time is what the caller
// says it is (tests tick a simulated clock).
package ioload

import (
	"math"
	"time"
)

// Sample is the store's state at one tick. Counters (the fields that say
// "so far") only grow; the rest are gauges.
type Sample struct {
	// MemTableBytes is what the memtables take now, the one being written
	// included; MemTableSize one memtable's size; MemTableStallBytes the
	// total at which the store holds writes back once the memtable being
	// written is full (Pebble: MemTableStopWritesThreshold ×
	// MemTableSize).
	MemTableBytes, MemTableSize, MemTableStallBytes uint64
	// L0Sublevels is L0's sublevels now; L0CompactSublevels where
	// compactions out of L0 begin, L0StallSublevels where the store holds
	// writes back (Pebble: L0CompactionThreshold, L0StopWritesThreshold).
	L0Sublevels, L0CompactSublevels, L0StallSublevels int
	// L0Bytes is L0's size now; L0AddedBytes the bytes flushed or
	// ingested into L0 so far. What left L0 between two samples is the
	// difference of the two sizes plus what was added.
	L0Bytes      int64
	L0AddedBytes uint64
	// FlushedBytes and FlushWork are the bytes flushes wrote so far and
	// how long they worked to write them (Pebble's
	// Flush.WriteThroughput): their ratio is how fast a flush drains a
	// memtable while it runs.
	FlushedBytes int64
	FlushWork    time.Duration
	// Stalls counts the store's write stalls so far.
	Stalls uint64
	// WrittenBytes counts the bytes written to the store so far (Pebble:
	// its WAL's logical bytes in); Flushes the flushes so far. While a
	// memtable waits, what was written since it began waiting went into
	// the memtable being written, and a flush counted meanwhile means a
	// new one began waiting. The fill is counted from the first sample
	// that shows the memtable waiting: a caller samples as a flush begins
	// (which is when its memtable begins waiting), or the writes between
	// the two moments go uncounted.
	WrittenBytes uint64
	Flushes      int64
}

// Cause says which of the store's queues limits the write rate.
type Cause uint8

const (
	// None: the store keeps up; writes are not paced.
	None Cause = iota
	// MemTables: a memtable waits for its flush, and the one being
	// written must not fill before that flush ends.
	MemTables
	// L0: L0 has more sublevels than compactions start at; writes are
	// held near what compactions move out of it.
	L0
)

func (c Cause) String() string {
	switch c {
	case MemTables:
		return "memtables"
	case L0:
		return "l0"
	}
	return "none"
}

// Decision is what a tick decides.
type Decision struct {
	// Rate is how many bytes a second writes may enter at until the next
	// tick; math.Inf(1) while they need no limit.
	Rate  float64
	Cause Cause
	// Overload is how close the store is to holding writes back: the
	// larger of the memtables' share of MemTableStallBytes and L0's
	// sublevels' share of L0StallSublevels. At 1 the store stalls.
	Overload float64
}

// Paced reports whether d limits writes.
func (d Decision) Paced() bool { return !math.IsInf(d.Rate, 1) }

// Tunables. Each is a rule of thumb whose reason is given; none depends
// on the machine, the store's size or the load.
const (
	// l0Window is how far back the rate at which bytes leave L0 is
	// averaged. A compaction out of L0 ends in one step, seconds after it
	// began: a shorter window swings between nothing and a burst.
	l0Window = 5 * time.Second
	// flushSmoothing is the weight of the newest flushes' throughput in
	// the flush rate (CockroachDB's alpha).
	flushSmoothing = 0.5
	// The flush fraction is the share of the flush rate writes get while
	// a memtable waits: the next memtable then fills no faster than the
	// waiting one drains. A flush competes for CPU with compactions and
	// requests, so it may run slower than the flushes measured: it starts
	// at startFraction, each stall takes stallStep off it (down to
	// minFraction), and each second paced without one gives riseStep back
	// (up to maxFraction, 1: more would fill the memtable before the flush
	// ends).
	startFraction = 0.6
	minFraction   = 0.4
	maxFraction   = 1.0
	stallStep     = 0.1
	riseStep      = 0.025
	// minRate is the least a limit grants, so that a store that measured
	// nothing yet still lets a trickle of writes through (64 KiB/s).
	minRate = 64 << 10
	// The memtables written while another waits for its flush may take
	// at most fillable memtables less 1/fillMargin of one before that
	// flush ends: writes already let through but not yet written (queued
	// for a slot, the pacer's burst) take the margin. A flush's own speed
	// swings threefold from one to the next (it shares the CPU with
	// compactions and requests), so the flush rate alone fills the
	// memtable before a slow flush ends; the fill bounds it whatever the
	// flush does.
	fillMargin = 8
	// fillHorizon is the least time the room left in those memtables is
	// spread over: the next decision may come this late (the caller ticks
	// every 100 ms or so, and at each flush's start and end).
	fillHorizon = 200 * time.Millisecond
)

// Controller turns samples into decisions. Not safe for concurrent use:
// one goroutine ticks it.
type Controller struct {
	started bool
	last    Sample
	lastAt  int64 // ns, the caller's clock

	flushRate float64 // bytes per second of flush work; 0: none measured
	fullFlush bool    // flushRate is of full-sized flushes (see measure)
	fraction  float64 // of flushRate, while a memtable waits

	// out holds what left L0 in each tick of the last l0Window in which
	// compactions out of it were due (see measure).
	out      []l0Out
	quietFor time.Duration // paced by memtables without a stall, since the last rise

	// While a memtable waits: since when (ns), and WrittenBytes then.
	waitingSince int64
	filledFrom   uint64
}

type l0Out struct {
	end   int64 // ns, when the span ended
	span  time.Duration
	bytes int64
}

// New returns a controller that has seen nothing yet: its first tick
// decides no limit.
func New() *Controller { return &Controller{fraction: startFraction} }

// Tick folds s, sampled at (ns on any monotonic scale), into the
// controller and decides the write rate until the next tick.
func (c *Controller) Tick(at int64, s Sample) Decision {
	d := Decision{Rate: math.Inf(1), Overload: overload(s)}
	if !c.started || at <= c.lastAt {
		c.started, c.last, c.lastAt = true, s, at
		return d
	}
	// Until the decision is made, c.last is the sample before s.
	span := time.Duration(at - c.lastAt)
	c.measure(at, span, s)
	stalls := s.Stalls - c.last.Stalls

	if stalls > 0 {
		// The limit was too loose: this tick's is tighter already.
		c.fraction = max(c.fraction-stallStep*float64(min(stalls, 3)), minFraction)
		c.quietFor = 0
	}
	if rate, ok := c.memTableRate(at, s); ok {
		d.Rate, d.Cause = rate, MemTables
	}
	if rate, ok := c.l0Rate(s); ok && rate < d.Rate {
		d.Rate, d.Cause = rate, L0
	}
	if stalls == 0 && d.Cause == MemTables {
		c.rise(span)
	}
	if d.Paced() {
		d.Rate = max(d.Rate, minRate)
	}
	c.last, c.lastAt = s, at
	return d
}

// measure updates the flush rate and the window of bytes out of L0 with
// what happened since the last sample.
func (c *Controller) measure(at int64, span time.Duration, s Sample) {
	if work := s.FlushWork - c.last.FlushWork; work > 0 {
		bytes := s.FlushedBytes - c.last.FlushedBytes
		rate := float64(bytes) / work.Seconds()
		// A store that has just opened writes small memtables first
		// (Pebble doubles them from 256 KiB up to MemTableSize), and a
		// small flush runs faster per byte than a full one, which must
		// share the CPU with compactions for longer. Once a full-sized
		// flush (three quarters of a memtable or more: the table a flush
		// writes is smaller than the memtable it drains) has been
		// measured only those count.
		full := s.MemTableSize > 0 && uint64(bytes) >= s.MemTableSize*3/4
		switch {
		case full && !c.fullFlush:
			c.flushRate, c.fullFlush = rate, true
		case c.flushRate == 0:
			c.flushRate = rate
		case full || !c.fullFlush:
			c.flushRate = flushSmoothing*rate + (1-flushSmoothing)*c.flushRate
		}
	}
	// Bytes that left L0: it was last.L0Bytes, gained what was added, and
	// is s.L0Bytes now. A flush and a compaction ending between the two
	// samples can make it a little off; it is never below 0.
	added := int64(s.L0AddedBytes - c.last.L0AddedBytes)
	left := max(c.last.L0Bytes+added-s.L0Bytes, 0)
	// Only spans in which compactions out of L0 were due (L0 at or past
	// the compaction point when the span began) count: below that point
	// little leaves L0, by design and not for want of capacity, and a
	// window of such spans would make what compactions can move look like
	// a trickle when a flood brings L0 to the compaction point after a
	// quiet spell. A compaction that ends drops L0's sublevels only then,
	// so the span it ends in began with them at or past the point.
	if due := s.L0CompactSublevels > 0 && c.last.L0Sublevels >= s.L0CompactSublevels; due {
		c.out = append(c.out, l0Out{end: at, span: span, bytes: left})
	}
	drop := 0
	for drop < len(c.out) && at-c.out[drop].end >= int64(l0Window) {
		drop++
	}
	c.out = append(c.out[:0], c.out[drop:]...)
}

// memTableRate is the limit a waiting memtable sets at s (c.last the
// sample before it): once the memtable being written fills, the store stalls
// unless the flushes ahead of it are done, so writes may enter no faster
// than flushes drain, times the fraction, and never faster than the room
// left in the memtable being written fills in the flush's expected
// remaining time (see fillMargin and Sample.WrittenBytes). No limit while
// the memtable being written is the only one.
func (c *Controller) memTableRate(at int64, s Sample) (float64, bool) {
	waiting := s.MemTableSize > 0 && s.MemTableBytes > s.MemTableSize
	if !waiting {
		c.waitingSince = 0
		return 0, false
	}
	if c.waitingSince == 0 || s.Flushes != c.last.Flushes {
		c.waitingSince, c.filledFrom = at, s.WrittenBytes // see Sample.WrittenBytes
	}
	fill := c.fillRate(at, s)
	if c.flushRate == 0 {
		return fill, true
	}
	rate := c.fraction * c.flushRate
	if !c.fullFlush {
		// Measured on small flushes only, which run faster per byte than
		// a full one (here about twice): the memtable being written may
		// be a full one already.
		rate /= 2
	}
	return min(rate, fill), true
}

// fillable is how many memtables' worth writes may fill while a flush
// runs: where the store lets more than two memtables wait
// (MemTableStallBytes), all but one of those beyond the flushing one,
// the last kept as a cushion; at two, the memtable being written alone.
//
// The cushion is what makes counting the fill from the flush's start
// safe: a memtable that filled while the flush before ran waits its own
// flush next, with the one being written already part full, and the
// count, begun anew as that flush starts, misses that part (less than a
// memtable). Asked only while a memtable waits (s.MemTableSize > 0).
func fillable(s Sample) uint64 {
	return max(s.MemTableStallBytes/s.MemTableSize, 3) - 2
}

// fillRate is the rate at which the room left (fillable memtables, less
// fillMargin and what was written since the flush began) fills over the
// waiting flush's expected remaining time (at least fillHorizon; the
// time a full memtable takes at the flush rate, less the time it has
// waited).
func (c *Controller) fillRate(at int64, s Sample) float64 {
	room := float64(fillable(s)*s.MemTableSize - s.MemTableSize/fillMargin)
	room -= float64(s.WrittenBytes - min(c.filledFrom, s.WrittenBytes))
	if room <= 0 {
		return 0
	}
	remaining := fillHorizon
	if c.flushRate > 0 {
		flush := time.Duration(float64(s.MemTableSize) / c.flushRate * float64(time.Second))
		remaining = max(flush-time.Duration(at-c.waitingSince), fillHorizon)
	}
	return room / remaining.Seconds()
}

// l0Rate is the limit L0 sets once it has as many sublevels as
// compactions start at: near the rate bytes left L0 over the last
// l0Window of time in which compactions out of it were due, twice it at
// the compaction point, once it halfway to the stall point, half of it
// two below the stall point, a quarter of it one below (CockroachDB's
// shape, on Pebble's own thresholds): the further L0 is from healthy, the
// faster compactions must outrun the writes. Halfway and not lower: a
// compaction out of a deeper L0 moves more per byte of CPU, so holding L0
// near the compaction point costs the writes goodput without sparing
// them a stall. Until something has left L0 in that window, half the
// flush rate stands in for what compactions move (a compaction rewrites
// what a flush wrote, and is no faster).
func (c *Controller) l0Rate(s Sample) (float64, bool) {
	lo, hi := s.L0CompactSublevels, s.L0StallSublevels
	if hi <= 0 || lo <= 0 || s.L0Sublevels < lo {
		return 0, false
	}
	base := c.l0OutRate()
	if base == 0 {
		base = c.flushRate / 2
	}
	if base == 0 {
		return 0, false
	}
	return base * l0Share(s.L0Sublevels, lo, hi), true
}

// l0Share is the share of the L0 out rate writes get at sublevels n,
// compactions starting at lo and writes stalling at hi: piecewise linear
// through (lo, 2), ((lo+hi)/2, 1), (hi-2, 0.5), (hi-1, 0.25), and 0.25
// above.
func l0Share(n, lo, hi int) float64 {
	mid := float64(lo+hi) / 2
	points := [...][2]float64{{float64(lo), 2}, {mid, 1}, {float64(hi - 2), 0.5}, {float64(hi - 1), 0.25}}
	x := float64(n)
	if x <= points[0][0] {
		return points[0][1]
	}
	for i := 1; i < len(points); i++ {
		a, b := points[i-1], points[i]
		if x <= b[0] && b[0] > a[0] {
			return a[1] + (b[1]-a[1])*(x-a[0])/(b[0]-a[0])
		}
	}
	return points[len(points)-1][1]
}

// l0OutRate is the bytes a second that left L0 over the window; 0 when
// none did.
func (c *Controller) l0OutRate() float64 {
	var span time.Duration
	var bytes int64
	for _, o := range c.out {
		span += o.span
		bytes += o.bytes
	}
	if span <= 0 || bytes == 0 {
		return 0
	}
	return float64(bytes) / span.Seconds()
}

// rise gives the flush fraction riseStep back for each whole second
// writes were paced by the memtables without a stall (a stall takes
// stallStep off at once: see Tick).
func (c *Controller) rise(span time.Duration) {
	c.quietFor += span
	for c.quietFor >= time.Second {
		c.quietFor -= time.Second
		c.fraction = min(c.fraction+riseStep, maxFraction)
	}
}

// overload is how close s is to a write stall (see Decision.Overload).
func overload(s Sample) float64 {
	var mem, l0 float64
	if s.MemTableStallBytes > 0 {
		mem = float64(s.MemTableBytes) / float64(s.MemTableStallBytes)
	}
	if s.L0StallSublevels > 0 {
		l0 = float64(s.L0Sublevels) / float64(s.L0StallSublevels)
	}
	return max(mem, l0)
}

// FlushRate is the flush throughput measured so far, bytes a second of
// flush work (0: none yet); Fraction the share of it writes get while a
// memtable waits. For metrics and logs.
func (c *Controller) FlushRate() float64 { return c.flushRate }

// Fraction: see FlushRate.
func (c *Controller) Fraction() float64 { return c.fraction }
