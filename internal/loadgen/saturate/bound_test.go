package saturate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen/record"
)

func TestBound(t *testing.T) {
	f := func(e Step, want bool, whyHas string) {
		t.Helper()
		got, why := Bound(&e)
		assert.Equal(t, want, got, "%+v: %s", e, why)
		assert.Contains(t, why, whyHas, "%+v", e)
	}
	const unknown = -1
	// A step that fell behind with 10 intervals judged against a 1 ms
	// tolerance, the loader's own sends on time, its 64 connections
	// (cap 256) never all busy.
	fellBehind := func(loader, server float64) Step {
		return Step{FellBehind: true, LoaderCPUShare: loader, LoaderCPUs: 16, ServerCPUShare: server, ServerCPUs: 16,
			OwnLagKnown: true, Judged: 10, OwnLagP99: 300 * time.Microsecond, LagTolerance: time.Millisecond, ConnsPeak: 64, MaxConns: 256}
	}
	ownLate := func(e Step, late int, worst time.Duration) Step {
		e.OwnLate, e.OwnLagP99 = late, worst
		return e
	}
	overSLO := func(loader, server float64) Step {
		return Step{LoaderCPUShare: loader, LoaderCPUs: 2, ServerCPUShare: server, ServerCPUs: 4, OwnLagKnown: true, Judged: 10}
	}

	// The loader's own send lag grew: late with connections free in most
	// intervals, whatever either side's CPU.
	f(ownLate(fellBehind(0.12, 0.35), 8, 12*time.Millisecond), true,
		"fell behind while it had connections free: the loader's own sends were late (p99 over 1ms) in 8 of 10 intervals, at worst 12ms (the loader at 12% of its 16 CPUs, the server at 35% of its 16 CPUs): the loader did not send")
	f(ownLate(fellBehind(0.40, 0.95), 2, 5*time.Millisecond), true, "late (p99 over 1ms) in 2 of 10 intervals")
	// One late interval of ten is a hiccup the judge forgives: not the loader's.
	f(ownLate(fellBehind(0.12, 0.35), 1, 5*time.Millisecond), false, "the loader's own sends late (p99 over 1ms) in 1 of 10 intervals, at worst 5ms")
	// Free connections, sends on time, the server slow with idle CPU (a
	// store that stalls): the server's limit, not a loader-bound bound.
	f(fellBehind(0.38, 0.35), false,
		"fell behind with the loader's own sends on time (the loader's own sends late (p99 over 1ms) in 0 of 10 intervals, at worst 300µs; 0 attempts waited for a connection; the loader at 38% of its 16 CPUs, the server at 35% of its 16 CPUs): the server's limit")
	// Every connection busy, at the cap: the server's, naming the cap.
	capped := fellBehind(0.30, 0.20)
	capped.ConnsPeak, capped.ConnWaits = 256, 41_000
	f(capped, false, "fell behind with every connection busy at the cap -max-conns 256 (41000 attempts waited for a connection;")
	// The loader out of CPU, whatever failed.
	f(fellBehind(0.90, 0.50), true, "the loader used 90% of its 16 CPUs (the server at 50% of its 16 CPUs): it ran out of CPU")
	f(fellBehind(0.97, 0.99), true, "the loader used 97%")
	f(overSLO(0.95, 0.60), true, "the loader used 95% of its 2 CPUs")
	f(overSLO(0.95, unknown), true, "the loader used 95% of its 2 CPUs: it ran out of CPU")
	// The server's: its answers failed with the loader under Busy.
	f(overSLO(0.89, 0.30), false, "the server's answers failed (the loader at 89% of its 2 CPUs, the server at 30% of its 4 CPUs)")
	f(overSLO(0.10, unknown), false, "the server's CPU unknown")
	// The server's share unknown decides nothing either way.
	f(fellBehind(0.40, unknown), false, "the server's CPU unknown): the server's limit")
	f(ownLate(fellBehind(0.40, unknown), 9, 3*time.Millisecond), true, "in 9 of 10 intervals")
	f(fellBehind(0.92, unknown), true, "the loader used 92% of its 16 CPUs")
	// An engine that does not tell its own lag apart: only its CPU can
	// show the loader's limit.
	blind := ownLate(fellBehind(0.40, 0.20), 9, 3*time.Millisecond)
	blind.OwnLagKnown = false
	f(blind, false, "the loader's engine does not tell its own send lag from waits for a connection")
	// Shared CPUs decide nothing by themselves: the loader's own lag does.
	shared := func(e Step) Step {
		e.LoaderCPUs, e.ServerCPUs, e.Shared = 2, 2, true
		return e
	}
	f(shared(fellBehind(0.40, 0.53)), false, "the server at 53% of its 2 CPUs (the CPUs the loader runs on)")
	f(shared(ownLate(fellBehind(0.20, 0.35), 6, 4*time.Millisecond)), true, "in 6 of 10 intervals")
	f(shared(fellBehind(0.91, 0.05)), true, "the loader used 91% of its 2 CPUs")
	// A pass is never loader-bound, however busy the loader was.
	f(Step{Pass: true, LoaderCPUShare: 0.99, ServerCPUShare: 0.1}, false, "")
}

// The loader's own evidence comes from its run's intervals within the
// schedule, the warm-up and the drain left out; a step's judge finds the
// same from its seconds.
func TestLoaderEvidenceFromTheIntervals(t *testing.T) {
	res := &record.Result{ConnWaits: 7, ConnsPeak: 32, OwnLagKnown: true}
	res.Config.Interval, res.Config.Duration, res.Config.MaxConns = time.Second, 11*time.Second, 64
	for k := range 12 {
		lag := 200.0 // µs
		switch k {
		case 0, 11: // the warm-up and the drain: not judged
			lag = 90_000
		case 3, 4:
			lag = 40_000
		}
		res.Intervals = append(res.Intervals, record.Interval{StartS: float64(k), LengthS: 1, OwnLagP99Us: lag})
	}
	e := LoaderEvidence(res, 10*time.Millisecond)
	assert.Equal(t, Step{OwnLagKnown: true, Judged: 10, OwnLate: 2, OwnLagP99: 40 * time.Millisecond, LagTolerance: 10 * time.Millisecond,
		ConnWaits: 7, ConnsPeak: 32, MaxConns: 64}, e)

	sc := DefaultConfig() // 11 s steps, 1 s intervals, SLO 100 ms: tolerance 10 ms
	res.Corrected, res.Uncorrected = latency.New(), latency.New()
	s := stepFrom(res, false)
	s.Asked, s.Length = 1000, 11*time.Second
	sc.judge(&s)
	assert.Equal(t, 10, s.Judged)
	assert.Equal(t, 10*time.Millisecond, s.LagTolerance)
	assert.Equal(t, 2, s.OwnLate)
	assert.Equal(t, 40*time.Millisecond, s.OwnLagP99)
	assert.Equal(t, [3]int{7, 32, 64}, [3]int{int(s.ConnWaits), s.ConnsPeak, s.MaxConns})
	assert.True(t, s.OwnLagKnown)
}
