package schedule

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The automatic quantum is a wake-up per request where a quantum would
// hold fewer than quantumMinBatch requests; else DefaultQuantum for a
// fast server, grown to a tenth of a slow server's median answer, but
// never past what holds quantumBatch requests, nor MaxQuantum.
func TestQuantumForRateAndAnswers(t *testing.T) {
	f := func(rate float64, median, want time.Duration) {
		t.Helper()
		assert.Equal(t, want, QuantumFor(rate, median), "rate %v, median %v", rate, median)
	}
	us := time.Microsecond
	f(5000, 0, PreciseQuantum)     // 1.25 requests per 250 µs: one wake-up each
	f(5000, 50*us, PreciseQuantum) // a fast server: the same
	f(7999, 50*us, PreciseQuantum) // just under two per quantum
	f(8000, 50*us, DefaultQuantum) // two per quantum: batch them
	f(20_000, 0, DefaultQuantum)   // no answer yet
	f(40_000, 2*time.Millisecond, DefaultQuantum)
	f(5000, 5*time.Millisecond, 500*us) // a tenth of a slow answer holds 2.5
	f(1000, 5*time.Millisecond, PreciseQuantum)
	f(4000, 50*time.Millisecond, MaxQuantum)
	f(40_000, 5*time.Millisecond, 400*us)           // 16 requests at 40,000 req/s
	f(200_000, 50*time.Millisecond, DefaultQuantum) // 80 µs holds 16: the floor wins
	f(0, 5*time.Millisecond, 500*us)                // a loop with no rate: the answers alone
}

// The tracker settles near the median of what it is fed.
func TestMedianTrackerSettlesOnTheMedian(t *testing.T) {
	var m MedianTracker
	assert.Zero(t, m.Median())
	r := rand.New(rand.NewPCG(1, 2))
	for range 20_000 {
		// Exponential around 100 µs: median 69.3 µs, a long tail.
		m.Add(time.Duration(r.ExpFloat64() * 100_000))
	}
	require.Equal(t, 20_000, m.N)
	assert.InDelta(t, 69_300, float64(m.Median()), 69_300*0.15)
}
