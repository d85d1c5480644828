package server

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// peerClosed reports whether the client at the other end of c has closed
// the connection (or reset it), without reading from it: one poll(2) with
// a zero timeout for POLLRDHUP, which the kernel reports once the peer's
// FIN has arrived, even behind unread bytes, and for POLLHUP and POLLERR.
// It costs a system call and a few small allocations (the raw connection,
// its callback, the poll set; BenchmarkPeerClosed), so the pool asks it
// only of a job that has waited (-drop-closed-after), never on the fast
// path.
//
// A client that half-closes (shuts down its sending side and waits for
// the answer) reads as gone too, as it does to Go's net/http server,
// which cancels such a request's context; HTTP/1.1 clients close only to
// give up.
func peerClosed(c net.Conn) bool {
	sc, ok := socketOf(c)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	err = rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
		n, err := unix.Poll(fds, 0)
		closed = err == nil && n > 0 && fds[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0
	})
	return err == nil && closed
}

// socketOf finds the socket under c, unwrapping the server's own listener
// wrappers (freshConn, perIPConn), which say what they wrap with NetConn
// as crypto/tls does.
func socketOf(c net.Conn) (syscall.Conn, bool) {
	for {
		if sc, ok := c.(syscall.Conn); ok {
			return sc, true
		}
		w, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil, false
		}
		c = w.NetConn()
	}
}
