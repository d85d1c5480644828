package saturate

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/engine"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/report"
)

// Run searches for the highest rate load's workload sustains under sc's
// criteria, calling onStep after every step (the curve) and progress
// during the validating runs. Each step is a fresh loadgen run of sc.Step
// (a validation: sc.ValidateFor) with sc.Interval() intervals, after a
// Cooldown pause; load's rate, duration and interval are the search's
// own. Around each step Run reads both sides' CPU, and once an interval
// during it, for the step's and each interval's shares.
func Run(ctx context.Context, load config.Config, sc Config, onStep func(Step), progress func(record.Progress)) (*Saturation, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	var validation *record.Result
	first := true
	iv := sc.Interval()
	measure := func(phase string, rate float64, length time.Duration) (Step, error) {
		if !first {
			if err := sleepCtx(ctx, sc.Cooldown); err != nil {
				return Step{}, err
			}
		}
		first = false
		c := load
		c.Rate, c.Duration, c.Requests, c.Interval, c.Search = rate, length, 0, iv, true
		c.Out, c.KeepResults = "", false
		var p func(record.Progress)
		if phase == PhaseValidate {
			p = progress
			c.Out, c.KeepResults = sc.Out, load.KeepResults && sc.Out != ""
		}
		s, res, err := sc.runStep(ctx, c, iv, p)
		if phase == PhaseValidate && err == nil {
			validation = res
		}
		return s, err
	}
	out, err := sc.search(measure, onStep)
	out.Validation = validation
	return out, err
}

// stepFrom reduces a run's Result to a Step, not yet judged, the server's
// figures and each interval's CPU unknown (setServer and setIntervalCPU
// fill them in).
func stepFrom(res *record.Result, shared bool) Step {
	s := Step{
		Asked: res.Config.Rate, Length: res.Config.Duration, Sent: res.SendRate(), Achieved: res.AchievedRate(),
		P50: latency.ValueAt(res.Corrected, 50), P99: latency.ValueAt(res.Corrected, 99),
		P99Uncorr: latency.ValueAt(res.Uncorrected, 99),
		Errors:    res.ErrorCount, ErrorRate: res.ErrorRate(), Unsent: res.Unsent(), CPUPerReq: res.CPUPerRequest(),
		Shared:      shared,
		OwnLagKnown: res.OwnLagKnown, ConnWaits: res.ConnWaits, ConnsPeak: res.ConnsPeak, MaxConns: res.Config.MaxConns,
	}
	s.SetCPU(res.CPU.Use(res.Elapsed, loaderCPUs(res)), cpuset.Unknown)
	s.Seconds = SecondsOf(res)
	return s
}

// SecondsOf is res's per-interval series as a step's seconds are judged,
// each interval's CPU shares unknown (-1) until a search fills them in:
// what a caller outside the search (compare's fixed-rate step) hands to
// BacklogGrew.
func SecondsOf(res *record.Result) []Second {
	us := func(v float64) time.Duration { return time.Duration(v * float64(time.Microsecond)) }
	out := make([]Second, len(res.Intervals))
	for i, p := range res.Intervals {
		out[i] = Second{T: p.StartS, Length: p.LengthS, Sent: p.Sent, Answered: p.Responses, Rate: p.Rate, Errors: p.Errors,
			P50: us(p.P50Us), P99: us(p.P99Us), SendLagP99: us(p.SendLagP99Us), InFlight: p.InFlight, Conns: p.Conns,
			OwnLagP99: us(p.OwnLagP99Us), ConnWaits: p.ConnWaits, Reconnects: p.Reconnects,
			LoaderCPUShare: -1, ServerCPUShare: -1}
	}
	return out
}

// loaderCPUs is res.LoaderCPUs, or where an engine left it 0, GOMAXPROCS
// (the runtime sizes it to the process's CPU affinity).
func loaderCPUs(res *record.Result) int {
	if res.LoaderCPUs > 0 {
		return res.LoaderCPUs
	}
	return runtime.GOMAXPROCS(0)
}

// cpuReading is both sides' cumulative CPU time at one moment: the
// loader's (this process's, from getrusage; ok false if that failed) and
// the server's (serverOK false: no hook, or it failed).
type cpuReading struct {
	at         time.Time
	loader     time.Duration
	loaderOK   bool
	server     time.Duration
	serverCPUs int
	serverOK   bool
}

