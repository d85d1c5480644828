package pool

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = int64(time.Millisecond)

// TestCoDel walks the state machine of codel with a synthetic clock.
func TestCoDel(t *testing.T) {
	c := codel{target: 5 * ms, interval: 100 * ms}
	f := func(sample, at int64, want bool) {
		t.Helper()
		assert.Equal(t, want, c.observe(sample*ms, at*ms), "sample %d ms at %d ms", sample, at)
	}
	f(0, 0, false)    // opens the first interval, [0, 100)
	f(50, 10, false)  // a high sample decides nothing before the interval ends
	f(50, 100, false) // [0, 100) saw 0: normal; opens [100, 200) at 50
	f(20, 150, false) // min 20
	f(30, 200, true)  // [100, 200) never went below 20 > 5: a standing queue
	f(4, 260, true)   // overloaded holds until the interval ends, whatever the samples
	f(40, 300, false) // [200, 300) saw 4 <= 5: normal again; opens [300, 400) at 40
	f(6, 400, true)   // [300, 400) min 40: overloaded; opens [400, 500) at 6
	f(0, 5000, true)  // four quiet intervals keep [400, 500)'s min 6: overloaded
	f(9, 5100, false) // [5000, 5100) saw 0 (an empty queue): normal
	f(1, 5150, false)
	f(0, 9000, false) // a quiet spell after a low minimum stays normal
}

// TestAdaptiveQueueOrder drives the adaptive queue with a synthetic clock:
// FIFO while the queue drains, then, once an interval passes with the
// oldest job always older than target, the jobs older than 2×target are
// shed oldest first and the rest served newest first; after an interval in
// which the queue emptied, FIFO again.
func TestAdaptiveQueueOrder(t *testing.T) {
	q := newAdaptiveQueue(Config{Capacity: 64, CoDelTarget: 5 * time.Millisecond, CoDelInterval: 100 * time.Millisecond}).(*adaptiveQueue)
	names := map[Task]string{}
	push := func(name string, at int64) {
		t.Helper()
		task := &probe{}
		names[task] = name
		require.True(t, q.push(item{task: task, enqueued: at * ms}))
	}
	f := func(at int64, want string, wantVerdict verdict) {
		t.Helper()
		got := q.popAt(at * ms)
		assert.Equal(t, wantVerdict, got.v, "verdict at %d ms", at)
		if got.v != none {
			assert.Equal(t, want, names[got.it.task], "popped at %d ms", at)
		}
	}
	f(0, "", none) // an empty queue: opens [0, 100) with a 0 sample

	// A burst that drains: FIFO.
	push("a0", 1)
	push("a1", 2)
	push("a2", 3)
	f(4, "a0", serve)
	f(5, "a1", serve)
	f(6, "a2", serve)

	// A queue that stands through [100, 250): still FIFO until it ends.
	for i, name := range []string{"b0", "b1", "b2", "b3"} {
		push(name, 100+int64(i))
	}
	f(150, "b0", serve) // [0, 100) saw 0: normal; opens [150, 250) at 50
	f(200, "b1", serve) // sample 99
	push("c0", 248)
	push("c1", 250)
	push("c2", 252)
	// [150, 250) never went below 50: overloaded. Shed what waited past
	// 10 ms, oldest first, then serve newest first.
	f(255, "b2", shed)
	f(255, "b3", shed)
	f(255, "c2", serve)
	f(256, "c1", serve)
	f(257, "c0", serve)
	f(258, "", none) // the queue emptied: a 0 sample in [255, 355)

	push("d0", 360)
	push("d1", 361)
	f(362, "d0", serve) // [255, 355) saw 0: normal, FIFO again
	f(363, "d1", serve)
}

