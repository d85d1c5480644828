package saturate

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/ratio"
)

// Step is one measured run of a search.
type Step struct {
	Phase  string        `json:"phase"` // "ramp", "bisect" or "validate"
	Asked  float64       `json:"asked_rate"`
	Length time.Duration `json:"length_ns"` // the schedule's length, warm-up included
	// Whole-step figures, for the curve: they do not decide (Seconds do).
	Sent      float64       `json:"sent_rate"`     // from the start to the last send
	Achieved  float64       `json:"achieved_rate"` // answered, from the start to the last answer
	P50       time.Duration `json:"p50_corrected_ns"`
	P99       time.Duration `json:"p99_corrected_ns"`
	P99Uncorr time.Duration `json:"p99_uncorrected_ns"`
	Errors    int64         `json:"errors"`
	ErrorRate float64       `json:"error_rate"`
	Unsent    int64         `json:"unsent,omitempty"` // scheduled requests never sent (the drain time ran out)
	CPUPerReq time.Duration `json:"loader_cpu_per_request_ns"`
	// Each side's CPU use (Loader, Server) as saturate.json spells it: the
	// loader's CPU time over the step divided by elapsed × LoaderCPUs,
	// the server's between the readings that bracket the step divided by
	// that time × ServerCPUs (negative: unknown: no Config.ServerCPU, or a
	// reading failed).
	LoaderCPUShare  float64       `json:"loader_cpu_share"`
	LoaderCPUs      int           `json:"loader_cpus"`
	ServerCPUShare  float64       `json:"server_cpu_share"`
	ServerCPUs      int           `json:"server_cpus,omitempty"`
	ServerCPUPerReq time.Duration `json:"server_cpu_per_request_ns,omitempty"` // 0: unknown
	Shared          bool          `json:"shared_cpus,omitempty"`               // the loader and the server ran on the same CPUs
	// The loader's own evidence (Bound, LoaderEvidence): whether its
	// engine told its own send lag apart from waits for a connection (the
	// fast engine's event loop), the judged intervals its own sends were
	// late in (p99 over LagTolerance) and the highest such p99, the
	// attempts that waited for a connection (record.FlagConnWait), and
	// the connections at most against their cap (-max-conns; 0: unknown).
	OwnLagKnown  bool          `json:"own_lag_known,omitempty"`
	OwnLate      int           `json:"own_late_intervals"`
	OwnLagP99    time.Duration `json:"own_lag_p99_ns"`
	LagTolerance time.Duration `json:"lag_tolerance_ns"`
	ConnWaits    int64         `json:"conn_waits"`
	ConnsPeak    int           `json:"conns_peak"`
	MaxConns     int           `json:"max_conns"`

	// Seconds is the step's per-interval series, each interval with its
	// verdict; Judged is how many were judged (all but the warm-up), OK
	// how many of those met the SLO and the error limit.
	Seconds []Second `json:"seconds"`
	Judged  int      `json:"judged_intervals"`
	OK      int      `json:"ok_intervals"`
	Backlog string   `json:"backlog,omitempty"` // how the backlog grew (BacklogGrew); "": it did not

	Pass bool `json:"pass"`
	// FellBehind: the step failed by its backlog or unsent requests
	// alone, its intervals within the SLO and the error limit (Bound).
	FellBehind bool   `json:"fell_behind"`
	Verdict    string `json:"verdict"` // "ok" or why the step failed
	// LoaderBound marks a failure that was the loader's, not the
	// server's; BoundWhy gives the figures behind either reading of a
	// failure (Bound).
	LoaderBound bool   `json:"loader_bound"`
	BoundWhy    string `json:"bound_why,omitempty"`
	// Retry marks a re-test: the run of a rate whose run just before, at
	// the same rate and phase, failed.
	Retry bool          `json:"retry,omitempty"`
	Left  time.Duration `json:"-"` // the least time the search still needs after this step
}

// Loader is the loader's CPU use over s.
func (s *Step) Loader() cpuset.Use { return cpuset.Use{Share: s.LoaderCPUShare, CPUs: s.LoaderCPUs} }

// Server is the server's CPU use over s.
func (s *Step) Server() cpuset.Use { return cpuset.Use{Share: s.ServerCPUShare, CPUs: s.ServerCPUs} }

