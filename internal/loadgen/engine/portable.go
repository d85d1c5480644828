package engine

import (
	"context"
	"errors"

	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

// The portable open-model engine, where the event loop does not run
// (other platforms, the hostclient transport): each conn has a goroutine
// that reads its responses, and whichever goroutine is awake sends what
// is due: the pacer when it wakes (at most once a quantum), and a conn's
// goroutine when it has recorded a response and put its conn back on the
// idle list.

// dispatchBatch bounds the conns one sender takes off the idle list per
// hold of mu, so that others waiting for mu are not kept long.
const dispatchBatch = 16

// errClosedIdle: the server closed (or answered unasked on) an idle
// connection just as a request was written to it.
var errClosedIdle = errors.New("server closed the idle connection")

// pace runs the pacer until every request is sent, the context is
// cancelled, or requests are still unsent Timeout after the schedule
// ended.
func (e *fastEngine) pace(ctx context.Context) {
	sl := schedule.NewSleeper()
	defer sl.Close()
	drainBy := int64(e.cfg.Duration + e.cfg.Timeout)
	// The portable engine keeps its first quantum: only the event loop
	// sizes it again as the run goes.
	p := schedule.Pacer{Sched: e.sched, Planned: e.planned, Quantum: e.quantum(), Now: e.now, Sleep: sl.Sleep}
	p.Run(func(now int64) bool {
		return ctx.Err() != nil || now > drainBy
	}, func(now int64) uint64 {
		return e.dispatch(nil, now)
	})
}

// dispatch puts release (if not nil) back on the idle list, then sends
// every request due at now that an idle conn can take, and returns the
// first request still unsent. Only requests due at now are sent.
func (e *fastEngine) dispatch(release *conn, now int64) uint64 {
	var batch [dispatchBatch]*conn
	for {
		e.mu.Lock()
		if release != nil {
			e.idle.push(release)
			release = nil
		}
		n := e.next.Load()
		if e.stop.Load() || n >= e.planned || e.sched.At(n) > now {
			e.mu.Unlock()
			return n
		}
		due := min(e.sched.DueBy(now), e.planned)
		k := 0
		for n+uint64(k) < due && k < len(batch) {
			c := e.idle.pop()
			if c == nil {
				break
			}
			c.wmu.Lock()
			batch[k] = c
			k++
		}
		if k > 0 {
			e.next.Store(n + uint64(k))
			e.countSent(k)
		}
		if oldest := n + uint64(k); oldest < due && k < len(batch) {
			if id, ok := e.mayGrow(now, e.sched.At(oldest), due-oldest); ok {
				go e.grow(id)
			}
		}
		e.mu.Unlock()
		for i := range k {
			e.send(batch[i], n+uint64(i))
			batch[i] = nil
		}
		if k < len(batch) {
			return n + uint64(k)
		}
	}
}

// settle records c's request, takes it off those in flight (telling
// finish when the last one after stop is done) and puts c back to work;
// on c's goroutine.
func (e *fastEngine) settle(c *conn) {
	c.record()
	if e.inFlight.Add(-1) == 0 && e.stop.Load() {
		select {
		case e.drained <- struct{}{}:
		default:
		}
	}
	e.dispatch(c, c.o.End)
}

// send writes the engine's request k on c, which the caller took off the
// idle list and whose wmu it holds; send releases wmu. A dead conn or a
// hostclient conn gets the request, prepared, handed to its goroutine
// instead.
func (e *fastEngine) send(c *conn, k uint64) {
	seq := e.sched.Seq(k)
	op, key := c.pick.Next(seq)
	c.o = record.Outcome{Seq: seq, Key: key, Op: op, Intended: e.sched.At(k)}
	c.prepare()
	if c.dead || c.rt == nil {
		c.wmu.Unlock()
		c.kick <- struct{}{}
		return
	}
	// A failed write closes the connection; c's goroutine then finds
	// nothing to read and deals with it.
	_ = e.writeNow(c)
	c.wmu.Unlock()
}

// grow dials a new conn and, once connected, puts it to work.
func (e *fastEngine) grow(id int) {
	c := e.newConn(id)
	err := c.connect()
	e.mu.Lock()
	e.dialing--
	if err != nil || e.stop.Load() {
		if err != nil {
			e.growHold = e.now() + int64(growRetryAfter)
		}
		e.mu.Unlock()
		if c.rt != nil {
			c.rt.close()
		}
		return
	}
	e.conns = append(e.conns, c)
	e.launch(c)
	e.idle.push(c)
	e.mu.Unlock()
	e.dispatch(nil, e.now())
}

// serve is the goroutine of a conn in the open model. A live raw conn
// waits on its socket for the response to what a sender wrote on it; a
// hostclient conn, and a dead raw one, wait for their request to be
// handed to them.
func (e *fastEngine) serve(c *conn) {
	defer e.wg.Done()
	for {
		if c.dead || c.hc != nil {
			select {
			case <-c.kick:
			case <-e.done:
				return
			}
			if c.hc != nil {
				c.o.Sent = e.now()
				e.exchange(c)
				e.settle(c)
				continue
			}
			// The request was handed to dead c: dial, and write it.
			if err := e.resend(c); isDialError(err) {
				// The request fails with the dial's error; c goes back
				// on the idle list, still dead. (A failed write shows in
				// the wait for the response.)
				c.o.Sent = e.now()
				c.o.End, c.o.Err = c.o.Sent, err
				e.settle(c)
				continue
			}
		}
		err := c.rt.awaitResponse()
		if c.started.Load() == 0 {
			// Nothing was in flight: the run is over, or the server closed
			// the idle connection (or sent what was not asked for).
			if e.closing.Load() {
				return
			}
			e.mu.Lock()
			reclaimed := c.idle // c is still on the idle list: take it off
			if reclaimed {
				e.idle.remove(c)
			}
			e.mu.Unlock()
			if reclaimed {
				_ = e.reconnect(c)
				if e.closing.Load() {
					return
				}
				e.dispatch(c, e.now())
				continue
			}
			// A sender took c meanwhile and writes (or wrote) a request
			// on a connection that the server had closed: once the write
			// is over, send it again on a fresh connection.
			c.wmu.Lock()
			//lint:ignore SA2001 an empty critical section waits for the writer
			c.wmu.Unlock()
			err = errClosedIdle
		}
		e.conclude(c, err)
		e.settle(c)
	}
}

// conclude ends c's request in flight, whose write or wait for the
// response failed with err, or (err nil) whose response has begun to
// arrive, on c's goroutine: it reads the response into c.o. Where nothing
// came back on a connection that had served before (or on an idle one
// the server closed, errClosedIdle), the server closed it while idle as
// the request went out: the request is sent again, once, on a fresh
// connection (GET, PUT and DELETE are idempotent), as HTTP clients do.
// Then it replaces the connection where the request failed or the server
// closes it after the response; where a dial has just failed, it leaves
// it closed, to be dialled again with c's next request.
func (e *fastEngine) conclude(c *conn, err error) {
	if err != nil && (c.served > 0 || err == errClosedIdle) && c.started.Load() != abortedMark {
		if err = e.resend(c); err == nil {
			err = c.rt.awaitResponse()
		}
	}
	closeAfter := false
	if err == nil {
		c.o.Code, c.o.BytesIn, closeAfter, err = c.rt.readResponse()
	}
	switch err = c.finish(e.now(), err); {
	case err != nil && isDialError(err):
		// Leave it closed: the next request dials again.
	case err != nil || closeAfter:
		_ = e.reconnect(c)
	default:
		c.served++
	}
}

// reconnect replaces c's connection and counts the reconnect; if the
// dial fails, c is dead and dials again when it next gets a request. The
// caller owns c's reading side.
func (e *fastEngine) reconnect(c *conn) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.served = 0
	err := c.rt.dial()
	if err == nil {
		e.col.Reconnected(e.now())
	}
	c.dead = err != nil
	return err
}

// resend writes c's prepared request on a new connection, returning the
// dial's or the write's error.
func (e *fastEngine) resend(c *conn) error {
	if err := e.reconnect(c); err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return e.writeNow(c)
}

// writeNow writes c's prepared request, sent now.
func (e *fastEngine) writeNow(c *conn) error {
	c.o.Sent = e.now()
	c.started.Store(c.o.Sent + 1)
	return c.rt.write()
}
