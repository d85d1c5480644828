package engine

import (
	"errors"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"math"
	"net"
	"time"
)

// closedLoop is the goroutine of a conn in the closed loop: it claims the
// engine's next request, sends it and waits for the response, until the
// count or the time is up.
func (e *fastEngine) closedLoop(c *conn) {
	defer e.wg.Done()
	o := &c.o
	for {
		if e.stop.Load() || e.deadline > 0 && e.now() >= e.deadline {
			return
		}
		n := e.next.Add(1) - 1
		if n >= e.planned {
			return
		}
		seq := e.part.Seq(n)
		c.pending.Store(seq)
		op, key := c.pick.Next(seq)
		for attempt := 0; ; attempt++ {
			*o = record.Outcome{Seq: seq, Key: key, Op: op}
			c.prepare()
			o.Sent = e.now()
			if e.deadline > 0 && o.Sent >= e.deadline {
				return // nothing is sent at or after Duration
			}
			o.Intended = o.Sent
			e.exchange(c)
			if o.Err != nil && isDialError(o.Err) {
				// Nothing listens: do not spin on refusals.
				time.Sleep(10 * time.Millisecond)
			}
			if attempt >= e.cfg.Retries || record.Failure(o) == "" || e.stop.Load() {
				break
			}
			time.Sleep(time.Duration(attempt+1) * 10 * time.Millisecond)
		}
		c.record()
		if record.Failure(o) == "" {
			c.pending.Store(math.MaxUint64)
		} else if e.cfg.Retries > 0 {
			return // fill: keep pending as the resume point, stop this conn
		}
	}
}

// exchange sends c's prepared request and reads the response into c.o,
// on c's goroutine (the closed loop, and a hostclient conn in the open
// model).
func (e *fastEngine) exchange(c *conn) {
	o := &c.o
	if c.rt == nil {
		o.Code, o.BytesIn, o.Err = c.hc.roundTrip()
		o.End = e.now()
		return
	}
	var err error
	if c.rt.conn == nil {
		// The last reconnect failed: dial as part of this request.
		c.served = 0
		err = c.rt.dial()
	}
	if err == nil {
		c.started.Store(o.Sent + 1)
		if err = c.rt.write(); err == nil {
			err = c.rt.awaitResponse()
		}
	}
	e.conclude(c, err)
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
