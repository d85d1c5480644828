package compare

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/kvpool/kvpool/internal/compare/verdict"
	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen"
	"github.com/kvpool/kvpool/internal/loadgen/report"
)

// overload runs the overload step between probes below saturation,
// sampling kvserver's RSS each second; then stops the server and judges
// how it degraded (E1's verdict rules, formerly loadtest/overload.sh).
func (r *runner) overload(ctx context.Context, wr *WorkloadResult, v *VariantResult, srv *harness.Server) {
	wl := wr.Workload
	dir, rel := r.runDir(wl, v, "overload")
	o := &OverloadRun{Asked: r.p.OverloadFactor * wr.BaseRate, ProbeRate: probeShare * refRate(r.p, wr, v), Dir: rel}
	cfg, err := r.loadConfig(srv.URL, wl)
	if err != nil {
		r.fail(wl, v.Name, "overload", err.Error(), "")
		r.stop(ctx, srv, wl, v.Name, "overload")
		return
	}
	probe := func(name string, d time.Duration) (time.Duration, time.Duration, bool) {
		c := cfg
		c.Rate, c.Duration = o.ProbeRate, d
		before, berr := srv.Sample()
		res, _, err := runInto(ctx, c, filepath.Join(dir, name), v.Config)
		span := r.span(srv, before, berr)
		if _, dead := died(ctx, srv); err != nil && ctx.Err() == nil && !dead {
			r.fail(wl, v.Name, "overload ("+name+" probe)", err.Error(), "") // a death is recorded below
		}
		if err != nil || ctx.Err() != nil {
			return 0, 0, false
		}
		var perReq time.Duration
		if res.Sent > 0 && res.Codes[503] == 0 { // a probe that shed measures no served request's cost
			perReq = span.cpu() / time.Duration(res.Sent)
		}
		return latency.ValueAt(res.Corrected, 99), perReq, true
	}

	o.FullLoadCPUPerRequest = r.fullLoadCost(ctx, wr, v, srv, cfg, filepath.Join(dir, "full-load"))
	w := answerTime(v, wr.baseline(), o.Asked)
	conns := littleConns(o.Asked, w, r.o.MaxConns)
	r.logf("%s %s: overload %.0f req/s (%g× direct's saturation) for %v, %d connections at the start, up to %d", wl, v.Name, o.Asked, r.p.OverloadFactor, r.t.Overload, conns, r.o.MaxConns)
	rss := startRSSSampler(srv)
	var res *loadgen.Result
	var span serverSpan
	if p99, perReq, ok := probe("baseline", r.t.ProbeBaseline); ok {
		o.BaselineP99, o.ProbeCPUPerRequest = p99, perReq
		rss.setPhase("overload")
		c := cfg
		c.Rate, c.Duration = o.Asked, r.t.Overload
		c.Conns, c.MaxConns, c.GrowAfter = conns, r.o.MaxConns, time.Millisecond
		c.Timeout = r.t.RequestTimeout
		c.KeepResults = true // results.bin: served and shed told apart below
		before, berr := srv.Sample()
		var note string
		res, note, err = runInto(ctx, c, dir, v.Config)
		span = r.span(srv, before, berr)
		if note != "" {
			r.note("overload %s: %s", v.Name, note)
		}
		if err != nil && ctx.Err() == nil {
			r.fail(wl, v.Name, "overload", err.Error(), "")
		}
		if res != nil && ctx.Err() == nil {
			o.ServerCPU = span.cpu()
			if res.Sent > 0 {
				o.ServerCPUPerRequest = o.ServerCPU / time.Duration(res.Sent)
			}
			rss.setPhase("recovery")
			for i := 1; i <= r.t.RecoverProbes; i++ {
				p99, _, ok := probe(fmt.Sprintf("recover-%d", i), r.t.ProbeLength)
				if !ok {
					break
				}
				o.RecoveryP99 = append(o.RecoveryP99, p99)
			}
		}
	}
	o.RSS = rss.finish()

	// How the server ended the step: still answering, then SIGTERM.
	readyCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	o.Alive = harness.WaitReady(readyCtx, srv.URL) == nil
	cancel()
	_, dead := died(ctx, srv)
	stopErr := srv.Stop(stopTimeout)
	o.ExitCode = srv.ExitCode()
	logTail := srv.LogTail(200)
	o.Panicked = verdict.LogHasPanic(logTail)
	if ctx.Err() != nil {
		srv.Cleanup() // Ctrl-C: the step is incomplete and not judged
		return
	}
	switch {
	case dead:
		r.fail(wl, v.Name, "overload", fmt.Sprintf("kvserver exited mid-step with code %d", o.ExitCode), srv.LogTail(20))
	case stopErr != nil:
		r.fail(wl, v.Name, "overload", "kvserver did not stop cleanly: "+stopErr.Error(), srv.LogTail(20))
	}
	if res == nil {
		return
	}
	lc := r.checkLoader(wl, v.Name, "overload", res, span)
	o.LoaderKeptUp = lc.KeptUp
	o.Planned, o.Sent, o.Achieved = res.Planned, res.Sent, res.AchievedRate()
	o.ConnsStart, o.ConnsPeak, o.InFlightPeak = res.ConnsStart, res.ConnsPeak, res.InFlightPeak
	bin := filepath.Join(dir, loadgen.ResultsFile)
	if a, err := readAnswers(bin, res.Start, res.Config.Rate); err != nil {
		r.fail(wl, v.Name, "overload", err.Error(), "")
	} else {
		o.addAnswers(a, res)
		// results.bin has served its purpose and is by far the largest file.
		os.Remove(bin)
	}
	judged := judgeOverload(o, v.Variant, report.Summarize(res, nil), dead, logTail)
	o.Verdict = judged.String()
	if judged.Failed() {
		r.c.OverloadFailed = append(r.c.OverloadFailed, wl+" "+v.Name)
	}
	v.Overload = o
	r.logf("%s %s: goodput %.0f/s, served p99 %v, shed %.1f%%, %s", wl, v.Name, o.Goodput, o.ServedP99, o.ShedPct, o.Verdict)
}

