package engine

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

// The coordinated-omission test (Gil Tene's example): one connection, 100
// requests a second for 3 s, and the server stalls for 1 s on the 100th
// request. The loader cannot send while it waits, so the ~100 requests
// scheduled during the stall go out late, back to back, and are answered
// fast. Measured from the actual send, only one request is slow; measured
// from the schedule, the stall shows across all of them, their latencies
// spread from ~1 s down to ~0.
func TestCorrectedLatencyShowsTheStallAcrossScheduledRequests(t *testing.T) {
	const stall = time.Second
	var n atomic.Int64
	url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		if n.Add(1) == 100 {
			time.Sleep(stall)
		}
		bareserver.Handler(ctx)
	})
	cfg := testConfig(url, 100, 3*time.Second)
	cfg.Conns, cfg.MaxConns = 1, 1
	cfg.KeepRecords = true
	res := run(t, cfg)
	require.Equal(t, int64(300), res.Sent)
	require.Zero(t, res.ErrorCount)

	slowUncorrected := 0
	slowCorrected := 0
	s := schedule.New(cfg.Rate)
	for _, rc := range res.Records {
		if time.Duration(rc.Latency) >= stall*9/10 {
			slowUncorrected++
		}
		if time.Duration(rc.Sent+rc.Latency-s.At(rc.Seq)) >= stall/2 {
			slowCorrected++
		}
	}
	assert.Equal(t, 1, slowUncorrected, "measured from the actual send, one request is slow")
	assert.GreaterOrEqual(t, slowCorrected, 40, "from the schedule, about half of the ~100 requests due during the stall waited ≥ 0.5 s")

	// The histograms say the same: uncorrected, p90 is fast and only the
	// top 1/300 is slow; corrected, the top third carries the stall.
	assert.Less(t, res.Uncorrected.ValueAtPercentile(90), int64(250_000), "uncorrected p90 (µs)")
	assert.GreaterOrEqual(t, res.Uncorrected.Max(), int64(900_000), "uncorrected max is the stalled request")
	assert.GreaterOrEqual(t, res.Corrected.ValueAtPercentile(90), int64(500_000), "corrected p90 (µs)")
	assert.GreaterOrEqual(t, res.Corrected.ValueAtPercentile(99), int64(900_000), "corrected p99 (µs)")
	assert.Less(t, res.Corrected.ValueAtPercentile(50), int64(250_000), "corrected p50: two thirds were never delayed")
	assert.Greater(t, res.Late, int64(40), "the delayed sends are counted as late")
	assert.NotEmpty(t, res.Warnings(), "a run with late sends warns")
}
