package record

import (
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

// ReportProgress calls progress with snapshot's Progress every interval
// until done is closed.
func ReportProgress(done <-chan struct{}, interval time.Duration, snapshot func() Progress, progress func(Progress)) {
	var last Progress
	Every(done, interval, func() {
		p := snapshot()
		p.finish(last)
		progress(p)
		last = p
	})
}

// Every calls f every d until done is closed.
func Every(done <-chan struct{}, d time.Duration, f func()) {
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
