package pool

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The auto variant and the bound in time (Config.MaxWait) on a simulated
// store: the slots' latencies come from a stand-in limiter, the clock is
// fake, so every expected wait below is exact arithmetic.

// timedSlots is a limiter of a fixed number of slots whose holders the
// test says took median each, the lowest lowest (limit.Latencies).
type timedSlots struct {
	slots          int
	median, lowest atomic.Int64
}

func newTimedSlots(slots int, median, lowest time.Duration) *timedSlots {
	l := &timedSlots{slots: slots}
	l.median.Store(int64(median))
	l.lowest.Store(int64(lowest))
	return l
}

func (l *timedSlots) Current() int                           { return l.slots }
func (l *timedSlots) Sample(int64, time.Duration, int, bool) {}
func (l *timedSlots) Changes() uint64                        { return 0 }
func (l *timedSlots) RTT() (time.Duration, time.Duration) {
	return time.Duration(l.median.Load()), time.Duration(l.lowest.Load())
}

// retryProbe is a probe that says it is a retry.
type retryProbe struct{ probe }

func (*retryProbe) Retry() bool { return true }

// autoPool is the auto variant's read class over lim on a fake clock,
// its slots held until release is closed (the write class is the same
// machinery: see classes_test.go for what sets them apart).
func autoPool(t *testing.T, lim *timedSlots, maxWait time.Duration) (*slotPool, chan struct{}) {
	t.Helper()
	p, err := New(Auto, Config{Capacity: 1000, MaxWait: maxWait, clock: newFakeClock(), limiter: lim})
	require.NoError(t, err)
	reads := p.(*classPool).reads
	return reads, holdWorkers(t, reads, lim.slots)
}

// TestAutoBoundsTheWaitInTime: with 1 slot held 1 ms, the ahead-th task
// in the queue waits ahead × 1 ms; the auto bound is the time the slots
// take to serve 20 operations (20 ms): a first try that would wait past
// it is refused at once (full). A retry is admitted up to half of it
// (10 ms), refused past it (retry), and in between refused with a
// probability rising from 0 to 1 (here the draw is 0.5: refused past
// 15 ms); everything admitted runs exactly once.
func TestAutoBoundsTheWaitInTime(t *testing.T) {
	lim := newTimedSlots(1, time.Millisecond, time.Millisecond)
	p, release := autoPool(t, lim, 0)
	p.cfg.draw = func() float64 { return 0.5 }
	var queued []*probe
	queue := func(n int) {
		for range n {
			pr := &probe{}
			place(t, p, pr)
			queued = append(queued, pr)
		}
	}
	var retries []*retryProbe
	retry := func(want Reason) {
		t.Helper()
		r := &retryProbe{}
		if want == 0 {
			place(t, p, r)
			retries = append(retries, r)
			return
		}
		p.Submit(r) // refused before Submit returns
		assert.EqualValues(t, 1, r.rejects.Load())
		assert.EqualValues(t, want, r.reason.Load())
	}
	queue(9)
	retry(0) // waits (9+1) × 1 = 10 ms: half the bound, admitted
	queue(3)
	retry(0) // 14 ms: refused with probability (14-10)/10 = 0.4, under the draw
	queue(1)
	retry(ReasonRetry) // 16 ms: 0.6, over it
	queue(5)           // 20 queued: the 20th waits 20 ms, the bound
	first := &probe{}
	p.Submit(first) // 21st: 21 ms
	assert.EqualValues(t, 1, first.rejects.Load())
	assert.EqualValues(t, ReasonFull, first.reason.Load())
	retry(ReasonRetry) // past the bound a retry is always refused, as a retry
	assert.Equal(t, 20*time.Millisecond, p.Drain(first), "20 queued × 1 ms ÷ 1 slot")

	close(release)
	waitIdle(t, p)
	p.Close()
	for _, r := range retries {
		queued = append(queued, &r.probe)
	}
	for _, pr := range queued {
		assert.EqualValues(t, 1, pr.runs.Load())
		assert.Zero(t, pr.rejects.Load())
	}
	s := p.Stats()
	assert.EqualValues(t, 2, s.Rejected[ReasonRetry])
	assert.EqualValues(t, 1, s.Rejected[ReasonFull])
}

