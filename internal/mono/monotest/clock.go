// Package monotest is a fake mono.Clock for tests: time moves only when
// the test advances it, and its timers fire when an advance reaches them.
package monotest

import (
	"sync"
	"testing"
	"time"
)

// hangGuard bounds WaitTimer's wait for an event; reaching it is a
// failure (the timer never started), never what a test asserts.
const hangGuard = 30 * time.Second

// Clock is a mono.Clock that moves only when Advance is called.
type Clock struct {
	mu      sync.Mutex
	t       int64
	timers  map[*timer]bool
	started chan time.Duration // each new timer's duration, for WaitTimer
}

type timer struct {
	at int64
	ch chan time.Time
}

// New returns a Clock at one hour: far from 0, which mono reads as "no
// deadline" and the pools as "no time read yet".
func New() *Clock {
	return &Clock{t: int64(time.Hour), timers: map[*timer]bool{}, started: make(chan time.Duration, 1024)}
}

// Now implements mono.Clock.
func (c *Clock) Now() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Timer implements mono.Clock: the channel receives once an Advance
// reaches now+d (at once for d <= 0).
func (c *Clock) Timer(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	tm := &timer{at: c.t + int64(d), ch: make(chan time.Time, 1)}
	c.timers[tm] = true
	c.fireLocked()
	c.mu.Unlock()
	select {
	case c.started <- d:
	default: // nobody is counting timers this many
	}
	return tm.ch, func() {
		c.mu.Lock()
		delete(c.timers, tm)
		c.mu.Unlock()
	}
}

// Advance moves the clock d forward and fires the timers now due.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t += int64(d)
	c.fireLocked()
}

func (c *Clock) fireLocked() {
	for tm := range c.timers {
		if tm.at <= c.t {
			tm.ch <- time.Unix(0, tm.at)
			delete(c.timers, tm)
		}
	}
}

// WaitTimer waits until code under test starts a timer on c and returns
// its duration; it fails the test if none starts within 30 s.
func (c *Clock) WaitTimer(t testing.TB) time.Duration {
	t.Helper()
	select {
	case d := <-c.started:
		return d
	case <-time.After(hangGuard):
		t.Fatalf("no timer started within %v", hangGuard)
		return 0
	}
}
