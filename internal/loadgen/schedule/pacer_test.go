package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is the pacer's time in these tests: sleep advances it by the
// duration asked plus late, the sleeper's own lateness.
type fakeClock struct {
	t    int64
	late time.Duration
}

func (f *fakeClock) now() int64            { return f.t }
func (f *fakeClock) sleep(d time.Duration) { f.t += int64(d + f.late) }

// pacedSend is one request as a fake dispatch sent it.
type pacedSend struct {
	wake int   // index of the wake-up that sent it
	at   int64 // the clock then
}

// runFakePacer runs a pacer over planned requests at rate with the given
// quantum on clk, with a dispatch that sends everything due (or nothing,
// if stuck: every connection busy), and returns each request's send.
func runFakePacer(t *testing.T, clk *fakeClock, rate float64, planned uint64, quantum time.Duration, stuck bool, stopAt int64) ([]pacedSend, int) {
	t.Helper()
	p := Pacer{Sched: New(rate), Planned: planned, Quantum: quantum, Now: clk.now, Sleep: clk.sleep}
	sends := make([]pacedSend, 0, planned)
	wakes := 0
	p.Run(func(now int64) bool { return stopAt > 0 && now >= stopAt }, func(now int64) uint64 {
		wakes++
		require.Less(t, wakes, 1_000_000, "the pacer does not end")
		if !stuck {
			for n := uint64(len(sends)); n < min(p.Sched.DueBy(now), planned); n++ {
				sends = append(sends, pacedSend{wake: wakes, at: now})
			}
		}
		return uint64(len(sends))
	})
	return sends, wakes
}

// At 20,000 req/s a request falls due every 50 µs: with a 250 µs quantum
// each wake-up after the first sends the five that fell due since the
// last, each at most a quantum late and none early.
func TestPacerSendsWhatFellDueWithinAQuantumInOneWakeUp(t *testing.T) {
	const quantum = 250 * time.Microsecond
	clk := &fakeClock{}
	s := New(20_000)
	sends, wakes := runFakePacer(t, clk, 20_000, 1000, quantum, false, 0)
	require.Len(t, sends, 1000)
	perWake := map[int]int{}
	for seq, snd := range sends {
		due := s.At(uint64(seq))
		assert.GreaterOrEqual(t, snd.at, due, "request %d was sent before it was due", seq)
		assert.LessOrEqual(t, snd.at-due, int64(quantum), "request %d waited more than a quantum", seq)
		perWake[snd.wake]++
	}
	assert.Equal(t, 1, perWake[1], "the first wake-up, at the start, sends request 0")
	for w := 2; w < wakes; w++ {
		assert.Equal(t, 5, perWake[w], "wake-up %d sends the five requests of its quantum", w)
	}
	assert.Equal(t, 4, perWake[wakes], "the last wake-up sends the four left")
	assert.Equal(t, 201, wakes, "one wake-up per quantum: 50 ms of 250 µs quanta, and one at the start")
}

// The pacer wakes when the last request of a quantum falls due, so each
// wake-up sends as many requests as a quantum holds whatever the phase of
// the schedule: at 5,000 req/s (one every 200 µs) and 250 µs, two per
// wake-up, the first 200 µs late and the second on time, where waking a
// quantum after the last wake-up would send 1.25.
func TestPacerWakesForTheLastRequestOfEachQuantum(t *testing.T) {
	const quantum = 250 * time.Microsecond
	clk := &fakeClock{}
	s := New(5000)
	sends, wakes := runFakePacer(t, clk, 5000, 1001, quantum, false, 0)
	require.Len(t, sends, 1001)
	assert.Equal(t, 501, wakes, "request 0 at the start, then two per wake-up")
	for seq := 1; seq < len(sends); seq += 2 {
		assert.Equal(t, sends[seq].wake, sends[seq+1].wake, "requests %d and %d share a wake-up", seq, seq+1)
		assert.Equal(t, s.At(uint64(seq+1)), sends[seq].at, "the wake-up comes when request %d falls due", seq+1)
	}
}

