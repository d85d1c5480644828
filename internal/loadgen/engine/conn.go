package engine

import (
	"sync"
	"sync/atomic"

	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// conn is one connection of the fast engine with what goes with it: the
// picker and recorder of the requests it carries, the request in flight,
// and its place on the engine's idle list.
//
// Ownership in the open model: a conn is idle (on the idle list, guarded
// by the engine's mu), or owned by the sender that took it off the list,
// until the request is written; from then on its goroutine owns it, until
// the response is recorded and the conn is back on the list. Only the
// watchdog (started, rt.abort) reaches in at any time. In the closed loop
// the goroutine owns its conn throughout.
type conn struct {
	rt   *rawConn // nil with the hostclient transport
	hc   *hostClientConn
	pick *workload.Picker
	rec  *record.Recorder // written only by this conn's goroutine

	// o is the request in flight: filled by its sender, completed and
	// recorded by the conn's goroutine.
	o record.Outcome

	// started is 1 + the send time (ns) of the request in flight, 0 when
	// none, or abortedMark once the watchdog has aborted it. The sender's
	// store of it, made before the write, publishes o to the reader.
	started atomic.Int64

	// wmu is held by whoever writes to the connection or replaces it. A
	// sender takes it before it lets go of the engine's mu, so a reader
	// that finds its conn gone from the idle list can wait for the write
	// to end before it looks at what happened.
	wmu sync.Mutex

	// kick hands a request to the conn's goroutine instead of writing it:
	// a dead conn dials first, off the sender's path, and the hostclient
	// transport only does whole round trips.
	kick chan struct{}

	served  int   // responses on the current TCP connection; goroutine-owned
	carried int64 // requests recorded; goroutine-owned, read after the run

	// pending is the seq being worked on in the closed loop, MaxUint64
	// when none; left set when a fill gives up on it (Result.Resume).
	pending atomic.Uint64

	// dead: not connected, the last dial failed. Written by the conn's
	// goroutine while it owns the conn, read by the sender that takes it.
	dead bool

	// The idle list (FIFO), guarded by the engine's mu.
	idle               bool
	prevIdle, nextIdle *conn

	ev loopConn // the event loop's state of c (Linux, open model)
}

// loopConn is what the event loop keeps per connection; only the loop's
// goroutine touches it.
type loopConn struct {
	slot       int    // index in fastEngine.conns; -1 until first connected
	fd         int    // the socket; -1 when not connected
	rbuf       []byte // response bytes read so far: rbuf[:rn]
	rn         int
	unwritten  []byte // the rest of a request the socket could not take yet
	busy       bool   // a request is in flight (or waits for the dial)
	retried    bool   // the request in flight was resent once
	waiting    bool   // the request in flight waits for the dial to be sent
	retryAfter int    // of the response just read, for evloop.decide
	dialing    bool
	// connecting: the loop's own connect of cfd is under way, since
	// connSince (ns); fd is -1 until it is done.
	connecting bool
	cfd        int
	connSince  int64
}

// record records c's request; on c's goroutine only.
func (c *conn) record() {
	c.rec.Add(&c.o)
	c.carried++
}

// prepare builds the request of c.o (its operation and key) on c's
// transport and counts its body.
func (c *conn) prepare() {
	if c.rt != nil {
		c.o.BytesOut = c.rt.prepare(c.o.Op, c.o.Key)
	} else {
		c.o.BytesOut = c.hc.prepare(c.o.Op, c.o.Key)
	}
}

// abortedMark in conn.started: the watchdog has aborted the request.
const abortedMark = -1

// finish ends c's request in flight at end (ns since the start) with err,
// on c's goroutine: a request the watchdog aborted fails as a timeout,
// whatever the aborted read said. It returns the error it recorded.
func (c *conn) finish(end int64, err error) error {
	c.o.End = end
	if c.started.Swap(0) == abortedMark && err != nil {
		err = record.ErrTimeout
	}
	c.o.Err = err
	if err != nil {
		c.o.Code = 0
	}
	return err
}

// idleList is a FIFO of idle connections: the one idle longest is used
// first, so every connection carries an equal share, and a conn can
// leave the list from the middle (its server closed it). Guarded by the
// engine's mu, or owned by the event loop.
type idleList struct {
	head, tail *conn
	n          int
}

func (l *idleList) push(c *conn) {
	c.idle = true
	c.prevIdle, c.nextIdle = l.tail, nil
	if l.tail != nil {
		l.tail.nextIdle = c
	} else {
		l.head = c
	}
	l.tail = c
	l.n++
}

func (l *idleList) pop() *conn {
	c := l.head
	if c != nil {
		l.remove(c)
	}
	return c
}

func (l *idleList) remove(c *conn) {
	if c.prevIdle != nil {
		c.prevIdle.nextIdle = c.nextIdle
	} else {
		l.head = c.nextIdle
	}
	if c.nextIdle != nil {
		c.nextIdle.prevIdle = c.prevIdle
	} else {
		l.tail = c.prevIdle
	}
	c.prevIdle, c.nextIdle, c.idle = nil, nil, false
	l.n--
}
