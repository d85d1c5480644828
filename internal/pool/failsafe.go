package pool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
	"github.com/failsafe-go/failsafe-go/priority"

	"github.com/kvpool/kvpool/internal/limit"
)

// The peer: failsafe-go's adaptive limiter (github.com/failsafe-go/failsafe-go,
// adaptivelimiter), the admission a Go developer would reach for today,
// run as its users run it so that the lab can set kvserver's default
// beside it on the same storm.
const (
	// Failsafe is the limiter with the library's own queueing
	// (WithQueueing(failsafeQueue, failsafeMaxQueue)) and its defaults
	// otherwise.
	Failsafe = "failsafe"
	// FailsafePriority is the same limiter built with a prioritizer
	// (BuildPrioritized): a marked retry (Retried) asks at
	// failsafeRetryPriority, a first try at failsafeFirstPriority, so that
	// under overload the library refuses retries first.
	FailsafePriority = "failsafe-priority"
)

// The library's queueing as its documentation recommends it (and as
// BuildPrioritized defaults to): once the limit is reached, up to
// failsafeQueue × the limit wait; from there refusals rise gradually until
// every newcomer is refused at failsafeMaxQueue × the limit.
const (
	failsafeQueue    = 2
	failsafeMaxQueue = 3
)

// The priorities of the failsafe-priority variant, and how often its
// prioritizer recomputes the level below which it refuses: the
// documentation's example priority for ordinary work and its calibration
// interval; retries one class lower.
const (
	failsafeFirstPriority = priority.High
	failsafeRetryPriority = priority.Low
	failsafeCalibration   = time.Second
)

// failsafeLimiter is what the adapter uses of either limiter the library
// builds (adaptivelimiter.AdaptiveLimiter and PriorityLimiter alike):
// AcquirePermit waits for a permit in the library's FIFO, or refuses at
// once (adaptivelimiter.ErrExceeded), or gives up when its context is
// done.
type failsafeLimiter interface {
	AcquirePermit(context.Context) (adaptivelimiter.Permit, error)
	adaptivelimiter.Metrics
}

// failsafePool is the Failsafe and FailsafePriority variants: a Pool over
// failsafe-go's adaptive limiter. The adapter is small on purpose: a task
// asks the limiter for a permit on its own goroutine (as slotPool, it
// runs on its submitter), runs holding it and records it (Permit.Record:
// its time feeds the limit), or is refused. The library does the rest on
// its own: the limit (1..200, from 20, or from Workers where given: a
// Vegas-style comparison of recent p90 execution times against a moving
// baseline, with throughput correlation), its FIFO of waiters, its
// gradual refusals as the queue grows, and (FailsafePriority) which
// priorities to refuse.
//
// What the adapter maps:
//   - a refusal (ErrExceeded) is ReasonFull; the server answers it as any
//     pool's 503, with Retry-After 1 (the pool is no Drainer: the library
//     does not say how long its queue takes);
//   - a task's deadline is its permit request's context deadline: one
//     that waits past it gives up its place (ReasonDeadline), one already
//     past it is refused without asking;
//   - a permit granted to a task that must no longer start (its deadline
//     passed meanwhile, it waited past AbandonAfter and its client has
//     gone, or the pool closed) is given back unrecorded (Permit.Drop),
//     the task rejected unrun;
//   - Close cancels the context every permit request waits under: the
//     waiters give up (ReasonClosed), and the prioritizer stops.
type failsafePool struct {
	counters
	cfg  Config
	name string
	lim  failsafeLimiter
	// first and retry are the contexts a first try and a retry ask under
	// (with their priority, for FailsafePriority), below ctx.
	first, retry context.Context
	stop         context.CancelFunc
	prio         priority.Prioritizer // FailsafePriority's; nil otherwise
	changes      atomic.Uint64
}

var _ Pool = (*failsafePool)(nil)

// newFailsafePool builds variant name from cfg as Resolve completed it.
func newFailsafePool(name string, cfg Config) *failsafePool {
	ctx, stop := context.WithCancel(context.Background())
	p := &failsafePool{counters: counters{gate: newGate()}, cfg: cfg, name: name, first: ctx, retry: ctx, stop: stop}
	b := adaptivelimiter.NewBuilder[any]().
		WithQueueing(failsafeQueue, failsafeMaxQueue).
		OnLimitChanged(func(adaptivelimiter.LimitChangedEvent) { p.changes.Add(1) })
	if cfg.failsafeInitial > 0 {
		// -workers given: the limit starts there (the library's own
		// range otherwise: 1..200 from 20).
		b = b.WithLimits(1, uint(max(failsafeMaxLimit, cfg.failsafeInitial)), uint(cfg.failsafeInitial))
	}
	if name != FailsafePriority {
		p.lim = b.Build()
		return p
	}
	pb := adaptivelimiter.NewPrioritizerBuilder()
	if cfg.levels != nil {
		pb.WithLevelTracker(cfg.levels)
	}
	p.prio = pb.Build()
	if !cfg.calibrateByHand {
		p.prio.ScheduleCalibrations(ctx, failsafeCalibration) // stops with ctx
	}
	p.lim = b.BuildPrioritized(p.prio)
	p.first, p.retry = failsafeFirstPriority.AddTo(ctx), failsafeRetryPriority.AddTo(ctx)
	return p
}

