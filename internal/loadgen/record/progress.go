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
// until the returned stop is called; never where progress is nil or
// interval is 0.
func ReportProgress(interval time.Duration, snapshot func() Progress, progress func(Progress)) (stop func()) {
	if progress == nil || interval <= 0 {
		return func() {}
	}
	var last Progress
	return Every(interval, func() {
		p := snapshot()
		p.finish(last)
		progress(p)
		last = p
	})
}

// Every calls f every d, from a goroutine of its own, until the returned
// stop is called, which returns once f will not be called again.
func Every(d time.Duration, f func()) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
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
	}()
	return func() {
		close(done)
		<-exited
	}
}
