package limit

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// base is a served GET's slot hold on this server.
const base = 20 * time.Microsecond

var adaptive = []string{"gradient2", "vegas", "aimd"}

// A stable low rtt with inflight at the limit grows it to Max within the
// number of windows each algorithm's doc comment gives.
func TestStableLatencyGrowsToMax(t *testing.T) {
	f := func(algorithm string, initial, max, within int) {
		t.Helper()
		fd := newFeeder(t, Config{Algorithm: algorithm, Min: 1, Initial: initial, Max: max})
		n := fd.until(within, win{rtt: base}, func(l int) bool { return l == max })
		assert.LessOrEqual(t, n, within, "%s from %d to %d", algorithm, initial, max)
		// And stays there.
		for _, l := range fd.windows(20, win{rtt: base}) {
			require.Equal(t, max, l)
		}
	}
	f("gradient2", 20, 1000, 300)
	f("gradient2", 8, 200, 125)
	f("vegas", 8, 1000, 100)
	f("vegas", 20, 200, 30)
	f("aimd", 20, 200, 180) // one a window: exactly Max − Initial
	f("aimd", 1, 2, 1)
}

// Gradient2 grows by Smoothing·queue a window: an explicit QueueSize is the
// source's fixed term, the default max(4, ⌊√limit⌋).
func TestGradient2Queue(t *testing.T) {
	f := func(queueSize int, smoothing float64, initial, after10 int) {
		t.Helper()
		fd := newFeeder(t, Config{Algorithm: "gradient2", QueueSize: queueSize, Smoothing: smoothing, Min: 1, Initial: initial, Max: 1000})
		assert.Equal(t, after10, fd.windows(10, win{rtt: base})[9], "queue %d, smoothing %v, from %d", queueSize, smoothing, initial)
	}
	f(4, 0.2, 20, 28)   // +0.8
	f(10, 1, 20, 120)   // +10
	f(0, 0.2, 400, 440) // +0.2·20
	f(0, 1, 400, 616)   // +20, +20, +20, +21, +21, +22, +22, +23, +23, +24
	f(0, 0.2, 10, 18)   // +0.2·4: the floor
}

// AIMD grows by exactly one a window.
func TestAIMDGrowsByOne(t *testing.T) {
	fd := newFeeder(t, Config{Algorithm: "aimd", Min: 1, Initial: 10, Max: 100})
	for i, l := range fd.windows(90, win{rtt: base}) {
		require.Equal(t, 11+i, l)
	}
}

// A sustained rise in rtt shrinks the limit towards Min. AIMD sees only
// rtts above its Timeout, so its rise goes from 2 ms to 20 ms.
func TestSustainedRiseShrinks(t *testing.T) {
	f := func(algorithm string, before time.Duration, min, initial, within int) {
		t.Helper()
		fd := newFeeder(t, Config{Algorithm: algorithm, Min: min, Initial: initial, Max: initial})
		for _, l := range fd.windows(20, win{rtt: before}) {
			require.Equal(t, initial, l, "%s at Max, latency stable", algorithm)
		}
		last := initial
		n := fd.until(within, win{rtt: 10 * before}, func(l int) bool {
			require.LessOrEqual(t, l, last, "%s never grows while the rise lasts", algorithm)
			last = l
			return l == min
		})
		assert.LessOrEqual(t, n, within, "%s from %d to Min %d: at %d", algorithm, initial, min, last)
	}
	// 10 % a window while the gradient is at its floor (gradient2.go).
	f("gradient2", base, 16, 1000, 50)
	// −2 a window from 100, −1 below (vegas.go).
	f("vegas", base, 10, 100, 91)
	// ×0.9 a window (aimd.go).
	f("aimd", 2*time.Millisecond, 8, 1000, 42)
}

