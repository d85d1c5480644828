package limit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every rtt falls in the bucket whose range holds it; buckets are ordered,
// adjacent, and at most 1/16 of their lower bound wide, so a bucket's
// middle is within 1/32 of any rtt in it.
func TestBuckets(t *testing.T) {
	f := func(v int64) {
		t.Helper()
		b := bucketOf(v)
		require.True(t, b >= 0 && b < numBuckets, "bucket %d of %d", b, v)
		lo, hi := bucketLow(b), int64(maxRTT)+1
		if b+1 < numBuckets {
			hi = bucketLow(b + 1)
		}
		require.True(t, lo <= v && v < hi, "%d outside its bucket %d: [%d, %d)", v, b, lo, hi)
		require.LessOrEqual(t, (hi-lo)*subBuckets, max(lo, subBuckets), "bucket %d too wide", b)
		mid := bucketMid(b)
		require.LessOrEqual(t, abs(mid-v)*2*subBuckets, max(v, 2*subBuckets), "middle %d of %d's bucket", mid, v)
	}
	for v := range int64(5000) {
		f(v)
	}
	for v := int64(5000); v < maxRTT/3; v = v*9/8 + 1 {
		f(v - 1)
		f(v)
		f(v + 1)
	}
	for e := range 38 {
		f(int64(1)<<e - 1)
		f(min(int64(1)<<e, maxRTT))
	}
	f(maxRTT)
	assert.Equal(t, numBuckets-1, bucketOf(maxRTT))
	for b := 1; b < numBuckets; b++ {
		require.Less(t, bucketLow(b-1), bucketLow(b))
		require.Equal(t, b, bucketOf(bucketLow(b)))
	}
}

func abs(v int64) int64 { return max(v, -v) }

// recorder is a rule that keeps what it is handed and keeps the limit.
type recorder struct {
	limit int
	got   []aggregate
}

func (r *recorder) update(a aggregate) int { r.got = append(r.got, a); return r.limit }

func newRecorded(t *testing.T, cfg Config) (*windowed, *recorder) {
	t.Helper()
	cfg.Algorithm = "gradient2"
	cfg.Now = func() int64 { return 0 }
	cfg = cfg.WithDefaults()
	require.NoError(t, cfg.Validate())
	r := &recorder{limit: cfg.Initial}
	return newWindowed(cfg, r), r
}

// A window hands on its median rtt, largest inflight, any drop and its
// sample count.
func TestWindowAggregate(t *testing.T) {
	f := func(rtts []time.Duration, inflights []int, drops []bool, median time.Duration) {
		t.Helper()
		w, r := newRecorded(t, Config{WindowSamples: len(rtts)})
		wantInflight, wantDrop := 0, false
		for i, rtt := range rtts {
			end := int64(DefaultWindow) * int64(i+1) / int64(len(rtts))
			w.Sample(end-int64(rtt), rtt, inflights[i], drops[i])
			wantInflight, wantDrop = max(wantInflight, inflights[i]), wantDrop || drops[i]
		}
		require.Len(t, r.got, 1)
		a := r.got[0]
		assert.InDelta(t, float64(median), float64(a.rtt), float64(median)/32, "median of %v", rtts)
		assert.Equal(t, wantInflight, a.inflight)
		assert.Equal(t, wantDrop, a.dropped)
		assert.Equal(t, int64(len(rtts)), a.samples)
	}
	us := time.Microsecond
	f([]time.Duration{5 * us, 1 * us, 4 * us, 2 * us, 3 * us}, []int{1, 7, 3, 2, 1}, []bool{false, false, false, false, false}, 3*us)
	// The lower median of an even count.
	f([]time.Duration{10 * us, 40 * us, 20 * us, 30 * us}, []int{4, 4, 4, 4}, []bool{false, true, false, false}, 20*us)
	// Outliers either way do not reach it.
	f([]time.Duration{time.Hour, 0, 20 * us, 20 * us, 21 * us, -time.Second, 22 * us}, []int{1, 2, 3, 4, 5, 6, 7}, make([]bool, 7), 20*us)
	// A window of identical rtts hands on that rtt, within the bucket.
	f([]time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}, []int{9, 9, 9}, []bool{true, true, true}, time.Millisecond)
	f([]time.Duration{17, 17, 17}, []int{1, 1, 1}, make([]bool, 3), 17) // exact below 32 ns
}

