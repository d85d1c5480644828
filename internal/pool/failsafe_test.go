package pool

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The failsafe variants: failsafe-go's adaptive limiter behind Pool. What
// is tested is the adapter (every task answered once, the deadline, the
// abandoned client, Close, the priority a retry asks at); the library's
// own limit is its authors' to test.

var failsafeVariants = []string{Failsafe, FailsafePriority}

// markedProbe is a probe that may say it is a retry.
type markedProbe struct {
	probe
	retry bool
}

func (m *markedProbe) Retry() bool { return m.retry }

// TestFailsafeAnswersEachTaskOnce: 16 producers submit first tries and
// marked retries, a fifth of them with a deadline already past or due
// within 100 µs, some yielding while they run so that the limiter
// queues and refuses, to both variants at the library's own limit and
// at a limit of 1 and 4; Close comes while some may still wait. Every
// task is run or rejected exactly once, none rejected for its deadline
// or for Close ran, and the counters add up.
func TestFailsafeAnswersEachTaskOnce(t *testing.T) {
	const producers, perProducer = 16, 200
	for _, name := range failsafeVariants {
		for _, workers := range []int{0, 1, 4} {
			t.Run(fmt.Sprintf("%s/workers=%d", name, workers), func(t *testing.T) {
				p, err := New(name, Config{Workers: workers})
				require.NoError(t, err)
				tasks := make([]markedProbe, producers*perProducer)
				for i := range tasks {
					tasks[i].retry = i%3 == 0
					if i%7 == 0 {
						tasks[i].work = func() { time.Sleep(10 * time.Microsecond) } // hold the permit a while: queues build
					}
					switch i % 10 {
					case 1:
						tasks[i].deadline = now() - 1 // late on arrival
					case 2:
						tasks[i].deadline = now() + int64(100*time.Microsecond)
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
				// Close while the producers run: those still waiting for a
				// permit, and those that come after, are rejected closed.
				wg.Go(func() {
					for p.Stats().Submitted < producers*perProducer/2 {
						time.Sleep(50 * time.Microsecond)
					}
					p.Close()
				})
				wg.Wait()

				var ran, rejected int
				for i := range tasks {
					tk := &tasks[i]
					require.EqualValues(t, 1, tk.answers(), "task %d answered %d times", i, tk.answers())
					ran += int(tk.runs.Load())
					rejected += int(tk.rejects.Load())
				}
				s := p.Stats()
				assert.EqualValues(t, len(tasks), s.Submitted)
				assert.EqualValues(t, ran, s.Completed)
				assert.EqualValues(t, rejected, s.RejectedTotal())
				assert.Positive(t, s.Rejected[ReasonDeadline], "the late ones")
				assert.Positive(t, s.Rejected[ReasonClosed], "those after Close")
				assert.Zero(t, s.Queued)
				assert.Zero(t, s.Busy)
			})
		}
	}
}

// TestFailsafeCloseAnswersWaiting: with its limit of 2 permits held,
// tasks wait in the limiter's queue; Close rejects them (closed), waits
// for the two running, and refuses later tasks at once.
func TestFailsafeCloseAnswersWaiting(t *testing.T) {
	for _, name := range failsafeVariants {
		t.Run(name, func(t *testing.T) {
			p, err := New(name, Config{Workers: 2})
			require.NoError(t, err)
			release := holdWorkers(t, p, 2)
			waiting := make([]probe, failsafeQueue*2) // the queue before refusals begin
			for i := range waiting {
				place(t, p, &waiting[i])
			}
			s := p.Stats()
			assert.Equal(t, len(waiting), s.Queued)
			assert.Equal(t, 2, s.Busy)
			assert.Equal(t, 2, s.Workers, "-workers sets the limit it starts at")
			assert.Equal(t, failsafeMaxQueue*2, s.Capacity)

			closed := make(chan struct{})
			go func() { p.Close(); close(closed) }()
			require.Eventually(t, func() bool { return p.Stats().RejectedTotal() == uint64(len(waiting)) }, hangGuard, 50*time.Microsecond)
			select {
			case <-closed:
				t.Fatal("Close returned while tasks were running")
			default:
			}
			close(release)
			await(t, closed, "Close")
			for i := range waiting {
				assert.Zero(t, waiting[i].runs.Load())
				assert.EqualValues(t, ReasonClosed, waiting[i].reason.Load())
			}
			late := &probe{}
			p.Submit(late)
			assert.EqualValues(t, ReasonClosed, late.reason.Load())
			p.Close() // idempotent
		})
	}
}

// TestFailsafeDeadline: a task past its deadline is refused without
// asking for a permit; one whose deadline passes while it waits for a
// permit gives up its place then (no permit needed), both rejected
// deadline, unrun.
func TestFailsafeDeadline(t *testing.T) {
	for _, name := range failsafeVariants {
		t.Run(name, func(t *testing.T) {
			clk := newFakeClock()
			p, err := New(name, Config{Workers: 1, clock: clk})
			require.NoError(t, err)
			defer p.Close()
			late := &probe{deadline: clk.Now()}
			clk.Advance(time.Millisecond)
			p.Submit(late)
			assert.EqualValues(t, ReasonDeadline, late.reason.Load())

			release := holdWorkers(t, p, 1)
			defer close(release)
			waits := &probe{deadline: clk.Now() + int64(time.Millisecond)}
			done := make(chan struct{})
			go func() { p.Submit(waits); close(done) }()
			await(t, done, "the waiting task to give up at its deadline")
			assert.Zero(t, waits.runs.Load())
			assert.EqualValues(t, ReasonDeadline, waits.reason.Load())
			assert.EqualValues(t, 2, p.Stats().Rejected[ReasonDeadline])
		})
	}
}

// levelLog is a priority.LevelTracker that keeps every level recorded
// and puts the prioritizer's threshold at threshold once it refuses any.
type levelLog struct {
	mu        sync.Mutex
	levels    []int
	threshold int
}

func (l *levelLog) RecordLevel(level int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.levels = append(l.levels, level)
}

func (l *levelLog) GetLevel(float64) int { return l.threshold }

func (l *levelLog) recorded() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.levels...)
}

