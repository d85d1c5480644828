package schedule

import "time"

// PacerMaxSleep is the longest the pacer sleeps at once, so that it notices
// cancellation and the end of the drain time promptly.
const PacerMaxSleep = 50 * time.Millisecond

// Pacer decides when the open model's sender wakes up. It does not send:
// at each wake-up it calls dispatch, which sends every request due by then
// and returns the first request still unsent. Requests are taken a quantum
// at a time: the quantum that starts when that request falls due, and the
// next wake-up is when the last request of it falls due, so that one
// wake-up sends them all. A request is thus sent at most a quantum (plus
// the sleeper's own lateness) after it is due, and never before: dispatch
// sends only what is due at the time it is given.
//
// Waking for the last request of the quantum rather than a quantum after
// the last wake-up sends as many requests per wake-up as the quantum
// holds, whatever the phase of the schedule: at 5,000 req/s and 250 µs,
// two (the first 200 µs late, the second on time) where a wake-up per
// quantum boundary sends 1.25 for the same lag. Below one request per
// quantum each request gets its own wake-up, on time.
//
// Time is nanoseconds since the start of the run, read from now; sleep
// blocks for a duration. Tests give both a fake clock.
type Pacer struct {
	Sched   Schedule
	Planned uint64 // requests in the run
	Quantum time.Duration
	Now     func() int64
	Sleep   func(time.Duration)
}

// Run calls dispatch(now) at each wake-up until every request is sent or
// stop(now) says to end early.
func (p *Pacer) Run(stop func(now int64) bool, dispatch func(now int64) (next uint64)) {
	wakeAt := p.Now()
	for {
		now := p.Now()
		if stop(now) {
			return
		}
		next := dispatch(now)
		if next >= p.Planned {
			return
		}
		wakeAt = p.NextWake(p.Anchor(wakeAt, now), next)
		if d := time.Duration(wakeAt - p.Now()); d > 0 {
			p.Sleep(min(d, PacerMaxSleep))
		}
	}
}

// Anchor is where the quantum of a wake-up meant for wakeAt that came at
// now starts: at wakeAt, so that the wake-up's lateness (tens of µs on a
// VM) does not stretch this quantum and every one after it, which would
// make each request wait longer than a quantum; but at now if the
// wake-up came a whole quantum late (a stall: the quanta missed are not
// made up back to back, as this wake-up sent their requests) or early
// (a sleep cut short).
func (p *Pacer) Anchor(wakeAt, now int64) int64 {
	if now < wakeAt || now-wakeAt >= int64(p.Quantum) {
		return now
	}
	return wakeAt
}

// NextWake is when to wake up after one at now left request next the
// first unsent: when the last request due within a quantum of next's own
// time falls due (next itself, when it is alone in its quantum). When
// next is already due (every connection was busy), one quantum on, and
// no sooner than DefaultQuantum, so that a loop waking per request does
// not spin while it waits for a connection; senders that finish
// meanwhile send it themselves.
func (p *Pacer) NextWake(now int64, next uint64) int64 {
	at := p.Sched.At(next)
	if at <= now {
		return now + int64(max(p.Quantum, DefaultQuantum))
	}
	last := max(p.Sched.DueBy(at+int64(p.Quantum)-1), next+1) - 1
	if p.Planned > 0 {
		last = min(last, p.Planned-1)
	}
	return p.Sched.At(max(last, next))
}
