package engine

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

// runEngine runs the fast engine on cfg with one loop, so that a test
// can look at its connections afterwards.
func runEngine(t *testing.T, cfg config.Config) (*fastEngine, *record.Result) {
	t.Helper()
	cfg.Loops = 1
	g, res := runGroup(t, context.Background(), cfg)
	return g.engines[0], res
}

// runGroup runs the fast engine on cfg as Run does, and returns its loops
// too.
func runGroup(t *testing.T, ctx context.Context, cfg config.Config) (*loopGroup, *record.Result) {
	t.Helper()
	require.NoError(t, cfg.Validate())
	tg, err := config.ParseTarget(cfg.Target, false)
	require.NoError(t, err)
	where, release := place(&cfg)
	defer release()
	g := newLoopGroup(&cfg, tg, where)
	for _, e := range g.engines {
		if runtime.GOOS == "linux" && cfg.Rate > 0 && cfg.Transport == config.TransportRaw {
			require.Equal(t, !cfg.NoEventLoop, e.loop != nil, "on Linux the open model runs on the event loop unless told not to")
		}
	}
	res, err := g.run(ctx, nil)
	require.NoError(t, err)
	where.record(res, g.pinErrs)
	return g, res
}

// bothSenders runs f once on the event loop (where there is one) and
// once on the portable engine, a goroutine per connection.
func bothSenders(t *testing.T, f func(t *testing.T, cfg func(config.Config) config.Config)) {
	t.Run("event loop", func(t *testing.T) { f(t, func(c config.Config) config.Config { return c }) })
	t.Run("goroutines", func(t *testing.T) {
		f(t, func(c config.Config) config.Config { c.NoEventLoop = true; return c })
	})
}

// Many connections, many senders at once: every scheduled request is sent
// exactly once, intended at exactly start + seq/rate, never before, and
// sent + unsent adds up to what was planned. Run it under -race.
func TestOpenModelSendsEveryRequestOnceAtItsTime(t *testing.T) {
	bothSenders(t, func(t *testing.T, mode func(config.Config) config.Config) {
		url := loadgentest.ServeHandler(t, bareserver.Handler)
		cfg := testConfig(url, 20_000, 300*time.Millisecond)
		cfg.Conns, cfg.MaxConns = 64, 64
		cfg.KeepRecords = true
		_, res := runEngine(t, mode(cfg))

		require.Equal(t, uint64(6000), res.Planned)
		assert.Equal(t, int64(res.Planned), res.Sent+res.Unsent(), "sent + unsent == planned")
		assert.Zero(t, res.ErrorCount)
		s := schedule.New(cfg.Rate)
		seen := make([]bool, res.Planned)
		for _, rc := range res.Records {
			require.Less(t, rc.Seq, res.Planned)
			require.False(t, seen[rc.Seq], "request %d recorded twice", rc.Seq)
			seen[rc.Seq] = true
			require.Equal(t, s.At(rc.Seq), rc.Intended, "request %d: intended time", rc.Seq)
			require.GreaterOrEqual(t, rc.Sent, rc.Intended, "request %d was sent before it was due", rc.Seq)
		}
		assert.Len(t, res.Records, int(res.Sent))
		assert.LessOrEqual(t, res.InFlightPeak, res.ConnsPeak, "one request per connection at most")
		assert.Positive(t, res.InFlightPeak)
	})
}

// Idle connections are used oldest first, so every connection carries a
// share of the load, not a few warm ones all of it.
func TestEveryConnectionCarriesAShare(t *testing.T) {
	bothSenders(t, func(t *testing.T, mode func(config.Config) config.Config) {
		url := loadgentest.ServeHandler(t, bareserver.Handler)
		cfg := testConfig(url, 2000, 500*time.Millisecond)
		cfg.Conns, cfg.MaxConns = 16, 16
		e, res := runEngine(t, mode(cfg))
		require.Equal(t, int64(1000), res.Sent)
		assert.Equal(t, 16, res.ConnsUsed)
		for i, c := range e.conns {
			// An equal share is 62.5; round-robin gives that give or take a
			// few even when a slow machine delays some responses.
			assert.GreaterOrEqual(t, c.carried, int64(1000/16/4), "connection %d carried %d", i, c.carried)
		}
	})
}

