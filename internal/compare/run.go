// Package compare runs the course's experiments in one command: kvserver
// with each pool (and policy, capacity, worker count) on a fresh copy of a
// filled store, a saturation search, a fixed-rate step at 70 % of direct's
// saturation, an overload step that reaches the server's queue, profiles
// per pool diffed against direct's, charts, and a REPORT.md whose findings
// come from the run's own numbers.
//
// It drives kvserver as a user would, through internal/harness (a process
// on a loopback port) and internal/loadgen (HTTP load); it never imports
// the server's packages.
package compare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/loadgen"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
)

// fixedShare is the fixed-rate step's share of direct's saturation.
const fixedShare = 0.7

// probeShare is the probes' share of direct's saturation around an
// overload step: below saturation, so that "normal" is stable.
const probeShare = 0.5

// refRate is the saturation v's fixed-rate step, profile run and probes
// take their share of: direct's (wr.BaseRate), or under plan.OwnRates v's
// own median saturation where its searches found one.
func refRate(p *plan, wr *WorkloadResult, v *VariantResult) float64 {
	if p != nil && p.OwnRates {
		if own := median(v.SatRates()); own > 0 {
			return own
		}
	}
	return wr.BaseRate
}

// refName names the rate refRate takes shares of, for the report.
func refName(p *plan) string {
	if p != nil && p.OwnRates {
		return "each variant's own saturation"
	}
	return "direct's saturation"
}

// stopTimeout bounds kvserver's graceful stop.
const stopTimeout = 30 * time.Second

// runner carries one comparison's state.
type runner struct {
	o   Options
	t   Timing
	p   *plan
	c   *Comparison
	log io.Writer
	// pl is where kvserver and the loader run; online how many CPUs the
	// machine has (a shared server's CPU share is of all of them).
	pl     Placement
	online int
	// loaded is set while other processes keep the machine busy.
	loaded bool
	// look measures other processes' busy cores (nil: busyCores).
	look func(context.Context, time.Duration) (float64, error)
	// tmp holds the filled stores; removed at the end.
	tmp    string
	stores map[string]string
}

// Run runs o's preset and writes its report. It returns the comparison
// with the report written, also when ctx was cancelled part way (then
// Interrupted is set and the report holds what finished) and when steps
// failed (listed in Failures). An error means the comparison could not
// begin (bad options, no kvserver binary, no folder for the report) or the
// report could not be written.
func Run(ctx context.Context, o Options) (*Comparison, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	pl, err := o.placement()
	if err != nil {
		return nil, err
	}
	p, err := newPlan(&o, pl.serverSize())
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(o.Kvserver); err != nil {
		return nil, fmt.Errorf("-kvserver %s: %w; build it with `make build`", o.Kvserver, err)
	}
	r := &runner{o: o, t: o.StepTiming(), p: p, log: o.Log, stores: map[string]string{}, pl: pl, online: onlineCPUs()}
	if r.log == nil {
		r.log = io.Discard
	}
	env := readEnvironment(pl)
	dir := filepath.Join(o.Out, fmt.Sprintf("compare-%s-%s", env.Started.Format("20060102T150405Z"), o.Preset))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the report's folder: %w", err)
	}
	r.c = &Comparison{Preset: o.Preset, Options: o, Env: env, Dir: dir, plan: p}
	// compare.json keeps the step lengths as run, so that a report written
	// again later says what ran, whatever the defaults have become.
	r.c.Options.Timing = &r.t
	r.tmp, err = os.MkdirTemp("", "kvpool-compare-")
	if err != nil {
		return nil, fmt.Errorf("cannot create a folder for the filled store: %w", err)
	}
	defer os.RemoveAll(r.tmp)

	r.logf("compare %s: %d variants × %d workloads; %s; report in %s", o.Preset, len(p.Variants), len(p.Workloads), placementText(env), dir)
	r.runAll(ctx)
	if ctx.Err() != nil {
		r.c.Interrupted = true
	}
	// Whatever happened, the report gets written, with a context that
	// Ctrl-C no longer cancels.
	wctx := context.WithoutCancel(ctx)
	r.c.Env.LoadEnd = loadAvgText()
	r.c.Env.Finished = time.Now().UTC()
	r.diffProfiles(wctx)
	r.drawCharts()
	if err := writeReport(r.c); err != nil {
		return r.c, err
	}
	r.logf("report: %s", filepath.Join(dir, ReportFile))
	return r.c, nil
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(r.log, "%s %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (r *runner) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	r.c.Notes = append(r.c.Notes, n)
	r.logf("note: %s", n)
}

