package loadgen

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
)

// serve starts a fasthttp server with handler h on 127.0.0.1:0 for the
// length of the test and returns its base URL.
func serve(t *testing.T, h fasthttp.RequestHandler) string {
	t.Helper()
	ln, err := bareserver.Listen("127.0.0.1:0")
	require.NoError(t, err)
	srv := &fasthttp.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		// Bounded: a test's handler may still hang on purpose.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.ShutdownWithContext(ctx)
	})
	return fmt.Sprintf("http://%s", ln.Addr())
}

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
