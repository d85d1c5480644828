package saturate

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/loadgen"
	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
)

// lab is a measure function built from a world: outcome says how the
// attempt-th run (0, then 1 for the retry) of a phase at a rate goes.
// It records every step it returns.
type lab struct {
	outcome func(phase string, rate float64, attempt int) Step
	seen    []Step
	tries   map[string]int
}

func (l *lab) measure(phase string, rate float64) (Step, error) {
	if l.tries == nil {
		l.tries = map[string]int{}
	}
	key := phase + "@" + time.Duration(rate).String()
	s := l.outcome(phase, rate, l.tries[key])
	l.tries[key]++
	s.Phase, s.Asked = phase, rate
	l.seen = append(l.seen, s)
	return s, nil
}

// Steps as a 16-CPU loader against a 16-CPU server would see them.
func passed(loader, server float64) Step {
	return Step{Pass: true, Verdict: "ok", LoaderCPUShare: loader, LoaderCPUs: 16, ServerCPUShare: server, ServerCPUs: 16}
}

func fellBehind(loader, server float64) Step {
	return Step{FellBehind: true, Verdict: "fell behind (sent < 99%)", LoaderCPUShare: loader, LoaderCPUs: 16, ServerCPUShare: server, ServerCPUs: 16}
}

func overSLO(loader, server float64) Step {
	return Step{Verdict: "p99 > 100ms", LoaderCPUShare: loader, LoaderCPUs: 16, ServerCPUShare: server, ServerCPUs: 16}
}

// retries lists the rates retried, checking that each retry follows
// the run that fell behind, at the same rate and phase.
func retries(t *testing.T, steps []Step) []float64 {
	t.Helper()
	var out []float64
	for i, s := range steps {
		if s.Retry {
			out = append(out, s.Asked)
			require.Positive(t, i)
			prev := steps[i-1]
			assert.True(t, prev.Asked == s.Asked && prev.Phase == s.Phase && prev.FellBehind && !prev.Retry,
				"a retry follows the run that fell behind: %+v then %+v", prev, s)
		}
	}
	return out
}

// The 28,000: one short ramp step at 32,000 fell behind with
// both sides far under 90 % (a hiccup). It is run again, the retry
// passes, and the ramp climbs on to the server's real limit, 60,000,
// where p99 fails with the server busy.
func TestSearchRetriesAHiccupAndClimbsOn(t *testing.T) {
	sc := searchConfig()
	l := &lab{outcome: func(phase string, rate float64, attempt int) Step {
		switch {
		case rate == 32_000 && attempt == 0:
			return fellBehind(0.10, 0.40)
		case rate > 60_000:
			return overSLO(0.20, 0.97)
		}
		return passed(0.10, 0.50)
	}}
	sat, err := sc.search(l.measure, nil)
	require.NoError(t, err)
	assert.False(t, sat.LoaderBound, sat.Why)
	assert.True(t, sat.Validated)
	assert.LessOrEqual(t, sat.Rate, 60_000.0)
	assert.LessOrEqual(t, (60_000-sat.Rate)/sat.Rate, sc.Precision, "the server's limit, not the hiccup's 28,000")
	assert.Equal(t, []float64{32_000}, retries(t, sat.Steps))
	assert.Equal(t, asked(l.seen), asked(sat.Steps), "both runs of 32,000 are on the curve")

	i := indexOf(sat.Steps, PhaseRamp, 32_000)
	first, retry := sat.Steps[i], sat.Steps[i+1]
	assert.True(t, first.LoaderBound, "the hiccup reads as the loader's")
	assert.Contains(t, first.BoundWhy, "fell behind while the server used only 40%")
	// Its estimate: the retry, then bisecting [16,000, 32,000] had it
	// failed the same way; at least that much, as the ramp may climb on.
	left, _ := sc.timeLeft(PhaseRamp, 16_000, 32_000)
	assert.Equal(t, sc.Step+sc.Cooldown+left, first.Left)
	assert.True(t, first.LeftAtLeast)
	assert.True(t, retry.Retry)
	assert.True(t, retry.Pass)
	assert.Equal(t, 64_000.0, sat.Steps[i+2].Asked, "the ramp climbs on after a retry that passes")
}

