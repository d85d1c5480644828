package loadgen

import (
	"context"
	"fmt"
)

// Run validates cfg, sends its load and returns what was measured. It
// returns early, with what was measured so far, when ctx is cancelled.
// progress, if not nil, is called every cfg.Progress from another
// goroutine. An error means the run could not start (bad configuration,
// nothing listening); failures of single requests are counted in Result.
func Run(ctx context.Context, cfg Config, progress func(Progress)) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t, _ := parseTarget(cfg.Target, cfg.AllowRemote)
	if cfg.Name == "" {
		cfg.Name = fmt.Sprintf("%s-%s", cfg.Engine, cfg.Workload)
	}
	switch cfg.Engine {
	case EngineVegeta:
		return runVegeta(ctx, &cfg, t, progress)
	default:
		return newFastEngine(&cfg, t).run(ctx, progress)
	}
}
