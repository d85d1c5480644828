package compare

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/render"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/engine"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// floorStep names a floor's rounds in its failures.
const floorStep = "floor"

// floor is one `loadtest floor`: a runner, whose instances and
// measurement it uses, and the record it fills.
type floor struct {
	*step
	f      *result.Floor
	opt    *plan.Floor // f's
	names  [2]string   // the base's and kvserver's
	tables io.Writer   // as render words them, while they run
	dir    string      // the rounds' loader files: o.Out, or the runner's tmp
}

// Floor runs o: on each count of its server CPUs in turn (or on all of
// them, once), per store state kvserver and the base, each on a store of
// its own, and per workload a warm-up and paired rounds, printing each
// round, each workload's summary and, for more than one count, how each
// server's throughput scaled, as render words them. With o.Out it writes
// there floor.json and REPORT.md, of what finished also after an error.
// Progress notes go to log. The first start, fill or round that fails
// ends it with an error.
func Floor(ctx context.Context, o plan.Floor, stdout, log io.Writer) (*result.Floor, error) {
	tmp, err := os.MkdirTemp("", "kvpool-floor-")
	if err != nil {
		return nil, fmt.Errorf("cannot create a folder for the stores: %w", err)
	}
	defer os.RemoveAll(tmp)
	f := &result.Floor{Options: o, LoaderCPUs: o.LoaderCPUs.String(), LoaderCPUN: o.LoaderCPUs.Len(), LoaderBusy: cpuset.Busy}
	fl := &floor{f: f, opt: &f.Options, names: o.Names(), tables: stdout, dir: cmp.Or(o.Out, tmp), step: (&runner{log: log, online: onlineCPUs(),
		o: plan.Options{Keys: o.Keys, ValueSize: o.ValueSize}, tmp: tmp}).step(nil)}
	counts := o.CPUCounts
	if len(counts) == 0 {
		counts = []int{o.ServerCPUs.Len()}
	}
	for _, n := range counts {
		if err = fl.count(ctx, n); err != nil {
			break
		}
	}
	a := analysis.FloorOf(f)
	if err == nil && len(counts) > 1 {
		render.FloorScaling(stdout, f, a)
	}
	if o.Out != "" {
		f.Interrupted = ctx.Err() != nil
		serr := result.SaveFloor(o.Out, f)
		_, werr := render.WriteFloor(f, a, o.Out)
		err = errors.Join(err, serr, werr)
	}
	return f, err
}

// count runs every store state on the first n server CPUs, the bare
// handler started once for them all, a kvserver per state on a store
// of its own.
func (fl *floor) count(ctx context.Context, n int) error {
	cpus := fl.opt.ServerCPUs.First(n)
	fl.pl = Placement{Server: cpus, Loader: fl.opt.LoaderCPUs}
	c := &result.FloorCount{ServerCPUs: cpus.String(), CPUs: n}
	fl.f.Counts = append(fl.f.Counts, c)
	render.FloorHeader(fl.tables, fl.f, c)
	var pair [2]*instance
	if fl.opt.Base == plan.FloorBare {
		srv, err := harness.Start(ctx, harness.Options{Argv: []string{fl.opt.Self, "bare-server", "-addr", "127.0.0.1:0"}, Env: fl.opt.SelfEnv, CPUs: cpus})
		if err != nil {
			return err
		}
		defer srv.Stop(10 * time.Second)
		pair[0] = fl.instance(srv, 0)
	}
	for _, state := range fl.opt.States {
		if err := fl.state(ctx, c, state, pair); err != nil {
			return err
		}
	}
	return nil
}

func (fl *floor) instance(srv *harness.Server, side int) *instance {
	return &instance{Server: srv, v: &result.VariantResult{Name: fl.names[side]}}
}

// state measures every workload with the kvservers of pair (those not
// given) started for one store state and stopped after.
func (fl *floor) state(ctx context.Context, c *result.FloorCount, state string, pair [2]*instance) error {
	for side := range pair {
		if pair[side] != nil {
			continue
		}
		srv, err := fl.start(ctx, side, state)
		if err != nil {
			return fmt.Errorf("%s, store %s: %w", fl.names[side], state, err)
		}
		pair[side] = fl.instance(srv, side)
		defer func() {
			if err := srv.Stop(time.Minute); err != nil {
				fl.logf("floor: stopping %s: %v", fl.names[side], err)
			}
			os.RemoveAll(srv.DataDir) // start's, not the harness's
		}()
	}
	for _, wl := range fl.opt.Workloads {
		w, err := fl.workload(ctx, c, state, wl, pair)
		if err != nil {
			return err
		}
		c.Workloads = append(c.Workloads, w)
	}
	return nil
}

// start starts side's kvserver -pool direct on the server CPUs with a
// store of its own, filled by it (a binary before a change may not read
// a store written after it): fresh, the fill still in its memtable;
// compacted, started again on it with -compact-at-start.
func (fl *floor) start(ctx context.Context, side int, state string) (*harness.Server, error) {
	bin, args := fl.opt.Server(side)
	dir, err := os.MkdirTemp(fl.tmp, "store-")
	if err != nil {
		return nil, err
	}
	o := harness.Options{Binary: bin, Args: append([]string{"-pool", plan.Baseline}, args...), DataDir: dir, CPUs: fl.pl.Server, StartTimeout: 10 * time.Minute}
	srv, err := harness.Start(ctx, o)
	if err != nil {
		return nil, err
	}
	if _, _, err := fillStore(ctx, srv.URL, fl.opt.Keys, fl.opt.ValueSize, fl.pl.Loader); err != nil {
		srv.Kill()
		return nil, fmt.Errorf("fill: %w", err)
	}
	if state == plan.FloorFresh {
		return srv, nil
	}
	if err := srv.Stop(time.Minute); err != nil {
		return nil, fmt.Errorf("stopping after the fill: %w", err)
	}
	o.Args = append(o.Args, "-compact-at-start")
	return harness.Start(ctx, o)
}

