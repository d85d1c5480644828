package pool

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMultiQueueRoughlyFIFO: multiqueue is relaxed FIFO, so exact order is
// not promised; what is: with every task queued before any runs, each runs
// near its FIFO position. The bounds are an order of magnitude above what
// the two-choice rule gives (mean displacement ~shards, max a few times
// that) and an order of magnitude below what a LIFO or a random order gives
// (~n/2, ~n/3), so the test tells "relaxed" from "wrong".
func TestMultiQueueRoughlyFIFO(t *testing.T) {
	for _, exec := range execModes {
		t.Run(exec.String(), func(t *testing.T) { testMultiQueueRoughlyFIFO(t, exec) })
	}
}

func testMultiQueueRoughlyFIFO(t *testing.T, exec Exec) {
	const n, shardsPerWorker = 2000, 8
	p, err := New("multiqueue", Config{Exec: exec, Workers: 1, Capacity: 4096, ShardsPerWorker: shardsPerWorker})
	require.NoError(t, err)
	order := runOrder(t, p, n, make(chan struct{}), nil)
	require.Equal(t, n, len(order))
	var sum, worst int
	for pos, i := range order {
		d := max(pos-i, i-pos)
		sum += d
		worst = max(worst, d)
	}
	mean := float64(sum) / n
	t.Logf("displacement over %d shards: mean %.1f, max %d", shardsPerWorker, mean, worst)
	assert.Less(t, mean, float64(10*shardsPerWorker))
	assert.Less(t, worst, n/10)
}
