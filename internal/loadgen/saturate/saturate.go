// Package saturate searches for the highest rate a server sustains under
// a latency SLO and an error budget: a coarse ramp, a bisection, then a
// longer validating run at the result. Each step is one loadgen run.
//
// A step the loader could not deliver is not the server's saturation
// (Bound): it caps the search from above as the loader's ceiling, and a
// search capped only by the loader ends in a lower bound (LoaderBound).
package saturate

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen"
)

// Config configures a search.
type Config struct {
	SLO          time.Duration // corrected p99 must stay ≤ SLO
	MaxErrorRate float64       // share of errors (incl. 503) must stay < this
	StartRate    float64       // first step of the coarse ramp
	MaxRate      float64       // the ramp stops here
	Factor       float64       // the ramp multiplies the rate by this
	Step         time.Duration // length of each ramp and bisection step
	Precision    float64       // bisection stops when (hi-lo)/lo ≤ Precision
	ValidateFor  time.Duration // length of the validating run
	Cooldown     time.Duration // pause between steps for backlogs to drain
	// Out is where the validating run streams its files ("" = none).
	Out string
	// ServerCPU, if not nil, reads the server's cumulative CPU time and
	// how many CPUs it may use; Run calls it just before and just after
	// each step. Nil, or an error, leaves the step's server share unknown:
	// then only the loader's own share can show a step loader-bound.
	ServerCPU func(ctx context.Context) (cpu time.Duration, cpus int, err error) `json:"-"`
	// Shared: the loader and the server run on the same CPUs, so that a
	// step that fell behind is judged by both shares together (Bound).
	Shared bool `json:"-"`
}

// DefaultConfig returns the defaults cmd/loadtest documents.
func DefaultConfig() Config {
	return Config{
		SLO:          100 * time.Millisecond,
		MaxErrorRate: 0.001,
		StartRate:    1000,
		MaxRate:      1_000_000,
		Factor:       2,
		Step:         5 * time.Second,
		Precision:    0.05,
		ValidateFor:  30 * time.Second,
		Cooldown:     2 * time.Second,
	}
}

// Step is one measured rate of a search.
type Step struct {
	Phase     string        `json:"phase"` // "ramp", "bisect" or "validate"
	Asked     float64       `json:"asked_rate"`
	Sent      float64       `json:"sent_rate"`     // from the start to the last send
	Achieved  float64       `json:"achieved_rate"` // answered, from the start to the last answer
	P50       time.Duration `json:"p50_corrected_ns"`
	P99       time.Duration `json:"p99_corrected_ns"`
	P99Uncorr time.Duration `json:"p99_uncorrected_ns"`
	Errors    int64         `json:"errors"`
	ErrorRate float64       `json:"error_rate"`
	CPUPerReq time.Duration `json:"loader_cpu_per_request_ns"`
	// LoaderCPUShare is the loader's CPU time over the step divided by
	// elapsed × LoaderCPUs (negative: unknown).
	LoaderCPUShare float64 `json:"loader_cpu_share"`
	LoaderCPUs     int     `json:"loader_cpus"`
	// ServerCPUShare is the server's CPU time between the readings that
	// bracket the step divided by that time × ServerCPUs (negative:
	// unknown: no Config.ServerCPU, or a reading failed).
	ServerCPUShare  float64       `json:"server_cpu_share"`
	ServerCPUs      int           `json:"server_cpus,omitempty"`
	ServerCPUPerReq time.Duration `json:"server_cpu_per_request_ns,omitempty"` // 0: unknown
	// Shared: the loader and the server ran on the same CPUs.
	Shared bool `json:"shared_cpus,omitempty"`
	Pass   bool `json:"pass"`
	// FellBehind: the step failed by falling behind alone (Evidence).
	FellBehind bool `json:"fell_behind"`
	// Verdict is "ok" or why the step failed.
	Verdict string `json:"verdict"`
	// LoaderBound marks a failure that was the loader's, not the
	// server's; BoundWhy gives the figures behind either reading of a
	// failure (Bound).
	LoaderBound bool   `json:"loader_bound"`
	BoundWhy    string `json:"bound_why,omitempty"`
	// Retry marks the second run of a rate whose first run fell behind.
	Retry bool `json:"retry,omitempty"`
	// Left estimates the time the search still needs after this step;
	// LeftAtLeast marks it a lower bound (the ramp has not failed yet).
	Left        time.Duration `json:"-"`
	LeftAtLeast bool          `json:"-"`
}

