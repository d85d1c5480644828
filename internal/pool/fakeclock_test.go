package pool

import (
	"sync"
	"testing"
	"time"
)

// hangGuard bounds every wait for an event in this package's tests. It is
// never what a test asserts: a test that reaches it has already failed
// (the event it waits for never came), and it then fails with a message
// instead of hanging until the test binary's timeout.
const hangGuard = 30 * time.Second

// await waits for ch to be closed, or fails the test after hangGuard.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hangGuard):
		t.Fatalf("still waiting after %v for %s", hangGuard, what)
	}
}

// fakeClock is a clock that moves only when the test advances it. Its
// timers fire when an advance reaches their deadline.
type fakeClock struct {
	mu      sync.Mutex
	t       int64
	timers  map[*fakeTimer]bool
	started chan time.Duration // each new timer's duration, for waitTimer
}

type fakeTimer struct {
	at int64
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	// Far from 0, which the worker loop reads as "no time read yet".
	return &fakeClock{t: int64(time.Hour), timers: map[*fakeTimer]bool{}, started: make(chan time.Duration, 1024)}
}

func (c *fakeClock) now() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) timer(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	tm := &fakeTimer{at: c.t + int64(d), ch: make(chan time.Time, 1)}
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

// advance moves the clock d forward and fires the timers now due.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t += int64(d)
	c.fireLocked()
}

func (c *fakeClock) fireLocked() {
	for tm := range c.timers {
		if tm.at <= c.t {
			tm.ch <- time.Unix(0, tm.at)
			delete(c.timers, tm)
		}
	}
}

// waitTimer waits until code under test starts a timer on c and returns
// its duration; it fails the test if none starts within hangGuard.
func (c *fakeClock) waitTimer(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-c.started:
		return d
	case <-time.After(hangGuard):
		t.Fatalf("no timer started within %v", hangGuard)
		return 0
	}
}

// TestFakeClock: the fake clock's own contract, which the pool tests rely on.
func TestFakeClock(t *testing.T) {
	c := newFakeClock()
	t0 := c.now()
	fired, stop := c.timer(10 * time.Millisecond)
	_, stopped := c.timer(time.Millisecond)
	stopped()
	if d := c.waitTimer(t); d != 10*time.Millisecond {
		t.Fatalf("first timer %v, want 10ms", d)
	}
	c.advance(9 * time.Millisecond)
	select {
	case <-fired:
		t.Fatal("fired 1ms early")
	default:
	}
	c.advance(time.Millisecond)
	select {
	case <-fired:
	default:
		t.Fatal("not fired at its deadline")
	}
	stop()
	if got := c.now() - t0; got != int64(10*time.Millisecond) {
		t.Fatalf("advanced %v, want 10ms", time.Duration(got))
	}
	due, _ := c.timer(0)
	select {
	case <-due:
	default:
		t.Fatal("a timer of 0 must fire at once")
	}
}
