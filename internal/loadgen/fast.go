package loadgen

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// fastEngine is the default engine, over keep-alive connections.
//
// Open model (Rate > 0): request seq is due at sched.At(seq), and is sent
// no sooner. On Linux the event loop (evloop) runs the whole schedule from
// one goroutine. Elsewhere, and with the hostclient transport, the
// portable engine below does: each conn has a goroutine that reads its
// responses, and whichever goroutine is awake sends what is due: the
// pacer when it wakes (at most once a quantum, see pacer), and a conn's
// goroutine when it has recorded a response and put its conn back on the
// idle list. Either way a sender takes idle conns off the list, oldest
// idle first (every conn carries an equal share), and writes each its
// request itself: no hand-off per request. Requests are never dropped for
// lack of a connection: they wait, and the wait shows in the corrected
// latencies and in SendLag. If a request is due, no conn is idle and the
// oldest due request has waited GrowAfter, a goroutine dials one more conn
// (up to MaxConns), off the sender's path. A connection the server closes
// is re-dialled before it carries another request.
//
// Closed loop (Rate == 0): each conn's goroutine sends its next request as
// soon as it has read the response to the previous one.
//
// Lock order (portable engine): mu, then a conn's wmu (a sender takes wmu
// under mu); no other lock is held with them.
type fastEngine struct {
	cfg      *Config
	t        target
	paced    bool
	sched    schedule
	planned  uint64 // requests to send; MaxUint64 if unbounded
	deadline int64  // closed loop: no send at or after this (ns); 0 = none
	hc       *fasthttp.HostClient
	// loop, if not nil, runs the open model (see evloop); otherwise a
	// goroutine per connection does (the portable engine, and the one
	// for hostclient).
	loop *evloop

	start time.Time
	// next is the next seq to send; in the open model it changes only
	// under mu.
	next       atomic.Uint64
	stop       atomic.Bool // no new sends
	closing    atomic.Bool // the run is over: conns' goroutines exit
	inFlight   atomic.Int64
	peak       atomic.Int64 // most requests in flight at once
	reconnects atomic.Int64
	drained    chan struct{} // poked when inFlight reaches 0 after stop
	done       chan struct{} // closed when the run is over
	wg         sync.WaitGroup

	// Guarded by mu. The event loop appends to conns under mu (for
	// snapshot) and owns dialing and growHold outright.
	mu       sync.Mutex
	conns    []*conn
	idle     idleList // the portable engine's (the loop keeps its own)
	dialing  int      // growth dials under way
	growHold int64    // no growth dial before this (ns): the last one failed
}

// growRetryAfter is how long growth waits after a failed dial.
const growRetryAfter = 10 * time.Millisecond

func newFastEngine(cfg *Config, t target) *fastEngine {
	e := &fastEngine{cfg: cfg, t: t, paced: cfg.Rate > 0, planned: math.MaxUint64,
		drained: make(chan struct{}, 1), done: make(chan struct{})}
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
	if e.paced && e.hc == nil && !cfg.noEventLoop {
		// Where it cannot start, the portable engine runs instead.
		e.loop, _ = newEventLoop(e)
	}
	return e
}

func (e *fastEngine) now() int64 { return int64(time.Since(e.start)) }

