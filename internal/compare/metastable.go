package compare

import (
	"context"
	"path/filepath"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/loadgen/client"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

// metastable is the step of plan.Metastable's runs on wr's store, each
// on a fresh kvserver, at its share of direct's validated saturation
// (wr.BaseRate) with a spike, in front of the store its client model's
// storm was sized to (sizeStorms).
func (r *runner) metastable(ctx context.Context, wr *result.WorkloadResult, seed string) (*result.Metastable, outcome) {
	s := r.step(nil)
	mp := r.p.Metastable
	base := mp.Share * wr.BaseRate
	m := &result.Metastable{Workload: wr.Workload, BaseRate: base, SpikeRate: mp.Timing.Factor * base}
	models := map[string]client.Model{}
	for _, name := range mp.Models {
		if cm, err := r.clientModel(name); err == nil {
			models[name] = cm
		}
	}
	m.ClientSide = s.measureClientSide(ctx, wr.Workload, seed, m.SpikeRate, models)
	s.sizeStorms(ctx, wr, seed, m)
	t := mp.Timing
	runs := 0
	for _, size := range m.Sizes {
		for _, cm := range size.Models {
			for _, mv := range mp.Variants {
				if mp.Applies(cm, mv) {
					runs += max(mp.Repeat, 1)
				}
			}
		}
	}
	r.logf("%s: %d metastable runs of %v at %g%% of direct's saturation in front of their store, %g× for %v from %v", wr.Workload, runs,
		t.Duration(), 100*mp.Share, t.Factor, t.Spike, t.Base)
	for rep := 1; rep <= mp.Repeat; rep++ {
		for _, cm := range mp.Models {
			size := m.Size(cm)
			if size == nil {
				continue // not run: the sizing said why
			}
			for _, mv := range mp.Variants {
				if !mp.Applies(cm, mv) {
					continue
				}
				if ctx.Err() != nil {
					return m, s.out
				}
				mv.Variant = sized(mv.Variant, size.Slots)
				vr := &result.VariantResult{Variant: mv.Variant, Name: mv.Name()}
				if run := s.metaRun(ctx, wr.Workload, vr, cm, mv, rep, seed, size); run != nil {
					m.Runs = append(m.Runs, run)
				}
			}
		}
	}
	return m, s.out
}

// sized is v in front of a store stand-in of slots (and, where v's pool
// has a worker per store slot, as many workers); v unchanged on the fast
// store, which has no stand-in.
func sized(v plan.Variant, slots int) plan.Variant {
	if v.IOConcurrency > 0 && slots > 0 {
		v.IOConcurrency = slots
		if v.Workers > 0 {
			v.Workers = slots
		}
	}
	return v
}

// metaRun is one run in front of size's store: a fresh kvserver, the
// load with its spike, the server's counters around it (nil: the run
// failed, recorded).
func (r *step) metaRun(ctx context.Context, wl string, vr *result.VariantResult, model string, mv plan.MetaVariant, rep int, seed string, size *result.MetaSize) *result.MetaRun {
	mp := r.p.Metastable
	step := result.MetaStepPrefix + model
	cm, err := r.clientModel(model)
	if err != nil {
		r.fail(wl, vr.Name, step, err.Error(), "")
		return nil
	}
	rel := filepath.Join("runs", "metastable", model, mv.Slug(), "run-"+strconv.Itoa(rep))
	dir := filepath.Join(r.dir, rel)
	r.quiet(ctx, step+" "+mv.Name())
	// Cold: the spike's recovery is the question, and every variant's
	// store stand-in sleeps the same on every read, warm or not.
	srv := r.startCold(ctx, wl, vr, step, seed, dir)
	if srv == nil {
		return nil
	}
	defer r.stop(ctx, srv, step)
	cfg := metaConfig(r.loadConfig(srv), mp, cm, mv, size.BaseRate, r.o.MaxConns, r.t.RequestTimeout)
	before, berr := srv.Metrics(ctx)
	// The loader's own CPU second by second: a run whose client side ran
	// out is not judged (analysis.JudgeMetaRun, the report's only judge).
	stopTrace := saturate.TraceSelfCPU(cfg.Interval / 4)
	m, ok := r.measure(ctx, srv, step, cfg, dir)
	trace := stopTrace()
	if !ok {
		return nil
	}
	run := &result.MetaRun{Model: model, Variant: mv.Name(), Repeat: rep, Slots: size.Slots, Dir: rel, ConnsPeak: m.res.ConnsPeak, LoaderCPUs: m.res.LoaderCPUs}
	run.LoaderKeptUp = r.checkLoader(srv, step, m, "").KeptUp
	for _, p := range m.res.Intervals {
		t0 := m.res.Start.Add(time.Duration(p.StartS * float64(time.Second)))
		t1 := t0.Add(time.Duration(p.LengthS * float64(time.Second)))
		run.Series = append(run.Series, result.MetaPoint{T: p.StartS, Length: p.LengthS,
			FirstTries: p.FirstTries, Retries: p.Retries, Throttled: p.Throttled,
			Useful: p.Useful, Timeouts: p.Timeouts, Shed: p.Shed, GaveUp: p.GaveUp,
			UsefulP99: time.Duration(p.UsefulP99Us * float64(time.Microsecond)),
			ConnWaits: p.ConnWaits, Reconnects: p.Reconnects,
			OwnLagP99:   time.Duration(p.OwnLagP99Us * float64(time.Microsecond)),
			LoaderShare: trace.Share(t0, t1, m.res.LoaderCPUs)})
	}
	c := m.res.Clients // the loader's own count, of which the series is the breakdown
	run.Totals = result.MetaTotals{FirstTries: c.FirstTries, Retries: c.Retries, Throttled: c.Throttled,
		Useful: c.Useful, Timeouts: c.Timeouts, Shed: c.Shed, GaveUp: c.GaveUp, UsefulP99: m.res.UsefulP99}
	after, aerr := srv.Metrics(ctx)
	switch {
	case berr != nil:
		r.note("%s %s: kvserver's counters not read before the run: %v", step, vr.Name, berr)
	case aerr != nil:
		r.note("%s %s: kvserver's counters not read after the run: %v", step, vr.Name, aerr)
	default:
		run.Server = serverCounts(before, after)
	}
	r.logf("%s %s %s: %d first tries, %d retries, %d throttled; useful %d (p99 %v), timeouts %d, 503s %d, gave up %d; the loader kept up: %v", wl, model, mv.Name(),
		c.FirstTries, c.Retries, c.Throttled, c.Useful, m.res.UsefulP99.Round(100*time.Microsecond), c.Timeouts, c.Shed, c.GaveUp, run.LoaderKeptUp)
	return run
}

// clientModel is the population a metastable run's model names: a named
// one, or the client flags' (plan.CustomModel).
func (r *runner) clientModel(name string) (client.Model, error) {
	if name == plan.CustomModel {
		return client.FromArgs(r.p.Metastable.ClientArgs)
	}
	return client.Named(name)
}

// metaConfig is the loader's configuration of one metastable run: the
// base rate with the plan's spike under client model cm, opening
// connections up to maxConns as soon as a request finds every one busy
// (clients that give up close theirs, as a real population would).
// timeout is the classic client's (the none model's) wait.
func metaConfig(cfg config.Config, mp *plan.Metastable, cm client.Model, mv plan.MetaVariant, base float64, maxConns int, timeout time.Duration) config.Config {
	t := mp.Timing
	cfg.Rate, cfg.Duration, cfg.Interval = base, t.Duration(), t.Interval
	cfg.Spike = schedule.Spike{Factor: t.Factor, At: t.Base, Length: t.Spike}
	cfg.Client = cm
	if cfg.Client.IsZero() {
		// The loader counts first tries, useful answers and timeouts
		// only under a client model: the zero one, its wait written out.
		cfg.Client.Timeout = timeout
	}
	cfg.Client.SendDeadline = mv.Deadlines
	cfg.Conns, cfg.MaxConns = plan.MinConns, maxConns
	cfg.GrowAfter, cfg.Timeout = time.Millisecond, timeout
	return cfg
}

// The counters of kvserver's /metrics a metastable run reads.
const (
	metricRequests         = "kvserver_http_requests_total"
	metricDeadlineRequests = "kvserver_deadline_requests_total"
	metricDeadlineDropped  = "kvserver_deadline_dropped_total"
	metricWasted           = "kvserver_deadline_wasted_total"
	metricRejected         = "kvserver_pool_rejected_total"
)

// serverCounts is kvserver's counters from before to after.
func serverCounts(before, after map[string]*dto.MetricFamily) *result.ServerCounts {
	delta := func(name string, keep func(labels map[string]string) bool) int64 {
		return counterSum(after, name, keep) - counterSum(before, name, keep)
	}
	all := func(map[string]string) bool { return true }
	s := &result.ServerCounts{
		Ran: delta(metricRequests, func(l map[string]string) bool {
			c, _ := strconv.Atoi(l["code"])
			return c >= 200 && c < 300 || c == 404
		}),
		DeadlineRequests: delta(metricDeadlineRequests, all),
		DeadlineDropped:  delta(metricDeadlineDropped, all),
		Wasted:           delta(metricWasted, all),
		Shed:             map[string]int64{},
	}
	for _, reason := range labelValues(after, metricRejected, "reason") {
		if n := delta(metricRejected, func(l map[string]string) bool { return l["reason"] == reason }); n > 0 {
			s.Shed[reason] = n
		}
	}
	if n := delta(metricDeadlineDropped, func(l map[string]string) bool { return l["stage"] == "store" }); n > 0 {
		s.Shed["deadline (store)"] = n
	}
	return s
}

// counterSum is the sum of family name's counters whose labels keep
// accepts (0: no such family).
func counterSum(families map[string]*dto.MetricFamily, name string, keep func(map[string]string) bool) int64 {
	f := families[name]
	if f == nil {
		return 0
	}
	var sum float64
	for _, m := range f.GetMetric() {
		if keep(labelsOf(m)) {
			sum += m.GetCounter().GetValue()
		}
	}
	return int64(sum)
}

// labelValues are the values label takes in family name.
func labelValues(families map[string]*dto.MetricFamily, name, label string) []string {
	var out []string
	if f := families[name]; f != nil {
		for _, m := range f.GetMetric() {
			if v, ok := labelsOf(m)[label]; ok {
				out = append(out, v)
			}
		}
	}
	return out
}

func labelsOf(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}
