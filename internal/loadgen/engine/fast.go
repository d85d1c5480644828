package engine

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// fastEngine is one loop of the default engine, over keep-alive
// connections: it sends its share of the run's requests over its share of
// the connections (see loopGroup, which runs one per loop).
//
// Open model (Rate > 0): request k of its share is due at sched.At(k),
// and is sent no sooner. On Linux the event loop (evloop) runs the share;
// elsewhere, and with the hostclient transport, the portable engine
// (portable.go) does. Either way a sender takes idle conns off the list,
// oldest idle first (every conn carries an equal share), and writes each
// its request itself. Requests are never dropped for lack of a
// connection: they wait, and the wait shows in the corrected latencies
// and in SendLag. If a request is due, no conn is idle and the oldest due
// request has waited GrowAfter, one more conn is dialled (up to the
// engine's share of MaxConns), off the sender's path. A connection the
// server closes is re-dialled before it carries another request.
//
// Closed loop (Rate == 0): each conn's goroutine sends its next request as
// soon as it has read the response to the previous one.
//
// Lock order (portable engine): mu, then a conn's wmu (a sender takes wmu
// under mu); no other lock is held with them.
type fastEngine struct {
	cfg   *config.Config
	col   *record.Collector // the run's, shared by every loop
	t     config.Target
	paced bool
	// part is this engine's share of the run's requests (see loopGroup):
	// its own requests k = 0, 1, … are the run's seq part.Seq(k); next,
	// planned and sched speak of its own requests.
	part             schedule.Share
	sched            schedule.Schedule
	planned          uint64 // requests to send; MaxUint64 if unbounded
	deadline         int64  // closed loop: no send at or after this (ns); 0 = none
	conns0, maxConns int    // its share of Config.Conns and MaxConns
	hc               *fasthttp.HostClient
	loop             *evloop // runs the open model; nil: a goroutine per connection does

	// start is the run's start, common to every engine of the run; set
	// before the engine starts sending and not changed after.
	start time.Time
	// next is the next request (of its own) to send; in the open model
	// it changes only under mu.
	next     atomic.Uint64
	stop     atomic.Bool // no new sends
	closing  atomic.Bool // the run is over: conns' goroutines exit
	inFlight atomic.Int64
	peak     atomic.Int64  // most requests in flight at once
	drained  chan struct{} // poked when inFlight reaches 0 after stop
	done     chan struct{} // closed when the run is over
	wg       sync.WaitGroup

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

// mayGrow reports whether another conn may be dialled now that waiting
// due requests are unsent, the oldest due at oldestAt: if it has waited
// GrowAfter, the cap allows, no failed dial holds growth back, and fewer
// dials are under way than requests wait. If so it counts the dial under
// way and returns the new conn's id. The caller holds mu, or is the event
// loop.
func (e *fastEngine) mayGrow(now, oldestAt int64, waiting uint64) (id int, ok bool) {
	if len(e.conns)+e.dialing >= e.maxConns || now < e.growHold ||
		time.Duration(now-oldestAt) < e.cfg.GrowAfter || uint64(e.dialing) >= waiting {
		return 0, false
	}
	e.dialing++
	return len(e.conns) + e.dialing - 1, true
}

// newLoopEngine is the engine of loop l of n: the l-th share of the
// connections and of this loader's requests.
func newLoopEngine(cfg *config.Config, col *record.Collector, t config.Target, l, n int) *fastEngine {
	e := &fastEngine{cfg: cfg, col: col, t: t, paced: cfg.Rate > 0, planned: math.MaxUint64,
		part:   cfg.Shard.Share().Split(l, n),
		conns0: evenShare(cfg.Conns, l, n), maxConns: evenShare(cfg.MaxConns, l, n),
		drained: make(chan struct{}, 1), done: make(chan struct{})}
	if e.paced {
		e.sched = cfg.Schedule().Of(e.part)
		e.planned = e.sched.Count(cfg.Duration)
	} else {
		if cfg.Requests > 0 {
			e.planned = e.part.Count(cfg.Requests)
		}
		e.deadline = int64(cfg.Duration)
	}
	if cfg.Transport == config.TransportHostClient {
		e.hc = newHostClient(t, e.maxConns, cfg.Timeout)
	}
	if e.paced && e.hc == nil && !cfg.NoEventLoop {
		// Where it cannot start, the portable engine runs instead.
		e.loop, _ = newEventLoop(e)
	}
	return e
}

// quantum is the quantum the engine's pacer starts from: Config.Quantum,
// or where that is 0 the one for its rate before any answer (the event
// loop sizes it again as answers come, see schedule.QuantumFor).
func (e *fastEngine) quantum() time.Duration {
	if e.cfg.Quantum > 0 {
		return e.cfg.Quantum
	}
	return schedule.QuantumFor(e.rate(), 0)
}

// rate is the engine's share of the schedule's highest rate, req/s (0:
// closed loop), so that the quantum sized to it holds no more than it
// should at a spike's peak, at the cost of fewer requests per wake-up
// before and after it.
func (e *fastEngine) rate() float64 {
	if !e.paced {
		return 0
	}
	return e.sched.Peak() / float64(max(e.part.Stride, 1))
}

// lastQuantum is the quantum the engine's pacer had at the end.
func (e *fastEngine) lastQuantum() time.Duration {
	if e.loop != nil {
		return e.loop.p.Quantum
	}
	return e.quantum()
}

// countSent adds k requests to those in flight and updates the peak.
func (e *fastEngine) countSent(k int) {
	v := e.inFlight.Add(int64(k))
	for p := e.peak.Load(); v > p && !e.peak.CompareAndSwap(p, v); p = e.peak.Load() {
	}
}

// evenShare is the l-th of n shares of total: total/n each, and one more
// for each of the first total%n.
func evenShare(total, l, n int) int {
	s := total / n
	if l < total%n {
		s++
	}
	return s
}

func (e *fastEngine) now() int64 { return int64(time.Since(e.start)) }

// connect opens the engine's connections before the start, so that
// dialing is not timed as part of a request.
func (e *fastEngine) connect() error {
	for i := 0; i < e.conns0; i++ {
		c := e.newConn(i)
		if e.loop != nil {
			if err := e.loop.connect(c); err != nil {
				return err
			}
			continue
		}
		e.conns = append(e.conns, c)
		if err := c.connect(); err != nil {
			return err
		}
	}
	return nil
}

// sendShare sends the engine's share of the run from e.start on, and
// returns when every goroutine of its connections has exited.
func (e *fastEngine) sendShare(ctx context.Context) {
	if e.loop != nil {
		e.loop.run(ctx)
		return
	}
	e.mu.Lock()
	for _, c := range e.conns {
		e.launch(c)
		if e.paced {
			e.idle.push(c)
		}
	}
	e.mu.Unlock()

	stopWatchdog := func() {}
	if e.hc == nil {
		stopWatchdog = e.watchdog()
	}
	if e.paced {
		e.pace(ctx)
	} else {
		stopOnCancel := context.AfterFunc(ctx, func() { e.stop.Store(true) })
		defer stopOnCancel()
	}
	e.finish()
	stopWatchdog()
}

// close releases the engine's descriptors and drops every connection
// once its goroutines have exited.
func (e *fastEngine) close() {
	if e.loop != nil {
		e.loop.close()
	}
	for _, c := range e.conns {
		if c.rt != nil {
			c.rt.close()
		}
	}
	if e.hc != nil {
		e.hc.CloseIdleConnections()
	}
}

// newConn makes the engine's i-th connection. Its key choices are seeded
// by a number no other connection of the run, or of another shard of
// its schedule, has: the run's seq of the engine's i-th request.
func (e *fastEngine) newConn(i int) *conn {
	c := &conn{
		pick: workload.NewPicker(e.cfg.Workload, e.cfg.Seed*1_000_003+e.part.Seq(uint64(i))),
		rec:  e.col.NewRecorder(),
		kick: make(chan struct{}, 1),
	}
	if e.hc != nil {
		c.hc = &hostClientConn{hc: e.hc, t: e.t, valueSize: e.cfg.Workload.ValueSize, timeout: e.cfg.Timeout}
	} else {
		c.rt = newRawConn(e.t, e.cfg.Workload.ValueSize, e.cfg.Timeout)
		if e.cfg.Client.SendDeadline {
			c.rt.deadlineMs = max(e.cfg.AttemptTimeout().Milliseconds(), 1)
		}
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
	if e.paced {
		go e.serve(c)
	} else {
		go e.closedLoop(c)
	}
}

// finish waits for every conn's goroutine to be done: in the open model,
// for the requests in flight (the watchdog bounds their wait), then it
// ends the goroutines of idle connections.
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
	e.closing.Store(true)
	for _, c := range e.snapshotConns() {
		if c.rt != nil {
			c.rt.abort()
		}
	}
	close(e.done)
	e.wg.Wait()
}

// watchdog enforces Config.Timeout on raw connections by closing the
// connection under a request that has run too long (no per-request
// timer), until the returned stop is called.
func (e *fastEngine) watchdog() (stop func()) {
	return record.Every(watchdogEvery(e.cfg.Timeout), func() {
		now := e.now()
		for _, c := range e.snapshotConns() {
			s := c.started.Load()
			if s > 0 && time.Duration(now-(s-1)) > e.cfg.Timeout && c.started.CompareAndSwap(s, abortedMark) {
				c.rt.abort()
			}
		}
	})
}

// snapshotConns returns the conns opened so far.
func (e *fastEngine) snapshotConns() []*conn {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.conns
}

// watchdogEvery is how often the watchdog looks for requests that have
// run longer than timeout.
func watchdogEvery(timeout time.Duration) time.Duration {
	return min(timeout/4, 100*time.Millisecond)
}

// resume is the lowest of the run's seq that the engine does not know to
// be done: every request of its share below it succeeded.
func (e *fastEngine) resume() uint64 {
	r := e.part.Seq(min(e.next.Load(), e.planned))
	for _, c := range e.conns {
		r = min(r, c.pending.Load())
	}
	return r
}