// workload runs one workload's warm-up and paired rounds, prints each
// round and the summary, and, with a profile folder, profiles kvserver
// over one more round.
func (fl *floor) workload(ctx context.Context, c *result.FloorCount, state, wl string, pair [2]*instance) (*result.FloorWorkload, error) {
	mix, err := workload.ParseMix(wl)
	if err != nil {
		return nil, err
	}
	for side, srv := range pair {
		srv.wl, srv.mix = wl, mix
		if fl.opt.Warmup > 0 {
			if _, err := engine.Run(ctx, fl.load(srv, fl.opt.Warmup), nil); err != nil {
				return nil, fmt.Errorf("%s: %w", srv.v.Name, err)
			}
			fl.settled(ctx, srv, side)
		}
	}
	w := &result.FloorWorkload{State: state, Workload: wl, PairedRun: result.PairedRun{Against: pair[0].v.Name, Conns: fl.opt.Conns,
		Alternating: true, Dir: filepath.Join("runs", fmt.Sprintf("cpus-%d", c.CPUs), state+"-"+wl)}}
	render.FloorWorkloadHead(fl.tables, w)
	round := func(i, side int) (result.ClosedRound, bool) {
		return fl.round(ctx, w, pair[side], side, filepath.Join(fl.dir, w.Dir, fmt.Sprintf("round-%d-%s", i, pair[side].v.Name)))
	}
	if !pairRounds(ctx, fl.opt.Rounds, 0, round, func(i int, p [2]result.ClosedRound) {
		w.Base, w.Variant = append(w.Base, p[0]), append(w.Variant, p[1])
		render.FloorRound(fl.tables, fl.f, w, i-1)
	}) {
		if n := len(fl.out.failures); n > 0 && ctx.Err() == nil {
			return nil, fmt.Errorf("%s: %s", fl.out.failures[n-1].Variant, fl.out.failures[n-1].Reason)
		}
		return nil, cmp.Or(ctx.Err(), errors.New("a round did not run"))
	}
	render.FloorSummary(fl.tables, fl.f, analysis.FloorWorkloadOf(fl.f, w))
	if fl.opt.ProfileDir != "" {
		w.Profile = filepath.Join(fl.opt.ProfileDir, "floor-"+state+"-"+wl+".pprof")
		if err := fl.profile(ctx, pair[1], w.Profile); err != nil {
			return nil, err
		}
		render.FloorProfile(fl.tables, w)
	}
	return w, nil
}

// load is the loader's configuration of a run of d against srv: a closed
// loop over the connections, or the floor's rate over them.
func (fl *floor) load(srv *instance, d time.Duration) config.Config {
	cfg := fl.loadConfig(srv)
	cfg.Rate, cfg.Duration = fl.opt.Rate, d
	cfg.Conns, cfg.MaxConns = fl.opt.Conns, fl.opt.Conns
	return cfg
}

// round measures one round against srv into dir. A kvserver's PUT round
// is read once it has settled again, so that the writes' background work
// (flushes, compactions) is charged to them and not to the next round.
func (fl *floor) round(ctx context.Context, w *result.FloorWorkload, srv *instance, side int, dir string) (result.ClosedRound, bool) {
	m, ok := fl.measure(ctx, srv, floorStep, fl.load(srv, fl.opt.Round), dir)
	if !ok {
		return result.ClosedRound{}, false
	}
	round := fl.closedRound(m)
	if after, ok := fl.settled(ctx, srv, side); ok && m.span.ok && m.res.Sent > 0 {
		round.ServerCPUPerRequest = (after.CPU - m.span.before.CPU) / time.Duration(m.res.Sent)
	}
	w.Failed[side] = append(w.Failed[side], m.res.ErrorCount)
	return round, ctx.Err() == nil
}

// settled waits, after PUTs to a kvserver, until it idles (within
// IdleWithin; a longer wait is noted, the run measured anyway), and
// reads its CPU; false where there was nothing to wait for.
func (fl *floor) settled(ctx context.Context, srv *instance, side int) (harness.ProcSample, bool) {
	if side == 0 && fl.opt.Base == plan.FloorBare || srv.mix.Put == 0 {
		return harness.ProcSample{}, false
	}
	fl.settle(ctx, srv.Server, fmt.Sprintf("%s %s %s", srv.wl, srv.v.Name, floorStep), settleRule{windows: harness.IdleWindows, within: fl.opt.IdleWithin})
	s, err := srv.Sample()
	return s, err == nil
}

// profile runs one more round against srv while taking its CPU profile
// into path.
func (fl *floor) profile(ctx context.Context, srv *instance, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	seconds := max(1, int(fl.opt.Round.Round(time.Second)/time.Second))
	done := make(chan error, 1)
	go func() { done <- srv.Profile(ctx, "cpu", seconds, path) }()
	_, err := engine.Run(ctx, fl.load(srv, profileLoad(seconds)), nil)
	if perr := <-done; perr != nil {
		err = cmp.Or(err, fmt.Errorf("profiling %s: %w", srv.v.Name, perr))
	}
	return err
}

// renderFloor writes the report of the floor in dir again from its
// floor.json; false where dir holds none.
func renderFloor(dir string) (*render.Report, bool, error) {
	if _, err := os.Stat(filepath.Join(dir, result.FloorFile)); err != nil {
		return nil, false, nil
	}
	f, err := result.LoadFloor(dir)
	if err != nil {
		return nil, true, err
	}
	r, err := render.WriteFloor(f, analysis.FloorOf(f), dir)
	return r, true, err
}
