package server

import (
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// lazyDeadlineListener hands fasthttp connections whose deadlines are set
// lazily (see lazyDeadlineConn).
type lazyDeadlineListener struct{ net.Listener }

func (l lazyDeadlineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &lazyDeadlineConn{Conn: c}, nil
}

// lazyDeadlineConn keeps the deadlines fasthttp asks for exactly, while
// passing on to the socket only those that come earlier than the one the
// socket already has.
//
// fasthttp (v1.74) sets three deadlines per request on a keep-alive
// connection: the read deadline for -idle-timeout before waiting for the
// next request, for -read-timeout once its first byte arrives, and the
// write deadline for -write-timeout before answering. Each moves a runtime
// timer: about 2 % of a GET's CPU here. Almost every one of them is later
// than the deadline already armed, which only needs to move when it is
// reached: then Read or Write finds it passed, and if the deadline asked
// for has not, arms that one and carries on, the caller none the wiser. So
// a busy connection moves each timer about once per timeout instead of
// once per request, and what the caller sees is as before: a timeout
// error when, and not before, the last deadline it set has passed.
type lazyDeadlineConn struct {
	net.Conn
	read, write lazyDeadline
}

// lazyDeadline is one direction's deadline. The zero value is none asked
// for and none armed.
type lazyDeadline struct {
	mu    sync.Mutex
	want  time.Time // the caller's deadline; zero: none
	armed time.Time // what the socket has; zero: none
}

// set records t as the deadline asked for and arms it on the socket, via
// arm, if it comes before the one armed.
func (d *lazyDeadline) set(t time.Time, arm func(time.Time) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.want = t
	if t.IsZero() || (!d.armed.IsZero() && !t.Before(d.armed)) {
		return nil // the armed one comes first; rearm moves it on
	}
	if err := arm(t); err != nil {
		return err
	}
	d.armed = t
	return nil
}

// rearm is called when the armed deadline has passed: it arms the one
// asked for and returns true if that has not passed yet (so the timeout is
// not the caller's), false if it has.
func (d *lazyDeadline) rearm(arm func(time.Time) error) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.want.IsZero() && !time.Now().Before(d.want) {
		return false
	}
	if arm(d.want) != nil {
		return false
	}
	d.armed = d.want
	return true
}

func timedOut(err error) bool { return err != nil && errors.Is(err, os.ErrDeadlineExceeded) }

func (c *lazyDeadlineConn) Read(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		if n > 0 || !timedOut(err) || !c.read.rearm(c.Conn.SetReadDeadline) {
			return n, err
		}
	}
}

func (c *lazyDeadlineConn) Write(p []byte) (int, error) {
	written := 0
	for {
		n, err := c.Conn.Write(p[written:])
		written += n
		if !timedOut(err) || !c.write.rearm(c.Conn.SetWriteDeadline) {
			return written, err
		}
	}
}

func (c *lazyDeadlineConn) SetReadDeadline(t time.Time) error {
	return c.read.set(t, c.Conn.SetReadDeadline)
}

func (c *lazyDeadlineConn) SetWriteDeadline(t time.Time) error {
	return c.write.set(t, c.Conn.SetWriteDeadline)
}

func (c *lazyDeadlineConn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

// NetConn returns the connection c wraps (see socketOf).
func (c *lazyDeadlineConn) NetConn() net.Conn { return c.Conn }
