package loadgen

import "time"

// pacerMaxSleep is the longest the pacer sleeps at once, so that it notices
// cancellation and the end of the drain time promptly.
const pacerMaxSleep = 50 * time.Millisecond

// pacer decides when the open model's sender wakes up. It does not send:
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
type pacer struct {
	sched   schedule
	planned uint64 // requests in the run
	quantum time.Duration
	now     func() int64
	sleep   func(time.Duration)
}

// run wakes up until every request is sent or stop(now) says to end
// early, calling dispatch(now) at each wake-up.
func (p *pacer) run(stop func(now int64) bool, dispatch func(now int64) (next uint64)) {
	wakeAt := p.now()
	for {
		now := p.now()
		if stop(now) {
			return
		}
		next := dispatch(now)
		if next >= p.planned {
			return
		}
		wakeAt = p.nextWake(p.anchor(wakeAt, now), next)
		if d := time.Duration(wakeAt - p.now()); d > 0 {
			p.sleep(min(d, pacerMaxSleep))
		}
	}
}

// anchor is where the quantum of a wake-up meant for wakeAt that came at
// now starts: at wakeAt, so that the wake-up's lateness (tens of µs on a
// VM) does not stretch this quantum and every one after it, which would
// make each request wait longer than a quantum; but at now if the
// wake-up came a whole quantum late (a stall: the quanta missed are not
// made up back to back, as this wake-up sent their requests) or early
// (a sleep cut short).
func (p *pacer) anchor(wakeAt, now int64) int64 {
	if now < wakeAt || now-wakeAt >= int64(p.quantum) {
		return now
	}
	return wakeAt
}

// nextWake is when to wake up after one at now left request next the
// first unsent: when the last request due within a quantum of next's own
// time falls due (next itself, when it is alone in its quantum). When
// next is already due (every connection was busy), one quantum on, and
// no sooner than DefaultQuantum, so that a loop waking per request does
// not spin while it waits for a connection; senders that finish
// meanwhile send it themselves.
func (p *pacer) nextWake(now int64, next uint64) int64 {
	at := p.sched.At(next)
	if at <= now {
		return now + int64(max(p.quantum, DefaultQuantum))
	}
	last := max(p.sched.DueBy(at+int64(p.quantum)-1), next+1) - 1
	if p.planned > 0 {
		last = min(last, p.planned-1)
	}
	return p.sched.At(max(last, next))
}
