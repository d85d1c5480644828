package limit

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/cpu"
)

// rule is one algorithm's update, fed one closed window at a time. Calls
// are serialized (the closer holds windowed.mu), so a rule keeps its state
// in plain fields.
type rule interface {
	// update folds a window into the rule's state and returns the new
	// limit, within [Config.Min, Config.Max].
	update(a aggregate) int
}

// aggregate is what a rule sees of a window.
type aggregate struct {
	// rtt is the window's median rtt (the lower median), >= 1 ns, good to
	// 1/32 of itself (the histogram's half bucket).
	rtt time.Duration
	// inflight is the largest inflight of the window's samples.
	inflight int
	// dropped: some sample of the window reported a drop.
	dropped bool
	// samples is how many samples the window holds, >= WindowSamples.
	samples int64
}

// The window's rtts are counted in a log-linear histogram: 16 buckets per
// power of two, so a bucket is at most 1/16 of its lower bound wide, and
// rtts below 32 ns have a bucket each. 544 buckets span 1 ns to maxRTT.
const (
	subBits    = 4
	subBuckets = 1 << subBits
	maxRTT     = 1<<37 - 1 // ~137 s; a longer rtt counts as this
	numBuckets = (37 - subBits + 1) * subBuckets
	// maxStretch caps how far a slow window stretches past Window
	// (twice its fastest rtt), as WindowedLimit's maxWindowTime does.
	maxStretch = int64(time.Second)
)

// bucketOf is the histogram bucket of an rtt in [0, maxRTT] nanoseconds.
func bucketOf(rtt int64) int {
	if rtt < 2*subBuckets {
		return int(rtt)
	}
	e := bits.Len64(uint64(rtt)) - (subBits + 1)
	return e*subBuckets + int(rtt>>e)
}

// bucketLow is the lowest rtt that falls in bucket i.
func bucketLow(i int) int64 {
	if i < 2*subBuckets {
		return int64(i)
	}
	e := i/subBuckets - 1
	return int64(subBuckets+i%subBuckets) << e
}

// bucketMid is the rtt a bucket stands for: the middle of its range.
func bucketMid(i int) int64 {
	if i < 2*subBuckets {
		return int64(i)
	}
	return bucketLow(i) + int64(1)<<(i/subBuckets-1)/2
}

// windowed folds samples into windows and hands each closed window's
// aggregate to a rule, as WindowedLimit.java does for any Limit; the
// limit it reads back is what Current returns.
//
// A window closes at the first sample that ends (start+rtt) at or after
// its deadline, provided it holds WindowSamples samples; otherwise it stays
// open, and the next sample to end tries again. The next deadline is that
// sample's end plus max(Window, 2 × the window's fastest rtt), the
// stretch capped at maxStretch (WindowedLimit: clamp(2 × minRtt, min, max
// window time)): an update's effect shows only once requests admitted
// under it finish, so a window shorter than an rtt would let the rule
// react again to the same state, and overshoot.
//
// What the window hands on, and how it differs from the source:
//   - rtt: the median, where WindowedLimit's default is the mean
//     (ImmutableAverageSampleWindow; its percentile window is an option,
//     and Envoy's gradient controller takes p50). A 10 ms GC pause in a
//     window of ten 20 µs requests multiplies the mean by 50 and would
//     halve Gradient2's limit; it does not move the median. That is the
//     promise: one slow request does not move the limit.
//   - inflight: the largest; dropped: any; as the source.
//   - no minimum-rtt filter: WindowedLimit ignores rtts under 100 µs,
//     which here would be every sample of the fast store.
//
// Concurrency: Sample adds to one bucket (an atomic add), raises
// maxInflight and sets dropped only when they change, and reads deadline.
// The sample that finds the deadline passed try-locks mu; a sampler that
// fails goes on (its sample is in the window being closed or the next),
// so no sampler ever waits. The closer swaps every bucket to 0, so each
// sample is counted in exactly one window: the one whose swap followed its
// add. A sample's inflight or drop may land in the window before or after
// its rtt's, which no rule can tell from a neighbour's.
type windowed struct {
	_ cpu.CacheLinePad
	// Read by every Sample (deadline) or Current (current); written once
	// a window by the closer, or by a sample that raises maxInflight or
	// first sets dropped (a few a window).
	current     atomic.Int64
	deadline    atomic.Int64 // on the Config.Now scale
	maxInflight atomic.Int64
	dropped     atomic.Bool
	_           cpu.CacheLinePad
	// Added to by every Sample; swapped to 0 by the closer.
	buckets [numBuckets]atomic.Int64
	_       cpu.CacheLinePad

	changes atomic.Uint64
	// median and lowest are the last closed window's median rtt and the
	// lowest window median of the recent past (see RTT), in ns; 0 until
	// a window closes. Written by the closer, read by anyone.
	median, lowest atomic.Int64

	// Immutable after newWindowed.
	name       string
	window     int64 // Config.Window, ns
	minSamples int64

	// mu serializes closers: the fields below belong to its holder.
	mu      sync.Mutex
	rule    rule
	counts  [numBuckets]int64 // the closing window's histogram
	windows uint64            // windows handed to rule, for tests
	// lows are the lowest window medians of this span of lowSpan windows
	// and of the one before: lowest is the smaller of the two, so a
	// store that became slower for good is believed within two spans.
	lows [2]int64
}