// failsafeMaxLimit is the library's default most permits at once.
const failsafeMaxLimit = 200

// Submit implements Pool: t runs or is rejected on this goroutine before
// Submit returns.
func (p *failsafePool) Submit(t Task) {
	if !p.gate.enter() {
		p.reject(t, ReasonClosed)
		return
	}
	ctx := p.first
	if isRetry(t) {
		ctx = p.retry
	}
	start := p.cfg.now()
	if deadline := t.Deadline(); deadline != 0 {
		left := time.Duration(deadline - start)
		if left <= 0 {
			p.reject(t, ReasonDeadline)
			p.gate.leave()
			return
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, left)
		defer cancel()
	}
	permit, err := p.lim.AcquirePermit(ctx)
	if errors.Is(err, adaptivelimiter.ErrExceeded) {
		p.reject(t, ReasonFull) // refused on arrival: it never waited
		p.gate.leave()
		return
	}
	at := p.cfg.now()
	it := item{task: t, enqueued: start}
	wait := p.waited(it, &p.cfg, at)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		p.reject(t, ReasonDeadline)
	case err != nil:
		p.reject(t, ReasonClosed) // Close cancelled the wait
	case p.gate.isClosed():
		permit.Drop()
		p.reject(t, ReasonClosed)
	default:
		if r, drop := p.cfg.stale(it, wait, at); drop {
			permit.Drop()
			p.reject(t, r)
			break
		}
		p.run(t)
		permit.Record()
	}
	p.gate.leave()
}

// Close implements Pool: the tasks waiting for a permit are rejected
// (ReasonClosed), later ones too, and Close returns once every task
// running has finished.
func (p *failsafePool) Close() {
	if p.gate.shut() {
		p.stop()
	}
	p.gate.wait()
}

// Stats implements Pool: Workers is the library's limit now, Queued its
// waiters, Capacity the queue at which it refuses every newcomer.
func (p *failsafePool) Stats() Stats {
	s := p.snapshot()
	s.Workers, s.Queued = p.lim.Limit(), p.lim.Queued()
	s.Capacity = failsafeMaxQueue * s.Workers
	s.LimitChanges = p.changes.Load()
	return s
}

// Name implements Pool.
func (p *failsafePool) Name() string { return p.name }

// RunsOnSubmitter implements Pool: always.
func (p *failsafePool) RunsOnSubmitter() bool { return true }

// resolveFailsafe is Resolve for the failsafe variants: they run every
// task on its submitter, whatever Exec asks (as direct and auto do), and
// take the library's limit and queue, so the settings of our own queues
// and limits do not apply to them (-cap, -overflow and -shards-per-worker
// are ignored, as direct ignores them); those that would silently change
// what is measured are refused. workers is Workers as given (0: not).
func resolveFailsafe(name string, cfg Config, workers int) (Config, error) {
	switch {
	case adaptiveLimit(cfg):
		return cfg, fmt.Errorf("%s adapts its own limit (failsafe-go's adaptive limiter): -limit %s does not apply", name, cfg.Limit.Algorithm)
	case cfg.MaxWait != 0:
		return cfg, fmt.Errorf("%s queues in failsafe-go's limiter, which bounds its queue by the limit: -max-wait does not apply", name)
	case cfg.QueueTimeout != 0:
		return cfg, fmt.Errorf("%s queues in failsafe-go's limiter, which times no wait out: -queue-timeout does not apply (a request's own deadline does)", name)
	}
	cfg.Exec, cfg.failsafeInitial, cfg.resolvedFor = ExecHandler, workers, name
	// What the settings say is what runs: the limit the library starts
	// at, its own algorithm, and the queue it refuses every newcomer at.
	cfg.Workers = cmp.Or(workers, failsafeInitialLimit)
	cfg.Limit = limit.Config{Algorithm: FailsafeLimit}
	cfg.Capacity, cfg.Overflow = failsafeMaxQueue*cfg.Workers, OverflowReject
	return cfg, nil
}

// FailsafeLimit is the failsafe variants' limit as their resolved
// Config names it: failsafe-go's own adaptive limit.
const FailsafeLimit = "failsafe-go"

// failsafeInitialLimit is the library's default first limit.
const failsafeInitialLimit = 20
