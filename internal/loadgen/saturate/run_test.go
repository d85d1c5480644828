package saturate

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
	"github.com/kvpool/kvpool/internal/loadgen/record"
)

// Against a fake server that sustains 400 req/s (a token bucket answering
// 503 beyond it), the whole loop runs real steps. What a stall of a loaded
// machine cannot change is asserted: every step is reported as it
// happens, with its per-interval series; a rate well beyond capacity never
// holds and its 503s count as errors; the result never exceeds capacity;
// a result is validated by a run at that rate. Where exactly the search
// lands is the simulated server's subject (search_test.go).
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
	load := config.Default()
	load.Target, load.Conns, load.MaxConns, load.Progress = url, 4, 4, 0
	load.Timeout = 5 * time.Second
	load.Workload.Keys, load.Workload.ValueSize = 1000, 64
	sc := DefaultConfig()
	sc.SLO, sc.StartRate, sc.MaxRate, sc.Precision = time.Second, 200, 10_000, 0.3
	sc.Step, sc.ValidateFor, sc.Cooldown, sc.MaxValidations = 330*time.Millisecond, 600*time.Millisecond, 20*time.Millisecond, 1
	sc.Out = t.TempDir()
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
	assert.LessOrEqual(t, sat.Bracket.Lo, capacity*1.1)
	beyond := 0
	for _, s := range curve {
		assert.Equal(t, int(s.Length/(30*time.Millisecond))-1, s.Judged, "%s %.0f: 30 ms intervals, all but the first judged", s.Phase, s.Asked)
		assert.Greater(t, len(s.Seconds), s.Judged)
		if s.Asked > capacity*1.5 {
			beyond++
			assert.False(t, s.Pass, "%v req/s is beyond capacity", s.Asked)
			assert.Positive(t, s.Errors, "%v req/s: the 503s count as errors", s.Asked)
		}
	}
	if sat.Validated {
		require.NotNil(t, sat.Validation)
		assert.Equal(t, sat.Rate, sat.Validation.Config.Rate)
		assert.Equal(t, PhaseValidate, curve[len(curve)-1].Phase)
		assert.Equal(t, sc.Out, sat.Validation.Config.Out, "the validating run streams into -out")
	}
	rampFailed := false
	for _, s := range curve {
		rampFailed = rampFailed || s.Phase == PhaseRamp && !s.Pass
	}
	assert.True(t, beyond > 0 || rampFailed, "the search went past capacity or stopped on a failure")
}

// A Result's figures become a Step's, the loader's share of its CPUs
// among them, and its intervals the Step's series.
func TestStepFromAResult(t *testing.T) {
	r := &record.Result{Config: config.Config{Rate: 1000, Duration: time.Second}, Corrected: latencyOf(time.Millisecond), Uncorrected: latencyOf(time.Millisecond),
		Sent: 1000, Planned: 1000, SendSpan: time.Second, Elapsed: 2 * time.Second,
		CPU: record.CPUTime{User: 300 * time.Millisecond, System: 100 * time.Millisecond}, LoaderCPUs: 4,
		Intervals: []record.Interval{{StartS: 0, LengthS: 1, Responses: 990, Rate: 990, Errors: 1, P50Us: 300, P99Us: 1500, Sent: 1000, SendLagP99Us: 250, InFlight: 10, Conns: 4}}}
	s := stepFrom(r, true)
	assert.Equal(t, 4, s.LoaderCPUs)
	assert.InDelta(t, 0.4/(2*4), s.LoaderCPUShare, 1e-9)
	assert.Negative(t, s.ServerCPUShare, "unknown until setServer")
	assert.True(t, s.Shared)
	assert.Equal(t, time.Second, s.Length)
	assert.Equal(t, []Second{{T: 0, Length: 1, Sent: 1000, Answered: 990, Rate: 990, Errors: 1, P50: 300 * time.Microsecond, P99: 1500 * time.Microsecond,
		SendLagP99: 250 * time.Microsecond, InFlight: 10, Conns: 4, LoaderCPUShare: -1, ServerCPUShare: -1}}, s.Seconds)
	r.LoaderCPUs = 0
	assert.Equal(t, runtime.GOMAXPROCS(0), stepFrom(r, false).LoaderCPUs, "an engine that left it 0: GOMAXPROCS")
	r.CPU = record.CPUTime{}
	assert.Negative(t, stepFrom(r, false).LoaderCPUShare, "no CPU figure: unknown")
}