// run sends the whole schedule and returns when every conn's goroutine
// has exited.
func (e *fastEngine) run(ctx context.Context, progress func(Progress)) (*Result, error) {
	e.start = time.Now() // provisional, for the timestamps of dialing
	for i := 0; i < e.cfg.Conns; i++ {
		c := e.newConn(i)
		var err error
		if e.loop != nil {
			err = e.loop.connect(c)
		} else {
			e.conns = append(e.conns, c)
			err = c.connect()
		}
		if err != nil {
			if e.loop != nil {
				e.loop.close()
			}
			e.closeAll()
			return nil, fmt.Errorf("cannot connect to %s: %w; is the server running (make run)?", e.t.host, err)
		}
	}
	cpu0 := processCPU()
	e.start = time.Now()
	if e.loop != nil {
		return e.runLoop(ctx, progress, cpu0)
	}
	e.mu.Lock()
	for _, c := range e.conns {
		e.launch(c)
		if e.paced {
			e.idle.push(c)
		}
	}
	e.mu.Unlock()

	done := make(chan struct{})
	var bg sync.WaitGroup
	if e.hc == nil {
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
	e.finish()
	cpu := processCPU().Sub(cpu0)
	close(done)
	bg.Wait()
	e.closeAll()
	return e.result(cpu), nil
}

// runLoop runs the open model on the event loop.
func (e *fastEngine) runLoop(ctx context.Context, progress func(Progress), cpu0 CPUTime) (*Result, error) {
	done := make(chan struct{})
	var bg sync.WaitGroup
	if progress != nil && e.cfg.Progress > 0 {
		bg.Go(func() { reportProgress(done, e.cfg.Progress, e.snapshot, progress) })
	}
	e.loop.run(ctx)
	cpu := processCPU().Sub(cpu0)
	close(done)
	bg.Wait()
	e.loop.close()
	e.closeAll()
	return e.result(cpu), nil
}

func (e *fastEngine) newConn(i int) *conn {
	c := &conn{
		pick: newPicker(e.cfg.Workload, e.cfg.Seed*1_000_003+uint64(i)),
		rec:  newRecorder(e.cfg),
		kick: make(chan struct{}, 1),
	}
	if e.hc != nil {
		c.hc = newHostClientConn(e.hc, e.t, e.cfg.Workload.ValueSize, e.cfg.Timeout)
	} else {
		c.rt = newRawConn(e.t, e.cfg.Workload.ValueSize, e.cfg.Timeout)
	}
	c.pending.Store(math.MaxUint64)
	c.ev.slot, c.ev.fd = -1, -1
	return c
}

// connect opens c's connection before c carries requests, so that dialing
// is not timed as part of a request.
func (c *conn) connect() error {
	if c.rt == nil {
		return nil // HostClient dials by itself
	}
	return c.rt.dial()
}

// launch starts c's goroutine. The caller holds mu.
func (e *fastEngine) launch(c *conn) {
	e.wg.Add(1)
	switch {
	case !e.paced:
		go e.closedLoop(c)
	case c.hc != nil:
		go e.serveHandedOff(c)
	default:
		go e.serve(c)
	}
}

// finish waits for every conn's goroutine to be done: in the open model,
// for the requests in flight (the watchdog bounds their wait), then it
// ends the goroutines waiting on idle connections.
func (e *fastEngine) finish() {
	if !e.paced {
		e.wg.Wait()
		return
	}
	e.mu.Lock()
	e.stop.Store(true) // under mu: no sender is between claim and count
	e.mu.Unlock()
	for e.inFlight.Load() != 0 {
		<-e.drained
	}
	e.mu.Lock()
	e.closing.Store(true)
	conns := e.conns
	e.mu.Unlock()
	for _, c := range conns {
		if c.rt != nil {
			c.rt.abort()
		}
	}
	close(e.done)
	e.wg.Wait()
}

// watchdog enforces Config.Timeout on raw connections by closing the
// connection under a request that has run too long (no per-request timer).
func (e *fastEngine) watchdog(done <-chan struct{}) {
	every(done, min(e.cfg.Timeout/4, 100*time.Millisecond), func() {
		now := e.now()
		for _, c := range e.snapshotConns() {
			s := c.started.Load()
			if s > 0 && time.Duration(now-(s-1)) > e.cfg.Timeout && c.started.CompareAndSwap(s, abortedMark) {
				c.rt.abort()
			}
		}
	})
}

// snapshot is the run's progress so far, read from the conns' live
// counters while they run.
func (e *fastEngine) snapshot() Progress {
	cs := e.snapshotConns()
	p := Progress{Elapsed: time.Duration(e.now()), Asked: e.cfg.Rate, Conns: len(cs), Planned: e.planned}
	for _, c := range cs {
		c.rec.live.AddTo(&p.live)
		p.Errors += c.rec.errCount.Load()
	}
	return p
}

// snapshotConns returns the conns opened so far.
func (e *fastEngine) snapshotConns() []*conn {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.conns
}

// closeAll drops every connection once the goroutines have exited.
func (e *fastEngine) closeAll() {
	for _, c := range e.conns {
		if c.rt != nil {
			c.rt.close()
		}
	}
	if e.hc != nil {
		e.hc.CloseIdleConnections()
	}
}

// result folds the conns' recorders into the run's Result.
func (e *fastEngine) result(cpu CPUTime) *Result {
	res := &Result{Config: *e.cfg, Start: e.start, CPU: cpu, ConnsStart: e.cfg.Conns, ConnsPeak: len(e.conns),
		Reconnects: e.reconnects.Load(), InFlightPeak: int(e.peak.Load())}
	if e.planned != math.MaxUint64 {
		res.Planned = e.planned
	}
	recs := make([]*recorder, len(e.conns))
	for i, c := range e.conns {
		recs[i] = c.rec
		if c.carried > 0 {
			res.ConnsUsed++
		}
	}
	res.merge(recs)
	res.Resume = min(e.next.Load(), e.planned)
	for _, c := range e.conns {
		res.Resume = min(res.Resume, c.pending.Load())
	}
	if !e.paced {
		res.InFlightPeak = len(e.conns) // one request per connection, all busy
	}
	return res
}
