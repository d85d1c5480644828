package latency

import (
	"math/bits"
	"sync/atomic"
)

// liveSubBits sets the resolution of Live: 2^liveSubBits buckets per power
// of two, so a quantile read from it is at most 1/16 (6.25 %) above the
// true value. Good enough for a progress line; reports use HdrHistogram.
const (
	liveSubBits = 4
	liveSub     = 1 << liveSubBits
	liveBuckets = 64 * liveSub
)

// Live is a coarse log-linear histogram of microseconds that one goroutine
// records into and any other goroutine may read at the same time (every
// bucket is atomic). It exists for progress lines: the exact per-goroutine
// HdrHistograms may only be read after their goroutine has finished.
type Live struct {
	counts [liveBuckets]atomic.Int64
}

// Record adds one value (microseconds, ≥ 0).
func (l *Live) Record(us int64) {
	l.counts[liveIndex(uint64(us))].Add(1)
}

// liveIndex maps v to its bucket: exact below liveSub, then liveSub buckets
// per power of two.
func liveIndex(v uint64) int {
	if v < liveSub {
		return int(v)
	}
	n := bits.Len64(v)           // v in [2^(n-1), 2^n)
	shift := n - 1 - liveSubBits // keep the liveSubBits bits below the top one
	sub := int(v>>shift) & (liveSub - 1)
	return (shift+1)*liveSub + sub
}

// liveUpper is the largest value that liveIndex maps to bucket i.
func liveUpper(i int) int64 {
	if i < liveSub {
		return int64(i)
	}
	shift := i/liveSub - 1
	sub := uint64(i % liveSub)
	lo := (uint64(liveSub) + sub) << shift
	return int64(lo + (1 << shift) - 1)
}

// LiveSnapshot is a point-in-time copy of one or more Live histograms.
type LiveSnapshot struct {
	counts [liveBuckets]int64
	total  int64
}

// AddTo adds l's current counts into s.
func (l *Live) AddTo(s *LiveSnapshot) {
	for i := range l.counts {
		c := l.counts[i].Load()
		s.counts[i] += c
		s.total += c
	}
}

// Count is the number of values in s.
func (s *LiveSnapshot) Count() int64 { return s.total }

// Quantile returns an upper bound (within 6.25 %) of the value at quantile q
// (0 < q ≤ 1), or 0 if s is empty.
func (s *LiveSnapshot) Quantile(q float64) int64 {
	if s.total == 0 {
		return 0
	}
	rank := int64(q*float64(s.total) + 0.5)
	if rank < 1 {
		rank = 1
	}
	var seen int64
	for i, c := range s.counts {
		seen += c
		if seen >= rank {
			return liveUpper(i)
		}
	}
	return liveUpper(liveBuckets - 1)
}
