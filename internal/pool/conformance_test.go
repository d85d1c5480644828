package pool

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/limit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probe is a Task that records how it was answered.
type probe struct {
	runs, rejects atomic.Int32
	reason        atomic.Int32
	work          func()
	deadline      int64 // on the pool's clock; 0: none
}

func (p *probe) Deadline() int64 { return p.deadline }

func (p *probe) Run() {
	p.runs.Add(1)
	if p.work != nil {
		p.work()
	}
}

// Reject stores the reason before it counts the answer: a test that sees
// the answer (answers) then reads the reason it came with.
func (p *probe) Reject(r Reason) {
	p.reason.Store(int32(r))
	p.rejects.Add(1)
}

// waitIdle waits until every task submitted to p has been answered, or
// fails the test after hangGuard.
func waitIdle(t *testing.T, p Pool) {
	t.Helper()
	require.Eventually(t, func() bool {
		s := p.Stats()
		return s.Completed+s.RejectedTotal() == s.Submitted
	}, hangGuard, time.Millisecond, "tasks still unanswered")
}

func (p *probe) answers() int32 { return p.runs.Load() + p.rejects.Load() }

// conformanceCase is one variant and configuration the shared tests cover.
type conformanceCase struct {
	variant string
	cfg     Config
}

func (c conformanceCase) String() string {
	if c.variant == "direct" {
		return c.variant
	}
	return fmt.Sprintf("%s/%s/w%d/cap%d/%s", c.variant, c.cfg.Exec, c.cfg.Workers, c.cfg.Capacity, c.cfg.Overflow)
}

// execModes are the exec modes every queueing variant runs in.
var execModes = []Exec{ExecWorker, ExecHandler}

// queueingVariants are the queue structures under test, in both exec
// modes: every variant but direct and auto (fifo's queue in the handler
// behind an adaptive limit and a bound in time, tested in auto_test.go);
// queuedVariants are those that need a queue (-cap 0 is fifo's alone).
var (
	queueingVariants = []string{"fifo", "lifo", "msqueue", "multiqueue", "adaptive"}
	queuedVariants   = []string{"lifo", "msqueue", "multiqueue", "adaptive"}
)

// conformanceCases lists every variant x exec mode x policy x shape the
// promise of Pool must hold for. A new variant adds its rows here; the
// rows are the combinations New accepts (see TestNewRejectsBadConfig for
// the others).
func conformanceCases() []conformanceCase {
	cases := []conformanceCase{{variant: "direct"}}
	for _, exec := range execModes {
		cases = append(cases, execCases(exec)...)
	}
	return cases
}

func execCases(exec Exec) []conformanceCase {
	var cases []conformanceCase
	for _, variant := range queueingVariants {
		for _, workers := range []int{1, 4, 16} {
			for _, capacity := range []int{Unbounded, 0, 8, 256} {
				for _, o := range []Overflow{OverflowReject, OverflowDropOldest, OverflowCallerRuns, OverflowBlock} {
					if !validCombination(variant, capacity, o) {
						continue
					}
					cfg := Config{Exec: exec, Workers: workers, Capacity: capacity, Overflow: o}
					if o == OverflowBlock {
						cfg.QueueTimeout = 50 * time.Millisecond
					}
					if variant == "adaptive" {
						// Short enough that the tests' queues stand and
						// the overloaded regime (LIFO, shedding) runs too.
						cfg.CoDelTarget, cfg.CoDelInterval = 200*time.Microsecond, 2*time.Millisecond
					}
					cases = append(cases, conformanceCase{variant: variant, cfg: cfg})
				}
			}
		}
	}
	return cases
}

// validCombination is the table of docs/pools.md: which capacities and
// policies New accepts for a variant.
func validCombination(variant string, capacity int, o Overflow) bool {
	switch {
	case variant == "fifo" && capacity == 0:
		return o != OverflowDropOldest // hand-off only: nothing queued to drop
	case capacity == Unbounded:
		return o == OverflowReject // never overflows: no other policy applies
	default:
		return capacity > 0 // -cap 0 (hand-off only) is fifo's
	}
}

