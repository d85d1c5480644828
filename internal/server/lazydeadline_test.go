package server

import (
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// armCounter counts the deadlines that reach the connection it wraps.
type armCounter struct {
	net.Conn
	reads, writes int
}

func (c *armCounter) SetReadDeadline(t time.Time) error {
	c.reads++
	return c.Conn.SetReadDeadline(t)
}

func (c *armCounter) SetWriteDeadline(t time.Time) error {
	c.writes++
	return c.Conn.SetWriteDeadline(t)
}

// lazyPipe is a lazyDeadlineConn over one end of a pipe, the counter
// under it, and the pipe's other end.
func lazyPipe(t *testing.T) (*lazyDeadlineConn, *armCounter, net.Conn) {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	counter := &armCounter{Conn: a}
	return &lazyDeadlineConn{Conn: counter}, counter, b
}

// A deadline in the past stands for one armed earlier that has passed
// since: the tests need no waiting.
var past = time.Now().Add(-time.Hour)

func TestLazyDeadlineArmsOnlyEarlierDeadlines(t *testing.T) {
	c, counter, _ := lazyPipe(t)
	now := time.Now()
	for i := range 5 { // the keep-alive pattern: each later than the last
		require.NoError(t, c.SetReadDeadline(now.Add(time.Duration(10+i)*time.Second)))
		require.NoError(t, c.SetWriteDeadline(now.Add(time.Duration(10+i)*time.Second)))
	}
	assert.Equal(t, 1, counter.reads, "read deadlines armed")
	assert.Equal(t, 1, counter.writes, "write deadlines armed")

	require.NoError(t, c.SetReadDeadline(now.Add(time.Second))) // earlier: armed at once
	require.NoError(t, c.SetReadDeadline(time.Time{}))          // none: waits for the armed one
	assert.Equal(t, 2, counter.reads)
	assert.Equal(t, 1, counter.writes)
}

func TestLazyDeadlineReadOutlivesAnArmedDeadline(t *testing.T) {
	for name, later := range map[string]time.Time{"later": time.Now().Add(time.Hour), "none": {}} {
		t.Run(name, func(t *testing.T) {
			c, counter, peer := lazyPipe(t)
			require.NoError(t, c.SetReadDeadline(past))
			require.NoError(t, c.SetReadDeadline(later))
			go peer.Write([]byte("request"))
			buf := make([]byte, 16)
			n, err := c.Read(buf)
			require.NoError(t, err)
			assert.Equal(t, "request", string(buf[:n]))
			assert.Equal(t, 2, counter.reads, "the passed deadline, then the one asked for")
		})
	}
}

func TestLazyDeadlineReadTimesOutAtTheDeadlineAskedFor(t *testing.T) {
	t.Run("earlier than the armed one", func(t *testing.T) {
		c, _, _ := lazyPipe(t)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Hour)))
		require.NoError(t, c.SetReadDeadline(past))
		_, err := c.Read(make([]byte, 1))
		assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	})
	t.Run("later than the armed one, and passed too", func(t *testing.T) {
		c, _, _ := lazyPipe(t)
		require.NoError(t, c.SetReadDeadline(past))
		require.NoError(t, c.SetReadDeadline(past.Add(time.Minute)))
		_, err := c.Read(make([]byte, 1))
		var netErr net.Error
		require.ErrorAs(t, err, &netErr)
		assert.True(t, netErr.Timeout(), "fasthttp answers 408 on a net.Error that says Timeout")
	})
	t.Run("after a short one passed unseen", func(t *testing.T) {
		c, _, _ := lazyPipe(t)
		begin := time.Now()
		require.NoError(t, c.SetReadDeadline(begin.Add(time.Millisecond)))
		require.NoError(t, c.SetReadDeadline(begin.Add(50*time.Millisecond)))
		_, err := c.Read(make([]byte, 1))
		assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
		assert.GreaterOrEqual(t, time.Since(begin), 50*time.Millisecond, "never before the deadline asked for")
	})
}

func TestLazyDeadlineWriteOutlivesAnArmedDeadline(t *testing.T) {
	c, counter, peer := lazyPipe(t)
	require.NoError(t, c.SetWriteDeadline(past))
	require.NoError(t, c.SetWriteDeadline(time.Now().Add(time.Hour)))
	got := make(chan string)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(peer, 8))
		got <- string(b)
	}()
	n, err := c.Write([]byte("response"))
	require.NoError(t, err)
	assert.Equal(t, 8, n)
	assert.Equal(t, "response", <-got)
	assert.Equal(t, 2, counter.writes)

	require.NoError(t, c.SetDeadline(past)) // earlier than both
	_, err = c.Write([]byte("x"))
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	_, err = c.Read(make([]byte, 1))
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
}

// BenchmarkKeepAliveDeadlines sets the three deadlines fasthttp sets per
// request on a keep-alive connection (idle, read, write), each later than
// the last request's, on a loopback TCP socket directly and through
// lazyDeadlineConn: what the wrapper saves a request.
func BenchmarkKeepAliveDeadlines(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			io.Copy(io.Discard, c)
		}
	}()
	socket, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(b, err)
	defer socket.Close()
	for _, bc := range []struct {
		name string
		conn net.Conn
	}{{"socket", socket}, {"lazy", &lazyDeadlineConn{Conn: socket}}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				now := time.Now()
				bc.conn.SetReadDeadline(now.Add(time.Minute))
				bc.conn.SetReadDeadline(now.Add(10 * time.Second))
				bc.conn.SetWriteDeadline(now.Add(10 * time.Second))
			}
		})
	}
}