// SetCPU sets each side's CPU use over s.
func (s *Step) SetCPU(loader, server cpuset.Use) {
	s.LoaderCPUShare, s.LoaderCPUs, s.ServerCPUShare, s.ServerCPUs = loader.Share, loader.CPUs, server.Share, server.CPUs
}

// Second is one interval of a step (a second, or Config.Interval).
// Latencies and Answered are of the responses that ended in it, Sent and
// SendLagP99 of the requests sent in it, InFlight and Conns at its end,
// the CPU shares over it (negative: unknown).
type Second struct {
	T          float64       `json:"t_s"` // its start, seconds since the step's
	Length     float64       `json:"length_s"`
	Sent       int64         `json:"sent"`
	Answered   int64         `json:"answered"`
	Rate       float64       `json:"rate"` // answered per second
	Errors     int64         `json:"errors"`
	P50        time.Duration `json:"p50_corrected_ns"`
	P99        time.Duration `json:"p99_corrected_ns"`
	SendLagP99 time.Duration `json:"send_lag_p99_ns"`
	// OwnLagP99 is the p99 send lag of the requests sent in it that
	// found a connection free (the loader's own lag), ConnWaits the
	// attempts that waited for one, Reconnects the connections dialled
	// again in it (record.Interval).
	OwnLagP99      time.Duration `json:"own_lag_p99_ns"`
	ConnWaits      int64         `json:"conn_waits"`
	Reconnects     int64         `json:"reconnects"`
	InFlight       int64         `json:"in_flight"`
	Conns          int           `json:"conns"`
	LoaderCPUShare float64       `json:"loader_cpu_share"`
	ServerCPUShare float64       `json:"server_cpu_share"`
	// Verdict: "warm-up", "ok", "p99 > SLO", "errors ≥ limit",
	// "stalled" (nothing answered with requests in flight), or "drain"
	// (after the schedule: judged with the last interval).
	Verdict string `json:"verdict"`
}

// Interval verdicts.
const (
	verdictWarmUp  = "warm-up"
	verdictOK      = "ok"
	verdictStalled = "stalled"
	verdictDrain   = "drain"
)

// SecondsText is the per-interval verdict as the curve shows it: "9/10 s
// ok" (or "9/10 ok" where the intervals are not seconds).
func (s *Step) SecondsText() string {
	if s.Judged == 0 {
		return "-"
	}
	unit := ""
	if len(s.Seconds) > 0 && math.Abs(s.Seconds[0].Length-1) < 1e-9 {
		unit = " s"
	}
	return fmt.Sprintf("%d/%d%s ok", s.OK, s.Judged, unit)
}

// allowedBad is how many of n judged intervals may fail: n × (1 −
// HoldShare), rounded down (1 of 10, 2 of 29).
func allowedBad(n int) int {
	return int(float64(n)*(1-HoldShare) + 1e-9)
}

// BacklogTolerance is how much the backlog may grow over a step before it
// counts as growing: a tenth of the SLO (a backlog growing that fast would
// take the p99 past the SLO within ten such steps), at least 1 ms.
func (sc *Config) BacklogTolerance() time.Duration {
	return LagTolerance(sc.SLO)
}

