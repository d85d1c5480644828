package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSlowlorisCutOff: -read-timeout is one deadline for a whole request,
// so a client that trickles it byte by byte, or sends nothing, loses its
// connection once the deadline passes, however steadily it sends. Nothing
// it sent is stored, and other clients are served meanwhile.
func TestSlowlorisCutOff(t *testing.T) {
	cfg := testConfig(t, "fifo")
	cfg.ReadTimeout = 300 * time.Millisecond
	ts := start(t, cfg)
	// A byte every 25 ms: the whole request would take seconds.
	const pace = 25 * time.Millisecond

	f := func(key, prefix, trickled string) {
		t.Helper()
		began := time.Now()
		c := ts.dial()
		if prefix != "" {
			c.send(prefix)
		}
		var sent atomic.Int64
		go func() {
			for i := range len(trickled) {
				time.Sleep(pace)
				if _, err := c.Write([]byte{trickled[i]}); err != nil {
					return
				}
				sent.Add(1)
			}
		}()
		code, _, _ := ts.do("GET", "/v0/status", nil)
		assert.Equal(t, 200, code, "%s: other clients are served", key)

		got := c.closedByServer(time.Duration(len(trickled)+80) * pace)
		assert.GreaterOrEqual(t, time.Since(began), cfg.ReadTimeout, "%s: closed before the deadline", key)
		if trickled != "" {
			assert.Less(t, sent.Load(), int64(len(trickled)), "%s: the whole request got through", key)
		}
		if len(got) > 0 {
			assert.Equal(t, 408, statusOf(got), "%s: %q", key, got)
		}
		code, _, _ = ts.do("GET", entity(key), nil)
		assert.Equal(t, 404, code, "%s: a cut-off request stores nothing", key)
	}
	f("headers", "", fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nv", entity("headers")))
	f("body", fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: x\r\nContent-Length: 60\r\n\r\n", entity("body")), string(make([]byte, 60)))
	f("silent", "", "")
}

// TestConnectionCap: with -max-conns 2, a third connection is answered 503
// and closed while the two held ones are still served; once one of them
// closes, a new connection is served again.
func TestConnectionCap(t *testing.T) {
	cfg := testConfig(t, "fifo")
	cfg.MaxConns = 2
	ts := start(t, cfg)

	held := ts.holdServed(2)

	extra := ts.dial()
	got := extra.closedByServer(5 * time.Second)
	assert.Equal(t, 503, statusOf(got), "%q", got)

	for _, c := range held {
		resp, _ := c.roundTrip(getStatus)
		assert.Equal(t, 200, resp.StatusCode, "held connections are still served")
	}

	held[0].Close()
	ts.dialServed(5 * time.Second) // a freed slot is served again
}

// holdServed dials n connections and makes a round trip on each, so that
// the server has taken every one on before the test goes on.
func (ts *testServer) holdServed(n int) []*rawConn {
	ts.t.Helper()
	held := make([]*rawConn, n)
	for i := range held {
		held[i] = ts.dial()
		resp, _ := held[i].roundTrip(getStatus)
		require.Equal(ts.t, 200, resp.StatusCode)
	}
	return held
}

// dialServed dials until a new connection is served (GET /v0/status gets
// 200), for at most wait, and returns it open.
func (ts *testServer) dialServed(wait time.Duration) *rawConn {
	ts.t.Helper()
	for began := time.Now(); time.Since(began) < wait; time.Sleep(20 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", ts.addr(), time.Second)
		if err != nil {
			continue
		}
		rc := &rawConn{t: ts.t, Conn: c, r: bufio.NewReader(c)}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = io.WriteString(c, getStatus)
		var resp *http.Response
		if err == nil {
			resp, err = http.ReadResponse(rc.r, nil)
		}
		if err == nil && resp.StatusCode == 200 {
			io.Copy(io.Discard, resp.Body)
			c.SetDeadline(time.Time{})
			ts.t.Cleanup(func() { c.Close() })
			return rc
		}
		c.Close()
	}
	ts.t.Fatalf("no connection served within %v", wait)
	return nil
}

// TestMaxConnsPerIP: -max-conns-per-ip 1 answers a second connection from
// the same address 429 and closes it; the first is still served, and once
// it closes its slot is free again. The graceful stop at the end closes an
// idle connection from another goroutine: -race checks that is safe.
func TestMaxConnsPerIP(t *testing.T) {
	cfg := testConfig(t, "fifo")
	cfg.MaxConnsPerIP = 1
	ts := start(t, cfg)

	first := ts.holdServed(1)[0]

	got := ts.dial().closedByServer(5 * time.Second)
	assert.Equal(t, 429, statusOf(got), "%q", got)

	resp, _ := first.roundTrip(getStatus)
	assert.Equal(t, 200, resp.StatusCode)

	first.Close()
	idle := ts.dialServed(5 * time.Second) // the slot is given back
	ts.stop()
	idle.closedByServer(5 * time.Second)
}

// TestIdleTimeout: a keep-alive connection that sends its requests more
// often than -idle-timeout stays open; once it falls silent it is closed,
// without a response, long before -read-timeout would have closed it.
func TestIdleTimeout(t *testing.T) {
	cfg := testConfig(t, "fifo")
	cfg.IdleTimeout = time.Second
	cfg.ReadTimeout = time.Minute
	ts := start(t, cfg)

	c := ts.dial()
	for range 5 {
		resp, _ := c.roundTrip(getStatus)
		require.Equal(t, 200, resp.StatusCode)
		time.Sleep(100 * time.Millisecond)
	}
	began := time.Now()
	got := c.closedByServer(30 * time.Second)
	assert.Empty(t, got, "an idle connection is closed silently")
	assert.Less(t, time.Since(began), cfg.ReadTimeout/2)
}

// TestShutdownClosesSilentConnections: a connection on which nothing was
// sent does not hold a graceful stop until its read timeout: Shutdown
// closes it at once, while it still waits for one whose request has begun.
func TestShutdownClosesSilentConnections(t *testing.T) {
	cfg := testConfig(t, "fifo")
	cfg.ReadTimeout = time.Minute
	ts := start(t, cfg)
	silent := ts.dial()
	begun := ts.dial()
	begun.send("PUT " + entity("begun") + " HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n")
	ts.began() // the server has read from begun: it is no longer silent

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- ts.srv.Shutdown(ctx) }()
	assert.Empty(t, silent.closedByServer(5*time.Second), "the silent connection is closed without an answer")
	select {
	case err := <-stopped:
		t.Fatalf("Shutdown returned (%v) with a request in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	resp, _ := begun.roundTrip("ok")
	assert.Equal(t, 201, resp.StatusCode)
	assert.NoError(t, <-stopped)
	assert.NoError(t, <-ts.served)
	assert.NoError(t, ts.st.Close())
	ts.srv = nil
}
