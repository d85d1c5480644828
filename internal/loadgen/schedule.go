package loadgen

import (
	"math"
	"time"
)

// schedule is the open-model timetable of a constant-rate run, or of one
// sender's share of it: the run's request seq (0-based, over the whole
// run) is due at seq/rate after the start, whatever happened to earlier
// requests, and a sender with share p sends the requests p.seq(0),
// p.seq(1), … of it. At, DueBy and Count speak of the share's own
// requests k = 0, 1, …; Seq maps one to the run's seq. Corrected
// latencies are measured from these times, so that every loop and every
// shard of one run keeps the run's absolute schedule.
type schedule struct {
	intervalNs float64 // 1e9 / rate
	rate       float64
	part       share
}

// newSchedule is the whole run's timetable at rate requests per second.
func newSchedule(rate float64) schedule {
	return schedule{intervalNs: 1e9 / rate, rate: rate, part: wholeRun}
}

// of is s restricted to the requests of share p (of the whole run).
func (s schedule) of(p share) schedule {
	s.part = p
	return s
}

// Seq is the run's seq of the share's request k.
func (s schedule) Seq(k uint64) uint64 { return s.part.seq(k) }

// At returns when the share's request k is due, in nanoseconds since the
// start.
func (s schedule) At(k uint64) int64 {
	return s.at(s.part.seq(k))
}

// at is when the run's request seq is due.
func (s schedule) at(seq uint64) int64 {
	return int64(float64(seq) * s.intervalNs)
}

// DueBy returns how many of the share's requests are due at or before t
// (ns since start): the smallest k with At(k) > t. DueBy(t) - 1 is the
// last request due.
func (s schedule) DueBy(t int64) uint64 {
	return s.part.count(s.dueBy(t))
}

// dueBy is DueBy over the whole run.
func (s schedule) dueBy(t int64) uint64 {
	if t < 0 {
		return 0
	}
	n := uint64(math.Floor(float64(t)*s.rate/1e9)) + 1
	// Float rounding can put the estimate one off either way; settle it
	// against at so that DueBy and At never disagree.
	for n > 0 && s.at(n-1) > t {
		n--
	}
	for s.at(n) <= t {
		n++
	}
	return n
}

// Count is the number of the share's requests due strictly before d: a
// run of length d sends exactly this many.
func (s schedule) Count(d time.Duration) uint64 {
	return s.DueBy(int64(d) - 1)
}

// share is a sender's part of a run's requests: the run's seq first,
// first+stride, first+2·stride, … (its own requests k = 0, 1, 2, …). A
// run split over N shards (loader hosts) and each shard over L loops
// gives shard K's loop l the share {K-1 + l·N, N·L}: every request goes
// to exactly one loop of one shard, and each gets an equal share of
// every stretch of the schedule.
type share struct {
	first, stride uint64
}

// wholeRun is the share of a sender that sends every request.
var wholeRun = share{0, 1}

// seq is the run's seq of the share's request k.
func (p share) seq(k uint64) uint64 { return p.first + k*p.stride }

// count is how many of the run's requests 0..n-1 are the share's.
func (p share) count(n uint64) uint64 {
	if n <= p.first {
		return 0
	}
	return (n-1-p.first)/p.stride + 1 // ⌈(n-first)/stride⌉, without overflow
}

// split is the l-th of n shares that p splits into (0 ≤ l < n).
func (p share) split(l, n int) share {
	return share{first: p.first + uint64(l)*p.stride, stride: p.stride * uint64(n)}
}
