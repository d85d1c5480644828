package pool

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pingTask reports on done each time it is run or rejected. Every third
// run it yields first, and pingPong yields before every fifth submission:
// shuffling who runs when widens the windows a lost wake-up falls into.
type pingTask struct {
	done    chan struct{}
	runs    int
	rejects int
}

func (p *pingTask) Run() {
	if p.runs++; p.runs%3 == 0 {
		runtime.Gosched()
	}
	p.done <- struct{}{}
}

func (p *pingTask) Reject(Reason)   { p.rejects++; p.done <- struct{}{} }
func (p *pingTask) Deadline() int64 { return 0 }

// TestNoLostWakeup: one task at a time into an idle pool, thousands of
// times, from 1 and from 8 producers at once. Each submission races a
// worker that is going back to sleep after the previous task, which is the
// window a lost wake-up falls into. A lost wake-up leaves the task queued
// with every worker asleep, and nothing would ever wake them: the wait
// below times out. (5 s is not a speed bound: a task normally runs in
// microseconds; it only has to tell "late" from "never".)
func TestNoLostWakeup(t *testing.T) {
	for _, variant := range queueingVariants {
		for _, workers := range []int{1, 2, 4, 70} { // 70: two bitmap words
			for _, producers := range []int{1, 8} {
				t.Run(fmt.Sprintf("%s/w%d/producers%d", variant, workers, producers), func(t *testing.T) {
					p, err := New(variant, Config{Exec: ExecWorker, Workers: workers, Capacity: 64})
					require.NoError(t, err)
					defer p.Close()
					var wg sync.WaitGroup
					for range producers {
						wg.Go(func() { pingPong(t, p, 20000/producers) })
					}
					wg.Wait()
				})
			}
		}
	}
}

func pingPong(t *testing.T, p Pool, n int) {
	task := &pingTask{done: make(chan struct{}, 1)}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for i := range n {
		if i%5 == 0 {
			runtime.Gosched()
		}
		p.Submit(task)
		timer.Reset(5 * time.Second)
		select {
		case <-task.done:
		case <-timer.C:
			t.Errorf("task %d still queued after 5s: a wake-up was lost; %+v", i, p.Stats())
			return
		}
	}
	if task.rejects != 0 {
		t.Errorf("%d of %d tasks rejected; none should be with at most 8 queued", task.rejects, n)
	}
}

// idleCount counts the workers idle in l now.
func idleCount(l *idlers) int {
	n := 0
	for i := range l.words {
		n += bits.OnesCount64(uint64(l.words[i].Load()))
	}
	return n
}

// TestIdlersClaimEachSleeperOnce: with 130 sleepers announced (three
// bitmap words), 8 goroutines claiming at once get each sleeper exactly
// once and then nil; a claimed sleeper cannot withdraw (it is owed a
// message), an unclaimed one can, and claims prefer the lowest index.
func TestIdlersClaimEachSleeperOnce(t *testing.T) {
	const n = 130
	l := newIdlers(n)
	index := map[*sleeper]int{}
	for i := range n {
		index[l.add()] = i
	}
	for _, s := range l.all {
		l.announce(s)
	}
	require.Equal(t, n, idleCount(&l))

	claims := make([][]*sleeper, 8)
	var wg sync.WaitGroup
	for g := range claims {
		wg.Go(func() {
			for s := l.claim(); s != nil; s = l.claim() {
				claims[g] = append(claims[g], s)
			}
		})
	}
	wg.Wait()
	seen := make([]int, n)
	for _, c := range claims {
		for _, s := range c {
			seen[index[s]]++
		}
	}
	for i, k := range seen {
		assert.Equal(t, 1, k, "sleeper %d claimed %d times", i, k)
	}
	assert.Zero(t, idleCount(&l))
	assert.False(t, l.withdraw(l.all[5]), "a claimed sleeper is owed a message")

	l.announce(l.all[129])
	l.announce(l.all[64])
	l.announce(l.all[3])
	assert.True(t, l.withdraw(l.all[129]), "an unclaimed sleeper withdraws")
	assert.Same(t, l.all[3], l.claim(), "the lowest idle index first")
	assert.Same(t, l.all[64], l.claim())
	assert.Nil(t, l.claim())
}