// Whatever the rate, quantum and lateness of the sleeper, every request
// is sent exactly once, never before it is due, and at most a quantum
// (plus the sleeper's lateness) after; a wake-up that sends anything
// sends at least as many as a quantum holds, less one for the phase.
func TestPacerSendsEachRequestOnceNeverEarlyAtMostAQuantumLate(t *testing.T) {
	f := func(rate float64, quantum, late time.Duration) {
		t.Helper()
		clk := &fakeClock{late: late}
		s := New(rate)
		const planned = 2000
		sends, _ := runFakePacer(t, clk, rate, planned, quantum, false, 0)
		require.Len(t, sends, planned, "rate %v quantum %v late %v", rate, quantum, late)
		perWake := map[int]int{}
		for seq, snd := range sends {
			due := s.At(uint64(seq))
			require.GreaterOrEqual(t, snd.at, due, "rate %v quantum %v: request %d early", rate, quantum, seq)
			require.LessOrEqual(t, snd.at-due, int64(quantum+late), "rate %v quantum %v late %v: request %d", rate, quantum, late, seq)
			perWake[snd.wake]++
		}
		if late == 0 {
			holds := int(float64(quantum) * rate / 1e9) // whole intervals in a quantum
			for w, n := range perWake {
				if w > 1 && w < len(sends) && sends[len(sends)-1].wake != w {
					require.GreaterOrEqual(t, n, max(holds, 1), "rate %v quantum %v: wake-up %d sent %d", rate, quantum, w, n)
				}
			}
		}
	}
	for _, rate := range []float64{300, 4999, 5000, 7777, 20_000, 40_000, 123_457} {
		for _, q := range []time.Duration{time.Microsecond, 100 * time.Microsecond, 250 * time.Microsecond, 777 * time.Microsecond, time.Millisecond} {
			f(rate, q, 0)
			f(rate, q, 35*time.Microsecond)
		}
	}
}

// Below one request per quantum the pacer sleeps until each request is
// due and sends it on time.
func TestPacerSendsSparseRequestsOnTime(t *testing.T) {
	clk := &fakeClock{}
	s := New(1000)
	sends, wakes := runFakePacer(t, clk, 1000, 100, 250*time.Microsecond, false, 0)
	require.Len(t, sends, 100)
	assert.Equal(t, 100, wakes)
	for seq, snd := range sends {
		assert.Equal(t, s.At(uint64(seq)), snd.at, "request %d", seq)
	}
}

// A sleeper that wakes late (a loaded machine) makes sends late, never
// early, and whatever fell due meanwhile goes out in the late wake-up.
func TestPacerCatchesUpAfterALateWakeUp(t *testing.T) {
	clk := &fakeClock{late: 3 * time.Millisecond}
	s := New(10_000)
	sends, _ := runFakePacer(t, clk, 10_000, 500, 100*time.Microsecond, false, 0)
	require.Len(t, sends, 500)
	for seq, snd := range sends {
		due := s.At(uint64(seq))
		require.GreaterOrEqual(t, snd.at, due, "request %d was sent before it was due", seq)
		require.LessOrEqual(t, snd.at-due, int64(100*time.Microsecond+3*time.Millisecond), "request %d", seq)
		if seq > 0 && sends[seq-1].wake != snd.wake {
			assert.Greater(t, s.At(uint64(seq)), sends[seq-1].at, "request %d was due at the previous wake-up and waited for the next", seq)
		}
	}
}

