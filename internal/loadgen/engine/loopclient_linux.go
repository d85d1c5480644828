//go:build linux

package engine

import (
	"errors"
	"time"

	"github.com/kvpool/kvpool/internal/loadgen/client"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

// The event loop's side of a client model (Config.Client).

// decide asks the client what becomes of o's request now that the attempt
// o has ended (retryAfter: the 503's Retry-After): another attempt, queued
// for its time, or the end of it, marked given up where it failed.
func (l *evloop) decide(o *record.Outcome, retryAfter time.Duration) {
	out := client.OK
	switch {
	case errors.Is(o.Err, record.ErrClientTimeout) || errors.Is(o.Err, record.ErrTimeout):
		out = client.Timeout
		o.Flags |= record.FlagTimeout
	case o.Err != nil:
		out = client.Error
	case o.Code == 503:
		out = client.Shed
	}
	// Every outcome goes to the client: its throttle counts the accepts.
	at, again, _ := l.client.Done(o.End, int(o.Attempt), out, retryAfter)
	if out == client.OK {
		return
	}
	if !again || o.Attempt == maxAttempt {
		o.Flags |= record.FlagGaveUp
		return
	}
	retry := attempt{at: max(at, o.End), seq: o.Seq, key: o.Key, op: o.Op, n: o.Attempt + 1}
	if l.stopped { // the run is over: the retry would never be sent
		l.recordUnsent(retry, record.FlagNotSent|record.FlagRunEnded|record.FlagGaveUp, o.End)
		return
	}
	l.retries.push(retry)
}

// waitingSince is when o's client began to wait for it: with a client
// timeout of its own (Config.Client.Timeout), the attempt's intended
// send, since a client that issues a request at its time waits from then,
// whether or not the loader had a connection free to send it at once; the
// classic client's -timeout runs from the actual send.
func (l *evloop) waitingSince(o *record.Outcome) int64 {
	if l.clientWaits {
		return o.Intended
	}
	return o.Sent
}

// sendNow builds c's request in flight and writes it, sent now: with the
// time its client still waits in the deadline header where the model
// sends it, and a retry's attempt number (2 for the first retry) where the
// model marks retries.
func (l *evloop) sendNow(c *conn) {
	c.o.Sent = l.e.now()
	m := &l.e.cfg.Client
	if m.SendDeadline {
		left := int64(l.attemptTimeout) - (c.o.Sent - l.waitingSince(&c.o))
		c.rt.deadlineMs = max(left/int64(time.Millisecond), 1)
	}
	if m.MarkRetries {
		c.rt.attemptNo = int64(c.o.Attempt) + 1
	}
	c.prepare()
	l.write(c, c.rt.req)
}

// expire gives up attempt a, due but never sent: its client's timeout ran
// out while every connection was busy (the loader's -max-conns, as a
// client's connection pool). It is recorded as a timeout, unsent, and the
// client decides on a retry as for any timeout.
func (l *evloop) expire(a attempt, now int64) {
	o := a.outcome(record.FlagNotSent | l.connWait(a.at))
	o.Sent, o.End, o.Err = now, now, record.ErrClientTimeout
	l.decide(&o, 0)
	l.unsent.Add(&o)
}

// maxAttempt is the highest attempt number a record holds (a uint8): a
// model asking for more retries stops there.
const maxAttempt = 255

// settled reports whether nothing more can be sent once the schedule is
// done: no retry waits, and (with retries) no attempt in flight could
// fail into one.
func (l *evloop) settled() bool {
	return l.retries.len() == 0 && (!l.retrying || l.e.inFlight.Load() == 0)
}

// retryDue reports whether a retry's time has come.
func (l *evloop) retryDue(now int64) bool {
	return l.retries.len() > 0 && l.retries.top().at <= now
}

// nextWake is the pacer's next wake-up (see pacer.nextWake), or the first
// retry's time where that comes sooner; a retry already due that found no
// connection is looked at again a quantum on, as a request of the
// schedule is.
func (l *evloop) nextWake(lastTimer int64, next uint64, now int64) int64 {
	wake := l.p.NextWake(lastTimer, next)
	if next >= l.e.planned {
		wake = now + int64(schedule.PacerMaxSleep)
	}
	if l.retries.len() == 0 {
		return wake
	}
	at := l.retries.top().at
	if at <= now {
		at = now + int64(max(l.p.Quantum, schedule.DefaultQuantum))
	}
	return min(wake, at)
}

// recordUnsent records attempt a as never sent (flags: why), at now.
func (l *evloop) recordUnsent(a attempt, flags uint8, now int64) {
	o := a.outcome(flags)
	o.Sent, o.End = now, now
	l.unsent.Add(&o)
}

// abandonRetries records the retries still waiting when the run stops
// as given up: every attempt is accounted for once.
func (l *evloop) abandonRetries(now int64) {
	for l.retries.len() > 0 {
		l.recordUnsent(l.retries.pop(), record.FlagNotSent|record.FlagRunEnded|record.FlagGaveUp, now)
	}
}
