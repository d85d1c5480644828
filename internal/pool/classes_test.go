package pool

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/mono/monotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The auto variant's two classes on a simulated store: slots from a
// stand-in limiter, time from a fake clock.

// writeProbe is a probe that says it writes bytes.
type writeProbe struct {
	probe
	bytes int
}

func (w *writeProbe) Writes() (int, bool) { return w.bytes, true }

// retryWrite is a write that says it is a retry.
type retryWrite struct{ writeProbe }

func (*retryWrite) Retry() bool { return true }

// twoClasses is the auto variant over lim (each class its own slots of
// lim's count) on clock.
func twoClasses(t *testing.T, lim *timedSlots, clock *monotest.Clock) *classPool {
	t.Helper()
	p, err := New(Auto, Config{Capacity: 1000, clock: clock, limiter: lim})
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p.(*classPool)
}

// pacedFromEmpty is twoClasses (4 slots of 1 ms) on a fake clock, its
// writes paced at rate with the burst taken, so that the next write waits
// for its place: the burst is paceMinBurst up to a rate of 20 MiB/s.
func pacedFromEmpty(t *testing.T, rate float64) (*classPool, *monotest.Clock) {
	t.Helper()
	clock := newFakeClock()
	p := twoClasses(t, newTimedSlots(4, time.Millisecond, time.Millisecond), clock)
	p.SetWriteRate(rate)
	p.Submit(&writeProbe{bytes: paceMinBurst})
	return p, clock
}

// submitting submits task to p on a goroutine of its own; the channel
// is closed once Submit returns.
func submitting(p Pool, task Task) <-chan struct{} {
	done := make(chan struct{})
	go func() { p.Submit(task); close(done) }()
	return done
}

// TestAutoWritesAtTheirBoundLeaveReadsAdmitted: with the write class's
// slot held and its queue at the bound (250 ms of 1-ms holds), a first
// write is refused and a retried one too; a read meanwhile runs at once
// on its own slot, and one queued behind a held read slot is judged by
// the read queue alone (its expected wait is one hold, not the writes').
// Every task is answered once, and each class counts its own.
func TestAutoWritesAtTheirBoundLeaveReadsAdmitted(t *testing.T) {
	lim := newTimedSlots(1, time.Millisecond, time.Millisecond)
	p := twoClasses(t, lim, newFakeClock())
	releaseWrites := make(chan struct{})
	held := &writeProbe{}
	held.work = func() { <-releaseWrites }
	place(t, p.writes, held)
	var writes []*writeProbe
	// A write may expect to wait a quarter of the pace bound for a slot
	// (250 ms), not the 20 holds a read may: the last of these waits 250
	// holds of 1 ms, at the bound.
	atBound := int(autoWaitMax / expireWaits / time.Millisecond)
	for range atBound {
		w := &writeProbe{bytes: 100}
		place(t, p.writes, w)
		writes = append(writes, w)
	}
	over := &writeProbe{bytes: 100}
	p.Submit(over)
	assert.EqualValues(t, ReasonFull, over.reason.Load(), "a write past the write class's bound")
	retried := &retryWrite{writeProbe{bytes: 100}}
	p.Submit(retried)
	assert.EqualValues(t, ReasonRetry, retried.reason.Load())

	read := &probe{}
	p.Submit(read) // the read slot is free: it runs before Submit returns
	assert.EqualValues(t, 1, read.runs.Load(), "a read beside writes at their bound")

	releaseReads := make(chan struct{})
	holder := &probe{work: func() { <-releaseReads }}
	place(t, p.reads, holder)
	queued := &probe{}
	place(t, p, queued) // waits 1 ms for the read slot: under the read bound
	assert.Zero(t, queued.answers(), "queued behind the held read slot")
	assert.Equal(t, time.Millisecond, p.Drain(&probe{}), "a read's drain counts the read queue only")
	assert.Equal(t, time.Duration(atBound)*time.Millisecond, p.Drain(&writeProbe{}), "a write's counts the write queue")

	close(releaseReads)
	close(releaseWrites)
	waitIdle(t, p)
	for _, w := range writes {
		assert.EqualValues(t, 1, w.runs.Load())
	}
	assert.EqualValues(t, 1, queued.runs.Load())
	r, w := p.ClassStats()
	assert.EqualValues(t, 3, r.Completed)
	assert.Zero(t, r.RejectedTotal())
	assert.EqualValues(t, atBound+1, w.Completed)
	assert.EqualValues(t, 1, w.Rejected[ReasonFull])
	assert.EqualValues(t, 1, w.Rejected[ReasonRetry])
	s := p.Stats()
	assert.EqualValues(t, r.Submitted+w.Submitted, s.Submitted)
	assert.EqualValues(t, 2, s.RejectedTotal())
}

