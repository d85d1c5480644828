package pool

// LIFO serves the newest task first, from a mutex-guarded ring used as a
// stack: the Java seeds' LinkedBlockingDeque with takeLast. Under overload
// the newest requests, whose clients are most likely still waiting, are
// answered first; old ones wait (or expire with QueueTimeout). The stack's
// bottom is the ring's front, so drop-oldest evicts in O(1). Idle workers
// park on channels of their own (see idlers).
type LIFO struct{ queuePool }

// NewLIFO starts cfg.Workers workers over a stack of cfg.Capacity tasks.
func NewLIFO(cfg Config) (*LIFO, error) {
	p := &LIFO{}
	if err := p.start("lifo", cfg, newLIFOQueue); err != nil {
		return nil, err
	}
	return p, nil
}

// lifoQueue pushes at the ring's back and pops from the back: a stack.
type lifoQueue struct{ lockedRing }

func newLIFOQueue(cfg Config) queue { return &lifoQueue{newLockedRing(cfg.Capacity)} }

func (q *lifoQueue) pop() popped {
	if q.size.Load() == 0 {
		return popped{}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.r.len() == 0 {
		return popped{}
	}
	return popped{it: q.take(false), v: serve}
}
