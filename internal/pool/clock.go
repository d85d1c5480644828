package pool

import "time"

// epoch anchors now(): time.Since reads the monotonic clock, so queue waits
// are immune to wall-clock jumps, and an int64 fits in a queue slot.
var epoch = time.Now()

// now returns monotonic nanoseconds since process start.
func now() int64 { return int64(time.Since(epoch)) }

// clock is a time source a test can put in Config.clock, so that queue
// waits, QueueTimeout and CoDel see the times the test sets rather than
// how fast goroutines happen to run. A pool without one (every pool
// outside tests) reads now() and the runtime's timers.
type clock interface {
	// now returns nanoseconds on a monotonic scale, like now().
	now() int64
	// timer returns a channel that receives once d has passed on this
	// clock, and a func that releases the timer.
	timer(d time.Duration) (<-chan time.Time, func())
}

// now reads c's clock: the injected one, else the monotonic clock. The nil
// check is cheaper than an interface call on the path every task takes.
func (c *Config) now() int64 {
	if c.clock != nil {
		return c.clock.now()
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
// has: it records the wait and runs the task, or rejects it with
// ReasonExpired if it waited past the timeout.
func (c *counters) dequeuedAt(it item, cfg *Config, at int64) {
	if wait := c.waited(it, cfg, at); cfg.QueueTimeout > 0 && wait > cfg.QueueTimeout {
		c.reject(it.task, ReasonExpired)
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
	c.run(it.task)
}

// shed records the wait of it, taken off a queue at time at, and rejects it
// with ReasonExpired unrun: the adaptive variant's verdict under a standing
// queue.
func (c *counters) shed(it item, cfg *Config, at int64) {
	c.waited(it, cfg, at)
	c.reject(it.task, ReasonExpired)
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
