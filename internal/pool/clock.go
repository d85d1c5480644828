package pool

import (
	"time"

	"github.com/kvpool/kvpool/internal/mono"
)

// now is the mono clock: queue waits are immune to wall-clock jumps, an
// int64 fits in a queue slot, and tasks' deadlines are on the same scale.
func now() int64 { return mono.Now() }

// now reads c's clock: a test's (Config.clock, so that queue waits,
// QueueTimeout, deadlines and CoDel see the times the test sets), else the
// mono clock. The nil check is cheaper than an interface call on the path
// every task takes.
func (c *Config) now() int64 {
	if c.clock != nil {
		return c.clock.Now()
	}
	return now()
}

// item is a queued task and when it was queued.
type item struct {
	task     Task
	enqueued int64 // Config.now() at enqueue
}

// dequeuedAt does the bookkeeping common to every variant when a worker
// takes it off a queue at time at, a cfg.now() reading the caller already
// has: it records the wait and runs the task, unless it must not start any
// more (see stale).
func (c *counters) dequeuedAt(it item, cfg *Config, at int64) {
	wait := c.waited(it, cfg, at)
	if r, drop := cfg.stale(it, wait, at); drop {
		c.reject(it.task, r)
		return
	}
	c.run(it.task)
}

// handedOver runs it, which a submitter handed straight to an idle worker:
// it never queued, so its wait is 0, recorded without reading the clock.
func (c *counters) handedOver(it item, cfg *Config) {
	if cfg.OnWait != nil {
		cfg.OnWait(0)
	}
	c.start(it.task, cfg)
}

// start runs t, which never queued, unless its deadline has passed: the
// check caller-runs and every hand-off make (direct and a free slot make
// it in line, on the hottest paths).
func (c *counters) start(t Task, cfg *Config) {
	if cfg.overdue(t.Deadline()) {
		c.reject(t, ReasonDeadline)
		return
	}
	c.run(t)
}

// overdue reports whether deadline is set and has passed. It inlines, and
// reads the clock only for a deadline: a task without one costs the hot
// paths a comparison.
func (c *Config) overdue(deadline int64) bool { return deadline != 0 && c.passed(deadline) }

// passed reports whether the clock is past deadline.
func (c *Config) passed(deadline int64) bool { return mono.Passed(deadline, c.now()) }

// shed records the wait of it, taken off a queue at time at, and rejects it
// unrun for r: a queue's own verdict (adaptive's CoDel, lifo's expired
// bottom).
func (c *counters) shed(it item, cfg *Config, at int64, r Reason) {
	c.waited(it, cfg, at)
	c.reject(it.task, r)
}

// waited records how long it was queued, in Stats.WaitTotal and OnWait.
func (c *counters) waited(it item, cfg *Config, at int64) time.Duration {
	// A clock read before a lock that the item's push then beat to can
	// be a little older than the item; that item did not wait.
	wait := time.Duration(max(at-it.enqueued, 0))
	c.waitNanos.Add(int64(wait))
	if cfg.OnWait != nil {
		cfg.OnWait(wait)
	}
	return wait
}

// stale tells whether it, which waited wait and is looked at at time at
// where it would start, must not start, and why: it is late (see late),
// or it waited at least AbandonAfter and its submitter has gone.
func (c *Config) stale(it item, wait time.Duration, at int64) (Reason, bool) {
	if r, late := c.late(&it, at); late {
		return r, true
	}
	if c.gone(it.task, wait) {
		return ReasonAbandoned, true
	}
	return 0, false
}

// gone tells whether t, which waited wait, has lost its submitter: asked
// only once it waited at least AbandonAfter, as asking may cost a system
// call.
func (c *Config) gone(t Task, wait time.Duration) bool {
	if c.AbandonAfter <= 0 || wait < c.AbandonAfter {
		return false
	}
	a, ok := t.(Abandonable)
	return ok && a.Abandoned()
}

// late tells whether it, looked at at time at, is past its deadline
// (ReasonDeadline) or has waited past QueueTimeout (ReasonExpired); past
// both, the one that came first. It costs no system call, so a queue may
// ask it under its lock.
func (c *Config) late(it *item, at int64) (Reason, bool) {
	deadline := it.task.Deadline()
	passed := mono.Passed(deadline, at)
	expired := c.QueueTimeout > 0 && at-it.enqueued > int64(c.QueueTimeout)
	switch {
	case passed && expired && it.enqueued+int64(c.QueueTimeout) < deadline:
		return ReasonExpired, true
	case passed:
		return ReasonDeadline, true
	case expired:
		return ReasonExpired, true
	}
	return 0, false
}

// giveUpTimer returns a channel that fires when a Submit blocked for room
// since now, for task t, must give up: after QueueTimeout, or at t's
// deadline if that comes first; the reason to reject t for then (ReasonFull
// when the timeout fires: no room came; ReasonDeadline); and a func that
// releases the timer. The channel is nil (never fires) when there is
// neither, and the clock is read only when t has a deadline.
func (c *Config) giveUpTimer(t Task) (<-chan time.Time, func(), Reason) {
	wait, why := c.QueueTimeout, ReasonFull
	if d := t.Deadline(); d != 0 {
		if left := time.Duration(d - c.now()); wait <= 0 || left < wait {
			wait, why = max(left, 0), ReasonDeadline
		}
	}
	if wait <= 0 && why == ReasonFull {
		return nil, func() {}, why
	}
	clk := c.clock
	if clk == nil {
		clk = mono.System
	}
	ch, stop := clk.Timer(wait)
	return ch, stop, why
}
