package server

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/pool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPeerClosed: peerClosed sees a client's close through the server's
// listener wrappers, and nothing before it, unread bytes included; a
// connection that is no socket never reads as closed.
func TestPeerClosed(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := newFreshListener(newPerIPListener(inner, 10, nil, func() {}), nil)
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer client.Close()
	server, err := ln.Accept()
	require.NoError(t, err)
	defer server.Close()

	assert.False(t, peerClosed(server), "an open connection")
	_, err = client.Write([]byte("GET / HTTP/1.1\r\n"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return socketState(t, server) == tcpEstablished }, hangGuard, time.Millisecond)
	assert.False(t, peerClosed(server), "unread bytes are no close")
	require.NoError(t, client.Close())
	require.Eventually(t, func() bool { return peerClosed(server) }, hangGuard, time.Millisecond, "the close seen")

	a, b := net.Pipe()
	defer b.Close()
	a.Close()
	assert.False(t, peerClosed(b), "not a socket: nothing to ask")
}

// BenchmarkPeerClosed is what asking whether a client has gone costs a job
// that waited past -drop-closed-after: through the listener wrappers to
// the socket, one poll(2).
func BenchmarkPeerClosed(b *testing.B) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	ln := newFreshListener(newPerIPListener(inner, 10, nil, func() {}), nil)
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(b, err)
	defer client.Close()
	server, err := ln.Accept()
	require.NoError(b, err)
	defer server.Close()
	b.ReportAllocs()
	for b.Loop() {
		if peerClosed(server) {
			b.Fatal("an open connection read as closed")
		}
	}
}

// TestClosedClientsJobDropped: with -drop-closed-after, a request whose
// client closes its connection while the request waits for the pool's one
// worker or slot is dropped, unrun, when its turn comes (counted as
// abandoned), and its operation never reaches the store, in every
// queueing pool and both exec modes.
func TestClosedClientsJobDropped(t *testing.T) {
	for _, cfg := range poolModes() {
		if cfg.Pool == "direct" {
			continue // nothing waits in direct
		}
		t.Run(modeName(cfg), func(t *testing.T) {
			cfg.Addr, cfg.DropClosedAfter = "127.0.0.1:0", time.Nanosecond
			st := newWatchedStore(t)
			st.forbidden.Store("gone", true)
			s, addr := serveTCP(t, cfg, st)
			holder := dialRaw(t, addr)
			holder.send("GET /v0/entity?id=hold HTTP/1.1\r\nHost: x\r\n\r\n")
			<-st.held
			gone := dialRaw(t, addr)
			gone.send("GET /v0/entity?id=gone HTTP/1.1\r\nHost: x\r\n\r\n")
			require.Eventually(t, func() bool { return s.PoolStats().Queued == 1 }, hangGuard, 50*time.Microsecond)
			require.NoError(t, gone.Close())
			// The server's side of gone has seen the close.
			require.Eventually(t, func() bool { return peerSocketState(t, addr, gone) == tcpCloseWait }, hangGuard, time.Millisecond)
			close(st.release)
			resp, _ := holder.response(hangGuard)
			assert.Equal(t, 200, resp.StatusCode)
			require.Eventually(t, func() bool { return s.PoolStats().Rejected[pool.ReasonAbandoned] == 1 }, hangGuard, time.Millisecond)
			assert.Zero(t, st.touches("gone"))
		})
	}
}

// serveTCP serves st on cfg.Addr until the test ends and returns the
// server and its address.
func serveTCP(t *testing.T, cfg Config, st *watchedStore) (*Server, string) {
	t.Helper()
	s, err := New(resolved(t, cfg), st, Options{})
	require.NoError(t, err)
	ln, err := Listen(cfg.Addr)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		select {
		case <-st.release:
		default:
			close(st.release)
		}
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		assert.NoError(t, s.Shutdown(ctx))
		assert.NoError(t, <-done)
	})
	return s, ln.Addr().String()
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, Conn: c, r: bufio.NewReader(c)}
}

// The kernel's TCP states, as /proc/net/tcp writes them.
const (
	tcpEstablished = "01"
	tcpCloseWait   = "08"
)

// socketState is the state of socket c (its local and remote ports), as
// the kernel's socket table has it, or "" if it is not there.
func socketState(t *testing.T, c net.Conn) string {
	local, remote := c.LocalAddr().(*net.TCPAddr), c.RemoteAddr().(*net.TCPAddr)
	return tcpState(t, local.Port, remote.Port)
}

// peerSocketState is the state of the server's side of client c, which
// is connected to addr.
func peerSocketState(t *testing.T, addr string, c net.Conn) string {
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	var serverPort int
	_, err = fmt.Sscan(port, &serverPort)
	require.NoError(t, err)
	return tcpState(t, serverPort, c.LocalAddr().(*net.TCPAddr).Port)
}

// tcpState reads /proc/net/tcp for the IPv4 socket from localPort to
// remotePort.
func tcpState(t *testing.T, localPort, remotePort int) string {
	t.Helper()
	table, err := os.ReadFile("/proc/net/tcp")
	require.NoError(t, err)
	local, remote := fmt.Sprintf(":%04X", localPort), fmt.Sprintf(":%04X", remotePort)
	for _, line := range strings.Split(string(table), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasSuffix(f[1], local) && strings.HasSuffix(f[2], remote) {
			return f[3]
		}
	}
	return ""
}
