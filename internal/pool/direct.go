package pool

// Direct runs each task on the submitting goroutine: no queue, no workers.
// It is the synchronous baseline every other variant is compared against.
// A task whose deadline has passed is rejected instead (ReasonDeadline):
// it never waited here, but it may have been late when it came.
type Direct struct {
	counters
	cfg Config // for the clock
}

func newDirect(cfg Config) *Direct { return &Direct{counters: counters{gate: newGate()}, cfg: cfg} }

// Submit runs t before returning, or rejects it if the pool is closed or
// t's deadline has passed.
func (p *Direct) Submit(t Task) {
	if !p.gate.enter() {
		p.reject(t, ReasonClosed)
		return
	}
	if p.cfg.overdue(t.Deadline()) {
		p.reject(t, ReasonDeadline)
	} else {
		p.run(t)
	}
	p.gate.leave()
}

// Close rejects later tasks and waits for the ones running now.
func (p *Direct) Close() { p.gate.close() }

// Stats implements Pool.
func (p *Direct) Stats() Stats { return p.snapshot() }

// Name implements Pool.
func (p *Direct) Name() string { return "direct" }

// RunsOnSubmitter implements Pool: always.
func (p *Direct) RunsOnSubmitter() bool { return true }