// TestExactlyOnce: 64 producers submit concurrently; every task is run or
// rejected exactly once, and the counters add up.
func TestExactlyOnce(t *testing.T) {
	const producers, perProducer = 64, 150
	for _, c := range conformanceCases() {
		t.Run(c.String(), func(t *testing.T) {
			p, err := New(c.variant, c.cfg)
			require.NoError(t, err)
			tasks := make([]probe, producers*perProducer)
			for i := range tasks {
				if i%7 == 0 {
					tasks[i].work = runtime.Gosched // let queues fill
				}
			}
			submitConcurrently(p, tasks, producers)
			p.Close()

			var ran, rejected int
			for i := range tasks {
				require.EqualValues(t, 1, tasks[i].answers(), "task %d answered %d times", i, tasks[i].answers())
				ran += int(tasks[i].runs.Load())
				rejected += int(tasks[i].rejects.Load())
			}
			s := p.Stats()
			assert.EqualValues(t, len(tasks), s.Submitted)
			assert.EqualValues(t, ran, s.Completed)
			assert.EqualValues(t, rejected, s.RejectedTotal())
			assert.Zero(t, s.Queued)
			assert.Zero(t, s.Busy)
		})
	}
}

// submitConcurrently submits tasks to p from producers goroutines, each its
// own contiguous share in order, and returns when all have been submitted.
func submitConcurrently(p Pool, tasks []probe, producers int) {
	per := len(tasks) / producers
	var wg sync.WaitGroup
	for g := range producers {
		wg.Go(func() {
			for i := range per {
				p.Submit(&tasks[g*per+i])
			}
		})
	}
	wg.Wait()
}

// TestCloseAnswersQueued: tasks still queued when Close is called are
// rejected with ReasonClosed, and Submit after Close rejects at once.
func TestCloseAnswersQueued(t *testing.T) {
	for _, c := range conformanceCases() {
		if c.variant == "direct" || c.cfg.Capacity < 8 {
			continue
		}
		t.Run(c.String(), func(t *testing.T) {
			p, err := New(c.variant, c.cfg)
			require.NoError(t, err)
			release := holdWorkers(t, p, c.cfg.Workers)
			// Every worker is busy now; what follows stays queued.
			queued := make([]probe, c.cfg.Capacity)
			for i := range queued {
				place(t, p, &queued[i])
			}
			s := p.Stats()
			assert.Equal(t, len(queued), s.Queued)
			assert.Equal(t, c.cfg.Workers, s.Busy)
			assert.Equal(t, c.cfg.Workers, s.Workers)
			assert.Equal(t, c.cfg.Capacity, s.Capacity)

			closed := make(chan struct{})
			go func() { p.Close(); close(closed) }()
			// Close must wait for the running blockers.
			select {
			case <-closed:
				t.Fatal("Close returned while tasks were running")
			case <-time.After(20 * time.Millisecond):
			}
			close(release)
			<-closed

			for i := range queued {
				require.EqualValues(t, 1, queued[i].rejects.Load(), "queued task %d", i)
				require.EqualValues(t, ReasonClosed, queued[i].reason.Load())
			}
			late := &probe{}
			p.Submit(late)
			assert.EqualValues(t, 1, late.rejects.Load())
			assert.EqualValues(t, ReasonClosed, late.reason.Load())
			p.Close() // idempotent
		})
	}
}

// holdWorkers makes every one of p's workers (or slots) busy with a task
// that returns once release is closed, and returns release.
func holdWorkers(t *testing.T, p Pool, workers int) (release chan struct{}) {
	release = make(chan struct{})
	for range workers {
		// One at a time, so a burst cannot overflow a small queue; again
		// if rejected (a fifo hand-off finds no worker ready yet).
		h := &holder{started: make(chan bool, 1), release: release}
		for submit(t, p, h); !<-h.started; submit(t, p, h) {
			time.Sleep(time.Millisecond)
		}
	}
	return release
}

// holder is a Task that tells whether it started and runs until release.
type holder struct {
	started chan bool
	release chan struct{}
}

func (h *holder) Run()            { h.started <- true; <-h.release }
func (h *holder) Reject(Reason)   { h.started <- false }
func (h *holder) Deadline() int64 { return 0 }

