package pool

import (
	"fmt"
	"sync"
	"time"
)

// FIFO queues tasks in a buffered channel served by a fixed set of workers,
// oldest first: Java's ThreadPoolExecutor over an ArrayBlockingQueue. With
// Capacity 0 the channel is unbuffered and a task is handed straight to an
// idle worker or overflows (the SynchronousQueue case).
type FIFO struct {
	counters
	cfg   Config
	gate  gate
	queue chan item
	wg    sync.WaitGroup
}

// NewFIFO starts cfg.Workers workers.
func NewFIFO(cfg Config) (*FIFO, error) {
	cfg = cfg.withDefaults()
	switch {
	case cfg.Capacity == Unbounded:
		return nil, fmt.Errorf("fifo is a channel and needs a bound; use -cap >= 0 (or msqueue for an unbounded queue)")
	case cfg.Capacity < 0:
		return nil, fmt.Errorf("fifo capacity %d is invalid; want >= 0", cfg.Capacity)
	case cfg.Capacity == 0 && cfg.Overflow == OverflowDropOldest:
		return nil, fmt.Errorf("fifo with -cap 0 holds nothing to drop; drop-oldest needs -cap > 0")
	}
	p := &FIFO{cfg: cfg, gate: newGate(), queue: make(chan item, cfg.Capacity)}
	p.wg.Add(cfg.Workers)
	for range cfg.Workers {
		go p.work()
	}
	return p, nil
}

// Submit implements Pool.
func (p *FIFO) Submit(t Task) {
	p.submitted.Add(1)
	if !p.gate.enter() {
		p.reject(t, ReasonClosed)
		return
	}
	it := item{task: t, enqueued: now()}
	select {
	case p.queue <- it:
	default:
		p.overflow(it)
	}
	p.gate.leave()
}

// overflow applies the policy to it, which found the queue full.
func (p *FIFO) overflow(it item) {
	switch p.cfg.Overflow {
	case OverflowCallerRuns:
		p.run(it.task)
	case OverflowDropOldest:
		// Evict the oldest and retry. Another submitter may take the room
		// we made; every turn of the loop still admits someone, so the
		// pool as a whole progresses.
		for {
			select {
			case old := <-p.queue:
				p.reject(old.task, ReasonDropped)
			default:
			}
			select {
			case p.queue <- it:
				return
			default:
			}
		}
	case OverflowBlock:
		p.block(it)
	default:
		p.reject(it.task, ReasonFull)
	}
}

func (p *FIFO) block(it item) {
	var timeout <-chan time.Time
	if p.cfg.QueueTimeout > 0 {
		timer := time.NewTimer(p.cfg.QueueTimeout)
		defer timer.Stop()
		timeout = timer.C
	}
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
func (p *FIFO) Stats() Stats {
	s := p.snapshot()
	s.Queued = len(p.queue)
	s.Workers = p.cfg.Workers
	s.Capacity = p.cfg.Capacity
	return s
}

// Name implements Pool.
func (p *FIFO) Name() string { return "fifo" }
