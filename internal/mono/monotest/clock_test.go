package monotest

import (
	"testing"
	"time"
)

// TestClock: the fake clock's own contract, which the pool and store
// tests rely on.
func TestClock(t *testing.T) {
	c := New()
	t0 := c.Now()
	fired, stop := c.Timer(10 * time.Millisecond)
	_, stopped := c.Timer(time.Millisecond)
	stopped()
	if d := c.WaitTimer(t); d != 10*time.Millisecond {
		t.Fatalf("first timer %v, want 10ms", d)
	}
	c.Advance(9 * time.Millisecond)
	select {
	case <-fired:
		t.Fatal("fired 1ms early")
	default:
	}
	c.Advance(time.Millisecond)
	select {
	case <-fired:
	default:
		t.Fatal("not fired at its deadline")
	}
	stop()
	if got := c.Now() - t0; got != int64(10*time.Millisecond) {
		t.Fatalf("advanced %v, want 10ms", time.Duration(got))
	}
	due, _ := c.Timer(0)
	select {
	case <-due:
	default:
		t.Fatal("a timer of 0 must fire at once")
	}
}
