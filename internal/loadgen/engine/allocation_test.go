//go:build !race

// The race detector allocates on its own; these counts hold without it.

package engine

import (
	"math"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/stretchr/testify/require"
)

// allocEngine is newAllocEngine with one connection, for driving its send
// and receive path by hand.
func allocEngine(t *testing.T, rate float64) (*fastEngine, *conn) {
	t.Helper()
	e := newAllocEngine(t, rate)
	e.start = time.Now()
	c := e.newConn(0)
	require.NoError(t, c.connect())
	t.Cleanup(c.rt.close)
	e.conns = []*conn{c}
	return e, c
}

// The open model's path of one request allocates nothing: a sender takes
// the idle conn, prepares and writes the request; the conn's goroutine
// reads the response, records it and puts the conn back.
func TestOpenModelRequestAllocatesNothing(t *testing.T) {
	e, c := allocEngine(t, 1000)
	e.stop.Store(true) // dispatch only puts the conn back, sends nothing
	e.idle.push(c)
	var seq uint64
	allocs := testing.AllocsPerRun(1000, func() {
		e.mu.Lock()
		got := e.idle.pop()
		got.wmu.Lock()
		e.countSent(1)
		e.mu.Unlock()
		e.send(got, seq)
		seq++
		e.conclude(got, got.rt.awaitResponse())
		e.settle(got)
	})
	require.Zero(t, allocs, "allocations per request")
	require.Zero(t, c.rec.ErrCount.Load(), "every request was answered")
	require.Equal(t, int64(1001), c.carried, "AllocsPerRun's warm-up and 1000 runs")
}

// The closed loop's path allocates nothing either.
func TestClosedLoopRequestAllocatesNothing(t *testing.T) {
	e, c := allocEngine(t, 0)
	e.planned = math.MaxUint64
	var seq uint64
	allocs := testing.AllocsPerRun(1000, func() {
		op, key := c.pick.Next(seq)
		c.o = record.Outcome{Seq: seq, Key: key, Op: op}
		c.o.BytesOut = c.rt.prepare(op, key)
		c.o.Sent = e.now()
		c.o.Intended = c.o.Sent
		e.exchange(c)
		c.record()
		seq++
	})
	require.Zero(t, allocs, "allocations per request")
	require.Zero(t, c.rec.ErrCount.Load(), "every request was answered")
}

// A request with both client headers (the deadline, a retry's attempt
// number) is built in the conn's buffer without allocating.
func TestClientHeadersAllocateNothing(t *testing.T) {
	_, c := allocEngine(t, 1000)
	c.rt.deadlineMs, c.rt.attemptNo = 250, 3
	var key uint64
	allocs := testing.AllocsPerRun(1000, func() {
		c.rt.prepare(c.pick.Next(key))
		key++
	})
	require.Zero(t, allocs, "allocations per request")
	require.Contains(t, string(c.rt.req), "\r\nX-Envoy-Attempt-Count: 3\r\n")
}
