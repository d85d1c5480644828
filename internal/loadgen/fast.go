package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// fastEngine is the default engine: workers, one per connection, that take
// the next request off a shared schedule, and a pacer that wakes idle
// workers when a request falls due.
//
// Open model (Rate > 0): request seq is due at sched.At(seq). A worker that
// finishes a request claims the next one itself if it is already due (one
// compare-and-swap: at high rates the workers pace themselves and the pacer
// sleeps); otherwise it parks on the idle stack, and the pacer wakes it when
// the request falls due. If a request is due and no worker is idle for
// longer than GrowAfter, the pacer opens another connection, up to MaxConns.
// Requests are never dropped for lack of a connection: they wait, and the
// wait shows in the corrected latencies and in SendLag.
//
// Closed loop (Rate == 0): workers claim requests back to back.
//
// Lock order: mu only; no other lock is held with it.
type fastEngine struct {
	cfg      *Config
	t        target
	paced    bool
	sched    schedule
	planned  uint64 // requests to send; MaxUint64 if unbounded
	deadline int64  // closed loop: no send at or after this (ns); 0 = none
	hc       *fasthttp.HostClient

	start time.Time
	next  atomic.Uint64 // next seq to claim
	stop  atomic.Bool   // no new sends
	wg    sync.WaitGroup

	mu      sync.Mutex
	workers []*worker
	idle    []*worker // parked, newest last (LIFO keeps warm connections warm)
	closed  bool      // the pacer has finished: nobody may park any more
}

// worker drives one connection; its recorder is written only by it.
type worker struct {
	rt   roundTripper
	pick *picker
	rec  *recorder
	wake chan struct{} // capacity 1: one poke per park
	// inflight is 1 + the send time (ns) of the running request, 0 when
	// idle, or abortedMark once the watchdog has aborted it.
	inflight atomic.Int64
	// pending is the seq being worked on, math.MaxUint64 when none; left
	// set when the worker gives up on it (fill's resume point).
	pending atomic.Uint64
}

const abortedMark = -1

func newFastEngine(cfg *Config, t target) *fastEngine {
	e := &fastEngine{cfg: cfg, t: t, paced: cfg.Rate > 0, planned: math.MaxUint64}
	if e.paced {
		e.sched = newSchedule(cfg.Rate)
		e.planned = e.sched.Count(cfg.Duration)
	} else {
		if cfg.Requests > 0 {
			e.planned = cfg.Requests
		}
		e.deadline = int64(cfg.Duration)
	}
	if cfg.Transport == TransportHostClient {
		e.hc = newHostClient(t, cfg.MaxConns, cfg.Timeout)
	}
	return e
}

func (e *fastEngine) now() int64 { return int64(time.Since(e.start)) }

// run sends the whole schedule and returns when every worker has exited.
func (e *fastEngine) run(ctx context.Context, progress func(Progress)) (*Result, error) {
	e.start = time.Now() // provisional, for the timestamps of dialing
	for i := 0; i < e.cfg.Conns; i++ {
		w := e.newWorker(i)
		if err := w.rt.connect(); err != nil {
			e.closeAll()
			return nil, fmt.Errorf("cannot connect to %s: %w; is the server running (make run)?", e.t.host, err)
		}
	}
	cpu0 := processCPU()
	e.start = time.Now()
	e.mu.Lock()
	for _, w := range e.workers {
		e.launch(w)
	}
	e.mu.Unlock()

	done := make(chan struct{})
	var bg sync.WaitGroup
	if e.cfg.Transport == TransportRaw {
		bg.Go(func() { e.watchdog(done) })
	}
	if progress != nil && e.cfg.Progress > 0 {
		bg.Go(func() { reportProgress(done, e.cfg.Progress, e.snapshot, progress) })
	}
	if e.paced {
		e.pace(ctx)
	} else {
		stopOnCancel := context.AfterFunc(ctx, func() { e.stop.Store(true) })
		defer stopOnCancel()
	}
	e.wg.Wait()
	cpu := processCPU().Sub(cpu0)
	close(done)
	bg.Wait()
	e.closeAll()

	res := &Result{Config: *e.cfg, Start: e.start, CPU: cpu, ConnsStart: e.cfg.Conns, ConnsPeak: len(e.workers)}
	if e.planned != math.MaxUint64 {
		res.Planned = e.planned
	}
	recs := make([]*recorder, len(e.workers))
	for i, w := range e.workers {
		recs[i] = w.rec
	}
	res.merge(recs)
	res.Resume = min(e.next.Load(), e.planned)
	for _, w := range e.workers {
		res.Resume = min(res.Resume, w.pending.Load())
	}
	return res, nil
}

