package compare

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/kvpool/kvpool/internal/compare/result"
)

// TestReadAnswersSplitsServedFromShed writes a results.bin as the loader
// does and checks that shed 503s are kept out of the served p99, that
// latency is corrected from the intended send, and the per-second series.
func TestReadAnswersSplitsServedFromShed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.bin")
	f, err := os.Create(path)
	require.NoError(t, err)
	enc := vegeta.NewEncoder(f)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const rate = 100.0 // request seq is due at seq × 10 ms
	put := func(seq uint64, sentLate, lat time.Duration, code uint16) {
		intended := time.Duration(seq) * 10 * time.Millisecond
		r := vegeta.Result{Seq: seq, Code: code, Timestamp: start.Add(intended + sentLate), Latency: lat}
		require.NoError(t, enc.Encode(&r))
	}
	// Second 0: 100 served in 1 ms, sent on time.
	for seq := uint64(0); seq < 100; seq++ {
		put(seq, 0, time.Millisecond, 200)
	}
	// Second 1: 50 served in 1 ms but sent 40 ms late (corrected 41 ms),
	// 40 shed after 1 µs, 5 timeouts, 5 404s.
	for seq := uint64(100); seq < 200; seq++ {
		switch {
		case seq < 150:
			put(seq, 40*time.Millisecond, time.Millisecond, 200)
		case seq < 190:
			put(seq, 0, time.Microsecond, 503)
		case seq < 195:
			put(seq, 0, 2*time.Second, 0)
		default:
			put(seq, 0, time.Millisecond, 404)
		}
	}
	require.NoError(t, f.Close())

	a, err := readAnswers(path, start, rate)
	require.NoError(t, err)
	assert.Equal(t, int64(155), a.Served, "2xx and 404")
	assert.Equal(t, int64(40), a.Shed)
	assert.Equal(t, int64(5), a.Timeouts)
	assert.Zero(t, a.Other)
	p99 := time.Duration(a.ServedCorrected.ValueAtPercentile(99)) * time.Microsecond
	assert.InDelta(t, 41*time.Millisecond, p99, float64(time.Millisecond), "served p99 is corrected from the intended send")
	assert.Equal(t, int64(1000), a.ServedUncorrected.ValueAtPercentile(99), "uncorrected: from the actual send, µs")
	assert.Equal(t, int64(1), a.ShedWait.Max(), "shed requests waited 1 µs")
	require.Len(t, a.PerSecond, 2)
	assert.Equal(t, result.SecondPoint{Second: 0, P99: time.Millisecond, Served: 100}, a.PerSecond[0])
	assert.Equal(t, 1, a.PerSecond[1].Second)
	assert.Equal(t, int64(55), a.PerSecond[1].Served)
	assert.Equal(t, int64(40), a.PerSecond[1].Shed)
}

// the given saturation runs.
func TestCPUTicks(t *testing.T) {
	busy, total, err := cpuTicks()
	require.NoError(t, err)
	assert.Positive(t, total)
	assert.LessOrEqual(t, busy, total)
}

// TestQuietWaitsOnceThenLooks: a busy machine is waited for once, up to
// -quiet-wait; later steps only look, each noted, until quiet returns.
func TestQuietWaitsOnceThenLooks(t *testing.T) {
	busy := 3.0
	looks := 0
	q := &quietCheck{wait: time.Nanosecond, // the first look already passes the deadline
		look: func(context.Context, time.Duration) (float64, error) { looks++; return busy, nil }}
	ctx := context.Background()

	assert.Contains(t, q.before(ctx, "step 1"), "no quiet came within 1ns")
	assert.True(t, q.loaded)

	looks = 0
	assert.Contains(t, q.before(ctx, "step 2"), "before step 2: still 3.0 cores busy")
	assert.Equal(t, 1, looks, "a machine known to be loaded is looked at once, not waited for")

	busy = 0.2
	assert.Empty(t, q.before(ctx, "step 3"), "a quiet machine is not noted")
	assert.False(t, q.loaded)

	q.wait = 0
	looks = 0
	assert.Empty(t, q.before(ctx, "step 4"))
	assert.Zero(t, looks, "-quiet-wait 0 turns the check off")
}