// Evidence is what s tells Bound.
func (s *Step) Evidence() Evidence {
	return Evidence{Pass: s.Pass, FellBehind: s.FellBehind,
		LoaderCPUShare: s.LoaderCPUShare, LoaderCPUs: s.LoaderCPUs,
		ServerCPUShare: s.ServerCPUShare, ServerCPUs: s.ServerCPUs, Shared: s.Shared}
}

// Saturation is the outcome of a search.
type Saturation struct {
	// Rate is the highest rate that passed (0: none did).
	Rate float64 `json:"rate"`
	// Validated tells whether the longer validating run at Rate passed too.
	Validated bool `json:"validated"`
	// HitMax is set when even MaxRate passed: the true limit is higher.
	HitMax bool `json:"hit_max_rate"`
	// LoaderBound is set when the loader, not the server, stopped the
	// search: Rate is only a lower bound of the server's saturation.
	// Either the lowest failure above Rate was loader-bound (LoaderCeiling;
	// no server-bound failure below it), or the validating run failed
	// loader-bound. Why says which, with the figures; LoaderCPUs is how
	// many CPUs the loader had in that step.
	LoaderBound   bool    `json:"loader_bound"`
	LoaderCeiling float64 `json:"loader_ceiling,omitempty"`
	LoaderCPUs    int     `json:"loader_cpus,omitempty"`
	Why           string  `json:"why,omitempty"`
	Steps         []Step  `json:"steps"`
	// Validation is the full result of the validating run (nil if none).
	Validation *loadgen.Result `json:"-"`
}

// Phases of a search.
const (
	PhaseRamp     = "ramp"
	PhaseBisect   = "bisect"
	PhaseValidate = "validate"
)

// maxBisections bounds the bisection whatever Precision says.
const maxBisections = 20

// keptUp is the share of the asked rate a step must send.
const keptUp = 0.99

// judge reduces a step's Result to a Step and decides it: corrected p99 ≤
// SLO, error share (503 included) below MaxErrorRate, and every request
// sent, at the asked rate (≥ 99 %): a server that falls behind holds the
// loader's connections, and the sends wait for them. The answered rate is
// not the test: it runs to the last response, so a step of a few seconds
// whose last answers took 50 ms would "fall behind" by the latency alone,
// which the p99 already judges. The server's share is left unknown
// (setServer fills it in).
func (sc *Config) judge(phase string, res *loadgen.Result) Step {
	s := Step{
		Phase: phase, Asked: res.Config.Rate, Sent: res.SendRate(), Achieved: res.AchievedRate(),
		P50: latency.ValueAt(res.Corrected, 50), P99: latency.ValueAt(res.Corrected, 99),
		P99Uncorr: latency.ValueAt(res.Uncorrected, 99),
		Errors:    res.ErrorCount, ErrorRate: res.ErrorRate(), CPUPerReq: res.CPUPerRequest(),
		LoaderCPUShare: -1, LoaderCPUs: loaderCPUs(res), ServerCPUShare: -1, Shared: sc.Shared,
	}
	if cpu := res.CPU.Total(); cpu > 0 && res.Elapsed > 0 { // 0: getrusage failed
		s.LoaderCPUShare = cpu.Seconds() / (res.Elapsed.Seconds() * float64(s.LoaderCPUs))
	}
	switch {
	case s.P99 > sc.SLO:
		s.Verdict = fmt.Sprintf("p99 > %v", sc.SLO)
	case s.ErrorRate >= sc.MaxErrorRate:
		s.Verdict = fmt.Sprintf("errors ≥ %g%%", 100*sc.MaxErrorRate)
	case s.Sent < keptUp*s.Asked || res.Unsent() > 0:
		s.Verdict, s.FellBehind = "fell behind (sent < 99%)", true
	default:
		s.Pass, s.Verdict = true, "ok"
	}
	return s
}

