package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// testConfig is a small, quick configuration against url.
func testConfig(url string, rate float64, d time.Duration) config.Config {
	c := config.Default()
	c.Target = url
	c.Conns, c.MaxConns = 4, 4
	c.Rate, c.Duration = rate, d
	c.Timeout = 5 * time.Second
	c.Progress = 0
	c.Workload.Keys = 1000
	c.Workload.ValueSize = 64
	c.KeepResults = true
	return c
}

// run runs cfg and fails the test on a start-up error.
func run(t *testing.T, cfg config.Config) *record.Result {
	t.Helper()
	res, err := Run(context.Background(), cfg, nil)
	require.NoError(t, err)
	return res
}

// newAllocEngine is a fast engine at rate against a bare server, with
// every kind of request and no results kept: not running, not connected.
func newAllocEngine(t *testing.T, rate float64) *fastEngine {
	t.Helper()
	cfg := testConfig(loadgentest.ServeHandler(t, bareserver.Handler), rate, time.Hour)
	cfg.Workload.Mix = workload.Mix{Get: 0.5, Put: 0.3, Delete: 0.2}
	cfg.KeepResults = false
	require.NoError(t, cfg.Validate())
	tg, err := config.ParseTarget(cfg.Target, false)
	require.NoError(t, err)
	return newLoopEngine(&cfg, record.NewCollector(&cfg), tg, 0, 1)
}