// TestFailsafeRetryAsksLower: under failsafe-priority a marked retry asks
// at a lower priority than a first try (the levels the library records
// lie in failsafeRetryPriority's range and failsafeFirstPriority's), so
// once the limiter is overloaded (its 2 permits held, its queue past
// failsafeQueue × the limit) and its prioritizer calibrated to refuse
// the levels below its threshold, a retry is refused at once while a
// first try still queues. Before that calibration the same retry queued.
func TestFailsafeRetryAsksLower(t *testing.T) {
	levels := &levelLog{threshold: (failsafeRetryPriority.MaxLevel() + failsafeFirstPriority.MinLevel()) / 2}
	p, err := New(FailsafePriority, Config{Workers: 2, levels: levels, calibrateByHand: true})
	require.NoError(t, err)
	fp := p.(*failsafePool)
	release := holdWorkers(t, p, 2)
	var held []*markedProbe
	hold := func(retry bool) {
		m := &markedProbe{retry: retry}
		place(t, p, m)
		held = append(held, m)
	}
	for range failsafeQueue * 2 {
		hold(false)
	}
	hold(true) // not refused yet: the threshold is still 0
	require.Equal(t, failsafeQueue*2+1, p.Stats().Queued)

	fp.prio.Calibrate() // queued past failsafeQueue × the limit: it refuses below the threshold
	require.Equal(t, levels.threshold, fp.prio.RejectionThreshold())
	retry := &markedProbe{retry: true}
	p.Submit(retry) // refused before Submit returns
	assert.EqualValues(t, 1, retry.rejects.Load())
	assert.EqualValues(t, ReasonFull, retry.reason.Load())
	hold(false) // a first try is above the threshold: it queues
	assert.Equal(t, failsafeQueue*2+2, p.Stats().Queued)

	for _, level := range levels.recorded() {
		inFirst := level >= failsafeFirstPriority.MinLevel() && level <= failsafeFirstPriority.MaxLevel()
		inRetry := level >= failsafeRetryPriority.MinLevel() && level <= failsafeRetryPriority.MaxLevel()
		assert.True(t, inFirst || inRetry, "level %d is neither a first try's nor a retry's", level)
	}
	close(release)
	waitIdle(t, p)
	p.Close()
	for _, m := range held {
		assert.EqualValues(t, 1, m.runs.Load())
	}
}

// TestFailsafeResolve: the failsafe variants run on their submitters
// whatever -exec asks, start their limit at -workers where given, and
// refuse the settings of our own limits and queues that would silently
// not apply.
func TestFailsafeResolve(t *testing.T) {
	for _, name := range failsafeVariants {
		cfg, err := Resolve(name, Config{Exec: ExecWorker})
		require.NoError(t, err)
		assert.Equal(t, ExecHandler, cfg.Exec)
		assert.Zero(t, cfg.failsafeInitial, "the library's own first limit")
		assert.Equal(t, 20, cfg.Workers, "the settings say where the library's limit starts")
		assert.Equal(t, 60, cfg.Capacity, "and the queue at which it refuses every newcomer")
		assert.Equal(t, FailsafeLimit, cfg.Limit.Algorithm)
		cfg, err = Resolve(name, Config{Workers: 16})
		require.NoError(t, err)
		assert.Equal(t, 16, cfg.failsafeInitial)
		assert.Equal(t, 16, cfg.Workers)
		for _, bad := range []Config{{MaxWait: time.Second}, {MaxWait: AutoMaxWait}, {QueueTimeout: time.Second}} {
			_, err := Resolve(name, bad)
			assert.Error(t, err, "%+v", bad)
		}
		bad := Config{}
		bad.Limit.Algorithm = "vegas"
		_, err = Resolve(name, bad)
		assert.ErrorContains(t, err, "-limit vegas")
	}
}