// loaderCPUs is how many CPUs the loader ran on: res.LoaderCPUs, or
// where an engine left it 0, GOMAXPROCS (the runtime sizes it to the
// process's CPU affinity).
func loaderCPUs(res *loadgen.Result) int {
	if res.LoaderCPUs > 0 {
		return res.LoaderCPUs
	}
	return runtime.GOMAXPROCS(0)
}

// serverReading is the server's cumulative CPU time at one moment.
type serverReading struct {
	cpu  time.Duration
	cpus int
	at   time.Time
	ok   bool
}

// readServer reads the server's CPU through sc.ServerCPU (not ok: no
// hook, or it failed).
func (sc *Config) readServer(ctx context.Context) serverReading {
	if sc.ServerCPU == nil {
		return serverReading{}
	}
	cpu, cpus, err := sc.ServerCPU(ctx)
	if err != nil || cpus < 1 {
		return serverReading{}
	}
	return serverReading{cpu: cpu, cpus: cpus, at: time.Now(), ok: true}
}

// setServer fills in s's server figures from the readings a and b that
// bracket its run of sent requests. A counter that went backwards (the
// server restarted) leaves them unknown.
func (s *Step) setServer(a, b serverReading, sent int64) {
	wall := b.at.Sub(a.at)
	if !a.ok || !b.ok || wall <= 0 || b.cpu < a.cpu {
		return
	}
	used := b.cpu - a.cpu
	s.ServerCPUs = b.cpus
	s.ServerCPUShare = used.Seconds() / (wall.Seconds() * float64(b.cpus))
	if sent > 0 {
		s.ServerCPUPerReq = used / time.Duration(sent)
	}
}

// bisections is how many bisection steps search takes on [lo, hi] at
// most: as many as when every one fails (with lo = 0 the search halves
// towards 0).
func (sc *Config) bisections(lo, hi float64) int {
	n := 0
	for ; n < maxBisections; n++ {
		if lo > 0 && (hi-lo)/lo <= sc.Precision {
			break
		}
		mid := math.Round((lo + hi) / 2)
		if mid <= lo || mid >= hi {
			break
		}
		hi = mid
	}
	return n
}

// timeLeft estimates the rest of a search with lo passing and hi the
// lowest failure, the server's or the loader's (0: not found yet), and
// whether the estimate is only a lower bound. Retries are not foreseen;
// retryLeft counts the one about to run.
func (sc *Config) timeLeft(phase string, lo, hi float64) (time.Duration, bool) {
	step := sc.Step + sc.Cooldown
	validate := sc.ValidateFor + sc.Cooldown
	switch {
	case phase == PhaseValidate:
		return 0, false
	case hi == 0 && lo >= sc.MaxRate:
		return validate, false // the ramp ended at MaxRate
	case hi == 0:
		// At least one more ramp step, which fails at best, then bisecting.
		next := math.Min(math.Round(lo*sc.Factor), sc.MaxRate)
		return step*time.Duration(1+sc.bisections(lo, next)) + validate, true
	case lo == 0:
		// Nothing passed yet: halving towards 0, validating if one passes.
		if n := sc.bisections(0, hi); n > 0 {
			return step*time.Duration(n) + validate, false
		}
		return 0, false
	}
	return step*time.Duration(sc.bisections(lo, hi)) + validate, false
}

// retryLeft estimates the rest of a search whose step at rate fell behind
// and is about to run again: the retry, then the rest as if it failed the
// same way. In the ramp that is a lower bound (a retry that passes climbs
// on) unless rate is MaxRate.
func (sc *Config) retryLeft(phase string, lo, rate float64) (time.Duration, bool) {
	if phase == PhaseValidate {
		return sc.ValidateFor + sc.Cooldown, false
	}
	left, _ := sc.timeLeft(phase, lo, rate)
	return sc.Step + sc.Cooldown + left, phase == PhaseRamp && rate < sc.MaxRate
}