// fullLoadCost runs one closed-loop round of Timing.Closed on srv, with
// the connections a closed loop at direct's saturation needs (as the
// closed-loop step sizes them), and returns kvserver's CPU per request
// over it: what a request costs the variant when it serves as fast as it
// can, queueing and hand-offs included, and sheds nothing (0 where it
// shed, failed, or was not measured). A cooldown follows, so the probe
// after it sees the server settled.
func (r *runner) fullLoadCost(ctx context.Context, wr *WorkloadResult, v *VariantResult, srv *harness.Server, cfg loadgen.Config, dir string) time.Duration {
	if r.t.Closed <= 0 {
		return 0
	}
	w := unloadedAnswerTime(v)
	if b := wr.baseline(); w == 0 && b != nil {
		w = unloadedAnswerTime(b)
	}
	cfg.Rate, cfg.Duration = 0, r.t.Closed
	cfg.Conns = littleConns(wr.BaseRate, w, r.o.MaxConns)
	cfg.MaxConns = cfg.Conns
	before, berr := srv.Sample()
	res, _, err := runInto(ctx, cfg, dir, v.Config)
	span := r.span(srv, before, berr)
	if err != nil || ctx.Err() != nil || res.Sent == 0 || res.ErrorCount > 0 || span.cpu() <= 0 {
		return 0
	}
	_ = sleepCtx(ctx, r.t.SatCooldown)
	return span.cpu() / time.Duration(res.Sent)
}

// ServedCPU is what a served request is taken to cost kvserver in the
// overload step, and where that figure comes from: the variant's own
// closed-loop round at full load just before (FullLoadCPUPerRequest:
// it serves as fast as it can and sheds nothing), else its baseline
// probe, where nothing was shed but the load was half (so a served
// request costs more there: fewer requests per wake-up). 0 where
// neither was measured.
func (o *OverloadRun) ServedCPU() (time.Duration, string) {
	if o.FullLoadCPUPerRequest > 0 {
		return o.FullLoadCPUPerRequest, "its closed loop"
	}
	return o.ProbeCPUPerRequest, "the baseline probe"
}

// minShedForCost is the share of a step's answers that must be 503s
// before CPUPerShed derives a figure: the error in the served requests'
// cost is multiplied by served ÷ shed in it, so with 1 % shed a 2 µs
// error in a served request's cost becomes 200 µs per 503.
const minShedForCost = 0.10

