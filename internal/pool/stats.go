package pool

import (
	"sync/atomic"
	"time"
)

// Stats is a snapshot of a pool's counters. Submitted counts every call to
// Submit; once the pool is idle, Submitted == Completed + sum(Rejected).
type Stats struct {
	Submitted uint64
	Completed uint64 // tasks whose Run returned
	Rejected  [NumReasons]uint64
	Queued    int // tasks waiting now
	Busy      int // tasks running now
	// Workers is the worker goroutines (ExecWorker), or the slots: the
	// limit of tasks running at once now (ExecHandler).
	Workers  int
	Capacity int // the queue bound; Unbounded for none
	// LimitChanges counts the changes of an adaptive limit (ExecHandler).
	LimitChanges uint64
	// WaitTotal is the summed queue wait of every task taken off the queue.
	WaitTotal time.Duration
}

// RejectedTotal sums Rejected over all reasons.
func (s Stats) RejectedTotal() uint64 {
	var n uint64
	for _, r := range s.Rejected {
		n += r
	}
	return n
}

// paddedInt64 keeps a hot counter (or idlers' bitmap word) on a cache line
// of its own, so workers and submitters updating different ones do not
// contend.
type paddedInt64 struct {
	atomic.Int64
	_ [56]byte
}

// counters is embedded by every variant; its methods do the bookkeeping
// that Stats reports, and callReject/callRun keep it consistent with the
// exactly-once promise. The gate counts submissions.
type counters struct {
	gate      gate
	completed paddedInt64
	busy      paddedInt64
	waitNanos paddedInt64
	rejected  [NumReasons]atomic.Uint64
}

func (c *counters) reject(t Task, r Reason) {
	c.rejected[r].Add(1)
	t.Reject(r)
}

func (c *counters) run(t Task) {
	c.busy.Add(1)
	t.Run()
	c.busy.Add(-1)
	c.completed.Add(1)
}

func (c *counters) snapshot() Stats {
	s := Stats{
		Submitted: c.gate.submitted(),
		Completed: uint64(c.completed.Load()),
		Busy:      int(c.busy.Load()),
		WaitTotal: time.Duration(c.waitNanos.Load()),
	}
	for i := range s.Rejected {
		s.Rejected[i] = c.rejected[i].Load()
	}
	return s
}

// stats is a snapshot completed with the pool's shape.
func (c *counters) stats(queued int, cfg *Config) Stats {
	s := c.snapshot()
	s.Queued, s.Workers, s.Capacity = queued, cfg.Workers, cfg.Capacity
	return s
}