// A loader that cannot send above 30,000 (one event loop on 16 CPUs:
// its share of its set stays low) while the server idles: every step
// above it falls behind twice. The search sharpens the lower bound below
// the loader's ceiling and ends as "≥", never as the server's limit.
func TestSearchFellBehindTwiceEndsAsALowerBound(t *testing.T) {
	sc := searchConfig()
	l := &lab{outcome: func(phase string, rate float64, attempt int) Step {
		if rate > 30_000 {
			return fellBehind(0.07, 0.30)
		}
		return passed(0.06, 0.30)
	}}
	sat, err := sc.search(l.measure, nil)
	require.NoError(t, err)
	assert.True(t, sat.LoaderBound)
	assert.True(t, sat.Validated)
	assert.LessOrEqual(t, sat.Rate, 30_000.0)
	assert.Greater(t, sat.Rate, 16_000.0, "bisected up towards the loader's ceiling")
	assert.LessOrEqual(t, (sat.LoaderCeiling-sat.Rate)/sat.Rate, sc.Precision, "the lower bound sharpened to the precision")
	assert.Greater(t, sat.LoaderCeiling, 30_000.0)
	assert.Equal(t, 16, sat.LoaderCPUs)
	assert.Contains(t, sat.Why, "fell behind while the server used only 30% of its 16 CPUs")
	for _, s := range sat.Steps {
		if !s.Pass {
			assert.True(t, s.LoaderBound, "%v: every failure here is the loader's", s.Asked)
		}
	}
	ramp := stepsOf(sat.Steps, PhaseRamp)
	assert.Equal(t, []float64{1000, 2000, 4000, 8000, 16_000, 32_000, 32_000}, asked(ramp), "the ramp stops at the loader's ceiling, after one retry")
	assert.Equal(t, sat.Rate, sat.Steps[len(sat.Steps)-1].Asked)
	assert.Equal(t, PhaseValidate, sat.Steps[len(sat.Steps)-1].Phase)
}

// A loader at 90 % of its CPUs: p99 fails above 50,000 because the
// loader queues, not the server. No retry (it did not fall behind
// alone); the result is "≥".
func TestSearchLoaderOutOfCPUEndsAsALowerBound(t *testing.T) {
	sc := searchConfig()
	l := &lab{outcome: func(phase string, rate float64, attempt int) Step {
		if rate > 50_000 {
			return overSLO(0.95, 0.60)
		}
		return passed(0.80, 0.45)
	}}
	sat, err := sc.search(l.measure, nil)
	require.NoError(t, err)
	assert.True(t, sat.LoaderBound)
	assert.Greater(t, sat.LoaderCeiling, 50_000.0)
	assert.Less(t, sat.LoaderCeiling, 64_000.0, "the lowest loader-bound failure, from the bisection")
	assert.LessOrEqual(t, sat.Rate, 50_000.0)
	assert.LessOrEqual(t, (sat.LoaderCeiling-sat.Rate)/sat.Rate, sc.Precision)
	assert.Empty(t, retries(t, sat.Steps))
	assert.Equal(t, fmt.Sprintf("at %.0f req/s the loader used 95%% of its 16 CPUs (the server at 60%% of its 16 CPUs): it ran out of CPU", sat.LoaderCeiling), sat.Why)
}

