package limit

import (
	"testing"
	"time"
)

// BenchmarkSample is the request path's cost: every finished request
// samples, from every CPU at once. Each goroutine's samples end 1 µs
// apart on a clock of its own, so windows (10 ms) close every ~10,000
// samples per goroutine, as at ~100k requests/s per CPU.
func BenchmarkSample(b *testing.B) {
	for _, algorithm := range Algorithms {
		b.Run(algorithm, func(b *testing.B) {
			l, err := New(Config{Algorithm: algorithm, Min: 1, Max: 1000, Initial: 100, Now: func() int64 { return 0 }})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				at, i := int64(0), 0
				for pb.Next() {
					at += int64(time.Microsecond)
					i++
					l.Sample(at, time.Duration(1+i&3)*base, 50+i&63, false)
				}
			})
		})
	}
}

// BenchmarkCurrent is the admission path's read.
func BenchmarkCurrent(b *testing.B) {
	l, err := New(Config{Algorithm: "gradient2"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		n := 0
		for pb.Next() {
			n += l.Current()
		}
		_ = n
	})
}

// BenchmarkWindowClose is what closing a window costs its closer: every
// sample here ends one (WindowSamples 1), so each op is a Sample that
// swaps the histogram and runs Gradient2's update.
func BenchmarkWindowClose(b *testing.B) {
	l, err := New(Config{Algorithm: "gradient2", Min: 1, Max: 1000, Initial: 100, WindowSamples: 1, Window: time.Microsecond, Now: func() int64 { return 0 }})
	if err != nil {
		b.Fatal(err)
	}
	w := l.(*windowed)
	b.ReportAllocs()
	at := int64(0)
	for i := 0; b.Loop(); i++ {
		at += int64(time.Millisecond)
		l.Sample(at, time.Duration(1+i&3)*base, 100, false)
	}
	if w.windows < uint64(b.N) {
		b.Fatalf("%d windows closed in %d samples", w.windows, b.N)
	}
}