// CPUPerShed is what a 503 cost kvserver, derived: the overload step's
// CPU less what its served requests cost at ServedCPU each, spread over
// the 503s. It assumes a served request costs what ServedCPU says; where
// it cost less, the figure comes out high, where more, low (even
// negative: then nothing can be derived). false where fewer than
// minShedForCost of the answers were 503s, or a figure is missing.
func (o *OverloadRun) CPUPerShed() (time.Duration, bool) {
	served, _ := o.ServedCPU()
	if o.Shed == 0 || float64(o.Shed) < minShedForCost*float64(o.Shed+o.Served) || o.ServerCPU <= 0 || served <= 0 {
		return 0, false
	}
	return (o.ServerCPU - time.Duration(o.Served)*served) / time.Duration(o.Shed), true
}

// ShedCostRatio is CPUPerShed as a share of ServedCPU: what a 503 cost
// against a served request.
func (o *OverloadRun) ShedCostRatio() (float64, bool) {
	d, ok := o.CPUPerShed()
	if !ok {
		return 0, false
	}
	served, _ := o.ServedCPU()
	return float64(d) / float64(served), true
}

// addAnswers fills o from the step's answers split by kind.
func (o *OverloadRun) addAnswers(a *answers, res *loadgen.Result) {
	o.Served, o.Shed, o.Timeouts, o.Other = a.Served, a.Shed, a.Timeouts, a.Other
	if res.Elapsed > 0 {
		o.Goodput = float64(a.Served) / res.Elapsed.Seconds()
	}
	if res.Sent > 0 {
		o.ShedPct = 100 * float64(a.Shed) / float64(res.Sent)
	}
	o.ServedP99 = latency.ValueAt(a.ServedCorrected, 99)
	o.ServedP99Uncorrected = latency.ValueAt(a.ServedUncorrected, 99)
	o.ServedWaitP50 = latency.ValueAt(a.ServedUncorrected, 50)
	o.ShedWaitP50 = latency.ValueAt(a.ShedWait, 50)
	o.PerSecond = a.PerSecond
}

// judgeOverload applies the overload rules to what o measured; it also
// sets o's RSS summary of the overload's second half.
func judgeOverload(o *OverloadRun, v Variant, sum report.Summary, dead bool, logTail string) verdict.Verdict {
	var rss []verdict.RSSSample
	for _, p := range o.RSS {
		if p.Phase == "overload" {
			rss = append(rss, verdict.RSSSample{Seconds: p.Second, Bytes: p.RSS})
		}
	}
	g := verdict.Growth(rss)
	o.RSSGrowthMiBPerS, o.RSSSteadyMiB = g.MiBPerS, g.SteadyMiB
	after := make([]float64, len(o.RecoveryP99))
	for i, p := range o.RecoveryP99 {
		after[i] = ms(p)
	}
	return verdict.Judge(verdict.Overload{
		Unbounded: v.CapSet && v.Cap < 0,
		Alive:     verdict.Alive{Answering: o.Alive, Signalled: !dead, ExitCode: o.ExitCode, Log: logTail},
		Codes:     sum.StatusCodes, ErrorKinds: sum.ErrorKinds,
		Recovery: verdict.Recovery{BaselineMs: ms(o.BaselineP99), AfterMs: after},
		RSS:      verdict.RSSLimit{Samples: rss},
	})
}

// rssSampler reads a server's RSS once a second, each sample labelled
// with the phase of the step it fell in.
type rssSampler struct {
	srv    *harness.Server
	began  time.Time
	phase  atomic.Value // string
	points []RSSPoint   // written by the sampling goroutine until done
	stop   chan struct{}
	done   chan struct{}
}

func startRSSSampler(srv *harness.Server) *rssSampler {
	s := &rssSampler{srv: srv, began: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	s.phase.Store("baseline")
	go s.run()
	return s
}

func (s *rssSampler) run() {
	defer close(s.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if p, err := s.srv.Sample(); err == nil {
			s.points = append(s.points, RSSPoint{Second: time.Since(s.began).Seconds(), Phase: s.phase.Load().(string), RSS: p.RSSBytes})
		}
		select {
		case <-tick.C:
		case <-s.stop:
			return
		case <-s.srv.Exited():
			return
		}
	}
}

func (s *rssSampler) setPhase(p string) { s.phase.Store(p) }

// finish stops the sampling and returns the samples.
func (s *rssSampler) finish() []RSSPoint {
	close(s.stop)
	<-s.done
	return s.points
}