// TestAutoWritesWaitForASlotLongerThanReads: a write that waited for a
// slot 4 × the bound its class's holds would give (80 ms of 1-ms holds:
// what expires a read) still runs, for a write refused comes back with
// its body; one that waited 4 × a quarter of the pace bound (1 s)
// expires, unrun.
func TestAutoWritesWaitForASlotLongerThanReads(t *testing.T) {
	lim := newTimedSlots(1, time.Millisecond, time.Millisecond)
	clock := newFakeClock()
	p := twoClasses(t, lim, clock)
	wait := func(d time.Duration) *writeProbe {
		t.Helper()
		release := make(chan struct{})
		held := &writeProbe{}
		held.work = func() { <-release }
		place(t, p.writes, held)
		queued := &writeProbe{bytes: 100}
		place(t, p.writes, queued)
		clock.Advance(d)
		close(release)
		waitIdle(t, p)
		answered(t, &queued.probe) // its reason is stored after the pool counts it
		return queued
	}
	late := wait(81 * time.Millisecond)
	assert.EqualValues(t, 1, late.runs.Load(), "past what expires a read")
	stale := wait(autoWaitMax + time.Millisecond)
	assert.Zero(t, stale.runs.Load())
	assert.EqualValues(t, ReasonExpired, stale.reason.Load())
}

// TestAutoPacesWritesToTheRate: once a rate is set a write takes its
// place in a line of bytes, which the rate lets in ahead by up to
// paceMinBurst (1 MiB) while idle; one whose place is not reached waits
// for it on the clock, reads meanwhile pass at once, a retry that would
// wait past half of the bound (refused there with a probability rising
// to 1 at the bound: here the draw is 0, so at once) and a write past
// the whole bound (1 s) are refused (taking no place), the Retry-After a
// write would hear is the line's length at the rate, and lifting the
// rate lets writes through at once again.
func TestAutoPacesWritesToTheRate(t *testing.T) {
	clock := newFakeClock()
	p := twoClasses(t, newTimedSlots(4, time.Millisecond, time.Millisecond), clock)
	p.writes.cfg.draw = func() float64 { return 0 }
	const rate = 1 << 20 // 1 MiB/s
	p.SetWriteRate(rate)
	assert.Equal(t, float64(rate), p.Pace().Rate)

	full := &writeProbe{bytes: paceMinBurst}
	p.Submit(full) // takes the whole burst at once
	assert.EqualValues(t, 1, full.runs.Load())

	waiting := &writeProbe{bytes: rate / 2} // due in 500 ms
	done := submitting(p, waiting)
	assert.Equal(t, 500*time.Millisecond, clock.WaitTimer(t))

	read := &probe{}
	p.Submit(read)
	assert.EqualValues(t, 1, read.runs.Load(), "reads are not paced")

	retried := &retryWrite{writeProbe{bytes: 1}} // behind 500 ms: half of 1 s is the most
	p.Submit(retried)
	assert.EqualValues(t, ReasonRetry, retried.reason.Load())
	late := &writeProbe{bytes: rate} // due in 1.5 s: past the bound
	p.Submit(late)
	assert.EqualValues(t, ReasonIO, late.reason.Load())
	assert.Equal(t, 500*time.Millisecond, p.Drain(&writeProbe{}), "what a refused write's Retry-After says")

	clock.Advance(500 * time.Millisecond)
	<-done
	assert.EqualValues(t, 1, waiting.runs.Load())
	assert.EqualValues(t, 1, p.Pace().Delayed)
	assert.Equal(t, 500*time.Millisecond, p.Pace().DelayTotal)

	p.SetWriteRate(math.Inf(1))
	assert.False(t, p.Pace().Paced())
	for range 10 {
		w := &writeProbe{bytes: rate}
		p.Submit(w)
		assert.EqualValues(t, 1, w.runs.Load(), "no rate: no wait")
	}
	assert.Zero(t, p.Drain(&writeProbe{}))
}

