package compare

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/loadgen/engine"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// stopTimeout bounds kvserver's graceful stop.
const stopTimeout = 30 * time.Second

// settleFill and settleStart are the waits for an idle kvserver: after the
// fill, Pebble compacts a gigabyte; after a start on a copy of the settled
// store there is nothing left to compact, and the short wait, paid at
// every start, only catches the exception.
var (
	settleFill  = settleRule{windows: harness.IdleWindows, within: 10 * time.Minute}
	settleStart = settleRule{windows: harness.SettledWindows, within: time.Minute}
)

// settleRule is how long a kvserver must stay idle (windows of
// harness.IdleWindow in a row) and the most the wait may take.
type settleRule struct {
	windows int
	within  time.Duration
}

// instance is one kvserver started for a variant's steps.
type instance struct {
	*harness.Server
	wl  string
	mix workload.Mix // wl's
	v   *result.VariantResult
	// deathRecorded: that it exited mid-step is among the failures.
	deathRecorded bool
}

// quiet waits before a step, up to -quiet-wait, while other processes
// keep the cores busy (quietCheck), noting it.
func (r *step) quiet(ctx context.Context, what string) {
	if n := r.quietness.before(ctx, what); n != "" {
		r.note("%s", n)
	}
}

// start starts kvserver for v (with extra flags) on a fresh copy of seed,
// its output in runDir/kvserver.log, and warms it (warm) for the steps
// that measure it. A nil server comes with the failure already recorded.
func (r *step) start(ctx context.Context, wl string, v *result.VariantResult, step, seed, runDir string, extra ...string) *instance {
	srv := r.startCold(ctx, wl, v, step, seed, runDir, extra...)
	if srv != nil {
		r.warm(ctx, srv, step)
	}
	return srv
}

// warm serves srv an unmeasured closed loop of GETs for Timing.WarmUp, so
// that the step after it finds the block cache filled (GETs whatever the
// workload: they change nothing). A failed warm-up is only noted.
func (r *step) warm(ctx context.Context, srv *instance, step string) {
	if r.t.WarmUp <= 0 {
		return
	}
	cfg := r.loadConfig(srv)
	cfg.Workload.Mix = workload.Get
	cfg.Rate, cfg.Duration = 0, r.t.WarmUp
	cfg.Conns, cfg.MaxConns = plan.MinConns, plan.MinConns
	if _, err := engine.Run(ctx, cfg, nil); err != nil && ctx.Err() == nil {
		r.note("%s %s %s: the warm-up failed (%v); measured without one", srv.wl, srv.v.Name, step, err)
	}
}

// startCold is start without the warm-up.
func (r *step) startCold(ctx context.Context, wl string, v *result.VariantResult, step, seed, runDir string, extra ...string) *instance {
	srv := r.launch(ctx, wl, v, step, seed, runDir, extra...)
	if srv != nil {
		r.settled(ctx, step, srv)
	}
	return srv
}

// launch starts kvserver for v as startCold does, without waiting for
// it to idle; a workload wl that does not parse is recorded as its failure.
func (r *step) launch(ctx context.Context, wl string, v *result.VariantResult, step, seed, runDir string, extra ...string) *instance {
	var logf *os.File
	mix, err := workload.ParseMix(wl)
	if err == nil {
		err = os.MkdirAll(runDir, 0o755)
	}
	if err == nil {
		logf, err = os.Create(filepath.Join(runDir, "kvserver.log"))
	}
	if err != nil {
		r.fail(wl, v.Name, step, err.Error(), "")
		return nil
	}
	o := harness.Options{
		Binary: r.o.Kvserver, Args: append(v.Variant.Args(), extra...),
		SeedDir: seed, Log: logf, CPUs: r.pl.serverSet(v.Variant),
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
			if r.out.version == "" {
				r.out.version = info["version"]
			}
		}
	}
	go func() { <-srv.Exited(); logf.Close() }()
	return &instance{Server: srv, wl: wl, mix: mix, v: v}
}

// settled waits until every one of srvs, just launched for step, is idle
// (settleStart), all at once: the wait is a second of the machine doing
// nothing, and servers started side by side can share it. Then it shows
// each to onStart.
func (r *step) settled(ctx context.Context, step string, srvs ...*instance) {
	type idle struct {
		waited time.Duration
		err    error
	}
	waits := make([]idle, len(srvs))
	var wg sync.WaitGroup
	for i, srv := range srvs {
		wg.Go(func() {
			waits[i].waited, waits[i].err = srv.WaitIdle(ctx, settleStart.windows, settleStart.within)
		})
	}
	wg.Wait()
	for i, srv := range srvs {
		r.noteIdle(ctx, fmt.Sprintf("%s %s %s", srv.wl, srv.v.Name, step), waits[i].waited, waits[i].err)
		if r.onStart != nil {
			r.onStart(step, srv.v.Variant, srv.Server)
		}
	}
}

// stop stops srv, recording an unclean stop as a failure of step. After
// Ctrl-C nothing is recorded: the step is incomplete, not failed.
func (r *step) stop(ctx context.Context, srv *instance, step string) error {
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
		r.fail(srv.wl, srv.v.Name, step, "kvserver did not stop cleanly: "+err.Error(), srv.LogTail(20))
	}
	return err
}

// exited says, if srv has exited on its own, that it did and with which
// code. After Ctrl-C an exit is expected and not reported.
func exited(ctx context.Context, srv *harness.Server) (string, bool) {
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

// died tells whether srv has exited on its own, recording it, once per
// server, as a failure of step with the end of its log.
func (r *step) died(ctx context.Context, srv *instance, step string) bool {
	why, dead := exited(ctx, srv.Server)
	if dead && !srv.deathRecorded {
		srv.deathRecorded = true
		r.fail(srv.wl, srv.v.Name, step, why, srv.LogTail(20))
	}
	return dead
}

// settle waits until srv is idle, so that no step pays for its
// compactions; the report notes a server that never idled.
func (r *step) settle(ctx context.Context, srv *harness.Server, what string, rule settleRule) {
	waited, err := srv.WaitIdle(ctx, rule.windows, rule.within)
	r.noteIdle(ctx, what, waited, err)
}

// noteIdle notes a wait for an idle server that failed, and logs one that
// took long.
func (r *step) noteIdle(ctx context.Context, what string, waited time.Duration, err error) {
	switch {
	case ctx.Err() != nil:
	case err != nil:
		r.note("%s: %v; measured anyway", what, err)
	case waited > 5*time.Second:
		r.logf("%s: kvserver idle after %v", what, waited.Round(time.Second))
	}
}
