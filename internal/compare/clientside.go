package compare

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/render"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/loadgen/client"
)

// What the client side's cost is measured with, before the storms: a
// second of attempts at calibrationRate on a direct kvserver over the
// filled store, then on one whose store stand-in holds every read for
// muteDelay (longer than any client waits). There each attempt gives up
// after calibrationTimeout, closes its connection and is retried once on
// a new one: the timeout, the reconnect and the resend a storm is made of.
const (
	calibrationLength  = time.Second
	calibrationTimeout = 50 * time.Millisecond
	muteDelay          = time.Minute
)

// calibrationRate is the calibration's rate in attempts: the worst
// second's, where the loader works as it will in the storm (an event
// loop's cost per attempt falls with its rate), bounded so that the
// never-answering run's open connections stay within half of maxConns.
func calibrationRate(worst float64, maxConns int) float64 {
	return max(2, min(worst, float64(maxConns)/2/calibrationTimeout.Seconds()))
}

// measureClientSide measures what one attempt costs the loader on its
// CPUs (result.ClientSide), with the most attempts per first try of each
// of models; nil where a server would not start or a run failed (noted:
// the storms are judged interval by interval all the same).
func (r *runner) measureClientSide(ctx context.Context, wl, seed string, spike float64, models map[string]client.Model) *result.ClientSide {
	cs := &result.ClientSide{MostAttempts: map[string]float64{}}
	for name, m := range models {
		cs.MostAttempts[name] = m.MostAttempts()
	}
	worst := 0.0
	for _, most := range cs.MostAttempts {
		worst = max(worst, spike*most)
	}
	rate := calibrationRate(worst, r.o.MaxConns)
	answered, ok := r.calibrate(ctx, wl, seed, rate, false, client.Model{})
	if !ok {
		return nil
	}
	retryOnce := client.Model{Timeout: calibrationTimeout, Retries: 1, RetryOn: client.RetryOn{Timeout: true}, Backoff: client.BackoffNone}
	timedOut, ok := r.calibrate(ctx, wl, seed, rate/2, true, retryOnce)
	if !ok {
		return nil
	}
	cs.Rate, cs.LoaderCPUs = rate, answered.res.LoaderCPUs
	cs.Answered, cs.AnsweredAttempts, cs.ServerAnswered = answered.res.CPUPerRequest(), answered.res.Sent, answered.perRequest()
	cs.TimedOut, cs.TimedOutAttempts, cs.ServerTimedOut = timedOut.res.CPUPerRequest(), timedOut.res.Sent, timedOut.perRequest()
	return cs
}

// calibrate is one calibration run: a direct kvserver on the server's
// CPUs, one that never answers where mute, and the loader with client
// model cm on its own.
func (r *runner) calibrate(ctx context.Context, wl, seed string, rate float64, mute bool, cm client.Model) (stepRun, bool) {
	name, extra := "answered", []string(nil)
	if mute {
		name, extra = "never-answered", []string{"-io-delay", muteDelay.String()}
	}
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
		if mute {
			srv.Kill()
			srv.Cleanup()
			return
		}
		r.stop(ctx, srv, step)
	}()
	cfg := r.loadConfig(srv)
	cfg.Rate, cfg.Duration, cfg.Client = rate, calibrationLength, cm
	// Answered at once, MinConns carry any rate; more would be dials no
	// storm of answered attempts pays. Timed-out attempts redial.
	cfg.Conns, cfg.MaxConns = plan.MinConns, plan.MinConns
	if mute {
		cfg.MaxConns = r.o.MaxConns
	}
	cfg.GrowAfter, cfg.Timeout = time.Millisecond, r.t.RequestTimeout
	m, ok := r.measure(ctx, srv, step, cfg, dir)
	return m, ok && m.res.Sent > 0
}

// unsendable says, before the storms, which client models' worst second
// the loader can hold, and for those it cannot what would let it; it
// returns the models whose spike the loader cannot even send (its first
// tries, answered at once, over its room): their runs are not made.
func (r *runner) unsendable(cs *result.ClientSide, models []string, spike float64, slots int) map[string]bool {
	if cs == nil {
		r.note("the client side's cost was not measured: each storm is judged by its loader's CPU interval by interval only")
		return nil
	}
	r.logf("client side: %v of loader CPU per answered attempt, %v per attempt that timed out and reconnected, on %d loader CPUs (kvserver: %v and %v)",
		cs.Answered.Round(100*time.Nanosecond), cs.TimedOut.Round(100*time.Nanosecond), cs.LoaderCPUs,
		cs.ServerAnswered.Round(100*time.Nanosecond), cs.ServerTimedOut.Round(100*time.Nanosecond))
	var over []string
	skip := map[string]bool{}
	for _, f := range analysis.ClientFits(cs, models, spike, slots) {
		r.logf("  %s: its worst second (%.0f attempts/s) takes %.0f %% of the loader's CPUs: %s", f.Model, f.Attempts, 100*f.Share, render.FitText(f))
		switch {
		case !f.Sendable:
			skip[f.Model] = true
		case !f.Fits:
			over = append(over, f.Model)
		}
	}
	if len(skip) > 0 {
		r.note("the loader cannot send the spike's first tries on its CPUs: no run of %s is made (see the client-side table)", strings.Join(slices.Sorted(maps.Keys(skip)), ", "))
	}
	if len(over) > 0 {
		r.note("the loader cannot hold the worst second of %s: their runs are judged only where their storm stayed within the loader's room, interval by interval (see the client-side table)",
			strings.Join(over, ", "))
	}
	return skip
}
