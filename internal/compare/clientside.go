package compare

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/render"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/loadgen/client"
)

// What the client side's cost is measured with, before the storms: a
// second of attempts at calibrationRate, low enough for any kvserver to
// answer at once and for the loader to send on time on one CPU, on a
// direct kvserver over the filled store, then on one whose store
// stand-in holds every read for muteDelay (longer than any client
// waits). There each attempt gives up after calibrationTimeout, closes
// its connection and is retried once on a new one: the timeout, the
// reconnect and the resend a storm is made of.
const (
	calibrationRate    = 2000
	calibrationLength  = time.Second
	calibrationTimeout = 200 * time.Millisecond
	muteDelay          = time.Minute
)

// measureClientSide measures what one attempt costs the loader on its
// CPUs (result.ClientSide), with the most attempts per first try of each
// of models; nil where a server would not start or a run failed (noted:
// the storms are judged interval by interval all the same).
func (r *runner) measureClientSide(ctx context.Context, wl, seed string, models map[string]client.Model) *result.ClientSide {
	cs := &result.ClientSide{MostAttempts: map[string]float64{}}
	for name, m := range models {
		cs.MostAttempts[name] = m.MostAttempts()
	}
	answered, ok := r.calibrate(ctx, wl, seed, "answered", nil, client.Model{})
	if !ok {
		return nil
	}
	retryOnce := client.Model{Timeout: calibrationTimeout, Retries: 1, RetryOn: client.RetryOn{Timeout: true}, Backoff: client.BackoffNone}
	timedOut, ok := r.calibrate(ctx, wl, seed, "never-answered", []string{"-io-delay", muteDelay.String()}, retryOnce)
	if !ok {
		return nil
	}
	cs.LoaderCPUs = answered.res.LoaderCPUs
	cs.Answered, cs.AnsweredAttempts, cs.ServerAnswered = answered.res.CPUPerRequest(), answered.res.Sent, answered.perRequest()
	cs.TimedOut, cs.TimedOutAttempts, cs.ServerTimedOut = timedOut.res.CPUPerRequest(), timedOut.res.Sent, timedOut.perRequest()
	return cs
}

// calibrate is one calibration run: a direct kvserver (with extra flags)
// on the server's CPUs, the loader with client model cm on its own.
func (r *runner) calibrate(ctx context.Context, wl, seed, name string, extra []string, cm client.Model) (stepRun, bool) {
	step := "client-side " + name
	vr := &result.VariantResult{Variant: plan.Variant{Pool: plan.Baseline}, Name: plan.Baseline}
	dir := filepath.Join(r.c.Dir, "runs", "metastable", "client-side", name)
	srv := r.startCold(ctx, wl, vr, step, seed, dir, extra...)
	if srv == nil {
		return stepRun{}, false
	}
	// A server that never answers does not stop gracefully: its reads
	// sleep for a minute. It is killed; the other is stopped.
	defer func() {
		if extra != nil {
			srv.Kill()
			srv.Cleanup()
			return
		}
		r.stop(ctx, srv, step)
	}()
	cfg, err := r.loadConfig(srv.URL, wl)
	if err != nil {
		r.fail(wl, vr.Name, step, err.Error(), "")
		return stepRun{}, false
	}
	cfg.Rate, cfg.Duration, cfg.Client = calibrationRate, calibrationLength, cm
	cfg.Conns, cfg.MaxConns = plan.MinConns, r.o.MaxConns
	cfg.GrowAfter, cfg.Timeout = time.Millisecond, r.t.RequestTimeout
	m, ok := r.measure(ctx, srv, step, cfg, dir)
	return m, ok && m.res.Sent > 0
}

// logClientSide says, before the storms, which client models' worst
// second the loader can hold, and for those it cannot what would let it.
func (r *runner) logClientSide(cs *result.ClientSide, models []string, spike float64, slots int) {
	if cs == nil {
		r.note("the client side's cost was not measured: each storm is judged by its loader's CPU interval by interval only")
		return
	}
	r.logf("client side: %v of loader CPU per answered attempt, %v per attempt that timed out and reconnected, on %d loader CPUs (kvserver: %v and %v)",
		cs.Answered.Round(100*time.Nanosecond), cs.TimedOut.Round(100*time.Nanosecond), cs.LoaderCPUs,
		cs.ServerAnswered.Round(100*time.Nanosecond), cs.ServerTimedOut.Round(100*time.Nanosecond))
	var over []string
	for _, f := range analysis.ClientFits(cs, models, spike, slots) {
		if f.Fits {
			r.logf("  %s: its worst second (%.0f attempts/s) takes %.0f %% of the loader's CPUs: fits", f.Model, f.Attempts, 100*f.Share)
			continue
		}
		r.logf("  %s: its worst second (%.0f attempts/s) takes %.0f %% of the loader's CPUs, over %.0f %%: %s",
			f.Model, f.Attempts, 100*f.Share, 100*plan.MetaClientShare, render.FitAdvice(f))
		over = append(over, f.Model)
	}
	if len(over) > 0 {
		r.note("the loader cannot hold the worst second of %s: their runs are judged only where their storm stayed within the loader's room, interval by interval (see the client-side table)",
			strings.Join(over, ", "))
	}
}