// readCPU reads both sides' CPU, the server's stamped with the middle of
// the call that fetched it.
func (sc *Config) readCPU(ctx context.Context) cpuReading {
	loader, start := record.ProcessCPU().Total(), time.Now()
	r := cpuReading{at: start, loader: loader, loaderOK: loader > 0} // zero: getrusage failed
	if sc.ServerCPU == nil {
		return r
	}
	cpu, cpus, err := sc.ServerCPU(ctx)
	if err != nil || cpus < 1 {
		return r
	}
	r.at = start.Add(time.Since(start) / 2)
	r.server, r.serverCPUs, r.serverOK = cpu, cpus, true
	return r
}

// runStep runs c, reading both sides' CPU just before and just after it
// and, where iv is above 0, once every iv during it, and returns its Step,
// not yet judged, with the run's Result.
func (sc *Config) runStep(ctx context.Context, c config.Config, iv time.Duration, progress func(record.Progress)) (Step, *record.Result, error) {
	var readings []cpuReading
	stopReading := func() {}
	readings = append(readings, sc.readCPU(ctx))
	if iv > 0 {
		stopReading = record.Every(iv, func() { readings = append(readings, sc.readCPU(ctx)) })
	}
	res, err := engine.Run(ctx, c, progress)
	stopReading()
	if err == nil {
		err = ctx.Err() // an interrupted step proves nothing
	}
	if err != nil {
		return Step{}, nil, err
	}
	readings = append(readings, sc.readCPU(ctx))
	s := stepFrom(res, sc.Shared)
	s.setServer(readings[0], readings[len(readings)-1], res.Sent)
	setIntervalCPU(s.Seconds, readings, res.Start, s.LoaderCPUs)
	return s, res, nil
}

// setIntervalCPU sets each interval's CPU shares from the readings, in
// time order, of a run that started at start: each side's cumulative CPU
// at the interval's two ends, interpolated between the readings around
// them, divided by its length × the side's CPUs. An end outside the
// readings, or a counter that went backwards, leaves a share unknown.
func setIntervalCPU(seconds []Second, readings []cpuReading, start time.Time, loaderCPUs int) {
	var loader, server []point
	cpus := 0
	for _, r := range readings {
		if r.loaderOK {
			loader = append(loader, point{r.at, r.loader})
		}
		if r.serverOK {
			server = append(server, point{r.at, r.server})
			cpus = r.serverCPUs
		}
	}
	for i := range seconds {
		p := &seconds[i]
		t0 := start.Add(time.Duration(p.T * float64(time.Second)))
		t1 := start.Add(time.Duration((p.T + p.Length) * float64(time.Second)))
		p.LoaderCPUShare = shareBetween(loader, t0, t1, loaderCPUs)
		p.ServerCPUShare = shareBetween(server, t0, t1, cpus)
	}
}

type point struct {
	at  time.Time
	cpu time.Duration
}

func shareBetween(ps []point, t0, t1 time.Time, cpus int) float64 {
	a, okA := cpuAt(ps, t0)
	b, okB := cpuAt(ps, t1)
	wall := t1.Sub(t0)
	if !okA || !okB || cpus < 1 || wall <= 0 || b < a {
		return -1
	}
	return float64(b-a) / (float64(wall) * float64(cpus))
}

// cpuAt is the cumulative CPU at t, interpolated between the readings
// around it.
func cpuAt(ps []point, t time.Time) (float64, bool) {
	for i := 1; i < len(ps); i++ {
		a, b := ps[i-1], ps[i]
		if t.Before(a.at) || t.After(b.at) {
			continue
		}
		span := b.at.Sub(a.at)
		if span <= 0 {
			return float64(a.cpu), true
		}
		f := float64(t.Sub(a.at)) / float64(span)
		return float64(a.cpu) + f*float64(b.cpu-a.cpu), true
	}
	return 0, false
}

