package schedule

import "time"

// DefaultQuantum is the fast engine's quantum, where Config.Quantum is 0
// (sized by the run, see QuantumFor), at rates whose quantum holds enough
// requests to batch them, until the server's answers say otherwise:
// chosen by measuring loader CPU and send lag side by side (README, "How
// far to trust the loader"). MaxQuantum is the most any quantum may be:
// wrk2's 1 ms timer.
const (
	DefaultQuantum = 250 * time.Microsecond
	MaxQuantum     = time.Millisecond
)

// quantumBatch is how many requests a quantum need hold at most: past
// that a wake-up's cost is spread thin already, and a longer quantum
// would only make sends later.
const quantumBatch = 16

// quantumLagShare is the most of the server's median answer that a
// quantum may add to a request's wait, where the quantum grows past
// DefaultQuantum: a tenth, so that the corrected latencies stay the
// server's.
const quantumLagShare = 10

// quantumMinBatch is the fewest requests a quantum must hold for
// batching them to pay: below it batching saves little CPU and costs the
// precision of every request.
const quantumMinBatch = 2

// PreciseQuantum is the quantum of a loop that sends each request at its
// own time: a wake-up per request, as late as the kernel's timer makes
// it and no later.
const PreciseQuantum = time.Microsecond

// QuantumFor is the quantum of an event loop sending rate requests per
// second to a server whose median answer is median (0: none seen yet):
// DefaultQuantum, grown up to a tenth of the median answer where the
// server is slow (a 1 ms quantum costs a 10 ms answer little, and saves
// wake-ups), but never past quantumBatch requests nor MaxQuantum; and
// PreciseQuantum where that would hold fewer than quantumMinBatch.
func QuantumFor(rate float64, median time.Duration) time.Duration {
	q := median / quantumLagShare
	if rate > 0 {
		q = min(q, time.Duration(quantumBatch*1e9/rate))
	}
	q = min(max(q, DefaultQuantum), MaxQuantum)
	if rate > 0 && rate*q.Seconds() < quantumMinBatch {
		return PreciseQuantum
	}
	return q
}

// MedianTracker estimates the median of a stream of durations in O(1)
// (frugal streaming: each sample moves the estimate a small step towards
// itself, up or down, so it settles where half the samples lie above),
// cheap enough to feed every answer.
type MedianTracker struct {
	m time.Duration
	N int
}

// Add feeds one sample.
func (t *MedianTracker) Add(d time.Duration) {
	t.N++
	switch {
	case t.N == 1:
		t.m = d
	case d > t.m:
		t.m += t.m/32 + 1
	case d < t.m:
		t.m -= t.m / 32
	}
}

// Median is the estimate; 0 before any sample.
func (t *MedianTracker) Median() time.Duration { return t.m }
