package mono

import (
	"testing"
	"time"
)

func TestOfAgreesWithNow(t *testing.T) {
	before := Now()
	at := time.Now()
	after := Now()
	if got := Of(at); got < before || got > after {
		t.Fatalf("Of(time.Now()) = %d, not within the Now() readings around it [%d, %d]", got, before, after)
	}
	if d := Of(at.Add(time.Second)) - Of(at); d != int64(time.Second) {
		t.Fatalf("a second apart on the wall reads %d ns apart", d)
	}
}

func TestPassed(t *testing.T) {
	f := func(deadline, now int64, want bool) {
		t.Helper()
		if got := Passed(deadline, now); got != want {
			t.Errorf("Passed(%d, %d) = %v, want %v", deadline, now, got, want)
		}
	}
	f(0, 1<<62, false) // no deadline
	f(100, 99, false)
	f(100, 100, false) // at the deadline is still in time
	f(100, 101, true)
}
