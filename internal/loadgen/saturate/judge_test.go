package saturate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// series is n intervals of iv at rate, each answered with p99 and no
// errors, nothing in flight: a step that holds.
func series(n int, iv time.Duration, rate float64, p99 time.Duration) []Second {
	out := make([]Second, n)
	for k := range out {
		per := int64(rate * iv.Seconds())
		out[k] = Second{T: float64(k) * iv.Seconds(), Length: iv.Seconds(), Sent: per, Answered: per, Rate: rate,
			P50: p99 / 2, P99: p99, InFlight: int64(rate * 0.001), LoaderCPUShare: -1, ServerCPUShare: -1}
	}
	return out
}

func judged(sc Config, s Step) Step {
	sc.judge(&s)
	return s
}

// The per-second rule: the warm-up is not judged; 90 % of the judged
// intervals must meet the SLO and the error limit, so of ten one may
// fail and of 29 two; the drain is judged with the last interval.
func TestJudgePerSecond(t *testing.T) {
	sc := DefaultConfig() // 11 s steps: 1 s intervals
	require := assert.New(t)
	require.Equal(time.Second, sc.Interval())
	const rate = 1000
	step := func(length time.Duration, bad map[int]func(*Second)) Step {
		n := int(length / time.Second)
		s := Step{Asked: rate, Length: length, Seconds: series(n+1, time.Second, rate, 2*time.Millisecond)}
		s.Seconds[n].Answered, s.Seconds[n].Length = 1, 0.002 // the drain: one answer after the schedule
		for k, f := range bad {
			f(&s.Seconds[k])
		}
		return judged(sc, s)
	}
	slow := func(p *Second) { p.P99 = 150 * time.Millisecond }
	failing := func(p *Second) { p.Errors = 2 } // 2 of 1000 ≥ 0.1 %
	stalled := func(p *Second) { p.Answered, p.InFlight = 0, 40 }
	idle := func(p *Second) { p.Answered, p.InFlight = 0, 0 }

	f := func(name string, s Step, pass bool, ok int, verdict string) {
		t.Helper()
		assert.Equal(t, pass, s.Pass, "%s: %s", name, s.Verdict)
		assert.Equal(t, ok, s.OK, name)
		assert.Equal(t, verdict, s.Verdict, name)
	}
	const full = 11 * time.Second
	f("clean", step(full, nil), true, 10, "ok")
	f("one slow second of ten", step(full, map[int]func(*Second){4: slow}), true, 9, "ok")
	f("two slow seconds of ten", step(full, map[int]func(*Second){4: slow, 9: slow}), false, 8, "p99 > 100ms in 2 of 10")
	f("a slow warm-up is not judged", step(full, map[int]func(*Second){0: slow, 5: slow}), true, 9, "ok")
	f("errors and a stall", step(full, map[int]func(*Second){2: failing, 3: stalled}), false, 8, "errors ≥ 0.1% in 1, stalled in 1 of 10")
	f("nothing to answer is no failure", step(full, map[int]func(*Second){3: idle, 4: idle}), true, 10, "ok")
	f("a slow drain fails the last second", step(full, map[int]func(*Second){11: slow, 3: slow}), false, 8, "p99 > 100ms in 2 of 10")
	f("29 judged seconds: two may fail", step(30*time.Second, map[int]func(*Second){3: slow, 20: slow}), true, 27, "ok")
	f("29 judged seconds: three may not", step(30*time.Second, map[int]func(*Second){3: slow, 20: slow, 29: slow}), false, 26, "p99 > 100ms in 3 of 29")

	s := step(full, map[int]func(*Second){4: slow})
	assert.Equal(t, "warm-up", s.Seconds[0].Verdict)
	assert.Equal(t, "p99 > 100ms", s.Seconds[4].Verdict)
	assert.Equal(t, "drain", s.Seconds[11].Verdict)
	assert.Equal(t, "9/10 s ok", s.SecondsText())

	// A series that ends early (nothing answered, nothing in flight) is
	// filled in; requests never sent fail the step as falling behind.
	s = step(full, nil)
	s.Seconds = s.Seconds[:6]
	s.Unsent = 12
	s = judged(sc, s)
	assert.Len(t, s.Seconds, 11)
	assert.False(t, s.Pass)
	assert.True(t, s.FellBehind)
	assert.Equal(t, "fell behind: 12 never sent", s.Verdict)
}

