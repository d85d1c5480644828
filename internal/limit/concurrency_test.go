package limit

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hangGuard bounds every wait for an event in this package's tests. It is
// never what a test asserts: a test that reaches it has already failed.
const hangGuard = 30 * time.Second

// 16 goroutines sample and read one real-clock limit at once, with windows
// of 1 µs so that closers run all the time beside the samplers: the race
// detector sees every access, and Current never leaves [Min, Max].
func TestConcurrentSamplers(t *testing.T) {
	const goroutines, samples = 16, 10000
	for _, algorithm := range Algorithms {
		t.Run(algorithm, func(t *testing.T) {
			cfg := Config{Algorithm: algorithm, Min: 2, Initial: 8, Max: 64, Window: time.Microsecond, Timeout: 100 * time.Microsecond}
			l, err := New(cfg)
			require.NoError(t, err)
			var outside atomic.Int64
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for i := range samples {
						rtt := base
						if (g+i)%7 == 0 {
							rtt = 20 * base // some windows slow, most fast
						}
						l.Sample(Monotonic(), rtt, l.Current(), i%101 == 0)
						if c := l.Current(); c < cfg.Min || c > cfg.Max {
							outside.Add(1)
						}
					}
				})
			}
			wg.Wait()
			assert.Zero(t, outside.Load(), "reads of Current outside [%d, %d]", cfg.Min, cfg.Max)
			if w, ok := l.(*windowed); ok {
				// Every sample ends 20 µs or more past the first deadline,
				// 1 µs after New: at least that window closed.
				assert.NotZero(t, w.windows)
				assert.LessOrEqual(t, w.Changes(), w.windows)
			}
		})
	}
}

// A sampler that finds the deadline passed while another closes the window
// returns at once, and its sample counts in the next window.
func TestSampleNeverWaits(t *testing.T) {
	w, r := newRecorded(t, Config{WindowSamples: 2})
	w.mu.Lock() // another sampler is closing
	done := make(chan struct{})
	go func() {
		w.Sample(int64(DefaultWindow), time.Millisecond, 3, true)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Fatalf("Sample still waiting after %v for a closer", hangGuard)
	}
	w.mu.Unlock()
	require.Empty(t, r.got)
	w.Sample(int64(DefaultWindow), time.Millisecond, 1, false)
	require.Len(t, r.got, 1)
	assert.Equal(t, int64(2), r.got[0].samples)
	assert.Equal(t, 3, r.got[0].inflight)
	assert.True(t, r.got[0].dropped)
}

// The request path allocates nothing: Sample, windows closing included,
// and Current, for every algorithm.
func TestSampleAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	for _, algorithm := range Algorithms {
		l, err := New(Config{Algorithm: algorithm, Min: 1, Max: 100, Initial: 10, Window: time.Millisecond, Now: func() int64 { return 0 }})
		require.NoError(t, err)
		at, i := int64(0), 0
		allocs := testing.AllocsPerRun(10000, func() {
			at += int64(100 * time.Microsecond) // a window every 10 samples
			i++
			l.Sample(at, time.Duration(1+i%5)*base, l.Current(), i%97 == 0)
		})
		assert.Zero(t, allocs, algorithm)
		if w, ok := l.(*windowed); ok {
			assert.Greater(t, w.windows, uint64(500), "%s: windows closed while counted", algorithm)
		}
	}
}
