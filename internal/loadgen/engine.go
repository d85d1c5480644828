package loadgen

import (
	"context"
	"fmt"

	"github.com/kvpool/kvpool/internal/loadgen/config"
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
func Run(ctx context.Context, cfg config.Config, progress func(Progress)) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t, _ := config.ParseTarget(cfg.Target, cfg.AllowRemote)
	if cfg.Name == "" {
		cfg.Name = fmt.Sprintf("%s-%s", cfg.Engine, cfg.Workload)
	}
	where, release := place(&cfg)
	defer release()
	var res *Result
	var err error
	var pinErrs []error
	switch cfg.Engine {
	case config.EngineVegeta:
		res, err = runVegeta(ctx, &cfg, t, progress)
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
