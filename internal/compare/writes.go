package compare

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// writesStartIn is how far ahead a writes run's read stream is set to
// start (its Config.StartAt): time for its connections to open, so that
// the flood's start, FloodAt after it, is an instant both loaders know.
const writesStartIn = 300 * time.Millisecond

// writes is the step of plan.Writes's runs on wr's store in their
// interleaved order, each on a fresh kvserver: a read stream and a write
// flood at once, kvserver's metrics read once an interval.
func (r *runner) writes(ctx context.Context, wr *result.WorkloadResult, seed string) (*result.Writes, outcome) {
	s := r.step(wr)
	wp := r.p.Writes
	w := &result.Writes{LagTolerance: saturate.LagTolerance(r.o.SLO)}
	r.logf("%s: %d writes runs of %v: %.0f GET/s over %d ids; from %v for %v, %d connections PUTting %d B values over %d ids",
		wr.Workload, wp.Runs(), wp.Duration, wp.ReadRate, r.o.Keys, wp.FloodAt, wp.FloodFor, wp.FloodConns, wp.FloodValueSize, wp.FloodKeys)
	byName := map[string]*result.VariantResult{}
	for _, v := range s.out.variants {
		byName[v.Name] = v
	}
	for _, ref := range wp.Order() {
		if ctx.Err() != nil {
			break
		}
		if run := s.writesRun(ctx, wr.Workload, byName[ref.Variant.Name()], ref.Repeat, seed); run != nil {
			w.Runs = append(w.Runs, run)
		}
	}
	return w, s.out
}

// writesRun is one run: a fresh kvserver (warmed as every measured one
// is), the read stream for the whole run and the flood from FloodAt,
// kvserver's metrics and the loader's CPU read once an interval (nil: the
// run failed, recorded).
func (r *step) writesRun(ctx context.Context, wl string, v *result.VariantResult, rep int, seed string) *result.WritesRun {
	wp := r.p.Writes
	step := result.WritesStepPrefix + strconv.Itoa(rep)
	rel := filepath.Join("runs", "writes", v.Variant.Slug(), "run-"+strconv.Itoa(rep))
	dir := filepath.Join(r.dir, rel)
	r.quiet(ctx, step+" "+v.Name)
	srv := r.start(ctx, wl, v, step, seed, dir)
	if srv == nil {
		return nil
	}
	defer r.stop(ctx, srv, step)
	reads, flood := writesConfigs(r.loadConfig(srv), wp, r.o.MaxConns, time.Now().Add(writesStartIn))

	stopTrace := saturate.TraceSelfCPU(wp.Interval / 4)
	scrape := scrapeWrites(ctx, srv.Server, reads.StartAt, wp.Interval)
	var fl struct {
		res  *record.Result
		note string
		err  error
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if !waitUntil(ctx, reads.StartAt.Add(wp.FloodAt)) {
			return
		}
		fl.res, fl.note, fl.err = runInto(ctx, flood, filepath.Join(dir, "flood"), v.Config)
	})
	m, ok := r.measure(ctx, srv, step, reads, dir)
	wg.Wait()
	var floodStart, floodEnd float64 // since the read stream's start
	if ok && fl.err == nil && fl.res != nil {
		floodStart = fl.res.Start.Sub(m.res.Start).Seconds()
		floodEnd = floodStart + fl.res.Elapsed.Seconds()
		scrape.awaitAbsorbed(ctx, floodStart, floodEnd, time.Now().Add(plan.WritesAbsorbWithin))
	}
	samples := scrape.stop()
	trace := stopTrace()
	switch {
	case !ok:
		return nil
	case fl.err != nil || fl.res == nil:
		if ctx.Err() == nil {
			r.fail(wl, v.Name, step, fmt.Sprintf("the flood did not run: %v", fl.err), srv.LogTail(10))
		}
		return nil
	case fl.note != "":
		r.note("%s %s flood: %s", step, v.Name, fl.note)
	}
	lc := r.checkLoader(srv, step, m, "")
	res := m.res
	run := &result.WritesRun{Variant: v.Name, Repeat: rep, Dir: rel, Server: samples,
		Reads: writesTotals(res, api.Get), ReadSeries: writesPoints(res, 0, &trace),
		ReadsAsked: lc.Asked, ReadsSendRate: lc.SendRate, ReadsUnsent: res.Unsent(), ReadConnWaits: res.ConnWaits, LoaderCPUs: res.LoaderCPUs}
	run.FloodStart, run.FloodEnd = floodStart, floodEnd
	run.Writes, run.WriteSeries = writesTotals(fl.res, api.Put), writesPoints(fl.res, floodStart, nil)
	r.logf("%s %s %s: reads %d, %d refused (503); writes %d answered (%.0f/s), %d refused; %s", wl, v.Name, step,
		run.Reads.Responses, run.Reads.Shed, run.Writes.OK, record.PerSecond(run.Writes.OK, run.Writes.Elapsed), run.Writes.Shed, stallsText(samples))
	return run
}

// writesConfigs are a writes run's two loads against the server cfg
// targets: the read stream (the plan's rate over the filled ids from
// start, opening connections up to maxConns as requests find every one
// busy) and the flood (a closed loop of PUTs over FloodKeys ids, FloodFor
// long, its connections fixed).
func writesConfigs(cfg config.Config, wp *plan.Writes, maxConns int, start time.Time) (reads, flood config.Config) {
	reads = cfg
	reads.Workload.Mix = workload.Get
	reads.Rate, reads.Duration, reads.Interval = wp.ReadRate, wp.Duration, wp.Interval
	reads.Conns, reads.MaxConns = plan.MinConns, maxConns
	reads.StartAt = start
	reads.Name = "reads"
	flood = cfg
	flood.Workload.Mix = workload.Put
	flood.Workload.Keys, flood.Workload.ValueSize = wp.FloodKeys, wp.FloodValueSize
	flood.Rate, flood.Duration, flood.Interval = 0, wp.FloodFor, wp.Interval
	flood.Conns, flood.MaxConns = wp.FloodConns, wp.FloodConns
	flood.Seed = cfg.Seed + 1 // other ids than the reads'
	flood.Name = "flood"
	return reads, flood
}

