//go:build unix

package pool

import (
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIdleUsesNoCPU: an idle pool of 16 workers parks them all. Over 200 ms
// of idleness the whole test process may use well under 20 ms of CPU; 16
// workers spinning (even yielding with Gosched) would use the full 2 cores,
// ~400 ms. Measured as CPU time, not wall time, so a slow machine does not
// make it fail. It runs after a burst, so the pool has been woken and put
// back to sleep, and spare wake-up tokens (see signal) have had their turn.
func TestIdleUsesNoCPU(t *testing.T) {
	for _, variant := range queueingVariants {
		t.Run(variant, func(t *testing.T) {
			p, err := New(variant, Config{Exec: ExecWorker, Workers: 16, Capacity: 256, Overflow: OverflowCallerRuns})
			require.NoError(t, err)
			defer p.Close()
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					tasks := make([]probe, 200)
					for i := range tasks {
						p.Submit(&tasks[i])
					}
				})
			}
			wg.Wait()
			waitIdle(t, p)

			// The least CPU of a few idle windows: a pool that spins or
			// polls spends in every one of them, while a collection of
			// the race detector's heap, or a busy machine's stall, lands
			// in one at most. The window is the subject, hence the sleep.
			runtime.GC()
			used := time.Hour
			for range 3 {
				before := cpuTime(t)
				time.Sleep(200 * time.Millisecond)
				used = min(used, cpuTime(t)-before)
			}
			assert.Less(t, used, 20*time.Millisecond, "CPU used by an idle pool in 200 ms")
			assert.Zero(t, p.Stats().Busy)
		})
	}
}

// cpuTime is the CPU time, user and system, this process has used so far.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
