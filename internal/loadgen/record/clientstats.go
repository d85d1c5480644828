package record

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// clientStats counts what a run's clients did (Config.Client), per
// interval and in all: the attempts by when they were sent (first tries,
// retries) or refused (throttled), and by when they ended (useful
// answers, timeouts, 503s, requests given up). The collector's goroutine
// owns it; it is kept only for runs with a client model, so that a
// classic run's series stay as they were.
type clientStats struct {
	interval int64 // ns
	ivs      []clientCounts
	total    clientCounts
}

// clientCounts is one interval's (or the run's) counts.
type clientCounts struct {
	firstTries, retries, throttled, unsentRetries, expired int64
	useful, timeouts, shed, gaveUp                         int64
	// usefulLat holds the useful answers' latency from their send (ns);
	// made with the interval's first one.
	usefulLat *hdrhistogram.Histogram
}

// at is the counts of the interval holding t (ns since the start).
func (s *clientStats) at(t int64) *clientCounts {
	i := int(max(t, 0) / s.interval)
	for len(s.ivs) <= i {
		s.ivs = append(s.ivs, clientCounts{})
	}
	return &s.ivs[i]
}

// record counts rc, whose failure (if any) is its errIdx.
func (s *clientStats) record(rc *Record) {
	if rc.Flags&FlagNotSent != 0 {
		iv := s.at(rc.Intended)
		switch {
		case rc.Flags&FlagRunEnded != 0:
			iv.unsentRetries++
			s.total.unsentRetries++
		case rc.Flags&FlagTimeout != 0:
			iv = s.at(rc.End())
			iv.timeouts++
			s.total.timeouts++
			s.total.expired++
		default:
			iv.throttled++
			s.total.throttled++
		}
		if rc.Flags&FlagGaveUp != 0 {
			iv.gaveUp++
			s.total.gaveUp++
		}
		return
	}
	sent := s.at(rc.Sent)
	if rc.Attempt == 0 {
		sent.firstTries++
		s.total.firstTries++
	} else {
		sent.retries++
		s.total.retries++
	}
	end := s.at(rc.End())
	switch {
	case rc.errIdx == 0:
		end.useful++
		s.total.useful++
		if end.usefulLat == nil {
			end.usefulLat = NewIntervalHistogram()
		}
		_ = end.usefulLat.RecordValue(clampNs(rc.Latency))
	case rc.Flags&FlagTimeout != 0:
		end.timeouts++
		s.total.timeouts++
	case rc.Code == 503:
		end.shed++
		s.total.shed++
	}
	if rc.Flags&FlagGaveUp != 0 {
		end.gaveUp++
		s.total.gaveUp++
	}
}

// fill copies the per-interval counts into the run's series (by index:
// both are cut at multiples of the interval from the start), adding
// intervals where the clients' last events came after the last response.
func (s *clientStats) fill(series []Interval) []Interval {
	secs := float64(s.interval) / 1e9
	for i := range s.ivs {
		if i >= len(series) {
			series = append(series, Interval{StartS: float64(i) * secs, LengthS: secs})
		}
		iv, c := &series[i], &s.ivs[i]
		iv.FirstTries, iv.Retries, iv.Throttled = c.firstTries, c.retries, c.throttled
		iv.Useful, iv.Timeouts, iv.Shed, iv.GaveUp = c.useful, c.timeouts, c.shed, c.gaveUp
		if c.usefulLat != nil {
			iv.UsefulP99Us = float64(c.usefulLat.ValueAtQuantile(99)) / 1e3
		}
	}
	return series
}

// ClientTotals is what a run's clients did in all (Config.Client): zero
// for a run without a client model.
type ClientTotals struct {
	// FirstTries and Retries are the attempts sent; Throttled the ones
	// the client's throttle refused, never sent; UnsentRetries the
	// retries still waiting for their backoff when the run ended.
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
	// Shed the 503s; GaveUp the requests whose client gave up for good.
	Useful   int64 `json:"useful"`
	Timeouts int64 `json:"timeouts"`
	Shed     int64 `json:"shed"`
	GaveUp   int64 `json:"gave_up"`
}

// Add adds o's counts to t (the shards of one run).
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
func (t ClientTotals) Amplification() float64 {
	if t.FirstTries == 0 {
		return 0
	}
	return float64(t.FirstTries+t.Retries) / float64(t.FirstTries)
}

func (s *clientStats) totals() ClientTotals {
	t := s.total
	return ClientTotals{FirstTries: t.firstTries, Retries: t.retries, Throttled: t.throttled, UnsentRetries: t.unsentRetries, Expired: t.expired,
		Useful: t.useful, Timeouts: t.timeouts, Shed: t.shed, GaveUp: t.gaveUp}
}
