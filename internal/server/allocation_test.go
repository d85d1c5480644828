package server

import (
	"bufio"
	"net"
	"strings"
	"testing"

	"github.com/kvpool/kvpool/internal/pool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// fixedStore answers every Get with the same value and keeps nothing: a
// store that allocates nothing, so what is counted is the server's own.
type fixedStore struct{ value []byte }

func (s fixedStore) Get(_ int64, dst, _ []byte) ([]byte, error) { return append(dst, s.value...), nil }
func (fixedStore) Put(int64, []byte, []byte) error              { return nil }
func (fixedStore) Delete(int64, []byte) error                   { return nil }
func (fixedStore) Close() error                                 { return nil }

// TestHandlerAllocatesNothing enforces what the server promises: once warm,
// the request path (framing check, routing, validation, the job, the pool,
// the response, the metrics) allocates nothing per GET or PUT, in every
// pool and both exec modes, nor with a deadline header (parsed, checked
// where the job starts, counted). The request is parsed from raw bytes, as
// fasthttp would, so the framing check has headers to read.
func TestHandlerAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	value := strings.Repeat("v", 500)
	requests := map[string]string{
		"GET":          "GET /v0/entity?id=42 HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n",
		"PUT":          "PUT /v0/entity?id=42 HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n" + value,
		"GET+deadline": "GET /v0/entity?id=42 HTTP/1.1\r\nHost: x\r\nX-Request-Timeout-Ms: 60000\r\n\r\n",
	}
	wantCode := map[string]int{"GET": 200, "PUT": 201, "GET+deadline": 200}
	for _, exec := range []pool.Exec{pool.ExecHandler, pool.ExecWorker} {
		for _, name := range pool.Variants {
			if pool.HandlerOnly(name) && exec == pool.ExecWorker {
				continue // these run in the handler whatever -exec says
			}
			if isFailsafe(name) {
				continue // failsafe-go's limiter allocates a permit per request: the peer, not ours to hold to this
			}
			for _, method := range []string{"GET", "PUT", "GET+deadline"} {
				t.Run(exec.String()+"/"+name+"/"+method, func(t *testing.T) {
					cfg := DefaultConfig()
					cfg.Pool, cfg.Pcfg.Exec, cfg.Pcfg.Workers = name, exec, 2
					s, err := New(resolved(t, cfg), fixedStore{value: []byte(value)}, Options{})
					require.NoError(t, err)
					defer s.pool.Close()
					serve := serveRaw(t, s, requests[method])
					for range 100 { // warm up the job pool and the buffers
						serve()
					}
					require.Equal(t, wantCode[method], serve())
					assert.Zero(t, testing.AllocsPerRun(1000, func() { serve() }), "allocations per %s", method)
				})
			}
		}
	}
}

// serveRaw returns a func that serves request (raw HTTP) through s's
// routing, as fasthttp would, and returns the status code.
func serveRaw(t *testing.T, s *Server, request string) func() int {
	t.Helper()
	var req fasthttp.Request
	require.NoError(t, req.Read(bufio.NewReader(strings.NewReader(request))))
	require.NotEmpty(t, req.Header.RawHeaders(), "parsed as the server would")
	ctx := new(fasthttp.RequestCtx)
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
	return func() int {
		ctx.Response.Reset()
		s.route(ctx)
		return ctx.Response.StatusCode()
	}
}

// gatedStore is fixedStore whose Get of the id "hold" tells held that it
// has begun, then waits until gate is closed.
type gatedStore struct {
	fixedStore
	held chan struct{}
	gate chan struct{}
}

func (s gatedStore) Get(deadline int64, dst, key []byte) ([]byte, error) {
	if string(key) == "hold" {
		s.held <- struct{}{}
		<-s.gate
	}
	return s.fixedStore.Get(deadline, dst, key)
}

// TestShedAllocatesNothing: the refusal path allocates nothing either, in
// both exec modes: a 503 for a full queue (fifo -cap 0, its one worker or
// slot held by a GET that waits in the store) and one from a closed pool.
func TestShedAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	for _, exec := range []pool.Exec{pool.ExecHandler, pool.ExecWorker} {
		t.Run(exec.String(), func(t *testing.T) {
			st := gatedStore{fixedStore{make([]byte, 500)}, make(chan struct{}, 1), make(chan struct{})}
			cfg := DefaultConfig()
			cfg.Pool, cfg.Pcfg.Exec, cfg.Pcfg.Workers, cfg.Pcfg.Capacity = "fifo", exec, 1, 0
			s, err := New(resolved(t, cfg), st, Options{})
			require.NoError(t, err)
			hold := serveRaw(t, s, "GET /v0/entity?id=hold HTTP/1.1\r\nHost: x\r\n\r\n")
			// A hand-off queue (capacity 0) refuses the hold until the
			// one worker waits for work, which its goroutine may not do
			// yet: send it again until it reaches the store.
			held := make(chan int, 1)
			for reached := false; !reached; {
				go func() { held <- hold() }()
				select {
				case <-st.held:
					reached = true
				case code := <-held:
					require.Equal(t, 503, code, "the hold was answered without reaching the store")
				}
			}
			rejected := s.PoolStats().Rejected[pool.ReasonFull]
			full := serveRaw(t, s, "GET /v0/entity?id=42 HTTP/1.1\r\nHost: x\r\n\r\n")
			for range 100 {
				full()
			}
			require.Equal(t, 503, full())
			assert.Zero(t, testing.AllocsPerRun(1000, func() { full() }), "allocations per 503 (full)")
			assert.EqualValues(t, rejected+101+1001, s.PoolStats().Rejected[pool.ReasonFull])
			close(st.gate)
			assert.Equal(t, 200, <-held)

			s.pool.Close()
			closed := serveRaw(t, s, "PUT /v0/entity?id=42 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
			for range 100 {
				closed()
			}
			require.Equal(t, 503, closed())
			assert.Zero(t, testing.AllocsPerRun(1000, func() { closed() }), "allocations per 503 (closed)")
		})
	}
}