// search runs the search over measure, which runs one step at the given
// rate. A coarse ramp (StartRate, ×Factor, … up to MaxRate) finds a passing
// rate lo and a failing rate; bisection narrows them until
// (hi-lo)/lo ≤ Precision; one validating run at lo confirms it. onStep,
// if not nil, sees every step with its estimate of the time left.
//
// A step that fell behind is run once more at the same rate and phase
// before it is believed (a transient of the loader or the machine); the
// retry's result stands, a pass as a pass. A failure is judged by Bound:
// a server-bound one is hi, the server's limit; a loader-bound one is the
// loader's ceiling: the ramp stops there too (a higher rate cannot be
// offered), and bisecting below it only sharpens the lower bound lo. When
// the lowest failure is the loader's, the result is LoaderBound.
func (sc *Config) search(measure func(phase string, rate float64) (Step, error), onStep func(Step)) (*Saturation, error) {
	out := &Saturation{}
	// lo passed; hi is the lowest server-bound failure, ceil the lowest
	// loader-bound one (0: none yet).
	var lo, hi, ceil float64
	var ceilStep Step
	upper := func() float64 {
		if ceil > 0 && (hi == 0 || ceil < hi) {
			return ceil
		}
		return hi
	}
	record := func(s Step) {
		out.Steps = append(out.Steps, s)
		if onStep != nil {
			onStep(s)
		}
	}
	try := func(phase string, rate float64, retry bool) (Step, error) {
		s, err := measure(phase, rate)
		s.Retry = retry
		s.LoaderBound, s.BoundWhy = Bound(s.Evidence())
		return s, err
	}
	step := func(phase string, rate float64) (Step, error) {
		s, err := try(phase, rate, false)
		if err != nil {
			return s, err
		}
		if !s.Pass && s.FellBehind {
			s.Left, s.LeftAtLeast = sc.retryLeft(phase, lo, rate)
			record(s)
			if s, err = try(phase, rate, true); err != nil {
				return s, err
			}
		}
		switch {
		case phase == PhaseValidate:
		case s.Pass:
			lo = max(lo, rate)
		case s.LoaderBound:
			if ceil == 0 || rate < ceil {
				ceil, ceilStep = rate, s
			}
		case hi == 0 || rate < hi:
			hi = rate
		}
		s.Left, s.LeftAtLeast = sc.timeLeft(phase, lo, upper())
		record(s)
		return s, nil
	}
	for r := sc.StartRate; ; r = math.Min(math.Round(r*sc.Factor), sc.MaxRate) {
		s, err := step(PhaseRamp, r)
		if err != nil {
			return out, err
		}
		if !s.Pass {
			break
		}
		if r >= sc.MaxRate {
			out.HitMax = true
			break
		}
	}
	for i := 0; upper() > 0 && i < maxBisections; i++ {
		up := upper()
		if lo > 0 && (up-lo)/lo <= sc.Precision {
			break
		}
		mid := math.Round((lo + up) / 2)
		if mid <= lo || mid >= up {
			break
		}
		if _, err := step(PhaseBisect, mid); err != nil {
			return out, err
		}
	}
	out.Rate = lo
	if ceil > 0 && upper() == ceil {
		out.LoaderBound, out.LoaderCeiling, out.LoaderCPUs = true, ceil, ceilStep.LoaderCPUs
		out.Why = fmt.Sprintf("at %.0f req/s %s", ceil, ceilStep.BoundWhy)
		if hi > 0 {
			out.Why += fmt.Sprintf("; the server's own first failure came at %.0f req/s", hi)
		}
	}
	if lo == 0 {
		return out, nil
	}
	s, err := step(PhaseValidate, lo)
	if err != nil {
		return out, err
	}
	out.Validated = s.Pass
	if !s.Pass && s.LoaderBound {
		out.LoaderBound, out.LoaderCPUs = true, s.LoaderCPUs
		out.Why = fmt.Sprintf("the validating run at %.0f req/s: %s", lo, s.BoundWhy)
	}
	return out, nil
}