// TestAutoLetsPacedWritesGoInRounds: writes whose bytes fall due within
// one pacing round all sleep to its end and go together; one due in the
// next round sleeps to that round's end. The clock starts on a round's
// boundary.
func TestAutoLetsPacedWritesGoInRounds(t *testing.T) {
	const rate = 1 << 20 // 1 MiB/s
	p, clock := pacedFromEmpty(t, rate)

	// bytes(share) is what the rate lets in over share of a round.
	bytes := func(share float64) int { return int(rate * paceRound.Seconds() * share) }
	writes := []*writeProbe{
		{bytes: bytes(0.3)}, // due 0.3 of a round from now
		{bytes: bytes(0.3)}, // 0.6
		{bytes: bytes(0.8)}, // 1.4: in the second round
	}
	done := make([]<-chan struct{}, len(writes))
	for i, w := range writes {
		done[i] = submitting(p, w)
		want := paceRound
		if i == 2 {
			want = 2 * paceRound
		}
		assert.Equal(t, want, clock.WaitTimer(t), "write %d sleeps to its round's end", i)
	}

	clock.Advance(paceRound * 8 / 10) // both first writes are due, their round has not ended
	assert.Zero(t, writes[0].runs.Load()+writes[1].runs.Load())
	clock.Advance(paceRound * 2 / 10)
	<-done[0]
	<-done[1]
	assert.EqualValues(t, 1, writes[0].runs.Load())
	assert.EqualValues(t, 1, writes[1].runs.Load())
	assert.Zero(t, writes[2].runs.Load())
	clock.Advance(paceRound)
	<-done[2]
	assert.EqualValues(t, 1, writes[2].runs.Load())
	assert.EqualValues(t, 3, p.Pace().Delayed)
}

// TestAutoSlowsWaitingWritesWhenTheRateFalls: writes waiting for their
// places in line when the rate falls go when the new rate reaches them,
// not when the old one would have; one whose wait at the new rate would
// pass the bound is refused then and gives its bytes back to the line.
func TestAutoSlowsWaitingWritesWhenTheRateFalls(t *testing.T) {
	const rate = 1 << 20 // 1 MiB/s
	p, clock := pacedFromEmpty(t, rate)

	first, second := &writeProbe{bytes: rate / 4}, &writeProbe{bytes: rate / 4}
	firstDone := submitting(p, first)
	assert.Equal(t, 250*time.Millisecond, clock.WaitTimer(t))
	secondDone := submitting(p, second)
	assert.Equal(t, 500*time.Millisecond, clock.WaitTimer(t))

	p.SetWriteRate(rate / 2) // at the new rate the first is due in 500 ms, the second in 1 s
	clock.Advance(250 * time.Millisecond)
	assert.Equal(t, 250*time.Millisecond, clock.WaitTimer(t), "the first waits on at the new rate")
	assert.Zero(t, first.runs.Load())
	clock.Advance(250 * time.Millisecond)
	<-firstDone
	assert.EqualValues(t, 1, first.runs.Load())
	assert.Equal(t, 500*time.Millisecond, clock.WaitTimer(t), "the second waits on at the new rate")
	clock.Advance(500 * time.Millisecond)
	<-secondDone
	assert.EqualValues(t, 1, second.runs.Load())
	assert.Equal(t, 1500*time.Millisecond, p.Pace().DelayTotal, "each waited from its arrival")

	// A fall to an eighth: the write due in 500 ms would wait 3.5 s more.
	p.SetWriteRate(rate)
	stranded := &writeProbe{bytes: rate / 2}
	strandedDone := submitting(p, stranded)
	assert.Equal(t, 500*time.Millisecond, clock.WaitTimer(t))
	p.SetWriteRate(rate / 8)
	clock.Advance(500 * time.Millisecond)
	<-strandedDone
	assert.EqualValues(t, ReasonIO, stranded.reason.Load())
	assert.Zero(t, stranded.runs.Load())
	assert.Zero(t, p.Drain(&writeProbe{}), "its bytes went back to the line")
	after := &writeProbe{bytes: 1 << 10}
	p.Submit(after)
	assert.EqualValues(t, 1, after.runs.Load(), "the line it left is empty")
}

