package server

import (
	"github.com/kvpool/kvpool/internal/pool"
	"net"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// serveFrom runs one GET of uri through the server's router as if it came
// from remote, and returns the status and body.
func serveFrom(t *testing.T, srv *Server, remote net.IP, uri string) (int, string) {
	t.Helper()
	var req fasthttp.Request
	req.SetRequestURI(uri)
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, &net.TCPAddr{IP: remote, Port: 40000}, nil)
	srv.route(&ctx)
	return ctx.Response.StatusCode(), string(ctx.Response.Body())
}

// TestPprofLoopbackOnly: /debug/pprof/ answers loopback clients; others
// get 403 and a hint naming -pprof-remote, unless it is set. /metrics
// answers everyone.
func TestPprofLoopbackOnly(t *testing.T) {
	remote := net.IPv4(192, 0, 2, 7)
	loopbacks := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(127, 1, 2, 3), net.IPv6loopback}

	srv := newMemServer(t, nil)
	for _, uri := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/cmdline", "/debug/pprof/profile?seconds=1"} {
		code, body := serveFrom(t, srv, remote, uri)
		assert.Equal(t, 403, code, uri)
		assert.Contains(t, body, "-pprof-remote", uri)
	}
	for _, ip := range loopbacks {
		code, body := serveFrom(t, srv, ip, "/debug/pprof/")
		assert.Equal(t, 200, code, ip)
		assert.Contains(t, body, "goroutine", ip)
	}
	code, body := serveFrom(t, srv, remote, "/metrics")
	require.Equal(t, 200, code, "/metrics stays open")
	assert.Contains(t, body, "kvserver_http_requests_total")
	assert.Contains(t, body, `kvserver_http_requests_total{code="403",method="GET"} 4`)

	open := newMemServer(t, func(c *Config) { c.PprofRemote = true })
	code, body = serveFrom(t, open, remote, "/debug/pprof/")
	assert.Equal(t, 200, code, "-pprof-remote")
	assert.Contains(t, body, "goroutine")
}

// TestConfigInfo: /metrics carries the effective settings, workers
// resolved from GOMAXPROCS where it was left at 0.
func TestConfigInfo(t *testing.T) {
	f := func(mutate func(*Config), want ...string) {
		t.Helper()
		srv := newMemServer(t, mutate)
		code, body := serveFrom(t, srv, net.IPv4(127, 0, 0, 1), "/metrics")
		require.Equal(t, 200, code)
		for _, w := range want {
			assert.Contains(t, body, w)
		}
	}
	f(func(c *Config) {
		c.Pool, c.Pcfg.Workers, c.Pcfg.Capacity, c.Pcfg.QueueTimeout = "lifo", 3, 64, 5e6
		c.Sync, c.CacheMiB = true, 16
	}, `kvserver_config_info{cache_mb="16",cap="64",`, `,overflow="reject",pool="lifo",queue_timeout="5ms",row_cache_mb="128",sync="true",`, `,workers="3"} 1`)
	f(func(c *Config) { c.Pcfg.Workers = 0 },
		`workers="`+strconv.Itoa(runtime.GOMAXPROCS(0))+`"} 1`, `queue_timeout="1s"`, `sync="false"`,
		`cap="10000"`, `exec="handler"`, `limit="fixed"`)
	f(func(c *Config) { c.Pool, c.Pcfg.Exec, c.MaxConns = "msqueue", pool.ExecWorker, 300 },
		`cap="300"`, `exec="worker"`, `queue_timeout="1s"`)
	f(func(c *Config) { c.Pool, c.Pcfg.Limit.Algorithm = "adaptive", "gradient2" },
		`exec="handler"`, `limit="gradient2"`, `queue_timeout="0s"`)
	f(func(c *Config) { c.Pool, c.Pcfg.Exec = "direct", pool.ExecWorker },
		`exec="handler"`, `pool="direct"`, `queue_timeout="0s"`)
}