// TestShedRetry: a retry is never refused up to half of the bound,
// always from the bound on, and in between with a probability that
// rises in proportion to its expected wait.
func TestShedRetry(t *testing.T) {
	bound := 20 * time.Millisecond
	var c Config
	for _, x := range []struct {
		wait time.Duration
		draw float64
		want bool
	}{
		{10 * time.Millisecond, 0, false},
		{11 * time.Millisecond, 0, true},         // probability 1/10
		{11 * time.Millisecond, 0.1, false},      // over it
		{15 * time.Millisecond, 0.49, true},      // 1/2
		{15 * time.Millisecond, 0.5, false},      //
		{19999 * time.Microsecond, 0.9998, true}, // nearly 1
		{20 * time.Millisecond, 0.999999, true},  // the bound
		{time.Second, 0.999999, true},            // past it
	} {
		draw := x.draw
		c.draw = func() float64 { return draw }
		assert.Equal(t, x.want, c.shedRetry(x.wait, bound), "wait %v, draw %v", x.wait, x.draw)
	}
	c.draw = nil // the real draw: about half refused at the midpoint
	refused := 0
	for range 10000 {
		if c.shedRetry(15*time.Millisecond, bound) {
			refused++
		}
	}
	assert.InDelta(t, 5000, refused, 500)
}

// TestAutoBoundFollowsTheStore: the auto bound is the time the slots
// take to serve 20 operations (20 × the lowest slot hold ÷ the limit)
// within [10 ms, 1 s], and an explicit MaxWait replaces it; before any
// window was timed (median 0) nothing is refused.
func TestAutoBoundFollowsTheStore(t *testing.T) {
	f := func(slots int, lowest, maxWait, want time.Duration) {
		t.Helper()
		l := newTimedSlots(slots, lowest, lowest)
		p := &slotPool{cfg: Config{MaxWait: maxWait}, lat: l, lim: l}
		bound, _, ok := p.waitBound()
		assert.True(t, ok)
		assert.Equal(t, want, bound, "%d slots, lowest %v, MaxWait %v", slots, lowest, maxWait)
	}
	f(1, time.Millisecond, AutoMaxWait, 20*time.Millisecond)
	f(8, time.Millisecond, AutoMaxWait, 10*time.Millisecond)   // 2.5 ms of 8 slots' work: the floor
	f(4, 4*time.Millisecond, AutoMaxWait, 20*time.Millisecond) // 20 × 4 ms ÷ 4
	f(1, 5*time.Microsecond, AutoMaxWait, 10*time.Millisecond) // a fast store: the floor
	f(2, 200*time.Millisecond, AutoMaxWait, time.Second)       // a very slow one: the ceiling
	f(1, time.Millisecond, 3*time.Millisecond, 3*time.Millisecond)

	nothing := newTimedSlots(1, 0, 0)
	_, _, ok := (&slotPool{cfg: Config{MaxWait: AutoMaxWait}, lat: nothing, lim: nothing}).waitBound()
	assert.False(t, ok, "nothing timed yet: no bound")
	lim := newTimedSlots(1, 0, 0)
	p, release := autoPool(t, lim, 0)
	for range 100 {
		place(t, p, &probe{})
	}
	assert.Zero(t, p.Stats().RejectedTotal(), "no estimate yet: nothing refused")
	close(release)
	waitIdle(t, p)
	p.Close()
}

// TestAutoExpiresWhatWaitedTooLong: a waiter admitted under the bound
// whose wait passed 4 × the bound all the same (the store slowed down
// after it was queued) is rejected expired where it would start, unrun.
func TestAutoExpiresWhatWaitedTooLong(t *testing.T) {
	lim := newTimedSlots(1, time.Millisecond, time.Millisecond) // bound 20 ms
	p, release := autoPool(t, lim, 0)
	stale := &probe{}
	place(t, p, stale)
	p.cfg.clock.(interface{ Advance(time.Duration) }).Advance(81 * time.Millisecond)
	fresh := &probe{}
	place(t, p, fresh)
	close(release)
	waitIdle(t, p)
	p.Close()
	assert.Zero(t, stale.runs.Load())
	assert.EqualValues(t, ReasonExpired, stale.reason.Load())
	assert.EqualValues(t, 1, fresh.runs.Load())
}

