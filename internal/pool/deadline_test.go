package pool

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/mono"
	"github.com/kvpool/kvpool/internal/mono/monotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deadlineCases are direct and every queueing variant in both exec modes,
// on one worker or slot and a queue of 8; each test sets its fake clock.
// adaptive's CoDel target is an hour, so that only deadlines and
// QueueTimeout shed here.
func deadlineCases(o Overflow, queueTimeout time.Duration) []conformanceCase {
	cases := []conformanceCase{{variant: "direct"}}
	for _, c := range variantModes() {
		c.cfg.Workers, c.cfg.Capacity, c.cfg.Overflow, c.cfg.QueueTimeout = 1, 8, o, queueTimeout
		c.cfg.CoDelTarget, c.cfg.CoDelInterval = time.Hour, 2*time.Hour
		cases = append(cases, c)
	}
	return cases
}

// TestDeadlinePassedNeverRuns: a task whose deadline has passed where it
// would start is rejected ReasonDeadline, unrun, by every pool in both
// exec modes: one late on arrival (direct, a free slot, a hand-off to an
// idle worker) and one whose deadline passed while it was queued; a task
// still in time runs.
func TestDeadlinePassedNeverRuns(t *testing.T) {
	for _, c := range deadlineCases(OverflowReject, 0) {
		t.Run(c.String(), func(t *testing.T) {
			clk := newFakeClock()
			c.cfg.clock = clk
			p, err := New(c.variant, c.cfg)
			require.NoError(t, err)
			defer p.Close()

			late, inTime := &probe{deadline: clk.Now() - 1}, &probe{deadline: clk.Now() + int64(time.Millisecond)}
			p.Submit(late)
			p.Submit(inTime)
			answered(t, late, inTime)
			assert.Zero(t, late.runs.Load(), "a task late on arrival must not run")
			assert.EqualValues(t, 1, late.rejects.Load())
			assert.EqualValues(t, ReasonDeadline, late.reason.Load())
			assert.EqualValues(t, 1, inTime.runs.Load())
			if c.variant == "direct" {
				return // nothing waits in direct
			}

			release := holdWorkers(t, p, 1)
			expiring := &probe{deadline: clk.Now() + int64(5*time.Millisecond)}
			lasting := &probe{deadline: clk.Now() + int64(time.Hour)}
			place(t, p, expiring)
			place(t, p, lasting)
			clk.Advance(10 * time.Millisecond) // past expiring's deadline, not lasting's
			close(release)
			answered(t, expiring, lasting)
			assert.Zero(t, expiring.runs.Load(), "a task whose deadline passed while it waited must not run")
			assert.EqualValues(t, ReasonDeadline, expiring.reason.Load())
			assert.EqualValues(t, 1, lasting.runs.Load())
			assert.EqualValues(t, 2, p.Stats().Rejected[ReasonDeadline])
		})
	}
}

// answered waits until every task has been answered, or fails the test
// after hangGuard. (A pool's counters count an answer just before the task
// sees it, so waitIdle alone does not do.)
func answered(t *testing.T, tasks ...*probe) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, task := range tasks {
			if task.answers() == 0 {
				return false
			}
		}
		return true
	}, hangGuard, 50*time.Microsecond, "tasks still unanswered")
}

