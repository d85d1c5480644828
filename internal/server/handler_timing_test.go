package server

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/kvpool/kvpool/internal/pool"
	"github.com/kvpool/kvpool/internal/store"
	"github.com/valyala/fasthttp"
)

// BenchmarkHandler measures the request path without sockets: parse the
// query, copy key and body into a job, run it through the pool and the
// store, write the response. Allocations per op are the point: once warm
// the path should allocate nothing of its own.
//
//	go test -run '^$' -bench BenchmarkHandler -benchmem ./internal/server/
func BenchmarkHandler(b *testing.B) {
	const keys = 10000
	for _, name := range pool.Variants {
		cfg := DefaultConfig()
		cfg.DataDir = b.TempDir()
		cfg.Pool = name
		cfg.CacheMiB = 64
		st, err := store.Open(store.Options{Dir: cfg.DataDir, CacheBytes: int64(cfg.CacheMiB) << 20})
		if err != nil {
			b.Fatal(err)
		}
		s, err := New(resolved(b, cfg), st, Options{})
		if err != nil {
			b.Fatal(err)
		}
		value := make([]byte, 500)
		for i := range keys {
			if err := st.Put(0, []byte(strconv.Itoa(i)), value); err != nil {
				b.Fatal(err)
			}
		}
		uris := make([]string, keys)
		for i := range uris {
			uris[i] = "/v0/entity?id=" + strconv.Itoa(i)
		}
		for _, method := range []string{"GET", "PUT"} {
			b.Run(name+"/"+method, func(b *testing.B) {
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					var req fasthttp.Request
					var ctx fasthttp.RequestCtx
					req.Header.SetMethod(method)
					if method == "PUT" {
						req.SetBody(value)
					}
					ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
					i := 0
					for pb.Next() {
						i = (i + 7919) % keys
						ctx.Request.SetRequestURI(uris[i])
						ctx.Response.Reset()
						s.route(&ctx)
						if code := ctx.Response.StatusCode(); code >= 300 {
							b.Fatalf("%s %s: status %d", method, uris[i], code)
						}
					}
				})
			})
		}
		s.pool.Close()
		st.Close()
	}
}

// BenchmarkFramingProblem is the framing check's cost per request on the
// headers a load generator sends with a PUT.
func BenchmarkFramingProblem(b *testing.B) {
	var req fasthttp.Request
	raw := "PUT /v0/entity?id=123456 HTTP/1.1\r\nHost: 127.0.0.1:19234\r\nUser-Agent: kvpool-loadtest\r\nContent-Type: application/octet-stream\r\nContent-Length: 0\r\n\r\n"
	if err := req.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if p := framingProblem(&req.Header); p != "" {
			b.Fatal(p)
		}
	}
}