// setServer fills in s's server figures from the readings a and b that
// bracket its run of sent requests. A counter that went backwards (the
// server restarted) leaves them unknown.
func (s *Step) setServer(a, b cpuReading, sent int64) {
	wall := b.at.Sub(a.at)
	if !a.serverOK || !b.serverOK || wall <= 0 || b.server < a.server {
		return
	}
	used := b.server - a.server
	s.SetCPU(s.Loader(), cpuset.UseOf(used, wall, b.serverCPUs))
	if sent > 0 {
		s.ServerCPUPerReq = used / time.Duration(sent)
	}
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

// CPUTrace is this process's CPU time, read at intervals during a run
// (TraceSelfCPU): the loader's own CPU second by second, for a run that
// is not a search step.
type CPUTrace struct{ points []point }

// TraceSelfCPU reads this process's CPU time now and every iv until the
// returned stop is called, which reads it once more and returns the trace.
func TraceSelfCPU(iv time.Duration) (stop func() CPUTrace) {
	var ps []point
	read := func() {
		if cpu := record.ProcessCPU().Total(); cpu > 0 {
			ps = append(ps, point{time.Now(), cpu})
		}
	}
	read()
	stopReading := record.Every(iv, read)
	return func() CPUTrace {
		stopReading()
		read()
		return CPUTrace{ps}
	}
}

// Share is the process's CPU time between t0 and t1 as a share of cpus
// CPUs, interpolated between the readings around them (negative:
// unknown, an end outside the trace).
func (c CPUTrace) Share(t0, t1 time.Time, cpus int) float64 {
	return shareBetween(c.points, t0, t1, cpus)
}

// File is where a run's folder gets the curve and the verdict.
const File = "saturate.json"

// Measure is `loadtest saturate` once its settings hold, into sc.Out:
// cc.Rounds closed-loop rounds (0: none), whose median throughput anchors
// the search, then the search, printed and written (the last validating
// run's files and File); the verdict is the caller's (PrintVerdict).
// Interrupted, it keeps the curve so far; a folder left empty is removed.
func Measure(ctx context.Context, load config.Config, sc Config, cc ClosedConfig, server map[string]string, stdout, stderr io.Writer) (*Saturation, error) {
	fmt.Fprintf(stderr, "loadtest saturate: %s, target %s%s\n", report.DescribeLoad(&load), load.Target, report.ServerText(server))
	fmt.Fprintf(stderr, "  %s\n", sc.WatchServerCPU(ctx, load.Target, load.CPUs))
	start := time.Now()
	var closed *ClosedLoop
	if cc.Rounds > 0 {
		fmt.Fprintf(stderr, "  closed loop: %d rounds of %v over %d connections ...\n", cc.Rounds, cc.For, load.Conns)
		var err error
		if closed, err = MeasureClosedLoop(ctx, load, cc, &sc); err != nil {
			_ = os.Remove(sc.Out)
			if ctx.Err() != nil {
				return nil, fmt.Errorf("interrupted after %s, in the closed loop", report.ElapsedText(time.Since(start)))
			}
			return nil, err
		}
		PrintClosedLoop(stdout, closed)
		if closed.Throughput > 0 {
			sc.Anchor = closed.Throughput
		}
	}
	PrintSearchHeader(stderr, &sc)
	PrintStepHeader(stdout)
	sat, err := Run(ctx, load, sc, func(s Step) { PrintStep(stdout, s) }, report.Progress(stderr))
	if sat != nil {
		sat.ClosedLoop = closed
	}
	if ctx.Err() != nil {
		if sat != nil && len(sat.Steps) > 0 {
			_ = report.WriteJSON(sc.Out, File, sat)
			return nil, fmt.Errorf("interrupted after %s; the curve so far is in %s", report.ElapsedText(time.Since(start)), sc.Out)
		}
		_ = os.Remove(sc.Out)
		return nil, fmt.Errorf("interrupted after %s, before any step finished", report.ElapsedText(time.Since(start)))
	}
	if err != nil {
		_ = os.Remove(sc.Out) // only if nothing was written
		return nil, err
	}
	if sat.HitMax {
		fmt.Fprintf(stdout, "*** WARNING: even -max-rate %.0f held; the limit is higher ***\n", sc.MaxRate)
	}
	if sat.Validation != nil {
		fmt.Fprintln(stdout, "\nlast validating run:")
		report.Print(stdout, sat.Validation)
		if err := report.WriteRun(stderr, sc.Out, sat.Validation, server); err != nil {
			return nil, err
		}
	}
	PrintBracket(stdout, &sc, sat)
	if sat.AnchorExceeded {
		fmt.Fprintf(stdout, "note: a step at the closed loop's %.0f req/s held, so it bounded nothing; the search climbed past it\n", sat.Anchor)
	}
	PrintOpenVsClosed(stdout, sat, closed)
	fmt.Fprintf(stderr, "search took %s\n", time.Since(start).Round(time.Second))
	return sat, report.WriteJSON(sc.Out, File, sat)
}
