package compare

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/compare/verdict"
	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/report"
)

// overload is v's overload step on srv between probes below saturation,
// sampling kvserver's RSS each second; then it stops the server and
// judges how it degraded (the rules of the verdict package): failed, where
// it failed them. Every variant gets the same rate and connections
// (wr.Steps). Nil where the step did not run to its end.
func (r *step) overload(ctx context.Context, wr *result.WorkloadResult, v *result.VariantResult, srv *instance) (o *result.OverloadRun, failed bool) {
	wl, s := wr.Workload, wr.Steps
	dir, rel := r.runDir(wl, v, "overload")
	o = &result.OverloadRun{Asked: s.Overload.Rate, ProbeRate: plan.ProbeShare * r.planner().refRate(wr, v), Dir: rel}
	cfg := r.loadConfig(srv)
	// probe returns the corrected p99 of a probe and kvserver's CPU per
	// request over it (0 where it shed: that measures no served request).
	probe := func(name string, d time.Duration) (time.Duration, time.Duration, bool) {
		c := cfg
		c.Rate, c.Duration = o.ProbeRate, d
		m, ok := r.measure(ctx, srv, "overload ("+name+" probe)", c, filepath.Join(dir, name))
		if !ok {
			return 0, 0, false
		}
		perReq := m.perRequest()
		if m.res.Codes[503] > 0 {
			perReq = 0
		}
		return latency.ValueAt(m.res.Corrected, 99), perReq, true
	}

	o.FullLoadCPUPerRequest = r.fullLoadCost(ctx, srv, r.planner().fullLoad(cfg, s), filepath.Join(dir, "full-load"))
	oc := r.planner().overload(cfg, s)
	r.logf("%s %s: overload %.0f req/s (%g× direct's saturation) for %v, %d connections at the start, up to %d", wl, v.Name, o.Asked, r.p.OverloadFactor, r.t.Overload, oc.Conns, oc.MaxConns)
	rss := startRSSSampler(srv.Server)
	var m stepRun
	if p99, perReq, ok := probe("baseline", r.t.ProbeBaseline); ok {
		o.BaselineP99, o.ProbeCPUPerRequest = p99, perReq
		rss.setPhase("overload")
		m, _ = r.measure(ctx, srv, "overload", oc, dir)
		if m.res != nil && ctx.Err() == nil {
			o.ServerCPU = m.span.cpu()
			o.ServerCPUPerRequest = m.perRequest()
			rss.setPhase("recovery")
			// Probes until the first normal one: the recovery rule reads
			// no further (verdict.Judge), and each later probe would
			// only lengthen the step.
			for i := 1; i <= r.t.RecoverProbes; i++ {
				p99, _, ok := probe(fmt.Sprintf("recover-%d", i), r.t.ProbeLength)
				if !ok {
					break
				}
				o.RecoveryP99 = append(o.RecoveryP99, p99)
				if verdict.Normal(ms(o.BaselineP99), ms(p99)) {
					break
				}
			}
		}
	}
	o.RSS = rss.finish()

	// How the server ended the step: still answering, then SIGTERM.
	readyCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	o.Alive = harness.WaitReady(readyCtx, srv.URL) == nil
	cancel()
	dead := r.died(ctx, srv, "overload")
	stopErr := srv.Stop(stopTimeout)
	o.ExitCode = srv.ExitCode()
	logTail := srv.LogTail(200)
	o.Panicked = verdict.LogHasPanic(logTail)
	if ctx.Err() != nil {
		srv.Cleanup() // Ctrl-C: the step is incomplete and not judged
		return nil, false
	}
	if stopErr != nil && !dead {
		r.fail(wl, v.Name, "overload", "kvserver did not stop cleanly: "+stopErr.Error(), srv.LogTail(20))
	}
	res := m.res
	if res == nil {
		return nil, false
	}
	lc := r.checkLoader(srv, "overload", m, "")
	o.LoaderKeptUp = lc.KeptUp
	o.Planned, o.Sent, o.Achieved = res.Planned, res.Sent, res.AchievedRate()
	o.ConnsStart, o.ConnsPeak, o.InFlightPeak = res.ConnsStart, res.ConnsPeak, res.InFlightPeak
	bin := filepath.Join(dir, record.ResultsFile)
	if a, err := readAnswers(bin, res.Start, res.Config.Rate); err != nil {
		r.fail(wl, v.Name, "overload", err.Error(), "")
	} else {
		addAnswers(o, a, res)
		// results.bin has served its purpose and is by far the largest file.
		os.Remove(bin)
	}
	judged := judgeOverload(o, v.Variant, report.Summarize(res, nil), dead, logTail)
	o.Verdict = judged.String()
	r.logf("%s %s: goodput %.0f/s, served p99 %v, shed %.1f%%, %s", wl, v.Name, o.Goodput, o.ServedP99, o.ShedPct, o.Verdict)
	return o, judged.Failed()
}

// fullLoadCost is kvserver's CPU per request over one closed-loop round
// on srv (result.OverloadRun.FullLoadCPUPerRequest; 0 where it shed,
// failed or did not run), followed by a cooldown for the next probe.
func (r *step) fullLoadCost(ctx context.Context, srv *instance, cfg config.Config, dir string) time.Duration {
	if r.t.Closed <= 0 {
		return 0
	}
	m, ok := r.measure(ctx, srv, "overload (full-load round)", cfg, dir)
	if !ok || m.res.ErrorCount > 0 || m.perRequest() <= 0 {
		return 0
	}
	pause(ctx, r.t.SatCooldown)
	return m.perRequest()
}

func addAnswers(o *result.OverloadRun, a *answers, res *record.Result) {
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

// judgeOverload applies the overload rules to o, setting its RSS summary.
func judgeOverload(o *result.OverloadRun, v plan.Variant, sum report.Summary, dead bool, logTail string) verdict.Verdict {
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
	})
}

// rssSampler reads a server's RSS once a second, each sample labelled
// with the phase of the step it fell in.
type rssSampler struct {
	srv    *harness.Server
	began  time.Time
	phase  atomic.Value      // string
	points []result.RSSPoint // written by the sampling goroutine until done
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
			s.points = append(s.points, result.RSSPoint{Second: time.Since(s.began).Seconds(), Phase: s.phase.Load().(string), RSS: p.RSSBytes})
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
func (s *rssSampler) finish() []result.RSSPoint {
	close(s.stop)
	<-s.done
	return s.points
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