// However far latency jumps, one window moves the limit by one bounded
// step: Gradient2's gradient floor (0.5, so −s/2 of the limit, plus the
// queue), Vegas's −log10(limit), AIMD's Backoff.
func TestOneWindowStepIsBounded(t *testing.T) {
	f := func(algorithm string, before time.Duration, want int) {
		t.Helper()
		fd := newFeeder(t, Config{Algorithm: algorithm, Min: 1, Initial: 1000, Max: 1000})
		fd.windows(20, win{rtt: before})
		assert.Equal(t, want, fd.window(win{rtt: 1000 * before}), algorithm)
	}
	f("gradient2", base, 906) // 1000·0.5·0.2 + 1000·0.8 + 31·0.2
	f("vegas", base, 997)
	f("aimd", 2*time.Millisecond, 900)
}

// Gradient2 forgives a rise that lasts: it becomes the baseline, and the
// limit climbs back to Max within the windows gradient2.go gives. When
// latency then falls back, the limit stays at Max.
func TestGradient2AcceptsNewBaseline(t *testing.T) {
	fd := newFeeder(t, Config{Algorithm: "gradient2", Min: 16, Initial: 1000, Max: 1000})
	fd.windows(20, win{rtt: base})
	fd.until(50, win{rtt: 10 * base}, func(l int) bool { return l == 16 })
	require.Equal(t, 16, fd.w.Current(), "pinned at Min by a 10× rise")
	n := fd.until(550, win{rtt: 10 * base}, func(l int) bool { return l == 1000 })
	assert.LessOrEqual(t, n, 550)
	for _, l := range fd.windows(200, win{rtt: base}) {
		require.Equal(t, 1000, l, "a fall in latency never shrinks it")
	}
}

// Gradient2's long average comes down fast once an overload has passed
// (×0.95 a window while long > 2·short), so that the next rise is seen as
// one: after 1000 windows at 10× (the new baseline) and 100 back at base,
// a second rise halves the limit within 20 windows. The exponential
// average alone would still sit at ~7× base, and see no rise at all.
func TestGradient2LongAverageComesDownFast(t *testing.T) {
	fd := newFeeder(t, Config{Algorithm: "gradient2", Min: 1, Initial: 1000, Max: 1000})
	fd.windows(1000, win{rtt: 10 * base})
	fd.windows(100, win{rtt: base})
	require.Equal(t, 1000, fd.w.Current())
	n := fd.until(20, win{rtt: 10 * base}, func(l int) bool { return l <= 500 })
	assert.LessOrEqual(t, n, 20)
}

// Vegas re-probes its no-load rtt: after a lasting rise has taken the limit
// to Min, it takes the new rtt as the no-load one within 30·limit windows
// (the probe's period) and grows again.
func TestVegasReprobes(t *testing.T) {
	fd := newFeeder(t, Config{Algorithm: "vegas", Min: 10, Initial: 100, Max: 100})
	fd.window(win{rtt: base})
	fd.until(100, win{rtt: 10 * base}, func(l int) bool { return l == 10 })
	require.Equal(t, 10, fd.w.Current())
	within := vegasProbeMultiplier * 10
	n := fd.until(within, win{rtt: 10 * base}, func(l int) bool { return l > 10 })
	assert.LessOrEqual(t, n, within)
	for _, l := range fd.windows(20, win{rtt: 10 * base}) {
		require.Greater(t, l, 10, "the new rtt is the no-load one: growing")
	}
}

// Inflight below half the limit means the caller, not the server, limits
// the load: Gradient2, Vegas and AIMD leave the limit alone, whatever the
// latency says (AIMD: short of a timeout or drop).
func TestAppLimitedLeavesLimit(t *testing.T) {
	f := func(algorithm string, rtt time.Duration) {
		t.Helper()
		fd := newFeeder(t, Config{Algorithm: algorithm, Min: 1, Initial: 100, Max: 1000})
		fd.window(win{rtt: base, inflight: 49})
		for _, l := range fd.windows(100, win{rtt: rtt, inflight: 49}) {
			require.Equal(t, 100, l, "%s, rtt %v", algorithm, rtt)
		}
		assert.Zero(t, fd.w.Changes())
	}
	f("gradient2", base)
	f("gradient2", 10*base)
	f("vegas", base)
	f("vegas", 10*base)
	f("aimd", base)
}