func TestSetServer(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(cpu time.Duration, cpus int, d time.Duration) cpuReading {
		return cpuReading{server: cpu, serverCPUs: cpus, at: t0.Add(d), serverOK: true}
	}
	s := Step{ServerCPUShare: -1}
	s.setServer(at(10*time.Second, 4, 0), at(13*time.Second, 4, 2*time.Second), 1000)
	assert.InDelta(t, 3.0/(2*4), s.ServerCPUShare, 1e-9)
	assert.Equal(t, 4, s.ServerCPUs)
	assert.Equal(t, 3*time.Millisecond, s.ServerCPUPerReq)

	f := func(a, b cpuReading) {
		t.Helper()
		s := Step{ServerCPUShare: -1}
		s.setServer(a, b, 1000)
		assert.Negative(t, s.ServerCPUShare)
		assert.Zero(t, s.ServerCPUPerReq)
	}
	f(cpuReading{}, at(time.Second, 4, time.Second))                      // the first reading failed
	f(at(time.Second, 4, 0), cpuReading{})                                // the second did
	f(at(5*time.Second, 4, 0), at(time.Second, 4, time.Second))           // the server restarted
	f(at(time.Second, 4, time.Second), at(2*time.Second, 4, time.Second)) // no time between them
}

// Each interval's CPU shares come from the readings around its ends,
// interpolated; an interval outside the readings, or a failed reading
// between, leaves what cannot be known unknown.
func TestIntervalCPUShares(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	// The loader uses 0.5 CPU throughout; the server 1 CPU for the first
	// second and 2 after. Readings at -100 ms, 500 ms, 1500 ms, 2100 ms;
	// the server's at 500 ms failed.
	loader := func(t time.Duration) time.Duration { return t / 2 }
	server := func(t time.Duration) time.Duration {
		if t < time.Second {
			return t
		}
		return time.Second + 2*(t-time.Second)
	}
	var rs []cpuReading
	for _, t := range []time.Duration{ms(-100), ms(500), ms(1500), ms(2100)} {
		r := cpuReading{at: start.Add(t), loader: time.Second + loader(t), loaderOK: true, server: 5*time.Second + server(t), serverCPUs: 2, serverOK: t != ms(500)}
		rs = append(rs, r)
	}
	seconds := []Second{{T: 0, Length: 1}, {T: 1, Length: 1}, {T: 2, Length: 1}}
	setIntervalCPU(seconds, rs, start, 1)
	assert.InDelta(t, 0.5, seconds[0].LoaderCPUShare, 1e-9)
	assert.InDelta(t, 0.5, seconds[1].LoaderCPUShare, 1e-9)
	assert.Negative(t, seconds[2].LoaderCPUShare, "it ends after the last reading")
	// The server between -100 ms and 1500 ms used 0.1 + 1 + 1 = 2.1 s:
	// interpolated over that span, second 0 reads 2.1/1.6 s per s of 2 CPUs.
	assert.InDelta(t, 2.1/1.6/2, seconds[0].ServerCPUShare, 1e-9)
	assert.Negative(t, seconds[2].ServerCPUShare)
}

// Run reads the server's CPU through the hook before and after every
// step and once an interval during it; a hook that fails leaves the
// server's shares unknown.
func TestRunReadsTheServerCPUAroundAndWithinEachStep(t *testing.T) {
	url := loadgentest.ServeHandler(t, bareserver.Handler)
	load := config.Default()
	load.Target, load.Conns, load.MaxConns, load.Progress = url, 2, 2, 0
	load.Workload.Keys, load.Workload.ValueSize = 100, 16
	sc := DefaultConfig()
	sc.SLO, sc.MaxErrorRate, sc.StartRate, sc.MaxRate = 10*time.Second, 0.5, 50, 50
	sc.Step, sc.ValidateFor, sc.Cooldown = 220*time.Millisecond, 220*time.Millisecond, 0
	var calls atomic.Int64
	sc.ServerCPU = func(context.Context) (time.Duration, int, error) {
		return time.Duration(calls.Add(1)) * 10 * time.Millisecond, 3, nil
	}
	sat, err := Run(context.Background(), load, sc, nil, nil)
	require.NoError(t, err)
	require.NotEmpty(t, sat.Steps)
	assert.Greater(t, calls.Load(), int64(2*len(sat.Steps)), "one reading before and one after each step, and more during")
	known := 0
	for _, s := range sat.Steps {
		assert.Equal(t, 3, s.ServerCPUs)
		assert.GreaterOrEqual(t, s.ServerCPUShare, 0.0)
		assert.GreaterOrEqual(t, s.LoaderCPUShare, 0.0, "the loader's share is known")
		for _, p := range s.Seconds {
			if p.ServerCPUShare >= 0 {
				known++
			}
		}
	}
	assert.Positive(t, known, "intervals between readings have the server's share")

	sc.ServerCPU = func(context.Context) (time.Duration, int, error) { return 0, 0, errors.New("no /metrics") }
	sat, err = Run(context.Background(), load, sc, nil, nil)
	require.NoError(t, err)
	for _, s := range sat.Steps {
		assert.Negative(t, s.ServerCPUShare)
		assert.Zero(t, s.ServerCPUs)
		for _, p := range s.Seconds {
			assert.Negative(t, p.ServerCPUShare)
		}
	}
}

