package pool

// Direct runs each task on the submitting goroutine: no queue, no workers.
// It is the synchronous baseline every other variant is compared against.
type Direct struct{ counters }

func newDirect() *Direct { return &Direct{counters{gate: newGate()}} }

// Submit runs t before returning, or rejects it if the pool is closed.
func (p *Direct) Submit(t Task) {
	if !p.gate.enter() {
		p.reject(t, ReasonClosed)
		return
	}
	p.run(t)
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
