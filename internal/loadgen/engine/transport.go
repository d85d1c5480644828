package engine

import (
	"bufio"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// rawConn is one keep-alive HTTP/1.1 connection driven directly, one
// request at a time (no pipelining): the whole request is built in one
// buffer and written with one write, the response is parsed by
// fasthttp.Response from a bufio.Reader. Both the buffer and the Response
// are reused, so a request allocates nothing.
//
// The write side (prepare, write) and the read side (awaitResponse,
// readResponse) may run on different goroutines; the engine's conn says
// who may call what when. Only abort may be called at any time.
type rawConn struct {
	t         config.Target
	valueSize int
	timeout   time.Duration
	// deadlineMs, if > 0, is sent with every request as
	// X-Request-Timeout-Ms: how long its client waits for the answer,
	// so that the server can drop work nobody waits for.
	deadlineMs int64
	// attemptNo, if 2 or more, is sent as X-Envoy-Attempt-Count: the
	// request is that attempt, a retry (Config.Client.MarkRetries).
	attemptNo int64

	conn net.Conn
	cur  atomic.Pointer[net.Conn] // conn, for abort from the watchdog
	br   *bufio.Reader
	req  []byte
	resp fasthttp.Response
}

func newRawConn(t config.Target, valueSize int, timeout time.Duration) *rawConn {
	return &rawConn{t: t, valueSize: valueSize, timeout: timeout,
		req: make([]byte, 0, 256+valueSize)}
}

// dial replaces the connection (if any) with a new one.
func (c *rawConn) dial() error {
	c.close()
	conn, err := net.DialTimeout("tcp", c.t.Host, c.timeout)
	if err != nil {
		return err
	}
	c.conn = conn
	c.cur.Store(&conn)
	if c.br == nil {
		c.br = bufio.NewReaderSize(conn, 16<<10)
	} else {
		c.br.Reset(conn)
	}
	return nil
}

// prepare builds the request of op on id key and returns its body size.
func (c *rawConn) prepare(op api.Method, key uint64) int {
	b := append(c.req[:0], op.String()...)
	b = append(b, ' ')
	b = append(b, c.t.Path...)
	b = append(b, "?id="...)
	b = strconv.AppendUint(b, key, 10)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, c.t.Host...)
	if c.deadlineMs > 0 {
		b = append(b, "\r\n"+api.HeaderRequestTimeout+": "...)
		b = strconv.AppendInt(b, c.deadlineMs, 10)
	}
	if c.attemptNo >= 2 {
		b = append(b, "\r\n"+api.HeaderAttemptCount+": "...)
		b = strconv.AppendInt(b, c.attemptNo, 10)
	}
	out := 0
	if op == api.Put {
		b = append(b, "\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(c.valueSize), 10)
		b = append(b, "\r\n\r\n"...)
		b = workload.AppendValue(b, key, c.valueSize)
		out = c.valueSize
	} else {
		b = append(b, "\r\n\r\n"...)
	}
	c.req = b
	return out
}

// write sends the prepared request. On failure the connection is closed,
// so that the reading side fails too instead of waiting.
func (c *rawConn) write() error {
	if c.conn == nil {
		return net.ErrClosed
	}
	if _, err := c.conn.Write(c.req); err != nil {
		c.conn.Close()
		return err
	}
	return nil
}

// awaitResponse blocks until the first byte of a response has arrived or
// the connection failed. An error here means nothing of a response was
// read: the server closed the connection (or the watchdog did).
func (c *rawConn) awaitResponse() error {
	if c.br == nil {
		return net.ErrClosed
	}
	_, err := c.br.Peek(1)
	return err
}

// readResponse reads the rest of the response. closeAfter says the server
// will close the connection after it (Connection: close).
func (c *rawConn) readResponse() (code, bytesIn int, closeAfter bool, err error) {
	if err := c.resp.Read(c.br); err != nil {
		return 0, 0, false, err
	}
	return c.resp.StatusCode(), len(c.resp.Body()), c.resp.ConnectionClose(), nil
}

// abort makes a running write or read fail soon (the watchdog's way to
// enforce Config.Timeout, and how the engine ends idle readers).
func (c *rawConn) abort() {
	if p := c.cur.Load(); p != nil {
		(*p).Close()
	}
}

// close drops the connection.
func (c *rawConn) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
		c.cur.Store(nil)
	}
}
