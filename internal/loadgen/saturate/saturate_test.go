package saturate

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen"
	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
)

func searchConfig() Config {
	sc := DefaultConfig()
	sc.StartRate, sc.MaxRate, sc.Factor, sc.Precision = 1000, 1_000_000, 2, 0.05
	return sc
}

// fakeCapacity is a measure function for a server that sustains exactly
// capacity requests per second; validate says how the validation goes.
func fakeCapacity(capacity float64, validate bool, seen *[]Step) func(string, float64) (Step, error) {
	return func(phase string, rate float64) (Step, error) {
		s := Step{Phase: phase, Asked: rate, Pass: rate <= capacity}
		if phase == PhaseValidate {
			s.Pass = validate
		}
		*seen = append(*seen, s)
		return s, nil
	}
}

func TestSearchFindsTheCapacityWithinPrecision(t *testing.T) {
	f := func(capacity float64) {
		t.Helper()
		sc := searchConfig()
		var seen []Step
		sat, err := sc.search(fakeCapacity(capacity, true, &seen), nil)
		require.NoError(t, err)
		assert.LessOrEqual(t, sat.Rate, capacity, "capacity %v: the result must pass", capacity)
		assert.LessOrEqual(t, (capacity-sat.Rate)/sat.Rate, sc.Precision, "capacity %v: within precision", capacity)
		assert.True(t, sat.Validated)
		assert.Equal(t, asked(seen), asked(sat.Steps))

		// Ramp: 1000, 2000, 4000, ... until the first failure, then bisect,
		// then exactly one validation at the result.
		r := sc.StartRate
		i := 0
		for ; seen[i].Phase == PhaseRamp; i++ {
			assert.Equal(t, r, seen[i].Asked)
			r *= sc.Factor
		}
		assert.False(t, seen[i-1].Pass, "the ramp ends at its first failure")
		for ; seen[i].Phase == PhaseBisect; i++ {
		}
		require.Equal(t, len(seen)-1, i)
		assert.Equal(t, Step{Phase: PhaseValidate, Asked: sat.Rate, Pass: true}, seen[i])
		assert.Zero(t, sat.Steps[i].Left, "nothing is left after the validation")
	}
	f(1500)
	f(3000)
	f(47_000)
	f(85_123)
}

func TestSearchReportsAFailedValidation(t *testing.T) {
	sc := searchConfig()
	var seen []Step
	sat, err := sc.search(fakeCapacity(10_000, false, &seen), nil)
	require.NoError(t, err)
	assert.Positive(t, sat.Rate)
	assert.False(t, sat.Validated)
}

func TestSearchWhenNothingPasses(t *testing.T) {
	sc := searchConfig()
	var seen []Step
	sat, err := sc.search(fakeCapacity(0.4, true, &seen), nil)
	require.NoError(t, err)
	assert.Zero(t, sat.Rate)
	assert.LessOrEqual(t, len(seen), 1+maxBisections)
	for _, s := range seen {
		assert.NotEqual(t, PhaseValidate, s.Phase, "nothing to validate")
	}
}

func TestSearchStopsAtMaxRate(t *testing.T) {
	sc := searchConfig()
	sc.MaxRate = 5000
	var seen []Step
	sat, err := sc.search(fakeCapacity(1e9, true, &seen), nil)
	require.NoError(t, err)
	assert.Equal(t, 5000.0, sat.Rate)
	assert.True(t, sat.HitMax)
	assert.Equal(t, []float64{1000, 2000, 4000, 5000, 5000}, asked(seen))
}

func TestJudgeAppliesTheCriteria(t *testing.T) {
	sc := searchConfig()
	sc.SLO = 100 * time.Millisecond
	f := func(p99 time.Duration, errs int64, sentShare float64, want string) {
		t.Helper()
		// The last answer comes p99 after the last send: a slow answer
		// is the p99's to judge, not a rate that fell behind.
		span := time.Duration(float64(10*time.Second) / sentShare)
		r := &loadgen.Result{Config: loadgen.Config{Rate: 1000}, Corrected: latencyOf(p99), Uncorrected: latencyOf(p99),
			Sent: 10_000, ErrorCount: errs, Planned: 10_000, SendSpan: span, Elapsed: span + p99}
		s := sc.judge(PhaseRamp, r)
		assert.Equal(t, want, s.Verdict)
		assert.Equal(t, want == "ok", s.Pass)
	}
	f(90*time.Millisecond, 9, 1, "ok")
	f(101*time.Millisecond, 0, 1, "p99 > 100ms")
	f(50*time.Millisecond, 10, 1, "errors ≥ 0.1%")
	f(50*time.Millisecond, 0, 0.95, "fell behind (sent < 99%)")
	f(99*time.Millisecond, 0, 1, "ok") // the last answer 99 ms after the last send: all sent in time
}

