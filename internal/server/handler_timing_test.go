package server

import (
	"net"
	"strconv"
	"testing"

	"github.com/kvpool/kvpool/internal/pool"
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
		s, err := Open(cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		value := make([]byte, 500)
		for i := range keys {
			if err := s.store.Put([]byte(strconv.Itoa(i)), value); err != nil {
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
		s.store.Close()
	}
}
