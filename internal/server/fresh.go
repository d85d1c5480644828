package server

import (
	"net"
	"sync"
	"sync/atomic"
)

// freshListener remembers the connections on which nothing has arrived yet
// and closes them when it is closed, which Shutdown does first.
//
// fasthttp (v1.74) marks a connection active before reading its first
// request, so its Shutdown waits for a connection that was opened and never
// used (browsers, pools and Go's http.Transport open spare ones) until the
// read timeout cuts it off: with the defaults, -read-timeout and
// -shutdown-timeout both 10s, a graceful stop would run into its deadline.
// Nothing was asked on such a connection, so closing it loses nothing; once
// a byte has arrived the connection is fasthttp's to drain.
type freshListener struct {
	net.Listener
	spoke func() // if set, called when a connection's first bytes arrive

	mu     sync.Mutex
	fresh  map[*freshConn]struct{}
	closed bool
}

func newFreshListener(ln net.Listener, spoke func()) *freshListener {
	return &freshListener{Listener: ln, spoke: spoke, fresh: map[*freshConn]struct{}{}}
}

func (l *freshListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	fc := &freshConn{Conn: c, l: l}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed { // accepted as Close ran: it would miss the sweep
		c.Close()
		return nil, net.ErrClosed
	}
	l.fresh[fc] = struct{}{}
	return fc, nil
}

// Close stops accepting, then closes every connection still silent.
// Only the first call does anything: Shutdown and fasthttp both close it.
func (l *freshListener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	err := l.Listener.Close()
	l.closed = true
	for c := range l.fresh {
		c.Conn.Close()
	}
	clear(l.fresh)
	return err
}

func (l *freshListener) forget(c *freshConn) {
	l.mu.Lock()
	delete(l.fresh, c)
	l.mu.Unlock()
}

// freshConn leaves its listener's list at its first byte or its close.
type freshConn struct {
	net.Conn
	l      *freshListener
	spoken atomic.Bool
}

func (c *freshConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.spoken.Load() {
		c.spoken.Store(true)
		c.l.forget(c)
		if c.l.spoke != nil {
			c.l.spoke()
		}
	}
	return n, err
}

// NetConn returns the connection c wraps (see socketOf).
func (c *freshConn) NetConn() net.Conn { return c.Conn }

func (c *freshConn) Close() error {
	if !c.spoken.Swap(true) {
		c.l.forget(c)
	}
	return c.Conn.Close()
}
