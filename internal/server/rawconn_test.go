package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rawConn is a client connection that sends bytes exactly as given: the
// requests a well-behaved client never sends, at the pace the test picks.
type rawConn struct {
	t *testing.T
	net.Conn
	r *bufio.Reader
}

func (ts *testServer) addr() string { return strings.TrimPrefix(ts.base, "http://") }

func (ts *testServer) dial() *rawConn {
	ts.t.Helper()
	c, err := net.DialTimeout("tcp", ts.addr(), 5*time.Second)
	require.NoError(ts.t, err)
	ts.t.Cleanup(func() { c.Close() })
	return &rawConn{t: ts.t, Conn: c, r: bufio.NewReader(c)}
}

func (c *rawConn) send(s string) {
	c.t.Helper()
	require.NoError(c.t, c.SetWriteDeadline(time.Now().Add(5*time.Second)))
	_, err := io.WriteString(c, s)
	require.NoError(c.t, err)
}

// response reads one response, failing the test if none is complete within
// wait.
func (c *rawConn) response(wait time.Duration) (*http.Response, []byte) {
	c.t.Helper()
	require.NoError(c.t, c.SetReadDeadline(time.Now().Add(wait)))
	resp, err := http.ReadResponse(c.r, nil)
	require.NoError(c.t, err, "no response within %v", wait)
	body, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	resp.Body.Close()
	return resp, body
}

// roundTrip sends a request and reads its response.
func (c *rawConn) roundTrip(req string) (*http.Response, []byte) {
	c.t.Helper()
	c.send(req)
	return c.response(5 * time.Second)
}

// closedByServer reads until the server closes the connection, waiting at
// most wait, and returns what was read before the close. It fails the test
// if the connection is still open after wait.
func (c *rawConn) closedByServer(wait time.Duration) []byte {
	c.t.Helper()
	require.NoError(c.t, c.SetReadDeadline(time.Now().Add(wait)))
	got, err := io.ReadAll(c.r)
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		c.t.Fatalf("connection still open after %v; read %q", wait, got)
	}
	// A reset (the server closing with unread input) is a close as well.
	return got
}

// statusOf parses the status line of a raw response; 0 if there is none.
func statusOf(raw []byte) int {
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(raw))), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

const getStatus = "GET /v0/status HTTP/1.1\r\nHost: x\r\n\r\n"