// The server's limit stays a saturation: falling behind with the server
// at 90 % or more (after one retry), p99 over the SLO with the loader
// under 90 %, or falling behind with the server's CPU unknown.
func TestSearchServerBoundFailureIsTheSaturation(t *testing.T) {
	f := func(name string, fail Step, wantRetries int) {
		t.Helper()
		sc := searchConfig()
		l := &lab{outcome: func(phase string, rate float64, attempt int) Step {
			if rate > 45_000 {
				return fail
			}
			return passed(0.30, 0.70)
		}}
		sat, err := sc.search(l.measure, nil)
		require.NoError(t, err, name)
		assert.False(t, sat.LoaderBound, "%s: %s", name, sat.Why)
		assert.Zero(t, sat.LoaderCeiling, name)
		assert.True(t, sat.Validated, name)
		assert.LessOrEqual(t, sat.Rate, 45_000.0, name)
		assert.LessOrEqual(t, (45_000-sat.Rate)/sat.Rate, sc.Precision, name)
		assert.Len(t, retries(t, sat.Steps), wantRetries, name)
	}
	// How many failing steps the search meets, each retried once when
	// it fell behind (the path is the same whichever way they fail).
	sc := searchConfig()
	failures := 0
	l := &lab{outcome: func(phase string, rate float64, attempt int) Step {
		if rate > 45_000 {
			return overSLO(0.30, 0.95)
		}
		return passed(0.30, 0.70)
	}}
	_, err := sc.search(l.measure, nil)
	require.NoError(t, err)
	for _, s := range l.seen {
		if !s.Pass {
			failures++
		}
	}
	require.Positive(t, failures)

	f("fell behind, server busy", fellBehind(0.40, 0.95), failures)
	f("p99, loader under 90%", overSLO(0.40, 0.20), 0)
	f("fell behind, server unknown", fellBehind(0.40, -1), failures)
}

// A server-bound failure above a loader-bound one: the bracket is closed
// by the loader, so the result is still a lower bound, and Why names the
// server's failure too.
func TestSearchLoaderCeilingBelowTheServersFailure(t *testing.T) {
	sc := searchConfig()
	l := &lab{outcome: func(phase string, rate float64, attempt int) Step {
		switch {
		case rate >= 64_000:
			return overSLO(0.85, 0.97)
		case rate > 40_000:
			return overSLO(0.93, 0.80)
		}
		return passed(0.70, 0.60)
	}}
	sat, err := sc.search(l.measure, nil)
	require.NoError(t, err)
	assert.True(t, sat.LoaderBound)
	assert.Less(t, sat.LoaderCeiling, 64_000.0)
	assert.LessOrEqual(t, sat.Rate, 40_000.0)
	assert.LessOrEqual(t, (sat.LoaderCeiling-sat.Rate)/sat.Rate, sc.Precision)
	assert.Contains(t, sat.Why, "the loader used 93%")
	assert.Contains(t, sat.Why, "the server's own first failure came at 64000 req/s")
}

// The validating run's failure is judged like any step's: a loader-bound
// one makes the result a lower bound; a server-bound one leaves it a
// saturation that was not validated. A validation that fell behind is
// run again first.
func TestSearchJudgesTheValidation(t *testing.T) {
	f := func(validation func(attempt int) Step, wantLoaderBound, wantValidated bool, wantValidations int, whyHas string) {
		t.Helper()
		sc := searchConfig()
		l := &lab{outcome: func(phase string, rate float64, attempt int) Step {
			switch {
			case phase == PhaseValidate:
				return validation(attempt)
			case rate > 10_000:
				return overSLO(0.20, 0.99)
			}
			return passed(0.20, 0.50)
		}}
		sat, err := sc.search(l.measure, nil)
		require.NoError(t, err)
		assert.Equal(t, wantLoaderBound, sat.LoaderBound, sat.Why)
		assert.Equal(t, wantValidated, sat.Validated)
		assert.Len(t, stepsOf(sat.Steps, PhaseValidate), wantValidations)
		if whyHas == "" {
			assert.Empty(t, sat.Why)
		}
		assert.Contains(t, sat.Why, whyHas)
		last := sat.Steps[len(sat.Steps)-1]
		assert.Zero(t, last.Left, "nothing is left after the validation")
	}
	f(func(int) Step { return overSLO(0.95, 0.40) }, true, false, 1, "the validating run at 10000 req/s: the loader used 95%")
	f(func(int) Step { return fellBehind(0.30, 0.40) }, true, false, 2, "the validating run at 10000 req/s: fell behind while the server used only 40%")
	f(func(int) Step { return overSLO(0.30, 0.99) }, false, false, 1, "")
	f(func(attempt int) Step {
		if attempt == 0 {
			return fellBehind(0.30, 0.40)
		}
		return passed(0.30, 0.40)
	}, false, true, 2, "")
}

