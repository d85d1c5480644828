package pool

import (
	"time"

	"github.com/kvpool/kvpool/internal/limit"
)

// limiter is how many slots a handler-mode pool has (see slotPool): a
// fixed number, or an adaptive limit.Limit fed with each task's latency.
type limiter interface {
	// Current is the limit now, at least 1; cheap and safe for
	// concurrent use.
	Current() int
	// Sample reports a task that held a slot from start (clock ns) for
	// rtt, admitted with inflight slots held.
	Sample(start int64, rtt time.Duration, inflight int, dropped bool)
	// Changes counts the changes of the limit.
	Changes() uint64
}

// fixedLimit is Workers slots for ever.
type fixedLimit int

func (f fixedLimit) Current() int                         { return int(f) }
func (fixedLimit) Sample(int64, time.Duration, int, bool) {}
func (fixedLimit) Changes() uint64                        { return 0 }

// isFixed tells whether l never changes, so that tasks need not be timed.
func isFixed(l limiter) bool {
	_, ok := l.(fixedLimit)
	return ok
}

// newLimiter is the limiter cfg asks for: Workers slots, or the adaptive
// limit of cfg.Limit on the pool's clock.
func newLimiter(cfg *Config) (limiter, error) {
	if cfg.limiter != nil {
		return cfg.limiter, nil
	}
	if !adaptiveLimit(*cfg) {
		if cfg.MaxWait != 0 {
			// A bound in time needs the slots timed.
			return limit.Measured(cfg.Workers, limitConfig(cfg)), nil
		}
		return fixedLimit(cfg.Workers), nil
	}
	return limit.New(limitConfig(cfg))
}

// limitConfig is cfg.Limit as the pool runs it: on the pool's clock, its
// defaults scaled to Workers (GOMAXPROCS unless set).
func limitConfig(cfg *Config) limit.Config {
	lc := cfg.Limit
	if lc.CPUs == 0 {
		lc.CPUs = cfg.Workers
	}
	if lc.Now == nil {
		lc.Now = cfg.now
	}
	return lc
}