// A window closes only once it has lasted Window and holds WindowSamples
// samples: samples before the deadline never close it, however many; a
// window short of samples at its deadline stays open until the one that
// completes it, and keeps every sample it had.
func TestWindowNeedsTimeAndSamples(t *testing.T) {
	w, r := newRecorded(t, Config{Window: time.Second, WindowSamples: 10})
	require.Equal(t, int64(time.Second), w.deadline.Load(), "the first window opens at Now")
	for i := range 1000 {
		w.Sample(int64(i)*int64(time.Millisecond), time.Microsecond, 1, false) // ends before 1 s
	}
	require.Empty(t, r.got, "before the deadline")
	w.Sample(0, 1100*time.Millisecond, 2, false) // ends past it: closes
	require.Len(t, r.got, 1)
	assert.Equal(t, int64(1001), r.got[0].samples)
	assert.Equal(t, 2, r.got[0].inflight)
	assert.InDelta(t, float64(time.Microsecond), float64(r.got[0].rtt), float64(time.Microsecond)/32, "the median of 1000 × 1 µs and one 1.1 s")
	next := int64(1100*time.Millisecond) + int64(time.Second)
	require.Equal(t, next, w.deadline.Load(), "the next window: from the closing sample's end")

	// Past the deadline with 9 samples: open.
	for i := range 9 {
		w.Sample(next+int64(i), time.Millisecond, 5, i == 3)
		require.Len(t, r.got, 1, "sample %d of 9", i+1)
	}
	w.Sample(next+int64(time.Hour), time.Millisecond, 3, false)
	require.Len(t, r.got, 2, "the tenth closes it")
	assert.Equal(t, aggregate{rtt: r.got[1].rtt, inflight: 5, dropped: true, samples: 10}, r.got[1], "nothing lost while it waited")
	assert.InDelta(t, float64(time.Millisecond), float64(r.got[1].rtt), float64(time.Millisecond)/32)
	assert.Equal(t, uint64(2), w.windows)
}

// A window lasts at least twice its fastest rtt, at most maxStretch
// (unless Window itself is longer).
func TestWindowStretch(t *testing.T) {
	f := func(window, rtt, want time.Duration) {
		t.Helper()
		w, _ := newRecorded(t, Config{Window: window, WindowSamples: 1})
		end := int64(window) + int64(rtt)
		w.Sample(end-int64(rtt), rtt, 1, false)
		require.Equal(t, uint64(1), w.windows)
		got := time.Duration(w.deadline.Load() - end)
		assert.InDelta(t, float64(want), float64(got), float64(want)/16, "window %v, rtt %v: next lasts %v", window, rtt, got)
		assert.LessOrEqual(t, got, max(want, window))
	}
	f(10*time.Millisecond, base, 10*time.Millisecond)
	f(10*time.Millisecond, 5*time.Millisecond, 10*time.Millisecond)
	f(10*time.Millisecond, 20*time.Millisecond, 40*time.Millisecond)
	f(10*time.Millisecond, 5*time.Second, time.Second)
	f(3*time.Second, 5*time.Second, 3*time.Second)
}

// Changes counts only updates that changed Current, however many windows
// closed.
func TestChangesCountsRealChanges(t *testing.T) {
	w, r := newRecorded(t, Config{WindowSamples: 1, Window: time.Millisecond, Min: 1, Max: 100, Initial: 5})
	at := int64(0)
	f := func(limit int, changes uint64) {
		t.Helper()
		r.limit = limit
		at = w.deadline.Load()
		w.Sample(at, 0, 1, false)
		assert.Equal(t, limit, w.Current())
		assert.Equal(t, changes, w.Changes())
	}
	f(5, 0)
	f(5, 0)
	f(6, 1)
	f(6, 1)
	f(2, 2)
	f(5, 3)
	f(5, 3)
}

// RTT tells the last window's median and the lowest window median of the
// recent past: a slower window raises the median, not the lowest; a
// lowest that lasted two spans of lowSpan windows is forgotten.
func TestWindowRTT(t *testing.T) {
	w, _ := newRecorded(t, Config{WindowSamples: 1, Window: time.Millisecond})
	median, lowest := w.RTT()
	assert.Zero(t, median, "no window closed yet")
	assert.Zero(t, lowest)
	end := int64(0)
	window := func(rtt time.Duration) {
		end += int64(time.Second)
		w.Sample(end-int64(rtt), rtt, 1, false)
	}
	near := func(want, got time.Duration) {
		t.Helper()
		assert.InDelta(t, float64(want), float64(got), float64(want)/32)
	}
	window(time.Millisecond)
	window(4 * time.Millisecond)
	median, lowest = w.RTT()
	near(4*time.Millisecond, median)
	near(time.Millisecond, lowest)
	for range 2 * lowSpan {
		window(4 * time.Millisecond)
	}
	_, lowest = w.RTT()
	near(4*time.Millisecond, lowest)

	m := Measured(7, Config{WindowSamples: 1, Window: time.Millisecond, Now: func() int64 { return 0 }})
	assert.Equal(t, 7, m.Current())
	m.Sample(int64(time.Second), time.Millisecond, 1, false)
	m.Sample(int64(2*time.Second), time.Millisecond, 9, true)
	assert.Equal(t, 7, m.Current(), "a measured limit never moves")
	median, _ = m.(Latencies).RTT()
	near(time.Millisecond, median)
}
