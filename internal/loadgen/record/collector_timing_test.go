package record

import (
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// BenchmarkCollectorRecord is what the run's one collector goroutine
// spends per request, whatever the number of loops feeding it: three
// histogram records, the counters, the interval's two histograms, and
// (with results.bin) a 56-byte spool write; in a run of several
// operations (mixed) also the operation's own two histograms and its
// interval's. At 200,000 req/s a cost of c ns per record takes c/50 % of
// one core; the collector falls behind (and the recorders' chunk queue
// fills) only past 1e9/c req/s.
func BenchmarkCollectorRecord(b *testing.B) {
	for _, bc := range []struct {
		name string
		keep bool
		mix  workload.Mix
	}{
		{"histograms", false, workload.Get},
		{"histograms+results.bin", true, workload.Get},
		{"histograms,mixed", false, workload.Mix{Get: 0.9, Put: 0.1}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := config.Default()
			cfg.Out, cfg.KeepResults, cfg.Workload.Mix = b.TempDir(), bc.keep, bc.mix
			c := NewCollector(&cfg)
			c.start = time.Now()
			c.openFiles()
			b.Cleanup(func() {
				if c.spool != nil {
					c.spool.discard()
				}
			})
			const every = 5_000 // ns between intended sends: 200,000 req/s
			rc := Record{Key: 1, bytesOut: 120, bytesIn: 80, Code: 200, op: api.Get}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				rc.Seq = uint64(i)
				rc.Intended = int64(i) * every
				rc.Sent = rc.Intended + int64(i%250)*1_000     // up to a quantum late
				rc.Latency = 20_000 + int64(i*7919%100_000)*10 // 20 µs to 1 ms
				if bc.mix.Put > 0 {
					rc.op, rc.Code = api.Get, 200
					if i%10 == 0 {
						rc.op, rc.Code = api.Put, 201
					}
				}
				c.record(&rc)
				if i%4096 == 0 {
					c.closeThrough(rc.End()/c.interval - 2) // as the ticker does
				}
			}
		})
	}
}
