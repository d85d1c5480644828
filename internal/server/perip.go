package server

import (
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// perIPListener caps the connections open at once from one client address
// (-max-conns-per-ip): one more is answered 429 and closed at accept, before
// fasthttp sees it.
//
// fasthttp has this built in (Server.MaxConnsPerIP), but in v1.74 its
// connection wrapper comes from a sync.Pool and its Close sets the wrapped
// Conn to nil and returns the wrapper to the pool; Shutdown closes idle
// connections from its own goroutine while the serving goroutine still
// reads through the wrapper. go test -race reports it (TestMaxConnsPerIP
// with a graceful stop), and the same wrapper is behind fasthttp issues
// #1504 and #1987 (panics at shutdown). This wrapper shares nothing: its
// Close may run on any goroutine, any number of times.
type perIPListener struct {
	net.Listener
	max     int
	log     *slog.Logger
	refused func() // called for each connection answered 429

	mu      sync.Mutex
	open    map[netip.Addr]int
	lastLog time.Time
}

func newPerIPListener(ln net.Listener, max int, log *slog.Logger, refused func()) *perIPListener {
	return &perIPListener{Listener: ln, max: max, log: log, refused: refused, open: map[netip.Addr]int{}}
}

func (l *perIPListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip, ok := clientIP(c)
		if !ok { // not TCP (an in-memory listener): nothing to count by
			return c, nil
		}
		if l.acquire(ip) {
			return &perIPConn{Conn: c, release: func() { l.release(ip) }}, nil
		}
		l.refused() // before the answer: a client that sees it finds it counted
		refuseConn(c)
	}
}

func (l *perIPListener) acquire(ip netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[ip] >= l.max {
		if time.Since(l.lastLog) > time.Minute {
			l.log.Warn("refusing connections over -max-conns-per-ip (logged at most once a minute)", "ip", ip.String(), "max", l.max)
			l.lastLog = time.Now()
		}
		return false
	}
	l.open[ip]++
	return true
}

func (l *perIPListener) release(ip netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[ip]--; l.open[ip] <= 0 {
		delete(l.open, ip)
	}
}

func clientIP(c net.Conn) (netip.Addr, bool) {
	a, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return netip.Addr{}, false
	}
	return a.AddrPort().Addr().Unmap(), true
}

const refusedBody = "too many connections from your address (-max-conns-per-ip)\n"

var refusedResponse = []byte("HTTP/1.1 429 Too Many Requests\r\n" +
	"Server: kvserver\r\nConnection: close\r\nRetry-After: 1\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\n" +
	"Content-Length: " + strconv.Itoa(len(refusedBody)) + "\r\n\r\n" + refusedBody)

// refuseConn answers 429 and closes. The write deadline keeps a client that
// does not read from stalling the accept loop; the answer fits in the
// socket buffer, so it is never reached in practice.
func refuseConn(c net.Conn) {
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	c.Write(refusedResponse)
	c.Close()
}

// perIPConn gives its address's slot back once, on the first Close.
type perIPConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// NetConn returns the connection c wraps (see socketOf).
func (c *perIPConn) NetConn() net.Conn { return c.Conn }

func (c *perIPConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