// TestAutoBoundsTheWholeWaitInLine: a write slowed by two falls of the
// rate, each leaving it under the bound (1 s) from then, is refused once
// its whole wait would pass lineWaits bounds.
func TestAutoBoundsTheWholeWaitInLine(t *testing.T) {
	const rate = 1 << 20 // 1 MiB/s
	p, clock := pacedFromEmpty(t, rate)

	w := &writeProbe{bytes: rate * 9 / 10} // due in 900 ms
	done := submitting(p, w)
	assert.Equal(t, 900*time.Millisecond, clock.WaitTimer(t))
	p.SetWriteRate(rate / 2)
	clock.Advance(900 * time.Millisecond) // 0.45 of it let in: 900 ms more, 1.8 s in all
	assert.Equal(t, 900*time.Millisecond, clock.WaitTimer(t))
	p.SetWriteRate(rate / 4)
	clock.Advance(900 * time.Millisecond) // 0.675 let in: 900 ms more would make 2.7 s
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Fatal("still in line 1.8 s after arrival with 900 ms to go")
	}
	assert.EqualValues(t, ReasonIO, w.reason.Load())
	assert.Zero(t, w.runs.Load())
}

// TestAutoWakesWaitingWritesWhenTheRateRises: a rate that at least
// doubles, or is lifted, wakes the writes waiting in line, which go
// when the new rate reaches them (at once, lifted) rather than sleep out
// the wait the old rate gave them.
func TestAutoWakesWaitingWritesWhenTheRateRises(t *testing.T) {
	const rate = 1 << 20 // 1 MiB/s
	p, clock := pacedFromEmpty(t, rate)

	w := &writeProbe{bytes: rate / 2}
	done := submitting(p, w)
	assert.Equal(t, 500*time.Millisecond, clock.WaitTimer(t))
	p.SetWriteRate(4 * rate)
	assert.Equal(t, 125*time.Millisecond, clock.WaitTimer(t), "woken, it waits for the new rate")
	clock.Advance(125 * time.Millisecond)
	<-done
	assert.EqualValues(t, 1, w.runs.Load())

	w = &writeProbe{bytes: rate} // the line is empty, the burst too
	done = submitting(p, w)
	assert.Equal(t, 250*time.Millisecond, clock.WaitTimer(t))
	p.SetWriteRate(math.Inf(1))
	<-done // with no clock advanced
	assert.EqualValues(t, 1, w.runs.Load())
}

// TestAutoPacedWriteHonoursItsDeadlineAndClose: a paced write whose
// deadline comes before its bytes is refused at once (deadline); one
// waiting for its bytes when the pool closes is answered closed.
func TestAutoPacedWriteHonoursItsDeadlineAndClose(t *testing.T) {
	p, clock := pacedFromEmpty(t, 1<<20)

	hurried := &writeProbe{bytes: 1 << 18} // due in 250 ms
	hurried.deadline = clock.Now() + int64(100*time.Millisecond)
	p.Submit(hurried)
	assert.EqualValues(t, ReasonDeadline, hurried.reason.Load())

	waiting := &writeProbe{bytes: 1 << 18}
	done := submitting(p, waiting)
	clock.WaitTimer(t)
	p.Close()
	<-done
	assert.EqualValues(t, ReasonClosed, waiting.reason.Load())
	assert.Zero(t, waiting.runs.Load())
}