// The estimate for a validation about to be retried is that retry.
func TestRetryLeft(t *testing.T) {
	sc := searchConfig()
	sc.Step, sc.Cooldown, sc.ValidateFor = 5*time.Second, time.Second, 30*time.Second
	left, atLeast := sc.retryLeft(PhaseValidate, 1000, 1000)
	assert.Equal(t, 31*time.Second, left)
	assert.False(t, atLeast)
	// A bisection at 1050 between 1000 and 1100: its retry, then the
	// validation (1000..1050 is within 5 %).
	left, atLeast = sc.retryLeft(PhaseBisect, 1000, 1050)
	assert.Equal(t, 6*time.Second+31*time.Second, left)
	assert.False(t, atLeast)
	// The ramp at MaxRate: a retry that passes ends the ramp, so the
	// estimate is no lower bound.
	sc.MaxRate = 2000
	_, atLeast = sc.retryLeft(PhaseRamp, 1000, 2000)
	assert.False(t, atLeast)
}

func TestJudgeReadsTheLoadersCPUShare(t *testing.T) {
	sc := searchConfig()
	r := &loadgen.Result{Config: loadgen.Config{Rate: 1000}, Corrected: latencyOf(time.Millisecond), Uncorrected: latencyOf(time.Millisecond),
		Sent: 1000, Planned: 1000, SendSpan: time.Second, Elapsed: 2 * time.Second,
		CPU: loadgen.CPUTime{User: 300 * time.Millisecond, System: 100 * time.Millisecond}, LoaderCPUs: 4}
	s := sc.judge(PhaseRamp, r)
	assert.Equal(t, 4, s.LoaderCPUs)
	assert.InDelta(t, 0.4/(2*4), s.LoaderCPUShare, 1e-9)
	assert.Negative(t, s.ServerCPUShare, "unknown until setServer")
	r.LoaderCPUs = 0
	assert.Equal(t, runtime.GOMAXPROCS(0), sc.judge(PhaseRamp, r).LoaderCPUs, "an engine that left it 0: GOMAXPROCS")
	r.CPU = loadgen.CPUTime{}
	assert.Negative(t, sc.judge(PhaseRamp, r).LoaderCPUShare, "no CPU figure: unknown")
}

func TestSetServer(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(cpu time.Duration, cpus int, d time.Duration) serverReading {
		return serverReading{cpu: cpu, cpus: cpus, at: t0.Add(d), ok: true}
	}
	s := Step{ServerCPUShare: -1}
	s.setServer(at(10*time.Second, 4, 0), at(13*time.Second, 4, 2*time.Second), 1000)
	assert.InDelta(t, 3.0/(2*4), s.ServerCPUShare, 1e-9)
	assert.Equal(t, 4, s.ServerCPUs)
	assert.Equal(t, 3*time.Millisecond, s.ServerCPUPerReq)

	f := func(a, b serverReading) {
		t.Helper()
		s := Step{ServerCPUShare: -1}
		s.setServer(a, b, 1000)
		assert.Negative(t, s.ServerCPUShare)
		assert.Zero(t, s.ServerCPUPerReq)
	}
	f(serverReading{}, at(time.Second, 4, time.Second))                   // the first reading failed
	f(at(time.Second, 4, 0), serverReading{})                             // the second did
	f(at(5*time.Second, 4, 0), at(time.Second, 4, time.Second))           // the server restarted
	f(at(time.Second, 4, time.Second), at(2*time.Second, 4, time.Second)) // no time between them
}