// judge decides s from its intervals (the package comment's rule) and
// sets each interval's verdict, s.Judged, s.OK, s.Backlog, s.Pass,
// s.FellBehind and s.Verdict. The intervals are sc.Interval() long; the
// schedule's m = Length/interval intervals (rounded down) are the step,
// the first its warm-up; any after them hold the drain, whose responses
// are judged with the last (their p99 taken as the larger of the two, a
// bound on the p99 of both together). An interval in which nothing was
// answered counts as met unless requests were in flight at its end (the
// server answered nothing while they waited: stalled).
func (sc *Config) judge(s *Step) {
	iv := sc.Interval()
	m := max(int(s.Length/iv), 2)
	for len(s.Seconds) < m { // the series ends with the last response
		k := len(s.Seconds)
		s.Seconds = append(s.Seconds, Second{T: float64(k) * iv.Seconds(), Length: iv.Seconds(), LoaderCPUShare: -1, ServerCPUShare: -1})
	}
	var p99Bad, errBad, stalled int
	p99Text, errText := fmt.Sprintf("p99 > %v", sc.SLO), fmt.Sprintf("errors ≥ %g%%", 100*sc.MaxErrorRate)
	for k := range s.Seconds {
		p := &s.Seconds[k]
		switch {
		case k == 0:
			p.Verdict = verdictWarmUp
			continue
		case k >= m:
			p.Verdict = verdictDrain
			continue
		}
		answered, errors, p99 := p.Answered, p.Errors, p.P99
		if k == m-1 {
			for _, d := range s.Seconds[m:] {
				answered += d.Answered
				errors += d.Errors
				p99 = max(p99, d.P99)
			}
		}
		switch {
		case answered == 0 && p.InFlight > 0:
			p.Verdict = verdictStalled
			stalled++
		case answered == 0:
			p.Verdict = verdictOK
		case p99 > sc.SLO:
			p.Verdict = p99Text
			p99Bad++
		case float64(errors) >= sc.MaxErrorRate*float64(answered):
			p.Verdict = errText
			errBad++
		default:
			p.Verdict = verdictOK
		}
	}
	s.Judged = m - 1
	s.LagTolerance = sc.BacklogTolerance()
	s.OwnLate, s.OwnLagP99 = ownLate(s.Seconds[1:m], s.LagTolerance)
	bad := p99Bad + errBad + stalled
	s.OK = s.Judged - bad
	s.Backlog = sc.BacklogGrew(s.Seconds[1:m], s.Asked)
	s.Pass, s.FellBehind = false, false
	switch {
	case bad > allowedBad(s.Judged):
		var why []string
		for _, c := range []struct {
			n    int
			what string
		}{{p99Bad, p99Text}, {errBad, errText}, {stalled, verdictStalled}} {
			if c.n > 0 {
				why = append(why, fmt.Sprintf("%s in %d", c.what, c.n))
			}
		}
		s.Verdict = fmt.Sprintf("%s of %d", strings.Join(why, ", "), s.Judged)
	case s.Backlog != "":
		s.Verdict, s.FellBehind = s.Backlog, true
	case s.Unsent > 0:
		s.Verdict, s.FellBehind = fmt.Sprintf("fell behind: %d never sent", s.Unsent), true
	default:
		s.Pass, s.Verdict = true, verdictOK
	}
}

// BacklogGrew says how the backlog grew over judged (a step's judged
// intervals, in order, at the asked rate), or "" if it did not. The
// backlog is two series: the requests in flight at each interval's end,
// in time (InFlight ÷ asked: how long the loader takes to send that
// many), and the send lag's p99 (once the server holds every connection,
// the backlog waits in the loader). Either grows when the median of its
// later half (the last h = n/2 intervals) exceeds the median of the h
// intervals before by more than the tolerance (SLO/10, at least 1 ms).
// Medians, so that one stalled interval in either half moves neither; a
// server falling behind by a share g of the rate grows both by about
// g × h seconds (1 % over the server's rate: 50 ms over five seconds).
// Fewer than 2 intervals cannot show growth.
func (sc *Config) BacklogGrew(judged []Second, asked float64) string {
	h := len(judged) / 2
	if h < 1 || asked <= 0 {
		return ""
	}
	tol := sc.BacklogTolerance()
	earlier, later := judged[len(judged)-2*h:len(judged)-h], judged[len(judged)-h:]
	inFlight := func(p Second) time.Duration { return time.Duration(float64(p.InFlight) / asked * float64(time.Second)) }
	lag := func(p Second) time.Duration { return p.SendLagP99 }
	for _, c := range []struct {
		what string
		of   func(Second) time.Duration
	}{{"in flight", inFlight}, {"send lag p99", lag}} {
		a, b := median(earlier, c.of), median(later, c.of)
		if b-a > tol {
			return fmt.Sprintf("backlog grew: %s %s → %s (median of the last %d intervals against the %d before)",
				c.what, shortDuration(a), shortDuration(b), h, h)
		}
	}
	return ""
}

func median(ps []Second, of func(Second) time.Duration) time.Duration {
	v := make([]float64, len(ps))
	for i, p := range ps {
		v[i] = float64(of(p))
	}
	return time.Duration(ratio.Median(v))
}

// shortDuration is d to three significant digits: "1.23ms".
func shortDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}