// TestAutoPacedWritesAnsweredOnce: 16 producers of writes and reads
// while the rate changes under them, falls, rises, is lifted and set
// again: every task is run or rejected exactly once, and the counts add
// up.
func TestAutoPacedWritesAnsweredOnce(t *testing.T) {
	p, err := New(Auto, Config{Workers: 2, Capacity: 64})
	require.NoError(t, err)
	cp := p.(*classPool)
	const producers, each = 16, 200
	stop := make(chan struct{})
	var rates sync.WaitGroup
	rates.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			switch i % 3 {
			case 0:
				cp.SetWriteRate(64 << 20)
			case 1:
				cp.SetWriteRate(1 << 20) // what waits is slowed, some of it refused
			default:
				cp.SetWriteRate(math.Inf(1))
			}
		}
	})
	var wg sync.WaitGroup
	tasks := make([][]*writeProbe, producers)
	for i := range producers {
		tasks[i] = make([]*writeProbe, each)
		wg.Go(func() {
			for j := range each {
				w := &writeProbe{bytes: 64 << 10}
				tasks[i][j] = w
				if j%2 == 0 {
					p.Submit(w)
				} else {
					p.Submit(&w.probe) // a read
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	rates.Wait()
	waitIdle(t, p)
	p.Close()
	var probes []*probe
	for _, ts := range tasks {
		for _, w := range ts {
			probes = append(probes, &w.probe)
		}
	}
	assertAnsweredOnce(t, p, probes)
}

// TestAutoWriteYieldsOnlyWhileReadsArrive: a write woken by another
// goroutine, handed the write slot or by its pacing's timer, yields the
// CPU once before it runs while reads arrive (one within yieldWindow),
// and not before any has, nor once none has for yieldWindow: with no
// read to give the CPU to, the yield would only keep the write slot idle
// while queued writes wait for it.
func TestAutoWriteYieldsOnlyWhileReadsArrive(t *testing.T) {
	var yields atomic.Int32
	gosched := yieldToRunnable
	yieldToRunnable = func() { yields.Add(1); gosched() }
	t.Cleanup(func() { yieldToRunnable = gosched })
	clock := newFakeClock()
	p := twoClasses(t, newTimedSlots(1, time.Millisecond, time.Millisecond), clock)

	handedOver := func() {
		t.Helper()
		release := make(chan struct{})
		held := &writeProbe{bytes: 1}
		held.work = func() { <-release }
		place(t, p.writes, held)
		next := &writeProbe{bytes: 1}
		place(t, p.writes, next) // queued behind the held slot
		close(release)           // the holder hands its slot to next
		require.Eventually(t, func() bool { return next.runs.Load() == 1 }, hangGuard, 50*time.Microsecond)
	}
	paced := func() {
		t.Helper()
		p.SetWriteRate(1 << 20)
		p.Submit(&writeProbe{bytes: paceMinBurst}) // takes the whole burst
		w := &writeProbe{bytes: 1 << 10}           // due in about 1 ms
		done := make(chan struct{})
		go func() { p.Submit(w); close(done) }()
		clock.Advance(clock.WaitTimer(t))
		<-done
		assert.EqualValues(t, 1, w.runs.Load())
		p.SetWriteRate(math.Inf(1))
	}

	handedOver()
	paced()
	assert.Zero(t, yields.Load(), "no read yet: a woken write runs at once")

	p.Submit(&probe{})
	handedOver()
	assert.EqualValues(t, 1, yields.Load(), "handed its slot just after a read")
	paced()
	assert.EqualValues(t, 2, yields.Load(), "woken by its pacing just after a read")

	clock.Advance(yieldWindow)
	handedOver()
	paced()
	assert.EqualValues(t, 2, yields.Load(), "no read for yieldWindow")
	waitIdle(t, p)
}
