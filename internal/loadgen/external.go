package loadgen

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/loadgen/config"
)

// An Engine runs a whole run for Run, recording through NewRecorder and
// folding the recorders into a Result with Result.Merge. The fast engine
// is this package's own; the "vegeta" engine lives in package
// loadgen/vegeta, which registers itself when imported (as database/sql
// drivers do), so that the core does not depend on vegeta's attacker.
type Engine func(ctx context.Context, cfg *config.Config, progress func(Progress)) (*Result, error)

var (
	enginesMu sync.Mutex
	engines   = map[string]Engine{}
)

// RegisterEngine makes the engine name available to Run (-engine name).
func RegisterEngine(name string, e Engine) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	engines[name] = e
}

// runVegeta runs cfg with the registered vegeta engine.
func runVegeta(ctx context.Context, cfg *config.Config, _ config.Target, progress func(Progress)) (*Result, error) {
	enginesMu.Lock()
	e, ok := engines[config.EngineVegeta]
	enginesMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("-engine %s is not built into this program (import github.com/kvpool/kvpool/internal/loadgen/vegeta)", config.EngineVegeta)
	}
	return e(ctx, cfg, progress)
}

// Outcome is what one request produced, as an engine outside this package
// reports it to a Recorder. Times are since the run's start.
type Outcome struct {
	Seq, Key uint64
	Op       api.Method
	Intended time.Duration // when it was due (== Sent if unpaced)
	Sent     time.Duration // when its first byte was written
	End      time.Duration // when its response was read
	Code     int           // 0 if Err != nil
	BytesIn  int
	BytesOut int
	Err      error
}

// Recorder is the recorder of one connection (one goroutine calls Add)
// for an engine outside this package.
type Recorder struct{ r *recorder }

// NewRecorder returns the recorder of the run cfg configures, feeding a
// collector of its own: an engine outside this package records a run
// through one.
func NewRecorder(cfg *config.Config) *Recorder { return &Recorder{newCollector(cfg).newRecorder()} }

// Add records o.
func (r *Recorder) Add(o *Outcome) {
	r.r.add(&outcome{seq: o.Seq, key: o.Key, op: o.Op,
		intended: int64(o.Intended), sent: int64(o.Sent), end: int64(o.End),
		code: o.Code, bytesIn: o.BytesIn, bytesOut: o.BytesOut, err: o.Err})
}

// AddTo adds what r recorded so far to p (safe while the run goes).
func (r *Recorder) AddTo(p *Progress) {
	r.r.live.AddTo(&p.live)
	p.Errors += r.r.errCount.Load()
}

// Merge folds the recorders, whose goroutines have all finished, into res
// (see merge).
func (res *Result) Merge(recs ...*Recorder) {
	rs := make([]*recorder, len(recs))
	for i, r := range recs {
		rs[i] = r.r
	}
	res.merge(rs)
}

// ReportProgress calls progress with snapshot's Progress every interval
// until done is closed.
func ReportProgress(done <-chan struct{}, interval time.Duration, snapshot func() Progress, progress func(Progress)) {
	reportProgress(done, interval, snapshot, progress)
}

// ProcessCPU is the CPU time this process has used so far.
func ProcessCPU() CPUTime { return processCPU() }