// writesTotals are res's figures of op over the run.
func writesTotals(res *record.Result, op api.Method) result.WritesTotals {
	t := result.WritesTotals{Elapsed: res.Elapsed}
	o := res.Op(op)
	if o == nil {
		return t
	}
	t.Responses, t.Shed = o.Sent, o.Shed()
	t.OK = o.Sent - o.ErrorCount
	t.Failed = o.ErrorCount - t.Shed
	t.P99 = time.Duration(o.Corrected.ValueAtPercentile(99)) * time.Microsecond
	return t
}

// writesPoints is res's series, each point off seconds later (its start
// since the read stream's), with the loader's CPU share from trace where
// given.
func writesPoints(res *record.Result, off float64, trace *saturate.CPUTrace) []result.WritesPoint {
	out := make([]result.WritesPoint, 0, len(res.Intervals))
	for _, p := range res.Intervals {
		pt := result.WritesPoint{T: off + p.StartS, Length: p.LengthS, Responses: p.Responses,
			OK: p.Responses - p.Errors, Shed: p.Shed, Failed: p.Errors - p.Shed,
			P99: time.Duration(p.P99Us * float64(time.Microsecond))}
		if trace != nil {
			t0 := res.Start.Add(time.Duration(p.StartS * float64(time.Second)))
			t1 := t0.Add(time.Duration(p.LengthS * float64(time.Second)))
			pt.Sent, pt.OwnLagP99 = p.Sent, time.Duration(p.OwnLagP99Us*float64(time.Microsecond))
			pt.LoaderShare = trace.Share(t0, t1, res.LoaderCPUs)
		}
		out = append(out, pt)
	}
	return out
}

// writesScrape reads a kvserver's result.WritesMetrics once an interval
// (scrapeWrites) until stopped.
type writesScrape struct {
	mu       sync.Mutex
	samples  []result.ServerSample
	interval time.Duration
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// scrapeWrites reads srv's result.WritesMetrics from start and every iv
// after until stop is called, each sample at its time since start. A
// read that fails is left out: the samples say when each was taken.
func scrapeWrites(ctx context.Context, srv *harness.Server, start time.Time, iv time.Duration) *writesScrape {
	ctx, cancel := context.WithCancel(ctx)
	s := &writesScrape{interval: iv, cancel: cancel}
	s.wg.Go(func() {
		for next := start; waitUntil(ctx, next); next = next.Add(iv) {
			at := time.Now()
			families, err := srv.Metrics(ctx)
			if err != nil {
				continue
			}
			s.mu.Lock()
			s.samples = append(s.samples, result.ServerSample{T: at.Sub(start).Seconds(), Values: writesValues(families)})
			s.mu.Unlock()
		}
	})
	return s
}

// awaitAbsorbed returns once the samples say the store has absorbed the
// flood from floodStart to floodEnd (result.AbsorbedAt), or at deadline,
// or at once where the last sample has no L0 sublevels (a kvserver that
// does not serve them never will).
func (s *writesScrape) awaitAbsorbed(ctx context.Context, floodStart, floodEnd float64, deadline time.Time) {
	for {
		s.mu.Lock()
		samples := s.samples
		s.mu.Unlock()
		if len(samples) == 0 || result.AbsorbedAt(samples, floodStart, floodEnd) > 0 {
			return
		}
		if _, ok := samples[len(samples)-1].Values[result.MetricL0Sublevels]; !ok {
			return
		}
		next := time.Now().Add(s.interval)
		if next.After(deadline) || !waitUntil(ctx, next) {
			return
		}
	}
}

// stop ends the reads and returns the samples.
func (s *writesScrape) stop() []result.ServerSample {
	s.cancel()
	s.wg.Wait()
	return s.samples
}

// writesValues are the series of result.WritesMetrics in families, each
// under its result.SeriesKey; a family kvserver does not serve is absent.
func writesValues(families map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, name := range result.WritesMetrics {
		f := families[name]
		if f == nil {
			continue
		}
		for _, m := range f.GetMetric() {
			var v float64
			switch {
			case m.Counter != nil:
				v = m.GetCounter().GetValue()
			case m.Gauge != nil:
				v = m.GetGauge().GetValue()
			case m.Untyped != nil:
				v = m.GetUntyped().GetValue()
			default:
				continue
			}
			out[result.SeriesKey(name, labelsOf(m))] = v
		}
	}
	return out
}

// stallsText is what samples say of Pebble's write stalls over the run,
// for the log.
func stallsText(samples []result.ServerSample) string {
	if len(samples) < 2 {
		return "Pebble's write stalls not read"
	}
	first, last := samples[0].Values, samples[len(samples)-1].Values
	n, ok := last[result.MetricWriteStalls]
	if !ok {
		return "no write stall counter in kvserver's /metrics"
	}
	return fmt.Sprintf("%.0f Pebble write stalls (%.1fs)", n-first[result.MetricWriteStalls], last[result.MetricWriteStallSeconds]-first[result.MetricWriteStallSeconds])
}
