package loadgen

import (
	"bufio"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// roundTripper sends one worker's requests, one at a time (no pipelining).
// Only abort may be called from another goroutine.
type roundTripper interface {
	// connect opens the connection ahead of the first request, so that
	// dialing is not timed as part of a request. Optional: roundTrip dials
	// on its own when needed.
	connect() error
	// prepare builds the request of op on id key and returns its body size.
	prepare(op Op, key uint64) (bytesOut int)
	// roundTrip sends the prepared request and reads the whole response.
	roundTrip() (code, bytesIn int, err error)
	// abort makes the running roundTrip fail soon (the watchdog's way to
	// enforce Config.Timeout); the connection is replaced afterwards.
	abort()
	// discard drops the connection; the next roundTrip dials a new one.
	discard()
}

// rawConn is one keep-alive HTTP/1.1 connection driven directly: the whole
// request is built in one buffer and written with one write, the response
// is parsed by fasthttp.Response from a bufio.Reader. Both the buffer and
// the Response are reused, so a request allocates nothing.
type rawConn struct {
	host      string
	path      string
	valueSize int
	timeout   time.Duration

	conn net.Conn
	cur  atomic.Pointer[net.Conn] // conn, for abort from the watchdog
	br   *bufio.Reader
	req  []byte
	resp fasthttp.Response
}

func newRawConn(t target, valueSize int, timeout time.Duration) *rawConn {
	return &rawConn{host: t.host, path: t.path, valueSize: valueSize, timeout: timeout,
		req: make([]byte, 0, 256+valueSize)}
}

func (c *rawConn) connect() error {
	if c.conn != nil {
		return nil
	}
	conn, err := net.DialTimeout("tcp", c.host, c.timeout)
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

func (c *rawConn) prepare(op Op, key uint64) int {
	b := append(c.req[:0], op.Method()...)
	b = append(b, ' ')
	b = append(b, c.path...)
	b = append(b, "?id="...)
	b = strconv.AppendUint(b, key, 10)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, c.host...)
	out := 0
	if op == OpPut {
		b = append(b, "\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(c.valueSize), 10)
		b = append(b, "\r\n\r\n"...)
		b = AppendValue(b, key, c.valueSize)
		out = c.valueSize
	} else {
		b = append(b, "\r\n\r\n"...)
	}
	c.req = b
	return out
}

func (c *rawConn) roundTrip() (int, int, error) {
	if err := c.connect(); err != nil {
		return 0, 0, err
	}
	if _, err := c.conn.Write(c.req); err != nil {
		c.discard()
		return 0, 0, err
	}
	if err := c.resp.Read(c.br); err != nil {
		c.discard()
		return 0, 0, err
	}
	if c.resp.ConnectionClose() {
		c.discard()
	}
	return c.resp.StatusCode(), len(c.resp.Body()), nil
}

func (c *rawConn) abort() {
	if p := c.cur.Load(); p != nil {
		(*p).Close()
	}
}

func (c *rawConn) discard() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
		c.cur.Store(nil)
	}
}
