// Package loadgentest serves fake kvserver-like HTTP servers to the load
// side's tests, on 127.0.0.1 only, for the length of one test.
package loadgentest

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
)

// ServeHandler serves h on 127.0.0.1:0 until the test ends and returns the
// server's base URL.
func ServeHandler(t testing.TB, h fasthttp.RequestHandler) string {
	t.Helper()
	return Serve(t, &fasthttp.Server{Handler: h})
}

// Serve serves srv on 127.0.0.1:0 until the test ends and returns its base
// URL.
func Serve(t testing.TB, srv *fasthttp.Server) string {
	t.Helper()
	ln, err := bareserver.Listen("127.0.0.1:0")
	require.NoError(t, err)
	return ServeOn(t, ln, srv)
}

// ServeOn serves srv on ln until the test ends and returns its base URL.
// For a test whose handler must reach the listener, which it then has
// before the first request.
func ServeOn(t testing.TB, ln net.Listener, srv *fasthttp.Server) string {
	t.Helper()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		// Bounded: fasthttp waits for open connections to close, and a
		// client's idle keep-alive connection, or a handler that hangs on
		// purpose, may never end on its own.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.ShutdownWithContext(ctx)
	})
	return "http://" + ln.Addr().String()
}

// MixedStatuses answers like a kvserver holding every even id: GET 200
// with a one-byte body for an even id, 404 for an odd one; PUT 201,
// DELETE 202. A run against it sees every status a mixed workload can get.
func MixedStatuses(ctx *fasthttp.RequestCtx) {
	id := ctx.QueryArgs().GetUintOrZero("id")
	switch {
	case ctx.IsPut():
		ctx.SetStatusCode(fasthttp.StatusCreated)
	case ctx.IsDelete():
		ctx.SetStatusCode(fasthttp.StatusAccepted)
	case id%2 == 0:
		ctx.SetBodyString("v")
	default:
		ctx.SetStatusCode(fasthttp.StatusNotFound)
	}
}
