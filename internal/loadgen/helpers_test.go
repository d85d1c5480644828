package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testConfig is a small, quick configuration against url.
func testConfig(url string, rate float64, d time.Duration) Config {
	c := DefaultConfig()
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
func run(t *testing.T, cfg Config) *Result {
	t.Helper()
	res, err := Run(context.Background(), cfg, nil)
	require.NoError(t, err)
	return res
}
