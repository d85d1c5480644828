//go:build linux

package engine

import (
	"encoding/binary"
	"net"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
)

// A response's end is when the kernel received it, not when the loop
// read it: a response left unread for a while (as deferReads allows)
// still has its own latency.
func TestEventLoopEndIsReceiveTime(t *testing.T) {
	holdReceiveTimestamps(t)
	e, l, c := connectedLoop(t)
	l.send(c, attempt{})
	require.Positive(t, l.wait(l.epfd, 10*time.Second), "the response arrived")
	arrived := e.now() // the response is in the socket by now
	// Let time pass before reading; the response's end must not move.
	for e.now()-arrived < int64(20*time.Millisecond) {
		l.wait(l.sleepFd, time.Until(e.start.Add(time.Duration(arrived)+20*time.Millisecond)))
	}
	for c.ev.busy {
		for i := range l.wait(l.epfd, 10*time.Second) {
			ev := &l.events[i]
			l.onEvent(e.conns[ev.Fd], ev.Events, e.now())
		}
	}
	require.Equal(t, int64(1), c.carried)
	require.True(t, l.stamping, "the response came with its receive time")
	require.LessOrEqual(t, c.o.End, arrived, "end is the receive time, before the loop saw the response")
	require.GreaterOrEqual(t, c.o.End, c.o.Sent, "and after the request went out")
}

// holdReceiveTimestamps makes sure the kernel stamps received TCP
// segments for the rest of the test. It stamps them only while some
// socket asks for it, and turns that on from a work queue a moment after
// the first one does: here a connection of the test's own asks, and
// receives bytes until they come stamped.
func holdReceiveTimestamps(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	client, err := dialRaw(ln.Addr().String(), 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(client) })
	server, err := ln.Accept()
	require.NoError(t, err)
	t.Cleanup(func() { server.Close() })
	require.NoError(t, unix.SetsockoptInt(client, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1))
	require.NoError(t, unix.SetNonblock(client, false))
	buf, oob := make([]byte, 1), make([]byte, rxControlLen)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		_, err := server.Write(buf)
		require.NoError(t, err)
		_, oobn, _, _, err := unix.Recvmsg(client, buf, oob, 0)
		require.NoError(t, err)
		if rxTimestamp(oob[:oobn]) != 0 {
			return
		}
		time.Sleep(time.Millisecond) // the work queue's turn
	}
	t.Fatal("the kernel stamped no received segment for 10 s")
}

// Below saturation the loop sleeps through arriving responses and reads
// them at its next wake-up: every request is still answered once, and
// ends when its response arrived, after it was sent.
func TestEventLoopDefersReadsBelowSaturation(t *testing.T) {
	holdReceiveTimestamps(t)
	url := loadgentest.ServeHandler(t, bareserver.Handler)
	cfg := testConfig(url, 2000, 300*time.Millisecond)
	cfg.Conns, cfg.MaxConns = 16, 16
	cfg.KeepRecords = true
	e, res := runEngine(t, cfg)
	require.NotNil(t, e.loop)
	assert.Positive(t, e.loop.deferred, "sleeps that left responses unread")
	require.Equal(t, int64(600), res.Sent)
	assert.Zero(t, res.ErrorCount)
	seen := make([]bool, res.Planned)
	for _, rc := range res.Records {
		require.False(t, seen[rc.Seq], "request %d recorded twice", rc.Seq)
		seen[rc.Seq] = true
		require.Positive(t, rc.Latency, "request %d ended after it was sent", rc.Seq)
	}
	assert.Len(t, res.Records, 600)
}

func TestRxTimestamp(t *testing.T) {
	cmsg := func(level, typ int32, data []byte) []byte {
		b := make([]byte, unix.CmsgSpace(len(data)))
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		h.Level, h.Type = level, typ
		h.SetLen(unix.CmsgLen(len(data)))
		copy(b[unix.CmsgLen(0):], data)
		return b
	}
	ts := make([]byte, 16)
	binary.NativeEndian.PutUint64(ts, 1_700_000_000)
	binary.NativeEndian.PutUint64(ts[8:], 123_456_789)
	want := int64(1_700_000_000)*1e9 + 123_456_789

	require.Equal(t, want, rxTimestamp(cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts)))
	other := cmsg(unix.SOL_IP, unix.IP_TOS, []byte{1})
	require.Equal(t, want, rxTimestamp(append(other, cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts)...)), "after another message")
	require.Zero(t, rxTimestamp(nil), "no control message")
	require.Zero(t, rxTimestamp(other), "none of ours")
	require.Zero(t, rxTimestamp(cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts[:8])), "too short")
	bad := cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts)
	(*unix.Cmsghdr)(unsafe.Pointer(&bad[0])).SetLen(len(bad) + 8)
	require.Zero(t, rxTimestamp(bad), "a length past the buffer")
}

// The loop sleeps through arriving responses only while the idle
// connections cover what falls due by a quantum after its wake-up.
func TestDeferReads(t *testing.T) {
	e := newAllocEngine(t, 20_000) // one request due every 50 µs
	e.cfg.Quantum = 250 * time.Microsecond
	l := e.loop
	require.NotNil(t, l)
	t.Cleanup(l.close)
	l.p.Quantum = e.cfg.Quantum
	l.stamping = true
	idle := func(n int) {
		l.idle = idleList{}
		for i := range n {
			l.idle.push(e.newConn(i))
		}
	}
	now := int64(0)
	wait := 250 * time.Microsecond
	// Due by now+wait+quantum: seq 0..10, 11 requests (seq 10 at 500 µs).
	idle(12)
	require.True(t, l.deferReads(wait, now), "12 idle conns for 11 due")
	idle(11)
	require.False(t, l.deferReads(wait, now), "11 idle conns leave none spare")
	idle(64)
	require.False(t, l.deferReads(0, now), "nothing to sleep for")
	require.False(t, l.deferReads(2*rawWaitMax, now), "a long gap: read responses as they come")
	l.stamping = false
	require.False(t, l.deferReads(wait, now), "no receive times: read responses as they come")
	l.stamping = true
	e.next.Store(e.planned)
	idle(0)
	require.True(t, l.deferReads(wait, now), "nothing left to send")
}

// connectedLoop is newAllocEngine's event loop at 1,000 req/s with one
// connection made and the run's clock started: the loop, not running,
// and that connection. The loop is closed when the test ends.
func connectedLoop(t *testing.T) (*fastEngine, *evloop, *conn) {
	t.Helper()
	e := newAllocEngine(t, 1000)
	l := e.loop
	require.NotNil(t, l)
	t.Cleanup(l.close)
	require.NoError(t, l.connect(e.newConn(0)))
	e.start = time.Now()
	return e, l, e.conns[0]
}