// The idle list is a FIFO: conns come back in the order they went idle,
// and one can leave from the middle.
func TestIdleListIsRoundRobin(t *testing.T) {
	var l idleList
	cs := make([]*conn, 4)
	for i := range cs {
		cs[i] = &conn{}
		l.push(cs[i])
	}
	l.remove(cs[2])
	assert.False(t, cs[2].idle)
	for _, want := range []*conn{cs[0], cs[1], cs[3]} {
		got := l.pop()
		assert.Same(t, want, got)
		l.push(got) // used and idle again: to the back
	}
	assert.Same(t, cs[0], l.pop())
	assert.Equal(t, 2, l.n)
	assert.Same(t, cs[1], l.pop())
	assert.Same(t, cs[3], l.pop())
	assert.Nil(t, l.pop())
	assert.Nil(t, l.head)
	assert.Nil(t, l.tail)
}

// A server that closes every connection after a few requests (Connection:
// close) or once it has been idle a while costs reconnects, never errors.
func TestServerClosingConnectionsIsNotAnError(t *testing.T) {
	bothSenders(t, func(t *testing.T, mode func(config.Config) config.Config) {
		f := func(name string, srv *fasthttp.Server, rate float64, d time.Duration, conns int) {
			t.Helper()
			srv.Handler = bareserver.Handler
			url := loadgentest.Serve(t, srv)
			cfg := testConfig(url, rate, d)
			cfg.Conns, cfg.MaxConns = conns, conns
			if rate == 0 {
				cfg.Requests = 60
			}
			_, res := runEngine(t, mode(cfg))
			assert.Equal(t, int64(res.Planned), res.Sent, name)
			assert.Zero(t, res.ErrorCount, "%s: %v", name, res.Errors)
			assert.Positive(t, res.Reconnects, name)
			var byInterval int64
			for _, p := range res.Intervals {
				byInterval += p.Reconnects
			}
			assert.Equal(t, res.Reconnects, byInterval, "%s: the series add up to the total", name)
		}
		// 60 requests over 4 connections, at most 3 each per connection.
		f("after 3 requests", &fasthttp.Server{MaxRequestsPerConn: 3}, 600, 100*time.Millisecond, 4)
		// Each of 2 connections carries every other request, 100 ms apart:
		// the server closes it after 20 ms idle.
		f("after 20 ms idle", &fasthttp.Server{IdleTimeout: 20 * time.Millisecond}, 20, 500*time.Millisecond, 2)
		// The closed loop too.
		f("closed loop", &fasthttp.Server{MaxRequestsPerConn: 3}, 0, 0, 4)
	})
}

// Above what the connections can carry, with GrowAfter 0, the engine opens
// a connection as each request falls due with none idle, up to the cap,
// and reports the peaks.
func TestOverloadOpensConnectionsAsRequestsFallDue(t *testing.T) {
	bothSenders(t, func(t *testing.T, mode func(config.Config) config.Config) {
		url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
			time.Sleep(20 * time.Millisecond)
			bareserver.Handler(ctx)
		})
		cfg := testConfig(url, 1000, 200*time.Millisecond)
		cfg.Conns, cfg.MaxConns = 1, 8
		cfg.GrowAfter = 0
		_, res := runEngine(t, mode(cfg))
		assert.Equal(t, int64(200), res.Sent)
		assert.Zero(t, res.ErrorCount)
		assert.Equal(t, 8, res.ConnsPeak, "20 ms answers at 1 ms intervals need 20 connections: all 8 allowed")
		assert.Equal(t, 8, res.ConnsUsed)
		assert.Greater(t, res.InFlightPeak, 1)
		assert.LessOrEqual(t, res.InFlightPeak, 8)
	})
}

