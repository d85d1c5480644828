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

func (s fixedStore) Get(dst, _ []byte) ([]byte, error) { return append(dst, s.value...), nil }
func (fixedStore) Put(_, _ []byte) error               { return nil }
func (fixedStore) Delete([]byte) error                 { return nil }
func (fixedStore) Close() error                        { return nil }

// TestHandlerAllocatesNothing enforces what the README claims: once warm,
// the request path (framing check, routing, validation, copying key and
// value into a pooled job, the pool hand-off, the response, the metrics)
// allocates nothing per GET or PUT, in every pool. The request is parsed
// from raw bytes, as fasthttp would, so the framing check has headers to
// read.
func TestHandlerAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	value := make([]byte, 500)
	requests := map[string]string{
		"GET": "GET /v0/entity?id=42 HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n",
		"PUT": "PUT /v0/entity?id=42 HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n" + string(value),
	}
	wantCode := map[string]int{"GET": 200, "PUT": 201}
	for _, name := range pool.Variants {
		for _, method := range []string{"GET", "PUT"} {
			t.Run(name+"/"+method, func(t *testing.T) {
				cfg := DefaultConfig()
				cfg.Pool = name
				cfg.Pcfg.Workers = 2
				s, err := New(cfg, fixedStore{value: value}, Options{})
				require.NoError(t, err)
				defer s.pool.Close()

				var req fasthttp.Request
				require.NoError(t, req.Read(bufio.NewReader(strings.NewReader(requests[method]))))
				require.NotEmpty(t, req.Header.RawHeaders(), "parsed as the server would")
				var ctx fasthttp.RequestCtx
				ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
				code := 0
				serve := func() {
					ctx.Response.Reset()
					s.route(&ctx)
					code = ctx.Response.StatusCode()
				}
				for range 100 { // warm up the job pool and the buffers
					serve()
				}
				require.Equal(t, wantCode[method], code)
				assert.Zero(t, testing.AllocsPerRun(1000, serve), "allocations per %s", method)
				assert.Equal(t, wantCode[method], code)
			})
		}
	}
}
