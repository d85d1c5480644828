package record

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// sendSeries is the part of a run's per-interval series that is counted
// by send time, and the backlog: how many requests were sent in each
// interval and how late (the send lag's p99), how many were answered in
// each (by end time), and from those two the requests in flight at each
// interval's end. The collector's goroutine owns it.
//
// It also tells the loader's own lag from the server's: of each
// interval's sends, those that waited for a connection (FlagConnWait)
// count in connWaits, with the attempts that expired waiting for one; the
// others' lag goes into a second histogram (OwnLagP99Us).
//
// The counts cost 40 bytes an interval and are kept for the whole run.
// The lag histograms are kept only while most responses of their
// interval can still come: a request ends at most Config.Timeout after it
// was sent (then it fails), so interval k's histogram closes once the
// responses have been closed through interval k + grace, the timeout
// but at most lagWindow. A record that comes after its histogram closed
// (a request answered more than lagWindow after it was sent) counts in
// the oldest one still open, as the latency intervals do: with short
// intervals a 10 s timeout would otherwise keep hundreds open.
type sendSeries struct {
	interval int64 // ns
	grace    int64 // intervals a send interval's histogram stays open past its own

	ivs   []sendCounts // by interval index
	open  []lagHists   // lag of send intervals next, next+1, …
	next  int64        // index of the first lag interval not closed
	spare []lagHists
}

// sendCounts is one interval's: the requests sent in it, the responses
// that ended in it, the attempts that waited for a connection, and the
// send lag's p99s (µs) once its histograms closed.
type sendCounts struct {
	sent, ended, connWaits int64
	lagP99, ownLagP99      float64
}

// at is interval i's counts.
func (s *sendSeries) at(i int64) *sendCounts {
	s.ivs = grow(s.ivs, i)
	return &s.ivs[i]
}

// lagHists is one send interval's lag histograms: of every send, and of
// the loader's own lag.
type lagHists struct{ all, own *hdrhistogram.Histogram }

// lagGrace is how many intervals past its own a send interval's lag
// histogram stays open: the timeout, at most lagWindow, rounded up, and
// one more for the chunks on their way.
func lagGrace(timeout, interval time.Duration) int64 {
	if timeout <= 0 || timeout > lagWindow {
		timeout = lagWindow
	}
	return int64((timeout+interval-1)/interval) + 1
}

// lagWindow bounds how long a send interval's lag histogram stays open.
const lagWindow = 2 * time.Second

// Send lag histograms: µs from 1 µs to 60 s at 2 significant digits
// (about 20 KB each): a p99 to 1 %, which is all the backlog's judgement
// needs.
const (
	lagMinUs  = 1
	lagMaxUs  = 60_000_000
	lagDigits = 2
)

// grow is s with zero values added until it has an element i.
func grow[T any](s []T, i int64) []T {
	for int64(len(s)) <= i {
		var zero T
		s = append(s, zero)
	}
	return s
}

// extend is series with empty intervals of secs seconds added until it
// holds n.
func extend(series []Interval, n int, secs float64) []Interval {
	for i := len(series); i < n; i++ {
		series = append(series, Interval{StartS: float64(i) * secs, LengthS: secs})
	}
	return series
}

// record counts one request sent at sent and ended at end (ns since the
// start), lag ns late; connWait: it waited for a connection.
func (s *sendSeries) record(sent, end, lag int64, connWait bool) {
	si := max(sent, 0) / s.interval
	s.at(si).sent++
	s.at(max(end, 0)/s.interval).ended++
	h := s.lagFor(si)
	us := min(max(lag/1000, lagMinUs), lagMaxUs)
	_ = h.all.RecordValue(us)
	if connWait {
		s.waited(sent)
		return
	}
	_ = h.own.RecordValue(us)
}

// waited counts an attempt that waited for a connection, in the interval
// holding at (ns since the start): when it was sent, or expired unsent.
func (s *sendSeries) waited(at int64) {
	s.at(max(at, 0)/s.interval).connWaits++
}

// lagFor returns the open lag histograms of send interval i (the oldest
// open ones if i's have closed).
func (s *sendSeries) lagFor(i int64) lagHists {
	j := max(i-s.next, 0)
	for int64(len(s.open)) <= j {
		var h lagHists
		if n := len(s.spare); n > 0 {
			h, s.spare = s.spare[n-1], s.spare[:n-1]
		} else {
			h = lagHists{hdrhistogram.New(lagMinUs, lagMaxUs, lagDigits), hdrhistogram.New(lagMinUs, lagMaxUs, lagDigits)}
		}
		s.open = append(s.open, h)
	}
	return s.open[j]
}

// p99 is h's p99, 0 if h is empty.
func p99(h *hdrhistogram.Histogram) float64 {
	if h.TotalCount() == 0 {
		return 0
	}
	return float64(h.ValueAtQuantile(99))
}

// closeThrough is called once the responses are closed through interval
// k (finalInterval: all of them): it closes the lag histograms that no
// response can reach any more.
func (s *sendSeries) closeThrough(k int64) {
	last := k - s.grace
	if k == finalInterval {
		last = s.next + int64(len(s.open)) - 1
	}
	for s.next <= last {
		iv := s.at(s.next)
		if len(s.open) > 0 {
			h := s.open[0]
			s.open = s.open[1:]
			iv.lagP99, iv.ownLagP99 = p99(h.all), p99(h.own)
			h.all.Reset()
			h.own.Reset()
			s.spare = append(s.spare, h)
		}
		s.next++
	}
}

// fill completes series (one entry per interval, by end time) with what
// is counted by send time and the state at each interval's end; conns are
// the times the run's connections were opened, start the run's start.
// Call it after closeThrough(finalInterval).
func (s *sendSeries) fill(series []Interval, start time.Time, conns []time.Time) []Interval {
	// Attempts may have expired unsent after the last response.
	series = extend(series, len(s.ivs), float64(s.interval)/1e9)
	var inFlight int64
	for i := range series {
		p := &series[i]
		if i < len(s.ivs) {
			c := &s.ivs[i]
			inFlight += c.sent - c.ended
			p.Sent, p.ConnWaits, p.SendLagP99Us, p.OwnLagP99Us = c.sent, c.connWaits, c.lagP99, c.ownLagP99
		}
		p.InFlight = inFlight
		end := start.Add(time.Duration(int64(i+1) * s.interval))
		p.Conns = 0
		for _, at := range conns {
			if !at.After(end) {
				p.Conns++
			}
		}
	}
	return series
}
