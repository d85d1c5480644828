package pool

// FIFO serves tasks oldest first from a mutex-guarded ring: Java's
// ThreadPoolExecutor over an ArrayBlockingQueue. With Capacity 0 it queues
// nothing: a task goes straight to an idle worker (ExecWorker) or a free
// slot (ExecHandler), or overflows (the SynchronousQueue case).
//
// The ring is fifo's queue in both exec modes, so fifo under -exec worker
// and under -exec handler differ in where a task runs and in nothing else.
// (A buffered channel, the obvious FIFO, cannot serve under ExecHandler: a
// holder giving its slot back must see a waiter queued meanwhile through
// an atomic the pusher wrote, see slotPool, and a channel's length is not
// one.)
type FIFO struct{ queuePool }

// fifoQueue is a locked ring popped at the front. Capacity 0 queues
// nothing: push always fails.
type fifoQueue struct{ lockedRing }

func newFIFOQueue(cfg Config) queue { return &fifoQueue{newLockedRing(cfg.Capacity)} }

func (q *fifoQueue) pop() popped {
	if q.size.Load() == 0 {
		return popped{}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.r.len() == 0 {
		return popped{}
	}
	return popped{it: q.take(true), v: serve}
}