// Run reads the server's CPU through the hook just before and after
// every step; a hook that fails leaves the server's share unknown.
func TestRunReadsTheServerCPUAroundEachStep(t *testing.T) {
	url := loadgentest.ServeHandler(t, bareserver.Handler)
	load := loadgen.DefaultConfig()
	load.Target, load.Conns, load.MaxConns, load.Progress = url, 2, 2, 0
	load.Workload.Keys, load.Workload.ValueSize = 100, 16
	sc := Config{
		SLO: 10 * time.Second, MaxErrorRate: 0.5,
		StartRate: 50, MaxRate: 50, Factor: 2, Precision: 0.1,
		Step: 100 * time.Millisecond, ValidateFor: 100 * time.Millisecond,
	}
	var calls atomic.Int64
	sc.ServerCPU = func(context.Context) (time.Duration, int, error) {
		return time.Duration(calls.Add(1)) * 10 * time.Millisecond, 3, nil
	}
	sat, err := Run(context.Background(), load, sc, nil, nil)
	require.NoError(t, err)
	require.NotEmpty(t, sat.Steps)
	assert.Equal(t, int64(2*len(sat.Steps)), calls.Load(), "one reading before and one after each step")
	for _, s := range sat.Steps {
		assert.Equal(t, 3, s.ServerCPUs)
		assert.GreaterOrEqual(t, s.ServerCPUShare, 0.0)
		if s.Sent > 0 { // Sent is a rate: the per-request figure divides 10 ms by the count
			assert.Positive(t, s.ServerCPUPerReq)
		}
		assert.GreaterOrEqual(t, s.LoaderCPUShare, 0.0, "the loader's share is known")
	}

	sc.ServerCPU = func(context.Context) (time.Duration, int, error) { return 0, 0, errors.New("no /metrics") }
	sat, err = Run(context.Background(), load, sc, nil, nil)
	require.NoError(t, err)
	for _, s := range sat.Steps {
		assert.Negative(t, s.ServerCPUShare)
		assert.Zero(t, s.ServerCPUs)
	}
}

// The curve shows each side's CPU share ("-": unknown) and marks
// retries and loader-bound failures.
func TestPrintStepShowsCPUAndBound(t *testing.T) {
	var b strings.Builder
	PrintStepHeader(&b)
	PrintStep(&b, Step{Phase: PhaseRamp, Asked: 32_000, Verdict: "fell behind (sent < 99%)", FellBehind: true, Retry: true, LoaderBound: true,
		LoaderCPUShare: 0.12, CPUPerReq: 9500 * time.Nanosecond, ServerCPUShare: 0.35, ServerCPUPerReq: 21 * time.Microsecond, Left: 37 * time.Second})
	PrintStep(&b, Step{Phase: PhaseBisect, Asked: 24_000, Pass: true, Verdict: "ok", LoaderCPUShare: 0.95, ServerCPUShare: -1})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 3)
	assert.Regexp(t, `^phase .* errors +ldr cpu +ldr/req +srv cpu +srv/req +verdict +left$`, lines[0])
	assert.Regexp(t, `^ramp +32000 .* 12% +9\.5us +35% +21\.0us +retry: fell behind \(sent < 99%\), loader-bound +~37s$`, lines[1])
	assert.Regexp(t, `^bisect +24000 .* 95% +- +- +- +ok +done$`, lines[2])
}

func indexOf(steps []Step, phase string, rate float64) int {
	for i, s := range steps {
		if s.Phase == phase && s.Asked == rate {
			return i
		}
	}
	return -1
}

func stepsOf(steps []Step, phase string) []Step {
	var out []Step
	for _, s := range steps {
		if s.Phase == phase {
			out = append(out, s)
		}
	}
	return out
}
