package engine

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

// loopGroup runs the fast engine's loops, as wrk runs its threads: loop l
// of L is a fastEngine with the l-th share of the connections (Conns and
// MaxConns split as evenly as possible, the first loops taking one more)
// and the l-th share of this loader's requests (the run's seq l, l+L, …;
// of a shard K of N, seq K-1 + l·N + i·N·L), so every request is sent by
// exactly one loop, at its time in the whole run's schedule.
//
// The loops connect first; then each goes to a goroutine of its own (an
// event loop on an OS thread it locks, pinned to its CPU where the run
// is pinned) and waits at a gate; the run's start, now or Config.StartAt,
// is set on every loop before the gate opens, so that they all keep one
// schedule from one instant. The run ends when every loop has sent its
// share and seen its requests answered.
//
// Every connection's recorder, in whichever loop, feeds the run's one
// collector (col), so the histograms, interval logs and results.bin are
// the whole run's by construction, and so are its reconnects; the counts
// each loop keeps (connections, peaks, resume point) are combined in
// result.
type loopGroup struct {
	cfg     *config.Config
	col     *record.Collector
	t       config.Target
	place   placement
	engines []*fastEngine
	start   time.Time // the run's start, once the gate opened

	// pinErrs[l] is why loop l's thread could not be pinned; written by
	// loop l before it starts, read after the loops have returned.
	pinErrs []error
}

func newLoopGroup(cfg *config.Config, t config.Target, place placement) *loopGroup {
	g := &loopGroup{cfg: cfg, col: record.NewCollector(cfg), t: t, place: place, pinErrs: make([]error, place.loops)}
	for l := range place.loops {
		g.engines = append(g.engines, newLoopEngine(cfg, g.col, t, l, place.loops))
	}
	return g
}

// run connects every loop, starts them together, and returns the run's
// Result once they have all finished.
func (g *loopGroup) run(ctx context.Context, progress func(record.Progress)) (*record.Result, error) {
	provisional := time.Now() // for the timestamps of dialing
	for _, e := range g.engines {
		e.start = provisional
	}
	for _, e := range g.engines {
		if err := e.connect(); err != nil {
			g.close()
			return nil, fmt.Errorf("cannot connect to %s: %w; is the server running (make run)?", g.t.Host, err)
		}
	}

	gate := make(chan struct{})
	var ready, loops sync.WaitGroup
	ready.Add(len(g.engines))
	for l, e := range g.engines {
		loops.Go(func() {
			pinned := g.enter(l)
			ready.Done()
			<-gate
			e.sendShare(ctx)
			if g.place.lockLoops && !pinned {
				runtime.UnlockOSThread()
			}
			// A pinned loop's goroutine ends locked, which ends its
			// thread: no goroutine runs later on a thread bound to a CPU.
		})
	}
	ready.Wait()
	start, started := waitForStart(ctx, g.cfg.StartAt)
	if !started {
		for _, e := range g.engines {
			e.stop.Store(true) // nothing is sent
		}
	}
	cpu0 := record.ProcessCPU()
	g.start = start
	g.col.Started(start)
	for _, e := range g.engines {
		e.start = start
	}
	close(gate)

	stopProgress := func() {}
	if started {
		stopProgress = record.ReportProgress(g.cfg.Progress, g.snapshot, progress)
	}
	loops.Wait()
	cpu := record.ProcessCPU().Sub(cpu0)
	stopProgress()
	g.close()
	if !started {
		return nil, fmt.Errorf("interrupted while waiting for -start-at %s: nothing was sent", g.cfg.StartAt.Format(time.RFC3339Nano))
	}
	return g.result(cpu), nil
}

// enter locks the calling goroutine to its thread where the loops lock
// theirs, and binds the thread to loop l's CPU where the run is pinned,
// reporting whether it did.
func (g *loopGroup) enter(l int) bool {
	pinned := false
	if g.place.lockLoops {
		runtime.LockOSThread()
		if g.place.pinned {
			cpus := g.place.cpus.CPUs()
			if err := pinThread(cpus[l%len(cpus)]); err != nil {
				g.pinErrs[l] = fmt.Errorf("loop %d: %w", l, err)
			} else {
				pinned = true
			}
		}
	}
	if g.cfg.OnLoop != nil {
		g.cfg.OnLoop(l)
	}
	return pinned
}

// waitForStart returns the run's start: now, or the instant at once it
// has come, after a precise sleep (a timerfd, see sleeper), with false if
// ctx ended first. The start carries the monotonic clock's reading, so
// that a step of the wall clock during the run moves no request.
func waitForStart(ctx context.Context, at time.Time) (time.Time, bool) {
	now := time.Now()
	if at.IsZero() {
		return now, true
	}
	start := now.Add(at.Sub(now))
	sl := schedule.NewSleeper()
	defer sl.Close()
	for d := time.Until(start); d > 0; d = time.Until(start) {
		if ctx.Err() != nil {
			return start, false
		}
		sl.Sleep(min(d, schedule.PacerMaxSleep)) // in slices, to notice ctx
	}
	return start, ctx.Err() == nil
}

// snapshot is the run's progress so far, summed over the loops.
func (g *loopGroup) snapshot() record.Progress {
	el := time.Since(g.start)
	p := record.Progress{Elapsed: el, Asked: g.cfg.AskedRateOver(el-g.cfg.Progress, el), Planned: g.planned()}
	for _, e := range g.engines {
		cs := e.snapshotConns()
		p.Conns += len(cs)
		for _, c := range cs {
			c.rec.AddTo(&p)
		}
	}
	return p
}

// planned is the sum of the loops' shares; MaxUint64 if unbounded.
func (g *loopGroup) planned() uint64 {
	var n uint64
	for _, e := range g.engines {
		if e.planned == math.MaxUint64 {
			return math.MaxUint64
		}
		n += e.planned
	}
	return n
}

// close drops every loop's connections once its goroutines have exited.
func (g *loopGroup) close() {
	for _, e := range g.engines {
		e.close()
	}
}

// result folds the loops into the run's Result: what every recorder fed
// the collector, and the loops' counts combined.
func (g *loopGroup) result(cpu record.CPUTime) *record.Result {
	res := &record.Result{Config: *g.cfg, Start: g.start, CPU: cpu, ConnsStart: g.cfg.Conns, Resume: math.MaxUint64, OwnLagKnown: true}
	if p := g.planned(); p != math.MaxUint64 {
		res.Planned = p
	}
	for _, e := range g.engines {
		res.OwnLagKnown = res.OwnLagKnown && e.loop != nil
		res.ConnsPeak += len(e.conns)
		if e.paced {
			res.Quantum = max(res.Quantum, e.lastQuantum())
			res.InFlightPeak += int(e.peak.Load()) // an upper bound: the peaks need not coincide
		} else {
			res.InFlightPeak += len(e.conns) // one request per connection, all busy
		}
		for _, c := range e.conns {
			if c.carried > 0 {
				res.ConnsUsed++
			}
		}
		res.Resume = min(res.Resume, e.resume())
	}
	g.col.Finish(res)
	return res
}