func (e *fastEngine) newWorker(i int) *worker {
	var rt roundTripper
	if e.hc != nil {
		rt = newHostClientConn(e.hc, e.t, e.cfg.Workload.ValueSize, e.cfg.Timeout)
	} else {
		rt = newRawConn(e.t, e.cfg.Workload.ValueSize, e.cfg.Timeout)
	}
	w := &worker{
		rt:   rt,
		pick: newPicker(e.cfg.Workload, e.cfg.Seed*1_000_003+uint64(i)),
		rec:  newRecorder(e.cfg.KeepResults),
		wake: make(chan struct{}, 1),
	}
	w.pending.Store(math.MaxUint64)
	e.mu.Lock()
	e.workers = append(e.workers, w)
	e.mu.Unlock()
	return w
}

// launch starts w's goroutine. The caller holds mu.
func (e *fastEngine) launch(w *worker) {
	e.wg.Add(1)
	go e.work(w)
}

// grow opens one more connection if the cap allows; it reports whether it
// did. The new worker dials before it claims a request.
func (e *fastEngine) grow() bool {
	e.mu.Lock()
	n := len(e.workers)
	e.mu.Unlock()
	if n >= e.cfg.MaxConns {
		return false
	}
	w := e.newWorker(n)
	e.mu.Lock()
	e.launch(w)
	e.mu.Unlock()
	return true
}

func (e *fastEngine) work(w *worker) {
	defer e.wg.Done()
	_ = w.rt.connect() // a failure here shows as the first request's error
	var o outcome
	for {
		seq, ok := e.claim(w)
		if !ok {
			return
		}
		w.pending.Store(seq)
		op, key := w.pick.next(seq)
		for attempt := 0; ; attempt++ {
			o = outcome{seq: seq, key: key, op: op}
			o.bytesOut = w.rt.prepare(op, key)
			o.sent = e.now()
			if e.deadline > 0 && o.sent >= e.deadline {
				return // closed loop: nothing is sent at or after Duration
			}
			o.intended = o.sent
			if e.paced {
				o.intended = min(e.sched.At(seq), o.sent)
			}
			w.inflight.Store(o.sent + 1)
			o.code, o.bytesIn, o.err = w.rt.roundTrip()
			o.end = e.now()
			if w.inflight.Swap(0) == abortedMark {
				w.rt.discard()
				if o.err != nil {
					o.err = errTimeout
				}
			}
			if o.err != nil && isDialError(o.err) && !e.paced {
				// Nothing listens: do not spin a closed loop on refusals.
				time.Sleep(10 * time.Millisecond)
			}
			if attempt >= e.cfg.Retries || failure(&o) == "" || e.stop.Load() {
				break
			}
			time.Sleep(time.Duration(attempt+1) * 10 * time.Millisecond)
		}
		w.rec.add(&o)
		if failure(&o) == "" {
			w.pending.Store(math.MaxUint64)
		} else if e.cfg.Retries > 0 {
			return // fill: keep pending as the resume point, stop this worker
		}
	}
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// claim returns the next request w may send, waiting (parked) until it is
// due, or false when the run is over for w.
func (e *fastEngine) claim(w *worker) (uint64, bool) {
	for {
		if e.stop.Load() {
			return 0, false
		}
		if !e.paced {
			if e.deadline > 0 && e.now() >= e.deadline {
				return 0, false
			}
			n := e.next.Add(1) - 1
			return n, n < e.planned
		}
		n := e.next.Load()
		if n >= e.planned {
			return 0, false
		}
		if e.sched.At(n) <= e.now() {
			if e.next.CompareAndSwap(n, n+1) {
				return n, true
			}
			continue
		}
		if !e.park(w) {
			continue // the pacer has finished; re-check and leave
		}
	}
}

// park puts w on the idle stack and waits for the pacer. It returns false
// without waiting once the pacer has finished (nobody would wake w).
func (e *fastEngine) park(w *worker) bool {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return false
	}
	e.idle = append(e.idle, w)
	e.mu.Unlock()
	<-w.wake
	return true
}

