package pool

// codel tells a standing queue from a passing burst, the way CoDel does
// (Nichols & Jacobson, "Controlling Queue Delay", ACM Queue 2012) and as
// folly's executors use it (folly/executors/Codel.h, whose defaults, 5 ms
// and 100 ms, are ours): a queue whose delay never fell below target during
// a whole interval is not absorbing a burst, it is overloaded.
//
// Samples: at every dequeue the adaptive queue reports how long its oldest
// job has waited (0 when it is empty, so an idle or drained queue counts as
// "no delay"). The minimum sample of an interval is its verdict.
//
// State machine, evaluated only when an interval ends:
//
//	         the ended interval's minimum > target
//	normal ───────────────────────────────────────▶ overloaded
//	       ◀───────────────────────────────────────
//	         the ended interval's minimum <= target
//
// An interval ends at the first sample taken at or after its deadline; that
// sample opens the next interval (deadline = its time + interval) as its
// first minimum. An interval that saw no sample at all (no dequeue) has its
// predecessor's minimum, so a long quiet spell does not flip the state.
//
// What must hold: the state changes only when an interval ends, so a burst
// that drains within an interval (some dequeue sees the queue younger than
// target, or empty) never leaves normal. codel is not safe for concurrent
// use; the adaptive queue calls it under its lock.
type codel struct {
	target, interval int64 // nanoseconds
	deadline         int64 // when the current interval ends, in now() time
	min              int64 // the current interval's minimum sample
	overloaded       bool
}

// observe records a sample taken at time t and reports whether the queue
// is overloaded. Times are now() nanoseconds; t must not go backwards.
func (c *codel) observe(sample, t int64) bool {
	if t >= c.deadline {
		c.overloaded = c.min > c.target
		c.deadline = t + c.interval
		c.min = sample
	} else if sample < c.min {
		c.min = sample
	}
	return c.overloaded
}

// shedAfter is the wait past which an overloaded queue sheds a job: 2×target,
// folly's "slough timeout".
func (c *codel) shedAfter() int64 { return 2 * c.target }
