package pool

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probe is a Task that records how it was answered.
type probe struct {
	runs, rejects atomic.Int32
	reason        atomic.Int32
	work          func()
}

func (p *probe) Run() {
	p.runs.Add(1)
	if p.work != nil {
		p.work()
	}
}

func (p *probe) Reject(r Reason) {
	p.rejects.Add(1)
	p.reason.Store(int32(r))
}

// waitIdle waits until every task submitted to p has been answered.
func waitIdle(t *testing.T, p Pool) {
	t.Helper()
	require.Eventually(t, func() bool {
		s := p.Stats()
		return s.Completed+s.RejectedTotal() == s.Submitted
	}, 5*time.Second, time.Millisecond)
}

func (p *probe) answers() int32 { return p.runs.Load() + p.rejects.Load() }

// conformanceCase is one variant and configuration the shared tests cover.
type conformanceCase struct {
	variant string
	cfg     Config
}

func (c conformanceCase) String() string {
	return fmt.Sprintf("%s/w%d/cap%d/%s", c.variant, c.cfg.Workers, c.cfg.Capacity, c.cfg.Overflow)
}

// conformanceCases lists every variant x policy x shape the promise of
// Pool must hold for. A new variant adds its rows here.
func conformanceCases() []conformanceCase {
	cases := []conformanceCase{{variant: "direct"}}
	for _, workers := range []int{1, 4, 16} {
		for _, capacity := range []int{0, 8, 256} {
			for _, o := range []Overflow{OverflowReject, OverflowDropOldest, OverflowCallerRuns, OverflowBlock} {
				if capacity == 0 && o == OverflowDropOldest {
					continue // nothing queued to drop
				}
				cfg := Config{Workers: workers, Capacity: capacity, Overflow: o}
				if o == OverflowBlock {
					cfg.QueueTimeout = 50 * time.Millisecond
				}
				cases = append(cases, conformanceCase{variant: "fifo", cfg: cfg})
			}
		}
	}
	return cases
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
			var wg sync.WaitGroup
			for g := range producers {
				wg.Go(func() {
					for i := range perProducer {
						p.Submit(&tasks[g*perProducer+i])
					}
				})
			}
			wg.Wait()
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
			release := make(chan struct{})
			blockers := make([]probe, c.cfg.Workers)
			for i := range blockers {
				// One at a time, so a burst cannot overflow a small queue.
				started := make(chan struct{})
				blockers[i].work = func() { close(started); <-release }
				p.Submit(&blockers[i])
				<-started
			}
			// Every worker is busy now; what follows stays queued.
			queued := make([]probe, c.cfg.Capacity)
			for i := range queued {
				p.Submit(&queued[i])
			}
			assert.Equal(t, len(queued), p.Stats().Queued)

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

// TestSingleProducerOrder: a FIFO variant with one worker runs one
// producer's tasks in submission order.
func TestSingleProducerOrder(t *testing.T) {
	for _, c := range conformanceCases() {
		if c.variant != "fifo" || c.cfg.Workers != 1 || c.cfg.Capacity < 256 || c.cfg.Overflow != OverflowBlock {
			continue
		}
		t.Run(c.String(), func(t *testing.T) {
			p, err := New(c.variant, c.cfg)
			require.NoError(t, err)
			var mu sync.Mutex
			var order []int
			tasks := make([]probe, 1000)
			for i := range tasks {
				tasks[i].work = func() { mu.Lock(); order = append(order, i); mu.Unlock() }
				p.Submit(&tasks[i])
			}
			p.Close()
			for i := range order {
				require.Equal(t, i, order[i])
			}
		})
	}
}

func TestOverflowPolicies(t *testing.T) {
	f := func(o Overflow, want func(t *testing.T, newcomer, oldest *probe, ranOnCaller bool)) {
		t.Helper()
		p, err := New("fifo", Config{Workers: 1, Capacity: 2, Overflow: o, QueueTimeout: 10 * time.Millisecond})
		require.NoError(t, err)
		release := make(chan struct{})
		started := make(chan struct{})
		p.Submit(&probe{work: func() { close(started); <-release }})
		<-started
		oldest, second := &probe{}, &probe{}
		p.Submit(oldest)
		p.Submit(second)
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
		p.Submit(newcomer)
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
	})
}

func TestQueueTimeoutExpires(t *testing.T) {
	p, err := New("fifo", Config{Workers: 1, Capacity: 4, QueueTimeout: time.Millisecond})
	require.NoError(t, err)
	started, release := make(chan struct{}), make(chan struct{})
	p.Submit(&probe{work: func() { close(started); <-release }})
	<-started
	stale := &probe{}
	p.Submit(stale)
	time.Sleep(5 * time.Millisecond)
	close(release)
	waitIdle(t, p)
	p.Close()
	assert.EqualValues(t, 0, stale.runs.Load(), "an expired task must not run")
	assert.EqualValues(t, ReasonExpired, stale.reason.Load())
	assert.EqualValues(t, 1, p.Stats().Rejected[ReasonExpired])
}

func TestNewRejectsBadConfig(t *testing.T) {
	f := func(name string, cfg Config) {
		t.Helper()
		_, err := New(name, cfg)
		assert.Error(t, err)
	}
	f("nope", Config{})
	f("fifo", Config{Capacity: Unbounded})
	f("fifo", Config{Capacity: -2})
	f("fifo", Config{Capacity: 0, Overflow: OverflowDropOldest})
	_, err := ParseOverflow("sometimes")
	assert.Error(t, err)
	for _, name := range overflowNames {
		o, err := ParseOverflow(name)
		require.NoError(t, err)
		assert.Equal(t, name, o.String())
	}
}