// Run searches for the highest rate load's workload sustains under sc's
// criteria, calling onStep after every step (the curve) and progress
// during the validating run. Each step is a fresh run of sc.Step (the
// validation: sc.ValidateFor) after a Cooldown pause; load's rate and
// duration are the search's own.
func Run(ctx context.Context, load loadgen.Config, sc Config, onStep func(Step), progress func(loadgen.Progress)) (*Saturation, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	var validation *loadgen.Result
	first := true
	measure := func(phase string, rate float64) (Step, error) {
		if !first {
			if err := sleepCtx(ctx, sc.Cooldown); err != nil {
				return Step{}, err
			}
		}
		first = false
		c := load
		c.Rate, c.Duration, c.Requests = rate, sc.Step, 0
		c.Out, c.KeepResults = "", false
		var p func(loadgen.Progress)
		if phase == PhaseValidate {
			c.Duration, p = sc.ValidateFor, progress
			c.Out, c.KeepResults = sc.Out, load.KeepResults && sc.Out != ""
		}
		before := sc.readServer(ctx)
		res, err := loadgen.Run(ctx, c, p)
		if err != nil {
			return Step{}, err
		}
		if err := ctx.Err(); err != nil {
			return Step{}, err // an interrupted step proves nothing
		}
		after := sc.readServer(ctx)
		if phase == PhaseValidate {
			validation = res
		}
		s := sc.judge(phase, res)
		s.setServer(before, after, res.Sent)
		return s, nil
	}
	out, err := sc.search(measure, onStep)
	out.Validation = validation
	return out, err
}

// Validate reports the first setting of sc that cannot work.
func (sc *Config) Validate() error {
	switch {
	case sc.SLO <= 0:
		return fmt.Errorf("-slo must be positive")
	case sc.MaxErrorRate <= 0 || sc.MaxErrorRate > 1:
		return fmt.Errorf("-max-error-rate %v must be in (0,1]", sc.MaxErrorRate)
	case sc.StartRate <= 0 || sc.MaxRate < sc.StartRate:
		return fmt.Errorf("need 0 < -start-rate (%v) ≤ -max-rate (%v)", sc.StartRate, sc.MaxRate)
	case sc.Factor <= 1:
		return fmt.Errorf("-factor %v must be > 1", sc.Factor)
	case sc.Step <= 0 || sc.ValidateFor <= 0:
		return fmt.Errorf("-step and -validate must be positive")
	case sc.Precision <= 0:
		return fmt.Errorf("-precision %v must be positive", sc.Precision)
	case sc.Cooldown < 0:
		return fmt.Errorf("-cooldown must not be negative")
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// PrintStepHeader writes the header of the curve's table.
func PrintStepHeader(w io.Writer) {
	fmt.Fprintf(w, "%-9s %10s %10s %10s %10s %10s %10s %8s %7s %8s %7s %8s  %-46s %s\n",
		"phase", "asked/s", "sent/s", "achieved/s", "p50", "p99", "p99 uncorr", "errors",
		"ldr cpu", "ldr/req", "srv cpu", "srv/req", "verdict", "left")
}

// PrintStep writes one row of the curve: CPU shares of each side's own
// CPUs ("-": unknown), CPU per request, and the verdict marked "retry: "
// on a retry and ", loader-bound" on a loader-bound failure.
func PrintStep(w io.Writer, s Step) {
	left := "done"
	if s.Left > 0 {
		left = "~" + s.Left.Round(time.Second).String()
		if s.LeftAtLeast {
			left = "≥" + s.Left.Round(time.Second).String()
		}
	}
	verdict := s.Verdict
	if s.Retry {
		verdict = "retry: " + verdict
	}
	if s.LoaderBound {
		verdict += ", loader-bound"
	}
	fmt.Fprintf(w, "%-9s %10.0f %10.0f %10.0f %10s %10s %10s %7.3f%% %7s %8s %7s %8s  %-46s %s\n",
		s.Phase, s.Asked, s.Sent, s.Achieved, latency.FormatDuration(s.P50), latency.FormatDuration(s.P99),
		latency.FormatDuration(s.P99Uncorr), 100*s.ErrorRate,
		pctCell(s.LoaderCPUShare), perReqCell(s.CPUPerReq), pctCell(s.ServerCPUShare), perReqCell(s.ServerCPUPerReq),
		verdict, left)
}

// pctCell is a CPU share in the table: "42%", or "-" when unknown.
func pctCell(share float64) string {
	if share < 0 {
		return "-"
	}
	return shareText(share)
}

// perReqCell is CPU per request in µs, or "-" when unknown (0).
func perReqCell(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fus", float64(d)/1e3)
}