// A sleeper that is always a little late (as a VM's wake-ups are) does
// not stretch the quanta: the pacer wakes once per quantum, in phase with
// the first, and no request waits longer than a quantum and the lateness.
func TestPacerKeepsQuantaInPhase(t *testing.T) {
	const quantum, late = 250 * time.Microsecond, 40 * time.Microsecond
	clk := &fakeClock{late: late}
	s := New(20_000)
	sends, wakes := runFakePacer(t, clk, 20_000, 1000, quantum, false, 0)
	require.Len(t, sends, 1000)
	for seq, snd := range sends {
		due := s.At(uint64(seq))
		require.GreaterOrEqual(t, snd.at, due, "request %d was sent before it was due", seq)
		require.LessOrEqual(t, snd.at-due, int64(quantum+late), "request %d", seq)
	}
	assert.Equal(t, 201, wakes, "one wake-up per quantum, as with a punctual sleeper")
}

// With every connection busy nothing can be sent; the pacer then wakes
// once a quantum (to grow), neither spinning nor sleeping past the run.
func TestPacerWakesOncePerQuantumWhileStuck(t *testing.T) {
	clk := &fakeClock{}
	stopAt := int64(10 * time.Millisecond)
	sends, wakes := runFakePacer(t, clk, 20_000, 1000, 250*time.Microsecond, true, stopAt)
	assert.Empty(t, sends)
	assert.Equal(t, 40, wakes, "10 ms of 250 µs quanta")
	assert.Equal(t, stopAt, clk.t, "it stops at the first wake-up that stop says to")

	// A loop that wakes per request (PreciseQuantum) does not spin while
	// stuck either: it waits DefaultQuantum between tries.
	clk = &fakeClock{}
	sends, wakes = runFakePacer(t, clk, 20_000, 1000, PreciseQuantum, true, stopAt)
	assert.Empty(t, sends)
	assert.Equal(t, 40, wakes, "10 ms of DefaultQuantum")
}

// One schedule split over shards and loops, each share paced by a pacer
// of its own on a fake clock from the common start (some sleepers late):
// every request is sent exactly once, by exactly one loop of one shard,
// never before its time, and its intended time is the whole run's.
func TestPacedSharesSendTheWholeScheduleOnce(t *testing.T) {
	const rate, quantum = 20_000.0, 250 * time.Microsecond
	whole := New(rate)
	d := 50 * time.Millisecond
	total := whole.Count(d)
	require.Equal(t, uint64(1000), total)
	f := func(n, loops int) {
		t.Helper()
		sender := make([]int, total)
		for i := range sender {
			sender[i] = -1
		}
		var planned uint64
		for k := 1; k <= n; k++ {
			for l := range loops {
				id := (k-1)*loops + l
				s := whole.Of(Shard{K: k, N: n}.Share().Split(l, loops))
				clk := &fakeClock{late: time.Duration(id%3) * 30 * time.Microsecond}
				p := Pacer{Sched: s, Planned: s.Count(d), Quantum: quantum, Now: clk.now, Sleep: clk.sleep}
				planned += p.Planned
				var next uint64
				p.Run(func(int64) bool { return false }, func(now int64) uint64 {
					for ; next < min(s.DueBy(now), p.Planned); next++ {
						seq, intended := s.Seq(next), s.At(next)
						require.Less(t, seq, total)
						require.Equal(t, -1, sender[seq], "request %d sent by shard/loop %d and again by %d", seq, sender[seq], id)
						sender[seq] = id
						require.Equal(t, whole.At(seq), intended, "request %d: intended time", seq)
						require.GreaterOrEqual(t, now, intended, "request %d was sent before it was due", seq)
						require.LessOrEqual(t, now-intended, int64(quantum+clk.late), "request %d waited more than a quantum", seq)
					}
					return next
				})
				require.Equal(t, p.Planned, next, "shard %d loop %d sent its share", k, l)
			}
		}
		assert.Equal(t, total, planned, "%d shards × %d loops plan the whole run", n, loops)
		for seq, id := range sender {
			require.NotEqual(t, -1, id, "%d shards × %d loops: request %d was never sent", n, loops, seq)
		}
	}
	f(1, 1)
	f(1, 4)
	f(3, 1)
	f(3, 2)
	f(4, 3)
}
