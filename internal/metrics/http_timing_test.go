package metrics

import (
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/prometheus/client_golang/prometheus"
)

// BenchmarkHTTPObserve is what the request metrics cost a GET answered
// 200 (its counter and its duration histogram), each goroutine of
// RunParallel observing without pause: run it with -cpu 1,2,4,8 to see
// what CPUs updating the same counters cost each other, an upper bound on
// what it costs a server whose requests also do other work.
//
//	go test -run '^$' -bench HTTPObserve -cpu 1,2,4,8 ./internal/metrics/
func BenchmarkHTTPObserve(b *testing.B) {
	h := NewHTTP(prometheus.NewRegistry())
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h.Observe(api.Get, 200, 15*time.Microsecond)
		}
	})
}
