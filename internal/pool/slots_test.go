package pool

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goid is the calling goroutine's id, read from its stack header: the
// tests' way to tell which goroutine ran a task.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

// ownerTask records the goroutine that answered it.
type ownerTask struct {
	by     atomic.Uint64
	reason atomic.Int32
	work   func()
}

func (o *ownerTask) Run() {
	o.by.Store(goid())
	if o.work != nil {
		o.work()
	}
}
func (o *ownerTask) Reject(r Reason) { o.by.Store(goid()); o.reason.Store(int32(r)) }
func (o *ownerTask) Deadline() int64 { return 0 }

// TestHandlerRunsOnSubmitter: under ExecHandler every task is run, or
// rejected, on the goroutine that submitted it, before Submit returns,
// whether it found a slot free, waited for one, was shed by age or
// refused for a full queue.
func TestHandlerRunsOnSubmitter(t *testing.T) {
	for _, variant := range queueingVariants {
		t.Run(variant, func(t *testing.T) {
			clk := newFakeClock()
			p, err := New(variant, Config{Exec: ExecHandler, Workers: 1, Capacity: 2, QueueTimeout: time.Millisecond, clock: clk})
			require.NoError(t, err)
			check := func(task *ownerTask, sub uint64) {
				t.Helper()
				assert.Equal(t, sub, task.by.Load(), "answered on another goroutine than its submitter")
			}
			free := &ownerTask{}
			p.Submit(free)
			check(free, goid())

			started, release := make(chan struct{}), make(chan struct{})
			holder := &ownerTask{work: func() { close(started); <-release }}
			subs := make(chan uint64, 4)
			submitFrom := func(task *ownerTask) {
				async(t, func() { subs <- goid(); p.Submit(task) })
			}
			submitFrom(holder)
			await(t, started, "the holder to run")
			stale, fresh := &ownerTask{}, &ownerTask{}
			submitFrom(stale)
			require.Eventually(t, func() bool { return p.Stats().Queued == 1 }, hangGuard, 50*time.Microsecond)
			clk.Advance(2 * time.Millisecond) // stale waits past QueueTimeout
			submitFrom(fresh)
			require.Eventually(t, func() bool { return p.Stats().Queued == 2 }, hangGuard, 50*time.Microsecond)
			full := &ownerTask{}
			p.Submit(full) // the queue holds two: refused at once
			check(full, goid())
			assert.EqualValues(t, ReasonFull, full.reason.Load())
			close(release)
			waitIdle(t, p)
			p.Close()
			ids := map[uint64]bool{}
			for range 3 {
				ids[<-subs] = true
			}
			for _, task := range []*ownerTask{holder, stale, fresh} {
				assert.True(t, ids[task.by.Load()], "answered on a goroutine that submitted nothing")
			}
			assert.EqualValues(t, ReasonExpired, stale.reason.Load())
			assert.NotEqual(t, holder.by.Load(), fresh.by.Load())
		})
	}
}

// steppedLimit is a limit the test moves: Current is whatever was set
// last; Sample counts.
type steppedLimit struct {
	n       atomic.Int64
	samples atomic.Int64
	changes atomic.Uint64
}

func (s *steppedLimit) Current() int { return int(s.n.Load()) }
func (s *steppedLimit) Sample(int64, time.Duration, int, bool) {
	s.samples.Add(1)
}
func (s *steppedLimit) Changes() uint64 { return s.changes.Load() }
func (s *steppedLimit) set(n int) {
	if s.n.Swap(int64(n)) != int64(n) {
		s.changes.Add(1)
	}
}

// TestHandlerSlotsBoundAndExactlyOnce: many producers, tasks that yield,
// and a limit that moves between 1 and 8 all along (as an adaptive one
// does): every task is answered exactly once, no Submit is left waiting
// (a stranded waiter hangs the test), and no more tasks run at once than
// the largest limit, nor, once the limit has stayed at 1, more than one.
func TestHandlerSlotsBoundAndExactlyOnce(t *testing.T) {
	for _, variant := range queueingVariants {
		t.Run(variant, func(t *testing.T) {
			lim := &steppedLimit{}
			lim.set(4)
			p, err := New(variant, Config{Exec: ExecHandler, Workers: 4, Capacity: Unbounded, limiter: lim,
				CoDelTarget: time.Hour, CoDelInterval: 2 * time.Hour})
			if variant == "fifo" {
				p, err = New(variant, Config{Exec: ExecHandler, Workers: 4, Capacity: 4096, limiter: lim})
			}
			require.NoError(t, err)
			var running, most atomic.Int64
			const producers, each = 32, 200
			tasks := make([]probe, producers*each)
			for i := range tasks {
				tasks[i].work = func() {
					n := running.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					if i%3 == 0 {
						runtime.Gosched()
					}
					if i%50 == 0 {
						lim.set(1 + i%8) // 1..8
					}
					running.Add(-1)
				}
			}
			submitConcurrently(p, tasks, producers)
			for i := range tasks {
				require.EqualValues(t, 1, tasks[i].answers(), "task %d", i)
			}
			assert.LessOrEqual(t, most.Load(), int64(8), "more tasks ran at once than the limit ever was")

			// Pinned at 1: strictly one at a time.
			lim.set(1)
			most.Store(0)
			more := make([]probe, 16*50)
			for i := range more {
				more[i].work = tasks[1].work
			}
			submitConcurrently(p, more, 16)
			p.Close()
			assert.EqualValues(t, 1, most.Load(), "with the limit at 1, one task at a time")
			s := p.Stats()
			assert.Equal(t, s.Submitted, s.Completed+s.RejectedTotal())
			assert.Zero(t, s.RejectedTotal(), "an unbounded queue without timeouts sheds nothing")
		})
	}
}

