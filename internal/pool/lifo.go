package pool

// LIFO serves the newest task first, from a mutex-guarded ring used as a
// stack: the Java seeds' LinkedBlockingDeque with takeLast. Under overload
// the newest requests, whose clients are most likely still waiting, are
// answered first; old ones wait, or, once past QueueTimeout or their
// deadline, are shed from the bottom (see lifoQueue.pop). The stack's bottom is the ring's
// front, so drop-oldest evicts in O(1). Idle workers park on channels of
// their own (see idlers).
type LIFO struct{ queuePool }

// lifoQueue pushes at the ring's back and pops from the back: a stack.
type lifoQueue struct {
	lockedRing
	cfg *Config // QueueTimeout and the clock, for late
}

func newLIFOQueue(cfg Config) queue { return &lifoQueue{newLockedRing(cfg.Capacity), &cfg} }

// pop takes the newest task. First it looks at the oldest: one that has
// waited past QueueTimeout, or whose deadline has passed, is taken
// instead, to be shed unrun. A stack serves its top under sustained load
// and never reaches its bottom, so without this the oldest tasks would
// wait for as long as the overload lasts, long after their clients gave
// up, holding their connections and their place in the bound; with it
// every pop sheds at most one, oldest first, as adaptive does. The clock
// is read only when there is a QueueTimeout or the oldest has a deadline.
func (q *lifoQueue) pop() popped {
	if q.size.Load() == 0 {
		return popped{}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.r.len() == 0 {
		return popped{}
	}
	oldest := q.r.front()
	if q.cfg.QueueTimeout <= 0 && oldest.task.Deadline() == 0 {
		return popped{it: q.take(false), v: serve}
	}
	// Read under the lock, so that no item pushed after it is newer than
	// it: every wait measured from it is >= 0.
	at := q.cfg.now()
	if why, late := q.cfg.late(oldest, at); late {
		return popped{it: q.take(true), v: shed, why: why, at: at}
	}
	return popped{it: q.take(false), v: serve, at: at}
}
