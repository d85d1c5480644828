package pool

import (
	"fmt"
	"sync"
)

// FIFO queues tasks in a buffered channel served by a fixed set of workers,
// oldest first: Java's ThreadPoolExecutor over an ArrayBlockingQueue. With
// Capacity 0 the channel is unbuffered and a task is handed straight to an
// idle worker or overflows (the SynchronousQueue case).
type FIFO struct {
	counters
	cfg   Config
	queue chan item
	wg    sync.WaitGroup
}

// NewFIFO starts cfg.Workers workers.
func NewFIFO(cfg Config) (*FIFO, error) {
	cfg = cfg.WithDefaults()
	if err := checkFIFO(cfg); err != nil {
		return nil, err
	}
	p := &FIFO{counters: counters{gate: newGate()}, cfg: cfg, queue: make(chan item, cfg.Capacity)}
	p.wg.Add(cfg.Workers)
	for range cfg.Workers {
		go p.work()
	}
	return p, nil
}

// checkFIFO validates cfg for fifo.
func checkFIFO(cfg Config) error {
	switch {
	case cfg.Capacity == Unbounded:
		return fmt.Errorf("fifo is a channel and needs a bound; use -cap >= 0 (or msqueue for an unbounded queue)")
	case cfg.Capacity < 0:
		return fmt.Errorf("fifo capacity %d is invalid; want >= 0", cfg.Capacity)
	case cfg.Capacity == 0 && cfg.Overflow == OverflowDropOldest:
		return fmt.Errorf("fifo with -cap 0 holds nothing to drop; drop-oldest needs -cap > 0")
	case cfg.Overflow > OverflowBlock:
		return fmt.Errorf("fifo: unknown overflow policy %v; want one of %v", cfg.Overflow, overflowNames)
	}
	return nil
}

// Submit implements Pool.
func (p *FIFO) Submit(t Task) {
	it, ok := p.admit(t)
	if !ok {
		return
	}
	it.enqueued = p.cfg.now()
	switch {
	case p.push(it):
	case p.cfg.Overflow == OverflowBlock:
		p.block(it)
	default:
		p.spill(&p.cfg, p, it)
	}
	p.gate.leave()
}

// push queues it unless the channel is full.
func (p *FIFO) push(it item) bool {
	select {
	case p.queue <- it:
		return true
	default:
		return false
	}
}

// evictOldest takes the channel's oldest item, if it holds one.
func (p *FIFO) evictOldest() (item, bool) {
	select {
	case old := <-p.queue:
		return old, true
	default:
		return item{}, false
	}
}

func (p *FIFO) block(it item) {
	timeout, stopTimer := p.cfg.queueTimer()
	defer stopTimer()
	select {
	case p.queue <- it:
	case <-timeout:
		p.reject(it.task, ReasonFull)
	case <-p.gate.done:
		p.reject(it.task, ReasonClosed)
	}
}

func (p *FIFO) work() {
	defer p.wg.Done()
	// The channel is closed only after the gate is shut and every submitter
	// has left, so no send can race with the close.
	for it := range p.queue {
		if p.gate.isClosed() {
			p.reject(it.task, ReasonClosed)
			continue
		}
		p.dequeued(it, &p.cfg)
	}
}

// Close implements Pool: queued tasks are rejected with ReasonClosed.
func (p *FIFO) Close() {
	if p.gate.close() {
		close(p.queue)
	}
	p.wg.Wait()
}

// Stats implements Pool.
func (p *FIFO) Stats() Stats { return p.stats(len(p.queue), &p.cfg) }

// Name implements Pool.
func (p *FIFO) Name() string { return "fifo" }

// fifoQueue is fifo's queue under ExecHandler: a mutex-guarded ring popped
// at the front. A channel cannot serve there: a holder giving its slot
// back must see a waiter queued meanwhile through an atomic the pusher
// wrote (see slotPool), and a channel's length is not one. Capacity 0
// queues nothing (push always fails): every newcomer that finds the slots
// taken overflows, as under ExecWorker.
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