// TestCapacityBound: with every worker held busy, 64 producers racing to
// overfill a queue under the reject policy never make Stats.Queued exceed
// Capacity (msqueue and multiqueue included: their atomic bound is exact),
// and exactly Capacity tasks end up queued, the others rejected ReasonFull.
func TestCapacityBound(t *testing.T) {
	for _, c := range conformanceCases() {
		if c.variant == "direct" || c.cfg.Capacity == Unbounded || c.cfg.Overflow != OverflowReject {
			continue
		}
		t.Run(c.String(), func(t *testing.T) {
			p, err := New(c.variant, c.cfg)
			require.NoError(t, err)
			release := holdWorkers(t, p, c.cfg.Workers)
			fullBefore := p.Stats().Rejected[ReasonFull] // holders a hand-off refused

			var most atomic.Int64
			stop := make(chan struct{})
			var sampler sync.WaitGroup
			sampler.Go(func() {
				for {
					if q := int64(p.Stats().Queued); q > most.Load() {
						most.Store(q)
					}
					select {
					case <-stop:
						return
					default:
					}
				}
			})
			const producers, perProducer = 64, 20
			tasks := make([]probe, producers*perProducer)
			if inHandler(p) {
				// A queued submitter sleeps until it is answered: every
				// task from a goroutine of its own, then wait until each
				// is queued or refused.
				for i := range tasks {
					async(t, func() { p.Submit(&tasks[i]) })
				}
				require.Eventually(t, func() bool {
					s := p.Stats()
					return uint64(s.Queued)+s.Rejected[ReasonFull]-fullBefore == uint64(len(tasks))
				}, hangGuard, 100*time.Microsecond, "every task queued or refused")
			} else {
				submitConcurrently(p, tasks, producers)
			}
			close(stop)
			sampler.Wait()

			s := p.Stats()
			assert.LessOrEqual(t, int(most.Load()), c.cfg.Capacity, "Queued exceeded Capacity")
			assert.Equal(t, c.cfg.Capacity, s.Queued)
			assert.EqualValues(t, len(tasks)-c.cfg.Capacity, s.Rejected[ReasonFull]-fullBefore)
			if mq, ok := p.(*MSQueue); ok {
				assert.Equal(t, c.cfg.Capacity, mq.q.(*msQueue).linked(), "nodes linked")
			}
			close(release)
			p.Close()
		})
	}
}

// linked counts the nodes in the queue; only for a quiescent queue.
func (q *msQueue) linked() int {
	n := 0
	for nd := q.head.Load().next.Load(); nd != nil; nd = nd.next.Load() {
		n++
	}
	return n
}

// TestOnWaitSeesEveryDequeue: OnWait (the metrics layer's wait histogram)
// is called once for every task a worker takes off the queue, run or
// expired.
func TestOnWaitSeesEveryDequeue(t *testing.T) {
	for _, c := range variantModes() {
		t.Run(c.String(), func(t *testing.T) {
			var waits atomic.Int64
			p, err := New(c.variant, Config{Exec: c.cfg.Exec, Workers: 2, Capacity: 64, Overflow: OverflowBlock,
				OnWait: func(time.Duration) { waits.Add(1) }})
			require.NoError(t, err)
			tasks := make([]probe, 500)
			for i := range tasks {
				p.Submit(&tasks[i])
			}
			waitIdle(t, p)
			p.Close()
			s := p.Stats()
			assert.EqualValues(t, len(tasks), s.Completed+s.Rejected[ReasonExpired])
			assert.EqualValues(t, len(tasks), waits.Load())
		})
	}
}

// TestSingleProducerOrder: a FIFO variant with one worker runs one
// producer's tasks in submission order. adaptive is FIFO while its queue
// does not stand; a target of an hour keeps it there. multiqueue is relaxed
// FIFO by design: TestMultiQueueRoughlyFIFO bounds its disorder instead.
func TestSingleProducerOrder(t *testing.T) {
	for _, c := range conformanceCases() {
		switch c.variant {
		case "fifo", "msqueue", "adaptive":
		default:
			continue
		}
		if c.cfg.Workers != 1 || c.cfg.Capacity < 256 || c.cfg.Overflow != OverflowBlock {
			continue
		}
		c.cfg.CoDelTarget = time.Hour
		c.cfg.QueueTimeout = 0 // block until room, never expire: every task runs
		t.Run(c.String(), func(t *testing.T) {
			p, err := New(c.variant, c.cfg)
			require.NoError(t, err)
			order := runOrder(t, p, 1000, nil, nil)
			require.Equal(t, 1000, len(order), "with block and no timeout pressure every task runs")
			for i := range order {
				require.Equal(t, i, order[i])
			}
		})
	}
}

// runOrder submits n tasks to p from one goroutine, waits until all are
// answered, closes p and returns the indexes of the tasks that ran, in the
// order they ran. If release is not nil, p's first worker is kept busy until
// every task is submitted, so all of them are queued before any runs. If
// each is not nil, every task calls it when it runs.
func runOrder(t *testing.T, p Pool, n int, release chan struct{}, each func()) []int {
	t.Helper()
	if release != nil {
		started := make(chan struct{})
		submit(t, p, &probe{work: func() { close(started); <-release }})
		await(t, started, "the task holding the worker to start")
	}
	var mu sync.Mutex
	var order []int
	tasks := make([]probe, n)
	for i := range tasks {
		tasks[i].work = func() {
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			if each != nil {
				each()
			}
		}
		if release != nil {
			place(t, p, &tasks[i]) // queued in submission order
		} else {
			p.Submit(&tasks[i])
		}
	}
	if release != nil {
		close(release)
	}
	waitIdle(t, p)
	p.Close()
	return order
}