// TestHandOffSkipsTheQueue: a task submitted while a worker is idle goes
// straight to it and reports a wait of 0 without reading the clock; a task
// submitted while every worker is busy queues (Stats.Queued shows it) and
// reports the time it waited (on a fake clock: exactly what the test
// advanced).
func TestHandOffSkipsTheQueue(t *testing.T) {
	for _, variant := range queueingVariants {
		t.Run(variant, func(t *testing.T) {
			var waits []time.Duration
			var mu sync.Mutex
			clk := newFakeClock()
			p, err := New(variant, Config{Exec: ExecWorker, Workers: 1, Capacity: 8, clock: clk, OnWait: func(d time.Duration) {
				mu.Lock()
				waits = append(waits, d)
				mu.Unlock()
			}})
			require.NoError(t, err)
			defer p.Close()
			idle := &machinery(p).idle
			require.Eventually(t, func() bool { return idleCount(idle) == 1 }, hangGuard, time.Millisecond, "the worker parks")

			p.Submit(&probe{})
			waitIdle(t, p)
			assert.Zero(t, p.Stats().WaitTotal, "a hand-off never queued")

			release := holdWorkers(t, p, 1)
			p.Submit(&probe{})
			assert.Equal(t, 1, p.Stats().Queued, "a task behind a busy worker queues")
			clk.Advance(2 * time.Millisecond)
			close(release)
			waitIdle(t, p)
			assert.Equal(t, 2*time.Millisecond, p.Stats().WaitTotal, "a queued task's wait is measured")
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, waits, 3) // the hand-off, the holder (handed too), the queued task
			assert.Zero(t, waits[0])
			assert.Zero(t, waits[1])
			assert.Equal(t, 2*time.Millisecond, waits[2])
		})
	}
}

// machinery is the queuePool under one of the variants built on it.
func machinery(p Pool) *queuePool {
	switch p := p.(type) {
	case *FIFO:
		return &p.queuePool
	case *LIFO:
		return &p.queuePool
	case *MSQueue:
		return &p.queuePool
	case *MultiQueue:
		return &p.queuePool
	case *Adaptive:
		return &p.queuePool
	}
	panic(fmt.Sprintf("%T is not built on queuePool", p))
}

// TestParkKeepsOneProducersOrder drives the race between a worker's
// re-check and a claim, which a scheduler produces only now and then: the
// one worker announces itself idle and, before it re-checks the queue, one
// producer submits two tasks. Every ordered variant must run them in
// submission order whichever way the two arrive:
//   - handed, then queued: the first is handed to the claimed worker, the
//     second queued behind the claim (no worker left idle); the re-check
//     finds the second, the message brings the first.
//   - queued, then queued: the first was pushed just before the
//     announcement (its pusher found no worker idle), so the second must
//     not be handed past it.
func TestParkKeepsOneProducersOrder(t *testing.T) {
	arrivals := map[string]func(p *queuePool, first, second Task){
		"handed then queued": func(p *queuePool, first, second Task) {
			p.Submit(first)
			p.Submit(second)
		},
		"queued then queued": func(p *queuePool, first, second Task) {
			it, ok := p.admit(first)
			require.True(t, ok)
			it.enqueued = p.cfg.now()
			require.True(t, p.q.push(it)) // a push whose wake looked before the announcement
			p.gate.leave()
			p.Submit(second)
		},
	}
	for variant := range inOrder {
		for name, arrive := range arrivals {
			t.Run(variant+"/"+name, func(t *testing.T) {
				cfg, err := Resolve(variant, Config{Exec: ExecWorker, Workers: 1, Capacity: 8, CoDelTarget: time.Hour})
				require.NoError(t, err)
				var p queuePool
				p.init(variant, cfg, queues[variant])
				var order []int // appended by the one worker, read after Close
				tasks := []*probe{
					{work: func() { order = append(order, 1) }},
					{work: func() { order = append(order, 2) }},
				}
				raced := false // read and written by the one worker alone
				p.afterAnnounce = func() {
					if !raced {
						raced = true
						arrive(&p, tasks[0], tasks[1])
					}
				}
				p.run()
				require.Eventually(t, func() bool { return tasks[1].answers() == 1 && tasks[0].answers() == 1 },
					hangGuard, time.Millisecond, "both tasks answered")
				p.Close()
				assert.Equal(t, []int{1, 2}, order, "one producer's tasks in submission order")
			})
		}
	}
}
