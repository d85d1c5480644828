package pool

import (
	"runtime"
	"time"
)

// classPool is the auto variant: reads and writes admitted apart, as the
// two resources they are in front of an LSM store. A read costs CPU and a
// memtable or block lookup; a write costs a WAL append now and flush and
// compaction work later, and a write flood can stall writes inside the
// store while reads could still be served in a millisecond. So each class
// is a slotPool of its own: its own slots (an adaptive limit), its own
// measured hold and its own bound in time, and a write waiting never
// counts against a read's expected wait. The write class is also paced
// (see Pacer): held to the byte rate the store's flushes and compactions
// absorb, which whoever watches the store sets.
//
// A write woken from its pacing or handed a slot while reads arrive
// yields the CPU once before it runs (yieldToRunnable), so that it does
// not run ahead of the reads already waiting for a CPU.
//
// A task goes to the write class if it says it writes (Writer), else to
// the read class. Each class keeps every promise of a slotPool (exactly
// one answer, retries shed first, deadlines, abandoned clients, Close);
// the two share nothing but the Config they were built from, each with
// its own queue of Capacity.
type classPool struct {
	reads, writes *slotPool
}

var (
	_ Pool    = (*classPool)(nil)
	_ Drainer = (*classPool)(nil)
	_ Pacer   = (*classPool)(nil)
	_ Classes = (*classPool)(nil)
)

// Classes is a Pool that admits reads and writes apart (auto): each
// class's counters on their own.
type Classes interface {
	ClassStats() (reads, writes Stats)
}

// newClassPool is the auto variant from cfg as Resolve completed it.
func newClassPool(cfg Config) (*classPool, error) {
	reads, err := newSlotPool(Auto, cfg, newFIFOQueue)
	if err != nil {
		return nil, err
	}
	writes, err := newSlotPool(Auto, cfg, newFIFOQueue)
	if err != nil {
		return nil, err
	}
	writes.pace, writes.yieldTo = &pacer{}, reads
	return &classPool{reads: reads, writes: writes}, nil
}

// classOf is the class that admits t.
func (p *classPool) classOf(t Task) *slotPool {
	if _, ok := isWrite(t); ok {
		return p.writes
	}
	return p.reads
}

// Submit implements Pool: t runs or is rejected on this goroutine, in its
// class.
func (p *classPool) Submit(t Task) { p.classOf(t).Submit(t) }

// Close implements Pool: both classes reject what they hold queued and
// wait for what runs.
func (p *classPool) Close() {
	p.reads.Close()
	p.writes.Close()
}

// Stats implements Pool: the two classes' counters added up; Workers is
// the two limits' sum, Capacity the two queues' bounds'.
func (p *classPool) Stats() Stats {
	r, w := p.ClassStats()
	s := r
	s.Submitted += w.Submitted
	s.Completed += w.Completed
	for i := range s.Rejected {
		s.Rejected[i] += w.Rejected[i]
	}
	s.Queued += w.Queued
	s.Busy += w.Busy
	s.Workers += w.Workers
	if s.Capacity != Unbounded {
		s.Capacity += w.Capacity
	}
	s.LimitChanges += w.LimitChanges
	s.WaitTotal += w.WaitTotal
	return s
}

// ClassStats implements Classes.
func (p *classPool) ClassStats() (reads, writes Stats) {
	return p.reads.Stats(), p.writes.Stats()
}

// Name implements Pool.
func (p *classPool) Name() string { return Auto }

// RunsOnSubmitter implements Pool: always, as each class does.
func (p *classPool) RunsOnSubmitter() bool { return true }

// Drain implements Drainer: the drain time of t's class (for a write,
// its pacing included).
func (p *classPool) Drain(t Task) time.Duration { return p.classOf(t).Drain(t) }

// SetWriteRate implements Pacer.
func (p *classPool) SetWriteRate(bytesPerSecond float64) {
	p.writes.pace.set(bytesPerSecond, p.writes.cfg.now())
}

// Pace implements Pacer.
func (p *classPool) Pace() PaceStats { return p.writes.pace.stats() }

// yieldToRunnable puts the calling goroutine behind the goroutines
// already waiting for a CPU. Go's scheduler runs a goroutine woken by a
// channel send or a timer next, ahead of every runnable one, while one
// woken by the network (a request that just arrived) waits behind them
// all. Under a write flood the CPUs are saturated and every hand-off of
// a write slot, and every paced write's timer, would put a write ahead
// of the reads waiting there; yielding once gives them their turn first.
// A write that found a free slot and no pacing never comes here, nor one
// woken while no read arrives (slotPool.yieldIfContended). A variable so
// that a test can count the yields.
var yieldToRunnable = runtime.Gosched