// TestHandlerLimitRiseAdmitsWaiters: when a sample raises the limit, the
// slots it adds go to queued waiters at once, not at the next arrival.
func TestHandlerLimitRiseAdmitsWaiters(t *testing.T) {
	for _, variant := range queueingVariants {
		t.Run(variant, func(t *testing.T) {
			lim := &raisingLimit{}
			lim.n.Store(1)
			p, err := New(variant, Config{Exec: ExecHandler, Workers: 1, Capacity: 64, limiter: lim})
			require.NoError(t, err)
			release := holdWorkers(t, p, 1)
			waiting := make([]chan struct{}, 3)
			allIn := make(chan struct{})
			for i := range waiting {
				ch := make(chan struct{})
				waiting[i] = ch
				place(t, p, &probe{work: func() { close(ch); <-allIn }})
			}
			require.Equal(t, 3, p.Stats().Queued)
			lim.raiseTo.Store(4) // the holder's sample raises it
			// Each waiter, once admitted, holds its slot until all three
			// are in: only slots added by the raise can admit the other
			// two, since no waiter gives its slot back before that.
			close(release)
			for i, ch := range waiting {
				await(t, ch, fmt.Sprintf("waiter %d to be admitted", i))
			}
			close(allIn)
			waitIdle(t, p)
			p.Close()
		})
	}
}

// raisingLimit is 1 until its first sample, then raiseTo.
type raisingLimit struct {
	n, raiseTo atomic.Int64
}

func (r *raisingLimit) Current() int { return int(r.n.Load()) }
func (r *raisingLimit) Sample(int64, time.Duration, int, bool) {
	if v := r.raiseTo.Load(); v > 0 {
		r.n.Store(v)
	}
}
func (r *raisingLimit) Changes() uint64 { return 0 }

// TestLIFOShedsOldestByAge: a stack under load serves its top, so without
// help its bottom waits as long as the load lasts. With QueueTimeout,
// lifo sheds an expired bottom first, in both exec modes: on a fake clock,
// A waits past the timeout while B and C arrive; when the slot frees, A
// is rejected ReasonExpired unrun and C, then B, run.
func TestLIFOShedsOldestByAge(t *testing.T) {
	for _, exec := range execModes {
		t.Run(exec.String(), func(t *testing.T) {
			clk := newFakeClock()
			p, err := New("lifo", Config{Exec: exec, Workers: 1, Capacity: 8, QueueTimeout: 10 * time.Millisecond, clock: clk})
			require.NoError(t, err)
			release := holdWorkers(t, p, 1)
			var mu sync.Mutex
			var order []string
			task := func(name string) *probe {
				return &probe{work: func() { mu.Lock(); order = append(order, name); mu.Unlock() }}
			}
			a, b, c := task("A"), task("B"), task("C")
			place(t, p, a)
			clk.Advance(11 * time.Millisecond)
			place(t, p, b)
			place(t, p, c)
			close(release)
			waitIdle(t, p)
			p.Close()
			assert.EqualValues(t, 1, a.rejects.Load())
			assert.EqualValues(t, ReasonExpired, a.reason.Load())
			assert.Equal(t, []string{"C", "B"}, order)
		})
	}
}

// TestHandlerCloseRejectsWaiters: Close answers every queued waiter
// ReasonClosed on its own goroutine and waits for the tasks running.
func TestHandlerCloseRejectsWaiters(t *testing.T) {
	p, err := New("lifo", Config{Exec: ExecHandler, Workers: 2, Capacity: 64})
	require.NoError(t, err)
	release := holdWorkers(t, p, 2)
	queued := make([]probe, 10)
	for i := range queued {
		place(t, p, &queued[i])
	}
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	for i := range queued {
		require.Eventually(t, func() bool { return queued[i].answers() == 1 }, hangGuard, 50*time.Microsecond)
		assert.EqualValues(t, ReasonClosed, queued[i].reason.Load())
	}
	select {
	case <-closed:
		t.Fatal("Close returned while two tasks were running")
	default:
	}
	close(release)
	await(t, closed, "Close to return once the running tasks end")
	late := &probe{}
	p.Submit(late)
	assert.EqualValues(t, ReasonClosed, late.reason.Load())
}