// Steps under 11 s are cut into Step/11 intervals: the same rule, ten
// judged intervals, over shorter ones.
func TestQuickStepsJudgeShorterIntervals(t *testing.T) {
	sc := QuickConfig()
	assert.Equal(t, 500*time.Millisecond, sc.Interval())
	sc.Step = 5 * time.Second
	assert.Equal(t, 454*time.Millisecond, sc.Interval())
	sc.Step = 2200 * time.Millisecond
	assert.Equal(t, 200*time.Millisecond, sc.Interval())
	sc.Step = 30 * time.Second
	assert.Equal(t, time.Second, sc.Interval())

	sc = QuickConfig()
	iv := sc.Interval()
	s := Step{Asked: 1000, Length: sc.Step, Seconds: series(11, iv, 1000, time.Millisecond)}
	s.Seconds[7].P99 = time.Second
	s = judged(sc, s)
	assert.True(t, s.Pass, s.Verdict)
	assert.Equal(t, 10, s.Judged)
	assert.Equal(t, "9/10 ok", s.SecondsText())
}

// The backlog grows when the median of the later half of the judged
// intervals exceeds the earlier half's by more than SLO/10 (10 ms), in
// flight (in time at the asked rate) or in send lag.
func TestBacklogGrew(t *testing.T) {
	sc := DefaultConfig()
	const rate = 10_000
	f := func(name string, inFlight []int64, lagMs []float64, want string) {
		t.Helper()
		n := max(len(inFlight), len(lagMs))
		ps := make([]Second, n)
		for k := range ps {
			if k < len(inFlight) {
				ps[k].InFlight = inFlight[k]
			}
			if k < len(lagMs) {
				ps[k].SendLagP99 = time.Duration(lagMs[k] * float64(time.Millisecond))
			}
		}
		assert.Equal(t, want, sc.BacklogGrew(ps, rate), name)
	}
	flat := []int64{20, 25, 18, 22, 30, 19, 24, 21, 26, 20}
	f("flat", flat, nil, "")
	// 10 ms of sending is 100 requests at 10,000/s: a rise of 100 is
	// the tolerance itself, 101 beyond it.
	f("a rise of exactly the tolerance", []int64{20, 20, 20, 20, 20, 120, 120, 120, 120, 120}, nil, "")
	f("a rise beyond it", []int64{20, 20, 20, 20, 20, 121, 121, 121, 121, 121}, nil,
		"backlog grew: in flight 2ms → 12.1ms (median of the last 5 intervals against the 5 before)")
	// 1 % over the server's rate: 100 more requests in flight a second.
	growing := make([]int64, 10)
	for k := range growing {
		growing[k] = 20 + 100*int64(k)
	}
	f("1 % over capacity", growing, nil, "backlog grew: in flight 22ms → 72ms (median of the last 5 intervals against the 5 before)")
	// One stalled second in either half moves neither median.
	f("a spike late", []int64{20, 25, 18, 22, 30, 19, 24, 5000, 26, 20}, nil, "")
	f("a spike early", []int64{20, 5000, 18, 22, 30, 19, 24, 21, 26, 20}, nil, "")
	f("a spike in the very last second", []int64{20, 25, 18, 22, 30, 19, 24, 21, 26, 5000}, nil, "")
	// Two of five later seconds high still leave the median; three do not.
	f("three of the later five high", []int64{20, 25, 18, 22, 30, 19, 4000, 4000, 4000, 20}, nil,
		"backlog grew: in flight 2.2ms → 400ms (median of the last 5 intervals against the 5 before)")
	// With every connection held by the server, the backlog waits in the
	// loader: the send lag grows while in flight stays at the cap.
	f("send lag", []int64{256, 256, 256, 256, 256, 256, 256, 256, 256, 256}, []float64{1, 20, 40, 60, 80, 100, 120, 140, 160, 180},
		"backlog grew: send lag p99 40ms → 140ms (median of the last 5 intervals against the 5 before)")
	f("send lag within the tolerance", nil, []float64{0.3, 0.3, 2, 0.4, 0.3, 5, 0.3, 9, 0.4, 0.3}, "")
	// An odd count: the first interval is left out of the halves.
	f("nine intervals", []int64{900, 20, 20, 20, 20, 20, 20, 20, 20}, nil, "")
	f("one interval", []int64{20}, nil, "")
}
