package loadgen

import (
	"math"
	"time"
)

// schedule is the open-model timetable of a constant-rate run: request seq
// (0-based) is due at At(seq) = seq/rate after the start, whatever happened
// to earlier requests. Corrected latencies are measured from these times.
type schedule struct {
	intervalNs float64 // 1e9 / rate
	rate       float64
}

func newSchedule(rate float64) schedule {
	return schedule{intervalNs: 1e9 / rate, rate: rate}
}

// At returns when request seq is due, in nanoseconds since the start.
func (s schedule) At(seq uint64) int64 {
	return int64(float64(seq) * s.intervalNs)
}

// DueBy returns how many requests are due at or before t (ns since start):
// the smallest n with At(n) > t. DueBy(t) - 1 is the last request due.
func (s schedule) DueBy(t int64) uint64 {
	if t < 0 {
		return 0
	}
	n := uint64(math.Floor(float64(t)*s.rate/1e9)) + 1
	// Float rounding can put the estimate one off either way; settle it
	// against At so that DueBy and At never disagree.
	for n > 0 && s.At(n-1) > t {
		n--
	}
	for s.At(n) <= t {
		n++
	}
	return n
}

// Count is the number of requests due strictly before d: a run of length d
// sends exactly this many.
func (s schedule) Count(d time.Duration) uint64 {
	return s.DueBy(int64(d) - 1)
}