// A server that goes away mid-run: the requests due after it are sent to
// connections that cannot be re-dialled and fail as refused, quickly, and
// are counted, rather than waiting unsent to the end.
func TestServerGoneMidRunFailsRequestsAsRefused(t *testing.T) {
	bothSenders(t, func(t *testing.T, mode func(config.Config) config.Config) {
		var n atomic.Int64
		var closeOnce sync.Once
		ln, err := bareserver.Listen("127.0.0.1:0")
		require.NoError(t, err)
		srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
			if n.Add(1) >= 20 {
				closeOnce.Do(func() { _ = ln.Close() }) // nothing listens any more
				ctx.SetConnectionClose()
			}
			bareserver.Handler(ctx)
		}}
		url := loadgentest.ServeOn(t, ln, srv)
		cfg := testConfig(url, 400, 250*time.Millisecond)
		_, res := runEngine(t, mode(cfg))
		assert.Equal(t, int64(100), res.Sent)
		assert.GreaterOrEqual(t, res.Codes[200], int64(20))
		assert.Positive(t, res.ErrorCount)
		assert.Equal(t, res.ErrorCount, res.Errors["connection refused (is the server running?)"], "%v", res.Errors)
	})
}

// A request that outlives -timeout in the open model fails as a timeout;
// its connection is replaced and the run goes on. Only lower bounds on
// time: a stall of the machine can add timeouts, never remove the hung one.
func TestOpenModelTimeout(t *testing.T) {
	bothSenders(t, func(t *testing.T, mode func(config.Config) config.Config) {
		var n atomic.Int64
		release := make(chan struct{})
		url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
			if n.Add(1) == 5 {
				<-release
			}
			bareserver.Handler(ctx)
		})
		t.Cleanup(func() { close(release) })
		cfg := testConfig(url, 100, 200*time.Millisecond)
		cfg.Timeout = 200 * time.Millisecond
		_, res := runEngine(t, mode(cfg))
		assert.Equal(t, int64(20), res.Sent)
		timeouts := res.Errors[record.ErrTimeout.Error()]
		assert.GreaterOrEqual(t, timeouts, int64(1))
		assert.Equal(t, int64(20), res.Codes[200]+timeouts)
	})
}

// The hostclient transport hands each request to its connection's
// goroutine; it sends the same schedule, open and closed loop.
func TestHostClientTransportSendsTheSchedule(t *testing.T) {
	url := loadgentest.ServeHandler(t, bareserver.Handler)
	cfg := testConfig(url, 1000, 200*time.Millisecond)
	cfg.Transport = config.TransportHostClient
	cfg.KeepRecords = true
	_, res := runEngine(t, cfg)
	assert.Equal(t, int64(200), res.Sent)
	assert.Zero(t, res.ErrorCount)
	for _, rc := range res.Records {
		require.GreaterOrEqual(t, rc.Sent, rc.Intended, "request %d was sent before it was due", rc.Seq)
	}

	cfg.Rate, cfg.Duration, cfg.Requests = 0, 0, 100
	_, res = runEngine(t, cfg)
	assert.Equal(t, int64(100), res.Sent)
	assert.Zero(t, res.ErrorCount)
}

// An interrupted run stops sending, waits for what is in flight and
// accounts for every request: each sent one recorded once, the rest
// unsent.
func TestInterruptedRunAccountsForEveryRequest(t *testing.T) {
	bothSenders(t, func(t *testing.T, mode func(config.Config) config.Config) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var n atomic.Int64
		url := loadgentest.ServeHandler(t, func(rc *fasthttp.RequestCtx) {
			if n.Add(1) == 500 {
				cancel()
			}
			bareserver.Handler(rc)
		})
		cfg := mode(testConfig(url, 20_000, 5*time.Second))
		cfg.Conns, cfg.MaxConns = 32, 32
		cfg.KeepRecords = true
		_, res := runGroup(t, ctx, cfg)
		assert.Equal(t, uint64(100_000), res.Planned)
		assert.GreaterOrEqual(t, res.Sent, int64(500))
		assert.Positive(t, res.Unsent(), "the run stopped early")
		assert.Equal(t, int64(res.Planned), res.Sent+res.Unsent())
		seen := map[uint64]bool{}
		for _, rc := range res.Records {
			require.False(t, seen[rc.Seq], "request %d recorded twice", rc.Seq)
			seen[rc.Seq] = true
		}
		assert.Len(t, seen, int(res.Sent))
		assert.LessOrEqual(t, res.Resume, uint64(res.Sent))
		for seq := range res.Resume {
			require.True(t, seen[seq], "request %d is below the resume point %d and was not sent", seq, res.Resume)
		}
		if res.Loops == 1 {
			assert.Equal(t, uint64(res.Sent), res.Resume, "one loop sends in order: every request below the resume point was sent")
		}
	})
}
