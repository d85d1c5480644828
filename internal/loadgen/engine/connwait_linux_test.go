//go:build linux

package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
	"github.com/kvpool/kvpool/internal/loadgen/record"
)

// With one connection and a server slower than the schedule, every
// request after the first falls due while the connection is busy waiting
// on the server: each is marked as having waited for a connection, and
// only those; the counts by interval add up to the run's. The server's
// slowness makes this so on any machine: the connection is busy for at
// least the handler's 30 ms, the requests fall due 5 ms apart.
func TestEventLoopMarksAttemptsThatWaitedForAConnection(t *testing.T) {
	url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		time.Sleep(30 * time.Millisecond) // the slow server under test, not synchronisation
		bareserver.Handler(ctx)
	})
	cfg := testConfig(url, 200, 100*time.Millisecond)
	cfg.Conns, cfg.MaxConns = 1, 1
	cfg.Interval = 100 * time.Millisecond
	cfg.KeepRecords = true
	_, res := runEngine(t, cfg)

	require.Equal(t, int64(20), res.Sent)
	require.True(t, res.OwnLagKnown, "the event loop tells the two lags apart")
	for _, rc := range res.Records {
		assert.Equal(t, rc.Seq != 0, rc.Flags&record.FlagConnWait != 0, "request %d", rc.Seq)
	}
	assert.Equal(t, int64(19), res.ConnWaits)
	assert.LessOrEqual(t, res.OwnLate, int64(1), "only the first send can be the loader's own lag")
	var waits int64
	for i, iv := range res.Intervals {
		waits += iv.ConnWaits
		if i > 0 {
			assert.Zero(t, iv.OwnLagP99Us, "interval %d: every send in it waited for the connection", i)
		}
	}
	assert.Equal(t, res.ConnWaits, waits, "the series add up to the total")
}
