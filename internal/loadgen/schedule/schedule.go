// Package schedule is when a run's requests are due: the open model's
// timetable (Schedule, with a Spike, split into shares over loops and
// Shards), the pacer that wakes a sender for what fell due, its quantum,
// and the sleeper it waits with.
package schedule

import (
	"math"
	"time"
)

// Schedule is the open-model timetable of a run, or of one sender's
// share of it: the run's request seq (0-based, over the whole run) is due
// at a fixed time after the start, whatever happened to earlier requests,
// and a sender with share p sends the requests p.seq(0), p.seq(1), … of
// it. At, DueBy and Count speak of the share's own requests k = 0, 1, …;
// Seq maps one to the run's seq. Corrected latencies are measured from
// these times, so that every loop and every shard of one run keeps the
// run's absolute schedule.
//
// The timetable is piecewise constant: a constant-rate run is one
// segment (seq due at seq/rate), a run with a Spike three (before,
// during and after it). Each segment starts afresh at its start time:
// its first request is due exactly then and the others at its own rate
// after it, so segment i holds the requests due in [start_i,
// start_i+1), as many as a constant-rate run of that length at its rate.
type Schedule struct {
	segs []segment // by start; segs[0] starts at 0 with seq 0
	part Share
}

// segment is a stretch of a schedule at one rate: the run's requests
// first, first+1, … are due at start, start+intervalNs, … until the next
// segment's start.
type segment struct {
	start      int64  // ns since the run's start
	first      uint64 // the run's seq of the first request due at or after start
	rate       float64
	intervalNs float64 // 1e9 / rate
}

// New is the whole run's timetable at rate requests per second.
func New(rate float64) Schedule {
	return Schedule{segs: []segment{{rate: rate, intervalNs: 1e9 / rate}}, part: WholeRun}
}

// WithSpike is New(rate) with sp (the zero Spike: none) at its time.
func WithSpike(rate float64, sp Spike) Schedule {
	s := New(rate)
	if sp.IsZero() {
		return s
	}
	s.segs = append(s.segs[:1:1], // a slice of its own, not New's
		segment{start: int64(sp.At), rate: sp.RateOver(rate)},
		segment{start: int64(sp.At + sp.Length), rate: rate})
	for i := 1; i < len(s.segs); i++ {
		g, prev := &s.segs[i], s.segs[i-1]
		g.intervalNs = 1e9 / g.rate
		// The first of g is the first request that prev would have due at
		// or after g's start: prev's last is due before it.
		g.first = prev.first + prev.dueBy(g.start-1-prev.start)
	}
	return s
}

// Peak is the highest rate of the whole run's timetable, req/s.
func (s Schedule) Peak() float64 {
	var r float64
	for _, g := range s.segs {
		r = max(r, g.rate)
	}
	return r
}

// Of is s restricted to the requests of share p (of the whole run).
func (s Schedule) Of(p Share) Schedule {
	s.part = p
	return s
}

// Seq is the run's seq of the share's request k.
func (s Schedule) Seq(k uint64) uint64 { return s.part.Seq(k) }

// At is when the share's request k is due, ns since the start.
func (s Schedule) At(k uint64) int64 { return s.at(s.part.Seq(k)) }

// at is when the run's request seq is due.
func (s Schedule) at(seq uint64) int64 {
	i := len(s.segs) - 1
	for i > 0 && s.segs[i].first > seq {
		i--
	}
	g := &s.segs[i]
	return g.start + g.at(seq-g.first)
}

// DueBy is how many of the share's requests are due at or before t (ns
// since start): the smallest k with At(k) > t.
func (s Schedule) DueBy(t int64) uint64 { return s.part.Count(s.dueBy(t)) }

// dueBy is DueBy over the whole run.
func (s Schedule) dueBy(t int64) uint64 {
	if t < 0 {
		return 0
	}
	i := len(s.segs) - 1
	for i > 0 && s.segs[i].start > t {
		i--
	}
	// Segment i's own count is exact: its next segment's first request
	// is the first it would have due at or after that one's start, so
	// the smallest n with at(n) > t never lies past it.
	g := &s.segs[i]
	return g.first + g.dueBy(t-g.start)
}

// at is when the segment's own request n is due, ns after its start.
func (g *segment) at(n uint64) int64 { return int64(float64(n) * g.intervalNs) }

// dueBy is how many of the segment's own requests are due at or before
// t ns after its start: the smallest n with g.at(n) > t.
func (g *segment) dueBy(t int64) uint64 {
	if t < 0 {
		return 0
	}
	n := uint64(math.Floor(float64(t)*g.rate/1e9)) + 1
	// Float rounding can put the estimate one off either way; settle it
	// against at so that DueBy and At never disagree.
	for n > 0 && g.at(n-1) > t {
		n--
	}
	for g.at(n) <= t {
		n++
	}
	return n
}

// Count is the number of the share's requests due strictly before d: a
// run of length d sends exactly this many.
func (s Schedule) Count(d time.Duration) uint64 { return s.DueBy(int64(d) - 1) }

// Share is a sender's part of a run's requests: the run's seq first,
// first+stride, first+2·stride, … (its own requests k = 0, 1, 2, …). A
// run split over N shards (loader hosts) and each shard over L loops
// gives shard K's loop l the share {K-1 + l·N, N·L}: every request goes
// to exactly one loop of one shard, and each gets an equal share of
// every stretch of the schedule.
type Share struct {
	First, Stride uint64
}

// WholeRun is the share of a sender that sends every request.
var WholeRun = Share{0, 1}

// Seq is the run's seq of the share's request k.
func (p Share) Seq(k uint64) uint64 { return p.First + k*p.Stride }

// Count is how many of the run's requests 0..n-1 are the share's.
func (p Share) Count(n uint64) uint64 {
	if n <= p.First {
		return 0
	}
	return (n-1-p.First)/p.Stride + 1 // ⌈(n-first)/stride⌉, without overflow
}

// Split is the l-th of n shares that p splits into (0 ≤ l < n).
func (p Share) Split(l, n int) Share {
	return Share{First: p.First + uint64(l)*p.Stride, Stride: p.Stride * uint64(n)}
}