// TestDeadlineOrQueueTimeoutFirst: a queued task is dropped at the earlier
// of its deadline and QueueTimeout, and the reason says which came first.
func TestDeadlineOrQueueTimeoutFirst(t *testing.T) {
	const timeout = 10 * time.Millisecond
	for _, c := range deadlineCases(OverflowReject, timeout)[1:] {
		t.Run(c.String(), func(t *testing.T) {
			clk := newFakeClock()
			c.cfg.clock = clk
			p, err := New(c.variant, c.cfg)
			require.NoError(t, err)
			release := holdWorkers(t, p, 1)
			now := clk.Now()
			deadlineFirst := &probe{deadline: now + int64(timeout/2)}
			timeoutFirst := &probe{deadline: now + int64(timeout*3/2)}
			noDeadline := &probe{}
			for _, task := range []*probe{deadlineFirst, timeoutFirst, noDeadline} {
				place(t, p, task)
			}
			clk.Advance(2 * timeout)
			close(release)
			waitIdle(t, p)
			p.Close()
			assert.EqualValues(t, ReasonDeadline, deadlineFirst.reason.Load())
			assert.EqualValues(t, ReasonExpired, timeoutFirst.reason.Load())
			assert.EqualValues(t, ReasonExpired, noDeadline.reason.Load())
			for _, task := range []*probe{deadlineFirst, timeoutFirst, noDeadline} {
				assert.Zero(t, task.runs.Load())
			}
		})
	}
}

// fullPool builds c's pool with a queue of one on a fake clock, holds its
// worker or slot busy until release is closed, and fills the queue.
func fullPool(t *testing.T, c conformanceCase) (Pool, *monotest.Clock, chan struct{}) {
	t.Helper()
	clk := newFakeClock()
	c.cfg.clock, c.cfg.Capacity = clk, 1
	p, err := New(c.variant, c.cfg)
	require.NoError(t, err)
	release := holdWorkers(t, p, 1)
	place(t, p, &probe{})
	return p, clk, release
}

// TestCallerRunsChecksDeadline: caller-runs is a place a task starts, so a
// late newcomer that finds the queue full is rejected ReasonDeadline
// rather than run on its caller; one in time runs there.
func TestCallerRunsChecksDeadline(t *testing.T) {
	for _, c := range deadlineCases(OverflowCallerRuns, 0)[1:] {
		t.Run(c.String(), func(t *testing.T) {
			p, clk, release := fullPool(t, c)
			late, inTime := &probe{deadline: clk.Now() - 1}, &probe{deadline: clk.Now() + 1}
			p.Submit(late) // answered on the caller, before Submit returns
			p.Submit(inTime)
			assert.Zero(t, late.runs.Load())
			assert.EqualValues(t, ReasonDeadline, late.reason.Load())
			assert.EqualValues(t, 1, inTime.runs.Load(), "a newcomer in time runs on its caller")
			close(release)
			waitIdle(t, p)
			p.Close()
		})
	}
}

// TestBlockedSubmitGivesUpAtDeadline: a Submit blocked for room waits for
// the earlier of QueueTimeout and the task's deadline, and a deadline that
// comes first rejects the task ReasonDeadline.
func TestBlockedSubmitGivesUpAtDeadline(t *testing.T) {
	for _, c := range deadlineCases(OverflowBlock, time.Second)[1:] {
		t.Run(c.String(), func(t *testing.T) {
			p, clk, release := fullPool(t, c)
			newcomer := &probe{deadline: clk.Now() + int64(5*time.Millisecond)}
			submitted := make(chan struct{})
			go func() { p.Submit(newcomer); close(submitted) }()
			assert.Equal(t, 5*time.Millisecond, clk.WaitTimer(t), "a blocked Submit waits until the deadline, before QueueTimeout")
			clk.Advance(5 * time.Millisecond)
			await(t, submitted, "a blocked Submit to give up at the deadline")
			assert.Zero(t, newcomer.runs.Load())
			assert.EqualValues(t, ReasonDeadline, newcomer.reason.Load())
			close(release)
			waitIdle(t, p)
			p.Close()
		})
	}
}

// leaver is a probe that can say its submitter has gone.
type leaver struct {
	probe
	gone  bool
	asked atomic.Int32
}

func (l *leaver) Abandoned() bool { l.asked.Add(1); return l.gone }