// lowSpan is how many windows one of windowed.lows spans: 500 windows
// of the default 10 ms, 5 s, so that the lowest rtt is forgotten 5-10 s
// after the store stopped serving that fast.
const lowSpan = 500

func newWindowed(cfg Config, r rule) *windowed {
	w := &windowed{
		name:       cfg.Algorithm,
		window:     int64(cfg.Window),
		minSamples: int64(cfg.WindowSamples),
		rule:       r,
	}
	w.current.Store(int64(cfg.Initial))
	w.deadline.Store(cfg.Now() + w.window)
	return w
}

func (w *windowed) Current() int    { return int(w.current.Load()) }
func (w *windowed) Changes() uint64 { return w.changes.Load() }
func (w *windowed) Name() string    { return w.name }

func (w *windowed) Sample(start int64, rtt time.Duration, inflight int, dropped bool) {
	r := min(max(int64(rtt), 1), maxRTT)
	w.buckets[bucketOf(r)].Add(1)
	for in := int64(inflight); ; {
		m := w.maxInflight.Load()
		if in <= m || w.maxInflight.CompareAndSwap(m, in) {
			break
		}
	}
	if dropped && !w.dropped.Load() {
		w.dropped.Store(true)
	}
	if end := start + int64(rtt); end >= w.deadline.Load() {
		w.close(end)
	}
}

// close ends the window if it is still open at end and holds enough
// samples, and hands its aggregate to the rule. It returns at once if
// another sampler is closing.
func (w *windowed) close(end int64) {
	if !w.mu.TryLock() {
		return
	}
	defer w.mu.Unlock()
	if end < w.deadline.Load() {
		return // closed by another sampler since this one looked
	}
	var n int64
	lo := -1
	for i := range w.buckets {
		c := int64(0)
		if w.buckets[i].Load() != 0 {
			c = w.buckets[i].Swap(0)
		}
		w.counts[i] = c
		n += c
		if c != 0 && lo < 0 {
			lo = i
		}
	}
	if n < w.minSamples {
		// Too few: put them back and keep the window open. Adds commute,
		// so samples that came in meanwhile are not lost.
		for i := lo; i >= 0 && i < len(w.counts); i++ {
			if w.counts[i] != 0 {
				w.buckets[i].Add(w.counts[i])
			}
		}
		return
	}
	stretch := min(max(2*bucketLow(lo), w.window), max(w.window, maxStretch))
	w.deadline.Store(end + stretch)

	a := aggregate{
		inflight: int(w.maxInflight.Swap(0)),
		dropped:  w.dropped.Swap(false),
		samples:  n,
	}
	rank := (n + 1) / 2 // the lower median, 1-based
	for i, seen := lo, int64(0); i < len(w.counts); i++ {
		if seen += w.counts[i]; seen >= rank {
			a.rtt = time.Duration(max(bucketMid(i), 1))
			break
		}
	}
	w.windows++
	w.noteRTT(a.rtt)
	if next := int64(w.rule.update(a)); next != w.current.Load() {
		w.current.Store(next)
		w.changes.Add(1)
	}
}

// noteRTT records a closed window's median rtt for RTT. Called by the
// closer only.
func (w *windowed) noteRTT(rtt time.Duration) {
	if w.windows%lowSpan == 0 {
		w.lows[0], w.lows[1] = w.lows[1], 0
	}
	r := int64(rtt)
	if w.lows[1] == 0 || r < w.lows[1] {
		w.lows[1] = r
	}
	low := w.lows[1]
	if w.lows[0] != 0 {
		low = min(low, w.lows[0])
	}
	w.median.Store(r)
	w.lowest.Store(low)
}

// RTT implements Latencies.
func (w *windowed) RTT() (median, lowest time.Duration) {
	return time.Duration(w.median.Load()), time.Duration(w.lowest.Load())
}