// wakeIdle wakes up to n parked workers and returns how many it woke.
func (e *fastEngine) wakeIdle(n int) int {
	e.mu.Lock()
	k := min(n, len(e.idle))
	for i := 0; i < k; i++ {
		last := len(e.idle) - 1
		e.idle[last].wake <- struct{}{}
		e.idle[last] = nil
		e.idle = e.idle[:last]
	}
	e.mu.Unlock()
	return k
}

// pacer timing: how long it sleeps at most (to notice cancellation and
// finish promptly), and how often it looks at a backlog that busy workers
// are working off by themselves.
const (
	pacerMaxSleep     = 50 * time.Millisecond
	pacerBacklogSleep = time.Millisecond
)

// pace wakes idle workers as requests fall due until every request is
// claimed, the context is cancelled, or requests are still queued Timeout
// after the schedule ended; then it releases every parked worker.
func (e *fastEngine) pace(ctx context.Context) {
	sl := newSleeper()
	defer sl.Close()
	drainBy := int64(e.cfg.Duration + e.cfg.Timeout)
	for {
		n := e.next.Load()
		if n >= e.planned {
			break
		}
		now := e.now()
		if ctx.Err() != nil || now > drainBy {
			e.stop.Store(true)
			break
		}
		due := min(e.sched.DueBy(now), e.planned)
		wait := pacerMaxSleep
		if due > n {
			backlog := int(due - n)
			woken := e.wakeIdle(backlog)
			if woken < backlog {
				// Every worker is busy; they claim due requests as they
				// finish. Open another connection if the oldest due
				// request has waited too long.
				if time.Duration(now-e.sched.At(n)) > e.cfg.GrowAfter {
					e.grow()
				}
				wait = pacerBacklogSleep
			}
		}
		if due < e.planned {
			wait = min(wait, time.Duration(e.sched.At(due)-e.now()))
		}
		sl.Sleep(max(wait, e.cfg.PacerMinSleep))
	}
	e.mu.Lock()
	e.closed = true
	for _, w := range e.idle {
		w.wake <- struct{}{}
	}
	e.idle = nil
	e.mu.Unlock()
}

// watchdog enforces Config.Timeout on raw connections by closing the
// connection under a request that has run too long (no per-request timer).
func (e *fastEngine) watchdog(done <-chan struct{}) {
	every(done, min(e.cfg.Timeout/4, 100*time.Millisecond), func() {
		now := e.now()
		for _, w := range e.snapshotWorkers() {
			s := w.inflight.Load()
			if s > 0 && time.Duration(now-(s-1)) > e.cfg.Timeout && w.inflight.CompareAndSwap(s, abortedMark) {
				w.rt.abort()
			}
		}
	})
}

// snapshot is the run's progress so far, read from the workers' live
// counters while they run.
func (e *fastEngine) snapshot() Progress {
	ws := e.snapshotWorkers()
	p := Progress{Elapsed: time.Duration(e.now()), Asked: e.cfg.Rate, Conns: len(ws), Planned: e.planned}
	for _, w := range ws {
		w.rec.live.AddTo(&p.live)
		p.Errors += w.rec.errCount.Load()
	}
	return p
}

// snapshotWorkers returns the workers started so far.
func (e *fastEngine) snapshotWorkers() []*worker {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.workers
}

// closeAll drops every connection once the workers have exited.
func (e *fastEngine) closeAll() {
	for _, w := range e.workers {
		w.rt.discard()
	}
	if e.hc != nil {
		e.hc.CloseIdleConnections()
	}
}
