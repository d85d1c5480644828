package compare

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/plan"
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
func (r *step) measureClientSide(ctx context.Context, wl, seed string, spike float64, models map[string]client.Model) *result.ClientSide {
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
func (r *step) calibrate(ctx context.Context, wl, seed string, rate float64, mute bool, cm client.Model) (stepRun, bool) {
	name, extra := "answered", []string(nil)
	if mute {
		name, extra = "never-answered", []string{"-io-delay", muteDelay.String()}
	}
	step := "client-side " + name
	vr := &result.VariantResult{Variant: plan.Variant{Pool: plan.Baseline}, Name: plan.Baseline}
	dir := filepath.Join(r.dir, "runs", "metastable", "client-side", name)
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

// sizeStorms says, before the storms, which client models' worst second
// the loader can hold, and chooses the store each model's runs go in
// front of (m.Sizes): the plan's, unless the preset sizes
// storms (plan.Metastable.SizeStorms: no -store-slots) and a model's
// worst second does not fit the loader's room there; such a model gets
// the store analysis.StormSlots gives it, whose direct saturation is
// searched (its spike is then known, and a model that still does not fit
// goes down to a smaller store, to 1 slot at the least). A model whose
// spike the loader cannot even send in front of its store (its first
// tries alone, answered at once, over its room) is not run: none of its
// runs could be judged.
func (r *step) sizeStorms(ctx context.Context, wr *result.WorkloadResult, seed string, m *result.Metastable) {
	mp := r.p.Metastable
	cs := m.ClientSide
	first := result.MetaSize{Slots: mp.Slots(), Saturation: wr.BaseRate, BaseRate: m.BaseRate, SpikeRate: m.SpikeRate}
	fits := analysis.ClientFits(cs, mp.Models, m.SpikeRate, mp.Slots())
	if len(fits) == 0 {
		r.note("the client side's cost was not measured: each storm is judged by its loader's CPU interval by interval only")
		first.Models = slices.Clone(mp.Models)
		m.Sizes = []result.MetaSize{first}
		return
	}
	r.logf("client side: %v of loader CPU per answered attempt, %v per attempt that timed out and reconnected, on %d loader CPUs (kvserver: %v and %v)",
		cs.Answered.Round(100*time.Nanosecond), cs.TimedOut.Round(100*time.Nanosecond), cs.LoaderCPUs,
		cs.ServerAnswered.Round(100*time.Nanosecond), cs.ServerTimedOut.Round(100*time.Nanosecond))
	for _, f := range fits {
		r.logf("  %s: its worst second in front of %s (%.0f attempts/s) takes %.0f %% of the loader's CPUs: %s", f.Model, slotsText(mp.Slots()),
			f.Attempts, 100*f.Share, f.Text())
	}
	sizes := map[int]*result.MetaSize{mp.Slots(): &first}
	slotsOf := map[string]int{}
	for _, model := range mp.Models {
		slotsOf[model] = mp.Slots()
	}
	if mp.SizeStorms {
		slotsOf = analysis.StormStores(cs, mp.Models, m.SpikeRate, mp.Slots(), func(slots int) (float64, bool) {
			size := r.searchStore(ctx, wr, seed, slots)
			if size == nil {
				return 0, false
			}
			sizes[slots] = size
			return size.SpikeRate, true
		})
	}
	var unsendable, over []string
	for _, model := range mp.Models {
		n, ok := slotsOf[model]
		if !ok {
			continue // its store's search failed, recorded
		}
		size := sizes[n]
		fs := analysis.ClientFits(cs, []string{model}, size.SpikeRate, n)
		if len(fs) == 0 { // its client model did not resolve: its runs say why
			size.Models = append(size.Models, model)
			continue
		}
		f := fs[0]
		switch {
		case !f.Sendable:
			unsendable = append(unsendable, model)
			continue
		case !f.Fits:
			over = append(over, model)
		}
		size.Models = append(size.Models, model)
		if n != mp.Slots() {
			r.logf("  %s: runs in front of %s (%.0f GET/s, a %.0f/s spike): its worst second, %.0f attempts/s, takes %.0f %% of the loader's CPUs",
				model, slotsText(n), size.BaseRate, size.SpikeRate, f.Attempts, 100*f.Share)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(sizes)) {
		if size := sizes[n]; len(size.Models) > 0 || n == mp.Slots() {
			m.Sizes = append([]result.MetaSize{*size}, m.Sizes...) // the largest first: the plan's
		}
	}
	if len(unsendable) > 0 {
		r.note("the loader cannot send the spike's first tries on its CPUs: no run of %s is made (see the client-side table)", strings.Join(unsendable, ", "))
	}
	if len(over) > 0 {
		r.note("the loader cannot hold the worst second of %s: their runs are judged only where their storm stayed within the loader's room, interval by interval (see the client-side table)",
			strings.Join(over, ", "))
	}
}

// searchStore searches direct's saturation in front of a store stand-in
// of slots, for the runs of the client models sized to it: the store's
// MetaSize, or nil where no rate validated (recorded as a failure).
func (r *step) searchStore(ctx context.Context, wr *result.WorkloadResult, seed string, slots int) *result.MetaSize {
	mp := r.p.Metastable
	base := wr.Baseline()
	v := &result.VariantResult{Variant: sized(base.Variant, slots), Name: base.Name}
	step := fmt.Sprintf("search in front of %s", slotsText(slots))
	rel := filepath.Join("runs", "metastable", "stores", fmt.Sprintf("slots-%d", slots))
	dir := filepath.Join(r.dir, rel)
	r.quiet(ctx, step)
	srv := r.start(ctx, wr.Workload, v, step, seed, dir)
	if srv == nil {
		return nil
	}
	defer r.stop(ctx, srv, step)
	hint := wr.BaseRate * float64(slots) / float64(mp.Slots())
	r.logf("%s direct: saturation search in front of %s", wr.Workload, slotsText(slots))
	sat := r.search(ctx, srv, step, dir, hint)
	switch {
	case sat == nil:
		return nil
	case !sat.Validated:
		r.fail(wr.Workload, v.Name, step, fmt.Sprintf("no validated saturation: the search ended at %s, the validation of %.0f req/s failed", sat.Bracket, sat.Candidate), "")
		return nil
	}
	run := satRunOf(sat)
	run.Repeat, run.Dir = 1, rel
	r.logf("%s direct in front of %s: saturation %.0f req/s (validated), bracket %s", wr.Workload, slotsText(slots), sat.Rate, sat.Bracket)
	base2 := mp.Share * sat.Rate
	return &result.MetaSize{Slots: slots, Saturation: sat.Rate, BaseRate: base2, SpikeRate: mp.Timing.Factor * base2, Search: &run}
}

// slotsText is "16 slots", "1 slot".
func slotsText(n int) string {
	if n == 1 {
		return "1 slot"
	}
	return fmt.Sprintf("%d slots", n)
}
