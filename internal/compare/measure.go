package compare

import (
	"context"
	"time"

	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/engine"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/report"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
)

// stepRun is one loader run on a server, with kvserver's CPU over it.
type stepRun struct {
	res  *record.Result // nil where the run could not be made
	span serverSpan
}

// measure runs cfg against srv with its files in dir, reading kvserver's
// CPU just before and after (every step but the searches). ok is false
// where ctx was cancelled, kvserver died or the run failed (each but the
// first recorded); a run kvserver died in still returns its result.
func (r *step) measure(ctx context.Context, srv *instance, step string, cfg config.Config, dir string) (stepRun, bool) {
	before, berr := srv.Sample()
	res, note, err := runInto(ctx, cfg, dir, srv.v.Config)
	m := stepRun{res: res, span: r.span(srv.Server, before, berr)}
	switch {
	case ctx.Err() != nil, r.died(ctx, srv, step):
		return m, false
	case err != nil:
		r.fail(srv.wl, srv.v.Name, step, err.Error(), srv.LogTail(10))
		return m, false
	}
	if note != "" {
		r.note("%s %s: %s", step, srv.v.Name, note)
	}
	return m, true
}

// runInto runs cfg with its files in dir; a file it could not write is
// returned as note, and the run stands.
func runInto(ctx context.Context, cfg config.Config, dir string, settings map[string]string) (res *record.Result, note string, err error) {
	cfg.Out = dir
	res, err = engine.Run(ctx, cfg, nil)
	if err != nil {
		return nil, "", err
	}
	if res.OutputErr != nil {
		note = res.OutputErr.Error()
	}
	if werr := report.WriteFiles(dir, res, settings); werr != nil {
		note = werr.Error()
	}
	return res, note, nil
}

// perRequest is kvserver's CPU over m per request sent (0: unknown).
func (m stepRun) perRequest() time.Duration {
	if m.res == nil || m.res.Sent == 0 || !m.span.ok {
		return 0
	}
	return m.span.cpu() / time.Duration(m.res.Sent)
}

// serverSpan is kvserver's CPU time read before and after a step.
type serverSpan struct {
	before, after harness.ProcSample
	cpus          int
	ok            bool
}

// span pairs before, srv's CPU read just before a step, with one now.
func (r *runner) span(srv *harness.Server, before harness.ProcSample, beforeErr error) serverSpan {
	after, err := srv.Sample()
	return serverSpan{before: before, after: after, cpus: r.serverCPUs(srv), ok: beforeErr == nil && err == nil && after.CPU >= before.CPU}
}

// serverCPUs is how many CPUs srv may run on: its set's, or all online.
func (r *runner) serverCPUs(srv *harness.Server) int {
	if n := srv.CPUs.Len(); n > 0 {
		return n
	}
	return r.online
}

// cpu is the server's CPU time over the span (0 when unknown).
func (s serverSpan) cpu() time.Duration {
	if !s.ok {
		return 0
	}
	return s.after.CPU - s.before.CPU
}

// use is the server's CPU use over the span.
func (s serverSpan) use() cpuset.Use {
	if !s.ok {
		return cpuset.Use{Share: -1, CPUs: s.cpus}
	}
	return cpuset.UseOf(s.cpu(), s.after.At.Sub(s.before.At), s.cpus)
}

// sawLoader keeps the loader's loops and pinning for the environment.
func (r *step) sawLoader(res *record.Result) {
	r.out.loops = max(r.out.loops, res.Loops)
	if !res.Config.CPUs.IsEmpty() && !res.Pinned && r.out.unpinned == "" {
		r.out.unpinned, r.out.unpinnedCPUs = res.Unpinned, res.Config.CPUs.String()
	}
}