// Against a fake server that sustains 400 req/s (a token bucket answering
// 503 beyond it), the whole loop runs real steps. What a stall of a loaded
// machine cannot change is asserted: every step is reported as it
// happens, a rate well beyond capacity never passes and its 503s count as
// errors, the result never exceeds capacity, and a result is validated by
// a run at that rate. Where exactly the search lands is the deterministic
// tests' subject (fakeCapacity): here a stall may fail a low step and
// land it lower, which proves nothing about the search.
func TestSaturateAgainstAServerOfKnownCapacity(t *testing.T) {
	const capacity = 400.0
	tb := newTokenBucket(capacity, 5)
	url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		if !tb.take() {
			ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
			ctx.Response.Header.Set("Retry-After", "1")
			return
		}
		bareserver.Handler(ctx)
	})
	load := loadgen.DefaultConfig()
	load.Target, load.Conns, load.MaxConns, load.Progress = url, 4, 4, 0
	load.Timeout = 5 * time.Second
	load.Workload.Keys, load.Workload.ValueSize = 1000, 64
	sc := Config{
		SLO: time.Second, MaxErrorRate: 0.001,
		StartRate: 100, MaxRate: 10_000, Factor: 2, Precision: 0.1,
		Step: 400 * time.Millisecond, ValidateFor: 600 * time.Millisecond, Cooldown: 50 * time.Millisecond,
		Out: t.TempDir(),
	}
	var curve []Step
	sat, err := Run(context.Background(), load, sc, func(s Step) { curve = append(curve, s) }, nil)
	require.NoError(t, err)
	defer func() {
		if t.Failed() {
			for _, s := range curve {
				t.Logf("%s asked %.0f achieved %.0f p99 %v errors %d: %s", s.Phase, s.Asked, s.Achieved, s.P99, s.Errors, s.Verdict)
			}
		}
	}()
	assert.Equal(t, curve, sat.Steps, "every step is reported as it happens")
	assert.LessOrEqual(t, sat.Rate, capacity*1.1)
	beyond := 0
	for _, s := range curve {
		if s.Asked > capacity*1.5 {
			beyond++
			assert.False(t, s.Pass, "%v req/s is beyond capacity", s.Asked)
			assert.Positive(t, s.Errors, "%v req/s: the 503s count as errors", s.Asked)
		}
	}
	if sat.Rate > 0 {
		require.NotNil(t, sat.Validation)
		assert.Equal(t, sat.Rate, sat.Validation.Config.Rate)
		assert.Equal(t, PhaseValidate, curve[len(curve)-1].Phase)
		assert.Equal(t, sc.Out, sat.Validation.Config.Out, "the validating run streams into -out")
	} else {
		assert.Nil(t, sat.Validation, "nothing passed, nothing to validate")
		assert.Equal(t, 1, len(curve), "the ramp stops at its first failure")
	}
	// Either the ramp reached beyond capacity, or it failed earlier: at
	// capacity itself a stalled step may see a few 503s, and the bisection
	// below it passes.
	rampFailed := false
	for _, s := range curve {
		rampFailed = rampFailed || s.Phase == PhaseRamp && !s.Pass
	}
	assert.True(t, beyond > 0 || rampFailed || !curve[len(curve)-1].Pass || sat.Rate == 0, "the search went past capacity or stopped on a failure")
}

// The time-left estimate: a lower bound while the ramp climbs, the
// bisections still needed plus the validation once bracketed, zero after
// the validation.
func TestTimeLeftEstimate(t *testing.T) {
	sc := searchConfig()
	sc.Step, sc.Cooldown, sc.ValidateFor = 5*time.Second, time.Second, 30*time.Second
	left, atLeast := sc.timeLeft(PhaseRamp, 1000, 0)
	assert.True(t, atLeast)
	// Next ramp step 2000, then bisecting [1000, 2000] to 5 %: 1500,
	// 1250, 1125, 1063, 1032 → 5 bisections; 6 steps of 6 s + 31 s.
	assert.Equal(t, 6*6*time.Second+31*time.Second, left)
	left, atLeast = sc.timeLeft(PhaseBisect, 1000, 1100)
	assert.False(t, atLeast)
	assert.Equal(t, 6*time.Second+31*time.Second, left, "one bisection (1050) and the validation")
	left, _ = sc.timeLeft(PhaseBisect, 1000, 1040)
	assert.Equal(t, 31*time.Second, left, "within precision: only the validation")
	left, _ = sc.timeLeft(PhaseValidate, 1000, 1040)
	assert.Zero(t, left)
	left, _ = sc.timeLeft(PhaseRamp, 0, 1000)
	// 500, 250, 125, 63, 32, 16, 8, 4, 2, 1: ten halvings towards 0.
	assert.Equal(t, 10*6*time.Second+31*time.Second, left, "the first step failed: the search halves towards 0")
	left, _ = sc.timeLeft(PhaseBisect, 0, 1)
	assert.Zero(t, left, "nothing left to halve: the search is over")
}

func TestPrintStepShowsTimeLeft(t *testing.T) {
	var b strings.Builder
	PrintStepHeader(&b)
	PrintStep(&b, Step{Phase: PhaseRamp, Asked: 1000, Pass: true, Verdict: "ok", Left: 67 * time.Second, LeftAtLeast: true})
	PrintStep(&b, Step{Phase: PhaseBisect, Asked: 1500, Verdict: "p99 > 100ms", Left: 37 * time.Second})
	PrintStep(&b, Step{Phase: PhaseValidate, Asked: 1000, Pass: true, Verdict: "ok"})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 4)
	assert.True(t, strings.HasSuffix(lines[0], "left"), lines[0])
	assert.True(t, strings.HasSuffix(lines[1], "≥1m7s"), lines[1])
	assert.True(t, strings.HasSuffix(lines[2], "~37s"), lines[2])
	assert.True(t, strings.HasSuffix(lines[3], "done"), lines[3])
}

func latencyOf(d time.Duration) *hdrhistogram.Histogram {
	h := latency.New()
	_ = h.RecordValues(d.Microseconds(), 100)
	return h
}

type tokenBucket struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

func newTokenBucket(rate, burst float64) *tokenBucket {
	return &tokenBucket{rate: rate, burst: burst, tokens: burst, last: time.Now()}
}

func (b *tokenBucket) take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func asked(steps []Step) []float64 {
	out := make([]float64, len(steps))
	for i, s := range steps {
		out[i] = s.Asked
	}
	return out
}