// TestAbandonedAfterWaiting: with AbandonAfter a task that waited at least
// that long is asked whether it has been abandoned where it would start,
// and rejected ReasonAbandoned, unrun, if so; a task that waited less is
// never asked. The failsafe variants ask once the library grants the
// permit, and give it back unrecorded.
func TestAbandonedAfterWaiting(t *testing.T) {
	const after = 5 * time.Millisecond
	cases := deadlineCases(OverflowReject, 0)[1:]
	for _, v := range []string{Failsafe, FailsafePriority} {
		cases = append(cases, conformanceCase{variant: v, cfg: Config{Exec: ExecHandler, Workers: 1}})
	}
	for _, c := range cases {
		t.Run(c.String(), func(t *testing.T) {
			clk := newFakeClock()
			c.cfg.clock, c.cfg.AbandonAfter = clk, after
			p, err := New(c.variant, c.cfg)
			require.NoError(t, err)
			release := holdWorkers(t, p, 1)
			gone, stayed := &leaver{gone: true}, &leaver{}
			place(t, p, gone)
			place(t, p, stayed)
			clk.Advance(after)
			goneQuickly := &leaver{gone: true} // waits 0: never asked
			place(t, p, goneQuickly)
			close(release)
			waitIdle(t, p)
			p.Close()
			assert.Zero(t, gone.runs.Load())
			assert.EqualValues(t, ReasonAbandoned, gone.reason.Load())
			assert.EqualValues(t, 1, stayed.runs.Load())
			assert.EqualValues(t, 1, stayed.asked.Load())
			assert.EqualValues(t, 1, goneQuickly.runs.Load())
			assert.Zero(t, goneQuickly.asked.Load(), "a task that did not wait AbandonAfter is not asked")
			assert.EqualValues(t, 1, p.Stats().Rejected[ReasonAbandoned])
		})
	}
}

// TestDeadlinesExactlyOnce: 32 producers submit tasks whose deadlines pass
// while they are submitted, queued and handed over (a quarter late on
// arrival, the rest due within 200 µs, on the real clock), to every pool
// in both exec modes under each overflow policy: every task is answered
// exactly once, none rejected for its deadline ran, and the counters add
// up.
func TestDeadlinesExactlyOnce(t *testing.T) {
	const producers, perProducer = 32, 100
	var cases []conformanceCase
	for _, o := range []Overflow{OverflowReject, OverflowDropOldest, OverflowCallerRuns, OverflowBlock} {
		for _, c := range variantModes() {
			c.cfg.Workers, c.cfg.Capacity, c.cfg.Overflow = 4, 16, o
			c.cfg.QueueTimeout = 100 * time.Microsecond
			cases = append(cases, c)
		}
	}
	cases = append(cases, conformanceCase{variant: "direct"})
	for _, c := range cases {
		t.Run(c.String(), func(t *testing.T) {
			p, err := New(c.variant, c.cfg)
			require.NoError(t, err)
			tasks := make([]probe, producers*perProducer)
			for i := range tasks {
				tasks[i].work = runtime.Gosched
			}
			per := len(tasks) / producers
			done := make(chan struct{})
			for g := range producers {
				go func() {
					defer func() { done <- struct{}{} }()
					for i := range per {
						task := &tasks[g*per+i]
						task.deadline = mono.Now() + rand.Int64N(int64(200*time.Microsecond))
						if i%4 == 0 {
							task.deadline = mono.Now() - 1
						}
						p.Submit(task)
					}
				}()
			}
			for range producers {
				<-done
			}
			p.Close()
			var ran, late uint64
			for i := range tasks {
				require.EqualValues(t, 1, tasks[i].answers(), "task %d answered %d times", i, tasks[i].answers())
				ran += uint64(tasks[i].runs.Load())
				if tasks[i].rejects.Load() == 1 && Reason(tasks[i].reason.Load()) == ReasonDeadline {
					late++
					require.Zero(t, tasks[i].runs.Load())
				}
			}
			s := p.Stats()
			assert.EqualValues(t, len(tasks), s.Submitted)
			assert.Equal(t, ran, s.Completed)
			assert.Equal(t, late, s.Rejected[ReasonDeadline])
			assert.Equal(t, uint64(len(tasks))-ran, s.RejectedTotal())
		})
	}
}
