package pool

import "time"

// epoch anchors now(): time.Since reads the monotonic clock, so queue waits
// are immune to wall-clock jumps, and an int64 fits in a queue slot.
var epoch = time.Now()

// now returns monotonic nanoseconds since process start.
func now() int64 { return int64(time.Since(epoch)) }

// item is a queued task and when it was queued.
type item struct {
	task     Task
	enqueued int64 // now() at enqueue
}

// dequeued does the bookkeeping common to every variant when a worker takes
// it off a queue: it records the wait and runs the task, or rejects it with
// ReasonExpired if it waited past the timeout.
func (c *counters) dequeued(it item, cfg *Config) {
	wait := now() - it.enqueued
	c.waitNanos.Add(wait)
	if cfg.OnWait != nil {
		cfg.OnWait(time.Duration(wait))
	}
	if cfg.QueueTimeout > 0 && time.Duration(wait) > cfg.QueueTimeout {
		c.reject(it.task, ReasonExpired)
		return
	}
	c.run(it.task)
}