// TestLIFONewestFirst: with its one worker busy, lifo serves what queued
// meanwhile newest first.
func TestLIFONewestFirst(t *testing.T) {
	for _, c := range conformanceCases() {
		if c.variant != "lifo" || c.cfg.Workers != 1 || c.cfg.Capacity != 256 || c.cfg.Overflow != OverflowReject {
			continue
		}
		t.Run(c.String(), func(t *testing.T) {
			p, err := New(c.variant, c.cfg)
			require.NoError(t, err)
			order := runOrder(t, p, 200, make(chan struct{}), nil)
			require.Equal(t, 200, len(order))
			for i := range order {
				require.Equal(t, 199-i, order[i])
			}
		})
	}
}

// TestOverflowPolicies: with one busy worker and a full queue of two, each
// policy does what it says to the newcomer and the oldest queued task. The
// pool runs on a fake clock: queue waits and QueueTimeout see only the
// time the test advances, never how fast its goroutines start.
func TestOverflowPolicies(t *testing.T) {
	for _, exec := range execModes {
		for _, variant := range queueingVariants {
			t.Run(variant+"/"+exec.String(), func(t *testing.T) { testOverflowPolicies(t, variant, exec) })
		}
	}
}

func testOverflowPolicies(t *testing.T, variant string, exec Exec) {
	f := func(o Overflow, want func(t *testing.T, newcomer, oldest *probe, ranOnCaller bool)) {
		t.Helper()
		clk := newFakeClock()
		cfg := Config{Exec: exec, Workers: 1, Capacity: 2, Overflow: o, QueueTimeout: 10 * time.Millisecond, clock: clk}
		p, err := New(variant, cfg)
		require.NoError(t, err)
		release := make(chan struct{})
		started := make(chan struct{})
		submit(t, p, &probe{work: func() { close(started); <-release }})
		await(t, started, "the task holding the worker to start")
		// Time passes between submissions, as it does on a real clock:
		// multiqueue tells the oldest task by its enqueue stamp.
		oldest, second := &probe{}, &probe{}
		place(t, p, oldest)
		clk.Advance(time.Microsecond)
		place(t, p, second)
		clk.Advance(time.Microsecond)
		caller := make(chan bool, 1)
		newcomer := &probe{}
		submitter := make(chan struct{})
		newcomer.work = func() {
			select {
			case <-submitter:
				caller <- false
			default:
				caller <- true
			}
		}
		if o == OverflowBlock {
			// Submit blocks for room on a QueueTimeout timer; once the
			// clock reaches it, Submit gives up.
			submitted := make(chan struct{})
			go func() { p.Submit(newcomer); close(submitted) }()
			require.Equal(t, cfg.QueueTimeout, clk.WaitTimer(t), "a blocked Submit waits QueueTimeout")
			clk.Advance(cfg.QueueTimeout)
			await(t, submitted, "a blocked Submit to give up at QueueTimeout")
		} else if o == OverflowDropOldest {
			place(t, p, newcomer) // queued in the oldest's place
		} else {
			p.Submit(newcomer)
		}
		close(submitter)
		close(release)
		waitIdle(t, p)
		p.Close()
		ranOnCaller := false
		select {
		case ranOnCaller = <-caller:
		default:
		}
		want(t, newcomer, oldest, ranOnCaller)
	}
	f(OverflowReject, func(t *testing.T, newcomer, oldest *probe, _ bool) {
		assert.EqualValues(t, ReasonFull, newcomer.reason.Load())
		assert.EqualValues(t, 1, newcomer.rejects.Load())
		assert.EqualValues(t, 1, oldest.runs.Load())
	})
	f(OverflowDropOldest, func(t *testing.T, newcomer, oldest *probe, _ bool) {
		assert.EqualValues(t, 1, oldest.rejects.Load())
		assert.EqualValues(t, ReasonDropped, oldest.reason.Load())
		assert.EqualValues(t, 1, newcomer.runs.Load())
	})
	f(OverflowCallerRuns, func(t *testing.T, newcomer, oldest *probe, onCaller bool) {
		assert.EqualValues(t, 1, newcomer.runs.Load())
		assert.True(t, onCaller, "caller-runs must run the newcomer before Submit returns")
	})
	f(OverflowBlock, func(t *testing.T, newcomer, oldest *probe, _ bool) {
		// The worker stays blocked past QueueTimeout, so the wait gives up.
		assert.EqualValues(t, 1, newcomer.rejects.Load())
		assert.EqualValues(t, ReasonFull, newcomer.reason.Load())
		assert.Zero(t, newcomer.runs.Load())
		// By then the oldest has waited past QueueTimeout too: it expires.
		assert.EqualValues(t, 1, oldest.rejects.Load())
		assert.EqualValues(t, ReasonExpired, oldest.reason.Load())
	})
}

