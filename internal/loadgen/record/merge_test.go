package record

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/latency"
)

// mergeRun is a run of n requests, every one answered in us µs, from
// start for elapsed, on cpus CPUs that it used for cpu.
func mergeRun(n int64, us int64, start time.Time, elapsed time.Duration, cpus int, cpu time.Duration) *Result {
	r := &Result{Start: start, Elapsed: elapsed, SendSpan: elapsed, Sent: n, Planned: uint64(n), LoaderCPUs: cpus, Pinned: true,
		CPU: CPUTime{User: cpu}, Uncorrected: latency.New(), Corrected: latency.New(), SendLag: latency.New(),
		Codes: map[int]int64{200: n - 1, 503: 1}, Errors: map[string]int64{}, ErrorCount: 1}
	r.Config.Rate, r.Config.Conns = float64(n)/elapsed.Seconds(), 4
	op := OpResult{Op: api.Get, Sent: n, Uncorrected: latency.New(), Corrected: latency.New(), Codes: map[int]int64{200: n}}
	for range n {
		for _, h := range []interface{ RecordValue(int64) error }{r.Corrected, r.Uncorrected, op.Corrected, op.Uncorrected} {
			_ = h.RecordValue(us)
		}
	}
	r.Ops = []OpResult{op}
	return r
}

// TestMergeAddsCountsAndMergesHistograms: two loaders' runs merged are
// one run: counts, rates, connections, CPU time and CPUs add; the
// percentiles come from the merged histograms (a p50 that no average of
// the runs' p50s gives); it spans the earliest start to the latest end.
func TestMergeAddsCountsAndMergesHistograms(t *testing.T) {
	t0 := time.Unix(1000, 0)
	fast := mergeRun(900, 100, t0, time.Second, 2, time.Second)
	slow := mergeRun(100, 10000, t0.Add(100*time.Millisecond), time.Second, 2, 3*time.Second)
	m := Merge([]*Result{fast, slow})

	assert.Equal(t, int64(1000), m.Sent)
	assert.Equal(t, uint64(1000), m.Planned)
	assert.Equal(t, int64(2), m.ErrorCount)
	assert.Equal(t, map[int]int64{200: 998, 503: 2}, m.Codes)
	assert.Equal(t, 1000.0, m.Config.Rate)
	assert.Equal(t, 8, m.Config.Conns)
	assert.Equal(t, 4, m.LoaderCPUs)
	assert.Equal(t, 4*time.Second, m.CPU.Total())
	assert.InDelta(t, 4.0/(1.1*4), m.LoaderUse().Share, 1e-9, "the CPU share is of every loader's CPUs over the whole span")
	assert.Equal(t, t0, m.Start)
	assert.Equal(t, 1100*time.Millisecond, m.Elapsed)
	assert.True(t, m.Pinned)

	assert.Equal(t, int64(1000), m.Corrected.TotalCount())
	assert.Equal(t, int64(100), latency.ValueAt(m.Corrected, 50).Microseconds(), "the whole's p50: the fast loader's answers")
	assert.InDelta(t, 10000, latency.ValueAt(m.Corrected, 95).Microseconds(), 10000*0.01, "the whole's p95: the slow loader's")
	assert.NotEqual(t, (100+10000)/2, latency.ValueAt(m.Corrected, 50).Microseconds(), "not an average of the runs' p50s")

	if assert.Len(t, m.Ops, 1) {
		assert.Equal(t, int64(1000), m.Ops[0].Sent)
		assert.Equal(t, int64(1000), m.Ops[0].Corrected.TotalCount(), "each operation's histograms merged too")
	}

	slow.Ops = nil
	assert.Nil(t, Merge([]*Result{fast, slow}).Ops, "a run that kept no operations: the merge has none rather than a part")
}