// TestAdaptiveUnderStandingQueue: one worker, on a fake clock, tasks
// arriving faster than it serves them, so the queue stands. Once CoDel
// sees that, adaptive sheds old tasks (ReasonExpired) and serves newer
// ones before older ones, which a FIFO with one producer and one worker
// never does.
//
// Every arrival after the first is submitted by the task the worker is
// running, as the clock advances through its service time: three arrivals
// per 500 µs of service, three times what the worker can serve. So the
// whole run happens on the worker's goroutine in one order, at clock
// times the test sets, however the machine schedules it.
func TestAdaptiveUnderStandingQueue(t *testing.T) {
	const n, service, arrivalsPerService = 500, 500 * time.Microsecond, 3
	clk := newFakeClock()
	// ExecWorker: each task submits the next arrivals from inside its Run,
	// which under ExecHandler would wait for the slot that Run holds.
	p, err := New("adaptive", Config{Exec: ExecWorker, Workers: 1, Capacity: 1024,
		CoDelTarget: time.Millisecond, CoDelInterval: 5 * time.Millisecond, clock: clk})
	require.NoError(t, err)
	var order []int // appended only on the worker's goroutine
	tasks := make([]probe, n)
	submitted := 1
	allSubmitted := make(chan struct{})
	for i := range tasks {
		tasks[i].work = func() {
			order = append(order, i)
			for range arrivalsPerService {
				clk.Advance(service / arrivalsPerService)
				if submitted < n {
					p.Submit(&tasks[submitted])
					if submitted++; submitted == n {
						close(allSubmitted)
					}
				}
			}
		}
	}
	p.Submit(&tasks[0])
	// Stats reads its counters one by one: while arrivals still come, a
	// snapshot can find the answers caught up with an older count of
	// submissions, and the pool would be closed under the last ones.
	select {
	case <-allSubmitted:
	case <-time.After(hangGuard):
		t.Fatal("the arrivals stopped before the last one")
	}
	waitIdle(t, p)
	p.Close()

	s := p.Stats()
	require.EqualValues(t, n, s.Submitted, "every arrival submitted")
	assert.Positive(t, s.Rejected[ReasonExpired], "tasks shed under a standing queue")
	assert.EqualValues(t, len(order), s.Completed)
	assert.EqualValues(t, n, s.Completed+s.Rejected[ReasonExpired], "every task run or shed, nothing else")
	inversions := 0
	for k := 1; k < len(order); k++ {
		if order[k] < order[k-1] {
			inversions++
		}
	}
	t.Logf("ran %d, shed %d, %d served before an older one", len(order), s.Rejected[ReasonExpired], inversions)
	assert.Positive(t, inversions, "newer tasks served before older ones; order %v", order)
}

// TestAdaptiveFIFOWhileQueueDrains: on a fake clock, bursts of 20 tasks
// of 500 µs each, every burst queued at once, so its last task waits
// 9.5 ms, nearly twice the 5 ms target; but each burst drains before the
// next arrives, so every 20 ms interval sees an empty queue and CoDel
// never calls the queue standing: the order stays FIFO and nothing is shed.
// A detector that judged by the latest or the largest wait, not an
// interval's minimum, would turn LIFO here.
func TestAdaptiveFIFOWhileQueueDrains(t *testing.T) {
	for _, exec := range execModes {
		t.Run(exec.String(), func(t *testing.T) { testAdaptiveFIFOWhileQueueDrains(t, exec) })
	}
}

func testAdaptiveFIFOWhileQueueDrains(t *testing.T, exec Exec) {
	clk := newFakeClock()
	p, err := New("adaptive", Config{Exec: exec, Workers: 1, Capacity: 64,
		CoDelTarget: 5 * time.Millisecond, CoDelInterval: 20 * time.Millisecond, clock: clk})
	require.NoError(t, err)
	serve := func() { clk.Advance(500 * time.Microsecond) }
	for range 20 {
		order := runOrder(t, nopCloser{p}, 20, make(chan struct{}), serve)
		require.Equal(t, 20, len(order))
		for i := range order {
			require.Equal(t, i, order[i])
		}
	}
	p.Close()
	s := p.Stats()
	assert.Zero(t, s.RejectedTotal())
	// Task k of a burst waited k services: 0.5 ms × (0+1+...+19) a burst.
	assert.Equal(t, 20*190*500*time.Microsecond, s.WaitTotal, "the bursts queued as scheduled")
}

// nopCloser keeps runOrder from closing a pool the test goes on using.
type nopCloser struct{ Pool }

func (nopCloser) Close() {}
