//go:build linux

package schedule

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// timerfdSleeper sleeps on a Linux timerfd registered with the Go netpoller:
// the sleeping goroutine parks like one waiting on a socket and no OS thread
// or P is held, yet the wake-up is as precise as the kernel's hrtimers (a
// few µs) instead of the netpoller's 1 ms timeout resolution. One sleep
// costs two or three system calls (settime, read, and the epoll wake-up).
//
// Only one goroutine may use a timerfdSleeper at a time.
type timerfdSleeper struct {
	f   *os.File
	fd  int // f's descriptor, valid until Close
	buf [8]byte
}

func NewSleeper() Sleeper {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return coarseSleeper{}
	}
	// os.NewFile registers a non-blocking descriptor with the netpoller.
	return &timerfdSleeper{f: os.NewFile(uintptr(fd), "pacer-timerfd"), fd: fd}
}

func (s *timerfdSleeper) Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(s.fd, 0, &spec, nil); err != nil {
		time.Sleep(d)
		return
	}
	// Parks the goroutine until the timer fires (the 8 bytes: the
	// expiration count).
	if _, err := s.f.Read(s.buf[:]); err != nil {
		time.Sleep(d)
	}
}

func (s *timerfdSleeper) Close() error { return s.f.Close() }
