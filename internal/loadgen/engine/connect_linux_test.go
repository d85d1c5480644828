//go:build linux

package engine

import (
	"net"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// waitDialed runs the loop's event handling until c's dial is done: the
// loop's own connect reports on the epoll set, a failed one through the
// dial channel's eventfd.
func waitDialed(t *testing.T, l *evloop, c *conn) {
	t.Helper()
	for c.ev.dialing {
		l.handle(l.wait(l.epfd, time.Second))
	}
}

// goneAway points l's own connects at a port of 127.0.0.1 nothing
// listens on any more: they are refused.
func goneAway(t *testing.T, l *evloop) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	l.sa, l.family = &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}, unix.AF_INET
}

// A connection re-dialled by the loop's own non-blocking connect carries
// requests as a dialled one does, and counts as a reconnect; a connect
// the target refuses leaves the conn dead (its next request dials again),
// with nothing under way and no reconnect counted.
func TestEventLoopReconnectsByItsOwnConnect(t *testing.T) {
	e := newAllocEngine(t, 1000)
	l := e.loop
	require.NotNil(t, l)
	t.Cleanup(l.close)
	require.NoError(t, l.connect(e.newConn(0)))
	require.NotNil(t, l.sa, "the first connection's address, for the loop's own connects")
	assert.Equal(t, e.t.Host, l.addr.String())
	e.start = time.Now()
	c := e.conns[0]

	send := func(seq uint64) {
		t.Helper()
		l.send(c, attempt{at: e.sched.At(seq), seq: e.sched.Seq(seq)})
		for c.ev.busy {
			l.handle(l.wait(l.epfd, time.Second))
		}
	}
	send(0)
	l.drop(c)
	l.dial(c)
	assert.True(t, c.ev.connecting, "the loop connects the socket itself, in its epoll set")
	waitDialed(t, l, c)
	require.False(t, c.dead)
	require.GreaterOrEqual(t, c.ev.fd, 0)
	assert.Zero(t, l.dialing)
	assert.Same(t, c, l.idle.pop(), "connected and idle")
	send(1)
	assert.Equal(t, int64(2), c.carried)
	assert.Zero(t, c.rec.ErrCount.Load(), "both requests answered")

	// The target goes away: its port refuses.
	goneAway(t, l)
	l.drop(c)
	l.dial(c)
	waitDialed(t, l, c)
	assert.True(t, c.dead, "its next request dials again")
	assert.False(t, c.ev.connecting)
	assert.Equal(t, -1, c.ev.fd)
	assert.Zero(t, l.dialing)
	res := &record.Result{}
	e.col.Finish(res)
	assert.Equal(t, int64(1), res.Reconnects, "the first connect is a reconnect, a failed one none")
}

// A request sent on a conn whose connect is refused fails as a dial
// error, described as one kind of error whatever the port.
func TestEventLoopRefusedConnectFailsTheRequest(t *testing.T) {
	e, l, c := connectedLoop(t)
	goneAway(t, l)
	l.drop(c)
	c.dead = true

	l.send(c, attempt{at: e.sched.At(0), seq: e.sched.Seq(0)})
	for c.ev.busy {
		l.handle(l.wait(l.epfd, time.Second))
	}
	assert.Equal(t, int64(1), c.rec.ErrCount.Load())
	assert.Equal(t, int64(1), c.carried)
	assert.True(t, isDialError(c.o.Err), "%v", c.o.Err)
	assert.Equal(t, "connection refused (is the server running?)", record.DescribeError(c.o.Err))
}

// The watchdog gives up on a connect still under way after -timeout, as
// net.Dial's timeout would: the request waiting for it fails as a
// timeout of its dial. (The connect's start is moved back by hand: no
// test waits for the timeout.)
func TestWatchdogGivesUpOnASlowConnect(t *testing.T) {
	e, l, c := connectedLoop(t)
	l.drop(c)
	c.dead = true
	l.send(c, attempt{at: e.sched.At(0), seq: e.sched.Seq(0)})
	require.True(t, c.ev.connecting)

	now := e.now()
	c.ev.connSince = now - int64(e.cfg.Timeout) - 1
	l.watchdog(now)
	assert.False(t, c.ev.connecting)
	assert.False(t, c.ev.busy, "the request is recorded")
	assert.Zero(t, l.dialing)
	assert.True(t, c.dead)
	assert.True(t, isDialError(c.o.Err), "%v", c.o.Err)
	assert.Equal(t, "timeout", record.DescribeError(c.o.Err))
}