// The closed loop runs its rounds and takes their medians; its figures
// explain an open-model rate beside it.
func TestClosedLoop(t *testing.T) {
	url := loadgentest.ServeHandler(t, bareserver.Handler)
	load := config.Default()
	load.Target, load.Conns, load.MaxConns, load.Progress = url, 2, 2, 0
	load.Workload.Keys, load.Workload.ValueSize = 100, 16
	sc := DefaultConfig()
	var calls atomic.Int64
	sc.ServerCPU = func(context.Context) (time.Duration, int, error) {
		return time.Duration(calls.Add(1)) * 10 * time.Millisecond, 2, nil
	}
	cl, err := MeasureClosedLoop(context.Background(), load, ClosedConfig{Rounds: 3, For: 100 * time.Millisecond}, &sc)
	require.NoError(t, err)
	require.Len(t, cl.Rounds, 3)
	assert.Equal(t, int64(6), calls.Load(), "a reading before and after each round")
	lo, hi := cl.Range()
	assert.Positive(t, lo)
	assert.GreaterOrEqual(t, cl.Throughput, lo)
	assert.LessOrEqual(t, cl.Throughput, hi)
	assert.Positive(t, cl.ServerCPUPerReq)
	assert.Equal(t, 2, cl.ServerCPUs)
	_, err = MeasureClosedLoop(context.Background(), load, ClosedConfig{}, &sc)
	assert.Error(t, err)
}

// open/closed = utilisation ratio × cost ratio × rest.
func TestExplainOpenVersusClosed(t *testing.T) {
	cl := &ClosedLoop{Throughput: 40_000, ServerCPUShare: 0.96, ServerCPUPerReq: 24 * time.Microsecond}
	open := Step{ServerCPUShare: 0.72, ServerCPUPerReq: 25 * time.Microsecond}
	e := Explain(28_800, open, cl)
	assert.InDelta(t, 0.72, e.Ratio, 1e-9)
	assert.InDelta(t, 0.75, e.Utilisation, 1e-9)
	assert.InDelta(t, 0.96, e.Cost, 1e-9)
	assert.InDelta(t, 1.0, e.Rest, 1e-9)
	assert.Equal(t, OpenVsClosed{Ratio: 0.72}, Explain(28_800, Step{ServerCPUShare: -1}, cl), "the server's figures unknown")
	assert.Zero(t, Explain(28_800, open, nil))
}

// The curve shows each side's CPU share ("-": unknown), the per-interval
// verdict, and marks re-tests and loader-bound failures; the bracket is
// printed as one.
func TestPrintStepAndBracket(t *testing.T) {
	var b strings.Builder
	PrintStepHeader(&b)
	PrintStep(&b, Step{Phase: PhaseRamp, Asked: 32_000, Verdict: "p99 > 100ms in 2 of 10", Retry: true, LoaderBound: true, Judged: 10, OK: 8,
		Seconds: []Second{{Length: 1}}, LoaderCPUShare: 0.12, CPUPerReq: 9500 * time.Nanosecond, ServerCPUShare: 0.35, ServerCPUPerReq: 21 * time.Microsecond, Left: 37 * time.Second})
	PrintStep(&b, Step{Phase: PhaseBisect, Asked: 24_000, Pass: true, Verdict: "ok", Judged: 10, OK: 10, Seconds: []Second{{Length: 0.2}}, LoaderCPUShare: 0.95, ServerCPUShare: -1})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 3)
	assert.Regexp(t, `^phase .* errors +ldr cpu +ldr/req +srv cpu +srv/req +seconds +verdict +left$`, lines[0])
	assert.Regexp(t, `^ramp +32000 .* 12% +9\.5us +35% +21\.0us +8/10 s ok +re-test: p99 > 100ms in 2 of 10, loader-bound +≥37s$`, lines[1])
	assert.Regexp(t, `^bisect +24000 .* 95% +- +- +- +10/10 ok +ok +done$`, lines[2])

	b.Reset()
	sc := DefaultConfig()
	PrintBracket(&b, &sc, &Saturation{Rate: 28_000, Validated: true, Bracket: Bracket{Lo: 28_000, Hi: 28_700},
		Retests: []Retest{{Outcome: "held"}, {Outcome: "failed twice"}}})
	assert.Equal(t, "\nbracket: 28000–28700 req/s (2.5 %): 28000 held over its steps and a 30s validation; 28700 failed twice\n"+
		"re-tests: 2, of which 1 held (a rate that fails once and then holds counts as held)\n", b.String())
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
