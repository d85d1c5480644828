package bareserver

import (
	"syscall"
	"time"
)

// sleep blocks the calling thread in nanosleep(2) rather than parking the
// goroutine on a runtime timer. The runtime's timers are only as fine as
// its poller's wait: with nothing else to do it waits in epoll_pwait, whose
// timeout is whole milliseconds, so a 300 µs time.Sleep on an idle server
// can last a millisecond, and by how much depends on how bursty the load
// is, which is what two loaders differ in. nanosleep costs a thread per
// sleeping request (the runtime hands the P to another), fine at the
// tens of requests in flight a service time of a millisecond means.
func sleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
