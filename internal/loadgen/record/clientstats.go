package record

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// clientStats counts what a run's clients did (Config.Client), per
// interval: the attempts by when they were sent (first tries, retries) or
// refused (throttled), and by when they ended (useful answers, timeouts,
// 503s, requests given up). The run's totals are the intervals' sums. The
// collector's goroutine owns it; it is kept only for runs with a client
// model, so that a classic run's series stay as they were.
type clientStats struct {
	interval int64 // ns
	ivs      []clientCounts
}

// clientCounts is one interval's counts.
type clientCounts struct {
	ClientTotals
	// usefulLat holds the useful answers' latency from their send (ns);
	// made with the interval's first one.
	usefulLat *hdrhistogram.Histogram
}

// at is the counts of the interval holding t (ns since the start).
func (s *clientStats) at(t int64) *clientCounts {
	i := max(t, 0) / s.interval
	s.ivs = grow(s.ivs, i)
	return &s.ivs[i]
}

// record counts rc, whose failure (if any) is its errIdx.
func (s *clientStats) record(rc *Record) {
	if rc.Flags&FlagNotSent != 0 {
		iv := s.at(rc.Intended)
		switch {
		case rc.Flags&FlagRunEnded != 0:
			iv.UnsentRetries++
		case rc.Flags&FlagTimeout != 0:
			iv = s.at(rc.End())
			iv.Timeouts++
			iv.Expired++
		default:
			iv.Throttled++
		}
		if rc.Flags&FlagGaveUp != 0 {
			iv.GaveUp++
		}
		return
	}
	sent := s.at(rc.Sent)
	if rc.Attempt == 0 {
		sent.FirstTries++
	} else {
		sent.Retries++
	}
	end := s.at(rc.End())
	switch {
	case rc.errIdx == 0:
		end.Useful++
		if end.usefulLat == nil {
			end.usefulLat = NewIntervalHistogram()
		}
		_ = end.usefulLat.RecordValue(clampNs(rc.Latency))
	case rc.Flags&FlagTimeout != 0:
		end.Timeouts++
	case rc.Code == 503:
		end.Shed++
	}
	if rc.Flags&FlagGaveUp != 0 {
		end.GaveUp++
	}
}

// fill copies the per-interval counts into the run's series (by index:
// both are cut at multiples of the interval from the start), adding
// intervals where the clients' last events came after the last response,
// and returns the run's totals, the intervals' sums, and the p99 of every
// useful answer's latency from its send over the whole run (0: none): the
// intervals' histograms merged, never a mean of their p99s.
func (s *clientStats) fill(series []Interval) ([]Interval, ClientTotals, time.Duration) {
	series = extend(series, len(s.ivs), float64(s.interval)/1e9)
	var t ClientTotals
	useful := NewIntervalHistogram()
	for i := range s.ivs {
		iv, c := &series[i], &s.ivs[i]
		iv.FirstTries, iv.Retries, iv.Throttled = c.FirstTries, c.Retries, c.Throttled
		iv.Useful, iv.Timeouts, iv.Shed, iv.GaveUp = c.Useful, c.Timeouts, c.Shed, c.GaveUp
		t.Add(c.ClientTotals)
		if c.usefulLat != nil {
			iv.UsefulP99Us = float64(c.usefulLat.ValueAtQuantile(99)) / 1e3
			useful.Merge(c.usefulLat)
		}
	}
	return series, t, time.Duration(useful.ValueAtQuantile(99)) // 0 where empty
}

// ClientTotals is what a run's clients did in all (Config.Client): zero
// for a run without a client model.
type ClientTotals struct {
	// FirstTries and Retries are the attempts sent; Throttled the ones
	// the client's throttle refused; UnsentRetries the retries still
	// waiting for their backoff when the run ended.
	FirstTries    int64 `json:"first_tries"`
	Retries       int64 `json:"retries"`
	Throttled     int64 `json:"throttled"`
	UnsentRetries int64 `json:"unsent_retries,omitempty"`
	// Expired are the attempts whose client's timeout ran out before
	// the loader had a connection free to send them (all -max-conns
	// busy, as a client's connection pool): counted in Timeouts too.
	Expired int64 `json:"expired,omitempty"`
	// Useful are the answers (2xx, 404 on GET) to a client still
	// waiting; Timeouts the attempts their client gave up waiting for;
	// Shed the 503s; GaveUp the requests whose client gave up for good
	// (its last attempt failed, or the budget or throttle refused a retry).
	Useful   int64 `json:"useful"`
	Timeouts int64 `json:"timeouts"`
	Shed     int64 `json:"shed"`
	GaveUp   int64 `json:"gave_up"`
}

// Add adds o's counts to t.
func (t *ClientTotals) Add(o ClientTotals) {
	t.FirstTries += o.FirstTries
	t.Retries += o.Retries
	t.Throttled += o.Throttled
	t.UnsentRetries += o.UnsentRetries
	t.Expired += o.Expired
	t.Useful += o.Useful
	t.Timeouts += o.Timeouts
	t.Shed += o.Shed
	t.GaveUp += o.GaveUp
}

// Amplification is the attempts sent per first try (1: no retries).
func (t ClientTotals) Amplification() float64 { return ratio(t.FirstTries+t.Retries, t.FirstTries) }