// runAll runs every workload's steps until done or ctx is cancelled.
func (r *runner) runAll(ctx context.Context) {
	for i, w := range r.p.Workloads {
		wr := &WorkloadResult{Workload: w}
		for _, v := range r.p.Variants {
			wr.Variants = append(wr.Variants, &VariantResult{Variant: v, Name: v.Name()})
		}
		r.c.Workloads = append(r.c.Workloads, wr)
		seed, err := r.store(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			r.c.Failures = append(r.c.Failures, Failure{Workload: w, Step: "fill", Reason: err.Error()})
			return
		}
		r.saturation(ctx, wr, seed)
		if ctx.Err() != nil {
			return
		}
		if !r.p.Fixed && !r.p.Overload {
			continue
		}
		if wr.BaseRate <= 0 {
			r.c.Failures = append(r.c.Failures, Failure{Workload: w, Step: "fixed and overload",
				Reason: "direct's saturation search found no sustainable rate, so there is no rate to set these steps by (see the failures above, or give -rate)"})
			continue
		}
		r.steps(ctx, wr, seed)
		if ctx.Err() != nil {
			return
		}
		if r.p.Profiles && i == 0 {
			r.profiles(ctx, wr, seed)
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// start starts kvserver for v (with extra flags) on a fresh copy of seed,
// its output in runDir/kvserver.log. A nil server comes with the failure
// already recorded.
func (r *runner) start(ctx context.Context, wl string, v *VariantResult, step, seed, runDir string, extra ...string) *harness.Server {
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		r.fail(wl, v.Name, step, err.Error(), "")
		return nil
	}
	logf, err := os.Create(filepath.Join(runDir, "kvserver.log"))
	if err != nil {
		r.fail(wl, v.Name, step, err.Error(), "")
		return nil
	}
	o := harness.Options{
		Binary: r.o.Kvserver, Args: append(v.Variant.Args(), extra...),
		SeedDir: seed, Log: logf, CPUs: r.serverSet(v.Variant),
	}
	srv, err := harness.Start(ctx, o)
	if err != nil {
		logf.Close()
		if ctx.Err() == nil {
			tail := ""
			var se *harness.StartError
			if errors.As(err, &se) {
				tail = se.LogTail
			}
			r.fail(wl, v.Name, step, "kvserver did not start: "+err.Error(), tail)
		}
		return nil
	}
	if v.Config == nil {
		if info, err := srv.ConfigInfo(ctx); err == nil {
			v.Config = info
			if r.c.Env.KvserverVersion == "" {
				r.c.Env.KvserverVersion = info["version"]
			}
		}
	}
	go func() { <-srv.Exited(); logf.Close() }()
	r.settle(ctx, srv, fmt.Sprintf("%s %s %s", wl, v.Name, step), settleStart)
	if r.o.onStart != nil {
		r.o.onStart(step, v.Variant, srv)
	}
	return srv
}

// stop stops srv, recording an unclean stop as a failure of step. After
// Ctrl-C nothing is recorded: the terminal's SIGINT reached kvserver too,
// which may have stopped by itself.
func (r *runner) stop(ctx context.Context, srv *harness.Server, wl, variant, step string) error {
	select {
	case <-srv.Exited(): // died mid-step: already recorded as such
		return srv.Cleanup()
	default:
	}
	err := srv.Stop(stopTimeout)
	if ctx.Err() != nil {
		srv.Cleanup()
		return nil
	}
	if err != nil {
		r.fail(wl, variant, step, "kvserver did not stop cleanly: "+err.Error(), srv.LogTail(20))
	}
	return err
}

// died says, if srv has exited on its own, that it did and with which
// code. After Ctrl-C an exit is expected and not reported.
func died(ctx context.Context, srv *harness.Server) (string, bool) {
	if ctx.Err() != nil {
		return "", false
	}
	select {
	case <-srv.Exited():
		return fmt.Sprintf("kvserver exited mid-step with code %d", srv.ExitCode()), true
	default:
		return "", false
	}
}

func (r *runner) fail(wl, variant, step, reason, tail string) {
	r.c.Failures = append(r.c.Failures, Failure{Workload: wl, Variant: variant, Step: step, Reason: reason, LogTail: tail})
	r.logf("FAILED %s %s %s: %s", wl, variant, step, reason)
}

// quiet waits before a step, up to -quiet-wait, while other processes
// keep the cores busy, noting it. Once quiet failed to come, later steps
// only look (no wait) until the machine is quiet again: waiting a minute
// before every step of a busy machine would only make the run longer.
func (r *runner) quiet(ctx context.Context, what string) {
	if r.o.QuietWait <= 0 {
		return
	}
	limit := r.o.QuietWait
	if r.loaded {
		limit = 0
	}
	look := r.look
	if look == nil {
		look = busyCores
	}
	first, last, quiet := waitQuiet(ctx, limit, look)
	switch {
	case ctx.Err() != nil:
	case quiet && first > busyThreshold:
		r.note("before %s: other processes kept %.1f cores busy; it waited until they kept %.1f", what, first, last)
		r.loaded = false
	case quiet:
		r.loaded = false
	case !r.loaded:
		r.note("before %s: other processes kept %.1f cores busy and no quiet came within %v; this and later steps share the CPU (each noted)", what, last, limit)
		r.loaded = true
	default:
		r.note("before %s: still %.1f cores busy with other processes", what, last)
	}
}

// slug makes a workload name safe for a folder.
func slug(s string) string { return strings.NewReplacer(":", "", "/", "-", " ", "-").Replace(s) }

// runDir is the folder of one step's run, and its path relative to the
// report.
func (r *runner) runDir(wl string, v *VariantResult, step string) (abs, rel string) {
	rel = filepath.Join("runs", slug(wl), v.Variant.Slug(), step)
	return filepath.Join(r.c.Dir, rel), rel
}

// serverSet is the CPU set v's kvserver starts on: the server's set, or
// under the scaling preset its first v.CPUs CPUs (of the affinity set
// where the two share); empty: not pinned.
func (r *runner) serverSet(v Variant) cpuset.Set {
	set := r.pl.Server
	if v.CPUs > 0 {
		if set.IsEmpty() {
			set = r.pl.Affinity
		}
		return set.First(v.CPUs)
	}
	return set
}

// serverCPUs is how many CPUs srv may run on: its set's size, or every
// online CPU where it is not pinned. A share of them is its CPU share.
func (r *runner) serverCPUs(srv *harness.Server) int {
	if n := srv.CPUs.Len(); n > 0 {
		return n
	}
	return r.online
}

// onlineCPUs is how many CPUs this machine has online.
func onlineCPUs() int {
	if s, err := cpuset.Online(); err == nil && s.Len() > 0 {
		return s.Len()
	}
	return runtime.NumCPU()
}

// serverSpan is kvserver's CPU time read before and after a step.
type serverSpan struct {
	before, after harness.ProcSample
	cpus          int
	ok            bool
}

// span pairs before, srv's CPU time read (with beforeErr) just before a
// step, with a reading taken now, just after it.
func (r *runner) span(srv *harness.Server, before harness.ProcSample, beforeErr error) serverSpan {
	after, err := srv.Sample()
	return serverSpan{before: before, after: after, cpus: r.serverCPUs(srv), ok: beforeErr == nil && err == nil && after.CPU >= before.CPU}
}

// cpu is the server's CPU time over the span (0 when unknown).
func (s serverSpan) cpu() time.Duration {
	if !s.ok {
		return 0
	}
	return s.after.CPU - s.before.CPU
}

// share is the server's CPU over the span as a share of its CPUs
// (negative: unknown).
func (s serverSpan) share() float64 {
	wall := s.after.At.Sub(s.before.At)
	if !s.ok || wall <= 0 || s.cpus < 1 {
		return -1
	}
	return s.cpu().Seconds() / (wall.Seconds() * float64(s.cpus))
}

// loaderShare is the loader's CPU over res as a share of its CPUs
// (negative: unknown).
func loaderShare(res *loadgen.Result) float64 {
	cpu := res.CPU.Total()
	if cpu <= 0 || res.Elapsed <= 0 || res.LoaderCPUs < 1 {
		return -1
	}
	return cpu.Seconds() / (res.Elapsed.Seconds() * float64(res.LoaderCPUs))
}

// sawLoader notes, for the environment table, how many loops the loader
// ran and why it could not pin itself where it was asked to.
func (r *runner) sawLoader(res *loadgen.Result) {
	r.c.Env.LoaderLoops = max(r.c.Env.LoaderLoops, res.Loops)
	if !res.Config.CPUs.IsEmpty() && !res.Pinned && r.c.Env.LoaderUnpinned == "" {
		r.c.Env.LoaderUnpinned = res.Unpinned
		r.note("the loader could not pin itself to CPUs %s and ran unpinned: %s", res.Config.CPUs, res.Unpinned)
	}
}

// newLoaderCheck is what res says of the loader in one step; the
// server's share and the bound are the caller's to fill in.
func (r *runner) newLoaderCheck(wl, variant, step string, res *loadgen.Result) LoaderCheck {
	r.sawLoader(res)
	asked := res.Config.Rate
	lc := LoaderCheck{Workload: wl, Variant: variant, Step: step, Asked: asked, SendRate: res.SendRate(),
		CPUPerRequest: res.CPUPerRequest(), LoaderShare: loaderShare(res), LoaderCPUs: res.LoaderCPUs, ServerShare: -1}
	if res.SendLag != nil {
		lc.LagP99 = time.Duration(res.SendLag.ValueAtPercentile(99)) * time.Microsecond
	}
	if res.Elapsed > 0 {
		lc.CPUShare = res.CPU.Total().Seconds() / res.Elapsed.Seconds()
	}
	lc.KeptUp = asked > 0 && lc.SendRate >= 0.99*asked && res.Unsent() == 0
	return lc
}

// checkLoader records whether the loader kept up with res's asked rate
// in a fixed-rate or overload step, and whether a shortfall was its own
// (saturate.Bound, the rule of the saturation searches): the step fell
// short with the loader at 90 % or more of its CPUs, or fell behind while
// kvserver stayed under 90 % of its own. Falling behind counts as the
// loader's only while it had connections to spare (ConnsPeak below
// MaxConns): with every connection it may open held by the server, the
// sends waited on the server. It returns the record.
func (r *runner) checkLoader(wl, variant, step string, res *loadgen.Result, srv serverSpan) LoaderCheck {
	lc := r.newLoaderCheck(wl, variant, step, res)
	lc.ServerShare, lc.ServerCPUs = srv.share(), srv.cpus
	lc.LoaderBound, lc.Why = saturate.Bound(saturate.Evidence{
		Pass: lc.KeptUp, FellBehind: !lc.KeptUp && res.ConnsPeak < res.Config.MaxConns,
		LoaderCPUShare: lc.LoaderShare, LoaderCPUs: lc.LoaderCPUs,
		ServerCPUShare: lc.ServerShare, ServerCPUs: lc.ServerCPUs, Shared: r.pl.Shared(),
	})
	if !lc.LoaderBound {
		lc.Why = ""
	}
	r.c.Loader = append(r.c.Loader, lc)
	return lc
}

// checkValidation records the loader's check of a search's validating
// run, its server share and bound as the search judged them.
func (r *runner) checkValidation(wl, variant, step string, res *loadgen.Result, s *saturate.Step) {
	lc := r.newLoaderCheck(wl, variant, step, res)
	if s != nil {
		lc.ServerShare, lc.ServerCPUs = s.ServerCPUShare, s.ServerCPUs
		lc.LoaderBound, lc.Why = s.LoaderBound, s.BoundWhy
		if !lc.LoaderBound {
			lc.Why = ""
		}
	}
	r.c.Loader = append(r.c.Loader, lc)
}