// newLoaderCheck is what res says of the loader in one step; the
// server's share and the bound are the caller's to fill in.
func (r *step) newLoaderCheck(wl, variant, step string, res *record.Result) result.LoaderCheck {
	r.sawLoader(res)
	asked := res.Config.AskedRate() // the schedule's mean rate, a spike included
	sent, unsent := scheduleSent(res)
	lc := result.LoaderCheck{Workload: wl, Variant: variant, Step: step, Asked: asked, SendRate: sent,
		CPUPerRequest: res.CPUPerRequest(), Loader: res.LoaderUse(), Server: cpuset.Unknown}
	if res.SendLag != nil {
		lc.LagP99 = time.Duration(res.SendLag.ValueAtPercentile(99)) * time.Microsecond
	}
	if res.Elapsed > 0 {
		lc.CPUShare = res.CPU.Total().Seconds() / res.Elapsed.Seconds()
	}
	lc.KeptUp = asked > 0 && lc.SendRate >= 0.99*asked && unsent == 0
	lc.Scheduled = !res.Config.Spike.IsZero() || !res.Config.Client.IsZero()
	return lc
}

// scheduleSent is how fast the loader sent what res's schedule asked and
// how many it never sent; under a client model the schedule is of first
// tries only (result.IssuedOnSchedule).
func scheduleSent(res *record.Result) (rate float64, unsent int64) {
	if res.Config.Client.IsZero() {
		return res.SendRate(), res.Unsent()
	}
	issued, unsent := result.IssuedOnSchedule(res.Clients.FirstTries, res.Clients.Throttled, int64(res.Planned))
	if d := res.Config.Duration; d > 0 {
		rate = float64(issued) / d.Seconds() // over the schedule: retries go on after it
	}
	return rate, unsent
}

// checkLoader records, and returns, whether the loader kept up with m's
// asked rate in a fixed-rate or overload step, and whether a shortfall
// was its own by the searches' rule (saturate.Bound). backlog, where not
// empty, says how the backlog of a step meant to be sustained (the fixed
// rate) grew: then it did not keep up however the loader sent. An
// overload step, asked for more than the server serves, passes "".
func (r *step) checkLoader(srv *instance, step string, m stepRun, backlog string) result.LoaderCheck {
	res := m.res
	lc := withBacklog(r.newLoaderCheck(srv.wl, srv.v.Name, step, res), backlog)
	lc.Server = m.span.use()
	ev := saturate.LoaderEvidence(res, saturate.LagTolerance(r.o.SLO))
	ev.Pass, ev.FellBehind, ev.Shared = lc.KeptUp, !lc.KeptUp, r.pl.Shared()
	ev.SetCPU(lc.Loader, lc.Server)
	lc.LoaderBound, lc.Why = boundWhy(saturate.Bound(&ev))
	r.out.loader = append(r.out.loader, lc)
	return lc
}

// withBacklog is lc judged by its backlog too: where the loader sent on
// schedule but the backlog grew (how), it did not keep up.
func withBacklog(lc result.LoaderCheck, backlog string) result.LoaderCheck {
	if lc.KeptUp {
		lc.BacklogGrew(backlog)
	}
	return lc
}

// checkValidation records the loader's check of a search's validating
// run as the search judged it (s: nothing unsent, the backlog level), so
// that the table agrees with the search.
func (r *step) checkValidation(wl, variant, step string, res *record.Result, s *saturate.Step) {
	lc := r.newLoaderCheck(wl, variant, step, res)
	if s != nil {
		lc.KeptUp = s.Unsent == 0
		lc.BacklogGrew(s.Backlog)
		lc.Server = s.Server()
		lc.LoaderBound, lc.Why = boundWhy(s.LoaderBound, s.BoundWhy)
	}
	r.out.loader = append(r.out.loader, lc)
}

// boundWhy is whether a run was loader-bound by saturate.Bound, and why
// where it was ("" where not: then Bound's why says why not).
func boundWhy(bound bool, why string) (bool, string) {
	if !bound {
		return false, ""
	}
	return true, why
}

// pause waits d, or until ctx is done: false then.
func pause(ctx context.Context, d time.Duration) bool { return waitUntil(ctx, time.Now().Add(d)) }

// waitUntil waits for the instant at (a scheduled start, not a wait for
// an event), false if ctx ended first.
func waitUntil(ctx context.Context, at time.Time) bool {
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
