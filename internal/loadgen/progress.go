package loadgen

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/kvpool/kvpool/internal/latency"
)

// Progress is a snapshot of a running run, taken every Config.Progress.
type Progress struct {
	Elapsed   time.Duration
	Asked     float64 // requests per second asked for; 0 = closed loop
	Planned   uint64  // requests in the whole run; math.MaxUint64 = unbounded
	Completed int64   // responses (and failures) so far
	Errors    int64
	Conns     int
	// Rate is completions per second since the previous snapshot.
	Rate float64
	// P99 is the corrected p99 so far (within 6.25 %).
	P99 time.Duration

	live latency.LiveSnapshot
}

func (p *Progress) finish(prev Progress) {
	p.Completed = p.live.Count()
	p.P99 = time.Duration(p.live.Quantile(0.99)) * time.Microsecond
	if dt := (p.Elapsed - prev.Elapsed).Seconds(); dt > 0 {
		p.Rate = float64(p.Completed-prev.Completed) / dt
	}
}

// reportProgress calls progress with snapshot's Progress every interval
// until done is closed.
func reportProgress(done <-chan struct{}, interval time.Duration, snapshot func() Progress, progress func(Progress)) {
	var last Progress
	every(done, interval, func() {
		p := snapshot()
		p.finish(last)
		progress(p)
		last = p
	})
}

// every calls f every d until done is closed.
func every(done <-chan struct{}, d time.Duration, f func()) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			f()
		}
	}
}

// PrintProgress returns a progress callback that writes one line per
// snapshot to w, such as
//
//	[   5s] 10001 req/s (asked 10000)  done 50003  p99 1.23ms  errors 0  conns 64
func PrintProgress(w io.Writer) func(Progress) {
	return func(p Progress) {
		asked := "closed loop"
		if p.Asked > 0 {
			asked = fmt.Sprintf("asked %.0f", p.Asked)
		}
		done := fmt.Sprintf("%d", p.Completed)
		if p.Planned != 0 && p.Planned != math.MaxUint64 {
			done += fmt.Sprintf("/%d", p.Planned)
		}
		fmt.Fprintf(w, "[%5.0fs] %.0f req/s (%s)  done %s  p99 %s  errors %d  conns %d\n",
			p.Elapsed.Seconds(), p.Rate, asked, done, latency.FormatDuration(p.P99), p.Errors, p.Conns)
	}
}