// TestQueueTimeoutExpires: a task that waited past QueueTimeout is rejected
// ReasonExpired at dequeue, unrun, by every queueing variant, and one that
// did not wait that long runs. On a fake clock: the task holding the
// worker is dequeued with no time passed however late its goroutine runs,
// and the stale one has waited exactly what the test advanced.
func TestQueueTimeoutExpires(t *testing.T) {
	for _, exec := range execModes {
		for _, variant := range queueingVariants {
			t.Run(variant+"/"+exec.String(), func(t *testing.T) { testQueueTimeoutExpires(t, variant, exec) })
		}
	}
}

func testQueueTimeoutExpires(t *testing.T, variant string, exec Exec) {
	clk := newFakeClock()
	p, err := New(variant, Config{Exec: exec, Workers: 1, Capacity: 4, QueueTimeout: time.Millisecond, clock: clk})
	require.NoError(t, err)
	started, release := make(chan struct{}), make(chan struct{})
	submit(t, p, &probe{work: func() { close(started); <-release }})
	await(t, started, "the task holding the worker to start")
	stale := &probe{}
	place(t, p, stale)
	clk.Advance(5 * time.Millisecond)
	fresh := &probe{}
	place(t, p, fresh)
	close(release)
	waitIdle(t, p)
	p.Close()
	assert.EqualValues(t, 0, stale.runs.Load(), "an expired task must not run")
	assert.EqualValues(t, 1, stale.rejects.Load())
	assert.EqualValues(t, ReasonExpired, stale.reason.Load())
	assert.EqualValues(t, 1, fresh.runs.Load(), "a task queued after the clock moved has not waited")
	s := p.Stats()
	assert.EqualValues(t, 1, s.Rejected[ReasonExpired])
	assert.Equal(t, 5*time.Millisecond, s.WaitTotal, "the holder and fresh waited 0, stale 5ms")
}

// TestNewChecksAConfigResolvedForAnother: New builds what Resolve returned
// for the same variant as it is; one resolved for another variant it
// resolves, and checks, again.
func TestNewChecksAConfigResolvedForAnother(t *testing.T) {
	cfg, err := Resolve("fifo", Config{Capacity: 0})
	require.NoError(t, err)
	p, err := New("fifo", cfg)
	require.NoError(t, err)
	p.Close()
	_, err = New("lifo", cfg)
	assert.ErrorContains(t, err, "lifo needs a queue")
}

func TestNewRejectsBadConfig(t *testing.T) {
	f := func(name string, cfg Config) {
		t.Helper()
		_, err := New(name, cfg)
		assert.Error(t, err)
		_, resolveErr := Resolve(name, cfg)
		assert.Equal(t, err, resolveErr, "Resolve refuses what New refuses, saying the same")
	}
	f("nope", Config{})
	f("fifo", Config{Exec: Exec(9)})
	f("fifo", Config{Capacity: -2})
	f("fifo", Config{Capacity: 0, Overflow: OverflowDropOldest})
	f("direct", Config{Limit: limit.Config{Algorithm: "gradient2"}})
	f("fifo", Config{Exec: ExecWorker, Limit: limit.Config{Algorithm: "vegas"}})
	for _, name := range queueingVariants {
		f(name, Config{Capacity: -2})
		f(name, Config{Capacity: 8, Overflow: Overflow(99)})
		for _, o := range []Overflow{OverflowDropOldest, OverflowCallerRuns, OverflowBlock} {
			f(name, Config{Capacity: Unbounded, Overflow: o})
		}
	}
	for _, name := range queuedVariants {
		f(name, Config{Capacity: 0})
	}
	// And every combination the conformance table uses is accepted.
	for _, c := range conformanceCases() {
		_, err := Resolve(c.variant, c.cfg)
		require.NoError(t, err, c.String())
		p, err := New(c.variant, c.cfg)
		require.NoError(t, err, c.String())
		assert.Equal(t, c.variant, p.Name())
		p.Close()
	}
	_, err := ParseOverflow("sometimes")
	assert.Error(t, err)
	for _, name := range overflowNames {
		o, err := ParseOverflow(name)
		require.NoError(t, err)
		assert.Equal(t, name, o.String())
	}
}