// TestMaxWaitWhereItApplies: a bound in time needs timed slots: any
// handler-mode queueing pool takes one (a fixed limit is then measured),
// direct and -exec worker refuse it; auto runs in the handler whatever
// was asked, with a Vegas limit and the auto bound unless told otherwise.
func TestMaxWaitWhereItApplies(t *testing.T) {
	p, err := New("lifo", Config{Workers: 2, Capacity: 8, MaxWait: 5 * time.Millisecond})
	require.NoError(t, err)
	sp := p.(*slotPool)
	assert.NotNil(t, sp.lat, "a fixed limit behind a bound in time is timed")
	assert.Equal(t, 2, sp.lim.Current())
	p.Close()

	_, err = Resolve("direct", Config{MaxWait: time.Millisecond})
	assert.ErrorContains(t, err, "direct queues nothing")
	_, err = Resolve("fifo", Config{Exec: ExecWorker, Workers: 1, Capacity: 1, MaxWait: time.Millisecond})
	assert.ErrorContains(t, err, "-exec handler")
	_, err = Resolve("fifo", Config{Capacity: 1, MaxWait: -2})
	assert.ErrorContains(t, err, "negative")

	cfg, err := Resolve(Auto, Config{Exec: ExecWorker, Capacity: 8})
	require.NoError(t, err)
	assert.Equal(t, ExecHandler, cfg.Exec)
	assert.Equal(t, "vegas", cfg.Limit.Algorithm)
	assert.Equal(t, AutoMaxWait, cfg.MaxWait)
	p, err = New(Auto, Config{Capacity: 8})
	require.NoError(t, err)
	_, isDrainer := p.(Drainer)
	assert.True(t, isDrainer)
	p.Close()
}

// TestAutoAnswersEveryTaskOnce: many producers, first tries and retries,
// a real adaptive limit and a bound tight enough to shed: every task is
// run or rejected exactly once, and the pool's counts add up.
func TestAutoAnswersEveryTaskOnce(t *testing.T) {
	p, err := New(Auto, Config{Workers: 2, Capacity: 64, MaxWait: 50 * time.Microsecond})
	require.NoError(t, err)
	const producers, each = 16, 300
	var wg sync.WaitGroup
	tasks := make([][]*retryProbe, producers)
	for i := range producers {
		tasks[i] = make([]*retryProbe, each)
		wg.Go(func() {
			for j := range each {
				pr := &retryProbe{}
				pr.work = func() { time.Sleep(20 * time.Microsecond) }
				tasks[i][j] = pr
				if j%3 == 0 {
					p.Submit(pr) // a retry
				} else {
					p.Submit(&pr.probe) // a first try
				}
			}
		})
	}
	wg.Wait()
	waitIdle(t, p)
	p.Close()
	var probes []*probe
	for _, ts := range tasks {
		for _, pr := range ts {
			probes = append(probes, &pr.probe)
		}
	}
	assertAnsweredOnce(t, p, probes)
}

// assertAnsweredOnce checks, once p is idle and closed, that every probe
// was run or rejected exactly once and that p's counters say the same.
func assertAnsweredOnce(t *testing.T, p Pool, probes []*probe) {
	t.Helper()
	var ran, rejected int32
	for _, pr := range probes {
		require.EqualValues(t, 1, pr.answers(), "answered exactly once")
		ran += pr.runs.Load()
		rejected += pr.rejects.Load()
	}
	s := p.Stats()
	assert.EqualValues(t, len(probes), s.Submitted)
	assert.EqualValues(t, ran, s.Completed)
	assert.EqualValues(t, rejected, s.RejectedTotal())
}
