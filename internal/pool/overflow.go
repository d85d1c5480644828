package pool

import "runtime"

// spillable is what the non-blocking overflow policies need of a full queue.
type spillable interface {
	// push adds it, or reports false if the queue is full.
	push(it item) bool
	// evictOldest removes the oldest item, or reports false if none is left.
	evictOldest() (item, bool)
}

// spill applies cfg.Overflow, other than OverflowBlock (which waits on
// something only the variant has), to it, which found q full. It reports
// whether it ended up queued, so the caller can wake a worker.
func (c *counters) spill(cfg *Config, q spillable, it item) (queued bool) {
	switch cfg.Overflow {
	case OverflowCallerRuns:
		c.start(it.task, cfg)
		return false
	case OverflowDropOldest:
		// Evict the oldest and retry. Another submitter may take the room
		// we made; every turn still admits someone, so the pool as a whole
		// progresses.
		for !q.push(it) {
			if old, ok := q.evictOldest(); ok {
				c.reject(old.task, ReasonDropped)
			} else {
				// Empty, yet full: every slot is reserved by a push not
				// yet linked (msqueue, multiqueue). Let those finish.
				runtime.Gosched()
			}
		}
		return true
	default:
		c.reject(it.task, ReasonFull)
		return false
	}
}