// A drop backs AIMD off by Backoff, whatever the latency, and Vegas by
// log10 of the limit.
func TestDropBacksOff(t *testing.T) {
	f := func(algorithm string, backoff float64, min, from, want int) {
		t.Helper()
		fd := newFeeder(t, Config{Algorithm: algorithm, Backoff: backoff, Min: min, Initial: from, Max: 1000})
		fd.window(win{rtt: base, inflight: 1}) // Vegas: its no-load rtt
		require.Equal(t, from, fd.w.Current())
		assert.Equal(t, want, fd.window(win{rtt: base, drop: true}), "%s at %v from %d", algorithm, backoff, from)
		changes := uint64(0)
		if want != from {
			changes = 1
		}
		assert.Equal(t, changes, fd.w.Changes())
	}
	f("aimd", 0.9, 1, 100, 90)
	f("aimd", 0.5, 1, 100, 50)
	f("aimd", 0.9, 1, 15, 13)
	f("aimd", 0.75, 1, 10, 7)
	f("aimd", 0.5, 8, 10, 8) // not below Min
	f("vegas", 0, 1, 100, 98)
	f("vegas", 0, 1, 50, 49)
	f("vegas", 0, 50, 50, 50)
}

// One outlier in a window does not move the limit: twins fed the same
// windows, one with an outlier (slow, past AIMD's Timeout, or fast) among
// its ten samples, keep the same limit after every window, growing and
// at Max.
func TestOutlierDoesNotMoveLimit(t *testing.T) {
	f := func(algorithm string, outlier time.Duration) {
		t.Helper()
		cfg := Config{Algorithm: algorithm, Min: 1, Initial: 20, Max: 200}
		plain, twin := newFeeder(t, cfg), newFeeder(t, cfg)
		for i := range 300 {
			want := plain.window(win{rtt: base})
			require.Equal(t, want, twin.window(win{rtt: base, outlier: outlier}), "%s, outlier %v, window %d", algorithm, outlier, i)
		}
		assert.Equal(t, 200, plain.w.Current())
		assert.Equal(t, plain.w.Changes(), twin.w.Changes())
	}
	for _, a := range adaptive {
		f(a, time.Second)
		f(a, 100*base)
		f(a, time.Nanosecond)
	}
}

// Under any sequence of windows the limit stays within [Min, Max], and
// Changes counts exactly the windows after which Current differed.
func TestBoundsAndChanges(t *testing.T) {
	f := func(algorithm string, min, initial, max int, seed uint64) {
		t.Helper()
		fd := newFeeder(t, Config{Algorithm: algorithm, Min: min, Initial: initial, Max: max, Timeout: time.Millisecond})
		r := rand.New(rand.NewPCG(seed, 1))
		prev, changes := initial, uint64(0)
		for i := range 400 {
			// Log-uniform rtts from 1 µs to ~65 ms, held for a few windows.
			rtt := time.Duration(1000 << r.IntN(17))
			for range 1 + r.IntN(20) {
				l := fd.window(win{
					rtt:      rtt + time.Duration(r.IntN(1000)),
					inflight: 1 + r.IntN(2*fd.w.Current()),
					drop:     r.IntN(20) == 0,
					n:        10 + r.IntN(10),
				})
				require.True(t, min <= l && l <= max, "%s window %d: %d outside [%d, %d]", algorithm, i, l, min, max)
				if l != prev {
					changes++
				}
				prev = l
			}
		}
		assert.Equal(t, changes, fd.w.Changes(), algorithm)
		assert.NotZero(t, changes, "%s never moved", algorithm)
	}
	for _, a := range adaptive {
		f(a, 1, 20, 1000, 1)
		f(a, 8, 8, 64, 2)
		f(a, 16, 500, 1000, 3)
	}
}
