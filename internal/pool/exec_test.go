package pool

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inHandler tells whether p runs tasks on their submitters (ExecHandler):
// its Submit returns only once the task has been answered.
func inHandler(p Pool) bool { return p.RunsOnSubmitter() }

// TestRunsOnSubmitterSaysWhere: what RunsOnSubmitter answers is where the
// pool runs and rejects tasks, for every variant in both exec modes
// (direct runs on its submitter whatever -exec says): on the submitting
// goroutine before Submit returns, or on a worker goroutine.
func TestRunsOnSubmitterSaysWhere(t *testing.T) {
	for _, name := range Variants {
		for _, exec := range execModes {
			t.Run(name+"/"+exec.String(), func(t *testing.T) {
				p, err := New(name, Config{Exec: exec, Workers: 2, Capacity: 8})
				require.NoError(t, err)
				want := HandlerOnly(name) || exec == ExecHandler
				assert.Equal(t, want, p.RunsOnSubmitter())
				ran := &ownerTask{}
				p.Submit(ran)
				waitIdle(t, p)
				p.Close()
				rejected := &ownerTask{}
				p.Submit(rejected) // closed: refused at once, on the submitter
				me := goid()
				assert.Equal(t, p.RunsOnSubmitter(), ran.by.Load() == me, "ran on the submitter")
				assert.Equal(t, me, rejected.by.Load())
				assert.EqualValues(t, ReasonClosed, rejected.reason.Load())
			})
		}
	}
}

// variantModes is one case per queueing variant and exec mode, with only
// those set: for tests that choose the rest themselves.
func variantModes() []conformanceCase {
	var cs []conformanceCase
	for _, exec := range execModes {
		for _, variant := range queueingVariants {
			cs = append(cs, conformanceCase{variant: variant, cfg: Config{Exec: exec}})
		}
	}
	return cs
}

// async runs f on a goroutine of its own; the test's cleanup waits for it
// to return (a submitter under ExecHandler returns once answered).
func async(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	t.Cleanup(func() {
		select {
		case <-done:
		case <-time.After(hangGuard):
			t.Errorf("a submitter never returned: its task was never answered")
		}
	})
}

// submit hands task to p without waiting for it to be answered: Submit
// itself under ExecWorker, Submit on a goroutine of its own under
// ExecHandler.
func submit(t *testing.T, p Pool, task Task) {
	t.Helper()
	if !inHandler(p) {
		p.Submit(task)
		return
	}
	async(t, func() { p.Submit(task) })
}

// place is submit, returning once p holds task: queued, running or
// answered. Under ExecWorker that is when Submit returns; under
// ExecHandler it is when the pool's counters account for every task
// submitted, task included, and every task they count as queued is linked
// in the queue, where a pop or an eviction can find it.
func place(t *testing.T, p Pool, task Task) {
	t.Helper()
	if !inHandler(p) {
		p.Submit(task)
		return
	}
	before := p.Stats().Submitted
	async(t, func() { p.Submit(task) })
	require.Eventually(t, func() bool {
		s := p.Stats()
		if s.Submitted <= before || uint64(s.Queued+s.Busy)+s.Completed+s.RejectedTotal() != s.Submitted {
			return false
		}
		sp, ok := p.(*slotPool) // direct queues nothing
		return !ok || linked(sp.q) == s.Queued
	}, hangGuard, 50*time.Microsecond, "the task to be queued, running or answered")
}

// linked counts the items q has linked. msqueue and multiqueue count a
// slot in len as soon as a push reserves it, before the item is linked:
// until then an eviction cannot see it, so a test that has a drop-oldest
// evict "the oldest" must wait for the link, not only for the count.
func linked(q queue) int {
	switch q := q.(type) {
	case *multiQueue:
		n := 0
		for i := range q.shards {
			s := &q.shards[i]
			s.mu.Lock()
			n += s.r.len()
			s.mu.Unlock()
		}
		return n
	case *msQueue:
		n := 0
		for node := q.head.Load().next.Load(); node != nil; node = node.next.Load() {
			n++
		}
		return n
	}
	return q.len()
}
