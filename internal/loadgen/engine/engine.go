// Package engine runs a load: Run sends a schedule of requests over
// connections against the kvserver's /v0/entity API (open-model constant
// rate, or closed loop as fast as the connections go) and records every
// outcome exactly, twice (latency from the actual send and from the
// scheduled send, the coordinated-omission correction), streaming the
// interval logs and results.bin to disk as the run goes.
//
// The fast engine is this package's: event loops over raw connections
// (Linux), a goroutine per connection elsewhere, spread over the loader's
// CPUs. It takes when to send from package schedule, records through
// package record and is configured by package config. The "vegeta"
// engine (vegeta's attacker over net/http, an independent cross-check of
// the fast one) registers itself from package vegeta. What is built on a
// run lives beside it, as vegeta's lib is cut: workload (which requests),
// report (printing and summary.json), fill, saturate, merge.
package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/record"
)

// Run validates cfg, sends its load and returns what was measured. It
// returns early, with what was measured so far, when ctx is cancelled.
// progress, if not nil, is called every cfg.Progress from another
// goroutine. An error means the run could not start (bad configuration,
// nothing listening, interrupted before Config.StartAt); failures of
// single requests are counted in Result.
//
// While it runs, the run may pin the process to Config.CPUs and raise
// GOMAXPROCS (see place); both are restored when it returns.
func Run(ctx context.Context, cfg config.Config, progress func(record.Progress)) (*record.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t, _ := config.ParseTarget(cfg.Target, cfg.AllowRemote)
	if cfg.Name == "" {
		cfg.Name = fmt.Sprintf("%s-%s", cfg.Engine, cfg.Workload)
	}
	where, release := place(&cfg)
	defer release()
	var res *record.Result
	var err error
	var pinErrs []error
	switch cfg.Engine {
	case config.EngineVegeta:
		e, ok := engines.Load(cfg.Engine)
		if !ok {
			return nil, fmt.Errorf("-engine %s is not built into this program (import github.com/kvpool/kvpool/internal/loadgen/vegeta)", config.EngineVegeta)
		}
		res, err = e.(Engine)(ctx, &cfg, t, progress)
	default:
		g := newLoopGroup(&cfg, t, where)
		if !cfg.Client.IsZero() && g.engines[0].loop == nil {
			g.close()
			return nil, fmt.Errorf("client models (-client-timeout, -retries, …) need the fast engine's event loop, which this system lacks (Linux only)")
		}
		res, err = g.run(ctx, progress)
		pinErrs = g.pinErrs
	}
	if res != nil {
		where.record(res, pinErrs)
	}
	return res, err
}

// An Engine runs a whole run of cfg against t for Run, recording through
// a collector's recorders and filling a Result with Collector.Finish. The fast engine is this package's own; the "vegeta"
// engine lives in package loadgen/vegeta, which registers itself when
// imported (as database/sql drivers do), so that the core does not
// depend on vegeta's attacker.
type Engine func(ctx context.Context, cfg *config.Config, t config.Target, progress func(record.Progress)) (*record.Result, error)

var engines sync.Map // name → Engine

// Register makes the engine name available to Run (-engine name).
func Register(name string, e Engine) { engines.Store(name, e) }
